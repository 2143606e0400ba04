// cumsum/cumprod, sort/argsort, topk, kthvalue, median: references computed here on seeded random values with
// ties and NaN, every dtype, strided views, odd shapes and every dim; PyTorch 1.13's errors; gradcheck.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { ALL_DTYPES, assertClose, nonContiguousTensor, randomTensor, rng, roundTo, values } from './_helpers.ts';

const next = rng(0x50f7);
const f64 = { dtype: 'float64' as const };

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

/** Lines of a row-major array along `dim` of `shape`: each line's flat positions. */
function linesOf(shape: number[], dim: number): number[][] {
  const n = shape[dim];
  const inner = shape.slice(dim + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, dim).reduce((a, b) => a * b, 1);
  const out: number[][] = [];
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) out.push(Array.from({ length: n }, (_, j) => (o * n + j) * inner + i));
  }
  return out;
}

/** PyTorch's order: ascending with NaN last, or descending with NaN first; stable. */
function sortedPositions(xs: number[], descending: boolean): number[] {
  const idx = xs.map((_, i) => i);
  const key = (v: number) => (Number.isNaN(v) ? Infinity : v);
  return idx.sort((a, b) => {
    const va = xs[a], vb = xs[b];
    if (Number.isNaN(va) && Number.isNaN(vb)) return 0;
    if (Number.isNaN(va)) return descending ? -1 : 1;
    if (Number.isNaN(vb)) return descending ? 1 : -1;
    return descending ? key(vb) - key(va) : key(va) - key(vb);
  });
}

describe('cumsum / cumprod', () => {
  const shape = [3, 4, 5];
  for (const dtype of ALL_DTYPES) {
    it(`${dtype}: every dim, strided input, result dtype`, () =>
      leakFree(() => {
        const x = nonContiguousTensor(shape, dtype, next);
        const xs = values(x);
        const outDtype = x.dtype.isFloatingPoint ? dtype : 'int64';
        for (let dim = -3; dim < 3; dim++) {
          const d = (dim + 3) % 3;
          const wantSum = new Array<number>(xs.length), wantProd = new Array<number>(xs.length);
          for (const line of linesOf(shape, d)) {
            let s = 0, p = 1;
            for (const at of line) {
              s += xs[at];
              p *= xs[at];
              wantSum[at] = roundTo(s, outDtype);
              wantProd[at] = roundTo(p, outDtype);
            }
          }
          const cs = x.cumsum(dim), cp = S.cumprod(x, dim);
          assert.equal(cs.dtype.name, outDtype);
          assertClose(cs, wantSum, shape, { rtol: 0, atol: 0 }, `cumsum ${dim}`);
          if (!x.dtype.isFloatingPoint) {
            // int64 products of 5 values up to 200 stay exact in float64
            assertClose(cp, wantProd, shape, { rtol: 0, atol: 0 }, `cumprod ${dim}`);
          } else assertClose(cp, wantProd, shape, { rtol: 0, atol: 0 }, `cumprod ${dim}`);
        }
      }));
  }
  it('dtype argument, 0-d, empty, int64 beyond 2^53, float32 accumulates in double', () =>
    leakFree(() => {
      assert.deepEqual(tensor([1, 2, 3], { dtype: 'int32' }).cumsum(0, { dtype: 'float64' }).tolist(), [1, 3, 6]);
      assert.equal(tensor([1, 2], { dtype: 'int32' }).cumsum(0, { dtype: 'int32' }).dtype.name, 'int32');
      assert.equal(tensor(4.5).cumsum(0).item(), 4.5);
      assert.deepEqual([...S.cumsum(tensor([], f64).reshape([0, 3]), 1).shape], [0, 3]);
      // 2^60 + 1 is not a float64: an int64 accumulator keeps it exactly
      const big = tensor([2 ** 60, 1, 1], { dtype: 'int64' }).cumsum(0);
      assert.deepEqual(big.sub(tensor([2 ** 60], { dtype: 'int64' })).tolist(), [0, 1, 2]);
      // 1 + 2^-30 rounds to 1 in float32 at every step, but the double accumulator keeps it
      const f = tensor([1, 2 ** -25, 2 ** -25, 2 ** -25, 2 ** -25], { dtype: 'float32' }).cumsum(0);
      assert.equal(values(f)[4], Math.fround(1 + 4 * 2 ** -25));
      assert.throws(() => tensor([1, 2]).cumsum(1), {
        message: 'Dimension out of range (expected to be in range of [-1, 0], but got 1)',
      });
    }));
});

