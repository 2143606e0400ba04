// Graph capture and replay: what trace() records at each level, replay equality (also of a training step with
// its backward), the JSON round trip, and the dead-code and common-subexpression passes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DispatchKey,
  Graph,
  linear,
  localDispatchKeySet,
  makeFx,
  manualSeed,
  nn,
  noGrad,
  randn,
  RuntimeError,
  type Tensor,
  tensor,
  trace,
  ValueError,
  ValueRef,
} from '../../mod.ts';

function close(a: Tensor, b: Tensor, tol = 1e-5): void {
  assert.deepEqual(a.shape, b.shape);
  const x = a.toArray() as number[], y = b.toArray() as number[];
  for (let i = 0; i < x.length; i++) {
    assert.ok(Math.abs(x[i] - y[i]) <= tol * (1 + Math.abs(y[i])), `${x[i]} vs ${y[i]} at ${i}`);
  }
}

const targets = (g: Graph) => g.calls.map((n) => n.target);

describe('trace', () => {
  it('records the aten operators that ran, after autograd and decompositions, with shapes and dtypes', () => {
    manualSeed(10);
    const x = randn(5, 7), w = randn(3, 7, { requiresGrad: true }), b = randn(3, { requiresGrad: true });
    const g = trace((x, w, b) => linear(x, w, b).relu().sum(1), [x, w, b], { inputNames: ['x', 'w', 'b'] });
    assert.deepEqual(targets(g), ['aten::t', 'aten::addmm', 'aten::relu', 'aten::sum.dim_IntList']);
    assert.equal(
      g.print(),
      [
        'function forward(x /* f32[5, 7] */, w /* f32[3, 7] */, b /* f32[3] */) {',
        '  const t = aten::t(w); // f32[7, 3]',
        '  const addmm = aten::addmm(b, x, t, { beta: 1, alpha: 1 }); // f32[5, 3]',
        '  const relu = aten::relu(addmm); // f32[5, 3]',
        '  const sum = aten::sum.dim_IntList(relu, [1], false, { dtype: null }); // f32[5]',
        '  return sum;',
        '}',
      ].join('\n'),
    );
    assert.deepEqual(g.calls[1].args, [new ValueRef('b'), new ValueRef('x'), new ValueRef('t')]);
    assert.deepEqual(g.calls[1].meta, { shape: [5, 3], dtype: 'float32' });
    // Replays on other values give what eager gives.
    const x2 = randn(5, 7), w2 = randn(3, 7), b2 = randn(3);
    close(g.run([x2, w2, b2]) as Tensor, linear(x2, w2, b2).relu().sum(1));
    assert.equal(localDispatchKeySet().included.has(DispatchKey.Python), false);
  });

  it('records the calls fn made itself at pre-autograd level, and that replay stays differentiable', () => {
    manualSeed(11);
    const x = randn(4, 6), w = randn(2, 6, { requiresGrad: true });
    const g = trace((x, w) => linear(x, w).tanh().mean(), [x, w], { level: 'pre-autograd' });
    assert.deepEqual(targets(g), ['aten::linear', 'aten::tanh', 'aten::mean.dim']);
    assert.equal(g.postAutograd, false);
    assert.equal(localDispatchKeySet().included.has(DispatchKey.Tracer), false);
    const wr = w.detach().clone().requiresGrad_();
    (g.run([x, wr]) as Tensor).backward();
    const we = w.detach().clone().requiresGrad_();
    linear(x, we).tanh().mean().backward();
    close(wr.grad!, we.grad!);
  });

  it('captures closed-over tensors as constants, multi-output calls by index, and replays on meta', () => {
    manualSeed(12);
    const bias = randn(3);
    const g = trace((x) => {
      const [values, indices] = x.max(1) as unknown as [Tensor, Tensor];
      return [values.add(bias), indices];
    }, [randn(3, 5)]);
    assert.deepEqual(g.nodes.filter((n) => n.op === 'get_attr').map((n) => n.target), ['_tensor_constant0']);
    assert.equal(g.constants.get('_tensor_constant0'), bias);
    const add = g.calls.find((n) => n.target === 'aten::add.Tensor')!;
    assert.deepEqual(add.args[0], new ValueRef('max', 0));
    assert.deepEqual(g.output.args[0], [new ValueRef('add'), new ValueRef('max', 1)]);
    const x = randn(3, 5);
    const [v, i] = g.run([x]) as Tensor[];
    const [ev, ei] = x.max(1) as unknown as [Tensor, Tensor];
    close(v, ev.add(bias));
    assert.deepEqual(i.toArray(), ei.toArray());
    const [mv, mi] = g.run([randn(3, 5, { device: 'meta' })]) as Tensor[];
    assert.deepEqual([mv.device.type, mv.shape, mi.dtype.name], ['meta', [3], 'int64']);
  });

  it('makeFx captures a training step with its backward; replaying it gives the eager parameters', () => {
    manualSeed(13);
    const x = randn(8, 5), target = randn(8, 2);
    const w0 = randn(2, 5), b0 = randn(2);
    const step = (w: Tensor, b: Tensor, x: Tensor, t: Tensor) => {
      const loss = nn.mseLoss(linear(x, w, b), t);
      loss.backward();
      noGrad(() => {
        w.sub_(w.grad!.mul(0.1));
        b.sub_(b.grad!.mul(0.1));
      });
      w.grad = null;
      b.grad = null;
      return loss;
    };
    const g = makeFx(step, { inputNames: ['w', 'b', 'x', 't'] })(
      w0.clone().requiresGrad_(),
      b0.clone().requiresGrad_(),
      x,
      target,
    );
    const ops = targets(g);
    assert.ok(ops.includes('aten::mm'), 'the weight gradient product of the backward');
    assert.ok(ops.includes('aten::ones'), 'the engine seeds the backward with ones');
    assert.deepEqual(ops.filter((t) => t === 'aten::sub_.Tensor').length, 2);
    assert.equal(g.nodes.filter((n) => n.op === 'get_attr').length, 0, 'gradients were recognised as graph values');
    const we = w0.clone().requiresGrad_(), be = b0.clone().requiresGrad_();
    const wr = w0.clone(), br = b0.clone();
    for (let i = 0; i < 4; i++) {
      const le = step(we, be, x, target);
      const lr = g.run([wr, br, x, target]) as Tensor;
      close(lr, le.detach());
    }
    close(wr, we.detach());
    close(br, be.detach());
  });

  it('captures from shapes alone in fake mode, leaving the inputs untouched', () => {
    manualSeed(15);
    const x = randn(6, 3), target = randn(6, 2), w0 = randn(2, 3), b0 = randn(2);
    const step = (w: Tensor, b: Tensor, x: Tensor, t: Tensor) => {
      const loss = nn.mseLoss(linear(x, w, b), t);
      loss.backward();
      noGrad(() => w.sub_(w.grad!.mul(0.5)));
      w.grad = null;
      b.grad = null;
      return loss;
    };
    const w = w0.clone().requiresGrad_(), b = b0.clone().requiresGrad_();
    const fake = makeFx(step, { tracingMode: 'fake' })(w, b, x, target);
    const real = makeFx(step)(w0.clone().requiresGrad_(), b0.clone().requiresGrad_(), x, target);
    assert.deepEqual(targets(fake), targets(real));
    assert.deepEqual(fake.calls.map((n) => n.meta), real.calls.map((n) => n.meta));
    assert.deepEqual(w.toArray(), w0.toArray(), 'the fake step did not update the real parameter');
    assert.equal(w.grad, null);
    const wr = w0.clone(), we = w0.clone().requiresGrad_(), be = b0.clone().requiresGrad_();
    fake.run([wr, b0.clone(), x, target]);
    step(we, be, x, target);
    close(wr, we.detach());
    assert.throws(() => trace((x) => x, [x], { tracingMode: 'fake', level: 'pre-autograd' }), TypeError);
  });

  it('round-trips through JSON', () => {
    manualSeed(14);
    const scale = tensor([2, -1, 0.5], { dtype: 'float64' });
    const g = trace((x) => x.mul(scale).clamp(-Infinity, 1.5).sum(0, false, { dtype: 'float32' }), [
      randn(4, 3, { dtype: 'float64' }),
    ]);
    const text = JSON.stringify(g.toJSON());
    const back = Graph.fromJSON(text);
    assert.equal(back.print(), g.print());
    assert.deepEqual(JSON.parse(JSON.stringify(back.toJSON())), JSON.parse(text));
    const x = randn(4, 3, { dtype: 'float64' });
    const out = back.run([x]) as Tensor;
    assert.equal(out.dtype.name, 'float32');
    close(out, g.run([x]) as Tensor);
    assert.throws(() => Graph.fromJSON('{"format":"other"}'), ValueError);
    const bad = JSON.parse(text);
    bad.nodes.find((n: { op: string }) => n.op === 'call_function').target = 'aten::no_such_op';
    assert.throws(
      () => Graph.fromJSON(bad),
      (e) => e instanceof RuntimeError && /unknown operator aten::no_such_op/.test(e.message),
    );
  });

  it('removes dead code but keeps mutations', () => {
    const g = trace((x, y) => {
      x.neg(); // unused
      const z = x.add(1);
      y.mul_(2); // unused result, but a mutation
      return z;
    }, [randn(3), randn(3)]);
    assert.deepEqual(targets(g), ['aten::neg', 'aten::add.Scalar', 'aten::mul_.Scalar']);
    assert.equal(g.eliminateDeadCode(), 1);
    assert.deepEqual(targets(g), ['aten::add.Scalar', 'aten::mul_.Scalar']);
    const x = tensor([1, 2, 3], { dtype: 'float32' }), y = tensor([1, 1, 1], { dtype: 'float32' });
    assert.deepEqual((g.run([x, y]) as Tensor).toArray(), [2, 3, 4]);
    assert.deepEqual(y.toArray(), [2, 2, 2]);
  });

  it('merges common subexpressions, except random calls and reads across a mutation', () => {
    const g = trace((x) => {
      const a = x.mul(x).add(x.mul(x)); // the second mul is the first
      const r = x.add(randn(3)).add(x.add(randn(3))); // random: kept
      const before = x.exp();
      x.add_(1);
      const after = x.exp(); // x changed: not the same value
      return [a, r, before, after];
    }, [randn(3)]);
    const n = g.calls.length;
    assert.equal(g.eliminateCommonSubexpressions(), 1);
    assert.equal(g.calls.length, n - 1);
    assert.equal(g.calls.filter((c) => c.target === 'aten::exp').length, 2);
    assert.equal(g.calls.filter((c) => c.target === 'aten::randn').length, 2);
    g.eliminateDeadCode();
    const x = tensor([0.5, -1, 2], { dtype: 'float32' });
    const [a, , before, after] = g.run([x.clone()]) as Tensor[];
    close(a, x.mul(x).mul(2));
    close(before, x.exp());
    close(after, x.add(1).exp());
  });

  it('checks its arguments', () => {
    assert.throws(() => trace(42 as never, []), TypeError);
    assert.throws(() => trace((x) => x, [3 as never]), /example input 0 must be a live Tensor/);
    assert.throws(() => trace((x) => x, [randn(2)], { level: 'jit' as never }), TypeError);
    assert.throws(() => trace((x) => x, [randn(2)], { inputNames: ['not valid'] }), TypeError);
    const g = trace((x) => x.neg(), [randn(2)]);
    assert.throws(() => g.run([]), /expected 1 inputs, got 0/);
    assert.throws(() => g.run([7]), /must be a live Tensor/);
    assert.throws(() =>
      trace(() => {
        throw new RangeError('inside');
      }, []), RangeError);
    assert.equal(localDispatchKeySet().included.has(DispatchKey.Python), false, 'a throwing fn leaves no mode behind');
    assert.deepEqual((g.run([tensor([1, -2], { dtype: 'float32' })]) as Tensor).toArray(), [-1, 2]);
  });
});
