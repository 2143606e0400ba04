// nonzero, masked_select, where(condition), repeat, tile, repeat_interleave, tril/triu, roll, movedim, outer, pad,
// one_hot: references computed here on seeded random values, strided views and several dtypes, PyTorch 1.13's
// errors, and gradcheck through the decompositions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

const next = rng(0x5e1);
const f64 = { dtype: 'float64' as const };

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

/** Row-major multi-index of flat position `i` in `shape`. */
function unravel(i: number, shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = i % shape[d];
    i = Math.floor(i / shape[d]);
  }
  return out;
}
/** Flat row-major position of a multi-index. */
const ravel = (idx: number[], shape: readonly number[]) => idx.reduce((a, v, d) => a * shape[d] + v, 0);

describe('nonzero / masked_select / where(condition)', () => {
  for (const dtype of ['bool', 'uint8', 'int32', 'float16', 'float32', 'float64'] as const) {
    it(`${dtype}, strided`, () =>
      leakFree(() => {
        const shape = [3, 4, 5];
        const raw = nonContiguousTensor(shape, dtype, next);
        // about half zeros
        const x = dtype === 'bool' ? raw : S.where(randomTensor(shape, 'float32', next).gt(0), raw, 0);
        const xs = values(x);
        const want = xs.flatMap((v, i) => (v !== 0 ? [unravel(i, shape)] : []));
        const nz = x.nonzero();
        assert.equal(nz.dtype.name, 'int64');
        assert.deepEqual(nz.tolist(), want);
        assert.deepEqual(S.where(x).map((t) => t.tolist()), [0, 1, 2].map((d) => want.map((w) => w[d])));
        const mask = x.ne(0);
        assert.deepEqual(values(x.maskedSelect(mask)), xs.filter((v) => v !== 0));
      }));
  }
  it('NaN counts as non-zero; 0-d, empty; broadcast mask; errors', () =>
    leakFree(() => {
      assert.deepEqual(tensor([0, NaN, -0]).nonzero().tolist(), [[1]]);
      assert.deepEqual([...tensor(3).nonzero().shape], [1, 0]);
      assert.deepEqual([...tensor(0).nonzero().shape], [0, 0]);
      assert.deepEqual([...tensor([], f64).reshape([0, 2]).nonzero().shape], [0, 2]);
      assert.deepEqual(S.maskedSelect(tensor([[1, 2], [3, 4]]), tensor([true, false])).tolist(), [1, 3]);
      assert.deepEqual(S.maskedSelect(tensor([1, 2]), tensor([[true], [false]])).tolist(), [1, 2]);
      assert.throws(() => S.maskedSelect(tensor([1, 2]), tensor([1, 0])), {
        message: 'masked_select: expected BoolTensor for mask',
      });
    }));
});

describe('repeat / tile / repeat_interleave', () => {
  it('repeat against an index reference, with new leading dims and a strided input', () =>
    leakFree(() => {
      const x = nonContiguousTensor([2, 3], 'float32', next);
      const xs = values(x);
      const reps = [2, 3, 2];
      const out = x.repeat(reps);
      const shape = [2, 6, 6];
      assert.deepEqual([...out.shape], shape);
      const got = values(out);
      for (let i = 0; i < got.length; i++) {
        const [, a, b] = unravel(i, shape);
        assert.equal(got[i], xs[(a % 2) * 3 + (b % 3)]);
      }
      assert.deepEqual(S.tile(tensor([[1, 2]]), [2]).tolist(), [[1, 2, 1, 2]]);
      assert.deepEqual(S.tile(tensor([1, 2]), [2, 1]).tolist(), [[1, 2], [1, 2]]);
      assert.deepEqual([...tensor([1, 2]).repeat([0, 2]).shape], [0, 4]);
      assert.throws(() => tensor([[1]]).repeat([2]), {
        message: 'Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor',
      });
    }));
  it('repeat_interleave with int and tensor repeats, dims and flattening', () =>
    leakFree(() => {
      const x = tensor([[1, 2], [3, 4]]);
      assert.deepEqual(S.repeatInterleave(x, 2).tolist(), [1, 1, 2, 2, 3, 3, 4, 4]);
      assert.deepEqual(S.repeatInterleave(x, 2, { dim: 1 }).tolist(), [[1, 1, 2, 2], [3, 3, 4, 4]]);
      assert.deepEqual(x.repeatInterleave(tensor([1, 2]), 0).tolist(), [[1, 2], [3, 4], [3, 4]]);
      assert.deepEqual(x.repeatInterleave(tensor([3]), -1).tolist(), [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4]]);
      assert.deepEqual(S.repeatInterleave(tensor([2, 0, 1])).tolist(), [0, 0, 2]);
      assert.throws(() => S.repeatInterleave(x, tensor([1, 2, 3]), { dim: 0 }), {
        message: 'repeats must have the same size as input along dim',
      });
      assert.throws(() => S.repeatInterleave(tensor([-1])), { message: 'repeats can not be negative' });
    }));
});