describe('sort / argsort', () => {
  for (const dtype of ALL_DTYPES) {
    it(`${dtype}: ascending and descending along every dim, ties stable`, () =>
      leakFree(() => {
        const shape = [4, 7, 3];
        const base = nonContiguousTensor(shape, dtype, next);
        // few distinct values so that ties are common
        const x = base.dtype.isFloatingPoint ? base.mul(2).to('float32').round().to(dtype) : base;
        const xs = values(x);
        for (const descending of [false, true]) {
          for (let dim = -1; dim < 3; dim++) {
            const d = (dim + 3) % 3;
            const [v, i] = x.sort(dim, descending);
            const wantV = new Array<number>(xs.length), wantI = new Array<number>(xs.length);
            for (const line of linesOf(shape, d)) {
              const order = sortedPositions(line.map((at) => xs[at]), descending);
              line.forEach((at, j) => {
                wantV[at] = xs[line[order[j]]];
                wantI[at] = order[j];
              });
            }
            assert.equal(v.dtype, x.dtype);
            assert.equal(i.dtype.name, 'int64');
            assertClose(v, wantV, shape, { rtol: 0, atol: 0 }, `values dim ${dim}`);
            assertClose(i, wantI, shape, { rtol: 0, atol: 0 }, `indices dim ${dim}`);
            assertClose(S.argsort(x, { dim, descending, stable: true }), wantI, shape, { rtol: 0, atol: 0 });
          }
        }
      }));
  }
  it('NaN and infinities, int64 keys beyond 2^53, 0-d and empty', () =>
    leakFree(() => {
      const x = tensor([NaN, 1, -Infinity, NaN, Infinity, -0, 0], f64);
      assert.deepEqual(values(x.sort()[0]), [-Infinity, -0, 0, 1, Infinity, NaN, NaN]);
      assert.deepEqual(x.sort()[1].tolist(), [2, 5, 6, 1, 4, 0, 3]);
      assert.deepEqual(x.sort(0, true)[1].tolist(), [0, 3, 4, 1, 5, 6, 2]);
      const big = tensor([2 ** 60, 2 ** 60, -(2 ** 62)], { dtype: 'int64' }).add(tensor([1, 0, 0]));
      assert.deepEqual(big.argsort().tolist(), [2, 1, 0]);
      assert.deepEqual(tensor(3).sort().map((t) => t.tolist()), [3, 0]);
      assert.deepEqual([...tensor([], f64).sort()[1].shape], [0]);
      assert.throws(() => tensor([1, 2]).sort(2), {
        message: 'Dimension out of range (expected to be in range of [-1, 0], but got 2)',
      });
    }));
});

