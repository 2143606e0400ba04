// The loss modules over the functional losses (L1, smooth L1, Huber, BCE, BCE with logits, KL-div with
// batchmean, cosine similarity), their option checks, and the linalg namespace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { linalg, memoryStats, scope, tensor } from '../../mod.ts';
import {
  BCELoss,
  BCEWithLogitsLoss,
  CosineSimilarity,
  HuberLoss,
  KLDivLoss,
  L1Loss,
  SmoothL1Loss,
} from '../../core/nn/mod.ts';

const f64 = { dtype: 'float64' as const };
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

describe('loss modules', () => {
  it('compute the functional losses with their options', () =>
    leakFree(() => {
      const x = tensor([0.2, 0.9, -1.5], f64), t = tensor([0, 1, 1], f64);
      const d = [0.2, 0.1, 2.5];
      close(new L1Loss().call(x, t).item() as number, (0.2 + 0.1 + 2.5) / 3);
      close(new L1Loss({ reduction: 'sum' }).call(x, t).item() as number, 2.8);
      const sl = (z: number, b: number) => (z < b ? (0.5 * z * z) / b : z - 0.5 * b);
      close(
        new SmoothL1Loss({ beta: 0.5 }).call(x, t).item() as number,
        d.map((z) => sl(z, 0.5)).reduce((a, b) => a + b) / 3,
      );
      const hl = (z: number, k: number) => (z < k ? 0.5 * z * z : k * (z - 0.5 * k));
      close(
        new HuberLoss({ delta: 2 }).call(x, t).item() as number,
        d.map((z) => hl(z, 2)).reduce((a, b) => a + b) / 3,
      );
      const p = tensor([0.25, 0.5], f64), y = tensor([1, 0], f64);
      close(new BCELoss().call(p, y).item() as number, (-Math.log(0.25) - Math.log(0.5)) / 2);
      close(new BCELoss({ weight: tensor([2, 0], f64) }).call(p, y).item() as number, -Math.log(0.25));
      close(new BCEWithLogitsLoss().call(tensor([0, 0], f64), y).item() as number, Math.LN2);
      close(
        new BCEWithLogitsLoss({ posWeight: tensor([3], f64), reduction: 'sum' }).call(tensor([0, 0], f64), y)
          .item() as number,
        4 * Math.LN2,
      );
      const lp = tensor([[-1, -1], [-2, -0.5]], f64), q = tensor([[0.5, 0.5], [0.25, 0.75]], f64);
      const kl = [0.5 * (Math.log(0.5) + 1) * 2, 0.25 * (Math.log(0.25) + 2) + 0.75 * (Math.log(0.75) + 0.5)];
      close(new KLDivLoss({ reduction: 'batchmean' }).call(lp, q).item() as number, (kl[0] + kl[1]) / 2);
      close(new KLDivLoss().call(lp, q).item() as number, (kl[0] + kl[1]) / 4);
      close(new KLDivLoss({ reduction: 'sum', logTarget: true }).call(lp, q.log()).item() as number, kl[0] + kl[1]);
      close(
        new CosineSimilarity({ dim: 0 }).call(tensor([1, 0], f64), tensor([1, 1], f64)).item() as number,
        Math.SQRT1_2,
      );
    }));
  it('option errors in PyTorch words', () =>
    leakFree(() => {
      assert.throws(() => new L1Loss({ beta: 1 } as never), {
        message: "L1Loss() got an unexpected keyword argument 'beta'",
      });
      assert.throws(() => new HuberLoss({ delta: '1' } as never), {
        message: "HuberLoss(): argument 'delta' must be float, not str",
      });
      assert.throws(() => new KLDivLoss('sum' as never), {
        message: 'KLDivLoss() takes 0 positional arguments but 1 was given',
      });
      assert.throws(() => new L1Loss({ reduction: 'avg' as never }).call(tensor([1.5]), tensor([1.5])), {
        name: 'ValueError',
      });
    }));
  it('linalg.vectorNorm is linalg_vector_norm', () =>
    leakFree(() => {
      close(linalg.vectorNorm(tensor([3, 4], f64)).item() as number, 5);
      close(linalg.vectorNorm(tensor([3, -4], f64), 1).item() as number, 7);
    }));
});
