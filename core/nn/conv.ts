/**
 * The convolution, pooling, normalisation and reshaping layers of `torch.nn`: `Conv1d`, `Conv2d`,
 * `ConvTranspose2d`, `BatchNorm1d`, `BatchNorm2d`, `MaxPool2d`, `AvgPool2d`, `AdaptiveAvgPool2d`, `Flatten`.
 * Options are PyTorch's, camelCased; initialisation is PyTorch's (kaiming-uniform with a = sqrt(5) for the
 * weights, bias uniform in ±1/sqrt(fan_in)); batch norm keeps `running_mean`, `running_var` and
 * `num_batches_tracked` as buffers (in `stateDict()`), and `train()` / `eval()` choose batch or running
 * statistics.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { ValueError } from '../dispatch/errors.ts';
import { empty, flatten, zeros } from '../ops/generated_api.js';
import type { Tensor } from '../tensor/tensor.ts';
import * as F from './functional.ts';
import { calculateFanInAndFanOut, kaimingUniform_, ones_, uniform_, zeros_ } from './init.ts';
import type { FactoryOptions } from './layers.ts';
import { Module } from './module.ts';

/** A size given as one number for every spatial dim, or one per dim. */
export type IntOrPair = number | readonly number[];

const tuple = (v: IntOrPair, n: number): number[] => (typeof v === 'number' ? new Array<number>(n).fill(v) : [...v]);
const pyTuple = (xs: readonly number[]) => (xs.length === 1 ? `(${xs[0]},)` : `(${xs.join(', ')})`);

function checkCount(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new TypeError(`${name} must be a positive integer, got ${String(v)}`);
  }
  return v;
}

/** Options of {@linkcode Conv1d} and {@linkcode Conv2d}. */
export interface ConvModuleOptions extends FactoryOptions {
  /** Step (default 1). */
  stride?: IntOrPair;
  /** Zero padding on each side, or `'valid'` / `'same'` (default 0). */
  padding?: IntOrPair | 'valid' | 'same';
  /** Spacing of the kernel taps (default 1). */
  dilation?: IntOrPair;
  /** Channel groups (default 1). */
  groups?: number;
  /** Learn an additive bias (default true). */
  bias?: boolean;
  /** Only `'zeros'` is supported. */
  paddingMode?: 'zeros';
}

/** The shared part of Conv1d and Conv2d (PyTorch's `_ConvNd`). */
export abstract class ConvNd extends Module {
  /** Input channels. */
  readonly inChannels: number;
  /** Output channels. */
  readonly outChannels: number;
  /** Kernel size per spatial dim. */
  readonly kernelSize: readonly number[];
  /** Stride per spatial dim. */
  readonly stride: readonly number[];
  /** Padding per spatial dim, or `'valid'` / `'same'`. */
  readonly padding: readonly number[] | 'valid' | 'same';
  /** Dilation per spatial dim. */
  readonly dilation: readonly number[];
  /** Channel groups. */
  readonly groups: number;
  /** `[outChannels, inChannels / groups, ...kernelSize]`. */
  readonly weight: Tensor;
  /** `[outChannels]`, or null without bias. */
  readonly bias: Tensor | null;

  /** Checks the options and creates the parameters with PyTorch's initialisation (the subclasses call it). */
  constructor(
    dims: number,
    inChannels: number,
    outChannels: number,
    kernelSize: IntOrPair,
    options: ConvModuleOptions,
  ) {
    super();
    this.inChannels = checkCount('in_channels', inChannels);
    this.outChannels = checkCount('out_channels', outChannels);
    const groups = options.groups ?? 1;
    if (!Number.isInteger(groups) || groups <= 0) throw new ValueError('groups must be a positive integer');
    if (inChannels % groups !== 0) throw new ValueError('in_channels must be divisible by groups');
    if (outChannels % groups !== 0) throw new ValueError('out_channels must be divisible by groups');
    this.groups = groups;
    this.kernelSize = tuple(kernelSize, dims);
    this.stride = tuple(options.stride ?? 1, dims);
    this.dilation = tuple(options.dilation ?? 1, dims);
    const padding = options.padding ?? 0;
    if (typeof padding === 'string') {
      if (padding !== 'valid' && padding !== 'same') {
        throw new ValueError(`Invalid padding string '${padding}', should be one of ['valid', 'same']`);
      }
      if (padding === 'same' && this.stride.some((s) => s !== 1)) {
        throw new ValueError("padding='same' is not supported for strided convolutions");
      }
      this.padding = padding;
    } else {
      this.padding = tuple(padding, dims);
    }
    if ((options.paddingMode ?? 'zeros') !== 'zeros') {
      throw new ValueError(`padding_mode '${options.paddingMode}' is not supported (only 'zeros')`);
    }
    const factory = { dtype: options.dtype, device: options.device };
    this.weight = this.registerParameter(
      'weight',
      empty([outChannels, inChannels / groups, ...this.kernelSize], factory),
    );
    this.bias = this.registerParameter('bias', (options.bias ?? true) ? empty([outChannels], factory) : null);
    this.resetParameters();
  }

