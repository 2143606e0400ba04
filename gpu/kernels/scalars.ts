/**
 * Scalars and dtype dispatch lists of the WebGPU kernels.
 *
 * Note [GPU dtype dispatch]
 * A WebGPU kernel accepts the dtypes its CPU counterpart accepts (the lists of PyTorch 1.13's CPU kernels, so
 * an operator works on both devices or on neither), except float64, which no WebGPU kernel computes with (Note
 * [GPU element layout]), and float16, which every kernel that takes bfloat16 also takes: PyTorch's CUDA kernels
 * dispatch over Half and BFloat16 together where its 1.13 CPU kernels often leave Half out (`clamp_min`, `gelu`,
 * `floor`), and WebGPU autocast's float16 (core/features/autocast.ts) flows into them (`relu(linear(x))`). Both
 * reduced floats compute in f32 and round on store, so the extra dtype costs no kernel. The error is PyTorch's,
 * with the kernel named `<op>_webgpu` where the CPU's is `<op>_cpu`: `"bitwise_and_webgpu" not implemented for
 * 'Float'`.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../../core/dispatch/errors.ts';
import {
  bfloat16,
  bfloat16BitsToNumber,
  bool,
  type DType,
  float16,
  float16BitsToNumber,
  float32,
  float64,
  int16,
  int32,
  int64,
  int8,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  uint8,
} from '../../core/tensor/dtype.ts';
import { type Kind, kindOf } from '../wgsl/dtypes.ts';
import type { ScalarOperand } from './elementwise_engine.ts';

/** A kernel's accepted dtypes (a bit per ScalarType code) and the name its error quotes. */
export interface DtypeDispatch {
  readonly name: string;
  readonly dtypes: number;
}

const bits = (...dtypes: DType[]): number => dtypes.reduce((m, d) => m | (1 << d.scalarType), 0);
/**
 * Integral dtypes (a bit per ScalarType code; the lists below likewise).
 *
 * @example
 * ```ts
 * import { INTEGRAL } from './scalars.ts';
 * (INTEGRAL >> 4) & 1; // 1: int64 is integral
 * ```
 */
export const INTEGRAL: number = bits(uint8, int8, int16, int32, int64);
/** Every dtype a WebGPU kernel computes with. */
export const ALL: number = INTEGRAL | bits(bool, float16, bfloat16, float32);
/** All but bool. */
export const ALL_BUT_BOOL: number = ALL & ~bits(bool);
/** All but bool and float16. */
export const ALL_BUT_BOOL_HALF: number = ALL_BUT_BOOL & ~bits(float16);
/** float16, bfloat16, float32. */
export const FLOATING: number = bits(float16, bfloat16, float32);
/** bfloat16, float32. */
export const FLOATING_BUT_HALF: number = bits(bfloat16, float32);
/** Integral and bool. */
export const INTEGRAL_AND_BOOL: number = INTEGRAL | bits(bool);

/**
 * A dispatch list named like PyTorch's CPU kernel, with `_cpu` become `_webgpu`, float16 added where bfloat16
 * is in the list (Note [GPU dtype dispatch]).
 *
 * @example
 * ```ts
 * import { dispatch, FLOATING } from './scalars.ts';
 * dispatch('exp_vml_cpu', FLOATING).name; // 'exp_vml_webgpu'
 * ```
 */
export function dispatch(cpuName: string, dtypes: number): DtypeDispatch {
  const withHalf = (dtypes & bits(bfloat16)) !== 0 ? dtypes | bits(float16) : dtypes;
  return { name: cpuName.replace(/_cpu(_?)$/, '_webgpu$1'), dtypes: withHalf };
}

/**
 * Throws PyTorch's `"name" not implemented for 'Type'` unless `dtype` is in the list.
 *
 * @example
 * ```ts
 * import { checkDispatch, dispatch, FLOATING } from './scalars.ts';
 * // checkDispatch(dispatch('exp_vml_cpu', FLOATING), int32) throws
 * ```
 */
export function checkDispatch(d: DtypeDispatch, dtype: DType): void {
  if ((d.dtypes & (1 << dtype.scalarType)) === 0 || dtype === float64) {
    throw new NotImplementedError(`"${d.name}" not implemented for '${dtype.scalarTypeName}'`);
  }
}

const INT_BITS: Partial<Record<string, number>> = { uint8: 8, int8: 8, int16: 16, int32: 32 };

/**
 * A Python scalar as a kernel of compute dtype `dtype` uses it (PyTorch wraps it in a tensor of that dtype):
 * rounded to float16/bfloat16, truncated and wrapped to an integer width, exact for int64 (a bigint).
 *
 * @example
 * ```ts
 * import { scalarOperand } from './scalars.ts';
 * import { int8 } from '../../core/tensor/dtype.ts';
 * scalarOperand(300, int8, 'add').scalar; // 44
 * ```
 */
export function scalarOperand(value: number | boolean, dtype: DType, op: string): ScalarOperand {
  const kind: Kind = kindOf(dtype, op);
  const v = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  if (kind === 'f32') {
    if (dtype === float16) return { scalar: float16BitsToNumber(numberToFloat16Bits(Math.fround(v))), kind };
    if (dtype === bfloat16) return { scalar: bfloat16BitsToNumber(numberToBFloat16Bits(Math.fround(v))), kind };
    return { scalar: v, kind };
  }
  if (dtype === bool) return { scalar: v !== 0 ? 1 : 0, kind };
  if (!Number.isFinite(v)) return { scalar: 0, kind };
  const t = Math.trunc(v);
  if (kind === 'i64') return { scalar: BigInt.asIntN(64, BigInt(t)), kind };
  const width = INT_BITS[dtype.name]!;
  const wrapped = Number(dtype === uint8 ? BigInt.asUintN(width, BigInt(t)) : BigInt.asIntN(width, BigInt(t)));
  return { scalar: wrapped, kind };
}

/**
 * The raw number of a Python scalar (`true` is 1).
 *
 * @example
 * ```ts
 * import { scalarNumber } from './scalars.ts';
 * scalarNumber(true); // 1
 * ```
 */
export const scalarNumber = (s: number | boolean): number => (typeof s === 'boolean' ? (s ? 1 : 0) : s);

const CPP_NAMES: Partial<Record<string, string>> = {
  uint8: 'uint8_t',
  int8: 'int8_t',
  int16: 'int16_t',
  int32: 'int',
  float16: 'at::Half',
  bfloat16: 'at::BFloat16',
  float32: 'float',
};

/**
 * c10's `checked_convert`: a scalar that does not fit the dtype is an error (`fill_(int8 tensor, 1000)`).
 *
 * @example
 * ```ts
 * import { checkScalarFits } from './scalars.ts';
 * // checkScalarFits(1000, int8) throws 'value cannot be converted to type int8_t without overflow'
 * ```
 */
export function checkScalarFits(s: number, dtype: DType): void {
  if (dtype === bool || dtype === int64 || dtype === float64) return;
  let fits: boolean;
  if (dtype.isFloatingPoint) {
    fits = !Number.isFinite(s) || Math.abs(s) <= (dtype === float16 ? 65504 : 3.4028234663852886e38);
  } else {
    const size = 8 * dtype.itemSize;
    fits = dtype === uint8 ? s <= 255 && s >= -255 : s >= -(2 ** (size - 1)) && s <= 2 ** (size - 1) - 1;
  }
  if (!fits) {
    throw new RuntimeError(`value cannot be converted to type ${CPP_NAMES[dtype.name] ?? dtype.name} without overflow`);
  }
}
