/**
 * Declarations of the factory operators: `empty`, `zeros`, `ones`, `full`, `arange`, `linspace`, `eye` (routed
 * by the BackendSelect kernel on their `device` argument, as they have no tensor argument), and the `*_like`
 * composites that take their dtype and device from a tensor. The Meta functions do PyTorch's argument checks,
 * so every backend (Meta included) reports the same errors.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import type { DType, DTypeName } from '../tensor/dtype.ts';
import { bool, float32, float64, getDefaultDtype, int64 } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { numelOf } from '../tensor/shape.ts';
import { aten } from './aten_call.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';
import { copyStrides, memoryFormatOf, storageNbytes } from './view_layout.ts';

const TENSOR_OPTIONS = 'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None';

/**
 * Validates a size argument (PyTorch's `check_size_nonnegative`).
 *
 * @example
 * ```ts
 * import { checkSize } from './decl_factories.ts';
 * checkSize([2, 0]); // [2, 0]
 * ```
 */
export function checkSize(size: readonly number[]): readonly number[] {
  for (const s of size) {
    if (!Number.isInteger(s) || s < 0) {
      throw new RuntimeError(`Trying to create tensor with negative dimension ${s}: [${size.join(', ')}]`);
    }
  }
  return size;
}

/**
 * Checks the layout option (only strided tensors exist).
 *
 * @example
 * ```ts
 * import { checkLayout } from './decl_factories.ts';
 * checkLayout('strided'); // ok
 * ```
 */
export function checkLayout(layout: number | string | null): void {
  if (layout !== null && layout !== 0 && layout !== 'strided') {
    throw new RuntimeError(`Switchyard supports only the strided layout, got ${layout}`);
  }
}

/**
 * Meta function of `empty`, `zeros`, `ones`.
 *
 * @example
 * ```ts
 * import { factoryMeta } from './decl_factories.ts';
 * factoryMeta([2, 3], null, null, null).shape; // [2, 3]
 * ```
 */
export const factoryMeta = (
  size: readonly number[],
  dtype: DType | null,
  layout: number | string | null,
  _device: Device | null,
): TensorMeta => {
  checkLayout(layout);
  return { shape: checkSize(size), dtype: dtype ?? getDefaultDtype() };
};

// ---------------------------------------------------------------------------------------------------------
// Scalar conversions with c10's overflow checks
// ---------------------------------------------------------------------------------------------------------

/** The C++ type names c10's `checked_convert` prints ("value cannot be converted to type int8_t ..."). */
const CONVERT_NAMES: { readonly [K in DTypeName]: string } = {
  bool: 'bool',
  uint8: 'uint8_t',
  int8: 'int8_t',
  int16: 'int16_t',
  int32: 'int',
  int64: 'int64_t',
  float16: 'at::Half',
  bfloat16: 'at::BFloat16',
  float32: 'float',
  float64: 'double',
};

/**
 * The names c10's TypeMeta prints for a dtype (PyTorch's bound errors: "from is out of bounds for int").
 *
 * @example
 * ```ts
 * import { TYPE_META_NAMES } from './decl_factories.ts';
 * TYPE_META_NAMES.int16; // 'short int'
 * ```
 */
export const TYPE_META_NAMES: { readonly [K in DTypeName]: string } = {
  bool: 'bool',
  uint8: 'unsigned char',
  int8: 'signed char',
  int16: 'short int',
  int32: 'int',
  int64: 'long int',
  float16: 'c10::Half',
  bfloat16: 'c10::BFloat16',
  float32: 'float',
  float64: 'double',
};

const LIMITS: { readonly [K in DTypeName]: readonly [number, number] } = {
  bool: [0, 1],
  uint8: [0, 255],
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  float16: [-65504, 65504],
  bfloat16: [-3.3895313892515355e38, 3.3895313892515355e38],
  float32: [-3.4028234663852886e38, 3.4028234663852886e38],
  float64: [-Number.MAX_VALUE, Number.MAX_VALUE],
};

/**
 * `numeric_limits<T>::lowest()` and `max()` of a dtype, as numbers.
 *
 * @example
 * ```ts
 * import { dtypeLimits } from './decl_factories.ts';
 * import { int8 } from '../tensor/dtype.ts';
 * dtypeLimits(int8); // [-128, 127]
 * ```
 */
