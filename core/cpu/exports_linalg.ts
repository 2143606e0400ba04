/**
 * The typed surface of the linear-algebra kernel families: reductions (kernels_as/reduce.ts), matrix multiply
 * (kernels_as/matmul.ts), softmax and nll_loss (kernels_as/softmax.ts).
 *
 * Kernel ABI: pointers are byte offsets into the kernel memory; sizes and strides are element counts; dtypes
 * are PyTorch ScalarType codes. Reductions and softmax take a contiguous input viewed as `[outer, R, inner]` and
 * work over `R` (the TS side permutes or copies so the reduced dims form one block: a full reduction is
 * `outer = inner = 1`, reducing the last dims is `inner = 1`, `sum(dim=0)` of a matrix is `outer = 1`). Every
 * kernel returns a status: `KernelStatus` (exports_elementwise.ts) (`ok`, `unsupported`: raise PyTorch's `"sum" not implemented
 * for 'Bool'`, `badArgument`) or one of {@linkcode LinalgStatus}.
 *
 * @example
 * ```ts
 * import { LinalgStatus, Reduction } from './exports_linalg.ts';
 * console.log(LinalgStatus.emptyReduction, Reduction.mean); // 3 1
 * ```
 *
 * @module
 */

/**
 * Statuses beyond `KernelStatus` (kernels_as/linalg_util.ts). `emptyReduction`: max / min / argmax /
 * argmin over `R = 0` (PyTorch: `max(): Expected reduction dim 0 to have non-zero size.`); `targetOutOfBounds`:
 * an nll_loss target outside `[0, C)` that is not `ignoreIndex` (nothing written; scan the targets for the first
 * culprit and raise `Target 7 is out of bounds.`).
 *
 * @example
 * ```ts
 * import { LinalgStatus } from './exports_linalg.ts';
 * console.log(LinalgStatus.targetOutOfBounds); // 4
 * ```
 */
export const LinalgStatus = { emptyReduction: 3, targetOutOfBounds: 4 } as const;

/** A {@linkcode LinalgStatus} value. */
export type LinalgStatus = typeof LinalgStatus[keyof typeof LinalgStatus];

/**
 * The `reduction` argument of the nll_loss kernels, numbered as PyTorch's `at::Reduction`.
 *
 * @example
 * ```ts
 * import { Reduction } from './exports_linalg.ts';
 * console.log(Reduction.none, Reduction.sum); // 0 2
 * ```
 */
export const Reduction = { none: 0, mean: 1, sum: 2 } as const;

/** A {@linkcode Reduction} value. */
export type Reduction = typeof Reduction[keyof typeof Reduction];

/**
 * The signature shared by `reduce_sum`, `reduce_prod`, `reduce_mean`, `reduce_max`, `reduce_min`,
 * `reduce_argmax` and `reduce_argmin`: `out[o, j] = op over r of a[o, r, j]`, `out` contiguous `[outer, inner]`
 * of `outDtype`.
 */
export type ReduceKernel = (
  dtype: number,
  outDtype: number,
  out: number,
  a: number,
  outer: number,
  R: number,
  inner: number,
) => number;

/** The signature of `reduce_max_with_indices` / `reduce_min_with_indices` (values of `dtype`, int64 indices). */
export type ReduceWithIndicesKernel = (
  dtype: number,
  values: number,
  indices: number,
  a: number,
  outer: number,
  R: number,
  inner: number,
) => number;

/**
 * The signature of `gemm_f32` / `gemm_f64`: `C = alpha * A @ B + beta * C` with A `M x K` (element strides
 * `sAm`, `sAk`), B `K x N` (`sBk`, `sBn`), C `M x N` (`sCm`, `sCn`). Any strides: a transposed operand is the
 * same matrix with its strides swapped and runs at the same speed (both operands are packed). `beta = 0` never
 * reads C and `alpha = 0` never reads A or B (BLAS rules: their NaNs do not propagate). C must not overlap A or
 * B. `work` must hold `gemm_workspace_bytes(dtype, M, N, K)` bytes.
 */
