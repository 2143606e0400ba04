// Lane-generic v128 helpers: `vAdd<S>(a, b)` picks f32x4.add, i16x8.add, ... from the storage tag S
// (Note [Storage tags]). Bool vectors are u8 lanes. Every helper is @inline and branches only on compile-time
// facts about S, so each instantiation is a single instruction.
//
// `hasVector<S>()` tells whether S has v128 lanes at all (f16 and bf16 do not: their kernels run scalar in f32).

import { isBFloat16Tag, isHalfTag } from './common';

/** True for every storage tag that maps to v128 lanes (all but f16 and bf16). */
// @ts-ignore: decorator
@inline
export function hasVector<S>(): bool {
  return !isHalfTag<S>() && !isBFloat16Tag<S>();
}

/** True when S has a lane-wise multiply (i8x16 has none). */
// @ts-ignore: decorator
@inline
export function hasVectorMul<S>(): bool {
  return hasVector<S>() && (isFloat<S>() || sizeof<S>() >= 2);
}

/** True when S has lane-wise min/max (i64x2 has none). */
// @ts-ignore: decorator
@inline
export function hasVectorMinMax<S>(): bool {
  return hasVector<S>() && (isFloat<S>() || sizeof<S>() <= 4);
}

// @ts-ignore: decorator
@inline
export function vSplatF64<S>(v: f64): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.splat(<f32>v) : f64x2.splat(v);
  if (isBoolean<S>()) return i8x16.splat(v != 0 ? 1 : 0);
  if (sizeof<S>() == 1) return i8x16.splat(<i8><i32>v);
  if (sizeof<S>() == 2) return i16x8.splat(<i16><i32>v);
  if (sizeof<S>() == 4) return i32x4.splat(<i32>v);
  return i64x2.splat(<i64>v);
}

/** Splats a value already in the compute type C of S (i32 for narrow ints, i64, f32, f64). */
// @ts-ignore: decorator
@inline
export function vSplat<S, C>(v: C): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.splat(<f32>v) : f64x2.splat(<f64>v);
  if (sizeof<S>() == 1) return i8x16.splat(<i8>v);
  if (sizeof<S>() == 2) return i16x8.splat(<i16>v);
  if (sizeof<S>() == 4) return i32x4.splat(<i32>v);
  return i64x2.splat(<i64>v);
}

// @ts-ignore: decorator
@inline
export function vAdd<S>(a: v128, b: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.add(a, b) : f64x2.add(a, b);
  if (sizeof<S>() == 1) return i8x16.add(a, b);
  if (sizeof<S>() == 2) return i16x8.add(a, b);
  if (sizeof<S>() == 4) return i32x4.add(a, b);
  return i64x2.add(a, b);
}

// @ts-ignore: decorator
@inline
export function vSub<S>(a: v128, b: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.sub(a, b) : f64x2.sub(a, b);
  if (sizeof<S>() == 1) return i8x16.sub(a, b);
  if (sizeof<S>() == 2) return i16x8.sub(a, b);
  if (sizeof<S>() == 4) return i32x4.sub(a, b);
  return i64x2.sub(a, b);
}

/** Lane multiply; only for tags with hasVectorMul<S>(). */
// @ts-ignore: decorator
@inline
export function vMul<S>(a: v128, b: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.mul(a, b) : f64x2.mul(a, b);
  if (sizeof<S>() == 2) return i16x8.mul(a, b);
  if (sizeof<S>() == 4) return i32x4.mul(a, b);
  return i64x2.mul(a, b);
}

/** a + b * c, fused where the relaxed-SIMD build and the engine allow it (floats only). */
// @ts-ignore: decorator
@inline
export function vMulAdd<S>(b: v128, c: v128, a: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && isFloat<S>()) {
    return sizeof<S>() == 4 ? f32x4.relaxed_madd(b, c, a) : f64x2.relaxed_madd(b, c, a);
  }
  return vAdd<S>(a, vMul<S>(b, c));
}

