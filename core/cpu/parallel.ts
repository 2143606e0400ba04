/**
 * Splitting one CPU kernel call across the intra-op thread pool (core/workers/pool.ts).
 *
 * Note [Intra-op splitting]
 * A split kernel is the same wasm export called once per chunk of the work (Note [Pool job protocol] in
 * core/workers/pool.ts: 4 chunks per thread, so that claiming evens out the shares; one or two per thread for
 * products whose chunks repack an operand), so every thread runs exactly the single-thread code on its chunks. The
 * cut depends only on the thread count:
 * - elementwise `_contig` kernels get element ranges whose starts are multiples of {@linkcode SPLIT_ALIGN}
 *   elements, so every vector loop sees the same element groups and the same tail as one call over all of it;
 *   `_strided` kernels get ranges of the outermost coalesced dimension, each with its own descriptor. Every
 *   element is computed by the same instructions as on one thread: results are bitwise identical.
 * - row-wise kernels (reductions over `[outer, R, inner]` with `outer` large, softmax) get ranges of `outer`:
 *   also bitwise identical. Reductions with a small `outer` split `R` instead (core/cpu/parallel_reduce.ts).
 * - matrix products get panels of rows of C (or of columns when C is wider than tall). Row panels of the float
 *   dtypes share one packed B (Note [Shared packed B] in kernels_as/matmul.ts): the pool packs B once, by column
 *   ranges, then each thread packs only its own rows of A. Column panels (and integer products, which pack
 *   nothing) give each chunk its own workspace, so the operand that is not cut (the smaller one) is packed once
 *   per chunk. Every element of C sums its K products in the same order as on one thread.
 * Work below a size where fork/join (10-170 us, TOOLCHAIN Q2) pays stays on the calling agent, and the test
 * for it is one comparison before anything else, so small ops pay nothing.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { getNumThreads, intraOpPool, type ThreadPool } from '../workers/pool.ts';
import { kernels, withWorkspace, writeDescriptor } from './boundary.ts';
import type { ElementwisePlan } from './iterator.ts';
import { cpuRuntime } from './runtime.ts';
import { kernelModule } from './wasm.ts';

/**
 * Elementwise ops and reductions with fewer elements stay on one thread: a float32 add of 2^18 elements takes
 * ~45 us (in cache), a few times a fork/join with a polling worker.
 */
export const ELEMENTWISE_SPLIT_MIN = 1 << 18;
/** Matrix products with fewer multiply-adds (M * N * K) stay on one thread (2^22 is ~0.15 ms at 50 GFLOP/s). */
export const MATMUL_SPLIT_MIN = 1 << 22;

/** A shared packed B of fewer elements (K * N) is packed by the calling agent alone, not split by columns. */
export const PACK_SPLIT_MIN = 1 << 18;

let elementwiseMin = ELEMENTWISE_SPLIT_MIN;
let matmulMin = MATMUL_SPLIT_MIN;
let packMin = PACK_SPLIT_MIN;

/**
 * Overrides the sizes above which kernels are split (tests split small tensors with it); no argument restores
 * {@linkcode ELEMENTWISE_SPLIT_MIN}, {@linkcode MATMUL_SPLIT_MIN} and {@linkcode PACK_SPLIT_MIN}.
 *
 * @example
 * ```ts
 * import { setSplitThresholds } from './parallel.ts';
 * setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 });
 * setSplitThresholds();
 * ```
 */
export function setSplitThresholds(next: { elementwise?: number; matmul?: number; packB?: number } = {}): void {
  elementwiseMin = next.elementwise ?? ELEMENTWISE_SPLIT_MIN;
  matmulMin = next.matmul ?? MATMUL_SPLIT_MIN;
  packMin = next.packB ?? PACK_SPLIT_MIN;
}

/** The current elementwise threshold (for the reductions, which share it). */
export function elementwiseSplitMin(): number {
  return elementwiseMin;
}
/** Split element ranges start at multiples of this many elements (Note [Intra-op splitting]). */
export const SPLIT_ALIGN = 256;
/** Chunks per thread of elementwise ops, reductions and softmax: enough for claiming to even out the shares. */
export const CHUNKS_PER_THREAD = 4;

