// `npm test`: static checks, then every test file under Deno and under Bun, then one summary line
// `tests: N passed, N failed` (both runtimes summed; a failed static check counts as one failed test).
// Runs under plain Node so that it needs nothing but the locally installed tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
const extraArgs = process.argv.slice(2); // e.g. a test file filter: `npm test -- tests/dispatch`
let passed = 0;
let failed = 0;

// Synchronous writes: piped, Node's process.stdout/stderr are asynchronous, so the summary could overtake a child's
// captured output (or be lost at exit). Written in order, the summary is always the last line, alone.
function writeAll(fd, text) {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e; // a non-blocking pipe that is full: try again
    }
  }
}
const say = (text) => writeAll(1, text);

// The suites run in the CPU backend's checked mode: guard bytes around every block, verified after every kernel
// call (core/cpu/guarded_allocator.ts), so a kernel writing outside its blocks fails the test that ran it.
const testEnv = { ...process.env, SWITCHYARD_CHECKED: '1' };

function run(label, command, args, options = {}) {
  say(`\n== ${label}\n`);
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: options.capture ? 'pipe' : 'inherit',
    encoding: 'utf8',
    env: options.env ?? process.env,
  });
  if (options.capture) {
    say(result.stdout ?? '');
    writeAll(2, result.stderr ?? '');
  }
  return result;
}

function check(label, command, args) {
  const result = run(label, command, args);
  if (result.status !== 0) {
    failed++;
    say(`!! ${label} failed\n`);
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
  const docs = existsSync(join(root, 'docs'))
    ? readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))
    : [];
  check('deno check of the code blocks in README.md and docs/', bin('deno'), [
    'check',
    '--quiet',
    '--doc-only',
    'README.md',
    ...docs,
  ]);
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
// Per runtime: leaf tests passed, failed and skipped, so that the two runtimes can be compared.
const denoCounts = { passed: 0, failed: 0, skipped: 0 };
if (existsSync(junitPath)) {
  const xml = readFileSync(junitPath, 'utf8');
  const cases = [...xml.matchAll(/<testcase name="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)].map((m) => ({
    name: m[1],
    failed: /<failure/.test(m[2]),
    skipped: /<skipped/.test(m[2]),
  }));
  for (const c of cases) {
    const isLeaf = !cases.some((o) => o.name.startsWith(`${c.name} &gt; `));
    if (isLeaf) denoCounts[c.failed ? 'failed' : c.skipped ? 'skipped' : 'passed']++;
    else if (c.failed && !cases.some((o) => o.failed && o.name.startsWith(`${c.name} &gt; `))) denoCounts.failed++;
  }
} else if (deno.status !== 0) {
  denoCounts.failed++;
}
if (deno.status !== 0 && !existsSync(junitPath)) say('!! deno test produced no report\n');
rmSync(junitDir, { recursive: true, force: true });

// Bun prints " N pass" / " N skip" / " N fail".
const bun = run('bun test', bin('bun'), ['test', '--timeout', '120000', ...testTargets], {
  capture: true,
  env: testEnv,
});
const out = `${bun.stdout}\n${bun.stderr}`;
const bunCount = (word) => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'm').exec(out)?.[1] ?? 0);
const bunCounts = { passed: bunCount('pass'), failed: bunCount('fail'), skipped: bunCount('skip') };
if (bun.status !== 0 && bunCounts.failed === 0) bunCounts.failed++;

passed += denoCounts.passed + bunCounts.passed;
failed += denoCounts.failed + bunCounts.failed;
const line = (name, c) => `${name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
say(`\n${line('deno', denoCounts)}\n${line('bun ', bunCounts)}\n`);
// Every suite runs unchanged under both runtimes, so both must see the same tests. Skipped tests (a feature a runtime
// lacks, such as Math.f16round) are reported, not counted as passed.
const denoSeen = denoCounts.passed + denoCounts.failed + denoCounts.skipped;
const bunSeen = bunCounts.passed + bunCounts.failed + bunCounts.skipped;
if (denoSeen !== bunSeen) {
  say(`!! deno saw ${denoSeen} tests, bun saw ${bunSeen}: every suite must run under both\n`);
  failed++;
}
if (denoCounts.skipped + bunCounts.skipped > 0) {
  say(`!! skipped: ${denoCounts.skipped} under deno, ${bunCounts.skipped} under bun\n`);
}

// The summary is the last line, alone. `process.exit()` would drop output still queued for a pipe, so the exit code
// is set and Node exits once everything is written.
say(`\ntests: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 && deno.status === 0 && bun.status === 0 ? 0 : 1;
