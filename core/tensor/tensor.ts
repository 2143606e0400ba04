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
import { bfloat16BitsToNumber, dtypeFromScalarType, float16BitsToNumber, getDefaultDtype } from './dtype.ts';
import { formatTensor } from './format.ts';
import { type ScopeFrame, scopeSlot, trackTensor, untrackTensor } from './lifetime.ts';
import { contiguousStrides, isContiguousLayout, numelOf, wrapDim } from './shape.ts';
import type { TensorMethods } from '../ops/generated_api.js';
import type { AutogradTensorMethods } from '../autograd/tensor_autograd.ts';
import type { ConvenienceTensorMethods } from '../ops/tensor_conveniences.ts';
import { isHostVisible, Storage } from './storage.ts';
import { asyncToCpu } from './host_transfer.ts';

/** A counter shared by a tensor and its views, bumped by every in-place change (autograd checks it). */
export interface VersionCounter {
  /** Bumped by each in-place change. */
  version: number;
}

/** Autograd state a tensor carries (filled in by `core/autograd`). */
export interface AutogradMeta {
  /** Whether autograd records operations on the tensor. */
  requiresGrad: boolean;
  /** The accumulated gradient, or null. */
  grad: Tensor | null;
  /** The node that made the tensor (null for leaves). */
  readonly gradFn: unknown;
  /** Output index of this tensor in its gradFn. */
  outputNr: number;
  /** Whether a non-leaf keeps its gradient in `grad` (`retainGrad()`). */
  retainsGrad: boolean;
  /** Called once when `tensor` is disposed: its owner gives back its hold on the graph. */
  onOwnerDisposed(tensor: Tensor): void;
}

