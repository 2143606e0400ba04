/**
 * Declarations of the NN operators: softmax and log-softmax with their backward kernels, and the negative
 * log-likelihood and cross-entropy losses. PyTorch 1.13's schemas; the Meta functions are in `meta_nn.ts`, the
 * decompositions in `nn_composites.ts`. The underscore operators and `nll_loss_forward` / `nll_loss_backward`
 * are what the decompositions and autograd call; like PyTorch they are not part of the everyday API.
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { nllLossBackwardMeta, nllLossForwardMeta, softmaxBackwardMeta, softmaxMeta } from './meta_nn.ts';
import { crossEntropyLoss, logSoftmax, nllLoss, nllLossNd, softmax } from './nn_composites.ts';
import type { MetaFn, OpDecl, OpImpl } from './op_decl.ts';

function backend(schema: string, meta: MetaFn, doc: string): OpDecl {
  return { schema, kind: 'backend', meta, doc, function: false };
}

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/**
 * Names of the NN operators that every backend implements.
 *
 * @example
 * ```ts
 * import type { NnBackendOpName } from './decl_nn.ts';
 * const name: NnBackendOpName = '_softmax';
 * ```
 */
export type NnBackendOpName =
  | '_softmax'
  | '_log_softmax'
  | '_softmax_backward_data'
  | '_log_softmax_backward_data'
  | 'nll_loss_forward'
  | 'nll_loss_backward';
/**
 * Names of the NN operators implemented once for all backends.
 *
 * @example
 * ```ts
 * import type { NnCompositeOpName } from './decl_nn.ts';
 * const name: NnCompositeOpName = 'cross_entropy_loss';
 * ```
 */
export type NnCompositeOpName = 'softmax.int' | 'log_softmax.int' | 'nll_loss' | 'nll_loss_nd' | 'cross_entropy_loss';

/**
 * Declarations of the NN operators.
 *
 * @example
 * ```ts
 * import { NN_OPS } from './decl_nn.ts';
 * NN_OPS['cross_entropy_loss'].function; // 'crossEntropy'
 * ```
 */
export const NN_OPS: { readonly [K in NnBackendOpName | NnCompositeOpName]: OpDecl } = {
  '_softmax': backend(
    '_softmax(Tensor self, int dim, bool half_to_float) -> Tensor',
    (self: Tensor, dim: number, halfToFloat: boolean) => softmaxMeta('_softmax', self, dim, halfToFloat),
    'Softmax along `dim` (the kernel behind `softmax`).',
  ),
  '_log_softmax': backend(
    '_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor',
    (self: Tensor, dim: number, halfToFloat: boolean) => softmaxMeta('_log_softmax', self, dim, halfToFloat),
    'Log-softmax along `dim` (the kernel behind `log_softmax`).',
  ),
  '_softmax_backward_data': backend(
    '_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor',
    (grad: Tensor, output: Tensor, dim: number, inputDtype: DType) =>
      softmaxBackwardMeta(grad, output, dim, inputDtype),
    'Gradient of softmax from the output gradient and the softmax output: `y * (g - sum(g * y))`.',
  ),
  '_log_softmax_backward_data': backend(
    '_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor',
    (grad: Tensor, output: Tensor, dim: number, inputDtype: DType) =>
      softmaxBackwardMeta(grad, output, dim, inputDtype),
    'Gradient of log-softmax from the output gradient and the log-softmax output: `g - exp(y) * sum(g)`.',
  ),
  'nll_loss_forward': backend(
    'nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> ' +
      '(Tensor output, Tensor total_weight)',
    (self: Tensor, target: Tensor, weight: Tensor | null, reduction: number) =>
      nllLossForwardMeta(self, target, weight, reduction),
    'Negative log-likelihood of the targets and the total weight of the targets not ignored.',
  ),
  'nll_loss_backward': backend(
    'nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, ' +
      'SymInt ignore_index, Tensor total_weight) -> Tensor',
    (grad: Tensor, self: Tensor, target: Tensor, weight: Tensor | null, reduction: number, _i: number, tw: Tensor) =>
      nllLossBackwardMeta(grad, self, target, weight, reduction, tw),
    'Gradient of nll_loss with respect to its input.',
  ),
  'softmax.int': composite(
    'softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    softmax,
    'Softmax along `dim`, computed in `dtype` when given: `exp(x - max) / sum(exp(x - max))`.',
    { method: true },
  ),
  'log_softmax.int': composite(
    'log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor',
    logSoftmax,
    'Log-softmax along `dim`, computed in `dtype` when given: `x - max - log(sum(exp(x - max)))`.',
    { method: true },
  ),
  'nll_loss': composite(
    'nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor',
    nllLoss,
    'Negative log-likelihood loss of log-probabilities `[N, C]` (or `[C]`) and class indices (reduction 0 none, 1 mean, 2 sum).',
  ),
  'nll_loss_nd': composite(
    'nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor',
    nllLossNd,
    'Negative log-likelihood loss as `torch.nn.functional.nll_loss` computes it: `nll_loss`, and inputs `[N, C, d...]` too.',
  ),
  'cross_entropy_loss': composite(
    'cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, ' +
      'SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor',
    crossEntropyLoss,
    'Cross-entropy of logits against class indices or class probabilities, with optional label smoothing.',
    { function: 'crossEntropy' },
  ),
};
