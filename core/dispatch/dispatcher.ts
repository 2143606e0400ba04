/**
 * The Dispatcher: operator registry, backend fallbacks, the table store, and the calling conventions.
 *
 * @module
 */
import { makeStubs, type OperatorState, reportDispatchError, schemaMismatch } from './dispatcher_internals.ts';
import { DispatchKey, dispatchKeyName, isAliasDispatchKey, isRuntimeDispatchKey } from './dispatch_key.ts';
import {
  DispatchKeySet,
  dispatchTableIndex,
  dispatchTableIndexForKey,
  NUM_RUNTIME_ENTRIES,
} from './dispatch_key_set.ts';
import { RuntimeError } from './errors.ts';
import type { FunctionSchema } from './function_schema.ts';
import { boxArgumentsInPlace, isDispatchKeySource, IValue, type Stack, type ValueValidator } from './ivalue.ts';
import { boxingError, checkArguments, checkStack } from './boxed_checks.ts';
import { type BoxedKernel, KernelFunction, popReturns, type UnboxedKernel } from './kernel_function.ts';
import { localKeys, watchIncludedKeys } from './local_dispatch_key_set.ts';
import { type AnnotatedKernel, type EntryContext, OperatorEntry, type SchemaRegistration } from './operator_entry.ts';
import {
  type ComputedTableRow,
  handleInternal,
  OperatorHandle,
  type OperatorHost,
  setHandleSchema,
} from './operator_handle.ts';
import {
  ROW_ENTRIES,
  ROW_NFT_HI,
  ROW_PER_BACKEND,
  ROW_PER_BACKEND_FLAG,
  type RowData,
  type RowRef,
  TableStore,
} from './table_store.ts';
import { type DispatchTrace, readTraceSetting } from './trace.ts';
import { closeTornRows, SharedTableRegistry, type SharedTables } from './shared_tables.ts';

/**
 * A registration that can be undone. Disposing it (or `using` it) deregisters; disposing twice is a no-op.
 *
 * @example
 * ```ts
 * import { Dispatcher } from './dispatcher.ts';
 * const d = new Dispatcher();
 * const handle = d.registerLibrary('mine', 'registered at demo');
 * handle.dispose();
 * ```
 */
export class RegistrationHandle implements Disposable {
  #undo: (() => void) | undefined;
  /** Wraps the undo action. */
  constructor(undo: () => void) {
    this.#undo = undo;
  }
  /** Deregisters. */
  dispose(): void {
    const undo = this.#undo;
    this.#undo = undefined;
    undo?.();
  }
  /** Deregisters. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** Options of {@linkcode Dispatcher.registerImpl}. */
export interface ImplOptions {
  /** Debug string shown in dumps (default: `registered at <unknown>`). */
  readonly debug?: string;
  /** The kernel's own schema, checked against the operator's def (PyTorch's inferred schema). */
  readonly inferredSchema?: FunctionSchema;
  /**
   * The kernel's stable name across agents (Note [Shared table store] in shared_tables.ts), the name an agent
   * that did not register it finds it under (`defineKernel`); default `op@Key:debug`.
   */
  readonly kernelName?: string;
}

/** Options of {@linkcode Dispatcher.registerDeferredDef}. */
export interface DeferredDefOptions {
  /** PyTorch's alias analysis kind (default `FROM_SCHEMA`). */
  readonly aliasAnalysis?: string;
  /**
   * The schema's number of arguments, if known without parsing (lets kernels be checked without a parse), or a
   * function that counts them without parsing, called when a kernel's check first needs the count.
   */
  readonly argumentCount?: number | (() => number | undefined);
}

/** Options of {@linkcode Dispatcher}'s constructor. */
export interface DispatcherOptions {
  /** Register PyTorch's framework fallthrough fallbacks (default true). */
  readonly frameworkFallbacks?: boolean;
  /** Where warnings go (default `console.warn`). */
  readonly onWarning?: (message: string) => void;
  /** Where the dispatch trace goes (default `console.error`). */
  readonly traceSink?: (line: string) => void;
  /** Turn the dispatch trace on or off (default: the `SWITCHYARD_SHOW_DISPATCH_TRACE` environment variable). */
  readonly trace?: boolean;
}

/**
 * Keys whose framework fallback is a fallthrough, as in PyTorch 1.13 (BackendSelect, ADInplaceOrView,
 * AutogradOther, the autograd keys of the real devices, Autocast, VmapMode). AutogradMeta and the
 * PrivateUse autograd keys have none, so an operator needs an autograd kernel for them, as in PyTorch.
 */
export const FRAMEWORK_FALLTHROUGH_KEYS: readonly DispatchKey[] = [
  DispatchKey.BackendSelect,
  DispatchKey.ADInplaceOrView,
  DispatchKey.AutogradOther,
  DispatchKey.AutogradCPU,
  DispatchKey.AutogradWebGPU,
  DispatchKey.AutocastCPU,
  DispatchKey.AutocastWebGPU,
  DispatchKey.VmapMode,
];

let defaultDispatcher: Dispatcher | undefined;

/** The fallthrough kernel's boxed function (what a fallthrough slot reached by an explicit keyset runs). */
const FALLTHROUGH_BOXED = KernelFunction.fallthrough().boxed;

/** The row of a pending operator that has none yet (it gets one when it materializes). */
const UNALLOCATED: RowRef = Object.freeze({ row: -1, words: new Int32Array(0), base: 0 });

/**
 * A group of registrations a dispatcher runs when they are first needed (Note [Deferred registrations]), from
 * {@linkcode Dispatcher.deferRegistrations}.
 *
 * @example
 * ```ts
 * import { Dispatcher, DispatchKey } from '../../mod.ts';
 * const d = new Dispatcher();
 * const group = d.deferRegistrations('my batching rules', [DispatchKey.Batched], () => {});
 * group.pending; // true
 * group.run(); // runs now (what the first need of it would do)
 * group.pending; // false
 * ```
 */
export interface DeferredRegistrations {
  /** A name for dumps and errors (`Dispatcher.pendingRegistrations()` lists the pending ones by name). */
  readonly name: string;
  /** The runtime keys it registers at. */
  readonly keys: readonly DispatchKey[];
  /** Whether it has neither run nor been cancelled. */
  readonly pending: boolean;
  /** Runs the registrations now, if still pending (idempotent). */
  run(): void;
  /** Drops the registrations without running them, if still pending (a later `run` does nothing). */
  cancel(): void;
}

class DeferredGroup implements DeferredRegistrations {
  readonly name: string;
  readonly keys: readonly DispatchKey[];
  /** The keys as keyset words (what the include-set watch compares). */
  readonly hi: number;
  readonly lo: number;
  #register: (() => void) | undefined;
  readonly #detach: (group: DeferredGroup) => void;
  constructor(name: string, keys: readonly DispatchKey[], register: () => void, detach: (g: DeferredGroup) => void) {
    this.name = name;
    this.keys = keys;
    const ks = DispatchKeySet.of(...keys);
    this.hi = ks.hi;
    this.lo = ks.lo;
    this.#register = register;
    this.#detach = detach;
  }
  get pending(): boolean {
    return this.#register !== undefined;
  }
  run(): void {
    const register = this.#register;
    if (register === undefined) return;
    this.cancel(); // first: its own registrations at its keys must not run it again
    register();
  }
  cancel(): void {
    if (this.#register === undefined) return;
    this.#register = undefined;
    this.#detach(this);
  }
}

/**
 * The operator registry and router. Fresh instances are independent (useful in tests and tools); the
 * library's operators live in {@linkcode Dispatcher.singleton}.
 *
 * @example
 * ```ts
 * import { Dispatcher, Library, DispatchKey } from '../../mod.ts';
 * const d = new Dispatcher();
 * using lib = new Library('ex', 'DEF', undefined, { dispatcher: d });
 * const op = lib.define('ex::inc(int x) -> int');
 * lib.impl('inc', (_hi: number, _lo: number, x: number) => x + 1, DispatchKey.CompositeImplicitAutograd);
 * op.call(1); // 2
 * ```
 */
export class Dispatcher implements OperatorHost, EntryContext {
  readonly #ops = new Map<string, OperatorState>();
  readonly #libraries = new Map<string, string>();
  readonly #fallbacks: Array<AnnotatedKernel | undefined> = new Array(NUM_RUNTIME_ENTRIES).fill(undefined);
  // Kernel registry: id -> function. Id 0 is "missing"; freed ids are reused.
  readonly #unboxed: Array<UnboxedKernel | undefined> = [undefined];
  readonly #boxed: Array<BoxedKernel | undefined> = [undefined];
  readonly #kernelNames: string[] = ['missing'];
  // Stable kernel names by id (Note [Shared table store]); once shared, the live ones of this agent too.
  readonly #stableNames: string[] = ['missing'];
  readonly #liveStable = new Set<string>();
  #resolver: ((name: string) => UnboxedKernel | undefined) | undefined;
  readonly #freeIds: number[] = [];
  readonly #store = new TableStore();
  readonly #retiredRows = new Map<string, RowRef>();
  readonly #trace: DispatchTrace;
  readonly #onWarning: (message: string) => void;
  /** Whether new operators materialize at once (after `tableStore` was read). */
  #eager = false;
  /** The operators that are not pending (Note [Operators materialize on first use]): what a fallback updates. */
  readonly #materialized = new Set<OperatorState>();
  /** Registration groups not run yet, oldest first (Note [Deferred registrations]). */
  readonly #deferred: DeferredGroup[] = [];
  #unwatch: (() => void) | undefined;
  /** PyTorch's ambiguity kernel for AutogradOther (see {@linkcode OperatorEntry.computeEntry}). */
  readonly ambiguousAutogradOther: AnnotatedKernel;

