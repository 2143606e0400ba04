// The agent-local include/exclude sets (PyTorch's thread-local LocalDispatchKeySet, SEMANTICS §1.6 and §5).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AUTOGRAD_DISPATCH_KEYSET,
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  excludeKeys,
  includeKeys,
  IValue,
  Library,
  localDispatchKeySet,
  type OperatorHandle,
  withExcludedKeys,
  withIncludedKeys,
  withLocalDispatchKeySet,
} from '../../core/dispatch/mod.ts';
import { cpu, fakeTensor, meta } from './_fake_tensor.ts';

const K = DispatchKey;
const DEFAULT_INCLUDED = 'DispatchKeySet(BackendSelect, ADInplaceOrView)';
const DEFAULT_EXCLUDED = 'DispatchKeySet(AutocastCPU, AutocastWebGPU)';

function current(): [string, string] {
  const { included, excluded } = localDispatchKeySet();
  return [String(included), String(excluded)];
}

function assertDefaults(message?: string): void {
  assert.deepEqual(current(), [DEFAULT_INCLUDED, DEFAULT_EXCLUDED], message);
  const { included, excluded } = localDispatchKeySet();
  assert.equal(included.lo, 0, 'no backend bits are left in the include set');
  assert.equal(excluded.lo, 0, 'no backend bits are left in the exclude set');
}

/** An operator with a labelled kernel per key; `calls` records which kernels ran, in order. */
function setup(keys: number[]) {
  const d = new Dispatcher({ onWarning: () => {} });
  const def = new Library('t', 'DEF', undefined, { dispatcher: d, location: 'tls.ts:1' });
  const op = def.define('f(Tensor[] xs) -> str');
  const impl = new Library('t', 'IMPL', undefined, { dispatcher: d, location: 'tls.ts:2' });
  for (const k of keys) impl.impl('f', () => String(k), k);
  return { d, op, impl, def };
}

/** A Tracer fallback that records `<op> <keyset>` and redispatches below Tracer. */
function traceFallback(d: Dispatcher, log: string[], selfExclude = false): Library {
  const lib = new Library('_', 'IMPL', K.Tracer, { dispatcher: d, location: 'tracer.ts:1' });
  return lib.fallback((op: OperatorHandle, ks, stack) => {
    log.push(`${op.name} ${ks}`);
    const below = ks.and(DispatchKeySet.fullAfter(K.Tracer));
    if (!selfExclude) return op.redispatchBoxed(below, stack);
    using _g = excludeKeys(K.Tracer);
    op.redispatchBoxed(below, stack);
  });
}

