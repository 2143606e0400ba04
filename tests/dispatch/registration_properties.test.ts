// Registration properties: order independence of the stored table (SEMANTICS §3.2 as Switchyard strengthens it),
// an independent reference model of §3.1 (computed entries) and §5 (runtime dispatch), and override stacks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  allRuntimeKeys,
  boxed,
  Dispatcher,
  DispatchKey,
  dispatchKeyName,
  DispatchKeySet,
  fallthroughKernel,
  FRAMEWORK_FALLTHROUGH_KEYS,
  IValue,
  Library,
  NotImplementedError,
  type OperatorHandle,
  RuntimeError,
  type Stack,
  withExcludedKeys,
  withIncludedKeys,
} from '../../core/dispatch/mod.ts';
import { fakeTensor } from './_fake_tensor.ts';

// ---------------------------------------------------------------------------------------------------------------
// Reference model. It works on key *names* and plain sets and shares no code with the dispatcher: the only facts
// it takes from Switchyard are the documented key lists (core/dispatch/dispatch_key.ts) and the keyset bit layout
// (Note [Functionality and backend bits]) used to build tensor-like arguments.
// ---------------------------------------------------------------------------------------------------------------

/** Functionality keys in enum (= priority) order; index + 1 is the functionality's number. */
const FUNCTIONALITIES = [
  'Dense',
  'Quantized',
  'Sparse',
  'BackendSelect',
  'Python',
  'Functionalize',
  'Conjugate',
  'Negative',
  'ZeroTensor',
  'ADInplaceOrView',
  'Profiler',
  'AutogradOther',
  'AutogradFunctionality',
  'Tracer',
  'AutocastCPU',
  'AutocastWebGPU',
  'Batched',
  'VmapMode',
] as const;
type Functionality = (typeof FUNCTIONALITIES)[number];
const BACKENDS = ['CPU', 'WebGPU', 'Meta', 'PrivateUse1', 'PrivateUse2', 'PrivateUse3'] as const;
const PER_BACKEND_PREFIX: Partial<Record<Functionality, string>> = {
  Dense: '',
  Quantized: 'Quantized',
  Sparse: 'Sparse',
  AutogradFunctionality: 'Autograd',
};
const fnum = (f: Functionality): number => FUNCTIONALITIES.indexOf(f) + 1;
const isPerBackend = (f: number): boolean => PER_BACKEND_PREFIX[FUNCTIONALITIES[f - 1]] !== undefined;

/** A runtime key: functionality number and backend number (1-based; 0 when not per-backend). */
interface ModelKey {
  readonly name: string;
  readonly f: number;
  readonly b: number;
}

const UNDEFINED_KEY: ModelKey = { name: 'Undefined', f: 0, b: 0 };
/** Undefined, then every runtime key in table order (functionality order, backends inside). */
const MODEL_KEYS: readonly ModelKey[] = (() => {
  const keys: ModelKey[] = [UNDEFINED_KEY];
  FUNCTIONALITIES.forEach((f, i) => {
    const prefix = PER_BACKEND_PREFIX[f];
    if (prefix === undefined) keys.push({ name: f, f: i + 1, b: 0 });
    else BACKENDS.forEach((b, j) => keys.push({ name: prefix + b, f: i + 1, b: j + 1 }));
  });
  return keys;
})();
const KEY_BY_NAME = new Map(MODEL_KEYS.map((k) => [k.name, k]));
const modelKey = (f: number, b: number): ModelKey => MODEL_KEYS.find((k) => k.f === f && (k.b === b || k.b === 0))!;

const ALIASES = [
  'Autograd',
  'CompositeImplicitAutograd',
  'CompositeExplicitAutograd',
  'CompositeExplicitAutogradNonFunctional',
] as const;

// Alias expansion (§1.5 with Switchyard's keys: no FPGA/ORT/.../NestedTensor, no XLA/Lazy).
const inCEA = (k: ModelKey) => k.b !== 0 && [fnum('Dense'), fnum('Quantized'), fnum('Sparse')].includes(k.f);
const inCEANF = (k: ModelKey) => k.b !== 0 && [fnum('Dense'), fnum('Quantized')].includes(k.f);
const inAutogradAlias = (k: ModelKey) => k.name === 'AutogradOther' || k.f === fnum('AutogradFunctionality');
const inCIA = (k: ModelKey) => inCEA(k) || inAutogradAlias(k);
const isAutogradOtherBackend = (k: ModelKey) => k.b !== 0 && [fnum('Quantized'), fnum('Sparse')].includes(k.f);
/** getBackendKeySetFromAutograd as a predicate on the key a kernel is registered at. */
function backendOfAutograd(k: ModelKey): (registered: ModelKey) => boolean {
  if (k.name === 'AutogradOther') return isAutogradOtherBackend;
  if (k.f === fnum('AutogradFunctionality')) return (r) => r.f === fnum('Dense') && r.b === k.b;
  return () => false;
}

