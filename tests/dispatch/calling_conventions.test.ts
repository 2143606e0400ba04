// call, redispatch, callBoxed, redispatchBoxed, callBoxedForDispatchKey, boxing adapters and the trace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AFTER_AUTOGRAD_KEYSET,
  boxed,
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  excludeKeys,
  FALLTHROUGH_EXECUTED_MESSAGE,
  fallthroughKernel,
  IValue,
  Library,
  NotImplementedError,
  type Stack,
} from '../../core/dispatch/mod.ts';
import { cpu, fakeTensor, meta } from './_fake_tensor.ts';

const K = DispatchKey;
const after = (k: number) => DispatchKeySet.fullAfter(k);

function fresh() {
  const d = new Dispatcher({ onWarning: () => {} });
  const def = new Library('t', 'DEF', undefined, { dispatcher: d, location: 'c.ts:1' });
  return { d, def };
}

describe('unboxed calls', () => {
  it('pass the masked keyset words and the arguments unchanged, and return the kernel result', () => {
    const { d, def } = fresh();
    const op = def.define('t::add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor');
    const seen: unknown[][] = [];
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl('add', (hi: number, lo: number, a: unknown, b: unknown, alpha: unknown) => {
      seen.push([new DispatchKeySet(hi, lo).toString(), a, b, alpha]);
      return 'sum';
    });
    const x = cpu(), y = cpu();
    assert.equal(op.call(x, y, 2), 'sum');
    // AutogradCPU, ADInplaceOrView and BackendSelect are fallthrough: masked out before the slot is chosen.
    assert.deepEqual(seen, [['DispatchKeySet(CPU)', x, y, 2]]);
  });

  it('follow the chain AutogradCPU -> ADInplaceOrView -> BackendSelect -> CPU when each key has a kernel', () => {
    const { d, def } = fresh();
    const op = def.define('t::f(Tensor x) -> Tensor');
    const order: string[] = [];
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    for (const k of [K.AutogradCPU, K.ADInplaceOrView, K.BackendSelect]) {
      lib.impl('f', (hi: number, lo: number, x: unknown) => {
        order.push(new DispatchKeySet(hi, lo).highestPriorityTypeId() === k ? String(k) : 'wrong key');
        const next = after(k);
        return op.redispatch(hi & next.hi, lo & next.lo, x);
      }, k);
    }
    lib.impl('f', () => 'cpu', K.CPU);
    assert.equal(op.call(cpu()), 'cpu');
    assert.deepEqual(order, [String(K.AutogradCPU), String(K.ADInplaceOrView), String(K.BackendSelect)]);
  });

  it('take keys from Tensor[] and Tensor? arguments, skipping null', () => {
    const { d, def } = fresh();
    const op = def.define('t::cat(Tensor[] tensors, Tensor? out=None) -> Tensor');
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('cat', () => 'meta-autograd', K.AutogradMeta).impl('cat', () => 'cpu', K.CPU);
    assert.equal(op.call([cpu(), meta()], null), 'meta-autograd');
    assert.equal(op.call([cpu()], null), 'cpu');
    assert.equal(op.call([], meta()), 'meta-autograd');
    assert.throws(() => op.call([], null), /There were no tensor arguments/);
  });

  it('redispatch into a missing slot reports the key, and the runtime stays usable', () => {
    const { d, def } = fresh();
    const op = def.define('t::f(Tensor x) -> Tensor');
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl('f', () => 'ok');
    const m = meta();
    const below = DispatchKeySet.of(K.Meta); // what a kernel below ADInplaceOrView would pass on
    assert.throws(() => op.redispatch(below.hi, below.lo, m), (e: unknown) => {
      assert.ok(e instanceof NotImplementedError);
      assert.match(e.message, /from the 'Meta' backend/);
      return true;
    });
    assert.equal(op.call(cpu()), 'ok');
    d.checkInvariants();
  });

  it('an operator with impls but no def still dispatches, scanning every argument', () => {
    const d = new Dispatcher();
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl('late', (_h: number, _l: number, a: unknown, n: number) => [a, n]);
    const op = d.findOp('t::late')!;
    assert.equal(d.findSchema('t::late'), undefined);
    const x = cpu();
    assert.deepEqual(op.call(x, 3), [x, 3]);
    assert.match(op.dump(), /^name: t::late\nschema: \(none\)\nCPU: registered at /);
    using def = new Library('t', 'DEF', undefined, { dispatcher: d });
    def.define('late(Tensor x, int n) -> Tensor');
    assert.deepEqual(op.call(x, 4), [x, 4], 'the def swaps in a schema-specialised stub');
  });
});

