/**
 * The caching allocator of GPU buffers (the role of PyTorch's CUDA caching allocator).
 *
 * Note [Buffer pool]
 * Creating a GPUBuffer costs far more than a small kernel, so freed buffers are kept in free lists by size
 * class and handed out again. Requests are rounded up to their size class: powers of two from 256 bytes to
 * 1 MiB, then whole MiB, so a training loop that makes the same shapes every step reuses the same buffers.
 * A storage's address (`Storage.ptr`) is a buffer id of this pool; only the kernel boundary (gpu/boundary.ts)
 * turns ids into buffers. Reusing a buffer right after it was freed is safe without waiting for the GPU: every
 * command goes through one queue, in order, and an upload into a buffer that the unsubmitted batch still uses
 * submits that batch first (gpu/commands.ts). When a request would pass the limit, the cached buffers are
 * destroyed first; only if that is not enough is it an out-of-memory error.
 *
 * @module
 */
import { formatSize } from '../core/tensor/out_of_memory.ts';

const MiB = 1 << 20;

/**
 * The size class a request of `nbytes` is served from.
 *
 * @example
 * ```ts
 * import { sizeClass } from './buffer_pool.ts';
 * sizeClass(3000); // 4096
 * ```
 */
export function sizeClass(nbytes: number): number {
  if (nbytes <= 256) return 256;
  if (nbytes <= MiB) return 2 ** Math.ceil(Math.log2(nbytes));
  return Math.ceil(nbytes / MiB) * MiB;
}

/** Byte counts of a pool (PyTorch's `memory_allocated` / `memory_reserved` figures). */
export interface PoolStats {
  /** Bytes in buffers held by live storages (size classes, so at least what was asked for). */
  readonly allocatedBytes: number;
  /** Highest `allocatedBytes` seen. */
  readonly peakAllocatedBytes: number;
  /** Bytes in all buffers the pool owns: allocated plus cached. */
  readonly reservedBytes: number;
  /** Buffers held by live storages. */
  readonly buffers: number;
  /** Freed buffers kept for reuse. */
  readonly cachedBuffers: number;
}

interface Entry {
  readonly buffer: GPUBuffer;
  readonly size: number;
}

/**
 * Buffers by id, with free lists per size class and a byte limit.
 *
 * @example
 * ```ts
 * import { BufferPool } from './buffer_pool.ts';
 * // const pool = new BufferPool(device, 1 << 30, () => {});
 * // const id = pool.allocate(1000); pool.free(id); pool.allocate(900) reuses the 1 KiB buffer
 * ```
 */
export class BufferPool {
  readonly #device: GPUDevice;
  readonly #maxBufferSize: number;
  readonly #live = new Map<number, Entry>();
  readonly #cached = new Map<number, GPUBuffer[]>();
  readonly #beforeDestroy: () => void;
  #limit: number;
  #nextId = 1;
  #allocated = 0;
  #peak = 0;
  #reserved = 0;
  #cachedCount = 0;

  /** A pool over `device` holding at most `limit` bytes; `beforeDestroy` submits work that may use a buffer. */
  constructor(device: GPUDevice, limit: number, beforeDestroy: () => void) {
    this.#device = device;
    this.#limit = limit;
    this.#maxBufferSize = Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize);
    this.#beforeDestroy = beforeDestroy;
  }

  /** The byte limit; lowering it below the reserved bytes frees the cache. */
  set limit(bytes: number) {
    this.#limit = bytes;
    if (this.#reserved > bytes) this.emptyCache();
  }
  get limit(): number {
    return this.#limit;
  }

  /**
   * A buffer of at least `nbytes` bytes; returns its id.
   *
   * @throws {RangeError} when the request exceeds what one binding may hold or the limit (Storage.allocate
   * turns it into an OutOfMemoryError).
   */
  allocate(nbytes: number): number {
    const size = sizeClass(Math.max(nbytes, 4));
    if (size > this.#maxBufferSize) {
      throw new RangeError(
        `Out of memory: tried to allocate ${formatSize(nbytes)}; the adapter binds at most ` +
          `${formatSize(this.#maxBufferSize)} per buffer (maxStorageBufferBindingSize)`,
      );
    }
    let buffer = this.#cached.get(size)?.pop();
    if (buffer !== undefined) {
      this.#cachedCount--;
    } else {
      if (this.#reserved + size > this.#limit) this.emptyCache();
      if (this.#reserved + size > this.#limit) {
        throw new RangeError(
          `Out of memory: tried to allocate ${formatSize(nbytes)}; ${formatSize(this.#allocated)} in use, limit ` +
            formatSize(this.#limit),
        );
      }
      buffer = this.#device.createBuffer({
        size,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      this.#reserved += size;
    }
    const id = this.#nextId++;
    this.#live.set(id, { buffer, size });
    this.#allocated += size;
    if (this.#allocated > this.#peak) this.#peak = this.#allocated;
    return id;
  }

  /** Gives a buffer back to its free list. */
  free(id: number): void {
    const entry = this.#live.get(id);
    if (entry === undefined) return;
    this.#live.delete(id);
    this.#allocated -= entry.size;
    let list = this.#cached.get(entry.size);
    if (list === undefined) this.#cached.set(entry.size, list = []);
    list.push(entry.buffer);
    this.#cachedCount++;
  }

  /** The buffer behind a live id and its size, or undefined for an id that is not live. */
  lookup(id: number): Entry | undefined {
    return this.#live.get(id);
  }

  /** Destroys every cached buffer (PyTorch's `empty_cache`). */
  emptyCache(): void {
    if (this.#cachedCount === 0) return;
    this.#beforeDestroy();
    for (const [size, list] of this.#cached) {
      for (const buffer of list) buffer.destroy();
      this.#reserved -= size * list.length;
    }
    this.#cached.clear();
    this.#cachedCount = 0;
  }

  /** Current figures. */
  stats(): PoolStats {
    return {
      allocatedBytes: this.#allocated,
      peakAllocatedBytes: this.#peak,
      reservedBytes: this.#reserved,
      buffers: this.#live.size,
      cachedBuffers: this.#cachedCount,
    };
  }

  /** Restarts peak tracking from the current level. */
  resetPeak(): void {
    this.#peak = this.#allocated;
  }
}
