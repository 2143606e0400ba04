/**
 * The part of a table store that agents share once it is attached: the kernel-name table (stable name ->
 * global kernel id), the operator directory (operator name -> row), the rows allocated after sharing began,
 * and the writers' lock. One SharedArrayBuffer holds all of it; an attaching agent gets it together with the
 * SharedArrayBuffer chunks the store had before sharing began.
 *
 * Note [Shared table store]
 * A kernel id must mean the same kernel in every agent, and a row must belong to the same operator in every
 * agent, so that one agent's published row is read correctly by all. Kernel ids are therefore indices into
 * an append-only table of stable kernel names (an id is never reused for another name), and rows are found
 * through a directory keyed by operator name (a row never changes operator, as in Note [Rows outlive
 * operators] in dispatcher.ts). When the main agent starts sharing, its kernel ids become the first global
 * ids (their names in id order) and its rows the first directory entries; an agent that attaches maps its
 * own kernels to global ids by stable name and takes the existing row of each operator it knows. Each agent
 * keeps a local copy of both tables, refreshed from the shared counts when a name or id is not in it yet.
 *
 * Registrations stay per agent (its OperatorEntry objects); what an agent publishes is the change its
 * registration makes to its own computation of the row (the slots and fallthrough bits that differ before
 * and after), applied to the stored row under the lock (`TableStore.publishChange`). Registrations only some
 * agents have (a backend registered lazily, a fallback) therefore stay published when another agent changes
 * the same row; two agents registering at the same slot overwrite each other (last change wins).
 *
 * Layout, Int32 words: [HEADER] magic, the lock word (holder agent + 1), the publication generation, rows
 * allocated, chunks that existed before sharing, kernel-name count, operator count, text bytes used;
 * [KERNELS] per kernel id: text offset and length; [OPS] per operator: text offset, length and row;
 * [ROWS] the row chunks allocated after sharing began; then the names' UTF-8 text.
 *
 * @module
 */
import { ROW_GENERATION, ROW_WORDS, ROWS_PER_CHUNK } from './table_store.ts';

/** What an agent needs to attach to a shared table store (every field is structured-cloneable). */
export interface SharedTables {
  /** The shared registry (names, directory, later rows, lock). */
  readonly registry: SharedArrayBuffer;
  /** The row chunks that existed before sharing began, in chunk order. */
  readonly chunks: SharedArrayBuffer[];
}

/** Most kernel names over the store's life (ids are never reused). */
export const MAX_KERNEL_NAMES = 32768;
/** Most operators over the store's life. */
export const MAX_SHARED_OPERATORS = 8192;
/** Row chunks available after sharing began. */
export const SHARED_ROW_CHUNKS = 16;
/** Bytes for the names' text. */
export const SHARED_NAME_BYTES = 1 << 20;

const MAGIC_VALUE = 0x53595442; // 'SYTB'
const W_MAGIC = 0, W_LOCK = 1, W_GENERATION = 2, W_ROWS = 3, W_INITIAL_CHUNKS = 4, W_KERNELS = 5, W_OPS = 6;
const W_TEXT = 7;
const HEADER_WORDS = 16;
const KERNELS_AT = HEADER_WORDS;
const OPS_AT = KERNELS_AT + 2 * MAX_KERNEL_NAMES;
const ROWS_AT = OPS_AT + 3 * MAX_SHARED_OPERATORS;
const CHUNK_WORDS = ROWS_PER_CHUNK * ROW_WORDS;
const WORDS = ROWS_AT + SHARED_ROW_CHUNKS * CHUNK_WORDS;
const BYTES = WORDS * 4 + SHARED_NAME_BYTES;
const LOCK_TIMEOUT_MS = 10_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * One agent's view of a shared table registry.
 *
 * @example
 * ```ts
 * import { SharedTableRegistry } from './shared_tables.ts';
 * const reg = SharedTableRegistry.create(0, 2, 0, ['missing', 'k']);
 * reg.kernelId('k'); // 1
 * ```
 */
export class SharedTableRegistry {
  /** The shared buffer. */
  readonly buffer: SharedArrayBuffer;
  /** This agent's id (the lock word holds the holder's id + 1). */
  readonly agent: number;
  readonly #w: Int32Array;
  readonly #text: Uint8Array;
  readonly #kernelNames: string[] = [];
  readonly #kernelIds = new Map<string, number>();
  readonly #opRows = new Map<string, number>();
  #opsSeen = 0;

