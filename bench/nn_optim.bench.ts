/**
 * nn/optim benchmarks: one optimizer step over the parameters of a 784-256-10 MLP (203,530 float32 values,
 * fixed gradients) for each optimizer, as a ratio to plain SGD measured in the same run; `clipGradNorm_` over
 * those gradients; and safetensors `save`/`load` of a 16 MiB float32 tensor, as a ratio to copying the same
 * bytes into a preallocated buffer (`Uint8Array.prototype.set`), the least any serialiser must do (`save` also
 * allocates its output; `load` allocates from the tensor allocator, which reuses freed blocks).
 *
 * Run: `deno run -A bench/nn_optim.bench.ts` or `bun bench/nn_optim.bench.ts`.
 *
 * @module
 */
import { manualSeed, randn, safetensors, type Tensor } from '../mod.ts';
import { Linear, ReLU, Sequential, utils } from '../core/nn/mod.ts';
import { Adagrad, Adam, type Optimizer, RMSprop, SGD } from '../core/optim/mod.ts';
import { bench, do_not_optimize, group, runAndReport, summary } from './_report.ts';

manualSeed(0);
const model = new Sequential(new Linear(784, 256), new ReLU(), new Linear(256, 10));
const params = model.parameters();
for (const p of params) p.grad = randn(p.shape);

// deno-lint-ignore no-explicit-any
const OPTIMIZERS: Array<[string, () => Optimizer<any, any>]> = [
  ['SGD', () => new SGD(params, 1e-6)],
  ['SGD momentum', () => new SGD(params, 1e-6, { momentum: 0.9 })],
  ['Adam', () => new Adam(params, { lr: 1e-6 })],
  ['RMSprop', () => new RMSprop(params, { lr: 1e-6 })],
  ['RMSprop centered momentum', () => new RMSprop(params, { lr: 1e-6, centered: true, momentum: 0.9 })],
  ['Adagrad', () => new Adagrad(params, { lr: 1e-6 })],
];
const STEP = (name: string) => `${name} step, MLP 784-256-10`;
const optimizers: Array<{ dispose(): void }> = [];

summary(() => {
  group('optimizer step', () => {
    for (const [name, make] of OPTIMIZERS) {
      const optimizer = make();
      optimizers.push(optimizer);
      bench(STEP(name), () => optimizer.step());
    }
  });
});

const CLIP = 'clipGradNorm_, MLP 784-256-10 gradients';
bench(CLIP, () => utils.clipGradNorm_(params, 1e9).dispose());

const big: Tensor = randn([4096, 1024]);
const bytes = safetensors.save({ big });
const SAVE = 'safetensors.save, 16 MiB float32';
const LOAD = 'safetensors.load, 16 MiB float32';
const COPY = 'memcpy into a preallocated Uint8Array, 16 MiB (baseline)';
const scratch = new Uint8Array(bytes.length);
summary(() => {
  group('safetensors', () => {
    bench(COPY, () => do_not_optimize(scratch.set(bytes)));
    bench(SAVE, () => do_not_optimize(safetensors.save({ big })));
    bench(LOAD, () => {
      for (const t of safetensors.load(bytes).values()) t.dispose();
    });
  });
});

await runAndReport('nn_optim', (figures) => {
  const p50 = (name: string) => figures.get(name)?.p50_ns;
  const ratio = (name: string, baseline: string) => {
    const a = p50(name), b = p50(baseline);
    return a === undefined || b === undefined ? null : Number((a / b).toFixed(2));
  };
  return {
    step_p50_us: Object.fromEntries(
      OPTIMIZERS.map(([name]) => [name, Number(((p50(STEP(name)) ?? NaN) / 1e3).toFixed(1))]),
    ),
    step_ratio_to_sgd: Object.fromEntries(OPTIMIZERS.map(([name]) => [name, ratio(STEP(name), STEP('SGD'))])),
    clip_grad_norm_p50_us: Number(((p50(CLIP) ?? NaN) / 1e3).toFixed(1)),
    safetensors_ratio_to_copy: { save: ratio(SAVE, COPY), load: ratio(LOAD, COPY) },
    safetensors_load_GBps: Number((bytes.length / (p50(LOAD) ?? NaN)).toFixed(2)),
  };
});

for (const o of optimizers) o.dispose();
big.dispose();
model.dispose();
