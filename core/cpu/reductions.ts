/**
 * CPU kernels of the reductions: each runs the operator's Meta function (PyTorch's checks, the result's
 * shape and dtype), converts the input when the result dtype asks for it, lays the input out as the wasm
 * kernels' `[outer, R, inner]` (Note [Reduction layout] in reduce_layout.ts) and runs the kernel.
 *
 * @module
 */
import { bool, type DType, int64 } from '../tensor/dtype.ts';
import { isIntegral } from '../tensor/promotion.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { ReductionBackendOpName } from '../ops/decl_reductions.ts';
import {
  amaxMeta,
  argExtremumMeta,
  extremumDimMeta,
  extremumMeta,
  meanMeta,
  prodMeta,
  reductionMask,
  sumMeta,
} from '../ops/meta_reductions.ts';
import type { ReduceKernel } from './exports_linalg.ts';
import { asDtype } from './iterator.ts';
import { contiguousAddress, kernels } from './boundary.ts';
import { planReduction, reductionOutput, releaseLayout } from './reduce_layout.ts';
import { checkStatus } from './runtime.ts';
import { splitOuter } from './parallel.ts';
import { splitReduction, splitsReduction } from './parallel_reduce.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;
type ReduceName =
  | 'reduce_sum'
  | 'reduce_prod'
  | 'reduce_mean'
  | 'reduce_max'
  | 'reduce_min'
  | 'reduce_argmax'
  | 'reduce_argmin';

/**
 * Runs one `[outer, R, inner]` kernel over `input` (already of the compute dtype) and returns the result of
 * `outDtype`. `name` is PyTorch's kernel name for the unsupported-dtype message.
 */
function reduce(
  kernel: ReduceName,
  name: string,
  input: Tensor,
  mask: readonly boolean[],
  keepdim: boolean,
  outDtype: DType,
  logicalOrder = false,
): Tensor {
  const layout = planReduction(input, mask, logicalOrder);
  let out: Tensor | undefined;
  try {
    out = reductionOutput(input.shape, mask, keepdim, layout.keptOrder, outDtype);
    if (layout.outer * layout.inner > 0) {
      const run = kernels()[kernel] as ReduceKernel;
      const { outer, R, inner } = layout;
      const code = input.dtype.scalarType;
      // Both are dense blocks (Note [Reduction layout]): the result of outer x inner, the source of outer x R x inner.
      const o = contiguousAddress(out, name, outer * inner);
      const a = contiguousAddress(layout.source, name, outer * R * inner);
      const n = outer * R * inner;
      const status = splitsReduction(n)
        ? splitReduction(kernel, code, input.dtype.itemSize, outDtype, o, a, outer, R, inner)
        : run(code, outDtype.scalarType, o, a, outer, R, inner);
      checkStatus(status, name, code);
    }
    return out;
  } catch (e) {
    out?.dispose();
    throw e;
  } finally {
    releaseLayout(layout, input);
  }
}

/** `reduce` over `self` converted to `compute` (the conversion is freed afterwards). */
function reduceAs(
  kernel: ReduceName,
  name: string,
  self: Tensor,
  compute: DType,
  mask: readonly boolean[],
  keepdim: boolean,
  outDtype: DType,
): Tensor {
  const input = asDtype(self, compute);
  try {
    return reduce(kernel, name, input, mask, keepdim, outDtype);
  } finally {
    if (input !== self) input.dispose();
  }
}

/**
 * `sum` and `prod`: integral and bool inputs accumulate straight into int64; a requested dtype converts the
 * input first, as PyTorch does (so `sum(dtype=int8)` wraps); a bool result is `any` / `all`.
 */
function sumLike(op: 'sum' | 'prod', self: Tensor, mask: readonly boolean[], keepdim: boolean, out: DType): Tensor {
  const kernel = op === 'sum' ? 'reduce_sum' : 'reduce_prod';
  const name = op === 'sum' ? 'sum_cpu' : 'prod_cpu';
  if (out === bool) return reduceAs(op === 'sum' ? 'reduce_max' : 'reduce_min', name, self, bool, mask, keepdim, bool);
  if (out === int64 && isIntegral(self.dtype, true)) return reduce(kernel, name, self, mask, keepdim, int64);
  return reduceAs(kernel, name, self, out, mask, keepdim, out);
}

function sumDim(
  _hi: number,
  _lo: number,
  self: Tensor,
  dim: readonly number[] | null,
  keepdim: boolean,
  dtype: DType | null,
) {
  const m = sumMeta(self, dim, keepdim, dtype);
  return sumLike('sum', self, reductionMask(self.shape, dim), keepdim, m.dtype);
}

function sumAll(_hi: number, _lo: number, self: Tensor, dtype: DType | null) {
  const m = sumMeta(self, null, false, dtype);
  return sumLike('sum', self, reductionMask(self.shape, null), false, m.dtype);
}

