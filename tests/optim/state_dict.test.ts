// Optimizer state dicts: PyTorch's structure and key names, round trips that continue the same trajectory,
// PyTorch-style input (0-d step tensors, float64 state, extra group keys), and load_state_dict's errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, memoryStats, randn, type Tensor, tensor } from '../../mod.ts';
import { Adagrad, Adam, type OptimizerStateDict, RMSprop, SGD, StepLR } from '../../core/optim/mod.ts';

function params(seed: number): Tensor[] {
  manualSeed(seed);
  return [randn([2, 3]), randn([3]), randn([4])].map((t) => t.requiresGrad_());
}

function setGrads(ps: Tensor[], seed: number): void {
  manualSeed(seed);
  for (const p of ps) {
    p.grad?.dispose();
    p.grad = randn(p.shape);
  }
}

function disposeAll(ps: Tensor[]): void {
  for (const p of ps) {
    p.grad?.dispose();
    p.dispose();
  }
}

describe('Optimizer.stateDict()', () => {
  it("has PyTorch's structure: state by parameter index, param_groups with snake_case keys and indices", () => {
    const ps = params(1);
    const adam = new Adam([{ params: [ps[0], ps[1]] }, { params: [ps[2]], lr: 0.5, amsgrad: true }], {
      weightDecay: 0.1,
    });
    setGrads(ps.slice(0, 2), 2);
    adam.step();
    const sd = adam.stateDict();
    assert.deepEqual(sd.param_groups, [
      { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.1, amsgrad: false, maximize: false, params: [0, 1] },
      { lr: 0.5, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.1, amsgrad: true, maximize: false, params: [2] },
    ]);
    assert.deepEqual(Object.keys(sd.state), ['0', '1']);
    assert.deepEqual(Object.keys(sd.state[0]), ['step', 'exp_avg', 'exp_avg_sq']);
    assert.equal(sd.state[0].step, 1);
    assert.equal(sd.state[1].exp_avg, adam.state.get(ps[1])!.expAvg);
    // The groups in the dict are copies: changing them leaves the optimizer alone.
    (sd.param_groups[0].betas as number[])[0] = 0;
    assert.deepEqual(adam.paramGroups[0].betas, [0.9, 0.999]);
    adam.dispose();
    disposeAll(ps);
  });

  it("a scheduler's initial_lr and the other optimizers' state use PyTorch's names", () => {
    const ps = params(3);
    const sgd = new SGD(ps, 0.1, { momentum: 0.9 });
    new StepLR(sgd, 2);
    setGrads(ps, 4);
    sgd.step();
    const sd = sgd.stateDict();
    assert.equal(sd.param_groups[0].initial_lr, 0.1);
    assert.deepEqual(Object.keys(sd.state[2]), ['momentum_buffer']);
    const rms = new RMSprop(ps, { centered: true, momentum: 0.5 });
    rms.step();
    assert.deepEqual(Object.keys(rms.stateDict().state[0]), ['step', 'square_avg', 'grad_avg', 'momentum_buffer']);
    const adagrad = new Adagrad(ps, { lrDecay: 0.1 });
    assert.deepEqual(Object.keys(adagrad.stateDict().state[1]), ['step', 'sum']);
    assert.equal(adagrad.stateDict().param_groups[0].lr_decay, 0.1);
    for (const o of [sgd, rms, adagrad]) o.dispose();
    disposeAll(ps);
  });
});

