/**
 * Every benchmark suite runs in smoke mode (`SWITCHYARD_BENCH_SMOKE=1`: small inputs, the suites' own correctness
 * checks, each benchmark called once, nothing written to bench/results) in a fresh process of the runtime running
 * this test, so a suite that no longer runs fails `npm test` rather than the next `npm run bench`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const benchDir = new URL('../../bench/', import.meta.url);

describe('benchmark suites in smoke mode', () => {
  const suites = readdirSync(benchDir).filter((f) => f.endsWith('.bench.ts')).sort();
  for (const suite of suites) {
    it(`bench/${suite} runs its checks and calls every benchmark`, () => {
      const path = fileURLToPath(new URL(suite, benchDir));
      const result = runScript(path, [], {
        timeout: 300_000,
        env: { ...process.env, SWITCHYARD_BENCH_SMOKE: '1' },
      });
      assert.equal(result.status, 0, `bench/${suite} failed:\n${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /smoke run, \d+ benchmarks called once each/);
    });
  }
});
