/**
 * Every benchmark suite runs in smoke mode (`SWITCHYARD_BENCH_SMOKE=1`: small inputs, the suites' own correctness
 * checks, each benchmark called once, nothing written to bench/results) in a fresh process of the runtime running
 * this test, so a suite that no longer runs fails `npm test` rather than the next `npm run bench`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = new URL('../../bench/', import.meta.url);
const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';

describe('benchmark suites in smoke mode', () => {
  const suites = readdirSync(benchDir).filter((f) => f.endsWith('.bench.ts')).sort();
  for (const suite of suites) {
    it(`bench/${suite} runs its checks and calls every benchmark`, () => {
      const path = fileURLToPath(new URL(suite, benchDir));
      const args = isBun ? [path] : ['run', '-A', '--no-check', path];
      const result = spawnSync(process.execPath, args, {
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, SWITCHYARD_BENCH_SMOKE: '1' },
      });
      assert.equal(result.status, 0, `bench/${suite} failed:\n${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /smoke run, \d+ benchmarks called once each/);
    });
  }
});
