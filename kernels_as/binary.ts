// Binary elementwise kernels, comparisons and logical ops.
//
//   binary_contig(op, dtype, out, a, b, n, alpha)          out = a op b, all contiguous
//   binary_strided(op, dtype, out, a, b, desc, alpha)      desc operands: out, a, b
//   binary_scalar_contig(op, dtype, out, a, s, n, alpha)   out = a op s   (s: f64 scalar, e.g. `x + 1`)
//   binary_scalar_strided(op, dtype, out, a, s, desc, alpha)             desc operands: out, a
//   binary_rscalar_contig(op, dtype, out, s, b, n, alpha)  out = s op b   (e.g. `1 / x`)
//   binary_rscalar_strided(op, dtype, out, s, b, desc, alpha)            desc operands: out, b
//
// `dtype` is the common dtype of a and b (the TS side casts first); out has it too, except from LOGICAL_AND on
// (logical and comparison ops), which write Bool. `alpha` is add/sub's multiplier (out = a +- alpha*b) and is
// ignored by the other ops. Op tags follow Note [Op tags] in unary.ts, with apply<C>(a, b, alpha) and
// vapply<S>(a, b, alpha) for value ops and test<C>(a, b) / vtest<S>(a, b) for Bool-valued ones.
//
// Note [Integer division by zero]: PyTorch raises ZeroDivisionError for integer div_trunc / div_floor /
// remainder / fmod by zero. A wasm trap would abort the whole call and cannot carry that error, so these kernels
// write 0 for such elements instead; the TS side may check for zero divisors first if it wants the exception.
// INT_MIN / -1 (which traps in wasm) yields INT_MIN, the wrapped result.

