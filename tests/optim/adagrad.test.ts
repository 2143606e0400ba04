// Adagrad against PyTorch 1.13's update rule: four steps from fixed gradients (large, then small), with the
// float32 parameter values. torch is not installed on the build machine, so the expected values come from a
// float32 transcription of torch/optim/adagrad.py's _single_tensor_adagrad (each operation rounded to float32 with
// struct), run with /usr/bin/python3:
//   # Float32 reference of PyTorch 1.13's _single_tensor_rmsprop / _single_tensor_adagrad (each op rounded to f32).
//   import struct, math, json
//   def f(x): return struct.unpack('f', struct.pack('f', x))[0]
//   P0 = [0.5, -1.2, 2.0, 0.3]
//   GRADS = [[1.0, 2.0, -3.0, 0.5], [0.1, -0.2, 0.3, 0.4], [-0.5, 0.25, 0.05, -0.1], [0.02, 0.01, -0.03, 0.6]]
//   def rmsprop(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False):
//       p = [f(x) for x in P0]; sq = [0.0]*4; ga = [0.0]*4; buf = [0.0]*4; out = []
//       for G in GRADS:
//           for i in range(4):
//               g = f(G[i]); g = -g if maximize else g
//               if weight_decay: g = f(g + f(weight_decay * p[i]))
//               sq[i] = f(f(sq[i] * alpha) + f(f(1 - alpha) * f(g * g)))
//               if centered:
//                   ga[i] = f(f(ga[i] * alpha) + f(f(1 - alpha) * g))
//                   avg = f(math.sqrt(f(sq[i] - f(ga[i] * ga[i]))))
//               else:
//                   avg = f(math.sqrt(sq[i]))
//               avg = f(avg + eps)
//               if momentum > 0:
//                   buf[i] = f(f(buf[i] * momentum) + f(g / avg))
//                   p[i] = f(p[i] + f(-lr * buf[i]))
//               else:
//                   p[i] = f(p[i] + f(-lr * f(g / avg)))
//           out.append(list(p))
//       return out
//   def adagrad(lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, maximize=False):
//       p = [f(x) for x in P0]; s = [f(initial_accumulator_value)]*4; out = []
//       for step, G in enumerate(GRADS, 1):
//           clr = lr / (1 + (step - 1) * lr_decay)
//           for i in range(4):
//               g = f(G[i]); g = -g if maximize else g
//               if weight_decay: g = f(g + f(weight_decay * p[i]))
//               s[i] = f(s[i] + f(g * g))
//               std = f(f(math.sqrt(s[i])) + eps)
//               p[i] = f(p[i] + f(f(-clr) * f(g / std)))
//           out.append(list(p))
//       return out
//   cases = {
//    'rmsprop': rmsprop(lr=0.01),
//    'rmsprop momentum centered': rmsprop(lr=0.01, momentum=0.9, centered=True),
//    'rmsprop wd alpha eps maximize': rmsprop(lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.1, maximize=True),
//    'rmsprop centered': rmsprop(lr=0.02, centered=True),
//    'adagrad': adagrad(lr=0.1),
//    'adagrad decay wd init': adagrad(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.5),
//    'adagrad eps maximize': adagrad(lr=0.2, eps=1e-3, maximize=True),
//   }
//   for k, v in cases.items(): print(k, json.dumps([[float(repr(x)) for x in r] for r in v]))
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, type Tensor, tensor } from '../../mod.ts';
import { Adagrad, type AdagradOptions } from '../../core/optim/mod.ts';

const P0 = [[0.5, -1.2], [2.0, 0.3]];
const GRADS = [[[1.0, 2.0], [-3.0, 0.5]], [[0.1, -0.2], [0.3, 0.4]], [[-0.5, 0.25], [0.05, -0.1]], [
  [0.02, 0.01],
  [-0.03, 0.6],
]];

const EXPECTED: Record<string, { options: AdagradOptions; steps: number[][] }> = {
  'adagrad: { lr: 0.1 }': {
    options: { lr: 0.1 },
    steps: [
      [0.4000000059604645, -1.3000000715255737, 2.0999999046325684, 0.20000001788139343],
      [0.39004963636398315, -1.29004967212677, 2.0900495052337646, 0.13753050565719604],
      [0.43459317088127136, -1.3023924827575684, 2.0883913040161133, 0.15296083688735962],
      [0.4328117072582245, -1.3028862476348877, 2.089386224746704, 0.08502421528100967],
    ],
  },
  'adagrad decay wd init: { lr: 0.1, lrDecay: 0.05, weightDecay: 0.1, initialAccumulatorValue: 0.5 }': {
    options: { lr: 0.1, lrDecay: 0.05, weightDecay: 0.1, initialAccumulatorValue: 0.5 },
    steps: [
      [0.4170549809932709, -1.2935984134674072, 2.0969560146331787, 0.2400239259004593],
      [0.40646013617515564, -1.2781873941421509, 2.0804030895233154, 0.19882459938526154],
      [0.4372994005680084, -1.2836346626281738, 2.072434663772583, 0.20623087882995605],
      [0.4332113564014435, -1.2785955667495728, 2.067208766937256, 0.1598222851753235],
    ],
  },
  'adagrad eps maximize: { lr: 0.2, eps: 1e-3, maximize: true }': {
    options: { lr: 0.2, eps: 1e-3, maximize: true },
    steps: [
      [0.6998001933097839, -1.000100016593933, 1.800066590309143, 0.4996008276939392],
      [0.7196811437606812, -1.0199909210205078, 1.8199607133865356, 0.6243450045585632],
      [0.630673348903656, -0.9953173995018005, 1.8232759237289429, 0.5935319066047668],
      [0.6342331171035767, -0.9943304657936096, 1.821286916732788, 0.729251503944397],
    ],
  },
};

