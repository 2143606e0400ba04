// Matrix multiply: C = alpha * A @ B + beta * C, with arbitrary element strides on A, B and C.
//
// Note [GEMM blocking]: GotoBLAS / BLIS structure. The loops, outermost first:
//   jc over N by NC    B block (KC x NC, 4 MB) is packed once and reused by every row block (lives in L3);
//   pc over K by KC    the K slice, so packed A and B slivers fit the caches below;
//   ic over M by MC    A block (MC x KC, 144 KB) is packed once per (jc, pc) (lives in L2);
//   jr over NC by NR   one B sliver (KC x NR, 8 KB) stays in L1 while...
//   ir over MC by MR   ...A slivers (MR x KC, 6 KB) stream past it into the micro-kernel.
// The micro-kernel keeps an MR x NR tile of C in MR * 2 vector registers and per k does 2 vector loads of B,
// MR broadcast loads of A and MR * 2 multiply-adds. Packing copies each operand into exactly the order the
// micro-kernel reads, so strides only matter while packing: a transposed view (swapped strides) costs the
// same as a contiguous one, which matters because every backward pass multiplies by transposes. Packing also
// pads partial slivers with zeros, so the micro-kernel always computes a full tile; partial tiles (and C
// with a column stride other than 1) are written back through a small tile buffer.
//
// Sizes are chosen for a 32-48 KB L1 and 512 KB-1 MB L2 (AMD EPYC here).
//
// Note [GEMM micro-tile]: a 6 x 8 tile keeps 12 accumulators, 2 B vectors and 1 broadcast live: 15 of the 16
// xmm registers, which fits only when the multiply-add is one fused instruction (V8 on the relaxed build:
// ~50 GFLOP/s against ~40 for 4 x 8). Where madd is a multiply and an add (the plain SIMD build, and Bun, whose
// relaxed madd is unfused) the extra temporary makes 6 x 8 spill (~20-27 GFLOP/s) and 4 x 8 is best (~36-40).
// Which case we are in is a property of the engine, so the relaxed build probes it once per instance
// (maddIsFused) and picks the tile height at run time; the packing code takes the height as a parameter.
//
// Note [GEMM dtypes]: f32 and f64 run the packed kernel in their own type. Half and BFloat16 are widened to
// f32 while packing and run the f32 kernel; to accumulate the whole K in f32 (PyTorch's opmath for the 16-bit
// types) they use a single K slice (KC = K, with MC and NC shrunk so the packed blocks keep their byte size),
// since C between K slices is stored in the 16-bit type. Integer dtypes accumulate in i32 (i64 for int64)
// and wrap on store; wrapping + and * commute with truncation, so this equals PyTorch's accumulation in the
// type itself. Bool is unsupported (PyTorch: "addmm_impl_cpu_" not implemented for 'Bool').
//
// beta = 0 never reads C (it may hold NaN or garbage) and alpha = 0 never reads A or B, as in BLAS.
import {
  DT_BF16,
  DT_F16,
  DT_F32,
  DT_F64,
  DT_I16,
  DT_I32,
  DT_I64,
  DT_I8,
  DT_U8,
  elemBytes,
  isBFloat16Tag,
  isHalfTag,
  itemSize,
  ld,
  st,
  STATUS_BAD_ARGUMENT,
  STATUS_OK,
  STATUS_UNSUPPORTED,
} from './common';
import { alignUp64, madd } from './linalg_util';

/** Micro-tile rows: 6 where multiply-add is fused, else 4 (Note [GEMM micro-tile]); packed blocks use MR_MAX. */
const MR_FUSED: i32 = 6;
const MR_UNFUSED: i32 = 4;
const MR_MAX: i32 = 6;
/** Row blocks are a multiple of this (the lcm of the two tile heights), so every block packs into full slivers. */
const MC_GRAIN: i32 = 12;
/** Bytes of the packed A block (MC x KC) and B block (KC x NC); KC is 256 elements for f32 and f64. */
const KC: i32 = 256;
const A_BLOCK_BYTES: i32 = 144 * 256 * 4;
const B_BLOCK_BYTES: i32 = 4096 * 256 * 4;

// Tile heights as marker types, so each micro-kernel instantiation has its row count as a constant.
@final @unmanaged class SixRows {}
@final @unmanaged class FourRows {}

// @ts-ignore: decorator
@inline
function tileRows<R>(): i32 {
  return changetype<R>(0) instanceof SixRows ? 6 : 4;
}

