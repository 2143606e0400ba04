/**
 * `tensor(data)`: a tensor from nested arrays, typed arrays or scalars, with PyTorch's dtype inference and
 * `torch.tensor`'s conversions and errors.
 *
 * @module
 */
import { Device, type DeviceLike } from '../tensor/device.ts';
import {
  bool,
  type DType,
  type DTypeArray,
  type DTypeLike,
  float32,
  float64,
  getDefaultDtype,
  int16,
  int32,
  int64,
  int8,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  typedArrayFor,
  uint8,
} from '../tensor/dtype.ts';
import { contiguousHostBytes, type Tensor } from '../tensor/tensor.ts';
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { FloatScalar } from '../tensor/float_scalar.ts';
import { checkedConvert } from './decl_factories.ts';
import { registerOperators } from './registry.ts';
import { intArg } from './arg_values.ts';
import { deviceArg, dtypeArg, isDeviceArg, isDTypeArg } from './arg_opaque.ts';
import { isOptions, pyTypeName } from './arg_names.ts';
import { requireGrad } from './arg_parser.ts';

/** Data `tensor()` accepts. */
export type TensorData =
  | number
  | boolean
  | bigint
  | FloatScalar
  | ArrayLike<number>
  | ArrayLike<boolean>
  | BigInt64Array
  | ReadonlyArray<TensorData>;

/** Options of {@linkcode tensor}. */
export interface TensorOptions {
  /** Element type (default: inferred, see {@linkcode tensor}). */
  dtype?: DTypeLike;
  /** Device (default cpu). */
  device?: DeviceLike;
  /** Record operations on the tensor for autograd (floating-point dtypes only; default false). */
  requiresGrad?: boolean;
}

function typedArrayDtype(data: unknown): DType | undefined {
  if (data instanceof Float32Array) return float32;
  if (data instanceof Float64Array) return float64;
  if (data instanceof Int32Array) return int32;
  if (data instanceof Int16Array) return int16;
  if (data instanceof Int8Array) return int8;
  if (data instanceof Uint8Array) return uint8;
  if (data instanceof BigInt64Array) return int64;
  return undefined;
}

const isSequence = (x: unknown): x is ArrayLike<unknown> => Array.isArray(x) || ArrayBuffer.isView(x);

/** Shape and flat values of nested data; throws PyTorch's errors for ragged input. */
/** One element of `tensor()`'s data. */
type Element = number | boolean | bigint | FloatScalar;

const isElement = (x: unknown): x is Element =>
  typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint' || x instanceof FloatScalar;

function flatten(data: TensorData): { shape: number[]; values: ArrayLike<Element>; typed?: DType } {
  if (isElement(data)) return { shape: [], values: [data] };
  const typed = typedArrayDtype(data);
  if (typed !== undefined) {
    return { shape: [(data as ArrayLike<number>).length], values: data as ArrayLike<number>, typed };
  }
  const shape: number[] = [];
  let level: unknown = data;
  while (isSequence(level)) {
    shape.push(level.length);
    if (level.length === 0) break;
    level = level[0];
  }
  const values: Array<Element> = [];
  // Rows that are typed arrays of one type give that dtype, as a list of NumPy arrays does in PyTorch.
  let rows: DType | null | undefined;
  const walk = (x: unknown, dim: number) => {
    if (dim === shape.length) {
      if (isElement(x)) values.push(x);
      else if (isSequence(x)) throw new TypeError(`'list' object cannot be interpreted as an integer`);
      else if (typeof x === 'string') throw new TypeError(`new(): invalid data type 'str'`);
      else throw new RuntimeError(`Could not infer dtype of ${pyTypeName(x)}`);
      return;
    }
    if (!isSequence(x)) throw new TypeError('not a sequence');
    if (x.length !== shape[dim]) {
      throw new ValueError(`expected sequence of length ${shape[dim]} at dim ${dim} (got ${x.length})`);
    }
    if (dim === shape.length - 1) {
      const rowType = typedArrayDtype(x) ?? null;
      rows = rows === undefined || rows === rowType ? rowType : null;
    }
    for (let i = 0; i < x.length; i++) walk(x[i], dim + 1);
  };
  walk(data, 0);
  return { shape, values, typed: rows ?? undefined };
}

