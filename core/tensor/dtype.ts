/**
 * Data types: PyTorch's `ScalarType` codes (so a dtype crosses into wasm and WGSL as the integer
 * PyTorch uses), the `DType` singletons (`torch.float32` ...), the default dtype, the `TypedArray`
 * that views a dtype's storage, and the float16 / bfloat16 bit conversions.
 *
 * @example
 * ```ts
 * import { float32, toDType } from './dtype.ts';
 * console.log(String(float32), toDType('int64').itemSize); // torch.float32 8
 * ```
 *
 * @module
 */

/**
 * PyTorch's ScalarType codes for the dtypes Switchyard supports (c10/core/ScalarType.h). The gaps
 * (8-10 complex, 12-14 quantized) are PyTorch's and are kept so codes match.
 *
 * @example
 * ```ts
 * import { ScalarType } from './dtype.ts';
 * console.log(ScalarType.Float); // 6
 * ```
 */
export const ScalarType = {
  Byte: 0,
  Char: 1,
  Short: 2,
  Int: 3,
  Long: 4,
  Half: 5,
  Float: 6,
  Double: 7,
  Bool: 11,
  BFloat16: 15,
} as const;

/** A ScalarType code (`ScalarType.Float` is `6`). */
export type ScalarType = typeof ScalarType[keyof typeof ScalarType];

/** The name of a ScalarType as c10 prints it in messages (`Float`, `Long`, ...). */
export type ScalarTypeName = keyof typeof ScalarType;

/** The canonical dtype names, as in `torch.float32`. */
export type DTypeName =
  | 'bool'
  | 'uint8'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float16'
  | 'bfloat16'
  | 'float32'
  | 'float64';

/** PyTorch's alternative names (`torch.long` is `torch.int64`), accepted by {@linkcode dtypeFromName}. */
export type DTypeAlias = 'float' | 'double' | 'half' | 'long' | 'int' | 'short';

/** The TypedArray that views a dtype's elements. */
export interface TypedArrayByName {
  /** 0 or 1 per byte. */ bool: Uint8Array;
  /** `torch.uint8` elements. */ uint8: Uint8Array;
  /** `torch.int8` elements. */ int8: Int8Array;
  /** `torch.int16` elements. */ int16: Int16Array;
  /** `torch.int32` elements. */ int32: Int32Array;
  /** `torch.int64` elements, as bigints. */ int64: BigInt64Array;
  /** Raw float16 bits; see {@linkcode float16BitsToNumber}. */ float16: Uint16Array;
  /** Raw bfloat16 bits; see {@linkcode bfloat16BitsToNumber}. */ bfloat16: Uint16Array;
  /** `torch.float32` elements. */ float32: Float32Array;
  /** `torch.float64` elements. */ float64: Float64Array;
}

/** Any TypedArray that {@linkcode typedArrayFor} returns. */
export type DTypeArray = TypedArrayByName[DTypeName];

/**
 * A tensor element type. There is exactly one frozen instance per dtype, so dtypes compare with `===`.
 *
 * @example
 * ```ts
 * import { float16 } from './dtype.ts';
 * console.log(float16.itemSize, float16.isFloatingPoint, `${float16}`); // 2 true torch.float16
 * ```
 */
export class DType<N extends DTypeName = DTypeName> {
  /** The canonical name, e.g. `float32`. */
  readonly name: N;
  /** PyTorch's ScalarType code. */
  readonly scalarType: ScalarType;
  /** c10's name for the ScalarType (`Float`), used in PyTorch's error messages. */
  readonly scalarTypeName: ScalarTypeName;
  /** Bytes per element. */
  readonly itemSize: number;
  /** True for float16, bfloat16, float32 and float64 (`torch.dtype.is_floating_point`). */
  readonly isFloatingPoint: boolean;
  /** True when the type can hold negative values (`torch.dtype.is_signed`). */
  readonly isSigned: boolean;
  /** Always false: Switchyard has no complex dtypes yet. */
  readonly isComplex: boolean = false;

