/**
 * Third-party backends (core/features/backends.ts) through examples/custom_backend.ts: device strings, one
 * rename per process, BackendSelect factories, `.to()` both ways, printing, the backend's JS kernels, its CPU
 * fallback, autograd through the device, computed tables and storage hooks. Registering a backend changes the
 * process for good (Bun runs every test file in one process), so the checks (custom_backend_checks.ts) run in a
 * child process of the same runtime; each check is one test here.
 */
import { runScript } from '../_same_runtime.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

const CHECKS = [
  'device strings parse and print with the backend name',
  'only one backend, as PyTorch allows one rename',
  'factories go to the backend through BackendSelect',
  '.to() both ways, views, dtypes',
  "async reads go through the backend's copy to the CPU",
  'printing names the device',
  'JS kernels: add, mul, sum, mm against float64 references',
  'the boxed fallback runs everything else on the CPU',
  'autograd through the custom device',
  'computed dispatch tables name the backend',
  'dispatch key parsers accept the backend name',
  'storage hooks allocate and free blocks',
];

describe('custom backend (PrivateUse1 renamed to mydev)', () => {
  const script = new URL('./custom_backend_checks.ts', import.meta.url).pathname;
  const child = runScript(script);
  const lines = child.stdout.split('\n');

  it('the checks process runs every check and exits cleanly', () => {
    assert.equal(child.status, 0, child.stderr);
    assert.ok(lines.includes(`checks: ${CHECKS.length} passed, 0 failed`), child.stdout + child.stderr);
  });
  for (const name of CHECKS) {
    it(name, () => {
      const line = lines.find((l) => l === `ok ${name}` || l.startsWith(`not ok ${name}:`));
      assert.equal(line, `ok ${name}`, line ?? `check missing from the output:\n${child.stdout}\n${child.stderr}`);
    });
  }
});
