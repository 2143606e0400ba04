/**
 * The typed surface of the indexing kernel family (kernels_as/indexing.ts): gathers along a dimension
 * (index_select, embedding, gather) and deterministic accumulating scatters (index_add, scatter_add,
 * embedding_dense_backward), for every dtype.
 *
 * Kernel ABI: pointers are byte offsets into the kernel memory; strides are element counts; dtypes are
 * PyTorch ScalarType codes; index tensors are int32 or int64 (`indexDtype` 3 or 4). The descriptor is the
 * strided one of exports_elementwise.ts over the iteration shape, with operands out, src, index; the indexed
 * operand has stride 0 along the indexed dimension and its real stride there is passed separately. The
 * gather and scatter kernels do not bounds-check: run `index_find_invalid` on the index first.
 *
 * @example
 * ```ts
 * import type { IndexingExports } from './exports_indexing.ts';
 * type Gather = IndexingExports['gather_strided'];
 * ```
 *
 * @module
 */
import type { KernelStatus } from './exports_elementwise.ts';

/**
 * The indexing kernels.
 *
 * @example
 * ```ts
 * import type { IndexingExports } from './exports_indexing.ts';
 * const check = (k: IndexingExports) => k.index_find_invalid(4, 0, 0, 3n); // -1: nothing to check
 * ```
 */
export interface IndexingExports {
  /** Position of the first of `n` contiguous indices outside `[0, bound)`, or -1 (-2 for a bad index dtype). */
  index_find_invalid(indexDtype: number, index: number, n: number, bound: bigint): number;
  /** `out[p] = src[p with the indexed dimension at index[p]]`; descriptor operands: out, src, index. */
  gather_strided(
    dtype: number,
    out: number,
    src: number,
    index: number,
    indexDtype: number,
    desc: number,
    srcDimStride: number,
  ): KernelStatus;
  /**
   * `out[p with the indexed dimension at index[p]] += alpha * src[p]` in row-major order of the iteration
   * shape (deterministic); positions whose index equals `skip` are left out (-1n for none).
   */
  scatter_add_strided(
    dtype: number,
    out: number,
    src: number,
    index: number,
    indexDtype: number,
    desc: number,
    outDimStride: number,
    alpha: number,
    skip: bigint,
  ): KernelStatus;
}
