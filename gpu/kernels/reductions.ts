/**
 * WebGPU kernels of the reductions: each runs the operator's Meta function (PyTorch's checks, the result's shape
 * and dtype) and one or two passes of the reduction engine (Note [GPU reduction plan]).
 *
 * @module
 */
import { bool, type DType, int64 } from '../../core/tensor/dtype.ts';
import { isIntegral } from '../../core/tensor/promotion.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { ReductionBackendOpName } from '../../core/ops/decl_reductions.ts';
import {
  amaxMeta,
  argExtremumMeta,
  extremumDimMeta,
  extremumMeta,
  meanMeta,
  prodMeta,
  reductionMask,
  sumMeta,
} from '../../core/ops/meta_reductions.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { emptyGpu } from '../tensors.ts';
import { copyInto } from './copy.ts';
import { reduce, type ReduceOp } from './reduce_engine.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `t` converted to `dtype` on the GPU (itself when it has it; the caller disposes a copy). */
function asDtype(t: Tensor, dtype: DType): Tensor {
  return t.dtype === dtype ? t : filledOrFreed(emptyGpu(t.shape, dtype), (out) => copyInto(out, t));
}

/** Reduces `self` converted to `compute` (as PyTorch converts for a requested dtype). */
function reduceAs(op: ReduceOp, self: Tensor, compute: DType, mask: readonly boolean[], keepdim: boolean): Tensor {
  const input = asDtype(self, compute);
  try {
    return reduce(op, input, mask, keepdim, compute)[0];
  } finally {
    if (input !== self) input.dispose();
  }
}

/** `sum` / `prod`: integral inputs accumulate into int64, a requested dtype converts first, bool is any / all. */
function sumLike(op: 'sum' | 'prod', self: Tensor, mask: readonly boolean[], keepdim: boolean, out: DType): Tensor {
  if (out === bool) return reduceAs(op === 'sum' ? 'max' : 'min', self, bool, mask, keepdim);
  if (out === int64 && isIntegral(self.dtype, true)) return reduce(op, self, mask, keepdim, int64)[0];
  return reduceAs(op, self, out, mask, keepdim);
}

function extremumAll(op: 'max' | 'min'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor) => {
    extremumMeta(op, self);
    return reduce(op, self, reductionMask(self.shape, null), false, self.dtype)[0];
  }) as Kernel;
}

function amaxLike(op: 'amax' | 'amin'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: readonly number[], keepdim: boolean) => {
    amaxMeta(op, self, dim, keepdim);
    return reduce(op === 'amax' ? 'max' : 'min', self, reductionMask(self.shape, dim), keepdim, self.dtype)[0];
  }) as Kernel;
}

function argExtremum(op: 'argmax' | 'argmin'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: number | null, keepdim: boolean) => {
    argExtremumMeta(op, self, dim, keepdim);
    return reduce(op, self, reductionMask(self.shape, dim === null ? null : [dim]), keepdim, int64)[0];
  }) as Kernel;
}

function extremumDim(op: 'max' | 'min'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean) => {
    extremumDimMeta(op, self, dim, keepdim);
    return reduce(op, self, reductionMask(self.shape, [dim]), keepdim, self.dtype, true);
  }) as Kernel;
}

/**
 * WebGPU kernels of the reductions.
 *
 * @example
 * ```ts
 * import { GPU_REDUCTION_KERNELS } from './reductions.ts';
 * typeof GPU_REDUCTION_KERNELS['sum']; // 'function'
 * ```
 */
export const GPU_REDUCTION_KERNELS: { readonly [K in ReductionBackendOpName]: Kernel } = {
  'sum.dim_IntList': ((
    _hi: number,
    _lo: number,
    self: Tensor,
    dim: readonly number[] | null,
    keepdim: boolean,
    dtype: DType | null,
  ) =>
    sumLike('sum', self, reductionMask(self.shape, dim), keepdim, sumMeta(self, dim, keepdim, dtype).dtype)) as Kernel,
  'sum':
    ((_hi: number, _lo: number, self: Tensor, dtype: DType | null) =>
      sumLike('sum', self, reductionMask(self.shape, null), false, sumMeta(self, null, false, dtype).dtype)) as Kernel,
  'mean.dim': ((
    _hi: number,
    _lo: number,
    self: Tensor,
    dim: readonly number[] | null,
    keepdim: boolean,
    dtype: DType | null,
  ) =>
    reduceAs(
      'mean',
      self,
      meanMeta(self, dim, keepdim, dtype).dtype,
      reductionMask(self.shape, dim),
      keepdim,
    )) as Kernel,
  'mean': ((_hi: number, _lo: number, self: Tensor, dtype: DType | null) =>
    reduceAs(
      'mean',
      self,
      meanMeta(self, null, false, dtype).dtype,
      reductionMask(self.shape, null),
      false,
    )) as Kernel,
  'prod': ((_hi: number, _lo: number, self: Tensor, dtype: DType | null) =>
    sumLike(
      'prod',
      self,
      reductionMask(self.shape, null),
      false,
      prodMeta(self, null, false, dtype).dtype,
    )) as Kernel,
  'prod.dim_int':
    ((_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean, dtype: DType | null) =>
      sumLike(
        'prod',
        self,
        reductionMask(self.shape, [dim]),
        keepdim,
        prodMeta(self, dim, keepdim, dtype).dtype,
      )) as Kernel,
  'max': extremumAll('max'),
  'max.dim': extremumDim('max'),
  'min': extremumAll('min'),
  'min.dim': extremumDim('min'),
  'amax': amaxLike('amax'),
  'amin': amaxLike('amin'),
  'argmax': argExtremum('argmax'),
  'argmin': argExtremum('argmin'),
};
