// Parametrised pointwise activations: activation_contig(op, dtype, out, a, n, p0, p1, p2) and
// activation_strided(op, dtype, out, a, desc, p0, p1, p2), one pass each where a composition of existing
// operators needs three to five (leaky_relu, elu, softplus, hardtanh, mish, log_sigmoid).
//
// Note [Activation kernels]: the formulas are those of PyTorch 1.13's CPU kernels
// (aten/src/ATen/native/cpu/Activation.cpp): dtypes Float, Double and BFloat16 (AT_DISPATCH_FLOATING_TYPES_AND
// (BFloat16); PyTorch's mish leaves BFloat16 out, ours takes it as it always did), f32 and bf16 computed in f32 (bf16 rounds once at the store, as
// PyTorch's BFloat16 path converts to float and back), f64 in f64. The scalar arguments arrive as f64 and are
// converted to the compute type once per call, as PyTorch converts its Scalars to the op's scalar type:
//   leaky_relu   x > 0 ? x : x * p0                                   (p0 = negative_slope)
//   elu          x > 0 ? x * p1 : expm1(x * p2) * (p0 * p1)           (p0 = alpha, p1 = scale, p2 = input_scale)
//   softplus     x * p0 > p1 ? x : log1p(exp(x * p0)) / p0            (p0 = beta, p1 = threshold)
//   hardtanh     min(max(x, p0), p1), NaN propagating                 (p0 = min_val, p1 = max_val)
//   mish         x * tanh(log1p(exp(x))), evaluated as x * n / (n + 2) with n = exp(x) * (exp(x) + 2)
//   log_sigmoid  min(x, 0) - log1p(exp(-|x|))
// The op tags follow Note [Op tags] of unary.ts, with the parameters passed to apply.

import { DT_BF16, DT_F32, DT_F64, elemBytes, ld, st } from './common';
import { SIMD_ZERO, STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { blockCount, blockOff0, blockOff1, blockOff2, blockOffsets, descNdim, innerSize, innerStride } from './strided';
import { midSize, midStride } from './strided';

/** Opcodes of activation_contig / activation_strided. */
export const ACT_LEAKY_RELU: i32 = 0;
export const ACT_ELU: i32 = 1;
export const ACT_SOFTPLUS: i32 = 2;
export const ACT_HARDTANH: i32 = 3;
export const ACT_MISH: i32 = 4;
export const ACT_LOG_SIGMOID: i32 = 5;

// @ts-ignore: decorator
@inline
function expC<C>(x: C): C {
  return sizeof<C>() == 4 ? <C>Mathf.exp(<f32>x) : <C>Math.exp(<f64>x);
}

// @ts-ignore: decorator
@inline
function expm1C<C>(x: C): C {
  return sizeof<C>() == 4 ? <C>Mathf.expm1(<f32>x) : <C>Math.expm1(<f64>x);
}

// @ts-ignore: decorator
@inline
function log1pC<C>(x: C): C {
  return sizeof<C>() == 4 ? <C>Mathf.log1p(<f32>x) : <C>Math.log1p(<f64>x);
}

@final @unmanaged
class LeakyRelu {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C { return select<C>(x, x * p0, x > <C>0); }
  @inline simd<S>(): bool { return isFloat<S>(); }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 {
    if (sizeof<S>() == 4) return v128.bitselect(x, f32x4.mul(x, p0), f32x4.gt(x, zero));
    return v128.bitselect(x, f64x2.mul(x, p0), f64x2.gt(x, zero));
  }
  @inline staged<S>(): bool { return false; }
  @inline stage1<C>(x: C, p0: C): C { return x; }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x; }
}

@final @unmanaged
class Elu {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C {
    // PyTorch's vectorised kernel: x <= 0 takes the exponential branch, so NaN takes the linear one.
    return x <= <C>0 ? expm1C<C>(x * p2) * (p0 * p1) : x * p1;
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 { return x; }
  @inline staged<S>(): bool { return false; }
  @inline stage1<C>(x: C, p0: C): C { return x; }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x; }
}

