/**
 * Graph capture: `trace(fn, exampleInputs)` runs `fn` once and records the aten operators the dispatcher ran
 * as a {@linkcode Graph}; `makeFx(fn)` is PyTorch's `make_fx` (a training step with its backward included).
 *
 * Note [Two capture levels]
 * - `level: 'aten'` (the default, and `makeFx`): a dispatch mode at the `Python` key records. `Python` is below
 *   autograd, so the graph holds what reached the kernels: CompositeImplicitAutograd operators already
 *   decomposed (`aten::t` + `aten::addmm` for a linear layer on tensors with autograd keys), and every backward
 *   operator the engine ran when `fn` calls `backward()`. The graph replays below autograd.
 * - `level: 'pre-autograd'`: a boxed fallback at the `Tracer` key records. `Tracer` is above autograd, so the
 *   graph holds the calls `fn` made itself (`aten::linear`), before autograd and decompositions; operators
 *   those calls make internally run with `Tracer` excluded and are not recorded (PyTorch's tracer state is off
 *   inside a traced op the same way). The graph replays through autograd, so it stays differentiable.
 *
 * Note [Tensors a graph did not make]
 * A tensor argument is a graph value when it is an input or a result of a recorded call. Autograd hands
 * kernels new Tensor objects over the same storage (saved tensors, gradients it accumulated): a tensor with the
 * storage, offset, sizes, strides and dtype of a graph value is that value. Any other tensor is a constant
 * (`get_attr`): the captured tensor itself, replayed as it was (moved to the replay device).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { Dispatcher, type RegistrationHandle } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { Stack } from '../dispatch/ivalue.ts';
import { KernelFunction } from '../dispatch/kernel_function.ts';
import { includeKeys, withExcludedKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Device } from '../tensor/device.ts';
import { Tensor } from '../tensor/tensor.ts';
import { callOp, type DispatchKwargs, DispatchMode, splitArguments, type TorchDispatchClass } from './dispatch_mode.ts';
import { FakeTensorMode } from './fake_tensor.ts';
import { Graph, metaOf, ValueRef } from './graph.ts';

/** Options of {@linkcode trace}. */
export interface TraceOptions {
  /** What to record (see Note [Two capture levels]); default `'aten'`. */
  readonly level?: 'aten' | 'pre-autograd';
  /** Names of the placeholders (default `arg0`, `arg1`, ...). */
  readonly inputNames?: readonly string[];
  /**
   * `'fake'` runs `fn` under a {@linkcode FakeTensorMode} below the capture (PyTorch's `make_fx(...,
   * tracing_mode="fake")`): the graph is recorded from shapes and dtypes alone, nothing is computed and the
   * inputs are not modified. Only with `level: 'aten'`. Default `'real'`.
   */
  readonly tracingMode?: 'real' | 'fake';
}

function geometryKey(t: Tensor): string {
  return `${t.storageOffset}|${t.shape.join(',')}|${t.stride().join(',')}|${t.dtype.name}`;
}

/** Builds a graph from the calls it is shown. */
class GraphRecorder {
  readonly graph: Graph;
  readonly #values = new Map<Tensor, ValueRef>();
  readonly #aliases = new WeakMap<object, Map<string, ValueRef>>();
  #constants = 0;
  readonly #metaStandsFor: Device | undefined;

  /** `metaStandsFor`: in fake tracing, the device that recorded `meta` device arguments stand for. */
  constructor(postAutograd: boolean, metaStandsFor?: Device) {
    this.graph = new Graph({ postAutograd });
    this.#metaStandsFor = metaStandsFor;
  }

