/**
 * Declarations of the activations, losses and predicates: PyTorch 1.13's schemas. `leaky_relu`, `elu`,
 * `softplus`, `hardtanh`, `mish`, `log_sigmoid`, `smooth_l1_loss`, `huber_loss` and `binary_cross_entropy` are
 * backend operators with one-pass CPU kernels (kernels_as/activation.ts, Note [Activation kernels]), derivative
 * formulas in derivatives_activations.ts, and their former decompositions (`activation_composites.ts`) as the
 * default backend kernel of every other backend. The rest decompose into other operators, registered at
 * CompositeImplicitAutograd so that autograd differentiates through their parts (Note [Composite activations]),
 * as PyTorch keeps `selu`, `l1_loss`, `kl_div`, `cosine_similarity`, `binary_cross_entropy_with_logits` composite.
 *
 * @module
 */
import {
  allclose,
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  cosineSimilarity,
  elu,
  equal,
  hardtanh,
  huberLoss,
  isclose,
  isfinite,
  isinf,
  klDiv,
  l1Loss,
  leakyRelu,
  logSigmoid,
  mish,
  selu,
  smoothL1Loss,
  softplus,
} from './activation_composites.ts';
import type { OpDecl, OpImpl, TensorMeta } from './op_decl.ts';
import { outputStridesOf } from './output_layout.ts';
import { resultTypeOf } from './meta_elementwise.ts';
import { LossReduction } from './meta_nn.ts';
import { broadcastShapes } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/** Meta function of the pointwise activations: `self`'s shape and dtype, laid out as TensorIterator lays it out. */
function activationMeta(op: string) {
  return (self: Tensor, ...scalars: unknown[]): TensorMeta => {
    for (const s of scalars) {
      if (typeof s !== 'number' && typeof s !== 'boolean') {
        throw new TypeError(`${op}(): argument of type '${typeof s}' is not a number`);
      }
    }
    return { shape: self.shape, dtype: self.dtype, strides: outputStridesOf(self.shape, self) };
  };
}

/**
 * Meta function of the pointwise losses: the broadcast shape for reduction `none`, else a scalar; the promoted
 * dtype. The argument checks are the decomposition's, which every backend without the fast path runs.
 */
function lossMeta(reductionAt: number) {
  return (self: Tensor, target: Tensor, ...rest: unknown[]): TensorMeta => {
    const reduction = rest[reductionAt - 2] as number;
    const dtype = resultTypeOf(self, target);
    return { shape: reduction === LossReduction.none ? broadcastShapes(self.shape, target.shape) : [], dtype };
  };
}

/** A pointwise loss with a CPU kernel; other backends run its decomposition (the default backend). */
function lossKernel(schema: string, reductionAt: number, fallback: OpImpl, doc: string): OpDecl {
  return { schema, kind: 'backend', meta: lossMeta(reductionAt), defaultBackend: fallback, doc };
}

/** A pointwise activation with backend kernels; other backends run its decomposition (the default backend). */
function kernel(schema: string, fallback: OpImpl, doc: string): OpDecl {
  const op = schema.slice(0, schema.indexOf('('));
  return { schema, kind: 'backend', meta: activationMeta(op), defaultBackend: fallback, doc };
}

/**
 * Names of the composite activations, losses and predicates.
 *
 * @example
 * ```ts
 * import type { ActivationCompositeOpName } from './decl_activations.ts';
 * const name: ActivationCompositeOpName = 'leaky_relu';
 * ```
 */
export type ActivationCompositeOpName =
  | 'selu'
  | 'binary_cross_entropy_with_logits'
  | 'l1_loss'
  | 'kl_div'
  | 'cosine_similarity'
  | 'isinf'
  | 'isfinite'
  | 'isclose'
  | 'allclose'
  | 'equal';

/**
 * Names of the activations with kernels of their own on the CPU (other backends run the default backend kernel).
 *
 * @example
 * ```ts
 * import type { ActivationKernelOpName } from './decl_activations.ts';
 * const name: ActivationKernelOpName = 'softplus';
 * ```
 */
