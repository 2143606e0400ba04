// Note [Deferred registrations] (core/dispatch/dispatcher.ts): a group of registrations deferred until first needed
// must be indistinguishable from the same registrations made at once: same dumps, tables, warnings and winners, a
// user's kernel at the group's key newer than the group's, and calls that reach the key find its kernels. Each case
// builds the same registrations twice, eager and deferred, on fresh dispatchers, and compares.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  IValue,
  KernelFunction,
  Library,
  NotImplementedError,
  type OperatorHandle,
  withIncludedKeys,
} from '../../core/dispatch/mod.ts';
import { fakeTensor } from './_fake_tensor.ts';

const K = DispatchKey;
type Fake = { label: string };

/** A dispatcher with `dx::f` and `dx::g` (CPU kernels) and a rules group at Batched + VmapMode, eager or deferred. */
function build(deferred: boolean) {
  const warnings: string[] = [];
  const log: string[] = [];
  const d = new Dispatcher({ onWarning: (m) => warnings.push(m) });
  const def = new Library('dx', 'DEF', undefined, { dispatcher: d, location: 'deferred.test.ts:1' });
  const f = def.define('dx::f(Tensor x) -> str');
  const g = def.define('dx::g(Tensor x) -> str');
  const cpu = new Library('dx', 'IMPL', K.CPU, { dispatcher: d, location: 'deferred.test.ts:2' });
  cpu.impl('f', (_h: number, _l: number, x: Fake) => `cpu f ${x.label}`);
  cpu.impl('g', (_h: number, _l: number, x: Fake) => `cpu g ${x.label}`);
  const register = () => {
    log.push('registered');
    const rules = new Library('dx', 'IMPL', K.Batched, { dispatcher: d, location: 'deferred.test.ts:3' });
    rules.impl('f', (_h: number, _l: number, x: Fake) => `rule f ${x.label}`, undefined, { debug: 'rule for f' });
    const mode = new Library('dx', 'IMPL', K.VmapMode, { dispatcher: d, location: 'deferred.test.ts:4' });
    mode.impl('g', (_h: number, _l: number, x: Fake) => `mode g ${x.label}`, undefined, { debug: 'mode kernel g' });
    const fallback = new Library('_', 'IMPL', K.Batched, { dispatcher: d, location: 'deferred.test.ts:5' });
    fallback.fallback((op, _ks, stack) => {
      stack.pop();
      stack.push(IValue.string(`fallback ${op.name}`));
    }, { debug: 'batched fallback' });
  };
  const group = deferred ? d.deferRegistrations('dx rules', [K.Batched, K.VmapMode], register) : undefined;
  if (!deferred) register();
  return { d, f, g, group, log, warnings };
}

const batched = (label = 'b') => fakeTensor(K.CPU, { extra: [K.Batched], label });
const plain = (label = 'x') => fakeTensor(K.CPU, { label });

function tables(ops: OperatorHandle[]) {
  return ops.map((op) => ({ dump: op.dump(), table: op.dumpComputedTable(), rows: op.computedTable() }));
}

