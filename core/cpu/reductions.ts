/**
 * CPU kernels of the reductions operators (filled in with the operators).
 *
 * @module
 */
import type { ReductionBackendOpName } from '../ops/decl_reductions.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** CPU kernels of the reductions operators. */
export const CPU_REDUCTION_KERNELS: { readonly [K in ReductionBackendOpName]: Kernel } = {};
