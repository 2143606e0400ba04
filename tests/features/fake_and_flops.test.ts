// FakeTensorMode (shapes, dtypes and memory on Meta) and FlopCounterMode (PyTorch's FLOP formulas).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bmm,
  FakeTensorMode,
  FlopCounterMode,
  formatFlops,
  inferenceMode,
  linear,
  manualSeed,
  matmul,
  mmFlop,
  nn,
  randn,
  RuntimeError,
  tensor,
} from '../../mod.ts';

describe('FakeTensorMode', () => {
  it('runs a model for shapes, dtypes and memory without computing', () => {
    manualSeed(6);
    const model = new nn.Sequential(new nn.Linear(20, 30), new nn.ReLU(), new nn.Linear(30, 5));
    const x = randn(7, 20);
    const mode = new FakeTensorMode();
    const y = mode.run(() => model.forward(x));
    assert.deepEqual(y.shape, [7, 5]);
    assert.equal(y.dtype.name, 'float32');
    assert.equal(y.device.type, 'meta');
    assert.equal(String(mode.deviceOf(y)), 'cpu', 'the device it stands for');
    assert.throws(() => y.toArray(), /meta tensor/);
    // Each output storage counted once: addmm 7x30, relu 7x30, addmm 7x5 (float32); the transposed weights are views.
    const perOp = mode.bytesByOperator();
    assert.equal(mode.allocatedBytes, (7 * 30 + 7 * 30 + 7 * 5) * 4, JSON.stringify([...perOp]));
    assert.equal(perOp.get('aten::relu'), 7 * 30 * 4);
    // The parameters were not touched and the real model still computes.
    assert.equal(model.forward(x).device.type, 'cpu');
  });

  it("keeps the geometry of views, makes factories fake, and reports shape errors in PyTorch's words", () => {
    const mode = new FakeTensorMode();
    const base = randn(4, 6);
    const view = base.t().narrow(0, 1, 3);
    const fake = mode.fromTensor(view);
    assert.deepEqual([fake.shape, fake.stride(), fake.storageOffset], [[3, 4], [1, 6], 1]);
    assert.equal(mode.fromTensor(view), fake, 'made once per tensor');
    const made = mode.run(() => randn(3, 5, { dtype: 'float64' }).sum(1));
    assert.deepEqual([made.shape, made.dtype.name, made.device.type], [[3], 'float64', 'meta']);
    assert.equal(String(mode.deviceOf(made)), 'cpu');
    assert.throws(
      () => mode.run(() => randn(2, 3).mm(randn(4, 5))),
      (e) => e instanceof RuntimeError && /mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)/.test(e.message),
    );
    assert.throws(() => mode.fromTensor({} as never), TypeError);
    assert.deepEqual(randn(2).relu().device.type, 'cpu', 'outside the mode nothing is fake');
  });
});

describe('FlopCounterMode', () => {
  it("counts PyTorch's formulas for mm, addmm and bmm", () => {
    const counter = new FlopCounterMode();
    counter.run(() => {
      randn(8, 16).mm(randn(16, 4)); // 2*8*16*4
      bmm(randn(3, 5, 7), randn(3, 7, 2)); // 2*3*5*7*2
      randn(3).add(1).relu(); // elementwise: not counted by default
    });
    assert.equal(mmFlop([8, 16], [16, 4]), 1024);
    const counts = counter.getFlopCounts().Global;
    assert.deepEqual(counts, { 'aten::mm': 1024, 'aten::bmm': 420 });
    assert.equal(counter.getTotalFlops(), 1444);
  });

  it('counts forward and backward of a linear layer: three products', () => {
    manualSeed(7);
    const x = randn(8, 16, { requiresGrad: true }), w = randn(4, 16, { requiresGrad: true });
    const b = randn(4, { requiresGrad: true });
    const counter = new FlopCounterMode();
    counter.run(() => linear(x, w, b).sum().backward());
    const fwd = 2 * 8 * 16 * 4;
    assert.equal(counter.getTotalFlops(), 3 * fwd, JSON.stringify(counter.getFlopCounts()));
    assert.equal(counter.getFlopCounts().Global['aten::addmm'], fwd);
    assert.equal(counter.getFlopCounts().Global['aten::mm'], 2 * fwd);
  });

  it('counts composite products that reach the mode whole, and elementwise ops on request', () => {
    using _inference = inferenceMode();
    const counter = new FlopCounterMode({ countElementwise: true });
    counter.run(() => {
      linear(randn(2, 3, 8), randn(5, 8)); // composite seen whole: 2 * (2*3*5) * 8
      matmul(randn(4, 6, 7), randn(7, 3)); // 2 * (4*6*3) * 7
      randn(10).add(randn(10)).relu(); // 10 + 10
    });
    const g = counter.getFlopCounts().Global;
    assert.equal(g['aten::linear'], 2 * 30 * 8);
    assert.equal(g['aten::matmul'], 2 * 72 * 7);
    assert.equal(g['aten::add'], 10);
    assert.equal(g['aten::relu'], 10);
    assert.equal(g['aten::mm'], undefined, 'the parts of a counted composite run below the mode');
  });

  it("takes custom formulas, prints PyTorch's table and resets", () => {
    const counter = new FlopCounterMode({
      customMapping: { 'aten::relu': (_a, _k, out) => 7 * (out as { numel: number }).numel },
    });
    counter.run(() => tensor([1, -1, 2], { dtype: 'float32' }).relu());
    assert.equal(counter.getFlopCounts().Global['aten::relu'], 21);
    const table = counter.getTable().split('\n');
    assert.match(table[0], /^Module\s+FLOP\s+% Total$/);
    assert.match(table[2], /^Global\s+21\s+100\.00%$/);
    assert.match(table[3], /^ - aten::relu\s+21\s+100\.00%$/);
    counter.reset();
    assert.equal(counter.getTotalFlops(), 0);
    assert.equal(formatFlops(1048576), '1.049M');
    assert.equal(formatFlops(999), '999');
    assert.equal(formatFlops(2.5e12), '2.500T');
    assert.throws(() => new FlopCounterMode({ customMapping: { 'aten::mm': 3 as never } }), TypeError);
  });
});