  private constructor(name: N, scalarTypeName: ScalarTypeName, itemSize: number, isFloat: boolean, signed: boolean) {
    this.name = name;
    this.scalarType = ScalarType[scalarTypeName];
    this.scalarTypeName = scalarTypeName;
    this.itemSize = itemSize;
    this.isFloatingPoint = isFloat;
    this.isSigned = signed;
    Object.freeze(this);
  }

  /** PyTorch's repr, e.g. `torch.float32`. */
  toString(): string {
    return `torch.${this.name}`;
  }

  // The singletons live here because only the class body may call the private constructor.
  /** `torch.bool`. */
  static readonly bool: DType<'bool'> = new DType('bool', 'Bool', 1, false, false);
  /** `torch.uint8`. */
  static readonly uint8: DType<'uint8'> = new DType('uint8', 'Byte', 1, false, false);
  /** `torch.int8`. */
  static readonly int8: DType<'int8'> = new DType('int8', 'Char', 1, false, true);
  /** `torch.int16`. */
  static readonly int16: DType<'int16'> = new DType('int16', 'Short', 2, false, true);
  /** `torch.int32`. */
  static readonly int32: DType<'int32'> = new DType('int32', 'Int', 4, false, true);
  /** `torch.int64`. */
  static readonly int64: DType<'int64'> = new DType('int64', 'Long', 8, false, true);
  /** `torch.float16`. */
  static readonly float16: DType<'float16'> = new DType('float16', 'Half', 2, true, true);
  /** `torch.bfloat16`. */
  static readonly bfloat16: DType<'bfloat16'> = new DType('bfloat16', 'BFloat16', 2, true, true);
  /** `torch.float32`. */
  static readonly float32: DType<'float32'> = new DType('float32', 'Float', 4, true, true);
  /** `torch.float64`. */
  static readonly float64: DType<'float64'> = new DType('float64', 'Double', 8, true, true);
}

/** `torch.bool`. */
export const bool: DType<'bool'> = DType.bool;
/** `torch.uint8`. */
export const uint8: DType<'uint8'> = DType.uint8;
/** `torch.int8`. */
export const int8: DType<'int8'> = DType.int8;
/** `torch.int16` (`torch.short`). */
export const int16: DType<'int16'> = DType.int16;
/** `torch.int32` (`torch.int`). */
export const int32: DType<'int32'> = DType.int32;
/** `torch.int64` (`torch.long`). */
export const int64: DType<'int64'> = DType.int64;
/** `torch.float16` (`torch.half`). */
export const float16: DType<'float16'> = DType.float16;
/** `torch.bfloat16`. */
export const bfloat16: DType<'bfloat16'> = DType.bfloat16;
/** `torch.float32` (`torch.float`). */
export const float32: DType<'float32'> = DType.float32;
/** `torch.float64` (`torch.double`). */
export const float64: DType<'float64'> = DType.float64;
// Named explicitly before freezing: a bundler may rename the class binding (Deno's package bundle calls it `DType2`,
// scripts/bundle.ts), and a frozen class's name can no longer be set back afterwards.
Object.defineProperty(DType, 'name', { value: 'DType' });
Object.freeze(DType);

/**
 * Every dtype, in ScalarType order.
 *
 * @example
 * ```ts
 * import { ALL_DTYPES } from './dtype.ts';
 * console.log(ALL_DTYPES.map(String).join(' '));
 * ```
 */
export const ALL_DTYPES: readonly DType[] = Object.freeze(
  [uint8, int8, int16, int32, int64, float16, float32, float64, bool, bfloat16] as DType[],
);

const BY_CODE: (DType | undefined)[] = [];
for (const d of ALL_DTYPES) BY_CODE[d.scalarType] = d;

// Names as c10's getStringToDtypeMap builds them from getDtypeNames (c10/core/ScalarType.cpp).
const BY_NAME = new Map<string, DType>([
  ...ALL_DTYPES.map((d) => [d.name, d] as const),
  ...Object.entries({ float: float32, double: float64, half: float16, long: int64, int: int32, short: int16 }),
]);

