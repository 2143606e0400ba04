/**
 * Declarations of the random operators (filled in with the operators).
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';

/** Names of the random operators that every backend implements. */
export type RandomBackendOpName = never;
/** Names of the random operators implemented once for all backends. */
export type RandomCompositeOpName = never;

/** Declarations of the random operators. */
export const RANDOM_OPS: { readonly [K in RandomBackendOpName | RandomCompositeOpName]: OpDecl } = {};
