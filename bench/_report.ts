/**
 * Shared benchmark runner: runs the registered mitata benchmarks, prints mitata's table, and writes the
 * figures (nanoseconds per iteration) to `bench/results/<suite>-<runtime>.json` for comparison over time.
 *
 * @module
 */
import { run } from 'mitata';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

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
  const history = [...previousRuns(file, runtime), thisRun].slice(-KEPT_RUNS);
  writeFileSync(
    file,
    JSON.stringify({ suite, runtime, date, cpu, figures: [...figures.values()], derived, history }, null, 2) + '\n',
  );
  return figures;
}

/** The runs kept in an existing results file of the same runtime version (none for another version). */
function previousRuns(file: URL, runtime: string): RunRecord[] {
  if (!existsSync(file)) return [];
  try {
    const old = JSON.parse(readFileSync(file, 'utf8'));
    if (old.runtime !== runtime) return [];
    if (Array.isArray(old.history)) return old.history;
    // A file written before runs were kept: its one run.
    const p50 = Object.fromEntries((old.figures ?? []).map((f: BenchFigure) => [f.name, f.p50_ns]));
    return [{ date: old.date, cpu: old.cpu ?? null, p50_ns: p50, derived: old.derived ?? {} }];
  } catch {
    return [];
  }
}
