// Composite activations, losses and predicates (core/ops/activation_composites.ts) against float64 references
// computed here, on seeded random values and non-contiguous views, with PyTorch 1.13's errors; their gradients by
// gradcheck.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { assertClose, nonContiguousTensor, randomTensor, rng, tolerance, values } from './_helpers.ts';

const next = rng(0xac7);
const f64 = { dtype: 'float64' as const };

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

const softplusRef = (x: number, b = 1, th = 20) => (x * b > th ? x : Math.log1p(Math.exp(x * b)) / b);
const SELU_A = 1.6732632423543772848170429916717, SELU_S = 1.0507009873554804934193349852946;
const UNARY: [string, (x: Tensor) => Tensor, (x: number) => number][] = [
  ['leakyRelu', (x) => S.leakyRelu(x), (x) => (x > 0 ? x : 0.01 * x)],
  ['leakyRelu slope 0.2', (x) => S.leakyRelu(x, 0.2), (x) => (x > 0 ? x : 0.2 * x)],
  ['elu', (x) => S.elu(x), (x) => (x > 0 ? x : Math.expm1(x))],
  [
    'elu alpha/scale/inputScale',
    (x) => S.elu(x, 0.5, { scale: 2, inputScale: 1.5 }),
    (x) => (x > 0 ? 2 * x : Math.expm1(1.5 * x) * 0.5 * 2),
  ],
  ['selu', (x) => S.selu(x), (x) => (x > 0 ? SELU_S * x : SELU_S * SELU_A * Math.expm1(x))],
  ['softplus', (x) => S.softplus(x), (x) => softplusRef(x)],
  ['softplus beta 2 threshold 1', (x) => S.softplus(x, 2, 1), (x) => softplusRef(x, 2, 1)],
  ['mish', (x) => S.mish(x), (x) => x * Math.tanh(softplusRef(x))],
  ['hardtanh', (x) => S.hardtanh(x), (x) => Math.min(1, Math.max(-1, x))],
  ['hardtanh -0.5, 2', (x) => S.hardtanh(x, -0.5, 2), (x) => Math.min(2, Math.max(-0.5, x))],
  ['logSigmoid', (x) => S.logSigmoid(x), (x) => -Math.log1p(Math.exp(-x))],
];

describe('activations against float64 references', () => {
  for (const [name, fn, ref] of UNARY) {
    for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
      if (name === 'mish' && dtype === 'bfloat16') continue;
      it(`${name} ${dtype}, contiguous and strided`, () =>
        leakFree(() => {
          for (const x of [randomTensor([3, 5], dtype, next), nonContiguousTensor([4, 3], dtype, next)]) {
            const got = fn(x);
            assert.equal(got.dtype.name, dtype);
            const tol = dtype === 'float32' ? { rtol: 1e-5, atol: 1e-6 } : tolerance(dtype);
            assertClose(got, values(x).map(ref), x.shape, dtype === 'bfloat16' ? { rtol: 2e-2, atol: 2e-2 } : tol);
          }
        }));
    }
  }
  it('softplus and logSigmoid stay finite at large |x|', () =>
    leakFree(() => {
      const x = tensor([-800, -30, 30, 800], f64);
      assertClose(S.softplus(x), [0, Math.log1p(Math.exp(-30)), 30, 800], [4]);
      assertClose(S.logSigmoid(x), [-800, -30 - Math.log1p(Math.exp(-30)), -Math.log1p(Math.exp(-30)), 0], [4]);
    }));
  it('hardtanh passes no gradient at exactly min_val / max_val, as hardtanh_backward', () => {
    const x = tensor([-1, -0.5, 1, 2], f64).requiresGrad_();
    const y = S.hardtanh(x);
    assert.deepEqual(y.tolist(), [-1, -0.5, 1, 1]);
    y.sum().backward();
    assert.deepEqual(x.grad!.tolist(), [0, 1, 0, 0]);
    x.grad!.dispose();
    x.dispose();
  });
  it('hardtanh keeps integer dtypes with truncated bounds', () =>
    leakFree(() => {
      const x = tensor([-5, -1, 0, 2, 7]);
      const got = S.hardtanh(x, -1.7, 2.9);
      assert.equal(got.dtype.name, 'int64');
      assert.deepEqual(got.tolist(), [-1, -1, 0, 2, 2]);
    }));
  it("PyTorch's dtype errors", () =>
    leakFree(() => {
      const i = tensor([1, 2]);
      assert.throws(() => S.leakyRelu(i), { message: `"leaky_relu_cpu" not implemented for 'Long'` });
      assert.throws(() => S.elu(i), { message: `"elu_cpu" not implemented for 'Long'` });
      assert.throws(() => S.softplus(tensor([1], { dtype: 'float16' })), {
        message: `"softplus_cpu" not implemented for 'Half'`,
      });
      assert.throws(() => S.logSigmoid(i), { message: `"log_sigmoid_cpu" not implemented for 'Long'` });
      assert.throws(() => S.hardtanh(tensor([true])), { message: 'Bool inputs not supported for hardtanh' });
      assert.throws(() => S.hardtanh(tensor([1], { dtype: 'uint8' }), -1, 1), {
        message: 'cannot do hardtanh on an unsigned type with negative limits',
      });
      // the runtime stays usable
      assert.deepEqual(S.leakyRelu(tensor([-1, 1], f64)).tolist(), [-0.01, 1]);
    }));
});