  /** PyTorch's initialisation: kaiming-uniform (a = sqrt(5)) weights, bias uniform in ±1/sqrt(fan_in). */
  resetParameters(): void {
    kaimingUniform_(this.weight, { a: Math.sqrt(5) });
    if (this.bias !== null) {
      const [fanIn] = calculateFanInAndFanOut(this.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      uniform_(this.bias, -bound, bound);
    }
  }

  /** The options in `F.conv*`'s form. */
  protected convOptions(): F.ConvOptions {
    return {
      stride: this.stride,
      padding: this.padding as F.ConvOptions['padding'],
      dilation: this.dilation,
      groups: this.groups,
    };
  }

  /** PyTorch's repr: `3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)`. */
  override extraRepr(): string {
    let s = `${this.inChannels}, ${this.outChannels}, kernel_size=${pyTuple(this.kernelSize)}, stride=${
      pyTuple(this.stride)
    }`;
    if (typeof this.padding === 'string') s += `, padding=${this.padding}`;
    else if (this.padding.some((p) => p !== 0)) s += `, padding=${pyTuple(this.padding)}`;
    if (this.dilation.some((d) => d !== 1)) s += `, dilation=${pyTuple(this.dilation)}`;
    if (this.groups !== 1) s += `, groups=${this.groups}`;
    if (this.bias === null) s += ', bias=False';
    return s;
  }
}

/**
 * 1-d convolution layer over `[N, C, L]` (or `[C, L]`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { Conv1d } from './conv.ts';
 * new Conv1d(3, 8, 5, { padding: 2 }).call(randn([4, 3, 20])).shape; // [4, 8, 20]
 * ```
 */
export class Conv1d extends ConvNd {
  /** A layer mapping `inChannels` to `outChannels` with a kernel of `kernelSize`. */
  constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, options: ConvModuleOptions = {}) {
    super(1, inChannels, outChannels, kernelSize, options);
  }

  /** The convolution of `input`. */
  forward(input: Tensor): Tensor {
    return F.conv1d(input, this.weight, this.bias, this.convOptions());
  }
}

/**
 * 2-d convolution layer over `[N, C, H, W]` (or `[C, H, W]`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { Conv2d } from './conv.ts';
 * new Conv2d(3, 16, 3, { padding: 1 }).call(randn([2, 3, 8, 8])).shape; // [2, 16, 8, 8]
 * ```
 */
export class Conv2d extends ConvNd {
  /** A layer mapping `inChannels` to `outChannels` with a kernel of `kernelSize`. */
  constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, options: ConvModuleOptions = {}) {
    super(2, inChannels, outChannels, kernelSize, options);
  }

  /** The convolution of `input`. */
  forward(input: Tensor): Tensor {
    return F.conv2d(input, this.weight, this.bias, this.convOptions());
  }
}

/** Options of {@linkcode ConvTranspose2d}. */
export interface ConvTransposeModuleOptions extends FactoryOptions {
  /** Step (default 1). */
  stride?: IntOrPair;
  /** Rows and columns removed from each side of the output (default 0). */
  padding?: IntOrPair;
  /** Extra rows and columns on one side of the output (default 0; smaller than stride or dilation). */
  outputPadding?: IntOrPair;
  /** Channel groups (default 1). */
  groups?: number;
  /** Learn an additive bias (default true). */
  bias?: boolean;
  /** Spacing of the kernel taps (default 1). */
  dilation?: IntOrPair;
}

