/**
 * How JS values read as Python values: their names in PyTorch's messages, options objects as keyword
 * arguments, and a loss's `reduction`.
 *
 * Note [JS values as Python values]
 * PyTorch's rules are written for Python values; a JS value counts as the Python value it reads as:
 * - an integral `number` or a `bigint` is an `int`; any other `number` (NaN and ±Infinity included) and a
 *   `floatScalar(...)` are a `float`; a `boolean` is a `bool` (never an `int`, as in PyTorch);
 * - a `string` is a `str`; `null` and `undefined` are `None`; an `Array` is a `list`; a plain object a `dict`
 *   (a trailing one is the keyword arguments);
 * - a tensor made by this runtime (`Tensor.isTensor`) is a `Tensor`; a `DType` a `torch.dtype`, a dtype name
 *   (`'float64'`) is also accepted as one; a `Device` or a device string a `torch.device`.
 * {@linkcode pyTypeName} gives these names for the messages.
 *
 * @module
 */
import { ValueError } from '../dispatch/errors.ts';
import { Device } from '../tensor/device.ts';
import { DType } from '../tensor/dtype.ts';
import { FloatScalar } from '../tensor/float_scalar.ts';
import { Generator } from '../tensor/generator.ts';
import { Tensor } from '../tensor/tensor.ts';

const REDUCTIONS: { readonly [name: string]: number } = { none: 0, mean: 1, sum: 2 };

/**
 * A loss's `reduction` as the `at::Reduction` code the loss operators take, with PyTorch's ValueError (from
 * `torch.nn._reduction.get_enum`) for anything but `'none'`, `'mean'` and `'sum'`.
 *
 * @example
 * ```ts
 * import { reductionArg } from './arg_names.ts';
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
 * import { pyTypeName } from './arg_names.ts';
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
 * import { optionsWithin } from './arg_names.ts';
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
 * import { isOptions } from './arg_names.ts';
 * isOptions({ alpha: 2 }); // true
 * ```
 */
export function isOptions(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  // `constructor` is a cached prototype property read; getPrototypeOf is slower on this hot path.
  const c = (v as { constructor?: unknown }).constructor;
  return c === Object || (c === undefined && Object.getPrototypeOf(v) === null);
}