import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { elemBytes, isFloatTag, isKnownDtype, itemSize, ld, scalarToCompute, st } from './common';
import { STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import {
  BINARY_ADD,
  BINARY_ATAN2,
  BINARY_BITWISE_AND,
  BINARY_BITWISE_OR,
  BINARY_BITWISE_XOR,
  BINARY_DIV,
  BINARY_DIV_FLOOR,
  BINARY_DIV_TRUNC,
  BINARY_EQ,
  BINARY_FMOD,
  BINARY_GE,
  BINARY_GT,
  BINARY_LE,
  BINARY_LOGICAL_AND,
  BINARY_LOGICAL_OR,
  BINARY_LOGICAL_XOR,
  BINARY_LT,
  BINARY_MAXIMUM,
  BINARY_MINIMUM,
  BINARY_MUL,
  BINARY_NE,
  BINARY_POW,
  BINARY_REMAINDER,
  BINARY_SUB,
} from './elementwise';
import { hasVector, hasVectorMinMax, hasVectorMul, vAdd, vCompare, vMul, vMulAdd } from './simd';
import { maxFirst, minFirst, vMaxFirst, vMinFirst } from './simd';
import { vNegMulAdd, vSplat, vSub } from './simd';
import { blockCount, blockOff0, blockOff1, blockOff2, blockOffsets, descNdim, innerSize } from './strided';
import { innerStride, midSize, midStride } from './strided';

/** Operand forms of one kernel call. */
const FORM_TENSORS: i32 = 0; // a and b are tensors (either may still have stride 0)
const FORM_SCALAR_RIGHT: i32 = 1; // b is the f64 scalar
const FORM_SCALAR_LEFT: i32 = 2; // a is the f64 scalar; the tensor is passed as b

// @ts-ignore: decorator
@inline
function vectorNumeric<S>(): bool {
  return hasVector<S>() && !isBoolean<S>();
}

// ---- integer helpers (Note [Integer division by zero]) --------------------------------------------------------

// @ts-ignore: decorator
@inline
function idivTrunc<C>(a: C, b: C): C {
  if (b == <C>0) return <C>0;
  if (b == <C>-1) return -a;
  return a / b;
}

// @ts-ignore: decorator
@inline
function idivFloor<C>(a: C, b: C): C {
  if (b == <C>0) return <C>0;
  const q = idivTrunc<C>(a, b);
  // Truncation rounds toward zero; step down when the signs differ and the division was inexact.
  if ((a < <C>0) != (b < <C>0) && q * b != a) return q - <C>1;
  return q;
}

// @ts-ignore: decorator
@inline
function iremainder<C>(a: C, b: C): C {
  if (b == <C>0) return <C>0;
  let r = a % b; // wasm rem_s does not trap on INT_MIN % -1 (it is 0)
  if (r != <C>0 && (r < <C>0) != (b < <C>0)) r += b;
  return r;
}

// @ts-ignore: decorator
@inline
function ifmod<C>(a: C, b: C): C {
  if (b == <C>0) return <C>0;
  return a % b;
}

/** Integer power by squaring (wrapping), with PyTorch's rule for negative exponents. */
function ipow<C>(base: C, exp: C): C {
  if (exp < <C>0) {
    if (base == <C>1) return <C>1;
    if (base == <C>-1) return (exp & <C>1) != <C>0 ? <C>-1 : <C>1;
    return <C>0;
  }
  let result: C = <C>1;
  let b = base;
  let e = exp;
  while (e != <C>0) {
    if ((e & <C>1) != <C>0) result *= b;
    b *= b;
    e >>= <C>1;
  }
  return result;
}

// ---- float helpers (PyTorch's formulas, aten/src/ATen/native/cpu/BinaryOpsKernel.cpp) ---------------------------

/** div(rounding_mode='floor') for floats: Python's floor division, exact near integer quotients. */
// @ts-ignore: decorator
@inline
function fdivFloor<C>(a: C, b: C): C {
  if (b == <C>0) return a / b;
  const mod = a % b;
  let div = (a - mod) / b;
  if (mod != <C>0 && (b < <C>0) != (mod < <C>0)) div -= <C>1;
  if (div != <C>0) {
    let fl = floor<C>(div);
    if (div - fl > <C>0.5) fl += <C>1;
    return fl;
  }
  return copysign<C>(<C>0, a / b);
}

/** torch.remainder for floats: the result takes the sign of the divisor. */
// @ts-ignore: decorator
@inline
function fremainder<C>(a: C, b: C): C {
  let mod = a % b;
  if (mod != <C>0 && (b < <C>0) != (mod < <C>0)) mod += b;
  return mod;
}

// ---- op tags (Note [Op tags]) ---------------------------------------------------------------------------------

/** a + alpha*b. Bool add is logical or (the sum is stored as != 0). */
@final @unmanaged
class Add {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(a: C, b: C, al: C): C { return a + al * b; }
  @inline simd<S>(): bool { return hasVectorMul<S>() && !isBoolean<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vMulAdd<S>(b, al, a); }
}

/** Add with alpha == 1 (the common case, and the bandwidth benchmark). */
@final @unmanaged
class AddNoAlpha {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(a: C, b: C, al: C): C { return a + b; }
  @inline simd<S>(): bool { return vectorNumeric<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vAdd<S>(a, b); }
}

/** a - alpha*b; not for Bool (PyTorch: "Subtraction, the `-` operator, with two bool tensors is not supported"). */
@final @unmanaged
class Sub {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a - al * b; }
  @inline simd<S>(): bool { return hasVectorMul<S>() && !isBoolean<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vNegMulAdd<S>(b, al, a); }
}

@final @unmanaged
class SubNoAlpha {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a - b; }
  @inline simd<S>(): bool { return vectorNumeric<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vSub<S>(a, b); }
}

/** a * b; Bool mul is logical and. */
@final @unmanaged
class Mul {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(a: C, b: C, al: C): C { return a * b; }
  @inline simd<S>(): bool { return hasVectorMul<S>() && !isBoolean<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vMul<S>(a, b); }
}

/** True division, floats only (integer inputs are promoted to the default float dtype first). */
@final @unmanaged
class Div {
  @inline supports<S>(): bool { return isFloatTag<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a / b; }
  @inline simd<S>(): bool { return isFloat<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 {
    return sizeof<S>() == 4 ? f32x4.div(a, b) : f64x2.div(a, b);
  }
}

/** div(rounding_mode='trunc'). */
@final @unmanaged
class DivTrunc {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (isFloat<C>()) return trunc<C>(a / b);
    return idivTrunc<C>(a, b);
  }
  @inline simd<S>(): bool { return isFloat<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 {
    return sizeof<S>() == 4 ? f32x4.trunc(f32x4.div(a, b)) : f64x2.trunc(f64x2.div(a, b));
  }
}

/** div(rounding_mode='floor'). */
@final @unmanaged
class DivFloor {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (isFloat<C>()) return fdivFloor<C>(a, b);
    return idivFloor<C>(a, b);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return a; }
}

