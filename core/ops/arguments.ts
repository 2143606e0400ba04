import { DType, dtypeFromName, type DTypeLike, toDType } from '../tensor/dtype.ts';
import { Device, type DeviceLike, toDevice } from '../tensor/device.ts';
/**
 * Normalization of public argument values into what kernels receive.
 *
 * @module
 */

/**
 * An int-list argument as an array (PyTorch also accepts a single int where an int list is expected).
 *
 * @example
 * ```ts
 * import { intList } from './arguments.ts';
 * intList(3); // [3]
 * ```
 */
export function intList(v: number | readonly number[]): readonly number[] {
  return typeof v === 'number' ? [v] : v;
}

/** An optional int list (None stays null). */
export function optionalIntList(v: number | readonly number[] | null): readonly number[] | null {
  return v === null ? null : intList(v);
}

/** An optional dtype argument as a DType (None stays null; ScalarType codes accepted). */
export function optionalDType(v: DTypeLike | number | null): DType | null {
  return v === null ? null : toDType(v);
}

/** An optional device argument as a Device (None stays null). */
export function optionalDevice(v: DeviceLike | null): Device | null {
  return v === null ? null : toDevice(v);
}

/** Whether a value names a dtype (a DType or one of its names): how overloads taking a dtype are told apart. */
export function isDTypeLike(v: unknown): v is DTypeLike {
  if (v instanceof DType) return true;
  if (typeof v !== 'string') return false;
  try {
    dtypeFromName(v);
    return true;
  } catch {
    return false;
  }
}

/** Whether a value names a device (a Device, `cpu`, `meta`, `webgpu`, `webgpu:N`). */
export function isDeviceLike(v: unknown): v is DeviceLike {
  return v instanceof Device || v === 'cpu' || v === 'meta' || (typeof v === 'string' && /^webgpu(:\d+)?$/.test(v));
}

/**
 * Whether a value is an options object (a plain object literal): how the generated API tells a trailing
 * options argument from positional ones.
 *
 * @example
 * ```ts
 * import { isOptions } from './arguments.ts';
 * isOptions({ alpha: 2 }); // true
 * ```
 */
export function isOptions(v: unknown): boolean {
  // `constructor` is a cached prototype property read; getPrototypeOf is slower on this hot path.
  return typeof v === 'object' && v !== null && (v as { constructor?: unknown }).constructor === Object;
}

/**
 * PyTorch's error for a call that matches no overload (`add() received an invalid combination of arguments`).
 *
 * @example
 * ```ts
 * import { invalidArguments } from './arguments.ts';
 * invalidArguments('add', '  * (self, other)').message;
 * ```
 */
export function invalidArguments(name: string, expected: string): TypeError {
  return new TypeError(`${name}() received an invalid combination of arguments - expected one of:\n${expected}`);
}
