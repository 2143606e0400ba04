/**
 * Layers (`torch.nn`): `Linear`, `Sequential`, `ReLU`, `Dropout`, `LayerNorm`, `Embedding`. Parameters are
 * created and initialised as PyTorch's `reset_parameters` does, drawing from the default generator in the
 * same order, so a seed gives PyTorch's initial weights.
 *
 * @module
 */
import { embedding, empty, linear, mean, relu } from '../ops/generated_api.js';
import type { DeviceLike } from '../tensor/device.ts';
import type { DTypeLike } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { calculateFanInAndFanOut, kaimingUniform_, normal_, ones_, uniform_, zeros_ } from './init.ts';
import { Module } from './module.ts';

/** Where and how new parameters are allocated. */
export interface FactoryOptions {
  /** Parameter dtype (default: the default dtype, float32). */
  dtype?: DTypeLike;
  /** Parameter device (default cpu). */
  device?: DeviceLike;
}

/** Options of {@linkcode Linear}. */
export interface LinearOptions extends FactoryOptions {
  /** Whether to learn an additive bias (default true). */
  bias?: boolean;
}

/**
 * A fully connected layer, `y = x Wᵀ + b`, with `weight` `[outFeatures, inFeatures]` and `bias`
 * `[outFeatures]`. Both are initialised from U(-1/√inFeatures, 1/√inFeatures) (PyTorch's
 * `kaiming_uniform_(a=√5)` for the weight).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { Linear } from './layers.ts';
 * const fc = new Linear(64, 10);
 * const y = fc.call(zeros([32, 64])); // [32, 10]
 * ```
 */
export class Linear extends Module {
  /** Input features. */
  readonly inFeatures: number;
  /** Output features. */
  readonly outFeatures: number;
  /** `[outFeatures, inFeatures]`. */
  readonly weight: Tensor;
  /** `[outFeatures]`, or null without bias. */
  readonly bias: Tensor | null;

  /** A layer mapping `inFeatures` to `outFeatures`. */
  constructor(inFeatures: number, outFeatures: number, options: LinearOptions = {}) {
    super();
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    const factory = { dtype: options.dtype, device: options.device };
    this.weight = this.registerParameter('weight', empty([outFeatures, inFeatures], factory));
    this.bias = this.registerParameter('bias', (options.bias ?? true) ? empty([outFeatures], factory) : null);
    this.resetParameters();
  }

  /** Draws fresh initial values (weight first, then bias, as PyTorch). */
  resetParameters(): void {
    kaimingUniform_(this.weight, { a: Math.sqrt(5) });
    if (this.bias !== null) {
      const [fanIn] = calculateFanInAndFanOut(this.weight);
      const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
      uniform_(this.bias, -bound, bound);
    }
  }

  /** `input @ weight.T + bias` over the last dim of `input`. */
  forward(input: Tensor): Tensor {
    return linear(input, this.weight, this.bias);
  }