@final @unmanaged
class Softplus {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C {
    const bx = x * p0;
    return bx > p1 ? x : log1pC<C>(expC<C>(bx)) / p0;
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 { return x; }
  // Staged (Note [Staged activations]): e = exp(x * beta) for a block, then the rest; the same values as apply.
  @inline staged<S>(): bool { return isFloat<S>(); }
  @inline stage1<C>(x: C, p0: C): C { return expC<C>(x * p0); }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x * p0 > p1 ? x : log1pC<C>(e) / p0; }
}

@final @unmanaged
class Hardtanh {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C {
    if (x != x) return x; // clamp propagates NaN
    const lo = x < p0 ? p0 : x;
    return lo > p1 ? p1 : lo;
  }
  @inline simd<S>(): bool { return isFloat<S>(); }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 {
    // the same tests as apply, lane-wise: NaN fails both comparisons and stays
    if (sizeof<S>() == 4) {
      const lo = v128.bitselect(p0, x, f32x4.lt(x, p0));
      return v128.bitselect(p1, lo, f32x4.gt(lo, p1));
    }
    const lo = v128.bitselect(p0, x, f64x2.lt(x, p0));
    return v128.bitselect(p1, lo, f64x2.gt(lo, p1));
  }
  @inline staged<S>(): bool { return false; }
  @inline stage1<C>(x: C, p0: C): C { return x; }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x; }
}

@final @unmanaged
class Mish {
  @inline supports<S>(): bool { return true; } // PyTorch 1.13 leaves BFloat16 out; ours always took it
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C {
    // tanh(log1p(e)) = n / (n + 2) with e = exp(x), n = e * (e + 2): one exp instead of exp, log1p and tanh.
    // Past x = 20 the ratio is 1 within f64 precision (and e * e would overflow later on), so the result is x.
    if (x > <C>20) return x;
    const e = expC<C>(x);
    const n = e * (e + <C>2);
    return x * (n / (n + <C>2));
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 { return x; }
  @inline staged<S>(): bool { return false; }
  @inline stage1<C>(x: C, p0: C): C { return x; }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x; }
}

@final @unmanaged
class LogSigmoid {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C, p0: C, p1: C, p2: C): C {
    const m = x < <C>0 ? x : <C>0;
    const ax = x < <C>0 ? -x : x;
    return m - log1pC<C>(expC<C>(-ax));
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, p0: v128, p1: v128): v128 { return x; }
  // Not staged: measured slower staged than in one loop body (Note [Staged activations]).
  @inline staged<S>(): bool { return false; }
  @inline stage1<C>(x: C, p0: C): C { return x; }
  @inline stage2<C>(x: C, e: C, p0: C, p1: C): C { return x; }
}

/** Elements per block of a staged activation (Note [Staged activations]). */
// @ts-ignore: decorator
@inline
const STAGE_BLOCK: i32 = 256;

/** Splat of `v` in the lanes of S (f32x4 or f64x2). */
// @ts-ignore: decorator
@inline
function splat<S>(v: f64): v128 {
  return sizeof<S>() == 4 ? f32x4.splat(<f32>v) : f64x2.splat(v);
}

/**
 * One row: out[i*so] = op(a[i*sa]) for i < n, byte strides. Contiguous f32/f64 rows of ops with a v128 version
 * run it two vectors per iteration, then one, then the scalar tail.
 */
