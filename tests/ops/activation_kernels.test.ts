// The one-pass activation kernels (kernels_as/activation.ts, core/cpu/activations.ts): leaky_relu, elu, softplus,
// hardtanh, mish, log_sigmoid against float64 references on seeded random values over a wide range, odd shapes,
// views, and the extreme values (NaN, +-inf, +-0, large |x|) checked against PyTorch 1.13's results; their
// derivative formulas against gradcheck, against the gradients of the former decompositions, and at the branch
// points; vmap, autocast and the intra-op split path.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { autocast, enableGrad, gradcheck, memoryStats, scope, type Tensor, tensor, vmap } from '../../mod.ts';
import * as C from '../../core/ops/activation_composites.ts';
import { assertClose, restride, rng, roundTo, values } from './_helpers.ts';

const next = rng(0x5eed);
const f64 = { dtype: 'float64' as const };
const DTYPES = ['float32', 'float64', 'bfloat16'] as const;

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

const softplusRef = (x: number, b: number, th: number) => (x * b > th ? x : Math.log1p(Math.exp(x * b)) / b);
const logSigmoidRef = (x: number) => Math.min(x, 0) - Math.log1p(Math.exp(-Math.abs(x)));
const mishRef = (x: number) => x * Math.tanh(Math.log1p(Math.exp(x)));

interface Case {
  readonly name: string;
  readonly fn: (x: Tensor) => Tensor;
  readonly composite: (x: Tensor) => Tensor;
  readonly ref: (x: number) => number;
}

const CASES: Case[] = [
  {
    name: 'leakyRelu(0.013)',
    fn: (x) => S.leakyRelu(x, 0.013),
    composite: (x) => C.leakyRelu(x, 0.013),
    ref: (x) => (x > 0 ? x : x * 0.013),
  },
  {
    name: 'leakyRelu(-1.5)',
    fn: (x) => S.leakyRelu(x, { negativeSlope: -1.5 }),
    composite: (x) => C.leakyRelu(x, -1.5),
    ref: (x) => (x > 0 ? x : x * -1.5),
  },
  { name: 'elu()', fn: (x) => S.elu(x), composite: (x) => C.elu(x, 1, 1, 1), ref: (x) => (x > 0 ? x : Math.expm1(x)) },
  {
    name: 'elu(1.3, scale 0.7, inputScale 2.5)',
    fn: (x) => S.elu(x, 1.3, { scale: 0.7, inputScale: 2.5 }),
    composite: (x) => C.elu(x, 1.3, 0.7, 2.5),
    ref: (x) => (x > 0 ? 0.7 * x : Math.expm1(2.5 * x) * 1.3 * 0.7),
  },
  {
    name: 'softplus()',
    fn: (x) => S.softplus(x),
    composite: (x) => C.softplus(x, 1, 20),
    ref: (x) => softplusRef(x, 1, 20),
  },
  {
    name: 'softplus(1.7, 3)',
    fn: (x) => S.softplus(x, { beta: 1.7, threshold: 3 }),
    composite: (x) => C.softplus(x, 1.7, 3),
    ref: (x) => softplusRef(x, 1.7, 3),
  },
  {
    name: 'hardtanh()',
    fn: (x) => S.hardtanh(x),
    composite: (x) => C.hardtanh(x, -1, 1),
    ref: (x) => Math.min(1, Math.max(-1, x)),
  },
  {
    name: 'hardtanh(-0.25, 3.5)',
    fn: (x) => S.hardtanh(x, -0.25, 3.5),
    composite: (x) => C.hardtanh(x, -0.25, 3.5),
    ref: (x) => Math.min(3.5, Math.max(-0.25, x)),
  },
  { name: 'mish', fn: (x) => S.mish(x), composite: (x) => C.mish(x), ref: mishRef },
  { name: 'logSigmoid', fn: (x) => S.logSigmoid(x), composite: (x) => C.logSigmoid(x), ref: logSigmoidRef },
];

