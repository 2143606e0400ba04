/**
 * Command batching, kernel parameters, uploads, readback and device-side errors.
 *
 * Note [Command batching]
 * Kernels encode into one shared command encoder and one open compute pass; the batch is submitted when a
 * readback needs it, when an upload targets a buffer the batch still uses, after `MAX_BATCH` dispatches, when
 * the parameter arena is full, and at the end of the current task (a microtask), so a synchronous training step
 * is a handful of submits. Each dispatch's parameters (sizes, strides, offsets, scalars) go into a host-side
 * arena at a 256-byte aligned slot; at submit the arena is written to one uniform buffer with one `writeBuffer`,
 * which the queue orders before the batch's commands, and each dispatch reads its slot through a dynamic
 * offset. Bind groups therefore depend only on the buffers bound, and are cached (gpu/pipelines.ts).
 *
 * Note [Device-side errors]
 * A check that depends on tensor data (an index out of range, an integer division by zero, a class target out
 * of range) cannot stop the caller: WebGPU has no blocking readback. As PyTorch's CUDA kernels do with device-side
 * asserts, such kernels skip the bad element and record the first failure in a status buffer; the next readback
 * (`toArrayAsync()`, `itemAsync()`, `cpuAsync()`) raises it, naming the kernel and the value, and clears it.
 *
 * @module
 */
import { RuntimeError } from '../core/dispatch/errors.ts';

/** Dispatches per submitted batch at most. */
const MAX_BATCH = 512;
/** Bytes of the parameter arena (and of the uniform buffer it is written to). */
const ARENA_BYTES = 1 << 18;
/** Words of the status buffer (Note [Device-side errors]): code, kernel, value low and high word. */
const STATUS_WORDS = 4;

/**
 * Device-side error codes, and how the message reads.
 *
 * @example
 * ```ts
 * import { DeviceError } from './commands.ts';
 * DeviceError.indexOutOfRange; // 1
 * ```
 */
export const DeviceError = {
  /** `value` is an index out of range: `index out of range in self`. */
  indexOutOfRange: 1,
  /** `value` is an index out of bounds for a dimension (gather, scatter_add). */
  indexOutOfBounds: 2,
  /** An integer division by zero. */
  zeroDivision: 3,
  /** `value` is a class target out of bounds (nll_loss). */
  targetOutOfBounds: 4,
  /** A `bernoulli` probability outside [0, 1]. */
  probabilityOutOfRange: 5,
  /** A `multinomial` probability that is negative, infinite or NaN. */
  invalidProbability: 6,
  /** A `multinomial` row whose probabilities sum to zero. */
  zeroProbabilitySum: 7,
} as const;

/** Kernel names for device-side error reports, by the id kernels write. */
const reportingKernels: string[] = [''];

/**
 * The id a kernel writes with its device-side errors, for the name `name` (registered once per name).
 *
 * @example
 * ```ts
 * import { kernelId } from './commands.ts';
 * kernelId('gather') === kernelId('gather'); // true
 * ```
 */
export function kernelId(name: string): number {
  let id = reportingKernels.indexOf(name);
  if (id < 0) id = reportingKernels.push(name) - 1;
  return id;
}

function deviceErrorMessage(words: Uint32Array): string {
  const [code, kernel, lo, hi] = words;
  const value = Number(BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)));
  const name = reportingKernels[kernel] ?? 'a kernel';
  const what = code === DeviceError.indexOutOfRange
    ? 'index out of range in self'
    : code === DeviceError.indexOutOfBounds
    ? `index ${value} is out of bounds`
    : code === DeviceError.zeroDivision
    ? 'ZeroDivisionError'
    : code === DeviceError.targetOutOfBounds
    ? `Target ${value} is out of bounds.`
    : code === DeviceError.probabilityOutOfRange
    ? 'Expected p_in >= 0 && p_in <= 1 to be true, but got false.'
    : code === DeviceError.invalidProbability
    ? 'probability tensor contains either `inf`, `nan` or element < 0'
    : code === DeviceError.zeroProbabilitySum
    ? 'invalid multinomial distribution (sum of probabilities <= 0)'
    : `error code ${code}`;
  return `${what} (raised on the WebGPU device by ${name}, reported at the next readback)`;
}

/**
 * Timestamp queries around each compute pass while the profiler times kernels (gpu/timestamps.ts installs one as
 * `CommandQueue.timer`; without one, dispatches share one pass and nothing else changes).
 */
export interface PassTimer {
  /** The timestamp writes of the pass about to run the kernel `label`. */
  passWrites(label: string): GPUComputePassTimestampWrites;
  /** Called just before the batch holding the passes since the last call is submitted. */
  submitted(): void;
}

/**
 * The queue side of the runtime: one batch being encoded, its parameter arena and the buffers it uses.
 *
 * @example
 * ```ts
 * // const q = new CommandQueue(device); const slot = q.params(8); q.words[slot] = n; q.dispatch(...)
 * ```
 */
