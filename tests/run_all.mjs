// `npm test`: static checks, then every test file under Deno and under Bun, then the suite under Node 24 (the pinned
// `node` dev dependency, type stripping; see NODE_EXCLUDED), then one summary line `tests: N passed, N failed` (all
// runtimes summed; a failed static check counts as one failed test).
// Runs under plain Node (20 or later) so that it needs nothing but the locally installed tools.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
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

const sourceDirs = ['mod.ts', 'core', 'gpu', 'bench', 'tests', 'examples', 'scripts', 'tools'].filter((p) =>
  existsSync(join(root, p))
);
const testTargets = extraArgs.length > 0 ? extraArgs : ['tests/'];

if (staticOnly || (extraArgs.length === 0 && runtimeFlag === undefined)) {
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
  // Every symbol reachable from the package's entry points is exported and documented.
  const entryPoints = Object.values(JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')).exports);
  check('deno doc --lint', bin('deno'), ['doc', '--lint', ...entryPoints]);
  // The API reference is generated from the JSDoc (`npm run docs` writes it to docs/api/, not committed).
  const apiDir = mkdtempSync(join(tmpdir(), 'switchyard-api-'));
  check('deno doc --html', bin('deno'), [
    'doc',
    '--html',
    '--quiet',
    '--name=Switchyard',
    `--output=${apiDir}`,
    ...entryPoints,
  ]);
  rmSync(apiDir, { recursive: true, force: true });
}

if (staticOnly) {
  say(`\nstatic checks: ${failed === 0 ? 'passed' : `${failed} failed`}\n`);
  process.exitCode = failed === 0 ? 0 : 1;
  process.exit();
}

// Bun: the package tests whose every step runs in subprocesses (npm pack and installs, the scripts' dry forms) run
// under Deno only; their subprocesses do the same whichever runtime starts them.
const BUN_EXCLUDED = new Set(['tests/package/install.test.ts', 'tests/package/scripts.test.ts']);

// Per runtime: leaf tests passed, failed and skipped, so that the runtimes can be compared (Deno's run of the files
// Bun leaves out is counted apart).
const denoCounts = { passed: 0, failed: 0, skipped: 0 };
const denoOnlyCounts = { passed: 0, failed: 0, skipped: 0 };
const bunCounts = { passed: 0, failed: 0, skipped: 0 };

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
    const cases = [...xml.matchAll(/<testcase name="([^"]*)" classname="([^"]*)"[^>]*>([\s\S]*?)<\/testcase>/g)].map((
      m,
    ) => ({ name: m[1], classname: m[2], failed: /<failure/.test(m[3]), skipped: /<skipped/.test(m[3]) }));
    // A top-level test names its file (classname); its steps name only their top-level test (`top &gt; step`).
    const fileOf = new Map(
      cases.filter((c) => c.classname.startsWith('./')).map((c) => [c.name, c.classname.slice(2)]),
    );
    for (const c of cases) {
      const counts = BUN_EXCLUDED.has(fileOf.get(c.name.split(' &gt; ')[0]) ?? '') ? denoOnlyCounts : denoCounts;
      const isLeaf = !cases.some((o) => o.name.startsWith(`${c.name} &gt; `));
      if (isLeaf) counts[c.failed ? 'failed' : c.skipped ? 'skipped' : 'passed']++;
      else if (c.failed && !cases.some((o) => o.failed && o.name.startsWith(`${c.name} &gt; `))) counts.failed++;
    }
  } else if (deno.status !== 0) {
    denoCounts.failed++;
  }
  if (deno.status !== 0 && !existsSync(junitPath)) say('!! deno test produced no report\n');
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
  // These run the README's and docs' code blocks, the examples, the benchmarks' smoke mode, the browser example and
  // the two restricted-host simulations in fresh Deno or Bun processes.
  'tests/docs/readme_blocks.test.ts',
  'tests/docs/examples.test.ts',
  'tests/docs/bench_smoke.test.ts',
  'tests/web/browser.test.ts',
  'tests/dispatch/no_codegen.test.ts',
  'tests/cpu/no_shared_memory.test.ts',
]);
const NODE_SKIP_PATTERN = 'a Worker attached to the store';

/** The test files under the targets; a directory's files less `excluded` (a file named explicitly always runs). */
function testFiles(targets, excluded) {
  const files = targets.flatMap((target) => {
    const path = join(root, target);
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [relative(root, path)];
    return readdirSync(path, { recursive: true })
      .map((f) => relative(root, join(path, String(f))))
      .filter((f) => /\.test\.(ts|mjs|js)$/.test(f) && !f.split('/').includes('node_modules'))
      .filter((f) => !excluded.has(f) && ![...excluded].some((e) => e.endsWith('/') && f.startsWith(e)))
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
  const bunCount = (word) => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'm').exec(out)?.[1] ?? 0);
  bunCounts.passed = bunCount('pass');
  bunCounts.failed = bunCount('fail');
  bunCounts.skipped = bunCount('skip');
  if (bun.status !== 0 && bunCounts.failed === 0) bunCounts.failed++;
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
  say(`node: ${nodePass} pass, ${nodeFail} fail (${nodeFiles.length} files)\n`);
  passed += nodePass;
  failed += nodeFail;
  nodeStatus = node.status ?? 1;
  if (nodeStatus !== 0 && nodeFail === 0) failed++;
}
rmSync(junitDir, { recursive: true, force: true });

passed += denoCounts.passed + denoOnlyCounts.passed + bunCounts.passed;
failed += denoCounts.failed + denoOnlyCounts.failed + bunCounts.failed;
const line = (name, c) => `${name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
if (runtimes.includes('deno')) {
  say(`\n${line('deno', denoCounts)}\n${line('deno (files Bun leaves out)', denoOnlyCounts)}\n`);
}
if (runtimes.includes('bun')) say(`${line('bun', bunCounts)}\n`);
// Every suite but the Deno-only ones runs unchanged under both runtimes, so both must see the same tests. Skipped
// tests (a feature a runtime lacks, such as Math.f16round) are reported, not counted as passed.
if (runtimes.includes('deno') && runtimes.includes('bun')) {
  const seen = (c) => c.passed + c.failed + c.skipped;
  if (seen(denoCounts) !== seen(bunCounts)) {
    say(`!! deno saw ${seen(denoCounts)} tests, bun saw ${seen(bunCounts)}: every suite must run under both\n`);
    failed++;
  }
}
if (denoCounts.skipped + denoOnlyCounts.skipped + bunCounts.skipped > 0) {
  say(`!! skipped: ${denoCounts.skipped + denoOnlyCounts.skipped} under deno, ${bunCounts.skipped} under bun\n`);
}

// The summary is the last line, alone (written synchronously, see `say`).
say(`\ntests: ${passed} passed, ${failed} failed\n`);
process.exitCode = failed === 0 && denoStatus === 0 && bunStatus === 0 && nodeStatus === 0 ? 0 : 1;