describe('boxed calls and adapters', () => {
  it('a boxed kernel called unboxed sees IValues tagged by the schema and returns through the stack', () => {
    const { d, def } = fresh();
    const op = def.define('t::g(Tensor x, int n, float s, bool b, str m, int[] dims, Tensor? o=None) -> (Tensor, int)');
    const tags: string[] = [];
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl(
      'g',
      boxed((_op, ks, stack) => {
        tags.push(...stack.map((v) => v.tag), ks.toString());
        const args = stack.splice(0, 7);
        stack.push(args[0], IValue.int(args[5].toList().length));
      }),
    );
    const x = cpu();
    assert.deepEqual(op.call(x, 3, 0.5, true, 'mean', [0, 1], null), [x, 2]);
    assert.deepEqual(tags, ['Tensor', 'Int', 'Double', 'Bool', 'String', 'GenericList', 'None', 'DispatchKeySet(CPU)']);
  });

  it('an unboxed kernel called boxed gets plain values and its result is pushed', () => {
    const { d, def } = fresh();
    const op = def.define('t::h(Tensor x, int n) -> int');
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl('h', (_hi: number, _lo: number, _x: unknown, n: number) => n * 10);
    const stack: Stack = [IValue.int(99), IValue.tensor(cpu()), IValue.int(4)];
    op.callBoxed(stack);
    assert.deepEqual(stack.map(String), ['Int(99)', 'Int(40)']);
  });

  it('boxing checks argument types against the schema', () => {
    const { d, def } = fresh();
    const op = def.define('t::k(Tensor x, int n) -> Tensor');
    using lib = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    lib.impl('k', boxed(() => {}));
    assert.throws(() => op.call(cpu(), 1.5), {
      name: 'RuntimeError',
      message: "t::k() Expected a value of type 'int' for argument 'n' but instead found type 'float'.\n" +
        'Position: 1\nDeclaration: t::k(Tensor x, int n) -> Tensor',
    });
  });

  it('callBoxedForDispatchKey runs the registered kernel or the fallback and errors clearly otherwise', () => {
    const { d, def } = fresh();
    const op = def.define('t::f(Tensor x) -> str');
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('f', () => 'cpu', K.CPU).impl('f', fallthroughKernel, K.Tracer);
    const stack: Stack = [IValue.tensor(cpu())];
    op.callBoxedForDispatchKey(K.CPU, stack);
    assert.deepEqual(stack.map((v) => v.toJS()), ['cpu']);
    assert.throws(
      () => op.callBoxedForDispatchKey(K.Meta, [IValue.tensor(cpu())]),
      /has no kernel registered at dispatch key 'Meta'/,
    );
    assert.throws(
      () => op.callBoxedForDispatchKey(K.Tracer, [IValue.tensor(cpu())]),
      (e: unknown) => (e as Error).message === FALLTHROUGH_EXECUTED_MESSAGE,
    );
    assert.throws(
      () => op.callBoxedForDispatchKey(K.AutogradCPU, [IValue.tensor(cpu())]),
      (e: unknown) => (e as Error).message === FALLTHROUGH_EXECUTED_MESSAGE,
    );
  });
});