/** The framework fallbacks Switchyard documents (all fallthrough). */
const FRAMEWORK_FALLTHROUGH = [
  'BackendSelect',
  'ADInplaceOrView',
  'AutogradOther',
  'AutogradCPU',
  'AutogradWebGPU',
  'AutocastCPU',
  'AutocastWebGPU',
  'VmapMode',
];
const FRAMEWORK_DEBUG = 'registered in switchyard framework';

interface ModelKernel {
  readonly label: string;
  readonly fallthrough: boolean;
}
interface ModelEntry extends ModelKernel {
  readonly source: string;
}
interface ModelState {
  /** Registrations per key name (runtime or alias), newest first. */
  readonly kernels: Map<string, ModelKernel[]>;
  /** Backend fallbacks per runtime key name (framework ones included). */
  readonly fallbacks: Map<string, ModelKernel>;
}

/** §3.1 computeDispatchTableEntryWithDebug (1.13 without the nested-tensor steps Switchyard does not have). */
function modelEntry(state: ModelState, k: ModelKey): ModelEntry | undefined {
  const active = (name: string) => state.kernels.get(name)?.[0];
  const direct = active(k.name);
  if (direct !== undefined) return { ...direct, source: 'kernel' };
  const undef = k.name === 'Undefined';
  const ceanf = active('CompositeExplicitAutogradNonFunctional');
  if ((undef || inCEANF(k)) && ceanf !== undefined) return { ...ceanf, source: 'default backend kernel' };
  const cea = active('CompositeExplicitAutograd');
  if ((undef || inCEA(k)) && cea !== undefined) return { ...cea, source: 'default backend kernel' };
  const registeredRuntime = [...state.kernels.keys()].filter((n) => state.kernels.get(n)!.length > 0)
    .map((n) => KEY_BY_NAME.get(n)).filter((r): r is ModelKey => r !== undefined);
  const hasBackendKernel = registeredRuntime.some(backendOfAutograd(k)) || cea !== undefined;
  const cia = active('CompositeImplicitAutograd');
  if ((undef || inCIA(k)) && cia !== undefined) {
    if (k.name === 'AutogradOther' && registeredRuntime.some(isAutogradOtherBackend)) {
      return { label: 'ambiguous_autogradother', fallthrough: false, source: 'ambiguous autogradother' };
    }
    if (!hasBackendKernel) return { ...cia, source: 'math kernel' };
  }
  const autograd = active('Autograd');
  if (!undef && inAutogradAlias(k) && autograd !== undefined) return { ...autograd, source: 'autograd kernel' };
  const fallback = undef ? undefined : state.fallbacks.get(k.name);
  if (fallback !== undefined) return { ...fallback, source: 'backend fallback' };
  return undefined;
}

function modelTable(state: ModelState): Map<string, ModelEntry> {
  const table = new Map<string, ModelEntry>();
  for (const k of MODEL_KEYS) {
    const e = modelEntry(state, k);
    if (e !== undefined) table.set(k.name, e);
  }
  return table;
}

/** A keyset as sets of functionality numbers and backend numbers. */
interface ModelKeySet {
  readonly f: ReadonlySet<number>;
  readonly b: ReadonlySet<number>;
}

type Outcome = { ok: string } | { missing: string } | { ambiguous: true } | { fallthroughRan: true };

