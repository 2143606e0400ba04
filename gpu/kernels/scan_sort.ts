/**
 * WebGPU entries of the scans and of `sort.stable`. There are no WGSL scan or sort kernels yet, and WebGPU has
 * no synchronous readback to run the CPU kernels on, so these refuse with a `NotImplementedError` that names
 * the way around (`await t.cpuAsync()`, the operator on the CPU, then `.to('webgpu')`).
 *
 * @module
 */
import { NotImplementedError } from '../../core/dispatch/errors.ts';
import type { ScanSortBackendOpName } from '../../core/ops/decl_scan_sort.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

function missing(name: string): Kernel {
  return (() => {
    throw new NotImplementedError(
      `${name}: not implemented for webgpu tensors yet (no WGSL kernel); run it on the CPU: ` +
        `(await t.cpuAsync()).${name}(...) and copy the result back with .to('webgpu')`,
    );
  }) as Kernel;
}

/**
 * The WebGPU entries of the scan and sort operators (each refuses, see the module note).
 *
 * @example
 * ```ts
 * import { GPU_SCAN_SORT_KERNELS } from './scan_sort.ts';
 * typeof GPU_SCAN_SORT_KERNELS.cumsum; // 'function'
 * ```
 */
export const GPU_SCAN_SORT_KERNELS: { readonly [K in ScanSortBackendOpName]: Kernel } = {
  'cumsum': missing('cumsum'),
  'cumprod': missing('cumprod'),
  'sort.stable': missing('sort'),
};