function meanDim(
  _hi: number,
  _lo: number,
  self: Tensor,
  dim: readonly number[] | null,
  keepdim: boolean,
  dtype: DType | null,
) {
  const m = meanMeta(self, dim, keepdim, dtype);
  return reduceAs('reduce_mean', 'mean_cpu', self, m.dtype, reductionMask(self.shape, dim), keepdim, m.dtype);
}

function meanAll(_hi: number, _lo: number, self: Tensor, dtype: DType | null) {
  const m = meanMeta(self, null, false, dtype);
  return reduceAs('reduce_mean', 'mean_cpu', self, m.dtype, reductionMask(self.shape, null), false, m.dtype);
}

function prodAll(_hi: number, _lo: number, self: Tensor, dtype: DType | null) {
  const m = prodMeta(self, null, false, dtype);
  return sumLike('prod', self, reductionMask(self.shape, null), false, m.dtype);
}

function prodDim(_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean, dtype: DType | null) {
  const m = prodMeta(self, dim, keepdim, dtype);
  return sumLike('prod', self, reductionMask(self.shape, [dim]), keepdim, m.dtype);
}

function extremumAll(op: 'max' | 'min'): Kernel {
  const kernel = op === 'max' ? 'reduce_max' : 'reduce_min';
  return ((_hi: number, _lo: number, self: Tensor) => {
    extremumMeta(op, self);
    return reduce(kernel, `${op}_all`, self, reductionMask(self.shape, null), false, self.dtype);
  }) as Kernel;
}

function amaxLike(op: 'amax' | 'amin'): Kernel {
  const kernel = op === 'amax' ? 'reduce_max' : 'reduce_min';
  return ((_hi: number, _lo: number, self: Tensor, dim: readonly number[], keepdim: boolean) => {
    amaxMeta(op, self, dim, keepdim);
    return reduce(kernel, `${op}_cpu`, self, reductionMask(self.shape, dim), keepdim, self.dtype);
  }) as Kernel;
}

function argExtremum(op: 'argmax' | 'argmin'): Kernel {
  const kernel = op === 'argmax' ? 'reduce_argmax' : 'reduce_argmin';
  return ((_hi: number, _lo: number, self: Tensor, dim: number | null, keepdim: boolean) => {
    argExtremumMeta(op, self, dim, keepdim);
    const mask = reductionMask(self.shape, dim === null ? null : [dim]);
    // Without a dim the index counts elements in row-major order, so the layout must keep that order.
    return reduce(kernel, `${op}_cpu`, self, mask, keepdim, int64, dim === null);
  }) as Kernel;
}

function extremumDim(op: 'max' | 'min'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean) => {
    extremumDimMeta(op, self, dim, keepdim);
    const mask = reductionMask(self.shape, [dim]);
    const layout = planReduction(self, mask);
    const outputs: Tensor[] = [];
    try {
      const values = reductionOutput(self.shape, mask, keepdim, layout.keptOrder, self.dtype);
      outputs.push(values);
      const indices = reductionOutput(self.shape, mask, keepdim, layout.keptOrder, int64);
      outputs.push(indices);
      if (layout.outer * layout.inner > 0) {
        const k = kernels(), name = `${op}_cpu`;
        const run = op === 'max' ? k.reduce_max_with_indices : k.reduce_min_with_indices;
        const code = self.dtype.scalarType;
        const { outer, R, inner } = layout;
        const pv = contiguousAddress(values, name, outer * inner), pi = contiguousAddress(indices, name, outer * inner);
        const pa = contiguousAddress(layout.source, name, outer * R * inner);
        const status = splitsReduction(outer * R * inner) && outer > 1
          ? splitOuter(
            op === 'max' ? 'reduce_max_with_indices' : 'reduce_min_with_indices',
            [code, pv, pi, pa, outer, R, inner],
            [[1, inner * self.dtype.itemSize], [2, inner * 8], [3, R * inner * self.dtype.itemSize]],
            4,
          )
          : run(code, pv, pi, pa, outer, R, inner);
        checkStatus(status, `${op}_cpu`, code);
      }
      return [values, indices];
    } catch (e) {
      for (const t of outputs) t.dispose();
      throw e;
    } finally {
      releaseLayout(layout, self);
    }
  }) as Kernel;
}

/**
 * CPU kernels of the reductions.
 *
 * @example
 * ```ts
 * import { CPU_REDUCTION_KERNELS } from './reductions.ts';
 * typeof CPU_REDUCTION_KERNELS['sum']; // 'function'
 * ```
 */
export const CPU_REDUCTION_KERNELS: { readonly [K in ReductionBackendOpName]: Kernel } = {
  'sum.dim_IntList': sumDim as Kernel,
  'sum': sumAll as Kernel,
  'mean.dim': meanDim as Kernel,
  'mean': meanAll as Kernel,
  'prod': prodAll as Kernel,
  'prod.dim_int': prodDim as Kernel,
  'max': extremumAll('max'),
  'max.dim': extremumDim('max'),
  'min': extremumAll('min'),
  'min.dim': extremumDim('min'),
  'amax': amaxLike('amax'),
  'amin': amaxLike('amin'),
  'argmax': argExtremum('argmax'),
  'argmin': argExtremum('argmin'),
};
