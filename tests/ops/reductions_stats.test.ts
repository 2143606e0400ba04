// all/any, var/std (correction, dims, keepdim) and var_mean/std_mean, logsumexp, vector norms: float64
// references computed here on seeded random values and strided views, PyTorch 1.13's errors, and gradcheck.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { assertClose, nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

const next = rng(0x5eed);
const f64 = { dtype: 'float64' as const };

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

/** Reduces a [2, 3, 4] row-major array over `dims` with `f` (slices in row-major order of the kept dims). */
function reduceRef(xs: number[], shape: number[], dims: number[], f: (slice: number[]) => number): number[] {
  const kept = shape.map((_, i) => i).filter((i) => !dims.includes(i));
  const groups = new Map<string, number[]>();
  const idx = new Array(shape.length).fill(0);
  for (let flat = 0; flat < xs.length; flat++) {
    let r = flat;
    for (let d = shape.length - 1; d >= 0; d--) {
      idx[d] = r % shape[d];
      r = Math.floor(r / shape[d]);
    }
    const key = kept.map((d) => idx[d]).join(',');
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(xs[flat]);
  }
  return [...groups.values()].map(f);
}
const mean = (s: number[]) => s.reduce((a, b) => a + b, 0) / s.length;
const varOf = (c: number) => (s: number[]) => {
  const m = mean(s);
  return s.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(s.length - c, 0);
};
const lse = (s: number[]) => {
  const m = Math.max(...s);
  return m + Math.log(s.reduce((a, b) => a + Math.exp(b - m), 0));
};
const outShape = (shape: number[], dims: number[], keepdim: boolean) =>
  keepdim ? shape.map((s, i) => (dims.includes(i) ? 1 : s)) : shape.filter((_, i) => !dims.includes(i));

describe('var / std / var_mean / std_mean', () => {
  const shape = [2, 3, 4];
  for (const dims of [[], [1], [0, 2], [-1]]) {
    for (const correction of [null, 0, 2]) {
      for (const keepdim of [false, true]) {
        it(`dims ${JSON.stringify(dims)} correction ${correction} keepdim ${keepdim}`, () =>
          leakFree(() => {
            const x = nonContiguousTensor(shape, 'float64', next);
            const wrapped = (dims.length === 0 ? [0, 1, 2] : dims.map((d) => (d + 3) % 3)).sort();
            const c = correction ?? 1;
            const want = reduceRef(values(x), shape, wrapped, varOf(c));
            const os = outShape(shape, wrapped, keepdim);
            const opts = { correction, keepdim };
            assertClose(x.var(dims, opts), want, os, { rtol: 1e-12, atol: 1e-13 });
            assertClose(S.std(x, dims, opts), want.map(Math.sqrt), os, { rtol: 1e-12, atol: 1e-13 });
            const [v, m] = S.varMean(x, dims, opts);
            assertClose(v, want, os, { rtol: 1e-12, atol: 1e-13 });
            assertClose(m, reduceRef(values(x), shape, wrapped, mean), os, { rtol: 1e-12, atol: 1e-13 });
            const [sd] = S.stdMean(x, dims, opts);
            assertClose(sd, want.map(Math.sqrt), os, { rtol: 1e-12, atol: 1e-13 });
          }));
      }
    }
  }
  it('float32 and bfloat16 keep their dtype; N <= correction gives inf or NaN', () =>
    leakFree(() => {
      const x = randomTensor([5, 7], 'float32', next);
      const got = S.variance(x, [1]);
      assert.equal(got.dtype.name, 'float32');
      assertClose(got, reduceRef(values(x), [5, 7], [1], varOf(1)), [5], { rtol: 1e-5, atol: 1e-6 });
      assert.equal(S.variance(tensor([1, 2], { dtype: 'bfloat16' })).dtype.name, 'bfloat16');
      assert.deepEqual(tensor([3], f64).var().tolist(), NaN);
      assert.deepEqual(tensor([3, 4], f64).var(null, { correction: 2 }).tolist(), Infinity);
    }));
  it('the unbiased spelling (var.dim / var / std.dim / std)', () =>
    leakFree(() => {
      const x = nonContiguousTensor([3, 4], 'float64', next);
      const xs = values(x);
      const tol = { rtol: 1e-12, atol: 1e-13 };
      assertClose(x.var(1, false), reduceRef(xs, [3, 4], [1], varOf(0)), [3], tol);
      assertClose(x.var(1, true, true), reduceRef(xs, [3, 4], [1], varOf(1)), [3, 1], tol);
      assertClose(x.var(false), [varOf(0)(xs)], [], tol);
      assertClose(x.var({ unbiased: false }), [varOf(0)(xs)], [], tol);
      assertClose(S.std(x, 0, { unbiased: false }), reduceRef(xs, [3, 4], [0], varOf(0)).map(Math.sqrt), [4], tol);
      assertClose(x.std(true), [Math.sqrt(varOf(1)(xs))], [], tol);
    }));
  it("PyTorch's errors", () =>
    leakFree(() => {
      assert.throws(() => tensor([1, 2]).norm(), {
        message: 'norm(): input dtype should be either floating point or complex. Got Long instead.',
      });
      assert.throws(() => tensor([1, 2]).var(), {
        message: 'std and var only support floating point and complex dtypes',
      });
      assert.throws(() => S.std(tensor([1, 2])), {
        message: 'std and var only support floating point and complex dtypes',
      });
      assert.throws(() => S.varMean(tensor([1, 2])), {
        message: 'var_mean only support floating point and complex dtypes',
      });
      assert.throws(() => tensor([1.5]).var(1), {
        message: 'Dimension out of range (expected to be in range of [-1, 0], but got 1)',
      });
      assert.throws(() => tensor([[1.5]]).var([0, -2]), {
        message: 'dim 0 appears multiple times in the list of dims',
      });
    }));
});

