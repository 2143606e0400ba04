// Library registration errors keep PyTorch's wording (SEMANTICS §4), and a failed registration leaves the
// dispatcher exactly as it was: later registrations and calls work and the stored tables stay valid.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  fallthroughKernel,
  Library,
  type LibraryKind,
  NotImplementedError,
  type OperatorHandle,
  RuntimeError,
} from '../../core/dispatch/mod.ts';
import { cpu, fakeTensor, meta } from './_fake_tensor.ts';

const K = DispatchKey;
const identity = (_hi: number, _lo: number, x: unknown) => x;

function newDispatcher(options: { frameworkFallbacks?: boolean } = {}) {
  const warnings: string[] = [];
  const d = new Dispatcher({ ...options, onWarning: (m) => warnings.push(m) });
  const lib = (ns: string, kind: LibraryKind, key?: number | string, location = `${kind.toLowerCase()}.ts:7`) =>
    new Library(ns, kind, key, { dispatcher: d, location });
  return { d, warnings, lib };
}

let fresh = 0;
/** The dispatcher still registers and calls correctly, and every stored table equals its recomputation. */
function assertUsable(d: Dispatcher): void {
  d.checkInvariants();
  const ns = `usable${fresh++}`;
  using def = new Library(ns, 'DEF', undefined, { dispatcher: d, location: 'usable.ts:1' });
  const op = def.define('probe(Tensor x) -> str');
  using impl = new Library(ns, 'IMPL', K.CPU, { dispatcher: d, location: 'usable.ts:2' });
  impl.impl('probe', () => 'probed');
  assert.equal(op.call(cpu()), 'probed');
  d.checkInvariants();
}

/** What a failed registration must not change. */
function snapshot(d: Dispatcher, ...ops: OperatorHandle[]) {
  return JSON.stringify({
    names: d.operatorNames().sort(),
    ops: ops.map((op) => [op.dump(), op.dumpComputedTable(), op.schema?.toString()]),
  });
}

function throwsWith(fn: () => unknown, expected: string, suffix?: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof RuntimeError, String(e));
    assert.ok(e.message.startsWith(expected), `message:\n${e.message}\nexpected to start with:\n${expected}`);
    if (suffix !== undefined) assert.ok(e.message.endsWith(suffix), `message:\n${e.message}\nexpected end:\n${suffix}`);
    return true;
  });
}

