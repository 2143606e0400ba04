/**
 * This agent's place in a CPU memory shared by several agents: the control block, its agent id, the page pool
 * its allocator draws from, and the blocks other agents gave back to it.
 *
 * Note [Per-agent arenas]
 * Each agent keeps its own allocator (core/cpu/allocator.ts), unchanged on the hot path: size classes and
 * free lists in the agent's own JavaScript heap, no lock. When its free lists cannot serve a request it asks
 * the shared page pool for whole 64 KiB pages, under the control block's lock; the pool records each page's
 * owner (Note [Control block]). A block is always freed by the agent that allocated it, because only that
 * agent knows its size class: a shared storage whose last reference goes in another agent is put on its
 * owner's "released" list, which the owner drains before its next allocation. When an agent dies its pages
 * go back to the pool, except while blocks of it are still shared: those "orphans" keep its pages until
 * the last one is released (Note [Agent faults] in agent.ts).
 *
 * @module
 */
import type { RangeSource } from '../cpu/allocator.ts';
import { attachCpuRuntime, cpuRuntime, freeCpuBlock, hasCpuRuntime, reserveCpuBlock } from '../cpu/runtime.ts';
import { registerDeviceAllocator } from '../tensor/storage.ts';
import {
  A_ACTIVITY,
  A_ORPHANS,
  A_RELEASED,
  A_STATE,
  AGENT_DEAD,
  AGENT_FREE,
  AGENT_LIVE,
  AGENT_STOPPING,
  CONTROL_BLOCK_BYTES,
  ControlBlock,
  H_NBYTES,
  H_NEXT,
  H_OWNER,
  H_PTR_UNIT,
  H_STATE,
  PAGE_BYTES,
  S_SEQ,
  STOPPED_QUIET_MS,
  STORAGE_LIVE,
  W_POOL_LIMIT,
  W_POOL_START,
  W_POOL_TOP,
  W_RNG_LOCK,
} from './control_block.ts';
import { shareDefaultGenerator } from './shared_generator.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { SharedTables } from '../dispatch/shared_tables.ts';
import { definedKernel } from './defined_kernels.ts';
import { requireAttachable } from './environment.ts';

const UNITS_PER_PAGE = PAGE_BYTES / 64;

/** What a Worker needs to join a runtime (posted by the main agent; every field is structured-cloneable). */
export interface AgentInit {
  /** The shared kernel memory. */
  readonly memory: WebAssembly.Memory;
  /** The compiled kernel module. */
  readonly module: WebAssembly.Module;
  /** Offset of the control block in the memory. */
  readonly controlBase: number;
  /** The id the main agent claimed for the worker. */
  readonly agent: number;
  /** Whether the runtime runs in checked mode. */
  readonly checked: boolean;
  /** The main agent's dispatch table store (Note [Shared table store] in core/dispatch/shared_tables.ts). */
  readonly tables: SharedTables;
}

/** This agent's shared state. */
export interface SharedRuntime {
  readonly cb: ControlBlock;
  readonly agent: number;
  readonly memory: WebAssembly.Memory;
  /** The shared dispatch table store. */
  readonly tables: SharedTables;
}

let shared: SharedRuntime | undefined;

/** This agent's shared state, or undefined while it has not shared or attached. */
export function sharedRuntimeOrUndefined(): SharedRuntime | undefined {
  return shared;
}

/**
 * This agent's shared state; on the main agent, the first call starts sharing: it reserves the control block
 * and moves its allocator onto the page pool (its existing blocks stay where they are).
 *
 * @example
 * ```ts
 * import { sharedRuntime } from './shared_runtime.ts';
 * console.log(sharedRuntime().agent); // 0 on the main agent
 * ```
 */
export function sharedRuntime(): SharedRuntime {
  return shared ?? startSharing();
}

function startSharing(): SharedRuntime {
  requireAttachable('sharing the CPU memory between agents');
  const rt = cpuRuntime();
  const base = reserveCpuBlock(CONTROL_BLOCK_BYTES);
  const arena = rt.arena;
  const startPage = Math.ceil(arena.arenaEnd / PAGE_BYTES);
  const limitPage = Math.floor(arena.limitBytes / PAGE_BYTES);
  const cb = ControlBlock.initialize(rt.memory.buffer as unknown as SharedArrayBuffer, base, startPage, limitPage);
  const agent = cb.locked(0, () => cb.claimAgent());
  const dispatcher = Dispatcher.singleton();
  dispatcher.setKernelResolver(definedKernel);
  shared = { cb, agent, memory: rt.memory, tables: dispatcher.shareTables(agent) };
  shareDefaultGenerator(cb, agent, true);
  arena.useRangeSource(pagePool(shared));
  installDrainingAllocator(shared);
  return shared;
}

/**
 * Joins the runtime described by `init` (in a Worker, before its first CPU tensor).
 *
 * @example
 * ```ts ignore
 * import { attachSharedRuntime } from './shared_runtime.ts';
 * self.onmessage = (e) => attachSharedRuntime(e.data.init);
 * ```
 */
