/**
 * Run-time checks and conversions of public argument values for tensors, ints, floats, Scalars and int lists,
 * in the spirit of `FunctionParameter::check` and the `PythonArgs` unpackers of PyTorch's python_arg_parser.cpp
 * (arg_opaque.ts has dtypes, devices and the other opaque types; arg_names.ts how values are named). The
 * generated API calls the checks on its hot path, so each is a few `typeof` tests and a brand check.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { FloatScalar, type Scalar } from '../tensor/float_scalar.ts';
import { Tensor } from '../tensor/tensor.ts';
import { pyTypeName } from './arg_names.ts';

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
  return Tensor.isLive(v);
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
