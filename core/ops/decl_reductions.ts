/**
 * Declarations of the reductions: `sum`, `mean`, `prod`, `max`, `min` (over everything or one dim, with
 * indices), `amax`, `amin`, `argmax`, `argmin`. PyTorch 1.13's schemas; the Meta functions are in
 * `meta_reductions.ts`.
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import {
  amaxMeta,
  argExtremumMeta,
  extremumDimMeta,
  extremumMeta,
  meanMeta,
  prodMeta,
  sumMeta,
} from './meta_reductions.ts';
import type { MetaFn, OpDecl } from './op_decl.ts';

/** A reduction declaration: backend kernels plus a Meta function. */
interface ReductionDecl extends OpDecl {
  readonly kind: 'backend';
  readonly meta: MetaFn;
}

function reduction(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): ReductionDecl {
  return { method: true, ...extra, schema, kind: 'backend', meta, doc };
}

// `sum(x)` and `mean(x)` reach `sum.dim_IntList` / `mean.dim` with `dim = null` (the same reduction), so the
// dim-less overloads stay out of the generated API: beside them, codegen's overload test for `int[1]? dim`
// would refuse a plain int (`sum(x, 1)`), which PyTorch accepts. Autograd and the dispatcher still see both.
const dispatcherOnly: Partial<OpDecl> = { function: false, method: false };

/**
 * Names of the reductions that every backend implements.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import type { ReductionBackendOpName } from './decl_reductions.ts';
 * const name: ReductionBackendOpName = 'sum.dim_IntList';
 * ```
 */
export type ReductionBackendOpName =
  | 'sum.dim_IntList'
  | 'sum'
  | 'mean.dim'
  | 'mean'
  | 'prod'
  | 'prod.dim_int'
  | 'max'
  | 'max.dim'
  | 'min'
  | 'min.dim'
  | 'amax'
  | 'amin'
  | 'argmax'
  | 'argmin';
/**
 * Names of the reductions implemented once for all backends (none: every reduction has kernels).
 *
 * @example
 * ```ts
 * import type { ReductionCompositeOpName } from './decl_reductions.ts';
 * type None = ReductionCompositeOpName; // never
 * ```
 */
export type ReductionCompositeOpName = never;

/**
 * Declarations of the reductions.
 *
 * @example
 * ```ts
 * import { REDUCTION_OPS } from './decl_reductions.ts';
 * REDUCTION_OPS['amax'].schema; // 'amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor'
 * ```
 */
export const REDUCTION_OPS: { readonly [K in ReductionBackendOpName | ReductionCompositeOpName]: ReductionDecl } = {
  'sum.dim_IntList': reduction(
    'sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dim: readonly number[] | null, keepdim: boolean, dtype: DType | null) =>
      sumMeta(self, dim, keepdim, dtype),
    'Sum over `dim` (every dim when null or empty); integral and bool inputs sum to int64 unless `dtype` says otherwise.',
  ),
  'sum': reduction(
    'sum(Tensor self, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dtype: DType | null) => sumMeta(self, null, false, dtype),
    'Sum of every element.',
    dispatcherOnly,
  ),
  'mean.dim': reduction(
    'mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dim: readonly number[] | null, keepdim: boolean, dtype: DType | null) =>
      meanMeta(self, dim, keepdim, dtype),
    'Mean over `dim` (every dim when null or empty); floating dtypes only.',
  ),
  'mean': reduction(
    'mean(Tensor self, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dtype: DType | null) => meanMeta(self, null, false, dtype),
    'Mean of every element.',
    dispatcherOnly,
  ),
  'prod': reduction(
    'prod(Tensor self, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dtype: DType | null) => prodMeta(self, null, false, dtype),
    'Product of every element; integral and bool inputs multiply to int64 unless `dtype` says otherwise.',
  ),
  'prod.dim_int': reduction(
    'prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dim: number, keepdim: boolean, dtype: DType | null) => prodMeta(self, dim, keepdim, dtype),
    'Product over one dim.',
  ),
  'max': reduction(
    'max(Tensor self) -> Tensor',
    (self: Tensor) => extremumMeta('max', self),
    'Largest element (NaN if any element is NaN); with `dim`, the largest values along it and their indices.',
  ),
  'max.dim': reduction(
    'max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
    (self: Tensor, dim: number, keepdim: boolean) => extremumDimMeta('max', self, dim, keepdim),
    'Largest values along `dim` and the index of the first occurrence of each.',
  ),
  'min': reduction(
    'min(Tensor self) -> Tensor',
    (self: Tensor) => extremumMeta('min', self),
    'Smallest element (NaN if any element is NaN); with `dim`, the smallest values along it and their indices.',
  ),
  'min.dim': reduction(
    'min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
    (self: Tensor, dim: number, keepdim: boolean) => extremumDimMeta('min', self, dim, keepdim),
    'Smallest values along `dim` and the index of the first occurrence of each.',
  ),
  'amax': reduction(
    'amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    (self: Tensor, dim: readonly number[], keepdim: boolean) => amaxMeta('amax', self, dim, keepdim),
    'Largest values over `dim` (every dim when empty), NaN-propagating.',
  ),
  'amin': reduction(
    'amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor',
    (self: Tensor, dim: readonly number[], keepdim: boolean) => amaxMeta('amin', self, dim, keepdim),
    'Smallest values over `dim` (every dim when empty), NaN-propagating.',
  ),
  'argmax': reduction(
    'argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor',
    (self: Tensor, dim: number | null, keepdim: boolean) => argExtremumMeta('argmax', self, dim, keepdim),
    'Index of the first largest element along `dim`, or in the flattened input when `dim` is null.',
  ),
  'argmin': reduction(
    'argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor',
    (self: Tensor, dim: number | null, keepdim: boolean) => argExtremumMeta('argmin', self, dim, keepdim),
    'Index of the first smallest element along `dim`, or in the flattened input when `dim` is null.',
  ),
};