/** (1 + 2^-12) and -(1 + 2^-11): a * a + c is 2^-24 when fused and 0 when rounded after the multiply. */
const FMA_PROBE: usize = memory.data<f32>([1.000244140625, -1.00048828125], 16);
/** -1 until probed, then 0 or 1. A wasm global, so each instance (each worker) probes its own engine. */
let fusedMadd: i32 = -1;

/** True when this build's madd is one fused instruction on this engine (Note [GEMM micro-tile]). */
function maddIsFused(): bool {
  if (!ASC_FEATURE_RELAXED_SIMD) return false;
  if (fusedMadd < 0) {
    // Loaded from memory, so binaryen cannot fold the probe at compile time with its own semantics.
    const a = v128.load32_splat(FMA_PROBE);
    const c = v128.load32_splat(FMA_PROBE, 4);
    fusedMadd = f32x4.extract_lane(f32x4.relaxed_madd(a, a, c), 0) != 0 ? 1 : 0;
  }
  return fusedMadd == 1;
}

/** Columns of the micro tile: two vectors of V. */
// @ts-ignore: decorator
@inline
function nr<V>(): i32 {
  return <i32>(32 / sizeof<V>());
}

// @ts-ignore: decorator
@inline
function roundUp(x: i32, m: i32): i32 {
  return ((x + m - 1) / m) * m;
}

/** True when S is stored in 16 bits and computed in f32 (Note [GEMM dtypes]). */
// @ts-ignore: decorator
@inline
function isNarrowFloat<S>(): bool {
  return isHalfTag<S>() || isBFloat16Tag<S>();
}

/** K slice length: KC, or all of K for the 16-bit floats (Note [GEMM dtypes]). */
// @ts-ignore: decorator
@inline
function kcFor<S>(K: i32): i32 {
  return isNarrowFloat<S>() ? max(K, 1) : KC;
}

/** Rows of the packed A block for slices of kc: A_BLOCK_BYTES worth, a multiple of MC_GRAIN. */
// @ts-ignore: decorator
@inline
function mcFor<V>(kc: i32): i32 {
  return max(MC_GRAIN, (A_BLOCK_BYTES / (kc * <i32>sizeof<V>()) / MC_GRAIN) * MC_GRAIN);
}

/** Columns of the packed B block for slices of kc: B_BLOCK_BYTES worth, a multiple of NR. */
// @ts-ignore: decorator
@inline
function ncFor<V>(kc: i32): i32 {
  return max(nr<V>(), (B_BLOCK_BYTES / (kc * <i32>sizeof<V>()) / nr<V>()) * nr<V>());
}

/** Workspace bytes for an M x N x K product: tile buffer + packed A block + packed B block (+ alignment). */
function packedWorkspaceBytes<S, V>(M: i32, N: i32, K: i32): i32 {
  const kc = kcFor<S>(K);
  const mc = mcFor<V>(kc);
  const nc = ncFor<V>(kc);
  const vs = <i32>sizeof<V>();
  const mcMax = min(mc, max(roundUp(max(M, 1), MR_UNFUSED), roundUp(max(M, 1), MR_FUSED)));
  const kcMax = min(kc, max(K, 1));
  const ncMax = min(nc, roundUp(max(N, 1), nr<V>()));
  return 64 * 4 + MR_MAX * nr<V>() * vs + mcMax * kcMax * vs + kcMax * ncMax * vs;
}

/**
 * One full MR-row sliver (MR = 4 or 6) of f32 A whose rows are contiguous (unit column stride), packed four
 * columns at a time with 4 x 4 register transposes (rows 4 and 5 of a six-row sliver as interleaved pairs); the
 * last kc % 4 columns one element at a time. Same layout as the generic loop of packA: column k of the sliver is
 * the MR values at dst + k * MR * 4. Matrices with few columns (a batch of small matrices folded into rows, as
 * vmap and matmul fold them) spend as much time packing A as multiplying, which the element loop made slow.
 */
