/**
 * Tensor: storage + offset, sizes, strides, dtype, device, dispatch keyset words and a version counter
 * shared with views. Operators come from `core/ops`, which installs them as methods on this class.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import {
  DispatchKeySet,
  getAutocastRelatedKeySetFromBackend,
  getAutogradRelatedKeySetFromBackend,
} from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { DispatchKeySource } from '../dispatch/ivalue.ts';
import type { Device } from './device.ts';
import type { DType } from './dtype.ts';
import { bfloat16BitsToNumber, float16BitsToNumber, getDefaultDtype } from './dtype.ts';
import { formatTensor } from './format.ts';
import { trackTensor, untrackTensor } from './lifetime.ts';
import { contiguousStrides, isContiguousLayout, numelOf, wrapDim } from './shape.ts';
import type { TensorMethods } from '../ops/generated_api.ts';
import type { AutogradTensorMethods } from '../autograd/tensor_autograd.ts';
import type { Storage } from './storage.ts';

/** A counter shared by a tensor and its views, bumped by every in-place change (autograd checks it). */
export interface VersionCounter {
  version: number;
}

/** Autograd state a tensor carries (filled in by `core/autograd`). */
export interface AutogradMeta {
  requiresGrad: boolean;
  grad: Tensor | null;
  readonly gradFn: unknown;
  /** Output index of this tensor in its gradFn. */
  outputNr: number;
  retainsGrad: boolean;
  /** Called once when `tensor` is disposed: its owner gives back its hold on the graph. */
  onOwnerDisposed(tensor: Tensor): void;
}

/** Options describing a new tensor over a storage. */
export interface TensorInit {
  readonly storage: Storage;
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly strides?: readonly number[];
  readonly storageOffset?: number;
  /** Share this version counter (views); a fresh one otherwise. */
  readonly version?: VersionCounter;
  /** The tensor this one is a view of. */
  readonly base?: Tensor;
  /** Created under inference mode: no autograd keys. */
  readonly inference?: boolean;
}

/** The keyset of a tensor on a device (PyTorch's rule: backend, autograd-related and autocast keys). */
export function tensorKeySet(device: Device, inference: boolean): DispatchKeySet {
  const b = device.backend;
  let ks = DispatchKeySet.of(DispatchKey.StartOfDenseBackends + b);
  if (!inference) ks = ks.or(getAutogradRelatedKeySetFromBackend(b));
  return ks.or(getAutocastRelatedKeySetFromBackend(b));
}

let inferenceModeDepth = 0;
const AD_INPLACE_OR_VIEW_HI = DispatchKeySet.of(DispatchKey.ADInplaceOrView).hi;

/**
 * Enters (+1) or leaves (-1) inference mode for tensor creation: tensors made inside are inference tensors
 * (no autograd keys). `core/autograd`'s `inferenceMode()` guard drives this together with the key sets.
 */
export function adjustInferenceMode(delta: 1 | -1): void {
  inferenceModeDepth += delta;
}

/** Whether tensors created now are inference tensors. */
export function isInferenceModeEnabled(): boolean {
  return inferenceModeDepth > 0;
}

// Tensor creation is on every operator's path: the keyset words per (backend, inference) are computed once.
const KEYSET_CACHE: Array<DispatchKeySet | undefined> = [];
function cachedKeySet(device: Device, inference: boolean): DispatchKeySet {
  const slot = device.backend * 2 + (inference ? 1 : 0);
  return KEYSET_CACHE[slot] ??= tensorKeySet(device, inference);
}

// The operators' methods (`t.add(u)`, ...) are generated from the operator table and installed on the
// prototype by `installTensorMethods()`; this declaration merge gives them their types.
export interface Tensor extends TensorMethods, AutogradTensorMethods {}

/**
 * An n-dimensional array on a device. Views (`view`, `transpose`, `narrow`, ...) share storage and
 * version counter. Free it with `dispose()`, a `using` declaration, or `scope()`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * const t = tensor([[1, 2], [3, 4]]);
 * t.shape; // [2, 2]
 * String(t); // 'tensor([[1, 2],\n        [3, 4]])' (integers give int64, as in PyTorch)
 * t.dispose();
 * ```
 */