  /** Creates an empty dispatcher (with the framework fallbacks unless disabled). */
  constructor(options: DispatcherOptions = {}) {
    this.#onWarning = options.onWarning ?? ((m) => console.warn(m));
    this.#trace = readTraceSetting(
      options.trace,
      options.traceSink ?? ((line) => console.error(line)),
      this.#onWarning,
    );
    this.ambiguousAutogradOther = this.#annotate(
      KernelFunction.fromBoxed((op) => {
        throw new RuntimeError(
          `${op.name} has kernels registered to both CompositeImplicitAutograd and a backend mapped to ` +
            'AutogradOther. This makes the backend kernel unreachable; the dispatcher will always prefer the ' +
            'CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther kernel]). If you want to ' +
            'override CompositeImplicitAutograd, please open an issue to request a dedicated Autograd dispatch key ' +
            'for the backend.',
        );
      }),
      'ambiguous_autogradother',
      undefined,
      'ambiguous_autogradother',
    );
    if (options.frameworkFallbacks ?? true) {
      for (const k of FRAMEWORK_FALLTHROUGH_KEYS) {
        this.registerFallback(k, KernelFunction.fallthrough(), 'registered in switchyard framework');
      }
    }
  }

  /** The dispatcher every library operator is registered with. */
  static singleton(): Dispatcher {
    return defaultDispatcher ??= new Dispatcher();
  }

  /**
   * The SharedArrayBuffer table store (what an attached Worker reads). Reading it materializes every operator and
   * makes later registrations write their rows at once (Note [Operators materialize on first use]), so a reader of
   * the store always sees every registered operator's row.
   */
  get tableStore(): TableStore {
    this.#materializeFromNowOn();
    return this.#store;
  }

  /**
   * Materializes one operator now: computes and writes its row and gives its handle its call stubs (Note [Operators
   * materialize on first use]). Reading a pending handle's `call`, `callUnchecked` or `redispatch` does it.
   *
   * @example
   * ```ts
   * import { Dispatcher, Library } from '../../mod.ts';
   * const d = new Dispatcher();
   * using lib = new Library('matex', 'DEF', undefined, { dispatcher: d });
   * d.materialize(lib.define('matex::f(int x) -> int'));
   * ```
   */
  materialize(op: OperatorHandle): void {
    const state = this.#stateOrUndefined(op);
    if (state !== undefined && state.pending && !state.dead) this.#materialize(state);
  }

  /**
   * Materializes every registered operator now: writes its computed row into the table store and builds its call
   * stubs (Note [Operators materialize on first use]). Idempotent; tools that time calls may want it first.
   */
  materializeAll(): void {
    this.#runAllDeferred();
    this.#materializeAll();
  }

