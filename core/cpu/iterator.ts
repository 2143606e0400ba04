/**
 * TensorIterator-like machinery for CPU kernels: data addresses, broadcasting operands to the output shape,
 * dimension coalescing, and the strided descriptor the wasm kernels read.
 *
 * Note [Elementwise plan]
 * Every operand is viewed at the output's shape (broadcast dimensions get stride 0). When all operands are
 * contiguous at that shape, the kernel's `*_contig` variant runs over `numel` elements with SIMD. Otherwise
 * the dimensions are coalesced (adjacent dims that are contiguous in every operand merge, size-1 dims drop)
 * and written to the scratch descriptor `[ndim, sizes..., strides of operand 0..., strides of operand 1...]`
 * for the `*_strided` variant, whose innermost loop runs over the last (usually longest) dimension.
 *
 * @module
 */
import { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { coalesceDims, contiguousStrides, expandStrides, isContiguousLayout, numelOf } from '../tensor/shape.ts';
import { Storage } from '../tensor/storage.ts';
import { Tensor } from '../tensor/tensor.ts';
import { isNonOverlappingAndDense, storageNbytes } from '../ops/view_layout.ts';
import { contiguousAddress, kernels, stridedAddress, writeDescriptor } from './boundary.ts';
import { checkStatus } from './runtime.ts';
import { splitElementwise, splitsElementwise } from './parallel.ts';

/**
 * A new contiguous CPU tensor (uninitialised memory).
 *
 * @example
 * ```ts
 * import { emptyCpu } from './iterator.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * emptyCpu([2, 3], float32).dispose();
 * ```
 */
export function emptyCpu(shape: readonly number[], dtype: DType): Tensor {
  const storage = Storage.allocate(Device.cpu, numelOf(shape) * dtype.itemSize);
  return new Tensor({ storage, shape, dtype });
}

/**
 * A new CPU tensor with the given (dense) strides, uninitialised.
 *
 * @example
 * ```ts
 * import { emptyStridedCpu } from './iterator.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * emptyStridedCpu([2, 3], [1, 2], float32).dispose(); // laid out transposed
 * ```
 */
export function emptyStridedCpu(shape: readonly number[], strides: readonly number[], dtype: DType): Tensor {
  const storage = Storage.allocate(Device.cpu, storageNbytes(shape, strides, dtype.itemSize));
  return new Tensor({ storage, shape, strides, dtype });
}

/** How to run an elementwise kernel over operands viewed at one shape. */
export interface ElementwisePlan {
  /** All operands contiguous at the output shape: run the `_contig` variant over `numel` elements. */
  readonly contiguous: boolean;
  readonly numel: number;
  /** Descriptor address for the `_strided` variant (valid until the next plan). */
  readonly desc: number;
  /** Each operand's checked address, in the order given (Note [Kernel boundary] in boundary.ts). */
  readonly ptrs: readonly number[];
  /** The coalesced sizes the strided descriptor holds (empty when contiguous); split kernels re-cut them. */
  readonly sizes: readonly number[];
  /** The coalesced strides of each operand, in the order given (empty when contiguous). */
  readonly strides: ReadonlyArray<readonly number[]>;
}

/**
 * Plans an elementwise loop over `operands` (output first) viewed at `shape`: checks every operand's region
 * at the kernel boundary and writes the strided descriptor to scratch memory when needed. `op` names the
 * kernel in errors.
 */
export function planElementwise(op: string, shape: readonly number[], operands: readonly Tensor[]): ElementwisePlan {
  const numel = numelOf(shape);
  let contiguous = true;
  for (const t of operands) {
    if (!sameShape(t.shape, shape) || !isContiguousLayout(t.shape, t.stride())) {
      contiguous = false;
      break;
    }
  }
  if (contiguous || numel === 0 || sameDenseLayout(shape, operands)) {
    // Also operands that share one dense layout in any dim order (a transposed input and its TensorIterator-
    // ordered output): element by element in memory order, from each one's lowest address, its first element.
    const ptrs = operands.map((t) => contiguousAddress(t, op, numel));
    return { contiguous: true, numel, desc: 0, ptrs, sizes: NONE, strides: NONE };
  }
  const strides = operands.map((t) => expandStrides(t.shape, t.stride(), shape));
  const c = coalesceDims(shape, strides);
  const ptrs = operands.map((t, k) => stridedAddress(t, op, c.shape, c.strides[k]));
  const desc = writeDescriptor(op, c.shape, c.strides);
  return { contiguous: false, numel, desc, ptrs, sizes: c.shape, strides: c.strides };
}
const NONE: readonly never[] = [];
/** Whether every operand has `shape` and the same non-negative, non-overlapping and dense strides. */
function sameDenseLayout(shape: readonly number[], operands: readonly Tensor[]): boolean {
  const strides = operands[0].stride();
  for (const s of strides) if (s < 0) return false;
  for (const t of operands) if (!sameShape(t.shape, shape) || !sameShape(t.stride(), strides)) return false;
  return isNonOverlappingAndDense(shape, strides);
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A new contiguous CPU tensor holding `t` converted to `dtype` (any layout of `t`). See {@linkcode asDtype}
 * for the variant that returns `t` itself when it already has the dtype.
 */
export function castCpu(t: Tensor, dtype: DType): Tensor {
  const out = emptyCpu(t.shape, dtype);
  copyIntoCpu(out, t);
  return out;
}

/**
 * Copies `src` into `dst` with broadcasting and dtype conversion (`dst.copy_(src)` on the CPU).
 */
export function copyIntoCpu(dst: Tensor, src: Tensor): void {
  const k = kernels();
  const plan = planElementwise('copy_', dst.shape, [dst, src]);
  if (plan.numel === 0) return;
  const sameType = dst.dtype === src.dtype;
  const [out, a] = plan.ptrs;
  let status: number;
  if (splitsElementwise(plan.numel)) {
    const sizes = [dst.dtype.itemSize, src.dtype.itemSize];
    status = sameType
      ? splitElementwise('copy', [dst.dtype.scalarType, out, a, 0], sizes, plan.numel, plan)
      : splitElementwise('cast', [src.dtype.scalarType, dst.dtype.scalarType, out, a, 0], sizes, plan.numel, plan);
  } else if (plan.contiguous) {
    status = sameType
      ? k.copy_contig(dst.dtype.scalarType, out, a, plan.numel)
      : k.cast_contig(src.dtype.scalarType, dst.dtype.scalarType, out, a, plan.numel);
  } else {
    status = sameType
      ? k.copy_strided(dst.dtype.scalarType, out, a, plan.desc)
      : k.cast_strided(src.dtype.scalarType, dst.dtype.scalarType, out, a, plan.desc);
  }
  checkStatus(status, 'copy_', src.dtype.scalarType);
}

/**
 * `t` itself when it already has `dtype`, else a converted contiguous copy (which the caller must dispose:
 * check `result !== t`).
 */
export function asDtype(t: Tensor, dtype: DType): Tensor {
  return t.dtype === dtype ? t : castCpu(t, dtype);
}

/** PyTorch's internal-overlap rule, shared with the Meta functions. */
export { hasInternalOverlap } from '../ops/meta_elementwise.ts';

/** Contiguous strides of a shape, re-exported for kernels. */
export { contiguousStrides };
