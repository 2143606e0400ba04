/**
 * Runs every `*.bench.ts` suite in this directory, one after another in this process, in name order
 * (`dispatch`, then `tensor_ops`, ...). Each suite prints its table and writes its JSON through
 * `runAndReport`; mitata forgets a suite's benchmarks once they have run, so suites do not repeat each other.
 * A suite that throws is reported and the others still run; the exit code is then 1.
 *
 * Run: `deno run -A bench/run_all.ts` or `bun bench/run_all.ts` (`npm run bench` runs both); `--list` only names
 * the suites.
 *
 * @module
 */
import { readdirSync } from 'node:fs';
import process from 'node:process';

const here = new URL('./', import.meta.url);
const suites = readdirSync(here).filter((name) => name.endsWith('.bench.ts')).sort();
if (process.argv.includes('--list')) {
  // The dry form (tests/package/scripts.test.ts): name the suites a run would import, run none.
  for (const suite of suites) console.log(`bench/${suite}`);
  process.exit(0);
}
const failed: string[] = [];
for (const suite of suites) {
  console.log(`\n=== bench/${suite} ===\n`);
  try {
    await import(new URL(suite, here).href);
  } catch (error) {
    console.error(`bench/${suite} failed:`, error);
    failed.push(suite);
  }
}
if (failed.length > 0) {
  console.error(`\n${failed.length} of ${suites.length} suites failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
