/**
 * Shape and dtype rules of the NN operators (`_softmax`, `_log_softmax`, their backward, `nll_loss_forward`,
 * `nll_loss_backward`), with PyTorch's checks and messages. As for the products, PyTorch checks shapes in its
 * Meta functions and dtypes in its CPU kernels after the dtype switch; the dtype checks are separate functions
 * so the CPU kernels keep that order of errors.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { type DType, float16, float32, int64, uint8 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { checkSameDevice } from './meta_elementwise.ts';
import type { TensorMeta } from './op_decl.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;

/**
 * PyTorch's `at::Reduction` codes, the `reduction` argument of the losses.
 *
 * @example
 * ```ts
 * import { LossReduction } from './meta_nn.ts';
 * LossReduction.mean; // 1
 * ```
 */
export const LossReduction = { none: 0, mean: 1, sum: 2 } as const;

/**
 * Checks a `reduction` argument (PyTorch would read anything else as a sum).
 *
 * @example
 * ```ts
 * import { checkReduction } from './meta_nn.ts';
 * checkReduction(2); // ok: sum
 * ```
 */
export function checkReduction(reduction: number): void {
  if (reduction !== 0 && reduction !== 1 && reduction !== 2) {
    throw new RuntimeError(`reduction must be 0 (none), 1 (mean) or 2 (sum), but got ${reduction}`);
  }
}

/**
 * Meta of `_softmax` / `_log_softmax`: the input's shape; float32 for `half_to_float` of a float16 input.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { softmaxMeta } from './meta_nn.ts';
 * softmaxMeta('_softmax', tensor([[1.5, 2]]), -1, false).shape; // [1, 2]
 * ```
 */
export function softmaxMeta(op: string, self: Tensor, dim: number, halfToFloat: boolean): TensorMeta {
  self.assertAlive(op);
  wrapDim(dim, self.ndim);
  if (halfToFloat && self.dtype !== float16) throw new RuntimeError('conversion is supported for Half type only');
  return { shape: self.shape, dtype: halfToFloat ? float32 : self.dtype };
}

/**
 * Meta of `_softmax_backward_data` / `_log_softmax_backward_data` (PyTorch's `softmax_backward` checks).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { softmaxBackwardMeta } from './meta_nn.ts';
 * const g = tensor([[0.5, 1]]);
 * softmaxBackwardMeta(g, g, 1, g.dtype).shape; // [1, 2]
 * ```
 */
export function softmaxBackwardMeta(grad: Tensor, output: Tensor, dim: number, inputDtype: DType): TensorMeta {
  checkSameDevice('softmax_backward', [grad, output]);
  if (grad.ndim !== output.ndim || grad.shape.some((s, i) => s !== output.shape[i])) {
    throw new RuntimeError(
      `Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but ` +
        `${list(grad.shape)} does not equal ${list(output.shape)} (while checking arguments for softmax_backward)`,
    );
  }
  wrapDim(dim, grad.ndim);
  const dtype = grad.dtype === float32 && inputDtype === float16 ? float16 : grad.dtype;
  return { shape: grad.shape, dtype };
}

/** Shape checks of `nll_loss_forward` and `nll_loss_backward`: the number of classes. */
function nllShapes(self: Tensor, target: Tensor, weight: Tensor | null): number {
  if (self.ndim < 1 || self.ndim > 2) throw new RuntimeError('input tensor should be 1D or 2D');
  if (target.ndim > 1) throw new RuntimeError('0D or 1D target tensor expected, multi-target not supported');
  const noBatchDim = self.ndim === 1 && target.ndim === 0;
  if (!noBatchDim && self.shape[0] !== target.shape[0]) {
    throw new RuntimeError(`size mismatch (got input: ${list(self.shape)}, target: ${list(target.shape)})`);
  }
  const classes = self.shape[self.ndim - 1];
  if (weight !== null && (weight.ndim !== 1 || weight.shape[0] !== classes)) {
    throw new RuntimeError(
      `weight tensor should be defined either for all ${classes} classes or no classes but got weight tensor of ` +
        `shape: ${list(weight.shape)}`,
    );
  }
  return classes;
}

