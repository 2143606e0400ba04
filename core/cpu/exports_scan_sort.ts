/**
 * The typed surface of the scan and sort kernel family (kernels_as/scan_sort.ts): cumulative sums and products,
 * and a stable sort with indices, along one dimension of a contiguous tensor viewed as `[outer, n, inner]`.
 *
 * @example
 * ```ts
 * import type { ScanSortExports } from './exports_scan_sort.ts';
 * type Sort = ScanSortExports['sort_contig'];
 * ```
 *
 * @module
 */
import type { KernelStatus } from './exports_elementwise.ts';

/**
 * Opcodes of `scan_contig`.
 *
 * @example
 * ```ts
 * import { ScanOp } from './exports_scan_sort.ts';
 * ScanOp.prod; // 1
 * ```
 */
export const ScanOp = { sum: 0, prod: 1 } as const;

/**
 * The scan and sort kernels.
 *
 * @example
 * ```ts
 * import type { ScanSortExports } from './exports_scan_sort.ts';
 * const f = (k: ScanSortExports) => k.scan_contig;
 * ```
 */
export interface ScanSortExports {
  /** Cumulative sum (op 0) or product (op 1) of each line of `src` into `out` (same dtype, contiguous). */
  scan_contig(
    op: number,
    dtype: number,
    out: number,
    src: number,
    outer: number,
    n: number,
    inner: number,
  ): KernelStatus;
  /**
   * Stable sort of each line of `src`: sorted elements into `values`, their positions into `indices` (int64);
   * `work` is a scratch block of `24 * n` bytes.
   */
  sort_contig(
    dtype: number,
    values: number,
    indices: number,
    src: number,
    outer: number,
    n: number,
    inner: number,
    descending: number,
    work: number,
  ): KernelStatus;
  /**
   * For each line, the most frequent value (the smallest of those; NaN as one value, the largest) into
   * `values[o, i]` and the last position holding it into `indices[o, i]` (int64); `n >= 1`, `work` a scratch
   * block of `24 * n` bytes.
   */
  mode_contig(
    dtype: number,
    values: number,
    indices: number,
    src: number,
    outer: number,
    n: number,
    inner: number,
    work: number,
  ): KernelStatus;
}
