/**
 * The profiler as a dispatch key: a boxed fallback at `Profiler` records every operator call that reaches it
 * (name, overload, input shapes and dtypes, device, self and total time, nesting, the keys the call still had
 * to pass, bytes its outputs allocated). Results come as PyTorch's `key_averages().table()` text, as data and
 * as a Chrome trace (see `profiler_report.ts`). With `activities: ['cpu', 'webgpu']` the WebGPU backend's kernels
 * are timed too, where the adapter has timestamp queries (profiler_device.ts); calls that attached agents run
 * for this agent while it profiles are recorded with their agent id (profiler_agents.ts).
 *
 * Note [Profiler cost when off]
 * The fallback is registered once, on first use, and stays registered: a fallback at a key that no keyset holds
 * is never reached, and it does not change any operator's table for the keys calls do hold (the Profiler slot
 * is only read when the Profiler bit is set). Turning the profiler on adds `Profiler` to this agent's include
 * set; turning it off removes it. So a call made while no profiler runs executes exactly the instructions it
 * executed before this module existed (`bench/features.bench.ts` measures it).
 *
 * Note [Where the profiler sees calls]
 * `Profiler` sits between autograd and the backends (README, "Dispatch keys"). A call therefore reaches it after
 * autograd ran and after a CompositeImplicitAutograd operator decomposed at the autograd key: with tensors
 * that carry autograd keys the profiler records `aten::mm` and `aten::add.Tensor`, not `aten::linear` (inference
 * tensors have no autograd keys, so their composite calls are recorded with their parts nested inside). Every
 * backward operator is recorded too (the engine calls them through the dispatcher). PyTorch's profiler records
 * at the dispatcher's entry (RecordFunction), so its tables also list the composite calls; the times of the
 * operators that do the work are the same.
 *
 * @module
 */
