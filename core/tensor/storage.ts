/**
 * Storage: a reference-counted block of device memory that tensors (and their views) share, and the
 * per-device allocators that backends register.
 *
 * @module
 */
import { type Device, type DeviceType, toDevice } from './device.ts';
import { outOfMemoryError } from './out_of_memory.ts';

/** What a backend provides to hold tensor data on its device. */
export interface DeviceAllocator {
  /** Allocates `nbytes`; returns the block's address (a byte offset for the CPU). */
  allocate(nbytes: number): number;
  /** Frees a block returned by `allocate`. */
  free(ptr: number): void;
  /** A host view of the block's bytes (CPU); throws for devices without host-visible memory. */
  bytes(ptr: number, nbytes: number): Uint8Array;
  /**
   * A device other than the CPU whose `bytes` gives live host views (a third-party backend's host memory,
   * core/features/backends.ts): its tensors print their values and `toArray()` reads them.
   */
  readonly hostVisible?: boolean;
}

const allocators = new Map<DeviceType, DeviceAllocator>();
// Storage.allocate runs for every operator output: allocators by backend number avoid a Map lookup.
const allocatorsByBackend: Array<DeviceAllocator | undefined> = [];
let liveBytes = 0;
let peakBytes = 0;
let liveStorages = 0;

/**
 * Registers the allocator of a device type (a backend calls this once when it loads).
 *
 * @example
 * ```ts
 * import { registerDeviceAllocator } from './storage.ts';
 * registerDeviceAllocator('meta', { allocate: () => 0, free: () => {}, bytes: () => new Uint8Array(0) });
 * ```
 */
export function registerDeviceAllocator(type: DeviceType, allocator: DeviceAllocator): void {
  allocators.set(type, allocator);
  allocatorsByBackend.length = 0; // rebuilt lazily by deviceAllocator()
}

/** The allocator registered for a device type. */
export function deviceAllocator(type: DeviceType): DeviceAllocator {
  const allocator = allocators.get(type);
  if (allocator === undefined) throw new Error(`No backend is loaded for device type ${type}`);
  allocatorsByBackend[toDevice(type).backend] = allocator;
  return allocator;
}

/**
 * Whether a device's memory can be read synchronously from the host: the CPU, and devices whose registered
 * allocator says `hostVisible`.
 *
 * @example
 * ```ts
 * import { Device } from './device.ts';
 * import { isHostVisible } from './storage.ts';
 * isHostVisible(Device.meta); // false
 * ```
 */
export function isHostVisible(device: Device): boolean {
  return device.type === 'cpu' || allocators.get(device.type)?.hostVisible === true;
}

// Only `Storage.allocate` may make a storage: its address and size come from the device's allocator, never
// from a caller (a storage is what a kernel trusts, see core/cpu/boundary.ts).
const ALLOCATE = Symbol('Storage.allocate');

/**
 * A block of memory on a device, shared by a tensor and its views. Freed when the last reference goes.
 * Its device, address and size are fixed when it is allocated and cannot be changed or forged.
 *
 * @example
 * ```ts
 * import { Device } from './device.ts';
 * import { registerDeviceAllocator, Storage } from './storage.ts';
 * registerDeviceAllocator('meta', { allocate: () => 0, free: () => {}, bytes: () => new Uint8Array(0) });
 * const s = Storage.allocate(Device.meta, 16);
 * s.release();
 * ```
 */
export class Storage {
  readonly #device: Device;
  readonly #ptr: number;
  readonly #nbytes: number;
  #allocator: DeviceAllocator;
  #refs = 1;

  private constructor(token: symbol, device: Device, ptr: number, nbytes: number, allocator: DeviceAllocator) {
    if (token !== ALLOCATE) throw new TypeError('Storage objects are made by Storage.allocate() only');
    this.#device = device;
    this.#ptr = ptr;
    this.#nbytes = nbytes;
    this.#allocator = allocator;
  }

  /** Allocates a new block of `nbytes` (a non-negative safe integer) with one reference. */
  static allocate(device: Device, nbytes: number): Storage {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) {
      throw new RangeError(`Storage size must be a non-negative integer number of bytes, got ${String(nbytes)}`);
    }
    const allocator = allocatorsByBackend[device.backend] ?? deviceAllocator(device.type);
    let ptr: number;
    try {
      ptr = allocator.allocate(nbytes);
    } catch (e) {
      throw e instanceof RangeError && Number.isSafeInteger(nbytes) && nbytes >= 0
        ? outOfMemoryError(device, nbytes, e)
        : e;
    }
    liveBytes += nbytes;
    liveStorages++;
    if (liveBytes > peakBytes) peakBytes = liveBytes;
    return new Storage(ALLOCATE, device, ptr, nbytes, allocator);
  }

  /**
   * A storage over a block another agent allocated in the shared CPU memory (core/workers/shared_storage.ts):
   * `allocator` is that block's shared reference, whose `free` drops it. The caller checks the block.
   */
  static adoptShared(device: Device, ptr: number, nbytes: number, allocator: DeviceAllocator): Storage {
    liveBytes += nbytes;
    liveStorages++;
    if (liveBytes > peakBytes) peakBytes = liveBytes;
    return new Storage(ALLOCATE, device, ptr, nbytes, allocator);
  }

  /**
   * Hands the storage's final free to `allocator` (a shared reference count, core/workers/shared_storage.ts):
   * once shared with other agents, a block is freed when the last agent lets go of it, not this one.
   */
  static redirectFree(storage: Storage, allocator: DeviceAllocator): void {
    if (storage.#refs === 0) throw new Error('Storage was already freed');
    storage.#allocator = allocator;
  }

  /** Whether `value` is a storage made by `Storage.allocate` (a brand check, not duck typing). */
  static isStorage(value: unknown): value is Storage {
    // Reading the private field is the brand check (it throws for anything this class did not construct); V8
    // optimizes it better than `#refs in value`, and every tensor made pays this check.
    try {
      return (value as Storage).#refs >= 0;
    } catch {
      return false;
    }
  }

  /** Where the data lives. */
  get device(): Device {
    return this.#device;
  }
  /** Address of the block (a byte offset into the kernels' memory for the CPU). */
  get ptr(): number {
    return this.#ptr;
  }
  /** Size of the block in bytes. */
  get nbytes(): number {
    return this.#nbytes;
  }
  /** Whether the block has been freed. */
  get isReleased(): boolean {
    return this.#refs === 0;
  }
  /** Adds a reference (a new view). */
  retain(): void {
    if (this.#refs === 0) throw new Error('Storage was already freed');
    this.#refs++;
  }
  /** Drops a reference; the last one frees the block. */
  release(): void {
    if (this.#refs === 0) return;
    if (--this.#refs === 0) {
      this.#allocator.free(this.#ptr);
      liveBytes -= this.#nbytes;
      liveStorages--;
    }
  }
  /** Host view of exactly the block's bytes (valid until the memory grows; re-fetch after allocating). */
  bytes(): Uint8Array {
    if (this.#refs === 0) throw new Error('Storage was already freed');
    return this.#allocator.bytes(this.#ptr, this.#nbytes);
  }
}

/** Bytes held by live storages, their peak, and how many storages are live. */
export function storageStats(): { bytes: number; peakBytes: number; storages: number } {
  return { bytes: liveBytes, peakBytes, storages: liveStorages };
}

/** Restarts peak tracking from the current level. */
export function resetPeakStorageBytes(): void {
  peakBytes = liveBytes;
}
