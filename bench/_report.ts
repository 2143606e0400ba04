/**
 * Shared benchmark runner: runs the registered mitata benchmarks, prints mitata's table, and writes the
 * figures (nanoseconds per iteration) to `bench/results/<suite>-<runtime>.json` for comparison over time.
 *
 * @module
 */
import { type B, bench as mitataBench, run } from 'mitata';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';

export { type B, do_not_optimize, group, summary } from 'mitata';

/**
 * Smoke mode (`SWITCHYARD_BENCH_SMOKE=1`, used by `npm test`): each suite builds its inputs at small sizes (see
 * {@linkcode smokeSize}), runs its correctness checks, and calls every benchmark once instead of timing it; nothing is
 * written to `bench/results/`. It keeps the suites runnable without costing CI the minutes a real run takes.
 */
export const SMOKE: boolean = process.env.SWITCHYARD_BENCH_SMOKE === '1';

/** `full` in a real run, `small` in smoke mode. */
export function smokeSize<T>(full: T, small: T): T {
  return SMOKE ? small : full;
}

type BenchFn = Parameters<typeof mitataBench>[1];
const smokeQueue: Array<[string, BenchFn]> = [];

/**
 * mitata's `bench`, except in smoke mode, where the benchmark is queued and run once by {@linkcode runAndReport}.
 *
 * @example
 * ```ts
 * import { bench, runAndReport } from './_report.ts';
 * bench('noop', () => {});
 * await runAndReport('example');
 * ```
 */
export function bench(name: string, fn: BenchFn): B {
  if (!SMOKE) return mitataBench(name, fn);
  smokeQueue.push([name, fn]);
  const chain: Record<string, unknown> = {};
  for (const method of ['baseline', 'gc', 'compact', 'highlight', 'name']) chain[method] = () => chain;
  return chain as unknown as B;
}

/** Calls a benchmark once, in each of mitata's forms: a function, or a generator yielding one (with parameters). */
async function runOnce(fn: BenchFn): Promise<void> {
  // deno-lint-ignore no-explicit-any
  const result: any = (fn as any)();
  if (result !== null && typeof result === 'object' && typeof result.next === 'function') {
    const { value } = await result.next();
    if (typeof value === 'function') {
      await value();
    } else if (value !== null && typeof value === 'object' && typeof value.bench === 'function') {
      const keys = Object.keys(value).filter((k) => /^\d+$/.test(k)).sort((a, b) => Number(a) - Number(b));
      await value.bench(...keys.map((k) => value[k]()));
    }
    await result.return?.(undefined);
  } else {
    await result;
  }
}

/** How many runs a results file keeps (newest last): README figures are ranges over them (bench/figures.ts). */
export const KEPT_RUNS = 4;

/** One run of a suite as kept in its results file's `history`. */
export interface RunRecord {
  readonly date: string;
  readonly cpu: string | null;
  /** p50 per benchmark name, in nanoseconds. */
  readonly p50_ns: Record<string, number>;
  readonly derived: Record<string, unknown>;
}

/** Which runtime runs the benchmark. */
export function runtimeName(): string {
  const g = globalThis as { Deno?: { version: { deno: string } }; Bun?: { version: string } };
  if (g.Deno !== undefined) return `deno ${g.Deno.version.deno}`;
  if (g.Bun !== undefined) return `bun ${g.Bun.version}`;
  return `node ${(globalThis as unknown as { process: { version: string } }).process.version}`;
}

/** One benchmark's figures. */
export interface BenchFigure {
  name: string;
  p50_ns: number;
  avg_ns: number;
  min_ns: number;
  p99_ns: number;
  samples: number;
}

/**
 * Runs the benchmarks registered so far, prints the table and writes `bench/results/<suite>-<runtime>.json`.
 * `extra` is stored beside the figures (derived ratios, bandwidths).
 */
export async function runAndReport(
  suite: string,
  extra?: (figures: Map<string, BenchFigure>) => Record<string, unknown>,
): Promise<Map<string, BenchFigure>> {
  if (SMOKE) {
    const queued = smokeQueue.splice(0);
    for (const [name, fn] of queued) {
      try {
        await runOnce(fn);
      } catch (error) {
        throw new Error(`${suite}: benchmark '${name}' failed in smoke mode`, { cause: error });
      }
    }
    console.log(`${suite}: smoke run, ${queued.length} benchmarks called once each`);
    return new Map();
  }
  const result = await run();
  const figures = new Map<string, BenchFigure>();
  for (const trial of result.benchmarks) {
    for (const r of trial.runs) {
      if (r.stats === undefined) continue;
      figures.set(r.name, {
        name: r.name,
        p50_ns: r.stats.p50,
        avg_ns: r.stats.avg,
        min_ns: r.stats.min,
        p99_ns: r.stats.p99,
        samples: r.stats.samples.length,
      });
    }
  }
  const runtime = runtimeName();
  const derived = extra?.(figures) ?? {};
  if (Object.keys(derived).length > 0) console.log(`\n${suite} (${runtime}):`, derived);
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${suite}-${runtime.split(' ')[0]}.json`, dir);
  const date = new Date().toISOString();
  const cpu = result.context.cpu?.name ?? null;
  const thisRun: RunRecord = {
    date,
    cpu,
    p50_ns: Object.fromEntries([...figures.values()].map((f) => [f.name, f.p50_ns])),
    derived,
  };
  const history = [...keptRuns(file, runtime), thisRun].slice(-KEPT_RUNS);
  writeFileSync(
    file,
    JSON.stringify({ suite, runtime, date, cpu, figures: [...figures.values()], derived, history }, null, 2) + '\n',
  );
  return figures;
}

/**
 * The runs kept in a results file, oldest first (none when there is no readable file, or when `runtime` is given and
 * the file is another runtime version's). A file written before runs were kept counts as its one run.
 *
 * @example
 * ```ts
 * import { keptRuns } from './_report.ts';
 * keptRuns(new URL('./results/dispatch-deno.json', import.meta.url)).length; // up to 4
 * ```
 */
export function keptRuns(file: URL, runtime?: string): RunRecord[] {
  if (!existsSync(file)) return [];
  try {
    const old = JSON.parse(readFileSync(file, 'utf8'));
    if (runtime !== undefined && old.runtime !== runtime) return [];
    if (Array.isArray(old.history)) return old.history;
    const p50 = Object.fromEntries((old.figures ?? []).map((f: BenchFigure) => [f.name, f.p50_ns]));
    return [{ date: old.date, cpu: old.cpu ?? null, p50_ns: p50, derived: old.derived ?? {} }];
  } catch {
    return [];
  }
}
