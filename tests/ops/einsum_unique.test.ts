// einsum (matrix products, batches, traces and diagonals, outer products, ellipsis with broadcasting, implicit
// outputs) against loops computed here; unique with inverse and counts; PyTorch's errors; gradcheck of einsum.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { assertClose, nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

const next = rng(0xe15);
const f64 = { dtype: 'float64' as const };

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

/** Reference einsum by brute force over every label assignment. */
function brute(eq: string, ops: Tensor[], outShape: number[]): number[] {
  const [lhs, rhs] = eq.split('->');
  const terms = lhs.split(',');
  const sizes = new Map<string, number>();
  terms.forEach((t, i) => [...t].forEach((c, d) => sizes.set(c, Math.max(sizes.get(c) ?? 1, ops[i].shape[d]))));
  const labels = [...sizes.keys()];
  const data = ops.map(values);
  const out = new Array<number>(outShape.reduce((a, b) => a * b, 1)).fill(0);
  const assign = new Map<string, number>();
  const rec = (k: number) => {
    if (k === labels.length) {
      let prod = 1;
      terms.forEach((t, i) => {
        let flat = 0;
        [...t].forEach((c, d) => (flat = flat * ops[i].shape[d] + (ops[i].shape[d] === 1 ? 0 : assign.get(c)!)));
        prod *= data[i][flat];
      });
      let o = 0;
      [...rhs].forEach((c, d) => (o = o * outShape[d] + assign.get(c)!));
      out[o] += prod;
      return;
    }
    for (let v = 0; v < sizes.get(labels[k])!; v++) {
      assign.set(labels[k], v);
      rec(k + 1);
    }
  };
  rec(0);
  return out;
}

describe('einsum', () => {
  const CASES: [string, number[][], number[]][] = [
    ['ij,jk->ik', [[3, 4], [4, 5]], [3, 5]],
    ['bij,bjk->bik', [[2, 3, 4], [2, 4, 3]], [2, 3, 3]],
    ['ii->', [[4, 4]], []],
    ['ii->i', [[3, 3]], [3]],
    ['ij->ji', [[3, 5]], [5, 3]],
    ['i,j->ij', [[3], [4]], [3, 4]],
    ['ij,ij->i', [[3, 4], [3, 4]], [3]],
    ['ijk,kj->i', [[2, 3, 4], [4, 3]], [2]],
    ['abc,cd,de->abe', [[2, 3, 4], [4, 2], [2, 3]], [2, 3, 3]],
    ['ij,j->i', [[3, 4], [1]], [3]],
    ['iij->j', [[3, 3, 2]], [2]],
  ];
  for (const [eq, shapes, outShape] of CASES) {
    it(`${eq} on strided float64 operands`, () =>
      leakFree(() => {
        const ops = shapes.map((
          s,
          i,
        ) => (i === 0 ? nonContiguousTensor(s, 'float64', next) : randomTensor(s, 'float64', next)));
        assertClose(S.einsum(eq, ops), brute(eq, ops, outShape), outShape, { rtol: 1e-12, atol: 1e-12 });
      }));
  }
  it('implicit output, ellipsis with broadcasting, spaces', () =>
    leakFree(() => {
      const a = randomTensor([3, 4], 'float64', next), b = randomTensor([4, 2], 'float64', next);
      assertClose(S.einsum('ij,jk', [a, b]), values(a.mm(b)), [3, 2]);
      assertClose(S.einsum('ba', [a]), values(a.t()), [4, 3]);
      assertClose(S.einsum('ii', [a.narrow(1, 0, 3)]), [values(a.narrow(1, 0, 3).diagonal().sum())[0]], []);
      const x = randomTensor([2, 1, 3, 4], 'float64', next), y = randomTensor([5, 4, 2], 'float64', next);
      const got = S.einsum('...ij, ...jk -> ...ik', [x, y]);
      assert.deepEqual([...got.shape], [2, 5, 3, 2]);
      assertClose(got, values(S.matmul(x, y)), [2, 5, 3, 2], { rtol: 1e-12, atol: 1e-12 });
      assertClose(S.einsum('i...->...', [x.reshape([2, 3, 4])]), values(x.reshape([2, 3, 4]).sum(0)), [3, 4]);
      assert.equal(S.einsum('ij,jk', [tensor([[1, 2]]), tensor([[3], [4]])]).item(), 11);
    }));
  it("PyTorch's errors", () =>
    leakFree(() => {
      const a = tensor([[1, 2]], f64);
      assert.throws(() => S.einsum('ij', []), { message: 'einsum(): must provide at least one operand' });
      assert.throws(() => S.einsum('ij,jk', [a]), {
        message: 'einsum(): fewer operands were provided than specified in the equation',
      });
      assert.throws(() => S.einsum('ij', [a, a]), {
        message: 'einsum(): more operands were provided than specified in the equation',
      });
      assert.throws(() => S.einsum('ijk', [a]), {
        message:
          'einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) for operand 0 and no ellipsis was given',
      });
      assert.throws(() => S.einsum('ij->k', [a]), {
        message: 'einsum(): output subscript k does not appear in the equation for any input operand',
      });
      assert.throws(() => S.einsum('ij->ii', [a]), {
        message: 'einsum(): output subscript i appears more than once in the output',
      });
      assert.throws(() => S.einsum('ij,ij->i', [a, tensor([[1, 2, 3]], f64)]));
    }));
  it('gradcheck through permute + bmm', () => {
    manualSeed(23);
    const before = memoryStats().liveTensors;
    const xs = scope(() =>
      [randn([2, 3, 4], f64), randn([4, 3], f64), randn([3, 3], f64)].map((t) => t.requiresGrad_())
    );
    assert.equal(
      gradcheck(
        (a, b, c) =>
          S.einsum('bij,jk->bik', [a, b]).add(S.einsum('ii->i', [c]).sum()).add(S.einsum('bij,ji', [a, b]).sum()),
        xs,
      ),
      true,
    );
    for (const x of xs) x.dispose();
    assert.equal(memoryStats().liveTensors, before);
  });
});

