/**
 * Declarations of the scans and sorting operators: `cumsum`, `cumprod`, `sort.stable` and `mode` with backend kernels
 * (kernels_as/scan_sort.ts on the CPU), and the selections decomposed over `sort.stable` (`sort_composites.ts`):
 * `sort`, `argsort`, `topk`, `kthvalue`, `median`. PyTorch 1.13's schemas.
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { modeMeta, scanMeta, sortMeta } from './meta_scan_sort.ts';
import type { MetaFn, OpDecl, OpImpl } from './op_decl.ts';
import { argsort, kthvalue, median, medianDim, sort, topk } from './sort_composites.ts';

function backend(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { method: true, ...extra, schema, kind: 'backend', meta, doc };
}
function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { method: true, ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/**
 * Names of the scan and sort operators with backend kernels.
 *
 * @example
 * ```ts
 * import type { ScanSortBackendOpName } from './decl_scan_sort.ts';
 * const name: ScanSortBackendOpName = 'cumsum';
 * ```
 */
export type ScanSortBackendOpName = 'cumsum' | 'cumprod' | 'sort.stable' | 'mode';
/**
 * Names of the selections decomposed over `sort.stable`.
 *
 * @example
 * ```ts
 * import type { ScanSortCompositeOpName } from './decl_scan_sort.ts';
 * const name: ScanSortCompositeOpName = 'topk';
 * ```
 */
export type ScanSortCompositeOpName =
  | 'sort'
  | 'argsort'
  | 'argsort.stable'
  | 'topk'
  | 'kthvalue'
  | 'median'
  | 'median.dim';

/**
 * Declarations of the scans and sorting operators.
 *
 * @example
 * ```ts
 * import { SCAN_SORT_OPS } from './decl_scan_sort.ts';
 * SCAN_SORT_OPS['cumsum'].kind; // 'backend'
 * ```
 */
export const SCAN_SORT_OPS: { readonly [K in ScanSortBackendOpName | ScanSortCompositeOpName]: OpDecl } = {
  'cumsum': backend(
    'cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dim: number, dtype: DType | null) => scanMeta(self, dim, dtype),
    'Cumulative sum along `dim`; integral and bool inputs sum to int64 unless `dtype` says otherwise.',
  ),
  'cumprod': backend(
    'cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor',
    (self: Tensor, dim: number, dtype: DType | null) => scanMeta(self, dim, dtype),
    'Cumulative product along `dim`; integral and bool inputs multiply to int64 unless `dtype` says otherwise.',
  ),
  'sort.stable': backend(
    'sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)',
    (self: Tensor, stable: boolean | null, dim: number) => sortMeta(self, stable, dim),
    'Sorts along `dim` (stably: equal elements keep their order), NaN as the largest value; values and indices.',
  ),
  'mode': backend(
    'mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)',
    (self: Tensor, dim: number, keepdim: boolean) => modeMeta(self, dim, keepdim),
    'The most frequent value along `dim` (the smallest of the most frequent ones) and the last index holding it.',
  ),
  'sort': composite(
    'sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)',
    sort,
    'Sorted values along `dim` and their indices (NaN sorts as the largest value).',
  ),
  'argsort': composite(
    'argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor',
    (self: Tensor, dim: number, descending: boolean) => argsort(self, false, dim, descending),
    'The indices that sort `self` along `dim`.',
  ),
  'argsort.stable': composite(
    'argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor',
    argsort,
    'The indices that sort `self` along `dim`, equal elements in their order when `stable`.',
  ),
  'topk': composite(
    'topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)',
    topk,
    'The `k` largest (or smallest) elements along `dim` and their indices.',
  ),
  'kthvalue': composite(
    'kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)',
    kthvalue,
    'The `k`-th smallest element along `dim` (1-based) and its index.',
  ),
  'median': composite(
    'median(Tensor self) -> Tensor',
    median,
    'The lower median of every element (NaN if any is NaN); with `dim`, values and indices along it.',
  ),
  'median.dim': composite(
    'median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)',
    medianDim,
    'The lower median along `dim` and its index (NaN and the first NaN index where the slice holds one).',
  ),
};
