// Ternary elementwise kernels: where, clamp (scalar and tensor bounds) and lerp (scalar and tensor weight).
//
//   where_contig(dtype, out, cond, a, b, n)                 out = cond ? a : b   (cond is Bool: nonzero byte)
//   where_strided(dtype, out, cond, a, b, desc)             desc operands: out, cond, a, b
//   clamp_contig(dtype, out, a, n, min, max, flags)         flags: CLAMP_HAS_MIN | CLAMP_HAS_MAX
//   clamp_strided(dtype, out, a, desc, min, max, flags)     desc operands: out, a
//   clamp_tensor_contig(dtype, out, a, lo, hi, n, flags)    lo/hi tensors; an absent one is ignored (pass 0)
//   clamp_tensor_strided(dtype, out, a, lo, hi, desc, flags) desc operands: out, a, lo, hi
//   lerp_contig(dtype, out, a, b, w, n)                     out = a + w * (b - a), tensor weight (floats)
//   lerp_strided(dtype, out, a, b, w, desc)                 desc operands: out, a, b, w
//   lerp_scalar_contig(dtype, out, a, b, weight, n)         scalar weight
//   lerp_scalar_strided(dtype, out, a, b, weight, desc)     desc operands: out, a, b
//
// Note [Clamp and NaN]: for floats, a NaN input or a NaN bound gives NaN (wasm min/max propagate NaN), which is
// what PyTorch's vectorised CPU path and its tensor-bound kernel return; integer clamp is min(max(x, lo), hi),
// so lo > hi gives hi, as in PyTorch. Bool is not supported, as in PyTorch.

import { CLAMP_HAS_MAX, CLAMP_HAS_MIN } from './elementwise';
import { maxFirst, minFirst } from './simd';
import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { isKnownDtype, itemSize, ld, scalarToCompute, SIMD_ZERO, st } from './common';
import { STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { blockCount, blockOff0, blockOff1, blockOff2, blockOff3, blockOffsets, descNdim } from './strided';
import { innerSize, innerStride, midSize, midStride } from './strided';

// ---- where ------------------------------------------------------------------------------------------------------

/** One row of where over elements of width T (the dtype only matters through its width). */
function whereRow<T>(o: usize, c: usize, a: usize, b: usize, n: i32, so: isize, sc: isize, sa: isize, sb: isize): void {
  let i = 0;
  if (sizeof<T>() == 4 && so == 4 && sc == 1 && sa == 4 && sb == 4) {
    // 4 lanes at a time: widen 4 condition bytes to i32 lanes, turn nonzero into an all-ones mask, bitselect.
    const zero = v128.load(SIMD_ZERO);
    for (; i + 4 <= n; i += 4) {
      const cw = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(c)));
      const mask = v128.not(i32x4.eq(cw, zero));
      v128.store(o, v128.bitselect(v128.load(a), v128.load(b), mask));
      o += 16;
      c += 4;
      a += 16;
      b += 16;
    }
  }
  for (; i < n; i++) {
    store<T>(o, load<u8>(c) != 0 ? load<T>(a) : load<T>(b));
    o += so;
    c += sc;
    a += sa;
    b += sb;
  }
}

function whereRowBytes(
  width: i32,
  o: usize,
  c: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sc: isize,
  sa: isize,
  sb: isize,
): void {
  if (width == 1) whereRow<u8>(o, c, a, b, n, so, sc, sa, sb);
  else if (width == 2) whereRow<u16>(o, c, a, b, n, so, sc, sa, sb);
  else if (width == 4) whereRow<u32>(o, c, a, b, n, so, sc, sa, sb);
  else whereRow<u64>(o, c, a, b, n, so, sc, sa, sb);
}

/** out[0..n) = cond ? a : b; cond is Bool (any nonzero byte is true), a, b and out have `dtype`. */
export function where_contig(dtype: i32, out: usize, cond: usize, a: usize, b: usize, n: i32): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  whereRowBytes(width, out, cond, a, b, n, width, 1, width, width);
  return STATUS_OK;
}