/** torch.remainder: Python's modulo, the sign follows the divisor. */
@final @unmanaged
class Remainder {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (isFloat<C>()) return fremainder<C>(a, b);
    return iremainder<C>(a, b);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return a; }
}

/** torch.fmod: C's fmod / %, the sign follows the dividend. */
@final @unmanaged
class Fmod {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (isFloat<C>()) return a % b;
    return ifmod<C>(a, b);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return a; }
}

/** a ** b: float pow, or integer power by squaring (negative exponents give 0 unless the base is +-1). */
@final @unmanaged
class Pow {
  @inline supports<S>(): bool { return !isBoolean<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (isFloat<C>()) {
      // C's pow, which PyTorch calls, differs from JavaScript's (and AssemblyScript's) in three cases:
      // pow(1, y) = 1 and pow(x, +-0) = 1 even for NaN, and pow(-1, +-inf) = 1.
      if (b == <C>0 || a == <C>1) return <C>1;
      if (a == <C>-1 && !isFinite(b) && !isNaN(b)) return <C>1;
      if (sizeof<C>() == 4) return <C>Mathf.pow(<f32>a, <f32>b);
      return <C>Math.pow(<f64>a, <f64>b);
    }
    return ipow<C>(a, b);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return a; }
}

/** torch.minimum: NaN-propagating, a ±0 tie keeps `a` (Note [Signed zero ties] in simd.ts); logical and for Bool. */
@final @unmanaged
class Minimum {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(a: C, b: C, al: C): C { return minFirst<C>(a, b); }
  @inline simd<S>(): bool { return hasVectorMinMax<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vMinFirst<S>(a, b); }
}

/** torch.maximum (see Minimum); logical or for Bool. */
@final @unmanaged
class Maximum {
  @inline supports<S>(): bool { return true; }
  @inline apply<C>(a: C, b: C, al: C): C { return maxFirst<C>(a, b); }
  @inline simd<S>(): bool { return hasVectorMinMax<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return vMaxFirst<S>(a, b); }
}

@final @unmanaged
class Atan2 {
  @inline supports<S>(): bool { return isFloatTag<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C {
    if (sizeof<C>() == 4) return <C>Mathf.atan2(<f32>a, <f32>b);
    return <C>Math.atan2(<f64>a, <f64>b);
  }
  @inline simd<S>(): bool { return false; }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return a; }
}

@final @unmanaged
class BitwiseAnd {
  @inline supports<S>(): bool { return !isFloatTag<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a & b; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return v128.and(a, b); }
}

@final @unmanaged
class BitwiseOr {
  @inline supports<S>(): bool { return !isFloatTag<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a | b; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return v128.or(a, b); }
}

@final @unmanaged
class BitwiseXor {
  @inline supports<S>(): bool { return !isFloatTag<S>(); }
  @inline apply<C>(a: C, b: C, al: C): C { return a ^ b; }
  @inline simd<S>(): bool { return hasVector<S>(); }
  @inline vapply<S>(a: v128, b: v128, al: v128): v128 { return v128.xor(a, b); }
}

// Bool-valued ops: test<C>(a, b); comparisons also have a lane-mask version for 1-, 2- and 4-byte lanes.

@final @unmanaged
class LogicalAnd {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return (a != <C>0) & (b != <C>0); }
  @inline simd<S>(): bool { return false; }
  @inline vtest<S>(a: v128, b: v128): v128 { return a; }
}

@final @unmanaged
class LogicalOr {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return (a != <C>0) | (b != <C>0); }
  @inline simd<S>(): bool { return false; }
  @inline vtest<S>(a: v128, b: v128): v128 { return a; }
}

@final @unmanaged
class LogicalXor {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return (a != <C>0) != (b != <C>0); }
  @inline simd<S>(): bool { return false; }
  @inline vtest<S>(a: v128, b: v128): v128 { return a; }
}

// @ts-ignore: decorator
@inline
function compareHasVector<S>(): bool {
  return hasVector<S>() && sizeof<S>() <= 4;
}

@final @unmanaged
class Eq {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a == b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(0, a, b); }
}

@final @unmanaged
class Ne {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a != b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(1, a, b); }
}

@final @unmanaged
class Lt {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a < b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(2, a, b); }
}

@final @unmanaged
class Le {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a <= b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(3, a, b); }
}