describe('namespaces and library kinds', () => {
  it('a second DEF block for a namespace fails until the first is disposed', () => {
    const { d, lib } = newDispatcher();
    const first = lib('test', 'DEF', undefined, 'first.ts:1');
    const op = first.define('foo(Tensor x) -> Tensor');
    const before = snapshot(d, op);
    throwsWith(
      () => lib('test', 'DEF', undefined, 'second.ts:2'),
      'Only a single TORCH_LIBRARY can be used to register the namespace test; please put all of your definitions ' +
        'in a single TORCH_LIBRARY block.  If you were trying to specify implementations, consider using ' +
        'TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define operators for a single ' +
        'namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  ' +
        'Previous registration of TORCH_LIBRARY was registered at first.ts:1; latest registration was registered ' +
        'at second.ts:2',
    );
    assert.equal(snapshot(d, op), before);
    assertUsable(d);
    first.dispose();
    assert.equal(d.findOp('test::foo'), undefined, 'disposing the DEF block drops its definitions');
    using second = lib('test', 'DEF', undefined, 'second.ts:3');
    assert.equal(
      second.define('foo(Tensor x, int n) -> Tensor').schema?.toString(),
      'test::foo(Tensor x, int n) -> Tensor',
    );
    assertUsable(d);
  });

  it('FRAGMENT blocks share a namespace with each other and with its DEF block', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    using a = lib('test', 'FRAGMENT', undefined, 'frag_a.ts:1');
    using b = lib('test', 'FRAGMENT', undefined, 'frag_b.ts:1');
    const f = def.define('f(Tensor x) -> Tensor');
    const g = a.define('test::g(Tensor x) -> Tensor');
    const h = b.define('h(Tensor x) -> Tensor', { impl: identity });
    assert.deepEqual(d.operatorNames().sort(), ['test::f', 'test::g', 'test::h']);
    assert.match(g.dump(), /\ndebug: registered at frag_a\.ts:1\n/);
    const x = cpu();
    assert.equal(h.call(x), x, 'define(..., { impl }) registers a catch-all kernel');
    assert.match(h.dump(), /\nCompositeImplicitAutograd\[alias\]: registered at frag_b\.ts:1 :: /);
    b.dispose();
    assert.equal(d.findOp('test::h'), undefined);
    assert.ok(f.schema !== undefined && g.schema !== undefined);
    assertUsable(d);
  });

  it('DEF and FRAGMENT blocks refuse the wildcard namespace _ and a dispatch key', () => {
    const { d, lib } = newDispatcher();
    for (const [kind, name] of [['DEF', 'TORCH_LIBRARY'], ['FRAGMENT', 'TORCH_LIBRARY_FRAGMENT']] as const) {
      throwsWith(
        () => lib('_', kind, undefined, 'wild.ts:3'),
        `${name}: cannot define ${name} with the wildcard namespace _ (every ${name} defines operators for a ` +
          'distinct namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  ',
        `(Error occurred while processing ${name} block at wild.ts:3)`,
      );
      throwsWith(
        () => lib('test', kind, 'CPU', 'keyed.ts:4'),
        `${name} blocks take no dispatch key.`,
        `(Error occurred while processing ${name} block at keyed.ts:4)`,
      );
    }
    // The failed DEF blocks claimed nothing.
    using def = lib('test', 'DEF');
    def.define('ok(Tensor x) -> Tensor');
    assertUsable(d);
  });

  it('an unknown kind is refused', () => {
    const { d } = newDispatcher();
    assert.throws(
      () => new Library('test', 'PRIVATE' as LibraryKind, undefined, { dispatcher: d }),
      /^RuntimeError: Unsupported kind: PRIVATE$/,
    );
    assertUsable(d);
  });

  it('without a location a block records its caller as file:line', () => {
    const { d } = newDispatcher();
    using def = new Library('test', 'DEF', undefined, { dispatcher: d });
    assert.match(def.location, /library\.test\.ts:\d+$/);
    const op = def.define('foo(Tensor x) -> Tensor');
    assert.ok(op.dump().includes(`\ndebug: registered at ${def.location}\n`));
  });
});

describe('def errors', () => {
  it('a duplicate def fails, naming both registrations, and changes nothing', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF', undefined, 'def.ts:1');
    const op = def.define('foo(Tensor x) -> Tensor');
    using frag = lib('test', 'FRAGMENT', undefined, 'frag.ts:2');
    const before = snapshot(d, op);
    throwsWith(
      () => frag.define('foo(Tensor x, int n) -> Tensor', { aliasAnalysis: 'CONSERVATIVE' }),
      'Tried to register an operator (test::foo(Tensor x, int n) -> Tensor) with the same name and overload name ' +
        "multiple times. Each overload's schema should only be registered with a single call to def(). Duplicate " +
        'registration: registered at frag.ts:2. Original registration: registered at def.ts:1',
    );
    assert.equal(snapshot(d, op), before);
    frag.dispose(); // must not take the original def with it
    assert.equal(op.schema?.toString(), 'test::foo(Tensor x) -> Tensor');
    assertUsable(d);
  });

  it('an overload is a different operator', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    def.define('foo(Tensor x) -> Tensor');
    const overload = def.define('foo.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)');
    assert.equal(overload.name, 'test::foo.out');
    assert.equal(overload.overloadName, 'out');
    assert.equal(d.findSchema('test::foo', 'out'), overload);
    assertUsable(d);
  });

  it('define inside an IMPL block fails with the block kind and location', () => {
    const { d, lib } = newDispatcher();
    using impl = lib('test', 'IMPL', 'CPU', 'impl.ts:9');
    // The prelude names the operator as written: the namespace is only added after this check, as in PyTorch.
    for (const [schema, name] of [['bar(Tensor x) -> Tensor', 'bar'], ['test::baz(Tensor x) -> Tensor', 'test::baz']]) {
      throwsWith(
        () => impl.define(schema),
        `def("${name}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  All def()s should be ` +
          'placed in the (unique) TORCH_LIBRARY block for their namespace.  ',
        '(Error occurred while processing TORCH_LIBRARY_IMPL block at impl.ts:9)',
      );
    }
    assert.deepEqual(d.operatorNames(), []);
    assertUsable(d);
  });

  it('a schema namespace other than the block namespace fails in DEF and FRAGMENT blocks', () => {
    const { d, lib } = newDispatcher();
    for (const [kind, name] of [['DEF', 'TORCH_LIBRARY'], ['FRAGMENT', 'TORCH_LIBRARY_FRAGMENT']] as const) {
      using block = lib('ns', kind, undefined, 'ns.ts:5');
      throwsWith(
        () => block.define('other::foo(Tensor x) -> Tensor'),
        `Explicitly provided namespace (other) in schema string does not match namespace of enclosing ${name} ` +
          'block (ns).  Move this definition to the (unique) TORCH_LIBRARY block corresponding to this namespace ' +
          '(and consider deleting the namespace from your schema string.)  ',
        `(Error occurred while processing ${name} block at ns.ts:5)`,
      );
    }
    assert.deepEqual(d.operatorNames(), []);
    assertUsable(d);
  });
});

