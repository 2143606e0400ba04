// Under Deno the library never prompts: every optional environment read or write queries the permission first
// (Deno.permissions.querySync) and falls back silently. _env_script.ts wraps Deno.env to record each access while it
// imports mod.ts, runs an op, builds a Dispatcher (which reads the trace variable) and calls the env helpers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { readEnv, setEnvDefault } from '../../core/dispatch/env.ts';

const DENO = fileURLToPath(new URL('../../node_modules/.bin/deno', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./_env_script.ts', import.meta.url));

function runScript(permissions: string[]) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'EGL_PLATFORM') env[k] = v;
  env.SWITCHYARD_CHECKED = '1';
  env.SWITCHYARD_SHOW_DISPATCH_TRACE = '0';
  env.NO_COLOR = '1';
  const result = spawnSync(DENO, ['run', '--no-prompt', '--no-check', ...permissions, SCRIPT], {
    cwd: tmpdir(),
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 0, `deno exited with ${result.status}:\n${result.stderr}`);
  assert.equal(result.stderr, '', 'nothing is printed to stderr (no prompt, no warning)');
  return JSON.parse(result.stdout);
}

describe('environment access under Deno', () => {
  it('without --allow-env the package never touches Deno.env and reads every variable as unset', () => {
    assert.deepEqual(runScript([]), { sum: 6, traceEnabled: false, checked: null, setEgl: false, calls: [] });
  });

  it('with a permission for one variable only that variable is read', () => {
    const out = runScript(['--allow-env=SWITCHYARD_CHECKED']);
    assert.equal(out.checked, '1');
    assert.equal(out.setEgl, false);
    assert.ok(out.calls.length > 0);
    assert.deepEqual(out.calls.filter((c: string) => !c.startsWith('get(SWITCHYARD_CHECKED)')), []);
  });

  it('with --allow-env the variables are read and EGL_PLATFORM gets its default', () => {
    const out = runScript(['--allow-env']);
    assert.equal(out.checked, '1');
    assert.equal(out.setEgl, true);
    assert.ok(out.calls.includes('get(SWITCHYARD_SHOW_DISPATCH_TRACE)'), out.calls.join(' '));
    assert.ok(out.calls.includes('set(EGL_PLATFORM,surfaceless)'), out.calls.join(' '));
  });
});

describe('setEnvDefault and readEnv in this runtime', () => {
  it('sets an unset variable, keeps a set one, and reports whether the value is the one asked for', () => {
    const name = `SWITCHYARD_TEST_ENV_${process.pid}_${Date.now()}`;
    assert.equal(readEnv(name), undefined);
    assert.equal(setEnvDefault(name, 'a'), true);
    assert.equal(readEnv(name), 'a');
    assert.equal(setEnvDefault(name, 'a'), true);
    assert.equal(setEnvDefault(name, 'b'), false);
    assert.equal(readEnv(name), 'a');
    delete process.env[name];
    assert.equal(readEnv(name), undefined);
  });
});