export type ActivationKernelOpName =
  | 'leaky_relu'
  | 'elu'
  | 'softplus'
  | 'mish'
  | 'hardtanh'
  | 'log_sigmoid'
  | 'binary_cross_entropy'
  | 'smooth_l1_loss'
  | 'huber_loss';

const method: Partial<OpDecl> = { method: true };

/**
 * Declarations of the activations, losses and predicates.
 *
 * @example
 * ```ts
 * import { ACTIVATION_OPS } from './decl_activations.ts';
 * ACTIVATION_OPS['leaky_relu'].function; // undefined: the camelCased name, leakyRelu
 * ```
 */
export const ACTIVATION_OPS: { readonly [K in ActivationCompositeOpName | ActivationKernelOpName]: OpDecl } = {
  'leaky_relu': kernel(
    'leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor',
    leakyRelu,
    'Leaky ReLU: `x > 0 ? x : negative_slope * x`.',
  ),
  'elu': kernel(
    'elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor',
    elu,
    'ELU: `x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)`.',
  ),
  'selu': composite(
    'selu(Tensor self) -> Tensor',
    selu,
    'SELU: ELU with alpha 1.6732632423543772, scale 1.0507009873554805.',
  ),
  'softplus': kernel(
    'softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor',
    softplus,
    'Softplus: `log(1 + exp(beta * x)) / beta`, or `x` where `beta * x > threshold`.',
  ),
  'mish': kernel('mish(Tensor self) -> Tensor', mish, 'Mish: `x * tanh(softplus(x))`.'),
  'hardtanh': kernel(
    'hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor',
    hardtanh,
    'HardTanh: `x` clamped to `[min_val, max_val]`.',
  ),
  'log_sigmoid': kernel(
    'log_sigmoid(Tensor self) -> Tensor',
    logSigmoid,
    'Log-sigmoid: `log(1 / (1 + exp(-x)))`, computed stably.',
  ),
  'binary_cross_entropy': lossKernel(
    'binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor',
    3,
    binaryCrossEntropy,
    'Binary cross-entropy of probabilities in [0, 1] against targets, logs clamped at -100.',
  ),
  'binary_cross_entropy_with_logits': composite(
    'binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, ' +
      'int reduction=Mean) -> Tensor',
    binaryCrossEntropyWithLogits,
    'Binary cross-entropy of logits (sigmoid and BCE in one stable formula), with an optional positive-class weight.',
  ),
  'l1_loss': composite(
    'l1_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor',
    l1Loss,
    'Mean (or summed) absolute error.',
  ),
  'smooth_l1_loss': lossKernel(
    'smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor',
    2,
    smoothL1Loss,
    'Smooth L1 loss: `0.5 d^2 / beta` where `|d| < beta`, else `|d| - beta / 2`.',
  ),
  'huber_loss': lossKernel(
    'huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor',
    2,
    huberLoss,
    'Huber loss: `0.5 d^2` where `|d| < delta`, else `delta * (|d| - delta / 2)`.',
  ),
  'kl_div': composite(
    'kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor',
    klDiv,
    'Kullback-Leibler divergence of log-probabilities `self` from `target` (probabilities, or log-probabilities).',
  ),
  'cosine_similarity': composite(
    'cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor',
    cosineSimilarity,
    'Cosine similarity along `dim`: `x1 . x2 / max(|x1| |x2|, eps)`.',
  ),
  'isinf': composite('isinf(Tensor self) -> Tensor', isinf, 'Whether each element is +inf or -inf.', method),
  'isfinite': composite('isfinite(Tensor self) -> Tensor', isfinite, 'Whether each element is finite.', method),
  'isclose': composite(
    'isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor',
    isclose,
    'Whether each pair is close: `|a - b| <= atol + rtol * |b|` (or equal).',
    method,
  ),
  'allclose': composite(
    'allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool',
    allclose,
    'Whether `isclose` holds for every pair.',
    method,
  ),
  'equal': composite(
    'equal(Tensor self, Tensor other) -> bool',
    equal,
    'Whether the two tensors have the same shape and elements.',
    method,
  ),
};
