/**
 * Shape and dtype rules of the reductions (their Meta functions), with PyTorch's checks and messages: which
 * dims a `dim` argument names, the reduced shape with and without `keepdim`, the result dtype of `sum`,
 * `prod` and `mean`, and the non-empty checks of `max`, `min`, `amax`, `amin`, `argmax` and `argmin`. The CPU
 * kernels call the same functions, so a Meta tensor has the shape and dtype the real result has.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { type DType, int64 } from '../tensor/dtype.ts';
import { isIntegral } from '../tensor/promotion.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { TensorMeta } from './op_decl.ts';

/**
 * Which dims of `self` a reduction's `dim` argument reduces, as a mask over `self`'s dims: `null` or `[]`
 * reduce every dim (PyTorch's `sum(dim=[])` is a full reduction), negative dims wrap, a repeated dim is
 * PyTorch's error. A 0-d tensor accepts dims 0 and -1 and has an empty mask.
 *
 * @example
 * ```ts
 * import { reductionMask } from './meta_reductions.ts';
 * reductionMask([2, 3, 4], [-1, 0]); // [true, false, true]
 * ```
 */
export function reductionMask(shape: readonly number[], dim: readonly number[] | null): boolean[] {
  const ndim = shape.length;
  if (dim === null || dim.length === 0) return new Array<boolean>(ndim).fill(true);
  const mask = new Array<boolean>(ndim).fill(false);
  const seen = new Set<number>();
  for (const d of dim) {
    const w = wrapDim(d, ndim);
    if (seen.has(w)) throw new RuntimeError(`dim ${w} appears multiple times in the list of dims`);
    seen.add(w);
    if (ndim > 0) mask[w] = true;
  }
  return mask;
}

/**
 * The result shape of a reduction: reduced dims dropped, or kept with size 1 under `keepdim`.
 *
 * @example
 * ```ts
 * import { reducedShape } from './meta_reductions.ts';
 * reducedShape([2, 3, 4], [true, false, true], true); // [1, 3, 1]
 * ```
 */
export function reducedShape(shape: readonly number[], mask: readonly boolean[], keepdim: boolean): number[] {
  const out: number[] = [];
  for (let d = 0; d < shape.length; d++) {
    if (!mask[d]) out.push(shape[d]);
    else if (keepdim) out.push(1);
  }
  return out;
}

/**
 * The result dtype of `sum` and `prod`: the `dtype` argument, else int64 for integral and bool inputs
 * (PyTorch's rule), else the input's dtype.
 *
 * @example
 * ```ts
 * import { bool, int64 } from '../tensor/dtype.ts';
 * import { sumResultDtype } from './meta_reductions.ts';
 * sumResultDtype(bool, null) === int64; // true
 * ```
 */
export function sumResultDtype(input: DType, dtype: DType | null): DType {
  if (dtype !== null) return dtype;
  return isIntegral(input, true) ? int64 : input;
}

/**
 * The result dtype of `mean`: floating only, with PyTorch's message for anything else.
 *
 * @throws {RuntimeError} `mean(): could not infer output dtype. Input dtype must be either a floating point or
 * complex dtype. Got: Long`.
 * @example
 * ```ts
 * import { float32 } from '../tensor/dtype.ts';
 * import { meanResultDtype } from './meta_reductions.ts';
 * meanResultDtype(float32, null) === float32; // true
 * ```
 */
export function meanResultDtype(input: DType, dtype: DType | null): DType {
  const out = dtype ?? input;
  if (!out.isFloatingPoint && !out.isComplex) {
    throw new RuntimeError(
      `mean(): could not infer output dtype. ${dtype === null ? 'Input' : 'Optional'} dtype must be either a ` +
        `floating point or complex dtype. Got: ${out.scalarTypeName}`,
    );
  }
  return out;
}

/**
 * PyTorch's checks that a max-like reduction has something to reduce: with dims given, each reduced dim must
 * be non-empty; without, the input must be.
 *
 * @example
 * ```ts
 * import { checkNonEmptyReduction } from './meta_reductions.ts';
 * checkNonEmptyReduction('max', [0, 3], [false, true], true); // ok: dim 1 is not empty
 * ```
 */
export function checkNonEmptyReduction(
  op: string,
  shape: readonly number[],
  mask: readonly boolean[],
  dimGiven: boolean,
): void {
  if (dimGiven) {
    for (let d = 0; d < shape.length; d++) {
      if (mask[d] && shape[d] === 0) {
        throw new RangeError(`${op}(): Expected reduction dim ${d} to have non-zero size.`);
      }
    }
    return;
  }
  if (!shape.includes(0)) return;
  if (op === 'argmax' || op === 'argmin') {
    throw new RangeError(`${op}(): Expected reduction dim to be specified for input.numel() == 0.`);
  }
  throw new RuntimeError(
    `${op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the ` +
      `'dim' argument.`,
  );
}