/**
 * 2-d transposed convolution layer (the gradient of a convolution for its input; upsampling by `stride`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { ConvTranspose2d } from './conv.ts';
 * new ConvTranspose2d(8, 4, 2, { stride: 2 }).call(randn([1, 8, 5, 5])).shape; // [1, 4, 10, 10]
 * ```
 */
export class ConvTranspose2d extends Module {
  /** Input channels. */
  readonly inChannels: number;
  /** Output channels. */
  readonly outChannels: number;
  /** Kernel size. */
  readonly kernelSize: readonly number[];
  /** Stride. */
  readonly stride: readonly number[];
  /** Padding. */
  readonly padding: readonly number[];
  /** Output padding. */
  readonly outputPadding: readonly number[];
  /** Dilation. */
  readonly dilation: readonly number[];
  /** Channel groups. */
  readonly groups: number;
  /** `[inChannels, outChannels / groups, ...kernelSize]`. */
  readonly weight: Tensor;
  /** `[outChannels]`, or null without bias. */
  readonly bias: Tensor | null;

  /** A layer mapping `inChannels` to `outChannels`. */
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: IntOrPair,
    options: ConvTransposeModuleOptions = {},
  ) {
    super();
    this.inChannels = checkCount('in_channels', inChannels);
    this.outChannels = checkCount('out_channels', outChannels);
    const groups = options.groups ?? 1;
    if (!Number.isInteger(groups) || groups <= 0) throw new ValueError('groups must be a positive integer');
    if (inChannels % groups !== 0) throw new ValueError('in_channels must be divisible by groups');
    if (outChannels % groups !== 0) throw new ValueError('out_channels must be divisible by groups');
    this.groups = groups;
    this.kernelSize = tuple(kernelSize, 2);
    this.stride = tuple(options.stride ?? 1, 2);
    this.padding = tuple(options.padding ?? 0, 2);
    this.outputPadding = tuple(options.outputPadding ?? 0, 2);
    this.dilation = tuple(options.dilation ?? 1, 2);
    const factory = { dtype: options.dtype, device: options.device };
    this.weight = this.registerParameter(
      'weight',
      empty([inChannels, outChannels / groups, ...this.kernelSize], factory),
    );
    this.bias = this.registerParameter('bias', (options.bias ?? true) ? empty([outChannels], factory) : null);
    this.resetParameters();
  }

  /** PyTorch's initialisation (as `Conv2d`'s, with the fan-in of the transposed weight). */
  resetParameters(): void {
    kaimingUniform_(this.weight, { a: Math.sqrt(5) });
    if (this.bias !== null) {
      const [fanIn] = calculateFanInAndFanOut(this.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      uniform_(this.bias, -bound, bound);
    }
  }

  /** The transposed convolution of `input`. */
  forward(input: Tensor): Tensor {
    return F.convTranspose2d(input, this.weight, this.bias, {
      stride: this.stride,
      padding: this.padding,
      outputPadding: this.outputPadding,
      groups: this.groups,
      dilation: this.dilation,
    });
  }

  /** `8, 4, kernel_size=(2, 2), stride=(2, 2)`. */
  override extraRepr(): string {
    let s = `${this.inChannels}, ${this.outChannels}, kernel_size=${pyTuple(this.kernelSize)}, stride=${
      pyTuple(this.stride)
    }`;
    if (this.padding.some((p) => p !== 0)) s += `, padding=${pyTuple(this.padding)}`;
    if (this.dilation.some((d) => d !== 1)) s += `, dilation=${pyTuple(this.dilation)}`;
    if (this.outputPadding.some((p) => p !== 0)) s += `, output_padding=${pyTuple(this.outputPadding)}`;
    if (this.groups !== 1) s += `, groups=${this.groups}`;
    if (this.bias === null) s += ', bias=False';
    return s;
  }
}

/** Options of {@linkcode BatchNorm1d} and {@linkcode BatchNorm2d}. */
export interface BatchNormModuleOptions extends FactoryOptions {
  /** Added to the variance (default 1e-5). */
  eps?: number;
  /** Weight of each batch in the running statistics; null for a cumulative average (default 0.1). */
  momentum?: number | null;
  /** Learn a per-channel scale and shift (default true). */
  affine?: boolean;
  /** Keep running statistics for evaluation (default true). */
  trackRunningStats?: boolean;
}

