/**
 * `torch.nn.functional` in camelCase for the convolution, pooling and normalisation operators, with PyTorch's
 * Python signatures (which differ from the ATen schemas for `batchNorm` and `maxPool2d`'s `returnIndices`).
 * Everything here checks its arguments at run time and records autograd through the operators it calls.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import * as F from './functional.ts';
 * const x = randn([2, 3, 8, 8]), w = randn([4, 3, 3, 3]);
 * const y = F.maxPool2d(F.relu(F.conv2d(x, w, null, { padding: 1 })), 2); // [2, 4, 4, 4]
 * ```
 *
 * @module
 */
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import {
  adaptiveAvgPool2d as adaptiveAvgPool2dOp,
  avgPool2d as avgPool2dOp,
  batchNorm as batchNormOp,
  conv1d as conv1dOp,
  conv2d as conv2dOp,
  convTranspose1d as convTranspose1dOp,
  convTranspose2d as convTranspose2dOp,
  maxPool2d as maxPool2dOp,
  maxPool2dWithIndices,
} from '../ops/generated_api.js';
import { Tensor } from '../tensor/tensor.ts';
import type { IntOrPair } from './conv.ts';

export { crossEntropy, flatten, linear, logSoftmax, relu, softmax } from '../ops/generated_api.js';
export {
  alphaDropout,
  dropout1d,
  dropout2d,
  dropout3d,
  featureAlphaDropout,
  groupNorm,
  type GroupNormOptions,
  instanceNorm,
  type InstanceNormOptions,
} from './normalization.ts';

/** Options of {@linkcode conv1d} and {@linkcode conv2d}. */
export interface ConvOptions {
  /** Step of the kernel (default 1). */
  stride?: IntOrPair;
  /** Zero padding on each side, or `'valid'` (none) / `'same'` (output as large as the input; default 0). */
  padding?: IntOrPair | 'valid' | 'same';
  /** Spacing of the kernel taps (default 1). */
  dilation?: IntOrPair;
  /** Channel groups (default 1). */
  groups?: number;
}

function checkTensor(fn: string, name: string, t: unknown, optional = false): void {
  if (optional && (t === null || t === undefined)) return;
  if (!Tensor.isTensor(t)) {
    throw new TypeError(`${fn}(): argument '${name}' must be Tensor${optional ? ' or None' : ''}`);
  }
}

/**
 * 2-d convolution (PyTorch's `F.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { conv2d } from './functional.ts';
 * conv2d(randn([1, 3, 5, 5]), randn([2, 3, 3, 3]), null, { padding: 'same' }).shape; // [1, 2, 5, 5]
 * ```
 */
export function conv2d(input: Tensor, weight: Tensor, bias: Tensor | null = null, options: ConvOptions = {}): Tensor {
  checkTensor('conv2d', 'bias', bias, true);
  const { stride = 1, padding = 0, dilation = 1, groups = 1 } = options;
  return conv2dOp(input, weight, bias ?? null, stride as number[], padding as number[], dilation as number[], groups);
}

/**
 * 1-d convolution (PyTorch's `F.conv1d`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { conv1d } from './functional.ts';
 * conv1d(randn([1, 3, 9]), randn([2, 3, 3]), null, { stride: 2 }).shape; // [1, 2, 4]
 * ```
 */
export function conv1d(input: Tensor, weight: Tensor, bias: Tensor | null = null, options: ConvOptions = {}): Tensor {
  checkTensor('conv1d', 'bias', bias, true);
  const { stride = 1, padding = 0, dilation = 1, groups = 1 } = options;
  return conv1dOp(input, weight, bias ?? null, stride as number[], padding as number[], dilation as number[], groups);
}

