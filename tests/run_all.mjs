// `npm test`: static checks, then every test file under Deno and under Bun, then the suite under Node 24 (the pinned
// `node` dev dependency, type stripping; see NODE_EXCLUDED), then one summary line `tests: N passed, N failed` (all
// runtimes summed; a failed static check counts as one failed test).
// Runs under plain Node (20 or later) so that it needs nothing but the locally installed tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import process from 'node:process';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
const extraArgs = process.argv.slice(2); // e.g. a test file filter: `npm test -- tests/dispatch`
if (extraArgs.includes('--help')) {
  process.stdout.write(
    'usage: node tests/run_all.mjs [test file or directory ...]\n' +
      'Without arguments: the static checks, then every test under Deno, Bun and Node 24, then\n' +
      '`tests: N passed, N failed`. With paths: only those tests, under each runtime.\n',
  );
  process.exit(0);
}
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

// Node 24 (node --test, type stripping) over the same files, less NODE_EXCLUDED: files whose tests only spawn other
// runtimes' processes (already run twice above, and the slowest files), and the engine's 100k-node scale test
// (13-17 s alone; the same engine code runs in the other tests). Node has no Web Worker global, so the tests that
// start one are skipped by name.
const NODE_EXCLUDED = new Set([
  'tests/package/install.test.ts',
  'tests/package/deno_permissions.test.ts',
  'tests/entry_points.test.ts',
  'tests/url_import.test.ts',
  'tests/autograd/engine_scale.test.ts',
]);
const NODE_SKIP_PATTERN = 'a Worker attached to the store';

function testFiles(target) {
  const path = join(root, target);
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [relative(root, path)];
  return readdirSync(path, { recursive: true })
    .map((f) => relative(root, join(path, String(f))))
    .filter((f) => /\.test\.(ts|mjs|js)$/.test(f) && !f.split('/').includes('node_modules'))
    .sort();
}
const nodeFiles = [...new Set(testTargets.flatMap(testFiles))].filter((f) => !NODE_EXCLUDED.has(f));
let nodeStatus = 0;
if (nodeFiles.length > 0) {
  // The dot reporter on the console (failures in full at its end), TAP to a file for the counts.
  const tapPath = join(junitDir, 'node.tap');
  const node = run('node --test (Node 24)', bin('node'), [
    '--test',
    '--expose-gc',
    '--test-concurrency=2',
    `--test-skip-pattern=${NODE_SKIP_PATTERN}`,
    '--test-reporter=dot',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tapPath}`,
    ...nodeFiles,
  ], { env: testEnv });
  const tap = existsSync(tapPath) ? readFileSync(tapPath, 'utf8') : '';
  const nodePass = Number(/^# pass (\d+)$/m.exec(tap)?.[1] ?? 0);
  const nodeFail = Number(/^# fail (\d+)$/m.exec(tap)?.[1] ?? 0);
  process.stdout.write(`node: ${nodePass} pass, ${nodeFail} fail (${nodeFiles.length} files)\n`);
  passed += nodePass;
  failed += nodeFail;
  nodeStatus = node.status ?? 1;
  if (nodeStatus !== 0 && nodeFail === 0) failed++;
}
rmSync(junitDir, { recursive: true, force: true });

process.stdout.write(`\ntests: ${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 && deno.status === 0 && bun.status === 0 && nodeStatus === 0 ? 0 : 1);