describe('unique', () => {
  for (const dtype of ['bool', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64'] as const) {
    it(`${dtype}: values, inverse, counts`, () =>
      leakFree(() => {
        const x = nonContiguousTensor([4, 5], dtype, next);
        const xs = values(x);
        const want = [...new Set(xs)].sort((a, b) => a - b);
        const [v, inv, cnt] = S.unique(x, { returnInverse: true, returnCounts: true });
        assert.equal(v.dtype.name, dtype);
        assert.deepEqual(values(v), want);
        assert.deepEqual([...inv.shape], [4, 5]);
        assert.deepEqual(values(inv), xs.map((e) => want.indexOf(e)));
        assert.deepEqual(values(cnt), want.map((w) => xs.filter((e) => e === w).length));
        assert.deepEqual(values(S.unique(x)), want);
        const [v2, c2] = S.unique(x, { returnCounts: true });
        assert.deepEqual(values(v2), want);
        assert.equal(c2.dtype.name, 'int64');
      }));
  }
  for (const dim of [0, 1, -1]) {
    it(`dim ${dim}: unique slices in lexicographic order, inverse, counts`, () =>
      leakFree(() => {
        // few distinct values so that slices repeat
        const shape = [6, 3, 2];
        const x = nonContiguousTensor(shape, 'int64', next).remainder(2);
        const d = (dim + 3) % 3;
        const slices = Array.from({ length: shape[d] }, (_, k) => values(x.select(d, k).contiguous()));
        const key = (v: number[]) => v.join(',');
        const distinct = [...new Map(slices.map((v) => [key(v), v])).values()];
        distinct.sort((a, b) => {
          for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
          return 0;
        });
        const [v, inv, cnt] = S.unique(x, { dim, returnInverse: true, returnCounts: true });
        const got = Array.from({ length: v.shape[d] }, (_, k) => values(v.select(d, k).contiguous()));
        assert.deepEqual(got, distinct);
        const keys = distinct.map(key);
        assert.deepEqual(values(inv), slices.map((s) => keys.indexOf(key(s))));
        assert.deepEqual(values(cnt), keys.map((k) => slices.filter((s) => key(s) === k).length));
      }));
  }
  it('NaN values are each unique; empty input; options checked', () =>
    leakFree(() => {
      const [v, c] = S.unique(tensor([NaN, 1, NaN], f64), { returnCounts: true });
      assert.deepEqual(values(v), [1, NaN, NaN]);
      assert.deepEqual(c.tolist(), [1, 1, 1]);
      const [e, ei] = S.unique(tensor([], f64), { returnInverse: true });
      assert.deepEqual([...e.shape, ...ei.shape], [0, 0]);
      assert.throws(() => S.unique(tensor([1]), { returnInverse: 1 as unknown as boolean }), TypeError);
      assert.throws(() => S.unique(tensor([1]), { dim: 0.5 }), TypeError);
      assert.throws(() => S.unique(tensor([1]), { dim: 1 }), {
        message: 'Dimension out of range (expected to be in range of [-1, 0], but got 1)',
      });
    }));
});