function packSliverF32(dst: usize, src: usize, rowStep: usize, kc: i32, MR: i32): void {
  let k = 0;
  if (MR == 4) {
    for (; k + 4 <= kc; k += 4) {
      const at = src + <usize>k * 4;
      const r0 = v128.load(at), r1 = v128.load(at + rowStep);
      const r2 = v128.load(at + 2 * rowStep), r3 = v128.load(at + 3 * rowStep);
      const t0 = v128.shuffle<f32>(r0, r1, 0, 4, 1, 5), t1 = v128.shuffle<f32>(r0, r1, 2, 6, 3, 7);
      const t2 = v128.shuffle<f32>(r2, r3, 0, 4, 1, 5), t3 = v128.shuffle<f32>(r2, r3, 2, 6, 3, 7);
      v128.store(dst, v128.shuffle<i64>(t0, t2, 0, 2));
      v128.store(dst, v128.shuffle<i64>(t0, t2, 1, 3), 16);
      v128.store(dst, v128.shuffle<i64>(t1, t3, 0, 2), 32);
      v128.store(dst, v128.shuffle<i64>(t1, t3, 1, 3), 48);
      dst += 64;
    }
  } else {
    for (; k + 4 <= kc; k += 4) {
      const at = src + <usize>k * 4;
      const r0 = v128.load(at), r1 = v128.load(at + rowStep);
      const r2 = v128.load(at + 2 * rowStep), r3 = v128.load(at + 3 * rowStep);
      const r4 = v128.load(at + 4 * rowStep), r5 = v128.load(at + 5 * rowStep);
      const t0 = v128.shuffle<f32>(r0, r1, 0, 4, 1, 5), t1 = v128.shuffle<f32>(r0, r1, 2, 6, 3, 7);
      const t2 = v128.shuffle<f32>(r2, r3, 0, 4, 1, 5), t3 = v128.shuffle<f32>(r2, r3, 2, 6, 3, 7);
      const u0 = v128.shuffle<f32>(r4, r5, 0, 4, 1, 5), u1 = v128.shuffle<f32>(r4, r5, 2, 6, 3, 7);
      v128.store(dst, v128.shuffle<i64>(t0, t2, 0, 2));
      store<i64>(dst + 16, i64x2.extract_lane(u0, 0));
      v128.store(dst, v128.shuffle<i64>(t0, t2, 1, 3), 24);
      store<i64>(dst + 40, i64x2.extract_lane(u0, 1));
      v128.store(dst, v128.shuffle<i64>(t1, t3, 0, 2), 48);
      store<i64>(dst + 64, i64x2.extract_lane(u1, 0));
      v128.store(dst, v128.shuffle<i64>(t1, t3, 1, 3), 72);
      store<i64>(dst + 88, i64x2.extract_lane(u1, 1));
      dst += 96;
    }
  }
  for (; k < kc; k++) {
    const at = src + <usize>k * 4;
    for (let i = 0; i < MR; i++) store<f32>(dst + <usize>i * 4, load<f32>(at + <usize>i * rowStep));
    dst += <usize>MR * 4;
  }
}

/** Packs rows [0, mc) x cols [0, kc) of A (element strides sAm, sAk) into MR-row slivers, zero-padded. */
function packA<S, V>(dst: usize, A: usize, sAm: i32, sAk: i32, mc: i32, kc: i32, MR: i32): void {
  const es = elemBytes<S>();
  const vs = sizeof<V>();
  const rowStep = <usize>sAm * es;
  const colStep = <usize>sAk * es;
  for (let ir = 0; ir < mc; ir += MR) {
    const rows = min(MR, mc - ir);
    const base = A + <usize>ir * rowStep;
    if (rows == MR && isFloat<S>() && sizeof<S>() == 4 && isFloat<V>() && sizeof<V>() == 4 && sAk == 1) {
      packSliverF32(dst, base, rowStep, kc, MR);
      dst += <usize>MR * <usize>kc * 4;
    } else if (rows == MR) {
      for (let k = 0; k < kc; k++) {
        const src = base + <usize>k * colStep;
        for (let i = 0; i < MR; i++) store<V>(dst + <usize>i * vs, ld<S, V>(src + <usize>i * rowStep));
        dst += <usize>MR * vs;
      }
    } else {
      for (let k = 0; k < kc; k++) {
        const src = base + <usize>k * colStep;
        for (let i = 0; i < MR; i++) {
          store<V>(dst + <usize>i * vs, i < rows ? ld<S, V>(src + <usize>i * rowStep) : <V>0);
        }
        dst += <usize>MR * vs;
      }
    }
  }
}

