/**
 * The operator table: every operator overload Switchyard defines, in the spirit of PyTorch's
 * `native_functions.yaml`. Registration (`registry.ts`), Meta kernels and the typed API (`codegen.ts`) are
 * derived from it; backends provide kernels for the `backend` entries, keyed by the same names.
 *
 * @module
 */
import { ELEMENTWISE_OPS } from './decl_elementwise.ts';
import { FACTORY_OPS } from './decl_factories.ts';

/** Every operator declaration, keyed by `name.overload`. */
export const OPS = { ...ELEMENTWISE_OPS, ...FACTORY_OPS };

/** Names of all declared operators. */
export type OpName = keyof typeof OPS;

/** Names of operators that need a kernel from every backend. */
export type BackendOpName = {
  [K in OpName]: (typeof OPS)[K]['kind'] extends 'backend' | 'factory' ? K : never;
}[OpName];
