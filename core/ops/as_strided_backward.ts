/**
 * The derivative of `as_strided` (PyTorch's `as_strided_backward`), which also serves the grad_fn regenerated
 * for a view whose base was modified in place: the gradient of `as_strided(input, size, stride, offset)` with
 * respect to `input`, for any two geometries over one storage, overlapping or not.
 *
 * Note [as_strided backward]
 * Both the input and the output are windows on one underlying storage. The output's gradient is scattered
 * into a zero "storage" tensor through the output geometry (summed where output elements share a storage
 * element), then read back through the input geometry; where input elements share a storage element, that
 * element's gradient is split evenly among them (so the input's gradient, summed back, matches). Size-1 dims
 * are dropped and stride-0 dims summed first, so broadcasting alone never counts as overlap.
 *
 * @module
 */
import type { TensorGeometry } from '../autograd/engine_ops.ts';
import { int64 } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from './aten_call.ts';

/** Whether a strided layout may map two indices to one element (PyTorch's `_maybe_overlapping_memory`). */
function mayOverlap(sizes: readonly number[], strides: readonly number[]): boolean {
  const order = sizes.map((_, i) => i).sort((a, b) => strides[a] - strides[b]);
  let reach = 0; // the largest offset the dims seen so far reach
  for (const d of order) {
    if (strides[d] <= reach) return true;
    reach += strides[d] * (sizes[d] - 1);
  }
  return false;
}

/** The number of storage elements a non-empty layout spans from offset 0. */
function storageSpan(sizes: readonly number[], strides: readonly number[], offset: number): number {
  let last = offset;
  for (let d = 0; d < sizes.length; d++) last += (sizes[d] - 1) * strides[d];
  return last + 1;
}

const zeros = (shape: readonly number[], like: Tensor) =>
  aten('zeros').call(shape, like.dtype, null, like.device, null) as Tensor;
const asStrided = (t: Tensor, size: readonly number[], stride: readonly number[], offset: number) =>
  aten('as_strided').call(t, size, stride, offset) as Tensor;
const flat = (t: Tensor) => aten('reshape').call(t, [-1]) as Tensor;

/**
 * The gradient of `as_strided(input, size, stride, offset)` with respect to `input` (see Note [as_strided
 * backward]).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { asStridedBackward } from './as_strided_backward.ts';
 * // the gradient of x.as_strided([2, 2], [1, 1], 0) for x of shape [3]: [1, 2, 1]
 * asStridedBackward(ones([2, 2]), { shape: [3], strides: [1], offset: 0 }, [2, 2], [1, 1], 0);
 * ```
 */
export function asStridedBackward(
  grad: Tensor,
  input: TensorGeometry,
  size: readonly number[],
  stride: readonly number[],
  offset: number,
): Tensor {
  let g = grad;
  const outSizes: number[] = [], outStrides: number[] = [];
  for (let d = size.length - 1; d >= 0; d--) {
    if (size[d] === 0) return zeros(input.shape, grad);
    if (size[d] === 1) g = aten('squeeze', 'dim').call(g, d) as Tensor;
    else if (stride[d] === 0) g = aten('sum', 'dim_IntList').call(g, [d], false, null) as Tensor;
    else {
      outSizes.unshift(size[d]);
      outStrides.unshift(stride[d]);
    }
  }
  const inSizes: number[] = [], inStrides: number[] = [];
  for (let d = input.shape.length - 1; d >= 0; d--) {
    if (input.shape[d] === 0) return zeros(input.shape, grad);
    if (input.shape[d] !== 1) {
      inSizes.unshift(input.shape[d]);
      inStrides.unshift(input.strides[d]);
    }
  }
  const outOverlaps = mayOverlap(outSizes, outStrides);
  const inOverlaps = mayOverlap(inSizes, inStrides);
  // One storage holding both windows, starting at the lower of the two offsets.
  const start = Math.min(input.offset, offset);
  const inOffset = input.offset - start, outOffset = offset - start;
  const span = Math.max(storageSpan(inSizes, inStrides, inOffset), storageSpan(outSizes, outStrides, outOffset));
  let storage = zeros([span], grad);
  const positions = outOverlaps || inOverlaps
    ? aten('arange').call(span, int64, null, grad.device, null) as Tensor
    : undefined;
  if (outOverlaps) {
    const index = flat(asStrided(positions!, outSizes, outStrides, outOffset));
    storage = aten('index_add').call(storage, 0, index, flat(g), 1) as Tensor;
  } else {
    aten('copy_').call(asStrided(storage, outSizes, outStrides, outOffset), g, false);
  }
  if (inOverlaps) {
    const index = flat(asStrided(positions!, inSizes, inStrides, inOffset));
    const ones = aten('ones').call([index.numel], grad.dtype, null, grad.device, null) as Tensor;
    const count = aten('index_add').call(zeros([span], grad), 0, index, ones, 1) as Tensor;
    storage = aten('div', 'Tensor').call(storage, count) as Tensor;
  }
  return asStrided(storage, input.shape, input.strides, inOffset);
}
