// CNN layers: Conv1d / Conv2d (PyTorch's initialisation bounds, options, repr), BatchNorm1d / BatchNorm2d
// (batch statistics against a float64 reference, PyTorch's running-statistics update with the unbiased variance,
// momentum None, eval mode, buffers in stateDict, gradcheck through batch_norm), the pooling layers, Flatten, and
// a small CNN whose loss falls under SGD without leaking tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  crossEntropy,
  gradcheck,
  manualSeed,
  memoryStats,
  optim,
  randn,
  scope,
  type Tensor,
  tensor,
} from '../../mod.ts';
import {
  AdaptiveAvgPool2d,
  AvgPool2d,
  BatchNorm1d,
  BatchNorm2d,
  Conv1d,
  Conv2d,
  ConvTranspose2d,
  Flatten,
  functional as F,
  Linear,
  MaxPool2d,
  ReLU,
  Sequential,
} from '../../core/nn/mod.ts';

const vals = (t: Tensor) => t.toArray() as number[];

function close(actual: readonly number[], expected: readonly number[], tol: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol, `${what}[${i}]: ${a} vs ${expected[i]}`));
}

function leakCheck(fn: () => void): void {
  const before = memoryStats().liveTensors;
  fn();
  assert.equal(memoryStats().liveTensors, before, 'no tensor leaked');
}

/** Per-channel mean and biased / unbiased variance of flat NC* data. */
function channelStats(x: number[], shape: readonly number[]): { mean: number[]; biased: number[]; unbiased: number[] } {
  const C = shape[1], inner = shape.slice(2).reduce((a, b) => a * b, 1), N = shape[0], n = N * inner;
  const mean: number[] = [], biased: number[] = [], unbiased: number[] = [];
  for (let c = 0; c < C; c++) {
    let s = 0;
    for (let b = 0; b < N; b++) for (let i = 0; i < inner; i++) s += x[(b * C + c) * inner + i];
    const m = s / n;
    let v = 0;
    for (let b = 0; b < N; b++) for (let i = 0; i < inner; i++) v += (x[(b * C + c) * inner + i] - m) ** 2;
    mean.push(m);
    biased.push(v / n);
    unbiased.push(v / (n - 1));
  }
  return { mean, biased, unbiased };
}

