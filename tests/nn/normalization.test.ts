/**
 * Group and instance normalisation and the channel/alpha dropouts (core/nn/normalization.ts) against PyTorch 1.13:
 * the expected numbers were printed by `torch.nn.functional` in float64 on the same inputs (the script's inputs are
 * rebuilt here from the same closed forms).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { arange, gradcheck, linspace, manualSeed, nn, ones, randn, scope, tensor } from '../../mod.ts';

const F = nn.functional;
const close = (a: number, b: number, tol = 1e-12) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

/** x = sin(0.7 i)·3 + cos(0.3 i), i = 0..59, shape [2, 6, 5] (float64). */
function groupInput() {
  return scope(() => {
    const i = arange(60, { dtype: 'float64' });
    return i.mul(0.7).sin().mul(3).add(i.mul(0.3).cos()).reshape([2, 6, 5]);
  });
}

describe('groupNorm', () => {
  it('matches PyTorch on a [2, 6, 5] input in 3 groups with a scale and shift', () => {
    const x = groupInput();
    const w = linspace(0.5, 2, 6, { dtype: 'float64' }), b = linspace(-1, 1, 6, { dtype: 'float64' });
    const y = F.groupNorm(x, 3, { weight: w, bias: b, eps: 1e-5 });
    const values = y.toArray() as number[];
    const expected = [
      -0.8320378078558686,
      -0.4595068238217173,
      -0.2831662438301965,
      -0.3957246444059783,
      -0.7595591744838031,
      -0.9568673852285592,
      -1.5441805482183706,
      -1.7368478614811451,
      -1.477650003285011,
      -0.9164626907508115,
      0.3777822345878337,
      0.9453215275484836,
    ];
    expected.forEach((e, k) => assert.ok(close(values[k], e), `element ${k}: ${values[k]} vs ${e}`));
    assert.ok(close(values.reduce((s, v) => s + v, 0), 0.7727198875545771, 1e-10));
    assert.ok(close(values.reduce((s, v) => s + v * v, 0), 144.41438938200122, 1e-10));
  });

  it("gives PyTorch's errors and is differentiable", () => {
    assert.throws(
      () => F.groupNorm(ones([2, 5, 3]), 3),
      /Expected number of channels in input to be divisible by num_groups, but got input of shape \[2, 5, 3\] and num_groups=3/,
    );
    manualSeed(3);
    const x = randn([2, 4, 3], { dtype: 'float64', requiresGrad: true });
    const w = randn([4], { dtype: 'float64', requiresGrad: true }),
      b = randn([4], { dtype: 'float64', requiresGrad: true });
    assert.ok(gradcheck((x, w, b) => F.groupNorm(x, 2, { weight: w, bias: b }), [x, w, b]));
  });

  it('GroupNorm module: parameters, repr, forward', () => {
    const m = new nn.GroupNorm(2, 4);
    assert.equal(String(m), 'GroupNorm(2, 4, eps=1e-05, affine=True)');
    assert.deepEqual(m.namedParameters().map(([n]) => n), ['weight', 'bias']);
    manualSeed(1);
    const y = m.forward(randn([3, 4, 5]));
    assert.deepEqual(y.shape, [3, 4, 5]);
    // Each group of each sample has mean 0 and (biased) variance 1 after normalising.
    const g = y.reshape([3, 2, 10]);
    for (const v of g.mean(-1).toArray() as number[]) assert.ok(Math.abs(v) < 1e-5);
  });
});

