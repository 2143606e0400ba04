/**
 * Run-time checks and conversions of public argument values, one pair per schema type, in the spirit of
 * `FunctionParameter::check` and the `PythonArgs` unpackers of PyTorch's python_arg_parser.cpp. The generated
 * API calls the checks on its hot path, so each is a few `typeof` tests and a brand check.
 *
 * Note [JS values as Python values]
 * PyTorch's rules are written for Python values; a JS value counts as the Python value it reads as:
 * - an integral `number` or a `bigint` is an `int`; any other `number` (NaN and ±Infinity included) and a
 *   `floatScalar(...)` are a `float`; a `boolean` is a `bool` (never an `int`, as in PyTorch);
 * - a `string` is a `str`; `null` and `undefined` are `None`; an `Array` is a `list`;
 * - a tensor made by this runtime (`Tensor.isTensor`) is a `Tensor`; a `DType` a `torch.dtype`, a dtype name
 *   (`'float64'`) is also accepted as one; a `Device` or a device string a `torch.device`.
 * {@linkcode pyTypeName} gives these names for the messages.
 *
 * @module
 */
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { Device, toDevice } from '../tensor/device.ts';
import { DType, dtypeFromName, dtypeFromScalarType } from '../tensor/dtype.ts';
import { FloatScalar, type Scalar } from '../tensor/float_scalar.ts';
import { Generator } from '../tensor/generator.ts';
import { Tensor } from '../tensor/tensor.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TWO_63 = 2 ** 63;

/** A scalar a `Scalar` argument accepts. */
export type ScalarArg = Scalar;

/** PyTorch's error for a Python int that does not fit int64. */
function overflow(): RuntimeError {
  return new RuntimeError('Overflow when unpacking long');
}

/**
 * Whether `v` is a live tensor of this runtime (branded and not disposed).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { isLiveTensor } from './arg_values.ts';
 * isLiveTensor(tensor([1])); // true
 * ```
 */
export function isLiveTensor(v: unknown): v is Tensor {
  return Tensor.isTensor(v) && !v.isDisposed;
}

/**
 * Whether `v` is a Python `int` (Note [JS values as Python values]).
 *
 * @example
 * ```ts
 * import { isIntArg } from './arg_values.ts';
 * [isIntArg(2), isIntArg(2.5), isIntArg(2n), isIntArg(true)]; // [true, false, true, false]
 * ```
 */
export function isIntArg(v: unknown): v is number | bigint {
  return typeof v === 'number' ? Number.isInteger(v) : typeof v === 'bigint';
}

/**
 * An `int` argument as a number; a value outside int64 raises PyTorch's overflow error.
 *
 * @example
 * ```ts
 * import { intArg } from './arg_values.ts';
 * intArg(3n); // 3
 * ```
 */
export function intArg(v: number | bigint): number {
  if (typeof v === 'number') {
    if (v >= -TWO_63 && v < TWO_63) return v;
    throw overflow();
  }
  if (v < INT64_MIN || v > INT64_MAX) throw overflow();
  return Number(v);
}

/**
 * Whether `v` is a Scalar (`Number` in PyTorch's messages): a number, boolean, bigint or float scalar.
 *
 * @example
 * ```ts
 * import { isScalarArg } from './arg_values.ts';
 * isScalarArg(1n); // true
 * ```
 */
export function isScalarArg(v: unknown): v is ScalarArg {
  return typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v instanceof FloatScalar;
}

/**
 * A Scalar argument as kernels take it: a bigint becomes a number (exact up to 2^53 in magnitude; outside
 * int64 it raises PyTorch's overflow error), a float scalar stays one only while its value is integral
 * (Note [Float scalars] in float_scalar.ts).
 *
 * @example
 * ```ts
 * import { scalarArg } from './arg_values.ts';
 * scalarArg(5n); // 5
 * ```
 */
export function scalarArg(v: ScalarArg): number | boolean {
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return intArg(v);
  const value = v.valueOf();
  // Kernels and promotion read the wrapper as a float; a non-integral value already reads as one.
  return Number.isInteger(value) ? v as unknown as number : value;
}

