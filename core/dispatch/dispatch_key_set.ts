/**
 * DispatchKeySet: a set of dispatch keys as two uint32 words, and the O(1) dispatch-table index.
 *
 * Note [Functionality and backend bits]
 * PyTorch packs a keyset into one uint64: the low `num_backends` bits are backend components and the bits
 * above them are functionalities. JavaScript has no cheap uint64, so Switchyard keeps the two halves as
 * separate words: `hi` holds functionality `f` at bit `f - 1`, `lo` holds backend component `b` at bit
 * `b - 1`. A runtime per-backend key such as AutogradCPU sets one bit in each word, so a keyset is a cross
 * product: `{AutogradCPU, WebGPU}` "has" AutogradWebGPU and CPU, exactly as in PyTorch.
 *
 * The hot path never builds a DispatchKeySet object: it passes the two words as numbers and calls
 * {@linkcode dispatchTableIndex}. The class is for registration code, tests and printing.
 *
 * @module
 */
import {
  BackendComponent,
  DispatchKey,
  dispatchKeyName,
  isAliasDispatchKey,
  isPerBackendFunctionalityKey,
  NUM_BACKENDS,
  NUM_FUNCTIONALITY_KEYS,
  toBackendComponent,
  toFunctionalityKey,
  toRuntimePerBackendFunctionalityKey,
} from './dispatch_key.ts';

/** The backend bits of the `lo` word. */
export const FULL_BACKEND_MASK: number = (1 << NUM_BACKENDS) - 1;

/** Every functionality bit of the `hi` word (functionalities 1 .. EndOfFunctionalityKeys - 1). */
export const FULL_FUNCTIONALITY_MASK: number = (1 << (NUM_FUNCTIONALITY_KEYS - 1)) - 1;

/** The `hi` word bit of a functionality key (0 for Undefined). */
export function functionalityBit(f: DispatchKey): number {
  return f === DispatchKey.Undefined ? 0 : 1 << (f - 1);
}

/** The `hi` word of the keyset of a single key (0 for Undefined and alias keys). */
export function keyHi(k: DispatchKey): number {
  if (k === DispatchKey.Undefined || isAliasDispatchKey(k) || k > DispatchKey.EndOfRuntimeBackendKeys) return 0;
  return functionalityBit(toFunctionalityKey(k));
}

/** The `lo` word of the keyset of a single key (the backend bit of a runtime per-backend key, else 0). */
export function keyLo(k: DispatchKey): number {
  if (k <= DispatchKey.EndOfFunctionalityKeys || isAliasDispatchKey(k) || k > DispatchKey.EndOfRuntimeBackendKeys) {
    return 0;
  }
  const b = toBackendComponent(k);
  return b === BackendComponent.InvalidBit ? 0 : 1 << (b - 1);
}

// Note [Dispatch table offsets]
// Each functionality owns one table slot, a per-backend functionality owns NUM_BACKENDS slots (one per
// backend, CPU first). Slot 0 is Undefined. OFFSETS[f] is the first slot of functionality f and MASKS[f] is
// the backend mask that selects the backend within it (0 when the functionality is not per-backend), so
// the index is `OFFSETS[f] + highestBackendIndex(lo & MASKS[f])` with no branch.
const OFFSETS = new Int32Array(NUM_FUNCTIONALITY_KEYS + 1);
const MASKS = new Int32Array(NUM_FUNCTIONALITY_KEYS + 1);
for (let f = 1; f < NUM_FUNCTIONALITY_KEYS; f++) {
  OFFSETS[f] = OFFSETS[f - 1] + (MASKS[f - 1] === 0 ? 1 : NUM_BACKENDS);
  MASKS[f] = isPerBackendFunctionalityKey(f) ? FULL_BACKEND_MASK : 0;
}

/** Number of slots in a dispatch table (PyTorch's `num_runtime_entries`). */
export const NUM_RUNTIME_ENTRIES: number = OFFSETS[NUM_FUNCTIONALITY_KEYS - 1] + 1;

/** First table slot of each functionality (read-only view for generated dispatch code). */
export const FUNCTIONALITY_OFFSETS: Readonly<Int32Array> = OFFSETS;
/** Backend mask of each functionality: the backend bits for per-backend ones, else 0. */
export const FUNCTIONALITY_MASKS: Readonly<Int32Array> = MASKS;

/**
 * The dispatch-table slot for a keyset given as words: highest functionality via `Math.clz32`, then the
 * highest backend for per-backend functionalities. CPU and "no backend" both give backend index 0.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { dispatchTableIndex, dispatchTableIndexForKey, keyHi, keyLo } from './dispatch_key_set.ts';
 * const k = DispatchKey.AutogradMeta;
 * dispatchTableIndex(keyHi(k), keyLo(k)) === dispatchTableIndexForKey(k); // true
 * ```
 */
