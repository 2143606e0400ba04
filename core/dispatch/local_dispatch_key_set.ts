/**
 * Per-agent include/exclude dispatch key sets (PyTorch's thread-local `LocalDispatchKeySet`).
 *
 * Every JavaScript agent (the main thread, each Worker) evaluates its own copy of this module, so module
 * state is exactly "thread-local" state. The dispatcher reads the four words on every call; guards change
 * them for a dynamic extent and always restore them, also when the extent throws.
 *
 * @module
 */
import { DispatchKey } from './dispatch_key.ts';
import { DispatchKeySet, keyHi } from './dispatch_key_set.ts';

/**
 * The live words. Exported for the dispatcher's hot path only; change them through guards.
 * Default include `{BackendSelect, ADInplaceOrView}`, default exclude `{AutocastCPU, AutocastWebGPU}`, as
 * PyTorch's `default_included_set` / `default_excluded_set`.
 */
export const localKeys: { includedHi: number; includedLo: number; excludedHi: number; excludedLo: number } = {
  includedHi: keyHi(DispatchKey.BackendSelect) | keyHi(DispatchKey.ADInplaceOrView),
  includedLo: 0,
  excludedHi: keyHi(DispatchKey.AutocastCPU) | keyHi(DispatchKey.AutocastWebGPU),
  excludedLo: 0,
};

// Note [Deferred registrations] (dispatcher.ts): a dispatcher holding registrations for keys that no registration
// has needed yet runs them before any of those keys joins the include set, so a kernel at a key reached only through
// the include set (VmapMode, whose framework fallback is a fallthrough) is registered before the first call that could
// reach it. One check of two words per include; no watcher, no cost.
const watchers: Array<{ readonly hi: number; readonly lo: number; readonly run: (hi: number, lo: number) => void }> =
  [];
let watchedHi = 0, watchedLo = 0;

/**
 * Calls `run(hi, lo)` with the keys about to join the include set (through {@linkcode includeKeys},
 * {@linkcode withIncludedKeys} or {@linkcode withLocalDispatchKeySet}) whenever one of the watched `hi`/`lo` keys is
 * among them, before they join; returns the function that stops watching. For the dispatcher's deferred
 * registrations (Note [Deferred registrations] in dispatcher.ts).
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { DispatchKeySet } from './dispatch_key_set.ts';
 * import { watchIncludedKeys, withIncludedKeys } from './local_dispatch_key_set.ts';
 * const ks = DispatchKeySet.of(DispatchKey.VmapMode);
 * const stop = watchIncludedKeys(ks.hi, ks.lo, () => console.log('VmapMode is about to be included'));
 * withIncludedKeys([DispatchKey.VmapMode], () => 1);
 * stop();
 * ```
 */
export function watchIncludedKeys(hi: number, lo: number, run: (hi: number, lo: number) => void): () => void {
  const watcher = { hi, lo, run };
  watchers.push(watcher);
  watchedHi |= hi;
  watchedLo |= lo;
  return () => {
    const at = watchers.indexOf(watcher);
    if (at < 0) return;
    watchers.splice(at, 1);
    watchedHi = watchedLo = 0;
    for (const w of watchers) {
      watchedHi |= w.hi;
      watchedLo |= w.lo;
    }
  };
}

/** Runs the watchers of any of these keys (before they join the include set). */
function noteIncludedKeys(hi: number, lo: number): void {
  if ((hi & watchedHi) === 0 && (lo & watchedLo) === 0) return;
  for (const w of watchers.slice()) if ((hi & w.hi) !== 0 || (lo & w.lo) !== 0) w.run(hi, lo);
}

/** A snapshot of this agent's include and exclude sets. */
export interface LocalDispatchKeySet {
  /** Keys added to every call's keyset (`includeKeys`). */
  readonly included: DispatchKeySet;
  /** Keys removed from every call's keyset (`excludeKeys`). */
  readonly excluded: DispatchKeySet;
}

/**
 * The current include and exclude sets of this agent.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { localDispatchKeySet } from './local_dispatch_key_set.ts';
 * localDispatchKeySet().included.has(DispatchKey.BackendSelect); // true
 * ```
 */
export function localDispatchKeySet(): LocalDispatchKeySet {
  return {
    included: new DispatchKeySet(localKeys.includedHi, localKeys.includedLo),
    excluded: new DispatchKeySet(localKeys.excludedHi, localKeys.excludedLo),
  };
}

/**
 * Dispatch keys as `includeKeys`/`excludeKeys` and their `with*` forms take them: a keyset, one key, or a list.
 *
 * @example
 * ```ts
 * import { DispatchKey, type KeysLike } from './mod.ts';
 * const keys: KeysLike = [DispatchKey.AutogradCPU, DispatchKey.ADInplaceOrView];
 * ```
 */