function inferDtype(values: ArrayLike<Element>): DType {
  let allBool = values.length > 0, allInt = true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'boolean') allBool = false;
    if ((typeof v === 'number' && !Number.isInteger(v)) || v instanceof FloatScalar) allInt = false;
  }
  if (allBool) return bool;
  return allInt && values.length > 0 ? int64 : getDefaultDtype();
}

/** Python's names for integer dtypes in `torch.tensor`'s overflow message. */
const PY_INT_NAMES: { readonly [name: string]: string } = {
  uint8: 'uint8',
  int8: 'int8',
  int16: 'int16',
  int32: 'int32',
  int64: 'int64',
};

/**
 * Writes values into a contiguous CPU tensor's storage as `torch.tensor` stores them: integers are
 * range-checked ("value cannot be converted to type uint8 without overflow"; -1 still wraps to 255),
 * floats are rounded (70000 becomes inf in float16), anything nonzero is `true` for bool.
 *
 * @example
 * ```ts
 * import { tensor, writeValues } from './creation.ts';
 * const t = tensor([0, 0]);
 * writeValues(t, [3, 4]);
 * ```
 */
export function writeValues(t: Tensor, values: ArrayLike<Element>): void {
  const n = t.numel;
  if (n === 0) return;
  const bytes = contiguousHostBytes(t); // exactly the n elements: the typed arrays below cannot reach further
  const base = bytes.byteOffset;
  const num = (v: Element) => Number(v);
  const pyName = PY_INT_NAMES[t.dtype.name];
  // A bigint is a Python int: outside int64 it overflows before any conversion, as PyTorch unpacks it.
  const integral = (v: Element) => checkedConvert(typeof v === 'bigint' ? intArg(v) : v as number, t.dtype, pyName);
  switch (t.dtype.name) {
    case 'int64': {
      if (values instanceof BigInt64Array) {
        new BigInt64Array(bytes.buffer, base, n).set(values);
        return;
      }
      // Two 32-bit halves per element: a BigInt per element would be far slower.
      const words = new Int32Array(bytes.buffer, base, 2 * n);
      for (let i = 0; i < n; i++) {
        const x = values[i];
        if (typeof x === 'bigint') {
          intArg(x); // the overflow check: the value is then written exactly
          const v = x;
          words[2 * i] = Number(BigInt.asIntN(32, v));
          words[2 * i + 1] = Number(v >> 32n);
          continue;
        }
        const v = integral(x), hi = Math.floor(v / 4294967296);
        words[2 * i] = v - hi * 4294967296;
        words[2 * i + 1] = hi;
      }
      return;
    }
    case 'float16':
    case 'bfloat16': {
      const a = new Uint16Array(bytes.buffer, base, n);
      const conv = t.dtype.name === 'float16' ? numberToFloat16Bits : numberToBFloat16Bits;
      for (let i = 0; i < n; i++) a[i] = conv(Math.fround(num(values[i])));
      return;
    }
    case 'bool': {
      const a = new Uint8Array(bytes.buffer, base, n);
      for (let i = 0; i < n; i++) a[i] = num(values[i]) !== 0 ? 1 : 0;
      return;
    }
    default: {
      const a = typedArrayFor(t.dtype, bytes.buffer, base, n) as Exclude<DTypeArray, BigInt64Array>;
      if (t.dtype.isFloatingPoint) {
        if (ArrayBuffer.isView(values) && !(values instanceof BigInt64Array)) a.set(values as ArrayLike<number>);
        else for (let i = 0; i < n; i++) a[i] = num(values[i]);
      } else if (ArrayBuffer.isView(values) && values.constructor === a.constructor) {
        a.set(values as ArrayLike<number>); // the same integer TypedArray type: a plain copy
      } else {
        for (let i = 0; i < n; i++) a[i] = integral(values[i]);
      }
    }
  }
}

