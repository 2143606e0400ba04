// Inference mode as PyTorch 1.13's InferenceMode guard: autograd keys excluded, ADInplaceOrView removed from
// the included set but not excluded, so normal tensors keep counting versions inside it; inference tensors
// refuse in-place changes outside it, cannot be saved for backward, and have no version counter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DispatchKey,
  inferenceMode,
  localDispatchKeySet,
  manualSeed,
  memoryStats,
  randn,
  RuntimeError,
  tensor,
} from '../../mod.ts';

const f32 = { dtype: 'float32' as const };
const INPLACE = 'Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get ' +
  'a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.';
const SAVED = 'Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal ' +
  'tensor and use it in autograd.';

describe('inferenceMode', () => {
  it('excludes the autograd keys and takes ADInplaceOrView out of the included set only', () => {
    const before = localDispatchKeySet();
    inferenceMode(() => {
      const { included, excluded } = localDispatchKeySet();
      assert.ok(excluded.has(DispatchKey.AutogradFunctionality));
      assert.ok(!excluded.has(DispatchKey.ADInplaceOrView));
      assert.ok(!included.has(DispatchKey.ADInplaceOrView));
    });
    const after = localDispatchKeySet();
    assert.deepEqual([after.included.hi, after.excluded.hi], [before.included.hi, before.excluded.hi]);
  });

  it('normal tensors changed in place inside still count versions, so a stale saved tensor is reported', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const y = x.mul(1);
    const z = y.exp(); // saves its result
    const v = y.narrow(0, 0, 1);
    inferenceMode(() => {
      z.mul_(2);
      v.add_(1); // a view of a normal tensor: y's counter moves too
    });
    assert.equal(z.version, 1);
    assert.equal(y.version, 1);
    assert.throws(() => z.sum().backward(), {
      name: 'RuntimeError',
      message: 'one of the variables needed for gradient computation has been modified by an inplace operation: ' +
        '[torch.FloatTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. ' +
        'Hint: enable anomaly detection to find the operation that failed to compute its gradient, with ' +
        'torch.autograd.set_detect_anomaly(True).',
    });
  });

  it('inference tensors: made inside, no autograd, in place only inside, no version counter', () => {
    const t = inferenceMode(() => tensor([1, 2], f32).mul(1));
    assert.equal(t.isInference, true);
    assert.equal(t.requiresGrad, false);
    assert.equal(t.isLeaf, true);
    const live = memoryStats().liveTensors;
    assert.throws(() => t.add_(1), (e: unknown) => e instanceof RuntimeError && e.message === INPLACE);
    assert.throws(() => t.narrow(0, 0, 1).add_(1), { message: INPLACE });
    assert.deepEqual(t.toArray(), [1, 2], 'refused before anything is written');
    assert.equal(memoryStats().liveTensors, live + 1); // only the narrow view made for the second attempt
    inferenceMode(() => t.add_(1));
    assert.deepEqual(t.toArray(), [2, 3]);
    assert.throws(() => t.version, {
      name: 'RuntimeError',
      message: 'Inference tensors do not track version counter.',
    });
    assert.equal(inferenceMode(() => t.narrow(0, 0, 1)).isInference, true);
    // An operator on an inference tensor outside inference mode makes a normal tensor.
    assert.equal(t.exp().isInference, false);
  });

  it('requires_grad on inference tensors: refused outside, allowed inside', () => {
    const t = inferenceMode(() => tensor([1, 2], f32).mul(1));
    assert.throws(() => t.requiresGrad_(), {
      name: 'RuntimeError',
      message: 'Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.',
    });
    inferenceMode(() => t.requiresGrad_());
    assert.equal(t.requiresGrad, true);
    // It carries no autograd key, so operators on it record nothing, inside or outside.
    assert.equal(inferenceMode(() => t.exp()).requiresGrad, false);
    assert.equal(t.exp().requiresGrad, false);
    assert.equal(t.exp().gradFn, null);
  });

  it('an inference tensor cannot be saved for backward; a formula that does not save it is fine', () => {
    manualSeed(4);
    const w = randn([3], f32).requiresGrad_();
    const t = inferenceMode(() => randn([3], f32));
    const live = memoryStats().liveTensors;
    assert.throws(() => t.mul(w), (e: unknown) => e instanceof RuntimeError && e.message === SAVED);
    assert.throws(() => w.mul(t), { message: SAVED });
    assert.equal(memoryStats().liveTensors, live, 'nothing leaked');
    const s = t.add(w);
    assert.equal(s.gradFn?.name(), 'AddBackward0');
    s.sum().backward();
    assert.deepEqual(w.grad?.toArray(), [1, 1, 1]);
  });

  it('a view of a normal tensor made inside is a normal tensor that requires grad through its base', () => {
    const w = tensor([1, 2, 3], f32).requiresGrad_();
    const y = w.mul(2);
    const v = inferenceMode(() => y.narrow(0, 1, 2));
    assert.equal(v.isInference, false);
    assert.equal(v.requiresGrad, true);
    assert.equal(v.gradFn, null);
    assert.equal(v.version, 0);
  });
});
