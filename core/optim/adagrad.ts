/**
 * Adagrad (`torch.optim.Adagrad`, PyTorch 1.13's single-tensor update rule), with learning-rate decay,
 * weight decay, an initial accumulator value and maximize.
 *
 * @module
 */
import { full } from '../ops/generated_api.js';
import type { Tensor } from '../tensor/tensor.ts';
import { Optimizer, type ParamGroup, type ParamGroupInput, type ParamsInput } from './optimizer.ts';
import { constructorOptions, invalidValue, type OptionKinds } from './options.ts';

/** Hyperparameters of {@linkcode Adagrad}. */
export interface AdagradOptions {
  /** Learning rate (default 1e-2). */
  lr?: number;
  /** Learning-rate decay: step t uses `lr / (1 + (t - 1)·lrDecay)` (default 0). */
  lrDecay?: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay?: number;
  /** Starting value of the sum of squared gradients (default 0). */
  initialAccumulatorValue?: number;
  /** Added to the denominator (default 1e-10). */
  eps?: number;
  /** Ascend instead of descend (default false). */
  maximize?: boolean;
}

/** Adagrad's group hyperparameters, all set. */
export type AdagradGroupOptions = Required<AdagradOptions>;

/** Adagrad's per-parameter state (PyTorch's `step` and `sum`). */
export type AdagradState = { step?: number; sum?: Tensor };

const ADAGRAD_OPTIONS: OptionKinds<AdagradOptions> = {
  lr: 'float',
  lrDecay: 'float',
  weightDecay: 'float',
  initialAccumulatorValue: 'float',
  eps: 'float',
  maximize: 'bool',
};

/**
 * Adagrad. Per parameter `p` at step t with gradient `g` (negated when maximizing, plus `weightDecay·p`):
 * `s += g²`, `p -= lr / (1 + (t-1)·lrDecay) · g / (√s + eps)`. As in PyTorch, the state (`step` 0 and `sum`
 * filled with `initialAccumulatorValue`) is created when a parameter group is added.
 *
 * @example
 * ```ts
 * import { Adagrad } from './adagrad.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new Adagrad(model.parameters(), { lr: 0.1, lrDecay: 1e-3 });
 * // per batch: loss.backward(); optimizer.step(); optimizer.zeroGrad();
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export class Adagrad extends Optimizer<AdagradGroupOptions, AdagradState> {
  /** Adagrad over `params` (tensors or groups). */
  constructor(params: ParamsInput<AdagradGroupOptions>, options?: AdagradOptions);
  /** Adagrad with learning rate `lr` (Note [Positional learning rate]). */
  constructor(params: ParamsInput<AdagradGroupOptions>, lr: number, options?: Omit<AdagradOptions, 'lr'>);
  constructor(params: ParamsInput<AdagradGroupOptions>, ...args: unknown[]) {
    const options = constructorOptions('Adagrad', ADAGRAD_OPTIONS, args);
    super(params, {
      lr: options.lr ?? 1e-2,
      lrDecay: options.lrDecay ?? 0,
      weightDecay: options.weightDecay ?? 0,
      initialAccumulatorValue: options.initialAccumulatorValue ?? 0,
      eps: options.eps ?? 1e-10,
      maximize: options.maximize ?? false,
    });
  }

  /** Adagrad's options. */
  protected optionKinds(): OptionKinds<AdagradGroupOptions> {
    return ADAGRAD_OPTIONS;
  }

  /** Adds a group and creates its parameters' state (PyTorch creates it in the constructor). */
  override addParamGroup(group: ParamGroupInput<AdagradGroupOptions>): void {
    super.addParamGroup(group);
    const added = this.paramGroups[this.paramGroups.length - 1];
    for (const param of added.params) this.initState(param, added.initialAccumulatorValue);
  }

  /**
   * Creates a parameter's state (its step and sum of squared gradients). Not a #private method: the base
   * constructor calls addParamGroup before this class's members exist.
   */
  private initState(param: Tensor, initialValue: number): AdagradState {
    const state = this.stateOf(param);
    if (state.step === undefined) {
      state.step = 0;
      state.sum = this.keepState(full(param.shape, initialValue, { dtype: param.dtype, device: param.device }));
    }
    return state;
  }

  /** PyTorch 1.13's checks, in its order. */
  protected override validate(group: ParamGroup<AdagradGroupOptions>): void {
    if (!(group.lr >= 0)) throw invalidValue('learning rate', group.lr);
    if (!(group.lrDecay >= 0)) throw invalidValue('lr_decay value', group.lrDecay);
    if (!(group.weightDecay >= 0)) throw invalidValue('weight_decay value', group.weightDecay);
    if (!(group.initialAccumulatorValue >= 0)) {
      throw invalidValue('initial_accumulator_value value', group.initialAccumulatorValue);
    }
    if (!(group.eps >= 0)) throw invalidValue('epsilon value', group.eps);
  }

  /** One Adagrad update of the group's parameters. */
  protected updateGroup(group: ParamGroup<AdagradGroupOptions>): void {
    const { lr, lrDecay, weightDecay, eps, maximize } = group;
    for (const param of group.params) {
      const grad = param.grad;
      if (grad === null) continue;
      const state = this.initState(param, group.initialAccumulatorValue);
      const step = ++state.step!;
      let g = maximize ? grad.neg() : grad;
      if (weightDecay !== 0) g = g.add(param, { alpha: weightDecay });
      const clr = lr / (1 + (step - 1) * lrDecay);
      // PyTorch's addcmul_(g, g, value=1), then addcdiv_(g, √s + eps, value=-clr).
      state.sum!.add_(g.mul(g));
      const std = state.sum!.sqrt().add_(eps);
      param.add_(g.div(std), { alpha: -clr });
    }
  }
}
