// The in-place-on-view errors PyTorch 1.13 raises (class and exact text): views of leaves, outputs of
// multi-output views, views made under noGrad, in inference mode or by a custom function; direct (the view is
// modified) and indirect (its base was, and the view's grad_fn is read). A refused change writes nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cat,
  defineFunction,
  inferenceMode,
  manualSeed,
  memoryStats,
  noGrad,
  randn,
  RuntimeError,
  type Tensor,
  tensor,
  zeros,
} from '../../mod.ts';

const f32 = { dtype: 'float32' as const };

const MULTI = ' This view is the output of a function that returns multiple views. Such functions do not allow the ' +
  'output views to be modified inplace. You should replace the inplace operation by an out-of-place one.';
const ambiguous = (block: string) =>
  ' Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both ' +
  `the view and the inplace either both inside the ${block} block (if you don't want the inplace to be tracked) or ` +
  'both outside (if you want the inplace to be tracked).';
const CUSTOM = ' This view was created inside a custom Function (or because an input was returned as-is) and the ' +
  'autograd logic to handle view+inplace would override the custom backward associated with the custom Function, ' +
  'leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom ' +
  'Function.';
const DIRECT = 'is being';
const INDIRECT = 'its base or another view of its base has been';

/**
 * Asserts that `inplace` (an in-place op on an already made view) raises RuntimeError(message), changing
 * neither the data nor the version of `watched`, and leaving no tensor behind.
 */
function refused(inplace: () => unknown, message: string, watched: Tensor): void {
  const data = watched.toArray(), version = watched.version, live = memoryStats().liveTensors;
  assert.throws(inplace, (e: unknown) => {
    assert.ok(e instanceof RuntimeError, `RuntimeError expected, got ${e}`);
    assert.equal(e.message, message);
    return true;
  });
  assert.deepEqual(watched.toArray(), data, 'nothing written');
  assert.equal(watched.version, version, 'no version bump');
  assert.equal(memoryStats().liveTensors, live, 'nothing leaked');
}