@final @unmanaged
class Gt {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a > b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(4, a, b); }
}

@final @unmanaged
class Ge {
  @inline supports<S>(): bool { return true; }
  @inline test<C>(a: C, b: C): bool { return a >= b; }
  @inline simd<S>(): bool { return compareHasVector<S>(); }
  @inline vtest<S>(a: v128, b: v128): v128 { return vCompare<S>(5, a, b); }
}

// ---- vector loops --------------------------------------------------------------------------------------------------

/**
 * The v128 body shared by the three operand forms: `form` is a constant at every call site, so after inlining
 * the scalar side is a register (`sv`) and the tensor sides are loads. Processes whole vectors only, 64 bytes
 * per iteration while it can, and returns how many elements it did.
 */
// @ts-ignore: decorator
@inline
function valueVectorLoop<S, O>(form: i32, o: usize, a: usize, b: usize, n: i32, sv: v128, alv: v128): i32 {
  const op = changetype<O>(0);
  const lanes = 16 / <i32>elemBytes<S>();
  let i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const a0 = form == FORM_SCALAR_LEFT ? sv : v128.load(a);
    const a1 = form == FORM_SCALAR_LEFT ? sv : v128.load(a, 16);
    const a2 = form == FORM_SCALAR_LEFT ? sv : v128.load(a, 32);
    const a3 = form == FORM_SCALAR_LEFT ? sv : v128.load(a, 48);
    const b0 = form == FORM_SCALAR_RIGHT ? sv : v128.load(b);
    const b1 = form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 16);
    const b2 = form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 32);
    const b3 = form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 48);
    v128.store(o, op.vapply<S>(a0, b0, alv));
    v128.store(o, op.vapply<S>(a1, b1, alv), 16);
    v128.store(o, op.vapply<S>(a2, b2, alv), 32);
    v128.store(o, op.vapply<S>(a3, b3, alv), 48);
    o += 64;
    if (form != FORM_SCALAR_LEFT) a += 64;
    if (form != FORM_SCALAR_RIGHT) b += 64;
  }
  for (; i + lanes <= n; i += lanes) {
    const x = form == FORM_SCALAR_LEFT ? sv : v128.load(a);
    const y = form == FORM_SCALAR_RIGHT ? sv : v128.load(b);
    v128.store(o, op.vapply<S>(x, y, alv));
    o += 16;
    if (form != FORM_SCALAR_LEFT) a += 16;
    if (form != FORM_SCALAR_RIGHT) b += 16;
  }
  return i;
}

/**
 * Comparison loop writing 16 Bool bytes per iteration: the lane masks (all ones / zero) of 1, 2 or 4 byte lanes
 * are narrowed with saturation to bytes (-1 / 0) and `abs` turns them into 1 / 0.
 */
// @ts-ignore: decorator
@inline
function compareVectorLoop<S, O>(form: i32, o: usize, a: usize, b: usize, n: i32, sv: v128): i32 {
  const op = changetype<O>(0);
  const width = <i32>elemBytes<S>();
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    let m: v128;
    if (width == 1) {
      m = op.vtest<S>(form == FORM_SCALAR_LEFT ? sv : v128.load(a), form == FORM_SCALAR_RIGHT ? sv : v128.load(b));
    } else if (width == 2) {
      const m0 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b),
      );
      const m1 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a, 16),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 16),
      );
      m = i8x16.narrow_i16x8_s(m0, m1);
    } else {
      const m0 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b),
      );
      const m1 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a, 16),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 16),
      );
      const m2 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a, 32),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 32),
      );
      const m3 = op.vtest<S>(
        form == FORM_SCALAR_LEFT ? sv : v128.load(a, 48),
        form == FORM_SCALAR_RIGHT ? sv : v128.load(b, 48),
      );
      m = i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(m0, m1), i16x8.narrow_i32x4_s(m2, m3));
    }
    v128.store(o, i8x16.abs(m));
    o += 16;
    if (form != FORM_SCALAR_LEFT) a += <usize>(16 * width);
    if (form != FORM_SCALAR_RIGHT) b += <usize>(16 * width);
  }
  return i;
}

// ---- row kernels ------------------------------------------------------------------------------------------------