describe('define is all or nothing', () => {
  it('an invalid alias analysis kind is refused before anything is registered', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    for (const kind of ['PURE', 'from_schema', 'INTERNAL_SPECIAL_CASE']) {
      throwsWith(
        () => def.define('foo(Tensor x) -> Tensor', { aliasAnalysis: kind as 'CONSERVATIVE' }),
        `Invalid alias_analysis type ${kind}`,
      );
    }
    assert.deepEqual(d.operatorNames(), []);
    for (const kind of ['', 'FROM_SCHEMA', 'CONSERVATIVE', 'PURE_FUNCTION'] as const) {
      using frag = lib('test', 'FRAGMENT');
      const op = frag.define(`k${kind === '' ? 'default' : kind}(Tensor x) -> Tensor`, { aliasAnalysis: kind });
      assert.match(op.dump(), new RegExp(`alias analysis kind: ${kind || 'FROM_SCHEMA'}`));
    }
    assertUsable(d);
  });

  it('a def whose kernel is refused leaves neither the def nor the kernel behind', () => {
    const warnings: string[] = [];
    // Warnings as errors: the override warning refuses the second catch-all kernel.
    const d = new Dispatcher({
      onWarning: (m) => {
        warnings.push(m);
        throw new RuntimeError(`warning raised as an error: ${m.split('\n')[0]}`);
      },
    });
    using impl = new Library('test', 'FRAGMENT', undefined, { dispatcher: d, location: 'impl.ts:1' });
    impl.impl('foo', identity);
    const before = snapshot(d, d.findOp('test::foo')!);
    using def = new Library('test', 'DEF', undefined, { dispatcher: d, location: 'def.ts:2' });
    assert.throws(() => def.define('foo(Tensor x) -> Tensor', { impl: identity }), /warning raised as an error/);
    assert.equal(warnings.length, 1);
    assert.equal(snapshot(d, d.findOp('test::foo')!), before);
    assert.equal(d.findOp('test::foo')!.schema, undefined, 'the def was rolled back');
    // The same block can define it afterwards.
    const op = def.define('foo(Tensor x) -> Tensor');
    assert.equal(op.schema?.toString(), 'test::foo(Tensor x) -> Tensor');
  });

  it('garbage schemas and kernels are refused with clear errors', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    assert.throws(() => def.define(42 as unknown as string), /^TypeError: define\(\): argument 'schema' must be str/);
    assert.throws(
      () => def.define('foo(Tensor x) -> Tensor', { impl: 'kernel' as unknown as typeof identity }),
      /expected a kernel \(a function or a KernelFunction\), got string/,
    );
    assert.deepEqual(d.operatorNames(), []);
    assertUsable(d);
  });
});

