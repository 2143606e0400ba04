/**
 * How a reduction reaches the wasm kernels, which read a contiguous input viewed as `[outer, R, inner]` and
 * reduce `R` (kernels_as/reduce.ts).
 *
 * Note [Reduction layout]
 * Size-1 dims do not matter, so they are dropped. The remaining dims are taken in memory order (by decreasing
 * stride; logical order when indices must count in row-major order, as `argmax` without `dim` does). When the
 * tensor is dense in that order and the reduced dims are adjacent in it, the kernel reads the input in place:
 * `outer` is the product of the dims before the reduced block, `inner` of those after. So a full reduction of
 * a contiguous tensor, `sum(dim=0)` of a matrix (a column sum, `outer = 1`) and a reduction of a transposed
 * view all run straight on the input's memory. Otherwise the input is copied once, kept dims first, into the
 * `[outer, R, 1]` layout. The kernel writes the kept dims in the order it met them, so the result is a dense
 * tensor whose strides follow that order (a permuted input gives a permuted result, as PyTorch's
 * TensorIterator does), and never needs a second copy.
 *
 * @module
 */
import { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { contiguousStrides, numelOf } from '../tensor/shape.ts';
import { Storage } from '../tensor/storage.ts';
import { Tensor } from '../tensor/tensor.ts';
import { reducedShape } from '../ops/meta_reductions.ts';
import { copyIntoCpu, emptyCpu } from './iterator.ts';

/**
 * The kernel's view of a reduction.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { planReduction, type ReduceLayout } from './reduce_layout.ts';
 * const layout: ReduceLayout = planReduction(tensor([[1, 2, 3], [4, 5, 6]]), [false, true]);
 * console.log(layout.outer, layout.R, layout.inner); // 2 3 1
 * ```
 */
export interface ReduceLayout {
  /** What the kernel reads: the input itself, or a copy that {@linkcode releaseLayout} frees. */
  readonly source: Tensor;
  readonly outer: number;
  readonly R: number;
  readonly inner: number;
  /** The kept dims of size > 1 (logical indices) in the order the kernel writes them. */
  readonly keptOrder: readonly number[];
}

/**
 * Plans a reduction of `t` over the dims `mask` marks (Note [Reduction layout]); `logicalOrder` forces
 * row-major order for kernels whose result depends on it (flat indices).
 *
 * @example
 * ```ts
 * // a contiguous [2, 3, 4] tensor reduced over dim 1: { outer: 2, R: 3, inner: 4 }, no copy
 * ```
 */
export function planReduction(t: Tensor, mask: readonly boolean[], logicalOrder = false): ReduceLayout {
  const shape = t.shape, strides = t.stride();
  const dims: number[] = [];
  let outer = 1, R = 1;
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    dims.push(d);
    if (mask[d]) R *= shape[d];
    else outer *= shape[d];
  }
  if (outer === 0 || R === 0) return { source: t, outer, R, inner: 1, keptOrder: dims.filter((d) => !mask[d]) };
  // Array.prototype.sort is stable, so ties (stride-0 dims) keep their logical order.
  const order = logicalOrder ? dims : [...dims].sort((a, b) => strides[b] - strides[a]);
  if (isDense(order, shape, strides)) {
    const first = order.findIndex((d) => mask[d]);
    if (first < 0) return { source: t, outer, R: 1, inner: 1, keptOrder: order };
    let last = first;
    while (last + 1 < order.length && mask[order[last + 1]]) last++;
    const before = order.slice(0, first), after = order.slice(last + 1);
    if (after.every((d) => !mask[d])) {
      const inner = numelOf(after.map((d) => shape[d]));
      return { source: t, outer: outer / inner, R, inner, keptOrder: [...before, ...after] };
    }
  }
  const perm = [...order.filter((d) => !mask[d]), ...order.filter((d) => mask[d])];
  t.storage.retain();
  const view = new Tensor({
    storage: t.storage,
    shape: perm.map((d) => shape[d]),
    strides: perm.map((d) => strides[d]),
    storageOffset: t.storageOffset,
    dtype: t.dtype,
  });
  const copy = emptyCpu(view.shape, t.dtype);
  try {
    copyIntoCpu(copy, view);
  } catch (e) {
    copy.dispose();
    throw e;
  } finally {
    view.dispose();
  }
  return { source: copy, outer, R, inner: 1, keptOrder: perm.filter((d) => !mask[d]) };
}

function isDense(order: readonly number[], shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = order.length - 1; i >= 0; i--) {
    if (strides[order[i]] !== expected) return false;
    expected *= shape[order[i]];
  }
  return true;
}

/**
 * Frees the copy a layout made (nothing when the kernel read the input in place).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { planReduction, releaseLayout } from './reduce_layout.ts';
 * const t = tensor([[1, 2, 3], [4, 5, 6]]);
 * const layout = planReduction(t, [true, false]);
 * // ... run the kernel over layout.source ...
 * releaseLayout(layout, t);
 * ```
 */
export function releaseLayout(layout: ReduceLayout, input: Tensor): void {
  if (layout.source !== input) layout.source.dispose();
}

/**
 * A new CPU tensor for a reduction's result over an input of `inputShape`: dense, with the kept dims laid out
 * in `keptOrder` (what the kernel writes), so it is contiguous whenever that order is the logical one.
 *
 * @example
 * ```ts
 * import { float32 } from '../tensor/dtype.ts';
 * import { reductionOutput } from './reduce_layout.ts';
 * reductionOutput([2, 3], [false, true], true, [0], float32).shape; // [2, 1]
 * ```
 */
export function reductionOutput(
  inputShape: readonly number[],
  mask: readonly boolean[],
  keepdim: boolean,
  keptOrder: readonly number[],
  dtype: DType,
): Tensor {
  const shape = reducedShape(inputShape, mask, keepdim);
  const storage = Storage.allocate(Device.cpu, numelOf(shape) * dtype.itemSize);
  let inOrder = true;
  for (let i = 1; i < keptOrder.length; i++) if (keptOrder[i] < keptOrder[i - 1]) inOrder = false;
  if (inOrder) return new Tensor({ storage, shape, dtype });
  // Map each input dim to its output dim, then give the kept dims their strides in the kernel's order.
  const outDim: number[] = [];
  for (let d = 0, o = 0; d < inputShape.length; d++) {
    outDim.push(o);
    if (!mask[d] || keepdim) o++;
  }
  const strides = contiguousStrides(shape);
  let s = 1;
  for (let i = keptOrder.length - 1; i >= 0; i--) {
    strides[outDim[keptOrder[i]]] = s;
    s *= inputShape[keptOrder[i]];
  }
  return new Tensor({ storage, shape, strides, dtype });
}