  /** `in_features=64, out_features=10, bias=True`. */
  override extraRepr(): string {
    return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, bias=${
      this.bias !== null ? 'True' : 'False'
    }`;
  }
}

/**
 * Modules applied one after another; children are named `0`, `1`, ...
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { Linear, ReLU, Sequential } from './layers.ts';
 * const mlp = new Sequential(new Linear(64, 128), new ReLU(), new Linear(128, 10));
 * const logits = mlp.call(zeros([8, 64])); // [8, 10]
 * ```
 */
export class Sequential extends Module {
  readonly #layers: Array<Module<[Tensor], Tensor>> = [];

  /** A chain of `layers`. */
  constructor(...layers: Array<Module<[Tensor], Tensor>>) {
    super();
    for (const layer of layers) this.append(layer);
  }

  /** Adds a layer at the end; returns this. */
  append(layer: Module<[Tensor], Tensor>): this {
    this.registerModule(String(this.#layers.length), layer);
    this.#layers.push(layer);
    return this;
  }

  /** The number of layers. */
  get length(): number {
    return this.#layers.length;
  }

  /** The layer at `index` (negative counts from the end). */
  at(index: number): Module<[Tensor], Tensor> {
    const layer = this.#layers.at(index);
    if (layer === undefined) throw new RangeError(`index ${index} is out of range`);
    return layer;
  }

  /**
   * Runs the layers in order. The activations between layers are disposed as soon as the next layer has
   * used them (autograd keeps what it needs); the input and the output are the caller's.
   */
  forward(input: Tensor): Tensor {
    let x = input;
    for (const layer of this.#layers) {
      const next = layer.call(x);
      if (x !== input && next !== x) x.dispose();
      x = next;
    }
    return x;
  }
}

/**
 * `max(x, 0)` elementwise.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { ReLU } from './layers.ts';
 * new ReLU().call(tensor([-1, 2], { dtype: 'float32' })); // tensor([0., 2.])
 * ```
 */
export class ReLU extends Module {
  /** Applies relu. */
  forward(input: Tensor): Tensor {
    return relu(input);
  }
}

/**
 * Inverted dropout: in training, zeroes each element with probability `p` and scales the rest by
 * `1 / (1 - p)`; in evaluation mode, the identity (returns its input).
 *
 * @example
 * ```ts
 * import { ones } from '../../mod.ts';
 * import { Dropout } from './layers.ts';
 * const drop = new Dropout(0.5);
 * const y = drop.call(ones([4, 4])); // zeros and 2s
 * drop.eval();
 * drop.call(ones([4, 4])); // the input itself
 * ```
 */
export class Dropout extends Module {
  /** Probability of zeroing an element. */
  readonly p: number;

  /** Dropout with probability `p` (default 0.5). */
  constructor(p = 0.5) {
    super();
    if (p < 0 || p > 1) throw new Error(`dropout probability has to be between 0 and 1, but got ${p}`);
    this.p = p;
  }

  /** Drops (training) or passes `input` through (evaluation). */
  forward(input: Tensor): Tensor {
    if (!this.training || this.p === 0) return input;
    if (this.p === 1) return input.mul(0);
    // PyTorch draws a Bernoulli(1 - p) mask; U(0, 1) < 1 - p is that mask.
    using noise = uniform_(empty(input.shape, { dtype: input.dtype, device: input.device }));
    using keep = noise.lt(1 - this.p);
    using kept = input.mul(keep);
    return kept.div(1 - this.p);
  }

  /** `p=0.5, inplace=False`. */
  override extraRepr(): string {
    return `p=${this.p}, inplace=False`;
  }
}

/** Options of {@linkcode LayerNorm}. */
export interface LayerNormOptions extends FactoryOptions {
  /** Added to the variance (default 1e-5). */
  eps?: number;
  /** Learn a per-element scale and shift (default true). */
  elementwiseAffine?: boolean;
}

/**
 * Layer normalisation over the trailing `normalizedShape` dims: `(x - mean) / sqrt(var + eps) * weight +
 * bias`, with the biased variance, as `torch.nn.LayerNorm`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { LayerNorm } from './layers.ts';
 * const norm = new LayerNorm(16);
 * const y = norm.call(zeros([4, 16]));
 * ```
 */
export class LayerNorm extends Module {
  /** The normalised trailing shape. */
  readonly normalizedShape: readonly number[];
  /** Added to the variance. */
  readonly eps: number;
  /** Scale (ones at first), or null without affine. */
  readonly weight: Tensor | null;
  /** Shift (zeros at first), or null without affine. */
  readonly bias: Tensor | null;

  /** Normalises over the last dims of shape `normalizedShape`. */
  constructor(normalizedShape: number | readonly number[], options: LayerNormOptions = {}) {
    super();
    this.normalizedShape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
    this.eps = options.eps ?? 1e-5;
    const factory = { dtype: options.dtype, device: options.device };
    const affine = options.elementwiseAffine ?? true;
    this.weight = this.registerParameter('weight', affine ? ones_(empty(this.normalizedShape, factory)) : null);
    this.bias = this.registerParameter('bias', affine ? zeros_(empty(this.normalizedShape, factory)) : null);
  }

  /** Normalises `input`, whose trailing dims must equal `normalizedShape`. */
  forward(input: Tensor): Tensor {
    const k = this.normalizedShape.length;
    const tail = input.shape.slice(input.ndim - k);
    if (input.ndim < k || tail.some((s, i) => s !== this.normalizedShape[i])) {
      throw new Error(
        `Given normalized_shape=[${this.normalizedShape.join(', ')}], expected input with shape [*, ${
          this.normalizedShape.join(', ')
        }], but got input of size[${input.shape.join(', ')}]`,
      );
    }
    const dims = Array.from({ length: k }, (_, i) => i - k);
    using mu = mean(input, dims, true);
    using centred = input.sub(mu);
    using squared = centred.mul(centred);
    using variance = mean(squared, dims, true);
    using shifted = variance.add(this.eps);
    using invStd = shifted.rsqrt();
    const normalised = centred.mul(invStd);
    if (this.weight === null || this.bias === null) return normalised;
    using scaled = normalised.mul(this.weight);
    normalised.dispose();
    return scaled.add(this.bias);
  }

  /** `(16,), eps=1e-05, elementwise_affine=True`. */
  override extraRepr(): string {
    const shape = this.normalizedShape.length === 1
      ? `(${this.normalizedShape[0]},)`
      : `(${this.normalizedShape.join(', ')})`;
    return `${shape}, eps=${pythonFloat(this.eps)}, elementwise_affine=${this.weight !== null ? 'True' : 'False'}`;
  }
}

/**
 * A lookup table of `numEmbeddings` vectors of size `embeddingDim`, initialised from N(0, 1): indices of any
 * shape give vectors of shape `[...indices.shape, embeddingDim]`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { Embedding } from './layers.ts';
 * const emb = new Embedding(100, 8);
 * const vectors = emb.call(tensor([[1, 2], [3, 4]])); // [2, 2, 8]
 * ```
 */
export class Embedding extends Module {
  /** Table size. */
  readonly numEmbeddings: number;
  /** Vector size. */
  readonly embeddingDim: number;
  /** `[numEmbeddings, embeddingDim]`. */
  readonly weight: Tensor;

  /** A table of `numEmbeddings` vectors of size `embeddingDim`. */
  constructor(numEmbeddings: number, embeddingDim: number, options: FactoryOptions = {}) {
    super();
    this.numEmbeddings = numEmbeddings;
    this.embeddingDim = embeddingDim;
    const factory = { dtype: options.dtype, device: options.device };
    this.weight = this.registerParameter('weight', normal_(empty([numEmbeddings, embeddingDim], factory)));
  }

  /** The vectors of `indices` (an int32 or int64 tensor of any shape). */
  forward(indices: Tensor): Tensor {
    return embedding(this.weight, indices);
  }

  /** `100, 8`. */
  override extraRepr(): string {
    return `${this.numEmbeddings}, ${this.embeddingDim}`;
  }
}

/** Python's repr of a float (`1e-05`, `0.1`, `2.0`): exponent notation below 1e-4 and from 1e16. */
function pythonFloat(x: number): string {
  const [mantissa, exponentText] = x.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return Number.isInteger(x) ? `${x}.0` : String(x);
}
