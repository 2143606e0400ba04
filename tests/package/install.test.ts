// The package as a user gets it: `npm pack` (which builds dist/ through `prepack`), the tarball installed into a
// scratch project, then `import ... from 'switchyard'` (and each subpath export) under Node 24 (the pinned `node`
// dev dependency), Bun, Deno (bare specifier through package.json and the `npm:` specifier, with no permissions and
// `--no-prompt`, so a permission request would fail the run), a Bun bundle run by Node, and the declaration files
// type-checked by tsc and by `deno check`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SEP = process.platform === 'win32' ? ';' : ':';
const BIN = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const TIMEOUT_MS = 120_000;

function sh(command: string, args: string[], cwd: string, env: Record<string, string | undefined> = {}) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    // Strip the suite's checked mode: the installed package runs as a user runs it.
    env: { ...process.env, SWITCHYARD_CHECKED: undefined, NO_COLOR: '1', ...env },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} (in ${cwd}) exited ${result.status}:\n${output}`);
  return result.stdout.trim();
}

// Every entry point, a tensor op with autograd, an nn/optim step and a dispatcher of its own; prints one JSON line.
const CONSUMER = `
import { manualSeed, randn, tensor } from 'switchyard';
import { Dispatcher, Library } from 'switchyard/dispatch';
import { Linear } from 'switchyard/nn';
import { SGD } from 'switchyard/optim';
import { gpuInfo } from 'switchyard/gpu';

const x = tensor([1, 2, 3], { dtype: 'float32' }).requiresGrad_();
x.mul(x).sum().backward();
manualSeed(0);
const r = randn([2]);
manualSeed(0);
const normals = randn([16], { dtype: 'float64' }).toArray().slice(0, 4);
const layer = new Linear(3, 2);
const opt = new SGD(layer.parameters(), { lr: 0.1 });
const before = layer.weight.toArray();
layer.forward(tensor([[1, 2, 3]], { dtype: 'float32' })).sum().backward();
opt.step();
const moved = JSON.stringify(before) !== JSON.stringify(layer.weight.toArray());
const d = new Dispatcher();
const lib = new Library('pkg', 'DEF', undefined, { dispatcher: d });
const op = lib.define('pkg::inc(int x) -> int');
lib.impl('inc', (_h, _l, v) => v + 1, 'CompositeImplicitAutograd');
console.log(JSON.stringify({
  grad: x.grad.toArray(),
  randnShape: r.shape,
  normals,
  moved,
  op: op.call(41),
  gpuInfo: typeof gpuInfo,
}));
`;
// torch.manual_seed(0); torch.randn(16, dtype=torch.float64)[:4] in PyTorch 1.13: the same bits in every runtime.
const EXPECTED = {
  grad: [2, 4, 6],
  randnShape: [2],
  normals: [-2.310411800234176, -0.3732508612577643, -1.0608166785462863, 0.9995093547811761],
  moved: true,
  op: 42,
  gpuInfo: 'function',
};

// Workers from the installed package: the intra-op pool (its worker file is a sibling of the module that spawns
// it, in whichever build the runtime resolved) and an attached agent running a program that imports the package
// itself; prints one JSON line.
const WORKERS = `
import { add, getNumThreads, manualSeed, matmul, randn, setNumThreads, spawnAgent, tensor } from 'switchyard';
import * as nn from 'switchyard/nn';