/** Packs rows [0, kc) x cols [0, nc) of B (element strides sBk, sBn) into NR-column slivers, zero-padded. */
function packB<S, V>(dst: usize, B: usize, sBk: i32, sBn: i32, kc: i32, nc: i32): void {
  const es = elemBytes<S>();
  const vs = sizeof<V>();
  const NR = nr<V>();
  const rowStep = <usize>sBk * es;
  const colStep = <usize>sBn * es;
  for (let jr = 0; jr < nc; jr += NR) {
    const cols = min(NR, nc - jr);
    const base = B + <usize>jr * colStep;
    if (cols == NR && sBn == 1 && !isNarrowFloat<S>()) {
      // Contiguous rows: one sliver row is two vector copies.
      for (let k = 0; k < kc; k++) {
        const src = base + <usize>k * rowStep;
        v128.store(dst, v128.load(src));
        v128.store(dst, v128.load(src, 16), 16);
        dst += 32;
      }
    } else {
      for (let k = 0; k < kc; k++) {
        const src = base + <usize>k * rowStep;
        for (let j = 0; j < NR; j++) {
          store<V>(dst + <usize>j * vs, j < cols ? ld<S, V>(src + <usize>j * colStep) : <V>0);
        }
        dst += 32;
      }
    }
  }
}

/**
 * One MR x NR tile: acc = Ap(MR x kc) @ Bp(kc x NR), then C = alpha * acc + beta * C (C not read when
 * `readC` is false). Full tiles with unit column stride are written with vectors; others go through `tile`.
 */
function microKernel<S, V, Rows>(
  kc: i32,
  ap: usize,
  bp: usize,
  alpha: V,
  beta: V,
  readC: bool,
  C: usize,
  sCm: i32,
  sCn: i32,
  rows: i32,
  cols: i32,
  tile: usize,
): void {
  const MR = tileRows<Rows>();
  const vs = <usize>sizeof<V>();
  let c00 = v128.splat<V>(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  let c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (let k = 0; k < kc; k++) {
    const b0 = v128.load(bp);
    const b1 = v128.load(bp, 16);
    let a = v128.load_splat<V>(ap);
    c00 = madd<V>(a, b0, c00);
    c01 = madd<V>(a, b1, c01);
    a = v128.load_splat<V>(ap, vs);
    c10 = madd<V>(a, b0, c10);
    c11 = madd<V>(a, b1, c11);
    a = v128.load_splat<V>(ap, vs * 2);
    c20 = madd<V>(a, b0, c20);
    c21 = madd<V>(a, b1, c21);
    a = v128.load_splat<V>(ap, vs * 3);
    c30 = madd<V>(a, b0, c30);
    c31 = madd<V>(a, b1, c31);
    if (MR > 4) {
      a = v128.load_splat<V>(ap, vs * 4);
      c40 = madd<V>(a, b0, c40);
      c41 = madd<V>(a, b1, c41);
    }
    if (MR > 5) {
      a = v128.load_splat<V>(ap, vs * 5);
      c50 = madd<V>(a, b0, c50);
      c51 = madd<V>(a, b1, c51);
    }
    ap += <usize>MR * vs;
    bp += 32;
  }
  const va = v128.splat<V>(alpha);
  const es = elemBytes<S>();
  if (rows == MR && cols == nr<V>() && sCn == 1 && !isNarrowFloat<S>()) {
    const rowStep = <usize>sCm * es;
    const vb = v128.splat<V>(beta);
    writeRow<V>(C, c00, c01, va, vb, readC);
    writeRow<V>(C + rowStep, c10, c11, va, vb, readC);
    writeRow<V>(C + rowStep * 2, c20, c21, va, vb, readC);
    writeRow<V>(C + rowStep * 3, c30, c31, va, vb, readC);
    if (MR > 4) writeRow<V>(C + rowStep * 4, c40, c41, va, vb, readC);
    if (MR > 5) writeRow<V>(C + rowStep * 5, c50, c51, va, vb, readC);
    return;
  }
  v128.store(tile, v128.mul<V>(c00, va));
  v128.store(tile, v128.mul<V>(c01, va), 16);
  v128.store(tile, v128.mul<V>(c10, va), 32);
  v128.store(tile, v128.mul<V>(c11, va), 48);
  v128.store(tile, v128.mul<V>(c20, va), 64);
  v128.store(tile, v128.mul<V>(c21, va), 80);
  v128.store(tile, v128.mul<V>(c30, va), 96);
  v128.store(tile, v128.mul<V>(c31, va), 112);
  if (MR > 4) {
    v128.store(tile, v128.mul<V>(c40, va), 128);
    v128.store(tile, v128.mul<V>(c41, va), 144);
  }
  if (MR > 5) {
    v128.store(tile, v128.mul<V>(c50, va), 160);
    v128.store(tile, v128.mul<V>(c51, va), 176);
  }
  for (let i = 0; i < rows; i++) {
    const src = tile + <usize>i * 32;
    const dst = C + <usize>i * <usize>sCm * es;
    for (let j = 0; j < cols; j++) {
      const p = dst + <usize>j * <usize>sCn * es;
      let v = load<V>(src + <usize>j * vs);
      if (readC) v += beta * ld<S, V>(p);
      st<S, V>(p, v);
    }
  }
}

// @ts-ignore: decorator
@inline
function writeRow<V>(p: usize, c0: v128, c1: v128, va: v128, vb: v128, readC: bool): void {
  let r0 = v128.mul<V>(c0, va);
  let r1 = v128.mul<V>(c1, va);
  if (readC) {
    r0 = madd<V>(v128.load(p), vb, r0);
    r1 = madd<V>(v128.load(p, 16), vb, r1);
  }
  v128.store(p, r0);
  v128.store(p, r1, 16);
}

/** C = beta * C (K = 0 or alpha = 0); beta = 0 writes zeros without reading C. */
function scaleC<S, V>(M: i32, N: i32, beta: V, C: usize, sCm: i32, sCn: i32): void {
  const es = elemBytes<S>();
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      const p = C + (<usize>i * <usize>sCm + <usize>j * <usize>sCn) * es;
      st<S, V>(p, beta == 0 ? <V>0 : beta * ld<S, V>(p));
    }
  }
}