/** The shared part of BatchNorm1d and BatchNorm2d (PyTorch's `_BatchNorm`). */
export abstract class BatchNormNd extends Module {
  /** Channels (dim 1 of the input). */
  readonly numFeatures: number;
  /** Added to the variance. */
  readonly eps: number;
  /** Weight of each batch in the running statistics (null: cumulative average). */
  readonly momentum: number | null;
  /** Whether there is a learnt scale and shift. */
  readonly affine: boolean;
  /** Whether running statistics are kept. */
  readonly trackRunningStats: boolean;
  /** Scale (ones at first), or null without affine. */
  readonly weight: Tensor | null;
  /** Shift (zeros at first), or null without affine. */
  readonly bias: Tensor | null;
  // The running statistics are read from the registered buffers (own properties named `running_mean`, ...), so
  // they follow `to()`, which registers moved buffers under those names.
  /** Running mean (buffer `running_mean`), or null. */
  get runningMean(): Tensor | null {
    return this.#buffer('running_mean');
  }
  /** Running unbiased variance (buffer `running_var`), or null. */
  get runningVar(): Tensor | null {
    return this.#buffer('running_var');
  }
  /** Batches seen in training (int64 buffer `num_batches_tracked`), or null. */
  get numBatchesTracked(): Tensor | null {
    return this.#buffer('num_batches_tracked');
  }

  #buffer(name: string): Tensor | null {
    return (this as unknown as Record<string, Tensor | null>)[name] ?? null;
  }

  /** Checks the options and creates the affine parameters and running-statistics buffers (the subclasses call it). */
  constructor(numFeatures: number, options: BatchNormModuleOptions) {
    super();
    this.numFeatures = checkCount('num_features', numFeatures);
    this.eps = options.eps ?? 1e-5;
    this.momentum = options.momentum === undefined ? 0.1 : options.momentum;
    this.affine = options.affine ?? true;
    this.trackRunningStats = options.trackRunningStats ?? true;
    const factory = { dtype: options.dtype, device: options.device };
    this.weight = this.registerParameter('weight', this.affine ? ones_(empty([numFeatures], factory)) : null);
    this.bias = this.registerParameter('bias', this.affine ? zeros_(empty([numFeatures], factory)) : null);
    const track = this.trackRunningStats;
    this.registerBuffer('running_mean', track ? zeros([numFeatures], factory) : null);
    this.registerBuffer('running_var', track ? ones_(empty([numFeatures], factory)) : null);
    this.registerBuffer(
      'num_batches_tracked',
      track ? zeros([], { dtype: 'int64', device: options.device }) : null,
    );
  }

  /** Checks the input's rank (PyTorch's `_check_input_dim`). */
  protected abstract checkInputDim(input: Tensor): void;

  /** Zeroes the running statistics (mean 0, variance 1, no batches). */
  resetRunningStats(): void {
    noGrad(() => {
      if (this.runningMean !== null) zeros_(this.runningMean);
      if (this.runningVar !== null) ones_(this.runningVar);
      if (this.numBatchesTracked !== null) zeros_(this.numBatchesTracked);
    });
  }

  /** Normalises `input` by batch statistics (training, or no running statistics) or by the running ones. */
  forward(input: Tensor): Tensor {
    this.checkInputDim(input);
    let factor = this.momentum ?? 0;
    if (this.training && this.trackRunningStats && this.numBatchesTracked !== null) {
      noGrad(() => void this.numBatchesTracked!.add_(1));
      // momentum None: a cumulative moving average, 1 / batches.
      if (this.momentum === null) factor = 1 / Number(this.numBatchesTracked.item());
    }
    // PyTorch's _BatchNorm: batch statistics in training or without running ones; the running ones (if
    // kept) are updated in training and used otherwise.
    const useBatch = this.training || this.runningMean === null;
    return F.batchNorm(input, this.runningMean, this.runningVar, {
      weight: this.weight,
      bias: this.bias,
      training: useBatch,
      momentum: factor,
      eps: this.eps,
    });
  }

  /** `16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True`. */
  override extraRepr(): string {
    const py = (b: boolean) => (b ? 'True' : 'False');
    return `${this.numFeatures}, eps=${pythonFloat(this.eps)}, momentum=${
      this.momentum === null ? 'None' : pythonFloat(this.momentum)
    }, affine=${py(this.affine)}, track_running_stats=${py(this.trackRunningStats)}`;
  }
}

