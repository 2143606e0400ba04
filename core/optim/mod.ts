/**
 * Optimizers in the shape of `torch.optim`: `SGD`, `Adam`, `AdamW`, over parameters or parameter groups,
 * with PyTorch 1.13's update rules. A step updates the parameters in place under `noGrad` and leaves no
 * temporary tensor behind; `dispose()` frees the optimizer's state.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CrossEntropyLoss, Linear } from '../nn/mod.ts';
 * import { Adam } from './mod.ts';
 * const model = new Linear(2, 2);
 * const optimizer = new Adam(model.parameters(), { lr: 0.01 });
 * const loss = new CrossEntropyLoss().call(model.call(tensor([[1, 2]], { dtype: 'float32' })), tensor([1]));
 * loss.backward();
 * optimizer.step();
 * optimizer.zeroGrad();
 * ```
 *
 * @module
 */
import '../init.ts'; // usable without the root module: registers the CPU backend and Tensor methods
export type { OptionKind, OptionKinds } from './options.ts';
export { Optimizer, type ParamGroup, type ParamGroupInput, type ParamsInput, type ParamState } from './optimizer.ts';
export { type OptimizerStateDict } from './state_dict.ts';
export { SGD, type SGDGroupOptions, type SGDOptions, type SGDState } from './sgd.ts';
export { Adam, type AdamGroupOptions, type AdamOptions, type AdamState, AdamW } from './adam.ts';
export { RMSprop, type RMSpropGroupOptions, type RMSpropOptions, type RMSpropState } from './rmsprop.ts';
export { Adagrad, type AdagradGroupOptions, type AdagradOptions, type AdagradState } from './adagrad.ts';
export {
  type AnyOptimizer,
  CosineAnnealingLR,
  ExponentialLR,
  type Group,
  LambdaLR,
  LRScheduler,
  MultiStepLR,
  OneCycleLR,
  type OneCycleLROptions,
  type Phase,
  ReduceLROnPlateau,
  type ReduceLROnPlateauOptions,
  type SchedulerStateDict,
  StepLR,
} from './lr_scheduler.ts';