export class CommandQueue {
  readonly #device: GPUDevice;
  readonly #uniform: GPUBuffer;
  readonly #status: GPUBuffer;
  readonly #arena = new ArrayBuffer(ARENA_BYTES);
  /** The arena as words: kernels write their parameters at the slot `params()` returns. */
  readonly words: Uint32Array = new Uint32Array(this.#arena);
  /** The arena as floats (the same bytes). */
  readonly floats: Float32Array = new Float32Array(this.#arena);
  /** The arena as signed words (the same bytes). */
  readonly ints: Int32Array = new Int32Array(this.#arena);
  readonly #alignment: number;
  readonly #pending = new Set<GPUBuffer>();
  #encoder: GPUCommandEncoder | undefined;
  #pass: GPUComputePassEncoder | undefined;
  #arenaUsed = 0;
  #dispatches = 0;
  #flushScheduled = false;
  #error: string | undefined;
  #lost: string | undefined;
  /** Set while the profiler times kernels: each dispatch then gets its own timed pass. */
  timer: PassTimer | undefined;

  /** A queue over `device`. */
  constructor(device: GPUDevice) {
    this.#device = device;
    this.#alignment = device.limits.minUniformBufferOffsetAlignment;
    this.#uniform = device.createBuffer({ size: ARENA_BYTES, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.#status = device.createBuffer({
      size: STATUS_WORDS * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    device.addEventListener('uncapturederror', (event) => {
      this.#error ??= String((event as GPUUncapturedErrorEvent).error?.message ?? event);
    });
    device.lost.then((info) => {
      this.#lost = `${info.reason}: ${info.message}`;
    });
  }

  /** The uniform buffer kernels read their parameters from. */
  get uniform(): GPUBuffer {
    return this.#uniform;
  }
  /** The status buffer of device-side errors. */
  get status(): GPUBuffer {
    return this.#status;
  }

  /** Throws if the device was lost. */
  checkAlive(): void {
    if (this.#lost !== undefined) throw new RuntimeError(`WebGPU device was lost (${this.#lost})`);
  }

  /**
   * Reserves an aligned slot of `words` parameter words for the next dispatch; returns its first word index.
   * Submits the batch first when the arena is full.
   */
  params(words: number): number {
    const bytes = Math.ceil((words * 4) / this.#alignment) * this.#alignment;
    if (this.#arenaUsed + bytes > ARENA_BYTES) this.flush();
    const slot = this.#arenaUsed;
    this.#arenaUsed += bytes;
    return slot >> 2;
  }

  /** Records one dispatch reading the parameters at word `slot`; `buffers` are the buffers it binds. */
  dispatch(
    pipeline: GPUComputePipeline,
    bindGroup: GPUBindGroup,
    slot: number,
    buffers: readonly GPUBuffer[],
    groupsX: number,
    groupsY = 1,
    groupsZ = 1,
  ): void {
    this.checkAlive();
    const timer = this.timer;
    if (timer !== undefined) {
      this.#pass?.end();
      this.#pass = this.#encode().beginComputePass({ timestampWrites: timer.passWrites(pipeline.label) });
    }
    const pass = this.#pass ??= this.#encode().beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup, [slot * 4]);
    pass.dispatchWorkgroups(groupsX, groupsY, groupsZ);
    if (timer !== undefined) {
      pass.end();
      this.#pass = undefined;
    }
    for (const b of buffers) this.#pending.add(b);
    if (++this.#dispatches >= MAX_BATCH) this.flush();
    else this.#scheduleFlush();
  }

  #encode(): GPUCommandEncoder {
    return this.#encoder ??= this.#device.createCommandEncoder();
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    queueMicrotask(() => {
      this.#flushScheduled = false;
      this.flush();
    });
  }

  /** Submits the batch (parameters first). */
  flush(): void {
    if (this.#encoder === undefined) return;
    this.#pass?.end();
    this.#pass = undefined;
    if (this.#arenaUsed > 0) this.#device.queue.writeBuffer(this.#uniform, 0, this.#arena, 0, this.#arenaUsed);
    this.timer?.submitted();
    this.#device.queue.submit([this.#encoder.finish()]);
    this.#encoder = undefined;
    this.#arenaUsed = 0;
    this.#dispatches = 0;
    this.#pending.clear();
  }

  /** Writes host bytes into a buffer, after submitting the batch if it still uses that buffer. */
  upload(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView<ArrayBuffer>): void {
    this.checkAlive();
    if (this.#pending.has(buffer)) this.flush();
    this.#device.queue.writeBuffer(buffer, byteOffset, data.buffer, data.byteOffset, data.byteLength);
  }

  /** Records a buffer-to-buffer copy (byte offsets and size multiples of 4). */
  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, size: number): void {
    this.checkAlive();
    if (size === 0) return;
    this.#pass?.end();
    this.#pass = undefined;
    this.#encode().copyBufferToBuffer(src, srcOffset, dst, dstOffset, size);
    this.#pending.add(src);
    this.#pending.add(dst);
    this.#scheduleFlush();
  }

  /**
   * Reads `size` bytes of `buffer` from `byteOffset` once every command recorded so far has run. Raises a
   * device-side error recorded since the last readback (Note [Device-side errors]) and any WebGPU validation
   * error.
   */
  async read(buffer: GPUBuffer, byteOffset: number, size: number): Promise<ArrayBuffer> {
    this.checkAlive();
    const bytes = Math.max(4, Math.ceil(size / 4) * 4);
    const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const staging = this.#device.createBuffer({ size: bytes + STATUS_WORDS * 4, usage });
    try {
      this.copy(buffer, byteOffset, staging, 0, bytes);
      this.copy(this.#status, 0, staging, bytes, STATUS_WORDS * 4);
      this.flush();
      await staging.mapAsync(GPUMapMode.READ);
      const all = staging.getMappedRange().slice(0);
      staging.unmap();
      this.checkAlive();
      if (this.#error !== undefined) {
        const message = this.#error;
        this.#error = undefined;
        throw new RuntimeError(`WebGPU error: ${message}`);
      }
      const status = new Uint32Array(all, bytes, STATUS_WORDS);
      if (status[0] !== 0) {
        const message = deviceErrorMessage(status);
        this.#device.queue.writeBuffer(this.#status, 0, new Uint32Array(STATUS_WORDS));
        throw new RuntimeError(message);
      }
      return all.slice(0, size);
    } finally {
      staging.destroy();
    }
  }
}