describe('impl errors', () => {
  it('an impl namespace other than the block namespace fails', () => {
    const { d, lib } = newDispatcher();
    using impl = lib('test', 'IMPL', undefined, 'impl.ts:3');
    throwsWith(
      () => impl.impl('other::foo', identity, 'CPU'),
      'impl("other::foo", ...): Explicitly provided namespace (other) in operator name does not match namespace of ' +
        'enclosing TORCH_LIBRARY_IMPL block (test).',
      '(Error occurred while processing TORCH_LIBRARY_IMPL block at impl.ts:3)',
    );
    assert.deepEqual(d.operatorNames(), []);
    assertUsable(d);
  });

  it('an explicit key inconsistent with the IMPL block key fails; the same key is accepted', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    const op = def.define('foo(Tensor x) -> Tensor');
    using impl = lib('test', 'IMPL', 'CPU', 'cpu_block.ts:4');
    const before = snapshot(d, op);
    throwsWith(
      () => impl.impl('foo', identity, K.Meta),
      'impl("foo", ...): Explicitly provided dispatch key (Meta) is inconsistent with the dispatch key of the ' +
        'enclosing TORCH_LIBRARY_IMPL block (CPU).  Please declare a separate TORCH_LIBRARY_IMPL block for this ' +
        'dispatch key and move your impl() there.  ',
      '(Error occurred while processing TORCH_LIBRARY_IMPL block at cpu_block.ts:4)',
    );
    assert.equal(snapshot(d, op), before);
    impl.impl('foo', () => 'cpu', 'CPU');
    assert.equal(op.call(cpu()), 'cpu');
    assertUsable(d);
  });

  it('dispatch keys may be given by name; an unknown name fails before anything is registered', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    const op = def.define('foo(Tensor x) -> str');
    using impl = lib('test', 'IMPL');
    impl.impl('foo', () => 'autograd cpu', 'AutogradCPU').impl('foo', () => 'meta', 'Meta');
    assert.ok(op.hasKernelForDispatchKey(K.AutogradCPU));
    assert.equal(op.call(cpu()), 'autograd cpu');
    assert.throws(() => op.call(meta()), /from the 'AutogradMeta' backend/, 'AutogradMeta has no fallback');
    assert.equal(op.call(fakeTensor(K.Meta, { inference: true })), 'meta');
    const before = snapshot(d, op);
    assert.throws(() => impl.impl('foo', () => 'cuda', 'CUDA'), /^RuntimeError: could not parse dispatch key: CUDA$/);
    assert.throws(() => lib('test', 'IMPL', 'Bogus'), /could not parse dispatch key: Bogus/);
    assert.equal(snapshot(d, op), before);
    using named = lib('test', 'IMPL', 'QuantizedCPU');
    named.impl('foo', () => 'quantized');
    const quantized = DispatchKeySet.of(K.QuantizedCPU);
    assert.equal(op.redispatch(quantized.hi, quantized.lo, null), 'quantized');
    assertUsable(d);
  });

  it('a kernel schema that does not match the def fails, whichever is registered first', () => {
    const { d, lib } = newDispatcher();
    // impl first, then def: the def fails and leaves no schema behind.
    const impl = lib('test', 'IMPL', 'CPU', 'impl.ts:2');
    impl.impl('foo', () => 'two args', undefined, { schema: '(Tensor x, int y) -> Tensor', debug: 'typed kernel' });
    const op = d.findOp('test::foo')!;
    const before = snapshot(d, op);
    const def = lib('test', 'DEF', undefined, 'def.ts:1');
    throwsWith(
      () => def.define('foo(Tensor x) -> Tensor'),
      "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n" +
        '  operator: test::foo\n' +
        '  expected schema: test::foo(Tensor x) -> Tensor\n' +
        '    registered at def.ts:1\n' +
        '  inferred schema: test::foo(Tensor x, int y) -> Tensor\n' +
        '    typed kernel\n' +
        '  reason: The number of arguments is different. 1 vs 2.',
    );
    assert.equal(snapshot(d, op), before);
    assert.equal(op.schema, undefined);
    assert.equal(d.findSchema('test::foo'), undefined);
    assert.match(op.dump(), /^name: test::foo\nschema: \(none\)\nCPU: typed kernel :: \(Tensor x, int y\) -> Tensor /);
    // The failed def left no def count behind: the matching def succeeds.
    def.define('foo(Tensor a, int b) -> Tensor');
    assert.equal(op.call(cpu(), 1), 'two args');

    // def first, then impl: the impl fails and is not registered.
    def.define('bar(Tensor x) -> Tensor');
    const bar = d.findOp('test::bar')!;
    const barBefore = snapshot(d, bar);
    throwsWith(
      () => impl.impl('bar', () => 'bad', undefined, { schema: '(Tensor x) -> int', debug: 'returns int' }),
      "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n" +
        '  operator: test::bar\n' +
        '  expected schema: test::bar(Tensor x) -> Tensor\n' +
        '    registered at def.ts:1\n' +
        '  inferred schema: test::bar(Tensor x) -> int\n' +
        '    returns int\n' +
        '  reason: Type mismatch in return 1: Tensor vs. int.',
    );
    assert.equal(snapshot(d, bar), barBefore);
    assert.throws(() => bar.call(cpu()), NotImplementedError);
    impl.impl('bar', () => 'good', undefined, { schema: '(Tensor self) -> Tensor' });
    assert.equal(bar.call(cpu()), 'good');
    def.dispose();
    impl.dispose();
    assert.deepEqual(d.operatorNames(), []);
    assertUsable(d);
  });

  it('a kernel function with more parameters than the schema allows is refused', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF', undefined, 'def.ts:1');
    const op = def.define('foo(Tensor x) -> Tensor');
    using impl = lib('test', 'IMPL', 'CPU', 'impl.ts:2');
    const before = snapshot(d, op);
    assert.throws(
      () => impl.impl('foo', (_h: number, _l: number, x: unknown, _extra: unknown) => x, undefined, { debug: 'wide' }),
      (e: unknown) => {
        assert.ok(e instanceof RuntimeError);
        assert.ok(e.message.includes('\n  operator: test::foo\n'), e.message);
        assert.ok(e.message.includes('\n    wide\n'), e.message);
        assert.ok(
          e.message.endsWith(
            '  reason: The kernel function takes 4 parameters but the schema has 1 arguments (plus the two keyset ' +
              'words).',
          ),
          e.message,
        );
        return true;
      },
    );
    assert.equal(snapshot(d, op), before);
    impl.impl('foo', identity); // exactly the keyset words plus the schema's arguments
    const x = cpu();
    assert.equal(op.call(x), x);
    // Impl first, def second: the def is the registration that fails.
    using late = lib('test', 'IMPL', 'CPU');
    late.impl('bar', (_h: number, _l: number, _a: unknown, _b: unknown, _c: unknown) => 0);
    assert.throws(() => def.define('bar(Tensor x) -> Tensor'), /takes 5 parameters but the schema has 1 arguments/);
    assert.equal(d.findSchema('test::bar'), undefined);
    def.define('bar(Tensor x, int a, int b) -> int');
    assertUsable(d);
  });

  it('an impl before its def dispatches without a schema, and the def adopts the same handle', () => {
    const { d, lib } = newDispatcher();
    using impl = lib('test', 'IMPL', 'CPU', 'impl.ts:1');
    impl.impl('late', (_h: number, _l: number, x: unknown, n: unknown) => [x, n]);
    const op = d.findOp('test::late')!;
    assert.equal(d.findSchema('test::late'), undefined);
    assert.throws(
      () => d.findSchemaOrThrow('test::late'),
      /^RuntimeError: Could not find schema for test::late but we found an implementation; did you forget to def\(\) the operator\?$/,
    );
    assert.throws(
      () => d.findSchemaOrThrow('test::nothing'),
      /^RuntimeError: Could not find schema for test::nothing$/,
    );
    assert.match(op.dump(), /^name: test::late\nschema: \(none\)\nCPU: registered at impl\.ts:1 :: \(none\) /);
    const x = cpu();
    assert.deepEqual(op.call(x, 2), [x, 2]);
    using def = lib('test', 'DEF', undefined, 'def.ts:2');
    assert.equal(def.define('late(Tensor x, int n) -> Tensor[]'), op);
    assert.equal(d.findSchemaOrThrow('test::late'), op);
    assert.deepEqual(op.call(x, 3), [x, 3]);
    def.dispose();
    assert.equal(d.findSchema('test::late'), undefined, 'the impl keeps the operator, without its schema');
    assert.equal(d.findOp('test::late'), op);
    assert.deepEqual(op.call(x, 4), [x, 4]);
    assertUsable(d);
  });
});

