// A graph is freed with its last output (PyTorch's shared grad_fn pointers): disposing a non-leaf releases its
// node, the saved tensors and, through the edges, every node nothing else holds, iteratively. What is still
// reachable from a live tensor stays; retainGraph, createGraph, hooks, retainGrad, detach and scope() keep
// working.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grad, manualSeed, memoryStats, randn, scope, type Tensor, tensor } from '../../mod.ts';

const f32 = { dtype: 'float32' as const };
const f64 = { dtype: 'float64' as const };
// Seconds per test under a loaded machine, beyond bun's 5 s default.
const SLOW = { timeout: 120_000 };

/** Live tensors and bytes now. */
const usage = () => {
  const s = memoryStats();
  return { liveTensors: s.liveTensors, bytes: s.bytes };
};

describe('graphs are freed with their outputs', () => {
  // 10,000 × 1 MiB would pass the 4 GiB default limit many times over if any saved result outlived its output.
  for (const [op, iterations] of [['relu', 10_000], ['exp', 500]] as const) {
    it(
      `${iterations} disposed ${op}() outputs of a 1 MiB leaf: each node and its saved result go with the output`,
      SLOW,
      () => {
        manualSeed(0);
        const w = randn([262_144], f32).requiresGrad_();
        const baseline = usage();
        for (let i = 0; i < iterations; i++) {
          const y = w[op](); // the node saves y itself: that must not keep the node alive
          y.dispose();
          if (i % 100 === 0) assert.deepEqual(usage(), baseline, `iteration ${i}`);
        }
        assert.deepEqual(usage(), baseline);
        w.dispose();
      },
    );
  }

  it('a tensor reachable from a live one keeps its node; disposing the last output frees the chain', () => {
    manualSeed(1);
    const w = randn([4], f64).requiresGrad_();
    const baseline = usage();
    const y = w.exp();
    const z = y.mul(2);
    y.dispose(); // z's node holds y's node (and its saved result)
    const loss = z.sum();
    z.dispose(); // and the loss's node holds z's
    loss.backward();
    assert.deepEqual(w.grad?.toArray(), (w.toArray() as number[]).map((v) => 2 * Math.exp(v)));
    w.grad!.dispose();
    w.grad = null;
    loss.dispose();
    assert.deepEqual(usage(), baseline);
  });

  it('backward works when only the root is kept (everything else disposed by scope)', () => {
    manualSeed(2);
    const w = randn([3, 5], f64).requiresGrad_(), x = randn([5], f64);
    const baseline = usage();
    const loss = scope(() => w.mv(x).tanh().pow(2).sum());
    loss.backward(null, { retainGraph: true });
    const first = w.grad!.toArray() as number[];
    loss.backward(); // the retained graph runs again through nodes whose outputs are all gone
    (w.grad!.toArray() as number[]).forEach((g, i) => assert.ok(Math.abs(g - 2 * first[i]) < 1e-12));
    loss.dispose();
    w.grad!.dispose();
    w.grad = null;
    assert.deepEqual(usage(), baseline);
  });

  it('createGraph: the recorded backward graph is freed with the gradients it made', () => {
    manualSeed(3);
    const x = randn([5], f64).requiresGrad_();
    const baseline = usage();
    for (let i = 0; i < 20; i++) {
      const y = scope(() => x.pow(3).sum());
      const [g] = grad([y], [x], { createGraph: true });
      const gs = g!.sum();
      const [g2] = grad([gs], [x]);
      (g2!.toArray() as number[]).forEach((v, k) => assert.ok(Math.abs(v - 6 * (x.toArray()[k] as number)) < 1e-12));
      for (const t of [y, g!, gs, g2!]) t.dispose();
    }
    assert.deepEqual(usage(), baseline);
  });

  it('hooks and retainGrad keep working; a disposed retainGrad tensor gets no gradient', () => {
    const w = tensor([1, 2], f32).requiresGrad_();
    const baseline = usage();
    const seen: number[][] = [];
    const a = w.mul(3), b = a.mul(a);
    a.registerHook((g) => void seen.push(g.toArray() as number[]));
    a.retainGrad();
    const loss = b.sum();
    a.dispose(); // its node lives on through b's; its hook still runs; its retained grad would have no owner
    b.dispose();
    loss.backward();
    assert.deepEqual(seen, [[6, 12]]); // d(sum a²)/da = 2a, a = 3w
    assert.equal(a.grad, null);
    assert.deepEqual(w.grad?.toArray(), [18, 36]);
    loss.dispose();
    w.grad!.dispose();
    w.grad = null;
    assert.deepEqual(usage(), baseline);
  });

  it('a detached alias does not hold the graph', () => {
    const w = tensor([1, 2], f32).requiresGrad_();
    const baseline = usage();
    const y = w.exp();
    const d = y.detach();
    y.dispose(); // the graph goes; d still reads the data
    assert.deepEqual(usage().liveTensors, baseline.liveTensors + 1);
    assert.ok(Math.abs((d.toArray()[1] as number) - Math.exp(2)) < 1e-5);
    d.dispose();
    assert.deepEqual(usage(), baseline);
  });

  it('a 100k-deep chain frees without a stack overflow', SLOW, () => {
    const x = tensor([1], f64).requiresGrad_();
    const baseline = usage();
    let y: Tensor = x.mul(1.0001);
    for (let i = 1; i < 100_000; i++) {
      const next = y.mul(1.0001);
      y.dispose();
      y = next;
    }
    assert.equal(usage().liveTensors, baseline.liveTensors + 1);
    y.dispose(); // 100k nodes released through one worklist
    assert.deepEqual(usage(), baseline);
  });
});
