// `npm test`: static checks, then every test file under Deno and under Bun, then one summary line
// `tests: N passed, N failed` (both runtimes summed; a failed static check counts as one failed test).
// Runs under plain Node so that it needs nothing but the locally installed tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
const extraArgs = process.argv.slice(2); // e.g. a test file filter: `npm test -- tests/dispatch`
let passed = 0;
let failed = 0;

// The suites run in the CPU backend's checked mode: guard bytes around every block, verified after every kernel
// call (core/cpu/guarded_allocator.ts), so a kernel writing outside its blocks fails the test that ran it.
const testEnv = { ...process.env, SWITCHYARD_CHECKED: '1' };

function run(label, command, args, options = {}) {
  process.stdout.write(`\n== ${label}\n`);
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: options.capture ? 'pipe' : 'inherit',
    encoding: 'utf8',
    env: options.env ?? process.env,
  });
  if (options.capture) {
    process.stdout.write(result.stdout ?? '');
    process.stderr.write(result.stderr ?? '');
  }
  return result;
}

function check(label, command, args) {
  const result = run(label, command, args);
  if (result.status !== 0) {
    failed++;
    process.stdout.write(`!! ${label} failed\n`);
  }
}

const sourceDirs = ['mod.ts', 'core', 'gpu', 'bench', 'tests', 'examples'].filter((p) => existsSync(join(root, p)));
const testTargets = extraArgs.length > 0 ? extraArgs : ['tests/'];

if (extraArgs.length === 0) {
  if (existsSync(join(root, 'kernels_as', 'build.mjs'))) {
    check('wasm is fresh', process.execPath, ['kernels_as/build.mjs', '--check']);
  }
  check('generated API is fresh', bin('deno'), ['run', '-A', '--quiet', 'core/ops/codegen.ts', '--check']);
  check('deno check', bin('deno'), ['check', '--quiet', ...sourceDirs]);
  check('deno lint', bin('deno'), ['lint', '--quiet']);
  check('deno fmt --check', bin('deno'), ['fmt', '--check', '--quiet']);
  check('deno publish --dry-run', bin('deno'), ['publish', '--dry-run', '--allow-dirty', '--quiet']);
}

// Deno: count leaf tests from its JUnit report (describe blocks are steps there, `it`s are nested steps).
const junitDir = mkdtempSync(join(tmpdir(), 'switchyard-junit-'));
const junitPath = join(junitDir, 'deno.xml');
const deno = run('deno test', bin('deno'), [
  'test',
  '-A',
  '--no-check',
  '--v8-flags=--expose-gc',
  `--junit-path=${junitPath}`,
  ...testTargets,
], { env: testEnv });
if (existsSync(junitPath)) {
  const xml = readFileSync(junitPath, 'utf8');
  const cases = [...xml.matchAll(/<testcase name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)].map((m) => ({
    name: m[1],
    failed: /<failure/.test(m[2]),
  }));
  for (const c of cases) {
    const isLeaf = !cases.some((o) => o.name.startsWith(`${c.name} &gt; `));
    if (isLeaf) c.failed ? failed++ : passed++;
    else if (c.failed && !cases.some((o) => o.failed && o.name.startsWith(`${c.name} &gt; `))) failed++;
  }
} else if (deno.status !== 0) {
  failed++;
}
if (deno.status !== 0 && !existsSync(junitPath)) process.stdout.write('!! deno test produced no report\n');
rmSync(junitDir, { recursive: true, force: true });

// Bun prints " N pass" / " N fail".
const bun = run('bun test', bin('bun'), ['test', '--timeout', '120000', ...testTargets], {
  capture: true,
  env: testEnv,
});
const out = `${bun.stdout}\n${bun.stderr}`;
const bunPass = Number(/^\s*(\d+) pass\s*$/m.exec(out)?.[1] ?? 0);
const bunFail = Number(/^\s*(\d+) fail\s*$/m.exec(out)?.[1] ?? 0);
passed += bunPass;
failed += bunFail;
if (bun.status !== 0 && bunFail === 0) failed++;

process.stdout.write(`\ntests: ${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 && deno.status === 0 && bun.status === 0 ? 0 : 1);
