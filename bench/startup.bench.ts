/**
 * Cold start: the wall time of a fresh process that imports Switchyard and runs its first `add` (and prints the
 * result), beside a fresh process running an empty script, under the runtime running this suite. Separate processes,
 * so mitata does not apply: each figure is the median of `RUNS` spawns, the scripts taking turns; a difference from
 * the empty script is what Switchyard costs a program. Target (issue): at most 40 ms over the empty script.
 *
 * Two ways in, both measured:
 * - the sources (`mod.ts`): how a Deno program importing Switchyard by URL, or anyone running the repository, starts;
 * - the package as `npm install` gives it to this runtime, through its export condition: under Bun the `bun`
 *   bundle (`dist/bun`, CommonJS with bytecode), under Deno the `deno` bundle (`dist/deno`, code-split ES modules),
 *   both written by scripts/bundle.ts. The package is built into a temporary directory first (the repository's own
 *   `dist/` is left alone).
 * Importing alone (no `add`) is timed too, so the first operation's share shows.
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
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runAndReport, runtimeName, SMOKE, smokeSize } from './_report.ts';

const RUNS = smokeSize(25, 2);
const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
const root = fileURLToPath(new URL('..', import.meta.url));
const modUrl = new URL('../mod.ts', import.meta.url).href;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-startup-'));

/** Builds the package under `dir` (`npm run build`'s script); returns the module `import 'switchyard'` loads here. */
function buildPackage(): string {
  const out = join(dir, 'dist');
  const result = spawnSync(join(root, 'node_modules', '.bin', 'node'), [
    join(root, 'scripts', 'build.mjs'),
    '--out',
    out,
  ], {
    cwd: root,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`scripts/build.mjs failed:\n${result.stdout}${result.stderr}`);
  return pathToFileURL(join(out, isBun ? 'bun/mod.cjs' : 'deno/mod.js')).href;
}

const FIRST_ADD = (url: string) =>
  `import { add, tensor } from '${url}';\nconsole.log(add(tensor([1]), tensor([2])).item());\n`;
const scripts = {
  empty: join(dir, 'empty.mjs'),
  importOnly: join(dir, 'import_only.mjs'),
  firstAdd: join(dir, 'first_add.mjs'),
  packageFirstAdd: join(dir, 'package_first_add.mjs'),
};

// Deno runs with a DENO_DIR of its own under `dir`: its caches (emitted modules, V8 code cache) start empty, are filled
// by the first, untimed run of each script, and do not stay behind in the user's DENO_DIR holding entries for files
// that are deleted at the end.
const env = isBun ? process.env : { ...process.env, DENO_DIR: join(dir, 'deno_dir') };

/** Wall milliseconds of one fresh process running `script`. */
function spawnMs(script: string): number {
  const args = isBun ? [script] : ['run', '-A', '--no-check', script];
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', env });
  const ms = performance.now() - start;
  if (result.status !== 0) throw new Error(`${script} failed:\n${result.stderr}`);
  return ms;
}

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
const round = (ms: number) => Number(ms.toFixed(1));
try {
  const packageUrl = buildPackage();
  writeFileSync(scripts.empty, "console.log('ok');\n");
  writeFileSync(scripts.importOnly, `import '${modUrl}';\nconsole.log('ok');\n`);
  writeFileSync(scripts.firstAdd, FIRST_ADD(modUrl));
  writeFileSync(scripts.packageFirstAdd, FIRST_ADD(packageUrl));
  const names = Object.keys(scripts) as (keyof typeof scripts)[];
  for (const name of names) spawnMs(scripts[name]); // a first run fills the runtimes' caches (Deno's emit, Bun's)
  const times = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    typeof names[number],
    number[]
  >;
  for (let i = 0; i < RUNS; i++) for (const name of names) times[name].push(spawnMs(scripts[name]));
  const m = Object.fromEntries(names.map((name) => [name, median(times[name])])) as Record<
    typeof names[number],
    number
  >;
  const entry = isBun ? 'dist/bun/mod.cjs (bundle + bytecode)' : 'dist/deno/mod.js (code-split bundle)';
  const line = (label: string, ms: number, note = '') =>
    `  ${label.padEnd(32)}${ms.toFixed(1).padStart(7)} ms${
      label === 'empty script' ? '' : ` (+${(ms - m.empty).toFixed(1)})`
    }${note}\n`;
  console.log(
    `${runtimeName()}, medians of ${RUNS} fresh processes (target ≤ 40 ms over the empty script):\n` +
      line('empty script', m.empty) +
      line('import mod.ts', m.importOnly) +
      line('import mod.ts + first add', m.firstAdd) +
      line('the package + first add', m.packageFirstAdd, ` ${entry}`).trimEnd(),
  );
  if (!SMOKE) {
    await runAndReport('startup', () => ({
      empty_script_ms: round(m.empty),
      import_only_ms: round(m.importOnly),
      import_and_first_add_ms: round(m.firstAdd),
      startup_cost_ms: round(m.firstAdd - m.empty),
      package_entry: entry,
      package_import_and_first_add_ms: round(m.packageFirstAdd),
      package_startup_cost_ms: round(m.packageFirstAdd - m.empty),
      target_ms: 40,
      met: m.firstAdd - m.empty <= 40,
      package_met: m.packageFirstAdd - m.empty <= 40,
      runs: RUNS,
    }));
  } else {
    await runAndReport('startup');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
