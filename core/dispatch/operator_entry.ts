/**
 * OperatorEntry: one operator's registrations and its computed dispatch table.
 *
 * Note [Computed table equals stored table]
 * PyTorch 1.13 refreshes only the slots it believes a registration touches, and that set is too small: after
 * `impl CIA; impl CEA` its stored AutogradCPU slot still holds the CIA kernel although the computed table
 * says fallthrough (reference/SEMANTICS.md §3.2). Switchyard recomputes the whole row on every change. A row
 * is NUM_RUNTIME_ENTRIES cheap computations, so this costs microseconds, and the table a call uses is always
 * the order-independent computed table.
 *
 * @module
 */
import {
  DispatchKey,
  dispatchKeyName,
  isAliasDispatchKey,
  isPerBackendFunctionalityKey,
  NUM_BACKENDS,
  toBackendComponent,
  toFunctionalityKey,
} from './dispatch_key.ts';
import {
  AUTOGRADOTHER_BACKENDS,
  DispatchKeySet,
  dispatchTableIndexForKey,
  FULL_BACKEND_MASK,
  FULL_FUNCTIONALITY_MASK,
  getBackendKeySetFromAutograd,
  isIncludedInAlias,
  keyHi,
  NUM_RUNTIME_ENTRIES,
} from './dispatch_key_set.ts';
import type { FunctionSchema } from './function_schema.ts';
import type { KernelFunction } from './kernel_function.ts';
import type { RowData } from './table_store.ts';

/** A registered kernel with what the dumps print about it. */
export interface AnnotatedKernel {
  /** The kernel. */
  readonly kernel: KernelFunction;
  /** Where it was registered (`registered at file:line`) or a name given at registration. */
  readonly debug: string;
  /** The kernel's own schema when it declared one (printed after `::` in dumps). */
  readonly inferredSchema: FunctionSchema | undefined;
  /** Kernel id in the table store; changes only when the agent attaches to a shared store. */
  readonly id: number;
}

/** Why a slot holds its kernel: PyTorch's provenance tags, plus `missing`. */
export type EntrySource =
  | 'kernel'
  | 'default backend kernel'
  | 'math kernel'
  | 'ambiguous autogradother'
  | 'autograd kernel'
  | 'backend fallback'
  | 'missing';

/** One computed slot. */
export interface ComputedEntry {
  /** The kernel, or undefined when the slot is missing. */
  readonly kernel: AnnotatedKernel | undefined;
  /** Why the slot holds it. */
  readonly source: EntrySource;
}

/** What an entry needs from its dispatcher to compute its table. */
export interface EntryContext {
  /** The backend fallback registered for a table slot, if any. */
  fallbackAt(slot: number): AnnotatedKernel | undefined;
  /** The kernel that reports PyTorch's AutogradOther ambiguity error. */
  readonly ambiguousAutogradOther: AnnotatedKernel;
}

/** A schema registration. */
export interface SchemaRegistration {
  readonly schema: FunctionSchema;
  readonly debug: string;
  readonly aliasAnalysis: string;
}

/** Runtime keys in dump order: Undefined, then every key of FULL in iteration order. */
export const DUMP_KEYS: readonly DispatchKey[] = [DispatchKey.Undefined, ...DispatchKeySet.FULL];

/**
 * What computing a table entry asks about a runtime key, answered once per key: every row computation asks it for
 * every key (Note [Computed table equals stored table]), and each answer is a few lookups in the key layout.
 */
interface KeyFacts {
  readonly key: DispatchKey;
  /** The key's table slot. */
  readonly slot: number;
  /** Covered by CompositeExplicitAutogradNonFunctional, CompositeExplicitAutograd, CompositeImplicitAutograd (all
   * three for Undefined), Autograd. */
  readonly inCEANF: boolean;
  readonly inCEA: boolean;
  readonly inCIA: boolean;
  readonly inAutograd: boolean;
  /** The backend keys an autograd key wraps. */
  readonly autogradBackends: DispatchKeySet;
  /** For a per-backend functionality, the backend's index in the fallthrough masks; -1 otherwise. */
  readonly backend: number;
  /** The key's functionality bit. */
  readonly hi: number;
}