import { DispatchKey, dispatchKeyName, toRuntimePerBackendFunctionalityKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { Dispatcher, type RegistrationHandle } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { IValue, Stack } from '../dispatch/ivalue.ts';
import { KernelFunction } from '../dispatch/kernel_function.ts';
import { includeKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Tensor } from '../tensor/tensor.ts';
import { sharedRuntimeOrUndefined } from '../workers/shared_runtime.ts';
import { type PoolChunkTime, type PoolChunkTimer, setPoolChunkTimer } from '../workers/pool.ts';
import {
  alignKernelTimes,
  type DeviceKernelEvent,
  type DeviceTimer,
  deviceTimer,
  deviceTimesPerCall,
  type ProfilerActivity,
  warnOnce,
} from './profiler_device.ts';
import {
  type ChromeTrace,
  chromeTrace,
  type EventList,
  keyAverages,
  type KeyAveragesOptions,
  writeChromeTrace,
} from './profiler_report.ts';

/** One recorded operator call. Times are microseconds since the profiler started. */
export interface ProfilerEvent {
  /** Index in {@linkcode Profiler.events} (calls in the order they started). */
  readonly id: number;
  /** Operator name without overload (`aten::add`), as PyTorch's profiler names events. */
  readonly name: string;
  /** Overload name (`Tensor`), empty for the default overload. */
  readonly overload: string;
  /** Shape of each argument: a tensor's sizes, a list per `Tensor[]` element, `[]` for a non-tensor. */
  readonly inputShapes: ReadonlyArray<readonly number[]>;
  /** ScalarType name of each tensor argument (`Float`), empty for a non-tensor (PyTorch's `Input type`). */
  readonly inputDtypes: readonly string[];
  /** Device of the first tensor argument (`cpu`, `meta`, `webgpu:0`), else the device argument, else `''`. */
  readonly device: string;
  /** Start time. */
  readonly startUs: number;
  /** Total time, children included (PyTorch's CPU total). */
  readonly totalUs: number;
  /** Total time minus the children's totals (PyTorch's Self CPU). */
  readonly selfUs: number;
  /** Nesting depth (0 for a call made outside any recorded call). */
  readonly depth: number;
  /** Id of the enclosing recorded call, -1 at depth 0. */
  readonly parent: number;
  /** The runtime keys the call went through from `Profiler` down, ending at the key whose kernel ran. */
  readonly keyPath: readonly string[];
  /**
   * Bytes of the new storages the call and its nested calls returned, each storage credited once, to the
   * innermost call that returned it (PyTorch's CPU Mem; temporaries a kernel frees are not seen).
   */
  readonly bytesAllocated: number;
  /** Bytes of the storages credited to this call itself (PyTorch's Self CPU Mem). */
  readonly selfBytesAllocated: number;
  /** The agent that ran the call: 0 for the main agent, a worker's agent id for calls it ran (Chrome trace tid). */
  readonly agent: number;
  /**
   * Device time of the kernels the call issued itself (PyTorch's Self CUDA); set only when kernel times were
   * recorded (`activities` with `'webgpu'`, an adapter with timestamp queries, after `synchronize()`).
   */
  readonly deviceSelfUs?: number;
  /** Device time of the kernels of the call and its nested calls (PyTorch's CUDA total); set as `deviceSelfUs`. */
  readonly deviceTotalUs?: number;
}

/**
 * One chunk of a CPU kernel split over the intra-op thread pool (`setNumThreads`), run while the profiler
 * recorded. Times are microseconds since the profiler started.
 */
export interface ThreadChunkEvent {
  /** The kernel export the chunk ran (`add_f32_contig`). */
  readonly kernel: string;
  /** The chunk's index in its job. */
  readonly chunk: number;
  /** Who ran it: 0 the calling agent, k the pool's worker thread k. */
  readonly thread: number;
  /** Id of the operator call that split the kernel, -1 when none was open. */
  readonly op: number;
  /** The agent whose pool ran it. */
  readonly agent: number;
  /** Start. */
  readonly startUs: number;
  /** Duration. */
  readonly durUs: number;
}

/** Options of {@linkcode profiler} and {@linkcode profile}. */
export interface ProfilerOptions {
  /** Record input shapes and dtypes (PyTorch's `record_shapes`; default true). */
  readonly recordShapes?: boolean;
  /** Record the bytes each call's outputs allocate (PyTorch's `profile_memory`; default true). */
  readonly profileMemory?: boolean;
  /**
   * What to record (PyTorch's `activities`; default `['cpu']`): `'cpu'` the operator calls, `'webgpu'` also the
   * WebGPU kernels' device times (PyTorch's `ProfilerActivity.CUDA`), read back by `await prof.synchronize()`.
   * Operator calls are always recorded: kernel times are attributed to them. Where the adapter has no
   * `'timestamp-query'` feature, a warning is printed once and no device times are shown.
   */
  readonly activities?: readonly ProfilerActivity[];
}

const ACTIVITIES: readonly string[] = ['cpu', 'webgpu'];

function checkOptions(options: ProfilerOptions): Required<ProfilerOptions> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(
      `profiler(): argument 'options' must be an object, not ${options === null ? 'null' : typeof options}`,
    );
  }
  const activities = options.activities ?? ['cpu'];
  if (!Array.isArray(activities) || activities.some((a) => !ACTIVITIES.includes(a))) {
    throw new TypeError(
      `profiler(): argument 'activities' must be a list of ${ACTIVITIES.map((a) => `'${a}'`).join(', ')}, got ` +
        (Array.isArray(activities) ? `[${activities.map((a) => JSON.stringify(a)).join(', ')}]` : typeof activities),
    );
  }
  for (const name of ['recordShapes', 'profileMemory'] as const) {
    const v = options[name];
    if (v !== undefined && typeof v !== 'boolean') {
      throw new TypeError(`profiler(): argument '${name}' must be a boolean, not ${typeof v}`);
    }
  }
  return {
    recordShapes: options.recordShapes ?? true,
    profileMemory: options.profileMemory ?? true,
    activities: Object.freeze([...activities]),
  };
}

/**
 * What a call to an attached agent carries while this agent profiles (profiler_agents.ts): the profiler's start
 * on the shared wall clock (`performance.timeOrigin + now()`, milliseconds) and its options.
 */
export interface RemoteProfileRequest {
  /** The profiler's start: `performance.timeOrigin + now()` milliseconds of the profiling agent. */
  readonly origin: number;
  /** The profiler's `recordShapes`. */
  readonly recordShapes: boolean;
  /** The profiler's `profileMemory`. */
  readonly profileMemory: boolean;
}

