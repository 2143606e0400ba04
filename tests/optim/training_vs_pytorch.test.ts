// End to end against PyTorch 1.13: the same seed gives the same initial MLP, and five training steps
// (forward, cross-entropy, backward, optimizer step, zero_grad) give PyTorch's losses and weights, from:
//   torch.manual_seed(0)
//   m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)); opt = torch.optim.SGD(m.parameters(), ...)
//   for _ in range(5): l = F.cross_entropy(m(X), Y); l.backward(); opt.step(); opt.zero_grad()
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, memoryStats, scope, tensor } from '../../mod.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../../core/nn/mod.ts';
import { Adam, type Optimizer, SGD } from '../../core/optim/mod.ts';

const X = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 1.0], [-2.0, 0.75, 0.5, -1.0], [0.1, 0.2, 0.3, 0.4], [
  1.0,
  -1.0,
  1.0,
  -1.0,
]];
const Y = [2, 0, 1, 1, 2];

const EXPECTED = {
  'SGD lr 0.1 momentum 0.9': {
    losses: [1.2646830081939697, 1.2258832454681396, 1.1620732545852661, 1.090216875076294, 1.0250990390777588],
    weight: [
      0.016088468953967094,
      -0.18126098811626434,
      0.05981581658124924,
      -0.35223588347435,
      -0.2554657459259033,
      -0.048510272055864334,
      -0.07801034301519394,
      0.2266876995563507,
      -0.15296761691570282,
      -0.01275704987347126,
      0.22611884772777557,
      0.3894457519054413,
      0.14031903445720673,
      0.0807173103094101,
      0.30212217569351196,
      -0.1576048731803894,
      0.06455647200345993,
      -0.27411189675331116,
      -0.24504294991493225,
      -0.19848157465457916,
      0.1599733829498291,
      -0.02452668733894825,
      0.026582900434732437,
      0.03685096651315689,
    ],
    bias: [-0.025800388306379318, 0.039778683334589005, 0.14898726344108582],
  },
  'Adam lr 0.01': {
    losses: [1.2646830081939697, 1.235098123550415, 1.2075693607330322, 1.180873155593872, 1.1551724672317505],
    weight: [
      -0.011115029454231262,
      -0.18126098811626434,
      0.05981581658124924,
      -0.3800601363182068,
      -0.2554657459259033,
      -0.13259780406951904,
      0.173458531498909,
      0.22426451742649078,
      -0.12709017097949982,
      -0.01275704987347126,
      0.22611884772777557,
      0.4013451039791107,
      0.14031903445720673,
      0.09791707992553711,
      0.28698936104774475,
      -0.16051657497882843,
      0.03617371618747711,
      -0.27411189675331116,
      -0.24504294991493225,
      -0.232326477766037,
      0.1599733829498291,
      0.09234678745269775,
      -0.15989336371421814,
      0.05699988454580307,
    ],
    bias: [0.1443621814250946, 0.0046632783487439156, 0.06342169642448425],
  },
};

function assertNear(actual: readonly number[], expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((a, i) =>
    assert.ok(Math.abs(a - expected[i]) <= 1e-6 + 1e-5 * Math.abs(expected[i]), `${what}[${i}]: ${a} vs ${expected[i]}`)
  );
}

describe('training a seeded MLP matches PyTorch', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: five steps`, () => {
      const baseline = memoryStats().liveTensors;
      manualSeed(0);
      const model = new Sequential(new Linear(4, 8), new ReLU(), new Linear(8, 3));
      const optimizer: Optimizer<object> = name.startsWith('SGD')
        ? new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 })
        : new Adam(model.parameters(), { lr: 0.01 });
      const lossFunction = new CrossEntropyLoss();
      const x = tensor(X, { dtype: 'float32' }), y = tensor(Y);
      const losses: number[] = [];
      for (let step = 0; step < 5; step++) {
        losses.push(scope(() => {
          const loss = lossFunction.call(model.call(x), y);
          loss.backward();
          optimizer.step();
          optimizer.zeroGrad();
          return loss.item() as number;
        }));
      }
      assertNear(losses, expected.losses, 'losses');
      const head = model.at(2) as Linear;
      assertNear(head.weight.toArray() as number[], expected.weight, 'weight');
      assertNear(head.bias!.toArray() as number[], expected.bias, 'bias');
      optimizer.dispose();
      model.dispose();
      x.dispose();
      y.dispose();
      assert.equal(memoryStats().liveTensors, baseline);
    });
  }
});