function activationKernel<S, C, O>(o: usize, a: usize, n: i32, so: isize, sa: isize, q0: f64, q1: f64, q2: f64): i32 {
  const op = changetype<O>(0);
  if (!op.supports<S>()) return STATUS_UNSUPPORTED;
  const p0 = <C>q0, p1 = <C>q1, p2 = <C>q2;
  const eb = <isize>elemBytes<S>();
  let i = 0;
  if (op.staged<S>() && so == eb && sa == eb) {
    // Note [Staged activations]: softplus's exp then log1p in one loop body ran slower than the two as separate
    // passes (measured: 24-26 ms against 22-24 ms for 1M float32 on one thread), so a block of STAGE_BLOCK
    // elements gets its exp first (written to `out`, still in L1), then the rest (20 ms). Only f32/f64, where
    // `out` holds the intermediate at the compute precision. log_sigmoid measured the other way round (27 ms
    // staged, 22 ms in one body) and is not staged.
    while (i < n) {
      const m = min(n - i, STAGE_BLOCK);
      let po = o, pa = a;
      for (let j = 0; j < m; j++) {
        store<S>(po, <S>op.stage1<C>(<C>load<S>(pa), p0));
        po += eb;
        pa += eb;
      }
      po = o;
      pa = a;
      for (let j = 0; j < m; j++) {
        store<S>(po, <S>op.stage2<C>(<C>load<S>(pa), <C>load<S>(po), p0, p1));
        po += eb;
        pa += eb;
      }
      o += <usize>(m * <i32>eb);
      a += <usize>(m * <i32>eb);
      i += m;
    }
    return STATUS_OK;
  }
  if (op.simd<S>()) {
    if (so == eb && sa == eb) {
      const zero = v128.load(SIMD_ZERO);
      const v0 = splat<S>(q0), v1 = splat<S>(q1);
      const lanes = 16 / <i32>eb;
      for (; i + 2 * lanes <= n; i += 2 * lanes) {
        const x0 = v128.load(a);
        const x1 = v128.load(a, 16);
        v128.store(o, op.vapply<S>(x0, zero, v0, v1));
        v128.store(o, op.vapply<S>(x1, zero, v0, v1), 16);
        o += 32;
        a += 32;
      }
      for (; i + lanes <= n; i += lanes) {
        v128.store(o, op.vapply<S>(v128.load(a), zero, v0, v1));
        o += 16;
        a += 16;
      }
    }
  }
  for (; i < n; i++) {
    st<S, C>(o, op.apply<C>(ld<S, C>(a), p0, p1, p2));
    o += so;
    a += sa;
  }
  return STATUS_OK;
}

/** AT_DISPATCH_FLOATING_TYPES_AND(BFloat16, ...). */
function activationDispatch<O>(dtype: i32, o: usize, a: usize, n: i32, so: isize, sa: isize, p0: f64, p1: f64, p2: f64): i32 {
  switch (dtype) {
    case DT_F32:
      return activationKernel<f32, f32, O>(o, a, n, so, sa, p0, p1, p2);
    case DT_F64:
      return activationKernel<f64, f64, O>(o, a, n, so, sa, p0, p1, p2);
    case DT_BF16:
      return activationKernel<u32, f32, O>(o, a, n, so, sa, p0, p1, p2);
  }
  return STATUS_UNSUPPORTED;
}

/** Runs one row of `op`; with n = 0 it only reports whether (op, dtype) is supported. */
function activationRow(op: i32, dtype: i32, o: usize, a: usize, n: i32, so: isize, sa: isize, p0: f64, p1: f64, p2: f64): i32 {
  switch (op) {
    case ACT_LEAKY_RELU:
      return activationDispatch<LeakyRelu>(dtype, o, a, n, so, sa, p0, p1, p2);
    case ACT_ELU:
      return activationDispatch<Elu>(dtype, o, a, n, so, sa, p0, p1, p2);
    case ACT_SOFTPLUS:
      return activationDispatch<Softplus>(dtype, o, a, n, so, sa, p0, p1, p2);
    case ACT_HARDTANH:
      return activationDispatch<Hardtanh>(dtype, o, a, n, so, sa, p0, p1, p2);
    case ACT_MISH:
      return activationDispatch<Mish>(dtype, o, a, n, so, sa, p0, p1, p2);
    case ACT_LOG_SIGMOID:
      return activationDispatch<LogSigmoid>(dtype, o, a, n, so, sa, p0, p1, p2);
  }
  return STATUS_BAD_ARGUMENT;
}

/** out[0..n) = op(a[0..n); p0, p1, p2), all contiguous, same dtype. Returns a status (Note [Status codes]). */
export function activation_contig(op: i32, dtype: i32, out: usize, a: usize, n: i32, p0: f64, p1: f64, p2: f64): i32 {
  if (n < 0) return STATUS_BAD_ARGUMENT;
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  const e: isize = dtype == DT_F64 ? 8 : dtype == DT_F32 ? 4 : 2;
  return activationRow(op, dtype, out, a, n, e, e, p0, p1, p2);
}

