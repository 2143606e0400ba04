// SGD against PyTorch 1.13: four steps from fixed gradients, with the parameter values torch.optim.SGD gives
// (float32), for plain SGD, momentum, dampening, Nesterov with weight decay, and maximize.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, type Tensor, tensor } from '../../mod.ts';
import { SGD, type SGDOptions } from '../../core/optim/mod.ts';

const P0 = [[0.5, -1.2], [2.0, 0.3]];
const GRADS = [[[1.0, 2.0], [-3.0, 0.5]], [[0.1, -0.2], [0.3, 0.4]], [[-0.5, 0.25], [0.05, -0.1]], [
  [0.02, 0.01],
  [-0.03, 0.6],
]];

// Expected parameters after each step, from:
//   p = torch.tensor(P0, requires_grad=True); opt = torch.optim.SGD([p], **options)
//   for g in GRADS: p.grad = torch.tensor(g); opt.step(); print(p.flatten().tolist())
const EXPECTED: Record<string, { options: SGDOptions; steps: number[][] }> = {
  'plain': {
    options: { lr: 0.1 },
    steps: [
      [0.4000000059604645, -1.4000000953674316, 2.299999952316284, 0.25],
      [0.39000001549720764, -1.380000114440918, 2.2699999809265137, 0.20999999344348907],
      [0.4400000274181366, -1.40500009059906, 2.2649998664855957, 0.2199999988079071],
      [0.43800002336502075, -1.4060001373291016, 2.2679998874664307, 0.1599999964237213],
    ],
  },
  'momentum 0.9': {
    options: { lr: 0.1, momentum: 0.9 },
    steps: [
      [0.4000000059604645, -1.4000000953674316, 2.299999952316284, 0.25],
      [0.30000001192092896, -1.5600000619888306, 2.5399999618530273, 0.16499999165534973],
      [0.2600000202655792, -1.7290000915527344, 2.750999927520752, 0.09849999099969864],
      [0.22200001776218414, -1.8821001052856445, 2.9438998699188232, -0.02135000191628933],
    ],
  },
  'momentum 0.9 with dampening 0.1': {
    options: { lr: 0.1, momentum: 0.9, dampening: 0.1 },
    steps: [
      [0.4000000059604645, -1.4000000953674316, 2.299999952316284, 0.25],
      [0.3009999990463257, -1.5620001554489136, 2.5429999828338623, 0.16899999976158142],
      [0.25690001249313354, -1.7303001880645752, 2.757200002670288, 0.10509999841451645],
      [0.2154100239276886, -1.8826701641082764, 2.9526798725128174, -0.00641000596806407],
    ],
  },
  'nesterov with weight decay': {
    options: { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.01 },
    steps: [
      [0.3090499937534332, -1.577720046043396, 2.566200017929077, 0.2044300138950348],
      [0.20805780589580536, -1.6977503299713135, 2.745704174041748, 0.08729860186576843],
      [0.22104766964912415, -1.869471788406372, 2.9218506813049316, 0.03689844533801079],
      [0.18370582163333893, -2.001397132873535, 3.0875022411346436, -0.1314532458782196],
    ],
  },
  'maximize with momentum and weight decay': {
    options: { lr: 0.05, momentum: 0.5, weightDecay: 0.1, maximize: true },
    steps: [
      [0.5475000143051147, -1.093999981880188, 1.840000033378601, 0.32350000739097595],
      [0.5735124945640564, -1.0455299615859985, 1.7657999992370605, 0.35363250970840454],
      [0.5586512088775635, -1.0035673379898071, 1.722370982170105, 0.36193060874938965],
      [0.5494272708892822, -0.9770681858062744, 1.690544605255127, 0.39427000284194946],
    ],
  },
};

/** Within a few float32 ulps: the update's operations may round in another order than PyTorch's. */
function assertNear(actual: readonly number[], expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < expected.length; i++) {
    const tol = 1e-7 + 1e-6 * Math.abs(expected[i]);
    if (Math.abs(actual[i] - expected[i]) > tol) {
      assert.fail(`${what} element ${i}: got ${actual[i]}, expected ${expected[i]}`);
    }
  }
}

function setGrad(p: Tensor, g: number[][]): void {
  p.grad?.dispose();
  p.grad = tensor(g, { dtype: 'float32' });
}

describe('SGD matches torch.optim.SGD', () => {
  for (const [name, { options, steps }] of Object.entries(EXPECTED)) {
    it(`${name}: four steps`, () => {
      const p = tensor(P0, { dtype: 'float32' }).requiresGrad_();
      const optimizer = new SGD([p], options);
      GRADS.forEach((g, step) => {
        setGrad(p, g);
        optimizer.step();
        assertNear(p.toArray() as number[], steps[step], `${name} step ${step + 1}`);
      });
      optimizer.dispose();
      p.grad?.dispose();
      p.dispose();
    });
  }
});