describe('seeds exercises', () => {
  it('exercise 8 (and 5): a boxed Profiler fallback fires between AutogradCPU and CPU; neither kernel changes', () => {
    const { d, def } = fresh();
    const op = def.define('t::add(Tensor self, Tensor other) -> str');
    const log: string[] = [];
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('add', (hi: number, lo: number, a: unknown, b: unknown) => {
      log.push(`AutogradCPU ${new DispatchKeySet(hi, lo)}`);
      return op.redispatch(hi & AFTER_AUTOGRAD_KEYSET.hi, lo, a, b);
    }, K.AutogradCPU);
    lib.impl('add', (hi: number, lo: number, a: unknown, b: unknown) => {
      log.push(`CPU ${new DispatchKeySet(hi, lo)} ${a === x && b === y ? 'same objects' : 'boxed copies'}`);
      return 'result';
    }, K.CPU);
    using profiler = new Library('_', 'IMPL', K.Profiler, { dispatcher: d });
    profiler.fallback((o, ks, stack) => {
      log.push(`Profiler ${ks} ${stack.map((v) => v.tag).join(',')}`);
      o.redispatchBoxed(ks.and(after(K.Profiler)), stack);
    });
    const x = fakeTensor(K.CPU, { extra: [K.Profiler] }), y = cpu();
    assert.equal(op.call(x, y), 'result');
    assert.deepEqual(log, [
      'AutogradCPU DispatchKeySet(CPU, Profiler, AutogradCPU)',
      'Profiler DispatchKeySet(CPU, Profiler) Tensor,Tensor',
      'CPU DispatchKeySet(CPU) same objects',
    ]);
  });

  it('exercise 7: a factory with no tensors reaches its BackendSelect kernel, which redispatches to the device', () => {
    const { d, def } = fresh();
    const op = def.define('t::zeros(int[] size, *, str? device=None) -> str');
    const seen: string[] = [];
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('zeros', (hi: number, lo: number, size: number[], device: string | null) => {
      seen.push(String(new DispatchKeySet(hi, lo)));
      const backend = DispatchKeySet.of(device === 'meta' ? K.Meta : K.CPU);
      const rest = new DispatchKeySet(hi, lo).and(after(K.BackendSelect)).or(backend);
      return op.redispatch(rest.hi, rest.lo, size, device);
    }, K.BackendSelect);
    lib.impl('zeros', (_h: number, _l: number, size: number[]) => `cpu zeros ${size}`, K.CPU);
    lib.impl('zeros', (_h: number, _l: number, size: number[]) => `meta zeros ${size}`, K.Meta);
    assert.equal(op.call([4, 8], 'meta'), 'meta zeros 4,8');
    assert.equal(op.call([2], null), 'cpu zeros 2');
    assert.deepEqual(seen, ['DispatchKeySet(BackendSelect)', 'DispatchKeySet(BackendSelect)']);
  });

  it('exercise 3: an exact backend kernel overrides the composite decomposition for its backend', () => {
    // PyTorch 1.13 semantics (SEMANTICS §8.2): with a CPU kernel present, AutogradCPU does not take the
    // composite kernel but falls through to CPU; other backends still run the decomposition.
    const { d, def } = fresh();
    const op = def.define('t::special(Tensor x) -> str');
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('special', () => 'decomposition', K.CompositeImplicitAutograd).impl('special', () => 'exact cpu', K.CPU);
    assert.equal(op.call(cpu()), 'exact cpu');
    assert.equal(op.call(meta()), 'decomposition');
  });

  it('the exclude guard (AutoDispatchBelowAutograd) skips autograd kernels and is restored on throw', () => {
    const { d, def } = fresh();
    const op = def.define('t::f(Tensor x) -> str');
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl('f', () => 'autograd', K.Autograd).impl('f', () => 'cpu', K.CPU);
    assert.equal(op.call(cpu()), 'autograd');
    assert.throws(() => {
      using _below = excludeKeys([K.AutogradFunctionality, K.AutogradOther]);
      assert.equal(op.call(cpu()), 'cpu');
      throw new Error('boom');
    }, /boom/);
    assert.equal(op.call(cpu()), 'autograd');
  });
});

describe('dispatch trace', () => {
  it('prints nested [call] and [redispatch] lines naming op and key', () => {
    const lines: string[] = [];
    const d = new Dispatcher({ trace: true, traceSink: (l) => lines.push(l) });
    using def = new Library('t', 'DEF', undefined, { dispatcher: d });
    const op = def.define('t::f(Tensor x) -> int');
    using lib = new Library('t', 'IMPL', undefined, { dispatcher: d });
    lib.impl(
      'f',
      (hi: number, lo: number, x: unknown) => op.redispatch(hi & AFTER_AUTOGRAD_KEYSET.hi, lo, x),
      K.AutogradCPU,
    );
    lib.impl('f', () => 1, K.CPU);
    op.call(cpu());
    op.callBoxed([IValue.tensor(cpu())]);
    assert.deepEqual(lines, [
      '[call] op=[t::f], key=[AutogradCPU]',
      ' [redispatch] op=[t::f], key=[CPU]',
      '[callBoxed] op=[t::f], key=[AutogradCPU]',
      ' [redispatch] op=[t::f], key=[CPU]',
    ]);
    d.traceEnabled = false;
    op.call(cpu());
    assert.equal(lines.length, 4);
  });
});