/** §5 Dispatcher::call on the model table. */
function modelDispatch(
  table: Map<string, ModelEntry>,
  args: ModelKeySet[],
  included: readonly number[],
  excluded: readonly number[],
): Outcome {
  // Non-fallthrough masks: a fallthrough slot clears its functionality for its backend (per-backend
  // functionalities) or for every backend.
  const fallthroughPerBackend = BACKENDS.map(() => new Set<number>());
  for (const [name, e] of table) {
    if (name === 'Undefined' || !e.fallthrough) continue;
    const k = KEY_BY_NAME.get(name)!;
    if (isPerBackend(k.f)) fallthroughPerBackend[k.b - 1].add(k.f);
    else for (const s of fallthroughPerBackend) s.add(k.f);
  }
  const argF = new Set(args.flatMap((a) => [...a.f]));
  const argB = new Set(args.flatMap((a) => [...a.b]));
  const backendIndex = argB.size === 0 ? 0 : Math.max(...argB) - 1;
  const funcs = [...new Set([...argF, ...included])]
    .filter((f) => !excluded.includes(f) && !fallthroughPerBackend[backendIndex].has(f));
  let key = UNDEFINED_KEY;
  if (funcs.length > 0) {
    const f = Math.max(...funcs);
    key = modelKey(f, isPerBackend(f) ? Math.max(1, ...argB) : 0);
  }
  const e = table.get(key.name);
  if (e === undefined) return { missing: key.name };
  if (e.source === 'ambiguous autogradother') return { ambiguous: true };
  if (e.fallthrough) return { fallthroughRan: true };
  return { ok: e.label };
}

// ---------------------------------------------------------------------------------------------------------------
// Registrations and tensors for the properties.
// ---------------------------------------------------------------------------------------------------------------

const IMPL_KEYS = [
  'CPU',
  'WebGPU',
  'Meta',
  'PrivateUse1',
  'SparseCPU',
  'QuantizedCPU',
  'AutogradCPU',
  'AutogradMeta',
  'Tracer',
  ...ALIASES,
] as const;
/** Keys without a framework fallback, so a fallback can be registered there. */
const FALLBACK_KEYS = ['Tracer', 'Profiler', 'AutogradMeta', 'PrivateUse1', 'Python'] as const;

interface Item {
  readonly kind: 'impl' | 'fallback';
  readonly key: string;
  readonly fallthrough: boolean;
  readonly id: number;
}

const implArb = fc.record({
  key: fc.constantFrom(...IMPL_KEYS),
  fallthrough: fc.nat(3).map((n) => n === 0), // one impl in four is a per-operator fallthrough
});
const poolArb = fc.tuple(
  fc.array(implArb, { minLength: 0, maxLength: 9 }),
  fc.subarray([...FALLBACK_KEYS]).chain((keys) =>
    fc.tuple(fc.constant(keys), fc.array(fc.boolean(), { minLength: keys.length, maxLength: keys.length }))
  ),
).map(([impls, [fallbackKeys, fallthroughs]]) => {
  const items: Item[] = impls.map((r, id) => ({ kind: 'impl', key: r.key, fallthrough: r.fallthrough, id }));
  fallbackKeys.forEach((key, i) => {
    items.push({ kind: 'fallback', key, fallthrough: fallthroughs[i], id: items.length });
  });
  return items;
});

interface Live {
  readonly item: Item;
  readonly label: string;
  readonly serial: number;
  readonly lib: Library;
}

function fallbackKernel(label: string) {
  return boxed((op, _ks, stack) => {
    stack.splice(stack.length - op.schema!.arguments.length);
    stack.push(IValue.string(label));
  });
}

/** Registers one item in its own block, so that it can be deregistered alone (as test_dispatch.py does). */
function register(d: Dispatcher, item: Item, label: string): Library {
  if (item.kind === 'fallback') {
    const lib = new Library('_', 'IMPL', item.key, { dispatcher: d, location: 'fallback.ts:1' });
    return lib.fallback(item.fallthrough ? fallthroughKernel : fallbackKernel(label), { debug: label });
  }
  const lib = new Library('test', 'IMPL', undefined, { dispatcher: d, location: 'impl.ts:1' });
  return lib.impl(
    'foo',
    item.fallthrough ? fallthroughKernel : (_hi: number, _lo: number, _xs: unknown) => label,
    item.key,
    { debug: label },
  );
}

function freshOp(d: Dispatcher): { def: Library; op: OperatorHandle } {
  const def = new Library('test', 'DEF', undefined, { dispatcher: d, location: 'def.ts:1' });
  return { def, op: def.define('foo(Tensor[] xs) -> str') };
}