describe('SGD bookkeeping', () => {
  it('updates in place under noGrad: the parameter stays a leaf and its version moves', () => {
    const p = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new SGD([p], { lr: 0.5 });
    const version = p.version;
    p.grad = tensor([1, 1], { dtype: 'float32' });
    optimizer.step();
    assert.deepEqual(p.toArray(), [0.5, 1.5]);
    assert.equal(p.isLeaf, true);
    assert.equal(p.gradFn, null);
    assert.equal(p.requiresGrad, true);
    assert.ok(p.version > version);
    optimizer.dispose();
    p.grad?.dispose();
    p.dispose();
  });

  it('skips parameters without a gradient', () => {
    const a = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const b = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new SGD([a, b], { lr: 1, momentum: 0.9 });
    a.grad = tensor([1], { dtype: 'float32' });
    optimizer.step();
    assert.deepEqual(a.toArray(), [0]);
    assert.deepEqual(b.toArray(), [1]);
    assert.equal(optimizer.state.has(b), false);
    optimizer.dispose();
    a.grad?.dispose();
    for (const t of [a, b]) t.dispose();
  });

  it('parameter groups override the defaults, and lr can be changed between steps', () => {
    const a = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const b = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new SGD([{ params: [a] }, { params: [b], lr: 0.25 }], { lr: 0.5 });
    assert.equal(optimizer.paramGroups[0].lr, 0.5);
    assert.equal(optimizer.paramGroups[1].lr, 0.25);
    a.grad = tensor([1], { dtype: 'float32' });
    b.grad = tensor([1], { dtype: 'float32' });
    optimizer.step();
    assert.deepEqual(a.toArray(), [0.5]);
    assert.deepEqual(b.toArray(), [0.75]);
    optimizer.paramGroups[0].lr = 0.125;
    optimizer.step();
    assert.deepEqual(a.toArray(), [0.375]);
    optimizer.dispose();
    for (const t of [a, b]) {
      t.grad?.dispose();
      t.dispose();
    }
  });

  it('rejects what PyTorch rejects, with its messages', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    assert.throws(() => new SGD([], { lr: 0.1 }), /optimizer got an empty parameter list/);
    assert.throws(() => new SGD([p], { lr: -1 }), /Invalid learning rate: -1/);
    assert.throws(() => new SGD([p], { lr: 0.1, momentum: -0.5 }), /Invalid momentum value: -0.5/);
    assert.throws(() => new SGD([p], { lr: 0.1, weightDecay: -1 }), /Invalid weight_decay value: -1/);
    assert.throws(
      () => new SGD([p], { lr: 0.1, nesterov: true }),
      /Nesterov momentum requires a momentum and zero dampening/,
    );
    assert.throws(
      () => new SGD([{ params: [p] }, { params: [p] }], { lr: 0.1 }),
      /some parameters appear in more than one parameter group/,
    );
    const nonLeaf = p.mul(2);
    assert.throws(() => new SGD([nonLeaf], { lr: 0.1 }), /can't optimize a non-leaf Tensor/);
    nonLeaf.dispose();
    p.dispose();
  });

  it('a step keeps no temporaries, and dispose() frees the momentum buffers', () => {
    const p = tensor([[1, 2], [3, 4]], { dtype: 'float32' }).requiresGrad_();
    p.grad = tensor([[1, 1], [1, 1]], { dtype: 'float32' });
    const before = memoryStats().liveTensors;
    const optimizer = new SGD([p], { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.1, maximize: true });
    optimizer.step();
    assert.equal(memoryStats().liveTensors, before + 1, 'one momentum buffer');
    for (let i = 0; i < 100; i++) optimizer.step();
    assert.equal(memoryStats().liveTensors, before + 1);
    optimizer.dispose();
    assert.equal(memoryStats().liveTensors, before);
    p.grad?.dispose();
    p.dispose();
  });

  it('zeroGrad drops and disposes gradients, or zeroes them in place', () => {
    const p = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new SGD([p], { lr: 0.1 });
    const g = tensor([3, 4], { dtype: 'float32' });
    p.grad = g;
    optimizer.zeroGrad({ setToNone: false });
    assert.equal(p.grad, g);
    assert.deepEqual(g.toArray(), [0, 0]);
    optimizer.zeroGrad();
    assert.equal(p.grad, null);
    assert.equal(g.isDisposed, true);
    optimizer.dispose();
    p.dispose();
  });

  it('step(closure) evaluates the closure with grad enabled and returns its loss', () => {
    const p = tensor([2], { dtype: 'float32' }).requiresGrad_();
    const optimizer = new SGD([p], { lr: 0.25 });
    const loss = optimizer.step(() => {
      const l = p.mul(p);
      l.backward(); // d(p²)/dp = 4
      return l;
    });
    assert.deepEqual(loss?.toArray(), [4]);
    assert.deepEqual(p.toArray(), [1]);
    loss?.dispose();
    optimizer.dispose();
    p.grad?.dispose();
    p.dispose();
  });
});
