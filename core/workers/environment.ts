/**
 * Whether this environment can share memory between agents, and the error when it cannot.
 *
 * @module
 */

/**
 * The URL of a module that sits beside the module at `base` and shares its extension: `name.ts` beside the sources,
 * `name.js` beside the compiled files in `dist/`, `name.cjs` beside Bun's bundle (scripts/bundle.ts builds every worker
 * entry as a bundle of its own next to the main one). Worker entry files are found this way, so that a worker starts
 * from the same kind of module as the code that spawns it.
 *
 * @example
 * ```ts
 * import { siblingModuleUrl } from './environment.ts';
 * console.log(siblingModuleUrl('pool_worker', 'file:///app/dist/pool.js').href); // file:///app/dist/pool_worker.js
 * ```
 */
export function siblingModuleUrl(name: string, base: string): URL {
  const extension = /\.[cm]?[jt]s$/.exec(new URL(base).pathname)?.[0] ?? '.js';
  return new URL(`./${name}${extension}`, base);
}

/** Raised when agents cannot share memory here (no `SharedArrayBuffer`, or a page without cross-origin isolation). */
export class NotAttachableError extends Error {
  /** Names what was attempted. */
  constructor(what: string, reason: string) {
    super(
      `Cannot ${what}: ${reason}. Switchyard's Workers share one WebAssembly memory and need SharedArrayBuffer, ` +
        'which a web page gets only when cross-origin isolated (serve it with the headers ' +
        "'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp'). " +
        'Single-agent use of the runtime is unaffected',
    );
    this.name = 'NotAttachableError';
  }
}

/**
 * Why agents cannot share memory here, or undefined when they can.
 *
 * @example
 * ```ts
 * import { notAttachableReason } from './environment.ts';
 * console.log(notAttachableReason()); // undefined in Deno and Bun
 * ```
 */
export function notAttachableReason(): string | undefined {
  const g = globalThis as { SharedArrayBuffer?: unknown; crossOriginIsolated?: boolean; Atomics?: unknown };
  if (typeof g.SharedArrayBuffer !== 'function') return 'SharedArrayBuffer is not available';
  if (g.crossOriginIsolated === false) return 'the page is not cross-origin isolated (crossOriginIsolated is false)';
  if (typeof g.Atomics !== 'object') return 'Atomics is not available';
  return undefined;
}

/**
 * Throws a {@linkcode NotAttachableError} naming `what` when agents cannot share memory here.
 *
 * @example
 * ```ts
 * import { requireAttachable } from './environment.ts';
 * requireAttachable('attaching a Worker'); // no throw in Deno and Bun
 * ```
 */
export function requireAttachable(what: string): void {
  const reason = notAttachableReason();
  if (reason !== undefined) throw new NotAttachableError(what, reason);
}
