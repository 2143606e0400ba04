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
export * from './core/ops/generated_api.js';
export * from './core/autograd/mod.ts';
export * from './core/features/mod.ts';
export * as nn from './core/nn/mod.ts';
export * as optim from './core/optim/mod.ts';
export * as safetensors from './core/nn/safetensors.ts';
export { tensor, type TensorData, type TensorOptions } from './core/ops/creation.ts';
export { type OpHandles, registerOperators } from './core/ops/registry.ts';
export { unique, type UniqueOptions } from './core/ops/unique.ts';
export { linalg } from './core/ops/linalg_namespace.ts';
// Shadows the dispatcher's `Library` exported above: the same class, typed with the runtime's Tensor.
export { Library, type LibraryConstructor, type TensorValueTypes } from './core/ops/typed_library.ts';
// The operator names, by family (the keys of `registerOperators()`'s handles).
export type { BackendOpName, CompositeOpName, OpName } from './core/ops/declarations.ts';
export type { ElementwiseOpName } from './core/ops/decl_elementwise.ts';
export type { ElementwiseCompositeOpName } from './core/ops/decl_elementwise_composite.ts';
export type { FactoryCompositeOpName, FactoryOpName } from './core/ops/decl_factories.ts';
export type { IndexingBackendOpName, IndexingCompositeOpName } from './core/ops/decl_indexing.ts';
export type { LinalgBackendOpName, LinalgCompositeOpName } from './core/ops/decl_linalg.ts';
export type { NnBackendOpName, NnCompositeOpName } from './core/ops/decl_nn.ts';
export type { RandomBackendOpName, RandomCompositeOpName } from './core/ops/decl_random.ts';
export type { ReductionBackendOpName, ReductionCompositeOpName } from './core/ops/decl_reductions.ts';
export type { ViewBackendOpName, ViewCompositeOpName } from './core/ops/decl_views.ts';
export type { ActivationCompositeOpName, ActivationKernelOpName } from './core/ops/decl_activations.ts';
export type { Reduction2CompositeOpName } from './core/ops/decl_reductions2.ts';
export type { ScanSortBackendOpName, ScanSortCompositeOpName } from './core/ops/decl_scan_sort.ts';
export type { SelectionBackendOpName, SelectionCompositeOpName } from './core/ops/decl_selection.ts';
export type { ConvenienceCompositeOpName } from './core/ops/decl_conveniences.ts';
export type { Random2BackendOpName } from './core/ops/decl_random2.ts';
export type { BatchNormBackendOpName, ConvBackendOpName, ConvCompositeOpName } from './core/ops/decl_conv.ts';
export type { CpuOnlyOpName } from './core/ops/declarations.ts';
export type { ConvenienceTensorMethods } from './core/ops/tensor_conveniences.ts';
export { configureCpu, type CpuOptions } from './core/cpu/runtime.ts';
export {
  type AcquireOptions,
  emptyGpuCache,
  type GpuInfo,
  gpuInfo,
  gpuMemoryStats,
  initWebGPU,
  maskedSelectAsync,
  nonzeroAsync,
  synchronizeWebGPU,
  uniqueAsync,
  whereAsync,
} from './gpu/mod.ts';
export { type InDims, type OutDims, registerVmap, vmap, type VmapOptions } from './core/features/vmap.ts';
export { BatchedTensor, isBatchedTensor, type Randomness } from './core/features/vmap_batched.ts';
export { setVmapFallbackWarningHandler } from './core/features/vmap_fallback.ts';
export * as func from './core/features/functorch.ts';
export {
  functionalize,
  type FunctionalizeOptions,
  registerFunctionalize,
  unregisterFunctionalize,
} from './core/features/functionalize.ts';
export {
  FunctionalStorage,
  FunctionalTensor,
  isFunctionalTensor,
  type RemoveMode,
  type ViewMeta,
} from './core/features/functionalize_tensor.ts';
export * from './core/features/autocast.ts';
export * from './core/workers/mod.ts';
export { getNumThreads, setNumThreads, ThreadPoolError } from './core/workers/pool.ts';
export {
  type BackendHooks,
  privateUse1BackendName,
  registerBackend,
  renamePrivateUse1Backend,
} from './core/features/backends.ts';
