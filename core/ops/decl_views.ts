/**
 * Declarations of the views operators (filled in with the operators).
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';

/** Names of the views operators that every backend implements. */
export type ViewBackendOpName = never;
/** Names of the views operators implemented once for all backends. */
export type ViewCompositeOpName = never;

/** Declarations of the views operators. */
export const VIEW_OPS: { readonly [K in ViewBackendOpName | ViewCompositeOpName]: OpDecl } = {};