// Note [Shared packed B]: when a product is split into row panels across threads (core/cpu/parallel.ts), every
// panel multiplies by all of B. Instead of each thread packing its own copy, B is packed once, in parallel by
// column ranges (gemm_pack_b), into one block that holds every (jc, pc) block of the loops above in order: all
// K slices of the first NC columns, then of the next NC, ... Block (jc, pc) starts at element jc * K +
// pc * roundUp(ncb, NR) (full column blocks are multiples of NR wide) and has exactly the layout packB writes,
// so gemm_prepacked runs the same micro-kernel calls on the same values: bitwise identical to packing per thread.

/** Element offset, in bytes, of block (jc, pc) of a shared packed B (Note [Shared packed B]). */
// @ts-ignore: decorator
@inline
function sharedBlockOffset<V>(jc: i32, pc: i32, K: i32, ncb: i32): usize {
  return (<usize>jc * <usize>K + <usize>pc * <usize>roundUp(ncb, nr<V>())) * sizeof<V>();
}

/** Bytes of a shared packed B of a K x N operand (Note [Shared packed B]). */
function sharedBBytes<V>(N: i32, K: i32): i32 {
  return roundUp(max(N, 0), nr<V>()) * max(K, 0) * <i32>sizeof<V>();
}

/** Packs columns [j0, j1) of B (j0 a multiple of NR) into the shared layout at `dst` (Note [Shared packed B]). */
function packSharedB<S, V>(N: i32, K: i32, B: usize, sBk: i32, sBn: i32, dst: usize, j0: i32, j1: i32): void {
  const es = elemBytes<S>();
  const vs = sizeof<V>();
  const kc = kcFor<S>(K);
  const nc = ncFor<V>(kc);
  for (let jc = 0; jc < N; jc += nc) {
    const ncb = min(nc, N - jc);
    const lo = max(j0, jc), hi = min(j1, jc + ncb);
    if (lo >= hi) continue;
    for (let pc = 0; pc < K; pc += kc) {
      const kcb = min(kc, K - pc);
      const at = dst + sharedBlockOffset<V>(jc, pc, K, ncb) + <usize>(lo - jc) * <usize>kcb * vs;
      packB<S, V>(at, B + (<usize>pc * <usize>sBk + <usize>lo * <usize>sBn) * es, sBk, sBn, kcb, hi - lo);
    }
  }
}

