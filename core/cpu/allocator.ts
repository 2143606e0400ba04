/**
 * The CPU memory manager: hands out 64-byte-aligned byte offsets into the shared
 * `WebAssembly.Memory` that kernels read in place, and takes them back.
 *
 * Note [CPU allocator design]
 * Two pools, as PyTorch's caching allocators keep them, so small tensors never split the holes
 * that big tensors need again:
 * - Small blocks (<= 1 MiB) are rounded to one of 52 classes (64, 128, 192, 256, then four
 *   geometric steps per power of two: 320, 384, 448, 512, 640, ... 1 MiB) and cut from 2 MiB
 *   chunks of the large pool. A freed block goes on its class's free list and is reused as is, so
 *   alloc and free of a class are a pop or a push and one Map operation. `emptyCache` (also tried
 *   before reporting out of memory) gives chunks with no live block back to the large pool.
 * - Large blocks (> 1 MiB, rounded to 64 bytes) come from a best-fit list of free ranges, split
 *   on allocation and merged with free neighbours on free; a free range reaching the top of the
 *   arena is given back to it. So a loop that allocates and frees a 64 MB output reuses the same
 *   bytes, and the memory grows only when no free range fits, never past `maximumBytes`.
 * Metadata lives in JS, never in wasm memory, so a kernel writing out of bounds cannot corrupt
 * it. Offsets are kept in 64-byte units, small integers (V8 Smis) for any 32-bit memory.
 *
 * Several agents (Workers) share one memory by giving each its own allocator, an arena whose ranges
 * come from a shared page pool (core/workers/page_pool.ts) instead of the top of a private arena:
 * see {@linkcode Allocator.useRangeSource}. The hot path (a class pop or push) is the same.
 *
 * @module
 */

import { formatSize } from '../tensor/out_of_memory.ts';

const UNIT = 64;
const PAGE_BYTES = 65536;
const SMALL_LIMIT_BYTES = 1 << 20;
const CHUNK_UNITS = (2 << 20) / UNIT;
const CLASS_COUNT = 52;

/** Size of each small class in 64-byte units. */
const CLASS_UNITS: readonly number[] = Array.from({ length: CLASS_COUNT }, (_, i) => {
  if (i < 4) return i + 1;
  const k = 8 + ((i - 4) >> 2);
  return ((1 << k) + (((i - 4) & 3) + 1) * (1 << (k - 2))) / UNIT;
});

/** The size class of a small request (0 < nbytes <= 1 MiB; 0 maps to the 64-byte class). */
function classIndex(nbytes: number): number {
  if (nbytes <= 256) return nbytes <= UNIT ? 0 : ((nbytes + UNIT - 1) >>> 6) - 1;
  const k = 31 - Math.clz32(nbytes - 1); // 2^k < nbytes <= 2^(k+1)
  return 3 + (k - 8) * 4 + ((nbytes - (1 << k) + (1 << (k - 2)) - 1) >>> (k - 2));
}

/** What the allocator needs of a memory; `WebAssembly.Memory` is one. */
export interface AllocatorMemory {
  /** The current bytes; re-read after each grow. */
  readonly buffer: ArrayBufferLike;
  /** Grows by `deltaPages` 64 KiB pages; throws when it cannot. */
  grow(deltaPages: number): number;
}

/**
 * Where an allocator in a shared memory gets address ranges once its free lists cannot serve a request
 * (core/workers/page_pool.ts). Ranges are whole 64 KiB pages; the source grows the memory itself.
 */
export interface RangeSource {
  /** Start of a range of at least `units` 64-byte units, and its size in units; undefined when none is left. */
  acquire(units: number): { start: number; units: number } | undefined;
  /** Bytes the source can ever hand out to all agents (for the out-of-memory message). */
  readonly limitBytes: number;
}

/** Where the allocator's arena lies. */
export interface AllocatorOptions {
  /** The memory to manage, usually the kernels' shared `WebAssembly.Memory`. */
  memory: AllocatorMemory;
  /** First byte the allocator may use (rounded up to 64); below it lie the kernels' static data. */
  base: number;
  /** The memory never grows past this many bytes; the arena is `[base, maximumBytes)`. */
  maximumBytes: number;
}

/** A snapshot of the allocator's counters; all sizes in bytes, block sizes after rounding. */
export interface AllocatorStats {
  /** Bytes of live blocks. */
  bytesInUse: number;
  /** The most `bytesInUse` has been since construction or {@linkcode Allocator.resetPeak}. */
  peakBytesInUse: number;
  /** High-water mark of the arena: bytes above `base` ever handed to either pool. */
  bytesReserved: number;
  /** Blocks allocated and not yet freed. */
  liveAllocations: number;
  /** Successful `alloc` calls ever. */
  allocCount: number;
}

