// Note [Operators materialize on first use] (core/dispatch/dispatcher.ts): registration records, the first call or
// inspection materializes. What a user can observe must not depend on when that happens: schemas, dumps, computed
// and stored tables, call results and errors are those of eager registration.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  KernelFunction,
  Library,
  NotImplementedError,
  type OperatorHandle,
} from '../../core/dispatch/mod.ts';
import { fakeTensor } from './_fake_tensor.ts';
import { OPS } from '../../core/ops/declarations.ts';
import { declarationFacts, registerOperators } from '../../core/ops/registry.ts';
import { countArguments, splitArguments } from '../../core/dispatch/library.ts';
import { parseSchema, SchemaParseError } from '../../core/dispatch/schema_parser.ts';

const K = DispatchKey;
const SCHEMA = 'lz::mix(Tensor(a!) self, Tensor other, *, float w=0.5, int[2] k=1) -> Tensor(a!)';

/** The same registrations, with the def eager (`define`) or deferred (`defineDeferred`). */
function build(deferred: boolean, log: string[] = []) {
  const d = new Dispatcher({ onWarning: () => {} });
  const def = new Library('lz', 'DEF', undefined, { dispatcher: d, location: 'lazy_registration.test.ts:1' });
  const op = deferred ? def.defineDeferred(SCHEMA) : def.define(SCHEMA);
  const impl = new Library('lz', 'IMPL', undefined, { dispatcher: d, location: 'lazy_registration.test.ts:2' });
  impl.impl('mix', (_h: number, _l: number, x: { label: string }) => `cpu:${x.label}`, K.CPU);
  impl.impl('mix', (_h: number, _l: number, x: { label: string }) => `meta:${x.label}`, K.Meta);
  impl.impl(
    'mix',
    KernelFunction.deferred(() => {
      log.push('built');
      return (h: number, l: number, ...args: unknown[]) => {
        log.push('autograd');
        return op.redispatch(h & ~DispatchKeySet.of(K.AutogradCPU).hi, l, ...args);
      };
    }),
    K.Autograd,
  );
  return { d, op, def, impl };
}