describe('Conv1d / Conv2d', () => {
  it("PyTorch's initialisation bounds: weights and bias within 1/sqrt(fan_in)", () =>
    leakCheck(() => {
      manualSeed(0);
      const conv = new Conv2d(6, 8, [3, 2], { groups: 2 });
      assert.deepEqual(conv.weight.shape, [8, 3, 3, 2]);
      const bound = 1 / Math.sqrt(3 * 3 * 2);
      const w = vals(conv.weight), b = vals(conv.bias!);
      assert.ok(w.every((v) => Math.abs(v) <= bound) && b.every((v) => Math.abs(v) <= bound));
      // Uniform on [-bound, bound]: the spread fills the interval.
      assert.ok(Math.max(...w) > bound * 0.8 && Math.min(...w) < -bound * 0.8);
      assert.deepEqual([...conv.stateDict().keys()], ['weight', 'bias']);
      assert.equal(
        String(conv),
        'Conv2d(6, 8, kernel_size=(3, 2), stride=(1, 1), groups=2)',
      );
      conv.dispose();
    }));

  it('forward equals F.conv2d with the same options; padding same; no bias; repr', () =>
    leakCheck(() => {
      manualSeed(1);
      const conv = new Conv2d(3, 4, 3, { stride: 2, padding: 1, dilation: 1, bias: false });
      assert.equal(String(conv), 'Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)');
      using x = randn([2, 3, 7, 7]);
      using y = conv.call(x);
      using ref = F.conv2d(x, conv.weight, null, { stride: 2, padding: 1 });
      assert.deepEqual(y.shape, [2, 4, 4, 4]);
      assert.deepEqual(vals(y), vals(ref));
      const same = new Conv2d(3, 5, 4, { padding: 'same' });
      using z = same.call(x);
      assert.deepEqual(z.shape, [2, 5, 7, 7]);
      const c1 = new Conv1d(2, 3, 5, { padding: 2, dilation: 1 });
      using s = randn([4, 2, 11]);
      using t = c1.call(s);
      assert.deepEqual(t.shape, [4, 3, 11]);
      assert.equal(String(c1), 'Conv1d(2, 3, kernel_size=(5,), stride=(1,), padding=(2,))');
      for (const m of [conv, same, c1]) m.dispose();
    }));

  it('ConvTranspose2d: shape, PyTorch init bounds, equals F.convTranspose2d, repr', () =>
    leakCheck(() => {
      manualSeed(6);
      const up = new ConvTranspose2d(8, 4, 3, { stride: 2, padding: 1, outputPadding: 1, groups: 2 });
      assert.deepEqual(up.weight.shape, [8, 2, 3, 3]);
      const bound = 1 / Math.sqrt(2 * 3 * 3);
      assert.ok(vals(up.weight).every((v) => Math.abs(v) <= bound));
      using x = randn([2, 8, 5, 5]);
      using y = up.call(x);
      assert.deepEqual(y.shape, [2, 4, 10, 10]);
      using ref = F.convTranspose2d(x, up.weight, up.bias, { stride: 2, padding: 1, outputPadding: 1, groups: 2 });
      assert.deepEqual(vals(y), vals(ref));
      assert.equal(
        String(up),
        'ConvTranspose2d(8, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1), groups=2)',
      );
      up.dispose();
    }));

  it("PyTorch's constructor errors", () => {
    assert.throws(() => new Conv2d(3, 4, 3, { groups: 2 }), { message: 'in_channels must be divisible by groups' });
    assert.throws(() => new Conv2d(4, 3, 3, { groups: 2 }), { message: 'out_channels must be divisible by groups' });
    assert.throws(
      () => new Conv2d(3, 4, 3, { padding: 'same', stride: 2 }),
      { message: "padding='same' is not supported for strided convolutions" },
    );
    assert.throws(
      () => new Conv2d(3, 4, 3, { padding: 'full' as 'same' }),
      { message: "Invalid padding string 'full', should be one of ['valid', 'same']" },
    );
  });
});