/** a - b * c (see vMulAdd). */
// @ts-ignore: decorator
@inline
export function vNegMulAdd<S>(b: v128, c: v128, a: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD && isFloat<S>()) {
    return sizeof<S>() == 4 ? f32x4.relaxed_nmadd(b, c, a) : f64x2.relaxed_nmadd(b, c, a);
  }
  return vSub<S>(a, vMul<S>(b, c));
}

/** Lane minimum; floats propagate NaN (f32x4.min), so this is torch.minimum. Needs hasVectorMinMax<S>(). */
// @ts-ignore: decorator
@inline
export function vMin<S>(a: v128, b: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.min(a, b) : f64x2.min(a, b);
  if (sizeof<S>() == 1) return isSigned<S>() ? i8x16.min_s(a, b) : i8x16.min_u(a, b);
  if (sizeof<S>() == 2) return isSigned<S>() ? i16x8.min_s(a, b) : i16x8.min_u(a, b);
  return isSigned<S>() ? i32x4.min_s(a, b) : i32x4.min_u(a, b);
}

/** Lane maximum (see vMin). */
// @ts-ignore: decorator
@inline
export function vMax<S>(a: v128, b: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.max(a, b) : f64x2.max(a, b);
  if (sizeof<S>() == 1) return isSigned<S>() ? i8x16.max_s(a, b) : i8x16.max_u(a, b);
  if (sizeof<S>() == 2) return isSigned<S>() ? i16x8.max_s(a, b) : i16x8.max_u(a, b);
  return isSigned<S>() ? i32x4.max_s(a, b) : i32x4.max_u(a, b);
}

// Note [Signed zero ties]: PyTorch's scalar CPU kernels compute maximum, minimum, clamp and relu with std::max /
// std::min, `a < b ? b : a`, so a tie keeps the first operand: maximum(-0, +0) is -0, relu(-0) is -0, and
// amax over [-0, +0] is -0. wasm's min / max order -0 below +0 instead. These helpers keep the first operand on
// ties and give NaN when either operand is NaN (PyTorch's NaN-propagating maximum / minimum). PyTorch's AVX2
// blocks of large contiguous tensors return the second operand on ties for maximum / minimum (and tensor-bound
// clamp); Switchyard keeps the first everywhere, documented in README.

/** `a < b ? b : a`, or NaN when either is NaN (Note [Signed zero ties]). */
// @ts-ignore: decorator
@inline
export function maxFirst<C>(a: C, b: C): C {
  if (isFloat<C>() && (a != a || b != b)) return a + b;
  return a < b ? b : a;
}

/** `b < a ? b : a`, or NaN when either is NaN (Note [Signed zero ties]). */
// @ts-ignore: decorator
@inline
export function minFirst<C>(a: C, b: C): C {
  if (isFloat<C>() && (a != a || b != b)) return a + b;
  return b < a ? b : a;
}

/** Lane maximum keeping the first operand on ties (Note [Signed zero ties]); vMax for integer lanes. */
// @ts-ignore: decorator
@inline
export function vMaxFirst<S>(a: v128, b: v128): v128 {
  if (!isFloat<S>()) return vMax<S>(a, b);
  if (sizeof<S>() == 4) {
    const r = v128.bitselect(b, a, f32x4.lt(a, b));
    return v128.bitselect(f32x4.add(a, b), r, v128.or(f32x4.ne(a, a), f32x4.ne(b, b)));
  }
  const r = v128.bitselect(b, a, f64x2.lt(a, b));
  return v128.bitselect(f64x2.add(a, b), r, v128.or(f64x2.ne(a, a), f64x2.ne(b, b)));
}

/** Lane minimum keeping the first operand on ties (Note [Signed zero ties]); vMin for integer lanes. */
// @ts-ignore: decorator
@inline
export function vMinFirst<S>(a: v128, b: v128): v128 {
  if (!isFloat<S>()) return vMin<S>(a, b);
  if (sizeof<S>() == 4) {
    const r = v128.bitselect(b, a, f32x4.lt(b, a));
    return v128.bitselect(f32x4.add(a, b), r, v128.or(f32x4.ne(a, a), f32x4.ne(b, b)));
  }
  const r = v128.bitselect(b, a, f64x2.lt(b, a));
  return v128.bitselect(f64x2.add(a, b), r, v128.or(f64x2.ne(a, a), f64x2.ne(b, b)));
}