describe('instanceNorm', () => {
  it('matches PyTorch, updating running statistics as the mean over samples, then using them', () => {
    const x = scope(() => arange(96, { dtype: 'float64' }).mul(0.37).sin().mul(2).add(0.5).reshape([2, 3, 4, 4]));
    const rm = tensor([0.1, -0.2, 0.3], { dtype: 'float64' }), rv = tensor([1, 2, 0.5], { dtype: 'float64' });
    const y = F.instanceNorm(x, { runningMean: rm, runningVar: rv, useInputStats: true, momentum: 0.1 });
    const values = y.toArray() as number[];
    [-0.030432444063841158, 0.46991799676680035, 0.9025483526810409, 1.2089041345666358, 1.34752152452531]
      .forEach((e, k) => assert.ok(close(values[k], e, 1e-9), `element ${k}: ${values[k]} vs ${e}`));
    assert.ok(close(values.reduce((s, v) => s + v * v, 0), 95.9995071485588, 1e-9));
    (rm.toArray() as number[]).forEach((v, k) =>
      assert.ok(close(v, [0.14829531081630504, -0.11996136947983718, 0.3304723100054164][k], 1e-12))
    );
    (rv.toArray() as number[]).forEach((v, k) =>
      assert.ok(close(v, [1.1109259232020217, 2.0071919139778958, 0.6561527191791758][k], 1e-12))
    );
    const evalOut = F.instanceNorm(x, { runningMean: rm, runningVar: rv, useInputStats: false }).toArray() as number[];
    [0.33368267123786366, 1.0198538086143083, 1.613154901521172, 2.0332854303347587]
      .forEach((e, k) => assert.ok(close(evalOut[k], e, 1e-9), `eval element ${k}`));
  });

  it('InstanceNorm modules take batched and unbatched inputs, and are differentiable', () => {
    manualSeed(2);
    const m = new nn.InstanceNorm1d(3, { affine: true, trackRunningStats: true });
    assert.deepEqual(m.forward(randn([2, 3, 5])).shape, [2, 3, 5]);
    assert.deepEqual(m.forward(randn([3, 5])).shape, [3, 5]);
    assert.ok(m.namedBuffers().some(([n]) => n === 'running_mean'));
    assert.throws(() => m.forward(randn([5])), /expected 2D or 3D input \(got 1D input\)/);
    const x = randn([2, 2, 4], { dtype: 'float64', requiresGrad: true });
    assert.ok(gradcheck((x) => F.instanceNorm(x), [x]));
  });
});

describe('channel and alpha dropout', () => {
  it('dropout2d zeroes whole channels and scales the rest by 1/(1-p); evaluation passes through', () => {
    manualSeed(0);
    const x = randn([8, 16, 3, 3]).abs().add(1);
    const y = F.dropout2d(x, 0.25);
    const ratio = y.div(x).reshape([8, 16, 9]).toArray() as number[];
    let dropped = 0;
    for (let c = 0; c < 8 * 16; c++) {
      const first = ratio[c * 9];
      assert.ok(close(first, 0) || close(first, 1 / 0.75, 1e-6), `channel ${c}: ${first}`);
      for (let k = 1; k < 9; k++) assert.ok(close(ratio[c * 9 + k], first, 1e-6), 'a channel is kept or dropped whole');
      if (first === 0) dropped++;
    }
    assert.ok(dropped > 10 && dropped < 60, `${dropped} of 128 channels dropped at p = 0.25`);
    assert.equal(F.dropout2d(x, 0.25, false), x);
    assert.throws(() => F.dropout1d(ones([2]), 0.5), /dropout1d: Expected 2D or 3D input, but received a 1D input/);
    assert.throws(() => F.dropout2d(x, 1.5), /dropout probability has to be between 0 and 1, but got 1.5/);
  });

  it("alphaDropout keeps a standard normal input's mean and variance", () => {
    manualSeed(5);
    const x = randn([200_000], { dtype: 'float64' });
    const y = F.alphaDropout(x, 0.2, true);
    const mean = y.mean().item() as number, variance = y.var().item() as number;
    assert.ok(Math.abs(mean) < 0.02, `mean ${mean}`);
    assert.ok(Math.abs(variance - 1) < 0.03, `variance ${variance}`);
    const featured = F.featureAlphaDropout(randn([4, 6, 5]), 0.5, true);
    assert.deepEqual(featured.shape, [4, 6, 5]);
    assert.equal(String(new nn.AlphaDropout(0.2)), 'AlphaDropout(p=0.2, inplace=False)');
  });
});
