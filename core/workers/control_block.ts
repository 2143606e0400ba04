/**
 * The shared control block: the words every agent attached to one CPU memory reads and writes with `Atomics`.
 *
 * Note [Control block]
 * The block lives inside the shared `WebAssembly.Memory` itself (a block the main agent reserves when sharing
 * starts), so it exists wherever the memory does, and a view made over it never goes stale: a shared memory
 * never moves or shrinks, and an old `SharedArrayBuffer` of it stays valid for the bytes it covers. Layout, in
 * Int32 words:
 *
 *   [HEADER]   magic, the lock word, the page pool's start/top/limit, agent and storage-header counters,
 *              the registration generation
 *   [AGENTS]   per agent: state (free, live, dead), head of its list of blocks released by others, count of
 *              its blocks still shared when it died ("orphans")
 *   [OWNERS]   per 64 KiB page of the memory: 0 when free, else the owning agent's id + 1
 *   [HEADERS]  per shared storage: reference count, version counter, address (64-byte units), size, owner,
 *              list link, state, reuse stamp
 *   [NAMES]    interned stable names (kernel names, slot names, module URLs): offset and length per name,
 *              then their UTF-8 bytes
 *   [SLOTS]    shared kernel slots (core/workers/shared_ops.ts): seqlock word, slot name, depth, kernel
 *              name ids (a registration stack, newest last)
 *   [MODULES]  name ids of the operator-library modules every agent loads
 *   [RNG]      the default random generator's state (core/workers/shared_generator.ts), under its own lock
 *
 * Every structural change (pages, headers, names, slots) happens under the one lock word, which holds the
 * owner's agent id + 1, so the main agent can break it when it knows the owner died (Note [Agent faults] in
 * agent.ts). The hot paths take no lock: allocation is per agent, and readers of a slot use its seqlock.
 *
 * @module
 */

/** Most agents attached to one memory over its lifetime of live agents (ids are reused once retired). */
export const MAX_AGENTS = 64;
/** Shared storages live at once. */
export const MAX_SHARED_STORAGES = 16384;
/** Interned names. */
export const MAX_NAMES = 4096;
/** Bytes for the names' text. */
export const NAME_BYTES = 1 << 18;
/** Shared kernel slots. */
export const MAX_SLOTS = 1024;
/** Registrations a slot remembers (newest wins, removing one restores the one below). */
export const SLOT_DEPTH = 16;
/** Operator-library modules. */
export const MAX_MODULES = 256;
/** Pages of the whole 4 GiB wasm32 address space. */
export const PAGE_COUNT = 65536;
/** Bytes per pool page. */
export const PAGE_BYTES = 65536;

const MAGIC_VALUE = 0x53594152; // 'SYAR'

/** Header words. */
export const W_MAGIC = 0,
  W_LOCK = 1,
  W_POOL_START = 2,
  W_POOL_TOP = 3,
  W_POOL_LIMIT = 4,
  W_NEXT_AGENT = 5,
  W_HEADER_FREE = 6,
  W_HEADER_TOP = 7,
  W_GENERATION = 8,
  W_NAME_BYTES = 9,
  W_NAME_COUNT = 10,
  W_SLOT_COUNT = 11,
  W_MODULE_COUNT = 12,
  W_RNG_LOCK = 13,
  W_RNG_VERSION = 14;
const HEADER_WORDS = 16;

/** Agent states: STOPPING from the termination request until it is retired (Note [Agent faults]). */
export const AGENT_FREE = 0, AGENT_LIVE = 1, AGENT_DEAD = 2, AGENT_STOPPING = 3;
/**
 * Words per agent: state, released-list head (header index + 1), orphans, and an activity count the agent
 * bumps on every allocation (how the main agent sees that a terminated worker really stopped).
 */
export const A_STATE = 0, A_RELEASED = 1, A_ORPHANS = 2, A_ACTIVITY = 3;
// A cache line per agent: each bumps its activity word on every allocation, which must not slow the others.
const AGENT_WORDS = 16;

/** Words per shared storage header. */
export const H_REFS = 0, H_VERSION = 1, H_PTR_UNIT = 2, H_NBYTES = 3, H_OWNER = 4, H_NEXT = 5, H_STATE = 6;
/** Bumped each time a header slot is reused, so a stale descriptor is refused. */
export const H_STAMP = 7;
const STORAGE_WORDS = 8;
/** Header states. */
export const STORAGE_FREE = 0, STORAGE_LIVE = 1, STORAGE_RELEASED = 2;

