/**
 * Cost of the dispatcher features (core/features): off and on.
 *
 * - Off: 100,000 small operator calls, alternately without and with fallbacks at Profiler, Python and Tracer
 *   (none of their keys in any keyset), ten rounds in one process; the ratio of the medians must be 1 within noise.
 * - On: 100 small calls under a profiler, under a transparent dispatch mode, under FlopCounterMode, against
 *   the same 100 calls with everything off; capture of a 20-operator function; replay of that graph against
 *   running it eagerly.
 * - functionalize: off, the same adds alternately without and with the Functionalize key's kernel registered
 *   (no plain tensor holds the key); on, 100 adds and 100 in-place adds of functional tensors against eager.
 *
 * Run: `deno run -A bench/features.bench.ts` or `bun bench/features.bench.ts`.
 *
 * @module
 */
import {
  DispatchKey,
  DispatchKeySet,
  DispatchMode,
  FlopCounterMode,
  functionalize,
  Library,
  profiler,
  randn,
  registerFunctionalize,
  registerProfilerFallback,
  registerPythonFallback,
  registerTracerFallback,
  scope,
  type Tensor,
  trace,
  unregisterFunctionalize,
} from '../mod.ts';
import { bench, type BenchFigure, do_not_optimize, group, runAndReport, smokeSize, summary } from './_report.ts';

const a = randn(1), b = randn(1);
const m = randn(4, 4);

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

// ---- off: in-process A/B, before the features register anything -------------------------------------------
// The same 100,000 adds, alternately without and with a boxed fallback at Profiler, Python and Tracer (stand-ins
// registered and deregistered through Library: the same change to every operator's table as the features'
// fallbacks), none of the keys in any keyset. Alternating in one process cancels JIT and heap drift.
function nsPerAdd(n: number): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) a.add(b).dispose();
  return ((performance.now() - t0) / n) * 1e6;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((p, q) => p - q);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const ROUNDS = smokeSize(10, 1), ADDS = smokeSize(100_000, 100);
nsPerAdd(2 * ADDS); // warm-up
const offRuns = { without: [] as number[], registered: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  offRuns.without.push(nsPerAdd(ADDS));
  const libs = [DispatchKey.Profiler, DispatchKey.Python, DispatchKey.Tracer].map((k) => {
    const below = DispatchKeySet.fullAfter(k);
    return new Library('_', 'IMPL', k, { location: 'bench/features.bench.ts' })
      .fallback((op, ks, stack) => op.redispatchBoxed(ks.and(below), stack));
  });
  offRuns.registered.push(nsPerAdd(ADDS));
  for (const lib of libs) lib.dispose();
}
const off = { without: median(offRuns.without), registered: median(offRuns.registered) };

// functionalize off: the module registers its kernel on import; alternately without and with it.
const functionalizeOffRuns = { without: [] as number[], registered: [] as number[] };
// The order alternates between rounds, so that drift within a round favours neither side.
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? ['without', 'registered'] as const : ['registered', 'without'] as const;
  for (const side of order) {
    if (side === 'without') unregisterFunctionalize();
    else registerFunctionalize();
    functionalizeOffRuns[side].push(nsPerAdd(ADDS));
  }
}
registerFunctionalize();
const functionalizeOff = {
  without: median(functionalizeOffRuns.without),
  registered: median(functionalizeOffRuns.registered),
  // The fastest round of each side: on a loaded machine the least disturbed estimate of the same quantity.
  fastestRatio: Math.min(...functionalizeOffRuns.registered) / Math.min(...functionalizeOffRuns.without),
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
function hundredInPlaceAdds(x: Tensor, y: Tensor): Tensor {
  const z = x.mul(1);
  for (let i = 0; i < 100; i++) z.add_(y);
  return z;
}
const addsOf = (x: Tensor, y: Tensor) => {
  for (let i = 0; i < 100; i++) x.add(y).dispose();
};
summary(() => {
  group('functionalize: 100 small ops on 1-element tensors', () => {
    bench('100 adds, eager', () => addsOf(a, b));
    bench('100 adds inside functionalize', () => functionalize(addsOf)(a, b));
    bench('100 in-place adds, eager', () => hundredInPlaceAdds(a, b).dispose());
    bench('100 in-place adds inside functionalize', () => functionalize(hundredInPlaceAdds)(a, b).dispose());
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
    off_rounds: ROUNDS,
    off_without_fallbacks_ns_per_add: Number(off.without.toFixed(1)),
    off_with_fallbacks_ns_per_add: Number(off.registered.toFixed(1)),
    off_registered_over_without: Number((off.registered / off.without).toFixed(3)),
    profiler_on_ns_per_call: Number(((get('100 adds under a profiler') - off100) / 100).toFixed(1)),
    mode_on_ns_per_call: Number(((get('100 adds under a transparent dispatch mode') - off100) / 100).toFixed(1)),
    flop_counter_on_ns_per_call: Number(((get('100 mm under FlopCounterMode') - get('100 mm, off')) / 100).toFixed(1)),
    trace_20_ops_us: Number((get('trace() of a 20-operator function') / 1000).toFixed(2)),
    replay_over_eager: Number((get('graph replay') / get('eager')).toFixed(3)),
    functionalize_off_without_ns_per_add: Number(functionalizeOff.without.toFixed(1)),
    functionalize_off_registered_ns_per_add: Number(functionalizeOff.registered.toFixed(1)),
    functionalize_off_registered_over_without: Number(
      (functionalizeOff.registered / functionalizeOff.without).toFixed(3),
    ),
    functionalize_off_fastest_rounds_ratio: Number(functionalizeOff.fastestRatio.toFixed(3)),
    functionalize_on_ns_per_add: Number(
      ((get('100 adds inside functionalize') - get('100 adds, eager')) / 100).toFixed(1),
    ),
    functionalize_on_ns_per_inplace_add: Number(
      ((get('100 in-place adds inside functionalize') - get('100 in-place adds, eager')) / 100).toFixed(1),
    ),
  };
});
