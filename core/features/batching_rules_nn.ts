/**
 * Batching rules of the linear algebra operators (one physical `matmul` each, after the operator's own shape
 * checks ran on the logical shapes), softmax and its backward, and the negative log-likelihood loss.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { emptyMeta } from '../ops/registry.ts';
import { addRuleTable, type BatchRule } from './batching_rules.ts';
import { alignPhysical, physicalDim, physicalOf, unionLevels, wrapPhysical } from './vmap_batched.ts';
import { forLoopFallback } from './vmap_fallback.ts';

const call = (name: string, overload: string, ...args: unknown[]) => aten(name, overload).call(...args) as Tensor;

/** Runs the operator's Meta kernel on the logical shapes: its argument checks, with PyTorch's messages. */
function checkLogical(name: string, overload: string, ...args: unknown[]): void {
  const metas = args.map((a) =>
    typeof a === 'object' && a !== null && 'shape' in a
      ? emptyMeta({ shape: (a as Tensor).shape, dtype: (a as Tensor).dtype })
      : a
  );
  call(name, overload, ...metas);
}

/**
 * Logical `matmul(a, b)` (both at least 1-d) as one physical `matmul`: a vector operand becomes a one-row
 * (or one-column) matrix, batched operands are padded to a common logical rank so the batch dimensions in
 * front never meet a logical dimension, and the vector dimensions are squeezed off the result.
 */
export function batchedMatmul(a: Tensor, b: Tensor): Tensor {
  const pa = physicalOf(a), pb = physicalOf(b);
  // A batch of matrices times a plain matrix, physically contiguous: the one `mm` matmul would fold it into
  // (batch and rows as the rows), called directly rather than through matmul's decomposition.
  if (
    pb.levels.length === 0 && b.ndim === 2 && a.ndim === 2 && a.shape[1] > 0 && a.shape[1] === b.shape[0] &&
    pa.t.isContiguous()
  ) {
    const rows = pa.t.numel / a.shape[1];
    const product = call('mm', '', call('view', '', pa.t, [rows, a.shape[1]]), pb.t);
    return wrapPhysical(call('_unsafe_view', '', product, [...pa.t.shape.slice(0, -1), b.shape[1]]), pa.levels);
  }
  const levels = unionLevels([pa.levels, pb.levels]);
  let ta = pa.t, tb = pb.t;
  let ra = a.ndim, rb = b.ndim;
  if (ra === 1) {
    ta = call('unsqueeze', '', ta, pa.levels.length);
    ra = 2;
  }
  if (rb === 1) {
    tb = call('unsqueeze', '', tb, -1);
    rb = 2;
  }
  const rank = Math.max(ra, rb);
  const xa = alignPhysical(wrapPhysical(ta, pa.levels), levels, rank);
  const xb = alignPhysical(wrapPhysical(tb, pb.levels), levels, rank);
  let out = call('matmul', '', xa, xb);
  if (b.ndim === 1) out = call('squeeze', 'dim', out, -1);
  if (a.ndim === 1) out = call('squeeze', 'dim', out, b.ndim === 1 ? -1 : -2);
  return wrapPhysical(out, levels);
}

/** The logical ranks `mm`, `bmm`, `mv` and `dot` accept. */
const RANKS: Record<string, [number, number]> = { mm: [2, 2], bmm: [3, 3], mv: [2, 1], dot: [1, 1] };

/** `run()`, and when it throws, `check()` first (which throws the logical error when there is one). */
function onFailure<T>(run: () => T, check: () => void): T {
  try {
    return run();
  } catch (e) {
    check();
    throw e;
  }
}

function linalgRules(): Record<string, BatchRule> {
  // The physical call runs first; only when it fails do the logical shapes get the operator's own checks, so
  // that the error names the shapes the user wrote (and a success pays for no check twice).
  const checked = (name: string) => (_hi: number, _lo: number, a: Tensor, b: Tensor) => {
    const ranks = RANKS[name];
    const suspicious = a.dtype !== b.dtype || (ranks !== undefined && (a.ndim !== ranks[0] || b.ndim !== ranks[1])) ||
      (name === 'bmm' && a.shape[0] !== b.shape[0]);
    if (suspicious) checkLogical(name, '', a, b);
    return onFailure(() => batchedMatmul(a, b), () => checkLogical(name, '', a, b));
  };
  return {
    'matmul': checked('matmul'),
    'mm': checked('mm'),
    'bmm': checked('bmm'),
    'mv': checked('mv'),
    'dot': checked('dot'),
    'addmm': (_hi, _lo, self: Tensor, m1: Tensor, m2: Tensor, beta: number, alpha: number) => {
      if (m1.ndim !== 2 || m2.ndim !== 2 || self.ndim > 2) checkLogical('addmm', '', self, m1, m2, beta, alpha);
      let product = onFailure(() => batchedMatmul(m1, m2), () => checkLogical('addmm', '', self, m1, m2, beta, alpha));
      if (Number(alpha) !== 1) product = call('mul', 'Scalar', product, alpha);
      if (Number(beta) === 0) return product;
      return call('add', 'Tensor', product, Number(beta) === 1 ? self : call('mul', 'Scalar', self, beta), 1);
    },
  };
}

