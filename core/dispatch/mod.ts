/**
 * The Switchyard dispatcher: a PyTorch-c10-style operator dispatcher.
 *
 * Every operator call computes a dispatch keyset (two uint32 words) from its tensor arguments and the agent's
 * include/exclude sets, and selects its kernel in O(1) from a per-operator table packed in a
 * SharedArrayBuffer. Registration (`Library`) mirrors PyTorch's: schemas, kernels per key, alias keys,
 * fallbacks, fallthrough, deregistration, boxed and unboxed kernels, redispatch.
 *
 * This module knows nothing of tensors: anything carrying `keySetHi`/`keySetLo` words dispatches.
 *
 * @example
 * ```ts
 * import { Dispatcher, DispatchKey, Library } from './mod.ts';
 * const d = new Dispatcher();
 * using lib = new Library('demo', 'DEF', undefined, { dispatcher: d });
 * const op = lib.define('demo::double(int x) -> int');
 * lib.impl('double', (_hi: number, _lo: number, x: number) => 2 * x, DispatchKey.CompositeExplicitAutograd);
 * op.call(21); // 42
 * ```
 *
 * @module
 */
export * from './dispatch_key.ts';
export * from './dispatch_key_set.ts';
export * from './local_dispatch_key_set.ts';
export * from './function_schema.ts';
export { parseSchema, parseSchemaOrName } from './schema_parser.ts';
export * from './ivalue.ts';
export { AttributeError, KeyError, OutOfMemoryError } from './errors.ts';
export {
  type BoxedKernel,
  FALLTHROUGH_EXECUTED_MESSAGE,
  KernelFunction,
  type UnboxedKernel,
} from './kernel_function.ts';
export type { AnnotatedKernel, ComputedEntry, EntryContext, EntrySource } from './operator_entry.ts';
export type { CallStub } from './call_stub.ts';
export { type ComputedTableRow, OperatorHandle, type OperatorHost } from './operator_handle.ts';
// The schema-type machinery (Note [Schema types]): the public types and the helpers they are made of.
export type * from './schema_types.ts';
export { type RowData, type RowRef, TableStore } from './table_store.ts';
export { SharedTableRegistry, type SharedTables } from './shared_tables.ts';
export {
  type DeferredDefOptions,
  type DeferredRegistrations,
  Dispatcher,
  type DispatcherOptions,
  FRAMEWORK_FALLTHROUGH_KEYS,
  type ImplOptions,
  RegistrationHandle,
} from './dispatcher.ts';
export {
  boxed,
  type DefineDeferredOptions,
  type DefineOptions,
  fallthroughKernel,
  type ImplKernelOptions,
  type KernelLike,
  Library,
  type LibraryKind,
  type LibraryOptions,
} from './library.ts';
export { NotImplementedError, RuntimeError, ValueError } from './errors.ts';
export { TRACE_ENV_VAR } from './trace.ts';