const FACTS_BY_KEY: KeyFacts[] = [];
let dumpFacts: readonly KeyFacts[] | undefined;

function keyFacts(k: DispatchKey): KeyFacts {
  const known = FACTS_BY_KEY[k];
  if (known !== undefined) return known;
  const undef = k === DispatchKey.Undefined;
  const facts: KeyFacts = {
    key: k,
    slot: dispatchTableIndexForKey(k),
    inCEANF: undef || isIncludedInAlias(k, DispatchKey.CompositeExplicitAutogradNonFunctional),
    inCEA: undef || isIncludedInAlias(k, DispatchKey.CompositeExplicitAutograd),
    inCIA: undef || isIncludedInAlias(k, DispatchKey.CompositeImplicitAutograd),
    inAutograd: isIncludedInAlias(k, DispatchKey.Autograd),
    autogradBackends: getBackendKeySetFromAutograd(k),
    backend: !undef && isPerBackendFunctionalityKey(toFunctionalityKey(k)) ? toBackendComponent(k) - 1 : -1,
    hi: undef ? 0 : keyHi(k),
  };
  // Only runtime keys are kept (a table is indexed by them); anything else is answered afresh.
  if (Number.isInteger(k) && k >= 0 && k <= DispatchKey.EndOfRuntimeBackendKeys) FACTS_BY_KEY[k] = facts;
  return facts;
}

function dumpKeyFacts(): readonly KeyFacts[] {
  return dumpFacts ??= DUMP_KEYS.map(keyFacts);
}

/** Registration state of one operator. See Note [Computed table equals stored table]. */
export class OperatorEntry {
  /** The operator's full name (`ns::op.overload`). */
  readonly name: string;
  /** The schema, once defined. */
  schema: SchemaRegistration | undefined;
  /** Kernels per key (runtime or alias); each list is newest first and only its head is active. */
  readonly kernels: Map<DispatchKey, AnnotatedKernel[]> = new Map();
  /** Number of live defs (0 or 1). */
  defCount = 0;
  /** Number of live defs and impls; the entry is dropped when it returns to 0. */
  defAndImplCount = 0;

  /** Creates an empty entry. */
  constructor(name: string) {
    this.name = name;
  }

  /** Whether a non-alias key in `ks` has a kernel (PyTorch's `hasKernelForAnyDispatchKey`). */
  hasKernelForAnyDispatchKey(ks: DispatchKeySet): boolean {
    for (const [k, list] of this.kernels) {
      if (list.length > 0 && !isAliasDispatchKey(k) && ks.has(k)) return true;
    }
    return false;
  }

