/**
 * The profiler as a dispatch key: a boxed fallback at `Profiler` records every operator call that reaches it
 * (name, overload, input shapes and dtypes, device, self and total time, nesting, the keys the call still had
 * to pass, bytes its outputs allocated). Results come as PyTorch's `key_averages().table()` text, as data and
 * as a Chrome trace (see `profiler_report.ts`).
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
import {
  chromeTrace,
  type ChromeTraceEvent,
  type EventList,
  keyAverages,
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
}

/** Options of {@linkcode profiler} and {@linkcode profile}. */
export interface ProfilerOptions {
  /** Record input shapes and dtypes (PyTorch's `record_shapes`; default true). */
  readonly recordShapes?: boolean;
  /** Record the bytes each call's outputs allocate (PyTorch's `profile_memory`; default true). */
  readonly profileMemory?: boolean;
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
  #guard: Disposable | undefined;
  #stopped = false;

  /** A profiler that has not started; see {@linkcode start}. */
  constructor(options: ProfilerOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(
        `profiler(): argument 'options' must be an object, not ${options === null ? 'null' : typeof options}`,
      );
    }
    this.#options = { recordShapes: options.recordShapes ?? true, profileMemory: options.profileMemory ?? true };
  }

  /** Starts recording: registers the fallback (once) and adds `Profiler` to the include set. */
  start(): this {
    if (this.#stopped || this.#guard !== undefined) throw new RuntimeError('This profiler was already started');
    if (active !== undefined) throw new RuntimeError('Profiler is already enabled on this thread');
    registerProfilerFallback();
    active = this;
    this.#origin = performance.now();
    this.#guard = includeKeys(DispatchKey.Profiler);
    return this;
  }

  /** Stops recording; idempotent. Calls still open (an exception unwinding) keep the time they had. */
  stop(): this {
    if (this.#guard === undefined || this.#stopped) return this;
    this.#stopped = true;
    this.#guard[Symbol.dispose]();
    this.#guard = undefined;
    if (active === this) active = undefined;
    return this;
  }

  /** Whether the profiler is recording. */
  get enabled(): boolean {
    return this.#guard !== undefined && !this.#stopped;
  }

  /** Same as {@linkcode stop}. */
  [Symbol.dispose](): void {
    this.stop();
  }

  /** The recorded calls in start order (PyTorch's `events()`). */
  events(): ProfilerEvent[] {
    return this.#events.filter((e): e is ProfilerEvent => e !== undefined);
  }

  /**
   * Events grouped by operator name, or by name and input shapes (PyTorch's `key_averages`), with `table()`.
   */
  keyAverages(options: { groupByInputShape?: boolean } = {}): EventList {
    return keyAverages(this.events(), options.groupByInputShape ?? false);
  }

  /** The Chrome trace object of the recorded events. */
  chromeTrace(): { traceEvents: ChromeTraceEvent[]; displayTimeUnit: 'ms' } {
    return chromeTrace(this.events());
  }

  /** Writes the Chrome trace JSON to `path` (open it in https://ui.perfetto.dev). */
  exportChromeTrace(path: string): void {
    writeChromeTrace(this.events(), path);
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
 * Profiles `fn` and returns the stopped profiler (an async `fn` gives a promise of it).
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
    p.stop();
    throw e;
  }
  if (result instanceof Promise) {
    return result.then(() => p.stop(), (e) => {
      p.stop();
      throw e;
    });
  }
  return p.stop();
}
