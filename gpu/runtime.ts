/**
 * The WebGPU backend's runtime state: the device, its buffer pool, command queue and pipeline cache, created by
 * `initWebGPU()` (device acquisition is asynchronous, so it cannot happen on first use).
 *
 * @module
 */
import { RuntimeError } from '../core/dispatch/errors.ts';
import { registerDeviceAllocator } from '../core/tensor/storage.ts';
import { BufferPool } from './buffer_pool.ts';
import { CommandQueue } from './commands.ts';
import { acquireDevice, type AcquireOptions, type GpuInfo } from './device.ts';
import { PipelineCache } from './pipelines.ts';

/** Everything the kernels run on. */
export interface GpuRuntime {
  readonly device: GPUDevice;
  readonly info: GpuInfo;
  readonly pool: BufferPool;
  readonly queue: CommandQueue;
  readonly pipelines: PipelineCache;
  /** Invocations per workgroup of the elementwise kernels. */
  readonly workgroupSize: number;
  /** Most workgroups of one dispatch dimension. */
  readonly maxGroups: number;
}

/** Options of `initWebGPU()`. */
export interface WebGPUOptions extends AcquireOptions {
  /** Most bytes the buffer pool may hold (default 4 GiB); exceeding it raises an OutOfMemoryError. */
  readonly maximumBytes?: number;
}

let runtime: GpuRuntime | undefined;
let starting: Promise<GpuRuntime> | undefined;

/**
 * The runtime; throws a clear error before `initWebGPU()` has completed.
 *
 * @example
 * ```ts
 * import { gpuRuntime } from './runtime.ts';
 * // after await initWebGPU(): gpuRuntime().info.description
 * ```
 */
export function gpuRuntime(): GpuRuntime {
  if (runtime === undefined) {
    throw new RuntimeError(
      "WebGPU is not initialised: call `await initWebGPU()` before using device 'webgpu'",
    );
  }
  return runtime;
}

function checkMaximumBytes(value: unknown): number {
  if (value === undefined) return 4 * 2 ** 30;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`initWebGPU(): maximumBytes must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/**
 * Acquires the device (once; later calls return the same runtime) and registers the buffer pool as the
 * allocator of device type `webgpu`.
 *
 * @example
 * ```ts
 * import { startGpuRuntime } from './runtime.ts';
 * const rt = await startGpuRuntime();
 * ```
 */
export function startGpuRuntime(options: WebGPUOptions = {}): Promise<GpuRuntime> {
  if (runtime !== undefined) return Promise.resolve(runtime);
  const limit = checkMaximumBytes(options.maximumBytes);
  starting ??= (async () => {
    const { device, info } = await acquireDevice(options);
    const queue = new CommandQueue(device);
    const pipelines = new PipelineCache(device);
    const pool = new BufferPool(device, limit, () => {
      queue.flush();
      pipelines.dropBindGroups();
    });
    const l = device.limits;
    const workgroupSize = Math.min(128, l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX);
    const rt: GpuRuntime = {
      device,
      info,
      pool,
      queue,
      pipelines,
      workgroupSize,
      maxGroups: l.maxComputeWorkgroupsPerDimension,
    };
    registerDeviceAllocator('webgpu', {
      allocate: (nbytes) => pool.allocate(nbytes),
      free: (id) => pool.free(id),
      bytes: () => {
        throw new RuntimeError(
          'The data of a webgpu tensor cannot be read synchronously (WebGPU has no blocking readback): use ' +
            'await t.toArrayAsync(), await t.itemAsync() or await t.cpuAsync()',
        );
      },
    });
    runtime = rt;
    return rt;
  })();
  starting.catch(() => {
    starting = undefined; // a failed start may be retried
  });
  return starting;
}
