/**
 * Kernels registered in one agent and dispatched in all: shared kernel slots, kernels found by stable name,
 * and operator-library modules every agent loads.
 *
 * Note [Shared kernel slots]
 * A kernel is a JavaScript function, which cannot cross agents; its stable name can. Every agent loads the
 * same operator-library modules (`loadOperatorLibrary`), which define their kernels under stable names
 * (`defineKernel`) and install, in each agent's own dispatcher, a slot kernel (`sharedSlot`) at an
 * operator's dispatch key. The slot's state lives in the control block (Note [Control block]): a stack of
 * kernel name ids, newest last, behind a seqlock word. `registerShared` in any agent pushes a name (the
 * newest wins), disposing it removes that entry (the one below comes back): PyTorch's registration
 * semantics for one key, shared by all agents at once. A writer takes the control block's lock, makes the
 * seqlock word odd, rewrites the stack, makes it even again and bumps the registration generation; a
 * reader reads the word, the stack top, and the word again, and retries while a write is under way, so no
 * agent ever runs a kernel from a torn or stale stack. Each agent resolves a name id to its own function
 * once and caches it.
 *
 * @module
 */
import { DispatchKey, dispatchKeyName } from '../dispatch/dispatch_key.ts';
import type { UnboxedKernel } from '../dispatch/kernel_function.ts';
import type { Library } from '../dispatch/library.ts';
import { NotImplementedError } from '../dispatch/errors.ts';
import { type ControlBlock, S_DEPTH, S_SEQ, S_STACK, SLOT_DEPTH, W_GENERATION } from './control_block.ts';
import { sharedRuntime } from './shared_runtime.ts';
import { liveAgents } from './agent.ts';
import { kernelsByName } from './defined_kernels.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';

// Name id -> this agent's function, filled on first use of each id.
const kernelsById: Array<UnboxedKernel | undefined> = [];

/**
 * Defines this agent's function for the stable kernel name `name` (an operator-library module does this in
 * every agent, so that a `registerShared(..., name)` made anywhere runs here too, and so does a kernel
 * registered in any agent with `registerImpl(..., { kernelName: name })`: Note [Shared table store]).
 *
 * @example
 * ```ts ignore
 * import { defineKernel } from './mod.ts';
 * defineKernel('mylib.scale_v2', (_hi, _lo, x, f) => x.mul(f * 2));
 * ```
 */
export function defineKernel(name: string, fn: UnboxedKernel): void {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError('defineKernel(): the name must be a non-empty string');
  }
  if (typeof fn !== 'function') {
    throw new TypeError(`defineKernel(): expected a function for '${name}', got ${typeof fn}`);
  }
  const previous = kernelsByName.get(name);
  if (previous !== undefined && previous !== fn) {
    throw new Error(`defineKernel(): '${name}' is already defined in this agent by another function`);
  }
  kernelsByName.set(name, fn);
}

function slotName(opName: string, key: DispatchKey): string {
  return `${opName}@${dispatchKeyName(key)}`;
}

function resolveKey(key: DispatchKey | string): DispatchKey {
  const k = typeof key === 'string' ? (DispatchKey as unknown as Record<string, DispatchKey>)[key] : key;
  if (typeof k !== 'number') throw new TypeError(`Unknown dispatch key ${String(key)}`);
  return k;
}

/** The top of a slot's stack, read under its seqlock: a name id, or -1 when the stack is empty. */
function readTop(w: Int32Array, at: number): number {
  for (;;) {
    const seq = Atomics.load(w, at + S_SEQ);
    if ((seq & 1) !== 0) continue;
    const depth = w[at + S_DEPTH];
    const id = depth > 0 && depth <= SLOT_DEPTH ? w[at + S_STACK + depth - 1] : -1;
    if (Atomics.load(w, at + S_SEQ) === seq) return id;
  }
}

function resolveKernel(cb: ControlBlock, id: number, where: string): UnboxedKernel {
  const name = cb.name(id);
  const fn = kernelsByName.get(name);
  if (fn === undefined) {
    throw new Error(
      `Kernel '${name}' registered for ${where} by another agent is not defined in this agent: define it ` +
        'with defineKernel() in a module that every agent loads (loadOperatorLibrary)',
    );
  }
  kernelsById[id] = fn;
  return fn;
}

/**
 * Installs, in this agent's dispatcher, the slot kernel of operator `opName` at `key` through `lib` (an
 * `IMPL` or `DEF` library): calls at that key run the kernel on top of the shared slot, whichever agent
 * registered it (Note [Shared kernel slots]). Every agent that dispatches the operator installs the slot,
 * normally in an operator-library module. With the slot empty, a call raises PyTorch's missing-kernel error.
 *
 * @example
 * ```ts ignore
 * import { DispatchKey, Library, sharedSlot } from './mod.ts';
 * const lib = new Library('mylib', 'DEF');
 * lib.define('mylib::scale(Tensor x, float f) -> Tensor');
 * sharedSlot(lib, 'scale', DispatchKey.CPU);
 * ```
 */
export function sharedSlot(lib: Library, opName: string, key: DispatchKey | string): void {
  if (typeof opName !== 'string' || opName === '') {
    throw new TypeError('sharedSlot(): opName must be a non-empty string');
  }
  const k = resolveKey(key);
  const { cb, agent } = sharedRuntime();
  const full = opName.includes('::') ? opName : `${lib.ns}::${opName}`;
  const where = `${full} at ${dispatchKeyName(k)}`;
  const slotId = cb.intern(agent, slotName(full, k));
  const slot = cb.locked(agent, () => cb.slotFor(slotId));
  const w = cb.words, at = cb.slotAt(slot);
  const kernel: UnboxedKernel = (hi, lo, ...args) => {
    const id = readTop(w, at);
    if (id < 0) {
      throw new NotImplementedError(
        `Could not run '${full}' with arguments from the '${dispatchKeyName(k)}' backend: its shared kernel slot ` +
          'is empty (no agent has a registerShared() in force for it)',
      );
    }
    const fn = kernelsById[id] ?? resolveKernel(cb, id, where);
    return fn(hi, lo, ...args);
  };
  lib.impl(opName, kernel, k, { debug: `shared slot ${where}` });
}

