/**
 * autocast on CPU: a `linear` layer (batch 64, 256 → 256) in float32 against the same call under
 * `autocast({ deviceType: 'cpu' })` (bfloat16 gemm, including the casts of the input and the cached weight), a
 * bfloat16 `mm` on tensors already in bfloat16, and what the AutocastCPU kernels cost a call outside a region
 * (the key stays excluded there, so a tiny `mm` takes the same table slot as without them).
 *
 * Run: `deno run -A bench/autocast.bench.ts` or `bun bench/autocast.bench.ts`.
 *
 * @module
 */
import { autocast, bfloat16, linear, manualSeed, mm, randn, registerAutocast, scope } from '../mod.ts';
import { bench, do_not_optimize, group, runAndReport, smokeSize } from './_report.ts';

registerAutocast();
manualSeed(0);
const n = smokeSize(256, 8);
const x = randn([64, n]), w = randn([n, n]).requiresGrad_(), b16x = x.to(bfloat16), b16w = w.detach().to(bfloat16);
const one = randn([1, 1]);

const check = autocast({ deviceType: 'cpu' }, () => linear(x, w));
if (check.dtype !== bfloat16) throw new Error(`autocast linear gave ${check.dtype}`);

group(`linear [64, ${n}] x [${n}, ${n}]`, () => {
  bench('float32', () => scope(() => do_not_optimize(linear(x, w))));
  bench('autocast bfloat16', () => scope(() => autocast({ deviceType: 'cpu' }, () => do_not_optimize(linear(x, w)))));
  bench('bfloat16 inputs, no autocast', () => scope(() => do_not_optimize(linear(b16x, b16w))));
});
group('outside a region', () => {
  bench('mm 1x1 (autocast registered)', () => scope(() => do_not_optimize(mm(one, one))));
});

await runAndReport('autocast', (figures) => {
  const f32 = figures.get('float32')?.p50_ns, amp = figures.get('autocast bfloat16')?.p50_ns;
  const raw = figures.get('bfloat16 inputs, no autocast')?.p50_ns;
  const table = [{
    case: `linear [64, ${n}] x [${n}, ${n}]`,
    'float32 p50 (us)': f32 === undefined ? NaN : Number((f32 / 1e3).toFixed(1)),
    'autocast p50 (us)': amp === undefined ? NaN : Number((amp / 1e3).toFixed(1)),
    'bf16 inputs p50 (us)': raw === undefined ? NaN : Number((raw / 1e3).toFixed(1)),
    'autocast / float32': f32 && amp ? Number((amp / f32).toFixed(2)) : NaN,
  }];
  console.table(table);
  return { table, mm_1x1_outside_region_p50_ns: figures.get('mm 1x1 (autocast registered)')?.p50_ns };
});
