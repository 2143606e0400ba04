// `mode` on the CPU: values and indices against a float64 reference (the smallest of the most frequent values,
// the last index holding it), every dtype, odd shapes, every dim, keepdim, strided views; results checked by hand
// against PyTorch 1.13; PyTorch's errors; ModeBackward0 (value_selecting_reduction_backward) and gradcheck.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gradcheck, mode, randn, type Tensor, tensor } from '../../mod.ts';
import { ALL_DTYPES, randomTensor, rng, values } from './_helpers.ts';

/** The reference along `dim`: per line, the smallest most frequent value (NaN as one value, the largest). */
function reference(x: Tensor, dim: number, keepdim: boolean): { shape: number[]; values: number[]; indices: number[] } {
  const v = values(x), shape = x.shape, d = dim < 0 ? dim + shape.length : dim;
  const n = shape[d], inner = shape.slice(d + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, d).reduce((a, b) => a * b, 1);
  const out: number[] = [], idx: number[] = [];
  const key = (a: number) => (Number.isNaN(a) ? 'nan' : String(a === 0 ? 0 : a));
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const counts = new Map<string, { count: number; last: number; value: number }>();
      for (let j = 0; j < n; j++) {
        const a = v[(o * n + j) * inner + i];
        const e = counts.get(key(a)) ?? { count: 0, last: -1, value: a };
        counts.set(key(a), { count: e.count + 1, last: j, value: a });
      }
      let best: { count: number; last: number; value: number } | undefined;
      for (const e of counts.values()) {
        const smaller = best !== undefined &&
          (Number.isNaN(best.value) ? !Number.isNaN(e.value) : !Number.isNaN(e.value) && e.value < best.value);
        if (best === undefined || e.count > best.count || (e.count === best.count && smaller)) best = e;
      }
      out.push(v[(o * n + best!.last) * inner + i]);
      idx.push(best!.last);
    }
  }
  const outShape = keepdim ? shape.map((s, k) => (k === d ? 1 : s)) : shape.filter((_, k) => k !== d);
  return { shape: outShape, values: out, indices: idx };
}

describe('mode (CPU)', () => {
  it('matches the float64 reference for every dtype, dim, keepdim and layout', () => {
    const next = rng(31);
    for (const dtype of ALL_DTYPES) {
      for (const shape of [[1], [23], [4, 9], [3, 5, 7]]) {
        for (const strided of [false, true]) {
          // Few distinct values so that counts tie: 0, 1, 2 in every dtype; a stepped view when `strided`.
          const pairs = randomTensor([...shape, 2], 'int32', next).remainder(3).to({ dtype });
          const x = strided ? pairs.select(-1, 1) : pairs.select(-1, 0).contiguous();
          for (let dim = -shape.length; dim < shape.length; dim++) {
            for (const keepdim of [false, true]) {
              const [v, i] = mode(x, dim, { keepdim });
              const ref = reference(x, dim, keepdim);
              const what = `${dtype} ${shape} strided=${strided} dim=${dim} keepdim=${keepdim}`;
              assert.deepEqual(v.shape, ref.shape, what);
              assert.equal(v.dtype, x.dtype, what);
              assert.equal(i.dtype.name, 'int64', what);
              assert.deepEqual(values(v), ref.values, `${what} values`);
              assert.deepEqual(values(i), ref.indices, `${what} indices`);
            }
          }
        }
      }
    }
  });

  it("gives PyTorch 1.13's results (checked by hand), incl. signed zeros, bool and 0-d", () => {
    const cases: [number[], number, number][] = [
      [[1, 2, 2, 1, 3], 1, 3],
      [[3, 1, 1, 3], 1, 2],
      [[-0, 0, 1, 1], 0, 1],
      [[5], 5, 0],
      [[2, 7, 7, 2, 9, 2], 2, 5],
    ];
    for (const [xs, value, index] of cases) {
      const [v, i] = mode(tensor(xs, { dtype: 'float32' }));
      assert.deepEqual([v.item(), i.item()], [value, index], `${xs}`);
    }
    const m = tensor([[1, 2, 2], [3, 3, 1]]);
    assert.deepEqual(mode(m, 0).map((t) => t.tolist()), [[1, 2, 1], [0, 0, 1]]);
    assert.deepEqual(mode(m, 1, { keepdim: true }).map((t) => t.tolist()), [[[2], [3]], [[2], [1]]]);
    assert.deepEqual(mode(tensor([true, false, true])).map((t) => t.item()), [true, 2]);
    assert.deepEqual(mode(tensor(3.5)).map((t) => t.item()), [3.5, 0]);
    assert.deepEqual(mode(tensor(3.5), 0, true).map((t) => t.shape), [[], []]);
    // The Tensor method and options.
    assert.deepEqual(m.mode(1)[0].tolist(), [2, 3]);
    // Empty along another dim: an empty result.
    const [ev, ei] = mode(tensor([[]], { dtype: 'float32' }).reshape([0, 2]), 1);
    assert.deepEqual([ev.shape, ei.shape], [[0], [0]]);
  });

  it('counts every NaN as one value, larger than every number', () => {
    // PyTorch 1.13's CPU kernel sorts with `<`, which is not an order with NaN, so its NaN results depend on the
    // positions; this runtime counts NaNs together, as its sort orders them.
    const [v, i] = mode(tensor([NaN, 1, NaN, 1, NaN]));
    assert.ok(Number.isNaN(v.item() as number));
    assert.equal(i.item(), 4);
    assert.deepEqual(mode(tensor([NaN, 1])).map((t) => t.item()), [1, 1]);
  });

  it("raises PyTorch's errors and stays usable", () => {
    assert.throws(() => mode(tensor([], { dtype: 'float32' })), {
      name: 'RangeError',
      message: 'mode(): Expected reduction dim 0 to have non-zero size.',
    });
    assert.throws(
      () => mode(tensor([[1, 2]]), 2),
      /Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)/,
    );
    assert.throws(
      () => mode(tensor(3), 1),
      /Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)/,
    );
    assert.throws(() => mode(tensor([1]), 'x' as unknown as number), /mode/);
    assert.equal(mode(tensor([4, 4, 1]))[0].item(), 4);
  });

  it('ModeBackward0 sends the gradient to the chosen index; gradcheck in float64', () => {
    const x = tensor([1.5, 2, 2, 1.5, 3], { requiresGrad: true });
    const [v] = mode(x);
    assert.equal(v.gradFn?.name(), 'ModeBackward0');
    v.mul(3).backward();
    assert.deepEqual(x.grad!.tolist(), [0, 0, 0, 3, 0]);
    // Distinct values (finite differences would break ties): the mode is then each line's smallest value.
    const base = randn([4, 6], { dtype: 'float64' }).requiresGrad_();
    for (const keepdim of [false, true]) {
      for (const dim of [0, 1, -1]) {
        assert.equal(gradcheck((a: Tensor) => mode(a, dim, { keepdim })[0], [base]), true, `${dim} ${keepdim}`);
      }
    }
    base.dispose();
  });
});
