/**
 * Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and maximize
 * (`torch.optim.SGD`, PyTorch 1.13's update rule).
 *
 * @module
 */
import { ValueError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { Optimizer, type ParamGroup, type ParamsInput } from './optimizer.ts';
import { constructorOptions, invalidValue, type OptionKinds } from './options.ts';

/** Hyperparameters of {@linkcode SGD}. */
export interface SGDOptions {
  /** Learning rate (required: here, or as the second constructor argument). */
  lr?: number;
  /** Momentum factor (default 0: plain SGD). */
  momentum?: number;
  /** Dampening of the momentum (default 0). */
  dampening?: number;
  /** L2 penalty added to the gradient (default 0). */
  weightDecay?: number;
  /** Nesterov momentum (default false; needs momentum > 0 and dampening 0). */
  nesterov?: boolean;
  /** Ascend instead of descend (default false). */
  maximize?: boolean;
}

/** SGD's group hyperparameters, all set. */
export type SGDGroupOptions = Required<SGDOptions>;

/** SGD's per-parameter state. */
export type SGDState = { momentumBuffer?: Tensor };

const SGD_OPTIONS: OptionKinds<SGDOptions> = {
  lr: 'float',
  momentum: 'float',
  dampening: 'float',
  weightDecay: 'float',
  nesterov: 'bool',
  maximize: 'bool',
};

/**
 * SGD. Per parameter `p` with gradient `g` (negated when maximizing):
 * `g += weightDecay·p`; with momentum, `b = g` on the first step, else `b = momentum·b + (1 - dampening)·g`,
 * and `g = nesterov ? g + momentum·b : b`; then `p -= lr·g`.
 *
 * @example
 * ```ts
 * import { SGD } from './sgd.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
 * // per batch: loss.backward(); optimizer.step(); optimizer.zeroGrad();
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export class SGD extends Optimizer<SGDGroupOptions, SGDState> {
  /** SGD over `params` (tensors or groups) with the options (`lr` required; Note [Positional learning rate]). */
  constructor(params: ParamsInput<SGDGroupOptions>, options: SGDOptions);
  /** SGD with learning rate `lr` (`new SGD(params, 0.1, { momentum: 0.9 })`, as `SGD(params, 0.1, ...)`). */
  constructor(params: ParamsInput<SGDGroupOptions>, lr: number, options?: Omit<SGDOptions, 'lr'>);
  constructor(params: ParamsInput<SGDGroupOptions>, ...args: unknown[]) {
    const options = constructorOptions('SGD', SGD_OPTIONS, args);
    super(params, {
      lr: options.lr as number,
      momentum: options.momentum ?? 0,
      dampening: options.dampening ?? 0,
      weightDecay: options.weightDecay ?? 0,
      nesterov: options.nesterov ?? false,
      maximize: options.maximize ?? false,
    });
  }

  /** SGD's options. */
  protected optionKinds(): OptionKinds<SGDGroupOptions> {
    return SGD_OPTIONS;
  }

  /** PyTorch 1.13's checks (`lr < 0` and the like: NaN passes them, as in PyTorch). */
  protected override validate(group: ParamGroup<SGDGroupOptions>): void {
    if (group.lr === undefined) {
      throw new ValueError("parameter group didn't specify a value of required optimization parameter lr");
    }
    if (group.lr < 0) throw invalidValue('learning rate', group.lr);
    if (group.momentum < 0) throw invalidValue('momentum value', group.momentum);
    if (group.weightDecay < 0) throw invalidValue('weight_decay value', group.weightDecay);
    if (group.nesterov && (group.momentum <= 0 || group.dampening !== 0)) {
      throw new ValueError('Nesterov momentum requires a momentum and zero dampening');
    }
  }

  /** One SGD update of the group's parameters. */
  protected updateGroup(group: ParamGroup<SGDGroupOptions>): void {
    const { lr, momentum, dampening, weightDecay, nesterov, maximize } = group;
    for (const param of group.params) {
      const grad = param.grad;
      if (grad === null) continue;
      let d = maximize ? grad.neg() : grad;
      if (weightDecay !== 0) d = d.add(param, { alpha: weightDecay });
      if (momentum !== 0) {
        const state = this.stateOf(param);
        let buffer = state.momentumBuffer;
        if (buffer === undefined) {
          buffer = state.momentumBuffer = this.keepState(d.clone());
        } else {
          buffer.mul_(momentum).add_(d, { alpha: 1 - dampening });
        }
        d = nesterov ? d.add(buffer, { alpha: momentum }) : buffer;
      }
      param.add_(d, { alpha: -lr });
    }
  }
}