const reduceRef = (xs: number[], r: string) =>
  r === 'none' ? xs : r === 'sum' ? [xs.reduce((a, b) => a + b, 0)] : [xs.reduce((a, b) => a + b, 0) / xs.length];

describe('losses against float64 references', () => {
  const LOSSES: [
    string,
    (x: Tensor, t: Tensor, r: 'none' | 'mean' | 'sum') => Tensor,
    (x: number, t: number) => number,
  ][] = [
    ['l1Loss', (x, t, r) => S.l1Loss(x, t, { reduction: r }), (x, t) => Math.abs(x - t)],
    [
      'smoothL1Loss beta 0.7',
      (x, t, r) => S.smoothL1Loss(x, t, { reduction: r, beta: 0.7 }),
      (x, t) => (Math.abs(x - t) < 0.7 ? (0.5 * (x - t) ** 2) / 0.7 : Math.abs(x - t) - 0.35),
    ],
    [
      'smoothL1Loss beta 0 (L1)',
      (x, t, r) => S.smoothL1Loss(x, t, { reduction: r, beta: 0 }),
      (x, t) => Math.abs(x - t),
    ],
    [
      'huberLoss delta 1.3',
      (x, t, r) => S.huberLoss(x, t, { reduction: r, delta: 1.3 }),
      (x, t) => (Math.abs(x - t) < 1.3 ? 0.5 * (x - t) ** 2 : 1.3 * (Math.abs(x - t) - 0.65)),
    ],
    [
      'klDiv',
      (x, t, r) => S.klDiv(x, t.abs(), { reduction: r }),
      (x, t) => (t === 0 ? 0 : Math.abs(t) * (Math.log(Math.abs(t)) - x)),
    ],
    [
      'klDiv logTarget',
      (x, t, r) => S.klDiv(x, t, { reduction: r, logTarget: true }),
      (x, t) => Math.exp(t) * (t - x),
    ],
    [
      'binaryCrossEntropyWithLogits',
      (x, t, r) => S.binaryCrossEntropyWithLogits(x, t.sigmoid(), { reduction: r }),
      (x, t) => {
        const p = 1 / (1 + Math.exp(-t));
        return -(p * Math.log(1 / (1 + Math.exp(-x))) + (1 - p) * Math.log(1 - 1 / (1 + Math.exp(-x))));
      },
    ],
    [
      'binaryCrossEntropy',
      (x, t, r) => S.binaryCrossEntropy(x.sigmoid(), t.sigmoid(), { reduction: r }),
      (x, t) => {
        const p = 1 / (1 + Math.exp(-x)), q = 1 / (1 + Math.exp(-t));
        return -(q * Math.log(p) + (1 - q) * Math.log1p(-p));
      },
    ],
  ];
  for (const [name, fn, ref] of LOSSES) {
    it(`${name}: none, mean, sum on strided float64 inputs`, () =>
      leakFree(() => {
        const x = nonContiguousTensor([3, 4], 'float64', next), t = randomTensor([3, 4], 'float64', next);
        const xs = values(x), ts = values(t);
        const elem = xs.map((v, i) => ref(v, ts[i]));
        for (const r of ['none', 'mean', 'sum'] as const) {
          assertClose(fn(x, t, r), reduceRef(elem, r), r === 'none' ? [3, 4] : [], { rtol: 1e-10, atol: 1e-12 }, r);
        }
      }));
  }
  it('BCE weights, pos_weight and the -100 log clamp', () =>
    leakFree(() => {
      const p = tensor([0, 1, 0.25], f64), t = tensor([1, 0, 1], f64), w = tensor([1, 2, 3], f64);
      assertClose(S.binaryCrossEntropy(p, t, w, { reduction: 'none' }), [100, 200, -3 * Math.log(0.25)], [3]);
      const x = tensor([0.3, -1.2, 2], f64), pw = tensor([2, 0.5, 1], f64);
      const sp = (v: number) => Math.log1p(Math.exp(-v));
      const want = [0, 1, 2].map((i) => {
        const xi = [0.3, -1.2, 2][i], ti = [1, 0, 1][i], pwi = [2, 0.5, 1][i];
        return (1 - ti) * xi + (1 + (pwi - 1) * ti) * sp(xi);
      });
      assertClose(S.binaryCrossEntropyWithLogits(x, t, { posWeight: pw, reduction: 'none' }), want, [3]);
      assertClose(S.binaryCrossEntropyWithLogits(tensor([800, -800], f64), tensor([0, 1], f64)), [800], []);
    }));
  it('cosineSimilarity with broadcasting, dims and eps', () =>
    leakFree(() => {
      const a = randomTensor([3, 4], 'float64', next), b = randomTensor([4], 'float64', next);
      const av = values(a), bv = values(b);
      const want = [0, 1, 2].map((i) => {
        let d = 0, na = 0, nb = 0;
        for (let j = 0; j < 4; j++) {
          d += av[i * 4 + j] * bv[j];
          na += av[i * 4 + j] ** 2;
          nb += bv[j] ** 2;
        }
        return d / Math.sqrt(na * nb);
      });
      assertClose(S.cosineSimilarity(a, b), want, [3]);
      assertClose(S.cosineSimilarity(a, b.expand([3, 4]), { dim: -1 }), want, [3]);
      assertClose(S.cosineSimilarity(tensor([[0, 0]], f64), tensor([[1, 1]], f64)), [0], [1]);
      assert.throws(() => S.cosineSimilarity(tensor([[1, 2]]), tensor([[1, 2]])), {
        message: 'expected common dtype to be floating point, yet common dtype is Long',
      });
    }));
  it("PyTorch's loss errors", () =>
    leakFree(() => {
      const x = tensor([0.5, 0.2]);
      assert.throws(() => S.smoothL1Loss(x, x, { beta: -1 }), {
        message: 'smooth_l1_loss does not support negative values for beta.',
      });
      assert.throws(() => S.huberLoss(x, x, { delta: 0 }), {
        message: 'huber_loss does not support non-positive values for delta.',
      });
      assert.throws(() => S.binaryCrossEntropy(tensor([1.5]), tensor([1])), {
        message: 'all elements of input should be between 0 and 1',
      });
      assert.throws(() => S.binaryCrossEntropy(tensor([NaN]), tensor([1])), {
        message: 'all elements of input should be between 0 and 1',
      });
      assert.throws(() => S.binaryCrossEntropy(x, tensor([1, 0, 1])), {
        name: 'ValueError',
        message:
          'Using a target size (torch.Size([3])) that is different to the input size (torch.Size([2])) is deprecated. Please ensure they have the same size.',
      });
      assert.throws(() => S.l1Loss(x, x, { reduction: 'avg' as 'mean' }));
    }));
});