/** The events an agent recorded for calls it ran for a profiling agent, sent back with each call's result. */
export interface RemoteProfileEvents {
  /** Which of the agent's recording sessions (ids restart with each). */
  readonly session: number;
  /** The events, with the agent's ids and parents (the receiving profiler gives them its own). */
  readonly events: readonly ProfilerEvent[];
}

/** A call being recorded; becomes its ProfilerEvent when it returns. */
interface OpenEvent {
  readonly start: number;
  readonly id: number;
  childUs: number;
  childBytes: number;
  /** Storages the nested calls returned (credited to them, not to this call); made on first use. */
  childStorages: object[] | undefined;
}

let active: Profiler | undefined;
let registration: RegistrationHandle | undefined;
const BELOW_PROFILER = DispatchKeySet.fullAfter(DispatchKey.Profiler);

/**
 * Registers the Profiler fallback on the default dispatcher; idempotent (see Note [Profiler cost when off]).
 *
 * @example
 * ```ts
 * import { registerProfilerFallback } from './profiler.ts';
 * registerProfilerFallback();
 * registerProfilerFallback(); // no-op
 * ```
 */
export function registerProfilerFallback(): void {
  registration ??= Dispatcher.singleton().registerFallback(
    DispatchKey.Profiler,
    KernelFunction.fromBoxed(profilerFallback),
    'registered at core/features/profiler.ts',
  );
}

function profilerFallback(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
  const below = ks.and(BELOW_PROFILER);
  const p = active;
  if (p === undefined) return op.redispatchBoxed(below, stack);
  p.run(op, ks, below, stack);
}

const keyPaths = new Map<number, readonly string[]>();

/**
 * The runtime keys of a keyset from its highest down, with per-backend ones resolved to its highest backend.
 *
 * @example
 * ```ts
 * import { DispatchKey, DispatchKeySet, keyPathOf } from '../../mod.ts';
 * keyPathOf(DispatchKeySet.of(DispatchKey.Profiler, DispatchKey.CPU)); // ['Profiler', 'CPU']
 * ```
 */
export function keyPathOf(ks: DispatchKeySet): readonly string[] {
  // hi has 18 functionality bits and lo 6 backend bits: one exact number per keyset.
  const id = ks.hi * 64 + ks.lo;
  const cached = keyPaths.get(id);
  if (cached !== undefined) return cached;
  const path: string[] = [];
  const backend = ks.highestBackendKey();
  for (let f = DispatchKey.EndOfFunctionalityKeys - 1; f >= 1; f--) {
    if ((ks.hi & (1 << (f - 1))) === 0) continue;
    const perBackend = f === DispatchKey.Dense || f === DispatchKey.Quantized || f === DispatchKey.Sparse ||
      f === DispatchKey.AutogradFunctionality;
    path.push(dispatchKeyName(perBackend ? toRuntimePerBackendFunctionalityKey(f, backend) : f));
  }
  Object.freeze(path);
  keyPaths.set(id, path);
  return path;
}

function describeArguments(
  stack: Stack,
  first: number,
  shapes: Array<readonly number[]>,
  dtypes: string[],
): string {
  let device = '', deviceArg = '';
  for (let i = first; i < stack.length; i++) {
    const v = stack[i];
    const t = v.payload;
    if (Tensor.isTensor(t)) {
      shapes.push(t.shape); // a tensor's sizes never change: no copy needed
      dtypes.push(t.dtype.scalarTypeName);
      if (device === '') device = String(t.device);
    } else if (v.tag === 'GenericList' && (v.payload as IValue[]).some((e) => Tensor.isTensor(e.payload))) {
      // PyTorch flattens a TensorList's shapes into the list of shapes; its dtype reads `TensorList`.
      for (const e of v.payload as IValue[]) shapes.push(Tensor.isTensor(e.payload) ? e.payload.shape : []);
      dtypes.push('TensorList');
    } else {
      shapes.push(NO_SHAPE);
      dtypes.push(v.tag === 'Double' || v.tag === 'Int' || v.tag === 'Scalar' ? 'Scalar' : '');
      // A factory has no tensor argument: its device argument says where it runs.
      if (v.tag === 'Device' && deviceArg === '') deviceArg = String(v.payload);
    }
  }
  return device === '' ? deviceArg : device;
}

