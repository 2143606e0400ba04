/**
 * The operator table: every operator overload Switchyard defines, in the spirit of PyTorch's
 * `native_functions.yaml`. Registration (`registry.ts`), Meta kernels and the typed API (`codegen.ts`) are
 * derived from it; backends provide kernels for the `backend` and `factory` entries, keyed by the same names.
 *
 * @module
 */
import { ACTIVATION_OPS, type ActivationCompositeOpName, type ActivationKernelOpName } from './decl_activations.ts';
import { CONVENIENCE_OPS, type ConvenienceCompositeOpName } from './decl_conveniences.ts';
import {
  type BatchNormBackendOpName,
  CONV_OPS,
  type ConvBackendOpName,
  type ConvCompositeOpName,
} from './decl_conv.ts';
import { ELEMENTWISE_OPS, type ElementwiseOpName } from './decl_elementwise.ts';
import { ELEMENTWISE_COMPOSITE_OPS, type ElementwiseCompositeOpName } from './decl_elementwise_composite.ts';
import { FACTORY_OPS, type FactoryOpName } from './decl_factories.ts';
import { INDEXING_OPS, type IndexingBackendOpName, type IndexingCompositeOpName } from './decl_indexing.ts';
import { LINALG_OPS, type LinalgBackendOpName, type LinalgCompositeOpName } from './decl_linalg.ts';
import { NN_OPS, type NnBackendOpName, type NnCompositeOpName } from './decl_nn.ts';
import { RANDOM_OPS, type RandomBackendOpName, type RandomCompositeOpName } from './decl_random.ts';
import { REDUCTION_OPS, type ReductionBackendOpName, type ReductionCompositeOpName } from './decl_reductions.ts';
import { RANDOM2_OPS, type Random2BackendOpName } from './decl_random2.ts';
import { REDUCTION2_OPS, type Reduction2CompositeOpName } from './decl_reductions2.ts';
import { SCAN_SORT_OPS, type ScanSortBackendOpName, type ScanSortCompositeOpName } from './decl_scan_sort.ts';
import { SELECTION_OPS, type SelectionBackendOpName, type SelectionCompositeOpName } from './decl_selection.ts';
import { VIEW_OPS, type ViewBackendOpName, type ViewCompositeOpName } from './decl_views.ts';
import type { OpDecl } from './op_decl.ts';

/** Names of operators every backend implements (the compiler checks each backend's kernel table). */
export type BackendOpName =
  | ElementwiseOpName
  | FactoryOpName
  | ViewBackendOpName
  | ReductionBackendOpName
  | LinalgBackendOpName
  | NnBackendOpName
  | RandomBackendOpName
  | IndexingBackendOpName
  | ScanSortBackendOpName
  | SelectionBackendOpName
  | Random2BackendOpName
  | ConvBackendOpName;

/** Names of operators implemented once for all backends (composites and views). */
export type CompositeOpName =
  | ElementwiseCompositeOpName
  | ViewCompositeOpName
  | ReductionCompositeOpName
  | LinalgCompositeOpName
  | NnCompositeOpName
  | RandomCompositeOpName
  | IndexingCompositeOpName
  | ActivationCompositeOpName
  | Reduction2CompositeOpName
  | ScanSortCompositeOpName
  | SelectionCompositeOpName
  | ConvenienceCompositeOpName
  | ConvCompositeOpName;

/** Names of operators with kernels of their own on the CPU only (other backends report the missing kernel). */
export type CpuOnlyOpName = BatchNormBackendOpName | ActivationKernelOpName;

/** Names of all declared operators. */
export type OpName = BackendOpName | CompositeOpName | CpuOnlyOpName;

/** Every operator declaration, keyed by `name.overload`. */
export const OPS: { readonly [K in OpName]: OpDecl } = {
  ...ELEMENTWISE_OPS,
  ...ELEMENTWISE_COMPOSITE_OPS,
  ...FACTORY_OPS,
  ...VIEW_OPS,
  ...REDUCTION_OPS,
  ...LINALG_OPS,
  ...NN_OPS,
  ...RANDOM_OPS,
  ...INDEXING_OPS,
  ...ACTIVATION_OPS,
  ...REDUCTION2_OPS,
  ...SCAN_SORT_OPS,
  ...SELECTION_OPS,
  ...CONVENIENCE_OPS,
  ...RANDOM2_OPS,
  ...CONV_OPS,
};