describe('BatchNorm', () => {
  it('training: batch statistics (float64 reference), running stats with momentum and the unbiased variance', () =>
    leakCheck(() => {
      manualSeed(2);
      const bn = new BatchNorm2d(3, { dtype: 'float64' });
      using r = randn([4, 3, 5, 2], { dtype: 'float64' });
      using r2 = r.mul(2);
      using x = r2.add(0.5);
      using y = bn.call(x);
      const { mean, biased, unbiased } = channelStats(vals(x), x.shape);
      const xv = vals(x),
        expected = xv.map((v, i) => {
          const c = Math.floor(i / 10) % 3;
          return (v - mean[c]) / Math.sqrt(biased[c] + 1e-5);
        });
      close(vals(y), expected, 1e-12, 'normalised');
      close(vals(bn.runningMean!), mean.map((m) => 0.1 * m), 1e-12, 'running_mean');
      close(vals(bn.runningVar!), unbiased.map((v) => 0.9 + 0.1 * v), 1e-12, 'running_var');
      assert.equal(Number(bn.numBatchesTracked!.item()), 1);
      assert.deepEqual(
        [...bn.stateDict().keys()],
        ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked'],
      );
      assert.equal(String(bn), 'BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)');
      // Evaluation mode: the running statistics, nothing updated.
      bn.eval();
      const rm = vals(bn.runningMean!), rv = vals(bn.runningVar!);
      using e = bn.call(x);
      close(
        vals(e),
        xv.map((v, i) => {
          const c = Math.floor(i / 10) % 3;
          return (v - rm[c]) / Math.sqrt(rv[c] + 1e-5);
        }),
        1e-12,
        'eval',
      );
      assert.deepEqual(vals(bn.runningMean!), rm);
      assert.equal(Number(bn.numBatchesTracked!.item()), 1);
      bn.dispose();
    }));

  it('momentum null is a cumulative average; affine weight and bias apply; BatchNorm1d on [N, C] and [N, C, L]', () =>
    leakCheck(() => {
      manualSeed(3);
      const bn = new BatchNorm1d(2, { momentum: null, dtype: 'float64' });
      using a = randn([6, 2], { dtype: 'float64' });
      using b = randn([5, 2, 3], { dtype: 'float64' });
      scope(() => void bn.call(a));
      scope(() => void bn.call(b));
      const sa = channelStats(vals(a), a.shape), sb = channelStats(vals(b), b.shape);
      close(vals(bn.runningMean!), sa.mean.map((m, i) => (m + sb.mean[i]) / 2), 1e-12, 'cumulative mean');
      close(vals(bn.runningVar!), sa.unbiased.map((v, i) => (v + sb.unbiased[i]) / 2), 1e-12, 'cumulative var');
      scope(() => {
        bn.weight!.detach().fill_(2);
        bn.bias!.detach().fill_(-1);
      });
      using y = bn.call(a);
      const expected = vals(a).map((v, i) => 2 * (v - sa.mean[i % 2]) / Math.sqrt(sa.biased[i % 2] + 1e-5) - 1);
      close(vals(y), expected, 1e-12, 'affine');
      bn.dispose();
    }));

  it('gradients through batch_norm (gradcheck, float64, training with weight and bias)', () =>
    leakCheck(() => {
      manualSeed(4);
      const x = randn([3, 2, 2, 3], { dtype: 'float64', requiresGrad: true });
      const w = randn([2], { dtype: 'float64', requiresGrad: true });
      const b = randn([2], { dtype: 'float64', requiresGrad: true });
      assert.equal(
        gradcheck((i, k, c) => F.batchNorm(i, null, null, { weight: k, bias: c, training: true }), [x, w, b]),
        true,
      );
      for (const t of [x, w, b]) t.dispose();
    }));

  it('evaluation-mode gradients (gradcheck), strided running statistics, and the decomposition agrees', () =>
    leakCheck(() => {
      manualSeed(7);
      const x = randn([3, 2, 2, 3], { dtype: 'float64', requiresGrad: true });
      const w = randn([2], { dtype: 'float64', requiresGrad: true });
      const b = randn([2], { dtype: 'float64', requiresGrad: true });
      using rm = randn([2], { dtype: 'float64' });
      using rvRaw = randn([2], { dtype: 'float64' });
      using rv = rvRaw.abs();
      assert.equal(
        gradcheck((i, k, c) => F.batchNorm(i, rm, rv, { weight: k, bias: c, training: false }), [x, w, b]),
        true,
      );
      // Running statistics held in every other element of a larger tensor are updated in place.
      using store = tensor([0, 9, 0, 9], { dtype: 'float64' });
      using mean = store.slice(0, 0, 4, 2);
      scope(() => void F.batchNorm(x, mean, null, { training: true, momentum: 0.5 }));
      const batchMean = channelStats(vals(x), x.shape).mean;
      close(vals(store), [0.5 * batchMean[0], 9, 0.5 * batchMean[1], 9], 1e-12, 'strided running_mean');
      for (const t of [x, w, b]) t.dispose();
    }));

  it("PyTorch's errors", () =>
    leakCheck(() => {
      const bn = new BatchNorm2d(3);
      using x2 = randn([2, 3]);
      assert.throws(() => bn.call(x2), { name: 'ValueError', message: 'expected 4D input (got 2D input)' });
      using x4 = randn([2, 3, 4, 5]);
      const bn1 = new BatchNorm1d(3);
      assert.throws(() => bn1.call(x4), { message: 'expected 2D or 3D input (got 4D input)' });
      bn1.dispose();
      using one = randn([1, 3]);
      assert.throws(
        () => F.batchNorm(one, null, null, { training: true }),
        { message: 'Expected more than 1 value per channel when training, got input size torch.Size([1, 3])' },
      );
      using full = randn([2, 3, 2, 2]);
      using half = full.to('float16');
      assert.throws(() => F.batchNorm(half, null, null, { training: true }), {
        message: `"batch_norm" not implemented for 'Half'`,
      });
      using wrong = randn([2, 4, 3, 3]);
      assert.throws(() => bn.call(wrong), { message: 'running_mean should contain 4 elements not 3' });
      bn.dispose();
    }));
});

