/**
 * Asynchronous copies to the CPU for devices whose memory the host cannot read synchronously (WebGPU): a
 * backend registers how to make a CPU copy of one of its tensors, and the Tensor's `cpuAsync()`,
 * `toArrayAsync()` and `itemAsync()` use it, so core/tensor needs no backend's code.
 *
 * @module
 */
import type { DeviceType } from './device.ts';
import type { Tensor } from './tensor.ts';

/** Makes a new CPU tensor holding a device tensor's values. */
export type AsyncToCpu = (t: Tensor) => Promise<Tensor>;

const transfers = new Map<DeviceType, AsyncToCpu>();

/**
 * Registers the asynchronous copy to the CPU of a device type (a backend calls this once when it loads).
 *
 * @example
 * ```ts
 * import { registerAsyncToCpu } from './host_transfer.ts';
 * registerAsyncToCpu('webgpu', async (t) => { throw new Error(`no backend for ${t.device}`); });
 * ```
 */
export function registerAsyncToCpu(type: DeviceType, copy: AsyncToCpu): void {
  transfers.set(type, copy);
}

/**
 * A new CPU tensor holding the values of `t` (a tensor on a device registered above).
 *
 * @example
 * ```ts
 * import { asyncToCpu } from './host_transfer.ts';
 * // const host = await asyncToCpu(gpuTensor);
 * ```
 */
export function asyncToCpu(t: Tensor): Promise<Tensor> {
  const copy = transfers.get(t.device.type);
  if (copy === undefined) {
    return Promise.reject(new Error(`No backend is loaded for device type ${t.device.type}`));
  }
  return copy(t);
}