describe('all / any', () => {
  it('over everything and along dims, every dtype, keepdim, empty', () =>
    leakFree(() => {
      for (const dtype of ['bool', 'uint8', 'int32', 'int64', 'float16', 'float32', 'float64'] as const) {
        const x = tensor([[1, 0, 2], [3, 4, 5]], { dtype: dtype === 'bool' ? undefined : dtype }).ne(
          dtype === 'bool' ? 0 : 99,
        );
        const t = dtype === 'bool' ? tensor([[true, false, true], [true, true, true]]) : tensor(
          [[1, 0, 2], [3, 4, 5]],
          { dtype },
        );
        x.dispose();
        const out = dtype === 'uint8' ? 'uint8' : 'bool';
        const v = (r: Tensor) => values(r);
        assert.equal(t.all().dtype.name, out);
        assert.deepEqual(v(t.all()), [0]);
        assert.deepEqual(v(t.any()), [1]);
        assert.deepEqual(v(t.all(1)), [0, 1]);
        assert.deepEqual(v(t.all(0)), [1, 0, 1]);
        assert.deepEqual(v(t.any(0, true)), [1, 1, 1]);
        assert.deepEqual([...t.any(0, true).shape], [1, 3]);
      }
      assert.equal(tensor([NaN]).any().item(), true);
      assert.equal(tensor([], f64).all().item(), true);
      assert.equal(tensor([], f64).any().item(), false);
      assert.deepEqual(S.all(tensor([[0, 0], [1, 1]]).t(), -1).tolist(), [false, false]);
    }));
});

describe('logsumexp and norms', () => {
  it('logsumexp over dims with keepdim, stable at large values, -inf and inf', () =>
    leakFree(() => {
      const shape = [2, 3, 4];
      const x = nonContiguousTensor(shape, 'float64', next);
      for (const [dims, keepdim] of [[[1], false], [[0, 2], true], [[-1], false]] as [number[], boolean][]) {
        const w = dims.map((d) => (d + 3) % 3).sort();
        assertClose(x.logsumexp(dims, keepdim), reduceRef(values(x), shape, w, lse), outShape(shape, w, keepdim));
      }
      assertClose(S.logsumexp(tensor([1000, 1000], f64), 0), [1000 + Math.LN2], []);
      assertClose(S.logsumexp(tensor([-Infinity, -Infinity], f64), 0), [-Infinity], []);
      assertClose(S.logsumexp(tensor([Infinity, 1], f64), 0), [Infinity], []);
      const ints = S.logsumexp(tensor([0, 0]), 0);
      assert.equal(ints.dtype.name, 'float32');
      assertClose(ints, [Math.LN2], [], { rtol: 1e-6, atol: 1e-7 });
    }));
  it('linalgVectorNorm for ord 2, 1, 3, 0.5, 0, inf, -inf; norm', () =>
    leakFree(() => {
      const shape = [3, 5];
      const x = randomTensor(shape, 'float64', next);
      const xs = values(x);
      const pn = (p: number) => (s: number[]) => s.reduce((a, b) => a + Math.abs(b) ** p, 0) ** (1 / p);
      for (const ord of [2, 1, 3, 0.5]) {
        assertClose(S.linalgVectorNorm(x, ord, [1]), reduceRef(xs, shape, [1], pn(ord)), [3], {
          rtol: 1e-12,
          atol: 1e-12,
        });
      }
      assertClose(S.linalgVectorNorm(x), [pn(2)(xs)], []);
      assertClose(
        S.linalgVectorNorm(x, Infinity, [0], true),
        reduceRef(xs, shape, [0], (s) => Math.max(...s.map(Math.abs))),
        [1, 5],
      );
      assertClose(S.linalgVectorNorm(x, -Infinity), [Math.min(...xs.map(Math.abs))], []);
      assertClose(S.linalgVectorNorm(tensor([0, 2, 0, -1], f64), 0), [2], []);
      assertClose(x.norm(), [pn(2)(xs)], []);
      assertClose(x.norm(1, [0]), reduceRef(xs, shape, [0], pn(1)), [5]);
      assert.equal(S.linalgVectorNorm(x, 2, null, false, { dtype: 'float32' }).dtype.name, 'float32');
      assert.throws(() => S.linalgVectorNorm(tensor([1, 2])), {
        message: 'linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long',
      });
      assert.throws(() => S.linalgVectorNorm(tensor([], f64), Infinity), {
        message:
          'linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an identity',
      });
    }));
});

describe('gradcheck of the statistics (float64)', () => {
  const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
  const CASES: [string, (...x: Tensor[]) => Tensor, () => Tensor[]][] = [
    [
      'var/std with correction and dims',
      (a) => a.var([1]).add(S.std(a, [0, 1], { correction: 0, keepdim: true }).sum()),
      () => [r([3, 5])],
    ],
    ['var_mean/std_mean', (a) => S.varMean(a, 1)[0].add(S.varMean(a, 1)[1]).add(S.stdMean(a, 1)[0]), () => [r([2, 5])]],
    ['logsumexp', (a) => a.logsumexp([1]).add(a.logsumexp([0, 1], true).sum()), () => [r([3, 4])]],
    [
      'vector norms',
      (a) => S.linalgVectorNorm(a, 3, [1]).add(a.norm(2, [1])).add(S.linalgVectorNorm(a, Infinity, [1])),
      () => [r([2, 5])],
    ],
  ];
  for (const [name, fn, inputs] of CASES) {
    it(name, () => {
      manualSeed(13);
      const before = memoryStats().liveTensors;
      const xs = scope(inputs);
      assert.equal(gradcheck(fn, xs), true);
      for (const x of xs) x.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }
});
