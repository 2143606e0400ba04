/**
 * Neural-network building blocks in the shape of `torch.nn`: the `Module` base class, layers, losses and
 * the `init` functions. Options are PyTorch's, camelCased (`inFeatures`, `elementwiseAffine`, `ignoreIndex`).
 * Import the package entry (`mod.ts`) first: it registers the CPU backend and the Tensor methods these use.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CrossEntropyLoss, Linear, ReLU, Sequential } from './mod.ts';
 * const model = new Sequential(new Linear(4, 8), new ReLU(), new Linear(8, 3));
 * const loss = new CrossEntropyLoss().call(model.call(tensor([[1, 2, 3, 4]], { dtype: 'float32' })), tensor([2]));
 * loss.backward();
 * model.dispose();
 * ```
 *
 * @module
 */
import '../init.ts'; // usable without the root module: registers the CPU backend and Tensor methods
export {
  type AnyModule,
  type IncompatibleKeys,
  type LoadStateDictOptions,
  Module,
  zeroGradients,
  type ZeroGradOptions,
} from './module.ts';
export { isParameter, Parameter } from './parameter.ts';
export { RegistersAttributes } from './module_registry.ts';
export {
  Dropout,
  Embedding,
  type FactoryOptions,
  LayerNorm,
  type LayerNormOptions,
  Linear,
  type LinearOptions,
  ReLU,
  Sequential,
} from './layers.ts';
export {
  CrossEntropyLoss,
  type CrossEntropyLossOptions,
  MSELoss,
  mseLoss,
  NLLLoss,
  type NLLLossOptions,
  type Reduction,
} from './loss.ts';
export { GELU, type GELUOptions, Identity, LogSoftmax, Sigmoid, SiLU, Softmax, Tanh } from './activations.ts';
export { ModuleDict, ModuleList } from './containers.ts';
export {
  BCELoss,
  BCEWithLogitsLoss,
  CosineSimilarity,
  HuberLoss,
  KLDivLoss,
  L1Loss,
  SmoothL1Loss,
} from './loss_modules.ts';
export * as init from './init.ts';
export * as utils from './utils.ts';
export * as safetensors from './safetensors.ts';
export * as functional from './functional.ts';
export type { ConvOptions } from './functional.ts';
export {
  AdaptiveAvgPool2d,
  AvgPool2d,
  type AvgPool2dModuleOptions,
  BatchNorm1d,
  BatchNorm2d,
  type BatchNormModuleOptions,
  BatchNormNd,
  Conv1d,
  Conv2d,
  type ConvModuleOptions,
  ConvNd,
  ConvTranspose2d,
  type ConvTransposeModuleOptions,
  Flatten,
  type IntOrPair,
  MaxPool2d,
  type MaxPool2dModuleOptions,
} from './conv.ts';
export {
  AlphaDropout,
  Dropout1d,
  Dropout2d,
  Dropout3d,
  DropoutModule,
  FeatureAlphaDropout,
  GroupNorm,
  type GroupNormModuleOptions,
  InstanceNorm1d,
  InstanceNorm2d,
  type InstanceNormModuleOptions,
  InstanceNormNd,
} from './normalization.ts';
