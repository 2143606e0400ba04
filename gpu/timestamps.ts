/**
 * Kernel times for the profiler (`profiler({ activities: ['cpu', 'webgpu'] })`): while it records, each dispatch
 * runs in its own compute pass whose `timestampWrites` write a begin and an end timestamp into a query set; at
 * the end the query sets are resolved into a buffer, copied to a mappable one and read. The arithmetic that puts
 * them on the CPU clock is core/features/profiler_device.ts (Note [Aligning device timestamps]).
 *
 * @module
 */
import { type DeviceKernelRecord, type DeviceTimer, registerDeviceTimer } from '../core/features/profiler_device.ts';
import type { PassTimer } from './commands.ts';
import { type GpuRuntime, gpuRuntime } from './runtime.ts';

/** Queries per query set (two per kernel); WebGPU allows at most 4096. */
const QUERIES_PER_SET = 2048;

interface Pending {
  readonly name: string;
  readonly op: number;
  readonly set: number;
  readonly index: number;
  submitMs: number;
}

/** Times the kernels of one profiling session on the runtime's queue. */
class WebGpuTimer implements DeviceTimer, PassTimer {
  #rt: GpuRuntime | undefined;
  readonly #sets: GPUQuerySet[] = [];
  readonly #kernels: Pending[] = [];
  #used = QUERIES_PER_SET; // queries used in the last set: a new set on the first kernel
  #unsubmitted = 0; // index in #kernels of the first kernel not yet submitted
  #owner: () => number = () => -1;

  unavailable(): string | undefined {
    let rt: GpuRuntime;
    try {
      rt = gpuRuntime();
    } catch (e) {
      return `WebGPU kernel times are not recorded: ${(e as Error).message}`;
    }
    if (!rt.device.features.has('timestamp-query')) {
      return `WebGPU kernel times are not recorded: the adapter (${rt.info.description || 'unnamed'}) has no ` +
        "'timestamp-query' feature";
    }
    this.#rt = rt;
    return undefined;
  }

  start(owner: () => number): void {
    const rt = this.#rt ?? gpuRuntime();
    this.#rt = rt;
    this.#owner = owner;
    rt.queue.flush(); // kernels encoded before the profiler started are not timed
    rt.queue.timer = this;
  }

  stop(): void {
    const q = this.#rt?.queue;
    if (q === undefined || q.timer !== this) return;
    q.flush(); // submits (and stamps) the kernels still being encoded
    q.timer = undefined;
  }

  passWrites(label: string): GPUComputePassTimestampWrites {
    if (this.#used === QUERIES_PER_SET) {
      this.#sets.push(this.#rt!.device.createQuerySet({ type: 'timestamp', count: QUERIES_PER_SET }));
      this.#used = 0;
    }
    const index = this.#used;
    this.#used += 2;
    const set = this.#sets.length - 1;
    this.#kernels.push({ name: label || 'webgpu kernel', op: this.#owner(), set, index, submitMs: -1 });
    return { querySet: this.#sets[set], beginningOfPassWriteIndex: index, endOfPassWriteIndex: index + 1 };
  }

  submitted(): void {
    const now = performance.now();
    for (let i = this.#unsubmitted; i < this.#kernels.length; i++) this.#kernels[i].submitMs = now;
    this.#unsubmitted = this.#kernels.length;
  }

  async collect(): Promise<DeviceKernelRecord[]> {
    this.stop();
    const rt = this.#rt;
    if (rt === undefined || this.#kernels.length === 0) return [];
    const { device } = rt;
    const bytes = this.#sets.length * QUERIES_PER_SET * 8;
    const resolved = device.createBuffer({
      size: bytes,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    const read = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const encoder = device.createCommandEncoder();
      this.#sets.forEach((set, i) => {
        const count = i === this.#sets.length - 1 ? this.#used : QUERIES_PER_SET;
        encoder.resolveQuerySet(set, 0, count, resolved, i * QUERIES_PER_SET * 8);
      });
      encoder.copyBufferToBuffer(resolved, 0, read, 0, bytes);
      device.queue.submit([encoder.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const ns = new BigUint64Array(read.getMappedRange().slice(0));
      read.unmap();
      return this.#kernels.map((k) => {
        const at = k.set * QUERIES_PER_SET + k.index;
        return { name: k.name, op: k.op, submitMs: k.submitMs, beginNs: ns[at], endNs: ns[at + 1] };
      });
    } finally {
      resolved.destroy();
      read.destroy();
      for (const set of this.#sets) set.destroy();
      this.#sets.length = 0;
      this.#kernels.length = 0;
    }
  }
}

/**
 * Registers the WebGPU kernel timer with the profiler (idempotent).
 *
 * @example
 * ```ts
 * import { installGpuTimer } from './timestamps.ts';
 * installGpuTimer();
 * ```
 */
export function installGpuTimer(): void {
  registerDeviceTimer('webgpu', () => new WebGpuTimer());
}
