/**
 * WebGPU kernels of `randperm` (drawn by the CPU kernel from the CPU generator and uploaded, as Note [GPU random
 * numbers] explains for the other factories) and the entries of `bernoulli` / `multinomial`, which need the
 * probabilities on the host and refuse (WebGPU has no synchronous readback).
 *
 * @module
 */
import { NotImplementedError } from '../../core/dispatch/errors.ts';
import { Device } from '../../core/tensor/device.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { Random2BackendOpName } from '../../core/ops/decl_random2.ts';
import { aten } from '../../core/ops/aten_call.ts';
import { upload } from './copy.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

function viaCpu(overload: string, deviceIndex: number): Kernel {
  return ((_hi: number, _lo: number, ...args: unknown[]) => {
    const cpuArgs = [...args];
    cpuArgs[deviceIndex] = Device.cpu;
    const host = aten('randperm', overload).call(...cpuArgs) as Tensor;
    try {
      return upload(host);
    } finally {
      host.dispose();
    }
  }) as Kernel;
}

function refuse(name: string): Kernel {
  return (() => {
    throw new NotImplementedError(
      `${name}: not implemented for webgpu tensors (it reads the probabilities on the host, and WebGPU has no ` +
        `synchronous readback); sample on the CPU: (await p.cpuAsync()).${name}(...)`,
    );
  }) as Kernel;
}

/**
 * The WebGPU entries of the sampling operators.
 *
 * @example
 * ```ts
 * import { GPU_RANDOM2_KERNELS } from './random2.ts';
 * typeof GPU_RANDOM2_KERNELS.randperm; // 'function'
 * ```
 */
export const GPU_RANDOM2_KERNELS: { readonly [K in Random2BackendOpName]: Kernel } = {
  'randperm.generator': viaCpu('generator', 4),
  'randperm': viaCpu('', 3),
  'bernoulli': refuse('bernoulli'),
  'bernoulli.p': refuse('bernoulli'),
  'multinomial': refuse('multinomial'),
};