describe('Optimizer.loadStateDict()', () => {
  for (
    const [name, make] of [
      ['Adam (amsgrad)', (ps: Tensor[]) => new Adam(ps, { lr: 0.05, amsgrad: true })],
      ['SGD (nesterov)', (ps: Tensor[]) => new SGD(ps, 0.05, { momentum: 0.9, nesterov: true })],
      ['RMSprop (centered, momentum)', (ps: Tensor[]) => new RMSprop(ps, { centered: true, momentum: 0.3 })],
      ['Adagrad (lr_decay)', (ps: Tensor[]) => new Adagrad(ps, { lr: 0.1, lrDecay: 0.01 })],
    ] as const
  ) {
    it(`${name}: a copy loaded mid-training continues the same trajectory, with its own state tensors`, () => {
      const a = params(5), b = params(5);
      const first = make(a);
      for (let step = 0; step < 3; step++) {
        setGrads(a, 10 + step);
        first.step();
      }
      for (let i = 0; i < a.length; i++) b[i].detach().copy_(a[i]);
      const second = make(b);
      second.paramGroups[0].lr = 123;
      const live = memoryStats().liveTensors;
      second.loadStateDict(first.stateDict());
      const stateTensors = [...first.state.values()].flatMap((s) =>
        Object.values(s)
      ).filter((v) => typeof v === 'object').length;
      const oldSecond = name.startsWith('Adagrad') ? a.length : 0; // Adagrad's sums existed and were freed
      assert.equal(memoryStats().liveTensors, live + stateTensors - oldSecond);
      assert.equal(second.paramGroups[0].lr, first.paramGroups[0].lr);
      for (const [p, s] of second.state) {
        assert.ok(b.includes(p));
        for (const v of Object.values(s)) {
          if (typeof v === 'object') {
            assert.ok(![...first.state.values()].some((f) => Object.values(f).includes(v)));
          }
        }
      }
      for (let step = 3; step < 6; step++) {
        setGrads(a, 10 + step);
        setGrads(b, 10 + step);
        first.step();
        second.step();
        a.forEach((p, i) => assert.deepEqual(b[i].toArray(), p.toArray(), `${name} step ${step} param ${i}`));
      }
      first.dispose();
      second.dispose();
      disposeAll([...a, ...b]);
    });
  }

  it('takes what PyTorch saves: a 0-d step tensor, float64 state for float32 params, extra group keys', () => {
    const p = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
    const adam = new Adam([p]);
    const expAvg = tensor([0.5, -0.5], { dtype: 'float64' });
    const expAvgSq = tensor([0.25, 0.25], { dtype: 'float64' });
    const step = tensor(7, { dtype: 'float32' });
    const saved: OptimizerStateDict = {
      state: { 0: { step, exp_avg: expAvg, exp_avg_sq: expAvgSq } },
      param_groups: [{
        lr: 0.01,
        betas: [0.8, 0.9],
        eps: 1e-8,
        weight_decay: 0,
        amsgrad: false,
        maximize: false,
        foreach: null,
        capturable: false,
        differentiable: false,
        fused: null,
        params: [0],
      }],
    };
    adam.loadStateDict(saved);
    const s = adam.state.get(p)!;
    assert.equal(s.step, 7);
    assert.equal(s.expAvg!.dtype.name, 'float32');
    assert.deepEqual(s.expAvg!.toArray(), [0.5, -0.5]);
    assert.deepEqual(adam.paramGroups[0].betas, [0.8, 0.9]);
    assert.equal((adam.paramGroups[0] as unknown as { capturable: boolean }).capturable, false);
    p.grad = tensor([1, 1], { dtype: 'float32' });
    adam.step();
    assert.equal(adam.state.get(p)!.step, 8);
    // The loaded tensors were copied: the caller still owns (and disposes) its own.
    for (const t of [expAvg, expAvgSq, step]) assert.equal(t.isDisposed, false);
    for (const t of [expAvg, expAvgSq, step]) t.dispose();
    adam.dispose();
    disposeAll([p]);
  });

  it("rejects mismatches with PyTorch's errors and leaves the optimizer as it was", () => {
    const ps = params(6);
    const adam = new Adam([{ params: ps.slice(0, 2) }, { params: [ps[2]] }]);
    setGrads(ps, 7);
    adam.step();
    const good = adam.stateDict();
    const before = JSON.stringify(adam.paramGroups.map((g) => ({ ...g, params: g.params.length })));
    const stateBefore = [...adam.state.values()].map((s) => s.expAvg);
    const other = new Adam([ps[0]]);
    assert.throws(
      () => other.loadStateDict(good),
      /^ValueError: loaded state dict has a different number of parameter groups$/,
    );
    const resized = { ...good, param_groups: [good.param_groups[1], good.param_groups[0]] };
    assert.throws(
      () => adam.loadStateDict(resized),
      /loaded state dict contains a parameter group that doesn't match the size of optimizer's group/,
    );
    const badLr = { ...good, param_groups: [{ ...good.param_groups[0], lr: -1 }, good.param_groups[1]] };
    assert.throws(() => adam.loadStateDict(badLr), /Invalid learning rate: -1/);
    const badType = { ...good, param_groups: [{ ...good.param_groups[0], amsgrad: 'yes' }, good.param_groups[1]] };
    assert.throws(() => adam.loadStateDict(badType), /argument 'amsgrad' must be bool, not str/);
    const wrongShape = tensor([1], { dtype: 'float32' });
    const badState = { ...good, state: { ...good.state, 1: { ...good.state[1], exp_avg: wrongShape } } };
    assert.throws(
      () => adam.loadStateDict(badState),
      /state 'exp_avg' of parameter 1 has shape \[1\], the parameter has shape \[3\]/,
    );
    const unknownIndex = { ...good, state: { ...good.state, 9: good.state[0] } };
    assert.throws(() => adam.loadStateDict(unknownIndex), /state for parameter 9, which no group holds/);
    assert.throws(() => adam.loadStateDict(null as never), /expected a state dict, got NoneType/);
    assert.equal(JSON.stringify(adam.paramGroups.map((g) => ({ ...g, params: g.params.length }))), before);
    assert.deepEqual([...adam.state.values()].map((s) => s.expAvg), stateBefore);
    assert.ok(stateBefore.every((t) => !t!.isDisposed));
    wrongShape.dispose();
    adam.dispose();
    other.dispose();
    disposeAll(ps);
  });
});
