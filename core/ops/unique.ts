/**
 * `unique`: PyTorch 1.13's `_unique2` (sorted unique values, the inverse indices, the counts) decomposed over
 * the stable sort: sort the flattened input, mark where a value differs from its predecessor (so every NaN is its
 * own value, as PyTorch's CPU kernel finds), number the groups with a cumulative sum, scatter the group numbers
 * back through the sort's permutation, and count the run lengths. The values are always sorted (PyTorch allows
 * that for `sorted=False`). `unique` is not differentiable, as in PyTorch: its outputs are detached.
 *
 * Note [unique's one data-dependent step]
 * Every step runs on the input's device except one: finding where the runs start (`nonzero` of the start flags),
 * whose result size depends on the values. The algorithms are written once, as generators that yield the flags and
 * receive their `nonzero`; the operators drive them with the synchronous `nonzero`, and the asynchronous driver
 * (`uniqueAsync` in gpu/kernels/nonzero.ts, for WebGPU tensors, which have no synchronous readback) with an awaited
 * GPU count, so the two cannot drift apart.
 *
 * @module
 */
import { bool, int64 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';
import { pyTypeName } from './arg_names.ts';

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
  sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): [Tensor, Tensor, Tensor] {
  return runWithNonzero(unique2Steps(self, sorted, returnInverse, returnCounts));
}

/**
 * The steps of one `unique` computation (Note [unique's one data-dependent step]): yields a 1-d bool tensor and
 * expects back its `nonzero` (`[count, 1]` int64), returns `[values, inverse, counts]`.
 */
export type UniqueSteps = Generator<Tensor, [Tensor, Tensor, Tensor], Tensor>;

/** Runs `steps` with the synchronous `nonzero` operator. */
function runWithNonzero(steps: UniqueSteps): [Tensor, Tensor, Tensor] {
  let step = steps.next();
  while (!step.done) {
    let found: Tensor;
    try {
      found = aten('nonzero').call(step.value) as Tensor;
    } catch (e) {
      steps.return([] as unknown as [Tensor, Tensor, Tensor]); // disposes the steps' temporaries
      throw e;
    }
    step = steps.next(found);
  }
  return step.value;
}

/** The steps of `_unique2` (see {@linkcode unique2}). */
export function* unique2Steps(
  self: Tensor,
  _sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): UniqueSteps {
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
  const positions = temps.track(temps.track(yield starts).reshape([-1]));
  const values = sorted.indexSelect(0, positions);
  let inverse: Tensor, counts: Tensor;
  if (returnInverse) {
    const group = temps.track(temps.track(starts.cumsum(0)).sub(1));
    const zeros = temps.track(aten('zeros').call([n], int64, null, self.device, null) as Tensor);
    const scattered = temps.track(zeros.scatterAdd(0, perm, group));
    inverse = temps.track(scattered.reshape(self.shape)).clone();
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
  sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): [Tensor, Tensor, Tensor] {
  return runWithNonzero(uniqueDimSteps(self, dim, sorted, returnInverse, returnCounts));
}

/** The steps of `unique_dim` (see {@linkcode uniqueDim}). */
export function* uniqueDimSteps(
  self: Tensor,
  dim: number,
  _sorted: boolean,
  returnInverse: boolean,
  returnCounts: boolean,
): UniqueSteps {
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
  const positions = temps.track(temps.track(yield starts).reshape([-1]));
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
export function unique(input: Tensor, options: UniqueOptions = {}): Tensor | Tensor[] {
  const { dim, sorted, inv, cnt } = parseUniqueOptions('unique', input, options);
  const results =
    (dim === null
      ? aten('_unique2').call(input, sorted, inv, cnt)
      : aten('unique_dim').call(input, dim, sorted, inv, cnt)) as [Tensor, Tensor, Tensor];
  return uniqueResult(results, inv, cnt);
}

/** `unique`'s options, checked at run time (`fn` names the caller in the messages). */
export interface UniqueOptions {
  /** Whether the values come back sorted (they always are, as PyTorch allows). Default `true`. */
  sorted?: boolean;
  /** Also return the index of each input element's value among the unique values. */
  returnInverse?: boolean;
  /** Also return how often each unique value occurs. */
  returnCounts?: boolean;
  /** Unique slices along this dim instead of unique elements. */
  dim?: number | null;
}

/** Checks `unique`'s arguments as PythonArgParser would (`fn` names the function in the messages). */
export function parseUniqueOptions(
  fn: string,
  input: unknown,
  options: unknown,
): { dim: number | null; sorted: boolean; inv: boolean; cnt: boolean } {
  if (!Tensor.isTensor(input)) throw new TypeError(`${fn}(): argument 'input' must be Tensor`);
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${fn}(): options must be an object { sorted?, returnInverse?, returnCounts?, dim? }`);
  }
  for (const key of Object.keys(options)) {
    if (!['sorted', 'returnInverse', 'returnCounts', 'dim'].includes(key)) {
      throw new TypeError(`${fn}() got an unexpected keyword argument '${key}'`);
    }
  }
  const o = options as UniqueOptions;
  const dim = o.dim ?? null;
  if (dim !== null && !Number.isInteger(dim)) {
    throw new TypeError(`${fn}(): argument 'dim' must be int, not ${pyTypeName(dim)}`);
  }
  const sorted = o.sorted ?? true, inv = o.returnInverse ?? false, cnt = o.returnCounts ?? false;
  for (const [k, v] of [['sorted', sorted], ['returnInverse', inv], ['returnCounts', cnt]] as const) {
    if (typeof v !== 'boolean') throw new TypeError(`${fn}(): argument '${k}' must be bool, not ${pyTypeName(v)}`);
  }
  return { dim, sorted, inv, cnt };
}

/** `unique`'s return value from the three results: the values alone, or `[values, inverse?, counts?]`. */
export function uniqueResult([values, inverse, counts]: [Tensor, Tensor, Tensor], inv: boolean, cnt: boolean) {
  if (!inv) inverse.dispose();
  if (!cnt) counts.dispose();
  if (!inv && !cnt) return values;
  return [values, ...(inv ? [inverse] : []), ...(cnt ? [counts] : [])];
}
