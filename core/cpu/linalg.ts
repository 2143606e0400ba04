/**
 * CPU kernels of the linalg operators (filled in with the operators).
 *
 * @module
 */
import type { LinalgBackendOpName } from '../ops/decl_linalg.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** CPU kernels of the linalg operators. */
export const CPU_LINALG_KERNELS: { readonly [K in LinalgBackendOpName]: Kernel } = {};
