// Activation modules: values against float64 references (float32 and float64 inputs, a non-contiguous view),
// gradients through them, PyTorch's reprs and argument errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, randn, type Tensor, tensor } from '../../mod.ts';
import {
  Dropout,
  GELU,
  Identity,
  Linear,
  LogSoftmax,
  type Module,
  Sequential,
  Sigmoid,
  SiLU,
  Softmax,
  Tanh,
} from '../../core/nn/mod.ts';

/** erf in float64: its Maclaurin series for |z| ≤ 2, erfc's continued fraction beyond. */
function erf(z: number): number {
  const a = Math.abs(z);
  if (a <= 2) {
    let term = z, sum = z;
    for (let n = 1; n < 60; n++) {
      term *= -z * z / n;
      sum += term / (2 * n + 1);
    }
    return 2 / Math.sqrt(Math.PI) * sum;
  }
  let f = a;
  for (let n = 200; n >= 1; n--) f = a + (n / 2) / f;
  return Math.sign(z) * (1 - Math.exp(-a * a) / (Math.sqrt(Math.PI) * f));
}

const REFERENCES: Array<[string, () => Module, (x: number) => number]> = [
  ['Tanh', () => new Tanh(), Math.tanh],
  ['Sigmoid', () => new Sigmoid(), (x) => 1 / (1 + Math.exp(-x))],
  ['SiLU', () => new SiLU(), (x) => x / (1 + Math.exp(-x))],
  ['GELU', () => new GELU(), (x) => 0.5 * x * (1 + erf(x / Math.SQRT2))],
  [
    "GELU({ approximate: 'tanh' })",
    () => new GELU({ approximate: 'tanh' }),
    (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3))),
  ],
  ['Identity', () => new Identity(54, { unused: true }), (x) => x],
];

function assertNear(actual: readonly number[], expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => {
    if (!(Math.abs(a - expected[i]) <= tol * (1 + Math.abs(expected[i])))) {
      assert.fail(`${what}[${i}]: got ${a}, expected ${expected[i]}`);
    }
  });
}

describe('elementwise activation modules', () => {
  for (const [name, make, reference] of REFERENCES) {
    for (const dtype of ['float32', 'float64'] as const) {
      it(`${name} on ${dtype}, contiguous and transposed`, () => {
        manualSeed(1);
        const base = randn([5, 3], { dtype }).mul(3);
        const view = base.t();
        const module = make();
        for (const x of [base, view]) {
          const y = module.call(x);
          assert.deepEqual(y.shape, x.shape);
          assert.equal(y.dtype, x.dtype);
          const tol = dtype === 'float32' ? 2e-6 : 1e-12;
          assertNear(y.toArray() as number[], (x.toArray() as number[]).map(reference), tol, name);
          if (y !== x) y.dispose();
        }
        assert.equal(module.parameters().length, 0);
        base.dispose();
      });
    }
  }

  it('gradients flow through (d tanh = 1 - tanh², d sigmoid = s(1 - s))', () => {
    const x = tensor([-1.5, 0.25, 2], { dtype: 'float64' }).requiresGrad_();
    const t = new Tanh().call(x);
    const s = new Sigmoid().call(x);
    t.add(s).sum().backward();
    const expected = (x.toArray() as number[]).map((v) => {
      const sig = 1 / (1 + Math.exp(-v));
      return 1 - Math.tanh(v) ** 2 + sig * (1 - sig);
    });
    assertNear(x.grad!.toArray() as number[], expected, 1e-12, 'grad');
  });

  it("reprs and errors are PyTorch's", () => {
    assert.equal(String(new Tanh()), 'Tanh()');
    assert.equal(String(new GELU()), "GELU(approximate='none')");
    assert.equal(String(new GELU({ approximate: 'tanh' })), "GELU(approximate='tanh')");
    assert.equal(String(new Softmax(1)), 'Softmax(dim=1)');
    assert.equal(String(new LogSoftmax()), 'LogSoftmax(dim=None)');
    assert.throws(() => new GELU({ approximate: 'fast' as never }), /approximate argument must be either none or tanh/);
    assert.throws(() => new GELU({ approximate: 1 as never }), /argument 'approximate' must be str, not int/);
    assert.throws(() => new Softmax(0.5), /argument 'dim' must be int, not float/);
  });
});

describe('Softmax and LogSoftmax modules', () => {
  function softmaxRows(rows: number[][]): number[][] {
    return rows.map((r) => {
      const m = Math.max(...r);
      const e = r.map((v) => Math.exp(v - m));
      const s = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / s);
    });
  }

  it('normalise along dim (negative dims too), float32 and float64', () => {
    for (const dtype of ['float32', 'float64'] as const) {
      manualSeed(2);
      const x = randn([4, 6], { dtype }).mul(4);
      const rows = x.tolist() as number[][];
      const columns = rows[0].map((_, j) => rows.map((r) => r[j]));
      const tol = dtype === 'float32' ? 3e-6 : 1e-12;
      const byRow = softmaxRows(rows);
      const byColumn = softmaxRows(columns);
      const y1 = new Softmax(-1).call(x);
      assertNear(y1.toArray() as number[], byRow.flat(), tol, 'softmax dim -1');
      const y0 = new Softmax(0).call(x);
      const y0t = y0.t();
      assertNear(y0t.contiguous().toArray() as number[], byColumn.flat(), tol, 'softmax dim 0');
      const l1 = new LogSoftmax(1).call(x);
      assertNear(l1.toArray() as number[], byRow.flat().map(Math.log), tol, 'log_softmax dim 1');
      for (const t of [x, y1, y0, l1]) t.dispose();
    }
  });

  it("without dim, PyTorch's legacy implicit dim (0 for 0-, 1- and 3-d input, else 1) with its warning", () => {
    const warn = console.warn;
    const warnings: string[] = [];
    console.warn = (message: string) => warnings.push(message);
    try {
      const x2 = tensor([[1, 2], [3, 5]], { dtype: 'float64' });
      const y2 = new Softmax().call(x2);
      assertNear(y2.toArray() as number[], softmaxRows([[1, 2], [3, 5]]).flat(), 1e-12, 'implicit dim 1');
      const x3 = tensor([[[0]], [[Math.log(3)]]], { dtype: 'float64' });
      const y3 = new LogSoftmax().call(x3);
      assertNear(y3.toArray() as number[], [Math.log(0.25), Math.log(0.75)], 1e-12, 'implicit dim 0');
    } finally {
      console.warn = warn;
    }
    assert.equal(warnings.length, 2);
    assert.match(warnings[0], /Implicit dimension choice for softmax has been deprecated/);
    assert.match(warnings[1], /Implicit dimension choice for log_softmax has been deprecated/);
  });
});

describe('train() and eval() reach every module', () => {
  it('eval() turns off a Dropout nested among activations; train() turns it back on', () => {
    manualSeed(3);
    const model = new Sequential(new Linear(8, 8), new GELU(), new Dropout(0.5), new Tanh());
    const x = randn([4, 8]);
    model.eval();
    assert.ok(model.modules().every((m) => !m.training));
    const a = model.call(x), b = model.call(x);
    assert.deepEqual(a.toArray(), b.toArray());
    model.train();
    assert.ok(model.modules().every((m) => m.training));
    const c = model.call(x);
    assert.notDeepEqual(c.toArray(), a.toArray());
    for (const t of [x, a, b, c] as Tensor[]) t.dispose();
    model.dispose();
  });
});