describe('predicates', () => {
  it('isinf / isfinite over floats and integers', () =>
    leakFree(() => {
      const x = tensor([1, Infinity, -Infinity, NaN, -0], f64);
      assert.deepEqual(x.isinf().tolist(), [false, true, true, false, false]);
      assert.deepEqual(x.isfinite().tolist(), [true, false, false, false, true]);
      const h = tensor([Infinity, 1], { dtype: 'float16' });
      assert.deepEqual(S.isinf(h).tolist(), [true, false]);
      assert.deepEqual(S.isinf(tensor([1, 2])).tolist(), [false, false]);
      assert.deepEqual(S.isfinite(tensor([[true]])).tolist(), [[true]]);
    }));
  it('isclose: tolerances, equal_nan, infinities, integers, broadcasting', () =>
    leakFree(() => {
      const a = tensor([1, 1, NaN, Infinity, Infinity, 1e-9, 100], f64);
      const b = tensor([1 + 1e-6, 1.1, NaN, Infinity, -Infinity, 0, 100.0009], f64);
      assert.deepEqual(S.isclose(a, b).tolist(), [true, false, false, true, false, true, true]);
      assert.deepEqual(S.isclose(a, b, { equalNan: true }).tolist(), [true, false, true, true, false, true, true]);
      assert.deepEqual(S.isclose(a, b, 0, 0).tolist(), [false, false, false, true, false, false, false]);
      assert.deepEqual(S.isclose(tensor([1, 2, 3]), tensor([1, 3, 5]), { atol: 1 }).tolist(), [true, true, false]);
      assert.deepEqual(S.isclose(tensor([[1], [2]], f64), tensor([1, 2], f64)).tolist(), [[true, false], [
        false,
        true,
      ]]);
      assert.equal(S.allclose(a, a), false);
      assert.equal(S.allclose(a, a, { equalNan: true }), true);
      assert.equal(tensor([1, 2], f64).allclose(tensor([1, 2 + 1e-7], f64)), true);
      assert.throws(() => S.isclose(tensor([1.5]), tensor([1.5], f64)), { message: 'Float did not match Double' });
      assert.throws(() => S.isclose(a, b, -1), { message: 'rtol must be greater than or equal to zero, but got -1' });
      assert.throws(() => S.isclose(a, b, 0, -0.5), {
        message: 'atol must be greater than or equal to zero, but got -0.5',
      });
    }));
  it('equal: shape, values, NaN, dtype error', () =>
    leakFree(() => {
      assert.equal(S.equal(tensor([1, 2]), tensor([1, 2])), true);
      assert.equal(tensor([[1, 2]]).equal(tensor([1, 2])), false);
      assert.equal(S.equal(tensor([NaN]), tensor([NaN])), false);
      assert.equal(S.equal(tensor([], f64), tensor([], f64)), true);
      assert.throws(() => S.equal(tensor([1]), tensor([1.5])), {
        message: "Expected object of scalar type Long but got scalar type Float for argument 'other'",
      });
    }));
});