/**
 * Registers the kernel named `kernelName` (see {@linkcode defineKernel}) in the shared slot of `opName` at
 * `key`, for every agent at once; the newest registration wins, and disposing the returned handle removes
 * it (the previous one comes back), from any agent.
 *
 * @example
 * ```ts ignore
 * import { DispatchKey, registerShared } from './mod.ts';
 * using reg = registerShared('mylib::scale', DispatchKey.CPU, 'mylib.scale_v2');
 * // every attached agent now runs mylib.scale_v2 for mylib::scale on CPU
 * ```
 */
export function registerShared(opName: string, key: DispatchKey | string, kernelName: string): Disposable & {
  dispose(): void;
} {
  if (typeof opName !== 'string' || !opName.includes('::')) {
    throw new TypeError(`registerShared(): expected a qualified operator name 'ns::op', got ${String(opName)}`);
  }
  if (typeof kernelName !== 'string' || kernelName === '') {
    throw new TypeError('registerShared(): kernelName must be a non-empty string');
  }
  const k = resolveKey(key);
  const { cb, agent } = sharedRuntime();
  const nameId = cb.intern(agent, kernelName);
  const slotId = cb.intern(agent, slotName(opName, k));
  const slot = cb.locked(agent, () => cb.slotFor(slotId));
  const w = cb.words, at = cb.slotAt(slot);
  cb.locked(agent, () => {
    const depth = w[at + S_DEPTH];
    if (depth >= SLOT_DEPTH) {
      throw new RangeError(`registerShared(): ${opName} at ${dispatchKeyName(k)} has ${SLOT_DEPTH} registrations`);
    }
    writeSlot(cb, at, () => {
      w[at + S_STACK + depth] = nameId;
      w[at + S_DEPTH] = depth + 1;
    });
  });
  let done = false;
  const dispose = () => {
    if (done) return;
    done = true;
    cb.locked(agent, () => {
      const depth = w[at + S_DEPTH];
      let i = depth - 1;
      while (i >= 0 && w[at + S_STACK + i] !== nameId) i--;
      if (i < 0) return;
      writeSlot(cb, at, () => {
        for (let j = i; j < depth - 1; j++) w[at + S_STACK + j] = w[at + S_STACK + j + 1];
        w[at + S_STACK + depth - 1] = 0;
        w[at + S_DEPTH] = depth - 1;
      });
    });
  };
  return { dispose, [Symbol.dispose]: dispose };
}

/** A write of a slot under its seqlock (the control block's lock is held). */
function writeSlot(cb: ControlBlock, at: number, write: () => void): void {
  const w = cb.words;
  Atomics.add(w, at + S_SEQ, 1);
  try {
    write();
  } finally {
    Atomics.add(w, at + S_SEQ, 1);
    Atomics.add(w, W_GENERATION, 1);
  }
}

/**
 * The registration generation: bumped by every shared registration and deregistration in any agent.
 *
 * @example
 * ```ts ignore
 * import { registrationGeneration } from './mod.ts';
 * const before = registrationGeneration();
 * ```
 */
export function registrationGeneration(): number {
  return Atomics.load(sharedRuntime().cb.words, W_GENERATION);
}

/** Module URLs this agent has imported as operator libraries. */
const loaded = new Set<string>();

/**
 * Imports the operator-library module at `url` here and in every agent attached to this runtime, now and
 * later: agents started afterwards import it when they attach, running ones before their next call (and at
 * once for workers this agent started). Resolves when this agent and the workers it started have it.
 *
 * @example
 * ```ts ignore
 * import { loadOperatorLibrary } from './mod.ts';
 * await loadOperatorLibrary(new URL('./my_ops.ts', import.meta.url));
 * ```
 */
export async function loadOperatorLibrary(url: string | URL): Promise<void> {
  if (typeof url !== 'string' && !(url instanceof URL)) {
    throw new TypeError(`loadOperatorLibrary(): expected a module URL, got ${typeof url}`);
  }
  const href = String(url);
  const { cb, agent } = sharedRuntime();
  await importOnce(href);
  const id = cb.intern(agent, href);
  cb.locked(agent, () => cb.addModule(id));
  await Promise.all(liveAgents().map((a) => a.request({ type: 'sync', target: -1 }, [])));
}

async function importOnce(href: string, quiet = false): Promise<void> {
  if (loaded.has(href)) return;
  // A module another agent loaded already published its operators' rows: loading it here must not rewrite
  // them from this agent's registrations while they are half made (Note [Shared table store]).
  const store = Dispatcher.singleton().tableStore;
  store.quiet = quiet;
  try {
    await import(href);
  } finally {
    store.quiet = false;
  }
  loaded.add(href);
}

/**
 * Imports the operator-library modules other agents added since this agent last looked.
 *
 * @example
 * ```ts ignore
 * import { syncOperatorLibraries } from './mod.ts';
 * await syncOperatorLibraries();
 * ```
 */
export async function syncOperatorLibraries(): Promise<void> {
  const { cb } = sharedRuntime();
  if (cb.moduleCount() === syncedModules) return;
  const modules = cb.modules();
  for (const href of modules) await importOnce(href, true);
  syncedModules = modules.length;
}

let syncedModules = 0;
