// Unary elementwise kernels: unary_contig(op, dtype, out, a, n) and unary_strided(op, dtype, out, a, desc).
//
// Note [Op tags]: each op is an @unmanaged class whose @inline methods are called on `changetype<Op>(0)` (no
// object exists; the class only carries code). A kernel generic over <S, C, Op> is thus one specialised loop
// per (dtype, op), which is what PyTorch's AT_DISPATCH + lambda produce. The methods:
//   supports<S>()  compile-time: is this dtype implemented (PyTorch's dispatch list for the op)?
//   apply<C>(x)    the scalar function in compute type C (Note [Storage tags])
//   simd<S>()      compile-time: does a v128 version exist for S?
//   vapply<S>(x, zero, one)  the v128 version; constants come from the pool (Note [SIMD constants])
// Ops with a Bool result implement test<C>(x): bool instead of apply.

import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { isKnownDtype, itemSize } from './common';
import { elemBytes, isFloatTag, ld, st } from './common';
import { SIMD_F32_ONE, SIMD_F64_ONE, SIMD_ZERO, STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import {
  UNARY_ABS,
  UNARY_BITWISE_NOT,
  UNARY_CEIL,
  UNARY_COS,
  UNARY_ERF,
  UNARY_EXP,
  UNARY_EXPM1,
  UNARY_FLOOR,
  UNARY_GELU,
  UNARY_GELU_TANH,
  UNARY_ISNAN,
  UNARY_LOG,
  UNARY_LOG1P,
  UNARY_LOGICAL_NOT,
  UNARY_NEG,
  UNARY_RECIPROCAL,
  UNARY_RELU,
  UNARY_ROUND,
  UNARY_RSQRT,
  UNARY_SIGMOID,
  UNARY_SIGN,
  UNARY_SILU,
  UNARY_SIN,
  UNARY_SQRT,
  UNARY_TANH,
  UNARY_TRUNC,
} from './elementwise';
import { erf64, gelu64, gelu64Precise, geluTanh64, sigmoid32, sigmoid64 } from './math';
import { hasVector, hasVectorMinMax, maxFirst, vAbs, vMaxFirst, vNeg } from './simd';
import { blockCount, blockOff0, blockOff1, blockOffsets, descNdim, innerSize, innerStride } from './strided';
import { midSize, midStride } from './strided';

// ---- dtype sets (PyTorch's CPU dispatch lists) --------------------------------------------------------------

/** Every dtype but Bool (AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16)). */
// @ts-ignore: decorator
@inline
function allButBool<S>(): bool {
  return !isBoolean<S>();
}

/** Floating dtypes only (AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16)); integer inputs are promoted first. */
// @ts-ignore: decorator
@inline
function floating<S>(): bool {
  return isFloatTag<S>();
}

/** Vector tags that are floats (f32, f64). */
// @ts-ignore: decorator
@inline
function vectorFloat<S>(): bool {
  return isFloat<S>();
}

// ---- op tags ----------------------------------------------------------------------------------------------------

// Float ops pick Mathf (f32) or Math (f64) by sizeof<C>(); only floating C reaches them (supports<S>()).

@final @unmanaged
class Neg {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C { return -x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return vNeg<S>(x); }
}

@final @unmanaged
class Abs {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C {
    if (isFloat<C>()) return abs<C>(x);
    return x < 0 ? -x : x; // i32 compute of u8 is never negative; INT_MIN wraps to itself as in C
  }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return vAbs<S>(x); }
}

