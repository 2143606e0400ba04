/**
 * Loss modules over the functional losses of core/ops/activation_composites.ts: `L1Loss`, `SmoothL1Loss`,
 * `HuberLoss`, `BCELoss`, `BCEWithLogitsLoss`, `KLDivLoss` (with PyTorch's `batchmean` reduction) and the
 * `CosineSimilarity` module. Options are PyTorch's, camelCased; unknown options and wrong types raise
 * PyTorch's `TypeError`s when the module is built, a bad reduction raises its `ValueError` when it runs.
 *
 * @module
 */
import { ValueError } from '../dispatch/errors.ts';
import {
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  cosineSimilarity,
  huberLoss,
  klDiv,
  l1Loss,
  smoothL1Loss,
} from '../ops/generated_api.js';
import { isLiveTensor } from '../ops/arg_values.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { Reduction } from './loss.ts';
import { Module } from './module.ts';

/** How these losses reduce their per-element values. */

const CHECKS: { readonly [key: string]: [string, (v: unknown) => boolean] } = {
  reduction: ['str', (v) => typeof v === 'string'],
  beta: ['float', (v) => typeof v === 'number'],
  delta: ['float', (v) => typeof v === 'number'],
  logTarget: ['bool', (v) => typeof v === 'boolean'],
  weight: ['Tensor', (v) => v === null || isLiveTensor(v)],
  posWeight: ['Tensor', (v) => v === null || isLiveTensor(v)],
  dim: ['int', (v) => Number.isInteger(v)],
  eps: ['float', (v) => typeof v === 'number'],
};

function checkOptions(name: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined) return;
  if (!isOptions(options)) throw new TypeError(`${name}() takes 0 positional arguments but 1 was given`);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!allowed.includes(key)) throw new TypeError(`${name}() got an unexpected keyword argument '${key}'`);
    const [typeName, fits] = CHECKS[key];
    if (!fits(value)) throw new TypeError(`${name}(): argument '${key}' must be ${typeName}, not ${pyTypeName(value)}`);
  }
}

/**
 * Mean absolute error as a module (`torch.nn.L1Loss`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { L1Loss } from './loss_modules.ts';
 * new L1Loss().call(tensor([1, 2], { dtype: 'float32' }), tensor([2, 0], { dtype: 'float32' })).item(); // 1.5
 * ```
 */
export class L1Loss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;
  /** A loss with the given reduction (default `mean`). */
  constructor(options: { reduction?: Reduction } = {}) {
    checkOptions('L1Loss', options, ['reduction']);
    super();
    this.reduction = options.reduction ?? 'mean';
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return l1Loss(input, target, { reduction: this.reduction });
  }
}

/**
 * Smooth L1 loss as a module (`torch.nn.SmoothL1Loss`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SmoothL1Loss } from './loss_modules.ts';
 * new SmoothL1Loss({ beta: 0.5 }).call(tensor([0.25]), tensor([0])).item(); // 0.0625
 * ```
 */
export class SmoothL1Loss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;
  /** Where the loss turns from quadratic to linear. */
  readonly beta: number;
  /** A loss with the given reduction (default `mean`) and `beta` (default 1). */
  constructor(options: { reduction?: Reduction; beta?: number } = {}) {
    checkOptions('SmoothL1Loss', options, ['reduction', 'beta']);
    super();
    this.reduction = options.reduction ?? 'mean';
    this.beta = options.beta ?? 1;
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return smoothL1Loss(input, target, { reduction: this.reduction, beta: this.beta });
  }
}

/**
 * Huber loss as a module (`torch.nn.HuberLoss`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { HuberLoss } from './loss_modules.ts';
 * new HuberLoss({ delta: 2 }).call(tensor([3]), tensor([0])).item(); // 4
 * ```
 */
export class HuberLoss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;
  /** Where the loss turns from quadratic to linear. */
  readonly delta: number;
  /** A loss with the given reduction (default `mean`) and `delta` (default 1). */
  constructor(options: { reduction?: Reduction; delta?: number } = {}) {
    checkOptions('HuberLoss', options, ['reduction', 'delta']);
    super();
    this.reduction = options.reduction ?? 'mean';
    this.delta = options.delta ?? 1;
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return huberLoss(input, target, { reduction: this.reduction, delta: this.delta });
  }
}