describe('deferred registration groups', () => {
  it('do not run for calls and registrations that cannot reach their keys', () => {
    const { d, f, g, log } = build(true);
    assert.deepEqual(d.pendingRegistrations(), ['dx rules']);
    assert.equal(f.call(plain()), 'cpu f x');
    assert.equal(g.call(plain()), 'cpu g x');
    using other = new Library('dx', 'IMPL', K.Meta, { dispatcher: d });
    other.impl('f', (_h: number, _l: number, x: Fake) => `meta f ${x.label}`);
    assert.equal(f.call(fakeTensor(K.Meta, { label: 'm', inference: true })), 'meta f m');
    assert.ok(d.findSchema('dx::f') !== undefined);
    assert.deepEqual(d.operatorNames().sort(), ['dx::f', 'dx::g']);
    assert.deepEqual(log, [], 'the group never ran');
    assert.deepEqual(d.pendingRegistrations(), ['dx rules']);
  });

  it('run before any dump or table inspection, which then equals the eager one', () => {
    for (const inspect of ['dump', 'dumpComputedTable', 'computedTable', 'checkInvariants', 'tableStore'] as const) {
      const lazy = build(true), eager = build(false);
      if (inspect === 'dump') lazy.f.dump();
      else if (inspect === 'dumpComputedTable') lazy.g.dumpComputedTable();
      else if (inspect === 'computedTable') lazy.f.computedTable();
      else if (inspect === 'checkInvariants') lazy.d.checkInvariants();
      else void lazy.d.tableStore;
      assert.deepEqual(lazy.log, ['registered'], inspect);
      assert.deepEqual(lazy.d.pendingRegistrations(), [], inspect);
      assert.deepEqual(tables([lazy.f, lazy.g]), tables([eager.f, eager.g]), inspect);
      assert.match(lazy.f.dump(), /Batched: rule for f/);
      assert.match(lazy.g.dumpComputedTable(), /VmapMode: mode kernel g \[kernel\]/);
      lazy.d.checkInvariants();
    }
  });

  it('run before hasKernelForDispatchKey and callBoxedForDispatchKey at their keys, not at others', () => {
    const lazy = build(true);
    assert.equal(lazy.f.hasKernelForDispatchKey(K.CPU), true);
    assert.deepEqual(lazy.log, []);
    assert.equal(lazy.f.hasKernelForDispatchKey(K.Batched), true);
    assert.deepEqual(lazy.log, ['registered']);
    const other = build(true);
    const stack = [IValue.tensor(batched('s'))];
    other.g.callBoxedForDispatchKey(K.VmapMode, stack); // the group's kernel at the key, called boxed
    assert.deepEqual(other.log, ['registered']);
    assert.deepEqual(stack.map((v) => v.toJS()), ['mode g s']);
  });

  it('a dispatch that reaches one of their keys runs them and gets their kernel (unboxed, boxed, fallback)', () => {
    const lazy = build(true);
    assert.equal(lazy.f.call(batched()), 'rule f b'); // its rule, through the slow path's second look
    assert.deepEqual(lazy.log, ['registered']);
    assert.equal(lazy.f.call(batched()), 'rule f b');
    assert.equal(lazy.g.call(batched()), 'fallback dx::g'); // the group's fallback
    const boxed = build(true);
    const stack = [IValue.tensor(batched('s'))];
    boxed.d.redispatchBoxed(boxed.g, DispatchKeySet.of(K.Batched), stack);
    assert.deepEqual(stack.map((v) => v.toJS()), ['fallback dx::g']);
    const redispatched = build(true);
    assert.equal(redispatched.f.redispatch(DispatchKeySet.of(K.Batched).hi, 0, batched()), 'rule f b');
  });

  it('run before one of their keys joins the include set (a key whose fallback is a fallthrough)', () => {
    const lazy = build(true), eager = build(false);
    const inLazy = withIncludedKeys([K.VmapMode], () => lazy.g.call(plain()));
    const inEager = withIncludedKeys([K.VmapMode], () => eager.g.call(plain()));
    assert.equal(inEager, 'mode g x');
    assert.equal(inLazy, inEager);
    assert.deepEqual(lazy.log, ['registered']);
    // An explicit keyset reaching the key, whose slot holds the framework's fallthrough until the group runs.
    const explicit = build(true);
    const vmapMode = DispatchKeySet.of(K.VmapMode);
    assert.equal(explicit.g.redispatch(vmapMode.hi, vmapMode.lo, plain('r')), 'mode g r');
    assert.deepEqual(explicit.log, ['registered']);
    const boxed = build(true), stack = [IValue.tensor(plain('s'))];
    boxed.d.redispatchBoxed(boxed.g, vmapMode, stack);
    assert.deepEqual(stack.map((v) => v.toJS()), ['mode g s']);
  });

  it("a user's kernel at their key registered before first use is newer: it wins, warns as eager, and unwinds", () => {
    const runs = [true, false].map((deferred) => {
      const built = build(deferred);
      const user = new Library('dx', 'IMPL', K.Batched, { dispatcher: built.d, location: 'user.ts:1' });
      user.impl('f', (_h: number, _l: number, x: Fake) => `user f ${x.label}`, undefined, { debug: 'user rule' });
      const during = { call: built.f.call(batched()), dump: built.f.dump() };
      user.dispose();
      const after = { call: built.f.call(batched()), dump: built.f.dump() };
      return { during, after, warnings: built.warnings, log: built.log };
    });
    const [lazy, eager] = runs;
    assert.equal(lazy.during.call, 'user f b');
    assert.equal(lazy.after.call, 'rule f b');
    assert.deepEqual(lazy, eager);
    assert.equal(lazy.warnings.length, 1);
    assert.match(lazy.warnings[0], /previous kernel: rule for f\n\s+new kernel: user rule/);
  });

  it('a fallback registered at their key before first use meets theirs, as eager registration does', () => {
    const lazy = build(true);
    const other = new Library('_', 'IMPL', K.Batched, { dispatcher: lazy.d, location: 'user.ts:2' });
    assert.throws(
      () => other.fallback(() => {}),
      /multiple backend fallbacks for the same dispatch key Batched; previous registration batched fallback/,
    );
    assert.deepEqual(lazy.log, ['registered']);
  });

  it("a missing kernel's error shows the table with their registrations, as eager registration does", () => {
    const errors = [true, false].map((deferred) => {
      const { f } = build(deferred);
      try {
        f.call(fakeTensor(K.Meta));
      } catch (e) {
        assert.ok(e instanceof NotImplementedError);
        return e.message;
      }
      assert.fail('expected an error');
    });
    assert.match(errors[0], /Batched: rule for f \[kernel\]/);
    assert.equal(errors[0], errors[1]);
  });

  it('run once, in order; run() is idempotent, cancel() drops a pending group for good', () => {
    const d = new Dispatcher();
    const order: string[] = [];
    const a = d.deferRegistrations('a', [K.Batched], () => order.push('a'));
    const b = d.deferRegistrations('b', [K.Functionalize], () => order.push('b'));
    const c = d.deferRegistrations('c', [K.Batched], () => order.push('c'));
    assert.deepEqual(d.pendingRegistrations(), ['a', 'b', 'c']);
    b.cancel();
    assert.equal(b.pending, false);
    d.runDeferredRegistrations();
    assert.deepEqual(order, ['a', 'c']);
    a.run();
    b.run();
    d.materializeAll();
    assert.deepEqual(order, ['a', 'c']);
    assert.equal(a.pending || c.pending, false);
    assert.deepEqual(d.pendingRegistrations(), []);
  });

  it('a group deferred once the store is read as a whole runs at once (Workers read every row)', () => {
    const d = new Dispatcher();
    void d.tableStore;
    let ran = 0;
    const group = d.deferRegistrations('late', [K.Batched], () => ran++);
    assert.equal(ran, 1);
    assert.equal(group.pending, false);
  });

  it('a registration inside a running group at its own key does not run it again; a throwing group is gone', () => {
    const d = new Dispatcher();
    using def = new Library('dy', 'DEF', undefined, { dispatcher: d });
    def.define('dy::h(Tensor x) -> Tensor');
    let runs = 0;
    d.deferRegistrations('self', [K.Batched], () => {
      runs++;
      new Library('dy', 'IMPL', K.Batched, { dispatcher: d }).impl('h', KernelFunction.fromBoxed(() => {}));
    });
    d.deferRegistrations('bad', [K.Batched], () => {
      throw new Error('bad group');
    });
    assert.throws(() => d.runDeferredRegistrations(), /bad group/);
    assert.equal(runs, 1);
    assert.deepEqual(d.pendingRegistrations(), []);
  });

  it('refuses what is not a group: a name, a function and runtime keys are required', () => {
    const d = new Dispatcher();
    assert.throws(() => d.deferRegistrations(1 as never, [K.Batched], () => {}), /expected a name, got number/);
    assert.throws(() => d.deferRegistrations('x', [K.Batched], 'no' as never), /expected a function that registers/);
    assert.throws(() => d.deferRegistrations('x', [], () => {}), /non-empty array/);
    assert.throws(
      () => d.deferRegistrations('x', [K.Autograd], () => {}),
      /deferRegistrations: Autograd is not a runtime dispatch key/,
    );
    assert.throws(() => d.deferRegistrations('x', [K.Undefined], () => {}), /Undefined is not a runtime dispatch key/);
    assert.throws(
      () => d.deferRegistrations('x', [1.5 as never], () => {}),
      /deferRegistrations: 1\.5 is not a runtime/,
    );
    assert.throws(() => d.deferRegistrations('x', 'Batched' as never, () => {}), /non-empty array/);
    assert.deepEqual(d.pendingRegistrations(), []);
  });

  it('a forged, null or foreign operator handle is refused by name, here and by the dispatcher methods that take one', () => {
    const d = new Dispatcher();
    const expected = /Dispatcher: expected an OperatorHandle \(from Library\.define or findOp\), got /;
    for (const forged of [{}, null, undefined, 3, { name: 'aten::add' }]) {
      assert.throws(() => d.deferOperatorRegistrations(forged as never, () => {}), (e: Error) => {
        assert.ok(e instanceof TypeError && expected.test(e.message), e.message);
        return true;
      });
      assert.throws(() => d.call(forged as never), TypeError);
      assert.throws(() => d.callBoxed(forged as never, []), TypeError);
    }
    using lib = new Library('dfo', 'DEF'); // the library's dispatcher, not `d`
    const foreign = lib.defineDeferred('dfo::g(int x) -> int');
    assert.throws(() => d.deferOperatorRegistrations(foreign, () => {}), /Operator dfo::g is not registered with this/);
    assert.deepEqual(d.pendingRegistrations(), []);
  });
});