/** Options of {@linkcode convTranspose2d}. */
export interface ConvTransposeOptions {
  /** Step (default 1). */
  stride?: IntOrPair;
  /** Implicit zero padding removed from each side of the output (`dilation * (kernel - 1) - padding` added). */
  padding?: IntOrPair;
  /** Extra size added to one side of the output (default 0). */
  outputPadding?: IntOrPair;
  /** Channel groups (default 1). */
  groups?: number;
  /** Spacing of the kernel taps (default 1). */
  dilation?: IntOrPair;
}

/**
 * 2-d transposed convolution (PyTorch's `F.conv_transpose2d`), weight `[C_in, C_out / groups, KH, KW]`.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { convTranspose2d } from './functional.ts';
 * convTranspose2d(randn([1, 4, 3, 3]), randn([4, 2, 2, 2]), null, { stride: 2 }).shape; // [1, 2, 6, 6]
 * ```
 */
export function convTranspose2d(
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null = null,
  options: ConvTransposeOptions = {},
): Tensor {
  checkTensor('conv_transpose2d', 'bias', bias, true);
  const { stride = 1, padding = 0, outputPadding = 0, groups = 1, dilation = 1 } = options;
  return convTranspose2dOp(
    input,
    weight,
    bias ?? null,
    stride as number[],
    padding as number[],
    outputPadding as number[],
    groups,
    dilation as number[],
  );
}

/**
 * 1-d transposed convolution (PyTorch's `F.conv_transpose1d`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { convTranspose1d } from './functional.ts';
 * convTranspose1d(randn([1, 4, 5]), randn([4, 2, 3])).shape; // [1, 2, 7]
 * ```
 */
export function convTranspose1d(
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null = null,
  options: ConvTransposeOptions = {},
): Tensor {
  checkTensor('conv_transpose1d', 'bias', bias, true);
  const { stride = 1, padding = 0, outputPadding = 0, groups = 1, dilation = 1 } = options;
  return convTranspose1dOp(
    input,
    weight,
    bias ?? null,
    stride as number[],
    padding as number[],
    outputPadding as number[],
    groups,
    dilation as number[],
  );
}

/** Options of {@linkcode maxPool2d}. */
export interface MaxPool2dOptions {
  /** Step (default: the kernel size). */
  stride?: IntOrPair | null;
  /** Implicit -inf padding on each side, at most half the kernel (default 0). */
  padding?: IntOrPair;
  /** Spacing of the window's taps (default 1). */
  dilation?: IntOrPair;
  /** Round the output size up instead of down (default false). */
  ceilMode?: boolean;
  /** Also return the flat index (h * W + w) of each maximum (default false). */
  returnIndices?: boolean;
}

/**
 * 2-d max pooling (PyTorch's `F.max_pool2d`); with `returnIndices` it returns `[values, indices]`.
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { maxPool2d } from './functional.ts';
 * maxPool2d(randn([1, 2, 6, 6]), 2).shape; // [1, 2, 3, 3]
 * const [v, i] = maxPool2d(randn([2, 6, 6]), 3, { stride: 2, returnIndices: true }); // i: int64
 * ```
 */
export function maxPool2d(
  input: Tensor,
  kernelSize: IntOrPair,
  options?: MaxPool2dOptions & { returnIndices?: false },
): Tensor;
/** With `returnIndices: true`: `[values, indices]`. */
export function maxPool2d(
  input: Tensor,
  kernelSize: IntOrPair,
  options: MaxPool2dOptions & { returnIndices: true },
): [Tensor, Tensor];
export function maxPool2d(
  input: Tensor,
  kernelSize: IntOrPair,
  options: MaxPool2dOptions = {},
): Tensor | [Tensor, Tensor] {
  const { stride = null, padding = 0, dilation = 1, ceilMode = false, returnIndices = false } = options;
  const s = (stride ?? []) as number[];
  if (returnIndices) {
    return maxPool2dWithIndices(input, kernelSize as number[], s, padding as number[], dilation as number[], ceilMode);
  }
  return maxPool2dOp(input, kernelSize as number[], s, padding as number[], dilation as number[], ceilMode);
}

