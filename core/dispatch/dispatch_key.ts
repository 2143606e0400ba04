/**
 * Dispatch keys: functionality keys in priority order, backend components, the runtime per-backend keys
 * built from the two, and the alias keys that exist only at registration time.
 *
 * The layout mirrors PyTorch's `c10/core/DispatchKey.h` with Switchyard's own backends (CPU, WebGPU, Meta,
 * PrivateUse1..3) and cross-cutting keys. See Note [Functionality and backend bits] in
 * `dispatch_key_set.ts` for how keys become bits.
 *
 * @module
 */
import { RuntimeError } from './errors.ts';

/**
 * Backend components, in priority order (a higher component wins when a keyset holds several).
 * Component `b` occupies bit `b - 1` of a keyset's `lo` word.
 *
 * @example
 * ```ts
 * import { BackendComponent } from './dispatch_key.ts';
 * BackendComponent.CPUBit; // 1
 * ```
 */
export const BackendComponent = {
  InvalidBit: 0,
  CPUBit: 1,
  WebGPUBit: 2,
  MetaBit: 3,
  PrivateUse1Bit: 4,
  PrivateUse2Bit: 5,
  PrivateUse3Bit: 6,
} as const;

/** A backend component number (see {@linkcode BackendComponent}). */
export type BackendComponent = number;

/** Number of real backend components (InvalidBit excluded). */
export const NUM_BACKENDS = 6;

/** Short names of the backends, indexed by backend component (index 0 is InvalidBit). */
export const BACKEND_NAMES: readonly string[] = [
  'Invalid',
  'CPU',
  'WebGPU',
  'Meta',
  'PrivateUse1',
  'PrivateUse2',
  'PrivateUse3',
];

/**
 * Dispatch keys. Values up to `EndOfFunctionalityKeys` are functionality keys in priority order (low to high);
 * then come the runtime per-backend keys (one block per per-backend functionality, in backend order), then
 * the alias keys.
 *
 * @example
 * ```ts
 * import { DispatchKey } from './dispatch_key.ts';
 * DispatchKey.AutogradCPU > DispatchKey.CPU; // true: blocks are ordered by functionality
 * ```
 */
export const DispatchKey = {
  Undefined: 0,
  // Per-backend functionalities are marked in PER_BACKEND_FUNCTIONALITIES below.
  Dense: 1,
  Quantized: 2,
  Sparse: 3,
  BackendSelect: 4,
  Python: 5,
  Functionalize: 6,
  Conjugate: 7,
  Negative: 8,
  ZeroTensor: 9,
  ADInplaceOrView: 10,
  // Sits between autograd and the backends, as in the seeds' exercise 8: autograd redispatches into it.
  Profiler: 11,
  AutogradOther: 12,
  AutogradFunctionality: 13,
  Tracer: 14,
  AutocastCPU: 15,
  AutocastWebGPU: 16,
  Batched: 17,
  VmapMode: 18,
  EndOfFunctionalityKeys: 19,

  StartOfDenseBackends: 20,
  CPU: 21,
  WebGPU: 22,
  Meta: 23,
  PrivateUse1: 24,
  PrivateUse2: 25,
  PrivateUse3: 26,
  EndOfDenseBackends: 26,

  StartOfQuantizedBackends: 27,
  QuantizedCPU: 28,
  QuantizedWebGPU: 29,
  QuantizedMeta: 30,
  QuantizedPrivateUse1: 31,
  QuantizedPrivateUse2: 32,
  QuantizedPrivateUse3: 33,
  EndOfQuantizedBackends: 33,

  StartOfSparseBackends: 34,
  SparseCPU: 35,
  SparseWebGPU: 36,
  SparseMeta: 37,
  SparsePrivateUse1: 38,
  SparsePrivateUse2: 39,
  SparsePrivateUse3: 40,
  EndOfSparseBackends: 40,

  StartOfAutogradFunctionalityBackends: 41,
  AutogradCPU: 42,
  AutogradWebGPU: 43,
  AutogradMeta: 44,
  AutogradPrivateUse1: 45,
  AutogradPrivateUse2: 46,
  AutogradPrivateUse3: 47,
  EndOfAutogradFunctionalityBackends: 47,
  EndOfRuntimeBackendKeys: 47,

  Autograd: 48,
  CompositeImplicitAutograd: 49,
  CompositeExplicitAutograd: 50,
  CompositeExplicitAutogradNonFunctional: 51,
  StartOfAliasKeys: 48,
  EndOfAliasKeys: 51,
} as const;