/**
 * Binary cross-entropy of probabilities as a module (`torch.nn.BCELoss`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { BCELoss } from './loss_modules.ts';
 * new BCELoss().call(tensor([0.5]), tensor([1])).item(); // ln 2
 * ```
 */
export class BCELoss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;
  /** A weight broadcast over the elements, or null. */
  readonly weight: Tensor | null;
  /** A loss with the given reduction (default `mean`) and optional `weight`. */
  constructor(options: { reduction?: Reduction; weight?: Tensor | null } = {}) {
    checkOptions('BCELoss', options, ['reduction', 'weight']);
    super();
    this.reduction = options.reduction ?? 'mean';
    this.weight = options.weight ?? null;
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropy(input, target, this.weight, { reduction: this.reduction });
  }
}

/**
 * Binary cross-entropy of logits as a module (`torch.nn.BCEWithLogitsLoss`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { BCEWithLogitsLoss } from './loss_modules.ts';
 * new BCEWithLogitsLoss().call(tensor([0]), tensor([1])).item(); // ln 2
 * ```
 */
export class BCEWithLogitsLoss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction;
  /** A weight broadcast over the elements, or null. */
  readonly weight: Tensor | null;
  /** A weight of the positive class (broadcast along the last dim), or null. */
  readonly posWeight: Tensor | null;
  /** A loss with the given reduction (default `mean`), optional `weight` and `posWeight`. */
  constructor(options: { reduction?: Reduction; weight?: Tensor | null; posWeight?: Tensor | null } = {}) {
    checkOptions('BCEWithLogitsLoss', options, ['reduction', 'weight', 'posWeight']);
    super();
    this.reduction = options.reduction ?? 'mean';
    this.weight = options.weight ?? null;
    this.posWeight = options.posWeight ?? null;
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return binaryCrossEntropyWithLogits(input, target, this.weight, this.posWeight, { reduction: this.reduction });
  }
}

/**
 * Kullback-Leibler divergence as a module (`torch.nn.KLDivLoss`); reduction `batchmean` divides the sum by the
 * batch size (the input's first dim), which is the mathematically correct KL divergence.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { KLDivLoss } from './loss_modules.ts';
 * new KLDivLoss({ reduction: 'batchmean' }).call(tensor([[-1, -1]]), tensor([[0.5, 0.5]])).item(); // 1 - ln 2
 * ```
 */
export class KLDivLoss extends Module<[Tensor, Tensor], Tensor> {
  /** The reduction. */
  readonly reduction: Reduction | 'batchmean';
  /** Whether the target holds log-probabilities. */
  readonly logTarget: boolean;
  /** A loss with the given reduction (default `mean`) and `logTarget` (default false). */
  constructor(options: { reduction?: Reduction | 'batchmean'; logTarget?: boolean } = {}) {
    checkOptions('KLDivLoss', options, ['reduction', 'logTarget']);
    super();
    this.reduction = options.reduction ?? 'mean';
    this.logTarget = options.logTarget ?? false;
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    if (this.reduction !== 'batchmean') {
      return klDiv(input, target, { reduction: this.reduction, logTarget: this.logTarget });
    }
    if (input.ndim === 0) throw new ValueError('batchmean reduction needs an input with a batch dim');
    using total = klDiv(input, target, { reduction: 'sum', logTarget: this.logTarget });
    return total.div(input.shape[0]);
  }
}

/**
 * Cosine similarity along a dim as a module (`torch.nn.CosineSimilarity`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CosineSimilarity } from './loss_modules.ts';
 * new CosineSimilarity({ dim: 0 }).call(tensor([1, 0]), tensor([1, 1])).item(); // 0.7071...
 * ```
 */
export class CosineSimilarity extends Module<[Tensor, Tensor], Tensor> {
  /** The dim the similarity is taken along. */
  readonly dim: number;
  /** The smallest norm product the division uses. */
  readonly eps: number;
  /** A module with the given `dim` (default 1) and `eps` (default 1e-8). */
  constructor(options: { dim?: number; eps?: number } = {}) {
    checkOptions('CosineSimilarity', options, ['dim', 'eps']);
    super();
    this.dim = options.dim ?? 1;
    this.eps = options.eps ?? 1e-8;
  }
  /** The cosine similarity of `x1` and `x2`. */
  forward(x1: Tensor, x2: Tensor): Tensor {
    return cosineSimilarity(x1, x2, { dim: this.dim, eps: this.eps });
  }
}
