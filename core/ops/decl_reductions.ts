/**
 * Declarations of the reductions operators (filled in with the operators).
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';

/** Names of the reductions operators that every backend implements. */
export type ReductionBackendOpName = never;
/** Names of the reductions operators implemented once for all backends. */
export type ReductionCompositeOpName = never;

/** Declarations of the reductions operators. */
export const REDUCTION_OPS: { readonly [K in ReductionBackendOpName | ReductionCompositeOpName]: OpDecl } = {};