/** Within a few float32 ulps: the update's operations may round in another order than PyTorch's. */
function assertNear(actual: readonly number[], expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    const tol = 1e-7 + 2e-6 * Math.abs(expected[i]);
    if (Math.abs(actual[i] - expected[i]) > tol) {
      assert.fail(`${what} element ${i}: got ${actual[i]}, expected ${expected[i]}`);
    }
  }
}

function setGrad(p: Tensor, g: number[][]): void {
  p.grad?.dispose();
  p.grad = tensor(g, { dtype: 'float32' });
}

describe('Adagrad matches torch.optim.Adagrad', () => {
  for (const [name, { options, steps }] of Object.entries(EXPECTED)) {
    it(`${name}: four steps`, () => {
      const p = tensor(P0, { dtype: 'float32' }).requiresGrad_();
      const optimizer = new Adagrad([p], options);
      GRADS.forEach((g, step) => {
        setGrad(p, g);
        optimizer.step();
        assertNear(p.toArray() as number[], steps[step], `${name} step ${step + 1}`);
      });
      assert.equal(optimizer.state.get(p)?.step, 4);
      optimizer.dispose();
      p.grad?.dispose();
      p.dispose();
    });
  }

  it('a parameter without a gradient is skipped and keeps its step count', () => {
    const a = tensor([1, 2], { dtype: 'float64' }).requiresGrad_();
    const b = tensor([3], { dtype: 'float64' }).requiresGrad_();
    const optimizer = new Adagrad([a, b], 0.5, { lrDecay: 1 });
    a.grad = tensor([1, -2], { dtype: 'float64' });
    optimizer.step();
    optimizer.step();
    // Float64 by hand: step 1 clr 0.5, s = g²; step 2 clr 0.25, s = 2g².
    const expected = [1, 2].map((x, i) => {
      const g = [1, -2][i];
      return x - 0.5 * g / (Math.abs(g) + 1e-10) - 0.25 * g / (Math.sqrt(2) * Math.abs(g) + 1e-10);
    });
    (a.toArray() as number[]).forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-12));
    assert.deepEqual(b.toArray(), [3]);
    assert.equal(optimizer.state.get(a)?.step, 2);
    assert.equal(optimizer.state.get(b)?.step, 0);
    optimizer.dispose();
    for (const t of [a, b]) {
      t.grad?.dispose();
      t.dispose();
    }
  });
});

describe('Adagrad bookkeeping', () => {
  it("defaults are PyTorch's", () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new Adagrad([p]);
    assert.deepEqual({ ...optimizer.defaults }, {
      lr: 1e-2,
      lrDecay: 0,
      weightDecay: 0,
      initialAccumulatorValue: 0,
      eps: 1e-10,
      maximize: false,
    });
    optimizer.dispose();
    p.dispose();
  });

  it('rejects what PyTorch rejects, with its messages', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    assert.throws(() => new Adagrad([p], { lr: -1 }), /^ValueError: Invalid learning rate: -1$/);
    assert.throws(() => new Adagrad([p], { lrDecay: -0.5 }), /Invalid lr_decay value: -0.5/);
    assert.throws(() => new Adagrad([p], { weightDecay: -1 }), /Invalid weight_decay value: -1/);
    assert.throws(
      () => new Adagrad([p], { initialAccumulatorValue: -1 }),
      /Invalid initial_accumulator_value value: -1/,
    );
    assert.throws(() => new Adagrad([p], { eps: -1 }), /Invalid epsilon value: -1/);
    assert.throws(() => new Adagrad([p], { lrDecay: 'x' as unknown as number }), /argument 'lrDecay' must be float/);
    p.dispose();
  });

  it('creates its state (sum filled with the initial value) with the group, as PyTorch, and frees it', () => {
    const p = tensor([[1, 2], [3, 4]], { dtype: 'float32' }).requiresGrad_();
    const before = memoryStats().liveTensors;
    const optimizer = new Adagrad([p], { initialAccumulatorValue: 0.25 });
    assert.equal(memoryStats().liveTensors, before + 1);
    assert.equal(optimizer.state.get(p)?.step, 0);
    assert.deepEqual(optimizer.state.get(p)?.sum?.toArray(), [0.25, 0.25, 0.25, 0.25]);
    p.grad = tensor([[0.5, -1], [2, 0]], { dtype: 'float32' });
    for (let i = 0; i < 20; i++) optimizer.step();
    assert.equal(memoryStats().liveTensors, before + 2); // the sum and the gradient
    const q = tensor([5], { dtype: 'float32' }).requiresGrad_();
    optimizer.addParamGroup({ params: [q], initialAccumulatorValue: 2 });
    assert.deepEqual(optimizer.state.get(q)?.sum?.toArray(), [2]);
    optimizer.dispose();
    assert.equal(memoryStats().liveTensors, before + 2);
    p.grad?.dispose();
    p.dispose();
    q.dispose();
  });
});
