// `bun scripts/bundle.ts [--out DIR]` (run by `npm run build` after tsc): Bun's start-up bundle of the package, under
// DIR/bun (default dist/bun), which package.json's `bun` export condition points at.
//
// Why: a Bun process that imports the package from per-file ES modules parses and transpiles ~200 modules on every
// start; this bundle is one CommonJS file with JavaScriptCore bytecode beside it (`runtime.cjs.jsc`, what
// `bun build --bytecode` writes), which Bun loads without parsing (bench/startup.bench.ts measures both ways). Bun
// only writes bytecode for CommonJS bundles (ES module bytecode needs `--compile`), and the bytecode is tied to the
// Bun version that built it: another Bun ignores it and parses `runtime.cjs` (same code, no error).
//
// Layout: `runtime.cjs` holds the whole runtime once and exports each public entry point's namespace; `mod.cjs`,
// `dispatch.cjs`, `nn.cjs`, `optim.cjs` and `gpu.cjs` each re-export one of them, so every subpath import shares the
// one runtime (one dispatcher). Workers start from siblings of the spawning module (siblingModuleUrl in
// core/workers/environment.ts): `agent_entry.cjs` serves an attached agent on the same runtime bundle,
// `pool_worker.cjs` is the intra-op pool worker (it imports nothing of the runtime). The bundler would inline each
// source file's own `import.meta.url`; a plugin makes it the bundle file's URL at run time instead, so that the
// sibling worker files are found wherever the package is installed.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import process from 'node:process';

type Bun = {
  build(config: Record<string, unknown>): Promise<{ success: boolean; logs: unknown[]; outputs: { path: string }[] }>;
  file(path: string): { text(): Promise<string> };
};
const bun = (globalThis as { Bun?: Bun }).Bun;
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write(
    'usage: bun scripts/bundle.ts [--out DIR]\n' +
      "Writes Bun's start-up bundle of the package (CommonJS + bytecode) to DIR/bun (default dist/bun).\n",
  );
  process.exit(0);
}
if (bun === undefined) {
  process.stderr.write('bundle: run this script with Bun (`bun scripts/bundle.ts`)\n');
  process.exit(1);
}

const root = resolve(new URL('..', import.meta.url).pathname);
const outIndex = args.indexOf('--out');
const outDir = join(outIndex >= 0 ? resolve(args[outIndex + 1]) : join(root, 'dist'), 'bun');

/** The public entry points: package.json subpath -> the source module and the namespace name in runtime.cjs. */
const ENTRIES: readonly (readonly [file: string, source: string])[] = [
  ['mod', 'mod.ts'],
  ['dispatch', 'core/dispatch/mod.ts'],
  ['nn', 'core/nn/mod.ts'],
  ['optim', 'core/optim/mod.ts'],
  ['gpu', 'gpu/mod.ts'],
];
const RUNTIME_ENTRY = 'switchyard-bundle:runtime';

// Scope hoisting renames functions whose names collide across modules (the exported `add` can become `add2`), and
// Bun 1.4 ignores `keepNames`: a first build finds the exported functions whose name is not their export name (in the
// sources every exported function is named as exported; tests/package/install.test.ts checks the installed bundle),
// and the final one names them back at load (a few dozen `defineProperty` calls, not a walk over every export).
const runtimeSource = (renamed: readonly (readonly [string, string])[]) =>
  [
    ...ENTRIES.map(([name, source]) => `import * as ${name} from ${JSON.stringify(join(root, source))};`),
    `export { serveThisWorker } from ${JSON.stringify(join(root, 'core/workers/agent_serve.ts'))};`,
    `for (const [ns, key] of ${JSON.stringify(renamed)}) {`,
    '  Object.defineProperty({ ' + ENTRIES.map(([name]) => name).join(', ') + " }[ns][key], 'name', { value: key });",
    '}',
    `export { ${ENTRIES.map(([name]) => name).join(', ')} };`,
  ].join('\n');
let renamed: (readonly [string, string])[] = [];
// Lists [namespace, export] for each exported function of the bundle named otherwise.
const PROBE = `const rt = require(process.argv[1]); const out = [];
for (const ns of ${JSON.stringify(ENTRIES.map(([name]) => name))}) {
  for (const [key, value] of Object.entries(rt[ns])) if (typeof value === 'function' && value.name !== key) out.push([ns, key]);
}
console.log(JSON.stringify(out));`;

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

/** Builds one entry into `dir` as a CommonJS bundle, with bytecode beside it unless it is only probed. */
async function build(entrypoint: string, naming: string, dir: string, bytecode = true): Promise<void> {
  const result = await bun!.build({
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
  });
  if (!result.success) {
    process.stderr.write(`bundle: bun build failed for ${entrypoint}\n`);
    for (const log of result.logs) process.stderr.write(`${log}\n`);
    process.exit(1);
  }
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
await build(RUNTIME_ENTRY, 'runtime.cjs', outDir, false); // probed for renamed exports, then built again
const probe = spawnSync(process.execPath, ['-e', PROBE, join(outDir, 'runtime.cjs')], { encoding: 'utf8' });
if (probe.status !== 0) {
  process.stderr.write(`bundle: loading the first build failed:\n${probe.stderr}\n`);
  process.exit(1);
}
renamed = JSON.parse(probe.stdout);
await build(RUNTIME_ENTRY, 'runtime.cjs', outDir);
await build(join(root, 'core/workers/pool_worker.ts'), 'pool_worker.cjs', outDir);
const shim = (expression: string) => `'use strict';\n// Built by scripts/bundle.ts: see runtime.cjs.\n${expression}\n`;
for (const [name] of ENTRIES) {
  writeFileSync(join(outDir, `${name}.cjs`), shim(`module.exports = require('./runtime.cjs').${name};`));
}
writeFileSync(join(outDir, 'agent_entry.cjs'), shim("require('./runtime.cjs').serveThisWorker();"));
process.stderr.write(
  `bundle: wrote ${outDir} (runtime.cjs with bytecode, ${ENTRIES.length} entry points, 2 worker entries)\n`,
);