describe('deferred definitions', () => {
  it('parse on first read and then equal the eager definition everywhere', () => {
    const eager = build(false), lazy = build(true);
    assert.equal(lazy.d.findSchema('lz::mix')?.name, 'lz::mix');
    assert.equal(lazy.op.dump(), eager.op.dump());
    assert.equal(String(lazy.op.schema), String(eager.op.schema));
    assert.deepEqual(lazy.op.schema!.arguments, eager.op.schema!.arguments);
    assert.equal(lazy.op.dumpComputedTable(), eager.op.dumpComputedTable());
    assert.deepEqual(lazy.op.computedTable(), eager.op.computedTable());
    lazy.d.checkInvariants();
    eager.d.checkInvariants();
  });

  it('throws a malformed declaration where its schema is first read; define throws at once', () => {
    const d = new Dispatcher();
    const lib = new Library('bad', 'DEF', undefined, { dispatcher: d });
    const op = lib.defineDeferred('bad::f(Tensor x, int) -> Tensor');
    assert.equal(d.findSchema('bad::f'), op);
    assert.throws(() => op.schema, SchemaParseError);
    assert.throws(() => lib.define('bad::g(Tensor x, int) -> Tensor'), SchemaParseError);
    assert.equal(d.findSchema('bad::g'), undefined);
  });

  it('counts arguments past quoted defaults, and leaves escapes to the parser', () => {
    const quoted = 'f(str a=",)", str b=\'(,\', *, int c=1) -> ()';
    assert.equal(countArguments(quoted), parseSchema(quoted).arguments.length);
    assert.equal(countArguments(quoted), 3);
    assert.equal(countArguments('f(str a="\\"", int b) -> ()'), undefined);
    assert.equal(countArguments("f(str a='''x''') -> ()"), undefined);
    assert.equal(countArguments('f(Tensor x'), undefined);
    assert.equal(countArguments('f() -> ()'), 0);
    assert.deepEqual(splitArguments('g(Tensor(a -> *)[] xs, int[2] k=[1, 1], *, str s=")", ...) -> (Tensor, Tensor)'), [
      'Tensor(a -> *)[] xs',
      'int[2] k=[1, 1]',
      'str s=")"',
    ]);
  });

  it('checks kernels against the counted arguments, and reports a mismatch in the words of define', () => {
    const messages = [false, true].map((deferred) => {
      const d = new Dispatcher();
      const lib = new Library('ar', 'DEF', undefined, { dispatcher: d, location: 'here' });
      const impl = new Library('ar', 'IMPL', K.CPU, { dispatcher: d, location: 'there' });
      impl.impl('f', (_h: number, _l: number, _a: unknown, _b: unknown) => 1); // fits; registered before the def
      const text = 'f(Tensor x, *, int k=1) -> Tensor';
      const op = deferred ? lib.defineDeferred(text) : lib.define(text);
      const bad = new Library('ar', 'IMPL', K.Meta, { dispatcher: d, location: 'there' });
      try {
        bad.impl('f', (_h: number, _l: number, _a: unknown, _b: unknown, _c: unknown) => 1);
      } catch (e) {
        assert.equal(op.hasKernelForDispatchKey(K.Meta), false);
        return (e as Error).message;
      }
      assert.fail('a kernel with more parameters than the schema was accepted');
    });
    assert.match(messages[0], /takes 5 parameters but the schema has 2 arguments/);
    assert.equal(messages[1], messages[0]);
  });

  it('keeps the namespace and block checks of define', () => {
    const d = new Dispatcher();
    const lib = new Library('ns1', 'DEF', undefined, { dispatcher: d });
    assert.throws(() => lib.defineDeferred('ns2::f(Tensor x) -> Tensor'), /Explicitly provided namespace \(ns2\)/);
    const impl = new Library('ns1', 'IMPL', undefined, { dispatcher: d });
    assert.throws(() => impl.defineDeferred('f(Tensor x) -> Tensor'), /Cannot define an operator inside of a/);
    assert.equal(lib.defineDeferred('f(Tensor x) -> Tensor').schema!.fullName, 'ns1::f');
  });
});