/** Options describing a new tensor over a storage. */
export interface TensorInit {
  /** The storage the tensor views. */
  readonly storage: Storage;
  /** Sizes per dimension. */
  readonly shape: readonly number[];
  /** Element type. */
  readonly dtype: DType;
  /** Strides in elements (contiguous when omitted). */
  readonly strides?: readonly number[];
  /** Offset of element [0, ..., 0] in the storage, in elements (0 when omitted). */
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

// Note [Tensor geometry]
// Every tensor's description is checked once, when it is made: sizes are non-negative safe integers, strides
// and the storage offset are safe integers (negative strides only come from internal views such as flip's),
// the dtype is one of the runtime's, and every element the sizes and strides reach lies inside the storage
// (PyTorch's setStorage check). The CPU kernel boundary (core/cpu/boundary.ts) checks again, per call, the
// region each kernel is given; this check makes a bad description fail where it is made, with PyTorch's words.
// Every operator output is made here, so the common form, contiguous from offset 0 with no strides given, takes
// isSoundContiguous: the same answer in fewer steps (one product compared with the storage's bytes), falling back
// to the full check for anything it cannot settle (tests/tensor/hot_path_checks.test.ts compares the two).

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const listText = (xs: readonly number[]) => `[${xs.map(String).join(', ')}]`;

// The runtime's dtypes by ScalarType code: a description's dtype must be one of these very objects.
const RUNTIME_DTYPES: ReadonlyArray<DType | undefined> = Array.from({ length: 16 }, (_, code) => {
  try {
    return dtypeFromScalarType(code);
  } catch {
    return undefined; // a ScalarType code the runtime has no dtype for
  }
});

function isRuntimeDtype(dtype: unknown): dtype is DType {
  return typeof dtype === 'object' && dtype !== null &&
    RUNTIME_DTYPES[(dtype as { scalarType: number }).scalarType & 15] === dtype;
}

/** A non-negative safe integer (the common case, below 2^32, in one comparison). */
const isSize = (x: number) => (x >>> 0) === x || (Number.isSafeInteger(x) && x >= 0);

/** The product of `shape`'s sizes, or -1 when one is not a non-negative safe integer. */
function sizeProduct(shape: readonly number[]): number {
  let numel = 1;
  for (let d = 0; d < shape.length; d++) {
    const size = shape[d];
    if (!isSize(size)) return -1;
    numel *= size;
  }
  return numel;
}

// The lowest and highest element index a description reaches, set by measureReach.
let reachLow = 0, reachHigh = 0;

/** Sets reachLow/reachHigh for a description of `numel` elements; false when a stride is not a safe integer. */
function measureReach(
  shape: readonly number[],
  strides: readonly number[] | undefined,
  offset: number,
  numel: number,
): boolean {
  reachLow = offset;
  reachHigh = offset + numel - 1;
  if (strides === undefined) return true;
  reachHigh = offset;
  for (let d = 0; d < shape.length; d++) {
    const stride = strides[d];
    if (!Number.isSafeInteger(stride)) return false;
    const reach = (shape[d] - 1) * stride;
    if (reach > 0) reachHigh += reach;
    else if (reach < 0) reachLow += reach;
  }
  return true;
}

/**
 * Whether a tensor description is sound (Note [Tensor geometry]): the check every tensor made pays, so it builds
 * no strings and stays small enough to inline; the constructor asks `geometryError` why one is not. Exported
 * for the benchmark that measures what validation costs.
 *
 * @example
 * ```ts
 * import { isSoundGeometry } from './tensor.ts';
 * import { Device } from './device.ts';
 * import { Storage } from './storage.ts';
 * import { float32 } from './dtype.ts';
 * import '../../mod.ts';
 * const s = Storage.allocate(Device.cpu, 24);
 * isSoundGeometry([2, 3], [3, 1], 0, float32, s); // true
 * isSoundGeometry([2, 4], undefined, 0, float32, s); // false: 32 bytes needed
 * s.release();
 * ```
 */
export function isSoundGeometry(
  shape: readonly number[],
  strides: readonly number[] | undefined,
  offset: number,
  dtype: DType,
  storage: Storage,
): boolean {
  if (!isRuntimeDtype(dtype) || !isSize(offset)) return false;
  const numel = sizeProduct(shape);
  if (numel < 0 || (strides !== undefined && strides.length !== shape.length)) return false;
  if (!measureReach(shape, strides, offset, numel)) return false;
  // Products and sums of integers stay exact below 2^53; anything above is refused, so one bound check suffices.
  if (numel > MAX_SAFE || reachHigh > MAX_SAFE || reachLow < -MAX_SAFE) return false;
  if (numel === 0 || storage.device.type === 'meta') return true;
  return reachLow >= 0 && (reachHigh + 1) * dtype.itemSize <= storage.nbytes;
}

/**
 * {@linkcode isSoundGeometry} for a contiguous description from offset 0 (no strides given), the form of nearly
 * every operator output: the same answer, in fewer steps. Sizes below 2^32 and a byte count the storage holds
 * settle it here; anything else (a size that needs a closer look, a meta storage, a refusal) goes to the full
 * check. (A product of such sizes that is not exact is above 2^53, so it cannot pass the byte comparison.)
 * Exported for the benchmark that measures what validation costs.
 *
 * @example
 * ```ts
 * import { isSoundContiguous } from './tensor.ts';
 * import { Device } from './device.ts';
 * import { Storage } from './storage.ts';
 * import { float32 } from './dtype.ts';
 * import '../../mod.ts';
 * const s = Storage.allocate(Device.cpu, 24);
 * isSoundContiguous([2, 3], float32, s); // true
 * isSoundContiguous([2, 4], float32, s); // false: 32 bytes needed
 * s.release();
 * ```
 */
export function isSoundContiguous(shape: readonly number[], dtype: DType, storage: Storage): boolean {
  if (!isRuntimeDtype(dtype)) return false;
  let numel = 1;
  for (let d = 0; d < shape.length; d++) {
    const size = shape[d];
    if ((size >>> 0) !== size) return isSoundGeometry(shape, undefined, 0, dtype, storage);
    numel *= size;
  }
  return numel * dtype.itemSize <= storage.nbytes || isSoundGeometry(shape, undefined, 0, dtype, storage);
}

/** Why {@linkcode isSoundGeometry} refused a description, in PyTorch's words. */
function geometryError(
  shape: readonly number[],
  strides: readonly number[] | undefined,
  offset: number,
  dtype: DType,
  storage: Storage,
): Error {
  if (!isRuntimeDtype(dtype)) return new TypeError(`A Tensor needs one of the runtime's dtypes, got ${String(dtype)}`);
  const numel = sizeProduct(shape);
  if (numel < 0) {
    const size = shape.find((s) => !isSize(s))!;
    return Number.isSafeInteger(size)
      ? new RuntimeError(`Trying to create tensor with negative dimension ${size}: ${listText(shape)}`)
      : new TypeError(`Tensor sizes must be integers, got ${listText(shape)}`);
  }
  if (!isSize(offset)) {
    return new RuntimeError(`Tensor storage offset must be a non-negative integer, got ${String(offset)}`);
  }
  if (strides !== undefined && strides.length !== shape.length) {
    return new RuntimeError(`Tensor has ${shape.length} sizes but ${strides.length} strides: ${listText(strides)}`);
  }
  if (!measureReach(shape, strides, offset, numel)) {
    return new TypeError(`Tensor strides must be integers, got ${listText(strides!)}`);
  }
  if (numel > MAX_SAFE || reachHigh > MAX_SAFE || reachLow < -MAX_SAFE) {
    return new RuntimeError(
      `Storage size calculation overflowed with sizes=${listText(shape)} and strides=${listText(strides ?? [])}`,
    );
  }
  const needed = (reachHigh + 1) * dtype.itemSize;
  return new RuntimeError(
    `setStorage: sizes ${listText(shape)}, strides ${listText(strides ?? contiguousStrides(shape))}, storage ` +
      `offset ${offset}, and itemsize ${dtype.itemSize} requiring a storage size of ${needed} are out of bounds ` +
      `for storage of size ${storage.nbytes}`,
  );
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
/** The operator methods of tensors (`t.add(u)`, ...), generated from the operator table, and the autograd methods. */
export interface Tensor extends TensorMethods, AutogradTensorMethods, ConvenienceTensorMethods {}

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
  // Storage, offset and dtype are fixed at construction (a kernel trusts them: see Note [Tensor geometry]).
  readonly #storage: Storage;
  readonly #storageOffset: number;
  readonly #dtype: DType;
  /** Sizes. */
  readonly shape: readonly number[];
  // Computed on first use for tensors made contiguous (most op outputs never have their strides read).
  #strides: readonly number[] | undefined;
  #contiguous: boolean | undefined;
  /** Version counter shared with views. */
  #version: VersionCounter | undefined;
  #base: Tensor | undefined;
  /** Autograd state, created on first use. */
  autograd: AutogradMeta | undefined;
  /** Lifetime bookkeeping: whether the finalizer safety net knows this tensor (see lifetime.ts). */
  finalizerRegistered = false;
  /** Lifetime bookkeeping: the `scope()` that will free this tensor (see lifetime.ts). */
  [scopeSlot]: ScopeFrame | undefined = undefined;
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
    // The brand check of isLive, without the liveness.
    try {
      return typeof (value as Tensor).#disposed === 'boolean';
    } catch {
      return false;
    }
  }

