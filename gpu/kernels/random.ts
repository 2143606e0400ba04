/**
 * WebGPU kernels of the random operators.
 *
 * Note [GPU random numbers]
 * PyTorch's CUDA generator (Philox) gives other numbers than its CPU generator (mt19937), so a seed reproduces
 * a run only on one device type. Switchyard draws WebGPU random numbers from the CPU generator, with the CPU
 * kernels' transforms, and uploads them: `manualSeed(s)` then gives the same values on `webgpu` as on `cpu`
 * (and advances the same generator state), so a model initialised or trained with dropout reproduces across
 * devices. The cost is an upload per call (host generation runs at several hundred MB/s), which a training
 * step's dropout masks and initialisations amortise.
 *
 * @module
 */
import { Device } from '../../core/tensor/device.ts';
import type { Generator } from '../../core/tensor/generator.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { RandomBackendOpName } from '../../core/ops/decl_random.ts';
import { aten } from '../../core/ops/aten_call.ts';
import { hasInternalOverlap } from '../../core/ops/meta_elementwise.ts';
import { RuntimeError } from '../../core/dispatch/errors.ts';
import { copyInto, upload } from './copy.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** A factory that runs the CPU kernel (the `device` argument at `deviceIndex` becomes cpu) and uploads. */
function viaCpu(name: string, overload: string, deviceIndex: number): Kernel {
  return ((_hi: number, _lo: number, ...args: unknown[]) => {
    const cpuArgs = [...args];
    cpuArgs[deviceIndex] = Device.cpu;
    const host = aten(name, overload).call(...cpuArgs) as Tensor;
    try {
      return upload(host);
    } finally {
      host.dispose();
    }
  }) as Kernel;
}

/** `uniform_` / `normal_`: the CPU kernel fills a host tensor of `self`'s shape and dtype, copied into `self`. */
function inPlaceViaCpu(name: 'uniform_' | 'normal_'): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, a: number, b: number, g: Generator | null) => {
    self.assertAlive(name);
    if (hasInternalOverlap(self)) {
      throw new RuntimeError(
        'unsupported operation: more than one element of the written-to tensor refers to a single memory ' +
          'location. Please clone() the tensor before performing the operation.',
      );
    }
    const host = aten('empty', 'memory_format').call(self.shape, self.dtype, null, Device.cpu, null, null) as Tensor;
    try {
      aten(name).call(host, a, b, g);
      const staged = upload(host);
      try {
        copyInto(self, staged);
      } finally {
        staged.dispose();
      }
    } finally {
      host.dispose();
    }
    return self;
  }) as Kernel;
}

/**
 * WebGPU kernels of the random operators (Note [GPU random numbers]).
 *
 * @example
 * ```ts
 * import { GPU_RANDOM_KERNELS } from './random.ts';
 * typeof GPU_RANDOM_KERNELS.rand; // 'function'
 * ```
 */
export const GPU_RANDOM_KERNELS: { readonly [K in RandomBackendOpName]: Kernel } = {
  'rand': viaCpu('rand', '', 3),
  'rand.generator': viaCpu('rand', 'generator', 4),
  'randn': viaCpu('randn', '', 3),
  'randn.generator': viaCpu('randn', 'generator', 4),
  'randint': viaCpu('randint', '', 4),
  'randint.generator': viaCpu('randint', 'generator', 5),
  'randint.low': viaCpu('randint', 'low', 5),
  'randint.low_generator': viaCpu('randint', 'low_generator', 6),
  'uniform_': inPlaceViaCpu('uniform_'),
  'normal_': inPlaceViaCpu('normal_'),
};