  private constructor(buffer: SharedArrayBuffer, agent: number) {
    this.buffer = buffer;
    this.agent = agent;
    this.#w = new Int32Array(buffer, 0, WORDS);
    this.#text = new Uint8Array(buffer, WORDS * 4, SHARED_NAME_BYTES);
  }

  /**
   * A new registry: `initialChunks` chunks and `rows` rows exist already, `kernelNames[i]` is the name of
   * kernel id i (the creating agent's ids become the global ones).
   */
  static create(
    agent: number,
    initialChunks: number,
    rows: number,
    kernelNames: readonly string[],
  ): SharedTableRegistry {
    const reg = new SharedTableRegistry(new SharedArrayBuffer(BYTES), agent);
    const w = reg.#w;
    w[W_INITIAL_CHUNKS] = initialChunks;
    w[W_ROWS] = rows;
    w[W_MAGIC] = MAGIC_VALUE;
    for (const name of kernelNames) reg.#appendKernel(name);
    return reg;
  }

  /** Opens a registry another agent created. */
  static open(buffer: SharedArrayBuffer, agent: number): SharedTableRegistry {
    const reg = new SharedTableRegistry(buffer, agent);
    if (reg.#w[W_MAGIC] !== MAGIC_VALUE) throw new Error('Not a shared dispatch table registry');
    return reg;
  }

  /** Chunks that existed before sharing began (they travel as their own SharedArrayBuffers). */
  get initialChunks(): number {
    return this.#w[W_INITIAL_CHUNKS];
  }

  /** Bumped by every row publication in any agent. */
  get generation(): number {
    return Atomics.load(this.#w, W_GENERATION);
  }

  /** The words of chunk `c`, one allocated after sharing began. */
  sharedChunk(c: number): Int32Array {
    const k = c - this.initialChunks;
    if (k < 0 || k >= SHARED_ROW_CHUNKS) throw new RangeError(`Dispatch table chunk ${c} is not in the registry`);
    return new Int32Array(this.buffer, (ROWS_AT + k * CHUNK_WORDS) * 4, CHUNK_WORDS);
  }

  // ---- the writers' lock ----

  /** Runs `fn` holding the registry lock (spins, then waits; reports a holder that keeps it for 10 s). */
  locked<T>(fn: () => T): T {
    const w = this.#w, me = this.agent + 1;
    if (Atomics.load(w, W_LOCK) === me) return fn(); // re-entrant: a row write inside a registration
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    for (let spins = 0;; spins++) {
      const holder = Atomics.compareExchange(w, W_LOCK, 0, me);
      if (holder === 0) break;
      if (spins > 100) {
        if (Date.now() > deadline) {
          throw new Error(
            `The dispatch table lock has been held by agent ${holder - 1} for over ${LOCK_TIMEOUT_MS / 1000} s: ` +
              'that worker died or hangs; terminate it with its AgentHandle (which breaks its locks)',
          );
        }
        try {
          Atomics.wait(w, W_LOCK, holder, 1);
        } catch {
          // A thread that may not block (a browser main thread) spins.
        }
      }
    }
    try {
      return fn();
    } finally {
      Atomics.store(w, W_LOCK, 0);
      Atomics.notify(w, W_LOCK);
    }
  }

  /** Releases the lock if the dead agent `agent` held it; returns whether it did. */
  breakLockOf(agent: number): boolean {
    const broke = Atomics.compareExchange(this.#w, W_LOCK, agent + 1, 0) === agent + 1;
    if (broke) Atomics.notify(this.#w, W_LOCK);
    return broke;
  }

  /** The agent holding the lock, or -1. */
  lockHolder(): number {
    return Atomics.load(this.#w, W_LOCK) - 1;
  }

  /** Counts a publication (under the lock). */
  published(): void {
    Atomics.add(this.#w, W_GENERATION, 1);
  }

  // ---- kernel names ----

  /** The global id of a stable kernel name, appending it (under the lock) if new. */
  kernelId(name: string): number {
    const known = this.#kernelIds.get(name) ?? (this.#syncKernels(), this.#kernelIds.get(name));
    if (known !== undefined) return known;
    return this.locked(() => {
      this.#syncKernels();
      return this.#kernelIds.get(name) ?? this.#appendKernel(name);
    });
  }

  /** The stable name of a global kernel id, or undefined when there is none. */
  kernelName(id: number): string | undefined {
    if (id >= this.#kernelNames.length) this.#syncKernels();
    return this.#kernelNames[id];
  }

  #appendKernel(name: string): number {
    const w = this.#w, id = w[W_KERNELS];
    if (id >= MAX_KERNEL_NAMES) throw new RangeError(`The shared kernel-name table is full (${MAX_KERNEL_NAMES})`);
    const [at, length] = this.#appendText(name);
    w[KERNELS_AT + 2 * id] = at;
    w[KERNELS_AT + 2 * id + 1] = length;
    Atomics.store(w, W_KERNELS, id + 1); // publishes the entry
    this.#syncKernels();
    return id;
  }

  #syncKernels(): void {
    const w = this.#w, count = Atomics.load(w, W_KERNELS);
    for (let id = this.#kernelNames.length; id < count; id++) {
      const name = this.#textAt(w[KERNELS_AT + 2 * id], w[KERNELS_AT + 2 * id + 1]);
      this.#kernelNames.push(name);
      if (!this.#kernelIds.has(name)) this.#kernelIds.set(name, id);
    }
  }

  // ---- operator directory ----

  /** The row of operator `name`, or -1 when no agent has one. */
  rowOf(name: string): number {
    const known = this.#opRows.get(name);
    if (known !== undefined) return known;
    this.#syncOps();
    return this.#opRows.get(name) ?? -1;
  }

  /**
   * The row of operator `name`, allocating one (under the lock) when no agent has it yet; `created` says
   * which. `existing` lists rows allocated before sharing began, to enter into the directory instead.
   */
  rowFor(name: string, existing?: number): { row: number; created: boolean } {
    const known = this.rowOf(name);
    if (known >= 0) return { row: known, created: false };
    return this.locked(() => {
      this.#syncOps();
      const again = this.#opRows.get(name);
      if (again !== undefined) return { row: again, created: false };
      const w = this.#w, count = w[W_OPS];
      if (count >= MAX_SHARED_OPERATORS) {
        throw new RangeError(`The shared operator directory is full (${MAX_SHARED_OPERATORS} operators)`);
      }
      let row = existing;
      if (row === undefined) {
        row = w[W_ROWS];
        if (row >= (this.initialChunks + SHARED_ROW_CHUNKS) * ROWS_PER_CHUNK) {
          throw new RangeError('The shared dispatch table store is full: no row left for operator ' + name);
        }
        w[W_ROWS] = row + 1;
      }
      const [at, length] = this.#appendText(name);
      w[OPS_AT + 3 * count] = at;
      w[OPS_AT + 3 * count + 1] = length;
      w[OPS_AT + 3 * count + 2] = row;
      Atomics.store(w, W_OPS, count + 1);
      this.#syncOps();
      return { row, created: true };
    });
  }

  #syncOps(): void {
    const w = this.#w, count = Atomics.load(w, W_OPS);
    for (let i = this.#opsSeen; i < count; i++) {
      this.#opRows.set(this.#textAt(w[OPS_AT + 3 * i], w[OPS_AT + 3 * i + 1]), w[OPS_AT + 3 * i + 2]);
    }
    this.#opsSeen = count;
  }

  /** Rows allocated so far (before and after sharing began). */
  get rowCount(): number {
    return Atomics.load(this.#w, W_ROWS);
  }

  // ---- text ----

  #appendText(name: string): [number, number] {
    const bytes = encoder.encode(name), used = this.#w[W_TEXT];
    if (used + bytes.length > SHARED_NAME_BYTES) {
      throw new RangeError(`The shared dispatch name text is full (${SHARED_NAME_BYTES} bytes)`);
    }
    this.#text.set(bytes, used);
    this.#w[W_TEXT] = used + bytes.length;
    return [used, bytes.length];
  }

  #textAt(at: number, length: number): string {
    // TextDecoder refuses views of a SharedArrayBuffer: copy the few bytes first.
    return decoder.decode(this.#text.slice(at, at + length));
  }
}

/** Closes the seqlock of every row a dead writer left odd (mid-write), so readers stop retrying. */
export function closeTornRows(chunks: readonly Int32Array[]): number {
  let closed = 0;
  for (const words of chunks) {
    for (let base = 0; base + ROW_WORDS <= words.length; base += ROW_WORDS) {
      if ((Atomics.load(words, base + ROW_GENERATION) & 1) !== 0) {
        Atomics.add(words, base + ROW_GENERATION, 1);
        closed++;
      }
    }
  }
  return closed;
}