/** Options of {@linkcode avgPool2d}. */
export interface AvgPool2dOptions {
  /** Step (default: the kernel size). */
  stride?: IntOrPair | null;
  /** Implicit zero padding on each side, at most half the kernel (default 0). */
  padding?: IntOrPair;
  /** Round the output size up instead of down (default false). */
  ceilMode?: boolean;
  /** Count the zero padding in the average (default true). */
  countIncludePad?: boolean;
  /** Divide by this instead of the window size (default null). */
  divisorOverride?: number | null;
}

/**
 * 2-d average pooling (PyTorch's `F.avg_pool2d`).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { avgPool2d } from './functional.ts';
 * avgPool2d(ones([1, 4, 4]), 2).tolist(); // [[[1, 1], [1, 1]]]
 * ```
 */
export function avgPool2d(input: Tensor, kernelSize: IntOrPair, options: AvgPool2dOptions = {}): Tensor {
  const { stride = null, padding = 0, ceilMode = false, countIncludePad = true, divisorOverride = null } = options;
  return avgPool2dOp(
    input,
    kernelSize as number[],
    (stride ?? []) as number[],
    padding as number[],
    ceilMode,
    countIncludePad,
    divisorOverride,
  );
}

/**
 * 2-d adaptive average pooling to `outputSize` (PyTorch's `F.adaptive_avg_pool2d`).
 *
 * @example
 * ```ts
 * import { randn } from '../../mod.ts';
 * import { adaptiveAvgPool2d } from './functional.ts';
 * adaptiveAvgPool2d(randn([2, 8, 7, 7]), 1).shape; // [2, 8, 1, 1]
 * ```
 */
export function adaptiveAvgPool2d(input: Tensor, outputSize: IntOrPair): Tensor {
  const size = typeof outputSize === 'number' ? [outputSize, outputSize] : outputSize;
  return adaptiveAvgPool2dOp(input, size as number[]);
}

/** Options of {@linkcode batchNorm}. */
export interface BatchNormOptions {
  /** Per-channel scale (default none). */
  weight?: Tensor | null;
  /** Per-channel shift (default none). */
  bias?: Tensor | null;
  /** Use (and update) batch statistics instead of the running ones (default false). */
  training?: boolean;
  /** Weight of the new batch statistics in the running ones (default 0.1). */
  momentum?: number;
  /** Added to the variance (default 1e-5). */
  eps?: number;
}

/**
 * Batch normalisation over dim 1 (PyTorch's `F.batch_norm(input, running_mean, running_var, weight=None,
 * bias=None, training=False, momentum=0.1, eps=1e-05)`): in training it normalises by the batch statistics
 * and updates the running statistics in place (the variance unbiased), otherwise it uses the running ones.
 *
 * @example
 * ```ts
 * import { ones, randn, zeros } from '../../mod.ts';
 * import { batchNorm } from './functional.ts';
 * const mean = zeros([3]), variance = ones([3]);
 * batchNorm(randn([8, 3, 4, 4]), mean, variance, { training: true }); // mean, variance now moved
 * ```
 */
export function batchNorm(
  input: Tensor,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  options: BatchNormOptions = {},
): Tensor {
  checkTensor('batch_norm', 'input', input);
  checkTensor('batch_norm', 'running_mean', runningMean, true);
  checkTensor('batch_norm', 'running_var', runningVar, true);
  const { weight = null, bias = null, training = false, momentum = 0.1, eps = 1e-5 } = options;
  if (training) {
    if (input.ndim < 2) {
      throw new RuntimeError(`batch_norm: expected at least 2 dims, got input of size [${input.shape}]`);
    }
    const perChannel = input.numel / Math.max(input.shape[1], 1);
    if (perChannel === 1) {
      throw new ValueError(
        `Expected more than 1 value per channel when training, got input size torch.Size([${input.shape.join(', ')}])`,
      );
    }
  }
  return batchNormOp(input, weight, bias, runningMean, runningVar, training, momentum, eps, false);
}
