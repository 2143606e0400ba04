/**
 * Device kernel times for the profiler (PyTorch's `ProfilerActivity.CUDA`, here the WebGPU backend's
 * timestamp queries): the interface a backend registers, and the arithmetic that turns raw timestamps into
 * kernel events on the profiler's clock, attributed to the operator call that issued each kernel.
 *
 * Note [Aligning device timestamps]
 * WebGPU timestamps are nanoseconds on the device's own time base; no API relates it to `performance.now()`. A
 * kernel cannot start before the batch holding it was submitted, so each kernel gives a lower bound on the offset
 * between the clocks: `submit time - device begin`. The offset used is the largest of these bounds, the smallest
 * shift that puts every kernel at or after its submit. The spacing of kernels and their durations are the device's
 * own measurements; only where the whole GPU track sits on the CPU clock is estimated, and it errs towards early
 * (a kernel that waited in the queue before its first one is drawn as early as its submit allows, never earlier).
 * The time from a submit to the first kernel is therefore hidden, never invented. Timestamps the device did not
 * write (zero) or that run backwards are dropped and counted, never shown.
 *
 * @module
 */

/** One kernel as the backend recorded it: raw device timestamps and the CPU time its batch was submitted. */
export interface DeviceKernelRecord {
  /** Kernel name (the backend's pipeline label). */
  readonly name: string;
  /** Id of the profiler event (operator call) that issued the kernel; -1 when it ran outside any call. */
  readonly op: number;
  /** `performance.now()` when the batch holding the kernel was submitted (milliseconds, this agent's clock). */
  readonly submitMs: number;
  /** Device timestamp at the start of the kernel's compute pass, in nanoseconds. */
  readonly beginNs: bigint;
  /** Device timestamp at the end of the kernel's compute pass, in nanoseconds. */
  readonly endNs: bigint;
}

/** One kernel on the profiler's clock. Times are microseconds since the profiler started. */
export interface DeviceKernelEvent {
  /** Index in the profiler's kernel list. */
  readonly id: number;
  /** Kernel name. */
  readonly name: string;
  /** The device it ran on (`webgpu:0`). */
  readonly device: string;
  /** Id of the profiler event that issued it, -1 when none. */
  readonly op: number;
  /** Start (aligned: Note [Aligning device timestamps]). */
  readonly startUs: number;
  /** Duration as the device measured it. */
  readonly durUs: number;
}

/** What a backend offers the profiler to time its kernels (the WebGPU backend registers one). */
export interface DeviceTimer {
  /** Why kernel times cannot be recorded now (no device, no timestamp feature), or undefined when they can. */
  unavailable(): string | undefined;
  /** Starts timing each kernel; `owner()` is the id of the innermost operator call being recorded (-1: none). */
  start(owner: () => number): void;
  /** Stops timing; kernels encoded so far are submitted. Synchronous. */
  stop(): void;
  /** The kernels timed between start and stop, once the device has run them and their timestamps are read. */
  collect(): Promise<DeviceKernelRecord[]>;
}

/** Activities a profiler can record (PyTorch's `ProfilerActivity.CPU` / `.CUDA`). */
export type ProfilerActivity = 'cpu' | 'webgpu';

const timers = new Map<string, () => DeviceTimer>();

/**
 * Registers how kernels of device type `device` are timed (a backend calls it once; the last one wins).
 * Disposing the result puts back the registration it replaced.
 *
 * @example
 * ```ts
 * import { registerDeviceTimer } from './profiler_device.ts';
 * using _timer = registerDeviceTimer('webgpu', () => ({
 *   unavailable: () => 'no device in this example',
 *   start() {},
 *   stop() {},
 *   collect: () => Promise.resolve([]),
 * }));
 * ```
 */
