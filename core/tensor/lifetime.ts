/**
 * Tensor lifetime: live-tensor accounting, `scope()` (free every tensor made inside a function except what
 * it returns, like tf.tidy), and a FinalizationRegistry that frees the storage of tensors that were
 * garbage-collected without `dispose()`.
 *
 * @module
 */
import type { Storage } from './storage.ts';
import { storageStats } from './storage.ts';

interface Disposable_ {
  dispose(): void;
}

/** What lifetime tracking needs of a tensor. */
interface Tracked extends Disposable_ {
  readonly isDisposed: boolean;
  /** Set once the tensor is registered with the finalizer (see Note [Deferred finalizer registration]). */
  finalizerRegistered: boolean;
}

let liveTensors = 0;
const scopes: Array<Set<Disposable_>> = [];

// Safety net: a tensor dropped without dispose() still gives its storage reference back when collected.
const finalizer = new FinalizationRegistry<Storage>((storage) => {
  liveTensors--;
  storage.release();
});

// Note [Deferred finalizer registration]
// Registering with a FinalizationRegistry (and unregistering on dispose) costs as much as the rest of making
// a small tensor. Most tensors are temporaries disposed right away, so new tensors wait in the young lists and are
// registered only if still alive when the current task yields (a microtask) or after 256 creations. A
// young tensor is strongly held, so none can be collected before it is registered.
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
  if (scopes.length > 0) scopes[scopes.length - 1].add(tensor);
}

/** Called by `Tensor.dispose()` (the tensor already reports `isDisposed`). */
export function untrackTensor(tensor: Tracked): void {
  liveTensors--;
  if (tensor.finalizerRegistered) finalizer.unregister(tensor);
  for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i].delete(tensor)) break;
}

function collectKept(value: unknown, kept: Set<unknown>, depth = 0): void {
  if (value === null || typeof value !== 'object' || depth > 8) return;
  if (kept.has(value)) return;
  kept.add(value);
  if (Array.isArray(value)) { for (const v of value) collectKept(v, kept, depth + 1); }
  else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) collectKept(v, kept, depth + 1);
  }
}

/**
 * Runs `fn` and disposes every tensor created during it that is not part of its result (a tensor, or
 * arrays/plain objects of tensors). Tensors returned move to the enclosing scope. Also on throw, the
 * intermediates are freed.
 *
 * @example
 * ```ts
 * import { scope, tensor } from '../../mod.ts';
 * const y = scope(() => tensor([1, 2]).mul(2).add(1)); // the intermediate `mul` result is freed
 * y.dispose();
 * ```
 */
export function scope<T>(fn: () => T): T {
  const created = new Set<Disposable_>();
  scopes.push(created);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    scopes.pop();
    for (const t of created) t.dispose();
    throw e;
  }
  scopes.pop();
  const kept = new Set<unknown>();
  collectKept(result, kept);
  for (const t of created) {
    if (kept.has(t)) {
      if (scopes.length > 0) scopes[scopes.length - 1].add(t);
    } else {
      t.dispose();
    }
  }
  return result;
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
export function filledOrFreed<T extends Disposable_>(out: T, fill: (out: T) => void): T {
  try {
    fill(out);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

/**
 * Exempts a tensor from the innermost `scope()`, so it outlives it.
 *
 * @example
 * ```ts
 * import { keep, scope, tensor } from '../../mod.ts';
 * let cache;
 * scope(() => { cache = keep(tensor([1])); });
 * ```
 */
export function keep<T extends Disposable_>(tensor: T): T {
  for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i].delete(tensor)) break;
  return tensor;
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
