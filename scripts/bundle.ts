// `bun scripts/bundle.ts [--out DIR]` (run by `npm run build` after tsc): the package's two start-up bundles, under
// DIR (default dist/): DIR/bun for package.json's `bun` export condition and DIR/deno for its `deno` condition.
//
// Why: a process that imports the package from its ~220 per-file ES modules pays for every module on every start.
// - Bun parses and transpiles each one: DIR/bun is one CommonJS file with JavaScriptCore bytecode beside it
//   (`runtime.cjs.jsc`, what `bun build --bytecode` writes), which Bun loads without parsing. Bun only writes bytecode
//   for CommonJS bundles (ES module bytecode needs `--compile`), and the bytecode is tied to the Bun version that
//   built it: another Bun ignores it and parses `runtime.cjs` (same code, no error).
// - Deno resolves, reads and looks up the V8 code cache of each module one by one (its loading phase, before any
//   of our code runs, took ~47 ms of a ~78 ms start for dist/): DIR/deno is the runtime as a few ES module chunks
//   (a code-split bundle), loaded in ~12 ms. Code splitting is what keeps it fast: a single-file bundle wraps each
//   source module in a function (so that gpu/mod.ts's lazy `import()` can run it later), and V8 compiles those
//   wrappers at run time instead of taking them from its code cache, which made it slower than dist/. That cache holds
//   only what V8 compiled before a module ran, so the build then rewrites the top-level functions a typical start calls
//   to be compiled with their module (Note [Eager functions in Deno's code cache] in scripts/eager_compile.ts).
// bench/startup.bench.ts measures both against an empty script.
//
// Bun layout: `runtime.cjs` holds the whole runtime once and exports each public entry point's namespace; `mod.cjs`,
// `dispatch.cjs`, `nn.cjs`, `optim.cjs` and `gpu.cjs` each re-export one of them, so every subpath import shares the
// one runtime (one dispatcher). The bundler would inline each source file's own `import.meta.url`; a plugin makes it
// the bundle file's URL at run time instead, so that the sibling worker files are found wherever the package is
// installed. Deno layout: `mod.js`, `dispatch.js`, ... are entry chunks over shared chunks (`chunk-*.js`), so every
// subpath shares the one runtime here too; `import.meta.url` stays the chunk's own URL, in the same directory.
// Both: workers start from siblings of the spawning module (siblingModuleUrl in core/workers/environment.ts):
// `agent_entry` serves an attached agent on the same runtime, `pool_worker` is the intra-op pool worker (it imports
// nothing of the runtime).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import {
  type CompiledRange,
  functionEventLogFlag,
  hoistEagerly,
  lazilyCompiledFunctions,
  staticImportCycle,
} from './eager_compile.ts';

type Bun = {
  build(config: Record<string, unknown>): Promise<{ success: boolean; logs: unknown[]; outputs: { path: string }[] }>;
  file(path: string): { text(): Promise<string> };
};
const bun = (globalThis as { Bun?: Bun }).Bun;
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write(
    'usage: bun scripts/bundle.ts [--out DIR]\n' +
      "Writes the package's start-up bundles to DIR (default dist/): Bun's (CommonJS + bytecode) to DIR/bun,\n" +
      "Deno's (code-split ES modules) to DIR/deno.\n",
  );
  process.exit(0);
}
if (bun === undefined) {
  process.stderr.write('bundle: run this script with Bun (`bun scripts/bundle.ts`)\n');
  process.exit(1);
}

const root = resolve(new URL('..', import.meta.url).pathname);
const outIndex = args.indexOf('--out');
const distDir = outIndex >= 0 ? resolve(args[outIndex + 1]) : join(root, 'dist');
const bunDir = join(distDir, 'bun');

/** The public entry points: package.json subpath -> the source module and the namespace name in runtime.cjs. */
const ENTRIES: readonly (readonly [file: string, source: string])[] = [
  ['mod', 'mod.ts'],
  ['dispatch', 'core/dispatch/mod.ts'],
  ['nn', 'core/nn/mod.ts'],
  ['optim', 'core/optim/mod.ts'],
  ['gpu', 'gpu/mod.ts'],
];
const RUNTIME_ENTRY = 'switchyard-bundle:runtime';

// Bundlers rename functions and classes: scope hoisting renames names that collide across modules (the exported `add`
// can become `add2`), Bun's code splitting renames every one two chunks share, and Bun 1.4 ignores `keepNames`. So a
// first build of each bundle is probed (nameProbe) for the functions it exposes under another name than the sources
// do, and the final build names them back at load: a few hundred `defineProperty` calls, not a walk over every export.
// A probe of the final build must then find none (tests/package/install.test.ts checks the installed bundles again).

/** A function a bundle exposes under another name than the sources: entry, the keys down to it, then its name. */
type Renamed = readonly string[];

