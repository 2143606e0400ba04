/**
 * Group and instance normalisation, and the channel-wise and alpha dropouts: PyTorch's `F.group_norm`,
 * `F.instance_norm`, `F.dropout1d/2d/3d`, `F.alpha_dropout`, `F.feature_alpha_dropout` and their modules, written as
 * compositions of operators (PyTorch's own are composites too: `group_norm` and `instance_norm` are
 * CompositeImplicitAutograd, `_dropout_impl` multiplies by a Bernoulli mask), so autograd, Meta and every backend the
 * parts run on come with them.
 *
 * @module
 */
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { noGrad } from '../autograd/grad_mode.ts';
import { batchNorm as batchNormOp, bernoulli, empty, mean, variance } from '../ops/generated_api.js';
import { scope } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import { Module } from './module.ts';
import { Parameter } from './parameter.ts';
import { ones, zeros } from '../ops/generated_api.js';

function checkTensor(op: string, name: string, value: unknown, optional = false): void {
  if (optional && value === null) return;
  if (!(value instanceof Tensor) || value.isDisposed) {
    throw new TypeError(`${op}(): argument '${name}' must be Tensor${optional ? ' or None' : ''}`);
  }
}

function checkProbability(p: unknown): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
    throw new ValueError(`dropout probability has to be between 0 and 1, but got ${String(p)}`);
  }
  return p;
}

/** Options of {@linkcode groupNorm}. */
export interface GroupNormOptions {
  /** Per-channel scale (shape `[C]`). */
  weight?: Tensor | null;
  /** Per-channel shift (shape `[C]`). */
  bias?: Tensor | null;
  /** Added to the variance (default 1e-5). */
  eps?: number;
}

/**
 * Group normalisation (PyTorch's `F.group_norm`): the channels of each sample are split into `numGroups` groups, each
 * normalised by its own mean and biased variance, then scaled and shifted per channel.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { groupNorm } from './normalization.ts';
 * groupNorm(randn([2, 6, 5]), 3).shape; // [2, 6, 5]
 * ```
 */
export function groupNorm(input: Tensor, numGroups: number, options: GroupNormOptions = {}): Tensor {
  checkTensor('group_norm', 'input', input);
  const { weight = null, bias = null, eps = 1e-5 } = options;
  checkTensor('group_norm', 'weight', weight, true);
  checkTensor('group_norm', 'bias', bias, true);
  if (!Number.isInteger(numGroups) || numGroups <= 0) {
    throw new RuntimeError(`group_norm(): num_groups must be a positive integer, got ${String(numGroups)}`);
  }
  if (input.ndim < 2) {
    throw new RuntimeError(`Expected at least 2 dimensions for input tensor but received ${input.ndim}`);
  }
  const [n, c] = input.shape;
  if (c % numGroups !== 0) {
    throw new RuntimeError(
      `Expected number of channels in input to be divisible by num_groups, but got input of shape ` +
        `[${input.shape.join(', ')}] and num_groups=${numGroups}`,
    );
  }
  for (const [name, t] of [['weight', weight], ['bias', bias]] as const) {
    if (t !== null && (t.ndim !== 1 || t.shape[0] !== c)) {
      throw new RuntimeError(
        `Expected ${name} to be a vector of size equal to the number of channels in input, but got ${name} of ` +
          `shape [${t.shape.join(', ')}] and input of shape [${input.shape.join(', ')}]`,
      );
    }
  }
  return scope(() => {
    const grouped = input.reshape([n, numGroups, -1]);
    const mu = mean(grouped, -1, true);
    const sigma2 = variance(grouped, -1, { unbiased: false, keepdim: true });
    let out = grouped.sub(mu).div(sigma2.add(eps).sqrt()).reshape(input.shape);
    const channelShape = [1, c, ...input.shape.slice(2).map(() => 1)];
    if (weight !== null) out = out.mul(weight.reshape(channelShape));
    if (bias !== null) out = out.add(bias.reshape(channelShape));
    return out;
  });
}

