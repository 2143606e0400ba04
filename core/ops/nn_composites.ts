/**
 * The NN decompositions, as PyTorch writes them (aten/src/ATen/native/SoftMax.cpp, LossNLL.cpp): `softmax`
 * and `log_softmax` convert to `dtype` and call `_softmax` / `_log_softmax`; `nll_loss` is the output of
 * `nll_loss_forward`; `cross_entropy_loss` is `log_softmax` then `nll_loss_nd` for class-index targets, with
 * label smoothing or probability targets spelled out in elementwise operators and sums.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { DType } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries, toDtype } from './aten_call.ts';
import { LossReduction } from './meta_nn.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;
const sameShape = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((s, i) => s === b[i]);

function softmaxLike(op: '_softmax' | '_log_softmax', self: Tensor, dim: number, dtype: DType | null): Tensor {
  using temps = new Temporaries();
  const converted = dtype === null ? self : temps.track(toDtype(self, dtype), self);
  return aten(op).call(converted, dim, false) as Tensor;
}

/**
 * `softmax.int`: `_softmax` of the input converted to `dtype`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { softmax } from './nn_composites.ts';
 * softmax(tensor([0.5, 0.5]), 0, null).tolist(); // [0.5, 0.5]
 * ```
 */
export function softmax(self: Tensor, dim: number, dtype: DType | null): Tensor {
  return softmaxLike('_softmax', self, dim, dtype);
}

/**
 * `log_softmax.int`: `_log_softmax` of the input converted to `dtype`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { logSoftmax } from './nn_composites.ts';
 * logSoftmax(tensor([1.5, 1.5]), 0, null).tolist(); // [-ln 2, -ln 2]
 * ```
 */
export function logSoftmax(self: Tensor, dim: number, dtype: DType | null): Tensor {
  return softmaxLike('_log_softmax', self, dim, dtype);
}

function nllLossForward(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): [Tensor, Tensor] {
  return aten('nll_loss_forward').call(self, target, weight, reduction, ignoreIndex) as [Tensor, Tensor];
}

/**
 * `nll_loss`: the loss `nll_loss_forward` computes (1-d or 2-d input).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { nllLoss } from './nn_composites.ts';
 * nllLoss(tensor([[-0.5, -2]]), tensor([1]), null, 1, -100).item(); // 2
 * ```
 */
export function nllLoss(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): Tensor {
  const [output, totalWeight] = nllLossForward(self, target, weight, reduction, ignoreIndex);
  totalWeight.dispose();
  return output;
}

/**
 * PyTorch's `nll_loss_nd` (what `torch.nn.functional.nll_loss` calls): batch-size check, then `nll_loss` for 1-d
 * and 2-d inputs; an input `[N, C, d1, ...]` with target `[N, d1, ...]` is flattened to `[N * d1 * ..., C]`.
 * Returns the loss and the total weight.
 */
function nllLossNdWithTotal(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): [Tensor, Tensor] {
  if (self.ndim < 1) throw new RuntimeError(`Expected 1 or more dimensions (got ${self.ndim})`);
  if (self.ndim !== 1 && target.ndim > 0 && self.shape[0] !== target.shape[0]) {
    throw new RuntimeError(
      `Expected input batch_size (${self.shape[0]}) to match target batch_size (${target.shape[0]}).`,
    );
  }
  if (self.ndim <= 2) return nllLossForward(self, target, weight, reduction, ignoreIndex);
  const [n, c] = self.shape;
  const outSize = [n, ...self.shape.slice(2)];
  if (!sameShape(target.shape, outSize)) {
    throw new RuntimeError(`Expected target size ${list(outSize)}, got ${list(target.shape)}`);
  }
  using temps = new Temporaries();
  // [N, C, d1, ...] -> [N, d1, ..., C] -> [N * d1 * ..., C]: class scores become rows.
  const dims = [0, ...Array.from({ length: self.ndim - 2 }, (_, i) => i + 2), 1];
  const moved = temps.track(self.permute(dims));
  const flat = temps.track(moved.reshape([-1, c]), moved);
  const flatTarget = temps.track(target.reshape([-1]), target);
  const [loss, totalWeight] = nllLossForward(flat, flatTarget, weight, reduction, ignoreIndex);
  if (reduction !== LossReduction.none) return [loss, totalWeight];
  temps.track(loss);
  return [loss.reshape(outSize), totalWeight];
}

/**
 * `nll_loss_nd` (what `torch.nn.functional.nll_loss` calls): `nll_loss` for 1-d and 2-d inputs, and inputs
 * `[N, C, d1, ...]` with targets `[N, d1, ...]` too.
 *
 * @example
 * ```ts
 * import { nllLossNd, tensor } from '../../mod.ts';
 * nllLossNd(tensor([[[-0.5, -2], [-1, -0.25]]]), tensor([[0, 1]])).item(); // 0.375
 * ```
 */