/**
 * One row of a value op: out[i*so] = op(a[i*sa], b[i*sb]) with byte strides, in one of the three operand forms.
 * A tensor operand with stride 0 is read once and becomes a scalar, so broadcasting rows vectorise too. Vector
 * loops exist for tensor-tensor and tensor-scalar rows; scalar-left rows (`1 / x`) and everything else share
 * one scalar loop, whose per-element form test is a well-predicted branch (one loop instead of three keeps the
 * module, and its build time, in check).
 */
function binaryKernel<S, C, O>(
  o: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  alpha: f64,
  scalar: f64,
  form: i32,
): i32 {
  const op = changetype<O>(0);
  if (!op.supports<S>()) return STATUS_UNSUPPORTED;
  if (n <= 0) return STATUS_OK;
  const al = scalarToCompute<S, C>(alpha);
  let s: C = <C>0;
  if (form == FORM_TENSORS) {
    if (sb == 0) {
      form = FORM_SCALAR_RIGHT;
      s = ld<S, C>(b);
    } else if (sa == 0) {
      form = FORM_SCALAR_LEFT;
      s = ld<S, C>(a);
    }
  } else {
    s = scalarToCompute<S, C>(scalar);
  }
  const eb = <isize>elemBytes<S>();
  let i = 0;
  if (op.simd<S>()) {
    if (so == eb && sa == eb) {
      if (form == FORM_TENSORS && sb == eb) {
        i = valueVectorLoop<S, O>(FORM_TENSORS, o, a, b, n, vSplat<S, C>(al), vSplat<S, C>(al));
        b += <usize>i * <usize>eb;
      } else if (form == FORM_SCALAR_RIGHT) {
        i = valueVectorLoop<S, O>(FORM_SCALAR_RIGHT, o, a, 0, n, vSplat<S, C>(s), vSplat<S, C>(al));
      }
      o += <usize>i * <usize>eb;
      a += <usize>i * <usize>eb;
    }
  }
  if (form == FORM_SCALAR_RIGHT) sb = 0;
  if (form == FORM_SCALAR_LEFT) sa = 0;
  for (; i < n; i++) {
    const x = form == FORM_SCALAR_LEFT ? s : ld<S, C>(a);
    const y = form == FORM_SCALAR_RIGHT ? s : ld<S, C>(b);
    st<S, C>(o, op.apply<C>(x, y, al));
    o += so;
    a += sa;
    b += sb;
  }
  return STATUS_OK;
}

/** One row of a Bool-valued op (comparison or logical); out is u8 with byte stride so. See binaryKernel. */
function compareKernel<S, C, O>(
  o: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  scalar: f64,
  form: i32,
): i32 {
  const op = changetype<O>(0);
  if (!op.supports<S>()) return STATUS_UNSUPPORTED;
  if (n <= 0) return STATUS_OK;
  let s: C = <C>0;
  if (form == FORM_TENSORS) {
    if (sb == 0) {
      form = FORM_SCALAR_RIGHT;
      s = ld<S, C>(b);
    } else if (sa == 0) {
      form = FORM_SCALAR_LEFT;
      s = ld<S, C>(a);
    }
  } else {
    s = scalarToCompute<S, C>(scalar);
  }
  const eb = <isize>elemBytes<S>();
  let i = 0;
  if (op.simd<S>()) {
    if (so == 1 && sa == eb) {
      if (form == FORM_TENSORS && sb == eb) {
        i = compareVectorLoop<S, O>(FORM_TENSORS, o, a, b, n, vSplat<S, C>(s));
        b += <usize>i * <usize>eb;
      } else if (form == FORM_SCALAR_RIGHT) {
        i = compareVectorLoop<S, O>(FORM_SCALAR_RIGHT, o, a, 0, n, vSplat<S, C>(s));
      }
      o += <usize>i;
      a += <usize>i * <usize>eb;
    }
  }
  if (form == FORM_SCALAR_RIGHT) sb = 0;
  if (form == FORM_SCALAR_LEFT) sa = 0;
  for (; i < n; i++) {
    const x = form == FORM_SCALAR_LEFT ? s : ld<S, C>(a);
    const y = form == FORM_SCALAR_RIGHT ? s : ld<S, C>(b);
    store<u8>(o, <u8>op.test<C>(x, y));
    o += so;
    a += sa;
    b += sb;
  }
  return STATUS_OK;
}

// ---- dtype dispatch (AT_DISPATCH) ------------------------------------------------------------------------------

