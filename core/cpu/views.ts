/**
 * CPU kernels of the views operators (filled in with the operators).
 *
 * @module
 */
import type { ViewBackendOpName } from '../ops/decl_views.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** CPU kernels of the views operators. */
export const CPU_VIEW_KERNELS: { readonly [K in ViewBackendOpName]: Kernel } = {};
