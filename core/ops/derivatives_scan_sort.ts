/**
 * Derivative formulas of the scans and of `sort.stable` (derivatives.yaml's `cumsum_backward`,
 * `cumprod_backward`, `value_selected_reduction_backward` and, for `mode`, `value_selecting_reduction_backward`).
 *
 * @module
 */
import type { Derivative, SavedValues } from '../autograd/autograd_kernel.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';

const op = (name: string, overload = '') => Dispatcher.singleton().findSchemaOrThrow(`aten::${name}`, overload);
const t = (s: SavedValues, name: string) => s[name] as Tensor;

/** Sum over positions `j >= i` along `d` (a cumulative sum from the end). */
function reverseCumsum(x: Tensor, d: number): Tensor {
  return x.flip([d]).cumsum(d).flip([d]);
}

/**
 * cumprod's gradient without dividing by zero: before a slice's first zero, `rcumsum(g * out) / x`; at the first
 * zero, `rcumsum(g * out')` with `out'` the product that skips that zero; zero after it.
 */
function cumprodBackward(g: Tensor, self: Tensor, result: Tensor, dim: number): Tensor {
  if (self.numel === 0) return g;
  const d = wrapDim(dim, self.ndim);
  const isZero = self.eq(0);
  const zerosSoFar = isZero.cumsum(d);
  const beforeZero = zerosSoFar.eq(0);
  const firstZero = isZero.logicalAnd(zerosSoFar.eq(1));
  const safe = op('where', 'ScalarSelf').call(isZero, 1, self) as Tensor;
  const noZero = reverseCumsum(g.mul(result), d).div(safe);
  const skipped = (op('where', 'ScalarSelf').call(firstZero, 1, self) as Tensor).cumprod(d);
  const fromZero = zerosSoFar.ge(1);
  const atZero = reverseCumsum(g.mul(skipped).mul(fromZero), d);
  const a = op('where', 'ScalarOther').call(beforeZero, noZero, 0) as Tensor;
  return a.add(op('where', 'ScalarOther').call(firstZero, atZero, 0) as Tensor);
}

/**
 * `value_selecting_reduction_backward`: the gradient goes to the position each output picked along `dim` (a
 * zero tensor of the input's shape with `g` scattered at the saved indices).
 */
function valueSelectingBackward(g: Tensor, s: SavedValues): Tensor {
  const full = s['self_shape'] as readonly number[];
  if (full.length === 0) return g;
  const d = wrapDim(s.dim as number, full.length);
  const keepdim = s.keepdim as boolean;
  const grad = keepdim ? g : g.unsqueeze(d);
  const indices = keepdim ? t(s, 'result1') : t(s, 'result1').unsqueeze(d);
  const zeros = op('zeros').call(full, g.dtype, null, g.device, null) as Tensor;
  return zeros.scatterAdd(d, indices, grad); // one index per line: scatter_add is scatter
}

/**
 * The derivatives of `cumsum`, `cumprod` and `sort.stable`.
 *
 * @example
 * ```ts
 * import { SCAN_SORT_DERIVATIVES } from './derivatives_scan_sort.ts';
 * SCAN_SORT_DERIVATIVES['cumsum'].name; // 'CumsumBackward0'
 * ```
 */
export const SCAN_SORT_DERIVATIVES: { readonly [K in 'cumsum' | 'cumprod' | 'sort.stable' | 'mode']: Derivative } = {
  'cumsum': {
    name: 'CumsumBackward0',
    grads: { self: (g, s) => (g.ndim === 0 ? g : reverseCumsum(g, wrapDim(s.dim as number, g.ndim))) },
  },
  'cumprod': {
    name: 'CumprodBackward0',
    save: ['self', 'result'],
    grads: {
      self: (g, s) => t(s, 'self').ndim === 0 ? g : cumprodBackward(g, t(s, 'self'), t(s, 'result'), s.dim as number),
    },
  },
  'sort.stable': {
    name: 'SortBackward1',
    save: ['result1'],
    outputs: [0],
    grads: {
      self: (g, s) => {
        const indices = t(s, 'result1');
        if (g.ndim === 0) return g;
        const d = wrapDim(s.dim as number, g.ndim);
        const zeros = op('zeros').call(indices.shape, g.dtype, null, g.device, null) as Tensor;
        return zeros.scatterAdd(d, indices, g);
      },
    },
  },
  'mode': {
    name: 'ModeBackward0',
    save: ['result1'],
    outputs: [0],
    grads: { self: (g, s) => valueSelectingBackward(g, s) },
  },
};