const NO_SHAPE: readonly number[] = Object.freeze([]);

function hasStorage(values: readonly IValue[], from: number, to: number, storage: object): boolean {
  for (let i = from; i < to; i++) {
    const v = values[i], t = v.payload;
    if (Tensor.isTensor(t)) {
      if (t.storage === storage) return true;
    } else if (v.tag === 'GenericList') {
      for (const e of v.payload as IValue[]) {
        if (Tensor.isTensor(e.payload) && e.payload.storage === storage) return true;
      }
    }
  }
  return false;
}

/**
 * Credits a call with the storages it returned that are neither an input's nor a nested call's; returns their
 * bytes and adds them to `credited`.
 */
function creditOutputs(
  inputs: readonly IValue[],
  outputs: readonly IValue[],
  outputsFrom: number,
  childStorages: readonly object[] | undefined,
  credited: object[],
): number {
  let bytes = 0;
  const count = (t: unknown) => {
    if (!Tensor.isTensor(t)) return;
    const storage = t.storage;
    if (childStorages?.includes(storage) || credited.includes(storage)) return;
    if (hasStorage(inputs, 0, inputs.length, storage)) return;
    credited.push(storage);
    bytes += storage.nbytes;
  };
  for (let i = outputsFrom; i < outputs.length; i++) {
    const v = outputs[i];
    if (v.tag === 'GenericList' || v.tag === 'Tuple') { for (const e of v.payload as IValue[]) count(e.payload); }
    else count(v.payload);
  }
  return bytes;
}

/**
 * A profiling session (PyTorch's `torch.profiler.profile`). Start it with {@linkcode profiler} (for `using`)
 * or {@linkcode profile} (around a callback); one runs per agent at a time.
 *
 * @example
 * ```ts
 * import { profiler, randn } from '../../mod.ts';
 * const a = randn(64, 64);
 * {
 *   using prof = profiler();
 *   a.mm(a).relu();
 *   prof.stop();
 *   console.log(prof.keyAverages().table({ sortBy: 'cpu_time_total' }));
 * }
 * ```
 */
export class Profiler implements Disposable {
  readonly #options: Required<ProfilerOptions>;
  readonly #events: Array<ProfilerEvent | undefined> = [];
  readonly #open: OpenEvent[] = [];
  #origin = 0;
  #agent = 0;
  #guard: Disposable | undefined;
  #stopped = false;
  #timer: DeviceTimer | undefined;
  #deviceUnavailable: string | undefined;
  #synchronized: Promise<this> | undefined;
  #kernels: DeviceKernelEvent[] | undefined;
  #droppedKernels = 0;
  readonly #chunks: ThreadChunkEvent[] = [];
  #previousChunkTimer: PoolChunkTimer | undefined;
  /** Main ids of other agents' events, by `agent:session:id` (profiler_agents.ts). */
  readonly #remoteIds = new Map<string, number>();
  /** Events handed out by `takeFinished()` (a worker's session). */
  #taken: boolean[] | undefined;
  #takenUpTo = 0;

  /** A profiler that has not started; see {@linkcode start}. */
  constructor(options: ProfilerOptions = {}) {
    this.#options = checkOptions(options);
  }

  /** Starts recording: registers the fallback (once) and adds `Profiler` to the include set. */
  start(): this {
    return this.startAt(performance.now());
  }

