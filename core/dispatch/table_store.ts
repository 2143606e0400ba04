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
 * While the store is not shared its agent is the only writer and reads rows directly; once it is shared
 * (Note [Shared table store] in shared_tables.ts) any agent may publish a row, writers take the registry's
 * lock, and every agent's call stubs read rows with the seqlock protocol (Note [Validated call stubs] in
 * call_stub.ts).
 *
 * @module
 */
import { NUM_BACKENDS } from './dispatch_key.ts';
import { NUM_RUNTIME_ENTRIES } from './dispatch_key_set.ts';
import type { SharedTableRegistry, SharedTables } from './shared_tables.ts';

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
  #registry: SharedTableRegistry | undefined;
  // Rows another agent created that this agent took over; not rewritten while `quiet` (a module every agent
  // loads, being loaded here after another agent published its rows).
  readonly #adopted = new Set<number>();
  /**
   * While true, rows adopted from other agents are not rewritten (see {@linkcode TableStore.adoptRow}): set
   * while a module another agent loaded first is loaded here, so that its registrations made one at a time do
   * not publish intermediate states of rows that already hold their final state.
   */
  quiet = false;

  /** The shared registry once the store is shared with other agents (Note [Shared table store]). */
  get registry(): SharedTableRegistry | undefined {
    return this.#registry;
  }

  /** Whether other agents read and write these rows. */
  get shared(): boolean {
    return this.#registry !== undefined;
  }

  /**
   * Makes the store shared through `registry` (created by this agent): rows allocated from now on come from
   * it. Returns what an attaching agent needs.
   */
  startSharing(registry: SharedTableRegistry): SharedTables {
    if (this.#registry !== undefined) throw new Error('The dispatch table store is already shared');
    if (this.#chunks.some((c) => !(c.buffer instanceof SharedArrayBuffer))) {
      throw new Error('The dispatch table store was made without SharedArrayBuffer and cannot be shared');
    }
    this.#registry = registry;
    return this.sharedTables();
  }

  /** What an attaching agent needs (after {@linkcode TableStore.startSharing}). */
  sharedTables(): SharedTables {
    const registry = this.#registry;
    if (registry === undefined) throw new Error('The dispatch table store is not shared');
    const chunks = [];
    for (let c = 0; c < registry.initialChunks; c++) chunks.push(this.#chunks[c].buffer as SharedArrayBuffer);
    return { registry: registry.buffer, chunks };
  }

  /** Replaces this store's rows by those of a shared store another agent started (an attaching agent). */
  attachShared(registry: SharedTableRegistry, tables: SharedTables): void {
    if (this.#registry !== undefined) throw new Error('The dispatch table store is already shared');
    this.#chunks.length = 0;
    for (const buffer of tables.chunks) this.#chunks.push(new Int32Array(buffer));
    this.#freeRows.length = 0;
    this.#registry = registry;
  }

  /**
   * The shared row of operator `name`: the one some agent already has (adopted: not rewritten while
   * {@linkcode TableStore.quiet}), or a new one. Only for a shared store.
   */
  adoptRow(name: string): { ref: RowRef; created: boolean } {
    const { row, created } = this.#registry!.rowFor(name);
    if (!created) this.#adopted.add(row);
    return { ref: this.ref(row), created };
  }

  /** Every chunk's words, the shared ones included (for repairs after a writer died). */
  allChunks(): Int32Array[] {
    const registry = this.#registry;
    if (registry !== undefined) {
      const last = Math.ceil(registry.rowCount / ROWS_PER_CHUNK);
      for (let c = this.#chunks.length; c < last; c++) this.#chunks.push(registry.sharedChunk(c));
    }
    return [...this.#chunks];
  }

  /** The SharedArrayBuffers holding the rows, in chunk order (what an attaching agent needs). */
  get buffers(): SharedArrayBuffer[] {
    return this.#chunks.map((c) => c.buffer as SharedArrayBuffer);
  }

  /** Number of rows ever allocated (freed rows are reused). */
  get rowCount(): number {
    return this.#registry?.rowCount ?? this.#rowCount;
  }

  /**
   * Hands out a zeroed row (all slots kernel id 0, "missing"); in a shared store, the row of operator `name`
   * (see {@linkcode TableStore.adoptRow}).
   */
  allocateRow(name?: string): RowRef {
    if (this.#registry !== undefined) {
      if (name === undefined) throw new Error('A shared dispatch table store allocates rows by operator name');
      return this.adoptRow(name).ref;
    }
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

  /** Clears a row and returns it for reuse by any operator (a shared store keeps it with its operator). */
  freeRow(row: number): void {
    this.clearRow(this.ref(row));
    if (this.#registry === undefined) this.#freeRows.push(row);
  }

  /** The chunk and offset of a row. */
  ref(row: number): RowRef {
    const c = Math.floor(row / ROWS_PER_CHUNK);
    let words = this.#chunks[c];
    if (words === undefined) {
      // A chunk another agent started: the shared ones follow each other in the registry.
      for (let k = this.#chunks.length; k <= c; k++) this.#chunks.push(this.#registry!.sharedChunk(k));
      words = this.#chunks[c];
    }
    return { row, words, base: (row % ROWS_PER_CHUNK) * ROW_WORDS };
  }

  /**
   * Publishes one agent's change of a shared row (Note [Shared table store]): the slots and fallthrough bits
   * that differ between `before` and `after` (that agent's computations of the row before and after its
   * registration) are applied to the row as stored, under the lock and the seqlock, so that what other agents
   * published into the other slots stays. Without `before` (a row new to every agent) the whole row is written.
   */
  publishChange(ref: RowRef, before: RowData | undefined, after: RowData): void {
    const registry = this.#registry;
    if (registry === undefined || before === undefined) return this.writeRow(ref, after);
    if (this.quiet && this.#adopted.has(ref.row)) return;
    registry.locked(() => {
      const stored = this.readRow(ref.row);
      const ids = stored.ids.slice();
      for (let i = 0; i < ids.length; i++) if (before.ids[i] !== after.ids[i]) ids[i] = after.ids[i];
      const merge = (now: number, was: number, will: number) => (now & ~(was ^ will)) | (will & (was ^ will));
      const perBackend = stored.perBackend.map((pair, i) =>
        [merge(pair[0], before.perBackend[i][0], after.perBackend[i][0]), pair[1]] as const
      );
      this.#write(ref, {
        ids,
        nonFallthrough: [perBackend[0][0], stored.nonFallthrough[1]],
        perBackend,
        requiresPerBackend: perBackend.some((m) => m[0] !== perBackend[0][0]),
      });
      registry.published();
    });
  }

  /** Writes a whole row under the seqlock (and, shared, under the registry's lock; Note [Shared table store]). */
  writeRow(ref: RowRef, data: RowData): void {
    const registry = this.#registry;
    if (registry === undefined) return this.#write(ref, data);
    if (this.quiet && this.#adopted.has(ref.row)) return;
    registry.locked(() => {
      this.#write(ref, data);
      registry.published();
    });
  }

  #write(ref: RowRef, data: RowData): void {
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