/**
 * A size-class and best-fit allocator over one (shared) WebAssembly memory. Contents of a new block
 * are whatever was there before. `alloc(0)` returns a unique 64-byte block, to be freed like any
 * other, so every pointer is distinct and double frees of it are caught too.
 *
 * @example
 * ```ts
 * import { Allocator } from './allocator.ts';
 * const memory = new WebAssembly.Memory({ initial: 1, maximum: 64, shared: true });
 * const allocator = new Allocator({ memory, base: 0, maximumBytes: 64 * 65536 });
 * const a = allocator.alloc(100), b = allocator.alloc(2_000_000);
 * console.log(a % 64, b % 64, allocator.stats().liveAllocations); // 0 0 2
 * ```
 */
export class Allocator {
  readonly #memory: AllocatorMemory;
  readonly #baseUnit: number;
  readonly #limitUnit: number;
  #top: number; // end of the arena's used part; above it is untouched or given back
  #highWater: number;
  // Live block start unit -> size in units. A freed small block keeps its key with size 0: small blocks are
  // reused at the same starts, so updating a key instead of deleting and re-inserting it keeps the Map from
  // rehashing on every allocation (the hot path of every tensor operation).
  readonly #live = new Map<number, number>();
  #liveCount = 0;
  readonly #classFree: number[][] = Array.from({ length: CLASS_COUNT }, () => []);
  #chunkCursor = 0;
  #chunkEnd = 0;
  readonly #chunks = new Map<number, number>(); // small-block chunk start unit -> size in units
  /** Free large ranges: start units ordered by (size, start), with their sizes and ends. */
  readonly #freeOrder: number[] = [];
  readonly #freeSize = new Map<number, number>();
  readonly #freeStartByEnd = new Map<number, number>();
  #bytesInUse = 0;
  #peakBytesInUse = 0;
  #allocCount = 0;
  #source: RangeSource | undefined;
  #sourcedUnits = 0;

  /** Manages `[base, maximumBytes)` of `options.memory`; throws a RangeError for an invalid range. */
  constructor(options: AllocatorOptions) {
    const { memory, base, maximumBytes } = options;
    if (!Number.isSafeInteger(base) || base < 0) {
      throw new RangeError(`Invalid allocator base ${base}: expected a non-negative integer`);
    }
    if (!Number.isSafeInteger(maximumBytes) || maximumBytes < base) {
      throw new RangeError(`Invalid allocator maximumBytes ${maximumBytes}: expected an integer >= base (${base})`);
    }
    this.#memory = memory;
    this.#baseUnit = Math.ceil(base / UNIT);
    this.#limitUnit = Math.max(this.#baseUnit, Math.floor(maximumBytes / UNIT));
    this.#top = this.#highWater = this.#baseUnit;
  }