describe('topk / kthvalue / median', () => {
  it('topk largest and smallest along dims against the sorted reference', () =>
    leakFree(() => {
      const shape = [5, 6];
      const x = randomTensor(shape, 'float32', next);
      for (const [k, dim, largest] of [[3, 1, true], [2, 0, false], [6, -1, true], [0, 1, true]] as const) {
        const [v, i] = S.topk(x, k, { dim, largest });
        const [sv, si] = x.sort(dim, largest);
        const d = (dim + 2) % 2;
        assert.deepEqual(v.tolist(), sv.narrow(d, 0, k).tolist());
        assert.deepEqual(i.tolist(), si.narrow(d, 0, k).tolist());
      }
      const n = tensor([1, NaN, 3, 2], f64);
      assert.deepEqual(values(n.topk(2)[0]), [NaN, 3]);
      assert.deepEqual(n.topk(2, { largest: false })[1].tolist(), [0, 3]);
      assert.throws(() => n.topk(5), { message: 'selected index k out of range' });
      assert.throws(() => n.topk(-1), { message: 'selected index k out of range' });
    }));
  it('kthvalue and median with keepdim, NaN, odd and even sizes, integers', () =>
    leakFree(() => {
      const shape = [4, 5];
      const x = nonContiguousTensor(shape, 'float64', next);
      const xs = values(x);
      for (const k of [1, 3, 4]) {
        const [v, i] = x.kthvalue(k, 0, true);
        assert.deepEqual([...v.shape], [1, 5]);
        const wantV: number[] = [], wantI: number[] = [];
        for (const line of linesOf(shape, 0)) {
          const order = sortedPositions(line.map((at) => xs[at]), false);
          wantV.push(xs[line[order[k - 1]]]);
          wantI.push(order[k - 1]);
        }
        assert.deepEqual(values(v), wantV);
        assert.deepEqual(values(i), wantI);
      }
      const m = tensor([[4, 1, 3, 2], [1, NaN, 2, NaN], [7, 7, 7, 7]], f64);
      const [mv, mi] = m.median(1);
      assert.deepEqual(values(mv), [2, NaN, 7]);
      // ties: the stable sort's order (Note [Ties in selections]), so the second 7 is the lower median
      assert.deepEqual(mi.tolist(), [3, 1, 1]);
      assert.deepEqual(m.median(0, true)[0].tolist(), [[4, NaN, 3, NaN]]);
      assert.ok(Number.isNaN(m.median().item() as number));
      assert.equal(tensor([5, 1, 4, 2, 3]).median().item(), 3);
      assert.equal(tensor([5, 1, 4, 2]).median().item(), 2);
      assert.deepEqual(tensor(2.5).median(0).map((t) => t.tolist()), [2.5, 0]);
      assert.throws(() => tensor([], f64).median(), { message: 'median() input tensor cannot be empty' });
      assert.throws(() => tensor([], f64).reshape([2, 0]).median(1), {
        message: 'median(): Expected reduction dim 1 to have non-zero size.',
      });
      assert.throws(() => m.kthvalue(5), { message: 'kthvalue(): selected number k out of range for dimension 1' });
      assert.throws(() => m.kthvalue(0, 0), { message: 'kthvalue(): selected number k out of range for dimension 0' });
    }));
});

describe('gradcheck of scans and selections (float64)', () => {
  const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
  const withZeros = () => {
    const t = randn([3, 5], f64);
    const z = t.mul(tensor([[1, 0, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], f64));
    t.dispose();
    return [z.detach().requiresGrad_()];
  };
  const CASES: [string, (...x: Tensor[]) => Tensor, () => Tensor[]][] = [
    ['cumsum along each dim', (a) => a.cumsum(0).add(a.cumsum(-1)).mul(a), () => [r([3, 4])]],
    ['cumprod without zeros', (a) => a.cumprod(1).add(a.cumprod(0)), () => [r([3, 5])]],
    ['cumprod with zeros (one and two per row)', (a) => a.cumprod(1), withZeros],
    [
      'sort / topk',
      (a) => a.sort(1)[0].mul(tensor([1, 2, 3, 4, 5], f64)).add(a.topk(2, 0)[0].sum()),
      () => [r([3, 5])],
    ],
    ['kthvalue / median', (a) => a.kthvalue(2, 1)[0].add(a.median(1)[0]).add(a.median()), () => [r([3, 5])]],
  ];
  for (const [name, fn, inputs] of CASES) {
    it(name, () => {
      manualSeed(17);
      const before = memoryStats().liveTensors;
      const xs = scope(inputs);
      assert.equal(gradcheck(fn, xs), true);
      for (const x of xs) x.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }
});