describe('tril / triu / roll / movedim / outer', () => {
  it('tril and triu over batches, every diagonal, bool and int dtypes', () =>
    leakFree(() => {
      const shape = [2, 3, 4];
      for (const dtype of ['bool', 'int64', 'float32'] as const) {
        const x = nonContiguousTensor(shape, dtype, next);
        const xs = values(x);
        for (const k of [-2, -1, 0, 1, 3]) {
          const lo = values(S.tril(x, k)), up = values(x.triu(k));
          for (let i = 0; i < xs.length; i++) {
            const [, r, c] = unravel(i, shape);
            assert.equal(lo[i], c <= r + k ? xs[i] : 0);
            assert.equal(up[i], c >= r + k ? xs[i] : 0);
          }
          assert.equal(S.tril(x, k).dtype.name, dtype);
        }
      }
      assert.throws(() => S.tril(tensor([1, 2])), { message: 'tril: input tensor must have at least 2 dimensions' });
    }));
  it('roll over one dim, several dims and the flattened tensor', () =>
    leakFree(() => {
      const shape = [3, 4];
      const x = nonContiguousTensor(shape, 'float64', next);
      const xs = values(x);
      for (const [shifts, dims] of [[[1], [0]], [[-5, 2], [1, 0]], [[7], []]] as [number[], number[]][]) {
        const got = values(S.roll(x, shifts, dims));
        for (let i = 0; i < xs.length; i++) {
          let src: number;
          if (dims.length === 0) src = (((i - shifts[0]) % 12) + 12) % 12;
          else {
            const idx = unravel(i, shape);
            dims.forEach((d, j) => (idx[d] = (((idx[d] - shifts[j]) % shape[d]) + shape[d]) % shape[d]));
            src = ravel(idx, shape);
          }
          assert.equal(got[i], xs[src]);
        }
      }
      assert.throws(() => S.roll(x, [1, 2], [0]), { message: 'shifts and dimensions must align. shifts: 2, dims:1' });
    }));
  it('movedim and outer', () =>
    leakFree(() => {
      const x = randomTensor([2, 3, 4], 'float32', next);
      assert.deepEqual([...S.movedim(x, 0, -1).shape], [3, 4, 2]);
      assert.deepEqual(S.movedim(x, [0, 1], [2, 0]).tolist(), x.permute([1, 2, 0]).tolist());
      assert.deepEqual(x.movedim(2, 0).tolist(), x.permute([2, 0, 1]).tolist());
      assert.throws(() => S.movedim(x, [0, 0], [1, 2]), { message: 'movedim: repeated dim in `source` ([0, 0])' });
      const a = randomTensor([3], 'float64', next), b = randomTensor([4], 'float64', next);
      const av = values(a), bv = values(b);
      assert.deepEqual(values(S.outer(a, b)), av.flatMap((u) => bv.map((v) => u * v)));
      assert.throws(() => S.outer(a.unsqueeze(0), b), { message: 'outer: Expected 1-D argument self, but got 2-D' });
    }));
});