describe('override warning', () => {
  it('prints PyTorch text for a second kernel at one key, and for a second catch-all', () => {
    const { d, lib, warnings } = newDispatcher();
    using def = lib('test', 'DEF', undefined, 'def.ts:1');
    const op = def.define('foo(Tensor x) -> str');
    using impl = lib('test', 'IMPL');
    impl.impl('foo', () => 'first', 'CPU', { debug: 'first kernel' });
    assert.equal(warnings.length, 0);
    impl.impl('foo', () => 'second', 'CPU', { debug: 'second kernel' });
    assert.equal(warnings.length, 1);
    assert.equal(
      warnings[0],
      'Overriding a previously registered kernel for the same operator and the same dispatch key\n' +
        '  operator: test::foo(Tensor x) -> str\n' +
        '    registered at def.ts:1\n' +
        '  dispatch key: CPU\n' +
        '  previous kernel: first kernel\n' +
        '       new kernel: second kernel',
    );
    assert.equal(op.call(cpu()), 'second');
    // Switchyard names the kernel being overridden (the active one). PyTorch 1.13 names the kernel that first fixed
    // the C++ signature, or "no debug info" for Python kernels (SEMANTICS §4).
    impl.impl('foo', () => 'third', 'CPU', { debug: 'third kernel' });
    assert.ok(warnings[1].endsWith('\n  previous kernel: second kernel\n       new kernel: third kernel'), warnings[1]);
    impl.impl('foo', () => 'a', undefined, { debug: 'catch-all a' });
    impl.impl('foo', () => 'b', undefined, { debug: 'catch-all b' });
    assert.equal(warnings.length, 3);
    assert.ok(warnings[2].includes('\n  dispatch key: (catch all)\n  previous kernel: catch-all a\n'), warnings[2]);
    // An operator without a schema has no debug info to print.
    impl.impl('noschema', () => 1, 'Meta', { debug: 'x' }).impl('noschema', () => 2, 'Meta', { debug: 'y' });
    assert.ok(
      warnings[3].includes('\n  operator: test::noschema\n    no debug info\n  dispatch key: Meta\n'),
      warnings[3],
    );
    assertUsable(d);
  });
});

