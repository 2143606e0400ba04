/**
 * Adam and AdamW (`torch.optim.Adam`, `torch.optim.AdamW`, PyTorch 1.13's single-tensor update rules), with
 * AMSGrad and maximize.
 *
 * @module
 */
import { maximum, zeros } from '../ops/generated_api.js';
import type { Tensor } from '../tensor/tensor.ts';
import { Optimizer, type ParamGroup, type ParamsInput } from './optimizer.ts';
import { constructorOptions, invalidValue, type OptionKinds } from './options.ts';

/** Hyperparameters of {@linkcode Adam} and {@linkcode AdamW}. */
export interface AdamOptions {
  /** Learning rate (default 1e-3). */
  lr?: number;
  /** Decay rates of the first and second moment estimates (default [0.9, 0.999]). */
  betas?: readonly [number, number];
  /** Added to the denominator (default 1e-8). */
  eps?: number;
  /** Weight decay: an L2 term in the gradient for Adam (default 0), decoupled for AdamW (default 1e-2). */
  weightDecay?: number;
  /** Use the maximum of past second moments (AMSGrad; default false). */
  amsgrad?: boolean;
  /** Ascend instead of descend (default false). */
  maximize?: boolean;
}

/** Adam's group hyperparameters, all set. */
export type AdamGroupOptions = Required<AdamOptions>;

/** Adam's per-parameter state. */
export type AdamState = { step?: number; expAvg?: Tensor; expAvgSq?: Tensor; maxExpAvgSq?: Tensor };

const ADAM_OPTIONS: OptionKinds<AdamOptions> = {
  lr: 'float',
  betas: 'pair',
  eps: 'float',
  weightDecay: 'float',
  amsgrad: 'bool',
  maximize: 'bool',
};

function withDefaults(options: AdamOptions): AdamGroupOptions {
  return {
    lr: options.lr ?? 1e-3,
    betas: options.betas ?? [0.9, 0.999],
    eps: options.eps ?? 1e-8,
    weightDecay: options.weightDecay ?? 0,
    amsgrad: options.amsgrad ?? false,
    maximize: options.maximize ?? false,
  };
}

/**
 * Adam. Per parameter at step t, with gradient `g` (negated when maximizing, plus `weightDecay·p`):
 * `m = β1·m + (1-β1)·g`, `v = β2·v + (1-β2)·g²` (with AMSGrad `v̂ = max(v̂, v)` is used below instead of v),
 * `p -= lr / (1-β1ᵗ) · m / (√v / √(1-β2ᵗ) + eps)`.
 *
 * @example
 * ```ts
 * import { Adam } from './adam.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new Adam(model.parameters(), { lr: 1e-2 });
 * // per batch: loss.backward(); optimizer.step(); optimizer.zeroGrad();
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export class Adam extends Optimizer<AdamGroupOptions, AdamState> {
  /** Adam over `params` (tensors or groups). */
  constructor(params: ParamsInput<AdamGroupOptions>, options?: AdamOptions);
  /** Adam with learning rate `lr` (`new Adam(params, 1e-3, { betas })`; Note [Positional learning rate]). */
  constructor(params: ParamsInput<AdamGroupOptions>, lr: number, options?: Omit<AdamOptions, 'lr'>);
  constructor(params: ParamsInput<AdamGroupOptions>, ...args: unknown[]) {
    super(params, withDefaults(constructorOptions(new.target.name, ADAM_OPTIONS, args)));
  }

  /** Adam's options. */
  protected optionKinds(): OptionKinds<AdamGroupOptions> {
    return ADAM_OPTIONS;
  }

  /** Whether weight decay is decoupled from the gradient (false here; AdamW's is true). */
  protected get decoupledWeightDecay(): boolean {
    return false;
  }

  /** PyTorch's checks. */
  protected override validate(group: ParamGroup<AdamGroupOptions>): void {
    if (!(group.lr >= 0)) throw invalidValue('learning rate', group.lr);
    if (!(group.eps >= 0)) throw invalidValue('epsilon value', group.eps);
    const [beta1, beta2] = group.betas;
    if (!(beta1 >= 0 && beta1 < 1)) throw invalidValue('beta parameter at index 0', beta1);
    if (!(beta2 >= 0 && beta2 < 1)) throw invalidValue('beta parameter at index 1', beta2);
    if (!(group.weightDecay >= 0)) throw invalidValue('weight_decay value', group.weightDecay);
  }

  /** One Adam update of the group's parameters. */
  protected updateGroup(group: ParamGroup<AdamGroupOptions>): void {
    const { lr, eps, weightDecay, amsgrad, maximize } = group;
    const [beta1, beta2] = group.betas;
    const decoupled = this.decoupledWeightDecay;
    for (const param of group.params) {
      const grad = param.grad;
      if (grad === null) continue;
      const state = this.stateOf(param);
      if (state.step === undefined) {
        const like = { dtype: param.dtype, device: param.device };
        state.step = 0;
        state.expAvg = this.keepState(zeros(param.shape, like));
        state.expAvgSq = this.keepState(zeros(param.shape, like));
      }
      const step = ++state.step;
      const expAvg = state.expAvg!, expAvgSq = state.expAvgSq!;
      let g = maximize ? grad.neg() : grad;
      if (decoupled) {
        if (weightDecay !== 0) param.mul_(1 - lr * weightDecay);
      } else if (weightDecay !== 0) {
        g = g.add(param, { alpha: weightDecay });
      }
      expAvg.mul_(beta1).add_(g, { alpha: 1 - beta1 });
      // PyTorch's addcmul_(g, g, value=1 - β2); there is no addcmul operator yet.
      expAvgSq.mul_(beta2).add_(g.mul(g), { alpha: 1 - beta2 });
      const biasCorrection1 = 1 - beta1 ** step;
      const biasCorrection2Sqrt = Math.sqrt(1 - beta2 ** step);
      const stepSize = lr / biasCorrection1;
      let second = expAvgSq;
      if (amsgrad) {
        // Created on first use, so that amsgrad can also be switched on in a group later.
        const max = state.maxExpAvgSq ??= this.keepState(
          zeros(param.shape, { dtype: param.dtype, device: param.device }),
        );
        max.copy_(maximum(max, expAvgSq));
        second = max;
      }
      const denom = second.sqrt().div(biasCorrection2Sqrt).add_(eps);
      // PyTorch's addcdiv_(m, denom, value=-stepSize); there is no addcdiv operator yet.
      param.add_(expAvg.div(denom), { alpha: -stepSize });
    }
  }
}

/**
 * AdamW: Adam with decoupled weight decay (`p *= 1 - lr·weightDecay` before the Adam update), default
 * weight decay 1e-2.
 *
 * @example
 * ```ts
 * import { AdamW } from './adam.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new AdamW(model.parameters(), { lr: 1e-3, weightDecay: 0.01 });
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export class AdamW extends Adam {
  /** AdamW over `params` (tensors or groups). */
  constructor(params: ParamsInput<AdamGroupOptions>, options?: AdamOptions);
  /** AdamW with learning rate `lr` (Note [Positional learning rate]). */
  constructor(params: ParamsInput<AdamGroupOptions>, lr: number, options?: Omit<AdamOptions, 'lr'>);
  constructor(params: ParamsInput<AdamGroupOptions>, ...args: unknown[]) {
    const options = constructorOptions('AdamW', ADAM_OPTIONS, args);
    super(params, { ...options, weightDecay: options.weightDecay ?? 1e-2 });
  }

  /** True: AdamW decays the weights directly. */
  protected override get decoupledWeightDecay(): boolean {
    return true;
  }
}
