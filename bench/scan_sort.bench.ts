/**
 * The scan and sort kernels (kernels_as/scan_sort.ts) against plain JavaScript doing the same work on a typed
 * array in the same process: `cumsum` of 1M float32 (the JS loop accumulates in double, as the kernel does) and
 * `sort` of 1M float32 with indices (JS: an index array sorted by key with `Array.prototype.sort`, stable, as the
 * kernel is). Ratios are JS time / Switchyard time at the median.
 *
 * Run: `deno run -A bench/scan_sort.bench.ts` or `bun bench/scan_sort.bench.ts`.
 *
 * @module
 */
import { manualSeed, rand } from '../mod.ts';
import { bench, do_not_optimize, group, runAndReport, smokeSize } from './_report.ts';

const N = smokeSize(1 << 20, 1000);
manualSeed(0);
const x = rand([N]);
const host = Float32Array.from(x.toArray() as number[]);

group('cumsum 1M float32', () => {
  bench('switchyard cumsum', () => {
    const y = x.cumsum(0);
    do_not_optimize(y);
    y.dispose();
  });
  bench('js loop (double accumulator)', () => {
    const out = new Float32Array(N);
    let acc = 0;
    for (let i = 0; i < N; i++) {
      acc += host[i];
      out[i] = acc;
    }
    do_not_optimize(out);
  });
});

group('sort 1M float32 with indices', () => {
  bench('switchyard sort', () => {
    const [v, i] = x.sort();
    do_not_optimize(v);
    v.dispose();
    i.dispose();
  });
  bench('js index sort (Array.prototype.sort, stable)', () => {
    const idx = Array.from({ length: N }, (_, i) => i);
    idx.sort((a, b) => host[a] - host[b]);
    const values = new Float32Array(N);
    for (let i = 0; i < N; i++) values[i] = host[idx[i]];
    do_not_optimize(values);
  });
});

await runAndReport('scan_sort', (f) => {
  const ratio = (js: string, ours: string) => Number((f.get(js)!.p50_ns / f.get(ours)!.p50_ns).toFixed(2));
  return {
    cumsum_p50_ms: f.get('switchyard cumsum')!.p50_ns / 1e6,
    cumsum_js_over_ours: ratio('js loop (double accumulator)', 'switchyard cumsum'),
    sort_p50_ms: f.get('switchyard sort')!.p50_ns / 1e6,
    sort_js_over_ours: ratio('js index sort (Array.prototype.sort, stable)', 'switchyard sort'),
  };
});
x.dispose();
