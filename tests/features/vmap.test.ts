/**
 * vmap: results equal a loop over the batch (seeded random inputs, odd shapes, inDims/outDims, nested vmap,
 * the fallback path), PyTorch's error messages, randomness modes, and per-sample gradients against a loop.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  BatchedTensor,
  crossEntropy,
  dot,
  float32,
  float64,
  func,
  indexSelect,
  isBatchedTensor,
  manualSeed,
  rand,
  randLike,
  randn,
  setVmapFallbackWarningHandler,
  stack,
  type Tensor,
  tensor,
  vmap,
  where,
} from '../../mod.ts';

/** stack(fn(slice_i)) over dim `dim` of every batched input (null: passed whole). */
function loop(fn: (...a: Tensor[]) => Tensor, inputs: Tensor[], dims: Array<number | null>, outDim = 0): Tensor {
  const n = inputs[dims.findIndex((d) => d !== null)].shape[dims.find((d) => d !== null)!];
  const outs = Array.from(
    { length: n },
    (_, i) => fn(...inputs.map((x, j) => (dims[j] === null ? x : x.select(dims[j]!, i)))),
  );
  return stack(outs, outDim);
}

function close(a: Tensor, b: Tensor, tol = 1e-5): void {
  assert.deepEqual(a.shape, b.shape);
  assert.equal(a.dtype, b.dtype);
  const x = a.toArray() as number[], y = b.toArray() as number[];
  x.forEach((v, i) => assert.ok(Math.abs(v - y[i]) <= tol * (1 + Math.abs(y[i])), `element ${i}: ${v} vs ${y[i]}`));
}

