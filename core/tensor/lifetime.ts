/**
 * Tensor lifetime: live-tensor accounting, `scope()` (free every tensor made inside a function except what
 * it returns, like tf.tidy; sync or async), `keep()`, and a FinalizationRegistry that frees the storage of
 * tensors that were garbage-collected without `dispose()`.
 *
 * Note [Scope frames]
 * Each `scope()` call is a frame that owns the tensors made while it is the current frame; a tensor points
 * back at its frame (`[scopeSlot]`), so disposing or keeping it updates the frame in O(1). The current frame
 * is the innermost scope whose function is running synchronously (a stack), or, when none is, the async
 * scope whose task is running: an `async` function runs inside an `AsyncLocalStorage` context naming its
 * frame, which the function's own continuations (after each `await`, and in promises it starts) inherit,
 * while other tasks do not. (AsyncLocalStorage comes from the runtime's `node:async_hooks`, loaded on the first
 * async scope so that importing the package, and sync scopes, never pay for Deno's Node compatibility layer.) So an async scope owns what its own task makes and never what other tasks make
 * during its awaits, even when several async scopes overlap. A frame closes when its function returns, or
 * when the promise it returned settles: it hands the tensors the result holds to the nearest still-open
 * enclosing frame (or to nobody: they become the caller's) and disposes the rest. Tensors made later by a
 * task that a closed frame started go to that nearest open frame too.
 *
 * Note [Deferred finalizer registration]
 * Registering with a FinalizationRegistry (and unregistering on dispose) costs as much as the rest of making
 * a small tensor. Most tensors are temporaries disposed right away, so new tensors wait in the young lists and
 * are registered only if still alive when the current task yields (a microtask) or after 256 creations. A
 * young tensor is strongly held, so none can be collected before it is registered.
 *
 * @module
 */
import type { Storage } from './storage.ts';
import { storageStats } from './storage.ts';
import { forEachHeldTensor, heldTensors } from './held_tensors.ts';

/**
 * The slot of a tensor that names the scope frame owning it (see Note [Scope frames]).
 *
 * @example
 * ```ts
 * import { scope, zeros } from '../../mod.ts';
 * import { scopeSlot } from './lifetime.ts';
 * scope(() => zeros([1])[scopeSlot] !== undefined); // true: made inside a scope
 * ```
 */
export const scopeSlot: unique symbol = Symbol('switchyard.scopeFrame');

/** What lifetime tracking needs of a tensor. */
export interface Tracked {
  /** Whether `dispose()` has run. */
  readonly isDisposed: boolean;
  /** Frees the tensor (idempotent). */
  dispose(): void;
  /** Set once the tensor is registered with the finalizer (see Note [Deferred finalizer registration]). */
  finalizerRegistered: boolean;
  /** The open scope that will free this tensor, if any. */
  [scopeSlot]: ScopeFrame | undefined;
  /** Autograd state; a kept tensor's gradient is kept with it. */
  readonly autograd?: { readonly grad: unknown } | undefined;
}

/**
 * One `scope()` call: the tensors it owns and the frame it runs in (see Note [Scope frames]).
 *
 * @example
 * ```ts
 * import { ScopeFrame } from './lifetime.ts';
 * const outer = new ScopeFrame(undefined);
 * new ScopeFrame(outer).parent === outer; // true
 * ```
 */
export class ScopeFrame {
  /** Tensors made while this frame was current, not yet disposed, kept or moved. */
  readonly owned: Set<Tracked> = new Set();
  /** The frame that was current when this one began. */
  readonly parent: ScopeFrame | undefined;
  /** False once the function returned (sync) or its promise settled (async). */
  open = true;

  /** A frame nested in `parent`. */
  constructor(parent: ScopeFrame | undefined) {
    this.parent = parent;
  }
}

let liveTensors = 0;
const runningFrames: ScopeFrame[] = [];

/** The part of node:async_hooks' AsyncLocalStorage that async scopes use. */
interface TaskContext {
  run<R>(store: ScopeFrame, fn: () => R): R;
  getStore(): ScopeFrame | undefined;
}

// undefined: not looked up yet; null: the runtime has no AsyncLocalStorage (a browser).
let taskFrame: TaskContext | null | undefined;

function taskContext(): TaskContext | null {
  if (taskFrame === undefined) {
    const host = globalThis as { process?: { getBuiltinModule?(id: string): unknown } };
    const hooks = host.process?.getBuiltinModule?.('node:async_hooks') as
      | { AsyncLocalStorage?: new () => TaskContext }
      | undefined;
    taskFrame = hooks?.AsyncLocalStorage === undefined ? null : new hooks.AsyncLocalStorage();
  }
  return taskFrame;
}
// Only while an async scope is pending can a frame be current without being on the stack; until then,
// tensor creation does not pay for the context lookup.
let pendingAsyncScopes = 0;