  /** @internal Starts recording with times counted from `originMs` (`performance.now()` milliseconds). */
  startAt(originMs: number): this {
    if (this.#stopped || this.#guard !== undefined) throw new RuntimeError('This profiler was already started');
    if (active !== undefined) throw new RuntimeError('Profiler is already enabled on this thread');
    registerProfilerFallback();
    if (this.#options.activities.includes('webgpu')) {
      const timer = deviceTimer('webgpu');
      if (typeof timer === 'string') {
        this.#deviceUnavailable = timer;
        warnOnce(`profiler(): ${timer}`);
      } else this.#timer = timer;
    }
    active = this;
    this.#origin = originMs;
    this.#agent = sharedRuntimeOrUndefined()?.agent ?? 0;
    this.#guard = includeKeys(DispatchKey.Profiler);
    this.#previousChunkTimer = setPoolChunkTimer((kernel, chunks) => this.#addChunks(kernel, chunks));
    this.#timer?.start(() => {
      const n = this.#open.length;
      return n === 0 ? -1 : this.#open[n - 1].id;
    });
    return this;
  }

  /** Stops recording; idempotent. Calls still open (an exception unwinding) keep the time they had. */
  stop(): this {
    if (this.#guard === undefined || this.#stopped) return this;
    this.#stopped = true;
    this.#guard[Symbol.dispose]();
    this.#guard = undefined;
    if (active === this) active = undefined;
    setPoolChunkTimer(this.#previousChunkTimer);
    this.#timer?.stop();
    return this;
  }

  #addChunks(kernel: string, chunks: readonly PoolChunkTime[]): void {
    const n = this.#open.length;
    const op = n === 0 ? -1 : this.#open[n - 1].id;
    const origin = performance.timeOrigin + this.#origin;
    for (const c of chunks) {
      this.#chunks.push({
        kernel,
        chunk: c.chunk,
        thread: c.thread,
        op,
        agent: this.#agent,
        startUs: (c.startMs - origin) * 1000,
        durUs: (c.endMs - c.startMs) * 1000,
      });
    }
  }

  /**
   * The chunks of CPU kernels that the intra-op thread pool split while this profiler recorded, each with the
   * thread that ran it and the call that split it (shown on their threads in the Chrome trace, not in the table:
   * their time is inside the calls').
   */
  threadChunks(): ThreadChunkEvent[] {
    return [...this.#chunks];
  }

  /**
   * Waits for the device: reads back the WebGPU kernel times (with `activities` including `'webgpu'`), puts them
   * on this profiler's clock and attributes them to the calls that issued them (PyTorch synchronizes the device
   * when its profiler stops; WebGPU has no blocking readback). Stops the profiler first; idempotent. Without
   * device activity it resolves at once.
   *
   * @example
   * ```ts ignore
   * using prof = profiler({ activities: ['cpu', 'webgpu'] });
   * x.mm(x); // x on webgpu
   * await prof.synchronize();
   * console.log(prof.keyAverages().table({ sortBy: 'device_time_total' }));
   * ```
   */
  synchronize(): Promise<this> {
    this.stop();
    return this.#synchronized ??= this.#collectKernels();
  }

  async #collectKernels(): Promise<this> {
    const timer = this.#timer;
    if (timer === undefined) return this;
    const records = await timer.collect();
    const { kernels, dropped } = alignKernelTimes(records, this.#origin, 'webgpu:0');
    this.#kernels = kernels;
    this.#droppedKernels = dropped;
    const parents = this.#events.map((e) => e?.parent ?? -1);
    const { self, total } = deviceTimesPerCall(parents, kernels);
    for (let i = 0; i < this.#events.length; i++) {
      const e = this.#events[i];
      if (e !== undefined && e.agent === this.#agent) {
        this.#events[i] = { ...e, deviceSelfUs: self[i], deviceTotalUs: total[i] };
      }
    }
    return this;
  }

  /**
   * The WebGPU kernels timed (after {@linkcode synchronize}), in start order, each with the id of the call that
   * issued it; empty when kernel times were not recorded.
   */
  kernels(): DeviceKernelEvent[] {
    return [...(this.#kernels ?? [])];
  }

  /**
   * Why device times are missing: the reason the device could not be timed, a reminder to `synchronize()`, or
   * undefined when they were recorded or not asked for.
   */
  get deviceTimesMissing(): string | undefined {
    if (this.#deviceUnavailable !== undefined) return this.#deviceUnavailable;
    if (this.#timer !== undefined && this.#kernels === undefined) {
      return 'WebGPU kernel times are read back by `await prof.synchronize()`';
    }
    if (this.#droppedKernels > 0) {
      return `${this.#droppedKernels} WebGPU kernels had no valid timestamps and are left out`;
    }
    return undefined;
  }

  #deviceReport(): { device?: string; note?: string } {
    if (this.#timer !== undefined && this.#kernels === undefined) {
      throw new RuntimeError(
        'The WebGPU kernel times of this profiler are not read back yet: `await prof.synchronize()` first',
      );
    }
    return { device: this.#kernels === undefined ? undefined : 'WebGPU', note: this.deviceTimesMissing };
  }

  /** Whether the profiler is recording. */
  get enabled(): boolean {
    return this.#guard !== undefined && !this.#stopped;
  }

  /** Same as {@linkcode stop}. */
  [Symbol.dispose](): void {
    this.stop();
  }

  /**
   * The recorded calls (PyTorch's `events()`): this agent's in start order, then those of attached agents in the
   * order their calls returned (each agent's in its start order).
   */
  events(): ProfilerEvent[] {
    return this.#events.filter((e): e is ProfilerEvent => e !== undefined);
  }

  /**
   * Events grouped by operator name, or also by input shapes and/or by agent (PyTorch's `key_averages`), with
   * `table()`. With WebGPU activity, call `await synchronize()` first.
   */
  keyAverages(options: KeyAveragesOptions = {}): EventList {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`keyAverages(): argument 'options' must be an object, not ${typeof options}`);
    }
    const list = keyAverages(this.events(), options);
    const { device, note } = this.#deviceReport();
    list.deviceName = device;
    list.deviceNote = note;
    return list;
  }

  /**
   * The Chrome trace object: a track per agent (`tid`), and with WebGPU kernel times a WebGPU track whose
   * kernels are linked to the calls that issued them by flow events.
   */
  chromeTrace(): ChromeTrace {
    this.#deviceReport();
    return chromeTrace(this.events(), this.#kernels ?? [], this.#chunks);
  }

  /** Writes the Chrome trace JSON to `path` (open it in https://ui.perfetto.dev). */
  exportChromeTrace(path: string): void {
    this.#deviceReport();
    writeChromeTrace(this.events(), path, this.#kernels ?? [], this.#chunks);
  }

  /** @internal What a call to an attached agent carries while this profiler records (profiler_agents.ts). */
  remoteRequest(): RemoteProfileRequest {
    return {
      origin: performance.timeOrigin + this.#origin,
      recordShapes: this.#options.recordShapes,
      profileMemory: this.#options.profileMemory,
    };
  }

  /**
   * @internal Adds the events agent `agent` recorded for this profiler, giving them ids here (a parent may
   * arrive after its children: its id is reserved when first named).
   */
  acceptRemote(agent: number, remote: RemoteProfileEvents): void {
    const idOf = (id: number): number => {
      const key = `${agent}:${remote.session}:${id}`;
      let mine = this.#remoteIds.get(key);
      if (mine === undefined) {
        mine = this.#events.length;
        this.#events.push(undefined);
        this.#remoteIds.set(key, mine);
      }
      return mine;
    };
    for (const e of remote.events) {
      const parent = e.parent < 0 ? -1 : idOf(e.parent);
      const id = idOf(e.id);
      this.#events[id] = { ...e, id, parent, agent };
    }
  }

  /** @internal The events finished since the last call (a worker's session sends them with each result). */
  takeFinished(): ProfilerEvent[] {
    const taken = this.#taken ??= [];
    const out: ProfilerEvent[] = [];
    for (let i = this.#takenUpTo; i < this.#events.length; i++) {
      const e = this.#events[i];
      if (e === undefined || taken[i]) continue;
      taken[i] = true;
      out.push(e);
    }
    while (this.#takenUpTo < this.#events.length && taken[this.#takenUpTo]) this.#takenUpTo++;
    return out;
  }

  /** @internal Runs one call under the profiler (called by the fallback). */
  run(op: OperatorHandle, ks: DispatchKeySet, below: DispatchKeySet, stack: Stack): void {
    const n = op.schema?.arguments.length ?? stack.length;
    const first = stack.length - n;
    const record = this.#options.recordShapes;
    const shapes: Array<readonly number[]> = [], dtypes: string[] = [];
    const device = describeArguments(stack, first, shapes, dtypes);
    const inputs = this.#options.profileMemory ? stack.slice(first) : [];
    const depth = this.#open.length;
    const parent = depth === 0 ? undefined : this.#open[depth - 1];
    const id = this.#events.length;
    this.#events.push(undefined); // reserves the id: events are listed in start order
    const open: OpenEvent = { start: performance.now(), id, childUs: 0, childBytes: 0, childStorages: undefined };
    this.#open.push(open);
    try {
      op.redispatchBoxed(below, stack);
    } finally {
      const end = performance.now();
      this.#open.pop();
      const total = (end - open.start) * 1000;
      let own = 0;
      let credited: object[] | undefined;
      if (this.#options.profileMemory) {
        credited = [];
        own = creditOutputs(inputs, stack, first, open.childStorages, credited);
      }
      const allBytes = own + open.childBytes;
      this.#events[id] = {
        id,
        name: nameWithoutOverload(op),
        overload: op.overloadName,
        inputShapes: record ? shapes : NO_SHAPES,
        inputDtypes: record ? dtypes : NO_DTYPES,
        device,
        startUs: (open.start - this.#origin) * 1000,
        totalUs: total,
        selfUs: Math.max(0, total - open.childUs),
        depth,
        parent: parent === undefined ? -1 : parent.id,
        keyPath: keyPathOf(ks),
        bytesAllocated: allBytes,
        selfBytesAllocated: own,
        agent: this.#agent,
      };
      if (parent !== undefined) {
        parent.childUs += total;
        parent.childBytes += allBytes;
        if (credited !== undefined && (credited.length > 0 || open.childStorages !== undefined)) {
          const up = parent.childStorages ??= [];
          up.push(...credited);
          if (open.childStorages !== undefined) up.push(...open.childStorages);
        }
      }
    }
  }
}

const NO_SHAPES: ReadonlyArray<readonly number[]> = Object.freeze([]);
const NO_DTYPES: readonly string[] = Object.freeze([]);

function nameWithoutOverload(op: OperatorHandle): string {
  const overload = op.overloadName;
  return overload === '' ? op.name : op.name.slice(0, op.name.length - overload.length - 1);
}

/**
 * Starts a profiler and returns it; stop it with `stop()` or let `using` do it.
 *
 * @example
 * ```ts
 * import { profiler, randn } from '../../mod.ts';
 * using prof = profiler({ recordShapes: true });
 * randn(8, 8).mm(randn(8, 8));
 * prof.stop();
 * prof.events()[0].name; // 'aten::randn' (factories are recorded too)
 * ```
 */
export function profiler(options: ProfilerOptions = {}): Profiler {
  return new Profiler(options).start();
}

/**
 * Profiles `fn` and returns the stopped profiler (an async `fn` gives a promise of it, resolved once the WebGPU
 * kernel times are read back when `activities` include `'webgpu'`; after a synchronous `fn`, await
 * `prof.synchronize()` for them).
 *
 * @example
 * ```ts
 * import { profile, randn } from '../../mod.ts';
 * const a = randn(32, 32);
 * const prof = profile(() => a.mm(a));
 * console.log(prof.keyAverages().table());
 * ```
 */
export function profile(fn: () => unknown, options?: ProfilerOptions): Profiler;
/** Profiles an async function: resolves to the profile once its promise settles. */
export function profile(fn: () => Promise<unknown>, options?: ProfilerOptions): Promise<Profiler>;
export function profile(fn: () => unknown, options: ProfilerOptions = {}): Profiler | Promise<Profiler> {
  if (typeof fn !== 'function') {
    throw new TypeError(`profile(): argument 'fn' must be a function, not ${fn === null ? 'null' : typeof fn}`);
  }
  const p = profiler(options);
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    p.synchronize().catch(() => {}); // stops now; frees the query sets of any kernel times
    throw e;
  }
  if (result instanceof Promise) {
    return result.then(() => p.synchronize(), (e) => {
      // Still read the timestamps back (it frees their query sets); the function's error is what the caller gets.
      p.synchronize().catch(() => {});
      throw e;
    });
  }
  return p.stop();
}

/** @internal The profiler recording on this agent, if any (profiler_agents.ts). */
export function activeProfiler(): Profiler | undefined {
  return active;
}