export class Tensor implements DispatchKeySource {
  /** Dispatch keyset, functionality word. */
  keySetHi: number;
  /** Dispatch keyset, backend word. */
  keySetLo: number;
  /** The storage (shared with views). */
  readonly storage: Storage;
  /** Offset of element [0, ..., 0] in the storage, in elements. */
  readonly storageOffset: number;
  /** Sizes. */
  readonly shape: readonly number[];
  // Computed on first use for tensors made contiguous (most op outputs never have their strides read).
  #strides: readonly number[] | undefined;
  #contiguous: boolean | undefined;
  /** Element type. */
  readonly dtype: DType;
  /** Version counter shared with views. */
  #version: VersionCounter | undefined;
  /** The tensor this one views, if it is a view. */
  readonly base: Tensor | undefined;
  /** Autograd state, created on first use. */
  autograd: AutogradMeta | undefined;
  /** Lifetime bookkeeping: whether the finalizer safety net knows this tensor (see lifetime.ts). */
  finalizerRegistered = false;
  #disposed = false;

  /**
   * Whether `value` is a tensor made by this runtime. A brand check on a private field: an object that only
   * looks like a tensor (its own `keySetHi`, `storage`, or even `Tensor.prototype` as its prototype) is not one.
   *
   * @example
   * ```ts
   * import { Tensor, tensor } from '../../mod.ts';
   * Tensor.isTensor(tensor([1])); // true
   * Tensor.isTensor(Object.create(Tensor.prototype)); // false
   * ```
   */
  static isTensor(value: unknown): value is Tensor {
    return typeof value === 'object' && value !== null && #disposed in value;
  }

  /** Wraps a storage; takes over one reference to it. Use the factory functions instead. */
  constructor(init: TensorInit) {
    this.storage = init.storage;
    // Copies, so callers may reuse their arrays; typed readonly rather than frozen (freezing costs on every op).
    this.shape = init.shape.slice();
    if (init.strides !== undefined) {
      this.#strides = init.strides.slice();
    } else {
      this.#strides = undefined;
      this.#contiguous = true;
    }
    this.storageOffset = init.storageOffset ?? 0;
    this.dtype = init.dtype;
    this.#version = init.version; // created on first use: most temporaries are never written in place
    this.base = init.base;
    const ks = cachedKeySet(init.storage.device, init.inference ?? inferenceModeDepth > 0);
    this.keySetHi = ks.hi;
    this.keySetLo = ks.lo;
    this.autograd = undefined;
    trackTensor(this, init.storage);
  }