/**
 * Batch normalisation of `[N, C]` or `[N, C, L]` over the batch (and length) per channel.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { BatchNorm1d } from './conv.ts';
 * const bn = new BatchNorm1d(4);
 * bn.call(randn([8, 4])).shape; // [8, 4]; running statistics updated
 * ```
 */
export class BatchNorm1d extends BatchNormNd {
  /** Batch norm over `numFeatures` channels. */
  constructor(numFeatures: number, options: BatchNormModuleOptions = {}) {
    super(numFeatures, options);
  }

  /** Refuses an input that is not `[N, C]` or `[N, C, L]`, as PyTorch's `_check_input_dim`. */
  protected checkInputDim(input: Tensor): void {
    if (input.ndim !== 2 && input.ndim !== 3) {
      throw new ValueError(`expected 2D or 3D input (got ${input.ndim}D input)`);
    }
  }
}

/**
 * Batch normalisation of `[N, C, H, W]` per channel.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { BatchNorm2d } from './conv.ts';
 * const bn = new BatchNorm2d(3);
 * bn.call(randn([4, 3, 5, 5])); // training: batch statistics
 * bn.eval().call(randn([1, 3, 5, 5])); // evaluation: running statistics
 * ```
 */
export class BatchNorm2d extends BatchNormNd {
  /** Batch norm over `numFeatures` channels. */
  constructor(numFeatures: number, options: BatchNormModuleOptions = {}) {
    super(numFeatures, options);
  }

  /** Refuses an input that is not `[N, C, H, W]`, as PyTorch's `_check_input_dim`. */
  protected checkInputDim(input: Tensor): void {
    if (input.ndim !== 4) throw new ValueError(`expected 4D input (got ${input.ndim}D input)`);
  }
}

/** Options of {@linkcode MaxPool2d}. */
export interface MaxPool2dModuleOptions {
  /** Step (default: the kernel size). */
  stride?: IntOrPair | null;
  /** Implicit -inf padding (default 0). */
  padding?: IntOrPair;
  /** Spacing of the window's taps (default 1). */
  dilation?: IntOrPair;
  /** Round the output size up (default false). */
  ceilMode?: boolean;
}

const reprValue = (v: IntOrPair) => (typeof v === 'number' ? String(v) : pyTuple(v));

/**
 * 2-d max pooling layer.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { MaxPool2d } from './conv.ts';
 * new MaxPool2d(2).call(randn([1, 3, 8, 8])).shape; // [1, 3, 4, 4]
 * ```
 */
export class MaxPool2d extends Module {
  /** Window size. */
  readonly kernelSize: IntOrPair;
  /** Step. */
  readonly stride: IntOrPair;
  /** Padding. */
  readonly padding: IntOrPair;
  /** Dilation. */
  readonly dilation: IntOrPair;
  /** Round up. */
  readonly ceilMode: boolean;

  /** Pools windows of `kernelSize`. */
  constructor(kernelSize: IntOrPair, options: MaxPool2dModuleOptions = {}) {
    super();
    this.kernelSize = kernelSize;
    this.stride = options.stride ?? kernelSize;
    this.padding = options.padding ?? 0;
    this.dilation = options.dilation ?? 1;
    this.ceilMode = options.ceilMode ?? false;
  }

  /** The pooled input. */
  forward(input: Tensor): Tensor {
    return F.maxPool2d(input, this.kernelSize, {
      stride: this.stride,
      padding: this.padding,
      dilation: this.dilation,
      ceilMode: this.ceilMode,
    });
  }

  /** `kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False`. */
  override extraRepr(): string {
    return `kernel_size=${reprValue(this.kernelSize)}, stride=${reprValue(this.stride)}, padding=${
      reprValue(this.padding)
    }, dilation=${reprValue(this.dilation)}, ceil_mode=${this.ceilMode ? 'True' : 'False'}`;
  }
}

