/**
 * Declarations of the nn operators (filled in with the operators).
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';

/** Names of the nn operators that every backend implements. */
export type NnBackendOpName = never;
/** Names of the nn operators implemented once for all backends. */
export type NnCompositeOpName = never;

/** Declarations of the nn operators. */
export const NN_OPS: { readonly [K in NnBackendOpName | NnCompositeOpName]: OpDecl } = {};