describe('in-place on views: PyTorch errors', () => {
  it('a view of a leaf that requires grad, made by any view operator', () => {
    manualSeed(1);
    const w = randn([4, 6], f32).requiresGrad_();
    const views: Array<(t: Tensor) => Tensor> = [
      (t) => t.narrow(1, 2, 3),
      (t) => t.select(0, 1),
      (t) => t.t(),
      (t) => t.view([24]),
      (t) => t.diagonal(),
      (t) => t.unsqueeze(0).squeeze(0),
      (t) => t.asStrided([2, 2], [6, 1], 1),
    ];
    for (const view of views) {
      const v = view(w);
      refused(
        () => v.mul_(2),
        'a view of a leaf Variable that requires grad is being used in an in-place operation.',
        w,
      );
    }
    refused(() => w.add_(1), 'a leaf Variable that requires grad is being used in an in-place operation.', w);
    noGrad(() => w.narrow(0, 0, 1).mul_(2)); // allowed without grad mode
    assert.equal(w.version, 1);
  });

  it('outputs of split, split with sizes, chunk and unbind, and views of them', () => {
    const w = tensor([1, 2, 3, 4], f32).requiresGrad_();
    const b = w.mul(1);
    const cases: Array<[Tensor, string]> = [
      [b.split(2)[1], 'Output 1 of SplitBackward0'],
      [b.split([1, 3])[1], 'Output 1 of SplitWithSizesBackward0'],
      [b.chunk(2)[0], 'Output 0 of SplitBackward0'],
      [b.unbind()[3], 'Output 3 of UnbindBackward0'],
      [b.split(2)[0].view([2]), 'Output 0 of ViewBackward0'],
      [b.chunk(2)[1].narrow(0, 0, 1), 'Output 0 of SliceBackward0'],
    ];
    for (const [v, who] of cases) {
      refused(() => v.mul_(2), `${who} is a view and ${DIRECT} modified inplace.${MULTI}`, b);
    }
    // With nothing requiring grad nothing records, and nothing is refused (PyTorch's check_inplace).
    const plain = zeros([4]);
    plain.split(2)[0].add_(1);
    assert.deepEqual(plain.toArray(), [1, 1, 0, 0]);
  });

  it('a multi-output view whose base changed in place: reading or using it raises', () => {
    const w = tensor([1, 2, 3, 4], f32).requiresGrad_();
    const b = w.mul(1);
    const [s0, s1] = b.split(2);
    assert.equal(s0.gradFn?.name(), 'SplitBackward0');
    b.mul_(2);
    assert.equal(s1.requiresGrad, true);
    assert.throws(() => s1.gradFn, {
      name: 'RuntimeError',
      message: `Output 1 of SplitBackward0 is a view and ${INDIRECT} modified inplace.${MULTI}`,
    });
    assert.throws(() => s0.mul(2), {
      message: `Output 0 of SplitBackward0 is a view and ${INDIRECT} modified inplace.${MULTI}`,
    });
  });

  it('a view made under noGrad, modified with grad mode on (directly or through its base)', () => {
    const w = tensor([1, 1, 1], f32).requiresGrad_();
    const b = w.mul(1);
    const nv = noGrad(() => b.narrow(0, 0, 2));
    assert.equal(nv.gradFn, null);
    assert.equal(nv.requiresGrad, true); // through its base
    refused(
      () => nv.mul_(2),
      `A view was created in no_grad mode and ${DIRECT} modified inplace with grad mode enabled.${
        ambiguous('no_grad')
      }`,
      b,
    );
    b.mul_(2);
    assert.throws(() => nv.gradFn, {
      message: `A view was created in no_grad mode and ${INDIRECT} modified inplace with grad mode enabled.${
        ambiguous('no_grad')
      }`,
    });
    // Also when the base does not require grad: the value written does.
    const x = zeros([3]), k = tensor([1, 2], f32).requiresGrad_();
    const xv = noGrad(() => x.narrow(0, 0, 2));
    refused(
      () => xv.add_(k),
      `A view was created in no_grad mode and ${DIRECT} modified inplace with grad mode enabled.${
        ambiguous('no_grad')
      }`,
      x,
    );
    assert.equal(x.requiresGrad, false);
  });

  it('a view modified in place inside noGrad changes no history', () => {
    const w = tensor([1, 1, 1], f32).requiresGrad_();
    const b = w.mul(1);
    noGrad(() => b.narrow(0, 0, 2).mul_(2));
    assert.equal(b.gradFn?.name(), 'MulBackward1');
    b.sum().backward();
    assert.deepEqual(w.grad?.toArray(), [1, 1, 1]);
  });

  it('a view of a normal tensor made in inference mode is a normal tensor that may not be modified outside', () => {
    const w = tensor([1, 1], f32).requiresGrad_();
    const b = w.mul(1);
    const iv = inferenceMode(() => b.narrow(0, 0, 1));
    assert.equal(iv.isInference, false);
    assert.equal(iv.requiresGrad, true);
    refused(
      () => iv.mul_(2),
      `A view was created in inference mode and ${DIRECT} modified inplace in normal mode.${
        ambiguous('inference_mode')
      }`,
      b,
    );
    inferenceMode(() => iv.mul_(2)); // allowed inside, untracked, but the version moves
    assert.equal(b.version, 1);
    const indirect = `A view was created in inference mode and ${INDIRECT} modified inplace in normal mode.${
      ambiguous('inference_mode')
    }`;
    assert.throws(() => iv.gradFn, { message: indirect });
    assert.throws(() => inferenceMode(() => iv.gradFn), { message: indirect });
    assert.equal(b.gradFn?.name(), 'MulBackward1');
  });

  it('an output of a custom function that is a view (or an input returned as-is)', () => {
    const identity = defineFunction({
      name: 'IdBackward',
      forward: (_ctx, x: Tensor) => x,
      backward: (_ctx, g) => [g.mul(2)],
    });
    const firstTwo = defineFunction({
      name: 'SlBackward',
      forward: (_ctx, x: Tensor) => x.narrow(0, 0, 2),
      backward: (_ctx, g) => [cat([g, zeros([1])])],
    });
    const w = tensor([1, 1, 1], f32).requiresGrad_();
    const y = identity(w);
    assert.notEqual(y, w);
    assert.equal(w.isLeaf, true);
    assert.equal(y.gradFn?.name(), 'IdBackward');
    refused(() => y.mul_(2), `Output 0 of IdBackward is a view and ${DIRECT} modified inplace.${CUSTOM}`, w);
    const x = w.mul(1);
    const s = firstTwo(x);
    refused(() => s.mul_(2), `Output 0 of SlBackward is a view and ${DIRECT} modified inplace.${CUSTOM}`, x);
    x.mul_(2);
    assert.throws(() => s.gradFn, {
      message: `Output 0 of SlBackward is a view and ${INDIRECT} modified inplace.${CUSTOM}`,
    });
    // An input returned as-is by a function nothing differentiates is still a new view, without history.
    const plain = identity(zeros([2]));
    assert.equal(plain.gradFn, null);
    assert.equal(plain.requiresGrad, false);
  });
});