describe('pooling layers, Flatten, and a small CNN', () => {
  it('MaxPool2d / AvgPool2d / AdaptiveAvgPool2d / Flatten: shapes, values and repr', () =>
    leakCheck(() => {
      using flat = tensor(Array.from({ length: 32 }, (_, i) => i), { dtype: 'float32' });
      using x = flat.reshape([1, 2, 4, 4]);
      const mp = new MaxPool2d(2), ap = new AvgPool2d(2), gp = new AdaptiveAvgPool2d(1), fl = new Flatten();
      using m = mp.call(x);
      assert.deepEqual(vals(m), [5, 7, 13, 15, 21, 23, 29, 31]);
      using a = ap.call(x);
      assert.deepEqual(vals(a), [2.5, 4.5, 10.5, 12.5, 18.5, 20.5, 26.5, 28.5]);
      using g = gp.call(x);
      assert.deepEqual(vals(g), [7.5, 23.5]);
      using f = fl.call(x);
      assert.deepEqual(f.shape, [1, 32]);
      assert.equal(String(mp), 'MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)');
      assert.equal(String(ap), 'AvgPool2d(kernel_size=2, stride=2, padding=0)');
      assert.equal(String(gp), 'AdaptiveAvgPool2d(output_size=1)');
      assert.equal(String(fl), 'Flatten(start_dim=1, end_dim=-1)');
      const [v, i] = F.maxPool2d(x, 2, { returnIndices: true });
      assert.deepEqual(vals(i), [5, 7, 13, 15, 5, 7, 13, 15]);
      v.dispose();
      i.dispose();
    }));

  it('conv-bn-relu-pool x2 + linear learns a separable toy problem; train() / eval() switch batch norm', () =>
    leakCheck(() => {
      manualSeed(5);
      const model = new Sequential(
        new Conv2d(1, 4, 3, { padding: 1 }),
        new BatchNorm2d(4),
        new ReLU(),
        new MaxPool2d(2),
        new Conv2d(4, 8, 3, { padding: 1 }),
        new BatchNorm2d(8),
        new ReLU(),
        new AdaptiveAvgPool2d(1),
        new Flatten(),
        new Linear(8, 2),
      );
      const opt = new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
      // Class 1 images are bright in the top half, class 0 in the bottom half.
      const { x, y } = scope(() => {
        const noise = randn([16, 1, 8, 8]).mul(0.3);
        const rows = tensor(Array.from({ length: 8 }, (_, r) => (r < 4 ? 1 : -1)), { dtype: 'float32' }).view([
          1,
          1,
          8,
          1,
        ]);
        const labels = tensor(Array.from({ length: 16 }, (_, i) => i % 2));
        const sign = labels.mul(2).sub(1).view([16, 1, 1, 1]);
        return { x: noise.add(rows.mul(sign)), y: labels };
      });
      const losses: number[] = [];
      for (let step = 0; step < 15; step++) {
        scope(() => {
          const loss = crossEntropy(model.call(x), y);
          opt.zeroGrad();
          loss.backward();
          opt.step();
          losses.push(Number(loss.item()));
        });
      }
      assert.ok(losses.at(-1)! < losses[0] * 0.5, `loss fell: ${losses[0]} -> ${losses.at(-1)}`);
      model.eval();
      const correct = scope(() => Number(model.call(x).argmax(1).eq(y).sum().item()));
      assert.ok(correct >= 15, `eval accuracy ${correct}/16`);
      x.dispose();
      y.dispose();
      opt.dispose();
      model.dispose();
    }));
});