export function registerDeviceTimer(device: string, factory: () => DeviceTimer): Disposable {
  if (typeof device !== 'string' || device === '') {
    throw new TypeError(`registerDeviceTimer(): argument 'device' must be a non-empty string, not ${typeof device}`);
  }
  if (typeof factory !== 'function') {
    throw new TypeError(`registerDeviceTimer(): argument 'factory' must be a function, not ${typeof factory}`);
  }
  const previous = timers.get(device);
  timers.set(device, factory);
  return {
    [Symbol.dispose]() {
      if (timers.get(device) !== factory) return;
      if (previous === undefined) timers.delete(device);
      else timers.set(device, previous);
    },
  };
}

/** @internal A new timer for `device`, or why there is none. */
export function deviceTimer(device: string): DeviceTimer | string {
  const factory = timers.get(device);
  if (factory === undefined) {
    return `no ${device} backend is loaded (import the WebGPU backend and await initWebGPU() before profiling)`;
  }
  const timer = factory();
  return timer.unavailable() ?? timer;
}

const warned = new Set<string>();

/** @internal Warns once per reason that device times are not recorded. */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}

/**
 * Kernel events on the profiler's clock from raw records (Note [Aligning device timestamps]); `originMs` is the
 * profiler's start (`performance.now()` milliseconds). Records with unwritten or backwards timestamps are left
 * out; `dropped` counts them.
 *
 * @example
 * ```ts
 * import { alignKernelTimes } from './profiler_device.ts';
 * const { kernels } = alignKernelTimes([
 *   { name: 'k', op: 0, submitMs: 10, beginNs: 5_000_000n, endNs: 5_002_000n },
 * ], 9, 'webgpu:0');
 * kernels[0].startUs; // 1000: at its submit, 1 ms after the profiler started
 * kernels[0].durUs; // 2
 * ```
 */
export function alignKernelTimes(
  records: readonly DeviceKernelRecord[],
  originMs: number,
  device: string,
): { kernels: DeviceKernelEvent[]; dropped: number } {
  const valid = records.filter((r) => r.beginNs > 0n && r.endNs >= r.beginNs);
  const dropped = records.length - valid.length;
  if (valid.length === 0) return { kernels: [], dropped };
  // Relative to the earliest begin, so that Number() keeps nanosecond precision on large device clocks.
  let base = valid[0].beginNs;
  for (const r of valid) if (r.beginNs < base) base = r.beginNs;
  let offsetUs = -Infinity;
  for (const r of valid) {
    const bound = (r.submitMs - originMs) * 1000 - Number(r.beginNs - base) / 1000;
    if (bound > offsetUs) offsetUs = bound;
  }
  const kernels = valid.map((r, id) => ({
    id,
    name: r.name,
    device,
    op: r.op,
    startUs: Number(r.beginNs - base) / 1000 + offsetUs,
    durUs: Number(r.endNs - r.beginNs) / 1000,
  }));
  kernels.sort((a, b) => a.startUs - b.startUs);
  return { kernels: kernels.map((k, id) => ({ ...k, id })), dropped };
}

/**
 * Device time per operator call: `self` sums the kernels a call issued itself, `total` adds its nested calls'
 * (PyTorch's Self CUDA / CUDA total). `parents[i]` is the parent id of event `i` (-1 at the top), ids ascending
 * from parent to child.
 *
 * @example
 * ```ts
 * import { deviceTimesPerCall } from './profiler_device.ts';
 * const { self, total } = deviceTimesPerCall([-1, 0], [{ op: 1, durUs: 3 }, { op: 0, durUs: 1 }]);
 * [self[0], total[0], self[1]]; // [1, 4, 3]
 * ```
 */
export function deviceTimesPerCall(
  parents: readonly number[],
  kernels: ReadonlyArray<{ readonly op: number; readonly durUs: number }>,
): { self: Float64Array; total: Float64Array } {
  const n = parents.length;
  const self = new Float64Array(n), total = new Float64Array(n);
  for (const k of kernels) if (k.op >= 0 && k.op < n) self[k.op] += k.durUs;
  total.set(self);
  // A child's id is larger than its parent's: adding from the last id up gives each parent its whole subtree.
  for (let i = n - 1; i >= 0; i--) {
    const p = parents[i];
    if (p >= 0 && p < n) total[p] += total[i];
  }
  return { self, total };
}