  /**
   * A 64-byte-aligned byte offset of a block of at least `nbytes` bytes. Throws a `RangeError` when
   * the arena cannot hold it, leaving the allocator as it was.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * console.log(allocator.alloc(10) % 64); // 0
   * ```
   */
  alloc(nbytes: number): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) {
      throw new RangeError(`Invalid allocation size ${nbytes}: expected a non-negative integer`);
    }
    let unit: number, units: number;
    if (nbytes <= SMALL_LIMIT_BYTES) {
      const cls = classIndex(nbytes);
      units = CLASS_UNITS[cls];
      const list = this.#classFree[cls];
      unit = list.length > 0 ? list.pop()! : this.#carveSmall(units, nbytes);
    } else {
      units = Math.ceil(nbytes / UNIT);
      unit = this.#allocLarge(units);
      if (unit < 0 && this.emptyCache() > 0) unit = this.#allocLarge(units);
      if (unit < 0) this.#outOfMemory(nbytes);
    }
    this.#live.set(unit, units);
    this.#liveCount++;
    this.#bytesInUse += units * UNIT;
    if (this.#bytesInUse > this.#peakBytesInUse) this.#peakBytesInUse = this.#bytesInUse;
    this.#allocCount++;
    return unit * UNIT;
  }

  /**
   * Returns a block. Throws when `ptr` is not a live block: never allocated, or already freed.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * allocator.free(allocator.alloc(10));
   * ```
   */
  free(ptr: number): void {
    const unit = ptr / UNIT;
    const units = this.#live.get(unit);
    if (units === undefined || units === 0) {
      throw new Error(`Invalid free of pointer ${ptr}: not a live allocation (never allocated, or already freed)`);
    }
    this.#liveCount--;
    this.#bytesInUse -= units * UNIT;
    if (units * UNIT <= SMALL_LIMIT_BYTES) {
      this.#live.set(unit, 0);
      this.#classFree[classIndex(units * UNIT)].push(unit);
    } else {
      this.#live.delete(unit);
      this.#releaseLarge(unit, units);
    }
  }

  /**
   * The usable size in bytes of the live block at `ptr` (its size class, or the request rounded up
   * to 64 bytes).
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * console.log(allocator.usableSize(allocator.alloc(300))); // 320
   * ```
   */
  usableSize(ptr: number): number {
    const units = this.#live.get(ptr / UNIT);
    if (units === undefined || units === 0) throw new Error(`Invalid pointer ${ptr}: not a live allocation`);
    return units * UNIT;
  }

  /**
   * Gives the chunks whose small blocks are all free back to the large pool, as
   * `torch.cuda.empty_cache()` gives cached blocks back; returns the bytes given back. `alloc` calls
   * it by itself before reporting that memory is exhausted.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 64, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 64 * 65536 });
   * allocator.free(allocator.alloc(1000));
   * console.log(allocator.emptyCache()); // 2097152
   * ```
   */
  emptyCache(): number {
    this.#retireChunkTail();
    const starts = [...this.#chunks.keys()].sort((a, b) => a - b);
    const chunkOf = (unit: number) => {
      let lo = 0, hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= unit) lo = mid;
        else hi = mid - 1;
      }
      return starts[lo];
    };
    const freeUnits = new Map<number, number>();
    this.#classFree.forEach((list, cls) => {
      for (const unit of list) freeUnits.set(chunkOf(unit), (freeUnits.get(chunkOf(unit)) ?? 0) + CLASS_UNITS[cls]);
    });
    const released = new Set(starts.filter((start) => freeUnits.get(start) === this.#chunks.get(start)));
    if (released.size === 0) return 0;
    this.#classFree.forEach((list, cls) => this.#classFree[cls] = list.filter((unit) => !released.has(chunkOf(unit))));
    // Forget the freed-block keys inside released chunks: those units may start other blocks later.
    for (const [unit, units] of this.#live) if (units === 0 && released.has(chunkOf(unit))) this.#live.delete(unit);
    let bytes = 0;
    for (const start of released) {
      const size = this.#chunks.get(start)!;
      this.#chunks.delete(start);
      this.#releaseLarge(start, size);
      bytes += size * UNIT;
    }
    return bytes;
  }

  /**
   * The allocator's counters.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * allocator.alloc(100);
   * console.log(allocator.stats().bytesInUse); // 128
   * ```
   */
  stats(): AllocatorStats {
    return {
      bytesInUse: this.#bytesInUse,
      peakBytesInUse: this.#peakBytesInUse,
      bytesReserved: (this.#highWater - this.#baseUnit + this.#sourcedUnits) * UNIT,
      liveAllocations: this.#liveCount,
      allocCount: this.#allocCount,
    };
  }

  /**
   * Restarts `peakBytesInUse` from the bytes in use now.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * allocator.free(allocator.alloc(4096));
   * allocator.resetPeak();
   * console.log(allocator.stats().peakBytesInUse); // 0
   * ```
   */
  resetPeak(): void {
    this.#peakBytesInUse = this.#bytesInUse;
  }

  /**
   * From now on, takes new ranges from `source` instead of growing its own arena, and never gives a range
   * back to the top (another agent may own what lies above it). What it already holds stays its own.
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 4, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * allocator.useRangeSource({ acquire: (units) => ({ start: 1024, units: Math.max(units, 1024) }), limitBytes: 1 << 20 });
   * console.log(allocator.alloc(100) >= 65536); // true
   * ```
   */
  /** The most bytes of the memory this allocator's own arena may reach (`maximumBytes`). */
  get limitBytes(): number {
    return this.#limitUnit * UNIT;
  }

  /** The end of this allocator's own arena in bytes (where a page pool over the same memory may start). */
  get arenaEnd(): number {
    return this.#top * UNIT;
  }

  useRangeSource(source: RangeSource): void {
    this.#source = source;
  }

  /** A new small block: cut from the current chunk, or from a new one. */
  #carveSmall(units: number, nbytes: number): number {
    if (this.#chunkCursor + units > this.#chunkEnd) {
      this.#retireChunkTail();
      // A full chunk when the arena has room, else just this block (tiny arenas in tests).
      let size = CHUNK_UNITS;
      let start = this.#allocLarge(size);
      if (start < 0 && this.emptyCache() > 0) start = this.#allocLarge(size);
      if (start < 0) start = this.#allocLarge(size = units);
      if (start < 0) this.#outOfMemory(nbytes);
      this.#chunks.set(start, size);
      this.#chunkCursor = start;
      this.#chunkEnd = start + size;
    }
    const unit = this.#chunkCursor;
    this.#chunkCursor += units;
    return unit;
  }

  /** Files the unused end of the current chunk under the largest classes that fit. */
  #retireChunkTail(): void {
    let cls = CLASS_COUNT - 1;
    while (this.#chunkCursor < this.#chunkEnd) {
      const left = this.#chunkEnd - this.#chunkCursor;
      while (CLASS_UNITS[cls] > left) cls--;
      this.#classFree[cls].push(this.#chunkCursor);
      this.#chunkCursor += CLASS_UNITS[cls];
    }
  }

  /** Best fit from the free ranges, else from the top of the arena; -1 when neither has room. */
  #allocLarge(units: number): number {
    const order = this.#freeOrder;
    const fit = this.#freeIndex(-1, units);
    if (fit < order.length) {
      const start = order[fit];
      const size = this.#freeSize.get(start)!;
      this.#removeFree(start, size);
      // The remainder's right neighbour is live (free neighbours are always merged), so it is
      // filed without merging.
      if (size > units) this.#insertFree(start + units, size - units);
      return start;
    }
    if (this.#source !== undefined) return this.#allocFromSource(units);
    const end = this.#top + units;
    if (end > this.#limitUnit) return -1;
    const shortfall = end * UNIT - this.#memory.buffer.byteLength;
    if (shortfall > 0) {
      try {
        this.#memory.grow(Math.ceil(shortfall / PAGE_BYTES));
      } catch {
        return -1; // the memory's own maximum, or the host, said no
      }
    }
    const start = this.#top;
    this.#top = end;
    if (end > this.#highWater) this.#highWater = end;
    return start;
  }

  #allocFromSource(units: number): number {
    const range = this.#source!.acquire(units);
    if (range === undefined) return -1;
    this.#sourcedUnits += range.units;
    // A range next to one this allocator holds free merges with it (both are its own).
    if (range.units > units) this.#releaseLarge(range.start + units, range.units - units);
    return range.start;
  }

  /** Returns a large range: merged with free neighbours, or given back to the top of the arena. */
  #releaseLarge(start: number, units: number): void {
    const nextSize = this.#freeSize.get(start + units);
    if (nextSize !== undefined) {
      this.#removeFree(start + units, nextSize);
      units += nextSize;
    }
    const previous = this.#freeStartByEnd.get(start);
    if (previous !== undefined) {
      const previousSize = this.#freeSize.get(previous)!;
      this.#removeFree(previous, previousSize);
      start = previous;
      units += previousSize;
    }
    if (this.#source === undefined && start + units === this.#top) this.#top = start;
    else this.#insertFree(start, units);
  }

  /** Position of (size, start) in the free order, or where it would go. */
  #freeIndex(start: number, size: number): number {
    const order = this.#freeOrder;
    let lo = 0, hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const midSize = this.#freeSize.get(order[mid])!;
      if (midSize < size || (midSize === size && order[mid] < start)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #insertFree(start: number, size: number): void {
    this.#freeOrder.splice(this.#freeIndex(start, size), 0, start);
    this.#freeSize.set(start, size);
    this.#freeStartByEnd.set(start + size, start);
  }

  #removeFree(start: number, size: number): void {
    this.#freeOrder.splice(this.#freeIndex(start, size), 1);
    this.#freeSize.delete(start);
    this.#freeStartByEnd.delete(start + size);
  }

  #outOfMemory(nbytes: number): never {
    throw this.outOfMemoryError(nbytes);
  }

  /**
   * The error `alloc` throws when a request of `nbytes` cannot be met (for allocators layered on this one).
   *
   * @example
   * ```ts
   * import { Allocator } from './allocator.ts';
   * const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
   * const allocator = new Allocator({ memory, base: 0, maximumBytes: 16 * 65536 });
   * allocator.outOfMemoryError(1 << 30).message; // 'Out of memory: tried to allocate 1.00 GiB ...'
   * ```
   */
  outOfMemoryError(nbytes: number): RangeError {
    const limit = this.#source?.limitBytes ?? (this.#limitUnit - this.#baseUnit) * UNIT;
    return new RangeError(
      `Out of memory: tried to allocate ${formatSize(nbytes)} (${nbytes} bytes); ` +
        `${formatSize(this.#bytesInUse)} in use, limit ${formatSize(limit)}`,
    );
  }
}