// @ts-ignore: decorator
@inline
export function vNeg<S>(a: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.neg(a) : f64x2.neg(a);
  if (sizeof<S>() == 1) return i8x16.neg(a);
  if (sizeof<S>() == 2) return i16x8.neg(a);
  if (sizeof<S>() == 4) return i32x4.neg(a);
  return i64x2.neg(a);
}

/** Lane absolute value; unsigned lanes are returned unchanged. */
// @ts-ignore: decorator
@inline
export function vAbs<S>(a: v128): v128 {
  if (isFloat<S>()) return sizeof<S>() == 4 ? f32x4.abs(a) : f64x2.abs(a);
  if (!isSigned<S>()) return a;
  if (sizeof<S>() == 1) return i8x16.abs(a);
  if (sizeof<S>() == 2) return i16x8.abs(a);
  if (sizeof<S>() == 4) return i32x4.abs(a);
  return i64x2.abs(a);
}

/** Lane-wise comparison producing all-ones / all-zeros lanes of S's width. `cmp`: 0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge. */
// @ts-ignore: decorator
@inline
export function vCompare<S>(cmp: i32, a: v128, b: v128): v128 {
  if (isFloat<S>()) {
    if (sizeof<S>() == 4) {
      return cmp == 0
        ? f32x4.eq(a, b)
        : cmp == 1
        ? f32x4.ne(a, b)
        : cmp == 2
        ? f32x4.lt(a, b)
        : cmp == 3
        ? f32x4.le(a, b)
        : cmp == 4
        ? f32x4.gt(a, b)
        : f32x4.ge(a, b);
    }
    return cmp == 0
      ? f64x2.eq(a, b)
      : cmp == 1
      ? f64x2.ne(a, b)
      : cmp == 2
      ? f64x2.lt(a, b)
      : cmp == 3
      ? f64x2.le(a, b)
      : cmp == 4
      ? f64x2.gt(a, b)
      : f64x2.ge(a, b);
  }
  if (sizeof<S>() == 1) {
    if (isSigned<S>()) {
      return cmp == 0
        ? i8x16.eq(a, b)
        : cmp == 1
        ? i8x16.ne(a, b)
        : cmp == 2
        ? i8x16.lt_s(a, b)
        : cmp == 3
        ? i8x16.le_s(a, b)
        : cmp == 4
        ? i8x16.gt_s(a, b)
        : i8x16.ge_s(a, b);
    }
    return cmp == 0
      ? i8x16.eq(a, b)
      : cmp == 1
      ? i8x16.ne(a, b)
      : cmp == 2
      ? i8x16.lt_u(a, b)
      : cmp == 3
      ? i8x16.le_u(a, b)
      : cmp == 4
      ? i8x16.gt_u(a, b)
      : i8x16.ge_u(a, b);
  }
  if (sizeof<S>() == 2) {
    return cmp == 0
      ? i16x8.eq(a, b)
      : cmp == 1
      ? i16x8.ne(a, b)
      : cmp == 2
      ? i16x8.lt_s(a, b)
      : cmp == 3
      ? i16x8.le_s(a, b)
      : cmp == 4
      ? i16x8.gt_s(a, b)
      : i16x8.ge_s(a, b);
  }
  if (sizeof<S>() == 4) {
    return cmp == 0
      ? i32x4.eq(a, b)
      : cmp == 1
      ? i32x4.ne(a, b)
      : cmp == 2
      ? i32x4.lt_s(a, b)
      : cmp == 3
      ? i32x4.le_s(a, b)
      : cmp == 4
      ? i32x4.gt_s(a, b)
      : i32x4.ge_s(a, b);
  }
  return cmp == 0
    ? i64x2.eq(a, b)
    : cmp == 1
    ? i64x2.ne(a, b)
    : cmp == 2
    ? i64x2.lt_s(a, b)
    : cmp == 3
    ? i64x2.le_s(a, b)
    : cmp == 4
    ? i64x2.gt_s(a, b)
    : i64x2.ge_s(a, b);
}