/** Words per slot: seqlock, slot name id, depth, then SLOT_DEPTH kernel name ids. */
export const S_SEQ = 0, S_NAME = 1, S_DEPTH = 2, S_STACK = 4;
const SLOT_WORDS = S_STACK + SLOT_DEPTH;

const AGENTS_AT = HEADER_WORDS;
const OWNERS_AT = AGENTS_AT + MAX_AGENTS * AGENT_WORDS;
const HEADERS_AT = OWNERS_AT + PAGE_COUNT;
const NAME_INDEX_AT = HEADERS_AT + MAX_SHARED_STORAGES * STORAGE_WORDS;
const SLOTS_AT = NAME_INDEX_AT + 2 * MAX_NAMES;
const MODULES_AT = SLOTS_AT + MAX_SLOTS * SLOT_WORDS;
/** The default generator's state, as `getRngState()` bytes (5056 bytes). */
const RNG_AT = MODULES_AT + MAX_MODULES;
const RNG_WORDS = 1264;
const WORDS = RNG_AT + RNG_WORDS;

/** Bytes of the control block (the name text follows the words). */
export const CONTROL_BLOCK_BYTES: number = WORDS * 4 + NAME_BYTES;

/** How long a terminated agent must have made no allocation to count as stopped. */
export const STOPPED_QUIET_MS = 100;

/** How long a lock waiter keeps trying before it reports the holder (a dead agent the main agent has not retired). */
const LOCK_TIMEOUT_MS = 10_000;