/** JavaScript that names back the functions in `renamed`, reached from the objects `roots` names by entry. */
function nameBack(renamed: readonly Renamed[], roots: (entry: string) => string): string {
  if (renamed.length === 0) return '';
  const reach = (path: Renamed) => roots(path[0]) + path.slice(1, -1).map((key) => `[${JSON.stringify(key)}]`).join('');
  const pairs = renamed.map((path) => `[${reach(path)}, ${JSON.stringify(path[path.length - 1])}]`);
  return `for (const [f, name] of [${pairs.join(', ')}]) Object.defineProperty(f, 'name', { value: name });\n`;
}

/**
 * A script for Bun that prints, as JSON, the renamed functions of a build: everything each entry exposes (its exports,
 * and inside exported namespaces and plain objects, three levels down: `nn.functional.conv2d`) compared with the same
 * path in the TypeScript sources. `load` is how the script gets an entry's object from the build.
 */
function nameProbe(load: (entry: string) => string): string {
  return `const out = [];
const isContainer = (v) => v !== null && typeof v === 'object' &&
  (Object.prototype.toString.call(v) === '[object Module]' || [Object.prototype, null].includes(Object.getPrototypeOf(v)));
const walk = (built, source, path, depth, seen) => {
  if (seen.has(built)) return;
  seen.add(built);
  for (const [key, value] of Object.entries(built)) {
    const original = source[key];
    if (typeof value === 'function' && typeof original === 'function') {
      if (value.name !== original.name) out.push([...path, key, original.name]);
    } else if (depth < 3 && isContainer(value) && isContainer(original)) {
      walk(value, original, [...path, key], depth + 1, seen);
    }
  }
};
${
    ENTRIES.map(([name, source]) =>
      `walk(${load(name)}, await import(${JSON.stringify(join(root, source))}), [${
        JSON.stringify(name)
      }], 0, new Set());`
    ).join('\n')
  }
console.log(JSON.stringify(out));`;
}

/** Runs a name probe with Bun; exits the build when loading the bundle fails. */
function probeNames(script: string, what: string): Renamed[] {
  const probe = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (probe.status !== 0) {
    process.stderr.write(`bundle: loading ${what} failed:\n${probe.stderr}\n`);
    process.exit(1);
  }
  return JSON.parse(probe.stdout.trim().split('\n').pop()!) as Renamed[];
}

/** Fails the build when the final bundle still exposes a function under another name than the sources. */
function checkNamedBack(script: string, what: string): void {
  const left = probeNames(script, what);
  if (left.length > 0) {
    process.stderr.write(`bundle: ${what} still renames ${left.map((path) => path.join('.')).join(', ')}\n`);
    process.exit(1);
  }
}

const runtimeSource = (renamed: readonly Renamed[]) =>
  [
    ...ENTRIES.map(([name, source]) => `import * as ${name} from ${JSON.stringify(join(root, source))};`),
    `export { serveThisWorker } from ${JSON.stringify(join(root, 'core/workers/agent_serve.ts'))};`,
    nameBack(renamed, (entry) => entry),
    `export { ${ENTRIES.map(([name]) => name).join(', ')} };`,
  ].join('\n');
let renamed: Renamed[] = [];

// Project sources see the URL of the bundle file that holds them (CommonJS: its __filename).
const MODULE_URL = 'require("node:url").pathToFileURL(__filename).href';
const plugin = {
  name: 'switchyard-bundle',
  setup(build: {
    onResolve(o: { filter: RegExp }, f: (a: { path: string }) => unknown): void;
    onLoad(o: { filter: RegExp; namespace?: string }, f: (a: { path: string }) => unknown): void;
  }) {
    build.onResolve({ filter: /^switchyard-bundle:runtime$/ }, (a) => ({ path: a.path, namespace: 'switchyard' }));
    build.onLoad({ filter: /.*/, namespace: 'switchyard' }, () => ({ contents: runtimeSource(renamed), loader: 'ts' }));
    build.onLoad({ filter: /\.ts$/ }, async (a) => {
      const text = await bun!.file(a.path).text();
      const inProject = a.path.startsWith(root) && !a.path.includes('node_modules');
      return { contents: inProject ? text.replaceAll('import.meta.url', MODULE_URL) : text, loader: 'ts' };
    });
  },
};

/** Runs Bun's bundler; a failed build stops this script with the bundler's messages. */
async function bunBuild(config: Record<string, unknown>, what: string): Promise<void> {
  const result = await bun!.build(config);
  if (!result.success) {
    process.stderr.write(`bundle: bun build failed for ${what}\n`);
    for (const log of result.logs) process.stderr.write(`${log}\n`);
    process.exit(1);
  }
}