/** Options of {@linkcode instanceNorm}. */
export interface InstanceNormOptions {
  /** Running means per channel (`[C]`), updated when `useInputStats`. */
  runningMean?: Tensor | null;
  /** Running variances per channel (`[C]`, unbiased), updated when `useInputStats`. */
  runningVar?: Tensor | null;
  /** Per-channel scale. */
  weight?: Tensor | null;
  /** Per-channel shift. */
  bias?: Tensor | null;
  /** Normalise by each instance's statistics (default true); false uses the running ones. */
  useInputStats?: boolean;
  /** Weight of the new statistics in the running ones (default 0.1). */
  momentum?: number;
  /** Added to the variance (default 1e-5). */
  eps?: number;
}

/**
 * Instance normalisation (PyTorch's `F.instance_norm`): each channel of each sample normalised over its spatial dims.
 * As PyTorch does, the input is viewed as one sample of `N·C` channels and batch-normalised, and the running
 * statistics (when given) become the mean over the samples of each sample's updated copy.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { instanceNorm } from './normalization.ts';
 * instanceNorm(randn([2, 3, 8])).shape; // [2, 3, 8]
 * ```
 */
export function instanceNorm(input: Tensor, options: InstanceNormOptions = {}): Tensor {
  checkTensor('instance_norm', 'input', input);
  const {
    runningMean = null,
    runningVar = null,
    weight = null,
    bias = null,
    useInputStats = true,
    momentum = 0.1,
    eps = 1e-5,
  } = options;
  for (
    const [name, t] of [['running_mean', runningMean], ['running_var', runningVar], ['weight', weight], [
      'bias',
      bias,
    ]] as const
  ) checkTensor('instance_norm', name, t, true);
  if (input.ndim < 3) {
    throw new ValueError(`instance_norm(): expected an input with at least 3 dims, got [${input.shape.join(', ')}]`);
  }
  const [n, c] = input.shape;
  if (useInputStats && input.numel / (n * c) <= 1) {
    throw new ValueError(
      `Expected more than 1 spatial element when training, got input size torch.Size([${input.shape.join(', ')}])`,
    );
  }
  if (!useInputStats && (runningMean === null || runningVar === null)) {
    throw new RuntimeError('Expected running_mean and running_var to be defined when use_input_stats is false');
  }
  return scope(() => {
    const repeat = (t: Tensor | null) => t === null ? null : t.repeat([n]);
    const meanCopies = repeat(runningMean), varCopies = repeat(runningVar);
    const shaped = input.reshape([1, n * c, ...input.shape.slice(2)]);
    const out = batchNormOp(
      shaped,
      repeat(weight),
      repeat(bias),
      meanCopies,
      varCopies,
      useInputStats,
      momentum,
      eps,
      false,
    )
      .reshape(input.shape);
    if (useInputStats) {
      noGrad(() => {
        if (runningMean !== null) runningMean.copy_(mean(meanCopies!.reshape([n, c]), 0));
        if (runningVar !== null) runningVar.copy_(mean(varCopies!.reshape([n, c]), 0));
      });
    }
    return out;
  });
}

/** A Bernoulli(1 - p) mask over the (sample, channel) dims of `input`, ones elsewhere (PyTorch's feature noise). */
function featureNoise(input: Tensor, p: number): Tensor {
  const shape = input.shape.map((s, i) => (i < 2 ? s : 1));
  return bernoulli(empty(shape, { dtype: input.dtype, device: input.device }), 1 - p);
}

function channelDropout(
  op: string,
  input: Tensor,
  p: number,
  training: boolean,
  dims: readonly number[],
): Tensor {
  checkTensor(op, 'input', input);
  checkProbability(p);
  if (!dims.includes(input.ndim)) {
    throw new RuntimeError(
      `${op}: Expected ${dims.map((d) => `${d}D`).join(' or ')} input, but received a ${input.ndim}D input`,
    );
  }
  if (!training || p === 0) return input;
  // An unbatched input (one dim less) is one sample: add the batch dim, drop, take it off again.
  const batched = input.ndim === dims[0] ? input.unsqueeze(0) : input;
  return scope(() => {
    const out = p === 1 ? batched.mul(0) : batched.mul(featureNoise(batched, p)).div(1 - p);
    return input.ndim === dims[0] ? out.squeeze(0) : out;
  });
}

/**
 * Zeroes whole channels of a `[N, C, L]` (or unbatched `[C, L]`) input with probability `p`, scaling the kept ones by
 * `1 / (1 - p)` (PyTorch's `F.dropout1d`).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { dropout1d } from './normalization.ts';
 * dropout1d(ones([2, 4, 3]), 0.5).shape; // [2, 4, 3]
 * ```
 */