/** A dispatch key number (see {@linkcode DispatchKey}). */
export type DispatchKey = number;

/** Number of functionality keys including Undefined (the enum value of `EndOfFunctionalityKeys`). */
export const NUM_FUNCTIONALITY_KEYS: number = DispatchKey.EndOfFunctionalityKeys;

/** Per-backend functionalities in block order, each with the name prefix of its runtime keys. */
const PER_BACKEND_BLOCKS: ReadonlyArray<{ functionality: DispatchKey; start: DispatchKey; prefix: string }> = [
  { functionality: DispatchKey.Dense, start: DispatchKey.StartOfDenseBackends, prefix: '' },
  { functionality: DispatchKey.Quantized, start: DispatchKey.StartOfQuantizedBackends, prefix: 'Quantized' },
  { functionality: DispatchKey.Sparse, start: DispatchKey.StartOfSparseBackends, prefix: 'Sparse' },
  {
    functionality: DispatchKey.AutogradFunctionality,
    start: DispatchKey.StartOfAutogradFunctionalityBackends,
    prefix: 'Autograd',
  },
];

const FUNCTIONALITY_NAMES: readonly string[] = (() => {
  const names: string[] = [];
  for (const [name, value] of Object.entries(DispatchKey)) {
    if (value <= DispatchKey.EndOfFunctionalityKeys && names[value] === undefined) names[value] = name;
  }
  return names;
})();

const ALIAS_NAMES: Readonly<Record<number, string>> = {
  [DispatchKey.Autograd]: 'Autograd',
  [DispatchKey.CompositeImplicitAutograd]: 'CompositeImplicitAutograd',
  [DispatchKey.CompositeExplicitAutograd]: 'CompositeExplicitAutograd',
  [DispatchKey.CompositeExplicitAutogradNonFunctional]: 'CompositeExplicitAutogradNonFunctional',
};

/**
 * Whether `k` is a functionality with one runtime key per backend (Dense, Quantized, Sparse,
 * AutogradFunctionality).
 *
 * @example
 * ```ts
 * import { DispatchKey, isPerBackendFunctionalityKey } from './dispatch_key.ts';
 * isPerBackendFunctionalityKey(DispatchKey.Dense); // true
 * isPerBackendFunctionalityKey(DispatchKey.Tracer); // false
 * ```
 */
export function isPerBackendFunctionalityKey(k: DispatchKey): boolean {
  return k === DispatchKey.Dense || k === DispatchKey.Quantized || k === DispatchKey.Sparse ||
    k === DispatchKey.AutogradFunctionality;
}

/**
 * Whether `k` is an alias key (Autograd, CompositeImplicitAutograd, ...), which never appears in a keyset.
 *
 * @example
 * ```ts
 * import { DispatchKey, isAliasDispatchKey } from './dispatch_key.ts';
 * isAliasDispatchKey(DispatchKey.Autograd); // true
 * ```
 */
export function isAliasDispatchKey(k: DispatchKey): boolean {
  return k >= DispatchKey.StartOfAliasKeys && k <= DispatchKey.EndOfAliasKeys;
}

/**
 * Whether `k` is a key a dispatch table has a slot for: Undefined, a functionality key or a runtime
 * per-backend key.
 *
 * @example
 * ```ts
 * import { DispatchKey, isRuntimeDispatchKey } from './dispatch_key.ts';
 * isRuntimeDispatchKey(DispatchKey.AutogradCPU); // true
 * isRuntimeDispatchKey(DispatchKey.Autograd); // false: an alias
 * ```
 */
export function isRuntimeDispatchKey(k: DispatchKey): boolean {
  return typeof k === 'number' && RUNTIME_KEYS[k] === true; // only the integers in range are elements
}

// Answered once per key: every registration asks.
const RUNTIME_KEYS: readonly boolean[] = Array.from(
  { length: DispatchKey.EndOfRuntimeBackendKeys + 1 },
  (_, k) => k !== DispatchKey.EndOfFunctionalityKeys && !isBlockStart(k),
);

function isBlockStart(k: DispatchKey): boolean {
  for (const block of PER_BACKEND_BLOCKS) if (block.start === k) return true;
  return false;
}

function blockOf(k: DispatchKey): (typeof PER_BACKEND_BLOCKS)[number] | undefined {
  for (const block of PER_BACKEND_BLOCKS) {
    if (k >= block.start && k <= block.start + NUM_BACKENDS) return block;
  }
  return undefined;
}