/**
 * A tensor from data (`torch.tensor`). The dtype is inferred as PyTorch does: all booleans give bool, all
 * integers (booleans included) give int64, anything else the default float type; typed arrays keep their
 * type (Float32Array → float32, ...). JavaScript cannot tell `1.0` from `1`, so `tensor([1.0, 2.0])` is
 * int64: pass `{ dtype: 'float32' }` or a Float32Array when you mean floats.
 *
 * @example
 * ```ts
 * import { tensor } from './creation.ts';
 * const t = tensor([[1.5, 2], [3, 4]]);
 * t.dtype.name; // 'float32'
 * ```
 */
export function tensor(data: TensorData, _options?: TensorOptions): Tensor {
  // The arguments object, not the parameters: `tensor(data, options, extra)` must be refused.
  const { dtype: dtypeOption, device: deviceOption, requiresGrad } = tensorOptions(arguments);
  const { shape, values, typed } = flatten(data);
  const dtype = dtypeOption ?? typed ?? inferDtype(values);
  const ops = registerOperators();
  let t: Tensor;
  if (deviceOption.type === 'meta') {
    t = ops['empty.memory_format'].call(shape, dtype, null, deviceOption, null, null) as Tensor;
  } else {
    t = ops['empty.memory_format'].call(shape, dtype, null, Device.cpu, null, null) as Tensor;
    try {
      writeValues(t, values);
    } catch (e) {
      t.dispose();
      throw e;
    }
  }
  if (deviceOption.type !== 'cpu' && deviceOption.type !== 'meta') {
    // Filled on the CPU, then moved to the device.
    const host = t;
    try {
      t = ops['_to_copy'].call(host, null, null, deviceOption, null, false, null) as Tensor;
    } finally {
      host.dispose();
    }
  }
  return requiresGrad ? requireGrad(t) : t;
}

const TENSOR_OPTION_TYPES = { dtype: 'torch.dtype', device: 'torch.device', requiresGrad: 'bool' } as const;

/** `tensor()`'s options, checked as PyTorch's `tensor(data, *, dtype, device, requires_grad)` binding checks them. */
function tensorOptions(args: ArrayLike<unknown>): { dtype?: DType; device: Device; requiresGrad: boolean } {
  let n = args.length;
  while (n > 1 && args[n - 1] === undefined) n--;
  if (n === 0) throw new TypeError('tensor() missing 1 required positional arguments: "data"');
  const options = n === 2 && isOptions(args[1]) ? args[1] as Record<string, unknown> : undefined;
  if (n > 2 || (n === 2 && options === undefined)) {
    throw new TypeError(`tensor() takes 1 positional argument but ${n} were given`);
  }
  const given = (key: keyof typeof TENSOR_OPTION_TYPES) => options?.[key] ?? undefined;
  for (const key of Object.keys(options ?? {})) {
    if (!Object.hasOwn(TENSOR_OPTION_TYPES, key)) {
      throw new TypeError(`tensor() got an unexpected keyword argument '${key}'`);
    }
    const value = options![key];
    const ok = value === undefined || value === null ||
      (key === 'dtype' ? isDTypeArg(value) : key === 'device' ? isDeviceArg(value) : typeof value === 'boolean');
    if (!ok) {
      throw new TypeError(
        `tensor(): argument '${key}' must be ${TENSOR_OPTION_TYPES[key as keyof typeof TENSOR_OPTION_TYPES]}, not ${
          pyTypeName(value)
        }`,
      );
    }
  }
  const dtype = given('dtype'), device = given('device');
  return {
    dtype: dtype === undefined ? undefined : dtypeArg(dtype as DType),
    device: device === undefined ? Device.cpu : deviceArg(device as Device),
    requiresGrad: given('requiresGrad') === true,
  };
}