/** Chunks of an elementwise, reduction or softmax job: a function of the thread count alone. */
export function elementwiseChunks(): number {
  return CHUNKS_PER_THREAD * getNumThreads();
}

/**
 * Whether an elementwise op over `numel` elements is split (the size test comes first: small ops pay one
 * comparison).
 *
 * @example
 * ```ts
 * import { splitsElementwise } from './parallel.ts';
 * splitsElementwise(10); // false
 * ```
 */
export function splitsElementwise(numel: number): boolean {
  return numel >= elementwiseMin && getNumThreads() > 1;
}

/** The process-wide pool over the CPU memory, or undefined for one thread. */
export function cpuPool(): ThreadPool | undefined {
  return intraOpPool(cpuRuntime().memory, kernelModule());
}

/**
 * Starts the process-wide pool for {@linkcode getNumThreads} threads now and blocks until its workers are
 * ready (benchmarks call it, so that no timed call starts workers).
 *
 * @example
 * ```ts
 * import { startCpuThreads } from './parallel.ts';
 * startCpuThreads();
 * ```
 */
export function startCpuThreads(): void {
  cpuPool()?.waitReady();
}

/** Runs `name` once per task through the pool (or all on this agent without one); the first nonzero status. */
export function runTasks(name: string, tasks: ReadonlyArray<readonly number[]>): number {
  const k = kernels() as unknown as Record<string, (...args: number[]) => number>;
  const pool = tasks.length > 1 ? cpuPool() : undefined;
  if (pool !== undefined) return pool.run(name, tasks, k);
  let status = 0;
  for (const args of tasks) {
    const s = k[name](...args);
    if (s !== 0 && status === 0) status = s;
  }
  return status;
}

/**
 * `[start, end)` ranges cutting `[0, n)` into at most `parts` pieces whose starts are multiples of `align`.
 *
 * @example
 * ```ts
 * import { splitRange } from './parallel.ts';
 * splitRange(1000, 2, 256); // [[0, 512], [512, 1000]]
 * ```
 */
export function splitRange(n: number, parts: number, align = 1): Array<[number, number]> {
  const step = Math.max(align, Math.ceil(n / parts / align) * align);
  const ranges: Array<[number, number]> = [];
  for (let start = 0; start < n; start += step) ranges.push([start, Math.min(n, start + step)]);
  return ranges;
}

/** Where the pointers and the count (or descriptor) sit in each elementwise kernel family's arguments. */
const FAMILIES = {
  binary: { pointers: [2, 3, 4], count: 5 }, // (op, dtype, out, a, b, n | desc, alpha)
  binary_scalar: { pointers: [2, 3], count: 5 }, // (op, dtype, out, a, s, n | desc, alpha)
  binary_rscalar: { pointers: [2, 4], count: 5 }, // (op, dtype, out, s, b, n | desc, alpha)
  unary: { pointers: [2, 3], count: 4 }, // (op, dtype, out, a, n | desc)
  activation: { pointers: [2, 3], count: 4 }, // (op, dtype, out, a, n | desc, p0, p1, p2)
  loss: { pointers: [2, 3, 4], count: 5 }, // (op, dtype, out, a, b, n | desc, p0)
  copy: { pointers: [1, 2], count: 3 }, // (dtype, out, a, n | desc)
  cast: { pointers: [2, 3], count: 4 }, // (srcDtype, dstDtype, out, a, n | desc)
  fill: { pointers: [1], count: 3 }, // (dtype, out, value, n | desc)
  where: { pointers: [1, 2, 3, 4], count: 5 }, // (dtype, out, cond, a, b, n | desc)
  clamp: { pointers: [1, 2], count: 3 }, // (dtype, out, a, n | desc, min, max, flags)
  clamp_tensor: { pointers: [1, 2, 3, 4], count: 5 }, // (dtype, out, a, lo, hi, n | desc, flags)
} as const;

