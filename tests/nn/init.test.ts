// nn.init: PyTorch's gains, fans and bounds, and, with the same seed, PyTorch's values bit for bit (the random
// operators reproduce its CPU generator), from:
//   torch.manual_seed(1); w = torch.empty(3, 4); nn.init.kaiming_uniform_(w, nonlinearity='relu')
//   torch.manual_seed(2); w = torch.empty(2, 5); nn.init.xavier_uniform_(w)
//   torch.manual_seed(3); w = torch.empty(4); nn.init.normal_(w, 1, 0.5)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { empty, Generator, manualSeed, memoryStats, tensor } from '../../mod.ts';
import { init } from '../../core/nn/mod.ts';

describe('nn.init', () => {
  it("calculateGain gives PyTorch's gains", () => {
    assert.equal(init.calculateGain('linear'), 1);
    assert.equal(init.calculateGain('sigmoid'), 1);
    assert.equal(init.calculateGain('tanh'), 5 / 3);
    assert.equal(init.calculateGain('relu'), Math.sqrt(2));
    assert.equal(init.calculateGain('leaky_relu'), Math.sqrt(2 / (1 + 0.01 ** 2)));
    assert.equal(init.calculateGain('leaky_relu', Math.sqrt(5)), Math.sqrt(1 / 3));
    assert.equal(init.calculateGain('selu'), 0.75);
    assert.throws(() => init.calculateGain('swish' as 'relu'), /Unsupported nonlinearity swish/);
  });

  it('calculateFanInAndFanOut reads [out, in, ...kernel]', () => {
    using w = empty([8, 3, 5, 5]);
    assert.deepEqual(init.calculateFanInAndFanOut(w), [75, 200]);
    using v = empty([4]);
    assert.throws(
      () => init.calculateFanInAndFanOut(v),
      /Fan in and fan out can not be computed for tensor with fewer than 2 dimensions/,
    );
  });

  it('kaimingUniform_ reproduces PyTorch for a seed and stays within its bound', () => {
    manualSeed(1);
    using w = init.kaimingUniform_(empty([3, 4]), { nonlinearity: 'relu' });
    assert.deepEqual(w.toArray() as number[], [
      0.6310659646987915,
      -0.5405757427215576,
      -0.2374308705329895,
      0.574857234954834,
      -1.1530200242996216,
      0.7345006465911865,
      -0.25196102261543274,
      0.6230815052986145,
      0.17026033997535706,
      -0.14996285736560822,
      0.33969637751579285,
      0.06041885167360306,
    ]);
    using big = init.kaimingUniform_(empty([64, 100]), { mode: 'fan_out', nonlinearity: 'relu' });
    const bound = Math.sqrt(2) * Math.sqrt(3 / 64);
    const values = big.toArray() as number[];
    assert.ok(values.every((v) => Math.abs(v) <= bound));
    assert.ok(Math.max(...values) > 0.9 * bound && Math.min(...values) < -0.9 * bound);
    assert.throws(() => init.kaimingUniform_(big, { mode: 'fan_avg' as 'fan_in' }), /Mode fan_avg not supported/);
  });

  it('xavierUniform_ reproduces PyTorch for a seed', () => {
    manualSeed(2);
    using w = init.xavierUniform_(empty([2, 5]));
    assert.deepEqual(w.toArray() as number[], [
      0.2123740017414093,
      -0.220321387052536,
      0.2538864314556122,
      -0.04728889465332031,
      0.39549896121025085,
      0.22041253745555878,
      -0.10640884190797806,
      -0.7484910488128662,
      0.2113780677318573,
      -0.8196698427200317,
    ]);
  });

  it('normal_ reproduces PyTorch for a seed', () => {
    manualSeed(3);
    using w = init.normal_(empty([4]), 1, 0.5);
    assert.deepEqual(w.toArray() as number[], [
      1.4016380310058594,
      1.087416648864746,
      1.0444890260696411,
      0.693140983581543,
    ]);
  });

  it('draws from a given generator instead of the default one', () => {
    using a = init.uniform_(empty([5]), -1, 1, { generator: new Generator(7) });
    using b = init.uniform_(empty([5]), -1, 1, { generator: new Generator(7) });
    assert.deepEqual(a.toArray(), b.toArray());
  });

  it('xavierNormal_ and kaimingNormal_ have the right spread', () => {
    using w = init.xavierNormal_(empty([200, 300]), { gain: 2 });
    const values = w.toArray() as number[];
    const std = Math.sqrt(values.reduce((s, v) => s + v * v, 0) / values.length);
    assert.ok(Math.abs(std - 2 * Math.sqrt(2 / 500)) < 0.005, `std ${std}`);
    using k = init.kaimingNormal_(empty([300, 200]), { nonlinearity: 'relu' });
    const kv = k.toArray() as number[];
    const kstd = Math.sqrt(kv.reduce((s, v) => s + v * v, 0) / kv.length);
    assert.ok(Math.abs(kstd - Math.sqrt(2 / 200)) < 0.005, `std ${kstd}`);
  });

  it('zeros_, ones_ and constant_ fill in place, also over NaN, and record nothing', () => {
    using w = tensor([NaN, 1, 2], { dtype: 'float32' }).requiresGrad_();
    const before = memoryStats().liveTensors;
    assert.equal(init.zeros_(w), w);
    assert.deepEqual(w.toArray(), [0, 0, 0]);
    init.ones_(w);
    assert.deepEqual(w.toArray(), [1, 1, 1]);
    init.constant_(w, 0.5);
    assert.deepEqual(w.toArray(), [0.5, 0.5, 0.5]);
    assert.equal(w.isLeaf, true);
    assert.equal(memoryStats().liveTensors, before);
  });
});
