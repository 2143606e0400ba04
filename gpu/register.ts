/**
 * Registers the WebGPU backend: a kernel at the WebGPU key for every backend operator. The table is typed over
 * every backend operator name (as the CPU's is), so a declared operator without a WebGPU kernel is a compile
 * error.
 *
 * @module
 */
import { DispatchKey } from '../core/dispatch/dispatch_key.ts';
import { Dispatcher } from '../core/dispatch/dispatcher.ts';
import { Library } from '../core/dispatch/library.ts';
import type { BackendOpName } from '../core/ops/declarations.ts';
import { registerOperators } from '../core/ops/registry.ts';
import { GPU_CONV_KERNELS } from './kernels/conv.ts';
import { GPU_VIEW_KERNELS } from './kernels/copy.ts';
import { GPU_ELEMENTWISE_KERNELS } from './kernels/elementwise.ts';
import { GPU_FACTORY_KERNELS } from './kernels/factories.ts';
import { GPU_INDEXING_KERNELS } from './kernels/indexing.ts';
import { GPU_LINALG_KERNELS } from './kernels/linalg.ts';
import { GPU_NN_KERNELS } from './kernels/nn.ts';
import { GPU_POOL_KERNELS } from './kernels/pool.ts';
import { GPU_RANDOM_KERNELS } from './kernels/random.ts';
import { GPU_REDUCTION_KERNELS } from './kernels/reductions.ts';
import { GPU_SCAN_SORT_KERNELS } from './kernels/scan_sort.ts';
import { GPU_SELECTION_KERNELS } from './kernels/selection.ts';
import { GPU_RANDOM2_KERNELS } from './kernels/random2.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/**
 * Every WebGPU kernel, keyed by operator name (typed over every backend operator: a missing one is a compile error).
 *
 * @example
 * ```ts
 * import { GPU_KERNELS } from './register.ts';
 * typeof GPU_KERNELS['mm']; // 'function'
 * ```
 */
export const GPU_KERNELS: { readonly [K in BackendOpName]: Kernel } = {
  ...GPU_ELEMENTWISE_KERNELS,
  ...GPU_FACTORY_KERNELS,
  ...GPU_VIEW_KERNELS,
  ...GPU_REDUCTION_KERNELS,
  ...GPU_LINALG_KERNELS,
  ...GPU_NN_KERNELS,
  ...GPU_RANDOM_KERNELS,
  ...GPU_INDEXING_KERNELS,
  ...GPU_SCAN_SORT_KERNELS,
  ...GPU_SELECTION_KERNELS,
  ...GPU_RANDOM2_KERNELS,
  ...GPU_CONV_KERNELS,
  ...GPU_POOL_KERNELS,
};

let library: Library | undefined;

/**
 * Registers the WebGPU kernels with the default dispatcher (idempotent).
 *
 * @example
 * ```ts
 * import { registerGpuKernels } from './register.ts';
 * registerGpuKernels();
 * ```
 */
export function registerGpuKernels(dispatcher: Dispatcher = Dispatcher.singleton()): void {
  if (library !== undefined) return;
  registerOperators(dispatcher);
  library = new Library('aten', 'IMPL', DispatchKey.WebGPU, { dispatcher, location: 'gpu/register.ts' });
  for (const [name, kernel] of Object.entries(GPU_KERNELS)) {
    library.impl(name, kernel as (hi: number, lo: number, ...args: unknown[]) => unknown, undefined, {
      debug: `webgpu kernel ${name}`,
    });
  }
}