/**
 * The functionality of a key: itself for functionality keys, the block's functionality for runtime
 * per-backend keys (`AutogradCPU` → `AutogradFunctionality`), Undefined for alias keys.
 *
 * @example
 * ```ts
 * import { DispatchKey, toFunctionalityKey } from './dispatch_key.ts';
 * toFunctionalityKey(DispatchKey.SparseCPU) === DispatchKey.Sparse; // true
 * ```
 */
export function toFunctionalityKey(k: DispatchKey): DispatchKey {
  if (k <= DispatchKey.EndOfFunctionalityKeys) return k;
  return blockOf(k)?.functionality ?? DispatchKey.Undefined;
}

/**
 * The backend component of a runtime per-backend key (`AutogradMeta` → `MetaBit`); InvalidBit otherwise.
 *
 * @example
 * ```ts
 * import { BackendComponent, DispatchKey, toBackendComponent } from './dispatch_key.ts';
 * toBackendComponent(DispatchKey.AutogradMeta) === BackendComponent.MetaBit; // true
 * ```
 */
export function toBackendComponent(k: DispatchKey): BackendComponent {
  const block = blockOf(k);
  return block === undefined ? BackendComponent.InvalidBit : k - block.start;
}

/**
 * The runtime key of a per-backend functionality on a backend (`AutogradFunctionality` + `CPUBit` →
 * `AutogradCPU`). With InvalidBit it gives the block's start key, as PyTorch does.
 *
 * @example
 * ```ts
 * import { BackendComponent, DispatchKey, toRuntimePerBackendFunctionalityKey } from './dispatch_key.ts';
 * toRuntimePerBackendFunctionalityKey(DispatchKey.Dense, BackendComponent.WebGPUBit) === DispatchKey.WebGPU;
 * ```
 */
export function toRuntimePerBackendFunctionalityKey(functionality: DispatchKey, b: BackendComponent): DispatchKey {
  for (const block of PER_BACKEND_BLOCKS) {
    if (block.functionality === functionality) return block.start + b;
  }
  throw new Error(`Functionality ${dispatchKeyName(functionality)} is not a per-backend functionality`);
}

/**
 * The autograd key of a backend: `CPUBit` → `AutogradCPU`; InvalidBit → `AutogradOther`.
 *
 * @example
 * ```ts
 * import { BackendComponent, DispatchKey, getAutogradKeyFromBackend } from './dispatch_key.ts';
 * getAutogradKeyFromBackend(BackendComponent.MetaBit) === DispatchKey.AutogradMeta; // true
 * ```
 */
export function getAutogradKeyFromBackend(b: BackendComponent): DispatchKey {
  return b === BackendComponent.InvalidBit
    ? DispatchKey.AutogradOther
    : DispatchKey.StartOfAutogradFunctionalityBackends + b;
}

/**
 * PyTorch's name of a dispatch key (`AutogradCPU`, `CompositeImplicitAutograd`, `Undefined`).
 *
 * @example
 * ```ts
 * import { DispatchKey, dispatchKeyName } from './dispatch_key.ts';
 * dispatchKeyName(DispatchKey.SparseMeta); // 'SparseMeta'
 * ```
 */
export function dispatchKeyName(k: DispatchKey): string {
  if (k >= 0 && k <= DispatchKey.EndOfFunctionalityKeys) return FUNCTIONALITY_NAMES[k];
  const alias = ALIAS_NAMES[k];
  if (alias !== undefined) return alias;
  const block = blockOf(k);
  if (block !== undefined) {
    const b = k - block.start;
    if (b === 0) return `StartOf${FUNCTIONALITY_NAMES[block.functionality]}Backends`;
    return block.prefix + BACKEND_NAMES[b];
  }
  return `UNKNOWN_DISPATCH_KEY(${k})`;
}

/**
 * The name of a backend component as PyTorch prints it (`CPUBit`).
 *
 * @example
 * ```ts
 * import { BackendComponent, backendComponentName } from './dispatch_key.ts';
 * backendComponentName(BackendComponent.WebGPUBit); // 'WebGPUBit'
 * ```
 */
export function backendComponentName(b: BackendComponent): string {
  return b >= 0 && b <= NUM_BACKENDS ? `${BACKEND_NAMES[b]}Bit` : `UNKNOWN_BACKEND_BIT(${b})`;
}

