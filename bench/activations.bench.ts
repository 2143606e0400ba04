/**
 * The activations with one-pass kernels (kernels_as/activation.ts) against their former decompositions
 * (core/ops/activation_composites.ts, 3-5 tensor passes through the dispatcher), on 1M float32 elements in the
 * same process: `leaky_relu`, `elu`, `softplus`, `mish`, `log_sigmoid`, `hardtanh`, and the losses
 * `smooth_l1_loss`, `huber_loss`, `binary_cross_entropy` (reduction mean: the elementwise kernel, then the mean).
 * Each pair's results are checked to agree before timing. The ratio stored is decomposition p50 / kernel p50.
 *
 * Run: `deno run -A bench/activations.bench.ts` or `bun bench/activations.bench.ts`.
 *
 * @module
 */
import {
  binaryCrossEntropy,
  elu,
  hardtanh,
  huberLoss,
  leakyRelu,
  logSigmoid,
  mish,
  rand,
  randn,
  scope,
  smoothL1Loss,
  softplus,
  type Tensor,
} from '../mod.ts';
import * as C from '../core/ops/activation_composites.ts';
import { bench, do_not_optimize, group, runAndReport, smokeSize } from './_report.ts';

const N = smokeSize(1 << 20, 1 << 10);
const x = randn([N]).mul(4);
const y = randn([N]).mul(4);
const p = rand([N]), q = rand([N]);

const cases: Record<string, { kernel: (t: Tensor) => Tensor; composite: (t: Tensor) => Tensor }> = {
  leaky_relu: { kernel: (t) => leakyRelu(t, 0.01), composite: (t) => C.leakyRelu(t, 0.01) },
  elu: { kernel: (t) => elu(t), composite: (t) => C.elu(t, 1, 1, 1) },
  softplus: { kernel: (t) => softplus(t), composite: (t) => C.softplus(t, 1, 20) },
  mish: { kernel: (t) => mish(t), composite: (t) => C.mish(t) },
  log_sigmoid: { kernel: (t) => logSigmoid(t), composite: (t) => C.logSigmoid(t) },
  hardtanh: { kernel: (t) => hardtanh(t), composite: (t) => C.hardtanh(t, -1, 1) },
  smooth_l1_loss: { kernel: (t) => smoothL1Loss(t, y), composite: (t) => C.smoothL1Loss(t, y, 1, 1) },
  huber_loss: { kernel: (t) => huberLoss(t, y), composite: (t) => C.huberLoss(t, y, 1, 1) },
  binary_cross_entropy: {
    kernel: () => binaryCrossEntropy(p, q),
    composite: () => C.binaryCrossEntropy(p, q, null, 1),
  },
};

for (const [name, c] of Object.entries(cases)) {
  scope(() => {
    const a = c.kernel(x).toArray() as number[], b = c.composite(x).toArray() as number[];
    for (let i = 0; i < a.length; i++) {
      if (Math.abs(a[i] - b[i]) > 1e-4 * (1 + Math.abs(b[i]))) throw new Error(`${name}[${i}]: ${a[i]} vs ${b[i]}`);
    }
  });
  group(`${name} [${N}] float32`, () => {
    bench(`${name}: kernel`, () => scope(() => do_not_optimize(c.kernel(x))));
    bench(`${name}: decomposition`, () => scope(() => do_not_optimize(c.composite(x))));
  });
}

await runAndReport('activations', (figures) => {
  const ratios: Record<string, number> = {};
  const rows: Array<Record<string, string | number>> = [];
  for (const name of Object.keys(cases)) {
    const k = figures.get(`${name}: kernel`)?.p50_ns, d = figures.get(`${name}: decomposition`)?.p50_ns;
    if (k === undefined || d === undefined) continue;
    ratios[name] = Number((d / k).toFixed(2));
    rows.push({
      op: name,
      'kernel p50 (us)': Number((k / 1e3).toFixed(1)),
      'decomposition p50 (us)': Number((d / 1e3).toFixed(1)),
      'decomposition / kernel': ratios[name],
    });
  }
  console.table(rows);
  return { elements: N, decomposition_over_kernel_p50: ratios, table: rows };
});