/** An elementwise kernel family: `${family}_contig` and `${family}_strided` share one argument layout. */
export type ElementwiseFamily = keyof typeof FAMILIES;

/**
 * Runs an elementwise kernel split across the pool (Note [Intra-op splitting]): `args` is the call of one
 * thread with anything in the count / descriptor slot, `itemSizes` the element size of each pointer operand
 * (out first), `plan` the strided plan when the operands are not contiguous. Returns the kernel status.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { contiguousAddress } from './boundary.ts';
 * import { splitElementwise } from './parallel.ts';
 * const t = tensor(new Float32Array(1000));
 * splitElementwise('fill', [6, contiguousAddress(t, 'fill_', 1000), 2, 0], [4], 1000); // 0
 * ```
 */
export function splitElementwise(
  family: ElementwiseFamily,
  args: readonly number[],
  itemSizes: readonly number[],
  numel: number,
  plan?: ElementwisePlan,
): number {
  const layout = FAMILIES[family];
  const parts = elementwiseChunks();
  if (plan === undefined || plan.contiguous) {
    const tasks = splitRange(numel, parts, SPLIT_ALIGN).map(([start, end]) => {
      const task = args.slice();
      for (let p = 0; p < layout.pointers.length; p++) task[layout.pointers[p]] += start * itemSizes[p];
      task[layout.count] = end - start;
      return task;
    });
    return runTasks(`${family}_contig`, tasks);
  }
  const { sizes, strides } = plan;
  if (sizes.length === 0) return runTasks(`${family}_strided`, [withCount(args, layout.count, plan.desc)]);
  // The outermost coalesced dim is cut; a 1-d iteration is cut at aligned elements like a contiguous one.
  const ranges = splitRange(sizes[0], parts, sizes.length === 1 ? SPLIT_ALIGN : 1);
  const words = 1 + sizes.length * (1 + strides.length);
  const descBytes = Math.ceil((words * 4) / 64) * 64;
  const name = `${family}_strided`;
  return withWorkspace(name, descBytes * ranges.length, (workspace) => {
    const tasks = ranges.map(([start, end], i) => {
      const cut = sizes.slice();
      cut[0] = end - start;
      const desc = writeDescriptor(name, cut, strides, { address: workspace + i * descBytes, bytes: descBytes });
      const task = withCount(args, layout.count, desc);
      for (let p = 0; p < layout.pointers.length; p++) {
        task[layout.pointers[p]] += start * strides[p][0] * itemSizes[p];
      }
      return task;
    });
    return runTasks(name, tasks);
  });
}

function withCount(args: readonly number[], at: number, value: number): number[] {
  const task = args.slice();
  task[at] = value;
  return task;
}

/** Element sizes of tensors, for {@linkcode splitElementwise}. */
export function itemSizesOf(...tensors: Tensor[]): number[] {
  return tensors.map((t) => t.dtype.itemSize);
}

/**
 * Runs a kernel over `[outer, ...]` blocks split by ranges of `outer` (reductions with a large `outer`, softmax):
 * `args` is the whole call, `pointers` the indices of its pointer arguments with the bytes one unit of `outer`
 * advances each, `outerAt` the index of `outer`. Bitwise identical to one call.
 *
 * @example
 * ```ts
 * import { splitOuter } from './parallel.ts';
 * splitOuter; // used by core/cpu/nn.ts and core/cpu/parallel_reduce.ts
 * ```
 */
export function splitOuter(
  name: string,
  args: readonly number[],
  pointers: ReadonlyArray<readonly [index: number, bytesPerOuter: number]>,
  outerAt: number,
): number {
  const ranges = splitRange(args[outerAt], elementwiseChunks());
  const tasks = ranges.map(([start, end]) => {
    const task = args.slice();
    for (const [index, bytes] of pointers) task[index] += start * bytes;
    task[outerAt] = end - start;
    return task;
  });
  return runTasks(name, tasks);
}

