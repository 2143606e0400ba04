/**
 * TensorFlow.js as the peer the tensor benchmarks compare against: `@tensorflow/tfjs-core` with its `cpu`
 * backend (plain JavaScript kernels) and its `wasm` backend (XNNPACK, WebAssembly SIMD).
 *
 * Note [tfjs-wasm under Deno and Bun]
 * Both runtimes load the packages' Node builds (`dist/*.node.js`, CommonJS), so tfjs sees `IS_NODE` and Emscripten
 * reads the `.wasm` with `fs`. That works with `setWasmPaths` given the `file://` URL of
 * `node_modules/@tensorflow/tfjs-backend-wasm/dist/`, an absolute path, or nothing (the Node build falls back to its
 * own directory). With `usePlatformFetch` only the URL form works: given a bare path, Deno's fetch throws
 * `TypeError: Invalid URL` and Bun's `fetch() URL is invalid`. Under `IS_NODE` tfjs reports no multithreading, so
 * the single-threaded SIMD binary runs, which matches Switchyard's single-threaded kernels. Forcing the threaded
 * binary fails in both runtimes: Emscripten hands `worker_threads.Worker` a `blob:` URL, which both reject ("The
 * worker script or module filename must be an absolute path or a relative path").
 *
 * @module
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

/** The TensorFlow.js backends the benchmarks use. */
export type TfBackend = 'cpu' | 'wasm';

/** What {@linkcode setupTfjs} found. */
export interface TfjsPeers {
  /** The tfjs-core namespace. */
  readonly tf: typeof tf;
  /** Backends that initialised, in order. */
  readonly backends: readonly TfBackend[];
  /** Why a backend is missing, by name. */
  readonly unavailable: Readonly<Partial<Record<TfBackend, string>>>;
  /** Which tfjs-wasm binary runs: SIMD and threads as tfjs detected them. */
  readonly wasmFeatures: { simd: boolean; threads: boolean } | null;
}

let peers: Promise<TfjsPeers> | undefined;

/**
 * Initialises tfjs once: production mode (no console warnings), the wasm binaries' location, and a trial of
 * each backend.
 *
 * @example
 * ```ts
 * import { setupTfjs, useTfBackend } from './_peers.ts';
 * const { tf, backends } = await setupTfjs();
 * if (backends.includes('wasm')) await useTfBackend('wasm');
 * tf.add(tf.tensor([1]), tf.tensor([2])).dispose();
 * ```
 */
export function setupTfjs(): Promise<TfjsPeers> {
  return peers ??= initialise();
}

async function initialise(): Promise<TfjsPeers> {
  tf.enableProdMode();
  setWasmPaths(new URL('../node_modules/@tensorflow/tfjs-backend-wasm/dist/', import.meta.url).href);
  const backends: TfBackend[] = [];
  const unavailable: Partial<Record<TfBackend, string>> = {};
  for (const name of ['cpu', 'wasm'] as const) {
    try {
      // setBackend logs the cause and resolves to false when a backend fails to initialise.
      if (await tf.setBackend(name)) backends.push(name);
      else unavailable[name] = `tf.setBackend('${name}') returned false`;
    } catch (error) {
      unavailable[name] = error instanceof Error ? error.message : String(error);
    }
  }
  const wasmFeatures = backends.includes('wasm')
    ? {
      simd: Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')),
      threads: Boolean(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT')),
    }
    : null;
  return { tf, backends, unavailable, wasmFeatures };
}

/**
 * Makes `name` the active tfjs backend; tensors made afterwards live there.
 *
 * @example
 * ```ts
 * import { useTfBackend } from './_peers.ts';
 * await useTfBackend('cpu');
 * ```
 */
export async function useTfBackend(name: TfBackend): Promise<void> {
  await setupTfjs();
  if (!(await tf.setBackend(name))) throw new Error(`TensorFlow.js backend '${name}' failed to initialise`);
  await tf.ready();
}