/**
 * The dtype for a name or alias (`'float32'`, `'float'`, `'long'`, ...), with or without `torch.`.
 *
 * @example
 * ```ts
 * import { dtypeFromName, int64 } from './dtype.ts';
 * console.log(dtypeFromName('long') === int64); // true
 * ```
 */
export function dtypeFromName(name: DTypeName | DTypeAlias | string): DType {
  const found = typeof name === 'string' ? BY_NAME.get(name.startsWith('torch.') ? name.slice(6) : name) : undefined;
  if (found === undefined) {
    throw new TypeError(
      `Invalid dtype ${typeof name === 'string' ? `'${name}'` : name}: expected one of ${
        [...BY_NAME.keys()].join(', ')
      }`,
    );
  }
  return found;
}

/**
 * A DType from a DType or a name. Aliases are accepted at run time too.
 *
 * @example
 * ```ts
 * import { float64, toDType } from './dtype.ts';
 * console.log(toDType('float64') === float64, toDType(float64) === float64); // true true
 * ```
 */
export function toDType(like: DTypeLike | number): DType {
  if (typeof like === 'number') return dtypeFromScalarType(like); // schema defaults store ScalarType codes
  return like instanceof DType ? like : dtypeFromName(like);
}

/** A dtype or its canonical name. */
export type DTypeLike = DType | DTypeName;

/**
 * The dtype for a ScalarType code.
 *
 * @example
 * ```ts
 * import { dtypeFromScalarType, ScalarType } from './dtype.ts';
 * console.log(`${dtypeFromScalarType(ScalarType.BFloat16)}`); // torch.bfloat16
 * ```
 */
export function dtypeFromScalarType(code: number): DType {
  const found = Number.isInteger(code) ? BY_CODE[code] : undefined;
  if (found === undefined) {
    throw new TypeError(`Unsupported ScalarType code ${code}: expected one of ${Object.values(ScalarType)}`);
  }
  return found;
}

let defaultDtype: DType = float32;

/**
 * The dtype of floating-point tensors made from JS numbers (`torch.get_default_dtype()`).
 *
 * @example
 * ```ts
 * import { getDefaultDtype } from './dtype.ts';
 * console.log(`${getDefaultDtype()}`); // torch.float32
 * ```
 */
export function getDefaultDtype(): DType {
  return defaultDtype;
}

/**
 * Sets the default floating-point dtype (`torch.set_default_dtype`). Only floating types are allowed;
 * PyTorch 1.13 accepts float16 and bfloat16 too.
 *
 * @example
 * ```ts
 * import { float64, getDefaultDtype, setDefaultDtype } from './dtype.ts';
 * setDefaultDtype(float64);
 * console.log(`${getDefaultDtype()}`); // torch.float64
 * setDefaultDtype('float32');
 * ```
 */
export function setDefaultDtype(dtype: DTypeLike): void {
  const d = toDType(dtype);
  // PyTorch's wording (torch/csrc/tensor/python_tensor.cpp); a TypeError there too.
  if (!d.isFloatingPoint) throw new TypeError('Only floating-point types are supported as the default type');
  defaultDtype = d;
}

/**
 * A TypedArray over `length` elements of `dtype` at `byteOffset` of `buffer`. float16 and bfloat16
 * come back as their raw bits (Uint16Array), int64 as BigInt64Array, bool as 0/1 bytes.
 *
 * @example
 * ```ts
 * import { float32, typedArrayFor } from './dtype.ts';
 * const view = typedArrayFor(float32, new ArrayBuffer(16), 4, 3);
 * console.log(view.constructor.name, view.length); // Float32Array 3
 * ```
 */
export function typedArrayFor<N extends DTypeName>(
  dtype: DType<N>,
  buffer: ArrayBufferLike,
  byteOffset: number,
  length: number,
): TypedArrayByName[N] {
  const ArrayType: new (b: ArrayBufferLike, o: number, n: number) => TypedArrayByName[N] = ARRAY_TYPES[dtype.name];
  return new ArrayType(buffer, byteOffset, length);
}