/** `dz::f` (deferred def) with its kernels registered at once or deferred to the operator's first need. */
function buildOperator(deferred: boolean) {
  const warnings: string[] = [];
  const log: string[] = [];
  const d = new Dispatcher({ onWarning: (m) => warnings.push(m) });
  const def = new Library('dz', 'DEF', undefined, { dispatcher: d, location: 'deferred.test.ts:10' });
  const f = def.defineDeferred('dz::f(Tensor x, int n) -> str');
  const other = def.defineDeferred('dz::other(Tensor x) -> str');
  const impl = new Library('dz', 'IMPL', undefined, { dispatcher: d, location: 'deferred.test.ts:11' });
  const register = () => {
    log.push('registered');
    impl.impl('f', (_h: number, _l: number, x: Fake, n: number) => `cpu ${x.label} ${n}`, K.CPU);
    impl.impl('f', KernelFunction.fallthrough(), K.Autograd);
  };
  impl.impl('other', (_h: number, _l: number, x: Fake) => `other ${x.label}`, K.CPU);
  if (deferred) d.deferOperatorRegistrations(f, register, [K.CPU, K.Autograd]);
  else register();
  return { d, f, other, log, warnings };
}

describe('deferred registrations of one operator', () => {
  it('run as the operator materializes, not before, and its first call uses them', () => {
    const { f, log } = buildOperator(true);
    assert.deepEqual(log, []);
    assert.equal(f.call(plain('a'), 3), 'cpu a 3');
    assert.deepEqual(log, ['registered']);
    assert.equal(f.call(plain('b'), 4), 'cpu b 4');
    assert.deepEqual(log, ['registered']);
  });

  it('run before its dump, hasKernelForDispatchKey and table inspection, which equal the eager ones', () => {
    for (const inspect of ['dump', 'hasKernel', 'computedTable', 'materializeAll', 'tableStore'] as const) {
      const lazy = buildOperator(true), eager = buildOperator(false);
      if (inspect === 'dump') lazy.f.dump();
      else if (inspect === 'hasKernel') assert.equal(lazy.f.hasKernelForDispatchKey(K.CPU), true);
      else if (inspect === 'computedTable') lazy.f.computedTable();
      else if (inspect === 'materializeAll') lazy.d.materializeAll();
      else void lazy.d.tableStore;
      assert.deepEqual(lazy.log, ['registered'], inspect);
      assert.deepEqual(tables([lazy.f, lazy.other]), tables([eager.f, eager.other]), inspect);
      lazy.d.checkInvariants();
    }
  });

  it("run before any other registration for the operator: a user's kernel is newer, wins and warns as eager", () => {
    const runs = [true, false].map((deferred) => {
      const built = buildOperator(deferred);
      const user = new Library('dz', 'IMPL', K.CPU, { dispatcher: built.d, location: 'user.ts:3' });
      user.impl('f', (_h: number, _l: number, x: Fake) => `user ${x.label}`, undefined, { debug: 'user f' });
      const during = built.f.call(plain('u'), 1);
      user.dispose();
      return { during, after: built.f.call(plain('u'), 1), dump: built.f.dump(), warnings: built.warnings };
    });
    assert.equal(runs[0].during, 'user u');
    assert.equal(runs[0].after, 'cpu u 1');
    assert.deepEqual(runs[0], runs[1]);
    assert.match(runs[0].warnings[0], /previous kernel: registered at deferred\.test\.ts:11\n\s+new kernel: user f/);
  });

  it('a registration or question at a key they do not register at does not run them; at one of theirs it does', () => {
    const { d, f, log } = buildOperator(true);
    using meta = new Library('dz', 'IMPL', K.Meta, { dispatcher: d });
    meta.impl('f', (_h: number, _l: number, x: Fake) => `meta ${x.label}`);
    assert.equal(f.hasKernelForDispatchKey(K.Meta), true);
    assert.equal(f.hasKernelForDispatchKey(K.Batched), false);
    assert.deepEqual(log, []);
    assert.equal(f.hasKernelForDispatchKey(K.Autograd), true);
    assert.deepEqual(log, ['registered']);
    const again = buildOperator(true);
    using cpu = new Library('dz', 'IMPL', K.CPU, { dispatcher: again.d });
    cpu.impl('f', (_h: number, _l: number, x: Fake) => `user ${x.label}`);
    assert.deepEqual(again.log, ['registered'], 'ours ran before the CPU registration');
    assert.equal(again.f.call(plain('c'), 0), 'user c');
    assert.throws(
      () => d.deferOperatorRegistrations(f, () => {}, [99]),
      /99 is not a dispatch key kernels are stored at/,
    );
  });

  it("another operator's use does not run them; a materialized operator's run at once", () => {
    const { d, f, other, log } = buildOperator(true);
    assert.equal(other.call(plain('o')), 'other o');
    assert.deepEqual(log, []);
    d.materialize(f);
    assert.deepEqual(log, ['registered']);
    let ran = 0;
    d.deferOperatorRegistrations(f, () => ran++);
    assert.equal(ran, 1, 'a materialized operator registers at once');
  });

  it('a kernel the schema refuses is refused when they run, as registering it at once would be', () => {
    const d = new Dispatcher();
    using def = new Library('dw', 'DEF', undefined, { dispatcher: d });
    const op = def.defineDeferred('dw::g(Tensor x) -> Tensor');
    const impl = new Library('dw', 'IMPL', K.CPU, { dispatcher: d });
    d.deferOperatorRegistrations(op, () => impl.impl('g', (_h: number, _l: number, _x: Fake, _y: Fake) => 0));
    assert.throws(() => op.dump(), /The kernel function takes 4 parameters but the schema has 1 arguments/);
    assert.throws(() => d.deferOperatorRegistrations(op, 'x' as never), /expected a function that registers/);
  });
});

