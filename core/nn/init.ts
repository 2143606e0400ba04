/**
 * Parameter initialisation (`torch.nn.init`): in-place fills that run under `noGrad`, with PyTorch's
 * formulas for gains, fans and bounds, computed in float64 as Python computes them, so that a seeded
 * generator gives PyTorch's initial weights.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { full } from '../ops/generated_api.js';
import type { Generator } from '../tensor/generator.ts';
import type { Tensor } from '../tensor/tensor.ts';

/** Non-linearities `calculateGain` knows (PyTorch's names). */
export type Nonlinearity =
  | 'linear'
  | 'conv1d'
  | 'conv2d'
  | 'conv3d'
  | 'conv_transpose1d'
  | 'conv_transpose2d'
  | 'conv_transpose3d'
  | 'sigmoid'
  | 'tanh'
  | 'relu'
  | 'leaky_relu'
  | 'selu';

/** Options of the random fills: the generator to draw from (the default CPU generator when omitted). */
export interface InitOptions {
  /** Generator to draw from. */
  generator?: Generator;
}

/**
 * The recommended gain for a non-linearity (`torch.nn.init.calculate_gain`); `param` is leaky_relu's
 * negative slope (default 0.01).
 *
 * @example
 * ```ts
 * import { calculateGain } from './init.ts';
 * calculateGain('relu'); // Math.SQRT2
 * ```
 */
export function calculateGain(nonlinearity: Nonlinearity, param?: number | null): number {
  switch (nonlinearity) {
    case 'linear':
    case 'conv1d':
    case 'conv2d':
    case 'conv3d':
    case 'conv_transpose1d':
    case 'conv_transpose2d':
    case 'conv_transpose3d':
    case 'sigmoid':
      return 1;
    case 'tanh':
      return 5.0 / 3;
    case 'relu':
      return Math.sqrt(2.0);
    case 'leaky_relu': {
      const slope = param ?? 0.01;
      if (typeof slope !== 'number' || Number.isNaN(slope)) {
        throw new Error(`negative_slope ${slope} not a valid number`);
      }
      return Math.sqrt(2.0 / (1 + slope ** 2));
    }
    case 'selu':
      return 3.0 / 4;
    default:
      throw new Error(`Unsupported nonlinearity ${nonlinearity satisfies never}`);
  }
}

/**
 * Fan-in and fan-out of a weight of at least 2 dims (`[out, in, ...kernel]`), as PyTorch computes them.
 *
 * @example
 * ```ts
 * import { calculateFanInAndFanOut } from './init.ts';
 * // calculateFanInAndFanOut(linear.weight) // [inFeatures, outFeatures]
 * ```
 */
export function calculateFanInAndFanOut(tensor: Tensor): [fanIn: number, fanOut: number] {
  if (tensor.ndim < 2) {
    throw new Error('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions');
  }
  let receptiveField = 1;
  for (const s of tensor.shape.slice(2)) receptiveField *= s;
  return [tensor.shape[1] * receptiveField, tensor.shape[0] * receptiveField];
}

function correctFan(tensor: Tensor, mode: 'fan_in' | 'fan_out'): number {
  if (mode !== 'fan_in' && mode !== 'fan_out') {
    throw new Error(`Mode ${mode} not supported, please use one of fan_in, fan_out`);
  }
  const [fanIn, fanOut] = calculateFanInAndFanOut(tensor);
  return mode === 'fan_in' ? fanIn : fanOut;
}

/**
 * Fills `tensor` with draws from U(a, b) in place; returns it.
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { uniform_ } from './init.ts';
 * const w = uniform_(empty([3, 4]), -0.5, 0.5);
 * ```
 */
export function uniform_(tensor: Tensor, a = 0, b = 1, options: InitOptions = {}): Tensor {
  noGrad(() => tensor.uniform_(a, b, { generator: options.generator ?? null }));
  return tensor;
}

/**
 * Fills `tensor` with draws from N(mean, std²) in place; returns it.
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { normal_ } from './init.ts';
 * const w = normal_(empty([3, 4]), 0, 0.02);
 * ```
 */
export function normal_(tensor: Tensor, mean = 0, std = 1, options: InitOptions = {}): Tensor {
  noGrad(() => tensor.normal_(mean, std, { generator: options.generator ?? null }));
  return tensor;
}

/**
 * Fills `tensor` with `value` in place (`torch.nn.init.constant_`); returns it.
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { constant_ } from './init.ts';
 * const b = constant_(empty([4]), 0.1);
 * ```
 */
