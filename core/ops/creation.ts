/**
 * `tensor(data)`: a tensor from nested arrays, typed arrays or scalars, with PyTorch's dtype inference and
 * `torch.tensor`'s conversions and errors.
 *
 * @module
 */
import { Device, type DeviceLike, toDevice } from '../tensor/device.ts';
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
  toDType,
  typedArrayFor,
  uint8,
} from '../tensor/dtype.ts';
import { contiguousHostBytes, type Tensor } from '../tensor/tensor.ts';
import { checkedConvert } from './decl_factories.ts';
import { registerOperators } from './registry.ts';

/** Data `tensor()` accepts. */
export type TensorData =
  | number
  | boolean
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
function flatten(data: TensorData): { shape: number[]; values: ArrayLike<number | boolean | bigint>; typed?: DType } {
  if (typeof data === 'number' || typeof data === 'boolean') return { shape: [], values: [data] };
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
  const values: Array<number | boolean | bigint> = [];
  // Rows that are typed arrays of one type give that dtype, as a list of NumPy arrays does in PyTorch.
  let rows: DType | null | undefined;
  const walk = (x: unknown, dim: number) => {
    if (dim === shape.length) {
      if (typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint') values.push(x);
      else if (isSequence(x)) throw new TypeError(`'list' object cannot be interpreted as a number`);
      else throw new TypeError(`Could not infer dtype of ${x === null ? 'None' : typeof x}`);
      return;
    }
    if (!isSequence(x)) throw new TypeError('not a sequence');
    if (x.length !== shape[dim]) {
      throw new Error(`expected sequence of length ${shape[dim]} at dim ${dim} (got ${x.length})`);
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

function inferDtype(values: ArrayLike<number | boolean | bigint>): DType {
  let allBool = values.length > 0, allInt = true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'boolean') allBool = false;
    if (typeof v === 'number' && !Number.isInteger(v)) allInt = false;
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
export function writeValues(t: Tensor, values: ArrayLike<number | boolean | bigint>): void {
  const n = t.numel;
  if (n === 0) return;
  const bytes = contiguousHostBytes(t); // exactly the n elements: the typed arrays below cannot reach further
  const base = bytes.byteOffset;
  const num = (v: number | boolean | bigint) => Number(v);
  const pyName = PY_INT_NAMES[t.dtype.name];
  const integral = (v: number | boolean | bigint) =>
    typeof v === 'bigint' ? Number(v) : checkedConvert(v, t.dtype, pyName);
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
          const v = BigInt.asIntN(64, x);
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
export function tensor(data: TensorData, options: TensorOptions = {}): Tensor {
  const { shape, values, typed } = flatten(data);
  const dtype = options.dtype !== undefined ? toDType(options.dtype) : typed ?? inferDtype(values);
  const device = toDevice(options.device);
  const ops = registerOperators();
  if (device.type === 'meta') {
    return ops['empty.memory_format'].call(shape, dtype, null, device, null, null) as Tensor;
  }
  const t = ops['empty.memory_format'].call(shape, dtype, null, Device.cpu, null, null) as Tensor;
  try {
    writeValues(t, values);
  } catch (e) {
    t.dispose();
    throw e;
  }
  if (device.type === 'cpu') return t;
  try {
    return ops['_to_copy'].call(t, null, null, device, null, false, null) as Tensor;
  } finally {
    t.dispose();
  }
}