export function dropout1d(input: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout1d', input, p, training, [2, 3]);
}

/**
 * Channel dropout for `[N, C, H, W]` (or `[C, H, W]`) inputs (PyTorch's `F.dropout2d`).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { dropout2d } from './normalization.ts';
 * dropout2d(ones([2, 4, 3, 3]), 0.5).shape; // [2, 4, 3, 3]
 * ```
 */
export function dropout2d(input: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout2d', input, p, training, [3, 4]);
}

/**
 * Channel dropout for `[N, C, D, H, W]` (or `[C, D, H, W]`) inputs (PyTorch's `F.dropout3d`).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { dropout3d } from './normalization.ts';
 * dropout3d(ones([1, 2, 2, 2, 2]), 0.5).shape; // [1, 2, 2, 2, 2]
 * ```
 */
export function dropout3d(input: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout3d', input, p, training, [4, 5]);
}

// PyTorch's SELU constants: alpha' = -lambda * alpha, the value a dropped unit takes before the affine correction.
const ALPHA = 1.7580993408473766;

function alphaDropoutImpl(op: string, input: Tensor, p: number, training: boolean, feature: boolean): Tensor {
  checkTensor(op, 'input', input);
  checkProbability(p);
  if (!training || p === 0) return input;
  if (p === 1) return input.mul(0);
  return scope(() => {
    const noise = feature
      ? featureNoise(input, p)
      : bernoulli(empty(input.shape, { dtype: input.dtype, device: input.device }), 1 - p);
    // As PyTorch's _dropout_impl: a = 1 / sqrt((alpha² p + 1)(1 - p)); b = (noise - 1) · alpha·a + alpha·a·p.
    const a = 1 / Math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p));
    const b = noise.sub(1).mul(ALPHA * a).add(ALPHA * a * p);
    return input.mul(noise.mul(a)).add(b);
  });
}

/**
 * Alpha dropout (PyTorch's `F.alpha_dropout`): drops elements to SELU's saturation value and applies the affine
 * correction that keeps a standard-normal input's mean and variance.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { alphaDropout } from './normalization.ts';
 * alphaDropout(randn([4, 5]), 0.2).shape; // [4, 5]
 * ```
 */
export function alphaDropout(input: Tensor, p = 0.5, training = false): Tensor {
  return alphaDropoutImpl('alpha_dropout', input, p, training, false);
}

/**
 * Alpha dropout of whole channels (PyTorch's `F.feature_alpha_dropout`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { featureAlphaDropout } from './normalization.ts';
 * featureAlphaDropout(randn([2, 3, 4]), 0.2, true).shape; // [2, 3, 4]
 * ```
 */
export function featureAlphaDropout(input: Tensor, p = 0.5, training = false): Tensor {
  return alphaDropoutImpl('feature_alpha_dropout', input, p, training, true);
}

/** Options of {@linkcode GroupNorm}. */
export interface GroupNormModuleOptions {
  /** Added to the variance (default 1e-5). */
  eps?: number;
  /** Learn a per-channel scale and shift (default true). */
  affine?: boolean;
}

/**
 * `torch.nn.GroupNorm`: {@linkcode groupNorm} with a learnt per-channel scale (ones) and shift (zeros).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { GroupNorm } from './normalization.ts';
 * new GroupNorm(2, 4).forward(randn([3, 4, 5])).shape; // [3, 4, 5]
 * ```
 */
export class GroupNorm extends Module<[Tensor], Tensor> {
  /** Number of groups. */
  readonly numGroups: number;
  /** Number of channels. */
  readonly numChannels: number;
  /** Added to the variance. */
  readonly eps: number;
  /** Whether there is a learnt scale and shift. */
  readonly affine: boolean;
  /** The scale (`[C]`), or null. */
  readonly weight: Parameter | null;
  /** The shift (`[C]`), or null. */
  readonly bias: Parameter | null;