/**
 * The dtype checks of the nll_loss kernels (after their dtype switch on the input): int64 targets (uint8 also
 * accepted, as PyTorch does), and a weight of the input's dtype.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { checkNllDtypes } from './meta_nn.ts';
 * checkNllDtypes(tensor([[-0.5, -1]]), tensor([1]), null); // ok: int64 targets
 * ```
 */
export function checkNllDtypes(self: Tensor, target: Tensor, weight: Tensor | null): void {
  if (target.dtype !== int64 && target.dtype !== uint8) {
    throw new RuntimeError(`expected scalar type Long but found ${target.dtype.scalarTypeName}`);
  }
  if (weight !== null && weight.dtype !== self.dtype) {
    throw new RuntimeError(
      `expected scalar type ${self.dtype.scalarTypeName} but found ${weight.dtype.scalarTypeName}`,
    );
  }
}

/**
 * `nll_loss_forward`'s shape checks; returns the metadata of `(output, total_weight)`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { nllLossForwardShapes } from './meta_nn.ts';
 * nllLossForwardShapes(tensor([[-0.5, -1]]), tensor([1]), null, 0)[0].shape; // [1]
 * ```
 */
export function nllLossForwardShapes(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
): readonly [TensorMeta, TensorMeta] {
  checkSameDevice('nll_loss_forward', weight === null ? [self, target] : [self, target, weight]);
  nllShapes(self, target, weight);
  checkReduction(reduction);
  const shape = reduction === LossReduction.none && self.ndim === 2 ? [self.shape[0]] : [];
  return [{ shape, dtype: self.dtype }, { shape: [], dtype: self.dtype }];
}

/**
 * Meta of `nll_loss_forward`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { nllLossForwardMeta } from './meta_nn.ts';
 * nllLossForwardMeta(tensor([[-0.5, -1]]), tensor([1]), null, 1)[0].shape; // []
 * ```
 */
export function nllLossForwardMeta(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
): readonly [TensorMeta, TensorMeta] {
  const metas = nllLossForwardShapes(self, target, weight, reduction);
  checkNllDtypes(self, target, weight);
  return metas;
}

/**
 * `nll_loss_backward`'s shape checks; returns the gradient's metadata (the input's).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { nllLossBackwardShapes } from './meta_nn.ts';
 * const x = tensor([[-0.5, -1]]);
 * nllLossBackwardShapes(tensor(1.5), x, tensor([1]), null, 1, tensor(1.5)).shape; // [1, 2]
 * ```
 */
export function nllLossBackwardShapes(
  gradOutput: Tensor,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  totalWeight: Tensor,
): TensorMeta {
  checkSameDevice(
    'nll_loss_backward',
    weight === null ? [gradOutput, self, target] : [gradOutput, self, target, weight],
  );
  nllShapes(self, target, weight);
  checkReduction(reduction);
  if (totalWeight.numel !== 1) {
    throw new RuntimeError(
      `expected total_weight to be a  single element tensor, got: ${list(totalWeight.shape)} (${totalWeight.numel} ` +
        `elements)`,
    );
  }
  if (reduction === LossReduction.none && self.ndim === 2) {
    const batch = self.shape[0];
    if (gradOutput.ndim === 0) throw new RangeError('Dimension specified as 0 but tensor has no dimensions');
    if (gradOutput.ndim !== 1 || gradOutput.shape[0] !== batch) {
      throw new RuntimeError(
        `Expected a tensor of dimension 1 and tensor.size[0] == ${batch} but got: dimension ${gradOutput.ndim} and ` +
          `tensor.size[0] = ${gradOutput.shape[0]}`,
      );
    }
  } else if (gradOutput.ndim > 1 || gradOutput.numel !== 1) {
    throw new RuntimeError(`Expected a single element grad_output tensor, but got: ${list(gradOutput.shape)}`);
  }
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * Meta of `nll_loss_backward`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { nllLossBackwardMeta } from './meta_nn.ts';
 * const x = tensor([[-0.5, -1]]);
 * nllLossBackwardMeta(tensor(1.5), x, tensor([1]), null, 2, tensor(1.5)).dtype.name; // 'float32'
 * ```
 */
export function nllLossBackwardMeta(
  gradOutput: Tensor,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  totalWeight: Tensor,
): TensorMeta {
  const meta = nllLossBackwardShapes(gradOutput, self, target, weight, reduction, totalWeight);
  checkNllDtypes(self, target, weight);
  return meta;
}
