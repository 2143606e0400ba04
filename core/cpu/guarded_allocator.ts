/**
 * Checked mode for the CPU memory: every block handed out carries guard bytes on both sides, and every kernel
 * call is followed by a verification of all of them, so a kernel (or host code) that writes outside the
 * blocks it was given fails at once, naming the kernel, instead of corrupting a neighbour silently.
 *
 * Note [Guard bytes]
 * A block of `n` bytes is cut from a block of `n + 128` of the plain allocator: 64 guard bytes, the `n` bytes
 * handed out (still 64-byte aligned, so kernels behave as in normal mode), then guard bytes from the end of
 * those `n` bytes to the end of the underlying block (at least 64). Guard bytes hold a pattern that depends on
 * the address, so a kernel that copies a neighbouring guard onto another (an overrun copy) is caught as well as
 * one that writes zeros. The pattern is checked for every live block after every kernel call (and for a block
 * when it is freed). That costs time proportional to the live blocks; checked mode is for tests and fuzzing.
 *
 * @module
 */
import type { Allocator, AllocatorStats } from './allocator.ts';

/** What the CPU runtime needs of an allocator (the plain one or the guarded one). */
export interface BlockAllocator {
  alloc(nbytes: number): number;
  free(ptr: number): void;
  usableSize(ptr: number): number;
  emptyCache(): number;
  stats(): AllocatorStats;
  resetPeak(): void;
}

const GUARD = 64;

/** The guard word expected at the 4-byte-aligned address `a` (its bytes are the guard bytes there). */
const patternWord = (a: number) => (Math.imul(a, 0x9e3779b1) ^ 0xa5a5a5a5) >>> 0;
/** The guard byte expected at byte address `a`. */
const patternByte = (a: number) => (patternWord(a & ~3) >>> ((a & 3) << 3)) & 0xff;

/** A live block: the bytes requested and where the underlying block ends. */
interface Block {
  readonly nbytes: number;
  readonly end: number;
}

/** The error raised when guard bytes were overwritten. */
export class GuardViolationError extends Error {
  /** A guard violation found after `where`. */
  constructor(message: string) {
    super(message);
    this.name = 'GuardViolationError';
  }
}

/**
 * An allocator that surrounds every block with guard bytes and can verify them (Note [Guard bytes]).
 *
 * @example
 * ```ts
 * import { Allocator } from './allocator.ts';
 * import { GuardedAllocator } from './guarded_allocator.ts';
 * const memory = new WebAssembly.Memory({ initial: 1, maximum: 64, shared: true });
 * const guarded = new GuardedAllocator(new Allocator({ memory, base: 0, maximumBytes: 64 * 65536 }), memory);
 * const p = guarded.alloc(10);
 * new Uint8Array(memory.buffer)[p + 10] = 0; // one byte too far
 * try { guarded.verify('demo'); } catch (e) { console.log((e as Error).name); } // GuardViolationError
 * ```
 */
export class GuardedAllocator implements BlockAllocator {
  readonly #inner: Allocator;
  readonly #memory: { readonly buffer: ArrayBufferLike };
  /** Handed-out address -> its block. */
  readonly #live = new Map<number, Block>();

  /** Guards the blocks of `inner`, which manages `memory`. */
  constructor(inner: Allocator, memory: { readonly buffer: ArrayBufferLike }) {
    this.#inner = inner;
    this.#memory = memory;
  }

