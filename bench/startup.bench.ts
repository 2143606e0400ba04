/**
 * Cold start: the wall time of a fresh process that imports the package and runs its first `add` (and prints the
 * result), beside a fresh process running an empty script, under the runtime running this suite. Separate processes,
 * so mitata does not apply: each figure is the median of `RUNS` spawns, alternating the two scripts; the difference is
 * what importing Switchyard costs a program. Target (issue): at most 40 ms over the empty script.
 *
 * Run: `deno run -A bench/startup.bench.ts` or `bun bench/startup.bench.ts`.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { runAndReport, runtimeName, SMOKE, smokeSize } from './_report.ts';

const RUNS = smokeSize(15, 2);
const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
const modUrl = new URL('../mod.ts', import.meta.url).href;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-startup-'));
const scripts = {
  empty: join(dir, 'empty.ts'),
  firstAdd: join(dir, 'first_add.ts'),
};
writeFileSync(scripts.empty, "console.log('ok');\n");
writeFileSync(
  scripts.firstAdd,
  `import { add, tensor } from '${modUrl}';\nconsole.log(add(tensor([1]), tensor([2])).item());\n`,
);

/** Wall milliseconds of one fresh process running `script`. */
function spawnMs(script: string): number {
  const args = isBun ? [script] : ['run', '-A', '--no-check', script];
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`${script} failed:\n${result.stderr}`);
  return ms;
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
try {
  spawnMs(scripts.firstAdd); // a first run fills Deno's transpile cache
  const empty: number[] = [], firstAdd: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    empty.push(spawnMs(scripts.empty));
    firstAdd.push(spawnMs(scripts.firstAdd));
  }
  const e = median(empty), f = median(firstAdd);
  console.log(
    `${runtimeName()}: empty script ${e.toFixed(1)} ms, import + first add ${f.toFixed(1)} ms, ` +
      `cost of Switchyard ${(f - e).toFixed(1)} ms (target ≤ 40 ms), medians of ${RUNS}`,
  );
  if (!SMOKE) {
    await runAndReport('startup', () => ({
      empty_script_ms: Number(e.toFixed(1)),
      import_and_first_add_ms: Number(f.toFixed(1)),
      startup_cost_ms: Number((f - e).toFixed(1)),
      target_ms: 40,
      met: f - e <= 40,
      runs: RUNS,
    }));
  } else {
    await runAndReport('startup');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
