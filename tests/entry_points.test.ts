// Each package entry point (and the modules in import cycles with the operator registry) works when it is the
// first thing a program imports. Each import runs in a fresh Deno process: within one test process the
// module cache would hide an evaluation-order problem.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DENO = fileURLToPath(new URL('../node_modules/.bin/deno', import.meta.url));

function runFirst(code: string): string {
  const result = spawnSync(DENO, ['eval', '--no-check', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `${code}\n${result.stderr}`);
  return result.stdout.trim();
}

describe('entry points imported first', () => {
  it('mod.ts trains a tensor op with autograd', () => {
    const out = runFirst(
      "import { tensor } from './mod.ts'; const x = tensor([1, 2], { dtype: 'float32' }).requiresGrad_(); " +
        'x.mul(x).sum().backward(); console.log(JSON.stringify(x.grad.toArray()));',
    );
    assert.equal(out, '[2,4]');
  });

  it('core/nn and core/optim work without the root module', () => {
    const out = runFirst(
      "import { Linear } from './core/nn/mod.ts'; import { SGD } from './core/optim/mod.ts'; " +
        'const l = new Linear(3, 2); const opt = new SGD(l.parameters(), { lr: 0.1 }); ' +
        'console.log(JSON.stringify(l.weight.shape), opt.paramGroups.length);',
    );
    assert.equal(out, '[2,3] 1');
  });

  it('core/dispatch is a standalone dispatcher', () => {
    const out = runFirst(
      "import { Dispatcher, Library } from './core/dispatch/mod.ts'; const d = new Dispatcher(); " +
        "const lib = new Library('t', 'DEF', undefined, { dispatcher: d }); " +
        "const op = lib.define('t::f(int x) -> int'); lib.impl('f', (_h, _l, x) => x + 1, 'CompositeImplicitAutograd'); " +
        'console.log(op.call(41));',
    );
    assert.equal(out, '42');
  });

  for (const module of ['core/ops/derivatives.ts', 'core/ops/registry.ts', 'core/ops/creation.ts']) {
    it(`${module} can be imported first`, () => {
      const out = runFirst(`import * as m from './${module}'; console.log(Object.keys(m).length > 0);`);
      assert.equal(out, 'true');
    });
  }
});
