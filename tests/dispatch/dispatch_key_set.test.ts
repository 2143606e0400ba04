import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  AFTER_AUTOGRAD_KEYSET,
  allRuntimeKeys,
  BackendComponent,
  DispatchKey,
  dispatchKeyName,
  DispatchKeySet,
  dispatchTableIndex,
  dispatchTableIndexForKey,
  getBackendKeySetFromAutograd,
  getRuntimeDispatchKeySet,
  isBackendDispatchKey,
  isIncludedInAlias,
  NUM_RUNTIME_ENTRIES,
  parseDispatchKey,
  toBackendComponent,
  toFunctionalityKey,
  toRuntimePerBackendFunctionalityKey,
} from '../../core/dispatch/mod.ts';
import { fakeTensor } from './_fake_tensor.ts';

const ks = DispatchKeySet.of;
const names = (set: DispatchKeySet) => [...set].map(dispatchKeyName);

describe('dispatch keys', () => {
  it('runtime per-backend keys decompose into functionality and backend and back', () => {
    for (const k of allRuntimeKeys()) {
      const f = toFunctionalityKey(k);
      const b = toBackendComponent(k);
      if (b !== BackendComponent.InvalidBit) assert.equal(toRuntimePerBackendFunctionalityKey(f, b), k);
      else assert.equal(f, k);
    }
    assert.equal(toFunctionalityKey(DispatchKey.AutogradMeta), DispatchKey.AutogradFunctionality);
    assert.equal(toBackendComponent(DispatchKey.SparseWebGPU), BackendComponent.WebGPUBit);
  });

  it('names print and parse as in PyTorch, including backward-compatible spellings', () => {
    for (let k = 0; k <= DispatchKey.EndOfAliasKeys; k++) {
      if (k === DispatchKey.EndOfFunctionalityKeys || dispatchKeyName(k).startsWith('StartOf')) continue;
      assert.equal(parseDispatchKey(dispatchKeyName(k)), k, dispatchKeyName(k));
    }
    assert.equal(dispatchKeyName(DispatchKey.AutogradCPU), 'AutogradCPU');
    assert.equal(dispatchKeyName(DispatchKey.CPU), 'CPU');
    assert.equal(dispatchKeyName(DispatchKey.QuantizedMeta), 'QuantizedMeta');
    assert.equal(parseDispatchKey('CatchAll'), DispatchKey.Undefined);
    assert.equal(parseDispatchKey('DefaultBackend'), DispatchKey.CompositeExplicitAutograd);
    assert.equal(parseDispatchKey('PrivateUse2_PreAutograd'), DispatchKey.AutogradPrivateUse2);
    assert.throws(() => parseDispatchKey('Math'), /^RuntimeError: could not parse dispatch key: Math$/);
    assert.throws(() => parseDispatchKey('CUDA'), /could not parse dispatch key: CUDA/);
  });

  it('the table has one slot per runtime key, in key order, with Undefined at 0', () => {
    const keys = allRuntimeKeys();
    assert.equal(keys.length, NUM_RUNTIME_ENTRIES);
    assert.equal(NUM_RUNTIME_ENTRIES, 39);
    keys.forEach((k, i) => assert.equal(dispatchTableIndexForKey(k), i, dispatchKeyName(k)));
    assert.equal(dispatchTableIndexForKey(DispatchKey.Autograd), 0);
  });
});