describe('defineDeferred argument counts', () => {
  it('a given count checks kernels without a parse; a wrong one is refused; none is counted on first need', () => {
    const d = new Dispatcher();
    using def = new Library('dc', 'DEF', undefined, { dispatcher: d });
    const counted = def.defineDeferred('dc::f(Tensor x, int n) -> Tensor', { argumentCount: 2 });
    using impl = new Library('dc', 'IMPL', K.CPU, { dispatcher: d });
    impl.impl('f', (_h: number, _l: number, x: Fake, _n: number) => x); // within the count: nothing to parse
    assert.throws(
      () => impl.impl('f', (_h: number, _l: number, _x: Fake, _n: number, _m: number) => 0),
      /The kernel function takes 5 parameters but the schema has 2 arguments/,
    );
    assert.equal(counted.schema!.arguments.length, 2);
    for (const bad of [-1, 1.5, Number.NaN]) {
      assert.throws(
        () => def.defineDeferred(`dc::g${String(bad).replace(/\W/g, '')}(Tensor x) -> Tensor`, { argumentCount: bad }),
        /defineDeferred\(\): argumentCount must be a non-negative integer/,
      );
    }
    const uncounted = def.defineDeferred('dc::h(Tensor x) -> Tensor');
    assert.throws(
      () => impl.impl('h', (_h: number, _l: number, _x: Fake, _y: Fake) => 0),
      /The kernel function takes 4 parameters but the schema has 1 arguments/,
    );
    assert.equal(uncounted.schema!.arguments.length, 1);
  });
});