describe('local dispatch key set', () => {
  beforeEach(() => assertDefaults('a previous test leaked a guard'));
  afterEach(() => assertDefaults('this test leaked a guard'));

  it('defaults to included {BackendSelect, ADInplaceOrView} and excluded {AutocastCPU, AutocastWebGPU}', () => {
    const { included, excluded } = localDispatchKeySet();
    assert.ok(included.equals(DispatchKeySet.of(K.BackendSelect, K.ADInplaceOrView)));
    assert.ok(excluded.equals(DispatchKeySet.of(K.AutocastCPU, K.AutocastWebGPU)));
    // So a CPU tensor's AutocastCPU key never dispatches, and a BackendSelect kernel runs even without tensors.
    const { op } = setup([K.AutocastCPU, K.BackendSelect, K.CPU]);
    assert.equal(op.call([]), String(K.BackendSelect));
    const { op: op2 } = setup([K.AutocastCPU, K.CPU]);
    assert.equal(op2.call([cpu()]), String(K.CPU));
    withLocalDispatchKeySet({ included: DispatchKeySet.EMPTY, excluded: DispatchKeySet.EMPTY }, () => {
      assert.equal(op2.call([cpu()]), String(K.AutocastCPU), 'without the default exclusion autocast runs');
    });
  });

  it('includeKeys and excludeKeys hold for a `using` scope and undo exactly their change', () => {
    {
      using _t = includeKeys(K.Tracer);
      using _a = excludeKeys([K.AutogradFunctionality, K.AutogradOther]);
      assert.deepEqual(current(), [
        'DispatchKeySet(BackendSelect, ADInplaceOrView, Tracer)',
        'DispatchKeySet(AutogradOther, AutocastCPU, AutocastWebGPU)', // AutogradFunctionality: no backend bits
      ]);
      assert.ok(localDispatchKeySet().excluded.has(K.AutogradFunctionality));
    }
    assertDefaults();
    // A keyset, a single key and an array are all accepted.
    {
      using _s = includeKeys(DispatchKeySet.of(K.Profiler, K.Python));
      assert.equal(current()[0], 'DispatchKeySet(BackendSelect, Python, ADInplaceOrView, Profiler)');
    }
    assertDefaults();
  });

  it('a nested guard that re-adds a present key does not remove it on exit', () => {
    {
      using _outer = includeKeys(K.Tracer);
      {
        using _inner = includeKeys([K.Tracer, K.Profiler]);
        assert.equal(current()[0], 'DispatchKeySet(BackendSelect, ADInplaceOrView, Profiler, Tracer)');
      }
      assert.equal(current()[0], 'DispatchKeySet(BackendSelect, ADInplaceOrView, Tracer)', 'Tracer survives');
      {
        using _default = includeKeys(K.BackendSelect);
        using _autocast = excludeKeys(K.AutocastCPU);
      }
      assert.equal(current()[0], 'DispatchKeySet(BackendSelect, ADInplaceOrView, Tracer)');
      assert.equal(current()[1], DEFAULT_EXCLUDED, 'default keys re-added by a guard stay');
    }
    assertDefaults();
    // Disposing twice is harmless.
    const g = includeKeys(K.Tracer);
    g[Symbol.dispose]();
    using _again = includeKeys(K.Tracer);
    g[Symbol.dispose]();
    assert.ok(localDispatchKeySet().included.has(K.Tracer), "a stale guard does not remove a newer guard's key");
  });

  it('a backend key in a guard adds and removes its backend bit with its functionality bit', () => {
    {
      using _m = includeKeys(K.Meta);
      assert.equal(current()[0], 'DispatchKeySet(Meta, BackendSelect, ADInplaceOrView)');
      {
        using _c = includeKeys(K.AutogradMeta); // the Meta bit is already there: only AutogradFunctionality is new
        assert.equal(current()[0], 'DispatchKeySet(Meta, BackendSelect, ADInplaceOrView, AutogradMeta)');
      }
      assert.equal(current()[0], 'DispatchKeySet(Meta, BackendSelect, ADInplaceOrView)');
    }
    assertDefaults();
  });

  it('guards restore the sets when the guarded code throws (callback forms and `using`)', () => {
    assert.throws(() =>
      withIncludedKeys(K.Tracer, () => {
        assert.ok(localDispatchKeySet().included.has(K.Tracer));
        throw new Error('include body');
      }), /include body/);
    assertDefaults();
    assert.throws(() =>
      withExcludedKeys(AUTOGRAD_DISPATCH_KEYSET, () => {
        assert.ok(localDispatchKeySet().excluded.has(K.AutogradOther));
        throw new Error('exclude body');
      }), /exclude body/);
    assertDefaults();
    assert.throws(() => {
      using _a = includeKeys(K.Profiler);
      using _b = excludeKeys(K.BackendSelect);
      throw new Error('using body');
    }, /using body/);
    assertDefaults();
    const snapshot = { included: DispatchKeySet.of(K.Python), excluded: DispatchKeySet.EMPTY };
    assert.throws(() =>
      withIncludedKeys(K.Tracer, () =>
        withLocalDispatchKeySet(snapshot, () => {
          assert.deepEqual(current(), ['DispatchKeySet(Python)', 'DispatchKeySet()']);
          throw new Error('forced body');
        })), /forced body/);
    assertDefaults();
    // A kernel that throws inside a call restores the guards it opened.
    const { d, op } = setup([K.CPU]);
    const log: string[] = [];
    using _fb = traceFallback(d, log, true);
    using _t = includeKeys(K.Tracer);
    assert.throws(() => op.call([meta()]), /from the 'AutogradMeta' backend/);
    assert.deepEqual(log, ['t::f DispatchKeySet(Meta, AutogradMeta, Tracer)']);
    assert.ok(!localDispatchKeySet().excluded.has(K.Tracer), "the fallback's exclude guard was undone");
  });

  it('withLocalDispatchKeySet replaces both sets for its extent and returns the result', () => {
    const { op } = setup([K.BackendSelect, K.CompositeExplicitAutograd]);
    assert.equal(op.call([]), String(K.BackendSelect));
    const inner = withLocalDispatchKeySet(
      { included: DispatchKeySet.EMPTY, excluded: DispatchKeySet.of(K.AutocastCPU) },
      () => {
        assert.deepEqual(current(), ['DispatchKeySet()', 'DispatchKeySet(AutocastCPU)']);
        return op.call([]);
      },
    );
    assert.equal(inner, String(K.CompositeExplicitAutograd), 'no BackendSelect in the include set: Undefined slot');
    // A snapshot taken inside a guard reproduces the guard's effect elsewhere.
    const snapshot = withIncludedKeys(K.Tracer, () => localDispatchKeySet());
    assertDefaults();
    withLocalDispatchKeySet(snapshot, () => assert.ok(localDispatchKeySet().included.has(K.Tracer)));
  });

  it('an included key with a fallback sees every call, with or without tensors, boxed or unboxed', () => {
    const d = new Dispatcher();
    using def = new Library('t', 'DEF', undefined, { dispatcher: d });
    const zeros = def.define('zeros(int[] size) -> str');
    const add = def.define('add(Tensor a, Tensor b) -> str');
    using impl = new Library('t', 'IMPL', undefined, { dispatcher: d });
    impl.impl('zeros', (_h: number, _l: number, size: number[]) => `zeros ${size}`, K.CompositeExplicitAutograd);
    impl.impl('add', () => 'cpu add', K.CPU);
    const log: string[] = [];
    using _fb = traceFallback(d, log);
    assert.equal(zeros.call([2]), 'zeros 2');
    assert.equal(add.call(cpu(), cpu()), 'cpu add');
    assert.deepEqual(log, [], 'Tracer is not in any keyset yet');
    {
      using _t = includeKeys(K.Tracer);
      assert.equal(zeros.call([3]), 'zeros 3');
      assert.equal(add.call(cpu(), cpu()), 'cpu add');
      const stack = [IValue.list([IValue.int(4)])];
      zeros.callBoxed(stack);
      assert.deepEqual(stack.map((v) => v.toJS()), ['zeros 4']);
    }
    assert.equal(zeros.call([5]), 'zeros 5');
    // The keyset a kernel receives is already masked: fallthrough keys (BackendSelect, ADInplaceOrView,
    // AutogradCPU) are gone, and AutocastCPU is excluded.
    assert.deepEqual(log, [
      't::zeros DispatchKeySet(Tracer)',
      't::add DispatchKeySet(CPU, Tracer)',
      't::zeros DispatchKeySet(Tracer)',
    ]);
  });

  it('an included key stays in force for nested calls unless the fallback excludes itself', () => {
    const d = new Dispatcher();
    using def = new Library('t', 'DEF', undefined, { dispatcher: d });
    const inner = def.define('inner(Tensor x) -> str');
    const outer = def.define('outer(Tensor x) -> str');
    using impl = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    impl.impl('inner', () => 'inner');
    impl.impl('outer', (_h: number, _l: number, x: unknown) => `outer(${inner.call(x)})`);
    for (const selfExclude of [false, true]) {
      const log: string[] = [];
      using _fb = traceFallback(d, log, selfExclude);
      using _t = includeKeys(K.Tracer);
      assert.equal(outer.call(cpu()), 'outer(inner)');
      assert.deepEqual(
        log.map((l) => l.split(' ')[0]),
        selfExclude ? ['t::outer'] : ['t::outer', 't::inner'],
      );
    }
  });

  it('inference mode: excluding the autograd keys skips autograd kernels; inference tensors skip ADInplaceOrView', () => {
    const { op } = setup([K.AutogradCPU, K.ADInplaceOrView, K.CPU]);
    const normal = cpu(), inference = fakeTensor(K.CPU, { inference: true });
    assert.equal(op.call([normal]), String(K.AutogradCPU));
    assert.equal(op.call([inference]), String(K.ADInplaceOrView), 'ADInplaceOrView is in the default include set');
    // PyTorch's InferenceMode: included = {BackendSelect}, excluded += autograd_dispatch_keyset.
    const inferenceMode = {
      included: DispatchKeySet.of(K.BackendSelect),
      excluded: localDispatchKeySet().excluded.or(AUTOGRAD_DISPATCH_KEYSET),
    };
    withLocalDispatchKeySet(inferenceMode, () => {
      assert.equal(
        String(localDispatchKeySet().excluded),
        'DispatchKeySet(AutogradOther, AutocastCPU, AutocastWebGPU)',
      );
      assert.equal(op.call([normal]), String(K.ADInplaceOrView), 'a normal tensor still carries ADInplaceOrView');
      assert.equal(op.call([inference]), String(K.CPU));
      assert.equal(op.call([inference, normal]), String(K.ADInplaceOrView));
    });
    // AutoDispatchBelowAutograd: only the autograd keys are excluded.
    withExcludedKeys(AUTOGRAD_DISPATCH_KEYSET, () => {
      assert.equal(op.call([normal]), String(K.ADInplaceOrView));
      assert.equal(op.call([meta()]), String(K.ADInplaceOrView), 'AutogradMeta (missing) is skipped too');
    });
    assert.equal(op.call([normal]), String(K.AutogradCPU));
  });

  it("the fallthrough mask comes from the arguments' backend, not from backend bits in the include set", () => {
    // Included Meta joins the cross product: with a CPU tensor the keyset holds Dense, AutogradFunctionality and
    // both backends. The mask is CPU's (AutogradCPU falls through), so the call lands on Dense at the highest
    // backend: the Meta kernel, although AutogradMeta itself has no kernel.
    const { op } = setup([K.CPU, K.Meta]);
    assert.equal(op.call([cpu()]), String(K.CPU));
    using _m = includeKeys(K.Meta);
    assert.equal(op.call([cpu()]), String(K.Meta));
    assert.equal(op.call([]), String(K.Meta), 'with no tensors the included backend key decides');
    assert.throws(() => op.call([meta()]), /from the 'AutogradMeta' backend/);
  });
});
