/**
 * The operators autograd's own nodes need (accumulating gradients, CopySlices, regenerated view nodes),
 * supplied once by the ops layer: the autograd package knows no operator.
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';

/** A strided layout: sizes, strides and storage offset, in elements. */
export interface TensorGeometry {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

/** The operators the engine needs. */
export interface EngineOps {
  /** Out-of-place sum of two gradients. */
  add(a: Tensor, b: Tensor): Tensor;
  /** In-place accumulation into a leaf's existing gradient. */
  addInPlace(into: Tensor, g: Tensor): void;
  /** A tensor of ones shaped like `t` (the implicit gradient of a scalar root). */
  onesLike(t: Tensor): Tensor;
  /** A contiguous copy. */
  clone(t: Tensor): Tensor;
  /** Zeros of `shape` with `like`'s dtype and device. */
  zeros(shape: readonly number[], like: Tensor): Tensor;
  /** `t.as_strided(size, stride, offset)`. */
  asStrided(t: Tensor, size: readonly number[], stride: readonly number[], offset: number): Tensor;
  /** `grad` summed down to `shape`, which broadcasts to its shape (PyTorch's `sum_to`). */
  sumTo(grad: Tensor, shape: readonly number[]): Tensor;
  /** A copy with another dtype and/or device. */
  convert(t: Tensor, dtype: DType, device: Device): Tensor;
  /** `dst.copy_(src)`. */
  copyInto(dst: Tensor, src: Tensor): void;
  /** PyTorch's as_strided_backward: the gradient of `as_strided(input, size, stride, offset)` w.r.t. input. */
  asStridedBackward(
    grad: Tensor,
    input: TensorGeometry,
    size: readonly number[],
    stride: readonly number[],
    offset: number,
  ): Tensor;
}

let supplied: EngineOps | undefined;

/**
 * Supplies the engine's operators (called once by the ops layer).
 *
 * @example
 * ```ts
 * // registry.ts: setEngineOps({ add: (a, b) => a.add(b), ... });
 * ```
 */
export function setEngineOps(ops: EngineOps): void {
  supplied = ops;
}

/**
 * The supplied operators.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { engineOps } from './engine_ops.ts';
 * const t = tensor([1, 2]); // the first tensor registers the operators
 * engineOps().clone(t).toArray(); // [1, 2]
 * ```
 */
export function engineOps(): EngineOps {
  if (supplied === undefined) throw new Error('autograd engine used before the operators were registered');
  return supplied;
}

/**
 * The geometry of a tensor.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { geometryOf } from './engine_ops.ts';
 * geometryOf(tensor([[1, 2], [3, 4]]).t()); // { shape: [2, 2], strides: [1, 2], offset: 0 }
 * ```
 */
export function geometryOf(t: Tensor): TensorGeometry {
  return { shape: t.shape, strides: t.stride(), offset: t.storageOffset };
}
