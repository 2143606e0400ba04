// The operators added with the activation, reduction, scan/sort, selection and sampling families, called
// outside any scope on valid and on refused inputs: every call frees its intermediates (only its results stay
// alive, and the caller frees those), also when it throws halfway.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { memoryStats, type Tensor, tensor } from '../../mod.ts';

function free(r: unknown, keep: readonly Tensor[]): void {
  if (S.Tensor.isTensor(r)) {
    if (!keep.includes(r)) r.dispose();
  } else if (Array.isArray(r)) { for (const t of r) free(t, keep); }
}

type Helper = (t: Tensor) => Tensor;
const CALLS: Array<[string, (x: Tensor, i: Tensor, m: Tensor, h: Helper) => unknown]> = [
  ['leakyRelu', (x) => S.leakyRelu(x)],
  ['elu', (x) => S.elu(x, 0.5)],
  ['selu', (x) => S.selu(x)],
  ['softplus', (x) => S.softplus(x, 2, 1)],
  ['mish', (x) => S.mish(x)],
  ['hardtanh', (x) => S.hardtanh(x)],
  ['logSigmoid', (x) => S.logSigmoid(x)],
  ['binaryCrossEntropy', (x, _i, _m, h) => S.binaryCrossEntropy(h(x.sigmoid()), h(h(x.sigmoid()).detach()))],
  ['binaryCrossEntropy refused', (x) => S.binaryCrossEntropy(x, x)],
  ['binaryCrossEntropyWithLogits', (x) => S.binaryCrossEntropyWithLogits(x, x, { posWeight: x })],
  ['l1/smoothL1/huber', (x) => [S.l1Loss(x, x), S.smoothL1Loss(x, x), S.huberLoss(x, x, { reduction: 'none' })]],
  ['klDiv', (x, _i, _m, h) => [S.klDiv(x, h(x.abs())), S.klDiv(x, x, { logTarget: true })]],
  ['cosineSimilarity', (x) => S.cosineSimilarity(x, x)],
  ['predicates', (x, i) => [S.isinf(x), S.isfinite(i), S.isclose(x, x), S.allclose(i, i), S.equal(x, x)]],
  ['isclose refused', (x, i) => S.isclose(x, i)],
  ['all/any', (x, i) => [x.all(), i.any(1, true)]],
  ['var/std', (x) => [x.var(1), S.std(x, null, { keepdim: true }), S.varMean(x, 0), S.stdMean(x)]],
  ['var refused', (_x, i) => i.var()],
  ['logsumexp/norms', (x, i) => [x.logsumexp([1]), S.logsumexp(i, [0]), S.linalgVectorNorm(x, 3), x.norm(1, [0])]],
  ['cumsum/cumprod', (x, i, _m, h) => [x.cumsum(1), i.cumprod(0), h(x.t()).cumsum(0)]],
  ['sort family', (x) => [x.sort(1), x.argsort(0, true), x.topk(2), x.kthvalue(2), x.median(1), x.median()]],
  ['kthvalue refused', (x) => x.kthvalue(9)],
  ['nonzero/maskedSelect/where', (x, _i, m) => [x.nonzero(), x.maskedSelect(m), S.where(m)]],
  [
    'repeat/tile/repeatInterleave',
    (x, i, _m, h) => [x.repeat([2, 1]), S.tile(x, [2]), S.repeatInterleave(x, h(h(i.select(0, 0)).abs()), 1)],
  ],
  [
    'tril/triu/roll/movedim/outer',
    (x, _i, _m, h) => [
      S.tril(x),
      S.triu(x, 1),
      S.roll(x, [1]),
      S.roll(x, [1, 1], [0, 1]),
      S.movedim(x, 0, 1),
      S.outer(h(x.select(0, 0)), h(x.select(1, 0))),
    ],
  ],
  ['roll refused', (x) => S.roll(x, [1, 2], [0, 5])],
  [
    'pad/oneHot',
    (
      x,
      i,
      _m,
      h,
    ) => [S.pad(x, [1, 1]), S.pad(x, [1, 1], 'reflect'), S.pad(x, [-1, 2], { value: 3 }), S.oneHot(h(i.abs()))],
  ],
  ['pad refused', (x) => S.pad(x, [4, 4], 'reflect')],
  [
    'einsum',
    (x, _i, _m, h) => [S.einsum('ij,kj->ik', [x, x]), S.einsum('ij', [x]), S.einsum('ii', [h(x.narrow(1, 0, 2))])],
  ],
  ['einsum refused', (x, _i, _m, h) => S.einsum('ij,jk->ik', [x, h(x.narrow(1, 0, 1))])],
  [
    'unique',
    (
      x,
      i,
    ) => [
      S.unique(i, { returnInverse: true, returnCounts: true }),
      S.unique(x),
      S.unique(i, { dim: 0 }),
      S.unique(i, { dim: 1, returnInverse: true, returnCounts: true }),
    ],
  ],
  [
    'sampling',
    (
      x,
      _i,
      _m,
      h,
    ) => [S.randperm(5), S.bernoulli(h(x.sigmoid())), S.multinomial(h(x.abs()), 2), S.multinomial(h(x.abs()), 4, true)],
  ],
  ['conveniences', (x) => [x.T, x.mT, x.double(), x.newZeros([2]), x.newFull([1], 2), x.newTensor([1, 2])]],
];

describe('new operators free their intermediates', () => {
  for (const [name, call] of CALLS) {
    it(name, () => {
      const x = tensor([[0.5, -1.5, 2], [3, -0.25, 1]], { dtype: 'float32' });
      const i = tensor([[1, 0, 2], [2, 2, 0]]);
      const m = x.gt(0);
      const inputs = [x, i, m];
      const helpers: Tensor[] = [];
      const h = (t: Tensor) => (helpers.push(t), t);
      const before = memoryStats().liveTensors;
      try {
        free(call(x, i, m, h), [...inputs, ...helpers]);
      } catch (e) {
        assert.ok(e instanceof Error && e.message.length > 10, `${name}: ${String(e)}`);
        assert.match(name, /refused/, `${name} threw ${(e as Error).message}`);
      }
      for (const t of helpers) t.dispose();
      assert.equal(memoryStats().liveTensors, before, `${name} left tensors behind`);
      for (const t of inputs) t.dispose();
    });
  }
});
