/**
 * CPU kernels of the random operators (filled in with the operators).
 *
 * @module
 */
import type { RandomBackendOpName } from '../ops/decl_random.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** CPU kernels of the random operators. */
export const CPU_RANDOM_KERNELS: { readonly [K in RandomBackendOpName]: Kernel } = {};