describe('pad / one_hot', () => {
  it('constant (with crops), reflect and replicate against index references', () =>
    leakFree(() => {
      const x = randomTensor([2, 3, 4], 'float32', next);
      const xs = values(x);
      const c = S.pad(x, [1, 2, 0, 1], { value: 0.5 });
      assert.deepEqual([...c.shape], [2, 4, 7]);
      const cv = values(c);
      for (let i = 0; i < cv.length; i++) {
        const [n, r, col] = unravel(i, [2, 4, 7]);
        const inside = r < 3 && col >= 1 && col < 5;
        assert.equal(cv[i], inside ? xs[ravel([n, r, col - 1], [2, 3, 4])] : 0.5);
      }
      assert.deepEqual(S.pad(tensor([1, 2, 3]), [-1, 1]).tolist(), [2, 3, 0]);
      const refl = (i: number, n: number) => (n - 1) - Math.abs((n - 1) - Math.abs(i));
      for (const mode of ['reflect', 'replicate'] as const) {
        const p = S.pad(x, [3, 2, 2, 1], mode);
        assert.deepEqual([...p.shape], [2, 6, 9]);
        const pv = values(p);
        for (let i = 0; i < pv.length; i++) {
          const [n, r, col] = unravel(i, [2, 6, 9]);
          const sr = mode === 'reflect' ? refl(r - 2, 3) : Math.min(Math.max(r - 2, 0), 2);
          const sc = mode === 'reflect' ? refl(col - 3, 4) : Math.min(Math.max(col - 3, 0), 3);
          assert.equal(pv[i], xs[ravel([n, sr, sc], [2, 3, 4])], `${mode} ${i}`);
        }
      }
      assert.throws(() => S.pad(x, [1]), { message: 'Padding length must be divisible by 2' });
      assert.throws(() => S.pad(x, [4, 0], 'reflect'), {
        message:
          'Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (4, 0) at dimension 2 of input [2, 3, 4]',
      });
    }));
  it('one_hot with inferred and given class counts, errors', () =>
    leakFree(() => {
      assert.deepEqual(S.oneHot(tensor([[0, 2], [1, 1]])).tolist(), [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 1, 0]]]);
      assert.equal(S.oneHot(tensor([1]), 4).dtype.name, 'int64');
      assert.deepEqual(S.oneHot(tensor([1]), 4).tolist(), [[0, 1, 0, 0]]);
      assert.throws(() => S.oneHot(tensor([1.5])), { message: 'one_hot is only applicable to index tensor.' });
      assert.throws(() => S.oneHot(tensor([-1])), { message: 'Class values must be non-negative.' });
      assert.throws(() => S.oneHot(tensor([3]), 3), { message: 'Class values must be smaller than num_classes.' });
    }));
});

describe('gradcheck of the selections (float64)', () => {
  const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
  const CASES: [string, (...x: Tensor[]) => Tensor, () => Tensor[]][] = [
    ['masked_select', (a) => a.maskedSelect(tensor([true, false, true])), () => [r([2, 3])]],
    [
      'repeat / tile / repeat_interleave',
      (a) => a.repeat([2, 1, 2]).sum(0).add(S.tile(a, [1, 2])).sum().add(a.repeatInterleave(tensor([1, 3]), 0).sum()),
      () => [r([2, 3])],
    ],
    [
      'tril / triu / roll / movedim',
      (a) => S.tril(a, -1).add(a.triu(1)).add(S.roll(a, [1], [1])).add(S.movedim(a.unsqueeze(0), 0, 1).squeeze(1)),
      () => [r([3, 3])],
    ],
    [
      'outer / pad',
      (a, b) =>
        S.outer(a, b).sum().add(S.pad(a.unsqueeze(0), [1, 2], 'reflect').sum()).add(
          S.pad(b, [2, 1], { value: 3 }).sum(),
        ).add(S.pad(a.unsqueeze(0), [2, 2], 'replicate').mul(2).sum()),
      () => [r([4]), r([3])],
    ],
  ];
  for (const [name, fn, inputs] of CASES) {
    it(name, () => {
      manualSeed(19);
      const before = memoryStats().liveTensors;
      const xs = scope(inputs);
      assert.equal(gradcheck(fn, xs), true);
      for (const x of xs) x.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }
});