  #active(k: DispatchKey): AnnotatedKernel | undefined {
    return this.kernels.get(k)?.[0];
  }

  /** PyTorch's `computeDispatchTableEntryWithDebug`: the kernel and provenance for runtime key `k`. */
  computeEntry(ctx: EntryContext, k: DispatchKey): ComputedEntry {
    return this.#entry(ctx, keyFacts(k));
  }

  #entry(ctx: EntryContext, f: KeyFacts): ComputedEntry {
    const k = f.key;
    const direct = this.#active(k);
    if (direct !== undefined) return { kernel: direct, source: 'kernel' };

    if (f.inCEANF) {
      const ceanf = this.#active(DispatchKey.CompositeExplicitAutogradNonFunctional);
      if (ceanf !== undefined) return { kernel: ceanf, source: 'default backend kernel' };
    }
    const cea = this.#active(DispatchKey.CompositeExplicitAutograd);
    if (f.inCEA && cea !== undefined) return { kernel: cea, source: 'default backend kernel' };
    if (f.inCIA) {
      const cia = this.#active(DispatchKey.CompositeImplicitAutograd);
      if (cia !== undefined) {
        if (k === DispatchKey.AutogradOther && this.hasKernelForAnyDispatchKey(AUTOGRADOTHER_BACKENDS)) {
          return { kernel: ctx.ambiguousAutogradOther, source: 'ambiguous autogradother' };
        }
        // A backend kernel for this autograd key's backend, or any CEA kernel (but not a CEANonFunctional one),
        // means the composite decomposition must not hide it: autograd then uses the Autograd alias kernel or
        // falls through to the backend.
        const hasBackendKernel = cea !== undefined || this.hasKernelForAnyDispatchKey(f.autogradBackends);
        if (!hasBackendKernel) return { kernel: cia, source: 'math kernel' };
      }
    }
    if (f.inAutograd) {
      const autograd = this.#active(DispatchKey.Autograd);
      if (autograd !== undefined) return { kernel: autograd, source: 'autograd kernel' };
    }
    const fallback = ctx.fallbackAt(f.slot);
    if (fallback !== undefined) return { kernel: fallback, source: 'backend fallback' };
    return { kernel: undefined, source: 'missing' };
  }

  /** The whole computed row: kernel ids per slot and the non-fallthrough masks. */
  computeRow(ctx: EntryContext): RowData {
    const ids = new Int32Array(NUM_RUNTIME_ENTRIES);
    const perBackendHi = new Array<number>(NUM_BACKENDS).fill(FULL_FUNCTIONALITY_MASK);
    for (const f of dumpKeyFacts()) {
      const kernel = this.#entry(ctx, f).kernel;
      ids[f.slot] = kernel?.id ?? 0;
      if (f.key === DispatchKey.Undefined || kernel === undefined || !kernel.kernel.isFallthrough) continue;
      // Note [Fallthrough masks]: a fallthrough slot clears its functionality bit from the mask used for
      // calls whose arguments carry that backend (all backends for a functionality that is not per-backend).
      if (f.backend >= 0) {
        perBackendHi[f.backend] &= ~f.hi;
      } else {
        for (let i = 0; i < NUM_BACKENDS; i++) perBackendHi[i] &= ~f.hi;
      }
    }
    const requiresPerBackend = perBackendHi.some((m) => m !== perBackendHi[0]);
    return {
      ids,
      nonFallthrough: [perBackendHi[0], FULL_BACKEND_MASK],
      perBackend: perBackendHi.map((hi) => [hi, FULL_BACKEND_MASK] as const),
      requiresPerBackend,
    };
  }

  /** Structured computed table in dump order, valid slots only. */
  computedTable(ctx: EntryContext): Array<{ key: string; kernel: string; source: EntrySource; fallthrough: boolean }> {
    const rows = [];
    for (const k of DUMP_KEYS) {
      const entry = this.computeEntry(ctx, k);
      if (entry.kernel === undefined) continue;
      rows.push({
        key: dispatchKeyName(k),
        kernel: entry.kernel.debug,
        source: entry.source,
        fallthrough: entry.kernel.kernel.isFallthrough,
      });
    }
    return rows;
  }

  /** PyTorch's `dumpComputedTable()` text. */
  dumpComputedTable(ctx: EntryContext): string {
    return this.computedTable(ctx)
      .map((r) => `${r.key}: ${r.fallthrough ? 'fallthrough ' : ''}${r.kernel} [${r.source}]\n`)
      .join('');
  }

  /** PyTorch's `dumpState()` text: registrations, not derived entries; backend fallbacks are not shown. */
  dumpState(): string {
    let out = `name: ${this.name}\n`;
    if (this.schema !== undefined) {
      out += `schema: ${this.schema.schema}\n`;
      out += `debug: ${this.schema.debug}\n`;
      out += `alias analysis kind: ${this.schema.aliasAnalysis}\n`;
    } else {
      out += 'schema: (none)\n';
    }
    for (let k = 0; k <= DispatchKey.EndOfAliasKeys; k++) {
      const list = this.kernels.get(k);
      if (list === undefined) continue;
      list.forEach((kernel, i) => {
        out += `${dispatchKeyName(k)}${isAliasDispatchKey(k) ? '[alias]' : ''}${i > 0 ? ' (inactive)' : ''}: ` +
          `${kernel.debug} :: ${signatureText(kernel.inferredSchema)} [ ${kernel.kernel.dumpState()}]\n`;
      });
    }
    return out;
  }
}

/** A kernel's declared schema without the operator name, as dumps print it: `(Tensor _0) -> Tensor _0`. */
function signatureText(schema: FunctionSchema | undefined): string {
  if (schema === undefined) return '(none)';
  const text = schema.toString();
  return text.slice(text.indexOf('('));
}