/** activation_contig over strided views; `desc` operands: out, a (Note [Strided descriptor]). */
export function activation_strided(op: i32, dtype: i32, out: usize, a: usize, desc: usize, p0: f64, p1: f64, p2: f64): i32 {
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const probe = activationRow(op, dtype, 0, 0, 0, 0, 0, p0, p1, p2);
  if (probe != STATUS_OK) return probe;
  const e: isize = dtype == DT_F64 ? 8 : dtype == DT_F32 ? 4 : 2;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * e;
  const sa = innerStride(desc, ndim, 1) * e;
  const mo = midStride(desc, ndim, 0) * e;
  const ma = midStride(desc, ndim, 1) * e;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 2, blk);
    let po = out + <usize>(blockOff0 * e);
    let pa = a + <usize>(blockOff1 * e);
    for (let m = 0; m < mid; m++) {
      activationRow(op, dtype, po, pa, inner, so, sa, p0, p1, p2);
      po += <usize>mo;
      pa += <usize>ma;
    }
  }
  return STATUS_OK;
}

// ---- pointwise losses ----------------------------------------------------------------------------------------------
//
// loss_contig(op, dtype, out, a, b, n, p0) / loss_strided(op, dtype, out, a, b, desc, p0): the elementwise loss of
// input a against target b, as PyTorch 1.13's CPU kernels (aten/src/ATen/native/cpu/PointwiseOpsKernel.cpp,
// Loss.cpp) compute it before `apply_loss_reduction`:
//   smooth_l1  z = |a - b|; z < p0 ? 0.5 * z * z / p0 : z - 0.5 * p0          (p0 = beta > 0)
//   huber      z = |a - b|; z < p0 ? 0.5 * z * z : p0 * (z - 0.5 * p0)        (p0 = delta > 0)
//   bce        (b - 1) * max(log1p(-a), -100) - b * max(log(a), -100), with a in [0, 1]
// bce returns LOSS_OUT_OF_RANGE when some a is outside [0, 1] (NaN included), as PyTorch's kernel checks.

export const LOSS_SMOOTH_L1: i32 = 0;
export const LOSS_HUBER: i32 = 1;
export const LOSS_BCE: i32 = 2;
/** Status of loss_* when a bce input lies outside [0, 1]. */
export const LOSS_OUT_OF_RANGE: i32 = 3;

// @ts-ignore: decorator
@inline
function logC<C>(x: C): C {
  return sizeof<C>() == 4 ? <C>Mathf.log(<f32>x) : <C>Math.log(<f64>x);
}

/**
 * The v128 version of smooth_l1 (huber = false) and huber over a contiguous row of f32 or f64 (S), both branches
 * computed in the scalar loop's order of operations and selected lane-wise; returns the number of elements done
 * (the rest is left to the scalar loop).
 */
// @ts-ignore: decorator
@inline
function lossVector<S>(huber: bool, o: usize, a: usize, b: usize, n: i32, q0: f64): i32 {
  const f32 = sizeof<S>() == 4;
  const lanes = f32 ? 4 : 2;
  const p = f32 ? f32x4.splat(<f32>q0) : f64x2.splat(q0);
  const halfP = f32 ? f32x4.splat(<f32>0.5 * <f32>q0) : f64x2.splat(0.5 * q0);
  const half = f32 ? f32x4.splat(<f32>0.5) : f64x2.splat(0.5);
  let i = 0;
  for (; i + lanes <= n; i += lanes) {
    const x = v128.load(a), t = v128.load(b);
    let z: v128, inside: v128, sq: v128, lin: v128;
    if (f32) {
      z = f32x4.abs(f32x4.sub(x, t));
      inside = f32x4.lt(z, p);
      sq = f32x4.mul(f32x4.mul(z, z), half); // = 0.5 * z * z exactly (a power of two)
      if (!huber) sq = f32x4.div(sq, p);
      lin = huber ? f32x4.mul(p, f32x4.sub(z, halfP)) : f32x4.sub(z, halfP);
    } else {
      z = f64x2.abs(f64x2.sub(x, t));
      inside = f64x2.lt(z, p);
      sq = f64x2.mul(f64x2.mul(z, z), half);
      if (!huber) sq = f64x2.div(sq, p);
      lin = huber ? f64x2.mul(p, f64x2.sub(z, halfP)) : f64x2.sub(z, halfP);
    }
    v128.store(o, v128.bitselect(sq, lin, inside));
    o += 16;
    a += 16;
    b += 16;
  }
  return i;
}

