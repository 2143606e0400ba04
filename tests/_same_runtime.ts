/**
 * Runs a script in a fresh process of the runtime running the tests: `deno run -A --no-check script` under Deno,
 * `bun script` / `node script` otherwise. For tests whose subject is a separate process (examples, README blocks,
 * benchmarks in smoke mode, simulated hosts).
 *
 * @module
 */
import { spawnSync, type SpawnSyncOptions, type SpawnSyncReturns } from 'node:child_process';
import process from 'node:process';

const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/** The command-line arguments that run `script` with `args` under this runtime's executable. */
export function scriptArgs(script: string, ...args: string[]): string[] {
  return isDeno ? ['run', '-A', '--no-check', script, ...args] : [script, ...args];
}

/** Runs `script` with `args` to completion in a fresh process of this runtime (stdout/stderr as text). */
export function runScript(
  script: string,
  args: readonly string[] = [],
  options: SpawnSyncOptions = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, scriptArgs(script, ...args), { ...options, encoding: 'utf8' });
}
