// Shared by reduce.ts, matmul.ts and softmax.ts (and not re-exported by index.ts, so nothing here becomes a wasm
// export): storage markers for the two 16-bit float formats, element access that widens to the compute type,
// and the few SIMD helpers whose spelling depends on the lane type or on the relaxed-SIMD build.
//
// Note [Storage type vs compute type]: every generic kernel takes a storage tag T (common.ts Note [Storage tags]:
// u16 stands for Half, u32 for BFloat16, bool for Bool) and a compute type V, the lane type of the v128
// arithmetic: f32 for f32 / Half / BFloat16, f64 for f64, and the integer type itself for integer max / min
// (the linalg kernels never need common.ts's i32 promotion of narrow integers). This is PyTorch's scalar_t /
// opmath_t split: Half and BFloat16 are widened to f32 on load and rounded once on store.
//
// Note [Constants in hot loops]: on V8 >= 13.6 (Deno 2.9) a v128.const inside a loop (which binaryen produces by
// folding a splat of a literal) makes the loop ~2x slower (reference/TOOLCHAIN.md, Q2 finding a). Kernels that
// need nonzero vector constants in their loops load them from a static table into locals before the loop;
// binaryen cannot fold a load from (imported, shared) memory, so V8 sees ordinary values it keeps in registers.
import { elemBytes, f16ToF32, isBFloat16Tag, isHalfTag, st } from './common';

/** The reduction of an empty dimension has no identity (max, min, argmax, ...): nothing was written. */
export const STATUS_EMPTY_REDUCTION: i32 = 3;
/** nll_loss: a target outside [0, C) that is not ignore_index. Nothing meaningful was written. */
export const STATUS_TARGET_OUT_OF_BOUNDS: i32 = 4;

/** Copies one stored element bit for bit (keeps NaN payloads, which a round trip through f32 would quiet). */
// @ts-ignore: decorator
@inline
export function copyElem<T>(dst: usize, src: usize): void {
  if (elemBytes<T>() == 1) store<u8>(dst, load<u8>(src));
  else if (elemBytes<T>() == 2) store<u16>(dst, load<u16>(src));
  else if (elemBytes<T>() == 4) store<u32>(dst, load<u32>(src));
  else store<u64>(dst, load<u64>(src));
}

/**
 * Loads one vector of V lanes (16 / sizeof<V> elements of T): a plain load when T is V, a widening load for
 * BFloat16 (bf16 is the top half of an f32) and four scalar conversions for Half.
 */
// @ts-ignore: decorator
@inline
export function loadVec<T, V>(p: usize): v128 {
  if (isBFloat16Tag<T>()) return i32x4.shl(v128.load16x4_u(p), 16);
  if (isHalfTag<T>()) {
    let v = f32x4.splat(f16ToF32(load<u16>(p)));
    v = f32x4.replace_lane(v, 1, f16ToF32(load<u16>(p, 2)));
    v = f32x4.replace_lane(v, 2, f16ToF32(load<u16>(p, 4)));
    return f32x4.replace_lane(v, 3, f16ToF32(load<u16>(p, 6)));
  }
  return v128.load(p);
}

/** Stores one vector of V lanes as 16 / sizeof<V> elements of T (rounding per lane for the 16-bit floats). */
// @ts-ignore: decorator
@inline
export function storeVec<T, V>(p: usize, v: v128): void {
  if (isHalfTag<T>() || isBFloat16Tag<T>()) {
    st<T, f32>(p, f32x4.extract_lane(v, 0));
    st<T, f32>(p + 2, f32x4.extract_lane(v, 1));
    st<T, f32>(p + 4, f32x4.extract_lane(v, 2));
    st<T, f32>(p + 6, f32x4.extract_lane(v, 3));
  } else {
    v128.store(p, v);
  }
}

/** a * b + c: relaxed (fused where the engine fuses) in the relaxed build, mul + add otherwise. */
// @ts-ignore: decorator
@inline
export function madd<V>(a: v128, b: v128, c: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return v128.relaxed_madd<V>(a, b, c);
  return v128.add<V>(v128.mul<V>(a, b), c);
}

/** Sum of the lanes of an f32x4 or f64x2. */
// @ts-ignore: decorator
@inline
export function hsum<V>(v: v128): V {
  if (sizeof<V>() == 8) return v128.extract_lane<V>(v, 0) + v128.extract_lane<V>(v, 1);
  return (
    (v128.extract_lane<V>(v, 0) + v128.extract_lane<V>(v, 1)) +
    (v128.extract_lane<V>(v, 2) + v128.extract_lane<V>(v, 3))
  );
}

/** Rounds `p` up to a multiple of 64 bytes (a cache line; also what v128 and f64 alignment need). */
// @ts-ignore: decorator
@inline
export function alignUp64(p: usize): usize {
  return (p + 63) & ~(<usize>63);
}
