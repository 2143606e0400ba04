// Dtype conversion: cast_contig(srcDtype, dstDtype, out, a, n) and cast_strided(srcDtype, dstDtype, out, a, desc)
// for all 100 pairs of the ten dtypes.
//
// Note [Cast semantics] (PyTorch's `static_cast` in c10::convert, made trap-free):
// - float -> integer truncates toward zero; NaN and out-of-range values give what PyTorch on x86-64 gives
//   (Note [Float to int casts] in common.ts: int64 and uint8 through int64, int32/int16/int8 through int32,
//   the "integer indefinite" minimum for values outside the intermediate type; narrow types then wrap).
// - integer -> narrower integer wraps (two's complement); i64 <-> i64 and i32 -> i64 are exact.
// - anything -> Bool is `!= 0` (NaN is true); Bool -> anything is 0 or 1.
// - -> f16 / bf16 rounds to nearest even. Sources wider than f32 (f64, i32, i64) go through f32 first, exactly as
//   c10::Half(float(x)) does, so results match PyTorch bit for bit (double rounding included).
// - -> f32 from i64 / f64 rounds to nearest even in one step.

import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { elemBytes, isKnownDtype, itemSize, ld, st } from './common';
import { STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { blockCount, blockOff0, blockOff1, blockOffsets, descNdim, innerSize, innerStride } from './strided';
import { midSize, midStride } from './strided';

/**
 * v128 conversions for the pairs that have single instructions; returns how many elements it did (whole
 * vectors only). Everything else goes through the scalar loop.
 */
// @ts-ignore: decorator
@inline
function castVector<SS, DS>(o: usize, a: usize, n: i32): i32 {
  let i = 0;
  if (isFloat<SS>() && sizeof<SS>() == 4 && isFloat<DS>() && sizeof<DS>() == 8) {
    for (; i + 4 <= n; i += 4) {
      const x = v128.load(a);
      v128.store(o, f64x2.promote_low_f32x4(x));
      v128.store(o, f64x2.promote_low_f32x4(i8x16.shuffle(x, x, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)), 16);
      a += 16;
      o += 32;
    }
  } else if (isFloat<SS>() && sizeof<SS>() == 8 && isFloat<DS>() && sizeof<DS>() == 4) {
    for (; i + 4 <= n; i += 4) {
      const lo = f32x4.demote_f64x2_zero(v128.load(a));
      const hi = f32x4.demote_f64x2_zero(v128.load(a, 16));
      v128.store(o, i8x16.shuffle(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23));
      a += 32;
      o += 16;
    }
  } else if (isInteger<SS>() && isSigned<SS>() && sizeof<SS>() == 4 && isFloat<DS>() && sizeof<DS>() == 4) {
    for (; i + 4 <= n; i += 4) {
      v128.store(o, f32x4.convert_i32x4_s(v128.load(a)));
      a += 16;
      o += 16;
    }
  } else if (isFloat<SS>() && sizeof<SS>() == 4 && isInteger<DS>() && isSigned<DS>() && sizeof<DS>() == 4) {
    // Saturating truncation, then INT32_MIN for NaN and lanes outside int32 (Note [Float to int casts]).
    const lo = f32x4.splat(-2147483648.0), hi = f32x4.splat(2147483648.0), indefinite = i32x4.splat(i32.MIN_VALUE);
    for (; i + 4 <= n; i += 4) {
      const x = v128.load(a);
      const inRange = v128.and(f32x4.ge(x, lo), f32x4.lt(x, hi));
      v128.store(o, v128.bitselect(i32x4.trunc_sat_f32x4_s(x), indefinite, inRange));
      a += 16;
      o += 16;
    }
  } else if (isInteger<SS>() && sizeof<SS>() == 1 && !isSigned<SS>() && isFloat<DS>() && sizeof<DS>() == 4) {
    // u8 (and Bool) -> f32: zero-extend 4 bytes to i32 lanes, then convert.
    for (; i + 4 <= n; i += 4) {
      const x = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(a)));
      v128.store(o, f32x4.convert_i32x4_s(x));
      a += 4;
      o += 16;
    }
  }
  return i;
}