function binaryDispatch<O>(
  dtype: i32,
  o: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  alpha: f64,
  s: f64,
  form: i32,
): i32 {
  switch (dtype) {
    case DT_U8:
      return binaryKernel<u8, i32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_I8:
      return binaryKernel<i8, i32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_I16:
      return binaryKernel<i16, i32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_I32:
      return binaryKernel<i32, i32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_I64:
      return binaryKernel<i64, i64, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_F16:
      return binaryKernel<u16, f32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_BF16:
      return binaryKernel<u32, f32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_F32:
      return binaryKernel<f32, f32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_F64:
      return binaryKernel<f64, f64, O>(o, a, b, n, so, sa, sb, alpha, s, form);
    case DT_BOOL:
      return binaryKernel<bool, i32, O>(o, a, b, n, so, sa, sb, alpha, s, form);
  }
  return STATUS_UNSUPPORTED;
}

function compareDispatch<O>(
  dtype: i32,
  o: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  s: f64,
  form: i32,
): i32 {
  switch (dtype) {
    case DT_U8:
      return compareKernel<u8, i32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_I8:
      return compareKernel<i8, i32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_I16:
      return compareKernel<i16, i32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_I32:
      return compareKernel<i32, i32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_I64:
      return compareKernel<i64, i64, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_F16:
      return compareKernel<u16, f32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_BF16:
      return compareKernel<u32, f32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_F32:
      return compareKernel<f32, f32, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_F64:
      return compareKernel<f64, f64, O>(o, a, b, n, so, sa, sb, s, form);
    case DT_BOOL:
      return compareKernel<bool, i32, O>(o, a, b, n, so, sa, sb, s, form);
  }
  return STATUS_UNSUPPORTED;
}

/** True for the ops that write Bool. */
// @ts-ignore: decorator
@inline
function binaryWritesBool(op: i32): bool {
  return op >= BINARY_LOGICAL_AND;
}

/** Runs one row of `op`; with n = 0 it only reports whether (op, dtype) is supported. */
function binaryRow(
  op: i32,
  dtype: i32,
  o: usize,
  a: usize,
  b: usize,
  n: i32,
  so: isize,
  sa: isize,
  sb: isize,
  alpha: f64,
  s: f64,
  form: i32,
): i32 {
  switch (op) {
    case BINARY_ADD:
      if (alpha == 1) return binaryDispatch<AddNoAlpha>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
      return binaryDispatch<Add>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_SUB:
      if (alpha == 1) return binaryDispatch<SubNoAlpha>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
      return binaryDispatch<Sub>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_MUL:
      return binaryDispatch<Mul>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_DIV:
      return binaryDispatch<Div>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_DIV_TRUNC:
      return binaryDispatch<DivTrunc>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_DIV_FLOOR:
      return binaryDispatch<DivFloor>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_REMAINDER:
      return binaryDispatch<Remainder>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_FMOD:
      return binaryDispatch<Fmod>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_POW:
      return binaryDispatch<Pow>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_MINIMUM:
      return binaryDispatch<Minimum>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_MAXIMUM:
      return binaryDispatch<Maximum>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_ATAN2:
      return binaryDispatch<Atan2>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_BITWISE_AND:
      return binaryDispatch<BitwiseAnd>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_BITWISE_OR:
      return binaryDispatch<BitwiseOr>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_BITWISE_XOR:
      return binaryDispatch<BitwiseXor>(dtype, o, a, b, n, so, sa, sb, alpha, s, form);
    case BINARY_LOGICAL_AND:
      return compareDispatch<LogicalAnd>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_LOGICAL_OR:
      return compareDispatch<LogicalOr>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_LOGICAL_XOR:
      return compareDispatch<LogicalXor>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_EQ:
      return compareDispatch<Eq>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_NE:
      return compareDispatch<Ne>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_LT:
      return compareDispatch<Lt>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_LE:
      return compareDispatch<Le>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_GT:
      return compareDispatch<Gt>(dtype, o, a, b, n, so, sa, sb, s, form);
    case BINARY_GE:
      return compareDispatch<Ge>(dtype, o, a, b, n, so, sa, sb, s, form);
  }
  return STATUS_BAD_ARGUMENT;
}

// ---- exports ----------------------------------------------------------------------------------------------------

