/**
 * The WebGPU backend. `await initWebGPU()` acquires a device (Deno's and browsers' `navigator.gpu`, Bun through
 * `bun-webgpu`, Node through `webgpu`), refuses adapters that compute nothing, and registers the kernels at the
 * WebGPU dispatch key; then `device: 'webgpu'` works in factories and `t.to({ device: 'webgpu' })` moves data.
 * Reading results back is asynchronous: `await t.toArrayAsync()`, `await t.itemAsync()`, `await t.cpuAsync()`.
 * Importing this module loads nothing of the backend: `initWebGPU()` imports it on first use.
 *
 * @example
 * ```ts
 * import { initWebGPU, gpuInfo } from './mod.ts';
 * await initWebGPU();
 * console.log(gpuInfo().description);
 * ```
 *
 * @module
 */
import type { GpuInfo } from './device.ts';
import type { PoolStats } from './buffer_pool.ts';
import type { GpuRuntime, WebGPUOptions } from './runtime.ts';

export type { GpuInfo, PoolStats, WebGPUOptions };

let started: GpuRuntime | undefined;

/**
 * Acquires the WebGPU device and registers the backend (idempotent; later calls return at once). Rejects with a
 * RuntimeError naming what was tried when the runtime has no usable adapter.
 *
 * @example
 * ```ts
 * import { initWebGPU } from './mod.ts';
 * const info = await initWebGPU();
 * info.isFallbackAdapter; // true for a software adapter
 * ```
 */
export async function initWebGPU(options: WebGPUOptions = {}): Promise<GpuInfo> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`initWebGPU(): expected an options object, got ${options === null ? 'null' : typeof options}`);
  }
  const [{ startGpuRuntime }, { registerGpuKernels }, { installGpuHooks }] = await Promise.all([
    import('./runtime.ts'),
    import('./register.ts'),
    import('./hooks.ts'),
  ]);
  const rt = await startGpuRuntime(options);
  registerGpuKernels();
  installGpuHooks();
  started = rt;
  return rt.info;
}

/**
 * What the WebGPU adapter in use reports (after `initWebGPU()`).
 *
 * @throws {Error} before `initWebGPU()` has completed.
 * @example
 * ```ts
 * import { gpuInfo, initWebGPU } from './mod.ts';
 * await initWebGPU();
 * gpuInfo().limits.maxStorageBufferBindingSize; // e.g. 134217728
 * ```
 */
export function gpuInfo(): GpuInfo {
  if (started === undefined) throw new Error('WebGPU is not initialised: call `await initWebGPU()` first');
  return started.info;
}

/**
 * Byte counts of the WebGPU buffer pool (allocated, peak, reserved including cached buffers), PyTorch's
 * `torch.cuda.memory_allocated` / `memory_reserved` figures.
 *
 * @example
 * ```ts
 * import { gpuMemoryStats, initWebGPU } from './mod.ts';
 * await initWebGPU();
 * gpuMemoryStats().reservedBytes >= gpuMemoryStats().allocatedBytes; // true
 * ```
 */
export function gpuMemoryStats(): PoolStats {
  if (started === undefined) throw new Error('WebGPU is not initialised: call `await initWebGPU()` first');
  return started.pool.stats();
}

/**
 * Frees the cached (unused) GPU buffers (PyTorch's `torch.cuda.empty_cache`).
 *
 * @example
 * ```ts
 * import { emptyGpuCache, initWebGPU } from './mod.ts';
 * await initWebGPU();
 * emptyGpuCache();
 * ```
 */
export function emptyGpuCache(): void {
  started?.pool.emptyCache();
}

/**
 * Resolves once every command recorded so far has run on the GPU (PyTorch's `torch.cuda.synchronize`); also
 * raises device-side errors recorded since the last readback.
 *
 * @example
 * ```ts
 * import { initWebGPU, synchronizeWebGPU } from './mod.ts';
 * await initWebGPU();
 * await synchronizeWebGPU();
 * ```
 */
export async function synchronizeWebGPU(): Promise<void> {
  if (started === undefined) return;
  await started.queue.read(started.queue.status, 0, 4);
}