/** The packed, blocked product of Note [GEMM blocking] for storage S computed in V (f32 or f64). */
function gemmPacked<S, V>(
  M: i32,
  N: i32,
  K: i32,
  alpha: V,
  A: usize,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBk: i32,
  sBn: i32,
  beta: V,
  C: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
  sharedB: usize,
): void {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0) {
    // An empty sum, or BLAS's rule that alpha = 0 leaves A and B unread (so their NaNs do not reach C).
    scaleC<S, V>(M, N, beta, C, sCm, sCn);
    return;
  }
  const es = elemBytes<S>();
  const vs = <i32>sizeof<V>();
  const NR = nr<V>();
  const kc = kcFor<S>(K);
  const mc = mcFor<V>(kc);
  const nc = ncFor<V>(kc);
  const MR = maddIsFused() ? MR_FUSED : MR_UNFUSED;
  const tile = alignUp64(work);
  const packedA = alignUp64(tile + <usize>(MR_MAX * NR * vs));
  const packedB = alignUp64(packedA + <usize>min(mc, roundUp(M, MR)) * <usize>min(kc, K) * vs);
  for (let jc = 0; jc < N; jc += nc) {
    const ncb = min(nc, N - jc);
    for (let pc = 0; pc < K; pc += kc) {
      const kcb = min(kc, K - pc);
      // A shared packing (Note [Shared packed B]) already holds this block; otherwise pack it here.
      const blockB = sharedB != 0 ? sharedB + sharedBlockOffset<V>(jc, pc, K, ncb) : packedB;
      if (sharedB == 0) {
        packB<S, V>(packedB, B + (<usize>pc * <usize>sBk + <usize>jc * <usize>sBn) * es, sBk, sBn, kcb, ncb);
      }
      // The first K slice applies beta; later slices accumulate onto what the earlier ones stored.
      const betaSlice: V = pc == 0 ? beta : <V>1;
      const readC = pc != 0 || beta != 0;
      for (let ic = 0; ic < M; ic += mc) {
        const mcb = min(mc, M - ic);
        packA<S, V>(packedA, A + (<usize>ic * <usize>sAm + <usize>pc * <usize>sAk) * es, sAm, sAk, mcb, kcb, MR);
        for (let jr = 0; jr < ncb; jr += NR) {
          const bp = blockB + <usize>jr * <usize>kcb * vs;
          const cCol = C + <usize>(jc + jr) * <usize>sCn * es;
          for (let ir = 0; ir < mcb; ir += MR) {
            const ap = packedA + <usize>ir * <usize>kcb * vs;
            const c = cCol + <usize>(ic + ir) * <usize>sCm * es;
            const rows = min(MR, mcb - ir);
            const cols = min(NR, ncb - jr);
            if (MR == MR_FUSED) {
              microKernel<S, V, SixRows>(kcb, ap, bp, alpha, betaSlice, readC, c, sCm, sCn, rows, cols, tile);
            } else {
              microKernel<S, V, FourRows>(kcb, ap, bp, alpha, betaSlice, readC, c, sCm, sCn, rows, cols, tile);
            }
          }
        }
      }
    }
  }
}

/**
 * Integer product, row by row: acc[0, N) (i32, or i64 for int64, in the workspace) += A[i, k] * B[k, :],
 * then C[i, :] = alpha * acc + beta * C[i, :], wrapping to the storage type (Note [GEMM dtypes]).
 */
