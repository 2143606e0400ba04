// Every differentiable operator's formula against central finite differences in float64 (gradcheck), on
// seeded random inputs with broadcasting, views and non-trivial shapes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bmm,
  crossEntropy,
  embedding,
  gradcheck,
  linear,
  manualSeed,
  memoryStats,
  mm,
  randn,
  scope,
  type Tensor,
  tensor,
  where,
} from '../../mod.ts';

const f64 = { dtype: 'float64' as const };
const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
const pos = (shape: number[]) => randn(shape, f64).abs().add(0.5).detach().requiresGrad_();

type Case = [string, (...x: Tensor[]) => Tensor, () => Tensor[]];

const CASES: Case[] = [
  [
    'add/sub with alpha and broadcasting',
    (a, b) => a.add(b, { alpha: 2 }).sub(b.mul(a), { alpha: 0.5 }),
    () => [r([3, 1]), r([4])],
  ],
  ['mul/div/reciprocal', (a, b) => a.mul(b).div(b.add(3)).add(b.reciprocal()), () => [r([2, 3]), pos([3])]],
  [
    'pow tensor^scalar, tensor^tensor, scalar^tensor',
    (a, b) => a.pow(3).add(a.pow(b)).sum().add(b.exp()),
    () => [pos([4]), r([4])],
  ],
  [
    'exp/log/log1p/expm1/sqrt/rsqrt',
    (a) => a.exp().add(a.log()).add(a.log1p()).add(a.expm1()).add(a.sqrt()).add(a.rsqrt()),
    () => [pos([5])],
  ],
  [
    'sin/cos/tanh/sigmoid/erf',
    (a) => a.sin().mul(a.cos()).add(a.tanh()).add(a.sigmoid()).add(a.erf()),
    () => [r([2, 3])],
  ],
  [
    'neg/abs/relu/silu/gelu',
    (a) => a.neg().add(a.abs()).add(a.relu()).add(a.silu()).add(a.gelu()).add(a.gelu({ approximate: 'tanh' })),
    () => [r([7])],
  ],
  ['clamp scalar and tensor bounds', (a, lo) => a.clamp(-0.4, 0.6).add(a.clamp(lo, null)), () => [r([6]), r([6])]],
  [
    'clamp_min/clamp_max, and clamp_/clamp_min_/clamp_max_ on non-leaf tensors',
    (a) =>
      a.clampMin(-0.3).add(a.clampMax(0.4)).add(a.mul(1.5).clamp_(-0.5, 0.5)).add(a.mul(1).clampMin_(0.1))
        .add(a.mul(-1).clampMax_(-0.1)),
    () => [r([9])],
  ],
  ['minimum/maximum/atan2', (a, b) => a.minimum(b).add(a.maximum(b)).add(a.atan2(b)), () => [r([5]), r([5])]],
  ['where', (c, a, b) => where(c.gt(0), a, b), () => [randn([4], f64), r([4]), r([1])]],
  ['remainder/fmod', (a, b) => a.remainder(b).add(a.fmod(b)), () => [r([5]), pos([5])]],
  ['mm and transposed operands', (a, b) => mm(a.t(), b).add(mm(b.t(), a).t()), () => [r([4, 3]), r([4, 2])]],
  [
    'addmm and linear',
    (x, w, b) => linear(x, w, b).add(b.unsqueeze(0).addmm(x, w.t(), { beta: 0.5, alpha: 2 })),
    () => [r([5, 3]), r([4, 3]), r([4])],
  ],
  [
    'bmm/dot/mv',
    (a, b, v) => bmm(a, b).sum().add(v.dot(v)).add(a.select(0, 0).mv(b.select(0, 1).select(1, 0)).sum()),
    () => [r([2, 3, 4]), r([2, 4, 2]), r([3])],
  ],
  ['sum/mean over dims', (a) => a.sum(1, true).mul(a).sum(0).add(a.mean([0, 2]).unsqueeze(1)), () => [r([2, 3, 4])]],
  [
    'max/min/amax/amin',
    (a) => a.max(1)[0].add(a.min(0)[0].sum()).add(a.amax(1)).add(a.amin([0, 1])).add(a.max()),
    () => [r([3, 4])],
  ],
  [
    'prod with and without zeros',
    (a) => a.prod().add(a.prod(1).sum()).add(a.mul(a.gt(0.3)).prod(0, true).sum()),
    () => [r([3, 4])],
  ],
  ['softmax/log_softmax', (a) => a.softmax(1).mul(a).add(a.logSoftmax(0)), () => [r([3, 5])]],
  [
    'cross entropy with weights and smoothing',
    (a) => crossEntropy(a, tensor([1, 0, 4]), { weight: tensor([0.5, 1, 2, 1, 0.25], f64), labelSmoothing: 0.1 }),
    () => [r([3, 5])],
  ],
  [
    'views',
    (a) => a.view([2, 6]).transpose(0, 1).reshape([3, 4]).permute([1, 0]).unsqueeze(0).squeeze(0).t(),
    () => [r([3, 4])],
  ],
  [
    'select/slice/narrow/diagonal',
    (a) => a.select(0, 1).add(a.narrow(1, 1, 2).sum()).add(a.diagonal().sum()),
    () => [r([4, 4])],
  ],
  [
    'cat/stack/split/unbind/chunk',
    (a, b) => a.split(1, 1)[1].add(a.unbind(0)[2].sum()).mul(b.chunk(2)[1].sum()),
    () => [r([3, 3]), r([4])],
  ],
  [
    'flip/expand/clone/contiguous',
    (a) => a.flip([0]).expand([2, 3, 4]).clone().transpose(1, 2).contiguous(),
    () => [r([3, 4])],
  ],
  [
    'index_select/index_add/embedding',
    (w, s) =>
      w.indexSelect(1, tensor([2, 0, 2])).sum(1).add(embedding(w, tensor([[1, 4], [1, 0]])).sum([0, 2]).sum())
        .add(w.indexAdd(0, tensor([4, 1, 4]), s, { alpha: -2 }).sum(1)),
    () => [r([5, 3]), r([3, 3])],
  ],
  [
    'gather/scatter_add/masked_fill',
    (a, b) =>
      a.gather(1, tensor([[2, 0, 2], [1, 1, 0]])).add(a.scatterAdd(0, tensor([[1, 0, 1], [1, 1, 0]]), b))
        .maskedFill(tensor([true, false, false]), 0),
    () => [r([2, 3]), r([2, 3])],
  ],
];

describe('gradcheck (float64 finite differences)', () => {
  for (const [name, fn, inputs] of CASES) {
    it(name, () => {
      manualSeed(7);
      const before = memoryStats().liveTensors;
      const xs = scope(inputs);
      assert.equal(gradcheck(fn, xs), true);
      for (const x of xs) x.dispose();
      assert.equal(memoryStats().liveTensors, before, 'gradcheck leaves no tensors behind');
    });
  }

  it('reports a wrong formula', () => {
    const x = r([3]);
    // A function whose output is detached from x has zero analytical gradient but a nonzero numerical one.
    assert.throws(() => gradcheck((a) => a.detach().mul(a.detach()).add(a.mul(0)), [x]), /Jacobian mismatch/);
  });
});
