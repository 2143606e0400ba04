/**
 * New WebGPU tensors: storage from the buffer pool sized by the GPU element layout (Note [GPU element layout]).
 *
 * @module
 */
import { Device } from '../core/tensor/device.ts';
import type { DType } from '../core/tensor/dtype.ts';
import { numelOf } from '../core/tensor/shape.ts';
import { Storage } from '../core/tensor/storage.ts';
import { Tensor } from '../core/tensor/tensor.ts';
import { storageNbytes } from '../core/ops/view_layout.ts';
import { outputStridesOf } from '../core/ops/output_layout.ts';
import { gpuItemBytes } from './wgsl/dtypes.ts';

/**
 * A new contiguous WebGPU tensor (uninitialised), or one with the given dense `strides`.
 *
 * @example
 * ```ts
 * import { emptyGpu } from './tensors.ts';
 * import { float32 } from '../core/tensor/dtype.ts';
 * // after initWebGPU(): emptyGpu([2, 3], float32).dispose();
 * ```
 */
export function emptyGpu(shape: readonly number[], dtype: DType, strides?: readonly number[]): Tensor {
  const nbytes = strides === undefined
    ? numelOf(shape) * gpuItemBytes(dtype)
    : storageNbytes(shape, strides, gpuItemBytes(dtype));
  const storage = Storage.allocate(Device.webgpu, nbytes);
  return new Tensor({ storage, shape, dtype, strides });
}

/**
 * A new WebGPU tensor of `shape` laid out as TensorIterator lays out an elementwise result of `operands`
 * (Note [Elementwise output layout] in core/ops/output_layout.ts).
 *
 * @example
 * ```ts
 * import { elementwiseOutput } from './tensors.ts';
 * import { float32 } from '../core/tensor/dtype.ts';
 * // elementwiseOutput([4, 3], float32, x.t()) follows x.t()'s memory order
 * ```
 */
export function elementwiseOutput(
  shape: readonly number[],
  dtype: DType,
  a: unknown,
  b?: unknown,
  c?: unknown,
): Tensor {
  return emptyGpu(shape, dtype, outputStridesOf(shape, a, b, c));
}