/**
 * Meta of `sum.dim_IntList` and `sum` (`dim = null`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { sumMeta } from './meta_reductions.ts';
 * sumMeta(tensor([[1, 2], [3, 4]]), [0], true, null).shape; // [1, 2]
 * ```
 */
export function sumMeta(
  self: Tensor,
  dim: readonly number[] | null,
  keepdim: boolean,
  dtype: DType | null,
): TensorMeta {
  self.assertAlive('sum');
  const mask = reductionMask(self.shape, dim);
  return { shape: reducedShape(self.shape, mask, keepdim), dtype: sumResultDtype(self.dtype, dtype) };
}

/**
 * Meta of `prod.dim_int` and `prod` (`dim = null`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { prodMeta } from './meta_reductions.ts';
 * prodMeta(tensor([true, false]), null, false, null).dtype.name; // 'int64'
 * ```
 */
export function prodMeta(self: Tensor, dim: number | null, keepdim: boolean, dtype: DType | null): TensorMeta {
  self.assertAlive('prod');
  const mask = reductionMask(self.shape, dim === null ? null : [dim]);
  return { shape: reducedShape(self.shape, mask, keepdim), dtype: sumResultDtype(self.dtype, dtype) };
}

/**
 * Meta of `mean.dim` and `mean` (`dim = null`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { meanMeta } from './meta_reductions.ts';
 * meanMeta(tensor([[1.5, 2]]), [-1], false, null).shape; // [1]
 * ```
 */
export function meanMeta(
  self: Tensor,
  dim: readonly number[] | null,
  keepdim: boolean,
  dtype: DType | null,
): TensorMeta {
  self.assertAlive('mean');
  const out = meanResultDtype(self.dtype, dtype);
  const mask = reductionMask(self.shape, dim);
  return { shape: reducedShape(self.shape, mask, keepdim), dtype: out };
}

/**
 * Meta of `max` / `min` over every element (a 0-d result of the input's dtype).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { extremumMeta } from './meta_reductions.ts';
 * extremumMeta('max', tensor([1, 5, 2])).shape; // []
 * ```
 */
export function extremumMeta(op: 'max' | 'min', self: Tensor): TensorMeta {
  self.assertAlive(op);
  checkNonEmptyReduction(op, self.shape, reductionMask(self.shape, null), false);
  return { shape: [], dtype: self.dtype };
}

/**
 * Meta of `amax` / `amin` (`dim = []` reduces every dim).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { amaxMeta } from './meta_reductions.ts';
 * amaxMeta('amax', tensor([[1, 5], [2, 0]]), [], true).shape; // [1, 1]
 * ```
 */
export function amaxMeta(op: 'amax' | 'amin', self: Tensor, dim: readonly number[], keepdim: boolean): TensorMeta {
  self.assertAlive(op);
  const mask = reductionMask(self.shape, dim);
  checkNonEmptyReduction(op, self.shape, mask, dim.length > 0);
  return { shape: reducedShape(self.shape, mask, keepdim), dtype: self.dtype };
}

/**
 * Meta of `max.dim` / `min.dim`: values of the input's dtype and int64 indices.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { extremumDimMeta } from './meta_reductions.ts';
 * extremumDimMeta('min', tensor([[1, 5], [2, 0]]), 1, false)[1].dtype.name; // 'int64'
 * ```
 */
export function extremumDimMeta(
  op: 'max' | 'min',
  self: Tensor,
  dim: number,
  keepdim: boolean,
): readonly [TensorMeta, TensorMeta] {
  self.assertAlive(op);
  const mask = reductionMask(self.shape, [dim]);
  checkNonEmptyReduction(op, self.shape, mask, true);
  const shape = reducedShape(self.shape, mask, keepdim);
  return [{ shape, dtype: self.dtype }, { shape, dtype: int64 }];
}

/**
 * Meta of `argmax` / `argmin`: int64 indices; without `dim`, into the flattened input.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { argExtremumMeta } from './meta_reductions.ts';
 * argExtremumMeta('argmax', tensor([[1, 5], [2, 0]]), null, true).shape; // [1, 1]
 * ```
 */
export function argExtremumMeta(
  op: 'argmax' | 'argmin',
  self: Tensor,
  dim: number | null,
  keepdim: boolean,
): TensorMeta {
  self.assertAlive(op);
  const mask = reductionMask(self.shape, dim === null ? null : [dim]);
  checkNonEmptyReduction(op, self.shape, mask, dim !== null);
  return { shape: reducedShape(self.shape, mask, keepdim), dtype: int64 };
}
