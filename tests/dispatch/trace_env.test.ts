// SWITCHYARD_SHOW_DISPATCH_TRACE, read once by each Dispatcher from the environment (SEMANTICS §4, "Dispatch
// trace"): "1" prints one stderr line per call, indented by nesting depth; unset or "0" prints nothing; any other
// value warns and is ignored. Each case runs _trace_script.ts in a fresh Deno process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const DENO = fileURLToPath(new URL('../../node_modules/.bin/deno', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./_trace_script.ts', import.meta.url));
const VAR = 'SWITCHYARD_SHOW_DISPATCH_TRACE';

function runScript(value: string | undefined): { stdout: string; stderr: string; traceLines: string[] } {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== VAR) env[k] = v;
  if (value !== undefined) env[VAR] = value;
  env.NO_COLOR = '1';
  const result = spawnSync(DENO, ['run', '-A', '--no-check', SCRIPT], {
    cwd: tmpdir(), // the script must not depend on the working directory
    env,
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(result.error, undefined, String(result.error));
  assert.equal(result.status, 0, `deno exited with ${result.status}:\n${result.stderr}`);
  const traceLines = result.stderr.split('\n').filter((l) =>
    /^ *\[(call|callBoxed|redispatch|redispatchBoxed)\] /.test(l)
  );
  return { stdout: result.stdout, stderr: result.stderr, traceLines };
}

const RESULTS = ['outer(inner)', 'outer(inner)', 'zeros(2,3)'];

describe('dispatch trace from the environment', () => {
  it('=1 prints every call with its op and key, nested calls indented one space per level', () => {
    const { stdout, traceLines } = runScript('1');
    assert.deepEqual(JSON.parse(stdout), { traceEnabled: true, results: RESULTS });
    assert.deepEqual(traceLines, [
      '[call] op=[trace::outer], key=[AutogradCPU]',
      ' [redispatch] op=[trace::outer], key=[CPU]',
      '  [call] op=[trace::inner], key=[CPU]',
      '[callBoxed] op=[trace::outer], key=[AutogradCPU]',
      ' [redispatch] op=[trace::outer], key=[CPU]',
      '  [call] op=[trace::inner], key=[CPU]',
      // No tensors: BackendSelect and ADInplaceOrView fall through, so the keyset is empty.
      '[call] op=[trace::zeros], key=[Undefined]',
    ]);
  });

  it('unset or =0 prints nothing', () => {
    for (const value of [undefined, '0']) {
      const { stdout, stderr } = runScript(value);
      assert.deepEqual(JSON.parse(stdout), { traceEnabled: false, results: RESULTS });
      assert.equal(stderr, '', `stderr with ${VAR}=${value}`);
    }
  });

  it('any other value warns, names the value, and leaves the trace off', () => {
    const { stdout, stderr, traceLines } = runScript('yes');
    assert.deepEqual(JSON.parse(stdout), { traceEnabled: false, results: RESULTS });
    assert.ok(
      stderr.includes(`ignoring invalid value for ${VAR}: yes valid values are 0 or 1.`),
      `stderr:\n${stderr}`,
    );
    assert.deepEqual(traceLines, []);
  });
});