/** Seeded values spread over several orders of magnitude, both signs. */
function wideValues(n: number): number[] {
  return Array.from({ length: n }, () => {
    const u = next() * 2 - 1;
    return Math.sign(u) * Math.exp(next() * 8 - 4) * (next() < 0.1 ? 10 : 1);
  });
}

/** The inputs of one dtype: odd shapes, an empty tensor, a transposed view, a strided slice with an offset. */
function inputs(dtype: (typeof DTYPES)[number]): Tensor[] {
  const odd = tensor(wideValues(3 * 5 * 7), { dtype }).reshape([3, 5, 7]);
  const scalar = tensor(wideValues(1)[0], { dtype });
  const empty = tensor([], { dtype }).reshape([0, 3]);
  const base = tensor(wideValues(64), { dtype });
  const strided = restride(base, [3, 4], [2, 11], 5); // every other element, rows 11 apart, offset 5
  const transposed = tensor(wideValues(6 * 9), { dtype }).reshape([6, 9]).t();
  return [odd, scalar, empty, strided, transposed, tensor(wideValues(129), { dtype })];
}

const TOL = {
  float64: { rtol: 1e-14, atol: 1e-300 },
  float32: { rtol: 1e-5, atol: 1e-37 },
  bfloat16: { rtol: 8e-3, atol: 1e-30 },
} as const;

describe('activation kernels against float64 references', () => {
  for (const c of CASES) {
    for (const dtype of DTYPES) {
      it(`${c.name} ${dtype}: odd shapes, empty, views`, () =>
        leakFree(() => {
          for (const x of inputs(dtype)) {
            const got = c.fn(x);
            assert.equal(got.dtype.name, dtype);
            // the reference sees the stored (rounded) input and is rounded once to the dtype
            const expected = values(x).map((v) => roundTo(c.ref(v), dtype));
            assertClose(got, expected, x.shape, TOL[dtype], `${c.name} ${dtype}`);
          }
        }));
    }
    it(`${c.name}: the same values as the former decomposition (float64, float32)`, () =>
      leakFree(() => {
        for (const dtype of ['float64', 'float32'] as const) {
          const x = tensor(wideValues(200), { dtype });
          assertClose(c.fn(x), values(c.composite(x)), [200], TOL[dtype], c.name);
        }
      }));
  }
});