export function nllLossNd(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): Tensor {
  const [loss, totalWeight] = nllLossNdWithTotal(self, target, weight, reduction, ignoreIndex);
  totalWeight.dispose();
  return loss;
}

/** `weight` shaped to broadcast along the class dim of an input with `ndim` dims. */
function classWeight(weight: Tensor, ndim: number, classDim: number, temps: Temporaries): Tensor {
  if (classDim === ndim - 1) return weight;
  const shape = new Array<number>(ndim).fill(1);
  shape[classDim] = weight.shape[0];
  return temps.track(weight.view(shape), weight);
}

function probabilityTargetLoss(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  labelSmoothing: number,
): Tensor {
  const classDim = wrapDim(self.ndim === 1 ? 0 : 1, self.ndim);
  const classes = self.shape[classDim];
  if (weight !== null && (weight.ndim !== 1 || weight.numel !== classes)) {
    throw new RuntimeError(
      `cross_entropy: weight tensor should be defined either for all ${classes} classes or no classes but got ` +
        `weight tensor of shape: ${list(weight.shape)}`,
    );
  }
  using temps = new Temporaries();
  const input = temps.track(aten('log_softmax', 'int').call(self, classDim, self.dtype) as Tensor);
  let smoothed = target;
  if (labelSmoothing > 0) {
    if (labelSmoothing > 1) {
      throw new RuntimeError(`label_smoothing must be between 0.0 and 1.0. Got: ${labelSmoothing}`);
    }
    const scaled = temps.track(target.mul(1 - labelSmoothing));
    smoothed = temps.track(scaled.add(labelSmoothing / classes));
  }
  let product = temps.track(input.mul(smoothed));
  if (weight !== null) product = temps.track(product.mul(classWeight(weight, self.ndim, classDim, temps)));
  switch (reduction) {
    case LossReduction.mean: {
      const total = temps.track(product.sum());
      const negated = temps.track(total.neg());
      return negated.div(self.numel / classes);
    }
    case LossReduction.sum:
      return temps.track(product.sum()).neg();
    default:
      return temps.track(product.sum([classDim])).neg();
  }
}

function labelSmoothingLoss(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
  labelSmoothing: number,
): Tensor {
  const classDim = self.ndim === 1 ? 0 : 1;
  using temps = new Temporaries();
  const input = temps.track(aten('log_softmax', 'int').call(self, classDim, self.dtype) as Tensor);
  const [nll, totalWeight] = nllLossNdWithTotal(input, target, weight, reduction, ignoreIndex);
  temps.track(nll);
  temps.track(totalWeight);
  const classes = input.shape[classDim];
  const weighted = weight === null ? input : temps.track(input.mul(classWeight(weight, self.ndim, classDim, temps)));
  const classSum = temps.track(weighted.sum([classDim]));
  const keep = temps.track(target.ne(ignoreIndex));
  const negated = temps.track(classSum.neg());
  // PyTorch's masked_fill_(ignore_mask, 0) of the smoothing term.
  const smooth = temps.track(aten('where', 'ScalarOther').call(keep, negated, 0) as Tensor);
  let ret: Tensor;
  switch (reduction) {
    case LossReduction.mean:
      // nll_loss's total weight is what PyTorch divides by: the weights (or the count) of the kept targets.
      ret = temps.track(temps.track(smooth.sum()).div(totalWeight));
      break;
    case LossReduction.sum:
      ret = temps.track(smooth.sum());
      break;
    default:
      ret = smooth;
  }
  const left = temps.track(nll.mul(1 - labelSmoothing));
  const right = temps.track(ret.mul(labelSmoothing / classes));
  return left.add(right);
}

/**
 * `cross_entropy_loss`: class-index targets (optionally smoothed) or class probabilities.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { crossEntropyLoss } from './nn_composites.ts';
 * crossEntropyLoss(tensor([[0.5, 0.5]]), tensor([1]), null, 1, -100, 0).item(); // ln 2
 * ```
 */
export function crossEntropyLoss(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
  labelSmoothing: number,
): Tensor {
  if (sameShape(self.shape, target.shape)) {
    if (!target.dtype.isFloatingPoint) {
      throw new RuntimeError(
        `Expected floating point type for target with class probabilities, got ${target.dtype.scalarTypeName}`,
      );
    }
    if (ignoreIndex >= 0) throw new RuntimeError('ignore_index is not supported for floating point target');
    return probabilityTargetLoss(self, target, weight, reduction, labelSmoothing);
  }
  if (labelSmoothing > 0) {
    if (labelSmoothing > 1) {
      throw new RuntimeError(`label_smoothing must be between 0.0 and 1.0. Got: ${labelSmoothing}`);
    }
    return labelSmoothingLoss(self, target, weight, reduction, ignoreIndex, labelSmoothing);
  }
  using temps = new Temporaries();
  const input = temps.track(aten('log_softmax', 'int').call(self, self.ndim === 1 ? 0 : 1, self.dtype) as Tensor);
  return nllLossNd(input, target, weight, reduction, ignoreIndex);
}