/**
 * Whether `v` is accepted for a `float` argument (a Python float or int; a bool is an int in Python).
 *
 * @example
 * ```ts
 * import { isFloatArg } from './arg_values.ts';
 * isFloatArg(0.5); // true
 * ```
 */
export function isFloatArg(v: unknown): boolean {
  return typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v instanceof FloatScalar;
}

/**
 * A `float` argument as a number.
 *
 * @example
 * ```ts
 * import { floatArg } from './arg_values.ts';
 * floatArg(true); // 1
 * ```
 */
export function floatArg(v: number | bigint | boolean | FloatScalar): number {
  return typeof v === 'number' ? v : Number(v);
}

/**
 * Where an int list fails PyTorch's check: -1 when it is a list of ints, 0 when it is no list or its first
 * element is no int (PyTorch then reports the whole argument), else the index of the first bad element.
 *
 * @example
 * ```ts
 * import { intListFailure } from './arg_values.ts';
 * [intListFailure([1, 2]), intListFailure([1, 2.5]), intListFailure(3)]; // [-1, 1, 0]
 * ```
 */
export function intListFailure(v: unknown): number {
  if (!Array.isArray(v)) return 0;
  for (let i = 0; i < v.length; i++) if (!isIntArg(v[i])) return i;
  return -1;
}

/**
 * Whether `v` fits an `int[N]` argument: a list of ints, or (when `size` > 0, as in `int[1] dim`) one int.
 *
 * @example
 * ```ts
 * import { isIntListArg } from './arg_values.ts';
 * [isIntListArg([0, 1], 0), isIntListArg(1, 0), isIntListArg(1, 1)]; // [true, false, true]
 * ```
 */
export function isIntListArg(v: unknown, size: number): boolean {
  return Array.isArray(v) ? intListFailure(v) === -1 : size > 0 && isIntArg(v);
}

/**
 * An int list argument as an array of numbers; one int stands for `size` copies of itself (PyTorch's
 * `IntArrayRef[N]`), or for a one-element list where the list came from varargs (`size` 0).
 *
 * @example
 * ```ts
 * import { intListArg } from './arg_values.ts';
 * intListArg(2, 1); // [2]
 * ```
 */
export function intListArg(v: number | bigint | readonly (number | bigint)[], size: number): readonly number[] {
  if (!Array.isArray(v)) return new Array<number>(Math.max(size, 1)).fill(intArg(v as number | bigint));
  // The common case, numbers within int64, is passed on as it is (operators never write to their arguments).
  let plain = true;
  for (let i = 0; i < v.length && plain; i++) plain = typeof v[i] === 'number' && v[i] >= -TWO_63 && v[i] < TWO_63;
  if (plain) return v as readonly number[];
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = intArg(v[i]);
  return out;
}

/**
 * Whether `v` is a list of tensors. A disposed element raises the disposed-tensor error; any other non-tensor
 * raises PyTorch's `expected Tensor as element i in argument j, but got T` (PyTorch raises it even while it is
 * only trying an overload).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { isTensorListArg } from './arg_values.ts';
 * isTensorListArg([tensor([1])], 'cat', 'tensors', 0); // true
 * ```
 */
export function isTensorListArg(v: unknown, fn: string, name: string, argIndex: number): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const t = v[i];
    if (isLiveTensor(t)) continue;
    if (Tensor.isTensor(t)) throw disposedArgument(fn, `${name}[${i}]`);
    throw new TypeError(`expected Tensor as element ${i} in argument ${argIndex}, but got ${pyTypeName(t)}`);
  }
  return true;
}

/**
 * PyTorch has no disposed tensors; this error names the function and the argument that held one.
 *
 * @example
 * ```ts
 * import { disposedArgument } from './arg_values.ts';
 * disposedArgument('add', 'other').message;
 * ```
 */
export function disposedArgument(fn: string, name: string): RuntimeError {
  return new RuntimeError(`${fn}(): argument '${name}' was disposed and cannot be used any more`);
}

