/**
 * `tensor(data)`: a tensor from nested arrays, typed arrays or a number, with PyTorch's dtype inference.
 *
 * @module
 */
import { Device, type DeviceLike, toDevice } from '../tensor/device.ts';
import {
  bool,
  type DType,
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
  uint8,
} from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
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

/** Shape and flat values of nested data; throws PyTorch's message for ragged input. */
function flatten(data: TensorData): { shape: number[]; values: ArrayLike<number | boolean | bigint>; typed?: DType } {
  if (typeof data === 'number' || typeof data === 'boolean') return { shape: [], values: [data] };
  const typed = typedArrayDtype(data);
  if (typed !== undefined) {
    return { shape: [(data as ArrayLike<number>).length], values: data as ArrayLike<number>, typed };
  }
  const shape: number[] = [];
  let level: unknown = data;
  while (Array.isArray(level) || ArrayBuffer.isView(level)) {
    shape.push((level as ArrayLike<unknown>).length);
    if ((level as ArrayLike<unknown>).length === 0) break;
    level = (level as ArrayLike<unknown>)[0];
  }
  const values: Array<number | boolean> = [];
  const walk = (x: unknown, dim: number) => {
    if (dim === shape.length) {
      if (typeof x !== 'number' && typeof x !== 'boolean') {
        throw new TypeError(`Could not infer dtype of ${x === null ? 'None' : Array.isArray(x) ? 'list' : typeof x}`);
      }
      values.push(x);
      return;
    }
    const arr = x as ArrayLike<unknown>;
    if ((!Array.isArray(arr) && !ArrayBuffer.isView(arr)) || arr.length !== shape[dim]) {
      const got = Array.isArray(arr) || ArrayBuffer.isView(arr) ? arr.length : 'a scalar';
      throw new Error(`expected sequence of length ${shape[dim]} at dim ${dim} (got ${got})`);
    }
    for (let i = 0; i < arr.length; i++) walk(arr[i], dim + 1);
  };
  walk(data, 0);
  return { shape, values };
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

/** Writes values into a contiguous CPU tensor's storage. */
export function writeValues(t: Tensor, values: ArrayLike<number | boolean | bigint>): void {
  const bytes = t.storage.bytes();
  const base = bytes.byteOffset + t.storageOffset * t.dtype.itemSize;
  const n = t.numel;
  const num = (v: number | boolean | bigint) => (typeof v === 'bigint' ? Number(v) : Number(v));
  switch (t.dtype.name) {
    case 'int64': {
      const a = new BigInt64Array(bytes.buffer, base, n);
      for (let i = 0; i < n; i++) {
        const v = values[i];
        a[i] = typeof v === 'bigint' ? v : BigInt(Math.trunc(num(v)));
      }
      return;
    }
    case 'float16':
    case 'bfloat16': {
      const a = new Uint16Array(bytes.buffer, base, n);
      const conv = t.dtype.name === 'float16' ? numberToFloat16Bits : numberToBFloat16Bits;
      for (let i = 0; i < n; i++) a[i] = conv(num(values[i]));
      return;
    }
    case 'bool': {
      const a = new Uint8Array(bytes.buffer, base, n);
      for (let i = 0; i < n; i++) a[i] = num(values[i]) !== 0 ? 1 : 0;
      return;
    }
    default: {
      const Ctor = {
        float32: Float32Array,
        float64: Float64Array,
        int32: Int32Array,
        int16: Int16Array,
        int8: Int8Array,
        uint8: Uint8Array,
      }[t.dtype.name];
      const a = new Ctor(bytes.buffer as ArrayBuffer, base, n);
      const integral = !t.dtype.isFloatingPoint;
      for (let i = 0; i < n; i++) {
        const v = num(values[i]);
        a[i] = integral ? Math.trunc(v) : v;
      }
    }
  }
}

/**
 * A tensor from data (`torch.tensor`). The dtype is inferred as PyTorch does: all booleans give bool, all
 * integers give int64, anything else the default float type; typed arrays keep their type (Float32Array →
 * float32, ...). JavaScript cannot tell `1.0` from `1`, so `tensor([1.0, 2.0])` is int64: pass
 * `{ dtype: 'float32' }` or a Float32Array when you mean floats.
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
  writeValues(t, values);
  return t;
}