/** Whether a matrix product of M x K by K x N is split. */
export function splitsMatmul(M: number, N: number, K: number): boolean {
  return M * N * K >= matmulMin && getNumThreads() > 1 && (M >= 24 || N >= 32);
}

/** A matrix operand of {@linkcode splitGemm}: checked address and element strides. */
export interface GemmOperand {
  readonly address: number;
  readonly rowStride: number;
  readonly colStride: number;
}

/**
 * `C = alpha * A @ B + beta * C` split into panels of C (Note [Intra-op splitting]); `kernel` is `gemm_f32`,
 * `gemm_f64` or `gemm_generic` (which takes `code` first). Row panels of the float dtypes share one packed B
 * (Note [Shared packed B] in kernels_as/matmul.ts): the pool packs B once, by column ranges, into a block
 * allocated for this call, then every thread multiplies its rows of A by it; the block is freed after the join
 * (also when a thread faults: the pool waits for every share first). Each thread has its own A workspace.
 *
 * @example
 * ```ts
 * import { splitGemm } from './parallel.ts';
 * splitGemm; // used by core/cpu/linalg.ts for products above MATMUL_SPLIT_MIN
 * ```
 */
export function splitGemm(
  kernel: 'gemm_f32' | 'gemm_f64' | 'gemm_generic',
  code: number,
  itemSize: number,
  M: number,
  N: number,
  K: number,
  alpha: number,
  a: GemmOperand,
  b: GemmOperand,
  beta: number,
  c: GemmOperand,
): number {
  // Cut the dimension whose operand is smaller to pack twice: rows of C repack all of B, columns all of A.
  const byRows = N <= M ? M >= 24 : N < 32;
  // Row panels are whole micro-tile groups (12 rows: both tile heights), column panels whole 16-column slivers.
  if (byRows && alpha !== 0 && K > 0) {
    const packBytes = kernels().gemm_packed_b_bytes(code, N, K);
    // The kernel's size is checked against the operand's extent (it is an i32: an overflow would be negative).
    // 16-bit floats are packed widened to f32.
    if (packBytes > 0 && packBytes >= N * K * (itemSize === 8 ? 8 : 4)) {
      return sharedGemm(code, itemSize, packBytes, M, N, K, alpha, a, b, beta, c);
    }
  }
  // One chunk per thread when each chunk repacks a large operand, else two, so that a late worker's share is
  // smaller.
  const repacked = byRows ? K * N : M * K;
  const chunks = getNumThreads() * (repacked > 1 << 18 ? 1 : 2);
  const ranges = byRows ? splitRange(M, chunks, 12) : splitRange(N, chunks, 16);
  const panel = ranges[0][1] - ranges[0][0];
  const work = byRows
    ? kernels().gemm_workspace_bytes(code, panel, N, K)
    : kernels().gemm_workspace_bytes(code, M, panel, K);
  const workBytes = Math.ceil(work / 64) * 64 + 64;
  return withWorkspace(kernel, workBytes * ranges.length, (workspace) => {
    const tasks = ranges.map(([start, end], i) => {
      const rows = byRows ? end - start : M, cols = byRows ? N : end - start;
      const pa = a.address + (byRows ? start * a.rowStride * itemSize : 0);
      const pb = b.address + (byRows ? 0 : start * b.colStride * itemSize);
      const pc = c.address + start * (byRows ? c.rowStride : c.colStride) * itemSize;
      const call = [rows, cols, K, alpha, pa, a.rowStride, a.colStride, pb, b.rowStride, b.colStride, beta];
      call.push(pc, c.rowStride, c.colStride, workspace + i * workBytes);
      return kernel === 'gemm_generic' ? [code, ...call] : call;
    });
    return runTasks(kernel, tasks);
  });
}

/**
 * Row panels of C against one shared packed B (Note [Shared packed B]): one scratch block holds the packed B
 * (`packBytes`, from the kernel) and then one A workspace per panel; two pool jobs, `gemm_pack_b` by column
 * ranges (on the calling agent alone for a small B), then `gemm_prepacked` by row panels.
 */
