// `npm run build`: compiles the package's public entry points (and everything they import) to ES modules with
// declaration files under dist/, from a clean directory, with the TypeScript compiler pinned in package.json.
// Relative `.ts` import specifiers become `.js` (rewriteRelativeImportExtensions), so the output runs unchanged in
// Node, Bun, Deno (`npm:` specifiers) and bundlers. Afterwards every path named in package.json `exports` must exist.
// Plain JS modules of the sources (a `.js` file with its types in a `.d.ts` beside it, such as the generated operator
// API: Note [Generated API as JS] in core/ops/codegen.ts says why it is JS) are not compiled by tsc: they are copied
// to dist/ with their .d.ts, their relative `.ts` import specifiers rewritten to `.js` as tsc rewrites them.
// Runs under plain Node (any version the repository supports); `npm pack` runs it through `prepack`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write(
    'usage: node scripts/build.mjs [--out DIR]\n' +
      'Compiles mod.ts and the subpath entry points to dist/ (ES modules + .d.ts) with tsconfig.build.json,\n' +
      'writes the start-up bundles for Bun and Deno to dist/bun and dist/deno (bun scripts/bundle.ts),\n' +
      "then checks that every target of package.json's exports exists.\n",
  );
  process.exit(0);
}

// `--out DIR` builds elsewhere (bench/startup.bench.ts builds a package to time); the exports check is for dist/.
const outAt = args.indexOf('--out');
const dist = outAt >= 0 ? resolve(args[outAt + 1]) : join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = join(root, 'node_modules', '.bin', 'tsc');
const result = spawnSync(tsc, ['-p', join(root, 'tsconfig.build.json'), '--outDir', dist], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${result.status ?? result.signal})\n`);
  process.exit(1);
}

// The JS modules with declarations beside them, under the directories the entry points are in.
const jsModules = ['core', 'gpu'].flatMap((dir) =>
  readdirSync(join(root, dir), { recursive: true }).map(String)
    .filter((f) => f.endsWith('.js') && existsSync(join(root, dir, f.replace(/\.js$/, '.d.ts'))))
    .map((f) => join(dir, f.slice(0, -'.js'.length)))
);
const relativeTs = /((?:from|import)\s*\(?\s*)(['"])(\.\.?\/[^'"]*)\.ts\2/g;
for (const module of jsModules) {
  for (const ext of ['.js', '.d.ts']) {
    const text = readFileSync(join(root, module + ext), 'utf8');
    const out = join(dist, module + ext);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text.replace(relativeTs, (_, head, quote, path) => `${head}${quote}${path}.js${quote}`));
  }
}
if (jsModules.length > 0) {
  process.stderr.write(
    `build: copied ${jsModules.map((m) => `${m}.js`).join(', ')} (each with its .d.ts)\n`,
  );
}

// The start-up bundles for the `bun` (CommonJS + bytecode) and `deno` (code-split ES modules) export conditions:
// scripts/bundle.ts says why.
const bun = join(root, 'node_modules', '.bin', 'bun');
const bundled = spawnSync(bun, [join(root, 'scripts', 'bundle.ts'), '--out', dist], { cwd: root, stdio: 'inherit' });
if (bundled.status !== 0) {
  process.stderr.write(`build: scripts/bundle.ts failed (exit ${bundled.status ?? bundled.signal})\n`);
  process.exit(1);
}

if (dist !== join(root, 'dist')) {
  process.stderr.write(`build: wrote ${dist}\n`);
  process.exit(0);
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const missing = [];
for (const [subpath, target] of Object.entries(pkg.exports)) {
  for (const file of Object.values(target)) {
    if (!existsSync(join(root, file))) missing.push(`${subpath} -> ${file}`);
  }
}
if (!existsSync(join(root, pkg.types))) missing.push(`types -> ${pkg.types}`);
if (missing.length > 0) {
  process.stderr.write(`build: exports name files that were not built:\n  ${missing.join('\n  ')}\n`);
  process.exit(1);
}
process.stderr.write(`build: dist/ holds ${Object.keys(pkg.exports).length} entry points\n`);