  /** A group norm of `numChannels` channels in `numGroups` groups. */
  constructor(numGroups: number, numChannels: number, options: GroupNormModuleOptions = {}) {
    super();
    if (!Number.isInteger(numChannels) || numChannels <= 0 || !Number.isInteger(numGroups) || numGroups <= 0) {
      throw new ValueError(`GroupNorm: num_groups and num_channels must be positive integers`);
    }
    if (numChannels % numGroups !== 0) throw new ValueError('num_channels must be divisible by num_groups');
    this.numGroups = numGroups;
    this.numChannels = numChannels;
    this.eps = options.eps ?? 1e-5;
    this.affine = options.affine ?? true;
    this.weight = this.affine ? new Parameter(ones([numChannels])) : null;
    this.bias = this.affine ? new Parameter(zeros([numChannels])) : null;
  }

  /** Normalises `input` (`[N, C, ...]`). */
  forward(input: Tensor): Tensor {
    return groupNorm(input, this.numGroups, { weight: this.weight, bias: this.bias, eps: this.eps });
  }

  /** `2, 4, eps=1e-05, affine=True`. */
  override extraRepr(): string {
    return `${this.numGroups}, ${this.numChannels}, eps=${this.eps.toExponential().replace(/e-(\d)$/, 'e-0$1')}, ` +
      `affine=${this.affine ? 'True' : 'False'}`;
  }
}

/** Options of the InstanceNorm modules. */
export interface InstanceNormModuleOptions {
  /** Added to the variance (default 1e-5). */
  eps?: number;
  /** Weight of new statistics in the running ones (default 0.1). */
  momentum?: number;
  /** Learn a per-channel scale and shift (default false, as PyTorch). */
  affine?: boolean;
  /** Keep running statistics and use them in evaluation (default false, as PyTorch). */
  trackRunningStats?: boolean;
}

/** The shared part of InstanceNorm1d and InstanceNorm2d (PyTorch's `_InstanceNorm`). */
export abstract class InstanceNormNd extends Module<[Tensor], Tensor> {
  /** Number of channels. */
  readonly numFeatures: number;
  /** Added to the variance. */
  readonly eps: number;
  /** Weight of new statistics. */
  readonly momentum: number;
  /** Whether there is a learnt scale and shift. */
  readonly affine: boolean;
  /** Whether running statistics are kept. */
  readonly trackRunningStats: boolean;
  /** The scale, or null. */
  readonly weight: Parameter | null;
  /** The shift, or null. */
  readonly bias: Parameter | null;
  /** Running means (a buffer), or null. */
  readonly runningMean: Tensor | null;
  /** Running variances (a buffer), or null. */
  readonly runningVar: Tensor | null;

  /** Checks the options, creates the parameters and buffers (the subclasses call it). */
  constructor(numFeatures: number, options: InstanceNormModuleOptions) {
    super();
    if (!Number.isInteger(numFeatures) || numFeatures <= 0) {
      throw new ValueError(`num_features must be a positive integer, got ${String(numFeatures)}`);
    }
    this.numFeatures = numFeatures;
    this.eps = options.eps ?? 1e-5;
    this.momentum = options.momentum ?? 0.1;
    this.affine = options.affine ?? false;
    this.trackRunningStats = options.trackRunningStats ?? false;
    this.weight = this.affine ? new Parameter(ones([numFeatures])) : null;
    this.bias = this.affine ? new Parameter(zeros([numFeatures])) : null;
    this.runningMean = this.trackRunningStats ? zeros([numFeatures]) : null;
    this.runningVar = this.trackRunningStats ? ones([numFeatures]) : null;
    if (this.runningMean !== null) this.registerBuffer('running_mean', this.runningMean);
    if (this.runningVar !== null) this.registerBuffer('running_var', this.runningVar);
  }

  /** The input ranks this module takes: batched and unbatched. */
  protected abstract readonly ranks: readonly [number, number];

  /** Normalises `input` with its own statistics (training, or no running ones) or the running ones. */
  forward(input: Tensor): Tensor {
    const [unbatched, batched] = this.ranks;
    if (input.ndim !== unbatched && input.ndim !== batched) {
      throw new ValueError(`expected ${unbatched}D or ${batched}D input (got ${input.ndim}D input)`);
    }
    const x = input.ndim === unbatched ? input.unsqueeze(0) : input;
    const out = instanceNorm(x, {
      runningMean: this.runningMean,
      runningVar: this.runningVar,
      weight: this.weight,
      bias: this.bias,
      useInputStats: this.training || !this.trackRunningStats,
      momentum: this.momentum,
      eps: this.eps,
    });
    if (x === input) return out;
    x.dispose();
    const squeezed = out.squeeze(0);
    out.dispose();
    return squeezed;
  }
}

