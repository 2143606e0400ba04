/**
 * The README's benchmark tables are the ones `bench/figures.ts` writes from `bench/results/*.json`: a figure cannot
 * be edited by hand or left behind when the results change.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generatedBlocks, withGeneratedBlocks } from '../../bench/figures.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README benchmark figures', () => {
  it('equal the tables generated from bench/results (run `deno run -A bench/figures.ts` to refresh them)', () => {
    assert.equal(withGeneratedBlocks(readme), readme);
  });

  it('cover every suite that has results, with at least one run per runtime', () => {
    for (const [name, block] of Object.entries(generatedBlocks())) {
      assert.match(block, /Deno: \d+ runs?\s+\(/, `${name} has no Deno run`);
      assert.match(block, /Bun: \d+ runs?\s+\(/, `${name} has no Bun run`);
    }
  });
});