/** One row: out[i*so] = convert(a[i*sa]). SS/DS are storage tags, SC the source compute type. */
function castKernel<SS, SC, DS>(o: usize, a: usize, n: i32, so: isize, sa: isize): void {
  let i = 0;
  if (so == <isize>elemBytes<DS>() && sa == <isize>elemBytes<SS>()) {
    i = castVector<SS, DS>(o, a, n);
    o += <usize>i * elemBytes<DS>();
    a += <usize>i * elemBytes<SS>();
  }
  for (; i < n; i++) {
    st<DS, SC>(o, ld<SS, SC>(a));
    o += so;
    a += sa;
  }
}

/** Dispatches on the destination dtype for a fixed source. */
function castTo<SS, SC>(dst: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): void {
  switch (dst) {
    case DT_U8:
      castKernel<SS, SC, u8>(o, a, n, so, sa);
      break;
    case DT_I8:
      castKernel<SS, SC, i8>(o, a, n, so, sa);
      break;
    case DT_I16:
      castKernel<SS, SC, i16>(o, a, n, so, sa);
      break;
    case DT_I32:
      castKernel<SS, SC, i32>(o, a, n, so, sa);
      break;
    case DT_I64:
      castKernel<SS, SC, i64>(o, a, n, so, sa);
      break;
    case DT_F16:
      castKernel<SS, SC, u16>(o, a, n, so, sa);
      break;
    case DT_BF16:
      castKernel<SS, SC, u32>(o, a, n, so, sa);
      break;
    case DT_F32:
      castKernel<SS, SC, f32>(o, a, n, so, sa);
      break;
    case DT_F64:
      castKernel<SS, SC, f64>(o, a, n, so, sa);
      break;
    case DT_BOOL:
      castKernel<SS, SC, bool>(o, a, n, so, sa);
      break;
  }
}

/** One row of the (src, dst) conversion; both dtypes must be known. */
function castRow(src: i32, dst: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): void {
  if (src == dst && so == sa && so == <isize>itemSize(src)) {
    memory.copy(o, a, <usize>n * <usize>itemSize(src));
    return;
  }
  switch (src) {
    case DT_U8:
      castTo<u8, i32>(dst, o, a, n, so, sa);
      break;
    case DT_I8:
      castTo<i8, i32>(dst, o, a, n, so, sa);
      break;
    case DT_I16:
      castTo<i16, i32>(dst, o, a, n, so, sa);
      break;
    case DT_I32:
      castTo<i32, i32>(dst, o, a, n, so, sa);
      break;
    case DT_I64:
      castTo<i64, i64>(dst, o, a, n, so, sa);
      break;
    case DT_F16:
      castTo<u16, f32>(dst, o, a, n, so, sa);
      break;
    case DT_BF16:
      castTo<u32, f32>(dst, o, a, n, so, sa);
      break;
    case DT_F32:
      castTo<f32, f32>(dst, o, a, n, so, sa);
      break;
    case DT_F64:
      castTo<f64, f64>(dst, o, a, n, so, sa);
      break;
    case DT_BOOL:
      castTo<bool, i32>(dst, o, a, n, so, sa);
      break;
  }
}

/** out[0..n) (dstDtype) = a[0..n) (srcDtype) converted per Note [Cast semantics]; both contiguous. */
export function cast_contig(srcDtype: i32, dstDtype: i32, out: usize, a: usize, n: i32): i32 {
  if (!isKnownDtype(srcDtype) || !isKnownDtype(dstDtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  castRow(srcDtype, dstDtype, out, a, n, <isize>itemSize(dstDtype), <isize>itemSize(srcDtype));
  return STATUS_OK;
}

/** cast_contig over strided views; `desc` operands: out, a (Note [Strided descriptor]). */
export function cast_strided(srcDtype: i32, dstDtype: i32, out: usize, a: usize, desc: usize): i32 {
  if (!isKnownDtype(srcDtype) || !isKnownDtype(dstDtype)) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const eo = <isize>itemSize(dstDtype);
  const ea = <isize>itemSize(srcDtype);
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * eo;
  const sa = innerStride(desc, ndim, 1) * ea;
  const mo = midStride(desc, ndim, 0) * eo;
  const ma = midStride(desc, ndim, 1) * ea;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 2, blk);
    let po = out + <usize>(blockOff0 * eo);
    let pa = a + <usize>(blockOff1 * ea);
    for (let m = 0; m < mid; m++) {
      castRow(srcDtype, dstDtype, po, pa, inner, so, sa);
      po += <usize>mo;
      pa += <usize>ma;
    }
  }
  return STATUS_OK;
}