function sharedGemm(
  code: number,
  itemSize: number,
  packBytes: number,
  M: number,
  N: number,
  K: number,
  alpha: number,
  a: GemmOperand,
  b: GemmOperand,
  beta: number,
  c: GemmOperand,
): number {
  const threads = getNumThreads();
  // Panels no longer repack B, so two per thread even out late workers' shares at little cost.
  const ranges = splitRange(M, threads * 2, 12);
  const work = kernels().gemm_workspace_bytes(code, ranges[0][1] - ranges[0][0], 1, K);
  const workBytes = Math.ceil(work / 64) * 64 + 64;
  const packed = Math.ceil(packBytes / 64) * 64;
  return withWorkspace('gemm_pack_b', packed + workBytes * ranges.length, (scratch) => {
    // A small B is packed by the calling agent alone (one task runs there): a second fork/join would cost more.
    const packRanges = K * N >= packMin ? splitRange(N, threads, 16) : [[0, N]];
    const packTasks = packRanges.map(([j0, j1]) => [
      code,
      N,
      K,
      b.address,
      b.rowStride,
      b.colStride,
      scratch,
      j0,
      j1,
    ]);
    const packStatus = runTasks('gemm_pack_b', packTasks);
    if (packStatus !== 0) return packStatus;
    const tasks = ranges.map(([start, end], i) => [
      code,
      end - start,
      N,
      K,
      alpha,
      a.address + start * a.rowStride * itemSize,
      a.rowStride,
      a.colStride,
      scratch,
      beta,
      c.address + start * c.rowStride * itemSize,
      c.rowStride,
      c.colStride,
      scratch + packed + i * workBytes,
    ]);
    return runTasks('gemm_prepacked', tasks);
  });
}

/** Whether a batched product of `batch` M x K by K x N products is split. */
export function splitsBmm(batch: number, M: number, N: number, K: number): boolean {
  return batch * M * N * K >= matmulMin && getNumThreads() > 1 && (batch >= getNumThreads() || splitsMatmul(M, N, K));
}

/**
 * `bmm` (`C[b] = A[b] @ B[b]`, operands with batch strides `batchStrides` = [A, B, C]) split by ranges of the
 * batch, each thread with its own workspace, or, with fewer products than threads, each product split by
 * {@linkcode splitGemm}. Bitwise identical to one thread.
 *
 * @example
 * ```ts
 * import { splitBmm } from './parallel.ts';
 * splitBmm; // used by core/cpu/linalg.ts
 * ```
 */
export function splitBmm(
  code: number,
  itemSize: number,
  batch: number,
  M: number,
  N: number,
  K: number,
  a: GemmOperand,
  b: GemmOperand,
  c: GemmOperand,
  batchStrides: readonly [number, number, number],
): number {
  const threads = getNumThreads();
  const [sAb, sBb, sCb] = batchStrides;
  if (batch < threads) {
    for (let i = 0; i < batch; i++) {
      const at = (m: GemmOperand, stride: number) => ({ ...m, address: m.address + i * stride * itemSize });
      const status = splitGemm('gemm_generic', code, itemSize, M, N, K, 1, at(a, sAb), at(b, sBb), 0, at(c, sCb));
      if (status !== 0) return status;
    }
    return 0;
  }
  const workBytes = Math.ceil(kernels().gemm_workspace_bytes(code, M, N, K) / 64) * 64 + 64;
  const ranges = splitRange(batch, threads);
  return withWorkspace('bmm', workBytes * ranges.length, (workspace) => {
    const tasks = ranges.map(([start, end], i) => [
      code,
      end - start,
      M,
      N,
      K,
      1,
      a.address + start * sAb * itemSize,
      sAb,
      a.rowStride,
      a.colStride,
      b.address + start * sBb * itemSize,
      sBb,
      b.rowStride,
      b.colStride,
      0,
      c.address + start * sCb * itemSize,
      sCb,
      c.rowStride,
      c.colStride,
      workspace + i * workBytes,
    ]);
    return runTasks('bmm', tasks);
  });
}