  /** The device of the storage. */
  get device(): Device {
    return this.storage.device;
  }
  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }
  /** Number of elements. */
  get numel(): number {
    return numelOf(this.shape);
  }
  /** Number of dimensions (PyTorch's `dim()`). */
  dim(): number {
    return this.shape.length;
  }
  /** Strides in elements, or the stride of one dimension. */
  stride(): readonly number[];
  stride(dim: number): number;
  stride(dim?: number): readonly number[] | number {
    const strides = this.#strides ??= contiguousStrides(this.shape);
    return dim === undefined ? strides : strides[wrapDim(dim, this.shape.length)];
  }
  /** Sizes, or the size of one dimension (PyTorch's `size()`). */
  size(): readonly number[];
  size(dim: number): number;
  size(dim?: number): readonly number[] | number {
    return dim === undefined ? this.shape : this.shape[wrapDim(dim, this.shape.length)];
  }
  /** Whether the layout is row-major dense. */
  isContiguous(): boolean {
    return this.#contiguous ??= isContiguousLayout(this.shape, this.#strides!);
  }
  /** Whether the tensor has been disposed. */
  get isDisposed(): boolean {
    return this.#disposed;
  }
  /** The current version (bumped by in-place ops); inference tensors have none (PyTorch's `_version`). */
  get version(): number {
    if (this.isInference) throw new RuntimeError('Inference tensors do not track version counter.');
    return this.versionCounter.version;
  }
  /** Version counter shared with views. */
  get versionCounter(): VersionCounter {
    return this.#version ??= { version: 0 };
  }
  /** Whether the tensor was made under inference mode (has no autograd keys). */
  get isInference(): boolean {
    return (this.keySetHi & AD_INPLACE_OR_VIEW_HI) === 0;
  }

  /** Throws PyTorch-style if the tensor was disposed. */
  assertAlive(what = 'Tensor'): void {
    if (this.#disposed) throw new Error(`${what}: the tensor was disposed and cannot be used any more`);
  }

  /** Releases this tensor's reference to its storage (views keep the storage alive). Idempotent. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    untrackTensor(this);
    this.storage.release();
    // A tensor with a history holds its grad_fn; giving that back may free the graph it ends.
    this.autograd?.onOwnerDisposed(this);
  }
  /** Same as {@linkcode dispose}. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /**
   * The elements as a flat JS array in row-major order: numbers (int64 values beyond 2^53 lose precision,
   * as JS numbers must), booleans for bool.
   */
  toArray(): Array<number | boolean> {
    this.assertAlive('toArray()');
    if (this.device.type === 'meta') throw new Error('Cannot read the data of a meta tensor: it has none');
    const n = this.numel;
    const out = new Array<number | boolean>(n);
    const read = elementReader(this);
    const shape = this.shape, strides = this.stride(), nd = shape.length;
    const index = new Array<number>(nd).fill(0);
    let offset = this.storageOffset;
    for (let i = 0; i < n; i++) {
      out[i] = read(offset);
      for (let d = nd - 1; d >= 0; d--) {
        if (++index[d] < shape[d]) {
          offset += strides[d];
          break;
        }
        offset -= strides[d] * (shape[d] - 1);
        index[d] = 0;
      }
    }
    return out;
  }

  /** The elements as nested arrays (PyTorch's `tolist()`); a 0-d tensor gives its value. */
  tolist(): unknown {
    const flat = this.toArray();
    const nest = (dim: number, start: number): unknown => {
      if (dim === this.shape.length) return flat[start];
      const size = this.shape[dim];
      const step = numelOf(this.shape.slice(dim + 1));
      return Array.from({ length: size }, (_, i) => nest(dim + 1, start + i * step));
    };
    return nest(0, 0);
  }

  /** The value of a one-element tensor. */
  item(): number | boolean {
    this.assertAlive('item()');
    if (this.numel !== 1) {
      throw new Error(`a Tensor with ${this.numel} elements cannot be converted to Scalar`);
    }
    return this.toArray()[0];
  }

  /** PyTorch's `repr`. */
  toString(): string {
    if (this.#disposed) return 'tensor(<disposed>)';
    const meta = this.device.type === 'meta';
    const flat = meta ? [] : this.toArray();
    const ag = this.autograd;
    const gradFn = ag?.gradFn as { name?: () => string } | null | undefined;
    return formatTensor({
      shape: this.shape,
      dtype: this.dtype,
      device: this.device.toString(),
      get: (i) => flat[i],
      requiresGrad: ag?.requiresGrad === true && (gradFn === null || gradFn === undefined),
      gradFnName: gradFn?.name?.(),
    });
  }

  /** Deno's custom inspect hook. */
  [Symbol.for('Deno.customInspect')](): string {
    return this.toString();
  }
  /** Node's and Bun's custom inspect hook. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

type Reader = (offset: number) => number | boolean;

/** A function reading element `offset` (in elements) of a CPU tensor's storage. */
export function elementReader(t: Tensor): Reader {
  const bytes = t.storage.bytes();
  const buf = bytes.buffer, base = bytes.byteOffset, n = bytes.byteLength;
  switch (t.dtype.name) {
    case 'float32': {
      const a = new Float32Array(buf, base, n >> 2);
      return (o) => a[o];
    }
    case 'float64': {
      const a = new Float64Array(buf, base, n >> 3);
      return (o) => a[o];
    }
    case 'int32': {
      const a = new Int32Array(buf, base, n >> 2);
      return (o) => a[o];
    }
    case 'int64': {
      const a = new BigInt64Array(buf, base, n >> 3);
      return (o) => Number(a[o]);
    }
    case 'int16': {
      const a = new Int16Array(buf, base, n >> 1);
      return (o) => a[o];
    }
    case 'int8': {
      const a = new Int8Array(buf, base, n);
      return (o) => a[o];
    }
    case 'uint8': {
      const a = new Uint8Array(buf, base, n);
      return (o) => a[o];
    }
    case 'bool': {
      const a = new Uint8Array(buf, base, n);
      return (o) => a[o] !== 0;
    }
    case 'float16': {
      const a = new Uint16Array(buf, base, n >> 1);
      return (o) => float16BitsToNumber(a[o]);
    }
    case 'bfloat16': {
      const a = new Uint16Array(buf, base, n >> 1);
      return (o) => bfloat16BitsToNumber(a[o]);
    }
  }
}

/**
 * Whether `value` is a tensor of this runtime (PyTorch's `torch.is_tensor`); see {@linkcode Tensor.isTensor}.
 *
 * @example
 * ```ts
 * import { isTensor, tensor } from '../../mod.ts';
 * isTensor(tensor([1, 2])); // true
 * isTensor({ shape: [2] }); // false
 * ```
 */
export function isTensor(value: unknown): value is Tensor {
  return Tensor.isTensor(value);
}

/** The default floating dtype, re-exported for factories. */
export { getDefaultDtype };