  /** A block of `nbytes` between guard bytes. */
  alloc(nbytes: number): number {
    if (!Number.isSafeInteger(nbytes) || nbytes < 0) {
      throw new RangeError(`Invalid allocation size ${nbytes}: expected a non-negative integer`);
    }
    let start: number;
    try {
      start = this.#inner.alloc(nbytes + 2 * GUARD);
    } catch (e) {
      // Report the caller's request, not the guarded size.
      throw e instanceof RangeError ? this.#inner.outOfMemoryError(nbytes) : e;
    }
    const end = start + this.#inner.usableSize(start);
    const bytes = new Uint8Array(this.#memory.buffer);
    for (let a = start; a < start + GUARD; a++) bytes[a] = patternByte(a);
    for (let a = start + GUARD + nbytes; a < end; a++) bytes[a] = patternByte(a);
    this.#live.set(start + GUARD, { nbytes, end });
    return start + GUARD;
  }

  /** Verifies the block's guards, then returns it. */
  free(ptr: number): void {
    const block = this.#live.get(ptr);
    if (block === undefined) {
      throw new Error(`Invalid free of pointer ${ptr}: not a live allocation (never allocated, or already freed)`);
    }
    const buffer = this.#memory.buffer;
    this.#check(new Uint8Array(buffer), new Uint32Array(buffer), ptr, block, 'free');
    this.#live.delete(ptr);
    this.#inner.free(ptr - GUARD);
  }

  /** The bytes handed out at `ptr` (the request: guard bytes follow it). */
  usableSize(ptr: number): number {
    const block = this.#live.get(ptr);
    if (block === undefined) throw new Error(`Invalid pointer ${ptr}: not a live allocation`);
    return block.nbytes;
  }

  /** As the plain allocator's. */
  emptyCache(): number {
    return this.#inner.emptyCache();
  }

  /** The plain allocator's counters (guard bytes included). */
  stats(): AllocatorStats {
    return this.#inner.stats();
  }

  /** As the plain allocator's. */
  resetPeak(): void {
    this.#inner.resetPeak();
  }

  /** Throws a {@linkcode GuardViolationError} naming `where` if any live block's guard bytes changed. */
  verify(where: string): void {
    const buffer = this.#memory.buffer;
    const bytes = new Uint8Array(buffer), words = new Uint32Array(buffer);
    for (const [ptr, block] of this.#live) this.#check(bytes, words, ptr, block, where);
  }

  /** Live blocks (for tests). */
  get liveBlocks(): number {
    return this.#live.size;
  }

  // Word by word where aligned (blocks start and end 64-byte aligned), byte by byte up to the first word after the
  // requested bytes.
  #check(bytes: Uint8Array, words: Uint32Array, ptr: number, block: Block, where: string): void {
    const nbytes = block.nbytes;
    for (let a = ptr - GUARD; a < ptr; a += 4) {
      if (words[a >>> 2] !== patternWord(a)) this.#violation(bytes, where, ptr, nbytes, a);
    }
    let a = ptr + nbytes;
    for (; (a & 3) !== 0; a++) {
      if (bytes[a] !== patternByte(a)) this.#violation(bytes, where, ptr, nbytes, a);
    }
    for (; a < block.end; a += 4) {
      if (words[a >>> 2] !== patternWord(a)) this.#violation(bytes, where, ptr, nbytes, a);
    }
  }

  #violation(bytes: Uint8Array, where: string, ptr: number, nbytes: number, word: number): never {
    let at = word;
    while (bytes[at] === patternByte(at)) at++; // the first changed byte of the word
    const side = at < ptr ? 'before its start' : 'past its end';
    throw new GuardViolationError(
      `Checked mode: memory outside a block was overwritten (detected after ${where}): byte ${at - ptr} of the ` +
        `${nbytes}-byte block at ${ptr} (${side}) changed`,
    );
  }
}

/**
 * Wraps every function export of the kernel module so that the guards are verified after each call.
 *
 * @example
 * ```ts
 * // runtime.ts: kernels = checked ? guardKernels(raw, guardedAllocator) : raw
 * ```
 */
export function guardKernels<K extends object>(raw: K, allocator: GuardedAllocator): K {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'function') {
      out[name] = value;
      continue;
    }
    const fn = value as (...args: unknown[]) => unknown;
    out[name] = (...args: unknown[]) => {
      const result = fn(...args);
      allocator.verify(`kernel ${name}`);
      return result;
    };
  }
  return out as K;
}