export function dispatchTableIndex(hi: number, lo: number): number {
  const f = 32 - Math.clz32(hi);
  return OFFSETS[f] + (32 - Math.clz32((lo & MASKS[f]) >>> 1));
}

/**
 * The dispatch-table slot of a runtime key (Undefined → 0). Alias keys map to slot 0 as in PyTorch.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { dispatchTableIndexForKey } from './dispatch_key_set.ts';
 * dispatchTableIndexForKey(DispatchKey.Undefined); // 0
 * ```
 */
export function dispatchTableIndexForKey(k: DispatchKey): number {
  if (isAliasDispatchKey(k)) return 0;
  return dispatchTableIndex(keyHi(k), keyLo(k));
}

/**
 * A set of dispatch keys (immutable). Set operations follow PyTorch's `DispatchKeySet` exactly, including
 * its asymmetries: `remove` and set difference remove functionality bits only, never backend bits.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { DispatchKeySet } from './dispatch_key_set.ts';
 * const ks = DispatchKeySet.of(DispatchKey.CPU, DispatchKey.AutogradCPU);
 * ks.highestPriorityTypeId() === DispatchKey.AutogradCPU; // true
 * String(ks); // 'DispatchKeySet(CPU, AutogradCPU)'
 * ```
 */
export class DispatchKeySet {
  /** Functionality bits. */
  readonly hi: number;
  /** Backend bits. */
  readonly lo: number;

  /** A keyset from raw words. */
  constructor(hi = 0, lo = 0) {
    this.hi = hi | 0;
    this.lo = lo | 0;
  }

  /** The empty keyset. */
  static readonly EMPTY: DispatchKeySet = new DispatchKeySet(0, 0);
  /** Every functionality and every backend (PyTorch's `DispatchKeySet::FULL`). */
  static readonly FULL: DispatchKeySet = new DispatchKeySet(FULL_FUNCTIONALITY_MASK, FULL_BACKEND_MASK);

  /** The union of the keysets of the given keys (alias keys contribute nothing). */
  static of(...keys: DispatchKey[]): DispatchKeySet {
    let hi = 0, lo = 0;
    for (const k of keys) {
      hi |= keyHi(k);
      lo |= keyLo(k);
    }
    return new DispatchKeySet(hi, lo);
  }

  /** A keyset holding only backend bits. */
  static ofBackends(...backends: BackendComponent[]): DispatchKeySet {
    let lo = 0;
    for (const b of backends) if (b !== BackendComponent.InvalidBit) lo |= 1 << (b - 1);
    return new DispatchKeySet(0, lo);
  }

  /**
   * PyTorch's `DispatchKeySet(FullAfter, t)`: every backend bit plus every functionality strictly below
   * `t`'s functionality. Kernels redispatch with `ks & FullAfter(own key)`.
   */
  static fullAfter(k: DispatchKey): DispatchKeySet {
    const f = toFunctionalityKey(k);
    return new DispatchKeySet(f === DispatchKey.Undefined ? 0 : functionalityBit(f) - 1, FULL_BACKEND_MASK);
  }

  /** Whether every bit of `k`'s keyset is present (true for Undefined and alias keys, as in PyTorch). */
  has(k: DispatchKey): boolean {
    const h = keyHi(k), l = keyLo(k);
    return (this.hi & h) === h && (this.lo & l) === l;
  }
  /** Whether every bit of `other` is present. */
  hasAll(other: DispatchKeySet): boolean {
    return (this.hi & other.hi) === other.hi && (this.lo & other.lo) === other.lo;
  }
  /** Whether any bit of `other` is present (PyTorch's `has_any`). */
  hasAny(other: DispatchKeySet): boolean {
    return (this.hi & other.hi) !== 0 || (this.lo & other.lo) !== 0;
  }
  /** Whether the backend component's bit is present. */
  hasBackend(b: BackendComponent): boolean {
    return b !== BackendComponent.InvalidBit && (this.lo & (1 << (b - 1))) !== 0;
  }
  /** Whether no bit is set. */
  isEmpty(): boolean {
    return this.hi === 0 && this.lo === 0;
  }
  /** Bitwise union. */
  or(other: DispatchKeySet): DispatchKeySet {
    return new DispatchKeySet(this.hi | other.hi, this.lo | other.lo);
  }
  /** Bitwise intersection. */
  and(other: DispatchKeySet): DispatchKeySet {
    return new DispatchKeySet(this.hi & other.hi, this.lo & other.lo);
  }
  /** PyTorch's `a - b`: removes `b`'s functionality bits only; backend bits stay. */
  sub(other: DispatchKeySet): DispatchKeySet {
    return new DispatchKeySet(this.hi & ~other.hi, this.lo);
  }
  /** Adds a key's bits. */
  add(k: DispatchKey): DispatchKeySet {
    return new DispatchKeySet(this.hi | keyHi(k), this.lo | keyLo(k));
  }
  /** Removes a key's functionality bit (its backend bit stays, as in PyTorch). */
  remove(k: DispatchKey): DispatchKeySet {
    return new DispatchKeySet(this.hi & ~keyHi(k), this.lo);
  }
  /** Removes a backend component's bit. */
  removeBackend(b: BackendComponent): DispatchKeySet {
    return b === BackendComponent.InvalidBit ? this : new DispatchKeySet(this.hi, this.lo & ~(1 << (b - 1)));
  }
  /** Same bits. */
  equals(other: DispatchKeySet): boolean {
    return this.hi === other.hi && this.lo === other.lo;
  }