/** Builds one entry into `dir` as a CommonJS bundle, with bytecode beside it unless it is only probed. */
async function build(entrypoint: string, naming: string, dir: string, bytecode = true): Promise<void> {
  await bunBuild({
    entrypoints: [entrypoint],
    outdir: dir,
    naming,
    target: 'bun',
    format: 'cjs',
    bytecode,
    // Identifiers are not minified: error messages and module printing read constructor names (Bun 1.4 drops them
    // under `identifiers` even with `keepNames`).
    minify: { whitespace: true, syntax: true, identifiers: false, keepNames: true },
    plugins: [plugin],
  }, entrypoint);
}

rmSync(bunDir, { recursive: true, force: true });
mkdirSync(bunDir, { recursive: true });
const runtimeProbe = nameProbe((entry) => `require(${JSON.stringify(join(bunDir, 'runtime.cjs'))}).${entry}`);
await build(RUNTIME_ENTRY, 'runtime.cjs', bunDir, false); // probed for renamed functions, then built again
renamed = probeNames(runtimeProbe, 'the first Bun bundle');
await build(RUNTIME_ENTRY, 'runtime.cjs', bunDir);
checkNamedBack(runtimeProbe, 'the Bun bundle');
await build(join(root, 'core/workers/pool_worker.ts'), 'pool_worker.cjs', bunDir);
const shim = (expression: string) => `'use strict';\n// Built by scripts/bundle.ts: see runtime.cjs.\n${expression}\n`;
for (const [name] of ENTRIES) {
  writeFileSync(join(bunDir, `${name}.cjs`), shim(`module.exports = require('./runtime.cjs').${name};`));
}
writeFileSync(join(bunDir, 'agent_entry.cjs'), shim("require('./runtime.cjs').serveThisWorker();"));
process.stderr.write(
  `bundle: wrote ${bunDir} (runtime.cjs with bytecode, ${ENTRIES.length} entry points, 2 worker entries, ` +
    `${renamed.length} functions named back)\n`,
);

// Deno's bundle: one entry chunk per public entry point and per worker, over shared chunks, all in DIR/deno.
const denoDir = join(distDir, 'deno');
const WORKER_ENTRIES = ['agent_entry', 'pool_worker'] as const;
/**
 * The source of one entry module: re-exports `source` and names its renamed functions back. The exports they are
 * reached from are imported by name: `import * as` would make the bundler build a namespace object of every export.
 */
function denoEntry(name: string, renamedHere: readonly Renamed[]): string {
  const source = JSON.stringify(join(root, ENTRIES.find(([entry]) => entry === name)![1]));
  if (renamedHere.length === 0) return `export * from ${source};\n`;
  const imported = [...new Set(renamedHere.map((path) => path[1]))];
  const local = (key: string) => `r${imported.indexOf(key)}`;
  return [
    `export * from ${source};`,
    `import { ${imported.map((key) => `${key} as ${local(key)}`).join(', ')} } from ${source};`,
    // Each path starts at an export of this entry: reached from its imported binding.
    nameBack(renamedHere.map((path) => path.slice(1)), local),
  ].join('\n');
}

/** Builds the Deno bundle into denoDir, naming back the functions listed in `renamed`. */
async function buildDeno(renamed: readonly Renamed[]): Promise<void> {
  const entryDir = mkdtempSync(join(tmpdir(), 'switchyard-deno-entries-'));
  try {
    for (const [name] of ENTRIES) {
      writeFileSync(join(entryDir, `${name}.ts`), denoEntry(name, renamed.filter((path) => path[0] === name)));
    }
    // A worker's agent runs the whole runtime, named back like the main entry's.
    writeFileSync(
      join(entryDir, 'agent_entry.ts'),
      `import './mod.ts';\nimport { serveThisWorker } from ${
        JSON.stringify(join(root, 'core/workers/agent_serve.ts'))
      };\nserveThisWorker();\n`,
    );
    writeFileSync(
      join(entryDir, 'pool_worker.ts'),
      `import ${JSON.stringify(join(root, 'core/workers/pool_worker.ts'))};\n`,
    );
    rmSync(denoDir, { recursive: true, force: true });
    await bunBuild({
      entrypoints: [...ENTRIES.map(([name]) => name), ...WORKER_ENTRIES].map((name) => join(entryDir, `${name}.ts`)),
      outdir: denoDir,
      naming: { entry: '[name].js', chunk: 'chunk-[hash].js' },
      target: 'browser',
      format: 'esm',
      splitting: true,
      minify: { whitespace: true, syntax: true, identifiers: false },
    }, 'the Deno bundle');
  } finally {
    rmSync(entryDir, { recursive: true, force: true });
  }
}

