/**
 * The WebGPU backend. `await initWebGPU()` acquires a device (Deno's and browsers' `navigator.gpu`, Bun through
 * `bun-webgpu`, Node through `webgpu`), refuses adapters that compute nothing, and registers the kernels at the
 * WebGPU dispatch key; then `device: 'webgpu'` works in factories and `t.to({ device: 'webgpu' })` moves data.
 * Reading results back is asynchronous: `await t.toArrayAsync()`, `await t.itemAsync()`, `await t.cpuAsync()`.
 * Importing this module loads nothing of the backend: `initWebGPU()` imports it on first use.
 *
 * Note [WebGPU backend design]
 * The backend is a second set of kernels behind the same dispatcher, at the `WebGPU` key; everything above the
 * backend keys (autograd, ADInplaceOrView, composites, Meta functions with PyTorch's checks) is shared, so a
 * kernel here runs its operator's Meta function for the checks and the result's metadata, then records GPU
 * work. The pieces, each in its own file:
 * - device.ts: adapter acquisition per runtime, refusing adapters that fail a one-dispatch self-test
 *   (Note [Adapter acquisition]);
 * - buffer_pool.ts: the caching allocator behind `Storage` for device type `webgpu` (Note [Buffer pool]);
 * - commands.ts: one shared encoder and compute pass, batched submits, one uniform arena for every dispatch's
 *   parameters, uploads, readback, device-side errors (Notes [Command batching], [Device-side errors]);
 * - pipelines.ts: pipelines keyed by what their WGSL depends on, bind group layouts, cached bind groups
 *   (Note [Kernel bindings]);
 * - boundary.ts: the kernel boundary, the only place tensors become bindings (Note [GPU kernel boundary]);
 * - wgsl/: how each dtype is stored and computed in WGSL, the `AT_DISPATCH` of the backend (Note [GPU element
 *   layout]), and the math helpers;
 * - kernels/: generated kernels per family: the elementwise engine (Note [GPU elementwise plan]) serves unary,
 *   binary, comparison, where, clamp, fill, casts and copies; the reduction engine (Note [GPU reduction plan]);
 *   the tiled matmul (Note [GPU matmul tiling]); softmax and nll_loss; gather/scatter indexing; factories;
 *   random numbers (Note [GPU random numbers]);
 * - register.ts: the kernel table, typed over every backend operator, registered at the WebGPU key.
 * Readback is asynchronous (`cpuAsync`, `toArrayAsync`, `itemAsync` on Tensor, through core/tensor/host_transfer.ts),
 * since WebGPU maps buffers only through a promise; uploads are synchronous.
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
import type { AcquireOptions, GpuInfo } from './device.ts';
import type { PoolStats } from './buffer_pool.ts';
import type { GpuRuntime, WebGPUOptions } from './runtime.ts';

export type { AcquireOptions, GpuInfo, PoolStats, WebGPUOptions };
export { maskedSelectAsync, nonzeroAsync, uniqueAsync, whereAsync } from './kernels/nonzero.ts';

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
