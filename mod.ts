/**
 * Switchyard: a tensor runtime for Deno and Bun whose every operator call is routed by a
 * PyTorch-c10-style dispatcher.
 *
 * @example
 * ```ts
 * import { add, tensor } from './mod.ts';
 * const y = add(tensor([1.5, 2.5]), tensor([1, 2]), { alpha: 2 });
 * console.log(String(y)); // tensor([3.5000, 6.5000])
 * ```
 *
 * @module
 */
// Importing the package gives a working runtime (see core/init.ts).
import './core/init.ts';

export * from './core/dispatch/mod.ts';
export * from './core/tensor/mod.ts';
export * from './core/ops/generated_api.ts';
export * from './core/autograd/mod.ts';
export * as nn from './core/nn/mod.ts';
export * as optim from './core/optim/mod.ts';
export { tensor, type TensorData, type TensorOptions } from './core/ops/creation.ts';
export { registerOperators } from './core/ops/registry.ts';
export { configureCpu } from './core/cpu/runtime.ts';
export { emptyGpuCache, gpuInfo, gpuMemoryStats, initWebGPU, synchronizeWebGPU } from './gpu/mod.ts';
export { getNumThreads, setNumThreads, ThreadPoolError } from './core/workers/pool.ts';
