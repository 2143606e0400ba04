/**
 * OperatorHandle: the public face of one operator, with its calling conventions.
 *
 * @module
 */
import type { DispatchKey } from './dispatch_key.ts';
import type { DispatchKeySet } from './dispatch_key_set.ts';
import type { FunctionSchema } from './function_schema.ts';
import type { Stack } from './ivalue.ts';
import type { CallStub } from './call_stub.ts';
import type { SchemaCallArgs, SchemaReturn, SchemaValueTypes, UntypedSchemaValues } from './schema_types.ts';
import type { EntrySource } from './operator_entry.ts';

/** One row of {@linkcode OperatorHandle.computedTable}: a valid slot of the computed dispatch table. */
export interface ComputedTableRow {
  /** Runtime key name (`AutogradCPU`). */
  readonly key: string;
  /** The kernel's debug string. */
  readonly kernel: string;
  /** Why the slot holds it (PyTorch's provenance tag). */
  readonly source: EntrySource;
  /** Whether the kernel is the fallthrough kernel. */
  readonly fallthrough: boolean;
}

/** What a handle delegates to: its dispatcher. */
export interface OperatorHost {
  /** Calls the operator with a boxed stack, dispatching on its arguments. */
  callBoxed(op: OperatorHandle, stack: Stack): void;
  /** Calls the operator with a boxed stack for the keys of `ks` below the current one. */
  redispatchBoxed(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void;
  /** Calls the kernel the operator's table holds for `key`, with a boxed stack. */
  callBoxedForDispatchKey(op: OperatorHandle, key: DispatchKey, stack: Stack): void;
  /** The operator's registrations, as PyTorch's `_dispatch_dump` prints them. */
  dumpState(op: OperatorHandle): string;
  /** The operator's computed dispatch table, as PyTorch's `_dispatch_dump_table` prints it. */
  dumpComputedTable(op: OperatorHandle): string;
  /** The operator's computed dispatch table, one row per key. */
  computedTable(op: OperatorHandle): ComputedTableRow[];
  /** Whether the operator has a kernel registered directly for `key`. */
  hasKernelForDispatchKey(op: OperatorHandle, key: DispatchKey): boolean;
  /** Materializes the operator: writes its table row and gives its handle its call stubs. */
  materialize(op: OperatorHandle): void;
}

const STUB_NAMES = ['call', 'callUnchecked', 'redispatch'] as const;

let internalOf: (op: OperatorHandle) => unknown;
let setSchema: (op: OperatorHandle, source: { readonly schema: FunctionSchema } | undefined) => void;

// The typed entry points (Note [Schema types] in schema_types.ts) are method signatures of this interface, merged
// into the class: methods compare their parameters bivariantly, so a handle typed from its schema still passes
// wherever an untyped `OperatorHandle` is expected.
/** The typed entry points of an {@linkcode OperatorHandle} (its schema string `S` read at the type level). */
export interface OperatorHandle<S extends string = string, V extends SchemaValueTypes = UntypedSchemaValues> {
  /** The unboxed entry point: `(...args)` computes the keyset and calls the selected kernel. */
  call(...args: SchemaCallArgs<S, V>): SchemaReturn<S, V>;
  /**
   * `call` without its argument checks, for callers that checked the arguments themselves (the generated
   * API): the same as `call` on a dispatcher without a value validator.
   */
  callUnchecked(...args: SchemaCallArgs<S, V>): SchemaReturn<S, V>;
  /** `(ksHi, ksLo, ...args)`: calls the kernel the given keyset selects, without local keys or masks. */
  redispatch(ksHi: number, ksLo: number, ...args: SchemaCallArgs<S, V>): SchemaReturn<S, V>;
}

/**
 * An operator registered with a {@linkcode Dispatcher}. `call` is the unboxed hot path: pass the schema's
 * arguments positionally. Call it as a method (`op.call(...)`): the dispatcher replaces the function when
 * the operator's schema arrives or tracing is switched. On a dispatcher with a value validator (the runtime's
 * own, once `mod.ts` is imported) `call` checks its arguments against the schema, as `callBoxed` and
 * `dispatcher.call` do; `callUnchecked` is the same stub without the checks.
 *
 * @example
 * ```ts
 * import { Dispatcher, Library, DispatchKey } from '../../mod.ts';
 * const d = new Dispatcher();
 * using lib = new Library('demo', 'DEF', undefined, { dispatcher: d });
 * const op = lib.define('demo::twice(int x) -> int');
 * lib.impl('twice', (_hi: number, _lo: number, x: number) => 2 * x, DispatchKey.CompositeExplicitAutograd);
 * op.call(21); // 42
 * ```
 */
export class OperatorHandle<S extends string = string, V extends SchemaValueTypes = UntypedSchemaValues> {
  /** Full name, `ns::op` or `ns::op.overload`. */
  readonly name: string;
  readonly #host: OperatorHost;
  readonly #internal: unknown;
  #schema: { readonly schema: FunctionSchema } | undefined;

