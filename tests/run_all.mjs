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
const argv = process.argv.slice(2);
const extraArgs = argv.filter((a) => !a.startsWith('--')); // e.g. a test file filter: `npm test -- tests/dispatch`
const runtimeFlag = argv.find((a) => a.startsWith('--runtime='))?.slice('--runtime='.length);
const RUNTIMES = ['deno', 'bun', 'node'];
const runtimes = runtimeFlag === undefined ? RUNTIMES : runtimeFlag.split(',');
const staticOnly = argv.includes('--static');
if (argv.includes('--help') || runtimes.some((r) => !RUNTIMES.includes(r))) {
  process.stdout.write(
    'usage: node tests/run_all.mjs [--static | --runtime=deno,bun,node] [test file or directory ...]\n' +
      'Without arguments: the static checks, then every test under Deno, Bun and Node 24, then\n' +
      '`tests: N passed, N failed`. With paths: only those tests. --runtime: only those runtimes\n' +
      '(no static checks). --static: only the static checks (`npm run check`).\n',
  );
  process.exit(argv.includes('--help') ? 0 : 2);
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

const sourceDirs = ['mod.ts', 'core', 'gpu', 'bench', 'tests', 'examples', 'scripts'].filter((p) =>
  existsSync(join(root, p))
);
const testTargets = extraArgs.length > 0 ? extraArgs : ['tests/'];

if (staticOnly || (extraArgs.length === 0 && runtimeFlag === undefined)) {
  if (existsSync(join(root, 'kernels_as', 'build.mjs'))) {
    check('wasm is fresh', process.execPath, ['kernels_as/build.mjs', '--check']);
  }
  check('generated API is fresh', bin('deno'), ['run', '-A', '--quiet', 'core/ops/codegen.ts', '--check']);
  check('deno check', bin('deno'), ['check', '--quiet', ...sourceDirs]);
  check('deno lint', bin('deno'), ['lint', '--quiet']);
  check('deno fmt --check', bin('deno'), ['fmt', '--check', '--quiet']);
  check('deno publish --dry-run', bin('deno'), ['publish', '--dry-run', '--allow-dirty', '--quiet']);
  // Every symbol reachable from the package's entry points is exported and documented.
  const entryPoints = Object.values(JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')).exports);
  check('deno doc --lint', bin('deno'), ['doc', '--lint', ...entryPoints]);
}

if (staticOnly) {
  process.stdout.write(`\nstatic checks: ${failed === 0 ? 'passed' : `${failed} failed`}\n`);
  process.exit(failed === 0 ? 0 : 1);
}

// Deno: count leaf tests from its JUnit report (describe blocks are steps there, `it`s are nested steps).
const junitDir = mkdtempSync(join(tmpdir(), 'switchyard-junit-'));
const junitPath = join(junitDir, 'deno.xml');
let denoStatus = 0;
if (runtimes.includes('deno')) {
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
  denoStatus = deno.status ?? 1;
}

// Node 24 (node --test, type stripping) over the same files, less NODE_EXCLUDED: files whose tests only spawn other
// runtimes' processes (run under Deno, and Bun, below), and the engine's 100k-node scale test
// (13-17 s alone; the same engine code runs in the other tests). Node has no Web Worker global, so the tests that
// start one are skipped by name.
const NODE_EXCLUDED = new Set([
  'tests/package/install.test.ts',
  'tests/package/scripts.test.ts',
  'tests/entry_points.test.ts',
  'tests/url_import.test.ts',
  'tests/autograd/engine_scale.test.ts',
]);
const NODE_SKIP_PATTERN = 'a Worker attached to the store';

// Bun: the package tests whose every step runs in subprocesses (npm pack and installs, the scripts' dry forms) run
// under Deno only; their subprocesses do the same whichever runtime starts them.
const BUN_EXCLUDED = new Set(['tests/package/install.test.ts', 'tests/package/scripts.test.ts']);

/** The test files under the targets; a directory's files less `excluded` (a file named explicitly always runs). */
function testFiles(targets, excluded) {
  const files = targets.flatMap((target) => {
    const path = join(root, target);
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [relative(root, path)];
    return readdirSync(path, { recursive: true })
      .map((f) => relative(root, join(path, String(f))))
      .filter((f) => /\.test\.(ts|mjs|js)$/.test(f) && !f.split('/').includes('node_modules'))
      .filter((f) => !excluded.has(f))
      .sort();
  });
  return [...new Set(files)];
}
// Bun prints " N pass" / " N fail". Its arguments are path filters: each file by its path from the root.
let bunStatus = 0;
if (runtimes.includes('bun')) {
  const bun = run('bun test', bin('bun'), [
    'test',
    '--timeout',
    '120000',
    ...testFiles(testTargets, BUN_EXCLUDED).map((f) => `./${f}`),
  ], {
    capture: true,
    env: testEnv,
  });
  const out = `${bun.stdout}\n${bun.stderr}`;
  const bunPass = Number(/^\s*(\d+) pass\s*$/m.exec(out)?.[1] ?? 0);
  const bunFail = Number(/^\s*(\d+) fail\s*$/m.exec(out)?.[1] ?? 0);
  passed += bunPass;
  failed += bunFail;
  if (bun.status !== 0 && bunFail === 0) failed++;
  bunStatus = bun.status ?? 1;
}

const nodeFiles = testFiles(testTargets, NODE_EXCLUDED);
let nodeStatus = 0;
if (runtimes.includes('node') && nodeFiles.length > 0) {
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
process.exit(failed === 0 && denoStatus === 0 && bunStatus === 0 && nodeStatus === 0 ? 0 : 1);