/** The error raised when the shared lock stays held: its holder died and was not retired, or hangs. */
export class SharedLockTimeoutError extends Error {
  /** The agent id holding the lock. */
  readonly holder: number;
  /** Describes the holder. */
  constructor(holder: number) {
    super(
      `The shared memory lock has been held by agent ${holder} for over ${LOCK_TIMEOUT_MS / 1000} s: ` +
        'that worker died or hangs; terminate it with its AgentHandle (which retires it and breaks its locks)',
    );
    this.name = 'SharedLockTimeoutError';
    this.holder = holder;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Typed access to a control block at `base` in `buffer` (the shared memory's `SharedArrayBuffer`).
 *
 * @example
 * ```ts
 * import { CONTROL_BLOCK_BYTES, ControlBlock } from './control_block.ts';
 * const memory = new WebAssembly.Memory({ initial: 64, maximum: 1024, shared: true });
 * const cb = ControlBlock.initialize(memory.buffer as SharedArrayBuffer, 0, 64, 1024);
 * console.log(cb.words.length * 4 < CONTROL_BLOCK_BYTES); // true
 * ```
 */
export class ControlBlock {
  /** The block's words. */
  readonly words: Int32Array;
  /** The name text. */
  readonly nameBytes: Uint8Array;
  /** The default generator's state bytes. */
  readonly rngBytes: Uint8Array;
  /** Byte offset of the block in the memory (what an attaching agent is told). */
  readonly base: number;

  private constructor(buffer: SharedArrayBuffer, base: number) {
    this.base = base;
    this.words = new Int32Array(buffer, base, WORDS);
    this.nameBytes = new Uint8Array(buffer, base + WORDS * 4, NAME_BYTES);
    this.rngBytes = new Uint8Array(buffer, base + RNG_AT * 4, RNG_WORDS * 4);
  }

  /** Lays out a fresh block (zeroed first) whose page pool runs from `poolStartPage` up to `poolLimitPage`. */
  static initialize(
    buffer: SharedArrayBuffer,
    base: number,
    poolStartPage: number,
    poolLimitPage: number,
  ): ControlBlock {
    const cb = new ControlBlock(buffer, base);
    cb.words.fill(0);
    cb.words[W_POOL_START] = cb.words[W_POOL_TOP] = poolStartPage;
    cb.words[W_POOL_LIMIT] = poolLimitPage;
    Atomics.store(cb.words, W_MAGIC, MAGIC_VALUE);
    return cb;
  }

  /** Opens a block another agent laid out; throws when `base` does not hold one. */
  static open(buffer: SharedArrayBuffer, base: number): ControlBlock {
    const cb = new ControlBlock(buffer, base);
    if (Atomics.load(cb.words, W_MAGIC) !== MAGIC_VALUE) {
      throw new Error(`No Switchyard control block at offset ${base} of the shared memory`);
    }
    return cb;
  }

  // ---- the lock ----

  /**
   * Takes the lock for `agent` (spinning, then sleeping 1 ms at a time where the agent may block). Throws a
   * {@linkcode SharedLockTimeoutError} when the holder keeps it past the timeout.
   */
  lock(agent: number, word: number = W_LOCK): void {
    const w = this.words;
    if (Atomics.compareExchange(w, word, 0, agent + 1) === 0) return;
    const deadline = Date.now() + LOCK_TIMEOUT_MS;
    let watched = -1, activity = 0, quietSince = 0;
    for (let spins = 0;; spins++) {
      const holder = Atomics.compareExchange(w, word, 0, agent + 1);
      if (holder === 0) return;
      if (holder === agent + 1) throw new Error(`Agent ${agent} tried to take the shared lock it already holds`);
      if (spins > 1000) {
        const now = Date.now();
        if (now > deadline) throw new SharedLockTimeoutError(holder - 1);
        // A holder whose termination was requested and that has stopped (Note [Stopping is not stopped] in
        // shared_runtime.ts) will never give the lock back: break it here, since the agent that would
        // retire it may be this one, blocked in this loop.
        const at = this.agentAt(holder - 1);
        const state = Atomics.load(w, at + A_STATE);
        if (state === AGENT_STOPPING || state === AGENT_DEAD) {
          const seen = Atomics.load(w, at + A_ACTIVITY);
          if (watched !== holder || seen !== activity) {
            watched = holder;
            activity = seen;
            quietSince = now;
          } else if (now - quietSince >= STOPPED_QUIET_MS) {
            this.breakLockOf(holder - 1, word);
            continue;
          }
        }
        try {
          Atomics.wait(w, word, holder, 1);
        } catch {
          // An agent that may not block (a browser's main thread) keeps spinning.
        }
      }
    }
  }

  /** Gives the lock back. */
  unlock(agent: number, word: number = W_LOCK): void {
    if (Atomics.compareExchange(this.words, word, agent + 1, 0) !== agent + 1) {
      throw new Error(`Agent ${agent} released the shared lock it does not hold`);
    }
    Atomics.notify(this.words, word);
  }

  /** Runs `fn` under the lock (`word`: the structural lock unless given). */
  locked<T>(agent: number, fn: () => T, word: number = W_LOCK): T {
    this.lock(agent, word);
    try {
      return fn();
    } finally {
      this.unlock(agent, word);
    }
  }

  /** Breaks the lock at `word` if `agent` holds it (that agent is dead); returns whether it did. */
  breakLockOf(agent: number, word: number = W_LOCK): boolean {
    const broke = Atomics.compareExchange(this.words, word, agent + 1, 0) === agent + 1;
    if (broke) Atomics.notify(this.words, word);
    return broke;
  }

  /** The agent holding the lock, or -1. */
  lockHolder(): number {
    return Atomics.load(this.words, W_LOCK) - 1;
  }

  // ---- agents ----

  /** Index of an agent's first word. */
  agentAt(agent: number): number {
    return AGENTS_AT + agent * AGENT_WORDS;
  }

  /** Hands out an agent id (under the lock): a free slot, marked live. */
  claimAgent(): number {
    const w = this.words;
    for (let id = 0; id < MAX_AGENTS; id++) {
      const at = this.agentAt(id);
      if (w[at + A_STATE] === AGENT_FREE) {
        w[at + A_STATE] = AGENT_LIVE;
        w[at + A_RELEASED] = 0;
        w[at + A_ORPHANS] = 0;
        if (id >= w[W_NEXT_AGENT]) w[W_NEXT_AGENT] = id + 1;
        return id;
      }
    }
    throw new Error(`Too many agents attached to one Switchyard memory (at most ${MAX_AGENTS} at once)`);
  }

  /** State of an agent. */
  agentState(agent: number): number {
    return Atomics.load(this.words, this.agentAt(agent) + A_STATE);
  }

  // ---- pages ----

  /** Index of a page's owner word. */
  ownerAt(page: number): number {
    return OWNERS_AT + page;
  }

  // ---- storage headers ----

  /** Index of a storage header's first word. */
  headerAt(index: number): number {
    return HEADERS_AT + index * STORAGE_WORDS;
  }

  /** Takes a free header (under the lock); throws when all are in use. */
  claimHeader(): number {
    const w = this.words;
    const free = w[W_HEADER_FREE];
    let index: number;
    if (free !== 0) {
      index = free - 1;
      w[W_HEADER_FREE] = w[this.headerAt(index) + H_NEXT];
    } else {
      index = w[W_HEADER_TOP];
      if (index >= MAX_SHARED_STORAGES) {
        throw new RangeError(`Too many shared storages at once (at most ${MAX_SHARED_STORAGES})`);
      }
      w[W_HEADER_TOP] = index + 1;
    }
    const at = this.headerAt(index);
    w[at + H_NEXT] = 0;
    w[at + H_STAMP] = (w[at + H_STAMP] + 1) | 0;
    return index;
  }

  /** Returns a header to the free list (under the lock). */
  dropHeader(index: number): void {
    const w = this.words, at = this.headerAt(index);
    Atomics.store(w, at + H_STATE, STORAGE_FREE);
    w[at + H_REFS] = 0;
    w[at + H_NEXT] = w[W_HEADER_FREE];
    w[W_HEADER_FREE] = index + 1;
  }

  /** Headers ever handed out (the scan bound for retirement). */
  headerTop(): number {
    return this.words[W_HEADER_TOP];
  }

  // ---- names ----

  /** The id of a stable name, interning it (under the lock) if new. */
  intern(agent: number, name: string): number {
    const found = this.findName(name);
    if (found >= 0) return found;
    return this.locked(agent, () => {
      const again = this.findName(name);
      if (again >= 0) return again;
      const w = this.words;
      const bytes = encoder.encode(name);
      const count = w[W_NAME_COUNT], used = w[W_NAME_BYTES];
      if (count >= MAX_NAMES || used + bytes.length > NAME_BYTES) {
        throw new RangeError(`The shared name table is full (${MAX_NAMES} names, ${NAME_BYTES} bytes)`);
      }
      this.nameBytes.set(bytes, used);
      w[NAME_INDEX_AT + 2 * count] = used;
      w[NAME_INDEX_AT + 2 * count + 1] = bytes.length;
      w[W_NAME_BYTES] = used + bytes.length;
      Atomics.store(w, W_NAME_COUNT, count + 1); // publishes the entry
      return count;
    });
  }

  /** The id of a name already interned, or -1. */
  findName(name: string): number {
    const count = Atomics.load(this.words, W_NAME_COUNT);
    for (let id = 0; id < count; id++) if (this.name(id) === name) return id;
    return -1;
  }

  /** The text of a name id. */
  name(id: number): string {
    const at = this.words[NAME_INDEX_AT + 2 * id], length = this.words[NAME_INDEX_AT + 2 * id + 1];
    // TextDecoder refuses views of a SharedArrayBuffer: copy the few bytes first.
    return decoder.decode(this.nameBytes.slice(at, at + length));
  }

  // ---- slots and modules ----

  /** Index of a slot's first word. */
  slotAt(slot: number): number {
    return SLOTS_AT + slot * SLOT_WORDS;
  }

  /** The slot of a slot name id, creating it (under the lock) if new. */
  slotFor(nameId: number): number {
    const w = this.words;
    const count = Atomics.load(w, W_SLOT_COUNT);
    for (let s = 0; s < count; s++) if (w[this.slotAt(s) + S_NAME] === nameId) return s;
    if (count >= MAX_SLOTS) throw new RangeError(`Too many shared kernel slots (at most ${MAX_SLOTS})`);
    w[this.slotAt(count) + S_NAME] = nameId;
    Atomics.store(w, W_SLOT_COUNT, count + 1);
    return count;
  }

  /** Slots created so far. */
  slotCount(): number {
    return Atomics.load(this.words, W_SLOT_COUNT);
  }

  /** Appends a module's name id to the list every agent loads (under the lock); false if already there. */
  addModule(nameId: number): boolean {
    const w = this.words, count = w[W_MODULE_COUNT];
    for (let i = 0; i < count; i++) if (w[MODULES_AT + i] === nameId) return false;
    if (count >= MAX_MODULES) throw new RangeError(`Too many operator-library modules (at most ${MAX_MODULES})`);
    w[MODULES_AT + count] = nameId;
    Atomics.store(w, W_MODULE_COUNT, count + 1);
    return true;
  }

  /** How many modules every agent loads. */
  moduleCount(): number {
    return Atomics.load(this.words, W_MODULE_COUNT);
  }

  /** The module URLs every agent loads, in registration order. */
  modules(): string[] {
    const count = Atomics.load(this.words, W_MODULE_COUNT);
    return Array.from({ length: count }, (_, i) => this.name(this.words[MODULES_AT + i]));
  }
}