function gemmIntegral<S, C>(
  M: i32,
  N: i32,
  K: i32,
  alpha: C,
  A: usize,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBk: i32,
  sBn: i32,
  beta: C,
  Cp: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
): void {
  const es = sizeof<S>();
  const cs = sizeof<C>();
  const acc = alignUp64(work);
  for (let i = 0; i < M; i++) {
    memory.fill(acc, 0, <usize>N * cs);
    const aRow = A + <usize>i * <usize>sAm * es;
    for (let k = 0; k < K; k++) {
      const a = ld<S, C>(aRow + <usize>k * <usize>sAk * es);
      if (a == 0) continue;
      const bRow = B + <usize>k * <usize>sBk * es;
      for (let j = 0; j < N; j++) {
        const p = acc + <usize>j * cs;
        store<C>(p, load<C>(p) + a * ld<S, C>(bRow + <usize>j * <usize>sBn * es));
      }
    }
    const cRow = Cp + <usize>i * <usize>sCm * es;
    for (let j = 0; j < N; j++) {
      const p = cRow + <usize>j * <usize>sCn * es;
      let v = alpha * load<C>(acc + <usize>j * cs);
      if (beta != 0) v += beta * ld<S, C>(p);
      st<S, C>(p, v);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Exports. Pointers are byte offsets, sizes and strides element counts; `work` must hold
// gemm_workspace_bytes(dtype, M, N, K) bytes (any alignment).

/** Bytes of workspace gemm_* / bmm need for one M x N x K product of `dtype` (0 for an unsupported dtype). */
export function gemm_workspace_bytes(dtype: i32, M: i32, N: i32, K: i32): i32 {
  switch (dtype) {
    case DT_F32:
      return packedWorkspaceBytes<f32, f32>(M, N, K);
    case DT_F64:
      return packedWorkspaceBytes<f64, f64>(M, N, K);
    case DT_F16:
      return packedWorkspaceBytes<u16, f32>(M, N, K);
    case DT_BF16:
      return packedWorkspaceBytes<u32, f32>(M, N, K);
    case DT_U8:
    case DT_I8:
    case DT_I16:
    case DT_I32:
      return 64 + max(N, 0) * 4;
    case DT_I64:
      return 64 + max(N, 0) * 8;
  }
  return 0;
}

/** f32 C = alpha * A @ B + beta * C (A: M x K, B: K x N, C: M x N, any strides). */
export function gemm_f32(
  M: i32,
  N: i32,
  K: i32,
  alpha: f32,
  A: usize,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBk: i32,
  sBn: i32,
  beta: f32,
  C: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
): i32 {
  gemmPacked<f32, f32>(M, N, K, alpha, A, sAm, sAk, B, sBk, sBn, beta, C, sCm, sCn, work, 0);
  return STATUS_OK;
}

/** f64 C = alpha * A @ B + beta * C (same ABI as gemm_f32). */
export function gemm_f64(
  M: i32,
  N: i32,
  K: i32,
  alpha: f64,
  A: usize,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBk: i32,
  sBn: i32,
  beta: f64,
  C: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
): i32 {
  gemmPacked<f64, f64>(M, N, K, alpha, A, sAm, sAk, B, sBk, sBn, beta, C, sCm, sCn, work, 0);
  return STATUS_OK;
}

/**
 * Any-dtype C = alpha * A @ B + beta * C: f32, f64, f16 / bf16 (f32 accumulation), u8 / i8 / i16 / i32 / i64
 * (wrapping; alpha and beta truncated toward zero). Bool and unknown codes give STATUS_UNSUPPORTED.
 */
export function gemm_generic(
  dtype: i32,
  M: i32,
  N: i32,
  K: i32,
  alpha: f64,
  A: usize,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBk: i32,
  sBn: i32,
  beta: f64,
  C: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
): i32 {
  if (M < 0 || N < 0 || K < 0) return STATUS_BAD_ARGUMENT;
  switch (dtype) {
    case DT_F32:
      gemmPacked<f32, f32>(M, N, K, <f32>alpha, A, sAm, sAk, B, sBk, sBn, <f32>beta, C, sCm, sCn, work, 0);
      return STATUS_OK;
    case DT_F64:
      gemmPacked<f64, f64>(M, N, K, alpha, A, sAm, sAk, B, sBk, sBn, beta, C, sCm, sCn, work, 0);
      return STATUS_OK;
    case DT_F16:
      gemmPacked<u16, f32>(M, N, K, <f32>alpha, A, sAm, sAk, B, sBk, sBn, <f32>beta, C, sCm, sCn, work, 0);
      return STATUS_OK;
    case DT_BF16:
      gemmPacked<u32, f32>(M, N, K, <f32>alpha, A, sAm, sAk, B, sBk, sBn, <f32>beta, C, sCm, sCn, work, 0);
      return STATUS_OK;
    case DT_U8:
      gemmIntegral<u8, i32>(M, N, K, <i32>alpha, A, sAm, sAk, B, sBk, sBn, <i32>beta, C, sCm, sCn, work);
      return STATUS_OK;
    case DT_I8:
      gemmIntegral<i8, i32>(M, N, K, <i32>alpha, A, sAm, sAk, B, sBk, sBn, <i32>beta, C, sCm, sCn, work);
      return STATUS_OK;
    case DT_I16:
      gemmIntegral<i16, i32>(M, N, K, <i32>alpha, A, sAm, sAk, B, sBk, sBn, <i32>beta, C, sCm, sCn, work);
      return STATUS_OK;
    case DT_I32:
      gemmIntegral<i32, i32>(M, N, K, <i32>alpha, A, sAm, sAk, B, sBk, sBn, <i32>beta, C, sCm, sCn, work);
      return STATUS_OK;
    case DT_I64:
      gemmIntegral<i64, i64>(M, N, K, <i64>alpha, A, sAm, sAk, B, sBk, sBn, <i64>beta, C, sCm, sCn, work);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

/**
 * Bytes of a shared packed B (Note [Shared packed B]) for a K x N operand of `dtype`: 0 for the dtypes whose
 * product does not pack B (the integers, Bool, unknown codes).
 */
export function gemm_packed_b_bytes(dtype: i32, N: i32, K: i32): i32 {
  switch (dtype) {
    case DT_F32:
    case DT_F16:
    case DT_BF16:
      return sharedBBytes<f32>(N, K);
    case DT_F64:
      return sharedBBytes<f64>(N, K);
  }
  return 0;
}

/**
 * Packs columns [j0, j1) of the K x N operand B (element strides sBk, sBn) into the shared packed B at `dst`,
 * which holds gemm_packed_b_bytes(dtype, N, K) bytes; j0 must be a multiple of 16 (every NR divides it).
 * Column ranges are disjoint regions of `dst`, so threads can pack one B together.
 */
export function gemm_pack_b(dtype: i32, N: i32, K: i32, B: usize, sBk: i32, sBn: i32, dst: usize, j0: i32, j1: i32): i32 {
  if (N < 0 || K < 0 || j0 < 0 || j0 % 16 != 0 || j1 > N) return STATUS_BAD_ARGUMENT;
  switch (dtype) {
    case DT_F32:
      packSharedB<f32, f32>(N, K, B, sBk, sBn, dst, j0, j1);
      return STATUS_OK;
    case DT_F64:
      packSharedB<f64, f64>(N, K, B, sBk, sBn, dst, j0, j1);
      return STATUS_OK;
    case DT_F16:
      packSharedB<u16, f32>(N, K, B, sBk, sBn, dst, j0, j1);
      return STATUS_OK;
    case DT_BF16:
      packSharedB<u32, f32>(N, K, B, sBk, sBn, dst, j0, j1);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

/**
 * gemm_generic with B already packed by gemm_pack_b (all of its columns) at `packedB`, read only: rows of A
 * (and of C) may be any panel of the product. Bitwise identical to gemm_generic on the same operands. `work`
 * must hold gemm_workspace_bytes(dtype, M, 1, K) bytes.
 */
export function gemm_prepacked(
  dtype: i32,
  M: i32,
  N: i32,
  K: i32,
  alpha: f64,
  A: usize,
  sAm: i32,
  sAk: i32,
  packedB: usize,
  beta: f64,
  C: usize,
  sCm: i32,
  sCn: i32,
  work: usize,
): i32 {
  if (M < 0 || N < 0 || K < 0 || packedB == 0) return STATUS_BAD_ARGUMENT;
  switch (dtype) {
    case DT_F32:
      gemmPacked<f32, f32>(M, N, K, <f32>alpha, A, sAm, sAk, 0, 0, 0, <f32>beta, C, sCm, sCn, work, packedB);
      return STATUS_OK;
    case DT_F64:
      gemmPacked<f64, f64>(M, N, K, alpha, A, sAm, sAk, 0, 0, 0, beta, C, sCm, sCn, work, packedB);
      return STATUS_OK;
    case DT_F16:
      gemmPacked<u16, f32>(M, N, K, <f32>alpha, A, sAm, sAk, 0, 0, 0, <f32>beta, C, sCm, sCn, work, packedB);
      return STATUS_OK;
    case DT_BF16:
      gemmPacked<u32, f32>(M, N, K, <f32>alpha, A, sAm, sAk, 0, 0, 0, <f32>beta, C, sCm, sCn, work, packedB);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

/**
 * Batched gemm_generic: for b in [0, batch): C[b] = alpha * A[b] @ B[b] + beta * C[b], batch strides in
 * elements (0 broadcasts an operand). The workspace of one M x N x K product is reused for every batch.
 */
export function bmm(
  dtype: i32,
  batch: i32,
  M: i32,
  N: i32,
  K: i32,
  alpha: f64,
  A: usize,
  sAb: i32,
  sAm: i32,
  sAk: i32,
  B: usize,
  sBb: i32,
  sBk: i32,
  sBn: i32,
  beta: f64,
  C: usize,
  sCb: i32,
  sCm: i32,
  sCn: i32,
  work: usize,
): i32 {
  if (gemm_workspace_bytes(dtype, 0, 0, 0) == 0) return STATUS_UNSUPPORTED;
  const es = <usize>itemSize(dtype);
  for (let b = 0; b < batch; b++) {
    const status = gemm_generic(
      dtype,
      M,
      N,
      K,
      alpha,
      A + <usize>b * <usize>sAb * es,
      sAm,
      sAk,
      B + <usize>b * <usize>sBb * es,
      sBk,
      sBn,
      beta,
      C + <usize>b * <usize>sCb * es,
      sCm,
      sCn,
      work,
    );
    if (status != STATUS_OK) return status;
  }
  return STATUS_OK;
}
