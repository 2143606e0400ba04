/**
 * Declarations of the activations, losses and predicates that decompose into other operators
 * (`activation_composites.ts`): PyTorch 1.13's schemas, registered at CompositeImplicitAutograd so that autograd
 * differentiates through their parts (Note [Composite activations]).
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
import type { OpDecl, OpImpl } from './op_decl.ts';

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'composite-implicit', impl, doc };
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
  | 'leaky_relu'
  | 'elu'
  | 'selu'
  | 'softplus'
  | 'mish'
  | 'hardtanh'
  | 'log_sigmoid'
  | 'binary_cross_entropy'
  | 'binary_cross_entropy_with_logits'
  | 'l1_loss'
  | 'smooth_l1_loss'
  | 'huber_loss'
  | 'kl_div'
  | 'cosine_similarity'
  | 'isinf'
  | 'isfinite'
  | 'isclose'
  | 'allclose'
  | 'equal';

const method: Partial<OpDecl> = { method: true };

/**
 * Declarations of the composite activations, losses and predicates.
 *
 * @example
 * ```ts
 * import { ACTIVATION_OPS } from './decl_activations.ts';
 * ACTIVATION_OPS['leaky_relu'].function; // undefined: the camelCased name, leakyRelu
 * ```
 */
export const ACTIVATION_OPS: { readonly [K in ActivationCompositeOpName]: OpDecl } = {
  'leaky_relu': composite(
    'leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor',
    leakyRelu,
    'Leaky ReLU: `x > 0 ? x : negative_slope * x`.',
  ),
  'elu': composite(
    'elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor',
    elu,
    'ELU: `x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1)`.',
  ),
  'selu': composite(
    'selu(Tensor self) -> Tensor',
    selu,
    'SELU: ELU with alpha 1.6732632423543772, scale 1.0507009873554805.',
  ),
  'softplus': composite(
    'softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor',
    softplus,
    'Softplus: `log(1 + exp(beta * x)) / beta`, or `x` where `beta * x > threshold`.',
  ),
  'mish': composite('mish(Tensor self) -> Tensor', mish, 'Mish: `x * tanh(softplus(x))`.'),
  'hardtanh': composite(
    'hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor',
    hardtanh,
    'HardTanh: `x` clamped to `[min_val, max_val]`.',
  ),
  'log_sigmoid': composite(
    'log_sigmoid(Tensor self) -> Tensor',
    logSigmoid,
    'Log-sigmoid: `log(1 / (1 + exp(-x)))`, computed stably.',
  ),
  'binary_cross_entropy': composite(
    'binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor',
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
  'smooth_l1_loss': composite(
    'smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor',
    smoothL1Loss,
    'Smooth L1 loss: `0.5 d^2 / beta` where `|d| < beta`, else `|d| - beta / 2`.',
  ),
  'huber_loss': composite(
    'huber_loss(Tensor self, Tensor target, int reduction=Mean, float delta=1.0) -> Tensor',
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