const ARRAY_TYPES: { [K in DTypeName]: new (b: ArrayBufferLike, o: number, n: number) => TypedArrayByName[K] } = {
  bool: Uint8Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  float16: Uint16Array,
  bfloat16: Uint16Array,
  float32: Float32Array,
  float64: Float64Array,
};

// ---------------------------------------------------------------------------------------------
// float16 / bfloat16 <-> number. The conversion from a JS number rounds once, directly from the
// double, to nearest-even (IEEE 754 roundTiesToEven), as `Math.f16round` does.

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
const f32 = new Float32Array(1);
const f32Word = new Uint32Array(f32.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/**
 * The value of float16 bits.
 *
 * @example
 * ```ts
 * import { float16BitsToNumber } from './dtype.ts';
 * console.log(float16BitsToNumber(0x3c00), float16BitsToNumber(0x7bff)); // 1 65504
 * ```
 */
export function float16BitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (mantissa + 0x400) * 2 ** (exponent - 25);
}

/**
 * The float16 bits nearest to `value` (ties to even). Overflow gives ±inf; NaN gives 0x7e00 with the
 * sign of the input, as c10's `fp16_ieee_from_fp32_value` does.
 *
 * @example
 * ```ts
 * import { numberToFloat16Bits } from './dtype.ts';
 * console.log(numberToFloat16Bits(1).toString(16), numberToFloat16Bits(65520).toString(16)); // 3c00 7c00
 * ```
 */
export function numberToFloat16Bits(value: number): number {
  return roundToBits(value, 5, 10, 0x7e00);
}

/**
 * The value of bfloat16 bits.
 *
 * @example
 * ```ts
 * import { bfloat16BitsToNumber } from './dtype.ts';
 * console.log(bfloat16BitsToNumber(0x3f80), bfloat16BitsToNumber(0xc040)); // 1 -3
 * ```
 */
export function bfloat16BitsToNumber(bits: number): number {
  f32Word[0] = (bits & 0xffff) << 16;
  return f32[0];
}

/**
 * The bfloat16 bits nearest to `value` (ties to even). Overflow gives ±inf; NaN gives 0x7fc0, as
 * c10's `round_to_nearest_even` does.
 *
 * @example
 * ```ts
 * import { numberToBFloat16Bits } from './dtype.ts';
 * console.log(numberToBFloat16Bits(1).toString(16), numberToBFloat16Bits(Math.PI).toString(16)); // 3f80 4049
 * ```
 */
export function numberToBFloat16Bits(value: number): number {
  return value !== value ? 0x7fc0 : roundToBits(value, 8, 7, 0x7fc0);
}

/** Rounds a double to a binary format with `exponentBits`/`mantissaBits`, ties to even. */
function roundToBits(value: number, exponentBits: number, mantissaBits: number, nanBits: number): number {
  f64[0] = value;
  const signBit = (f64Words[HI] >>> 31) << (exponentBits + mantissaBits);
  if (value !== value) return signBit | nanBits;
  const magnitude = Math.abs(value);
  const bias = (1 << (exponentBits - 1)) - 1;
  const infBits = ((1 << exponentBits) - 1) << mantissaBits;
  const minNormalExponent = 1 - bias;
  let exponent = ((f64Words[HI] >>> 20) & 0x7ff) - 1023;
  if (magnitude === Infinity || exponent > bias) return signBit | infBits;
  if (exponent < minNormalExponent) exponent = minNormalExponent; // subnormal: fixed scale
  // Exact: scaling by a power of two, and the result has at most 53 significant bits.
  const scaled = magnitude * 2 ** (mantissaBits - exponent);
  let integer = Math.floor(scaled);
  const fraction = scaled - integer;
  if (fraction > 0.5 || (fraction === 0.5 && (integer & 1) === 1)) integer += 1;
  // `integer` holds the implicit leading bit (it is below 2^mantissaBits only for subnormals, whose
  // biased exponent field is 0), so adding it to (exponent + bias - 1) << mantissaBits carries a
  // rounding overflow into the next binade, or into infinity, by itself.
  return signBit | (((exponent + bias - 1) << mantissaBits) + integer);
}
