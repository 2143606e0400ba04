/**
 * RMSprop (`torch.optim.RMSprop`, PyTorch 1.13's single-tensor update rule), with momentum, the centered
 * variant, weight decay and maximize.
 *
 * @module
 */
import { zeros } from '../ops/generated_api.js';
import type { Tensor } from '../tensor/tensor.ts';
import { Optimizer, type ParamGroup, type ParamsInput } from './optimizer.ts';
import { constructorOptions, invalidValue, type OptionKinds } from './options.ts';

/** Hyperparameters of {@linkcode RMSprop}. */
export interface RMSpropOptions {
  /** Learning rate (default 1e-2). */
  lr?: number;
  /** Smoothing constant of the running average of squared gradients (default 0.99). */
  alpha?: number;
  /** Added to the denominator (default 1e-8). */
  eps?: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay?: number;
  /** Momentum factor (default 0). */
  momentum?: number;
  /** Normalise by an estimate of the gradient's variance instead of its second moment (default false). */
  centered?: boolean;
  /** Ascend instead of descend (default false). */
  maximize?: boolean;
}

/** RMSprop's group hyperparameters, all set. */
export type RMSpropGroupOptions = Required<RMSpropOptions>;

/** RMSprop's per-parameter state (PyTorch's `step`, `square_avg`, `momentum_buffer`, `grad_avg`). */
export type RMSpropState = { step?: number; squareAvg?: Tensor; momentumBuffer?: Tensor; gradAvg?: Tensor };

const RMSPROP_OPTIONS: OptionKinds<RMSpropOptions> = {
  lr: 'float',
  alpha: 'float',
  eps: 'float',
  weightDecay: 'float',
  momentum: 'float',
  centered: 'bool',
  maximize: 'bool',
};

/**
 * RMSprop. Per parameter `p` with gradient `g` (negated when maximizing, plus `weightDecay·p`):
 * `v = α·v + (1-α)·g²`; centered: `ḡ = α·ḡ + (1-α)·g` and `d = √(v - ḡ²) + eps`, else `d = √v + eps`;
 * with momentum `b = momentum·b + g/d` and `p -= lr·b`, else `p -= lr·g/d`.
 *
 * @example
 * ```ts
 * import { RMSprop } from './rmsprop.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new RMSprop(model.parameters(), { lr: 1e-2, momentum: 0.9, centered: true });
 * // per batch: loss.backward(); optimizer.step(); optimizer.zeroGrad();
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export class RMSprop extends Optimizer<RMSpropGroupOptions, RMSpropState> {
  /** RMSprop over `params` (tensors or groups). */
  constructor(params: ParamsInput<RMSpropGroupOptions>, options?: RMSpropOptions);
  /** RMSprop with learning rate `lr` (Note [Positional learning rate]). */
  constructor(params: ParamsInput<RMSpropGroupOptions>, lr: number, options?: Omit<RMSpropOptions, 'lr'>);
  constructor(params: ParamsInput<RMSpropGroupOptions>, ...args: unknown[]) {
    const options = constructorOptions('RMSprop', RMSPROP_OPTIONS, args);
    super(params, {
      lr: options.lr ?? 1e-2,
      alpha: options.alpha ?? 0.99,
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0,
      momentum: options.momentum ?? 0,
      centered: options.centered ?? false,
      maximize: options.maximize ?? false,
    });
  }

  /** RMSprop's options. */
  protected optionKinds(): OptionKinds<RMSpropGroupOptions> {
    return RMSPROP_OPTIONS;
  }

  /** PyTorch 1.13's checks, in its order. */
  protected override validate(group: ParamGroup<RMSpropGroupOptions>): void {
    if (!(group.lr >= 0)) throw invalidValue('learning rate', group.lr);
    if (!(group.eps >= 0)) throw invalidValue('epsilon value', group.eps);
    if (!(group.momentum >= 0)) throw invalidValue('momentum value', group.momentum);
    if (!(group.weightDecay >= 0)) throw invalidValue('weight_decay value', group.weightDecay);
    if (!(group.alpha >= 0)) throw invalidValue('alpha value', group.alpha);
  }

  /** One RMSprop update of the group's parameters. */
  protected updateGroup(group: ParamGroup<RMSpropGroupOptions>): void {
    const { lr, alpha, eps, weightDecay, momentum, centered, maximize } = group;
    for (const param of group.params) {
      const grad = param.grad;
      if (grad === null) continue;
      const state = this.stateOf(param);
      const like = { dtype: param.dtype, device: param.device };
      if (state.step === undefined) {
        state.step = 0;
        state.squareAvg = this.keepState(zeros(param.shape, like));
      }
      state.step++;
      let g = maximize ? grad.neg() : grad;
      if (weightDecay !== 0) g = g.add(param, { alpha: weightDecay });
      const squareAvg = state.squareAvg!;
      // PyTorch's addcmul_(g, g, value=1 - α).
      squareAvg.mul_(alpha).add_(g.mul(g), { alpha: 1 - alpha });
      let avg: Tensor;
      if (centered) {
        // Created on first use, so that `centered` may be switched on in a group later, as in PyTorch.
        const gradAvg = state.gradAvg ??= this.keepState(zeros(param.shape, like));
        gradAvg.mul_(alpha).add_(g, { alpha: 1 - alpha });
        avg = squareAvg.sub(gradAvg.mul(gradAvg)).sqrt_();
      } else {
        avg = squareAvg.sqrt();
      }
      avg.add_(eps);
      if (momentum > 0) {
        const buffer = state.momentumBuffer ??= this.keepState(zeros(param.shape, like));
        buffer.mul_(momentum).add_(g.div(avg));
        param.add_(buffer, { alpha: -lr });
      } else {
        param.add_(g.div(avg), { alpha: -lr });
      }
    }
  }
}
