// The program the workers benchmark runs in an attached worker (bench/workers_agents.bench.ts).
import { add, type Tensor, tensor } from '../mod.ts';

/** Returns a view of its argument: one tensor there and back, no element touched. */
export function echo(x: Tensor): Tensor {
  return x.view(x.shape as number[]);
}

/** Echoes a structured-clone copy (the baseline: what posting the data itself costs). */
export function echoCopy(data: Float32Array): Float32Array {
  return data;
}

/**
 * Median ns per tiny `add` (1 element, result disposed) over `batches` batches of `calls` calls, after a
 * warm-up of `warmMs` ms: measured the same way on both agents by the benchmark.
 */
export function timeTinyAdds(calls: number, batches: number, warmMs: number): number {
  const a = tensor(new Float32Array([1])), b = tensor(new Float32Array([2]));
  const end = performance.now() + warmMs;
  while (performance.now() < end) for (let i = 0; i < 1000; i++) add(a, b).dispose();
  const perCall: number[] = [];
  for (let k = 0; k < batches; k++) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) add(a, b).dispose();
    perCall.push(((performance.now() - t0) * 1e6) / calls);
  }
  a.dispose();
  b.dispose();
  perCall.sort((x, y) => x - y);
  return perCall[perCall.length >> 1];
}
