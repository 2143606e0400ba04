/**
 * Declarations of the linalg operators (filled in with the operators).
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';

/** Names of the linalg operators that every backend implements. */
export type LinalgBackendOpName = never;
/** Names of the linalg operators implemented once for all backends. */
export type LinalgCompositeOpName = never;

/** Declarations of the linalg operators. */
export const LINALG_OPS: { readonly [K in LinalgBackendOpName | LinalgCompositeOpName]: OpDecl } = {};
