// Adam and AdamW against PyTorch 1.13: four steps from fixed gradients (large, then small, so that AMSGrad's
// maximum matters), with the float32 parameter values torch.optim.Adam / AdamW give.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, type Tensor, tensor } from '../../mod.ts';
import { Adam, type AdamOptions, AdamW } from '../../core/optim/mod.ts';

const P0 = [[0.5, -1.2], [2.0, 0.3]];
const GRADS = [[[1.0, 2.0], [-3.0, 0.5]], [[0.1, -0.2], [0.3, 0.4]], [[-0.5, 0.25], [0.05, -0.1]], [
  [0.02, 0.01],
  [-0.03, 0.6],
]];

// Expected parameters after each step, from:
//   p = torch.tensor(P0, requires_grad=True); opt = torch.optim.Adam([p], **options)  # or AdamW
//   for g in GRADS: p.grad = torch.tensor(g); opt.step(); print(p.flatten().tolist())
const EXPECTED: Record<string, { decoupled: boolean; options: AdamOptions; steps: number[][] }> = {
  'Adam': {
    decoupled: false,
    options: { lr: 0.1 },
    steps: [
      [0.4000000059604645, -1.3000000715255737, 2.0999999046325684, 0.20000001788139343],
      [0.32591894268989563, -1.3592649698257446, 2.1592648029327393, 0.10118743777275085],
      [0.30313676595687866, -1.4126183986663818, 2.204010009765625, 0.03558611869812012],
      [0.28344136476516724, -1.4566091299057007, 2.2412397861480713, -0.04332958161830902],
    ],
  },
  'Adam with amsgrad': {
    decoupled: false,
    options: { lr: 0.1, amsgrad: true },
    steps: [
      [0.4000000059604645, -1.3000000715255737, 2.0999999046325684, 0.20000001788139343],
      [0.32591894268989563, -1.3592649698257446, 2.1592648029327393, 0.10118743777275085],
      [0.30313676595687866, -1.4126183986663818, 2.203993797302246, 0.03558611869812012],
      [0.28344807028770447, -1.4565876722335815, 2.2411932945251465, -0.04332958161830902],
    ],
  },
  'Adam with weight decay, betas, eps and maximize': {
    decoupled: false,
    options: { lr: 0.05, betas: [0.8, 0.99], eps: 1e-6, weightDecay: 0.1, maximize: true },
    steps: [
      [0.5499999523162842, -1.1500000953674316, 1.9500000476837158, 0.34999990463256836],
      [0.5833338499069214, -1.1200971603393555, 1.9198025465011597, 0.3989464044570923],
      [0.5860975980758667, -1.0927455425262451, 1.8963621854782104, 0.425313800573349],
      [0.587020754814148, -1.0699536800384521, 1.8761290311813354, 0.4629531502723694],
    ],
  },
  'AdamW (default weight decay 1e-2)': {
    decoupled: true,
    options: { lr: 0.1 },
    steps: [
      [0.3995000123977661, -1.2988001108169556, 2.0980000495910645, 0.1997000277042389],
      [0.3250194489955902, -1.3567662239074707, 2.1551668643951416, 0.10068775713443756],
      [0.30191224813461304, -1.4087629318237305, 2.1977570056915283, 0.034985750913619995],
      [0.28191494941711426, -1.4513449668884277, 2.2327890396118164, -0.043964933604002],
    ],
  },
  'AdamW with amsgrad and weight decay 0.1': {
    decoupled: true,
    options: { lr: 0.1, weightDecay: 0.1, amsgrad: true },
    steps: [
      [0.39500001072883606, -1.2880001068115234, 2.0799999237060547, 0.19700002670288086],
      [0.3169689476490021, -1.3343850374221802, 2.118464946746826, 0.09621745347976685],
      [0.291017085313797, -1.3743946552276611, 2.1420092582702637, 0.02965395897626877],
      [0.26841822266578674, -1.4046200513839722, 2.1577887535095215, -0.049558281898498535],
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

describe('Adam and AdamW match torch.optim', () => {
  for (const [name, { decoupled, options, steps }] of Object.entries(EXPECTED)) {
    it(`${name}: four steps`, () => {
      const p = tensor(P0, { dtype: 'float32' }).requiresGrad_();
      const optimizer = decoupled ? new AdamW([p], options) : new Adam([p], options);
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
});

describe('Adam bookkeeping', () => {
  it("defaults are PyTorch's", () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const adam = new Adam([p]);
    assert.deepEqual({ ...adam.defaults }, {
      lr: 1e-3,
      betas: [0.9, 0.999],
      eps: 1e-8,
      weightDecay: 0,
      amsgrad: false,
      maximize: false,
    });
    const adamw = new AdamW([p]);
    assert.equal(adamw.defaults.weightDecay, 1e-2);
    assert.equal(adamw instanceof Adam, true);
    p.dispose();
  });

  it('rejects what PyTorch rejects, with its messages', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    assert.throws(() => new Adam([p], { lr: -0.1 }), /Invalid learning rate: -0.1/);
    assert.throws(() => new Adam([p], { eps: -1 }), /Invalid epsilon value: -1/);
    assert.throws(() => new Adam([p], { betas: [1, 0.999] }), /Invalid beta parameter at index 0: 1/);
    assert.throws(() => new Adam([p], { betas: [0.9, -0.1] }), /Invalid beta parameter at index 1: -0.1/);
    assert.throws(() => new AdamW([p], { weightDecay: -1 }), /Invalid weight_decay value: -1/);
    p.dispose();
  });

  it('state is two moments (three with amsgrad), kept across steps, and freed by dispose()', () => {
    const p = tensor([[1, 2], [3, 4]], { dtype: 'float32' }).requiresGrad_();
    p.grad = tensor([[0.5, -1], [2, 0]], { dtype: 'float32' });
    const before = memoryStats().liveTensors;
    const adam = new Adam([p], { amsgrad: true, weightDecay: 0.1, maximize: true });
    adam.step();
    assert.equal(memoryStats().liveTensors, before + 3);
    for (let i = 0; i < 100; i++) adam.step();
    assert.equal(memoryStats().liveTensors, before + 3);
    assert.equal(adam.state.get(p)?.step, 101);
    adam.dispose();
    assert.equal(memoryStats().liveTensors, before);
    assert.equal(adam.state.size, 0);
    p.grad?.dispose();
    p.dispose();
  });

  it('updates are not recorded by autograd', () => {
    const p = tensor([1, -1], { dtype: 'float32' }).requiresGrad_();
    const adam = new AdamW([p], { lr: 0.1 });
    p.grad = tensor([1, 1], { dtype: 'float32' });
    adam.step();
    assert.equal(p.isLeaf, true);
    assert.equal(p.gradFn, null);
    const m = adam.state.get(p)!.expAvg!;
    assert.equal(m.requiresGrad, false);
    assert.equal(m.gradFn, null);
    adam.dispose();
    p.grad?.dispose();
    p.dispose();
  });
});
