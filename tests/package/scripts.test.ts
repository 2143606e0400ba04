// The manifests and commands a fresh clone offers: the subpath exports of deno.json (JSR, URL imports) and
// package.json (npm, built dist/) name the same entry points; JSR publishes the library without benches, tests or
// build scripts; and every npm script and `deno task` entry runs, each in its dry form where a full run is not cheap
// (`--help`, `--check`, `--list`) and for real where it is (the digits demo, the dispatcher tour).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const denoJson = JSON.parse(readFileSync(join(ROOT, 'deno.json'), 'utf8'));

function sh(command: string, args: string[]) {
  const result = spawnSync(command, args, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH}`, NO_COLOR: '1' },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} exited ${result.status}:\n${output}`);
  return output;
}

// How each npm script and deno task is exercised: extra arguments, and what its output must show.
const DRY: Record<string, { args: string[]; expect: RegExp }> = {
  start: { args: [], expect: /test accuracy/i },
  build: { args: ['--help'], expect: /usage: node scripts\/build\.mjs/ },
  prepack: { args: ['--help'], expect: /usage: node scripts\/build\.mjs/ },
  'build:wasm': { args: ['--check'], expect: /fresh|up to date|matches/i },
  check: { args: ['--help'], expect: /--static: only the static checks/ },
  test: { args: ['--help'], expect: /usage: node tests\/run_all\.mjs/ },
  'test:deno': { args: ['--help'], expect: /usage: node tests\/run_all\.mjs/ },
  'test:bun': { args: ['--help'], expect: /usage: node tests\/run_all\.mjs/ },
  'test:node': { args: ['--help'], expect: /usage: node tests\/run_all\.mjs/ },
  bench: { args: ['--list'], expect: /bench\/dispatch\.bench\.ts/ },
  'gen:ops': { args: ['--check'], expect: /fresh|up to date|matches|^$/i },
  'demo:dispatch': { args: [], expect: /dispatch/i },
  'bench:figures': { args: ['--check'], expect: /^$/ },
  docs: { args: [], expect: /Written \d+ files/ },
  'demo:cnn': { args: [], expect: /final test accuracy/ },
  'demo:web': { args: ['--help'], expect: /usage: .*examples\/web\/serve\.ts/ },
};

describe('package manifests', () => {
  it('deno.json and package.json export the same subpaths, the npm ones built from the Deno sources', () => {
    assert.deepEqual(Object.keys(pkg.exports).sort(), Object.keys(denoJson.exports).sort());
    for (const [subpath, source] of Object.entries(denoJson.exports as Record<string, string>)) {
      const built = source.replace(/^\.\//, './dist/').replace(/\.ts$/, '');
      // Bun's and Deno's conditions name the start-up bundles' files for the subpath (scripts/bundle.ts): mod, ...
      const bundled = subpath === '.' ? 'mod' : subpath.slice(2);
      assert.deepEqual(
        pkg.exports[subpath],
        {
          types: `${built}.d.ts`,
          bun: `./dist/bun/${bundled}.cjs`,
          deno: `./dist/deno/${bundled}.js`,
          default: `${built}.js`,
        },
        subpath,
      );
      assert.deepEqual(
        Object.keys(pkg.exports[subpath]),
        ['types', 'bun', 'deno', 'default'],
        'types first, default last',
      );
    }
    assert.equal(pkg.types, pkg.exports['.'].types);
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8'));
    assert.deepEqual(
      [...build.files].sort(),
      [
        ...Object.values(denoJson.exports as Record<string, string>).map((s) => s.slice(2)),
        // The worker entry modules, found beside the modules that spawn them (siblingModuleUrl).
        'core/workers/agent_entry.ts',
        'core/workers/pool_worker.ts',
      ].sort(),
      'the build compiles exactly the exported entry points and the worker entries',
    );
  });

  it('the JSR package holds the library, README and LICENSE, and no benches, tests, build scripts or dist/', () => {
    const out = sh(join(BIN, 'deno'), ['publish', '--dry-run', '--allow-dirty']);
    const files = [...out.matchAll(/file:\/\/\S+/g)].map((m) => fileURLToPath(m[0]).slice(ROOT.length));
    assert.ok(files.includes('mod.ts') && files.includes('README.md') && files.includes('LICENSE'), files.join(' '));
    assert.ok(files.includes('core/dispatch/mod.ts') && files.includes('gpu/mod.ts'));
    const stray = files.filter((f) => /^(bench|tests|scripts|dist|node_modules|kernels_as\/build)\//.test(f));
    assert.deepEqual(stray, []);
  });
});

describe('npm scripts and deno tasks on this checkout', () => {
  it('every npm script and deno task has a dry form here', () => {
    for (const name of [...Object.keys(pkg.scripts), ...Object.keys(denoJson.tasks)]) {
      assert.ok(name in DRY, `no dry form for ${name}`);
    }
  });

  for (const [name, script] of Object.entries(pkg.scripts as Record<string, string>)) {
    it(`npm run ${name}`, () => {
      const { args, expect } = DRY[name];
      if (script.includes(' && ')) {
        // `npm run x -- args` would pass the arguments to the last command only: each command gets them.
        for (const part of script.split(' && ')) assert.match(sh('sh', ['-c', `${part} ${args.join(' ')}`]), expect);
      } else {
        assert.match(sh('npm', ['run', '--silent', name, '--', ...args]), expect);
      }
    });
  }

  for (const [name, task] of Object.entries(denoJson.tasks as Record<string, string>)) {
    it(`deno task ${name}`, () => {
      // Tasks forward to npm scripts: in a task, Deno runs a command found in node_modules/.bin as a JavaScript
      // bin script, which the native `deno` and `node` binaries of the dev dependencies are not.
      const target = /^npm (?:run )?(\S+)(?: --)?$/.exec(task)?.[1];
      assert.ok(target !== undefined && target in pkg.scripts, `${task} forwards to an npm script`);
      if (!task.endsWith(' --')) return; // takes no arguments (bench): its script runs above in its dry form
      const { args, expect } = DRY[name];
      assert.match(sh(join(BIN, 'deno'), ['task', '--quiet', name, ...args]), expect);
    });
  }
});
