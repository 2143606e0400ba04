/**
 * Reading an environment variable in any runtime without side effects: Deno's permission is queried first, so
 * a program run without `--allow-env` neither prompts nor fails; the variable then reads as unset.
 *
 * @module
 */

interface DenoEnv {
  env: { get(name: string): string | undefined; set(name: string, value: string): void };
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
      if (!denoEnvGranted(g.Deno, name)) return undefined;
      return g.Deno.env.get(name);
    }
    return g.process?.env[name];
  } catch {
    return undefined; // no permission to read the environment
  }
}

/**
 * Sets environment variable `name` to `value` unless it is already set; returns whether it is set to `value` now.
 * Under Deno without the env permission for `name` nothing is read or written (no prompt) and the result is false.
 *
 * @example
 * ```ts
 * import { setEnvDefault } from './env.ts';
 * setEnvDefault('EGL_PLATFORM', 'surfaceless'); // true unless EGL_PLATFORM was set to something else
 * ```
 */
export function setEnvDefault(name: string, value: string): boolean {
  const g = globalThis as { Deno?: DenoEnv; process?: { env?: Record<string, string | undefined> } };
  try {
    if (g.Deno !== undefined) {
      if (!denoEnvGranted(g.Deno, name)) return false;
      const current = g.Deno.env.get(name);
      if (current === undefined) g.Deno.env.set(name, value);
      return (current ?? value) === value;
    }
    const env = g.process?.env;
    if (env === undefined) return false;
    if (env[name] === undefined) env[name] = value;
    return env[name] === value;
  } catch {
    return false; // no permission to touch the environment
  }
}

/** Whether Deno may access variable `name` without asking: only a granted permission counts. */
function denoEnvGranted(deno: DenoEnv, name: string): boolean {
  const state = deno.permissions?.querySync?.({ name: 'env', variable: name }).state;
  return state === undefined || state === 'granted';
}