const dtypeNames = new Map<string, DType | null>();

/** The dtype a name means, or null (cached: dtype arguments are checked on every factory call). */
function dtypeNamed(name: string): DType | null {
  let d = dtypeNames.get(name);
  if (d === undefined) {
    try {
      d = dtypeFromName(name);
    } catch {
      d = null;
    }
    dtypeNames.set(name, d);
  }
  return d;
}

/**
 * Whether `v` is a dtype: a `DType` or a dtype name (`'float64'`, `'long'`, `'torch.int32'`).
 *
 * @example
 * ```ts
 * import { isDTypeArg } from './arg_values.ts';
 * [isDTypeArg('float64'), isDTypeArg('cpu')]; // [true, false]
 * ```
 */
export function isDTypeArg(v: unknown): boolean {
  return v instanceof DType || (typeof v === 'string' && dtypeNamed(v) !== null);
}

/**
 * A dtype argument as a DType. Schema defaults store ScalarType codes (`ScalarType? dtype=4`), which are
 * accepted here; the checks never let a user's number through.
 *
 * @example
 * ```ts
 * import { dtypeArg } from './arg_values.ts';
 * dtypeArg('double').name; // 'float64'
 * ```
 */
export function dtypeArg(v: DType | string | number): DType {
  if (v instanceof DType) return v;
  return typeof v === 'number' ? dtypeFromScalarType(v) : dtypeNamed(v)!;
}

/**
 * Whether `v` is a device: a `Device`, or a string that does not name a dtype (PyTorch parses any string as a
 * device, and reports unknown ones when converting; dtype names are left to dtype arguments, so that
 * `t.to('float64')` means a dtype).
 *
 * @example
 * ```ts
 * import { isDeviceArg } from './arg_values.ts';
 * [isDeviceArg('meta'), isDeviceArg('float64')]; // [true, false]
 * ```
 */
export function isDeviceArg(v: unknown): boolean {
  return v instanceof Device || (typeof v === 'string' && dtypeNamed(v) === null);
}

/**
 * A device argument as a Device, with PyTorch's RuntimeError for an unknown device string.
 *
 * @example
 * ```ts
 * import { deviceArg } from './arg_values.ts';
 * deviceArg('meta').type; // 'meta'
 * ```
 */
export function deviceArg(v: Device | string): Device {
  if (v instanceof Device) return v;
  try {
    return toDevice(v as 'cpu');
  } catch (e) {
    throw new RuntimeError((e as Error).message);
  }
}

/**
 * Whether `v` is a random number generator.
 *
 * @example
 * ```ts
 * import { Generator } from '../tensor/generator.ts';
 * import { isGeneratorArg } from './arg_values.ts';
 * isGeneratorArg(new Generator()); // true
 * ```
 */
export function isGeneratorArg(v: unknown): v is Generator {
  return v instanceof Generator;
}

/**
 * Whether `v` names a layout: any string, as PyTorch takes any `torch.layout`; the operators report the
 * layouts they do not support (only `strided` exists here).
 *
 * @example
 * ```ts
 * import { isLayoutArg } from './arg_values.ts';
 * isLayoutArg('strided'); // true
 * ```
 */
export function isLayoutArg(v: unknown): boolean {
  return typeof v === 'string';
}

const MEMORY_FORMATS = new Set(['contiguous_format', 'preserve_format', 'channels_last', 'channels_last_3d']);

/**
 * Whether `v` names a memory format (`contiguous_format`, `preserve_format`, ...; the operators say which
 * they support).
 *
 * @example
 * ```ts
 * import { isMemoryFormatArg } from './arg_values.ts';
 * isMemoryFormatArg('contiguous_format'); // true
 * ```
 */
export function isMemoryFormatArg(v: unknown): boolean {
  return typeof v === 'string' && MEMORY_FORMATS.has(v);
}

const REDUCTIONS: { readonly [name: string]: number } = { none: 0, mean: 1, sum: 2 };

