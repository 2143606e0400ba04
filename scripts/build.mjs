// `npm run build`: compiles the package's public entry points (and everything they import) to ES modules with
// declaration files under dist/, from a clean directory, with the TypeScript compiler pinned in package.json.
// Relative `.ts` import specifiers become `.js` (rewriteRelativeImportExtensions), so the output runs unchanged in
// Node, Bun, Deno (`npm:` specifiers) and bundlers. Afterwards every path named in package.json `exports` must exist.
// Runs under plain Node (any version the repository supports); `npm pack` runs it through `prepack`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write(
    'usage: node scripts/build.mjs\n' +
      'Compiles mod.ts and the subpath entry points to dist/ (ES modules + .d.ts) with tsconfig.build.json,\n' +
      "then checks that every target of package.json's exports exists.\n",
  );
  process.exit(0);
}

const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = join(root, 'node_modules', '.bin', 'tsc');
const result = spawnSync(tsc, ['-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${result.status ?? result.signal})\n`);
  process.exit(1);
}

// Generated plain-JavaScript modules (`// @ts-self-types` beside their .d.ts): tsc resolves their imports to the
// declarations and emits neither file, so both are copied as they are.
for (const file of ['core/cpu/kernels_wasm.js', 'core/cpu/kernels_wasm.d.ts']) {
  copyFileSync(join(root, file), join(dist, file));
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
