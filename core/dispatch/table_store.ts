/**
 * The dispatch tables of all operators, packed in SharedArrayBuffers so that every agent attached to the
 * same store dispatches with the same tables.
 *
 * Note [Table store layout]
 * Rows live in chunks of `ROWS_PER_CHUNK` rows (a SharedArrayBuffer cannot grow, and a new chunk leaves the
 * rows already handed out in place, so generated call stubs can keep a reference to their chunk). A row is
 * `ROW_WORDS` Int32 words:
 *
 *   [GENERATION]            seqlock word: odd while the row is being written
 *   [PER_BACKEND_FLAG]      1 when the non-fallthrough masks differ per backend
 *   [NFT_HI, NFT_LO]        the operator's non-fallthrough keyset
 *   [PB + 2*i, PB + 2*i+1]  the non-fallthrough keyset for backend index i (NUM_BACKENDS pairs)
 *   [ENTRIES + slot]        the kernel id of every dispatch table slot (NUM_RUNTIME_ENTRIES words)
 *
 * Kernel ids index a per-agent array of kernel functions; the names behind the ids are stable, so an
 * attached agent resolves an id to its own function object. Writers bump GENERATION to odd, write, and bump
 * it to even with `Atomics`; a reader in another agent retries while the word is odd or changed under it.
 * The owning agent reads rows directly: it is the only writer, so it can never observe its own torn row.
 *
 * @module
 */
import { NUM_BACKENDS } from './dispatch_key.ts';
import { NUM_RUNTIME_ENTRIES } from './dispatch_key_set.ts';

/** Word offsets inside a row. */
export const ROW_GENERATION = 0;
/** 1 when per-backend masks are needed. */
export const ROW_PER_BACKEND_FLAG = 1;
/** Non-fallthrough mask, functionality word. */
export const ROW_NFT_HI = 2;
/** Non-fallthrough mask, backend word. */
export const ROW_NFT_LO = 3;
/** First of the per-backend mask pairs. */
export const ROW_PER_BACKEND = 4;
/** First kernel id. */
export const ROW_ENTRIES: number = ROW_PER_BACKEND + 2 * NUM_BACKENDS;
/** Words per row. */
export const ROW_WORDS: number = ROW_ENTRIES + NUM_RUNTIME_ENTRIES;
/** Rows per SharedArrayBuffer chunk. */
export const ROWS_PER_CHUNK = 256;

/** Where a row lives: its chunk's words and the row's first word. */
export interface RowRef {
  /** Row index in the store. */
  readonly row: number;
  /** The words of the row's chunk (shared with every agent). */
  readonly words: Int32Array;
  /** Index in `words` of the row's first word. */
  readonly base: number;
}

/** The contents of a row, as written and as read back. */
export interface RowData {
  /** Kernel id per dispatch table slot. */
  readonly ids: Int32Array;
  /** Non-fallthrough mask `[hi, lo]`. */
  readonly nonFallthrough: readonly [number, number];
  /** Per-backend non-fallthrough masks, `[hi, lo]` per backend index. */
  readonly perBackend: ReadonlyArray<readonly [number, number]>;
  /** Whether dispatch must use the per-backend masks. */
  readonly requiresPerBackend: boolean;
}

/**
 * Allocates, writes and reads dispatch table rows in shared memory.
 *
 * @example
 * ```ts
 * import { TableStore } from './table_store.ts';
 * const store = new TableStore();
 * const ref = store.allocateRow();
 * store.readRow(ref.row).ids.length; // NUM_RUNTIME_ENTRIES
 * ```
 */
export class TableStore {
  readonly #chunks: Int32Array[] = [];
  readonly #freeRows: number[] = [];
  #rowCount = 0;

  /** The SharedArrayBuffers holding the rows, in chunk order (what an attaching agent needs). */
  get buffers(): SharedArrayBuffer[] {
    return this.#chunks.map((c) => c.buffer as SharedArrayBuffer);
  }