function softmaxRules(): Record<string, BatchRule> {
  const forward = (name: string) => (_hi: number, _lo: number, self: Tensor, dim: number, half: boolean) => {
    const { t, levels } = physicalOf(self);
    const k = levels.length;
    if (self.ndim === 0) {
      physicalDim(dim, 0, k);
      const out = call(name, '', call('unsqueeze', '', t, k), k, half);
      return wrapPhysical(call('squeeze', 'dim', out, k), levels);
    }
    return wrapPhysical(call(name, '', t, physicalDim(dim, self.ndim, k), half), levels);
  };
  const backward =
    (name: string) => (_hi: number, _lo: number, grad: Tensor, output: Tensor, dim: number, dtype: unknown) => {
      const levels = unionLevels([physicalOf(grad).levels, physicalOf(output).levels]);
      const g = alignPhysical(grad, levels, grad.ndim, true), o = alignPhysical(output, levels, output.ndim, true);
      if (output.ndim === 0) return forLoopFallback(aten(name), [grad, output, dim, dtype]);
      return wrapPhysical(call(name, '', g, o, physicalDim(dim, output.ndim, levels.length), dtype), levels);
    };
  return {
    '_softmax': forward('_softmax'),
    '_log_softmax': forward('_log_softmax'),
    '_softmax_backward_data': backward('_softmax_backward_data'),
    '_log_softmax_backward_data': backward('_log_softmax_backward_data'),
  };
}

const REDUCTION_NONE = 0, REDUCTION_MEAN = 1;

/**
 * `nll_loss_forward` on a batch: the samples' inputs `[..., C]` and targets are flattened into one
 * `reduction='none'` call, then reduced per sample; the total weight (the mean's divisor) is the sum of the
 * picked class weights over targets that are not `ignore_index`, as PyTorch computes it.
 */
function nllLossRules(): Record<string, BatchRule> {
  return {
    'nll_loss_forward': (
      _hi,
      _lo,
      self: Tensor,
      target: Tensor,
      weight: Tensor | null,
      reduction: number,
      ignoreIndex: number,
    ) => {
      const args = [self, target, weight, reduction, ignoreIndex];
      checkLogical('nll_loss_forward', '', ...args);
      if (weight !== null && physicalOf(weight).levels.length > 0) {
        return forLoopFallback(aten('nll_loss_forward'), args);
      }
      const levels = unionLevels([physicalOf(self).levels, physicalOf(target).levels]);
      const k = levels.length;
      const x = alignPhysical(self, levels, self.ndim, true), y = alignPhysical(target, levels, target.ndim, true);
      const classes = self.shape[self.ndim - 1];
      const batch = x.shape.slice(0, k);
      const flatX = call('reshape', '', x, [-1, classes]);
      const flatY = call('reshape', '', y, [-1]);
      const [losses] = aten('nll_loss_forward').call(flatX, flatY, weight, REDUCTION_NONE, ignoreIndex) as Tensor[];
      const perSample = call('reshape', '', losses, [...batch, -1]);
      const kept = call('ne', 'Scalar', call('reshape', '', y, [...batch, -1]), ignoreIndex);
      let picked = call('_to_copy', '', kept, self.dtype, null, null, null, false, null);
      if (weight !== null) {
        const safe = call('where', 'ScalarOther', kept, call('reshape', '', y, [...batch, -1]), 0);
        picked = call(
          'mul',
          'Tensor',
          picked,
          call('reshape', '', call('index_select', '', weight, 0, call('reshape', '', safe, [-1])), [...batch, -1]),
        );
      }
      const totalWeight = call('sum', 'dim_IntList', picked, [k], false, null);
      if (reduction === REDUCTION_NONE) {
        const out = call('reshape', '', losses, [...batch, ...target.shape]);
        return [
          wrapPhysical(out, levels),
          wrapPhysical(call('zeros', '', [...batch], self.dtype, null, self.device, null), levels),
        ];
      }
      const summed = call('sum', 'dim_IntList', perSample, [k], false, null);
      const out = reduction === REDUCTION_MEAN ? call('div', 'Tensor', summed, totalWeight) : summed;
      return [wrapPhysical(out, levels), wrapPhysical(totalWeight, levels)];
    },
  };
}

addRuleTable(linalgRules);
addRuleTable(softmaxRules);
addRuleTable(nllLossRules);
