/**
 * `unique`: PyTorch 1.13's `_unique2` (sorted unique values, the inverse indices, the counts) decomposed over
 * the stable sort: sort the flattened input, mark where a value differs from its predecessor (so every NaN is its
 * own value, as PyTorch's CPU kernel finds), number the groups with a cumulative sum, scatter the group numbers
 * back through the sort's permutation, and count the run lengths. The values are always sorted (PyTorch allows
 * that for `sorted=False`). `unique` is not differentiable, as in PyTorch: its outputs are detached.
 *
 * @module
 */
import { bool, int64 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';

/**
 * `_unique2(self, sorted, return_inverse, return_counts)`: the unique values (sorted), the index of each input
 * element's value among them (shaped like the input), and how often each value occurs. The inverse and counts
 * are empty when not asked for.
 *
 * @example
 * ```ts
 * import { unique, tensor } from '../../mod.ts';
 * unique(tensor([3, 1, 3])).tolist(); // [1, 3]
 * ```
 */
export function unique2(
  self: Tensor,
  _sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): [Tensor, Tensor, Tensor] {
  using temps = new Temporaries();
  const empty = () => aten('empty', 'memory_format').call([0], int64, null, self.device, null, null) as Tensor;
  const flat = temps.track(temps.track(self.detach()).reshape([-1]));
  const n = flat.numel;
  if (n === 0) {
    const inverse = returnInverse ? aten('zeros').call(self.shape, int64, null, self.device, null) as Tensor : empty();
    return [flat.clone(), inverse, returnCounts ? empty() : empty()];
  }
  const [sorted, perm] = aten('sort', 'stable').call(flat, true, 0, false) as [Tensor, Tensor];
  temps.track(sorted);
  temps.track(perm);
  // starts[i]: sorted[i] begins a new value (the first element always does; NaN != NaN starts one each time).
  const differs = temps.track(temps.track(sorted.narrow(0, 1, n - 1)).ne(temps.track(sorted.narrow(0, 0, n - 1))));
  const first = temps.track(aten('ones').call([1], differs.dtype, null, self.device, null) as Tensor);
  const starts = temps.track(aten('cat').call([first, differs], 0) as Tensor);
  const values = aten('masked_select').call(sorted, starts) as Tensor;
  let inverse: Tensor, counts: Tensor;
  if (returnInverse) {
    const group = temps.track(temps.track(starts.cumsum(0)).sub(1));
    const zeros = temps.track(aten('zeros').call([n], int64, null, self.device, null) as Tensor);
    const scattered = temps.track(zeros.scatterAdd(0, perm, group));
    inverse = temps.track(scattered.reshape(self.shape)).clone();
  } else inverse = empty();
  if (returnCounts) {
    const positions = temps.track(temps.track(aten('nonzero').call(starts) as Tensor).reshape([-1]));
    const end = temps.track(aten('full').call([1], n, int64, null, self.device, null) as Tensor);
    const after = temps.track(
      aten('cat').call([temps.track(positions.narrow(0, 1, positions.numel - 1)), end], 0) as Tensor,
    );
    counts = after.sub(positions);
  } else counts = empty();
  return [values, inverse, counts];
}

/**
 * `unique_dim(self, dim, sorted, return_inverse, return_counts)`: the unique slices along `dim`, sorted
 * lexicographically (each slice compared in row-major order of its elements), the index of each input slice among
 * them, and how often each occurs. The lexicographic order comes from stable sorts of the slices' elements from the
 * last to the first (a least-significant-first radix order).
 *
 * @example
 * ```ts
 * import { tensor, unique } from '../../mod.ts';
 * unique(tensor([[1, 2], [0, 5], [1, 2]]), { dim: 0 }).tolist(); // [[0, 5], [1, 2]]
 * ```
 */
export function uniqueDim(
  self: Tensor,
  dim: number,
  _sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): [Tensor, Tensor, Tensor] {
  const d = wrapDim(dim, self.ndim);
  using temps = new Temporaries();
  const empty = () => aten('empty', 'memory_format').call([0], int64, null, self.device, null, null) as Tensor;
  const x = temps.track(self.detach());
  const n = self.ndim === 0 ? 1 : self.shape[d];
  const moved = temps.track(aten('movedim', 'int').call(x, d, 0) as Tensor);
  if (n === 0) {
    return [x.clone(), returnInverse ? empty() : empty(), returnCounts ? empty() : empty()];
  }
  const rows = temps.track(moved.reshape([n, -1]));
  const m = rows.shape[1];
  let perm = temps.track(aten('arange').call(n, int64, null, self.device, null) as Tensor);
  for (let j = m - 1; j >= 0; j--) {
    const col = temps.track(temps.track(rows.select(1, j)).indexSelect(0, perm));
    const order = temps.track(aten('argsort', 'stable').call(col, true, 0, false) as Tensor);
    perm = temps.track(perm.indexSelect(0, order));
  }
  const sortedRows = temps.track(rows.indexSelect(0, perm));
  let starts: Tensor;
  const first = temps.track(aten('ones').call([1], bool, null, self.device, null) as Tensor);
  if (n === 1) starts = first;
  else {
    const a = temps.track(sortedRows.narrow(0, 1, n - 1)), b = temps.track(sortedRows.narrow(0, 0, n - 1));
    const differs = m === 0
      ? temps.track(aten('zeros').call([n - 1], bool, null, self.device, null) as Tensor)
      : temps.track(temps.track(a.ne(b)).any(1));
    starts = temps.track(aten('cat').call([first, differs], 0) as Tensor);
  }
  const positions = temps.track(temps.track(aten('nonzero').call(starts) as Tensor).reshape([-1]));
  const uniqueRows = temps.track(sortedRows.indexSelect(0, positions));
  const shaped = temps.track(uniqueRows.reshape([positions.numel, ...moved.shape.slice(1)]));
  const back = temps.track(aten('movedim', 'int').call(shaped, 0, d) as Tensor);
  // contiguous() returns its input when already contiguous: then the tracked view itself is the result.
  const values = back.isContiguous() ? temps.keep(back) : back.contiguous();
  let inverse: Tensor, counts: Tensor;
  if (returnInverse) {
    const group = temps.track(temps.track(starts.cumsum(0)).sub(1));
    const zeros = temps.track(aten('zeros').call([n], int64, null, self.device, null) as Tensor);
    inverse = zeros.scatterAdd(0, perm, group);
  } else inverse = empty();
  if (returnCounts) {
    const end = temps.track(aten('full').call([1], n, int64, null, self.device, null) as Tensor);
    const after = temps.track(
      aten('cat').call([temps.track(positions.narrow(0, 1, positions.numel - 1)), end], 0) as Tensor,
    );
    counts = after.sub(positions);
  } else counts = empty();
  return [values, inverse, counts];
}

/**
 * `torch.unique(input, sorted, return_inverse, return_counts, dim)`: the unique values (or slices along `dim`),
 * sorted, plus the inverse indices and/or counts when asked for (then an array `[values, inverse?, counts?]`, as
 * PyTorch's tuple).
 *
 * @example
 * ```ts
 * import { tensor, unique } from '../../mod.ts';
 * const [values, inverse, counts] = unique(tensor([2, 1, 2]), { returnInverse: true, returnCounts: true });
 * values.tolist(); // [1, 2]
 * inverse.tolist(); // [1, 0, 1]
 * counts.tolist(); // [1, 2]
 * ```
 */
export function unique(
  input: Tensor,
  options?: { sorted?: boolean; returnInverse?: false; returnCounts?: false; dim?: number | null },
): Tensor;
/** With `returnInverse` or `returnCounts`: `[values, inverse?, counts?]`. */
export function unique(
  input: Tensor,
  options: { sorted?: boolean; returnInverse?: boolean; returnCounts?: boolean; dim?: number | null },
): Tensor[];
export function unique(
  input: Tensor,
  options: { sorted?: boolean; returnInverse?: boolean; returnCounts?: boolean; dim?: number | null } = {},
): Tensor | Tensor[] {
  if (!Tensor.isTensor(input)) throw new TypeError("unique(): argument 'input' must be Tensor");
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('unique(): options must be an object { sorted?, returnInverse?, returnCounts? }');
  }
  for (const key of Object.keys(options)) {
    if (!['sorted', 'returnInverse', 'returnCounts', 'dim'].includes(key)) {
      throw new TypeError(`unique() got an unexpected keyword argument '${key}'`);
    }
  }
  const dim = options.dim ?? null;
  if (dim !== null && !Number.isInteger(dim)) {
    throw new TypeError(`unique(): argument 'dim' must be int, not ${typeof dim}`);
  }
  const inv = options.returnInverse ?? false, cnt = options.returnCounts ?? false;
  for (const [k, v] of [['sorted', options.sorted ?? true], ['returnInverse', inv], ['returnCounts', cnt]] as const) {
    if (typeof v !== 'boolean') throw new TypeError(`unique(): argument '${k}' must be bool, not ${typeof v}`);
  }
  const [values, inverse, counts] =
    (dim === null
      ? aten('_unique2').call(input, options.sorted ?? true, inv, cnt)
      : aten('unique_dim').call(input, dim, options.sorted ?? true, inv, cnt)) as Tensor[];
  if (!inv) inverse.dispose();
  if (!cnt) counts.dispose();
  if (!inv && !cnt) return values;
  return [values, ...(inv ? [inverse] : []), ...(cnt ? [counts] : [])];
}