function modelState(live: readonly Live[]): ModelState {
  const kernels = new Map<string, ModelKernel[]>();
  const fallbacks = new Map<string, ModelKernel>();
  for (const key of FRAMEWORK_FALLTHROUGH) fallbacks.set(key, { label: FRAMEWORK_DEBUG, fallthrough: true });
  for (const l of [...live].sort((a, b) => a.serial - b.serial)) {
    const k = { label: l.label, fallthrough: l.item.fallthrough };
    if (l.item.kind === 'fallback') fallbacks.set(l.item.key, k);
    else kernels.set(l.item.key, [k, ...(kernels.get(l.item.key) ?? [])]);
  }
  return { kernels, fallbacks };
}

function tableText(op: OperatorHandle): string[] {
  return op.computedTable().map((r) => `${r.key}: ${r.fallthrough ? 'fallthrough ' : ''}${r.kernel} [${r.source}]`);
}
function modelTableText(table: Map<string, ModelEntry>): string[] {
  return [...table].map(([key, e]) => `${key}: ${e.fallthrough ? 'fallthrough ' : ''}${e.label} [${e.source}]`);
}

/** Tensor-like arguments with PyTorch's keyset for a tensor of a backend key (SEMANTICS §1.6). */
const TENSOR_KEYS = ['CPU', 'Meta', 'WebGPU', 'SparseCPU', 'QuantizedCPU', 'PrivateUse1'] as const;
const EXTRA_KEYS = ['Tracer', 'Profiler', 'Python'] as const;
const tensorArb = fc.record({
  key: fc.constantFrom(...TENSOR_KEYS),
  inference: fc.boolean(),
  extra: fc.subarray([...EXTRA_KEYS], { maxLength: 1 }),
});
type TensorSpec = { key: string; inference: boolean; extra: string[] };

function modelTensor(spec: TensorSpec): ModelKeySet {
  const k = KEY_BY_NAME.get(spec.key)!;
  const f = new Set([k.f, ...spec.extra.map((e) => fnum(e as Functionality))]);
  if (!spec.inference) {
    f.add(fnum('ADInplaceOrView'));
    f.add(fnum('AutogradFunctionality'));
  }
  if (k.b === 1) f.add(fnum('AutocastCPU'));
  if (k.b === 2) f.add(fnum('AutocastWebGPU'));
  return { f, b: new Set([k.b]) };
}
function toWords(set: ModelKeySet): { keySetHi: number; keySetLo: number } {
  let hi = 0, lo = 0;
  for (const f of set.f) hi |= 1 << (f - 1);
  for (const b of set.b) lo |= 1 << (b - 1);
  return { keySetHi: hi, keySetLo: lo };
}

const DEFAULT_INCLUDED = [fnum('BackendSelect'), fnum('ADInplaceOrView')];
const DEFAULT_EXCLUDED = [fnum('AutocastCPU'), fnum('AutocastWebGPU')];
const TLS_INCLUDE_CHOICES = ['Tracer', 'Profiler'] as const;
const TLS_EXCLUDE_CHOICES = ['AutogradFunctionality', 'AutogradOther', 'ADInplaceOrView', 'Tracer'] as const;

function assertOutcome(run: () => unknown, expected: Outcome, context: string): void {
  if ('ok' in expected) {
    assert.equal(run(), expected.ok, context);
    return;
  }
  assert.throws(run, (e: unknown) => {
    assert.ok(e instanceof Error, context);
    if ('missing' in expected) {
      assert.ok(e instanceof NotImplementedError, `${context}: ${e.message}`);
      if (expected.missing === 'Undefined') {
        assert.match(e.message, /^There were no tensor arguments to this function /, context);
      } else {
        assert.ok(
          e.message.startsWith(`Could not run 'test::foo' with arguments from the '${expected.missing}' backend.`),
          `${context}: ${e.message.split('\n')[0]}`,
        );
      }
    } else if ('ambiguous' in expected) {
      assert.match(e.message, /has kernels registered to both CompositeImplicitAutograd and a backend mapped/);
    } else {
      assert.match(e.message, /fallthrough_kernel was executed/);
    }
    return true;
  }, context);
}

// ---------------------------------------------------------------------------------------------------------------