// A typical start, run under Deno to find the functions it compiles lazily (Note [Eager functions in Deno's code
// cache] in scripts/eager_compile.ts): the start-up benchmark's first `add`, then the README's quick start (a model,
// an optimizer, a few training steps, printing), so that what most programs run first is compiled eagerly.
const WORKLOAD = (mod: string) =>
  `import { add, crossEntropy, manualSeed, nn, noGrad, optim, randn, scope, tensor } from ${JSON.stringify(mod)};
console.log(add(tensor([1]), tensor([2])).item());
manualSeed(0);
const model = new nn.Sequential(new nn.Linear(4, 16), new nn.ReLU(), new nn.Linear(16, 3));
const opt = new optim.Adam(model.parameters(), { lr: 1e-2 });
const x = randn([32, 4]), y = tensor(Array.from({ length: 32 }, (_, i) => i % 3));
for (let step = 0; step < 2; step++) {
  scope(() => {
    const loss = crossEntropy(model.forward(x), y);
    opt.zeroGrad();
    loss.backward();
    opt.step();
  });
}
console.log(String(noGrad(() => model.forward(x).mul(2).sub(1).exp().sum())));
`;

/** Runs WORKLOAD under Deno with V8's function-event log; returns the functions it compiled lazily, by file URL. */
function profileDenoStart(): Map<string, CompiledRange[]> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-deno-profile-'));
  try {
    const script = join(dir, 'workload.mjs'), log = join(dir, 'functions.log');
    writeFileSync(script, WORKLOAD(pathToFileURL(join(denoDir, 'mod.js')).href));
    const deno = join(root, 'node_modules', '.bin', 'deno');
    const run = spawnSync(deno, ['run', '-A', '--no-check', functionEventLogFlag(log), script], {
      encoding: 'utf8',
      env: { ...process.env, DENO_DIR: join(dir, 'deno_dir'), DENO_NO_UPDATE_CHECK: '1' },
    });
    if (run.status !== 0 || !run.stdout.startsWith('3\n')) {
      const output = `${run.error ?? ''}${run.stdout ?? ''}${run.stderr ?? ''}`;
      process.stderr.write(`bundle: the profiled start of the Deno bundle failed:\n${output}\n`);
      process.exit(1);
    }
    return lazilyCompiledFunctions(readFileSync(log, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Deno bundle's files and their text, by file name. */
function denoChunks(): Map<string, string> {
  return new Map(
    readdirSync(denoDir).filter((f) => f.endsWith('.js')).map((f) => [f, readFileSync(join(denoDir, f), 'utf8')]),
  );
}

/** The lazily compiled top-level function declarations of each chunk in `profile`, hoisted or (`dryRun`) only listed. */
function hoistChunks(profile: Map<string, CompiledRange[]>, dryRun: boolean): string[] {
  const chunks = denoChunks();
  const hoisted: string[] = [];
  for (const [file, source] of chunks) {
    const ranges = profile.get(pathToFileURL(join(denoDir, file)).href);
    if (ranges === undefined) continue;
    const result = hoistEagerly(source, ranges);
    if (!dryRun) writeFileSync(join(denoDir, file), result.source);
    hoisted.push(...result.hoisted.map((name) => `${file}: ${name}`));
  }
  return hoisted;
}

/**
 * Compiles eagerly what a start runs (Note [Eager functions in Deno's code cache]): hoists the functions a profiled
 * start compiled lazily, then profiles again, which must find none of them left. Returns how many were hoisted.
 */
function compileEagerly(): number {
  // Hoisting relies on the chunks importing each other without a cycle (Note [Eager functions in Deno's code cache]).
  const cycle = staticImportCycle(denoChunks());
  if (cycle !== undefined) {
    process.stderr.write(`bundle: the Deno bundle's chunks import each other in a cycle: ${cycle.join(' -> ')}\n`);
    process.exit(1);
  }
  const hoisted = hoistChunks(profileDenoStart(), false);
  if (hoisted.length === 0) {
    process.stderr.write("bundle: the profiled Deno start compiled no top-level function lazily: V8's log changed?\n");
    process.exit(1);
  }
  const left = hoistChunks(profileDenoStart(), true);
  if (left.length > 0) {
    process.stderr.write(`bundle: still compiled lazily after hoisting: ${left.join(', ')}\n`);
    process.exit(1);
  }
  return hoisted.length;
}

const denoProbe = nameProbe((entry) => `await import(${JSON.stringify(join(denoDir, `${entry}.js`))})`);
await buildDeno([]); // probed for renamed functions, then built again
const renamedEsm = probeNames(denoProbe, 'the first Deno bundle');
await buildDeno(renamedEsm);
const eager = compileEagerly();
checkNamedBack(denoProbe, 'the Deno bundle');
process.stderr.write(
  `bundle: wrote ${denoDir} (code-split ES modules, ${ENTRIES.length} entry points, ${WORKER_ENTRIES.length} worker ` +
    `entries, ${renamedEsm.length} functions named back, ${eager} compiled eagerly)\n`,
);
