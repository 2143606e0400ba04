/**
 * What the WebGPU backend plugs into core: the asynchronous copy to the CPU behind `cpuAsync()`,
 * `toArrayAsync()` and `itemAsync()` (core/tensor/host_transfer.ts), and the profiler's kernel timer
 * (gpu/timestamps.ts).
 *
 * @module
 */
import { registerAsyncToCpu } from '../core/tensor/host_transfer.ts';
import { filledOrFreed } from '../core/tensor/lifetime.ts';
import type { Tensor } from '../core/tensor/tensor.ts';
import { emptyGpu } from './tensors.ts';
import { download } from './transfer.ts';
import { copyInto } from './kernels/copy.ts';
import { installGpuTimer } from './timestamps.ts';

/**
 * Registers the WebGPU readback with core (idempotent).
 *
 * @example
 * ```ts
 * import { installGpuHooks } from './hooks.ts';
 * installGpuHooks();
 * ```
 */
export function installGpuHooks(): void {
  installGpuTimer();
  registerAsyncToCpu('webgpu', async (t: Tensor) => {
    const dense = t.isContiguous() ? t : filledOrFreed(emptyGpu(t.shape, t.dtype), (out) => copyInto(out, t));
    try {
      return await download(dense);
    } finally {
      if (dense !== t) dense.dispose();
    }
  });
}