  /**
   * Whether `value` is a tensor of this runtime (the brand check of {@linkcode Tensor.isTensor}) that has not
   * been disposed: one check for argument parsing and the kernel boundary.
   *
   * @example
   * ```ts
   * import { Tensor, tensor } from '../../mod.ts';
   * const t = tensor([1]);
   * Tensor.isLive(t); // true
   * t.dispose();
   * Tensor.isLive(t); // false
   * ```
   */
  static isLive(value: unknown): value is Tensor {
    // Reading the private field is the brand check: it throws for anything this class did not construct (other
    // objects, look-alikes, proxies, primitives), and V8 optimizes it better than `#disposed in value`, which
    // costs ~2 ns per check on the path of every operator call.
    try {
      return !(value as Tensor).#disposed;
    } catch {
      return false;
    }
  }

  /**
   * Wraps a storage; takes over one reference to it (released again if the description is refused). Use the
   * factory functions instead. Throws PyTorch's errors when the sizes, strides or offset are not integers in
   * range or when the elements they reach do not lie inside the storage (Note [Tensor geometry]).
   */
  constructor(init: TensorInit) {
    const storage = init.storage;
    if (!Storage.isStorage(storage)) throw new TypeError('A Tensor needs a Storage made by Storage.allocate()');
    // Copies, so callers may reuse their arrays; typed readonly rather than frozen (freezing costs on every op).
    const shape = init.shape.slice();
    const strides = init.strides === undefined ? undefined : init.strides.slice();
    const offset = init.storageOffset ?? 0;
    const sound = strides === undefined && offset === 0
      ? isSoundContiguous(shape, init.dtype, storage)
      : isSoundGeometry(shape, strides, offset, init.dtype, storage);
    if (storage.isReleased || !sound) {
      const refused = storage.isReleased
        ? new RuntimeError('Cannot make a tensor over a storage that was already freed')
        : geometryError(shape, strides, offset, init.dtype, storage);
      storage.release();
      throw refused;
    }
    this.#storage = storage;
    this.shape = shape;
    if (strides !== undefined) {
      this.#strides = strides;
    } else {
      this.#strides = undefined;
      this.#contiguous = true;
    }
    this.#storageOffset = offset;
    this.#dtype = init.dtype;
    this.#version = init.version; // created on first use: most temporaries are never written in place
    this.#base = init.base;
    const ks = cachedKeySet(storage.device, init.inference ?? inferenceModeDepth > 0);
    this.keySetHi = ks.hi;
    this.keySetLo = ks.lo;
    this.autograd = undefined;
    trackTensor(this, storage);
  }

