/**
 * Reading an environment variable in any runtime without side effects: Deno's permission is queried first, so
 * a program run without `--allow-env` neither prompts nor fails; the variable then reads as unset.
 *
 * @module
 */

interface DenoEnv {
  env: { get(name: string): string | undefined };
  permissions?: { querySync?(descriptor: { name: 'env'; variable: string }): { state: string } };
}

/**
 * The value of environment variable `name`, or undefined when it is unset or may not be read.
 *
 * @example
 * ```ts
 * import { readEnv } from './env.ts';
 * readEnv('SWITCHYARD_SHOW_DISPATCH_TRACE'); // '1', or undefined
 * ```
 */
export function readEnv(name: string): string | undefined {
  const g = globalThis as { Deno?: DenoEnv; process?: { env: Record<string, string | undefined> } };
  try {
    if (g.Deno !== undefined) {
      const state = g.Deno.permissions?.querySync?.({ name: 'env', variable: name }).state;
      if (state !== undefined && state !== 'granted') return undefined;
      return g.Deno.env.get(name);
    }
    return g.process?.env[name];
  } catch {
    return undefined; // no permission to read the environment
  }
}