  /**
   * Made by the dispatcher; user code gets handles from `findSchema`/`findOp` or `Library.define`.
   * `internal` is the dispatcher's per-operator state, handed back by {@linkcode handleInternal}.
   */
  constructor(
    host: OperatorHost,
    name: string,
    stubs: { readonly call: CallStub; readonly callUnchecked: CallStub; readonly redispatch: CallStub } | undefined,
    internal: unknown,
  ) {
    this.#host = host;
    this.name = name;
    if (stubs !== undefined) {
      const self = this as unknown as Record<'call' | 'callUnchecked' | 'redispatch', CallStub>;
      self.call = stubs.call;
      self.callUnchecked = stubs.callUnchecked;
      self.redispatch = stubs.redispatch;
    }
    this.#internal = internal;
  }

  static {
    // Note [Operators materialize on first use] (dispatcher.ts): a pending operator's handle has no stubs of its own.
    // Reading one finds these accessors on the prototype, which materialize the operator (the dispatcher then stores
    // the generated stubs on the handle, through the setter) and return the stub. So the first call already goes to
    // the generated stub: no call site ever sees a stand-in function, which would make it polymorphic for good. The
    // stubs become own data properties added in the same order as for a handle made with them, so every handle ends
    // with one object shape.
    for (const which of STUB_NAMES) {
      Object.defineProperty(OperatorHandle.prototype, which, {
        configurable: true,
        get(this: OperatorHandle): CallStub {
          this.#host.materialize(this);
          if (!Object.hasOwn(this, which)) {
            throw new TypeError(`Operator ${this.name} is not registered (it may have been deregistered)`);
          }
          return (this as unknown as Record<string, CallStub>)[which];
        },
        set(this: OperatorHandle, stub: CallStub) {
          Object.defineProperty(this, which, { value: stub, writable: true, enumerable: true, configurable: true });
        },
      });
    }
    // Module-private access for the dispatcher: a handle's state and schema are not part of its public API.
    internalOf = (op) => op.#internal;
    setSchema = (op, source) => {
      op.#schema = source;
    };
  }

  /** The schema, once defined. */
  get schema(): FunctionSchema | undefined {
    return this.#schema?.schema;
  }
  /** Namespace part of the name. */
  get namespace(): string {
    return this.name.slice(0, Math.max(0, this.name.indexOf('::')));
  }
  /** Overload name (empty for none). */
  get overloadName(): string {
    const dot = this.name.indexOf('.', this.name.indexOf('::') + 2);
    return dot < 0 ? '' : this.name.slice(dot + 1);
  }
  /** The boxed entry point: arguments on `stack`, returns replace them. */
  callBoxed(stack: Stack): void {
    this.#host.callBoxed(this, stack);
  }
  /** Boxed redispatch with an explicit keyset. */
  redispatchBoxed(ks: DispatchKeySet, stack: Stack): void {
    this.#host.redispatchBoxed(this, ks, stack);
  }
  /**
   * Calls the kernel registered at `key` itself (or the backend fallback for it), bypassing the computed
   * table. Throws a clear error when there is none.
   */
  callBoxedForDispatchKey(key: DispatchKey, stack: Stack): void {
    this.#host.callBoxedForDispatchKey(this, key, stack);
  }
  /** PyTorch's `_dispatch_dump`: the registrations. */
  dump(): string {
    return this.#host.dumpState(this);
  }
  /** PyTorch's `_dispatch_dump_table`: the computed table as text. */
  dumpComputedTable(): string {
    return this.#host.dumpComputedTable(this);
  }
  /** The computed table as data. */
  computedTable(): ComputedTableRow[] {
    return this.#host.computedTable(this);
  }
  /** Whether a kernel is registered directly at `key` (runtime or alias key). */
  hasKernelForDispatchKey(key: DispatchKey): boolean {
    return this.#host.hasKernelForDispatchKey(this, key);
  }
  /** The name. */
  toString(): string {
    return this.name;
  }
}

/** The dispatcher's state object for a handle (for the dispatcher only). */
export function handleInternal(op: OperatorHandle): unknown {
  return internalOf(op);
}

/**
 * Records where the handle's schema is (for the dispatcher only): the operator's schema registration, whose schema
 * may be parsed only when first read (Note [Operators materialize on first use] in dispatcher.ts).
 */
export function setHandleSchema(op: OperatorHandle, source: { readonly schema: FunctionSchema } | undefined): void {
  setSchema(op, source);
}