describe('activation kernels at extreme values (PyTorch 1.13 results)', () => {
  const X = [-Infinity, -1e30, -800, -100, -20.5, -0, 0, 20.5, 100, 800, 1e30, Infinity, NaN];
  // torch.nn.functional.<op>(torch.tensor(X, dtype=torch.float64)).tolist()
  // torch.nn.functional.<op>(torch.tensor(X, dtype=torch.float64)).tolist(), except elu(-0): PyTorch 1.13's
  // kernel evaluates exp(x) - 1 (+0 there, and -1.000000082740371e-10 for -1e-10); ours evaluates expm1 as
  // PyTorch's later kernels do, which keeps the sign of zero and the small values' digits.
  const EXPECTED: [string, (x: Tensor) => Tensor, number[]][] = [
    ['leakyRelu', (x) => S.leakyRelu(x), [
      -Infinity,
      -1e28,
      -8,
      -1,
      -0.20500000000000002,
      -0,
      0,
      20.5,
      100,
      800,
      1e30,
      Infinity,
      NaN,
    ]],
    ['elu', (x) => S.elu(x), [-1, -1, -1, -1, -0.9999999987498471, -0, 0, 20.5, 100, 800, 1e30, Infinity, NaN]],
    ['softplus', (x) => S.softplus(x), [
      0,
      0,
      0,
      3.720075976020836e-44,
      1.2501528656053017e-9,
      0.6931471805599453,
      0.6931471805599453,
      20.5,
      100,
      800,
      1e30,
      Infinity,
      NaN,
    ]],
    ['hardtanh', (x) => S.hardtanh(x), [-1, -1, -1, -1, -1, -0, 0, 1, 1, 1, 1, 1, NaN]],
    ['mish', (x) => S.mish(x), [
      NaN,
      -0,
      -0,
      -3.7200759760208363e-42,
      -2.5628133744908685e-8,
      -0,
      0,
      20.5,
      100,
      800,
      1e30,
      Infinity,
      NaN,
    ]],
    ['logSigmoid', (x) => S.logSigmoid(x), [
      -Infinity,
      -1e30,
      -800,
      -100,
      -20.500000001250154,
      -0.6931471805599453,
      -0.6931471805599453,
      -1.2501528656053017e-9,
      -3.720075976020836e-44,
      0,
      0,
      0,
      NaN,
    ]],
  ];
  for (const [name, fn, expected] of EXPECTED) {
    it(`${name} float64`, () =>
      leakFree(() => {
        const got = fn(tensor(X, f64)).toArray() as number[];
        for (let i = 0; i < X.length; i++) {
          const e = expected[i], a = got[i];
          const ok = Object.is(a, e) || (Number.isNaN(e) && Number.isNaN(a)) ||
            (e !== 0 && Number.isFinite(e) && Math.abs(a - e) <= 1e-15 * Math.abs(e));
          assert.ok(ok, `${name}(${X[i]}) = ${a}, expected ${e}`);
        }
      }));
    it(`${name} float32 and bfloat16: the float64 result rounded`, () =>
      leakFree(() => {
        for (const dtype of ['float32', 'bfloat16'] as const) {
          const got = fn(tensor(X, { dtype })).toArray() as number[];
          for (let i = 0; i < X.length; i++) {
            const e = roundTo(fn(tensor([roundTo(X[i], dtype)], f64)).item() as number, dtype);
            const a = got[i];
            const ok = Object.is(a, e) || (Number.isNaN(e) && Number.isNaN(a)) ||
              Math.abs(a - e) <= TOL[dtype].rtol * Math.abs(e) + 1e-40;
            assert.ok(ok, `${name}(${X[i]}) ${dtype} = ${a}, expected ${e}`);
          }
        }
      }));
  }
});

describe('activation kernels: arguments and errors', () => {
  it("PyTorch's dtype errors, and the runtime stays usable", () =>
    leakFree(() => {
      const half = tensor([1], { dtype: 'float16' });
      assert.throws(() => S.leakyRelu(half), { message: `"leaky_relu_cpu" not implemented for 'Half'` });
      assert.throws(() => S.elu(half), { message: `"elu_cpu" not implemented for 'Half'` });
      assert.throws(() => S.mish(tensor([1, 2])), { message: `"mish_cpu" not implemented for 'Long'` });
      assert.throws(() => S.logSigmoid(tensor([1], { dtype: 'int32' })), {
        message: `"log_sigmoid_cpu" not implemented for 'Int'`,
      });
      assert.throws(() => S.hardtanh(half), { message: `"clamp_scalar_cpu" not implemented for 'Half'` });
      assert.throws(() => S.leakyRelu(tensor([1], f64), 'x' as unknown as number), TypeError);
      assert.deepEqual(S.softplus(tensor([0], f64)).tolist(), [Math.LN2]);
    }));
  it('Bool scalars count as 0 / 1; hardtanh with min_val > max_val gives max_val, as clamp', () =>
    leakFree(() => {
      assert.deepEqual(S.leakyRelu(tensor([-2, 3], f64), true).tolist(), [-2, 3]);
      assert.deepEqual(S.hardtanh(tensor([-2, 0, 3, NaN], f64), 2, -1).tolist(), [-1, -1, -1, NaN]);
    }));
  it('the meta device gives the shape and dtype', () => {
    const x = S.empty([2, 3], { dtype: 'bfloat16', device: 'meta' });
    for (const y of [S.leakyRelu(x), S.elu(x), S.softplus(x), S.hardtanh(x), S.mish(x), S.logSigmoid(x)]) {
      assert.deepEqual(y.shape, [2, 3]);
      assert.equal(y.dtype.name, 'bfloat16');
      assert.equal(y.device.type, 'meta');
    }
  });
});

