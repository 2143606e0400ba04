// The program examples/workers/main.ts runs in a worker (proxy mode): a model and its training loop.
import { crossEntropy, manualSeed, nn, optim, scope, type Tensor } from '../../mod.ts';

let model: nn.Sequential | undefined;
let opt: optim.Adam | undefined;

/** Builds the model here; the caller gets a handle to it. */
export function init(seed: number): nn.Sequential {
  manualSeed(seed);
  model = new nn.Sequential(new nn.Linear(4, 32), new nn.ReLU(), new nn.Linear(32, 3));
  opt = new optim.Adam(model.parameters(), { lr: 1e-2 });
  return model;
}

/** Trains for `steps` steps on (x, y), which view the caller's memory; returns the last loss. */
export function train(x: Tensor, y: Tensor, steps: number): number {
  let loss = 0;
  for (let i = 0; i < steps; i++) {
    loss = scope(() => {
      const l = crossEntropy(model!.forward(x), y);
      opt!.zeroGrad();
      l.backward();
      opt!.step();
      return l.item() as number;
    });
  }
  return loss;
}