export function dtypeLimits(dtype: DType): readonly [number, number] {
  return LIMITS[dtype.name];
}

/**
 * Whether a JS number is an integral Scalar (PyTorch's `Scalar::isIntegral`): an integer that fits int64, or
 * a boolean. JavaScript cannot tell `2.0` from `2`, so both are integral.
 *
 * @example
 * ```ts
 * import { isIntegralScalar } from './decl_factories.ts';
 * isIntegralScalar(2.5); // false
 * ```
 */
export function isIntegralScalar(v: number | boolean): boolean {
  return typeof v === 'boolean' || (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63);
}

/**
 * `Scalar::to<T>()`: a Scalar converted to a dtype's value (truncated and wrapped for integers, rounded to
 * the nearest float32 for float32, left a double for float16/bfloat16 whose rounding the writer does), with
 * c10's overflow check. Integral scalars may wrap into unsigned types from down to `-max` (`a - b` idioms),
 * floating ones may not; infinities and NaN pass for floating types; bool never overflows. `typeName` replaces
 * the C++ type name in the message (Python's `torch.tensor` says `uint8` where `full` says `uint8_t`).
 *
 * @example
 * ```ts
 * import { checkedConvert } from './decl_factories.ts';
 * import { uint8 } from '../tensor/dtype.ts';
 * checkedConvert(-1, uint8); // 255
 * ```
 */
export function checkedConvert(value: number | boolean, dtype: DType, typeName?: string): number {
  // `Number()` unwraps a floatScalar, whose float-ness `isIntegralScalar` below still sees.
  const v = typeof value === 'boolean' ? (value ? 1 : 0) : Number(value);
  if (dtype === bool) return v !== 0 ? 1 : 0;
  const [lo, hi] = LIMITS[dtype.name];
  let overflow: boolean;
  if (isIntegralScalar(value)) {
    overflow = !dtype.isSigned && !dtype.isFloatingPoint ? v > hi || v < -hi : v < lo || v > hi;
  } else if (dtype.isFloatingPoint) {
    overflow = Number.isFinite(v) && (v < lo || v > hi);
  } else {
    overflow = !(v >= lo && v <= hi);
  }
  if (overflow) {
    throw new RuntimeError(
      `value cannot be converted to type ${typeName ?? CONVERT_NAMES[dtype.name]} without overflow`,
    );
  }
  return convertNumber(v, dtype);
}

/**
 * `static_cast<T>(v)` for an in-range value: truncation and two's-complement wrapping for integers.
 *
 * @example
 * ```ts
 * import { convertNumber } from './decl_factories.ts';
 * import { int8 } from '../tensor/dtype.ts';
 * convertNumber(200, int8); // -56
 * ```
 */
export function convertNumber(v: number, dtype: DType): number {
  switch (dtype.name) {
    case 'bool':
      return v !== 0 ? 1 : 0;
    case 'uint8':
      return Math.trunc(v) & 0xff;
    case 'int8':
      return (Math.trunc(v) << 24) >> 24;
    case 'int16':
      return (Math.trunc(v) << 16) >> 16;
    case 'int32':
      return Math.trunc(v) | 0;
    case 'int64':
      return Math.trunc(v) + 0;
    case 'float32':
      return Math.fround(v);
    default:
      return v;
  }
}

/**
 * Formats a double as C++'s `std::ostream << double` does (`%g`, 6 significant digits): PyTorch's messages.
 *
 * @example
 * ```ts
 * import { formatCppDouble } from './decl_factories.ts';
 * formatCppDouble(3e38); // '3e+38'
 * ```
 */