export type GemmKernel = (
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: number,
  sAm: number,
  sAk: number,
  B: number,
  sBk: number,
  sBn: number,
  beta: number,
  C: number,
  sCm: number,
  sCn: number,
  work: number,
) => number;

/** Exports of kernels_as/reduce.ts, matmul.ts and softmax.ts. */
export interface LinalgExports {
  /**
   * Sum over R. Floats (f16 / bf16 accumulate in f32, f32 in f32 with 8 vector accumulators and a cascade,
   * f64 in f64) need `outDtype = dtype`; integers and Bool accumulate in and write int64 (`outDtype` Long), or
   * wrap in their own type when `outDtype = dtype` (not Bool). Otherwise `badArgument`. `R = 0` gives 0.
   */
  reduce_sum: ReduceKernel;
  /** Product over R; dtype rules as `reduce_sum`. `R = 0` gives 1. */
  reduce_prod: ReduceKernel;
  /** Mean over R; floating dtypes only (`unsupported` otherwise), `outDtype = dtype`. `R = 0` gives NaN. */
  reduce_mean: ReduceKernel;
  /** Max over R, NaN-propagating; every dtype (Bool: any); `outDtype = dtype`; `R = 0`: `emptyReduction`. */
  reduce_max: ReduceKernel;
  /** Min over R, NaN-propagating; every dtype (Bool: all); `outDtype = dtype`; `R = 0`: `emptyReduction`. */
  reduce_min: ReduceKernel;
  /**
   * Index (int64, `outDtype` must be Long) of the first maximum over R; NaN counts as the maximum, so the first
   * NaN wins (PyTorch). Every dtype but Bool (`unsupported`, as PyTorch's `argmax_cpu`). `R = 0`:
   * `emptyReduction`.
   */
  reduce_argmax: ReduceKernel;
  /** Index of the first minimum over R (NaN counts as the minimum); as `reduce_argmax`. */
  reduce_argmin: ReduceKernel;
  /** `max(dim)`: values (dtype, the element itself, bit for bit) and int64 indices as `reduce_argmax`; Bool too. */
  reduce_max_with_indices: ReduceWithIndicesKernel;
  /** `min(dim)`: as `reduce_max_with_indices`. */
  reduce_min_with_indices: ReduceWithIndicesKernel;