describe('DispatchKeySet', () => {
  it('is a cross product of functionality and backend bits', () => {
    const set = ks(DispatchKey.AutogradCPU, DispatchKey.WebGPU);
    assert.ok(set.has(DispatchKey.AutogradWebGPU));
    assert.ok(set.has(DispatchKey.CPU));
    assert.ok(!set.has(DispatchKey.SparseCPU));
    assert.ok(set.has(DispatchKey.Autograd), 'alias keys are "had" by every set, as in PyTorch');
    assert.deepEqual(names(set), ['CPU', 'WebGPU', 'AutogradCPU', 'AutogradWebGPU']);
  });

  it('removing a key and subtracting a set drop functionality bits only', () => {
    const set = ks(DispatchKey.CPU, DispatchKey.AutogradCPU);
    const removed = set.remove(DispatchKey.AutogradCPU);
    assert.equal(removed.lo, set.lo);
    assert.deepEqual(names(removed), ['CPU']);
    assert.deepEqual(names(set.sub(ks(DispatchKey.CPU))), ['AutogradCPU']);
    assert.ok(set.removeBackend(BackendComponent.CPUBit).isEmpty() === false);
    assert.deepEqual(names(set.removeBackend(BackendComponent.CPUBit)), []);
  });

  it('prints lowest priority first, like PyTorch', () => {
    assert.equal(
      String(fakeTensorSet(DispatchKey.CPU)),
      'DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)',
    );
    assert.equal(String(fakeTensorSet(DispatchKey.Meta)), 'DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)');
    assert.equal(String(DispatchKeySet.EMPTY), 'DispatchKeySet()');
  });

  it('the highest key comes from Math.clz32 on each word', () => {
    const set = fakeTensorSet(DispatchKey.Meta).or(ks(DispatchKey.CPU, DispatchKey.BackendSelect));
    assert.equal(set.highestFunctionalityKey(), DispatchKey.AutogradFunctionality);
    assert.equal(set.highestBackendKey(), BackendComponent.MetaBit);
    assert.equal(set.highestPriorityTypeId(), DispatchKey.AutogradMeta);
    assert.equal(set.getDispatchTableIndexForDispatchKeySet(), dispatchTableIndexForKey(DispatchKey.AutogradMeta));
    // A per-backend functionality without backend bits selects its CPU slot.
    assert.equal(
      new DispatchKeySet(ks(DispatchKey.Sparse).hi, 0).highestPriorityTypeId(),
      DispatchKey.StartOfSparseBackends,
    );
    assert.equal(dispatchTableIndex(ks(DispatchKey.Sparse).hi, 0), dispatchTableIndexForKey(DispatchKey.SparseCPU));
    assert.equal(DispatchKeySet.EMPTY.highestPriorityTypeId(), DispatchKey.Undefined);
  });

  it('the table index of any keyset is the index of its highest priority key', () => {
    const allKeys = allRuntimeKeys().slice(1);
    fc.assert(
      fc.property(fc.subarray(allKeys), (keys) => {
        const set = ks(...keys);
        const top = set.highestPriorityTypeId();
        assert.equal(dispatchTableIndex(set.hi, set.lo), dispatchTableIndexForKey(top));
      }),
      { numRuns: 500 },
    );
  });

  it('FullAfter keeps every backend and the functionalities below the key', () => {
    const after = AFTER_AUTOGRAD_KEYSET;
    assert.ok(after.has(DispatchKey.ADInplaceOrView));
    assert.ok(after.has(DispatchKey.Profiler));
    assert.ok(after.has(DispatchKey.SparseMeta));
    assert.ok(!after.has(DispatchKey.AutogradOther));
    assert.ok(!after.has(DispatchKey.AutogradCPU));
    assert.equal(
      DispatchKeySet.fullAfter(DispatchKey.AutogradCPU).hi,
      DispatchKeySet.fullAfter(DispatchKey.AutogradFunctionality).hi,
    );
  });

  it('exercise 2: after the autograd kernel, the highest key is BackendSelect, then CPU', () => {
    const keyset = ks(DispatchKey.CPU, DispatchKey.BackendSelect, DispatchKey.AutogradCPU);
    assert.equal(keyset.highestPriorityTypeId(), DispatchKey.AutogradCPU);
    const reduced = keyset.and(AFTER_AUTOGRAD_KEYSET);
    assert.equal(String(reduced), 'DispatchKeySet(CPU, BackendSelect)');
    assert.equal(reduced.highestPriorityTypeId(), DispatchKey.BackendSelect);
    assert.equal(reduced.remove(DispatchKey.BackendSelect).highestPriorityTypeId(), DispatchKey.CPU);
  });

  it('iterates per-backend functionalities once per backend bit and skips them without one', () => {
    const set = new DispatchKeySet(ks(DispatchKey.Dense, DispatchKey.Tracer).hi, 0);
    assert.deepEqual(names(set), ['Tracer']);
    const full = [...DispatchKeySet.FULL];
    assert.equal(full.length, NUM_RUNTIME_ENTRIES - 1);
  });
});

describe('alias keys', () => {
  it('expand to PyTorch 1.13 runtime key sets (without the backends Switchyard lacks)', () => {
    assert.deepEqual(names(getRuntimeDispatchKeySet(DispatchKey.Autograd)), [
      'AutogradOther',
      'AutogradCPU',
      'AutogradWebGPU',
      'AutogradMeta',
      'AutogradPrivateUse1',
      'AutogradPrivateUse2',
      'AutogradPrivateUse3',
    ]);
    const cia = names(getRuntimeDispatchKeySet(DispatchKey.CompositeImplicitAutograd));
    assert.equal(cia.length, 25);
    assert.ok(cia.includes('AutogradOther') && cia.includes('SparseMeta') && !cia.includes('BackendSelect'));
    const cea = names(getRuntimeDispatchKeySet(DispatchKey.CompositeExplicitAutograd));
    assert.equal(cea.length, 18);
    assert.ok(!cea.some((n) => n.startsWith('Autograd')));
    const ceanf = names(getRuntimeDispatchKeySet(DispatchKey.CompositeExplicitAutogradNonFunctional));
    assert.deepEqual(ceanf.filter((n) => n.startsWith('Sparse')), []);
    assert.equal(ceanf.length, 12);
    assert.deepEqual(names(getRuntimeDispatchKeySet(DispatchKey.CPU)), ['CPU']);
  });

  it('inclusion, autograd-to-backend and backend-key predicates match PyTorch', () => {
    assert.ok(isIncludedInAlias(DispatchKey.AutogradMeta, DispatchKey.Autograd));
    assert.ok(!isIncludedInAlias(DispatchKey.Undefined, DispatchKey.CompositeImplicitAutograd));
    assert.ok(!isIncludedInAlias(DispatchKey.ADInplaceOrView, DispatchKey.CompositeImplicitAutograd));
    assert.ok(isIncludedInAlias(DispatchKey.QuantizedCPU, DispatchKey.CompositeExplicitAutograd));
    assert.ok(!isIncludedInAlias(DispatchKey.SparseCPU, DispatchKey.CompositeExplicitAutogradNonFunctional));
    assert.deepEqual(names(getBackendKeySetFromAutograd(DispatchKey.AutogradWebGPU)), ['WebGPU']);
    assert.ok(getBackendKeySetFromAutograd(DispatchKey.AutogradOther).has(DispatchKey.SparseCPU));
    assert.ok(getBackendKeySetFromAutograd(DispatchKey.Tracer).isEmpty());
    assert.ok(isBackendDispatchKey(DispatchKey.SparseMeta));
    assert.ok(!isBackendDispatchKey(DispatchKey.AutogradCPU));
    assert.ok(!isBackendDispatchKey(DispatchKey.CompositeExplicitAutograd));
  });
});

function fakeTensorSet(key: number): DispatchKeySet {
  const t = fakeTensor(key);
  return new DispatchKeySet(t.keySetHi, t.keySetLo);
}
