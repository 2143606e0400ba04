/**
 * Every example under examples/ runs to the end in a fresh process of the runtime running this test, and prints what
 * its header promises (a smoke test: the examples' own numbers are checked by the suites of what they use).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const examplesDir = new URL('../../examples/', import.meta.url);

/**
 * What each example must print, and its arguments for a quick run. An example missing here fails the test, so a
 * new example gets a smoke check when it is added.
 */
const EXPECTED: Record<string, { readonly args?: readonly string[]; readonly prints: RegExp }> = {
  'cnn.ts': { prints: /final test accuracy/ },
  'custom_backend.ts': { prints: /\[15\., 15\.\]\], device='mydev:0'\)/ },
  'digits.ts': { prints: /test accuracy/i },
  'dispatch_tour.ts': { prints: /CPU: registered at/ },
  'features_tour.ts': { prints: /step 4: loss/ },
  'logging_tensor.ts': { prints: /aten::mm/ },
  'per_sample_grads.ts': { prints: /largest difference from the loop/ },
  'workers/main.ts': { prints: /loss \d+\.\d+, logits 256,3/ },
};

function runExample(file: string, args: readonly string[]) {
  const path = fileURLToPath(new URL(file, examplesDir));
  return runScript(path, args, { timeout: 300_000 });
}

describe('examples', () => {
  // Top-level examples, and the entry (main.ts) of an example in a folder of its own (the browser one has its test).
  const files = readdirSync(examplesDir, { withFileTypes: true }).flatMap((e) =>
    e.isFile() && e.name.endsWith('.ts')
      ? [e.name]
      : e.isDirectory() && existsSync(new URL(`${e.name}/main.ts`, examplesDir))
      ? [`${e.name}/main.ts`]
      : []
  ).sort();

  it('every example has a smoke check', () => {
    assert.deepEqual(files.filter((f) => !(f in EXPECTED)), []);
  });

  for (const file of files) {
    const expected = EXPECTED[file];
    if (expected === undefined) continue;
    it(`examples/${file} runs`, () => {
      const result = runExample(file, expected.args ?? []);
      assert.equal(result.status, 0, `examples/${file} failed:\n${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, expected.prints);
    });
  }
});