const PARSE_TABLE: ReadonlyMap<string, DispatchKey> = (() => {
  const table = new Map<string, DispatchKey>();
  for (let k = 0; k <= DispatchKey.EndOfAliasKeys; k++) {
    if (k === DispatchKey.EndOfFunctionalityKeys || isBlockStart(k)) continue;
    table.set(dispatchKeyName(k), k);
  }
  // PyTorch's backward-compatible spellings.
  table.set('CatchAll', DispatchKey.Undefined);
  table.set('DefaultBackend', DispatchKey.CompositeExplicitAutograd);
  for (let i = 1; i <= 3; i++) {
    table.set(`PrivateUse${i}_PreAutograd`, DispatchKey[`AutogradPrivateUse${i}` as 'AutogradPrivateUse1']);
  }
  return table;
})();

// Key names spelled with the renamed PrivateUse1 backend ('mydev', 'AutogradMydev'), set once by
// renamePrivateUse1Backend (core/features/backends.ts).
const privateUse1Aliases = new Map<string, DispatchKey>();

/**
 * Lets the key-name parsers accept the name a third-party backend gave the PrivateUse1 backend, as PyTorch's
 * `parseDispatchKey` does after `rename_privateuse1_backend`: every key name containing `PrivateUse1` is also
 * accepted with the backend's name in its place, as given and with its first letter capitalised (`mydev`,
 * `Mydev`, `AutogradMydev`, `Autogradmydev`, `SparseMydev`, `mydev_PreAutograd`). Built-in names keep their
 * meaning where a spelling would collide with one. Called by `renamePrivateUse1Backend`; the names keep
 * printing as `PrivateUse1`, as in PyTorch since 2.1.
 *
 * @example
 * ```ts
 * import { DispatchKey, parseDispatchKey, setPrivateUse1KeyName } from './dispatch_key.ts';
 * setPrivateUse1KeyName('mydev');
 * parseDispatchKey('AutogradMydev') === DispatchKey.AutogradPrivateUse1; // true
 * ```
 */
export function setPrivateUse1KeyName(name: string): void {
  if (typeof name !== 'string' || !/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new TypeError(`setPrivateUse1KeyName(): expected a lower-case backend name, got ${String(name)}`);
  }
  privateUse1Aliases.clear();
  const spellings = [name, name[0].toUpperCase() + name.slice(1)];
  for (const [keyName, k] of PARSE_TABLE) {
    if (!keyName.includes('PrivateUse1')) continue;
    for (const spelling of spellings) {
      const alias = keyName.replace('PrivateUse1', spelling);
      if (!PARSE_TABLE.has(alias)) privateUse1Aliases.set(alias, k);
    }
  }
}

/**
 * Parses a dispatch key name as PyTorch spells it (including its backward-compatible aliases such as
 * `CatchAll` and `DefaultBackend`), and, once a third-party backend renamed PrivateUse1, the key names spelled
 * with its name (see {@linkcode setPrivateUse1KeyName}).
 *
 * @throws {RuntimeError} `could not parse dispatch key: <name>` for an unknown name (PyTorch's c10::Error).
 * @example
 * ```ts
 * import { DispatchKey, parseDispatchKey } from './dispatch_key.ts';
 * parseDispatchKey('AutogradCPU') === DispatchKey.AutogradCPU; // true
 * ```
 */
export function parseDispatchKey(name: string): DispatchKey {
  const k = PARSE_TABLE.get(name) ?? privateUse1Aliases.get(name);
  if (k === undefined) throw new RuntimeError(`could not parse dispatch key: ${String(name)}`);
  return k;
}

/**
 * All runtime dispatch keys (Undefined, functionality keys that are not per-backend, and every runtime
 * per-backend key), in dispatch-table index order.
 *
 * @example
 * ```ts
 * import { allRuntimeKeys } from './dispatch_key.ts';
 * allRuntimeKeys().length; // 39: the dispatch table size
 * ```
 */
export function allRuntimeKeys(): DispatchKey[] {
  const keys: DispatchKey[] = [DispatchKey.Undefined];
  for (let f = 1; f < NUM_FUNCTIONALITY_KEYS; f++) {
    if (!isPerBackendFunctionalityKey(f)) keys.push(f);
    else for (let b = 1; b <= NUM_BACKENDS; b++) keys.push(toRuntimePerBackendFunctionalityKey(f, b));
  }
  return keys;
}