  /** Number of rows ever allocated (freed rows are reused). */
  get rowCount(): number {
    return this.#rowCount;
  }

  /** Hands out a zeroed row (all slots kernel id 0, "missing"). */
  allocateRow(): RowRef {
    let row = this.#freeRows.pop();
    if (row === undefined) {
      row = this.#rowCount++;
      if (row >= this.#chunks.length * ROWS_PER_CHUNK) {
        // Without SharedArrayBuffer (a browser page without cross-origin isolation) the tables are ordinary
        // memory: one agent, no Workers to share them with.
        const bytes = ROWS_PER_CHUNK * ROW_WORDS * 4;
        this.#chunks.push(
          new Int32Array(
            typeof SharedArrayBuffer === 'function' ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes),
          ),
        );
      }
    }
    const ref = this.ref(row);
    const generation = Atomics.load(ref.words, ref.base + ROW_GENERATION);
    ref.words.fill(0, ref.base + 1, ref.base + ROW_WORDS);
    Atomics.store(ref.words, ref.base + ROW_GENERATION, generation);
    return ref;
  }

  /** Sets every slot of a row to kernel id 0 ("missing"), keeping the row allocated. */
  clearRow(ref: RowRef): void {
    this.writeRow(ref, {
      ids: new Int32Array(NUM_RUNTIME_ENTRIES),
      nonFallthrough: [0, 0],
      perBackend: [],
      requiresPerBackend: false,
    });
  }

  /** Clears a row and returns it for reuse by any operator. */
  freeRow(row: number): void {
    this.clearRow(this.ref(row));
    this.#freeRows.push(row);
  }

  /** The chunk and offset of a row. */
  ref(row: number): RowRef {
    const words = this.#chunks[Math.floor(row / ROWS_PER_CHUNK)];
    return { row, words, base: (row % ROWS_PER_CHUNK) * ROW_WORDS };
  }

  /** Writes a whole row under the seqlock. */
  writeRow(ref: RowRef, data: RowData): void {
    const { words, base } = ref;
    Atomics.add(words, base + ROW_GENERATION, 1);
    words[base + ROW_PER_BACKEND_FLAG] = data.requiresPerBackend ? 1 : 0;
    words[base + ROW_NFT_HI] = data.nonFallthrough[0];
    words[base + ROW_NFT_LO] = data.nonFallthrough[1];
    for (let i = 0; i < NUM_BACKENDS; i++) {
      const pair = data.perBackend[i] ?? data.nonFallthrough;
      words[base + ROW_PER_BACKEND + 2 * i] = pair[0];
      words[base + ROW_PER_BACKEND + 2 * i + 1] = pair[1];
    }
    words.set(data.ids, base + ROW_ENTRIES);
    Atomics.add(words, base + ROW_GENERATION, 1);
  }

  /** Reads a consistent copy of a row: retries while a writer in another agent is mid-write. */
  readRow(row: number): RowData {
    const { words, base } = this.ref(row);
    for (;;) {
      const before = Atomics.load(words, base + ROW_GENERATION);
      if ((before & 1) !== 0) continue;
      const ids = words.slice(base + ROW_ENTRIES, base + ROW_ENTRIES + NUM_RUNTIME_ENTRIES);
      const perBackend: Array<readonly [number, number]> = [];
      for (let i = 0; i < NUM_BACKENDS; i++) {
        perBackend.push([words[base + ROW_PER_BACKEND + 2 * i], words[base + ROW_PER_BACKEND + 2 * i + 1]]);
      }
      const data: RowData = {
        ids,
        nonFallthrough: [words[base + ROW_NFT_HI], words[base + ROW_NFT_LO]],
        perBackend,
        requiresPerBackend: words[base + ROW_PER_BACKEND_FLAG] !== 0,
      };
      if (Atomics.load(words, base + ROW_GENERATION) === before) return data;
    }
  }
}
