/**
 * The selections built on `sort.stable`, as PyTorch 1.13 defines their results (aten/src/ATen/native/Sorting.cpp,
 * TensorTopK): `sort`, `argsort`, `topk`, `kthvalue`, `median` (the lower median; NaN when the slice holds a
 * NaN, with the index of its first NaN). They differentiate through `sort.stable` (SortBackward) and the
 * `narrow` / `gather` that pick their elements.
 *
 * Note [Ties in selections]
 * The sort is stable, so among equal elements the one that comes first in the input is picked first; PyTorch's
 * unstable sort, `topk` and `kthvalue` (nth_element) leave that order unspecified, so indices of tied values
 * can differ from PyTorch's while the values are identical. `sorted=False` in `topk` still returns sorted values,
 * one of the orders PyTorch allows.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { int64 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';

function sortStable(self: Tensor, stable: boolean | null, dim: number, descending: boolean): [Tensor, Tensor] {
  return aten('sort', 'stable').call(self, stable, dim, descending) as [Tensor, Tensor];
}

/**
 * `sort(x, dim, descending)`: sorted values along `dim` and their indices (NaN sorts as the largest value).
 *
 * @example
 * ```ts
 * import { sort, tensor } from '../../mod.ts';
 * sort(tensor([3, 1, 2]))[1].tolist(); // [1, 2, 0]
 * ```
 */
export function sort(self: Tensor, dim: number, descending: boolean): [Tensor, Tensor] {
  return sortStable(self, false, dim, descending);
}

/**
 * `argsort(x, dim, descending)` / `argsort(x, { stable })`: the indices `sort` returns.
 *
 * @example
 * ```ts
 * import { argsort, tensor } from '../../mod.ts';
 * argsort(tensor([3, 1, 2]), { descending: true }).tolist(); // [0, 2, 1]
 * ```
 */
export function argsort(self: Tensor, stable: boolean, dim: number, descending: boolean): Tensor {
  const [values, indices] = sortStable(self, stable, dim, descending);
  values.dispose();
  return indices;
}

/** `self` as a 1-element vector when 0-d (the selections work on a dim), with the caller's wrapped dim. */
function withDim(self: Tensor, dim: number, temps: Temporaries): [Tensor, number] {
  const d = wrapDim(dim, self.ndim);
  return self.ndim === 0 ? [temps.track(self.reshape([1])), 0] : [self, d];
}

/**
 * `topk(x, k, dim, largest, sorted)`: the `k` largest (or smallest) elements along `dim` and their indices.
 *
 * @example
 * ```ts
 * import { tensor, topk } from '../../mod.ts';
 * topk(tensor([1, 5, 3]), 2)[0].tolist(); // [5, 3]
 * ```
 */
export function topk(self: Tensor, k: number, dim: number, largest: boolean, _sorted: boolean): [Tensor, Tensor] {
  using temps = new Temporaries();
  const [x, d] = withDim(self, dim, temps);
  if (k < 0 || k > x.shape[d]) throw new RuntimeError('selected index k out of range');
  const [sv, si] = sortStable(x, false, d, largest);
  temps.track(sv);
  temps.track(si);
  let values = temps.track(temps.track(sv.narrow(d, 0, k)).clone());
  let indices = temps.track(temps.track(si.narrow(d, 0, k)).clone());
  if (self.ndim === 0 && k === 1) {
    values = temps.track(values.reshape([]));
    indices = temps.track(indices.reshape([]));
  }
  return [temps.keep(values), temps.keep(indices)];
}

function checkNonEmptyDim(op: string, x: Tensor, d: number): void {
  if (x.shape[d] === 0) throw new RangeError(`${op}: Expected reduction dim ${d} to have non-zero size.`);
}