function nearestOpen(frame: ScopeFrame | undefined): ScopeFrame | undefined {
  while (frame !== undefined && !frame.open) frame = frame.parent;
  return frame;
}

function currentFrame(): ScopeFrame | undefined {
  if (runningFrames.length > 0) return runningFrames[runningFrames.length - 1];
  return pendingAsyncScopes > 0 ? nearestOpen(taskFrame?.getStore()) : undefined;
}

// Safety net: a tensor dropped without dispose() still gives its storage reference back when collected.
const finalizer = new FinalizationRegistry<Storage>((storage) => {
  liveTensors--;
  storage.release();
});

const youngTensors: Tracked[] = [];
const youngStorages: Storage[] = [];
let flushScheduled = false;

function flushYoung(): void {
  flushScheduled = false;
  for (let i = 0; i < youngTensors.length; i++) {
    const tensor = youngTensors[i];
    if (tensor.isDisposed) continue;
    finalizer.register(tensor, youngStorages[i], tensor);
    tensor.finalizerRegistered = true;
  }
  youngTensors.length = 0;
  youngStorages.length = 0;
}

/** Called by the Tensor constructor. */
export function trackTensor(tensor: Tracked, storage: Storage): void {
  liveTensors++;
  youngTensors.push(tensor);
  youngStorages.push(storage);
  if (youngTensors.length >= 256) flushYoung();
  else if (!flushScheduled) {
    flushScheduled = true;
    queueMicrotask(flushYoung);
  }
  const frame = currentFrame();
  if (frame !== undefined) {
    frame.owned.add(tensor);
    tensor[scopeSlot] = frame;
  }
}

/** Called by `Tensor.dispose()` (the tensor already reports `isDisposed`). */
export function untrackTensor(tensor: Tracked): void {
  liveTensors--;
  if (tensor.finalizerRegistered) finalizer.unregister(tensor);
  release(tensor);
}

function release(tensor: Tracked): void {
  const frame = tensor[scopeSlot];
  if (frame === undefined) return;
  frame.owned.delete(tensor);
  tensor[scopeSlot] = undefined;
}

