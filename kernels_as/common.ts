// Shared definitions for every kernel family: dtype codes, element sizes, half-precision conversions,
// a generic (slow, any-dtype) load/store used by strided and scalar paths, and the heap base.
//
// Note [Dtype codes]: the numbers are PyTorch's ScalarType codes so that a dtype crosses from TypeScript
// into wasm (and WGSL) unchanged. Only the ten dtypes Switchyard stores are handled; any other code is
// "unsupported" and every kernel returns a nonzero status for it instead of touching memory.
//
// Note [Status codes]: every exported kernel returns an i32: 0 = done, STATUS_UNSUPPORTED = this (op, dtype)
// combination has no kernel and nothing was written, STATUS_BAD_ARGUMENT = an argument (opcode, ndim) is out
// of range. The TypeScript side turns STATUS_UNSUPPORTED into PyTorch's `"add" not implemented for 'Bool'`.

export const DT_U8: i32 = 0;
export const DT_I8: i32 = 1;
export const DT_I16: i32 = 2;
export const DT_I32: i32 = 3;
export const DT_I64: i32 = 4;
export const DT_F16: i32 = 5;
export const DT_F32: i32 = 6;
export const DT_F64: i32 = 7;
export const DT_BOOL: i32 = 11;
export const DT_BF16: i32 = 15;

export const STATUS_OK: i32 = 0;
export const STATUS_UNSUPPORTED: i32 = 1;
export const STATUS_BAD_ARGUMENT: i32 = 2;

/** Maximum number of dimensions a strided descriptor may carry (after coalescing on the TS side). */
export const MAX_DIMS: i32 = 64;

/** Bytes per element of `dtype`, or 0 for a code this module does not know. */
export function itemSize(dtype: i32): i32 {
  switch (dtype) {
    case DT_U8:
    case DT_I8:
    case DT_BOOL:
      return 1;
    case DT_I16:
    case DT_F16:
    case DT_BF16:
      return 2;
    case DT_I32:
    case DT_F32:
      return 4;
    case DT_I64:
    case DT_F64:
      return 8;
  }
  return 0;
}

/** True for the ten dtype codes this module stores. */
// @ts-ignore: decorator
@inline
export function isKnownDtype(dtype: i32): bool {
  return itemSize(dtype) != 0;
}

/** True for f16, bf16, f32, f64. */
// @ts-ignore: decorator
@inline
export function isFloatingDtype(dtype: i32): bool {
  return dtype == DT_F32 || dtype == DT_F64 || dtype == DT_F16 || dtype == DT_BF16;
}

/** True for u8, i8, i16, i32, i64 (not bool). */
// @ts-ignore: decorator
@inline
export function isIntegralDtype(dtype: i32): bool {
  return dtype == DT_U8 || dtype == DT_I8 || dtype == DT_I16 || dtype == DT_I32 || dtype == DT_I64;
}

// ---------------------------------------------------------------------------------------------------------
// IEEE binary16 and bfloat16 conversions (bit exact, round-to-nearest-even).

/**
 * IEEE half bits to f32: exact for every one of the 65536 patterns (NaN payloads kept in the top bits). Branch free
 * and short, as it is inlined into every float16 loop: the half's exponent and mantissa, moved to the f32 fields
 * (`<< 13`), read as an f32 2^112 times too small for normal and subnormal halves alike (the exponent biases differ
 * by 112, and an f32 subnormal scales the same way), so one exact multiply by 2^112 finishes them; infinities and
 * NaNs (exponent 31) get the all-ones f32 exponent instead.
 */
// @ts-ignore: decorator
@inline
export function f16ToF32(bits: u16): f32 {
  const h = <u32>bits;
  const shifted = (h & 0x7fff) << 13;
  const finite = reinterpret<u32>(reinterpret<f32>(shifted) * reinterpret<f32>(0x77800000)); // 2^112
  const magnitude = select<u32>(shifted | 0x7f800000, finite, (h & 0x7c00) == 0x7c00);
  return reinterpret<f32>(((h & 0x8000) << 16) | magnitude);
}

