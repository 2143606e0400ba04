/**
 * Reductions split across the intra-op thread pool (Note [Intra-op splitting] in parallel.ts).
 *
 * Note [Split reductions]
 * A reduction over `[outer, R, inner]` with at least one row of `outer` per thread splits `outer`: each thread
 * reduces whole rows, and the result is bitwise identical to one thread. With a small `outer` (full
 * reductions, column sums) only `R` can be cut: with `outer` = 1 each chunk (4 per thread) reduces a contiguous
 * slab of R into its own row of partial results (in the result dtype), and the kernel then reduces those
 * `[chunks, inner]` partials in chunk order. The cut depends only on the thread count, so the result is deterministic
 * for a count; it can differ from one thread's in the last bits of a float sum, as PyTorch's parallel sums do.
 * Only reductions whose partial results lose nothing the single-thread kernel would keep are cut along R:
 * max / min (exact), integer sums and products (wrapping arithmetic is associative), and float32 / float64 sums,
 * products and means that accumulate in their own type; float16 / bfloat16 results (accumulated in float32,
 * rounded once) and arg-reductions (indices) stay on one thread when `outer` is small.
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import { contiguousAddress, kernels } from './boundary.ts';
import { BinaryOp } from './exports_elementwise.ts';
import { emptyCpu } from './iterator.ts';
import { elementwiseChunks, elementwiseSplitMin, runTasks, splitOuter, splitRange } from './parallel.ts';
import { getNumThreads } from '../workers/pool.ts';

/** The `[outer, R, inner]` reduction kernels. */
export type SplitReduceKernel =
  | 'reduce_sum'
  | 'reduce_prod'
  | 'reduce_mean'
  | 'reduce_max'
  | 'reduce_min'
  | 'reduce_argmax'
  | 'reduce_argmin';

/**
 * Whether a reduction reading `n` elements is split.
 *
 * @example
 * ```ts
 * import { splitsReduction } from './parallel_reduce.ts';
 * splitsReduction(100); // false
 * ```
 */
export function splitsReduction(n: number): boolean {
  return n >= elementwiseSplitMin() && getNumThreads() > 1;
}

const FLOAT32 = 6, FLOAT64 = 7, FLOAT16 = 5, BFLOAT16 = 15;

/** Whether partial results along R lose nothing (Note [Split reductions]). */
function cutsR(kernel: SplitReduceKernel, code: number, outCode: number): boolean {
  if (kernel === 'reduce_max' || kernel === 'reduce_min') return true;
  if (kernel === 'reduce_argmax' || kernel === 'reduce_argmin') return false;
  if (outCode === FLOAT16 || outCode === BFLOAT16) return false;
  const floatIn = code === FLOAT32 || code === FLOAT64 || code === FLOAT16 || code === BFLOAT16;
  if (kernel === 'reduce_mean') return code === outCode && (code === FLOAT32 || code === FLOAT64);
  return !floatIn || code === outCode;
}

/**
 * Runs reduction `kernel` of input dtype `code` over the dense `[outer, R, inner]` block at `a` into `out`
 * (`outer * inner` elements of `outDtype` at `o`), split across the pool as Note [Split reductions] says.
 * Returns the kernel status.
 *
 * @example
 * ```ts
 * import { splitReduction } from './parallel_reduce.ts';
 * splitReduction; // used by core/cpu/reductions.ts for reductions above the elementwise threshold
 * ```
 */
export function splitReduction(
  kernel: SplitReduceKernel,
  code: number,
  inItem: number,
  outDtype: DType,
  o: number,
  a: number,
  outer: number,
  R: number,
  inner: number,
): number {
  const chunks = elementwiseChunks(), outCode = outDtype.scalarType;
  const args = [code, outCode, o, a, outer, R, inner];
  if (outer >= getNumThreads()) {
    return splitOuter(kernel, args, [[2, inner * outDtype.itemSize], [3, R * inner * inItem]], 4);
  }
  const k = kernels() as unknown as Record<string, (...args: number[]) => number>;
  if (outer !== 1 || R < 2 * chunks || !cutsR(kernel, code, outCode)) return k[kernel](...args);
  const ranges = splitRange(R, chunks);
  const partials = emptyCpu([ranges.length, inner], outDtype);
  try {
    const pp = contiguousAddress(partials, kernel, ranges.length * inner);
    const partialKernel = kernel === 'reduce_mean' ? 'reduce_sum' : kernel;
    const tasks = ranges.map(([start, end], i) => [
      code,
      outCode,
      pp + i * inner * outDtype.itemSize,
      a + start * inner * inItem,
      1,
      end - start,
      inner,
    ]);
    const status = runTasks(partialKernel, tasks);
    if (status !== 0) return status;
    const combined = k[partialKernel](outCode, outCode, o, pp, 1, ranges.length, inner);
    if (combined !== 0 || kernel !== 'reduce_mean') return combined;
    return k.binary_scalar_contig(BinaryOp.div, outCode, o, o, R, inner, 1);
  } finally {
    partials.dispose();
  }
}