describe('activation kernels: derivatives', () => {
  const FNS: [string, (x: Tensor) => Tensor][] = [
    ['leakyRelu', (x) => S.leakyRelu(x, 0.3)],
    ['elu', (x) => S.elu(x, 0.7, { scale: 1.2, inputScale: 0.9 })],
    ['softplus', (x) => S.softplus(x, { beta: 1.5, threshold: 2 })],
    ['hardtanh', (x) => S.hardtanh(x, -0.5, 0.8)],
    ['mish', (x) => S.mish(x)],
    ['logSigmoid', (x) => S.logSigmoid(x)],
  ];
  for (const [name, fn] of FNS) {
    it(`${name}: gradcheck in float64, grad_fn named as PyTorch's`, () => {
      const before = memoryStats().liveTensors;
      // values away from the kinks (0, the hardtanh bounds, softplus' threshold) so finite differences hold
      const xs = wideValues(12).map((v) => (Math.abs(v) < 0.05 ? v + 0.3 : v));
      const x = tensor([xs.slice(0, 4), xs.slice(4, 8), xs.slice(8)], f64).requiresGrad_();
      assert.equal(gradcheck((a: Tensor) => fn(a.t()), [x]), true);
      scope(() => {
        const y = fn(x);
        const expected = { leakyRelu: 'LeakyRelu', elu: 'Elu', softplus: 'Softplus', hardtanh: 'Hardtanh' }[name] ??
          (name === 'mish' ? 'Mish' : 'LogSigmoid');
        assert.equal(y.gradFn!.name(), `${expected}Backward0`);
      });
      x.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }
  it('gradients equal those of the former decompositions, incl. at the branch points and large |x|', () =>
    leakFree(() => {
      // x = 0 is left out: there the decompositions' gradients follow clamp_max / abs (1 and 0 for log_sigmoid),
      // while log_sigmoid_backward gives the derivative, 1/2 (checked below)
      const xs = [...wideValues(40), 0.8, -0.5, 1, -1, 20, -20, 40, -40];
      for (const c of CASES) {
        const a = tensor(xs, f64).requiresGrad_();
        const b = tensor(xs, f64).requiresGrad_();
        const g = tensor(wideValues(xs.length), f64);
        c.fn(a).backward(g);
        c.composite(b).backward(g);
        // atol: the decomposition's expm1 gradient is (result + 1), which loses the digits of exp(x) for x << 0
        assertClose(a.grad!, values(b.grad!), [xs.length], { rtol: 1e-12, atol: 1e-12 }, c.name);
        a.grad!.dispose();
        b.grad!.dispose();
      }
    }));
  it('gradients at very large |x| stay finite where the decompositions gave NaN (inf * 0 in an unused branch)', () =>
    leakFree(() => {
      const x = tensor([700, -700], f64).requiresGrad_();
      S.elu(x, 1.3, { scale: 0.7, inputScale: 2.5 }).sum().backward();
      assert.deepEqual(x.grad!.tolist(), [0.7, 0]);
      x.grad!.dispose();
      const z = tensor([0, -0], f64).requiresGrad_();
      S.logSigmoid(z).sum().backward();
      assert.deepEqual(z.grad!.tolist(), [0.5, 0.5]); // torch: log_sigmoid_backward at 0
      z.grad!.dispose();
      const y = tensor([700, -700], f64).requiresGrad_();
      S.softplus(y, { beta: 0.5, threshold: 1000 }).sum().backward();
      assertClose(y.grad!, [1, 1 / (1 + Math.exp(350))], [2], { rtol: 1e-14, atol: 0 });
      y.grad!.dispose();
    }));
  it("hardtanh's gradient: none at exactly min_val / max_val, NaN inputs pass it (hardtanh_backward)", () =>
    leakFree(() => {
      const x = tensor([-1, -0.5, 1, 2, NaN], f64).requiresGrad_();
      S.hardtanh(x).sum().backward();
      assert.deepEqual(x.grad!.tolist(), [0, 1, 0, 0, 1]);
      x.grad!.dispose();
    }));
  it('second derivatives by gradcheck of the gradient (float64)', () =>
    leakFree(() => {
      const x = tensor(wideValues(6).map((v) => v + (v > 0 ? 0.2 : -0.2)), f64).requiresGrad_();
      for (const [, fn] of FNS.filter(([n]) => n !== 'hardtanh' && n !== 'leakyRelu')) {
        const grad = (a: Tensor) => enableGrad(() => S.grad([fn(a).sum()], [a], { createGraph: true })[0]!);
        assert.equal(gradcheck(grad, [x]), true);
      }
    }));
});

describe('activation kernels under vmap, autocast and the intra-op split', () => {
  it('vmap over a batch dim equals the direct call', () =>
    leakFree(() => {
      const x = tensor(wideValues(4 * 6), f64).reshape([4, 6]);
      for (const c of CASES) {
        const batched = vmap(c.fn, { inDims: 1 })(x) as Tensor;
        assertClose(batched, values(c.fn(x.t())), [6, 4], { rtol: 0, atol: 0 }, c.name);
      }
    }));
  it('CPU autocast leaves them alone (on neither of its lists): float32 stays float32, bfloat16 bfloat16', () =>
    leakFree(() => {
      const x = tensor(wideValues(8));
      const h = x.to(S.bfloat16);
      autocast({ deviceType: 'cpu', dtype: S.bfloat16 }, () => {
        for (const c of CASES) {
          assert.equal(c.fn(x).dtype.name, 'float32', c.name);
          assert.equal(c.fn(h).dtype.name, 'bfloat16', c.name);
        }
      });
    }));
  it('large tensors (split across the intra-op pool when it runs) match the reference', () =>
    leakFree(() => {
      const n = 300_001;
      const x = tensor(wideValues(n), f64);
      const xs = values(x);
      for (const c of [CASES[1], CASES[5], CASES[8]]) {
        const got = values(c.fn(x));
        for (let i = 0; i < n; i += 997) {
          const e = c.ref(xs[i]);
          assert.ok(Math.abs(got[i] - e) <= 1e-14 * Math.abs(e) + 1e-300, `${c.name}[${i}]`);
        }
        const strided = values(c.fn(x.narrow(0, 1, 300_000).reshape([600, 500]).t()));
        assert.equal(strided[1], got[1 + 500]);
      }
    }));
});

describe('pointwise loss kernels (smooth_l1_loss, huber_loss, binary_cross_entropy)', () => {
  const smoothRef = (d: number, beta: number) => (Math.abs(d) < beta ? 0.5 * d * d / beta : Math.abs(d) - 0.5 * beta);
  const huberRef = (d: number, delta: number) =>
    Math.abs(d) < delta ? 0.5 * d * d : delta * (Math.abs(d) - 0.5 * delta);
  const bceRef = (x: number, t: number) => (t - 1) * Math.max(Math.log1p(-x), -100) - t * Math.max(Math.log(x), -100);
  const REDUCTIONS = ['none', 'mean', 'sum'] as const;
  const reduceRef = (xs: number[], r: string) =>
    r === 'none' ? xs : [xs.reduce((a, b) => a + b, 0) / (r === 'mean' ? xs.length : 1)];
  const probs = (n: number) => Array.from({ length: n }, () => next());

  for (const dtype of DTYPES) {
    it(`${dtype}: values on odd shapes and views, each reduction, against float64 references`, () =>
      leakFree(() => {
        const tol = dtype === 'float64'
          ? { rtol: 1e-12, atol: 1e-14 }
          : dtype === 'float32'
          ? { rtol: 2e-5, atol: 1e-6 }
          : { rtol: 2e-2, atol: 1e-2 };
        const a = restride(tensor(wideValues(80), { dtype }), [3, 7], [1, 9], 4); // a transposed-like view
        const b = tensor(wideValues(21), { dtype }).reshape([3, 7]);
        // contiguous operands of an odd length: the vector loop and its scalar tail
        const c = tensor(wideValues(37), { dtype }), e = tensor(wideValues(37), { dtype });
        const cv = values(c), ev = values(e);
        for (const [beta, delta] of [[0.7, 1.6], [2.5, 0.3]]) {
          assertClose(
            S.smoothL1Loss(c, e, { reduction: 'none', beta }),
            cv.map((x, i) => roundTo(smoothRef(x - ev[i], beta), dtype)),
            [37],
            tol,
            'smooth_l1 contiguous',
          );
          assertClose(
            S.huberLoss(c, e, { reduction: 'none', delta }),
            cv.map((x, i) => roundTo(huberRef(x - ev[i], delta), dtype)),
            [37],
            tol,
            'huber contiguous',
          );
        }
        const p = restride(tensor(probs(80), { dtype }), [3, 7], [1, 9], 4);
        const q = tensor(probs(21), { dtype }).reshape([3, 7]);
        const av = values(a), bv = values(b), pv = values(p), qv = values(q);
        const d = av.map((x, i) => x - bv[i]);
        for (const reduction of REDUCTIONS) {
          const shape = reduction === 'none' ? [3, 7] : [];
          const round = (xs: number[]) => xs.map((v) => roundTo(v, dtype));
          const sl = S.smoothL1Loss(a, b, { reduction, beta: 0.7 });
          assert.equal(sl.dtype.name, dtype);
          assertClose(sl, reduceRef(round(d.map((v) => smoothRef(v, 0.7))), reduction), shape, tol, 'smooth_l1');
          const hb = S.huberLoss(a, b, { reduction, delta: 1.6 });
          assertClose(hb, reduceRef(round(d.map((v) => huberRef(v, 1.6))), reduction), shape, tol, 'huber');
          const bce = S.binaryCrossEntropy(p, q, { reduction });
          assertClose(bce, reduceRef(round(pv.map((x, i) => bceRef(x, qv[i]))), reduction), shape, tol, 'bce');
        }
      }));
  }
  it('bce: weight, the -100 log clamp at 0 and 1, the range error (NaN too), and the runtime stays usable', () =>
    leakFree(() => {
      const x = tensor([0, 1, 0.25, 0.5], f64), t = tensor([1, 0, 0.5, 1], f64);
      const w = tensor([2, 1, 0.5, 3], f64);
      const expected = [0, 1, 2, 3].map((i) => bceRef(values(x)[i], values(t)[i]) * values(w)[i]);
      assertClose(S.binaryCrossEntropy(x, t, { weight: w, reduction: 'none' }), expected, [4]);
      assert.deepEqual(S.binaryCrossEntropy(tensor([0, 1], f64), tensor([1, 0], f64), { reduction: 'none' }).tolist(), [
        100,
        100,
      ]);
      for (const bad of [1.5, -0.1, NaN]) {
        assert.throws(() => S.binaryCrossEntropy(tensor([0.5, bad], f64), tensor([1, 1], f64)), {
          message: 'all elements of input should be between 0 and 1',
        });
      }
      assert.throws(() => S.smoothL1Loss(tensor([1], f64), tensor([1], f64), { beta: -1 }), {
        message: 'smooth_l1_loss does not support negative values for beta.',
      });
      assert.throws(() => S.huberLoss(tensor([1], f64), tensor([1], f64), { delta: 0 }), {
        message: 'huber_loss does not support non-positive values for delta.',
      });
      assertClose(S.smoothL1Loss(tensor([3], f64), tensor([1], f64)), [1.5], []);
    }));
  it('mixed dtypes and broadcasting go through the decomposition, with the same results', () =>
    leakFree(() => {
      const a = tensor(wideValues(6), f64).reshape([2, 3]);
      const b32 = tensor(wideValues(3)); // float32, broadcast along dim 0
      const got = S.huberLoss(a, b32.to(S.float64).expand([2, 3]).contiguous(), { reduction: 'none' });
      const viaComposite = S.huberLoss(a, b32.to(S.float64).expand([2, 3]), { reduction: 'none' });
      assertClose(got, values(viaComposite), [2, 3], { rtol: 1e-15, atol: 0 });
      assertClose(
        S.smoothL1Loss(a, b32.to(S.float64).expand([2, 3])),
        values(C.smoothL1Loss(a, b32.to(S.float64).expand([2, 3]), 1, 1)),
        [],
      );
    }));
  it('vmap: smooth_l1 / huber through their decompositions (no fallback loop), bce through the fallback', () =>
    leakFree(() => {
      const warnings: string[] = [];
      S.setVmapFallbackWarningHandler((m: string) => warnings.push(m));
      try {
        const x = tensor([wideValues(5), wideValues(5), wideValues(5)], f64);
        const y = tensor([wideValues(5), wideValues(5), wideValues(5)], f64);
        const p = tensor([probs(5), probs(5), probs(5)], f64), q = tensor([probs(5), probs(5), probs(5)], f64);
        const batched = [
          vmap((a: Tensor, b: Tensor) => S.smoothL1Loss(a, b, { beta: 0.4 }))(x, y) as Tensor,
          vmap((a: Tensor, b: Tensor) => S.huberLoss(a, b, { reduction: 'sum' }))(x, y) as Tensor,
          vmap((a: Tensor, b: Tensor) => S.binaryCrossEntropy(a, b))(p, q) as Tensor,
        ];
        const each = [0, 1, 2].map((i) => [
          S.smoothL1Loss(x.select(0, i), y.select(0, i), { beta: 0.4 }).item() as number,
          S.huberLoss(x.select(0, i), y.select(0, i), { reduction: 'sum' }).item() as number,
          S.binaryCrossEntropy(p.select(0, i), q.select(0, i)).item() as number,
        ]);
        for (let k = 0; k < 3; k++) assertClose(batched[k], each.map((e) => e[k]), [3], { rtol: 1e-14, atol: 1e-15 });
        // only bce falls back (its warning comes once per process, so it may have been given already)
        for (const w of warnings) assert.match(w, /aten::binary_cross_entropy/);
      } finally {
        S.setVmapFallbackWarningHandler(null);
      }
    }));
  it('gradcheck in float64 for self and target, each reduction; grad_fn named as PyTorch', () => {
    const mat = (xs: number[]) => tensor([xs.slice(0, 3), xs.slice(3)], f64);
    const before = memoryStats().liveTensors;
    for (let r = 0; r < 3; r++) {
      const x = mat(wideValues(6).map((v) => v + 0.05)).requiresGrad_();
      const y = mat(wideValues(6)).requiresGrad_();
      const p = mat(probs(6).map((v) => 0.1 + 0.8 * v)).requiresGrad_();
      const q = mat(probs(6)).requiresGrad_();
      const w = tensor(probs(3), f64);
      const reduction = REDUCTIONS[r];
      assert.equal(gradcheck((a: Tensor, b: Tensor) => S.smoothL1Loss(a, b, { reduction, beta: 0.5 }), [x, y]), true);
      assert.equal(gradcheck((a: Tensor, b: Tensor) => S.smoothL1Loss(a, b, { reduction, beta: 0 }), [x, y]), true);
      assert.equal(gradcheck((a: Tensor, b: Tensor) => S.huberLoss(a, b, { reduction, delta: 0.8 }), [x, y]), true);
      assert.equal(gradcheck((a: Tensor, b: Tensor) => S.binaryCrossEntropy(a, b, { reduction }), [p, q]), true);
      assert.equal(
        gradcheck((a: Tensor, b: Tensor) => S.binaryCrossEntropy(a, b, { weight: w, reduction }), [p, q]),
        true,
      );
      scope(() => {
        assert.equal(S.smoothL1Loss(x, y).gradFn!.name(), 'SmoothL1LossBackward0');
        assert.equal(S.huberLoss(x, y).gradFn!.name(), 'HuberLossBackward0');
        assert.equal(S.binaryCrossEntropy(p, q).gradFn!.name(), 'BinaryCrossEntropyBackward0');
      });
      for (const t of [x, y, p, q, w]) t.dispose();
    }
    assert.equal(memoryStats().liveTensors, before);
  });
});