export function constant_(tensor: Tensor, value: number): Tensor {
  noGrad(() => {
    // `fill_` is not an operator yet: copy from a filled tensor (NaN-safe, unlike multiplying by 0).
    using filled = full(tensor.shape, value, { dtype: tensor.dtype, device: tensor.device });
    tensor.copy_(filled);
  });
  return tensor;
}

/**
 * Fills `tensor` with zeros in place; returns it.
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { zeros_ } from './init.ts';
 * const b = zeros_(empty([4]));
 * ```
 */
export function zeros_(tensor: Tensor): Tensor {
  return constant_(tensor, 0);
}

/**
 * Fills `tensor` with ones in place; returns it.
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { ones_ } from './init.ts';
 * const w = ones_(empty([4]));
 * ```
 */
export function ones_(tensor: Tensor): Tensor {
  return constant_(tensor, 1);
}

/** Options of the Kaiming (He) initialisers. */
export interface KaimingOptions extends InitOptions {
  /** Negative slope of the rectifier after this layer (leaky_relu only; default 0). */
  a?: number;
  /** Preserve the variance of the forward pass (`fan_in`, the default) or of the backward pass (`fan_out`). */
  mode?: 'fan_in' | 'fan_out';
  /** The non-linearity after this layer (default `leaky_relu`). */
  nonlinearity?: Nonlinearity;
}

function kaimingStd(tensor: Tensor, options: KaimingOptions): number {
  const fan = correctFan(tensor, options.mode ?? 'fan_in');
  const gain = calculateGain(options.nonlinearity ?? 'leaky_relu', options.a ?? 0);
  return gain / Math.sqrt(fan);
}

/**
 * He initialisation from U(-bound, bound), bound = gain·sqrt(3 / fan) (`torch.nn.init.kaiming_uniform_`).
 * `Linear` uses it with `a = sqrt(5)`, which gives bound = 1 / sqrt(fanIn).
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { kaimingUniform_ } from './init.ts';
 * const w = kaimingUniform_(empty([128, 64]), { nonlinearity: 'relu' });
 * ```
 */
export function kaimingUniform_(tensor: Tensor, options: KaimingOptions = {}): Tensor {
  if (tensor.numel === 0) return tensor; // PyTorch warns "Initializing zero-element tensors is a no-op"
  const bound = Math.sqrt(3.0) * kaimingStd(tensor, options);
  return uniform_(tensor, -bound, bound, options);
}

/**
 * He initialisation from N(0, std²), std = gain / sqrt(fan) (`torch.nn.init.kaiming_normal_`).
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { kaimingNormal_ } from './init.ts';
 * const w = kaimingNormal_(empty([128, 64]), { nonlinearity: 'relu' });
 * ```
 */
export function kaimingNormal_(tensor: Tensor, options: KaimingOptions = {}): Tensor {
  if (tensor.numel === 0) return tensor;
  return normal_(tensor, 0, kaimingStd(tensor, options), options);
}

/** Options of the Xavier (Glorot) initialisers. */
export interface XavierOptions extends InitOptions {
  /** Scaling factor (default 1). */
  gain?: number;
}

function xavierStd(tensor: Tensor, gain: number): number {
  const [fanIn, fanOut] = calculateFanInAndFanOut(tensor);
  return gain * Math.sqrt(2.0 / (fanIn + fanOut));
}

/**
 * Glorot initialisation from U(-a, a), a = gain·sqrt(6 / (fanIn + fanOut)) (`torch.nn.init.xavier_uniform_`).
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { xavierUniform_ } from './init.ts';
 * const w = xavierUniform_(empty([10, 128]));
 * ```
 */
export function xavierUniform_(tensor: Tensor, options: XavierOptions = {}): Tensor {
  const a = Math.sqrt(3.0) * xavierStd(tensor, options.gain ?? 1);
  return uniform_(tensor, -a, a, options);
}

/**
 * Glorot initialisation from N(0, std²), std = gain·sqrt(2 / (fanIn + fanOut)) (`torch.nn.init.xavier_normal_`).
 *
 * @example
 * ```ts
 * import { empty } from '../../mod.ts';
 * import { xavierNormal_ } from './init.ts';
 * const w = xavierNormal_(empty([10, 128]));
 * ```
 */
export function xavierNormal_(tensor: Tensor, options: XavierOptions = {}): Tensor {
  return normal_(tensor, 0, xavierStd(tensor, options.gain ?? 1), options);
}
