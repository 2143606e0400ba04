// The engine is linear in the graph: a 100k-deep chain and 100k independent branches run backward without a
// stack overflow, with the right gradients, and a 10x larger wide graph costs about 10x, not 100x (a ready
// list scanned on every pop would be quadratic). Gradients are freed as they are consumed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backward, cat, grad, memoryStats, type Tensor, tensor } from '../../mod.ts';

const f64 = { dtype: 'float64' as const };
// Seconds per test under a loaded machine, beyond bun's 5 s default.
const SLOW = { timeout: 120_000 };

/** `cat` of n products `x * k_i` (k_i = i mod 7 - 3), summed: n MulBackward1 nodes ready at once. */
function wide(x: Tensor, n: number): Tensor {
  const parts = Array.from({ length: n }, (_, i) => x.mul((i % 7) - 3));
  const joined = cat(parts);
  for (const p of parts) p.dispose();
  const loss = joined.sum();
  joined.dispose();
  return loss;
}

/** Σ k_i for i < n, in float64 (the gradient of `wide` with respect to x). */
const wideGradient = (n: number) => Array.from({ length: n }, (_, i) => (i % 7) - 3).reduce((a, b) => a + b, 0);

describe('engine at scale', () => {
  it('a 100k-deep chain: backward without a stack overflow, the exact product of the factors', SLOW, () => {
    const x = tensor([1.5], f64).requiresGrad_();
    const kept: Tensor[] = [];
    let y = x;
    for (let i = 0; i < 100_000; i++) {
      y = y.mul(1.0001);
      kept.push(y); // the user keeps every intermediate: each holds its node
    }
    const [g] = grad([y], [x]);
    let expected = 1;
    for (let i = 0; i < 100_000; i++) expected *= 1.0001;
    assert.ok(Math.abs((g!.item() as number) - expected) <= 1e-9 * expected, `${g!.item()} vs ${expected}`);
    for (const t of [...kept, g!]) t.dispose();
  });

  it('100k independent branches, ready at once: the sum of their factors', SLOW, () => {
    const x = tensor([0.5], f64).requiresGrad_();
    const loss = wide(x, 100_000);
    loss.backward();
    assert.equal(x.grad?.item(), wideGradient(100_000));
    loss.dispose();
  });

  it('100k separate roots in one backward call', SLOW, () => {
    const x = tensor([0.5], f64).requiresGrad_();
    const roots = Array.from({ length: 100_000 }, (_, i) => x.mul((i % 7) - 3));
    backward(roots);
    assert.equal(x.grad?.item(), wideGradient(100_000));
    for (const r of roots) r.dispose();
  });

  it('backward time grows linearly: 10x the branches cost far less than 100x', SLOW, () => {
    const time = (n: number) => {
      const samples: number[] = [];
      for (let r = 0; r < 3; r++) {
        const x = tensor([0.5], f64).requiresGrad_();
        const loss = wide(x, n);
        const t0 = performance.now();
        loss.backward();
        samples.push(performance.now() - t0);
        loss.dispose();
      }
      return Math.min(...samples);
    };
    time(2_000); // warm-up
    const small = time(3_000), large = time(30_000);
    assert.ok(large / small < 40, `30k branches took ${large.toFixed(1)} ms, 3k took ${small.toFixed(1)} ms`);
  });

  it('gradients are freed as they are consumed: a long chain does not hold one gradient per node', () => {
    const x = tensor([1], f64).requiresGrad_();
    let y: Tensor = x.mul(1);
    for (let i = 0; i < 5_000; i++) {
      const next = y.mul(1.0001);
      y.dispose();
      y = next;
    }
    let liveAtLeaf = -1;
    const baseline = memoryStats().liveTensors;
    // The leaf's hook runs after the whole chain: all 5,000 gradients would still be alive there if the run
    // kept them until its end.
    x.registerHook((_g) => void (liveAtLeaf = memoryStats().liveTensors - baseline));
    y.backward();
    assert.ok(liveAtLeaf >= 0 && liveAtLeaf < 10, `${liveAtLeaf} tensors alive when the chain was done`);
    assert.ok(Math.abs((x.grad!.item() as number) - Math.pow(1.0001, 5_000)) < 1e-9);
    y.dispose();
  });
});