describe('vmap equals a loop over the batch', () => {
  it('pointwise ops with broadcasting, scalars and promotion', () => {
    manualSeed(1);
    const x = randn([5, 3, 4]), y = randn([4]), z = randn([5], { dtype: float64 });
    const f = (a: Tensor, b: Tensor, c: Tensor) => a.mul(b).add(c, { alpha: 2 }).sigmoid().sub(a.abs().sqrt());
    close(vmap(f, { inDims: [0, null, 0] })(x, y, z), loop(f, [x, y, z], [0, null, 0]));
    const g = (a: Tensor, b: Tensor) => where(a.gt(b).logicalNot(), a, b.neg());
    const w = randn([4, 3]);
    close(vmap(g, { inDims: [2, 0] })(x, w), loop(g, [x, w], [2, 0]));
  });
  it('inDims on a non-leading dim, negative dims, outDims', () => {
    manualSeed(2);
    const x = randn([3, 7, 2]);
    const f = (a: Tensor) => a.exp().sum(0);
    close(vmap(f, { inDims: 1 })(x), loop(f, [x], [1]));
    close(vmap(f, { inDims: -1, outDims: 1 })(x), loop(f, [x], [2], 1));
    close(vmap((a: Tensor) => a.t(), { inDims: 1, outDims: -1 })(x), loop((a) => a.t(), [x], [1], 2));
  });
  it('reductions, views and reshapes', () => {
    manualSeed(3);
    const x = randn([4, 3, 5]);
    const fs: Array<(a: Tensor) => Tensor> = [
      (a) => a.sum(),
      (a) => a.mean(1, true),
      (a) => a.amax(0),
      (a) => a.argmax(),
      (a) => a.view([15]).reshape([5, 3]).transpose(0, 1),
      (a) => a.permute([1, 0]).unsqueeze(0).expand([2, 5, 3]).flatten(),
      (a) => a.select(1, 2).narrow(0, 1, 2),
      (a) => a.softmax(-1).logSoftmax(0),
      (a) => a.unbind(1)[3].mul(a.split(2, 1)[0].sum(1)),
      (a) => a.max(1)[0].add(a.min(1)[1]),
    ];
    for (const f of fs) close(vmap(f)(x), loop(f, [x], [0]));
  });
  it('matmul family and linear', () => {
    manualSeed(4);
    const a = randn([6, 3, 4]), b = randn([6, 4, 2]), v = randn([6, 4]), w = randn([4, 5]);
    close(vmap((p: Tensor, q: Tensor) => p.matmul(q))(a, b), loop((p, q) => p.matmul(q), [a, b], [0, 0]));
    close(
      vmap((p: Tensor, q: Tensor) => p.mm(q), { inDims: [0, null] })(a, w),
      loop((p, q) => p.mm(q), [a, w], [0, null]),
    );
    close(vmap((p: Tensor, q: Tensor) => p.mv(q))(a, v), loop((p, q) => p.mv(q), [a, v], [0, 0]));
    close(vmap((p: Tensor, q: Tensor) => dot(p, q))(v, v), loop((p, q) => dot(p, q), [v, v], [0, 0]));
    close(
      vmap((p: Tensor, q: Tensor) => q.matmul(p), { inDims: [0, null] })(v, w.t()),
      loop((p, q) => q.matmul(p), [v, w.t()], [0, null]),
    );
  });
  it('nested vmap over two batch dims, in any order', () => {
    manualSeed(5);
    const x = randn([2, 3, 4]), y = randn([3, 4]);
    const f = (a: Tensor, b: Tensor) => dot(a, b);
    const nested = vmap(vmap(f, { inDims: [0, 0] }), { inDims: [0, null] })(x, y);
    const ref = stack([0, 1].map((i) => loop(f, [x.select(0, i), y], [0, 0])));
    close(nested, ref);
    const swapped = vmap(vmap(f, { inDims: [0, null] }), { inDims: [1, 0] })(x, y); // [3, 2]
    close(swapped, ref.t().contiguous());
  });
  it('nested structures as inputs and outputs', () => {
    manualSeed(6);
    const x = randn([4, 3]), y = randn([3]);
    const out = vmap((p: { a: Tensor; b: [Tensor] }) => [p.a.add(p.b[0]), { s: p.a.sum() }], {
      inDims: [{ a: 0, b: [null] }],
      outDims: [1, { s: 0 }],
    })({ a: x, b: [y] }) as [Tensor, { s: Tensor }];
    close(out[0], x.add(y).t());
    close(out[1].s, x.sum(1));
  });
  it('chunkSize maps a few samples at a time and gives the same result', () => {
    manualSeed(11);
    const x = randn([7, 3]), w = randn([3]);
    const f = (a: Tensor) => [a.mul(w).sum(), a.exp()];
    const full = vmap(f, { outDims: [0, 1] })(x) as Tensor[];
    for (const chunkSize of [1, 3, 7, 100]) {
      const chunked = vmap(f, { outDims: [0, 1], chunkSize })(x) as Tensor[];
      close(chunked[0], full[0]);
      close(chunked[1], full[1]);
    }
    assert.throws(() => vmap(f, { chunkSize: 0 }), /vmap: chunk_size should be None or greater than 0\. \(got 0\)/);
  });
  it('an unbatched output is expanded, outDims null passes it through', () => {
    const c = tensor([1, 2], { dtype: float32 });
    assert.deepEqual(vmap((_x: Tensor) => c)(randn([3, 5])).shape, [3, 2]);
    assert.equal(vmap((_x: Tensor) => c, { outDims: null })(randn([3, 5])), c);
  });
  it('cross entropy per sample equals the loop', () => {
    manualSeed(7);
    const logits = randn([5, 4, 3]),
      target = tensor([[0, 2, 1, 1], [2, 2, 0, 1], [1, 0, 0, 2], [0, 0, 1, 2], [2, 1, 0, 0]]);
    const f = (l: Tensor, t: Tensor) => crossEntropy(l, t);
    close(vmap(f)(logits, target), loop(f, [logits, target], [0, 0]));
  });
  it('batched tensors are wrappers only inside vmap', () => {
    vmap((x: Tensor) => {
      assert.ok(isBatchedTensor(x) && x instanceof BatchedTensor);
      assert.deepEqual(x.shape, [3]);
      assert.equal(x.device.type, 'cpu');
      assert.match(String(x), /^BatchedTensor\(lvl=\d+, bdim=0, value=\ntensor\(\[\[/);
      return x;
    })(randn([2, 3]));
  });
});

describe('vmap fallback', () => {
  it('an operator without a rule loops, warns once, and equals the loop', () => {
    manualSeed(8);
    const warnings: string[] = [];
    setVmapFallbackWarningHandler((m) => warnings.push(m));
    try {
      const x = randn([4, 6]), idx = tensor([[0, 5], [1, 1], [2, 0], [3, 4]]);
      const f = (a: Tensor, i: Tensor) => indexSelect(a, 0, i);
      close(vmap(f)(x, idx), loop(f, [x, idx], [0, 0]));
      vmap(f)(x, idx);
      assert.deepEqual(warnings, [
        'There is a performance drop because we have not yet implemented the batching rule for aten::index_select. ' +
        'Please file us an issue on GitHub so that we can prioritize its implementation.',
      ]);
    } finally {
      setVmapFallbackWarningHandler(null);
    }
  });
});

describe('vmap errors (PyTorch messages)', () => {
  function named(x: Tensor) {
    return x;
  }
  it('in_dims and input checks', () => {
    const x = randn([2, 3]);
    assert.throws(
      () => vmap(named, { inDims: [0, 0] })(x),
      /vmap\(named, in_dims=\(0, 0\), \.\.\.\)\(<inputs>\): in_dims is not compatible with the structure of `inputs`/,
    );
    assert.throws(
      () => vmap(named, { inDims: 2 })(x),
      /Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so expected in_dim to satisfy -2 <= in_dim < 2\./,
    );
    assert.throws(
      () => vmap((a: Tensor, _n: number) => a, { inDims: [0, 0] })(x, 3),
      /We cannot vmap over non-Tensor arguments, please use None as the respective in_dim/,
    );
    assert.throws(() => (vmap(named) as () => Tensor)(), /vmap\(named\)\(<inputs>\): got no inputs/);
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => a.add(b))(x, randn([3, 3])),
      /vmap: Expected all tensors to have the same size in the mapped dimension, got sizes \[2, 3\] for the mapped dimension/,
    );
    assert.throws(() => vmap(named, { inDims: [null] })(x), /vmap: Expected at least one Tensor to vmap over/);
    assert.throws(
      () => vmap(named, { outDims: null })(x),
      /`named` can not return a BatchedTensor when out_dim is None/,
    );
    assert.throws(() => vmap((_a: Tensor) => 3)(x), /`<anonymous>` must only return Tensors, got type/);
    assert.throws(() => vmap((a: Tensor) => a.item())(x), /vmap: It looks like you're calling \.item\(\) on a Tensor/);
    assert.throws(
      () => vmap((a: Tensor) => (a.sum().backward(), a))(x),
      /backward\(\) called inside a functorch transform/,
    );
    assert.throws(
      () => vmap((a: Tensor) => a.requiresGrad_())(x),
      /requiresGrad_\(\) on a BatchedTensor is not supported/,
    );
    assert.throws(
      () => vmap(named, { randomness: 'sometimes' as 'same' }),
      /Only allowed values for randomness are 'error', 'different', or 'same'\. Got sometimes/,
    );
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => b.add_(a), { inDims: [0, null] })(x, randn([3])),
      /vmap: aten::add_\.Tensor\(self, \*extra_args\) is not possible/,
    );
    // The runtime stays usable.
    close(vmap((a: Tensor) => a.mul(2))(x), x.mul(2));
  });
});

describe('vmap randomness', () => {
  it("'error' refuses random operators", () => {
    assert.throws(
      () => vmap((x: Tensor) => x.add(rand([3])))(randn([2, 3])),
      /vmap: called random operation while in randomness error mode/,
    );
  });
  it("'different' draws per sample, 'same' shares one draw", () => {
    manualSeed(9);
    const x = randn([4, 3]);
    const diff = vmap((a: Tensor) => a.mul(0).add(rand([3])), { randomness: 'different' })(x);
    const same = vmap((a: Tensor) => a.mul(0).add(rand([3])), { randomness: 'same' })(x);
    const rows = (t: Tensor) => (t.tolist() as number[][]).map((r) => r.join());
    assert.equal(new Set(rows(diff)).size, 4);
    assert.equal(new Set(rows(same)).size, 1);
    const like = vmap((a: Tensor) => randLike(a), { randomness: 'different' })(x);
    assert.equal(new Set(rows(like)).size, 4);
    const likeSame = vmap((a: Tensor) => randLike(a), { randomness: 'same' })(x);
    assert.equal(new Set(rows(likeSame)).size, 1);
  });
});

describe('per-sample gradients', () => {
  it('vmap(grad(loss)) of a small MLP equals a loop of single-sample backward passes', () => {
    manualSeed(10);
    const w1 = randn([5, 4]), b1 = randn([5]), w2 = randn([3, 5]);
    const xs = randn([6, 4]), ys = tensor([0, 2, 1, 1, 0, 2]);
    const loss = (params: Tensor[], x: Tensor, y: Tensor) => {
      const h = params[0].matmul(x).add(params[1]).tanh();
      return crossEntropy(params[2].matmul(h).unsqueeze(0), y.unsqueeze(0));
    };
    const per = vmap(func.grad(loss), { inDims: [null, 0, 0] })([w1, b1, w2], xs, ys) as Tensor[];
    for (let i = 0; i < 6; i++) {
      const ps = [w1, b1, w2].map((p) => p.detach().requiresGrad_(true));
      loss(ps, xs.select(0, i), ys.select(0, i)).backward();
      ps.forEach((p, j) => close(per[j].select(0, i), p.grad!, 1e-4));
    }
  });
  it('jacrev gives the Jacobian, grad nests', () => {
    const x = tensor([0.3, -1.2, 2], { dtype: float64 });
    const J = func.jacrev((a: Tensor) => a.sin().mul(a.sum()))(x);
    const s = 0.3 - 1.2 + 2;
    const ref = [0, 1, 2].map((i) =>
      [0, 1, 2].map((j) =>
        (i === j ? Math.cos((x.tolist() as number[])[i]) * s : 0) + Math.sin((x.tolist() as number[])[i])
      )
    );
    close(J, tensor(ref, { dtype: float64 }), 1e-10);
    close(
      func.grad(func.grad((a: Tensor) => a.pow(3).sum()))(tensor(2, { dtype: float64 })),
      tensor(12, { dtype: float64 }),
    );
  });
});
