/**
 * Layout rules of copies: the bytes a strided layout spans, whether it is dense in some dimension order
 * (`is_non_overlapping_and_dense`), and the strides a copy gets in each memory format (`preserve_format`
 * keeps the input's dimension order, as PyTorch's `empty_like` and `_to_copy` do).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';

/**
 * Bytes a strided layout spans (PyTorch's `computeStorageNbytes`); 0 when it has no elements.
 *
 * @example
 * ```ts
 * import { storageNbytes } from './view_layout.ts';
 * storageNbytes([2, 3], [3, 1], 4); // 24
 * ```
 */
export function storageNbytes(shape: readonly number[], strides: readonly number[], itemSize: number): number {
  let extent = 1;
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 0) return 0;
    extent += strides[d] * (shape[d] - 1);
  }
  return extent * itemSize;
}

/**
 * Whether a layout covers exactly `numel` consecutive elements in some dimension order (PyTorch's
 * `is_non_overlapping_and_dense`): such tensors can be copied keeping their strides.
 *
 * @example
 * ```ts
 * import { isNonOverlappingAndDense } from './view_layout.ts';
 * isNonOverlappingAndDense([4, 3], [1, 4]); // true (a transpose)
 * ```
 */
export function isNonOverlappingAndDense(shape: readonly number[], strides: readonly number[]): boolean {
  if (shape.length === 1) return shape[0] < 2 || strides[0] === 1;
  const perm = shape.map((_, i) => i).filter((i) => shape[i] >= 2).sort((a, b) => strides[a] - strides[b]);
  let required = 1;
  for (const d of perm) {
    if (strides[d] !== required) return false;
    required *= shape[d];
  }
  return true;
}

/**
 * Dense strides that keep the order of `strides` (PyTorch's `infer_dense_strides`, the same stable
 * insertion sort TensorIterator uses; stride-0 dims stay where they are).
 *
 * @example
 * ```ts
 * import { inferDenseStrides } from './view_layout.ts';
 * inferDenseStrides([2, 3], [1, 4]); // [1, 2]
 * ```
 */
export function inferDenseStrides(shape: readonly number[], strides: readonly number[]): number[] {
  const n = shape.length;
  if (n === 0) return [];
  if (n === 1) return [1];
  const perm = shape.map((_, i) => n - 1 - i);
  const compare = (d0: number, d1: number) => {
    const s0 = strides[d0], s1 = strides[d1];
    if (s0 === 0 || s1 === 0) return 0;
    if (s0 !== s1) return s0 < s1 ? -1 : 1;
    return shape[d0] > shape[d1] ? 1 : 0;
  };
  for (let i = 1; i < n; i++) {
    let d1 = i;
    for (let j = 1; j <= i; j++) {
      const d0 = i - j;
      const c = compare(perm[d0], perm[d1]);
      if (c > 0) {
        [perm[d0], perm[d1]] = [perm[d1], perm[d0]];
        d1 = d0;
      } else if (c < 0) break;
    }
  }
  const out = new Array<number>(n);
  let current = 1;
  for (const d of perm) {
    out[d] = current;
    if (shape[d] > 1) current *= shape[d];
  }
  return out;
}

/** The memory formats Switchyard supports (strided tensors only; no channels-last). */
export type MemoryFormat = 'contiguous' | 'preserve';

/**
 * A MemoryFormat argument (schema default code, name, or None) as a {@linkcode MemoryFormat}.
 *
 * @example
 * ```ts
 * import { memoryFormatOf } from './view_layout.ts';
 * memoryFormatOf(0); // 'contiguous'
 * ```
 */
export function memoryFormatOf(v: unknown, fallback: MemoryFormat = 'preserve'): MemoryFormat {
  if (v === null || v === undefined) return fallback;
  if (v === 0 || v === 'contiguous_format') return 'contiguous';
  if (v === 1 || v === 'preserve_format') return 'preserve';
  throw new RuntimeError(`Switchyard supports only contiguous_format and preserve_format, got memory format ${v}`);
}

/**
 * Strides of a copy of a tensor in a memory format (`preserve` keeps the input's dimension order).
 *
 * @example
 * ```ts
 * import { copyStrides } from './view_layout.ts';
 * copyStrides([4, 3], [1, 4], 'preserve'); // [1, 4]
 * ```
 */
export function copyStrides(shape: readonly number[], strides: readonly number[], format: MemoryFormat): number[] {
  if (format === 'contiguous') return contiguousOf(shape);
  return isNonOverlappingAndDense(shape, strides) ? [...strides] : inferDenseStrides(shape, strides);
}

function contiguousOf(shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    out[i] = s;
    s *= Math.max(shape[i], 1);
  }
  return out;
}