  #remember(t: Tensor, ref: ValueRef): void {
    this.#values.set(t, ref);
    let byGeometry = this.#aliases.get(t.storage);
    if (byGeometry === undefined) this.#aliases.set(t.storage, byGeometry = new Map());
    byGeometry.set(geometryKey(t), ref);
  }

  input(t: Tensor, name: string): void {
    const node = this.graph.addNode({
      name: this.graph.freshName(name),
      op: 'placeholder',
      target: name,
      args: [],
      kwargs: {},
      meta: metaOf(t),
    });
    this.#remember(t, new ValueRef(node.name));
  }

  refOf(t: Tensor): ValueRef {
    const known = this.#values.get(t) ?? this.#aliases.get(t.storage)?.get(geometryKey(t));
    if (known !== undefined) return known;
    const name = `_tensor_constant${this.#constants++}`;
    this.graph.constants.set(name, t);
    const node = this.graph.addNode({
      name: this.graph.freshName(name),
      op: 'get_attr',
      target: name,
      args: [],
      kwargs: {},
      meta: metaOf(t),
    });
    const ref = new ValueRef(node.name);
    this.#remember(t, ref);
    return ref;
  }

  #arg(v: unknown): unknown {
    if (Tensor.isTensor(v)) return this.refOf(v);
    if (Array.isArray(v)) return v.map((e) => this.#arg(e));
    if (v instanceof Device && v.type === 'meta' && this.#metaStandsFor !== undefined) return this.#metaStandsFor;
    return v;
  }

  record(op: OperatorHandle, args: readonly unknown[], kwargs: DispatchKwargs, result: unknown): void {
    const mapped = args.map((a) => this.#arg(a));
    const mappedKwargs: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(kwargs)) mappedKwargs[k] = this.#arg(v);
    const base = op.name.slice(op.name.indexOf('::') + 2).split('.')[0];
    const node = this.graph.addNode({
      name: this.graph.freshName(base),
      op: 'call_function',
      target: op.name,
      args: mapped,
      kwargs: mappedKwargs,
      meta: metaOf(result),
    });
    if (Tensor.isTensor(result)) this.#remember(result, new ValueRef(node.name));
    else if (Array.isArray(result)) {
      result.forEach((r, i) => {
        if (Tensor.isTensor(r)) this.#remember(r, new ValueRef(node.name, i));
      });
    }
  }

  finish(result: unknown): Graph {
    const out = (v: unknown): unknown => (Tensor.isTensor(v) ? this.refOf(v) : Array.isArray(v) ? v.map(out) : v);
    this.graph.singleOutput = !Array.isArray(result);
    const value = result === undefined ? [] : out(result);
    this.graph.addNode({ name: 'output', op: 'output', target: 'output', args: [value], kwargs: {}, meta: null });
    return this.graph;
  }
}