  /**
   * Bytes of workspace one `M x N x K` product of `dtype` needs (0 for a dtype gemm does not support: Bool).
   * Reuse it for every batch of `bmm`.
   */
  gemm_workspace_bytes(dtype: number, M: number, N: number, K: number): number;
  /** f32 product (see {@linkcode GemmKernel}); `alpha` / `beta` are f32. */
  gemm_f32: GemmKernel;
  /** f64 product (see {@linkcode GemmKernel}). */
  gemm_f64: GemmKernel;
  /**
   * `gemm_*` for any dtype: f32, f64, f16 / bf16 (accumulated in f32 over the whole K, rounded once), u8 / i8 /
   * i16 / i32 / i64 (wrapping, like PyTorch's accumulation in the type; alpha and beta truncated toward zero).
   * Bool: `unsupported`. Negative sizes: `badArgument`.
   */
  gemm_generic(
    dtype: number,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: number,
    sAm: number,
    sAk: number,
    B: number,
    sBk: number,
    sBn: number,
    beta: number,
    C: number,
    sCm: number,
    sCn: number,
    work: number,
  ): number;
  /**
   * Bytes of a shared packed B for a `K x N` operand of `dtype` (`gemm_pack_b`, `gemm_prepacked`): 0 for the
   * dtypes whose product packs no B (integers, Bool).
   */
  gemm_packed_b_bytes(dtype: number, N: number, K: number): number;
  /**
   * Packs columns `[j0, j1)` of B (`K x N`, element strides `sBk`, `sBn`) into the shared packed B at `dst`
   * (`gemm_packed_b_bytes(dtype, N, K)` bytes); `j0` a multiple of 16. Disjoint column ranges write disjoint
   * bytes, so threads pack one B together. f32, f64, f16, bf16; others `unsupported`.
   */
  gemm_pack_b(
    dtype: number,
    N: number,
    K: number,
    B: number,
    sBk: number,
    sBn: number,
    dst: number,
    j0: number,
    j1: number,
  ): number;
  /**
   * `gemm_generic` against a B packed by `gemm_pack_b` (read only), for any panel of rows of A and C; bitwise
   * identical to `gemm_generic`. `work` holds `gemm_workspace_bytes(dtype, M, 1, K)` bytes.
   */
  gemm_prepacked(
    dtype: number,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: number,
    sAm: number,
    sAk: number,
    packedB: number,
    beta: number,
    C: number,
    sCm: number,
    sCn: number,
    work: number,
  ): number;
  /**
   * Batched `gemm_generic`: `C[b] = alpha * A[b] @ B[b] + beta * C[b]` for `b < batch`, with batch strides
   * `sAb`, `sBb`, `sCb` in elements (0 broadcasts an operand). One workspace of
   * `gemm_workspace_bytes(dtype, M, N, K)` bytes serves every batch.
   */
  bmm(
    dtype: number,
    batch: number,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: number,
    sAb: number,
    sAm: number,
    sAk: number,
    B: number,
    sBb: number,
    sBk: number,
    sBn: number,
    beta: number,
    C: number,
    sCb: number,
    sCm: number,
    sCn: number,
    work: number,
  ): number;

  /**
   * `softmax` (`log = 0`) or `log_softmax` (`log = 1`) over R of a contiguous `[outer, R, inner]` input, stable
   * (the max is subtracted first). f32, f64, f16 / bf16 (computed in f32). `out` may be `a`.
   */
  softmax(dtype: number, out: number, a: number, outer: number, R: number, inner: number, log: number): number;
  /**
   * Backward of `softmax` (`gradIn = y * (g - sum(g * y))`) or `log_softmax` (`gradIn = g - exp(y) * sum(g)`)
   * from the incoming gradient g (`gradOut`) and the forward output y (`out`), all `[outer, R, inner]`.
   */
  softmax_backward(
    dtype: number,
    gradIn: number,
    gradOut: number,
    out: number,
    outer: number,
    R: number,
    inner: number,
    log: number,
  ): number;
  /**
   * nll_loss over log-probabilities `logp` `[N, C]` and int64 `target` `[N]`, optional class `weight` `[C]` (0 for
   * none); floating dtypes. `out` is `[N]` for {@linkcode Reduction}.none, else a scalar: the weighted sum, or
   * for mean that sum over the total weight of non-ignored targets (NaN when it is 0 / 0). `totalWeight` (a
   * scalar of dtype, 0 = not wanted) receives that total (0 for none). `ignoreIndex` is a bigint (wasm i64).
   */
  nll_loss_forward(
    dtype: number,
    out: number,
    totalWeight: number,
    logp: number,
    target: number,
    weight: number,
    N: number,
    C: number,
    reduction: number,
    ignoreIndex: bigint,
  ): number;
  /**
   * nll_loss backward: writes all of `gradInput` `[N, C]`: zeros, and `-weight[t] * g` at each non-ignored
   * target, with g = `gradOutput[n]` for none, else the scalar `gradOutput` (divided by `*totalWeight` for mean).
   */
  nll_loss_backward(
    dtype: number,
    gradInput: number,
    gradOutput: number,
    target: number,
    weight: number,
    totalWeight: number,
    N: number,
    C: number,
    reduction: number,
    ignoreIndex: bigint,
  ): number;
}