// Tensors carry the scope slot (a look-alike that copies it is, at worst, not searched for tensors).
function isTracked(value: unknown): value is Tracked {
  return typeof value === 'object' && value !== null && scopeSlot in value;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

// Calls `visit` with every tensor `value` holds, and with each one's gradient: a gradient belongs to its tensor.
function forEachKeptTensor(value: unknown, visit: (t: Tracked) => void): void {
  forEachHeldTensor(value, isTracked, (t) => {
    visit(t);
    // A wrapper tensor (vmap's BatchedTensor) lists the tensor it wraps: keeping the wrapper keeps it.
    const inner = (t as { [heldTensors]?: () => Iterable<unknown> })[heldTensors];
    if (typeof inner === 'function') { for (const held of inner.call(t)) if (isTracked(held)) visit(held); }
    const grad = t.autograd?.grad;
    if (isTracked(grad)) visit(grad);
  });
}

function closeFrame(frame: ScopeFrame, result: unknown, keepResult: boolean): void {
  frame.open = false;
  const heir = nearestOpen(frame.parent);
  try {
    if (keepResult && frame.owned.size > 0) {
      forEachKeptTensor(result, (t) => {
        if (t[scopeSlot] !== frame) return;
        frame.owned.delete(t);
        t[scopeSlot] = heir;
        heir?.owned.add(t);
      });
    }
  } finally {
    // Also when searching the result threw (a hostile Proxy): the scope fails, so what it made goes.
    for (const t of frame.owned) t.dispose(); // dispose() removes it from `owned`
    frame.owned.clear();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null &&
    typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Runs `fn` and disposes every tensor made during it that its result does not hold. The result may be a
 * tensor or anything holding tensors: arrays, plain objects, class instances (own enumerable data properties),
 * `Map`s (keys and values), `Set`s, `nn.Module`s (parameters, gradients, buffers), objects implementing
 * `[heldTensors]()`, nested to 32 levels; a kept tensor keeps its gradient. Tensors reachable only through
 * getters, `#private` fields or closures are not kept (Note [What a result holds] in held_tensors.ts). Kept
 * tensors move to the enclosing scope, or become the caller's outside any scope. When `fn` throws, everything
 * it made is freed.
 *
 * `fn` may be async: `await scope(async () => ...)` frees what the function made (before and after its
 * awaits) once its promise settles, keeps what the promise resolves to, and frees everything on rejection.
 * Scopes nest in any mix of sync and async.
 *
 * Note: an async scope owns only the tensors its own task makes (the function and the promises it starts),
 * told apart with `AsyncLocalStorage`: tensors other tasks make while it awaits are never freed by it,
 * and overlapping async scopes (`Promise.all([scope(a), scope(b)])`) each free only their own. A task it
 * started and did not await, still running after it settled, gives what it makes to the enclosing scope.
 * Pass an `async` function for this: a plain function that returns a promise is scoped until the promise
 * settles too, but owns only what it made before returning (what its continuations make is left alone).
 *
 * @example
 * ```ts
 * import { scope, tensor } from '../../mod.ts';
 * const y = scope(() => tensor([1, 2]).mul(2).add(1)); // the intermediate `mul` result is freed
 * const z = await scope(async () => {
 *   const a = tensor([3, 4]).mul(2);
 *   await Promise.resolve();
 *   return { sum: a.add(y) }; // `a` is freed when the promise settles; `sum` is kept
 * });
 * y.dispose();
 * z.sum.dispose();
 * ```
 */
export function scope<T>(fn: () => Promise<T>): Promise<T>;
/** Runs `fn`, then frees the tensors it made that were not kept, returned or disposed. */
export function scope<T>(fn: () => T): T;
export function scope<T>(fn: () => T | Promise<T>): T | Promise<T> {
  if (typeof fn !== 'function') throw new TypeError(`scope(): expected a function, got ${describe(fn)}`);
  let context: TaskContext | null = null;
  if ((fn as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'AsyncFunction') {
    context = taskContext();
    if (context === null) {
      throw new Error(
        'scope() with an async function needs AsyncLocalStorage (Deno, Bun or Node), which this runtime lacks',
      );
    }
  }
  const frame = new ScopeFrame(currentFrame());
  runningFrames.push(frame);
  let result: T | Promise<T>;
  try {
    result = context === null ? fn() : context.run(frame, fn);
  } catch (e) {
    runningFrames.pop();
    closeFrame(frame, undefined, false);
    throw e;
  }
  runningFrames.pop();
  let isAsync: boolean;
  try {
    isAsync = isThenable(result); // reads `then`, which a hostile result may make throw
  } catch (e) {
    closeFrame(frame, undefined, false);
    throw e;
  }
  if (!isAsync) {
    closeFrame(frame, result, true);
    return result;
  }
  pendingAsyncScopes++;
  return Promise.resolve(result).then(
    (value) => {
      pendingAsyncScopes--;
      closeFrame(frame, value, true);
      return value;
    },
    (error) => {
      pendingAsyncScopes--;
      closeFrame(frame, undefined, false);
      throw error;
    },
  );
}

/**
 * Runs `fill` on a freshly made tensor and returns it; if `fill` throws, frees the tensor first, so a failing
 * kernel leaks nothing.
 *
 * @example
 * ```ts
 * import { filledOrFreed } from './lifetime.ts';
 * import { empty } from '../../mod.ts';
 * const t = filledOrFreed(empty([2]), (out) => out.fill_(3));
 * ```
 */
export function filledOrFreed<T extends { dispose(): void }>(out: T, fill: (out: T) => void): T {
  try {
    fill(out);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

/**
 * Exempts a tensor, or every tensor a value holds (as `scope()` finds them in a result), from every scope:
 * no `scope()`, sync or async, will free it; disposing it is up to you. Returns `value`.
 *
 * @example
 * ```ts
 * import { keep, scope, tensor } from '../../mod.ts';
 * let cache;
 * scope(() => { cache = keep(tensor([1])); });
 * ```
 */
export function keep<T>(value: T): T {
  if (typeof value !== 'object' || value === null) {
    throw new TypeError(`keep(): expected a Tensor or an object holding tensors, got ${describe(value)}`);
  }
  forEachKeptTensor(value, release);
  return value;
}

/** Live tensors and the bytes their storages hold. */
export interface MemoryStats {
  /** Tensor objects not yet disposed (or collected). */
  liveTensors: number;
  /** Bytes held by live storages (views share one). */
  bytes: number;
  /** Highest `bytes` seen. */
  peakBytes: number;
  /** Live storages. */
  storages: number;
}

/**
 * Live tensors, bytes and peak bytes.
 *
 * @example
 * ```ts
 * import { memoryStats } from '../../mod.ts';
 * memoryStats().liveTensors; // a number
 * ```
 */
export function memoryStats(): MemoryStats {
  const s = storageStats();
  return { liveTensors, bytes: s.bytes, peakBytes: s.peakBytes, storages: s.storages };
}
