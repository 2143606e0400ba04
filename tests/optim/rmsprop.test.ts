// RMSprop against PyTorch 1.13's update rule: four steps from fixed gradients (large, then small), with the
// float32 parameter values. torch is not installed on the build machine, so the expected values come from a
// float32 transcription of torch/optim/rmsprop.py's _single_tensor_rmsprop (each operation rounded to float32 with
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
import { RMSprop, type RMSpropOptions } from '../../core/optim/mod.ts';

const P0 = [[0.5, -1.2], [2.0, 0.3]];
const GRADS = [[[1.0, 2.0], [-3.0, 0.5]], [[0.1, -0.2], [0.3, 0.4]], [[-0.5, 0.25], [0.05, -0.1]], [
  [0.02, 0.01],
  [-0.03, 0.6],
]];

const EXPECTED: Record<string, { options: RMSpropOptions; steps: number[][] }> = {
  'rmsprop: { lr: 0.01 }': {
    options: { lr: 0.01 },
    steps: [
      [0.4000000059604645, -1.3000000715255737, 2.0999999046325684, 0.20000003278255463],
      [0.39000001549720764, -1.290000081062317, 2.0899999141693115, 0.13733920454978943],
      [0.43490132689476013, -1.3024650812149048, 2.088325023651123, 0.15289175510406494],
      [0.4330965280532837, -1.3029662370681763, 2.0893349647521973, 0.08448390662670135],
    ],
  },
  'rmsprop momentum centered: { lr: 0.01, momentum: 0.9, centered: true }': {
    options: { lr: 0.01, momentum: 0.9, centered: true },
    steps: [
      [0.3994962275028229, -1.3005038499832153, 2.10050368309021, 0.19949625432491302],
      [0.2989828884601593, -1.3809174299240112, 2.180917263031006, 0.045756950974464417],
      [0.2534830570220947, -1.4658178091049194, 2.251608371734619, -0.07693834602832794],
      [0.2107258141040802, -1.542731761932373, 2.316244125366211, -0.2566324472427368],
    ],
  },
  'rmsprop wd alpha eps maximize: { lr: 0.05, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, maximize: true }': {
    options: { lr: 0.05, alpha: 0.9, eps: 1e-6, weightDecay: 0.1, maximize: true },
    steps: [
      [0.6581133604049683, -1.0418864488601685, 1.841886281967163, 0.45811283588409424],
      [0.6641070246696472, -1.0494102239608765, 1.8479137420654297, 0.5564586520195007],
      [0.5768285989761353, -1.020524501800537, 1.840527057647705, 0.512684166431427],
      [0.5707125067710876, -1.0109299421310425, 1.828199863433838, 0.6260657906532288],
    ],
  },
  'rmsprop centered: { lr: 0.02, centered: true }': {
    options: { lr: 0.02, centered: true },
    steps: [
      [0.29899245500564575, -1.4010076522827148, 2.201007604598999, 0.0989924967288971],
      [0.2788725793361664, -1.3809279203414917, 2.1809279918670654, -0.027579352259635925],
      [0.3687969148159027, -1.4059842824935913, 2.177565574645996, 0.003760822117328644],
      [0.365182101726532, -1.4069916009902954, 2.179593086242676, -0.1347758173942566],
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

describe('RMSprop matches torch.optim.RMSprop', () => {
  for (const [name, { options, steps }] of Object.entries(EXPECTED)) {
    it(`${name}: four steps`, () => {
      const p = tensor(P0, { dtype: 'float32' }).requiresGrad_();
      const optimizer = new RMSprop([p], options);
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

  it('float64 parameters follow the same rule (positional lr, a second group with its own options)', () => {
    const a = tensor([1.5, -2], { dtype: 'float64' }).requiresGrad_();
    const b = tensor([0.25], { dtype: 'float64' }).requiresGrad_();
    const optimizer = new RMSprop([{ params: [a] }, { params: [b], momentum: 0.5 }], 0.1, { alpha: 0.5 });
    a.grad = tensor([2, -1], { dtype: 'float64' });
    b.grad = tensor([4], { dtype: 'float64' });
    optimizer.step();
    optimizer.step();
    // Float64 by hand: v1 = 0.5 g², v2 = 0.75 g²; a moves lr·g/√v each step, b's momentum adds 0.5 of the last.
    const expectA = [1.5, -2].map((x, i) => {
      const g = [2, -1][i];
      return x - 0.1 * g / (Math.sqrt(0.5 * g * g) + 1e-8) - 0.1 * g / (Math.sqrt(0.75 * g * g) + 1e-8);
    });
    const s1 = 4 / (Math.sqrt(8) + 1e-8), s2 = 4 / (Math.sqrt(12) + 1e-8);
    const expectB = 0.25 - 0.1 * s1 - 0.1 * (0.5 * s1 + s2);
    (a.toArray() as number[]).forEach((v, i) => assert.ok(Math.abs(v - expectA[i]) < 1e-12, `${v} vs ${expectA[i]}`));
    assert.ok(Math.abs((b.item() as number) - expectB) < 1e-12);
    assert.equal(optimizer.state.get(a)?.momentumBuffer, undefined);
    assert.notEqual(optimizer.state.get(b)?.momentumBuffer, undefined);
    optimizer.dispose();
    for (const t of [a, b]) {
      t.grad?.dispose();
      t.dispose();
    }
  });
});

describe('RMSprop bookkeeping', () => {
  it("defaults are PyTorch's", () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new RMSprop([p]);
    assert.deepEqual({ ...optimizer.defaults }, {
      lr: 1e-2,
      alpha: 0.99,
      eps: 1e-8,
      weightDecay: 0,
      momentum: 0,
      centered: false,
      maximize: false,
    });
    p.dispose();
  });

  it('rejects what PyTorch rejects, with its messages', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    assert.throws(() => new RMSprop([p], { lr: -1 }), /^ValueError: Invalid learning rate: -1$/);
    assert.throws(() => new RMSprop([p], -1), /Invalid learning rate: -1/);
    assert.throws(() => new RMSprop([p], { eps: -1e-8 }), /Invalid epsilon value: -1e-8/);
    assert.throws(() => new RMSprop([p], { momentum: -0.5 }), /Invalid momentum value: -0.5/);
    assert.throws(() => new RMSprop([p], { weightDecay: -1 }), /Invalid weight_decay value: -1/);
    assert.throws(() => new RMSprop([p], { alpha: -0.1 }), /Invalid alpha value: -0.1/);
    assert.throws(() => new RMSprop([p], { alpha: NaN }), /Invalid alpha value: nan/);
    assert.throws(() => new RMSprop([p], { centered: 1 as unknown as boolean }), /argument 'centered' must be bool/);
    assert.throws(() => new RMSprop([p], { betas: [0.9, 0.9] } as never), /unexpected keyword argument 'betas'/);
    p.dispose();
  });

  it('state is square_avg, plus grad_avg (centered) and momentum_buffer, kept across steps and freed', () => {
    const p = tensor([[1, 2], [3, 4]], { dtype: 'float32' }).requiresGrad_();
    p.grad = tensor([[0.5, -1], [2, 0]], { dtype: 'float32' });
    const before = memoryStats().liveTensors;
    const optimizer = new RMSprop([p], { centered: true, momentum: 0.9, weightDecay: 0.1, maximize: true });
    optimizer.step();
    assert.equal(memoryStats().liveTensors, before + 3);
    for (let i = 0; i < 50; i++) optimizer.step();
    assert.equal(memoryStats().liveTensors, before + 3);
    assert.equal(optimizer.state.get(p)?.step, 51);
    assert.equal(p.gradFn, null);
    optimizer.dispose();
    assert.equal(memoryStats().liveTensors, before);
    p.grad?.dispose();
    p.dispose();
  });
});