/** One row of a loss: out[i*so] = op(a[i*sa], b[i*sb]); returns a status. */
function lossKernel<S, C>(op: i32, o: usize, a: usize, b: usize, n: i32, so: isize, sa: isize, sb: isize, q0: f64): i32 {
  const p0 = <C>q0;
  const half = <C>0.5;
  const eb = <isize>elemBytes<S>();
  let i = 0;
  if (isFloat<S>() && op != LOSS_BCE && so == eb && sa == eb && sb == eb) {
    i = lossVector<S>(op == LOSS_HUBER, o, a, b, n, q0);
    o += <usize>(i * <i32>eb);
    a += <usize>(i * <i32>eb);
    b += <usize>(i * <i32>eb);
  }
  if (op == LOSS_SMOOTH_L1) {
    for (; i < n; i++) {
      const z = abs<C>(ld<S, C>(a) - ld<S, C>(b));
      st<S, C>(o, select<C>(half * z * z / p0, z - half * p0, z < p0));
      o += so;
      a += sa;
      b += sb;
    }
  } else if (op == LOSS_HUBER) {
    for (; i < n; i++) {
      const z = abs<C>(ld<S, C>(a) - ld<S, C>(b));
      st<S, C>(o, select<C>(half * z * z, p0 * (z - half * p0), z < p0));
      o += so;
      a += sa;
      b += sb;
    }
  } else if (op == LOSS_BCE) {
    const floor = <C>-100;
    for (; i < n; i++) {
      const x = ld<S, C>(a), t = ld<S, C>(b);
      if (!(x >= <C>0 && x <= <C>1)) return LOSS_OUT_OF_RANGE;
      const lx = max<C>(logC<C>(x), floor);
      const l1x = max<C>(log1pC<C>(-x), floor);
      st<S, C>(o, (t - <C>1) * l1x - t * lx);
      o += so;
      a += sa;
      b += sb;
    }
  } else {
    return STATUS_BAD_ARGUMENT;
  }
  return STATUS_OK;
}

function lossRow(op: i32, dtype: i32, o: usize, a: usize, b: usize, n: i32, so: isize, sa: isize, sb: isize, p0: f64): i32 {
  switch (dtype) {
    case DT_F32:
      return lossKernel<f32, f32>(op, o, a, b, n, so, sa, sb, p0);
    case DT_F64:
      return lossKernel<f64, f64>(op, o, a, b, n, so, sa, sb, p0);
    case DT_BF16:
      return lossKernel<u32, f32>(op, o, a, b, n, so, sa, sb, p0);
  }
  return STATUS_UNSUPPORTED;
}

/** out[0..n) = loss(a[0..n), b[0..n); p0), all contiguous, one float dtype. Returns a status. */
export function loss_contig(op: i32, dtype: i32, out: usize, a: usize, b: usize, n: i32, p0: f64): i32 {
  if (n < 0) return STATUS_BAD_ARGUMENT;
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  const e: isize = dtype == DT_F64 ? 8 : dtype == DT_F32 ? 4 : 2;
  return lossRow(op, dtype, out, a, b, n, e, e, e, p0);
}

/** loss_contig over strided views; `desc` operands: out, a, b (Note [Strided descriptor]). */
export function loss_strided(op: i32, dtype: i32, out: usize, a: usize, b: usize, desc: usize, p0: f64): i32 {
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  if (op < LOSS_SMOOTH_L1 || op > LOSS_BCE) return STATUS_BAD_ARGUMENT;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const e: isize = dtype == DT_F64 ? 8 : dtype == DT_F32 ? 4 : 2;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * e;
  const sa = innerStride(desc, ndim, 1) * e;
  const sb = innerStride(desc, ndim, 2) * e;
  const mo = midStride(desc, ndim, 0) * e;
  const ma = midStride(desc, ndim, 1) * e;
  const mb = midStride(desc, ndim, 2) * e;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 3, blk);
    let po = out + <usize>(blockOff0 * e);
    let pa = a + <usize>(blockOff1 * e);
    let pb = b + <usize>(blockOff2 * e);
    for (let m = 0; m < mid; m++) {
      const status = lossRow(op, dtype, po, pa, pb, inner, so, sa, sb, p0);
      if (status != STATUS_OK) return status;
      po += <usize>mo;
      pa += <usize>ma;
      pb += <usize>mb;
    }
  }
  return STATUS_OK;
}