/** where over strided views; `desc` operands: out, cond, a, b. */
export function where_strided(dtype: i32, out: usize, cond: usize, a: usize, b: usize, desc: usize): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const w = <isize>width;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * w;
  const sc = innerStride(desc, ndim, 1);
  const sa = innerStride(desc, ndim, 2) * w;
  const sb = innerStride(desc, ndim, 3) * w;
  const mo = midStride(desc, ndim, 0) * w;
  const mc = midStride(desc, ndim, 1);
  const ma = midStride(desc, ndim, 2) * w;
  const mb = midStride(desc, ndim, 3) * w;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 4, blk);
    let po = out + <usize>(blockOff0 * w);
    let pc = cond + <usize>blockOff1;
    let pa = a + <usize>(blockOff2 * w);
    let pb = b + <usize>(blockOff3 * w);
    for (let m = 0; m < mid; m++) {
      whereRowBytes(width, po, pc, pa, pb, inner, so, sc, sa, sb);
      po += <usize>mo;
      pc += <usize>mc;
      pa += <usize>ma;
      pb += <usize>mb;
    }
  }
  return STATUS_OK;
}

// ---- clamp --------------------------------------------------------------------------------------------------------

/** min(max(x, lo), hi) with only the present bounds; floats propagate NaN (Note [Clamp and NaN]). */
// @ts-ignore: decorator
@inline
function clampValue<C>(x: C, lo: C, hi: C, flags: i32): C {
  if (isFloat<C>()) {
    // Ties keep x (Note [Signed zero ties] in simd.ts); a NaN bound still gives NaN (Note [Clamp and NaN]).
    if (flags & CLAMP_HAS_MIN) x = maxFirst<C>(x, lo);
    if (flags & CLAMP_HAS_MAX) x = minFirst<C>(x, hi);
  } else {
    if (flags & CLAMP_HAS_MIN) x = x < lo ? lo : x;
    if (flags & CLAMP_HAS_MAX) x = x > hi ? hi : x;
  }
  return x;
}

/**
 * One row of clamp. With tensor bounds (`tensorBounds`), lo/hi are read at pl/ph with strides sl/sh; otherwise
 * they are the scalars `slo`/`shi`, converted to C as a PyTorch Scalar converts to the dtype.
 */