describe('fallback errors', () => {
  it('a fallback outside namespace _ or outside an IMPL block fails', () => {
    const { d, lib } = newDispatcher();
    using impl = lib('test', 'IMPL', 'Tracer', 'tracer.ts:6');
    throwsWith(
      () => impl.fallback(() => {}),
      'fallback(...): Fallback functions which apply to only a single namespace (you specified test) are not ' +
        'supported.  If you intended to apply this fallback function globally, please define a separate block:\n\n' +
        '    TORCH_LIBRARY_IMPL(_, Tracer, m) { m.fallback(...); }\n\n',
      '(Error occurred while processing TORCH_LIBRARY_IMPL block at tracer.ts:6)',
    );
    using def = lib('test', 'DEF', undefined, 'def.ts:8');
    throwsWith(
      () => def.fallback(() => {}),
      'fallback(...): Cannot define an operator inside of a TORCH_LIBRARY block.  Did you mean to call this ' +
        'function inside a TORCH_LIBRARY_IMPL block?  ',
      '(Error occurred while processing TORCH_LIBRARY block at def.ts:8)',
    );
    using frag = lib('test', 'FRAGMENT', undefined, 'frag.ts:9');
    throwsWith(
      () => frag.fallback(() => {}),
      'fallback(...): Cannot define an operator inside of a TORCH_LIBRARY_FRAGMENT block.',
      '(Error occurred while processing TORCH_LIBRARY_FRAGMENT block at frag.ts:9)',
    );
    using keyless = lib('_', 'IMPL', undefined, 'keyless.ts:1');
    throwsWith(() => keyless.fallback(() => {}), "fallback(...): a fallback needs the block's dispatch key.");
    const op = def.define('foo(Tensor x) -> Tensor');
    assert.ok(!op.computedTable().some((r) => r.key === 'Tracer'), 'no Tracer fallback was registered');
    assertUsable(d);
  });

  it('a second fallback for one key fails and the first stays in place until disposed', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    const op = def.define('foo(Tensor x) -> str');
    const first = lib('_', 'IMPL', 'Tracer', 'first.ts:1');
    first.fallback(() => {
      throw new Error('first tracer fallback ran');
    });
    const before = snapshot(d, op);
    using second = lib('_', 'IMPL', 'Tracer', 'second.ts:2');
    throwsWith(
      () => second.fallback(() => {}, { debug: 'second tracer' }),
      'Tried to register multiple backend fallbacks for the same dispatch key Tracer; previous registration ' +
        'registered at first.ts:1, new registration second tracer',
    );
    assert.equal(snapshot(d, op), before);
    assert.throws(() => op.call(fakeTensor(K.CPU, { extra: [K.Tracer] })), /first tracer fallback ran/);
    first.dispose();
    d.checkInvariants();
    second.fallback(fallthroughKernel, { debug: 'second tracer' });
    assert.deepEqual(
      op.computedTable().find((r) => r.key === 'Tracer'),
      { key: 'Tracer', kernel: 'second tracer', source: 'backend fallback', fallthrough: true },
    );
    assertUsable(d);
  });

  it('an Autograd alias fallback fails at AutogradOther, which holds the framework fallthrough', () => {
    const { d, lib } = newDispatcher();
    using def = lib('test', 'DEF');
    const op = def.define('foo(Tensor x) -> str');
    using impl = lib('test', 'IMPL', 'Meta');
    impl.impl('foo', () => 'meta');
    const before = snapshot(d, op);
    using autograd = lib('_', 'IMPL', 'Autograd', 'autograd.ts:3');
    throwsWith(
      () => autograd.fallback(() => {}, { debug: 'autograd fallback' }),
      'Tried to register multiple backend fallbacks for the same dispatch key AutogradOther; previous registration ' +
        'registered in switchyard framework, new registration autograd fallback',
    );
    assert.equal(snapshot(d, op), before, 'no runtime key of the alias got the fallback');
    assert.throws(() => op.call(meta()), /from the 'AutogradMeta' backend/);
    using fix = lib('_', 'IMPL', 'AutogradMeta');
    fix.fallback(fallthroughKernel);
    assert.equal(op.call(meta()), 'meta', 'a fallthrough fallback at AutogradMeta fixes the meta call');
    assertUsable(d);
  });

  it(
    'an alias fallback that fails part-way leaves none of its runtime keys registered (unlike PyTorch)',
    () => {
      const { d, lib } = newDispatcher({ frameworkFallbacks: false });
      using def = lib('test', 'DEF');
      const op = def.define('foo(Tensor x) -> str');
      d.checkInvariants();
      using meta = lib('_', 'IMPL', 'AutogradMeta', 'meta.ts:1');
      meta.fallback(fallthroughKernel);
      const before = snapshot(d, op);
      using autograd = lib('_', 'IMPL', 'Autograd', 'autograd.ts:2');
      assert.throws(
        () => autograd.fallback(() => {}),
        /multiple backend fallbacks for the same dispatch key AutogradMeta/,
      );
      assert.equal(snapshot(d, op), before);
    },
  );
});

