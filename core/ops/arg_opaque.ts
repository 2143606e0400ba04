/**
 * Run-time checks and conversions of the argument types whose values only the layers above the dispatcher
 * know: dtypes, devices, generators, layouts and memory formats, and the dispatcher's value validator built
 * from them (see `Dispatcher#setValueValidator`).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { Device, toDevice } from '../tensor/device.ts';
import { DType, dtypeFromName, dtypeFromScalarType } from '../tensor/dtype.ts';
import { Generator } from '../tensor/generator.ts';
import { isLiveTensor } from './arg_values.ts';

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
 * import { isDTypeArg } from './arg_opaque.ts';
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
 * import { dtypeArg } from './arg_opaque.ts';
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
 * import { isDeviceArg } from './arg_opaque.ts';
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
 * import { deviceArg } from './arg_opaque.ts';
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
 * import { isGeneratorArg } from './arg_opaque.ts';
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
 * import { isLayoutArg } from './arg_opaque.ts';
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
 * import { isMemoryFormatArg } from './arg_opaque.ts';
 * isMemoryFormatArg('contiguous_format'); // true
 * ```
 */
export function isMemoryFormatArg(v: unknown): boolean {
  return typeof v === 'string' && MEMORY_FORMATS.has(v);
}

/**
 * The dispatcher's check of values it cannot judge itself (installed with `setValueValidator`): a tensor must
 * be a live tensor of this runtime, and the opaque types the representation the kernels take (a `DType` or a
 * ScalarType code, a `Device`, a `Generator`, a layout or memory format name or code).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { validatesBoxedValue } from './arg_opaque.ts';
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