export function formatCppDouble(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, expText] = x.toExponential(5).split('e');
  const exp = Number(expText);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp < -4 || exp >= 6) return `${trim(mantissa)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return trim(x.toFixed(Math.max(0, 5 - exp)));
}

// ---------------------------------------------------------------------------------------------------------
// full, arange, linspace, eye
// ---------------------------------------------------------------------------------------------------------

/**
 * Meta function of `full`: PyTorch infers the dtype from the fill value (bool, int64, default float) and
 * checks that the value fits the dtype.
 *
 * @example
 * ```ts
 * import { fullMeta } from './decl_factories.ts';
 * fullMeta([2], 3, null, null).dtype.name; // 'int64'
 * ```
 */
export function fullMeta(
  size: readonly number[],
  fill: number | boolean,
  dtype: DType | null,
  layout: number | string | null,
): TensorMeta {
  checkLayout(layout);
  const inferred = dtype ?? (typeof fill === 'boolean' ? bool : isIntegralScalar(fill) ? int64 : getDefaultDtype());
  checkedConvert(fill, inferred);
  return { shape: checkSize(size), dtype: inferred };
}

/** What an `arange` fills: the result metadata and its start and step in the accumulate type. */
export interface ArangePlan extends TensorMeta {
  /** `start` converted to the accumulate type (int64 for integers, float for half types, else double). */
  readonly start: number;
  /** `step` in the accumulate type. */
  readonly step: number;
}

/** `at::acc_type<T, false>` of a dtype, for conversions: int64 for integers, float for half types, double. */
function accumulateType(dtype: DType): DType {
  if (!dtype.isFloatingPoint) return int64;
  return dtype.itemSize === 2 ? float32 : float64;
}

/**
 * The metadata and fill parameters of `arange(start, end, step)`, with PyTorch's dtype inference (integral
 * arguments give int64, others the default dtype), its size rule (`ceil((end - start) / step)`, exact integer
 * arithmetic for int64) and its errors.
 *
 * @example
 * ```ts
 * import { arangePlan } from './decl_factories.ts';
 * arangePlan(1, 2.5, 0.5, null, null).shape; // [3]
 * ```
 */
export function arangePlan(
  start: number | boolean,
  end: number | boolean,
  step: number | boolean,
  dtype: DType | null,
  layout: number | string | null,
): ArangePlan {
  checkLayout(layout);
  const integral = isIntegralScalar(start) && isIntegralScalar(end) && isIntegralScalar(step);
  const out = dtype ?? (integral ? int64 : getDefaultDtype());
  if (out === bool) throw new NotImplementedError(`"arange_cpu" not implemented for 'Bool'`);
  const acc = accumulateType(out);
  const xstart = checkedConvert(start, acc), xend = checkedConvert(end, acc), xstep = checkedConvert(step, acc);
  if (!(xstep > 0 || xstep < 0)) throw new RuntimeError('step must be nonzero');
  if (!Number.isFinite(xstart) || !Number.isFinite(xend)) {
    throw new RuntimeError(`unsupported range: ${formatCppDouble(xstart)} -> ${formatCppDouble(xend)}`);
  }
  if (!((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart))) {
    throw new RuntimeError('upper bound and larger bound inconsistent with step sign');
  }
  let size: number;
  if (out === int64) {
    const sign = xstep > 0 ? 1n : -1n;
    const [s, e, st] = [BigInt(xstart), BigInt(xend), BigInt(xstep)];
    size = Number((e - s + st - sign) / st);
  } else {
    const num = (v: number | boolean) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);
    size = Math.ceil((num(end) - num(start)) / num(step));
  }
  if (!(size >= 0 && size <= 2 ** 63)) throw new RuntimeError('invalid size, possible overflow?');
  return { shape: [size], dtype: out, start: xstart, step: xstep };
}

const arangeMeta = (start: number, end: number, step: number, dtype: DType | null, layout: string | null) => {
  const { shape, dtype: d } = arangePlan(start, end, step, dtype, layout);
  return { shape, dtype: d };
};

/**
 * Checks `linspace`'s arguments and returns its result metadata.
 *
 * @example
 * ```ts
 * import { linspaceMeta } from './decl_factories.ts';
 * linspaceMeta(0, 1, 5, null, null).shape; // [5]
 * ```
 */
export function linspaceMeta(
  start: number | boolean,
  end: number | boolean,
  steps: number,
  dtype: DType | null,
  layout: number | string | null,
): TensorMeta {
  checkLayout(layout);
  if (!(steps >= 0)) throw new RuntimeError('number of steps must be non-negative');
  const out = dtype ?? getDefaultDtype();
  if (out === bool) throw new NotImplementedError(`"linspace_cpu" not implemented for 'Bool'`);
  if (steps > 0) {
    checkedConvert(start, out);
    checkedConvert(end, out);
  }
  return { shape: [steps], dtype: out };
}

/**
 * Checks `eye`'s arguments and returns its result metadata (`m` defaults to `n`).
 *
 * @example
 * ```ts
 * import { eyeMeta } from './decl_factories.ts';
 * eyeMeta(2, 3, null, null).shape; // [2, 3]
 * ```
 */
export function eyeMeta(
  n: number,
  m: number | undefined,
  dtype: DType | null,
  layout: number | string | null,
): TensorMeta {
  checkLayout(layout);
  if (!(n >= 0)) throw new RuntimeError(`n must be greater or equal to 0, got ${n}`);
  const cols = m ?? n;
  if (!(cols >= 0)) throw new RuntimeError(`m must be greater or equal to 0, got ${cols}`);
  return { shape: [n, cols], dtype: dtype ?? getDefaultDtype() };
}

// ---------------------------------------------------------------------------------------------------------
// *_like composites
// ---------------------------------------------------------------------------------------------------------

/**
 * The `*_like` result for `self`: a new tensor with `self`'s shape, dtype and device unless given, and with
 * `self`'s strides under `preserve_format` (dims in the same memory order, as PyTorch's `empty_like`).
 * `make(size, dtype, device)` creates the data as a flat tensor when the layout is not contiguous: the
 * result is dense, so filling the flat storage fills every element (in memory order, as PyTorch's
 * TensorIterator does for a dense output).
 *
 * @example
 * ```ts
 * import { likeTensor } from './decl_factories.ts';
 * // likeTensor(x, null, null, null, null, (size, dtype, device) => zeros(size, { dtype, device }))
 * ```
 */
export function likeTensor(
  self: Tensor,
  dtype: DType | null,
  layout: number | string | null,
  device: Device | null,
  memoryFormat: unknown,
  make: (size: readonly number[], dtype: DType, device: Device) => Tensor,
  opName = 'empty_like',
): Tensor {
  self.assertAlive(opName);
  checkLayout(layout);
  const d = dtype ?? self.dtype, dev = device ?? self.device;
  const strides = copyStrides(self.shape, self.stride(), memoryFormatOf(memoryFormat));
  const contiguous = copyStrides(self.shape, self.stride(), 'contiguous');
  if (strides.every((s, i) => s === contiguous[i] || self.shape[i] <= 1)) return make(self.shape, d, dev);
  const flat = make([numelOf(self.shape) === 0 ? 0 : storageNbytes(self.shape, strides, 1)], d, dev);
  flat.storage.retain();
  const out = new Tensor({ storage: flat.storage, shape: self.shape, strides, dtype: d });
  flat.dispose();
  return out;
}

type LikeArgs = [Tensor, DType | null, string | null, Device | null, boolean | null, unknown];

const emptyOp = (size: readonly number[], dtype: DType, device: Device) =>
  aten('empty', 'memory_format').call(size, dtype, null, device, null, null) as Tensor;
const fullOp = (value: number | boolean) => (size: readonly number[], dtype: DType, device: Device) =>
  aten('full').call(size, value, dtype, null, device, null) as Tensor;

function likeDecl(schema: string, impl: OpDecl['impl'], doc: string): OpDecl {
  return { schema, kind: 'composite-explicit', impl, doc };
}

const LIKE_OPTIONS = `${TENSOR_OPTIONS}, MemoryFormat? memory_format=None`;

/** Names of the `*_like` factory composites (registered with the random composites: see decl_random.ts). */
export type FactoryCompositeOpName = 'empty_like' | 'zeros_like' | 'ones_like' | 'full_like';

/**
 * Declarations of the `*_like` factory composites.
 *
 * @example
 * ```ts
 * import { FACTORY_LIKE_OPS } from './decl_factories.ts';
 * FACTORY_LIKE_OPS.zeros_like.kind; // 'composite-explicit'
 * ```
 */
export const FACTORY_LIKE_OPS: { readonly [K in FactoryCompositeOpName]: OpDecl } = {
  'empty_like': likeDecl(
    `empty_like(Tensor self, *, ${LIKE_OPTIONS}) -> Tensor`,
    (...[self, dtype, layout, device, , format]: LikeArgs) => likeTensor(self, dtype, layout, device, format, emptyOp),
    "An uninitialised tensor with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'zeros_like': likeDecl(
    `zeros_like(Tensor self, *, ${LIKE_OPTIONS}) -> Tensor`,
    (...[self, dtype, layout, device, , format]: LikeArgs) =>
      likeTensor(self, dtype, layout, device, format, fullOp(0), 'zeros_like'),
    "A tensor of zeros with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'ones_like': likeDecl(
    `ones_like(Tensor self, *, ${LIKE_OPTIONS}) -> Tensor`,
    (...[self, dtype, layout, device, , format]: LikeArgs) =>
      likeTensor(self, dtype, layout, device, format, fullOp(1), 'ones_like'),
    "A tensor of ones with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'full_like': likeDecl(
    `full_like(Tensor self, Scalar fill_value, *, ${LIKE_OPTIONS}) -> Tensor`,
    (
      self: Tensor,
      fill: number | boolean,
      dtype: DType | null,
      layout: string | null,
      device: Device | null,
      _pin: boolean | null,
      format: unknown,
    ) => likeTensor(self, dtype, layout, device, format, fullOp(fill), 'full_like'),
    "A tensor filled with `fill_value` with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
};

// ---------------------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------------------

/** A factory declaration. */
export interface FactoryDecl extends OpDecl {
  readonly kind: 'factory';
  readonly meta: MetaFn;
}

function factory(schema: string, meta: MetaFn, doc: string): FactoryDecl {
  return { schema, kind: 'factory', meta, doc };
}

/** Names of the factory operators. */
export type FactoryOpName =
  | 'empty.memory_format'
  | 'zeros'
  | 'ones'
  | 'full'
  | 'arange'
  | 'arange.start'
  | 'arange.start_step'
  | 'linspace'
  | 'eye'
  | 'eye.m';

/**
 * Factory declarations.
 *
 * @example
 * ```ts
 * import { FACTORY_OPS } from './decl_factories.ts';
 * FACTORY_OPS.linspace.kind; // 'factory'
 * ```
 */
export const FACTORY_OPS: { readonly [K in FactoryOpName]: FactoryDecl } = {
  'empty.memory_format': factory(
    `empty.memory_format(SymInt[] size, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    factoryMeta,
    'A tensor with uninitialised data.',
  ),
  'zeros': factory(`zeros(SymInt[] size, *, ${TENSOR_OPTIONS}) -> Tensor`, factoryMeta, 'A tensor filled with 0.'),
  'ones': factory(`ones(SymInt[] size, *, ${TENSOR_OPTIONS}) -> Tensor`, factoryMeta, 'A tensor filled with 1.'),
  'full': factory(
    `full(SymInt[] size, Scalar fill_value, *, ${TENSOR_OPTIONS}) -> Tensor`,
    fullMeta,
    'A tensor filled with `fill_value` (dtype inferred from it when not given).',
  ),
  'arange': factory(
    `arange(Scalar end, *, ${TENSOR_OPTIONS}) -> Tensor`,
    (end: number, ...rest: [DType | null, string | null]) => arangeMeta(0, end, 1, ...rest),
    'Values from 0 to `end` (exclusive) in steps of 1.',
  ),
  'arange.start': factory(
    `arange.start(Scalar start, Scalar end, *, ${TENSOR_OPTIONS}) -> Tensor`,
    (start: number, end: number, ...rest: [DType | null, string | null]) => arangeMeta(start, end, 1, ...rest),
    'Values from `start` to `end` (exclusive) in steps of 1.',
  ),
  'arange.start_step': factory(
    `arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ${TENSOR_OPTIONS}) -> Tensor`,
    arangeMeta,
    'Values from `start` to `end` (exclusive) in steps of `step`.',
  ),
  'linspace': factory(
    `linspace(Scalar start, Scalar end, int steps, *, ${TENSOR_OPTIONS}) -> Tensor`,
    linspaceMeta,
    '`steps` evenly spaced values from `start` to `end` (both included).',
  ),
  'eye': factory(
    `eye(int n, *, ${TENSOR_OPTIONS}) -> Tensor`,
    (n: number, dtype: DType | null, layout: string | null) => eyeMeta(n, undefined, dtype, layout),
    'The n×n identity matrix.',
  ),
  'eye.m': factory(
    `eye.m(int n, int m, *, ${TENSOR_OPTIONS}) -> Tensor`,
    eyeMeta,
    'An n×m matrix with ones on the diagonal.',
  ),
};
