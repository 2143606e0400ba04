/**
 * Loss modules (`torch.nn.CrossEntropyLoss`, `NLLLoss`, `MSELoss`) and the functional `mseLoss`. The
 * class-index losses call the `cross_entropy_loss` and `nll_loss` operators; mean squared error is composed
 * from elementwise operators and a reduction.
 *
 * @module
 */
import { crossEntropy, mean, nllLoss, sum } from '../ops/generated_api.js';
import { disposedArgument, isIntArg, isLiveTensor } from '../ops/arg_values.ts';
import { isOptions, pyTypeName, reductionArg } from '../ops/arg_names.ts';
import { Tensor } from '../tensor/tensor.ts';
import { Module } from './module.ts';

/**
 * How a loss reduces its per-element values: not at all, to their mean (default), or to their sum. Anything
 * else raises PyTorch's `ValueError` ("xyz is not a valid value for reduction") when the loss is computed.
 */
export type Reduction = 'none' | 'mean' | 'sum';

/** What each loss option holds; `reduction` is checked when the loss is computed, as in PyTorch. */
const OPTION_CHECKS: { readonly [key: string]: [string, (v: unknown) => boolean] } = {
  weight: ['Tensor', (v) => v === null || isLiveTensor(v)],
  ignoreIndex: ['int', isIntArg],
  labelSmoothing: ['float', (v) => typeof v === 'number'],
  reduction: ['str', () => true],
};

/** Checks a loss module's options: known names (`allowed`) with values of the right type. */
function checkLossOptions(name: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined) return;
  if (!isOptions(options)) {
    throw new TypeError(`${name}() takes 0 positional arguments but 1 was given`);
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!allowed.includes(key)) throw new TypeError(`${name}() got an unexpected keyword argument '${key}'`);
    const [typeName, fits] = OPTION_CHECKS[key];
    if (!fits(value)) {
      if (Tensor.isTensor(value)) throw disposedArgument(name, key);
      throw new TypeError(`${name}(): argument '${key}' must be ${typeName}, not ${pyTypeName(value)}`);
    }
  }
}

/** Options of {@linkcode NLLLoss}. */
export interface NLLLossOptions {
  /** A weight per class (`[C]`). */
  weight?: Tensor | null;
  /** Targets with this value contribute nothing (default -100). */
  ignoreIndex?: number;
  /** Reduction (default `mean`: weighted mean over the targets not ignored). */
  reduction?: Reduction;
}

/** Options of {@linkcode CrossEntropyLoss}. */
export interface CrossEntropyLossOptions extends NLLLossOptions {
  /** Mixes the targets with the uniform distribution by this amount (default 0). */
  labelSmoothing?: number;
}

/**
 * Cross-entropy of logits `[N, C]` (or `[C]`, or `[N, C, d...]`) against class indices or class
 * probabilities: `log_softmax` then the negative log-likelihood.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CrossEntropyLoss } from './loss.ts';
 * const loss = new CrossEntropyLoss().call(tensor([[2, 0.5], [0.1, 1]]), tensor([0, 1]));
 * ```
 */
export class CrossEntropyLoss extends Module<[Tensor, Tensor], Tensor> {
  /** Class weights (a buffer), or null. */
  readonly weight: Tensor | null;
  /** The ignored target value. */
  readonly ignoreIndex: number;
  /** The reduction. */
  readonly reduction: Reduction;
  /** Label smoothing amount. */
  readonly labelSmoothing: number;

  /** A loss with the given options. */
  constructor(options: CrossEntropyLossOptions = {}) {
    checkLossOptions('CrossEntropyLoss', options, ['weight', 'ignoreIndex', 'reduction', 'labelSmoothing']);
    super();
    this.weight = this.registerBuffer('weight', options.weight ?? null);
    this.ignoreIndex = options.ignoreIndex ?? -100;
    this.reduction = options.reduction ?? 'mean';
    this.labelSmoothing = options.labelSmoothing ?? 0;
  }

  /** The loss of `input` logits against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return crossEntropy(
      input,
      target,
      this.weight,
      this.reduction,
      this.ignoreIndex,
      this.labelSmoothing,
    );
  }
}

/**
 * Negative log-likelihood of log-probabilities `[N, C]` (or `[C]`) against class indices.
 *
 * @example
 * ```ts
 * import { logSoftmax, tensor } from '../../mod.ts';
 * import { NLLLoss } from './loss.ts';
 * const logProbs = logSoftmax(tensor([[2, 0.5], [0.1, 1]]), 1);
 * const loss = new NLLLoss().call(logProbs, tensor([0, 1]));
 * ```
 */
export class NLLLoss extends Module<[Tensor, Tensor], Tensor> {
  /** Class weights (a buffer), or null. */
  readonly weight: Tensor | null;
  /** The ignored target value. */
  readonly ignoreIndex: number;
  /** The reduction. */
  readonly reduction: Reduction;

  /** A loss with the given options. */
  constructor(options: NLLLossOptions = {}) {
    checkLossOptions('NLLLoss', options, ['weight', 'ignoreIndex', 'reduction']);
    super();
    this.weight = this.registerBuffer('weight', options.weight ?? null);
    this.ignoreIndex = options.ignoreIndex ?? -100;
    this.reduction = options.reduction ?? 'mean';
  }

  /** The loss of `input` log-probabilities against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return nllLoss(input, target, this.weight, this.reduction, this.ignoreIndex);
  }
}

function checkTensorArgument(fn: string, name: string, position: number, v: unknown): void {
  if (isLiveTensor(v)) return;
  if (Tensor.isTensor(v)) throw disposedArgument(fn, name);
  throw new TypeError(`${fn}(): argument '${name}' (position ${position}) must be Tensor, not ${pyTypeName(v)}`);
}

/**
 * Mean squared error `(input - target)²`, reduced (`torch.nn.functional.mse_loss`); `target` broadcasts.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { mseLoss } from './loss.ts';
 * const x = tensor([1, 2], { dtype: 'float32' }), y = tensor([1.5, 1.5]);
 * mseLoss(x, y).item(); // 0.25
 * ```
 */
export function mseLoss(input: Tensor, target: Tensor, options: { reduction?: Reduction } = {}): Tensor {
  checkTensorArgument('mse_loss', 'input', 1, input);
  checkTensorArgument('mse_loss', 'target', 2, target);
  checkLossOptions('mse_loss', options, ['reduction']);
  const reduction = options.reduction ?? 'mean';
  reductionArg(reduction); // validates before computing
  using diff = input.sub(target);
  const squared = diff.mul(diff);
  if (reduction === 'none') return squared;
  using _squared = squared;
  return reduction === 'mean' ? mean(squared) : sum(squared);
}

/**
 * Mean squared error as a module.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { MSELoss } from './loss.ts';
 * const loss = new MSELoss({ reduction: 'sum' }).call(tensor([1, 2], { dtype: 'float32' }), tensor([0.5, 2.5]));
 * ```
 */
export class MSELoss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;

  /** A loss with the given reduction (default `mean`). */
  constructor(options: { reduction?: Reduction } = {}) {
    checkLossOptions('MSELoss', options, ['reduction']);
    super();
    this.reduction = options.reduction ?? 'mean';
  }

  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return mseLoss(input, target, { reduction: this.reduction });
  }
}