/** Picks position `pos` (a keepdim index tensor, or a number) of the sorted values and indices along `d`. */
function pick(
  self: Tensor,
  x: Tensor,
  d: number,
  sorted: [Tensor, Tensor],
  pos: Tensor,
  keepdim: boolean,
  temps: Temporaries,
): [Tensor, Tensor] {
  const [sv, si] = sorted;
  let values = temps.track(sv.gather(d, pos));
  let indices = temps.track(si.gather(d, pos));
  if (self.ndim === 0) {
    values = temps.track(values.reshape([]));
    indices = temps.track(indices.reshape([]));
  } else if (!keepdim) {
    const shape = x.shape.filter((_, i) => i !== d);
    values = temps.track(values.reshape(shape));
    indices = temps.track(indices.reshape(shape));
  }
  return [temps.keep(values), temps.keep(indices)];
}

/** A keepdim int64 index tensor holding `p` for every slice along `d`. */
function positions(x: Tensor, d: number, p: number, temps: Temporaries): Tensor {
  const shape = x.shape.map((s, i) => (i === d ? 1 : s));
  return temps.track(aten('full').call(shape, p, int64, null, x.device, null) as Tensor);
}

/**
 * `kthvalue(x, k, dim, keepdim)`: the `k`-th smallest element along `dim` (1-based) and its index.
 *
 * @example
 * ```ts
 * import { kthvalue, tensor } from '../../mod.ts';
 * kthvalue(tensor([4, 1, 3]), 2)[0].item(); // 3
 * ```
 */
export function kthvalue(self: Tensor, k: number, dim: number, keepdim: boolean): [Tensor, Tensor] {
  using temps = new Temporaries();
  const [x, d] = withDim(self, dim, temps);
  checkNonEmptyDim('kthvalue()', x, d);
  if (k < 1 || k > x.shape[d]) {
    throw new RuntimeError(`kthvalue(): selected number k out of range for dimension ${d}`);
  }
  const sorted = sortStable(x, false, d, false);
  temps.track(sorted[0]);
  temps.track(sorted[1]);
  return pick(self, x, d, sorted, positions(x, d, k - 1, temps), keepdim, temps);
}

/**
 * `median(x, dim, keepdim)`: the lower median along `dim` and its index; NaN (and the first NaN's index) where
 * the slice holds a NaN.
 *
 * @example
 * ```ts
 * import { median, tensor } from '../../mod.ts';
 * median(tensor([[4, 1, 3, 2]]), 1)[0].tolist(); // [2]
 * ```
 */
export function medianDim(self: Tensor, dim: number, keepdim: boolean): [Tensor, Tensor] {
  using temps = new Temporaries();
  const [x, d] = withDim(self, dim, temps);
  checkNonEmptyDim('median()', x, d);
  const n = x.shape[d];
  const sorted = sortStable(x, false, d, false);
  temps.track(sorted[0]);
  temps.track(sorted[1]);
  let pos = positions(x, d, (n - 1) >> 1, temps);
  if (x.dtype.isFloatingPoint) {
    // NaN sorts last: the first NaN of a slice sits right after its numbers.
    const nanCount = temps.track(temps.track(x.isnan()).sum([d], true));
    const firstNan = temps.track(aten('rsub', 'Scalar').call(nanCount, n, 1) as Tensor);
    pos = temps.track(aten('where', 'self').call(temps.track(nanCount.gt(0)), firstNan, pos) as Tensor);
  }
  return pick(self, x, d, sorted, pos, keepdim, temps);
}

/**
 * `median(x)`: the lower median of every element (NaN if any element is NaN).
 *
 * @example
 * ```ts
 * import { median, tensor } from '../../mod.ts';
 * median(tensor([4, 1, 3, 2])).item(); // 2
 * ```
 */
export function median(self: Tensor): Tensor {
  if (self.numel === 0) throw new RuntimeError('median() input tensor cannot be empty');
  using temps = new Temporaries();
  const flat = temps.track(self.reshape([-1]), self);
  const [values, indices] = medianDim(flat, 0, false);
  indices.dispose();
  return values;
}