/** Options of {@linkcode AvgPool2d}. */
export interface AvgPool2dModuleOptions {
  /** Step (default: the kernel size). */
  stride?: IntOrPair | null;
  /** Zero padding (default 0). */
  padding?: IntOrPair;
  /** Round the output size up (default false). */
  ceilMode?: boolean;
  /** Count the padding in the average (default true). */
  countIncludePad?: boolean;
  /** Divide by this instead (default null). */
  divisorOverride?: number | null;
}

/**
 * 2-d average pooling layer.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { AvgPool2d } from './conv.ts';
 * new AvgPool2d(3, { stride: 2, padding: 1 }).call(randn([1, 2, 7, 7])).shape; // [1, 2, 4, 4]
 * ```
 */
export class AvgPool2d extends Module {
  /** Window size. */
  readonly kernelSize: IntOrPair;
  /** Step. */
  readonly stride: IntOrPair;
  /** Padding. */
  readonly padding: IntOrPair;
  /** Round up. */
  readonly ceilMode: boolean;
  /** Count the padding. */
  readonly countIncludePad: boolean;
  /** Divisor override. */
  readonly divisorOverride: number | null;

  /** Averages windows of `kernelSize`. */
  constructor(kernelSize: IntOrPair, options: AvgPool2dModuleOptions = {}) {
    super();
    this.kernelSize = kernelSize;
    this.stride = options.stride ?? kernelSize;
    this.padding = options.padding ?? 0;
    this.ceilMode = options.ceilMode ?? false;
    this.countIncludePad = options.countIncludePad ?? true;
    this.divisorOverride = options.divisorOverride ?? null;
  }

  /** The pooled input. */
  forward(input: Tensor): Tensor {
    return F.avgPool2d(input, this.kernelSize, {
      stride: this.stride,
      padding: this.padding,
      ceilMode: this.ceilMode,
      countIncludePad: this.countIncludePad,
      divisorOverride: this.divisorOverride,
    });
  }

  /** `kernel_size=2, stride=2, padding=0`. */
  override extraRepr(): string {
    return `kernel_size=${reprValue(this.kernelSize)}, stride=${reprValue(this.stride)}, padding=${
      reprValue(this.padding)
    }`;
  }
}

/**
 * 2-d adaptive average pooling layer (`new AdaptiveAvgPool2d(1)` is global average pooling).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { AdaptiveAvgPool2d } from './conv.ts';
 * new AdaptiveAvgPool2d([2, 3]).call(randn([1, 4, 9, 9])).shape; // [1, 4, 2, 3]
 * ```
 */
export class AdaptiveAvgPool2d extends Module {
  /** Output height and width (one number for both). */
  readonly outputSize: IntOrPair;

  /** Pools to `outputSize`. */
  constructor(outputSize: IntOrPair) {
    super();
    this.outputSize = outputSize;
  }

  /** The pooled input. */
  forward(input: Tensor): Tensor {
    return F.adaptiveAvgPool2d(input, this.outputSize);
  }

  /** `output_size=1`. */
  override extraRepr(): string {
    return `output_size=${reprValue(this.outputSize)}`;
  }
}

/**
 * Flattens dims `startDim..endDim` into one (default: all but the batch dim).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { Flatten } from './conv.ts';
 * new Flatten().call(randn([2, 3, 4, 4])).shape; // [2, 48]
 * ```
 */
export class Flatten extends Module {
  /** First flattened dim. */
  readonly startDim: number;
  /** Last flattened dim. */
  readonly endDim: number;

  /** Flattens `startDim..endDim` (defaults 1 and -1). */
  constructor(startDim = 1, endDim = -1) {
    super();
    if (!Number.isInteger(startDim) || !Number.isInteger(endDim)) {
      throw new TypeError('Flatten(): startDim and endDim must be integers');
    }
    this.startDim = startDim;
    this.endDim = endDim;
  }

  /** The flattened input (a view when possible). */
  forward(input: Tensor): Tensor {
    return flatten(input, this.startDim, this.endDim);
  }

  /** `start_dim=1, end_dim=-1`. */
  override extraRepr(): string {
    return `start_dim=${this.startDim}, end_dim=${this.endDim}`;
  }
}

function pythonFloat(x: number): string {
  const [mantissa, exponentText] = x.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return Number.isInteger(x) ? `${x}.0` : String(x);
}