describe('the reference model itself', () => {
  it('names the keys and framework fallbacks Switchyard documents, in table order', () => {
    assert.deepEqual(MODEL_KEYS.map((k) => k.name), allRuntimeKeys().map(dispatchKeyName));
    assert.deepEqual(
      FRAMEWORK_FALLTHROUGH.map((name) => DispatchKey[name as keyof typeof DispatchKey]),
      [...FRAMEWORK_FALLTHROUGH_KEYS],
    );
  });

  it('builds the same tensor keysets as the shared fake tensors (SEMANTICS §1.6)', () => {
    for (const key of TENSOR_KEYS) {
      for (const inference of [false, true]) {
        const t = fakeTensor(DispatchKey[key], { inference, extra: [DispatchKey.Tracer] });
        const words = toWords(modelTensor({ key, inference, extra: ['Tracer'] }));
        assert.deepEqual([words.keySetHi, words.keySetLo], [t.keySetHi, t.keySetLo], `${key} inference=${inference}`);
      }
    }
  });
});

describe('registration properties', () => {
  it('(a) after every register/deregister step the stored table is valid and independent of order', () => {
    fc.assert(
      fc.property(
        poolArb,
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 64, maxLength: 64 }),
        (pool, steps, teardownPriority) => {
          if (pool.length === 0) return;
          const warnings: string[] = [];
          const d = new Dispatcher({ onWarning: (m) => warnings.push(m) });
          const { def, op } = freshOp(d);
          const live = new Map<number, Live>();
          let serial = 0;
          const check = (what: string) => {
            d.checkInvariants();
            const active = [...live.values()];
            // Canonical order: fallbacks, then impls grouped by key; same-key impls keep their relative order.
            const canonical = [...active].sort((a, b) =>
              a.item.kind.localeCompare(b.item.kind) || a.item.key.localeCompare(b.item.key) || a.serial - b.serial
            );
            const fresh = new Dispatcher({ onWarning: () => {} });
            const { op: freshFoo } = freshOp(fresh);
            for (const l of canonical) register(fresh, l.item, l.label);
            fresh.checkInvariants();
            assert.deepEqual(tableText(op), tableText(freshFoo), what);
            assert.deepEqual(tableText(op), modelTableText(modelTable(modelState(active))), `${what} (model)`);
          };
          const toggle = (item: Item) => {
            const current = live.get(item.id);
            if (current !== undefined) {
              current.lib.dispose();
              live.delete(item.id);
              check(`after deregistering ${current.label}`);
              return;
            }
            const label = `${item.kind}_${item.key}_${item.fallthrough ? 'ft' : 'k'}#${serial}`;
            const stacked = item.kind === 'impl' &&
              [...live.values()].some((l) => l.item.kind === 'impl' && l.item.key === item.key);
            const before = warnings.length;
            live.set(item.id, { item, label, serial: serial++, lib: register(d, item, label) });
            // PyTorch warns on every override of a key that already has a kernel, and only then.
            assert.equal(warnings.length - before, stacked ? 1 : 0, `override warning for ${label}`);
            if (stacked) assert.ok(warnings.at(-1)!.endsWith(`\n       new kernel: ${label}`), warnings.at(-1));
            check(`after registering ${label}`);
          };
          for (const s of steps) toggle(pool[s % pool.length]);
          const remaining = [...live.values()].sort((a, b) =>
            teardownPriority[a.serial % 64] - teardownPriority[b.serial % 64] || a.serial - b.serial
          );
          for (const l of remaining) toggle(l.item);
          assert.deepEqual(
            tableText(op),
            FRAMEWORK_FALLTHROUGH.map((k) => `${k}: fallthrough ${FRAMEWORK_DEBUG} [backend fallback]`),
          );
          def.dispose();
          assert.equal(d.findOp('test::foo'), undefined);
          d.checkInvariants();
        },
      ),
      { seed: 42, numRuns: 100 },
    );
  });

  it('(b) calls run the kernel the reference model predicts, or fail naming the same key', () => {
    fc.assert(
      fc.property(
        poolArb,
        fc.array(
          fc.record({
            tensors: fc.array(tensorArb, { maxLength: 3 }),
            include: fc.subarray([...TLS_INCLUDE_CHOICES], { maxLength: 1 }),
            exclude: fc.subarray([...TLS_EXCLUDE_CHOICES], { maxLength: 2 }),
            boxedCall: fc.boolean(),
          }),
          { minLength: 1, maxLength: 10 },
        ),
        (pool, calls) => {
          const d = new Dispatcher({ onWarning: () => {} });
          const { op } = freshOp(d);
          const live = pool.map((item, serial) => {
            const label = `${item.kind}_${item.key}#${serial}`;
            return { item, label, serial, lib: register(d, item, label) };
          });
          d.checkInvariants();
          const table = modelTable(modelState(live));
          assert.deepEqual(tableText(op), modelTableText(table));
          for (const c of calls) {
            const sets = c.tensors.map(modelTensor);
            const included = [...DEFAULT_INCLUDED, ...c.include.map((k) => fnum(k))];
            const excluded = [...DEFAULT_EXCLUDED, ...c.exclude.map((k) => fnum(k))];
            const expected = modelDispatch(table, sets, included, excluded);
            const tensors = sets.map(toWords);
            const run = () =>
              withIncludedKeys(
                c.include.map((k) => DispatchKey[k]),
                () =>
                  withExcludedKeys(c.exclude.map((k) => DispatchKey[k]), () => {
                    if (!c.boxedCall) return op.call(tensors);
                    const stack: Stack = [IValue.list(tensors.map((t) => IValue.tensor(t)))];
                    op.callBoxed(stack);
                    assert.equal(stack.length, 1);
                    return stack[0].toJS();
                  }),
              );
            assertOutcome(run, expected, `${JSON.stringify(c)} with ${live.map((l) => l.label).join(', ')}`);
          }
        },
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it('(b) the model agrees with hand-checked PyTorch 1.13 examples', () => {
    const cases: Array<[string[], TensorSpec[], Outcome]> = [
      [['Meta'], [{ key: 'Meta', inference: false, extra: [] }], { missing: 'AutogradMeta' }],
      [['CPU', 'CompositeImplicitAutograd'], [{ key: 'CPU', inference: false, extra: [] }], { ok: 'CPU' }],
      [['CPU', 'CompositeImplicitAutograd'], [{ key: 'Meta', inference: false, extra: [] }], {
        ok: 'CompositeImplicitAutograd',
      }],
      [['CompositeImplicitAutograd', 'CompositeExplicitAutograd'], [{ key: 'CPU', inference: false, extra: [] }], {
        ok: 'CompositeExplicitAutograd',
      }],
      [['CPU'], [], { missing: 'Undefined' }],
      [['PrivateUse1', 'CompositeImplicitAutograd'], [{ key: 'PrivateUse1', inference: false, extra: [] }], {
        missing: 'AutogradPrivateUse1',
      }],
      [['QuantizedCPU', 'CompositeImplicitAutograd'], [{ key: 'QuantizedCPU', inference: false, extra: [] }], {
        ok: 'CompositeImplicitAutograd',
      }],
    ];
    for (const [keys, tensors, expected] of cases) {
      const kernels = new Map(keys.map((k) => [k, [{ label: k, fallthrough: false }]]));
      const fallbacks = new Map(FRAMEWORK_FALLTHROUGH.map((k) => [k, { label: FRAMEWORK_DEBUG, fallthrough: true }]));
      const outcome = modelDispatch(
        modelTable({ kernels, fallbacks }),
        tensors.map(modelTensor),
        DEFAULT_INCLUDED,
        DEFAULT_EXCLUDED,
      );
      assert.deepEqual(outcome, expected, keys.join(', '));
    }
  });
});

describe('(c) deregistration restores the previous kernel', () => {
  function setup() {
    const warnings: string[] = [];
    const d = new Dispatcher({ onWarning: (m) => warnings.push(m) });
    const { op } = freshOp(d);
    const reg = (key: string | undefined, label: string) =>
      new Library('test', 'IMPL', undefined, { dispatcher: d, location: 'c.ts:1' }).impl(
        'foo',
        (_h: number, _l: number, _xs: unknown) => label,
        key,
        { debug: label },
      );
    const x = [toWords(modelTensor({ key: 'CPU', inference: true, extra: [] }))];
    const kernelLines = () => op.dump().split('\n').slice(4).filter((l) => l !== '');
    return { d, op, reg, x, kernelLines, warnings };
  }

  it('disposing the newest reactivates the older one; disposing an inactive one changes nothing', () => {
    const { d, op, reg, x, kernelLines, warnings } = setup();
    const a = reg('CPU', 'A');
    const b = reg('CPU', 'B');
    assert.equal(warnings.length, 1);
    assert.equal(op.call(x), 'B');
    assert.deepEqual(kernelLines(), [
      'CPU: B :: (none) [ boxed unboxed ]',
      'CPU (inactive): A :: (none) [ boxed unboxed ]',
    ]);
    b.dispose();
    d.checkInvariants();
    assert.equal(op.call(x), 'A');
    assert.deepEqual(kernelLines(), ['CPU: A :: (none) [ boxed unboxed ]']);

    const b2 = reg('CPU', 'B2');
    const tableWithB2 = op.dumpComputedTable();
    a.dispose(); // inactive: nothing observable changes but the dump
    d.checkInvariants();
    assert.equal(op.dumpComputedTable(), tableWithB2);
    assert.equal(op.call(x), 'B2');
    assert.deepEqual(kernelLines(), ['CPU: B2 :: (none) [ boxed unboxed ]']);
    b2.dispose();
    d.checkInvariants();
    assert.deepEqual(kernelLines(), []);
    assert.throws(() => op.call(x), /Could not run 'test::foo' with arguments from the 'CPU' backend/);
    b2.dispose(); // a second dispose is a no-op
    d.checkInvariants();
  });

  it('a three-deep stack removed from the middle keeps the newest active', () => {
    const { d, op, reg, x, kernelLines } = setup();
    const a = reg('CPU', 'A');
    const b = reg('CPU', 'B');
    const c = reg('CPU', 'C');
    b.dispose();
    d.checkInvariants();
    assert.equal(op.call(x), 'C');
    assert.deepEqual(kernelLines(), [
      'CPU: C :: (none) [ boxed unboxed ]',
      'CPU (inactive): A :: (none) [ boxed unboxed ]',
    ]);
    c.dispose();
    assert.equal(op.call(x), 'A');
    a.dispose();
    d.checkInvariants();
  });

  it('the catch-all and an explicit CompositeImplicitAutograd kernel share one stack', () => {
    const { d, op, reg, x, kernelLines, warnings } = setup();
    const catchAll = reg(undefined, 'catchall');
    const cia = reg('CompositeImplicitAutograd', 'cia');
    assert.ok(warnings[0].includes('\n  dispatch key: CompositeImplicitAutograd\n'), warnings[0]);
    assert.deepEqual(kernelLines(), [
      'CompositeImplicitAutograd[alias]: cia :: (none) [ boxed unboxed ]',
      'CompositeImplicitAutograd[alias] (inactive): catchall :: (none) [ boxed unboxed ]',
    ]);
    assert.equal(op.call(x), 'cia');
    assert.equal(op.call([]), 'cia', 'the Undefined slot takes the CIA kernel');
    cia.dispose();
    d.checkInvariants();
    assert.equal(op.call([]), 'catchall');
    catchAll.dispose();
    d.checkInvariants();
    assert.throws(() => op.call([]), /There were no tensor arguments/);
  });

  it('the AutogradOther ambiguity kernel comes and goes with the backend kernel and fails when reached', () => {
    const { d, op, reg, x } = setup();
    const cia = reg('CompositeImplicitAutograd', 'cia');
    const quantized = reg('QuantizedCPU', 'quantized');
    const autogradOther = DispatchKeySet.of(DispatchKey.AutogradOther);
    assert.throws(
      () => op.redispatch(autogradOther.hi, autogradOther.lo, x),
      (e: unknown) => {
        assert.ok(e instanceof RuntimeError);
        assert.equal(
          e.message,
          'test::foo has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther. ' +
            'This makes the backend kernel unreachable; the dispatcher will always prefer the ' +
            'CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther kernel]). If you want to ' +
            'override CompositeImplicitAutograd, please open an issue to request a dedicated Autograd dispatch key ' +
            'for the backend.',
        );
        return true;
      },
    );
    quantized.dispose();
    d.checkInvariants();
    assert.equal(op.redispatch(autogradOther.hi, autogradOther.lo, x), 'cia');
    cia.dispose();
  });

  it('a fallthrough kernel at the top of a stack hides the kernel below it until it is disposed', () => {
    const { d, op, reg, x } = setup();
    const cpu = reg('CPU', 'cpu');
    const lib = new Library('test', 'IMPL', 'CPU', { dispatcher: d, location: 'c.ts:2' });
    lib.impl('foo', fallthroughKernel, undefined, { debug: 'ft' });
    assert.throws(() => op.call(x), /There were no tensor arguments/, 'CPU is masked: the Undefined slot is empty');
    const composite = reg('CompositeExplicitAutograd', 'cea');
    assert.equal(op.call(x), 'cea');
    lib.dispose();
    d.checkInvariants();
    assert.equal(op.call(x), 'cpu');
    cpu.dispose();
    assert.equal(op.call(x), 'cea');
    composite.dispose();
    d.checkInvariants();
  });
});