  /** The highest functionality key present, or Undefined. */
  highestFunctionalityKey(): DispatchKey {
    return 32 - Math.clz32(this.hi);
  }
  /** The highest backend component present, or InvalidBit. */
  highestBackendKey(): BackendComponent {
    return 32 - Math.clz32(this.lo & FULL_BACKEND_MASK);
  }
  /** The key that dispatch would select: a runtime per-backend key for per-backend functionalities. */
  highestPriorityTypeId(): DispatchKey {
    const f = this.highestFunctionalityKey();
    return isPerBackendFunctionalityKey(f) ? toRuntimePerBackendFunctionalityKey(f, this.highestBackendKey()) : f;
  }
  /** PyTorch's `getBackendIndex()`: 0-based index of the highest backend (0 for CPU and for none). */
  getBackendIndex(): number {
    return 32 - Math.clz32((this.lo & FULL_BACKEND_MASK) >>> 1);
  }
  /** The dispatch-table slot this keyset selects. */
  getDispatchTableIndexForDispatchKeySet(): number {
    return dispatchTableIndex(this.hi, this.lo);
  }

  /**
   * Iterates keys from lowest to highest priority; a per-backend functionality yields one runtime key per
   * backend bit present (lowest backend first) and nothing when there is no backend bit.
   */
  *[Symbol.iterator](): IterableIterator<DispatchKey> {
    for (let f = 1; f < NUM_FUNCTIONALITY_KEYS; f++) {
      if ((this.hi & functionalityBit(f)) === 0) continue;
      if (!isPerBackendFunctionalityKey(f)) {
        yield f;
        continue;
      }
      for (let b = 1; b <= NUM_BACKENDS; b++) {
        if ((this.lo & (1 << (b - 1))) !== 0) yield toRuntimePerBackendFunctionalityKey(f, b);
      }
    }
  }

  /** PyTorch's printing: `DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)`. */
  toString(): string {
    const names = [...this].map(dispatchKeyName);
    return `DispatchKeySet(${names.join(', ')})`;
  }
}

const ks = DispatchKeySet.of;

/** Backends whose autograd key is AutogradOther (PyTorch's `autogradother_backends`). */
export const AUTOGRADOTHER_BACKENDS: DispatchKeySet = new DispatchKeySet(
  functionalityBit(DispatchKey.Quantized) | functionalityBit(DispatchKey.Sparse),
  FULL_BACKEND_MASK,
);

/** Every key a backend kernel can sit at (PyTorch's `backend_dispatch_keyset`). */
export const BACKEND_DISPATCH_KEYSET: DispatchKeySet = AUTOGRADOTHER_BACKENDS.or(ks(DispatchKey.Dense));

/** The autograd functionalities, without backend bits (PyTorch's `autograd_dispatch_keyset`). */
export const AUTOGRAD_DISPATCH_KEYSET: DispatchKeySet = ks(
  DispatchKey.AutogradFunctionality,
  DispatchKey.AutogradOther,
);

const MATH_DISPATCH_KEYSET = BACKEND_DISPATCH_KEYSET.or(AUTOGRAD_DISPATCH_KEYSET);
const NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET = BACKEND_DISPATCH_KEYSET.remove(DispatchKey.Sparse);

/** Keys the autograd kernels exclude before redispatching (PyTorch's `after_autograd_keyset`). */
export const AFTER_AUTOGRAD_KEYSET: DispatchKeySet = DispatchKeySet.fullAfter(DispatchKey.AutogradOther);
/** Everything below ADInplaceOrView. */
export const AFTER_AD_INPLACE_OR_VIEW_KEYSET: DispatchKeySet = DispatchKeySet.fullAfter(DispatchKey.ADInplaceOrView);