/** sign: (0 < x) - (x < 0); NaN gives 0 and -0 gives +0, as PyTorch's CPU kernel. Bool is the identity. */
@final @unmanaged
class Sign {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(x: C): C { return <C>(<i32>(<C>0 < x) - <i32>(x < <C>0)); }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Exp {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.exp(<f32>x);
    return <C>Math.exp(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Log {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.log(<f32>x);
    return <C>Math.log(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Log1p {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.log1p(<f32>x);
    return <C>Math.log1p(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Expm1 {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.expm1(<f32>x);
    return <C>Math.expm1(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Sqrt {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return sqrt<C>(x); }
  @inline simd<S>(): bool { return vectorFloat<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    return sizeof<S>() == 4 ? f32x4.sqrt(x) : f64x2.sqrt(x);
  }
}

/** 1 / sqrt(x), two correctly rounded steps (within 1 ulp). */
@final @unmanaged
class Rsqrt {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return <C>1 / sqrt<C>(x); }
  @inline simd<S>(): bool { return vectorFloat<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    return sizeof<S>() == 4 ? f32x4.div(one, f32x4.sqrt(x)) : f64x2.div(one, f64x2.sqrt(x));
  }
}

// Note [f32 sin and cos]: AssemblyScript's Mathf.sin / Mathf.cos lose the argument reduction for some huge
// arguments (sin(8.77e26) was off by 1e10 ulp), where PyTorch's SLEEF kernels stay within 1 ulp. Math.sin and
// Math.cos on the (exact) f64 widening reduce correctly, and one rounding to f32 keeps the result within 1 ulp.
@final @unmanaged
class Sin {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    return <C>Math.sin(<f64>x); // Note [f32 sin and cos]
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Cos {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    return <C>Math.cos(<f64>x); // Note [f32 sin and cos]
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Tanh {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.tanh(<f32>x);
    return <C>Math.tanh(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Sigmoid {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>sigmoid32(<f32>x);
    return <C>sigmoid64(<f64>x);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

/** relu = clamp_min(x, 0): NaN stays NaN, relu(-0) is -0 (Note [Signed zero ties]); not for Bool, as in PyTorch. */
@final @unmanaged
class Relu {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C {
    return maxFirst<C>(x, <C>0);
  }
  @inline simd<S>(): bool { return hasVectorMinMax<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return vMaxFirst<S>(x, zero); }
}

/** gelu, exact erf form; f16/bf16/f32 evaluate in f64 (Note [Activation precision]). */
@final @unmanaged
class Gelu {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return sizeof<C>() == 8 ? <C>gelu64Precise(<f64>x) : <C>gelu64(<f64>x); }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

/** gelu(approximate='tanh'); evaluated in f64 like Gelu. */
@final @unmanaged
class GeluTanh {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return <C>geluTanh64(<f64>x); }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

/** silu(x) = x * sigmoid(x), with the overflow-free sigmoid. */
@final @unmanaged
class Silu {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C {
    if (sizeof<C>() == 4) return <C>(<f32>x * sigmoid32(<f32>x));
    return <C>(<f64>x * sigmoid64(<f64>x));
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

@final @unmanaged
class Erf {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return <C>erf64(<f64>x); }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return x; }
}

/** floor/ceil/round/trunc: integers are returned unchanged (PyTorch copies them); not for Bool. */
@final @unmanaged
class Floor {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C { return isFloat<C>() ? floor<C>(x) : x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    if (!isFloat<S>()) return x;
    return sizeof<S>() == 4 ? f32x4.floor(x) : f64x2.floor(x);
  }
}

@final @unmanaged
class Ceil {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C { return isFloat<C>() ? ceil<C>(x) : x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    if (!isFloat<S>()) return x;
    return sizeof<S>() == 4 ? f32x4.ceil(x) : f64x2.ceil(x);
  }
}

/** Round half to even (wasm `nearest`), like torch.round. */
@final @unmanaged
class Round {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C { return isFloat<C>() ? nearest<C>(x) : x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    if (!isFloat<S>()) return x;
    return sizeof<S>() == 4 ? f32x4.nearest(x) : f64x2.nearest(x);
  }
}

@final @unmanaged
class Trunc {
  @inline supports<S>(): bool { return allButBool<S>(); }
  @inline apply<C>(x: C): C { return isFloat<C>() ? trunc<C>(x) : x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    if (!isFloat<S>()) return x;
    return sizeof<S>() == 4 ? f32x4.trunc(x) : f64x2.trunc(x);
  }
}

@final @unmanaged
class Reciprocal {
  @inline supports<S>(): bool { return floating<S>(); }
  @inline apply<C>(x: C): C { return <C>1 / x; }
  @inline simd<S>(): bool { return vectorFloat<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 {
    return sizeof<S>() == 4 ? f32x4.div(one, x) : f64x2.div(one, x);
  }
}

/** ~x for integers. Bool's bitwise_not is logical_not and dispatches to LogicalNot. */
@final @unmanaged
class BitwiseNot {
  @inline supports<S>(): bool { return !isFloatTag<S>() && !isBoolean<S>(); }
  @inline apply<C>(x: C): C { return ~x; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(x: v128, zero: v128, one: v128): v128 { return v128.not(x); }
}

/** logical_not: x == 0, any dtype, Bool out (NaN is nonzero, so false). */
@final @unmanaged
class LogicalNot {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(x: C): bool { return x == <C>0; }
}

/** isnan: x != x, any dtype (integers are never NaN), Bool out. */
@final @unmanaged
class IsNan {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(x: C): bool { return x != x; }
}

// ---- kernels ------------------------------------------------------------------------------------------------------

/**
 * One row: out[i*so] = op(a[i*sa]) for i < n, byte strides. Contiguous rows of vector dtypes run the v128
 * version four vectors (64 bytes) per iteration, then one vector at a time, then the scalar tail.
 */
function unaryKernel<S, C, O>(o: usize, a: usize, n: i32, so: isize, sa: isize): i32 {
  const op = changetype<O>(0);
  if (!op.supports<S>()) return STATUS_UNSUPPORTED;
  let i = 0;
  if (op.simd<S>()) {
    const eb = <isize>elemBytes<S>();
    if (so == eb && sa == eb) {
      const zero = v128.load(SIMD_ZERO);
      const one = sizeof<S>() == 8 ? v128.load(SIMD_F64_ONE) : v128.load(SIMD_F32_ONE);
      const lanes = 16 / <i32>elemBytes<S>();
      for (; i + 4 * lanes <= n; i += 4 * lanes) {
        const x0 = v128.load(a);
        const x1 = v128.load(a, 16);
        const x2 = v128.load(a, 32);
        const x3 = v128.load(a, 48);
        v128.store(o, op.vapply<S>(x0, zero, one));
        v128.store(o, op.vapply<S>(x1, zero, one), 16);
        v128.store(o, op.vapply<S>(x2, zero, one), 32);
        v128.store(o, op.vapply<S>(x3, zero, one), 48);
        o += 64;
        a += 64;
      }
      for (; i + lanes <= n; i += lanes) {
        v128.store(o, op.vapply<S>(v128.load(a), zero, one));
        o += 16;
        a += 16;
      }
    }
  }
  for (; i < n; i++) {
    st<S, C>(o, op.apply<C>(ld<S, C>(a)));
    o += so;
    a += sa;
  }
  return STATUS_OK;
}

/** One row of a Bool-valued unary op: out (u8) = op.test(a). */
function unaryBoolKernel<S, C, O>(o: usize, a: usize, n: i32, so: isize, sa: isize): i32 {
  const op = changetype<O>(0);
  if (!op.supports<S>()) return STATUS_UNSUPPORTED;
  for (let i = 0; i < n; i++) {
    store<u8>(o, <u8>op.test<C>(ld<S, C>(a)));
    o += so;
    a += sa;
  }
  return STATUS_OK;
}

/** AT_DISPATCH over all ten dtypes for a same-dtype unary op. */
function unaryDispatch<O>(dtype: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): i32 {
  switch (dtype) {
    case DT_U8:
      return unaryKernel<u8, i32, O>(o, a, n, so, sa);
    case DT_I8:
      return unaryKernel<i8, i32, O>(o, a, n, so, sa);
    case DT_I16:
      return unaryKernel<i16, i32, O>(o, a, n, so, sa);
    case DT_I32:
      return unaryKernel<i32, i32, O>(o, a, n, so, sa);
    case DT_I64:
      return unaryKernel<i64, i64, O>(o, a, n, so, sa);
    case DT_F16:
      return unaryKernel<u16, f32, O>(o, a, n, so, sa);
    case DT_BF16:
      return unaryKernel<u32, f32, O>(o, a, n, so, sa);
    case DT_F32:
      return unaryKernel<f32, f32, O>(o, a, n, so, sa);
    case DT_F64:
      return unaryKernel<f64, f64, O>(o, a, n, so, sa);
    case DT_BOOL:
      return unaryKernel<bool, i32, O>(o, a, n, so, sa);
  }
  return STATUS_UNSUPPORTED;
}

/** AT_DISPATCH over all ten dtypes for a Bool-valued unary op. */
function unaryBoolDispatch<O>(dtype: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): i32 {
  switch (dtype) {
    case DT_U8:
      return unaryBoolKernel<u8, i32, O>(o, a, n, so, sa);
    case DT_I8:
      return unaryBoolKernel<i8, i32, O>(o, a, n, so, sa);
    case DT_I16:
      return unaryBoolKernel<i16, i32, O>(o, a, n, so, sa);
    case DT_I32:
      return unaryBoolKernel<i32, i32, O>(o, a, n, so, sa);
    case DT_I64:
      return unaryBoolKernel<i64, i64, O>(o, a, n, so, sa);
    case DT_F16:
      return unaryBoolKernel<u16, f32, O>(o, a, n, so, sa);
    case DT_BF16:
      return unaryBoolKernel<u32, f32, O>(o, a, n, so, sa);
    case DT_F32:
      return unaryBoolKernel<f32, f32, O>(o, a, n, so, sa);
    case DT_F64:
      return unaryBoolKernel<f64, f64, O>(o, a, n, so, sa);
    case DT_BOOL:
      return unaryBoolKernel<bool, i32, O>(o, a, n, so, sa);
  }
  return STATUS_UNSUPPORTED;
}

/** True when `op` writes Bool whatever the input dtype. */
function unaryWritesBool(op: i32, dtype: i32): bool {
  return op == UNARY_LOGICAL_NOT || op == UNARY_ISNAN || (op == UNARY_BITWISE_NOT && dtype == DT_BOOL);
}

/** Runs one row of `op`; with n = 0 it only reports whether (op, dtype) is supported. */
function unaryRow(op: i32, dtype: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): i32 {
  switch (op) {
    case UNARY_NEG:
      return unaryDispatch<Neg>(dtype, o, a, n, so, sa);
    case UNARY_ABS:
      return unaryDispatch<Abs>(dtype, o, a, n, so, sa);
    case UNARY_SIGN:
      return unaryDispatch<Sign>(dtype, o, a, n, so, sa);
    case UNARY_EXP:
      return unaryDispatch<Exp>(dtype, o, a, n, so, sa);
    case UNARY_LOG:
      return unaryDispatch<Log>(dtype, o, a, n, so, sa);
    case UNARY_LOG1P:
      return unaryDispatch<Log1p>(dtype, o, a, n, so, sa);
    case UNARY_EXPM1:
      return unaryDispatch<Expm1>(dtype, o, a, n, so, sa);
    case UNARY_SQRT:
      return unaryDispatch<Sqrt>(dtype, o, a, n, so, sa);
    case UNARY_RSQRT:
      return unaryDispatch<Rsqrt>(dtype, o, a, n, so, sa);
    case UNARY_SIN:
      return unaryDispatch<Sin>(dtype, o, a, n, so, sa);
    case UNARY_COS:
      return unaryDispatch<Cos>(dtype, o, a, n, so, sa);
    case UNARY_TANH:
      return unaryDispatch<Tanh>(dtype, o, a, n, so, sa);
    case UNARY_SIGMOID:
      return unaryDispatch<Sigmoid>(dtype, o, a, n, so, sa);
    case UNARY_RELU:
      return unaryDispatch<Relu>(dtype, o, a, n, so, sa);
    case UNARY_GELU:
      return unaryDispatch<Gelu>(dtype, o, a, n, so, sa);
    case UNARY_GELU_TANH:
      return unaryDispatch<GeluTanh>(dtype, o, a, n, so, sa);
    case UNARY_SILU:
      return unaryDispatch<Silu>(dtype, o, a, n, so, sa);
    case UNARY_ERF:
      return unaryDispatch<Erf>(dtype, o, a, n, so, sa);
    case UNARY_FLOOR:
      return unaryDispatch<Floor>(dtype, o, a, n, so, sa);
    case UNARY_CEIL:
      return unaryDispatch<Ceil>(dtype, o, a, n, so, sa);
    case UNARY_ROUND:
      return unaryDispatch<Round>(dtype, o, a, n, so, sa);
    case UNARY_TRUNC:
      return unaryDispatch<Trunc>(dtype, o, a, n, so, sa);
    case UNARY_RECIPROCAL:
      return unaryDispatch<Reciprocal>(dtype, o, a, n, so, sa);
    case UNARY_LOGICAL_NOT:
      return unaryBoolDispatch<LogicalNot>(dtype, o, a, n, so, sa);
    case UNARY_ISNAN:
      return unaryBoolDispatch<IsNan>(dtype, o, a, n, so, sa);
    case UNARY_BITWISE_NOT:
      if (dtype == DT_BOOL) return unaryBoolDispatch<LogicalNot>(dtype, o, a, n, so, sa);
      return unaryDispatch<BitwiseNot>(dtype, o, a, n, so, sa);
  }
  return STATUS_BAD_ARGUMENT;
}

/**
 * out[0..n) = op(a[0..n)), all contiguous. `dtype` is the input dtype; the output has the same dtype, except
 * LOGICAL_NOT, ISNAN (and BITWISE_NOT on Bool) which write Bool. Returns a status (Note [Status codes]).
 */
export function unary_contig(op: i32, dtype: i32, out: usize, a: usize, n: i32): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const ea = <isize>itemSize(dtype);
  const eo: isize = unaryWritesBool(op, dtype) ? 1 : ea;
  return unaryRow(op, dtype, out, a, n, eo, ea);
}

/** unary_contig over strided views; `desc` operands: out, a (Note [Strided descriptor]). */
export function unary_strided(op: i32, dtype: i32, out: usize, a: usize, desc: usize): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const probe = unaryRow(op, dtype, 0, 0, 0, 0, 0);
  if (probe != STATUS_OK) return probe;
  const ea = <isize>itemSize(dtype);
  const eo: isize = unaryWritesBool(op, dtype) ? 1 : ea;
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
      unaryRow(op, dtype, po, pa, inner, so, sa);
      po += <usize>mo;
      pa += <usize>ma;
    }
  }
  return STATUS_OK;
}
