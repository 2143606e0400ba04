/**
 * Compute pipelines cached per specialisation, bind group layouts per binding pattern, and bind groups cached
 * per set of buffers.
 *
 * Note [Kernel bindings]
 * Every kernel has the same binding scheme: binding 0 is its parameter slot in the uniform arena (a dynamic
 * offset, Note [Command batching]), binding 1 the status buffer of device-side errors, bindings 2... the
 * distinct data buffers it touches, each `array<u32>` (a dtype is a way of reading words: gpu/wgsl/dtypes.ts),
 * read-only or read-write. Operands that share a buffer (an in-place `add_`, a view and its base) share one
 * binding, since WebGPU forbids binding a buffer twice when one binding writes. A pipeline is keyed by a
 * string naming everything its WGSL depends on (kernel, dtypes, rank, which operands are contiguous, which share
 * a binding); the WGSL is generated only on the first use of a key.
 *
 * @module
 */

/** How a kernel binds a data buffer (`atomic`: read-write as `array<atomic<u32>>`, for accumulating kernels). */
export type Access = 'read' | 'read_write' | 'atomic';

/** A compiled kernel: its pipeline, the layout of its bind group and the size of its parameters. */
export interface CompiledKernel {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  readonly layoutKey: string;
  readonly paramBytes: number;
}

/** What a kernel generator returns for a new specialisation. */
export interface KernelSource {
  /** The WGSL, whose entry point is `main`. */
  readonly wgsl: string;
  /** Access of each data binding (2, 3, ...). */
  readonly access: readonly Access[];
  /** Parameter words the kernel reads (at most what the uniform declaration holds). */
  readonly paramWords: number;
}

/**
 * The WGSL declaring the bindings of Note [Kernel bindings] for `access` and `paramWords` parameter words, with
 * `pw(i)` (word i as u32), `pi(i)` (as i32) and `pf(i)` (as f32) to read them; `packed` declares the data
 * bindings as `array<vec4<u32>>` (four words per read).
 *
 * @example
 * ```ts
 * import { bindingsWgsl } from './pipelines.ts';
 * bindingsWgsl(['read_write', 'read'], 6).includes('var<storage, read> b1: array<u32>;'); // true
 * ```
 */
export function bindingsWgsl(access: readonly Access[], paramWords: number, packed = false): string {
  const element = packed ? 'vec4<u32>' : 'u32';
  const vec4s = Math.max(1, Math.ceil(paramWords / 4));
  const lines = [
    `struct Params { w: array<vec4<u32>, ${vec4s}> }`,
    '@group(0) @binding(0) var<uniform> P: Params;',
    '@group(0) @binding(1) var<storage, read_write> status: array<atomic<u32>, 4>;',
    ...access.map((a, i) =>
      a === 'atomic'
        ? `@group(0) @binding(${i + 2}) var<storage, read_write> b${i}: array<atomic<u32>>;`
        : `@group(0) @binding(${i + 2}) var<storage, ${a}> b${i}: array<${element}>;`
    ),
    'fn pw(i: u32) -> u32 { return P.w[i >> 2u][i & 3u]; }',
    'fn pi(i: u32) -> i32 { return bitcast<i32>(pw(i)); }',
    'fn pf(i: u32) -> f32 { return bitcast<f32>(pw(i)); }',
    // Records the first device-side error (Note [Device-side errors] in commands.ts).
    'fn report(code: u32, kernel: u32, lo: u32, hi: u32) {',
    '  if (atomicCompareExchangeWeak(&status[0], 0u, code).exchanged) {',
    '    atomicStore(&status[1], kernel); atomicStore(&status[2], lo); atomicStore(&status[3], hi);',
    '  }',
    '}',
  ];
  return lines.join('\n');
}

/**
 * Pipelines by key, layouts by binding pattern, bind groups by buffers.
 *
 * @example
 * ```ts
 * // const kernel = cache.kernel('add:f32:contig', () => ({ wgsl, access: ['read_write', 'read'], paramWords: 4 }));
 * ```
 */
export class PipelineCache {
  readonly #device: GPUDevice;
  readonly #kernels = new Map<string, CompiledKernel>();
  readonly #layouts = new Map<string, GPUBindGroupLayout>();
  readonly #groups = new Map<string, GPUBindGroup>();
  readonly #ids = new WeakMap<GPUBuffer, number>();
  #nextId = 1;

  /** A cache over `device`. */
  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** The kernel for `key`, compiled from `source()` on first use. */
  kernel(key: string, source: () => KernelSource): CompiledKernel {
    let k = this.#kernels.get(key);
    if (k !== undefined) return k;
    const { wgsl, access, paramWords } = source();
    const layoutKey = access.map((a) => (a === 'read' ? 'r' : 'w')).join('');
    const layout = this.#layout(layoutKey, access);
    const pipeline = this.#device.createComputePipeline({
      label: key,
      layout: this.#device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: this.#device.createShaderModule({ code: wgsl, label: key }), entryPoint: 'main' },
    });
    k = { pipeline, layout, layoutKey, paramBytes: Math.max(1, Math.ceil(paramWords / 4)) * 16 };
    this.#kernels.set(key, k);
    return k;
  }

  #layout(key: string, access: readonly Access[]): GPUBindGroupLayout {
    let layout = this.#layouts.get(key);
    if (layout !== undefined) return layout;
    const stage = GPUShaderStage.COMPUTE;
    layout = this.#device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: stage, buffer: { type: 'uniform', hasDynamicOffset: true } },
        { binding: 1, visibility: stage, buffer: { type: 'storage' } },
        ...access.map((a, i) => ({
          binding: i + 2,
          visibility: stage,
          buffer: { type: (a === 'read' ? 'read-only-storage' : 'storage') as GPUBufferBindingType },
        })),
      ],
    });
    this.#layouts.set(key, layout);
    return layout;
  }

  #id(buffer: GPUBuffer): number {
    let id = this.#ids.get(buffer);
    if (id === undefined) this.#ids.set(buffer, id = this.#nextId++);
    return id;
  }

  /** The bind group of `kernel` over `buffers` (the data bindings in order), cached by buffer identity. */
  bindGroup(
    kernel: CompiledKernel,
    uniform: GPUBuffer,
    status: GPUBuffer,
    buffers: readonly GPUBuffer[],
  ): GPUBindGroup {
    let key = `${kernel.layoutKey}|${kernel.paramBytes}`;
    for (const b of buffers) key += `|${this.#id(b)}`;
    let group = this.#groups.get(key);
    if (group !== undefined) return group;
    if (this.#groups.size >= 8192) this.#groups.clear();
    group = this.#device.createBindGroup({
      layout: kernel.layout,
      entries: [
        { binding: 0, resource: { buffer: uniform, size: kernel.paramBytes } },
        { binding: 1, resource: { buffer: status } },
        ...buffers.map((buffer, i) => ({ binding: i + 2, resource: { buffer } })),
      ],
    });
    this.#groups.set(key, group);
    return group;
  }

  /** Forgets every bind group (their buffers are being destroyed). */
  dropBindGroups(): void {
    this.#groups.clear();
  }

  /** Number of compiled pipelines (for tests and benchmarks). */
  get size(): number {
    return this.#kernels.size;
  }
}