describe('gradcheck of the composites (float64)', () => {
  const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
  const CASES: [string, (...x: Tensor[]) => Tensor, () => Tensor[]][] = [
    ['leakyRelu/elu/selu', (a) => S.leakyRelu(a, 0.3).add(S.elu(a, 0.7)).add(S.selu(a)), () => [r([3, 5])]],
    ['softplus/mish/logSigmoid', (a) => S.softplus(a, 1.5, 2).add(S.mish(a)).add(S.logSigmoid(a)), () => [r([7])]],
    ['hardtanh', (a) => S.hardtanh(a, -0.5, 0.8), () => [r([2, 3])]],
    [
      'bce / bce with logits',
      (x, t) =>
        S.binaryCrossEntropy(x.sigmoid(), t.sigmoid()).add(
          S.binaryCrossEntropyWithLogits(x, t.sigmoid(), { posWeight: tensor([0.5, 2, 1], f64) }),
        ),
      () => [r([2, 3]), r([2, 3])],
    ],
    [
      'l1/smooth l1/huber/kl_div',
      (x, t) =>
        S.l1Loss(x, t).add(S.smoothL1Loss(x, t, { beta: 0.5 })).add(S.huberLoss(x, t, { reduction: 'sum' }))
          .add(S.klDiv(x, t.exp(), { reduction: 'sum' })),
      () => [r([3, 3]), r([3, 3])],
    ],
    ['cosineSimilarity', (a, b) => S.cosineSimilarity(a, b, 0), () => [r([3, 2]), r([3, 2])]],
  ];
  for (const [name, fn, inputs] of CASES) {
    it(name, () => {
      manualSeed(11);
      const before = memoryStats().liveTensors;
      const xs = scope(inputs);
      assert.equal(gradcheck(fn, xs), true);
      for (const x of xs) x.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }
});