export function attachSharedRuntime(init: AgentInit): SharedRuntime {
  requireAttachable('attaching a Worker to the runtime');
  if (shared !== undefined) throw new Error(`This agent is already attached (as agent ${shared.agent})`);
  if (hasCpuRuntime()) {
    throw new Error('attach() must run before this Worker creates its first CPU tensor');
  }
  const cb = ControlBlock.open(init.memory.buffer as unknown as SharedArrayBuffer, init.controlBase);
  if (cb.agentState(init.agent) !== AGENT_LIVE) {
    throw new Error(`Agent id ${init.agent} was not claimed for this Worker`);
  }
  const state: SharedRuntime = { cb, agent: init.agent, memory: init.memory, tables: init.tables };
  const dispatcher = Dispatcher.singleton();
  dispatcher.setKernelResolver(definedKernel);
  dispatcher.attachTables(init.agent, init.tables);
  attachCpuRuntime({ memory: init.memory, module: init.module, checked: init.checked, source: pagePool(state) });
  shared = state;
  shareDefaultGenerator(cb, init.agent, false);
  installDrainingAllocator(state);
  return state;
}

/** The page pool as an allocator's range source. */
function pagePool(state: SharedRuntime): RangeSource {
  const { cb, agent, memory } = state;
  const w = cb.words;
  return {
    get limitBytes() {
      return (w[W_POOL_LIMIT] - w[W_POOL_START]) * PAGE_BYTES;
    },
    acquire(units: number) {
      const pages = Math.ceil(units / UNITS_PER_PAGE);
      return cb.locked(agent, () => {
        const start = findFreePages(cb, pages);
        if (start < 0) return undefined;
        const end = (start + pages) * PAGE_BYTES;
        const have = memory.buffer.byteLength;
        if (end > have) {
          try {
            // Another agent may grow it at the same moment: grow by what is still missing, then re-check.
            memory.grow(Math.ceil((end - have) / PAGE_BYTES));
          } catch {
            if (memory.buffer.byteLength < end) return undefined;
          }
        }
        for (let p = start; p < start + pages; p++) w[cb.ownerAt(p)] = agent + 1;
        if (start + pages > w[W_POOL_TOP]) w[W_POOL_TOP] = start + pages;
        return { start: start * UNITS_PER_PAGE, units: pages * UNITS_PER_PAGE };
      });
    },
  };
}

/** First run of `pages` free pages below the pool's top, else at the top; -1 when the pool is exhausted. */
function findFreePages(cb: ControlBlock, pages: number): number {
  const w = cb.words;
  const top = w[W_POOL_TOP];
  let run = 0;
  for (let p = w[W_POOL_START]; p < top; p++) {
    run = w[cb.ownerAt(p)] === 0 ? run + 1 : 0;
    if (run === pages) return p - pages + 1;
  }
  // A free run that reaches the top continues above it.
  const start = top - run;
  return start + pages <= w[W_POOL_LIMIT] ? start : -1;
}

/**
 * Re-registers the CPU allocator so that each allocation first frees the blocks other agents released to
 * this one (one array read when there are none).
 */
function installDrainingAllocator(state: SharedRuntime): void {
  const w = state.cb.words, at = state.cb.agentAt(state.agent), head = at + A_RELEASED;
  registerDeviceAllocator('cpu', {
    allocate: (nbytes) => {
      w[at + A_ACTIVITY]++;
      if (w[at + A_STATE] !== AGENT_LIVE) {
        throw new Error(`Agent ${state.agent} was terminated: it may not allocate any more`);
      }
      if (w[head] !== 0) drainReleased();
      return cpuRuntime().allocator.alloc(nbytes);
    },
    free: (ptr) => cpuRuntime().allocator.free(ptr),
    bytes: (ptr, nbytes) => new Uint8Array(cpuRuntime().memory.buffer, ptr, nbytes),
  });
}

/**
 * Frees the blocks of this agent whose last reference went in another agent; returns how many it freed.
 *
 * @example
 * ```ts
 * import { drainReleased } from './shared_runtime.ts';
 * drainReleased(); // 0 when nothing was released by others
 * ```
 */
export function drainReleased(): number {
  if (shared === undefined) return 0;
  const { cb, agent } = shared;
  const w = cb.words, head = cb.agentAt(agent) + A_RELEASED;
  if (Atomics.load(w, head) === 0) return 0;
  const blocks: number[] = [];
  cb.locked(agent, () => {
    for (let next = w[head]; next !== 0;) {
      const at = cb.headerAt(next - 1);
      blocks.push(w[at + H_PTR_UNIT] * 64);
      const following = w[at + H_NEXT];
      cb.dropHeader(next - 1);
      next = following;
    }
    Atomics.store(w, head, 0);
  });
  for (const ptr of blocks) freeCpuBlock(ptr);
  return blocks.length;
}

/**
 * Retires a dead or finished agent (the main agent does this; Note [Agent faults] in agent.ts): breaks the
 * lock if it held it, forgets the blocks others released to it, and gives its pages back to the pool unless
 * blocks of it are still shared (then the last release of those gives them back). Returns the count of such
 * orphan blocks. Idempotent.
 */
