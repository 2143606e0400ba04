/**
 * The common shape of the WebGPU kernels that are not elementwise: one invocation per work item (a row, a
 * batch element, an indexed element), looping with a grid stride over `pw(0u)` items, with the bindings of
 * Note [Kernel bindings] and the WGSL helper libraries.
 *
 * @module
 */
import type { KernelBindings } from '../boundary.ts';
import { bindingsWgsl } from '../pipelines.ts';
import { type GpuRuntime, gpuRuntime } from '../runtime.ts';
import { FLOAT_WGSL, I64_WGSL } from '../wgsl/dtypes.ts';
import { MATH_WGSL } from '../wgsl/math.ts';

/** One dispatch of a per-item kernel. */
export interface ItemKernel {
  /** Pipeline key: everything the WGSL depends on. */
  readonly key: string;
  readonly bindings: KernelBindings;
  /** Parameter words, word 0 being the item count. */
  readonly words: number;
  /**
   * WGSL statements run for item `t` (a u32), generated on the first use of `key`; every operand must already
   * be bound in `bindings` (a cached pipeline skips this function).
   */
  readonly body: () => string[];
  /** Number of items. */
  readonly items: number;
  /** Writes parameter words 1.. at `slot` (word 0, the item count, is written here). */
  readonly params: (q: GpuRuntime['queue'], slot: number) => void;
}

/**
 * Records one per-item kernel.
 *
 * @example
 * ```ts
 * import { runItems } from './custom.ts';
 * // runItems({ key, bindings, words: 4, items: rows, body: () => [...], params: (q, slot) => { ... } });
 * ```
 */
export function runItems(k: ItemKernel): void {
  if (k.items === 0) return;
  const rt = gpuRuntime();
  const wg = rt.workgroupSize;
  const kernel = rt.pipelines.kernel(k.key, () => ({
    wgsl: [
      bindingsWgsl(k.bindings.access, k.words),
      FLOAT_WGSL,
      I64_WGSL,
      MATH_WGSL,
      `@compute @workgroup_size(${wg}) fn main(@builtin(global_invocation_id) gid: vec3<u32>, ` +
      '@builtin(num_workgroups) nwg: vec3<u32>) {',
      `  let total = nwg.x * ${wg}u;`,
      '  for (var t = gid.x; t < pw(0u); t = t + total) {',
      ...k.body().map((l) => `    ${l}`),
      '  }',
      '}',
    ].join('\n'),
    access: [...k.bindings.access],
    paramWords: k.words,
  }));
  const q = rt.queue;
  const slot = q.params(k.words);
  q.words[slot] = k.items;
  k.params(q, slot);
  const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, k.bindings.buffers);
  q.dispatch(kernel.pipeline, group, slot, k.bindings.buffers, Math.min(Math.ceil(k.items / wg), rt.maxGroups));
}