/** The recording mode of `level: 'aten'`. */
class GraphCaptureMode extends DispatchMode {
  readonly #recorder: GraphRecorder;
  constructor(recorder: GraphRecorder) {
    super();
    this.#recorder = recorder;
  }
  override dispatch(
    op: OperatorHandle,
    _t: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown {
    const result = callOp(op, args, kwargs);
    this.#recorder.record(op, args, kwargs, result);
    return result;
  }
}

let activeTracer: GraphRecorder | undefined;
let tracerRegistration: RegistrationHandle | undefined;
const BELOW_TRACER = DispatchKeySet.fullAfter(DispatchKey.Tracer);

function tracerFallback(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
  const recorder = activeTracer;
  const below = ks.and(BELOW_TRACER);
  if (recorder === undefined) return op.redispatchBoxed(below, stack);
  const n = op.schema?.arguments.length ?? stack.length;
  const [args, kwargs] = splitArguments(op, stack, n);
  const first = stack.length - n;
  withExcludedKeys(DispatchKey.Tracer, () => op.redispatchBoxed(below, stack));
  const returns = stack.slice(first).map((v) => v.toJS());
  recorder.record(op, args, kwargs, (op.schema?.returns.length ?? 1) === 1 ? returns[0] : returns);
}

/**
 * Registers the Tracer-key fallback on the default dispatcher; idempotent. A fallback at a key no keyset
 * holds costs nothing (see Note [Profiler cost when off] in `profiler.ts`).
 *
 * @example
 * ```ts
 * import { registerTracerFallback } from './tracer.ts';
 * registerTracerFallback();
 * ```
 */
export function registerTracerFallback(): void {
  tracerRegistration ??= Dispatcher.singleton().registerFallback(
    DispatchKey.Tracer,
    KernelFunction.fromBoxed(tracerFallback),
    'registered at core/features/tracer.ts',
  );
}

/**
 * Runs `fn(...exampleInputs)` once and returns the graph of the operators it ran (see Note [Two capture
 * levels]). The inputs become the graph's placeholders; other tensors `fn` uses become constants.
 *
 * @example
 * ```ts
 * import { randn, trace } from '../../mod.ts';
 * const g = trace((x, w) => x.mm(w).relu(), [randn(4, 3), randn(3, 2)], { inputNames: ['x', 'w'] });
 * g.print(); // function forward(x, w) { const mm = aten::mm(x, w); ... }
 * ```
 */
export function trace(
  // deno-lint-ignore no-explicit-any
  fn: (...inputs: any[]) => unknown,
  exampleInputs: readonly Tensor[],
  options: TraceOptions = {},
): Graph {
  if (typeof fn !== 'function') throw new TypeError(`trace(): argument 'fn' must be a function, not ${typeof fn}`);
  if (!Array.isArray(exampleInputs)) {
    throw new TypeError(`trace(): argument 'exampleInputs' must be an array of tensors, not ${typeof exampleInputs}`);
  }
  exampleInputs.forEach((t, i) => {
    if (!Tensor.isLive(t)) throw new TypeError(`trace(): example input ${i} must be a live Tensor`);
  });
  const level = options.level ?? 'aten';
  if (level !== 'aten' && level !== 'pre-autograd') {
    throw new TypeError(`trace(): level must be 'aten' or 'pre-autograd', got ${String(level)}`);
  }
  const names = options.inputNames ?? [];
  if (names.length > exampleInputs.length || names.some((n) => typeof n !== 'string' || !/^[A-Za-z_]\w*$/.test(n))) {
    throw new TypeError('trace(): inputNames must be identifiers, at most one per input');
  }
  const tracingMode = options.tracingMode ?? 'real';
  if (tracingMode !== 'real' && tracingMode !== 'fake') {
    throw new TypeError(`trace(): tracingMode must be 'real' or 'fake', got ${String(tracingMode)}`);
  }
  if (tracingMode === 'fake' && level !== 'aten') {
    throw new TypeError("trace(): tracingMode 'fake' needs level 'aten'");
  }
  const recorder = new GraphRecorder(
    level === 'aten',
    tracingMode === 'fake' ? (exampleInputs[0]?.device ?? Device.cpu) : undefined,
  );
  exampleInputs.forEach((t, i) => recorder.input(t, names[i] ?? `arg${i}`));
  let result: unknown;
  if (level === 'aten') {
    const capture = new GraphCaptureMode(recorder);
    result = tracingMode === 'fake'
      ? new FakeTensorMode().run(() => capture.run(() => fn(...exampleInputs)))
      : capture.run(() => fn(...exampleInputs));
  } else {
    if (activeTracer !== undefined) throw new RuntimeError('trace(): a pre-autograd trace is already running');
    registerTracerFallback();
    activeTracer = recorder;
    try {
      using _tracing = includeKeys(DispatchKey.Tracer);
      result = fn(...exampleInputs);
    } finally {
      activeTracer = undefined;
    }
  }
  if (result instanceof Promise) throw new TypeError('trace(): fn must be synchronous (it returned a Promise)');
  return recorder.finish(result);
}

/**
 * PyTorch's `make_fx`: a function that traces `fn` at the aten level on the inputs it is given, backward
 * included when `fn` calls it.
 *
 * @example
 * ```ts
 * import { makeFx, randn } from '../../mod.ts';
 * const w = randn(3, 2, { requiresGrad: true });
 * const g = makeFx((x) => x.mm(w).sum().backward())(randn(4, 3));
 * g.calls.map((n) => n.target); // forward mm, sum, then the backward operators
 * ```
 */
export function makeFx(
  // deno-lint-ignore no-explicit-any
  fn: (...inputs: any[]) => unknown,
  options: { inputNames?: readonly string[]; tracingMode?: 'real' | 'fake' } = {},
): (...inputs: Tensor[]) => Graph {
  if (typeof fn !== 'function') throw new TypeError(`makeFx(): argument 'fn' must be a function, not ${typeof fn}`);
  return (...inputs: Tensor[]) =>
    trace(fn, inputs, { level: 'aten', inputNames: options.inputNames, tracingMode: options.tracingMode });
}