describe('materialization', () => {
  it('reading a stub materializes: the first call already reaches the generated stub, built once', () => {
    const log: string[] = [];
    const { op, d } = build(true, log);
    assert.deepEqual(log, [], 'a deferred kernel is not built at registration');
    assert.equal(Object.hasOwn(op, 'call'), false, 'a pending handle has no stubs of its own');
    const call = op.call;
    assert.deepEqual(log, ['built'], 'reading the stub materialized the operator');
    assert.equal(op.call, call, 'no stand-in: the stub read is the one the handle keeps');
    assert.ok(Object.hasOwn(op, 'call') && Object.hasOwn(op, 'callUnchecked') && Object.hasOwn(op, 'redispatch'));
    d.checkInvariants();
    const x = fakeTensor(K.CPU, { label: 'x' }), y = fakeTensor(K.CPU, { label: 'y' });
    assert.equal(call(x, y, 0.5, [1, 1]), 'cpu:x');
    assert.equal(op.callUnchecked(fakeTensor(K.Meta, { label: 'm' }), y, 0.5, [1, 1]), 'meta:m');
    assert.deepEqual(log, ['built', 'autograd', 'autograd'], 'built once');
    const ks = DispatchKeySet.of(K.CPU);
    assert.equal(op.redispatch(ks.hi, ks.lo, x, y, 0.5, [1, 1]), 'cpu:x');
  });

  it('a handle made after materialization has the same own stubs as one materialized later', () => {
    const lazy = build(true).op;
    void lazy.call;
    const d = new Dispatcher();
    void d.tableStore; // from now on operators materialize at once
    const eager = new Library('lz', 'DEF', undefined, { dispatcher: d }).define(SCHEMA);
    assert.ok(Object.hasOwn(eager, 'call'));
    assert.deepEqual(Object.keys(lazy), Object.keys(eager));
  });

  it('materializes on a redispatch or a dump of its table as on a call', () => {
    for (const first of ['redispatch', 'dumpComputedTable', 'computedTable'] as const) {
      const { op, d } = build(true);
      const ks = DispatchKeySet.of(K.CPU);
      if (first === 'redispatch') op.redispatch(ks.hi, ks.lo, fakeTensor(K.CPU, { label: 'r' }), null, 0.5, [1, 1]);
      else op[first]();
      d.checkInvariants();
      assert.equal(op.call(fakeTensor(K.CPU, { label: 'c' }), null, 0.5, [1, 1]), 'cpu:c', first);
    }
  });

  it('updates a materialized operator eagerly on later registrations and deregistrations', () => {
    const { op, d, impl } = build(true);
    const x = fakeTensor(K.CPU, { label: 'x' });
    assert.equal(op.call(x, null, 0.5, [1, 1]), 'cpu:x');
    const later = new Library('lz', 'IMPL', K.CPU, { dispatcher: d });
    later.impl('mix', (_h: number, _l: number, t: { label: string }) => `cpu2:${t.label}`);
    assert.equal(op.call(x, null, 0.5, [1, 1]), 'cpu2:x');
    later.dispose();
    assert.equal(op.call(x, null, 0.5, [1, 1]), 'cpu:x');
    impl.dispose();
    assert.throws(() => op.call(x, null, 0.5, [1, 1]), NotImplementedError);
    d.checkInvariants();
  });

  it('a pending operator deregistered before any use reports it when called', () => {
    const { op, def, impl } = build(true);
    impl.dispose();
    def.dispose();
    assert.throws(() => op.call(fakeTensor(K.CPU), null, 0.5, [1, 1]), /has been deregistered/);
    assert.throws(() => op.redispatch(0, 0), /has been deregistered/);
  });

  it('reading tableStore writes every row, and later operators are written at once', () => {
    const d = new Dispatcher({ frameworkFallbacks: false });
    const lib = new Library('ts', 'DEF', undefined, { dispatcher: d });
    lib.define('ts::a(Tensor x) -> Tensor', { impl: (_h: number, _l: number, x: unknown) => x });
    const store = d.tableStore;
    const slot = (row: number) => store.readRow(row).ids.some((id) => id !== 0);
    assert.ok(slot(0), 'the pending operator was written when the store was read');
    lib.define('ts::b(Tensor x) -> Tensor', { impl: (_h: number, _l: number, x: unknown) => x });
    assert.ok(slot(1), 'an operator defined after the store was read is written at once');
  });
});

describe("the library's own operators", () => {
  it('declarationFacts and countArguments agree with the parsed schema of every declaration', () => {
    for (const [name, decl] of Object.entries(OPS)) {
      const schema = parseSchema(`aten::${decl.schema}`);
      assert.equal(countArguments(decl.schema), schema.arguments.length, name);
      assert.deepEqual(declarationFacts(decl.schema), {
        firstAliased: schema.arguments[0]?.aliasInfo !== undefined,
        firstWrites: schema.arguments[0]?.aliasInfo?.isWrite === true,
        mutable: schema.isMutable,
      }, name);
    }
  });

  it('every operator materializes (schemas parse, deferred kernels build) and its stored row is the computed one', () => {
    const handles = registerOperators() as Record<string, OperatorHandle>;
    for (const [name, op] of Object.entries(handles)) {
      assert.equal(String(op.schema), String(parseSchema(`aten::${OPS[name as keyof typeof OPS].schema}`)), name);
    }
    Dispatcher.singleton().checkInvariants();
  });
});
