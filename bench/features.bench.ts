/**
 * Cost of the dispatcher features (core/features): off and on.
 *
 * - Off: the same small operator calls are measured in fresh processes of the same runtime, alternately without
 *   the Profiler, Python and Tracer fallbacks and with them registered but none of their keys in any keyset
 *   (medians of the per-process medians); the ratio must be 1 within noise.
 * - On: 100 small calls under a profiler, under a transparent dispatch mode, under FlopCounterMode, against
 *   the same 100 calls with everything off; capture of a 20-operator function; replay of that graph against
 *   running it eagerly.
 *
 * Run: `deno run -A bench/features.bench.ts` or `bun bench/features.bench.ts`.
 *
 * @module
 */
import { bench, do_not_optimize, group, measure, summary } from 'mitata';
import { spawnSync } from 'node:child_process';
import process from 'node:process';
import {
  DispatchMode,
  FlopCounterMode,
  profiler,
  randn,
  registerProfilerFallback,
  registerPythonFallback,
  registerTracerFallback,
  scope,
  type Tensor,
  trace,
} from '../mod.ts';
import { type BenchFigure, runAndReport } from './_report.ts';

const a = randn(1), b = randn(1);
const m = randn(4, 4);

function addOnce(): void {
  a.add(b).dispose();
}
function hundredAdds(): void {
  for (let i = 0; i < 100; i++) a.add(b).dispose();
}
function hundredMms(): void {
  for (let i = 0; i < 100; i++) m.mm(m).dispose();
}

// A chain of 20 small operators: the replay benchmark's function.
function chain(x: Tensor, y: Tensor): Tensor {
  let z = x.add(y);
  for (let i = 0; i < 6; i++) z = z.mul(y).add(x).relu();
  return z.neg();
}

// ---- off: separate processes, without and with the fallbacks registered ---------------------------------
const PHASE_ENV = 'SY_FEATURES_BENCH_PHASE';
const phase = process.env[PHASE_ENV];
if (phase !== undefined) {
  if (phase === 'registered') {
    registerProfilerFallback();
    registerPythonFallback();
    registerTracerFallback();
  }
  const add = (await measure(addOnce)).p50;
  const hundred = (await measure(hundredAdds)).p50;
  console.log(JSON.stringify({ add, hundred }));
  process.exit(0);
}

function median(xs: number[]): number {
  const s = xs.slice().sort((p, q) => p - q);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function measurePhase(which: 'baseline' | 'registered'): { add: number; hundred: number } {
  const script = new URL(import.meta.url).pathname;
  const isDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
  const args = isDeno ? ['run', '-A', '--no-check', script] : [script];
  const out = spawnSync(process.execPath, args, { env: { ...process.env, [PHASE_ENV]: which }, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`features bench phase ${which} failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').pop()!);
}

const ROUNDS = 4;
const phases: Record<'baseline' | 'registered', Array<{ add: number; hundred: number }>> = {
  baseline: [],
  registered: [],
};
for (let r = 0; r < ROUNDS; r++) {
  for (const which of r % 2 === 0 ? ['baseline', 'registered'] as const : ['registered', 'baseline'] as const) {
    phases[which].push(measurePhase(which));
  }
}
const off = {
  baselineAdd: median(phases.baseline.map((p) => p.add)),
  registeredAdd: median(phases.registered.map((p) => p.add)),
  baselineHundred: median(phases.baseline.map((p) => p.hundred)),
  registeredHundred: median(phases.registered.map((p) => p.hundred)),
};

registerProfilerFallback();
registerPythonFallback();
registerTracerFallback();

const x = randn(16), y = randn(16);
const graph = trace(chain, [x, y]);

const OFF_100 = '100 adds, all features off';
summary(() => {
  group('100 adds of 1-element tensors', () => {
    bench(OFF_100, () => hundredAdds());
    bench('100 adds under a profiler', () => {
      using _p = profiler();
      hundredAdds();
    });
    const transparent = new (class extends DispatchMode {})();
    bench('100 adds under a transparent dispatch mode', () => transparent.run(hundredAdds));
  });
});
summary(() => {
  group('100 mm of 4x4', () => {
    bench('100 mm, off', () => hundredMms());
    bench('100 mm under FlopCounterMode', () => new FlopCounterMode().run(hundredMms));
  });
});
bench('trace() of a 20-operator function', () => do_not_optimize(trace(chain, [x, y])));
summary(() => {
  group('a 20-operator function on 16-element tensors', () => {
    bench('eager', () => scope(() => do_not_optimize(chain(x, y))));
    bench('graph replay', () => scope(() => do_not_optimize(graph.run([x, y]))));
  });
});

await runAndReport('features', (f: Map<string, BenchFigure>) => {
  const get = (name: string) => f.get(name)!.p50_ns;
  const off100 = get(OFF_100);
  return {
    off_processes_per_phase: ROUNDS,
    baseline_add_p50_ns: off.baselineAdd,
    registered_off_add_p50_ns: off.registeredAdd,
    off_over_baseline_add: Number((off.registeredAdd / off.baselineAdd).toFixed(3)),
    off_over_baseline_100_adds: Number((off.registeredHundred / off.baselineHundred).toFixed(3)),
    profiler_on_ns_per_call: Number(((get('100 adds under a profiler') - off100) / 100).toFixed(1)),
    mode_on_ns_per_call: Number(((get('100 adds under a transparent dispatch mode') - off100) / 100).toFixed(1)),
    flop_counter_on_ns_per_call: Number(((get('100 mm under FlopCounterMode') - get('100 mm, off')) / 100).toFixed(1)),
    trace_20_ops_us: Number((get('trace() of a 20-operator function') / 1000).toFixed(2)),
    replay_over_eager: Number((get('graph replay') / get('eager')).toFixed(3)),
  };
});
