/**
 * File access for the few entry points that read or write files (`safetensors.saveFile`/`loadFile`, the profiler's
 * `exportChromeTrace`). `node:fs` is looked up when a file is actually read or written, through
 * `process.getBuiltinModule` (Deno, Bun and Node have it), never imported: a module that imported it would not load
 * in a browser, where the rest of the runtime works.
 *
 * @module
 */

/** The synchronous file functions the runtime uses. */
export interface HostFileSystem {
  /** Reads a whole file. */
  readFileSync(path: string): Uint8Array;
  /** Writes a whole file (bytes or text). */
  writeFileSync(path: string, data: Uint8Array | string): void;
}

/**
 * The host's file system; throws an error naming `what` where there is none (a browser).
 *
 * @example
 * ```ts
 * import { hostFileSystem } from './host_files.ts';
 * const fs = hostFileSystem('demo');
 * typeof fs.writeFileSync; // 'function' in Deno, Bun and Node
 * ```
 */
export function hostFileSystem(what: string): HostFileSystem {
  const process = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process;
  const fs = process?.getBuiltinModule?.('node:fs') as HostFileSystem | undefined;
  if (fs === undefined) throw new Error(`${what} needs file system access (Deno, Bun or Node)`);
  return fs;
}