/**
 * f32 to IEEE half bits with round-to-nearest-even. Overflow (|x| >= 65520) gives ±inf, values below half
 * the smallest subnormal give ±0, NaN stays NaN (quiet, top payload bits kept).
 */
export function f32ToF16(x: f32): u16 {
  const u = reinterpret<u32>(x);
  const sign = (u >> 16) & 0x8000;
  let a = u & 0x7fffffff;
  if (a >= 0x7f800000) {
    // inf stays inf; NaN becomes a quiet NaN with the payload's top bits.
    return <u16>(sign | 0x7c00 | (a > 0x7f800000 ? 0x200 | ((a >> 13) & 0x3ff) : 0));
  }
  if (a >= 0x477ff000) return <u16>(sign | 0x7c00); // rounds to inf (65520 is the tie, 65504 is odd)
  if (a < 0x38800000) {
    // Result is subnormal (or rounds up to the smallest normal): adding 0.5 puts the half ulp (2^-24) at the
    // f32 ulp of 0.5, so the hardware add performs the round-to-nearest-even for us.
    const f = reinterpret<f32>(a) + reinterpret<f32>(0x3f000000);
    return <u16>(sign | (reinterpret<u32>(f) - 0x3f000000));
  }
  // Normal: rebias the exponent (-112 << 23) and round on bit 13 with ties to even.
  const odd = (a >> 13) & 1;
  a += 0xc8000fff + odd;
  return <u16>(sign | (a >> 13));
}

/** bfloat16 bits to f32 (exact: bf16 is the top half of an f32). */
// @ts-ignore: decorator
@inline
export function bf16ToF32(bits: u16): f32 {
  return reinterpret<f32>(<u32>bits << 16);
}

