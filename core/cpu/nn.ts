/**
 * CPU kernels of the nn operators (filled in with the operators).
 *
 * @module
 */
import type { NnBackendOpName } from '../ops/decl_nn.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** CPU kernels of the nn operators. */
export const CPU_NN_KERNELS: { readonly [K in NnBackendOpName]: Kernel } = {};
