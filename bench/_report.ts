/**
 * Shared benchmark runner: runs the registered mitata benchmarks, prints mitata's table, and writes the
 * figures (nanoseconds per iteration) to `bench/results/<suite>-<runtime>.json` for comparison over time.
 *
 * @module
 */
import { run } from 'mitata';
import { mkdirSync, writeFileSync } from 'node:fs';

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
  writeFileSync(
    file,
    JSON.stringify(
      {
        suite,
        runtime,
        date: new Date().toISOString(),
        cpu: result.context.cpu?.name ?? null,
        figures: [...figures.values()],
        derived,
      },
      null,
      2,
    ) + '\n',
  );
  return figures;
}
