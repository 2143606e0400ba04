/**
 * What the WebGPU benchmark suites share: TensorFlow.js's WebGPU backend as the peer (loaded when installed), the
 * adapter line each suite prints, moving a freshly made input to the GPU, and timing an iteration to the GPU's end.
 *
 * @module
 */
import { do_not_optimize } from './_report.ts';
import { type GpuInfo, gpuInfo, scope, synchronizeWebGPU, type Tensor } from '../mod.ts';

/** tfjs-core's module type (the peer's API as the suites call it). */
export type Tf = typeof import('@tensorflow/tfjs-core');

// A non-literal specifier: the peer is optional (no checker or install needs it).
const optionalImport = (specifier: string): Promise<unknown> => import(specifier);

/** tfjs-core with its WebGPU backend active, or the reason it is missing (printed, so a run says what it left out). */
export async function tfjsWebgpu(): Promise<{ tf: Tf } | { missing: string }> {
  const peer = await (async (): Promise<{ tf: Tf } | { missing: string }> => {
    try {
      const tf = await optionalImport('@tensorflow/tfjs-core') as Tf;
      await optionalImport('@tensorflow/tfjs-backend-webgpu');
      if (!(await tf.setBackend('webgpu'))) return { missing: "tf.setBackend('webgpu') returned false" };
      await tf.ready();
      tf.enableProdMode();
      return { tf };
    } catch (error) {
      return { missing: error instanceof Error ? error.message : String(error) };
    }
  })();
  if ('missing' in peer) console.log(`tfjs-webgpu: not measured (${peer.missing})`);
  return peer;
}

/** Prints the adapter the suite runs on (after `initWebGPU()`) and returns its description for the report. */
export function logAdapter(): GpuInfo {
  const info = gpuInfo();
  console.log(`adapter: ${info.description || info.device} (fallback: ${info.isFallbackAdapter}, via ${info.source})`);
  return info;
}

/** `t` moved to the GPU; the CPU original is disposed. */
export function onGpu(t: Tensor): Tensor {
  const g = t.to({ device: 'webgpu' });
  t.dispose();
  return g;
}

/** Runs `fn` in a scope and waits for the GPU: one timed iteration ends when the GPU has finished. */
export async function timed(fn: () => unknown): Promise<void> {
  scope(() => void do_not_optimize(fn()));
  await synchronizeWebGPU();
}

/**
 * Runs the peer's `fn` and waits for the GPU by reading one element of its result (tfjs has no other wait), as
 * {@linkcode timed} waits by reading 4 bytes: neither pays for reading a whole result back.
 */
export async function tfTimed(tf: Tf, fn: () => import('@tensorflow/tfjs-core').Tensor): Promise<void> {
  const r = fn();
  const first = tf.tidy(() => tf.slice(tf.reshape(r, [-1]), [0], [1]));
  await first.data();
  tf.dispose([r, first]);
}
