/**
 * Checked mode for the CPU memory: every block handed out carries guard bytes on both sides, and every kernel
 * call is followed by a verification of all of them, so a kernel (or host code) that writes outside the
 * blocks it was given fails at once, naming the kernel, instead of corrupting a neighbour silently.
 *
 * Note [Guard bytes]
 * A block of `n` bytes is cut from a block of `n + 128` of the plain allocator: 64 guard bytes, the `n` bytes
 * handed out (still 64-byte aligned, so kernels behave as in normal mode), then 64 guard bytes (to the next whole
 * word) after those `n` bytes. Guard bytes hold a pattern that depends on
 * the address, so a kernel that copies a neighbouring guard onto another (an overrun copy) is caught as well as
 * one that writes zeros. After every kernel call the guards of the blocks the call was given are checked (the
 * kernel boundary notes each operand's block: an overrun or underrun of an operand lands in its own guards
 * first), and those of 32 more live blocks, round robin, so a stray write anywhere is found within `live / 32`
 * calls; with at most 32 blocks, all are checked after every call. A block's guards are also checked when it is
 * freed, and `verify(where, true)` checks all of them. So a call costs a bounded amount (a graph holding 100k
 * tensors does not make each kernel call scan 100k blocks), and no overwritten guard goes unreported. Checked mode
 * is for tests and fuzzing.
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
/** Blocks verified after each kernel call (Note [Guard bytes]). */
const VERIFY_WINDOW = 32;

/** The guard word expected at the 4-byte-aligned address `a` (its bytes are the guard bytes there). */
const patternWord = (a: number) => (Math.imul(a, 0x9e3779b1) ^ 0xa5a5a5a5) >>> 0;
/** The guard byte expected at byte address `a`. */
const patternByte = (a: number) => (patternWord(a & ~3) >>> ((a & 3) << 3)) & 0xff;

/** A live block: the bytes requested and where its trailing guard ends. */
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
  // Handed-out address -> its block, undefined once freed. Keys are never deleted: blocks are reused at the same
  // addresses, and a V8 Map with tens of thousands of entries rehashes on nearly every insert after deletes.
  readonly #live = new Map<number, Block | undefined>();
  /** The live addresses in an array (swap-removed on free), for round-robin verification. */
  readonly #order: number[] = [];
  readonly #position = new Map<number, number>();
  #cursor = 0;
  /** Blocks the current kernel call was given (noted by the kernel boundary). */
  readonly #touched: number[] = [];

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
    // The trailing guard: 64 bytes (rounded up to a whole word) after the request, within the underlying block
    // (size classes can leave far more slack; guarding all of it would make every check scan it).
    const end = Math.min(start + this.#inner.usableSize(start), (start + 2 * GUARD + nbytes + 3) & ~3);
    const bytes = new Uint8Array(this.#memory.buffer);
    for (let a = start; a < start + GUARD; a++) bytes[a] = patternByte(a);
    for (let a = start + GUARD + nbytes; a < end; a++) bytes[a] = patternByte(a);
    this.#live.set(start + GUARD, { nbytes, end });
    this.#position.set(start + GUARD, this.#order.length);
    this.#order.push(start + GUARD);
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
    this.#live.set(ptr, undefined);
    const at = this.#position.get(ptr)!, last = this.#order.pop()!;
    this.#position.set(ptr, -1);
    if (last !== ptr) {
      this.#order[at] = last;
      this.#position.set(last, at);
    }
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

  /** Notes that the running kernel call was given (part of) the block handed out at `ptr`. */
  touch(ptr: number): void {
    this.#touched.push(ptr);
  }

  /**
   * Throws a {@linkcode GuardViolationError} naming `where` if a live block's guard bytes changed: every block's
   * when `all` is true, else those of the blocks noted with `touch` since the last call and of the next 32 in
   * round-robin order (Note [Guard bytes]).
   */
  verify(where: string, all = false): void {
    const buffer = this.#memory.buffer;
    const bytes = new Uint8Array(buffer), words = new Uint32Array(buffer);
    for (const ptr of this.#touched) {
      const block = this.#live.get(ptr);
      if (block !== undefined) this.#check(bytes, words, ptr, block, where);
    }
    this.#touched.length = 0;
    const order = this.#order, n = order.length;
    const count = all ? n : Math.min(n, VERIFY_WINDOW);
    for (let i = 0; i < count; i++) {
      if (this.#cursor >= n) this.#cursor = 0;
      const ptr = order[this.#cursor++];
      this.#check(bytes, words, ptr, this.#live.get(ptr)!, where);
    }
  }

  /** Live blocks (for tests). */
  get liveBlocks(): number {
    return this.#order.length;
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