/** out[0..n) = a op b over contiguous operands (see the file header). Returns a status (Note [Status codes]). */
export function binary_contig(op: i32, dtype: i32, out: usize, a: usize, b: usize, n: i32, alpha: f64): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  const eo: isize = binaryWritesBool(op) ? 1 : e;
  return binaryRow(op, dtype, out, a, b, n, eo, e, e, alpha, 0, FORM_TENSORS);
}

/** out[0..n) = a op s with an f64 scalar s (converted like a PyTorch Scalar, see scalarToCompute). */
export function binary_scalar_contig(op: i32, dtype: i32, out: usize, a: usize, s: f64, n: i32, alpha: f64): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  const eo: isize = binaryWritesBool(op) ? 1 : e;
  return binaryRow(op, dtype, out, a, 0, n, eo, e, 0, alpha, s, FORM_SCALAR_RIGHT);
}

/** out[0..n) = s op b with an f64 scalar s on the left (`1 / x`, `2 - x`). */
export function binary_rscalar_contig(op: i32, dtype: i32, out: usize, s: f64, b: usize, n: i32, alpha: f64): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  const e = <isize>itemSize(dtype);
  const eo: isize = binaryWritesBool(op) ? 1 : e;
  return binaryRow(op, dtype, out, 0, b, n, eo, 0, e, alpha, s, FORM_SCALAR_LEFT);
}

/** The strided driver shared by the three forms; tensor operands not in the form get stride 0. */
function binaryStrided(
  op: i32,
  dtype: i32,
  out: usize,
  a: usize,
  b: usize,
  desc: usize,
  alpha: f64,
  s: f64,
  form: i32,
): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const probe = binaryRow(op, dtype, 0, 0, 0, 0, 0, 0, 0, alpha, s, form);
  if (probe != STATUS_OK) return probe;
  const e = <isize>itemSize(dtype);
  const eo: isize = binaryWritesBool(op) ? 1 : e;
  // Descriptor operand k of each tensor (-1 = absent in this form).
  const ka = form == FORM_SCALAR_LEFT ? -1 : 1;
  const kb = form == FORM_TENSORS ? 2 : form == FORM_SCALAR_LEFT ? 1 : -1;
  const nops = form == FORM_TENSORS ? 3 : 2;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * eo;
  const sa: isize = ka < 0 ? 0 : innerStride(desc, ndim, ka) * e;
  const sb: isize = kb < 0 ? 0 : innerStride(desc, ndim, kb) * e;
  const mo = midStride(desc, ndim, 0) * eo;
  const ma: isize = ka < 0 ? 0 : midStride(desc, ndim, ka) * e;
  const mb: isize = kb < 0 ? 0 : midStride(desc, ndim, kb) * e;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, nops, blk);
    let po = out + <usize>(blockOff0 * eo);
    let pa = ka < 0 ? a : a + <usize>(blockOff1 * e);
    let pb = kb == 2 ? b + <usize>(blockOff2 * e) : kb == 1 ? b + <usize>(blockOff1 * e) : b;
    for (let m = 0; m < mid; m++) {
      binaryRow(op, dtype, po, pa, pb, inner, so, sa, sb, alpha, s, form);
      po += <usize>mo;
      pa += <usize>ma;
      pb += <usize>mb;
    }
  }
  return STATUS_OK;
}

/** binary_contig over strided views; `desc` operands: out, a, b (Note [Strided descriptor]). */
export function binary_strided(op: i32, dtype: i32, out: usize, a: usize, b: usize, desc: usize, alpha: f64): i32 {
  return binaryStrided(op, dtype, out, a, b, desc, alpha, 0, FORM_TENSORS);
}

/** binary_scalar_contig over strided views; `desc` operands: out, a. */
export function binary_scalar_strided(
  op: i32,
  dtype: i32,
  out: usize,
  a: usize,
  s: f64,
  desc: usize,
  alpha: f64,
): i32 {
  return binaryStrided(op, dtype, out, a, 0, desc, alpha, s, FORM_SCALAR_RIGHT);
}

/** binary_rscalar_contig over strided views; `desc` operands: out, b. */
export function binary_rscalar_strided(
  op: i32,
  dtype: i32,
  out: usize,
  s: f64,
  b: usize,
  desc: usize,
  alpha: f64,
): i32 {
  return binaryStrided(op, dtype, out, 0, b, desc, alpha, s, FORM_SCALAR_LEFT);
}