export function retireAgent(dead: number): number {
  const { cb, agent } = sharedRuntime();
  if (dead === agent) throw new Error('An agent cannot retire itself');
  cb.breakLockOf(dead, W_RNG_LOCK);
  Dispatcher.singleton().repairSharedTables(dead);
  if (cb.breakLockOf(dead)) {
    // It died inside a locked section: a slot it was rewriting may be left mid-write (Note [Shared kernel
    // slots]); close the seqlock so readers stop waiting (the stack holds the old or the new entries).
    for (let s = 0; s < cb.slotCount(); s++) {
      const at = cb.slotAt(s) + S_SEQ;
      if ((Atomics.load(cb.words, at) & 1) !== 0) Atomics.add(cb.words, at, 1);
    }
  }
  return cb.locked(agent, () => {
    const w = cb.words, at = cb.agentAt(dead);
    if (w[at + A_STATE] !== AGENT_LIVE && w[at + A_STATE] !== AGENT_STOPPING) return w[at + A_ORPHANS];
    for (let next = w[at + A_RELEASED]; next !== 0;) {
      const following = w[cb.headerAt(next - 1) + H_NEXT];
      cb.dropHeader(next - 1);
      next = following;
    }
    w[at + A_RELEASED] = 0;
    let orphans = 0;
    for (let h = 0; h < cb.headerTop(); h++) {
      const hat = cb.headerAt(h);
      if (w[hat + H_OWNER] === dead && Atomics.load(w, hat + H_STATE) === STORAGE_LIVE) orphans++;
    }
    w[at + A_ORPHANS] = orphans;
    Atomics.store(w, at + A_STATE, AGENT_DEAD);
    if (orphans === 0) freeAgentPages(cb, dead);
    return orphans;
  });
}

/**
 * Marks a worker whose termination was requested: from now on it may not allocate (its allocator throws),
 * and {@linkcode whenStopped} watches its activity count.
 */
export function markStopping(agent: number): void {
  const { cb } = sharedRuntime();
  Atomics.compareExchange(cb.words, cb.agentAt(agent) + A_STATE, AGENT_LIVE, AGENT_STOPPING);
}

/**
 * Resolves once a terminated worker has made no allocation for `quietMs` (polled every 10 ms).
 *
 * Note [Stopping is not stopped]
 * `worker.terminate()` only asks the engine to stop the worker at its next interrupt check; Deno 2.9 was
 * measured running a worker's allocation loop for up to several hundred milliseconds after it. Until the
 * worker has stopped it may still write into its own blocks, so its pages cannot go back to the pool and
 * the lock it holds cannot be broken. Every allocation bumps the agent's activity word and fails once the
 * agent is marked stopping, so a worker still running soon throws out of its program and goes idle; its
 * agent is retired once the word has stayed unchanged for `quietMs`.
 */
export function whenStopped(agent: number, quietMs = STOPPED_QUIET_MS): Promise<void> {
  const { cb } = sharedRuntime();
  const at = cb.agentAt(agent) + A_ACTIVITY;
  return new Promise((resolve) => {
    let last = Atomics.load(cb.words, at), since = Date.now();
    const poll = () => {
      const now = Atomics.load(cb.words, at);
      if (now !== last) {
        last = now;
        since = Date.now();
      }
      if (Date.now() - since >= quietMs) resolve();
      else setTimeout(poll, 10);
    };
    setTimeout(poll, 10);
  });
}

/** Gives every page of a dead agent back to the pool and frees its id (under the lock). */
export function freeAgentPages(cb: ControlBlock, dead: number): void {
  const w = cb.words;
  for (let p = w[W_POOL_START]; p < w[W_POOL_TOP]; p++) if (w[cb.ownerAt(p)] === dead + 1) w[cb.ownerAt(p)] = 0;
  Atomics.store(w, cb.agentAt(dead) + A_STATE, AGENT_FREE);
}

/** Pages of the pool each agent holds, and free ones (for tests and `agentStats`). */
export function pageCounts(): { free: number; top: number; byAgent: Map<number, number> } {
  const { cb } = sharedRuntime();
  const w = cb.words, byAgent = new Map<number, number>();
  let free = 0;
  for (let p = w[W_POOL_START]; p < w[W_POOL_TOP]; p++) {
    const owner = w[cb.ownerAt(p)];
    if (owner === 0) free++;
    else byAgent.set(owner - 1, (byAgent.get(owner - 1) ?? 0) + 1);
  }
  return { free, top: w[W_POOL_TOP] - w[W_POOL_START], byAgent };
}

/** Byte range check of a block described by a shared header against the memory. */
export function headerBlock(cb: ControlBlock, index: number): { ptr: number; nbytes: number } {
  const at = cb.headerAt(index);
  return { ptr: cb.words[at + H_PTR_UNIT] * 64, nbytes: cb.words[at + H_NBYTES] >>> 0 };
}

/** The owner of a shared header. */
export function headerOwner(cb: ControlBlock, index: number): number {
  return cb.words[cb.headerAt(index) + H_OWNER];
}