export type KeysLike = DispatchKeySet | DispatchKey | readonly DispatchKey[];

function toKeySet(keys: KeysLike): DispatchKeySet {
  if (keys instanceof DispatchKeySet) return keys;
  return typeof keys === 'number' ? DispatchKeySet.of(keys) : DispatchKeySet.of(...keys);
}

/** A scope that changes the local key sets and undoes exactly its own change when disposed. */
export class DispatchKeyGuard implements Disposable {
  readonly #included: boolean;
  readonly #hi: number;
  readonly #lo: number;
  #active = true;

  /** Adds `keys` to the include (or exclude) set; only keys not already present are recorded. */
  constructor(keys: KeysLike, included: boolean) {
    const set = toKeySet(keys);
    this.#included = included;
    if (included) {
      noteIncludedKeys(set.hi, set.lo);
      this.#hi = set.hi & ~localKeys.includedHi;
      this.#lo = set.lo & ~localKeys.includedLo;
      localKeys.includedHi |= this.#hi;
      localKeys.includedLo |= this.#lo;
    } else {
      this.#hi = set.hi & ~localKeys.excludedHi;
      this.#lo = set.lo & ~localKeys.excludedLo;
      localKeys.excludedHi |= this.#hi;
      localKeys.excludedLo |= this.#lo;
    }
  }

  /** Undoes the change; idempotent. */
  [Symbol.dispose](): void {
    if (!this.#active) return;
    this.#active = false;
    if (this.#included) {
      localKeys.includedHi &= ~this.#hi;
      localKeys.includedLo &= ~this.#lo;
    } else {
      localKeys.excludedHi &= ~this.#hi;
      localKeys.excludedLo &= ~this.#lo;
    }
  }
}

/**
 * Adds keys to this agent's include set until the returned guard is disposed (PyTorch's
 * `IncludeDispatchKeyGuard`).
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { includeKeys } from './local_dispatch_key_set.ts';
 * {
 *   using _g = includeKeys(DispatchKey.Tracer);
 *   // every op call in this block has Tracer in its keyset
 * }
 * ```
 */
export function includeKeys(keys: KeysLike): DispatchKeyGuard {
  return new DispatchKeyGuard(keys, true);
}

/**
 * Adds keys to this agent's exclude set until the returned guard is disposed (PyTorch's
 * `ExcludeDispatchKeyGuard`). Exclusion removes functionality bits only.
 *
 * @example
 * ```ts
 * import { AUTOGRAD_DISPATCH_KEYSET } from './dispatch_key_set.ts';
 * import { excludeKeys } from './local_dispatch_key_set.ts';
 * {
 *   using _below = excludeKeys(AUTOGRAD_DISPATCH_KEYSET); // like AutoDispatchBelowAutograd
 * }
 * ```
 */
export function excludeKeys(keys: KeysLike): DispatchKeyGuard {
  return new DispatchKeyGuard(keys, false);
}

/**
 * Runs `fn` with keys included, restoring the include set afterwards even if `fn` throws.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { withIncludedKeys } from './local_dispatch_key_set.ts';
 * const y = withIncludedKeys(DispatchKey.Profiler, () => 42);
 * ```
 */
export function withIncludedKeys<T>(keys: KeysLike, fn: () => T): T {
  using _guard = includeKeys(keys);
  return fn();
}

/**
 * Runs `fn` with keys excluded, restoring the exclude set afterwards even if `fn` throws.
 *
 * @example
 * ```ts
 * import { AUTOGRAD_DISPATCH_KEYSET } from './dispatch_key_set.ts';
 * import { withExcludedKeys } from './local_dispatch_key_set.ts';
 * withExcludedKeys(AUTOGRAD_DISPATCH_KEYSET, () => {});
 * ```
 */
export function withExcludedKeys<T>(keys: KeysLike, fn: () => T): T {
  using _guard = excludeKeys(keys);
  return fn();
}

/**
 * Replaces both sets for the extent of `fn` (PyTorch's `ForceDispatchKeyGuard`), restoring them after.
 * Used to run code under a snapshot taken elsewhere, for example in a Worker.
 *
 * @example
 * ```ts
 * import { localDispatchKeySet, withLocalDispatchKeySet } from './local_dispatch_key_set.ts';
 * const snapshot = localDispatchKeySet();
 * withLocalDispatchKeySet(snapshot, () => {});
 * ```
 */
export function withLocalDispatchKeySet<T>(state: LocalDispatchKeySet, fn: () => T): T {
  noteIncludedKeys(state.included.hi, state.included.lo);
  const saved = { ...localKeys };
  localKeys.includedHi = state.included.hi;
  localKeys.includedLo = state.included.lo;
  localKeys.excludedHi = state.excluded.hi;
  localKeys.excludedLo = state.excluded.lo;
  try {
    return fn();
  } finally {
    Object.assign(localKeys, saved);
  }
}