function clampKernel<S, C>(
  o: usize,
  a: usize,
  pl: usize,
  ph: usize,
  n: i32,
  so: isize,
  sa: isize,
  sl: isize,
  sh: isize,
  slo: f64,
  shi: f64,
  flags: i32,
  tensorBounds: bool,
): void {
  if (!tensorBounds) {
    const lo = scalarToCompute<S, C>(slo);
    const hi = scalarToCompute<S, C>(shi);
    for (let i = 0; i < n; i++) {
      st<S, C>(o, clampValue<C>(ld<S, C>(a), lo, hi, flags));
      o += so;
      a += sa;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const lo: C = flags & CLAMP_HAS_MIN ? ld<S, C>(pl) : <C>0;
    const hi: C = flags & CLAMP_HAS_MAX ? ld<S, C>(ph) : <C>0;
    st<S, C>(o, clampValue<C>(ld<S, C>(a), lo, hi, flags));
    o += so;
    a += sa;
    pl += sl;
    ph += sh;
  }
}

function clampRow(
  dtype: i32,
  o: usize,
  a: usize,
  pl: usize,
  ph: usize,
  n: i32,
  so: isize,
  sa: isize,
  sl: isize,
  sh: isize,
  slo: f64,
  shi: f64,
  flags: i32,
  tensorBounds: bool,
): i32 {
  switch (dtype) {
    case DT_U8:
      clampKernel<u8, i32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_I8:
      clampKernel<i8, i32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_I16:
      clampKernel<i16, i32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_I32:
      clampKernel<i32, i32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_I64:
      clampKernel<i64, i64>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_F16:
      clampKernel<u16, f32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_BF16:
      clampKernel<u32, f32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_F32:
      clampKernel<f32, f32>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    case DT_F64:
      clampKernel<f64, f64>(o, a, pl, ph, n, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      break;
    default:
      return STATUS_UNSUPPORTED; // Bool and unknown codes
  }
  return STATUS_OK;
}

// @ts-ignore: decorator
@inline
function clampSupported(dtype: i32): bool {
  return isKnownDtype(dtype) && dtype != DT_BOOL;
}

/** out[0..n) = clamp(a, min, max) with scalar bounds; `flags` says which bounds are present. */
export function clamp_contig(dtype: i32, out: usize, a: usize, n: i32, min: f64, max: f64, flags: i32): i32 {
  if (!clampSupported(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  return clampRow(dtype, out, a, 0, 0, n, e, e, 0, 0, min, max, flags, false);
}

/** out[0..n) = clamp(a, lo, hi) with tensor bounds of `dtype`; pass 0 for an absent bound and clear its flag. */
export function clamp_tensor_contig(dtype: i32, out: usize, a: usize, lo: usize, hi: usize, n: i32, flags: i32): i32 {
  if (!clampSupported(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  return clampRow(dtype, out, a, lo, hi, n, e, e, e, e, 0, 0, flags, true);
}

function clampStrided(
  dtype: i32,
  out: usize,
  a: usize,
  lo: usize,
  hi: usize,
  desc: usize,
  slo: f64,
  shi: f64,
  flags: i32,
  tensorBounds: bool,
): i32 {
  if (!clampSupported(dtype)) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  const nops = tensorBounds ? 4 : 2;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * e;
  const sa = innerStride(desc, ndim, 1) * e;
  const sl: isize = tensorBounds ? innerStride(desc, ndim, 2) * e : 0;
  const sh: isize = tensorBounds ? innerStride(desc, ndim, 3) * e : 0;
  const mo = midStride(desc, ndim, 0) * e;
  const ma = midStride(desc, ndim, 1) * e;
  const ml: isize = tensorBounds ? midStride(desc, ndim, 2) * e : 0;
  const mh: isize = tensorBounds ? midStride(desc, ndim, 3) * e : 0;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, nops, blk);
    let po = out + <usize>(blockOff0 * e);
    let pa = a + <usize>(blockOff1 * e);
    let pl = lo + <usize>(blockOff2 * e);
    let ph = hi + <usize>(blockOff3 * e);
    for (let m = 0; m < mid; m++) {
      clampRow(dtype, po, pa, pl, ph, inner, so, sa, sl, sh, slo, shi, flags, tensorBounds);
      po += <usize>mo;
      pa += <usize>ma;
      pl += <usize>ml;
      ph += <usize>mh;
    }
  }
  return STATUS_OK;
}

/** clamp_contig over strided views; `desc` operands: out, a. */
export function clamp_strided(dtype: i32, out: usize, a: usize, desc: usize, min: f64, max: f64, flags: i32): i32 {
  return clampStrided(dtype, out, a, 0, 0, desc, min, max, flags, false);
}

/** clamp_tensor_contig over strided views; `desc` operands: out, a, lo, hi (give an absent bound stride 0). */
export function clamp_tensor_strided(
  dtype: i32,
  out: usize,
  a: usize,
  lo: usize,
  hi: usize,
  desc: usize,
  flags: i32,
): i32 {
  return clampStrided(dtype, out, a, lo, hi, desc, 0, 0, flags, true);
}

// ---- lerp ---------------------------------------------------------------------------------------------------------

/** PyTorch's lerp: the formula is chosen by |w| < 0.5 so that both ends are reproduced exactly. */
// @ts-ignore: decorator
@inline
function lerpValue<C>(a: C, b: C, w: C): C {
  return abs<C>(w) < <C>0.5 ? a + w * (b - a) : b - (b - a) * (<C>1 - w);
}

/** One row of lerp; with `tensorWeight` false the weight is the scalar `sw` (opmath precision, as PyTorch). */
function lerpKernel<S, C>(
  o: usize,
  a: usize,
  b: usize,
  w: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  sw: isize,
  weight: f64,
  tensorWeight: bool,
): void {
  const ws = <C>weight;
  for (let i = 0; i < n; i++) {
    const wv: C = tensorWeight ? ld<S, C>(w) : ws;
    st<S, C>(o, lerpValue<C>(ld<S, C>(a), ld<S, C>(b), wv));
    o += so;
    a += sa;
    b += sb;
    w += sw;
  }
}

function lerpRow(
  dtype: i32,
  o: usize,
  a: usize,
  b: usize,
  w: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  sw: isize,
  weight: f64,
  tensorWeight: bool,
): i32 {
  switch (dtype) {
    case DT_F16:
      lerpKernel<u16, f32>(o, a, b, w, n, so, sa, sb, sw, weight, tensorWeight);
      break;
    case DT_BF16:
      lerpKernel<u32, f32>(o, a, b, w, n, so, sa, sb, sw, weight, tensorWeight);
      break;
    case DT_F32:
      lerpKernel<f32, f32>(o, a, b, w, n, so, sa, sb, sw, weight, tensorWeight);
      break;
    case DT_F64:
      lerpKernel<f64, f64>(o, a, b, w, n, so, sa, sb, sw, weight, tensorWeight);
      break;
    default:
      return STATUS_UNSUPPORTED; // lerp is floating-only in PyTorch
  }
  return STATUS_OK;
}

// @ts-ignore: decorator
@inline
function lerpSupported(dtype: i32): bool {
  return dtype == DT_F32 || dtype == DT_F64 || dtype == DT_F16 || dtype == DT_BF16;
}

/** out[0..n) = lerp(a, b, w) with a tensor weight w (same dtype). Floating dtypes only. */
export function lerp_contig(dtype: i32, out: usize, a: usize, b: usize, w: usize, n: i32): i32 {
  if (!lerpSupported(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  return lerpRow(dtype, out, a, b, w, n, e, e, e, e, 0, true);
}

/** out[0..n) = lerp(a, b, weight) with a scalar weight. */
export function lerp_scalar_contig(dtype: i32, out: usize, a: usize, b: usize, weight: f64, n: i32): i32 {
  if (!lerpSupported(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  return lerpRow(dtype, out, a, b, 0, n, e, e, e, 0, weight, false);
}

function lerpStrided(
  dtype: i32,
  out: usize,
  a: usize,
  b: usize,
  w: usize,
  desc: usize,
  weight: f64,
  tensorWeight: bool,
): i32 {
  if (!lerpSupported(dtype)) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * e;
  const sa = innerStride(desc, ndim, 1) * e;
  const sb = innerStride(desc, ndim, 2) * e;
  const sw: isize = tensorWeight ? innerStride(desc, ndim, 3) * e : 0;
  const mo = midStride(desc, ndim, 0) * e;
  const ma = midStride(desc, ndim, 1) * e;
  const mb = midStride(desc, ndim, 2) * e;
  const mw: isize = tensorWeight ? midStride(desc, ndim, 3) * e : 0;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, tensorWeight ? 4 : 3, blk);
    let po = out + <usize>(blockOff0 * e);
    let pa = a + <usize>(blockOff1 * e);
    let pb = b + <usize>(blockOff2 * e);
    let pw = w + <usize>(blockOff3 * e);
    for (let m = 0; m < mid; m++) {
      lerpRow(dtype, po, pa, pb, pw, inner, so, sa, sb, sw, weight, tensorWeight);
      po += <usize>mo;
      pa += <usize>ma;
      pb += <usize>mb;
      pw += <usize>mw;
    }
  }
  return STATUS_OK;
}

/** lerp_contig over strided views; `desc` operands: out, a, b, w. */
export function lerp_strided(dtype: i32, out: usize, a: usize, b: usize, w: usize, desc: usize): i32 {
  return lerpStrided(dtype, out, a, b, w, desc, 0, true);
}

/** lerp_scalar_contig over strided views; `desc` operands: out, a, b. */
export function lerp_scalar_strided(dtype: i32, out: usize, a: usize, b: usize, weight: f64, desc: usize): i32 {
  return lerpStrided(dtype, out, a, b, 0, desc, weight, false);
}
