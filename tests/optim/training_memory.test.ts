// A training loop of 10,000 tiny steps (forward, loss, backward, optimizer step, zeroGrad, each step in a
// scope) leaves exactly as many live tensors as it found, and still learns. Adam, whose state is larger, runs
// a shorter loop, to keep the file well within its time budget.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, memoryStats, noGrad, scope, tensor } from '../../mod.ts';
import { Linear, mseLoss } from '../../core/nn/mod.ts';
import { Adam, type Optimizer, SGD } from '../../core/optim/mod.ts';

describe('training memory', () => {
  for (const [kind, steps] of [['SGD with momentum', 10_000], ['Adam with amsgrad', 2_000]] as const) {
    it(`${kind}: ${steps} steps keep liveTensors at its baseline`, () => {
      manualSeed(0);
      const baseline = memoryStats().liveTensors;
      // y = 2 x0 - 3 x1 + 0.5
      const x = tensor([[1, 0], [0, 1], [1, 1], [-1, 2]], { dtype: 'float32' });
      const y = tensor([[2.5], [-2.5], [-0.5], [-7.5]], { dtype: 'float32' });
      const model = new Linear(2, 1);
      const optimizer: Optimizer<object> = kind === 'SGD with momentum'
        ? new SGD(model.parameters(), { lr: 0.05, momentum: 0.9 })
        : new Adam(model.parameters(), { lr: 0.05, amsgrad: true });
      let afterFirstStep = -1;
      let firstLoss = NaN, lastLoss = NaN;
      for (let step = 0; step < steps; step++) {
        const loss = scope(() => {
          const l = mseLoss(model.call(x), y);
          l.backward();
          optimizer.step();
          optimizer.zeroGrad();
          return l.item() as number;
        });
        if (step === 0) {
          firstLoss = loss;
          afterFirstStep = memoryStats().liveTensors;
        }
        lastLoss = loss;
      }
      assert.equal(memoryStats().liveTensors, afterFirstStep, 'flat across steps');
      assert.ok(lastLoss < 1e-4 * firstLoss, `loss ${firstLoss} → ${lastLoss}`);
      noGrad(() => assert.ok(Math.abs((model.weight.toArray()[0] as number) - 2) < 1e-2));
      optimizer.dispose();
      model.dispose();
      x.dispose();
      y.dispose();
      assert.equal(memoryStats().liveTensors, baseline, 'back to the baseline');
    });
  }
});