/**
 * `torch.nn.InstanceNorm1d` over `[N, C, L]` (or `[C, L]`) inputs.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { InstanceNorm1d } from './normalization.ts';
 * new InstanceNorm1d(3).forward(randn([2, 3, 5])).shape; // [2, 3, 5]
 * ```
 */
export class InstanceNorm1d extends InstanceNormNd {
  /** `[C, L]` or `[N, C, L]`. */
  protected readonly ranks = [2, 3] as const;
  /** An instance norm of `numFeatures` channels. */
  constructor(numFeatures: number, options: InstanceNormModuleOptions = {}) {
    super(numFeatures, options);
  }
}

/**
 * `torch.nn.InstanceNorm2d` over `[N, C, H, W]` (or `[C, H, W]`) inputs.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { InstanceNorm2d } from './normalization.ts';
 * new InstanceNorm2d(3).forward(randn([2, 3, 4, 4])).shape; // [2, 3, 4, 4]
 * ```
 */
export class InstanceNorm2d extends InstanceNormNd {
  /** `[C, H, W]` or `[N, C, H, W]`. */
  protected readonly ranks = [3, 4] as const;
  /** An instance norm of `numFeatures` channels. */
  constructor(numFeatures: number, options: InstanceNormModuleOptions = {}) {
    super(numFeatures, options);
  }
}

/** A dropout module over one of the functions above: drops in training, passes through in evaluation. */
export abstract class DropoutModule extends Module<[Tensor], Tensor> {
  /** Probability of dropping. */
  readonly p: number;
  /** Checks `p` (the subclasses call it). */
  constructor(p: number) {
    super();
    this.p = checkProbability(p);
  }
  /** `p=0.5, inplace=False`. */
  override extraRepr(): string {
    return `p=${this.p}, inplace=False`;
  }
}

/**
 * `torch.nn.Dropout1d`.
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { Dropout1d } from './normalization.ts';
 * new Dropout1d(0.5).eval().forward(ones([2, 3, 4])).shape; // [2, 3, 4]
 * ```
 */
export class Dropout1d extends DropoutModule {
  /** Channel dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super(p);
  }
  /** Drops channels (training) or passes through. */
  forward(input: Tensor): Tensor {
    return dropout1d(input, this.p, this.training);
  }
}

/**
 * `torch.nn.Dropout2d`.
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { Dropout2d } from './normalization.ts';
 * new Dropout2d(0.5).forward(ones([2, 3, 4, 4])).shape; // [2, 3, 4, 4]
 * ```
 */
export class Dropout2d extends DropoutModule {
  /** Channel dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super(p);
  }
  /** Drops channels (training) or passes through. */
  forward(input: Tensor): Tensor {
    return dropout2d(input, this.p, this.training);
  }
}

/**
 * `torch.nn.Dropout3d`.
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { Dropout3d } from './normalization.ts';
 * new Dropout3d(0.5).forward(ones([1, 2, 2, 2, 2])).shape; // [1, 2, 2, 2, 2]
 * ```
 */
export class Dropout3d extends DropoutModule {
  /** Channel dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super(p);
  }
  /** Drops channels (training) or passes through. */
  forward(input: Tensor): Tensor {
    return dropout3d(input, this.p, this.training);
  }
}

/**
 * `torch.nn.AlphaDropout` (for SELU networks).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { AlphaDropout } from './normalization.ts';
 * new AlphaDropout(0.2).forward(randn([4, 5])).shape; // [4, 5]
 * ```
 */
export class AlphaDropout extends DropoutModule {
  /** Alpha dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super(p);
  }
  /** Drops (training) or passes through. */
  forward(input: Tensor): Tensor {
    return alphaDropout(input, this.p, this.training);
  }
}

/**
 * `torch.nn.FeatureAlphaDropout`.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { FeatureAlphaDropout } from './normalization.ts';
 * new FeatureAlphaDropout(0.2).forward(randn([2, 3, 4])).shape; // [2, 3, 4]
 * ```
 */
export class FeatureAlphaDropout extends DropoutModule {
  /** Channel alpha dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super(p);
  }
  /** Drops channels (training) or passes through. */
  forward(input: Tensor): Tensor {
    return featureAlphaDropout(input, this.p, this.training);
  }
}
