/**
 * Pieces of the Dispatcher that are not its public surface: per-operator state, stub selection, the
 * "Could not run" error and the kernel-schema check.
 *
 * @module
 */
import {
  type CallStub,
  makeCallStub,
  makeGenericCall,
  makeGenericRedispatch,
  makeRedispatchStub,
  type StubContext,
} from './call_stub.ts';
import { DispatchKey, dispatchKeyName } from './dispatch_key.ts';
import { DispatchKeySet, dispatchTableIndexForKey } from './dispatch_key_set.ts';
import { NotImplementedError } from './errors.ts';
import type { FunctionSchema, SchemaType } from './function_schema.ts';
import type { AnnotatedKernel, EntryContext, OperatorEntry } from './operator_entry.ts';
import type { OperatorHandle } from './operator_handle.ts';
import type { RowRef } from './table_store.ts';
import { checkedCall } from './checked_call.ts';
import type { ValueValidator } from './ivalue.ts';

/** What the dispatcher keeps per operator. */
export interface OperatorState {
  readonly entry: OperatorEntry;
  /** Its table row (replaced once, when the agent attaches to a shared store). */
  row: RowRef;
  handle: OperatorHandle;
  dead: boolean;
  /** Not materialized yet: no row written, no stubs on the handle (Note [Operators materialize on first use]). */
  pending: boolean;
  /** The dispatcher that owns the operator. */
  readonly host: object;
  /** Registrations for this operator deferred until it is first needed (Note [Deferred registrations]). */
  deferred: Array<() => void> | undefined;
  /** The keys they register at, as bits `1 << k` over keys 0-31 and 32-63 (all bits: any key). */
  deferredLow: number;
  deferredHigh: number;
}

/** The call and redispatch stubs for an operator's current schema (generic ones without a schema). */
export function makeStubs(
  entry: OperatorEntry,
  ctx: StubContext,
  traced: boolean,
  validator?: ValueValidator,
): { call: CallStub; callUnchecked: CallStub; redispatch: CallStub } {
  const schema = entry.schema?.schema;
  if (schema === undefined) {
    const generic = makeGenericCall(ctx, traced);
    return { call: generic, callUnchecked: generic, redispatch: makeGenericRedispatch(ctx, traced) };
  }
  const call = makeCallStub(ctx, schema, traced);
  return {
    call: validator === undefined ? call : checkedCall(call, schema, validator),
    callUnchecked: call,
    redispatch: makeRedispatchStub(ctx, schema.arguments.length, traced),
  };
}

/**
 * PyTorch's `reportError`: "Could not run ... with arguments from the ... backend", or the no-tensor variant
 * when the keyset selects the Undefined slot. `storedIds` is the operator's stored row.
 */
export function reportDispatchError(
  ctx: EntryContext,
  state: OperatorState,
  storedIds: Int32Array,
  hi: number,
  lo: number,
): NotImplementedError {
  const name = state.entry.name;
  const key = new DispatchKeySet(hi, lo).highestPriorityTypeId();
  const available = [...DispatchKeySet.FULL]
    .filter((k) => storedIds[dispatchTableIndexForKey(k)] !== 0)
    .map(dispatchKeyName)
    .join(', ');
  const table = state.entry.dumpComputedTable(ctx);
  if (key === DispatchKey.Undefined) {
    return new NotImplementedError(
      'There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), but no ' +
        `fallback function is registered for schema ${name}.  This usually means that this function requires a ` +
        'non-empty list of Tensors, or that you (the operator writer) forgot to register a fallback function.  ' +
        `Available functions are [${available}].\n\n${table}`,
    );
  }
  return new NotImplementedError(
    `Could not run '${name}' with arguments from the '${dispatchKeyName(key)}' backend. This could be because ` +
      "the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if " +
      `using custom build). '${name}' is only available for these backends: [${available}].\n\n${table}`,
  );
}

function typeText(t: SchemaType): string {
  if (t.kind === 'Optional') return `${typeText(t.elem)}?`;
  if (t.kind === 'List') return `${typeText(t.elem)}[]`;
  return t.kind;
}

/**
 * Why a kernel cannot implement a schema, or undefined when it can: its declared schema's argument and
 * return types must match (names may differ, as in PyTorch's `findSchemaDifferences`), and an unboxed
 * kernel must not declare more parameters than the keyset words plus the schema's arguments.
 */
export function schemaMismatch(schema: FunctionSchema, kernel: AnnotatedKernel): string | undefined {
  // A deferred kernel is generated from the schema itself; it is not built (or checked) here.
  const unboxed = kernel.kernel.isDeferred ? undefined : kernel.kernel.unboxed;
  if (unboxed !== undefined && unboxed.length > schema.arguments.length + 2) {
    return `The kernel function takes ${unboxed.length} parameters but the schema has ${schema.arguments.length} ` +
      'arguments (plus the two keyset words).';
  }
  const inferred = kernel.inferredSchema;
  if (inferred === undefined) return undefined;
  if (inferred.arguments.length !== schema.arguments.length) {
    return `The number of arguments is different. ${schema.arguments.length} vs ${inferred.arguments.length}.`;
  }
  for (let i = 0; i < schema.arguments.length; i++) {
    const a = typeText(schema.arguments[i].type), b = typeText(inferred.arguments[i].type);
    if (a !== b) return `Type mismatch in argument ${i + 1}: ${a} vs. ${b}.`;
  }
  if (inferred.returns.length !== schema.returns.length) {
    return `The number of returns is different. ${schema.returns.length} vs ${inferred.returns.length}.`;
  }
  for (let i = 0; i < schema.returns.length; i++) {
    const a = typeText(schema.returns[i].type), b = typeText(inferred.returns[i].type);
    if (a !== b) return `Type mismatch in return ${i + 1}: ${a} vs. ${b}.`;
  }
  return undefined;
}