/**
 * The runtime keys an alias key stands for (PyTorch's `getRuntimeDispatchKeySet`); a runtime key stands
 * for itself. Undefined is not accepted.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { getRuntimeDispatchKeySet } from './dispatch_key_set.ts';
 * getRuntimeDispatchKeySet(DispatchKey.Autograd).has(DispatchKey.AutogradMeta); // true
 * ```
 */
export function getRuntimeDispatchKeySet(k: DispatchKey): DispatchKeySet {
  if (k === DispatchKey.Undefined) throw new Error('getRuntimeDispatchKeySet: Undefined has no runtime keys');
  switch (k) {
    case DispatchKey.Autograd:
      return AUTOGRAD_DISPATCH_KEYSET.or(new DispatchKeySet(0, FULL_BACKEND_MASK));
    case DispatchKey.CompositeImplicitAutograd:
      return MATH_DISPATCH_KEYSET;
    case DispatchKey.CompositeExplicitAutograd:
      return BACKEND_DISPATCH_KEYSET;
    case DispatchKey.CompositeExplicitAutogradNonFunctional:
      return NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET;
    default:
      return ks(k);
  }
}

/** The runtime keys of an alias (or the key itself) as a list in table order. */
export function runtimeKeysOf(k: DispatchKey): DispatchKey[] {
  return [...getRuntimeDispatchKeySet(k)];
}

/** PyTorch's `runtimeDispatchKeySetHas(alias, k)`. */
export function runtimeDispatchKeySetHas(alias: DispatchKey, k: DispatchKey): boolean {
  switch (alias) {
    case DispatchKey.Autograd:
      return AUTOGRAD_DISPATCH_KEYSET.has(toFunctionalityKey(k));
    case DispatchKey.CompositeImplicitAutograd:
      return MATH_DISPATCH_KEYSET.has(k);
    case DispatchKey.CompositeExplicitAutograd:
      return BACKEND_DISPATCH_KEYSET.has(k);
    case DispatchKey.CompositeExplicitAutogradNonFunctional:
      return NON_FUNCTIONAL_BACKEND_DISPATCH_KEYSET.has(k);
    default:
      return alias === k;
  }
}

/**
 * Whether runtime key `k` is covered by `alias` (PyTorch's `isIncludedInAlias`; Undefined never is).
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * import { isIncludedInAlias } from './dispatch_key_set.ts';
 * isIncludedInAlias(DispatchKey.AutogradCPU, DispatchKey.CompositeImplicitAutograd); // true
 * isIncludedInAlias(DispatchKey.AutogradCPU, DispatchKey.CompositeExplicitAutograd); // false
 * ```
 */
export function isIncludedInAlias(k: DispatchKey, alias: DispatchKey): boolean {
  return k !== DispatchKey.Undefined && runtimeDispatchKeySetHas(alias, k);
}

/** For an autograd key, the backend keys whose kernels it wraps (PyTorch's `getBackendKeySetFromAutograd`). */
export function getBackendKeySetFromAutograd(k: DispatchKey): DispatchKeySet {
  if (k === DispatchKey.AutogradOther) return AUTOGRADOTHER_BACKENDS;
  if (toFunctionalityKey(k) === DispatchKey.AutogradFunctionality) {
    const b = toBackendComponent(k);
    if (b !== BackendComponent.InvalidBit) return ks(toRuntimePerBackendFunctionalityKey(DispatchKey.Dense, b));
  }
  return DispatchKeySet.EMPTY;
}

/** Whether `k` is a key a backend kernel sits at (CPU, SparseMeta, ...: PyTorch's `isBackendDispatchKey`). */
export function isBackendDispatchKey(k: DispatchKey): boolean {
  return k !== DispatchKey.Undefined && !isAliasDispatchKey(k) && BACKEND_DISPATCH_KEYSET.has(k);
}

/** The autograd-related keys of a backend: `{ADInplaceOrView, Autograd<backend>}`. */
export function getAutogradRelatedKeySetFromBackend(b: BackendComponent): DispatchKeySet {
  const autograd = b === BackendComponent.InvalidBit ? ks(DispatchKey.AutogradOther) : new DispatchKeySet(
    functionalityBit(DispatchKey.AutogradFunctionality),
    1 << (b - 1),
  );
  return autograd.add(DispatchKey.ADInplaceOrView);
}

/** The autocast key of a backend (CPU → AutocastCPU, WebGPU → AutocastWebGPU, others none). */
export function getAutocastRelatedKeySetFromBackend(b: BackendComponent): DispatchKeySet {
  if (b === BackendComponent.CPUBit) return ks(DispatchKey.AutocastCPU);
  if (b === BackendComponent.WebGPUBit) return ks(DispatchKey.AutocastWebGPU);
  return DispatchKeySet.EMPTY;
}
