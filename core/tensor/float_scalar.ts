/**
 * Float-typed scalars: JavaScript has one number type, so `3.0` and `3` are the same value, while PyTorch
 * promotes `pow(int_tensor, 3.0)` to a float tensor and keeps `pow(int_tensor, 3)` integral.
 *
 * Note [Float scalars]
 * `floatScalar(3)` returns a `FloatScalar`: a `Number` object, so arithmetic, comparisons and the
 * number-to-wasm conversion of the kernels read its value as they read a plain number, while type
 * promotion tells it apart: `Number.isInteger` is false for any `Number` object, which is exactly the
 * question the promotion rules ask ("is this scalar integral?"), and `scalarOperand` in promotion.ts maps it
 * to a double. The argument parser keeps the wrapper only where it matters (a `Scalar` argument holding an
 * integral value) and unwraps it everywhere else.
 *
 * @module
 */

/**
 * A number that type promotion treats as a Python `float` even when its value is integral.
 *
 * @example
 * ```ts
 * import { floatScalar, FloatScalar } from './float_scalar.ts';
 * floatScalar(3) instanceof FloatScalar; // true
 * ```
 */
export class FloatScalar extends Number {
  /** Wraps `value`; prefer {@linkcode floatScalar}. */
  constructor(value: number) {
    super(value);
    Object.freeze(this);
  }

  /** Python's repr of a float (`3.0`). */
  override toString(): string {
    const v = this.valueOf();
    return Number.isInteger(v) ? v.toFixed(1) : String(v);
  }
}

/**
 * Marks `value` as a float scalar for type promotion (Note [Float scalars]): `pow(intTensor, floatScalar(3))`
 * is a float tensor as `torch.pow(int_tensor, 3.0)` is; `full([2], floatScalar(1))` is float32 where
 * `full([2], 1)` is int64.
 *
 * @throws {TypeError} when `value` is not a number.
 * @example
 * ```ts
 * import { floatScalar } from './float_scalar.ts';
 * Number(floatScalar(3)); // 3
 * ```
 */
export function floatScalar(value: number): FloatScalar {
  if (typeof value !== 'number') {
    throw new TypeError(`floatScalar(): argument 'value' must be a number, not ${typeof value}`);
  }
  return new FloatScalar(value);
}

/**
 * Whether `v` is a {@linkcode FloatScalar}.
 *
 * @example
 * ```ts
 * import { floatScalar, isFloatScalar } from './float_scalar.ts';
 * isFloatScalar(floatScalar(2)); // true
 * isFloatScalar(2); // false
 * ```
 */
export function isFloatScalar(v: unknown): v is FloatScalar {
  return v instanceof FloatScalar;
}

/**
 * What a `Scalar` argument takes (PyTorch's `Number`): a number, a boolean, a bigint (an int64 value; exact
 * while it fits 53 bits, see the README) or a {@linkcode FloatScalar}.
 *
 * @example
 * ```ts
 * import { floatScalar, type Scalar } from './float_scalar.ts';
 * const values: Scalar[] = [1, 2.5, true, 2n ** 40n, floatScalar(3)];
 * ```
 */
export type Scalar = number | boolean | bigint | FloatScalar;

/**
 * A Scalar argument as the number a kernel computes with: booleans are 0 or 1, a {@linkcode FloatScalar} its value,
 * a bigint its (nearest) number. Kernels call this once the result dtype is known (which a FloatScalar affects).
 *
 * @example
 * ```ts
 * import { floatScalar, scalarNumber } from './float_scalar.ts';
 * scalarNumber(true) + scalarNumber(floatScalar(2)); // 3
 * ```
 */
export function scalarNumber(s: number | boolean | bigint | FloatScalar): number {
  if (typeof s === 'number') return s;
  if (typeof s === 'boolean') return s ? 1 : 0;
  return Number(s);
}
