/**
 * WebGPU sort and scan benchmarks: `sort` of 1M float32 with indices (one line, a bitonic network of 210 steps)
 * and of 1024 lines of 1024, `topk(k = 10)` of 1M, and `cumsum` of 1M, each beside the CPU kernel on the same data
 * in the same run. Every timed iteration ends with a readback of one element, so the figures are GPU time plus
 * submission. On a software adapter (llvmpipe) the absolute figures measure a CPU emulation: compare the ratios.
 *
 * Run: `deno run -A bench/webgpu_sort.bench.ts` (Bun: with `bun-webgpu` installed).
 *
 * @module
 */
import { bench, do_not_optimize, group, runAndReport, smokeSize } from './_report.ts';
import { initWebGPU, manualSeed, rand, type Tensor } from '../mod.ts';

const N = smokeSize(1 << 20, 1000);
const ROWS = smokeSize(1024, 7), COLS = smokeSize(1024, 33);

const unavailable = await initWebGPU().then(() => undefined, (e: Error) => e.message);
if (unavailable === undefined) await benchmarks();
else console.log(`webgpu sort benchmarks skipped: ${unavailable}`);

async function benchmarks(): Promise<void> {
  manualSeed(0);
  const x = rand([N]), m = rand([ROWS, COLS]);
  const gx = x.to({ device: 'webgpu' }), gm = m.to({ device: 'webgpu' });

  /** Waits for the GPU: reads one element of `t` back, then frees the results. */
  async function finish(t: Tensor, ...rest: Tensor[]): Promise<void> {
    const one = t.reshape([-1]).narrow(0, 0, 1);
    do_not_optimize(await one.itemAsync());
    one.dispose();
    t.dispose();
    for (const r of rest) r.dispose();
  }

  group('sort 1M float32 with indices', () => {
    bench('webgpu sort 1M', async () => {
      const [v, i] = gx.sort();
      await finish(v, i);
    });
    bench('cpu sort 1M', () => {
      const [v, i] = x.sort();
      do_not_optimize(v);
      v.dispose();
      i.dispose();
    });
  });
  group('sort 1024 lines of 1024', () => {
    bench('webgpu sort rows', async () => {
      const [v, i] = gm.sort(1);
      await finish(v, i);
    });
    bench('cpu sort rows', () => {
      const [v, i] = m.sort(1);
      do_not_optimize(v);
      v.dispose();
      i.dispose();
    });
  });
  group('topk 10 of 1M', () => {
    bench('webgpu topk', async () => {
      const [v, i] = gx.topk(10);
      await finish(v, i);
    });
    bench('cpu topk', () => {
      const [v, i] = x.topk(10);
      do_not_optimize(v);
      v.dispose();
      i.dispose();
    });
  });
  group('cumsum 1M float32', () => {
    bench('webgpu cumsum', async () => {
      await finish(gx.cumsum(0));
    });
    bench('cpu cumsum', () => {
      const y = x.cumsum(0);
      do_not_optimize(y);
      y.dispose();
    });
  });

  await runAndReport('webgpu_sort', (f) => {
    const p50 = (name: string) => f.get(name)!.p50_ns / 1e6;
    const ratio = (gpu: string, cpu: string) => Number((p50(cpu) / p50(gpu)).toFixed(2));
    return {
      sort_1m_webgpu_p50_ms: p50('webgpu sort 1M'),
      sort_1m_cpu_over_webgpu: ratio('webgpu sort 1M', 'cpu sort 1M'),
      sort_rows_webgpu_p50_ms: p50('webgpu sort rows'),
      sort_rows_cpu_over_webgpu: ratio('webgpu sort rows', 'cpu sort rows'),
      topk_webgpu_p50_ms: p50('webgpu topk'),
      topk_cpu_over_webgpu: ratio('webgpu topk', 'cpu topk'),
      cumsum_webgpu_p50_ms: p50('webgpu cumsum'),
      cumsum_cpu_over_webgpu: ratio('webgpu cumsum', 'cpu cumsum'),
    };
  });
  for (const t of [x, m, gx, gm]) t.dispose();
}