/** f32 to bfloat16 bits with round-to-nearest-even; NaN stays NaN (quieted), overflow rounds to ±inf. */
// @ts-ignore: decorator
@inline
export function f32ToBf16(x: f32): u16 {
  const u = reinterpret<u32>(x);
  if ((u & 0x7fffffff) > 0x7f800000) return <u16>((u >> 16) | 0x40);
  return <u16>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// ---------------------------------------------------------------------------------------------------------
// Float -> integer conversions as PyTorch 1.13 on x86-64 performs them, without trapping.
//
// Note [Float to int casts]: PyTorch's casts are C casts (c10::convert), which truncate toward zero and are
// undefined for NaN and out-of-range values; x86-64 compilers emit cvttss2si / cvttsd2si, which return the
// "integer indefinite" value (the type's minimum) for those. So, checked against PyTorch 1.13:
// - to int64: truncation, or INT64_MIN for NaN, infinities and values outside int64;
// - to int32, int16 and int8: a 32-bit conversion (INT32_MIN when outside int32 or NaN), then wrapped to the
//   width, so 1e10 -> int16 0 and 70000.0 -> int16 4464;
// - to uint8: through int64 first (c10's static_cast_with_inter_type<uint8_t>), then wrapped, so -1.5 -> 255
//   and 3000000001.0 (float64) -> 1.
// wasm's own truncation traps on those inputs, and its saturating form clamps instead, hence these helpers.

const TWO_POW_31: f64 = 2147483648.0;
const TWO_POW_63: f64 = 9223372036854775808.0;

// @ts-ignore: decorator
@inline
export function f64ToI32X86(v: f64): i32 {
  return v > -TWO_POW_31 - 1.0 && v < TWO_POW_31 ? <i32>v : i32.MIN_VALUE;
}

// @ts-ignore: decorator
@inline
export function f64ToI64X86(v: f64): i64 {
  return v >= -TWO_POW_63 && v < TWO_POW_63 ? <i64>v : i64.MIN_VALUE;
}

// ---------------------------------------------------------------------------------------------------------
// Generic element access (slow path; one switch per element).

/** Loads one element of `dtype` at `ptr` as f64 (exact for every dtype except i64 beyond 2^53). */
export function loadAsF64(dtype: i32, ptr: usize): f64 {
  switch (dtype) {
    case DT_U8:
    case DT_BOOL:
      return <f64>load<u8>(ptr);
    case DT_I8:
      return <f64>load<i8>(ptr);
    case DT_I16:
      return <f64>load<i16>(ptr);
    case DT_I32:
      return <f64>load<i32>(ptr);
    case DT_I64:
      return <f64>load<i64>(ptr);
    case DT_F16:
      return <f64>f16ToF32(load<u16>(ptr));
    case DT_BF16:
      return <f64>bf16ToF32(load<u16>(ptr));
    case DT_F32:
      return <f64>load<f32>(ptr);
    case DT_F64:
      return load<f64>(ptr);
  }
  return 0;
}

/**
 * Stores `v` as one element of `dtype` at `ptr`. Floats round to nearest even; integers truncate toward zero
 * without trapping (Note [Float to int casts]); Bool stores `v != 0` (NaN is nonzero, so true).
 */
export function storeFromF64(dtype: i32, ptr: usize, v: f64): void {
  switch (dtype) {
    case DT_U8:
      store<u8>(ptr, <u8>f64ToI64X86(v));
      break;
    case DT_I8:
      store<u8>(ptr, <u8>f64ToI32X86(v));
      break;
    case DT_BOOL:
      store<u8>(ptr, v != 0 ? 1 : 0);
      break;
    case DT_I16:
      store<i16>(ptr, <i16>f64ToI32X86(v));
      break;
    case DT_I32:
      store<i32>(ptr, f64ToI32X86(v));
      break;
    case DT_I64:
      store<i64>(ptr, f64ToI64X86(v));
      break;
    case DT_F16:
      // Double rounding (f64 -> f32 -> f16) can differ from direct rounding only for values within 2^-29
      // relative of a half tie; PyTorch's own c10::Half(double) goes through float the same way.
      store<u16>(ptr, f32ToF16(<f32>v));
      break;
    case DT_BF16:
      store<u16>(ptr, f32ToBf16(<f32>v));
      break;
    case DT_F32:
      store<f32>(ptr, <f32>v);
      break;
    case DT_F64:
      store<f64>(ptr, v);
      break;
  }
}

/** First free byte after the module's static data, rounded up to 64 bytes (a cache line). */
export function heapBase(): usize {
  return (__heap_base + 63) & ~(<usize>63);
}

// ---------------------------------------------------------------------------------------------------------
// Note [Storage tags]: kernels are generic over S, an AssemblyScript type standing for an element's storage,
// and C, the type arithmetic runs in (PyTorch's opmath_t; narrow integers compute in i32 and wrap when stored,
// which is exactly C's integer promotion that PyTorch's kernels get from the compiler):
//
//   dtype  S     C        dtype  S     C
//   u8     u8    i32      f16    u16   f32   u16 is a tag: no integer dtype uses it
//   i8     i8    i32      bf16   u32   f32   u32 is a tag: storage is 2 bytes (elemBytes<S>() knows)
//   i16    i16   i32      f32    f32   f32
//   i32    i32   i32      f64    f64   f64
//   i64    i64   i64      bool   bool  i32
//
// Never instantiate with usize (it is u32 on wasm32 and would read as the bf16 tag).

/** True when the storage tag S stands for IEEE half (see Note [Storage tags]). */
// @ts-ignore: decorator
@inline
export function isHalfTag<S>(): bool {
  return isInteger<S>() && !isSigned<S>() && !isBoolean<S>() && sizeof<S>() == 2;
}

/** True when the storage tag S stands for bfloat16. */
// @ts-ignore: decorator
@inline
export function isBFloat16Tag<S>(): bool {
  return isInteger<S>() && !isSigned<S>() && sizeof<S>() == 4;
}

/** True when S is stored as a float (f16, bf16, f32, f64). */
// @ts-ignore: decorator
@inline
export function isFloatTag<S>(): bool {
  return isFloat<S>() || isHalfTag<S>() || isBFloat16Tag<S>();
}

/** Bytes of one element stored under tag S. */
// @ts-ignore: decorator
@inline
export function elemBytes<S>(): usize {
  if (isBFloat16Tag<S>()) return 2;
  return sizeof<S>();
}

/** log2 of elemBytes<S>(), for index-to-byte shifts. */
// @ts-ignore: decorator
@inline
export function elemShift<S>(): usize {
  return elemBytes<S>() == 1 ? 0 : elemBytes<S>() == 2 ? 1 : elemBytes<S>() == 4 ? 2 : 3;
}

/** Loads the element at `p` stored under tag S and converts it to the compute type C. */
// @ts-ignore: decorator
@inline
export function ld<S, C>(p: usize): C {
  if (isHalfTag<S>()) return <C>f16ToF32(load<u16>(p));
  else if (isBFloat16Tag<S>()) return <C>bf16ToF32(load<u16>(p));
  else if (isBoolean<S>()) return <C>load<u8>(p);
  else return <C>load<S>(p);
}

/**
 * Converts `v` (compute type C) to the storage of tag S and stores it at `p`: floats round to nearest even,
 * float to integer truncates toward zero without trapping (Note [Float to int casts]), integer to narrower
 * integer wraps, and anything to bool stores `v != 0` (NaN counts as nonzero).
 */
// @ts-ignore: decorator
@inline
export function st<S, C>(p: usize, v: C): void {
  if (isHalfTag<S>()) store<u16>(p, f32ToF16(<f32>v));
  else if (isBFloat16Tag<S>()) store<u16>(p, f32ToBf16(<f32>v));
  else if (isBoolean<S>()) store<u8>(p, <u8>(v != <C>0));
  else if (isFloat<S>()) store<S>(p, <S>v);
  else if (isFloat<C>()) {
    // Note [Float to int casts]: int64 and uint8 convert through int64, the narrower signed types through int32.
    if (sizeof<S>() == 8 || (sizeof<S>() == 1 && !isSigned<S>())) store<S>(p, <S>f64ToI64X86(<f64>v));
    else store<S>(p, <S>f64ToI32X86(<f64>v));
  } else store<S>(p, <S>v);
}

/**
 * Converts an f64 scalar to the compute type C as PyTorch converts a Scalar to the op's dtype: integers
 * truncate and wrap to S's width, Bool is s != 0, and reduced floats (f16/bf16) keep the full f32 value, as
 * PyTorch's CPU kernels read a scalar operand at opmath precision.
 */
// @ts-ignore: decorator
@inline
export function scalarToCompute<S, C>(s: f64): C {
  if (isFloatTag<S>()) return <C>s;
  if (isBoolean<S>()) return <C>(s != 0 ? 1 : 0);
  if (sizeof<S>() == 8) return <C>(<i64>s);
  return <C>(<S>(<i32>s));
}

// ---------------------------------------------------------------------------------------------------------
// Note [SIMD constants]: binaryen -O3 folds a splat of a constant into a `v128.const` inside hot loops, and new
// V8 (Deno 2.9, Node 24) runs such loops about 2x slower (shared/reference/TOOLCHAIN.md, Q2a). Kernels that
// need a vector constant therefore `v128.load` it from this pool before their loop: a load from the imported
// memory is opaque to binaryen, so the value stays in a register. Constants from parameters are fine as is.

/** 16 zero bytes. */
export const SIMD_ZERO: usize = memory.data(16, 16);
/** f32x4 of 1.0. */
export const SIMD_F32_ONE: usize = memory.data<f32>([1, 1, 1, 1], 16);
/** f64x2 of 1.0. */
export const SIMD_F64_ONE: usize = memory.data<f64>([1, 1], 16);

/** 1 in the relaxed-SIMD build, 0 in the plain SIMD build (lets the loader and tests see which one runs). */
export function relaxedSimdBuild(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 1 : 0;
}