/**
 * A loss's `reduction` as the `at::Reduction` code the loss operators take, with PyTorch's ValueError (from
 * `torch.nn._reduction.get_enum`) for anything but `'none'`, `'mean'` and `'sum'`.
 *
 * @example
 * ```ts
 * import { reductionArg } from './arg_values.ts';
 * reductionArg('sum'); // 2
 * ```
 */
export function reductionArg(v: unknown): number {
  const code = typeof v === 'string' && Object.hasOwn(REDUCTIONS, v) ? REDUCTIONS[v] : undefined;
  if (code === undefined) throw new ValueError(`${pyRepr(v)} is not a valid value for reduction`);
  return code;
}

/** How a value prints inside a message (Python's `str()` of it). */
function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof FloatScalar) return String(v);
  return pyTypeName(v);
}

/**
 * The Python type name of a JS value, as PyTorch's messages print argument types
 * (Note [JS values as Python values]).
 *
 * @example
 * ```ts
 * import { pyTypeName } from './arg_values.ts';
 * [pyTypeName(2), pyTypeName(2.5), pyTypeName('a'), pyTypeName(null)]; // ['int', 'float', 'str', 'NoneType']
 * ```
 */
export function pyTypeName(v: unknown): string {
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'str';
    case 'undefined':
      return 'NoneType';
    case 'function':
      return 'function';
    case 'symbol':
      return 'symbol';
  }
  if (v === null) return 'NoneType';
  if (Tensor.isTensor(v)) return 'Tensor';
  if (Array.isArray(v)) return 'list';
  if (v instanceof FloatScalar) return 'float';
  if (v instanceof DType) return 'torch.dtype';
  if (v instanceof Device) return 'torch.device';
  if (v instanceof Generator) return 'torch.Generator';
  const proto = Object.getPrototypeOf(v);
  if (proto === null || proto === Object.prototype) return 'dict';
  // `instanceof` is forgeable (`Object.create(Tensor.prototype)`); the brand check above is not.
  if (v instanceof Tensor) return 'forged Tensor';
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'object';
}

/**
 * Whether every option set in `o` (not `undefined`) is one of `names`: the generated fast path binds an
 * options object only when it names nothing unknown, and leaves the error to the parser.
 *
 * @example
 * ```ts
 * import { optionsWithin } from './arg_values.ts';
 * [optionsWithin({ alpha: 2 }, ['alpha']), optionsWithin({ beta: 2 }, ['alpha'])]; // [true, false]
 * ```
 */
export function optionsWithin(o: Record<string, unknown>, names: readonly string[]): boolean {
  for (const key in o) {
    if (o[key] !== undefined && !names.includes(key)) return false;
  }
  return true;
}

/**
 * Whether a value is an options object (a plain object literal, or one without a prototype): how the
 * generated API tells a trailing options argument (PyTorch's keyword arguments) from positional ones.
 *
 * @example
 * ```ts
 * import { isOptions } from './arg_values.ts';
 * isOptions({ alpha: 2 }); // true
 * ```
 */
export function isOptions(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  // `constructor` is a cached prototype property read; getPrototypeOf is slower on this hot path.
  const c = (v as { constructor?: unknown }).constructor;
  return c === Object || (c === undefined && Object.getPrototypeOf(v) === null);
}

/**
 * The dispatcher's check of values it cannot judge itself (installed with `setValueValidator`): a tensor must
 * be a live tensor of this runtime, and the opaque types the representation the kernels take (a `DType` or a
 * ScalarType code, a `Device`, a `Generator`, a layout or memory format name or code).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { validatesBoxedValue } from './arg_values.ts';
 * validatesBoxedValue('Tensor', tensor([1])); // true
 * ```
 */
export function validatesBoxedValue(kind: string, value: unknown): boolean {
  switch (kind) {
    case 'Tensor':
      return isLiveTensor(value);
    case 'ScalarType':
      return value instanceof DType || Number.isInteger(value);
    case 'Device':
      return value instanceof Device;
    case 'Generator':
      return value instanceof Generator;
    case 'Layout':
    case 'MemoryFormat':
      return typeof value === 'string' || Number.isInteger(value);
    default:
      return true;
  }
}
