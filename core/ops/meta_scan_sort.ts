/**
 * Meta functions of the scans (`cumsum`, `cumprod`) and of `sort`: output shapes and dtypes, with PyTorch's
 * argument checks.
 *
 * @module
 */
import { type DType, int64 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { TensorMeta } from './op_decl.ts';

/**
 * The result dtype of `cumsum` / `cumprod`: `dtype` when given, int64 for integral and bool inputs, else the
 * input's dtype.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { scanDtype } from './meta_scan_sort.ts';
 * scanDtype(tensor([true]), null).name; // 'int64'
 * ```
 */
export function scanDtype(self: Tensor, dtype: DType | null): DType {
  if (dtype !== null) return dtype;
  return self.dtype.isFloatingPoint ? self.dtype : int64;
}

/**
 * Meta function of `cumsum` / `cumprod`: the input's shape, {@linkcode scanDtype}.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { scanMeta } from './meta_scan_sort.ts';
 * scanMeta(tensor([1, 2]), 0, null).dtype.name; // 'int64'
 * ```
 */
export function scanMeta(self: Tensor, dim: number, dtype: DType | null): TensorMeta {
  wrapDim(dim, self.ndim);
  return { shape: self.shape, dtype: scanDtype(self, dtype) };
}

/**
 * Meta function of `sort.stable`: values like the input, int64 indices.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { sortMeta } from './meta_scan_sort.ts';
 * sortMeta(tensor([2, 1]), null, -1)[1].dtype.name; // 'int64'
 * ```
 */
export function sortMeta(self: Tensor, _stable: boolean | null, dim: number): [TensorMeta, TensorMeta] {
  wrapDim(dim, self.ndim);
  return [{ shape: self.shape, dtype: self.dtype }, { shape: self.shape, dtype: int64 }];
}

/**
 * Meta function of `mode`: values like the input and int64 indices, of the input's shape without `dim` (size 1
 * there with `keepdim`); PyTorch's `Expected reduction dim 0 to have non-zero size.` for an empty line.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { modeMeta } from './meta_scan_sort.ts';
 * modeMeta(tensor([[1, 2], [2, 2]]), 1, true)[0].shape; // [2, 1]
 * ```
 */
export function modeMeta(self: Tensor, dim: number, keepdim: boolean): [TensorMeta, TensorMeta] {
  self.assertAlive('mode');
  const d = wrapDim(dim, self.ndim);
  if (self.ndim > 0 && self.shape[d] === 0) {
    throw new RangeError(`mode(): Expected reduction dim ${d} to have non-zero size.`);
  }
  const shape = self.ndim === 0
    ? []
    : keepdim
    ? self.shape.map((s, i) => (i === d ? 1 : s))
    : self.shape.filter((_, i) => i !== d);
  return [{ shape, dtype: self.dtype }, { shape, dtype: int64 }];
}