  /** Whether calls print a dispatch trace. */
  get traceEnabled(): boolean {
    return this.#trace.enabled;
  }
  /** Switches the dispatch trace on or off; regenerates every operator's call stubs. */
  set traceEnabled(on: boolean) {
    if (this.#trace.enabled === on) return;
    this.#trace.enabled = on;
    for (const state of this.#materialized) this.#rebuildStubs(state);
  }

  // ---- lookup ----

  /** The operator with a schema of that name (`ns::op` or `ns::op.overload`), if defined. */
  findSchema(name: string, overloadName?: string): OperatorHandle | undefined {
    const state = this.#ops.get(fullName(name, overloadName));
    return state?.entry.schema !== undefined ? state.handle : undefined;
  }

  /** Like {@linkcode findSchema} but throws PyTorch's error when the operator is not defined. */
  findSchemaOrThrow(name: string, overloadName?: string): OperatorHandle {
    const op = this.findSchema(name, overloadName);
    if (op === undefined) {
      const full = fullName(name, overloadName);
      const exists = this.#ops.has(full);
      throw new RuntimeError(
        exists
          ? `Could not find schema for ${full} but we found an implementation; did you forget to def() the operator?`
          : `Could not find schema for ${full}`,
      );
    }
    return op;
  }

  /** The operator of that name, whether or not it has a schema yet (an impl creates it too). */
  findOp(name: string, overloadName?: string): OperatorHandle | undefined {
    return this.#ops.get(fullName(name, overloadName))?.handle;
  }

  /** Names of every registered operator. */
  operatorNames(): string[] {
    return [...this.#ops.keys()];
  }

  // ---- registration ----

  /** Claims a namespace for one DEF library (PyTorch's `registerLibrary`). */
  registerLibrary(ns: string, debug: string): RegistrationHandle {
    const previous = this.#libraries.get(ns);
    if (previous !== undefined) {
      throw new RuntimeError(
        `Only a single TORCH_LIBRARY can be used to register the namespace ${ns}; please put all of your ` +
          'definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, consider ' +
          'using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define operators for a ' +
          'single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly indicate ' +
          `this.  Previous registration of TORCH_LIBRARY was ${previous}; latest registration was ${debug}`,
      );
    }
    this.#libraries.set(ns, debug);
    return new RegistrationHandle(() => this.#libraries.delete(ns));
  }

  /** Defines an operator's schema (PyTorch's `registerDef`). */
  registerDef(schema: FunctionSchema, debug: string, aliasAnalysis = 'FROM_SCHEMA'): RegistrationHandle {
    return this.#registerDef(schema.fullName, new Registration(schema, debug, aliasAnalysis, undefined));
  }

  /**
   * Defines an operator whose schema is parsed when first needed (Note [Operators materialize on first use]):
   * `fullName` must be the name `parse()` returns a schema for (`ns::op.overload`). For declarations known to be
   * valid, such as the library's own: a malformed one would throw where its schema is first read, not here.
   * `options.argumentCount`, when given, must be the schema's number of arguments: kernels are then checked
   * against it without parsing (only a kernel that fails it, or one that declares its own schema, parses).
   *
   * @example
   * ```ts
   * import { Dispatcher, parseSchema } from '../../mod.ts';
   * const d = new Dispatcher();
   * d.registerDeferredDef('ex::neg', () => parseSchema('ex::neg(int x) -> int'), 'registered at demo');
   * d.findSchema('ex::neg')!.schema!.arguments.length; // 1, parsed now
   * ```
   */
  registerDeferredDef(
    fullName: string,
    parse: () => FunctionSchema,
    debug: string,
    options: DeferredDefOptions = {},
  ): RegistrationHandle {
    const registration = new Registration(
      parse,
      debug,
      options.aliasAnalysis ?? 'FROM_SCHEMA',
      options.argumentCount,
    );
    return this.#registerDef(fullName, registration);
  }

  #registerDef(name: string, registration: SchemaRegistration): RegistrationHandle {
    const state = this.#findOrRegisterName(name);
    if (state.deferred !== undefined) this.#runOperatorDeferred(state);
    const entry = state.entry;
    const debug = registration.debug;
    if (entry.defCount !== 0) {
      throw new RuntimeError(
        `Tried to register an operator (${registration.schema}) with the same name and overload name multiple ` +
          "times. Each overload's schema should only be registered with a single call to def(). Duplicate " +
          `registration: ${debug}. Original registration: ${entry.schema?.debug}`,
      );
    }
    for (const list of entry.kernels.values()) {
      for (const kernel of list) {
        if (mayMismatch(kernel, registration)) this.#checkKernelSchema(state, registration.schema, debug, kernel);
      }
    }
    entry.schema = registration;
    entry.defCount++;
    entry.defAndImplCount++;
    this.#rebuildStubs(state);
    return new RegistrationHandle(() => {
      if (state.deferred !== undefined) this.#runOperatorDeferred(state); // as if they had been made at once
      entry.defCount--;
      entry.defAndImplCount--;
      if (entry.defCount === 0) entry.schema = undefined;
      if (!this.#cleanup(state)) this.#rebuildStubs(state);
    });
  }

  /**
   * Registers a kernel for an operator at a runtime or alias key; `key` undefined is the catch-all, stored
   * as CompositeImplicitAutograd (PyTorch's `registerImpl`). The newest registration for a key wins;
   * disposing it restores the previous one.
   */
  registerImpl(
    name: string,
    key: DispatchKey | undefined,
    kernel: KernelFunction,
    options: ImplOptions = {},
  ): RegistrationHandle {
    if (key !== undefined && !isRuntimeDispatchKey(key) && !isAliasDispatchKey(key)) {
      throw new RuntimeError(
        `registerImpl: ${dispatchKeyName(key)} is not a dispatch key kernels can be registered at`,
      );
    }
    const stored = key ?? DispatchKey.CompositeImplicitAutograd;
    // The newest registration at a key wins: deferred ones at this key are older than this one (Note [Deferred
    // registrations]).
    if (this.#deferred.length !== 0) this.#runDeferredAt(stored);
    const debug = options.debug ?? 'registered at <unknown>';
    const state = this.#findOrRegisterName(name);
    // Older than this one, where they register at its key (Note [Deferred registrations]).
    if (state.deferred !== undefined && defersAt(state, stored)) this.#runOperatorDeferred(state);
    const entry = state.entry;
    const stable = options.kernelName ?? `${name}@${key === undefined ? 'CatchAll' : dispatchKeyName(key)}:${debug}`;
    const annotated = this.#annotate(kernel, debug, options.inferredSchema, stable);
    try {
      if (entry.schema !== undefined && mayMismatch(annotated, entry.schema)) {
        this.#checkKernelSchema(state, entry.schema.schema, entry.schema.debug, annotated);
      }
    } catch (e) {
      this.#releaseId(annotated.id);
      this.#cleanup(state);
      throw e;
    }
    let list = entry.kernels.get(stored);
    if (list === undefined) {
      list = [];
      entry.kernels.set(stored, list);
    } else if (list.length > 0) {
      try {
        this.#onWarning(
          'Overriding a previously registered kernel for the same operator and the same dispatch key\n' +
            `  operator: ${entry.schema?.schema ?? name}\n` +
            `    ${entry.schema?.debug ?? 'no debug info'}\n` +
            `  dispatch key: ${key === undefined ? '(catch all)' : dispatchKeyName(key)}\n` +
            `  previous kernel: ${list[0].debug}\n` +
            `       new kernel: ${debug}`,
        );
      } catch (e) {
        // A warning handler that raises (warnings as errors) refuses the registration: nothing is kept.
        this.#releaseId(annotated.id);
        throw e;
      }
    }
    list.unshift(annotated);
    entry.defAndImplCount++;
    this.#updateTable(state);
    return new RegistrationHandle(() => {
      const current = entry.kernels.get(stored)!;
      current.splice(current.indexOf(annotated), 1);
      if (current.length === 0) entry.kernels.delete(stored);
      this.#releaseId(annotated.id);
      entry.defAndImplCount--;
      if (!this.#cleanup(state)) this.#updateTable(state);
    });
  }

  /** Registers a backend fallback for one runtime key, for every operator (PyTorch's `registerFallback`). */
  registerFallback(key: DispatchKey, kernel: KernelFunction, debug: string): RegistrationHandle {
    if (!isRuntimeDispatchKey(key) || key === DispatchKey.Undefined) {
      throw new RuntimeError(`registerFallback: ${dispatchKeyName(key)} is not a runtime dispatch key`);
    }
    if (this.#deferred.length !== 0) this.#runDeferredAt(key);
    const slot = dispatchTableIndexForKey(key);
    const previous = this.#fallbacks[slot];
    if (previous !== undefined) {
      throw new RuntimeError(
        `Tried to register multiple backend fallbacks for the same dispatch key ${dispatchKeyName(key)}; ` +
          `previous registration ${previous.debug}, new registration ${debug}`,
      );
    }
    const annotated = this.#annotate(kernel, debug, undefined, `fallback@${dispatchKeyName(key)}:${debug}`);
    this.#setKernel(annotated); // a deferred fallback is built now: every operator may use it
    this.#fallbacks[slot] = annotated;
    // Pending operators compute their rows when they materialize, with the fallbacks of that time.
    for (const state of this.#materialized) this.#updateTable(state);
    return new RegistrationHandle(() => {
      this.#fallbacks[slot] = undefined;
      this.#releaseId(annotated.id);
      for (const state of this.#materialized) this.#updateTable(state);
    });
  }

  // Note [Deferred registrations]
  // Some feature groups register hundreds of kernels that most programs never reach: vmap's batching rules at
  // Batched and its random kernels at VmapMode are ~600 registrations at import, for keys that only `vmap` puts on
  // tensors and in the include set. `deferRegistrations(name, keys, register)` records such a group instead of running
  // it: `register` runs, once, when the first thing that could tell the difference happens, and never depends on the
  // order of what it registers with what others registered in between, because it runs *before* each of these:
  //  - a registration at one of its keys (registerImpl with that stored key, registerFallback): PyTorch's newest
  //    registration wins within a key, so a user's kernel at the key must be newer than the library's, as it is when
  //    the library registers at import; the group's kernels at other keys are not ordered against it (the computed
  //    table does not depend on the order across keys, Note [Computed table equals stored table]);
  //  - a dispatch that lands on a slot without a kernel (the slow path; for Batched, whose fallback is in the group),
  //    or on a fallthrough through an explicit keyset (redispatch): the group runs and the slot is looked up again,
  //    so a call reaching one of its keys gets the kernel it would have had; and any of its keys joining the include
  //    set (core/dispatch/local_dispatch_key_set.ts), since a key whose fallback is a fallthrough (VmapMode) would
  //    otherwise be masked out of a call's keyset rather than land on an empty slot;
  //  - every inspection of registrations or tables: dumpState, dumpComputedTable, computedTable,
  //    hasKernelForDispatchKey and callBoxedForDispatchKey (at its keys), checkInvariants, kernelName,
  //    materializeAll, and every reader of the store as a whole (tableStore, shareTables, attachTables, so Workers
  //    see the group's rows: Note [Shared table store]); once the store is shared, a new group runs at once.
  // So a program that never reaches the keys never runs the group, and one that does observes what eager
  // registration gives: the same dumps, tables, warnings and winner of every key. Kernel ids and row numbers may
  // differ (handed out in registration and materialization order), which no dump shows and shared stores map by
  // stable name. A group may only register kernels and fallbacks (at its keys) for operators that exist when it is
  // deferred: lookups by name (findOp, findSchema, operatorNames) do not run it. `cancel()` drops a group unrun (a
  // feature's deregistration helper, so that a later need does not register what was removed); `run()` runs it now
  // (the feature's own entry points, which know they need it). `pendingRegistrations()` lists the groups still
  // pending.
  //
  // The same idea per operator: `deferOperatorRegistrations(op, register)` holds registrations of one pending
  // operator's own kernels (registerOperators' Meta, composite, ADInplaceOrView and Autograd kernels, the CPU
  // backend's kernel; ~1200 registrations at import for ~290 operators of which a program uses a few), with the keys
  // they register at. They run before the operator materializes (so its first row and stubs include them), before a
  // def for it and any registration for it at one of those keys (so a user's kernel there is newer; one at another
  // key, such as vmap's batching rules at Batched, is not ordered against them, and the first vmap does not register
  // every operator's kernels), before its dumpState and hasKernelForDispatchKey at those keys (the other inspections
  // materialize it), and with every operator when the store is read as a whole (materializeAll), so again nothing
  // can tell them from registrations made at import.

  /**
   * Defers a group of registrations at runtime `keys` until first needed (Note [Deferred registrations]): `register`
   * runs once, before any registration at one of `keys`, any dispatch that would reach one, any of them joining the
   * include set, and any inspection of the tables. It must register only at `keys`, for existing operators.
   *
   * @example
   * ```ts
   * import { Dispatcher, DispatchKey, Library } from '../../mod.ts';
   * const d = new Dispatcher();
   * using def = new Library('dex', 'DEF', undefined, { dispatcher: d });
   * const op = def.define('dex::f(Tensor x) -> Tensor');
   * const rules = new Library('dex', 'IMPL', DispatchKey.Batched, { dispatcher: d });
   * const rule = (_h: number, _l: number, x: unknown) => x;
   * d.deferRegistrations('dex rules', [DispatchKey.Batched], () => rules.impl('f', rule));
   * d.pendingRegistrations(); // ['dex rules']
   * op.dump(); // runs the group first: the dump shows the Batched kernel
   * d.pendingRegistrations(); // []
   * ```
   */
  deferRegistrations(name: string, keys: readonly DispatchKey[], register: () => void): DeferredRegistrations {
    if (typeof name !== 'string') throw new TypeError(`deferRegistrations: expected a name, got ${typeof name}`);
    if (typeof register !== 'function') {
      throw new TypeError(`deferRegistrations: expected a function that registers, got ${typeof register}`);
    }
    if (!Array.isArray(keys) || keys.length === 0) {
      throw new TypeError('deferRegistrations: expected a non-empty array of the dispatch keys it registers at');
    }
    for (const k of keys) {
      if (typeof k !== 'number' || !isRuntimeDispatchKey(k) || k === DispatchKey.Undefined) {
        throw new RuntimeError(
          `deferRegistrations: ${
            (typeof k === 'number' && dispatchKeyName(k)) || String(k)
          } is not a runtime dispatch key`,
        );
      }
    }
    const group = new DeferredGroup(name, Object.freeze([...keys]), register, (g) => this.#dropDeferred(g));
    this.#deferred.push(group);
    this.#watchDeferred();
    if (this.#eager) group.run(); // the store is read as a whole (shared): nothing may be missing from it
    return group;
  }

  /** Names of the deferred registration groups that have not run yet (Note [Deferred registrations]). */
  pendingRegistrations(): string[] {
    return this.#deferred.map((g) => g.name);
  }

  /** Runs every pending deferred registration group now, oldest first (Note [Deferred registrations]). */
  runDeferredRegistrations(): void {
    this.#runAllDeferred();
  }

  /**
   * Defers registrations for one pending operator (its own kernels) until the operator is first needed (Note
   * [Deferred registrations]): `register` runs before the operator materializes (its first call, a boxed call or a
   * table computation), before a def or any registration for it at one of `keys` (the keys it registers at, as
   * `registerImpl` stores them: the catch-all is CompositeImplicitAutograd; default: any key), before its dump or
   * `hasKernelForDispatchKey` at one of `keys`, and before the store is read as a whole. It must register only
   * kernels of this operator, at `keys`. For an operator that is not pending (already materialized, or the store is
   * shared) it runs at once.
   *
   * @example
   * ```ts
   * import { Dispatcher, DispatchKey, Library } from '../../mod.ts';
   * const d = new Dispatcher();
   * using def = new Library('dox', 'DEF', undefined, { dispatcher: d });
   * const op = def.defineDeferred('dox::f(int x) -> int');
   * const impl = new Library('dox', 'IMPL', DispatchKey.CompositeImplicitAutograd, { dispatcher: d });
   * d.deferOperatorRegistrations(op, () => impl.impl('f', (_h: number, _l: number, x: number) => x + 1));
   * op.call(1); // 2: the kernel was registered as the operator materialized
   * ```
   */
  deferOperatorRegistrations(op: OperatorHandle, register: () => void, keys?: readonly DispatchKey[]): void {
    if (typeof register !== 'function') {
      throw new TypeError(`deferOperatorRegistrations: expected a function that registers, got ${typeof register}`);
    }
    let low = -1, high = -1;
    if (keys !== undefined) {
      // Callers pass one frozen array for all their operators: its bits are worked out once.
      let bits = keyBits.get(keys);
      if (bits === undefined) {
        if (!Array.isArray(keys)) {
          throw new TypeError('deferOperatorRegistrations: keys must be an array of dispatch keys');
        }
        bits = [0, 0];
        for (const k of keys) {
          if (!isRuntimeDispatchKey(k) && !isAliasDispatchKey(k)) {
            throw new RuntimeError(
              `deferOperatorRegistrations: ${String(k)} is not a dispatch key kernels are stored at`,
            );
          }
          if (k < 32) bits[0] |= 1 << k;
          else bits[1] |= 1 << (k - 32);
        }
        if (Object.isFrozen(keys)) keyBits.set(keys, bits);
      }
      low = bits[0];
      high = bits[1];
    }
    const state = this.#state(op, false);
    if (!state.pending) return register();
    (state.deferred ??= []).push(register);
    state.deferredLow |= low;
    state.deferredHigh |= high;
  }

  /** Runs an operator's deferred registrations (Note [Deferred registrations]). */
  #runOperatorDeferred(state: OperatorState): void {
    const list = state.deferred!;
    state.deferred = undefined; // first: their own registrations for the operator must not run them again
    state.deferredLow = state.deferredHigh = 0;
    for (const register of list) register();
  }

  #runAllDeferred(): void {
    while (this.#deferred.length !== 0) this.#deferred[0].run();
  }

  /** Runs the pending groups that register at `key`. */
  #runDeferredAt(key: DispatchKey): void {
    for (const group of this.#deferred.slice()) if (group.keys.includes(key)) group.run();
  }

  /**
   * A dispatch with this keyset found no kernel (or a fallthrough): runs the groups that register at its key and
   * says whether one ran (the slot is then worth a second look); otherwise, for a missing kernel (`failing`), runs
   * them all, for the error's dump of the table.
   */
  #runDeferredFor(hi: number, lo: number, failing: boolean): boolean {
    if (this.#deferred.length === 0) return false;
    const key = new DispatchKeySet(hi, lo).highestPriorityTypeId();
    const before = this.#deferred.length;
    this.#runDeferredAt(key);
    if (this.#deferred.length !== before) return true;
    if (failing) this.#runAllDeferred();
    return false;
  }

  #dropDeferred(group: DeferredGroup): void {
    const at = this.#deferred.indexOf(group);
    if (at >= 0) this.#deferred.splice(at, 1);
    this.#watchDeferred();
  }

  /** Watches the include set for the pending groups' keys (what `includeKeys` adds may reach them). */
  #watchDeferred(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#deferred.length === 0) return;
    let hi = 0, lo = 0;
    for (const group of this.#deferred) {
      hi |= group.hi;
      lo |= group.lo;
    }
    this.#unwatch = watchIncludedKeys(hi, lo, (h, l) => this.#runIncluded(h, l));
  }

  #runIncluded(hi: number, lo: number): void {
    for (const group of this.#deferred.slice()) if ((group.hi & hi) !== 0 || (group.lo & lo) !== 0) group.run();
  }

  /** The backend fallback of a table slot (part of {@linkcode EntryContext}). */
  fallbackAt(slot: number): AnnotatedKernel | undefined {
    return this.#fallbacks[slot];
  }

  // ---- calling conventions ----

  #validator: ValueValidator | undefined;

  /**
   * Lets the dispatcher check what it cannot judge itself: whether an object with keyset words is a usable
   * tensor, and the opaque values (ScalarType, Device, ...). With one, `op.call(...)` checks its arguments
   * against the schema too. The layer that defines tensors installs it on its dispatcher; without one, any
   * object with keyset words is a tensor and `op.call` trusts its arguments.
   */
  setValueValidator(check: ValueValidator | undefined): void {
    this.#validator = check;
    // `op.call` checks its arguments exactly when there is a validator (core/dispatch/checked_call.ts). Pending
    // operators get their stubs, with the validator of that time, when they materialize.
    for (const state of this.#materialized) this.#rebuildStubs(state);
  }

  /**
   * Unboxed call with the arguments checked against the schema (PyTorch's boxing errors): the checked form of
   * `op.call(...args)`, which trusts its arguments.
   */
  call(op: OperatorHandle, ...args: unknown[]): unknown {
    const schema = this.#state(op).entry.schema?.schema;
    return schema === undefined ? op.call(...args) : op.call(...checkArguments(schema, args, this.#validator));
  }

  /** Boxed call: the op's arguments are the top of `stack`; they are replaced by its returns. */
  callBoxed(op: OperatorHandle, stack: Stack): void {
    const state = this.#state(op);
    checkStack(state.entry.schema?.schema, stack, this.#validator);
    this.#runBoxed(state, '[callBoxed]', this.#boxedKeySet(state, stack), stack);
  }

  /**
   * PyTorch's `getDispatchKeySetBoxed`: the keys of the dispatch arguments on top of the stack, plus the local
   * include set, minus the exclude set, masked by the operator's non-fallthrough keys.
   */
  #boxedKeySet(state: OperatorState, stack: Stack): DispatchKeySet {
    let hi = 0, lo = 0;
    const schema = state.entry.schema?.schema;
    const n = schema === undefined ? stack.length : schema.arguments.length;
    const first = stack.length - n;
    const indices = schema === undefined ? stack.map((_, i) => i) : schema.dispatchArgumentIndices;
    for (const i of indices) {
      const v = stack[first + i];
      if (v === undefined) continue;
      const items = v.isList() ? v.toList() : [v];
      for (const item of items) {
        const t = item.payload;
        if (isDispatchKeySource(t)) {
          hi |= t.keySetHi;
          lo |= t.keySetLo;
        }
      }
    }
    const { words, base } = state.row;
    const mask = words[base + ROW_PER_BACKEND_FLAG] === 0
      ? words[base + ROW_NFT_HI]
      : words[base + ROW_PER_BACKEND + 2 * (32 - Math.clz32(lo >>> 1))];
    return new DispatchKeySet((hi | localKeys.includedHi) & ~localKeys.excludedHi & mask, lo | localKeys.includedLo);
  }

  /** Boxed redispatch with an explicit keyset (no local keys, no fallthrough mask). */
  redispatchBoxed(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
    this.#runBoxed(this.#state(op), '[redispatchBoxed]', ks, stack);
  }

  /**
   * Calls the kernel registered at `key` for this operator, else the backend fallback for `key`, without
   * consulting the computed table (PyTorch's `callBoxedForDispatchKey`).
   */
  callBoxedForDispatchKey(op: OperatorHandle, key: DispatchKey, stack: Stack): void {
    const state = this.#state(op);
    checkStack(state.entry.schema?.schema, stack, this.#validator);
    if (this.#deferred.length !== 0) this.#runDeferredAt(key);
    const direct = state.entry.kernels.get(key)?.[0];
    const kernel = direct ?? (isRuntimeDispatchKey(key) ? this.#fallbacks[dispatchTableIndexForKey(key)] : undefined);
    if (kernel === undefined) {
      throw new RuntimeError(
        `callBoxedForDispatchKey: '${op.name}' has no kernel registered at dispatch key '${dispatchKeyName(key)}' ` +
          'and there is no backend fallback for it',
      );
    }
    // The keyset is computed as for callBoxed, and passed on to the kernel (a boxed fallback may use it).
    kernel.kernel.boxed!(op, this.#boxedKeySet(state, stack), stack);
  }

  // ---- observability ----

  /** PyTorch's `_dispatch_dump` of an operator (empty once the operator is gone). */
  dumpState(op: OperatorHandle): string {
    this.#runAllDeferred();
    const state = this.#stateOrUndefined(op);
    if (state?.deferred !== undefined) this.#runOperatorDeferred(state);
    return state === undefined || state.dead ? '' : state.entry.dumpState();
  }
  /** PyTorch's `_dispatch_dump_table` of an operator. */
  dumpComputedTable(op: OperatorHandle): string {
    this.#runAllDeferred();
    return this.#state(op).entry.dumpComputedTable(this);
  }
  /** The computed table as data: `{key, kernel, source, fallthrough}` per valid slot. */
  computedTable(op: OperatorHandle): ComputedTableRow[] {
    this.#runAllDeferred();
    return this.#state(op).entry.computedTable(this);
  }
  /** Whether a kernel is registered directly at `key`. */
  hasKernelForDispatchKey(op: OperatorHandle, key: DispatchKey): boolean {
    if (this.#deferred.length !== 0) this.#runDeferredAt(key);
    const state = this.#stateOrUndefined(op);
    if (state?.deferred !== undefined && defersAt(state, key)) this.#runOperatorDeferred(state);
    return (state?.entry.kernels.get(key)?.length ?? 0) > 0;
  }

  /**
   * PyTorch's `_dispatch_check_invariants`, made strict: the stored SharedArrayBuffer row of every operator
   * must equal a from-scratch recomputation. Throws naming the first differing slot.
   */
  checkInvariants(): void {
    this.#runAllDeferred();
    this.#materializeAll();
    for (const [name, state] of this.#ops) {
      const expected = state.entry.computeRow(this);
      const stored = this.#store.readRow(state.row.row);
      for (let i = 0; i < NUM_RUNTIME_ENTRIES; i++) {
        if (expected.ids[i] !== stored.ids[i]) {
          throw new RuntimeError(`Stored dispatch table of ${name} differs from the computed one at slot ${i}`);
        }
      }
      if (
        expected.requiresPerBackend !== stored.requiresPerBackend ||
        expected.nonFallthrough[0] !== stored.nonFallthrough[0] ||
        expected.perBackend.some((m, i) => m[0] !== stored.perBackend[i][0])
      ) {
        throw new RuntimeError(`Stored fallthrough masks of ${name} differ from the computed ones`);
      }
    }
  }

  /** Name of the kernel behind a kernel id (stable across agents). */
  kernelName(id: number): string | undefined {
    this.#runAllDeferred();
    return this.#kernelNames[id];
  }

  // ---- internals ----

  #stateOrUndefined(op: OperatorHandle): OperatorState | undefined {
    if (!(op instanceof OperatorHandle)) {
      const got = op === null
        ? 'null'
        : typeof op === 'object'
        ? `an object (${Object.prototype.toString.call(op)})`
        : typeof op;
      throw new TypeError(`Dispatcher: expected an OperatorHandle (from Library.define or findOp), got ${got}`);
    }
    const state = handleInternal(op) as OperatorState | undefined;
    return state?.handle === op && state.host === this ? state : undefined;
  }

  #state(op: OperatorHandle, materialize = true): OperatorState {
    const state = this.#stateOrUndefined(op);
    if (state === undefined || state.dead) {
      throw new RuntimeError(
        `Operator ${op.name} is not registered with this dispatcher (it may have been deregistered)`,
      );
    }
    if (materialize && state.pending) this.#materialize(state);
    return state;
  }

  // Note [Operators materialize on first use]
  // Importing the library registers ~290 operators with ~1500 kernels and fallbacks; computing every operator's
  // table row and generating its call stubs after each of those registrations was most of the package's start-up.
  // So a new operator starts *pending*: registrations only record the schema and kernels in its OperatorEntry (and
  // take kernel ids), it has no row in the table store yet (one is allocated as it materializes), and its handle
  // has no `call`, `callUnchecked` or `redispatch` of its own. Reading one of those (OperatorHandle's
  // accessors, so before the caller's first call), any dispatcher method that reads the row (boxed calls, dumps of
  // the computed table, checkInvariants), `materialize(op)`, or reading `tableStore` (what another agent reads)
  // materializes it: the row is computed once from the entry and written, the stubs are generated for the current
  // schema, trace setting and validator and stored on the handle, and from then on the operator is updated eagerly
  // on every registration, exactly as before. After `tableStore` has been read, new operators are materialized at
  // once. The computed table is a function of the registrations only (Note [Computed table equals stored table]),
  // so when it is computed does not change what it holds. No stand-in stub is ever called: a call site that first
  // saw a stand-in and then the real stub would stay polymorphic (megamorphic in V8) for the rest of the program.
  // Schemas (Library.defineDeferred) and schema-generated kernels (KernelFunction.deferred) are deferred the same way,
  // and so are the library's own kernels for its operators (Note [Deferred registrations]).

  #materialize(state: OperatorState): void {
    if (state.deferred !== undefined) this.#runOperatorDeferred(state);
    if (state.row === UNALLOCATED) state.row = this.#store.allocateRow(state.entry.name);
    state.pending = false;
    this.#materialized.add(state);
    this.#updateTable(state);
    this.#rebuildStubs(state);
  }

  #materializeAll(): void {
    for (const state of this.#ops.values()) if (state.pending) this.#materialize(state);
  }

  /** Materializes every operator now and every later one as it is registered (the store is read as a whole). */
  #materializeFromNowOn(): void {
    this.#runAllDeferred(); // a reader of the whole store sees every registration (Note [Deferred registrations])
    this.#eager = true;
    this.#materializeAll();
  }

  #findOrRegisterName(name: string): OperatorState {
    const existing = this.#ops.get(name);
    if (existing !== undefined) return existing;
    const entry = new OperatorEntry(name);
    // Note [Rows outlive operators]: a call stub captured from a handle (`const f = op.call`) keeps reading
    // its row after the operator is deregistered, so a row is never handed to another operator: it stays
    // with its operator name (cleared to "missing") and is reused only if that name is registered again.
    // Shared: a row some agent published already changes only by what this agent registers from now on.
    // A pending operator gets its row when it materializes (Note [Operators materialize on first use]); only a
    // materialized one can have handed its row to a stub. (The store is never shared while operators are pending.)
    const pending = !this.#eager;
    const existed = this.#store.shared && (this.#retiredRows.has(name) || this.#store.registry!.rowOf(name) >= 0);
    const row = this.#retiredRows.get(name) ?? (pending ? UNALLOCATED : this.#store.allocateRow(name));
    this.#retiredRows.delete(name);
    const state: OperatorState = {
      entry,
      row,
      handle: undefined!,
      dead: false,
      host: this,
      pending,
      deferred: undefined,
      deferredLow: 0,
      deferredHigh: 0,
    };
    // A pending operator's handle gets its stubs when it materializes (OperatorHandle's stub accessors).
    const stubs = state.pending
      ? undefined
      : makeStubs(entry, this.#stubContext(state), this.#trace.enabled, this.#validator);
    state.handle = new OperatorHandle(this, name, stubs, state);
    this.#ops.set(name, state);
    if (!state.pending) this.#materialized.add(state);
    if (existed) this.#published.set(state, entry.computeRow(this));
    this.#updateTable(state);
    return state;
  }

  #stubContext(state: OperatorState) {
    return {
      words: state.row.words,
      base: state.row.base,
      unboxed: this.#unboxed,
      slow: (id: number, hi: number, lo: number, args: unknown[]) => this.#slowPath(state, id, hi, lo, args),
      trace: {
        enter: (label: string, hi: number, lo: number) => this.#trace.enter(label, state.handle.name, hi, lo),
        exit: () => this.#trace.exit(),
      },
      validated: this.#store.shared,
    };
  }

  #rebuildStubs(state: OperatorState): void {
    setHandleSchema(state.handle, state.entry.schema);
    if (state.pending) return; // the stubs are generated when the operator materializes
    const fresh = makeStubs(state.entry, this.#stubContext(state), this.#trace.enabled, this.#validator);
    state.handle.call = fresh.call;
    state.handle.callUnchecked = fresh.callUnchecked;
    state.handle.redispatch = fresh.redispatch;
  }

  #updateTable(state: OperatorState): void {
    if (state.pending) return; // computed when the operator materializes
    // Deferred kernels are built when their operator first needs its row (Note [Operators materialize on first use]).
    for (const list of state.entry.kernels.values()) {
      for (const k of list) if (this.#boxed[k.id] === undefined) this.#setKernel(k); // every built kernel has a boxed form
    }
    const row = state.entry.computeRow(this);
    if (!this.#store.shared) return this.#store.writeRow(state.row, row);
    this.#store.publishChange(state.row, this.#published.get(state), row);
    this.#published.set(state, row);
  }

  // Once shared: this agent's last computation of each row, what its next change is a change from.
  readonly #published = new WeakMap<OperatorState, RowData>();

  /** Drops an operator whose last def and impl are gone; returns whether it did. */
  #cleanup(state: OperatorState): boolean {
    if (state.entry.defAndImplCount !== 0) return false;
    this.#ops.delete(state.entry.name);
    this.#materialized.delete(state);
    if (this.#store.shared) {
      // Only what this agent had there goes (the row of an operator without registrations: the fallbacks');
      // other agents' registrations of the operator stay published.
      this.#store.publishChange(state.row, this.#published.get(state), state.entry.computeRow(this));
      this.#published.delete(state);
    } else if (state.row !== UNALLOCATED) {
      this.#store.clearRow(state.row);
    }
    if (state.row !== UNALLOCATED) this.#retiredRows.set(state.entry.name, state.row);
    state.dead = true;
    const gone = () => {
      throw new RuntimeError(`Operator ${state.entry.name} has been deregistered`);
    };
    state.handle.call = gone;
    state.handle.callUnchecked = gone;
    state.handle.redispatch = gone;
    return true;
  }

  #annotate(
    kernel: KernelFunction,
    debug: string,
    inferredSchema: FunctionSchema | undefined,
    stable: string,
  ): AnnotatedKernel {
    const shared = this.#store.shared;
    const id = shared ? this.#globalId(stable) : this.#freeIds.pop() ?? this.#unboxed.length;
    const annotated = { kernel, debug, inferredSchema, id };
    if (kernel.isDeferred) {
      this.#unboxed[id] = undefined;
      this.#boxed[id] = undefined;
    } else this.#setKernel(annotated);
    this.#kernelNames[id] = debug;
    if (!shared) this.#stableNames[id] = stable;
    return annotated;
  }

  #setKernel(annotated: AnnotatedKernel): void {
    this.#unboxed[annotated.id] = annotated.kernel.unboxed;
    this.#boxed[annotated.id] = annotated.kernel.boxed;
  }

  #releaseId(id: number): void {
    this.#unboxed[id] = undefined;
    this.#boxed[id] = undefined;
    this.#kernelNames[id] = '';
    if (this.#store.shared) this.#liveStable.delete(this.#stableNames[id]);
    else this.#freeIds.push(id);
  }

  // ---- a table store shared by agents (Note [Shared table store] in shared_tables.ts) ----

  /** The global id of a kernel this agent registers under `stable` (`#n` added while the name is live here). */
  #globalId(stable: string): number {
    let name = stable;
    for (let n = 1; this.#liveStable.has(name); n++) name = `${stable}#${n}`;
    const id = this.#store.registry!.kernelId(name);
    this.#liveStable.add(name);
    this.#stableNames[id] = name;
    return id;
  }

  /**
   * Shares this dispatcher's table store with other agents (the main agent, when sharing starts): its kernel
   * ids become the first global ids and its rows the first directory entries; its call stubs are rebuilt to
   * read rows under the seqlock. Returns what an attaching agent passes to {@linkcode attachTables}.
   */
  shareTables(agent: number): SharedTables {
    if (this.#store.shared) return this.#store.sharedTables();
    // Every operator and kernel exists in full before ids and rows become global (Note [Operators materialize on
    // first use]): another agent may read any row from now on, and a deferred kernel has no function to publish.
    this.#materializeFromNowOn();
    const live = new Set<number>([this.ambiguousAutogradOther.id]);
    for (const k of this.#fallbacks) if (k !== undefined) live.add(k.id);
    for (const state of this.#ops.values()) {
      for (const list of state.entry.kernels.values()) for (const k of list) live.add(k.id);
    }
    const names = this.#stableNames.map((stable, id) => {
      if (id === 0) return 'missing';
      if (!live.has(id)) return `\u0000retired kernel ${id}`;
      let name = stable;
      for (let n = 1; this.#liveStable.has(name); n++) name = `${stable}#${n}`;
      this.#liveStable.add(name);
      this.#stableNames[id] = name;
      return name;
    });
    this.#freeIds.length = 0;
    const registry = SharedTableRegistry.create(
      agent,
      this.#store.allChunks().length,
      this.#store.rowCount,
      names,
    );
    const tables = this.#store.startSharing(registry);
    for (const [name, state] of this.#ops) {
      registry.rowFor(name, state.row.row);
      this.#published.set(state, state.entry.computeRow(this));
    }
    for (const [name, ref] of this.#retiredRows) registry.rowFor(name, ref.row);
    for (const state of this.#ops.values()) this.#rebuildStubs(state);
    return tables;
  }

  /**
   * Makes this dispatcher (an attaching agent's) use the shared table store of another agent: its kernels
   * take the global ids of their stable names, each operator the shared row of its name (a row no agent had
   * yet is published from this agent's registrations), and its stubs read rows under the seqlock.
   */
  attachTables(agent: number, tables: SharedTables): void {
    if (this.#store.shared) throw new Error('This dispatcher already uses a shared table store');
    this.#materializeFromNowOn(); // as in shareTables: rows and kernels in full before they are matched by name
    const registry = SharedTableRegistry.open(tables.registry, agent);
    const kernels = new Set<AnnotatedKernel>([this.ambiguousAutogradOther]);
    for (const k of this.#fallbacks) if (k !== undefined) kernels.add(k);
    for (const state of this.#ops.values()) {
      for (const list of state.entry.kernels.values()) for (const k of list) kernels.add(k);
    }
    const local = { unboxed: [...this.#unboxed], boxed: [...this.#boxed], debug: [...this.#kernelNames] };
    const stable = [...this.#stableNames];
    // The stubs hold these arrays: refill them in place.
    for (const a of [this.#unboxed, this.#boxed, this.#kernelNames, this.#stableNames]) a.length = 1;
    this.#freeIds.length = 0;
    this.#store.attachShared(registry, tables);
    for (const k of kernels) {
      const old = k.id;
      const id = this.#globalId(stable[old]);
      this.#unboxed[id] = local.unboxed[old];
      this.#boxed[id] = local.boxed[old];
      this.#kernelNames[id] = local.debug[old];
      (k as { id: number }).id = id;
    }
    this.#retiredRows.clear();
    for (const state of this.#ops.values()) {
      const { ref, created } = this.#store.adoptRow(state.entry.name);
      state.row = ref;
      if (created) this.#updateTable(state);
      else this.#published.set(state, state.entry.computeRow(this));
      this.#rebuildStubs(state);
    }
  }

  /**
   * How this agent finds its function for a kernel another agent published by stable name (installed by
   * the workers layer: `defineKernel`).
   */
  setKernelResolver(resolve: ((name: string) => UnboxedKernel | undefined) | undefined): void {
    this.#resolver = resolve;
  }

  /** After a writer agent died: breaks its lock on the shared tables and closes a row it left mid-write. */
  repairSharedTables(dead: number): void {
    const registry = this.#store.registry;
    if (registry !== undefined && registry.breakLockOf(dead)) closeTornRows(this.#store.allChunks());
  }

  /** The function of a kernel id another agent published (Note [Shared table store]), or undefined. */
  #resolveForeign(state: OperatorState, id: number): UnboxedKernel | undefined {
    const registry = this.#store.registry;
    if (registry === undefined || id === 0 || this.#boxed[id] !== undefined) return undefined;
    const name = registry.kernelName(id) ?? `#${id}`;
    const fn = this.#resolver?.(name.replace(/#\d+$/, ''));
    if (fn === undefined) {
      throw new RuntimeError(
        `Kernel '${name}' (kernel id ${id}), which another agent published in the dispatch table of ` +
          `${state.entry.name}, is not loadable in this agent: register it in an operator library every agent ` +
          `loads (loadOperatorLibrary), or define it here under that name with defineKernel()`,
      );
    }
    this.#unboxed[id] = fn;
    return fn;
  }

  #checkKernelSchema(state: OperatorState, schema: FunctionSchema, schemaDebug: string, kernel: AnnotatedKernel): void {
    const reason = schemaMismatch(schema, kernel);
    if (reason === undefined) return;
    throw new RuntimeError(
      "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n" +
        `  operator: ${state.entry.name}\n` +
        `  expected schema: ${schema}\n    ${schemaDebug}\n` +
        `  inferred schema: ${kernel.inferredSchema ?? '(none)'}\n    ${kernel.debug}\n` +
        `  reason: ${reason}`,
    );
  }

  /** Unboxed call of a slot without an unboxed function: box through the schema, or report the error. */
  #slowPath(state: OperatorState, id: number, hi: number, lo: number, args: unknown[]): unknown {
    const foreign = this.#resolveForeign(state, id);
    if (foreign !== undefined) return foreign(hi, lo, ...args);
    const boxed = this.#boxed[id];
    // A slot a deferred group fills (empty, or a fallthrough reached by an explicit keyset): run it and look the slot
    // up again (Note [Deferred registrations]).
    if ((boxed === undefined || boxed === FALLTHROUGH_BOXED) && this.#runDeferredFor(hi, lo, boxed === undefined)) {
      return state.handle.redispatch(hi, lo, ...args);
    }
    if (boxed === undefined) throw reportDispatchError(this, state, this.#store.readRow(state.row.row).ids, hi, lo);
    const schema = state.entry.schema?.schema;
    let stack: Stack;
    try {
      stack = boxArgumentsInPlace(schema?.arguments, args, this.#validator);
    } catch (e) {
      throw schema === undefined ? e : boxingError(schema, args.findIndex((_, i) => !(args[i] instanceof IValue)), e);
    }
    boxed(state.handle, new DispatchKeySet(hi, lo), stack);
    return popReturns(state.handle, stack);
  }

  #runBoxed(state: OperatorState, label: string, ks: DispatchKeySet, stack: Stack): void {
    const { words, base } = state.row;
    const id = words[base + ROW_ENTRIES + dispatchTableIndex(ks.hi, ks.lo)];
    const boxed = this.#boxed[id];
    if (
      (boxed === undefined || boxed === FALLTHROUGH_BOXED) && this.#runDeferredFor(ks.hi, ks.lo, boxed === undefined)
    ) {
      return this.#runBoxed(state, label, ks, stack);
    }
    if (boxed === undefined) {
      throw reportDispatchError(this, state, this.#store.readRow(state.row.row).ids, ks.hi, ks.lo);
    }
    if (!this.#trace.enabled) return boxed(state.handle, ks, stack);
    this.#trace.enter(label, state.handle.name, ks.hi, ks.lo);
    try {
      boxed(state.handle, ks, stack);
    } finally {
      this.#trace.exit();
    }
  }
}

// The key bits of the frozen key arrays given to deferOperatorRegistrations.
const keyBits = new WeakMap<readonly DispatchKey[], [number, number]>();

/** Whether an operator's deferred registrations register at `key` (Note [Deferred registrations]). */
function defersAt(state: OperatorState, key: DispatchKey): boolean {
  return key < 32 ? (state.deferredLow & (1 << key)) !== 0 : (state.deferredHigh & (1 << (key - 32))) !== 0;
}

/**
 * Whether the kernel-schema check could refuse this kernel: only a declared schema or an unboxed function with
 * more parameters than the keyset words can mismatch, so other kernels need no parsed schema to register.
 */
function mayMismatch(kernel: AnnotatedKernel, registration: SchemaRegistration): boolean {
  if (kernel.inferredSchema !== undefined) return true;
  if (kernel.kernel.isDeferred) return false;
  const unboxed = kernel.kernel.unboxed;
  if (unboxed === undefined || unboxed.length <= 2) return false;
  // A deferred declaration that knows its argument count settles the arity check without being parsed.
  const known = registration instanceof Registration ? registration.argumentCount : undefined;
  return known === undefined || unboxed.length > known + 2;
}

/**
 * A schema registration; a deferred one parses its schema when first read (Note [Operators materialize on first use]).
 * Eager and deferred registrations are one class, so the many reads of `.schema` see a single object shape.
 */
class Registration implements SchemaRegistration {
  #parse: (() => FunctionSchema) | undefined;
  #schema: FunctionSchema | undefined;
  readonly debug: string;
  readonly aliasAnalysis: string;
  #count: number | (() => number | undefined) | undefined;
  constructor(
    schema: FunctionSchema | (() => FunctionSchema),
    debug: string,
    aliasAnalysis: string,
    argumentCount: number | (() => number | undefined) | undefined,
  ) {
    if (typeof schema === 'function') this.#parse = schema;
    else this.#schema = schema;
    this.debug = debug;
    this.aliasAnalysis = aliasAnalysis;
    this.#count = argumentCount;
  }
  /** The schema's number of arguments, when the registration said (before parsing); counted on first read. */
  get argumentCount(): number | undefined {
    const count = this.#count;
    if (typeof count !== 'function') return count;
    return this.#count = this.#schema?.arguments.length ?? count();
  }
  get schema(): FunctionSchema {
    if (this.#parse !== undefined) {
      this.#schema = this.#parse();
      this.#parse = undefined;
    }
    return this.#schema!;
  }
}

function fullName(name: string, overloadName?: string): string {
  return overloadName === undefined || overloadName === '' ? name : `${name}.${overloadName}`;
}