  /**
   * This tensor on the CPU (PyTorch's `Tensor.cpu()`): itself when it is there, else a copy. A WebGPU tensor has
   * no synchronous readback: use `await t.cpuAsync()` (this raises an error naming it).
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * const t = tensor([1, 2]);
   * t.cpu() === t; // true
   * ```
   */
  cpu(): Tensor {
    return (this as unknown as { to(device: string): Tensor }).to('cpu');
  }

  /** The storage (shared with views). */
  get storage(): Storage {
    return this.#storage;
  }
  /** Offset of element [0, ..., 0] in the storage, in elements. */
  get storageOffset(): number {
    return this.#storageOffset;
  }
  /** Element type. */
  get dtype(): DType {
    return this.#dtype;
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
  /** The stride of dimension `dim` (negative counts from the end). */
  stride(dim: number): number;
  stride(dim?: number): readonly number[] | number {
    const strides = this.#strides ??= contiguousStrides(this.shape);
    return dim === undefined ? strides : strides[wrapDim(dim, this.shape.length)];
  }
  /** Sizes, or the size of one dimension (PyTorch's `size()`). */
  size(): readonly number[];
  /** The size of dimension `dim` (negative counts from the end). */
  size(dim: number): number;
  size(dim?: number): readonly number[] | number {
    return dim === undefined ? this.shape : this.shape[wrapDim(dim, this.shape.length)];
  }
  /** Whether the layout is row-major dense. */
  isContiguous(): boolean {
    return this.#contiguous ??= isContiguousLayout(this.shape, this.#strides!);
  }
  /**
   * The tensor this one views, if it is a view (PyTorch's `_base`). A disposed view forgets it, so that a view
   * kept around after `dispose()` does not keep its base object (and the base's storage) from being collected.
   */
  get base(): Tensor | undefined {
    return this.#base;
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
    this.#base = undefined;
    untrackTensor(this);
    this.storage.release();
    // A tensor with a history holds its grad_fn; giving that back may free the graph it ends.
    this.autograd?.onOwnerDisposed(this);
    // Outside any graph the state is dropped: a view's names its base, which must not stay reachable through a
    // disposed view. (In a graph, saved aliases share the state, so it stays.)
    if (this.autograd?.requiresGrad === false) this.autograd = undefined;
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

  /**
   * A CPU tensor with this tensor's values: `this` itself for a CPU tensor (as PyTorch's `cpu()` returns self),
   * else a new CPU tensor, once the device has computed it. The only way to read a webgpu tensor (WebGPU has no
   * blocking readback); the copy is not recorded by autograd.
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * const t = tensor([1, 2]);
   * (await t.cpuAsync()) === t; // true: already on the CPU
   * ```
   */
  async cpuAsync(): Promise<Tensor> {
    this.assertAlive('cpuAsync()');
    if (this.device.type === 'cpu') return this;
    if (this.device.type === 'meta') throw new Error('Cannot read the data of a meta tensor: it has none');
    return await asyncToCpu(this);
  }

  /**
   * {@linkcode toArray}, for tensors on any device: awaits the readback of a webgpu tensor.
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * await tensor([1, 2]).toArrayAsync(); // [1, 2]
   * ```
   */
  async toArrayAsync(): Promise<Array<number | boolean>> {
    const host = await this.cpuAsync();
    try {
      return host.toArray();
    } finally {
      if (host !== this) host.dispose();
    }
  }

  /**
   * {@linkcode tolist}, for tensors on any device.
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * await tensor([[1, 2]]).tolistAsync(); // [[1, 2]]
   * ```
   */
  async tolistAsync(): Promise<unknown> {
    const host = await this.cpuAsync();
    try {
      return host.tolist();
    } finally {
      if (host !== this) host.dispose();
    }
  }

  /**
   * {@linkcode item}, for tensors on any device.
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * await tensor([3]).itemAsync(); // 3
   * ```
   */
  async itemAsync(): Promise<number | boolean> {
    this.assertAlive('itemAsync()');
    if (this.numel !== 1) throw new Error(`a Tensor with ${this.numel} elements cannot be converted to Scalar`);
    return (await this.toArrayAsync())[0];
  }

  /** PyTorch's `repr`. Reads only the elements it prints: a summarised 10^8-element tensor costs microseconds. */
  toString(): string {
    if (this.#disposed) return 'tensor(<disposed>)';
    const ag = this.autograd;
    const gradFn = ag?.gradFn as { name?: () => string } | null | undefined;
    const host = isHostVisible(this.device);
    return formatTensor({
      shape: this.shape,
      dtype: this.dtype,
      device: this.device.toString(),
      elided: !host, // no synchronous access (webgpu: print `await t.cpuAsync()`)
      get: host ? elementAtFlatIndex(this) : noElements,
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

/**
 * The bytes of a contiguous CPU tensor's elements, for host code that reads or fills them: a view of exactly
 * `numel` elements from its first, checked to lie inside its storage block (so typed arrays made over it cannot
 * reach another tensor's memory). The CPU backend's own kernels take their addresses from core/cpu/boundary.ts.
 *
 * @example
 * ```ts
 * import { contiguousHostBytes, tensor } from './tensor.ts';
 * contiguousHostBytes(tensor([1, 2])).byteLength; // 16
 * ```
 */
export function contiguousHostBytes(t: Tensor): Uint8Array {
  if (!Tensor.isTensor(t)) throw new TypeError('Expected a Tensor made by this runtime');
  t.assertAlive('host access');
  if (!t.isContiguous()) throw new RuntimeError('Host access to tensor data needs a contiguous tensor');
  const item = t.dtype.itemSize, start = t.storageOffset * item, end = start + t.numel * item;
  const block = t.storage.bytes();
  if (end > block.byteLength) {
    throw new RuntimeError(`A tensor's ${t.numel} elements from offset ${t.storageOffset} lie outside its storage`);
  }
  return block.subarray(start, end);
}

type Reader = (offset: number) => number | boolean;

function noElements(): never {
  throw new Error('Cannot read the data of a meta tensor: it has none');
}

/**
 * Reads the element at a row-major flat index through the tensor's own strides (views, expanded tensors),
 * without materialising anything; int64 exactly, as a bigint.
 */
function elementAtFlatIndex(t: Tensor): (flat: number) => number | bigint | boolean {
  const shape = t.shape, strides = t.stride(), start = t.storageOffset;
  let read: (offset: number) => number | bigint | boolean = elementReader(t);
  if (t.dtype.name === 'int64') {
    const bytes = t.storage.bytes();
    const values = new BigInt64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 3);
    read = (offset) => values[offset];
  }
  return (flat) => {
    let offset = start;
    for (let d = shape.length - 1; d >= 0 && flat > 0; d--) {
      const size = shape[d];
      offset += (flat % size) * strides[d];
      flat = Math.floor(flat / size);
    }
    return read(offset);
  };
}

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