describe('lifetime', () => {
  it('an operator disappears once its last def and impl are gone; its stale handle fails clearly', () => {
    const { d, lib } = newDispatcher();
    const def = lib('test', 'DEF');
    const op = def.define('foo(Tensor x) -> str');
    const impl = lib('test', 'IMPL', 'CPU');
    impl.impl('foo', () => 'cpu');
    def.dispose();
    assert.equal(d.findOp('test::foo'), op, 'the impl keeps it alive');
    assert.equal(op.call(cpu()), 'cpu');
    impl.dispose();
    assert.equal(d.findOp('test::foo'), undefined);
    assert.deepEqual(d.operatorNames(), []);
    assert.equal(op.dump(), '');
    assert.throws(() => op.call(cpu()), /^RuntimeError: Operator test::foo has been deregistered$/);
    assert.throws(() => op.redispatch(0, 0, cpu()), /has been deregistered/);
    assert.throws(() => op.callBoxed([]), /Operator test::foo is not registered with this dispatcher/);
    assert.throws(() => op.computedTable(), /is not registered with this dispatcher/);
    d.checkInvariants();
    // A new definition makes a new operator; the stale handle stays dead.
    using again = lib('test', 'DEF');
    const op2 = again.define('foo(Tensor x) -> str');
    using impl2 = lib('test', 'IMPL', 'CPU');
    impl2.impl('foo', () => 'again');
    assert.notEqual(op2, op);
    assert.equal(op2.call(cpu()), 'again');
    assert.throws(() => op.call(cpu()), /has been deregistered/);
    assertUsable(d);
  });

  it(
    "a call function captured from a handle never runs another operator's kernels after deregistration",
    () => {
      const { d, lib } = newDispatcher();
      const def = lib('a', 'DEF');
      const a = def.define('f(Tensor x) -> str');
      const impl = lib('a', 'IMPL', 'CPU');
      impl.impl('f', () => 'a::f');
      const capturedCall = a.call;
      const capturedRedispatch = a.redispatch;
      impl.dispose();
      def.dispose();
      using def2 = lib('b', 'DEF');
      def2.define('g(Tensor x) -> str');
      using impl2 = lib('b', 'IMPL', 'CPU');
      impl2.impl('g', () => 'b::g');
      assert.equal(d.tableStore.rowCount, 2, 'b::g does not take the row a::f had');
      const ks = DispatchKeySet.of(K.CPU);
      assert.throws(() => capturedCall(cpu()), /a::f/);
      assert.throws(() => capturedRedispatch(ks.hi, ks.lo, cpu()), /a::f/);
    },
  );

  it('`using` deregisters everything a block registered when the scope ends', () => {
    const { d, lib } = newDispatcher();
    using keep = lib('keep', 'DEF');
    const kept = keep.define('k(Tensor x) -> Tensor');
    const keptTable = kept.dumpComputedTable();
    {
      using def = lib('test', 'DEF');
      def.define('foo(Tensor x) -> Tensor', { impl: identity });
      def.define('bar(Tensor x) -> Tensor');
      using impl = lib('test', 'IMPL', 'CPU');
      impl.impl('bar', identity).impl('baz', identity);
      using fb = lib('_', 'IMPL', 'Tracer');
      fb.fallback(fallthroughKernel, { debug: 'scoped tracer' });
      assert.deepEqual(d.operatorNames().sort(), ['keep::k', 'test::bar', 'test::baz', 'test::foo']);
      assert.ok(kept.dumpComputedTable().includes('Tracer: fallthrough scoped tracer [backend fallback]'));
    }
    assert.deepEqual(d.operatorNames(), ['keep::k']);
    assert.equal(kept.dumpComputedTable(), keptTable, 'the scoped fallback is gone from every operator');
    using again = lib('test', 'DEF');
    again.define('foo(Tensor x) -> Tensor');
    assertUsable(d);
  });

  it('without framework fallbacks AutogradCPU (and the TLS-included keys) are missing', () => {
    const { d, lib } = newDispatcher({ frameworkFallbacks: false });
    using def = lib('test', 'DEF');
    const op = def.define('foo(Tensor[] xs) -> str');
    using impl = lib('test', 'IMPL', 'CPU');
    impl.impl('foo', () => 'cpu');
    assert.equal(op.computedTable().map((r) => r.key).join(), 'CPU');
    assert.throws(
      () => op.call([cpu()]),
      /^NotImplementedError: Could not run 'test::foo' with arguments from the 'AutogradCPU' backend/,
    );
    assert.throws(
      () => op.call([fakeTensor(K.CPU, { inference: true })]),
      /with arguments from the 'ADInplaceOrView' backend/,
    );
    assert.throws(() => op.call([]), /with arguments from the 'ADInplaceOrView' backend/);
    d.checkInvariants();
    // The default dispatcher has them, so the same registrations dispatch to CPU there.
    const { lib: lib2 } = newDispatcher();
    using def2 = lib2('test', 'DEF');
    const op2 = def2.define('foo(Tensor[] xs) -> str');
    using impl2 = lib2('test', 'IMPL', 'CPU');
    impl2.impl('foo', () => 'cpu');
    assert.equal(op2.call([cpu()]), 'cpu');
  });
});