manualSeed(3);
const a = randn([67, 301]);
const b = randn([301, 45]);
setNumThreads(1);
const single = matmul(a, b).toArray();
setNumThreads(2);
const threads = getNumThreads();
const pooled = matmul(a, b).toArray();
setNumThreads(1);
const agent = await spawnAgent({ program: new URL('./program.mjs', import.meta.url) });
const doubled = await agent.call('double', tensor([1.5, -2, 3]));
const layer = await agent.call('layerName');
await agent.terminate();
const misnamed = [];
for (const [key, value] of Object.entries({ add, matmul, setNumThreads, ...nn })) {
  if (typeof value === 'function' && value.name !== key) misnamed.push(key + ' is named ' + value.name);
}
console.log(JSON.stringify({ threads, same: JSON.stringify(single) === JSON.stringify(pooled), doubled: doubled.toArray(), layer, misnamed }));
`;
const PROGRAM = `
import { Linear } from 'switchyard/nn';
export function double(x) { return x.mul(2); }
export function layerName() { return String(new Linear(2, 1)).split('(')[0]; }
`;
const WORKERS_EXPECTED = { threads: 2, same: true, doubled: [3, -4, 6], layer: 'Linear', misnamed: [] };

// The same program as TypeScript, with the types it should see (checked, not run).
const TYPED = `
import { type Tensor, tensor } from 'switchyard';
import { Linear } from 'switchyard/nn';
import { Adam } from 'switchyard/optim';
import { DispatchKey } from 'switchyard/dispatch';
const t: Tensor = tensor([1, 2], { dtype: 'float32' });
const shape: readonly number[] = t.shape;
const layer = new Linear(2, 1);
const opt = new Adam(layer.parameters(), { lr: 1e-3 });
opt.zeroGrad();
const key: number = DispatchKey.CPU;
// @ts-expect-error: tensor() takes an options object, not a dtype string
tensor([1], 'float32');
export { key, shape };
`;

describe('the npm package, installed from its tarball', () => {
  let work = '';
  let project = '';
  let files: string[] = [];

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'switchyard-pack-'));
    const packed = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', work], ROOT)) as Array<
      { filename: string; files: Array<{ path: string }> }
    >;
    files = packed[0].files.map((f) => f.path);
    project = join(work, 'app');
    sh('mkdir', ['-p', project], work);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: {} }),
    );
    sh('npm', ['install', '--no-audit', '--no-fund', '--offline', join(work, packed[0].filename)], project);
    writeFileSync(join(project, 'consumer.mjs'), CONSUMER);
    writeFileSync(join(project, 'consumer_npm.mjs'), CONSUMER.replaceAll("from 'switchyard", "from 'npm:switchyard"));
    writeFileSync(join(project, 'typed.ts'), TYPED);
    writeFileSync(join(project, 'workers.mjs'), WORKERS);
    writeFileSync(join(project, 'program.mjs'), PROGRAM);
  });

  after(() => {
    if (work !== '') rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds the built ESM, declarations, README and LICENSE, and no sources, tests or benches', () => {
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/mod.js', 'dist/mod.d.ts', 'dist/core/nn/mod.js']) {
      assert.ok(files.includes(f), `${f} is in the tarball`);
    }
    const stray = files.filter((f) =>
      !/^(package\.json|README\.md|LICENSE|dist\/.*\.(js|d\.ts)|dist\/bun\/[a-z_]+\.cjs(\.jsc)?)$/.test(f)
    );
    assert.deepEqual(stray, []);
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/switchyard/package.json'), 'utf8'));
    for (const target of Object.values(installed.exports) as Array<Record<string, string>>) {
      for (const file of Object.values(target)) {
        assert.ok(existsSync(join(project, 'node_modules/switchyard', file)), file);
      }
    }
  });

  it('Node 24 imports every entry point by its package name', () => {
    assert.match(sh(BIN('node'), ['--version'], project), /^v24\./);
    assert.deepEqual(JSON.parse(sh(BIN('node'), ['consumer.mjs'], project)), EXPECTED);
  });

  // The machine's own Node (20 on the development machines and CI), found on PATH outside node_modules.
  const systemNode = (process.env.PATH ?? '').split(SEP)
    .filter((dir) => dir !== '' && !dir.includes('node_modules'))
    .map((dir) => join(dir, 'node'))
    .find((file) => existsSync(file));
  it("the machine's own Node imports it too", { skip: systemNode === undefined && 'no node on PATH' }, () => {
    const version = sh(systemNode!, ['--version'], project);
    assert.deepEqual(JSON.parse(sh(systemNode!, ['consumer.mjs'], project)), EXPECTED, version);
  });

  it('Bun imports every entry point by its package name', () => {
    assert.deepEqual(JSON.parse(sh(BIN('bun'), ['consumer.mjs'], project)), EXPECTED);
  });

  it('Bun resolves the package to its start-up bundle: CommonJS with the bytecode beside it', () => {
    const resolved = sh(BIN('bun'), ['-e', "console.log(import.meta.resolve('switchyard'))"], project);
    assert.match(resolved, /node_modules\/switchyard\/dist\/bun\/mod\.cjs$/);
    const bundle = join(project, 'node_modules/switchyard/dist/bun');
    assert.match(readFileSync(join(bundle, 'runtime.cjs'), 'utf8').slice(0, 64), /^\/\/ @bun @bytecode @bun-cjs/);
    assert.ok(existsSync(join(bundle, 'runtime.cjs.jsc')));
  });

  it('Deno resolves the package to its start-up bundle: code-split ES modules; both bundles keep the names', () => {
    const script = "console.log(import.meta.resolve('switchyard'), import.meta.resolve('switchyard/nn'))";
    const [main, nn] = sh(BIN('deno'), ['eval', script], project).split(' ');
    assert.match(main, /node_modules\/switchyard\/dist\/deno\/mod\.js$/);
    assert.match(nn, /node_modules\/switchyard\/dist\/deno\/nn\.js$/);
    const bundle = join(project, 'node_modules/switchyard/dist/deno');
    // The entry imports shared chunks instead of the ~220 per-file modules under dist/core.
    assert.match(readFileSync(join(bundle, 'mod.js'), 'utf8'), /from"\.\/chunk-[a-z0-9]+\.js"/);
    assert.doesNotMatch(readFileSync(join(bundle, 'mod.js'), 'utf8'), /core\//);
    // Every function and class an entry exposes (inside exported namespaces and plain objects too, three levels down)
    // is named as in the compiled modules of dist/, which keep the sources' names.
    const NAMES = `
      const entries = [
        ['switchyard', 'mod.js'],
        ['switchyard/dispatch', 'core/dispatch/mod.js'],
        ['switchyard/nn', 'core/nn/mod.js'],
        ['switchyard/optim', 'core/optim/mod.js'],
        ['switchyard/gpu', 'gpu/mod.js'],
      ];
      const isContainer = (v) => v !== null && typeof v === 'object' &&
        (Object.prototype.toString.call(v) === '[object Module]' || [Object.prototype, null].includes(Object.getPrototypeOf(v)));
      const misnamed = [];
      let compared = 0;
      const walk = (built, compiled, path, depth, seen) => {
        if (seen.has(built)) return;
        seen.add(built);
        for (const [key, value] of Object.entries(built)) {
          const original = compiled[key];
          if (typeof value === 'function' && typeof original === 'function') {
            compared++;
            if (value.name !== original.name) misnamed.push(path + '.' + key + ' is named ' + value.name);
          } else if (depth < 3 && isContainer(value) && isContainer(original)) {
            walk(value, original, path + '.' + key, depth + 1, seen);
          }
        }
      };
      for (const [specifier, file] of entries) {
        const built = await import(specifier);
        walk(built, await import('./node_modules/switchyard/dist/' + file), specifier, 0, new Set());
      }
      const sw = await import('switchyard');
      console.log(JSON.stringify({
        misnamed,
        manyCompared: compared > 500,
        dtype: sw.DType.name,
        tensor: sw.tensor([1]).constructor.name,
      }));
    `;
    writeFileSync(join(project, 'names.mjs'), NAMES);
    for (const runtime of [['deno', 'run', '--no-prompt'], ['bun']]) {
      const [bin, ...args] = runtime;
      assert.deepEqual(
        JSON.parse(sh(BIN(bin), [...args, 'names.mjs'], project)),
        { misnamed: [], manyCompared: true, dtype: 'DType', tensor: 'Tensor' },
        bin,
      );
    }
  });

  it("Deno's bundle loads its WebGPU backend on demand (the lazily imported chunks) and computes on the GPU", (t) => {
    const GPU = `
      import { add, initWebGPU, matmul, tensor } from 'switchyard';
      let skip;
      try {
        await initWebGPU();
      } catch (e) {
        skip = e.message;
      }
      if (skip !== undefined) {
        console.log(JSON.stringify({ skip }));
      } else {
        const a = tensor([[1, 2], [3, 4]], { device: 'webgpu' });
        const r = matmul(add(a, a), a);
        console.log(JSON.stringify({ device: r.device.type, values: await r.toArrayAsync() }));
      }
    `;
    writeFileSync(join(project, 'gpu.mjs'), GPU);
    const result = JSON.parse(sh(BIN('deno'), ['run', '-A', 'gpu.mjs'], project));
    if (result.skip !== undefined) {
      t.skip(`no WebGPU adapter under Deno here: ${result.skip}`);
      return;
    }
    assert.deepEqual(result, { device: 'webgpu', values: [14, 20, 30, 44] });
  });

  it('Workers start from the installed package: the thread pool and an agent, under Node, Bun and Deno', () => {
    assert.deepEqual(JSON.parse(sh(BIN('node'), ['workers.mjs'], project)), WORKERS_EXPECTED);
    assert.deepEqual(JSON.parse(sh(BIN('bun'), ['workers.mjs'], project)), WORKERS_EXPECTED);
    assert.deepEqual(JSON.parse(sh(BIN('deno'), ['run', '-A', 'workers.mjs'], project)), WORKERS_EXPECTED);
  });

  it('Deno imports it by bare name and by npm: specifier, without permissions and without prompting', () => {
    for (const file of ['consumer.mjs', 'consumer_npm.mjs']) {
      assert.deepEqual(JSON.parse(sh(BIN('deno'), ['run', '--no-prompt', file], project)), EXPECTED);
    }
  });

  it('a Bun bundle of the program runs under Node', () => {
    sh(BIN('bun'), ['build', 'consumer.mjs', '--target=node', '--outfile=bundle.mjs'], project);
    assert.deepEqual(JSON.parse(sh(BIN('node'), ['bundle.mjs'], project)), EXPECTED);
  });

  it('the declaration files type-check a TypeScript consumer under tsc and deno check', () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          lib: ['esnext', 'dom'],
          types: [],
        },
        files: ['typed.ts'],
      }),
    );
    sh(BIN('tsc'), ['-p', 'tsconfig.json'], project);
    sh(BIN('deno'), ['check', 'typed.ts'], project);
    // The checkers do reject a wrong program.
    writeFileSync(join(project, 'wrong.ts'), "import { tensor } from 'switchyard';\nconst n: number = tensor([1]);\n");
    const wrong = spawnSync(BIN('deno'), ['check', 'wrong.ts'], { cwd: project, encoding: 'utf8' });
    assert.notEqual(wrong.status, 0);
    assert.match(wrong.stderr, /Tensor.*not assignable to type 'number'|TS2322/s);
  });
});
