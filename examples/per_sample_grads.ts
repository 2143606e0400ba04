/**
 * Per-sample gradients of a small MLP with `vmap(func.grad(loss))`, checked against a loop of single-sample
 * backward passes. Prints the largest difference (it is at rounding level).
 *
 * Run: `deno run -A examples/per_sample_grads.ts` or `bun examples/per_sample_grads.ts`.
 *
 * @module
 */
import { crossEntropy, func, manualSeed, randn, type Tensor, tensor, vmap } from '../mod.ts';

manualSeed(0);
const params = [randn([16, 8]), randn([16]), randn([3, 16])];
const xs = randn([32, 8]);
const ys = tensor(Array.from({ length: 32 }, (_, i) => i % 3));

/** The loss of one sample (x: [8], y: a class index). */
function loss(p: Tensor[], x: Tensor, y: Tensor): Tensor {
  const hidden = p[0].matmul(x).add(p[1]).relu();
  return crossEntropy(p[2].matmul(hidden).unsqueeze(0), y.unsqueeze(0));
}

// One call: a gradient per sample for every parameter, [32, ...parameter shape].
const perSample = vmap(func.grad(loss), { inDims: [null, 0, 0] })(params, xs, ys) as Tensor[];

// The same with a loop of backward passes.
let maxDiff = 0;
for (let i = 0; i < 32; i++) {
  const leaves = params.map((p) => p.detach().requiresGrad_(true));
  loss(leaves, xs.select(0, i), ys.select(0, i)).backward();
  leaves.forEach((leaf, j) => {
    const diff = perSample[j].select(0, i).sub(leaf.grad!).abs().max().item() as number;
    maxDiff = Math.max(maxDiff, diff);
  });
}
console.log(`per-sample gradient shapes: ${perSample.map((g) => `[${g.shape.join(', ')}]`).join(' ')}`);
console.log(`largest difference from the loop of backward passes: ${maxDiff.toExponential(2)}`);
if (!(maxDiff < 1e-4)) throw new Error('per-sample gradients differ from the loop');
