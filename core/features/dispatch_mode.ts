/**
 * Dispatch modes and tensor subclasses that intercept operators: PyTorch's `__torch_dispatch__`, as a boxed
 * fallback at the `Python` key.
 *
 * Note [Dispatch mode stack]
 * As in `torch/utils/_python_dispatch.py`: entering a mode pushes it on this agent's mode stack and, while the
 * stack is not empty, the `Python` key is in the agent's include set. `Python` sits below autograd and
 * ADInplaceOrView, so a mode sees the calls autograd makes (the forward operators after CompositeImplicitAutograd
 * decompositions, and every backward operator). The fallback pops the top mode for the extent of its handler
 * (PyTorch's `_pop_mode_temporarily`), so an operator called inside `dispatch` goes to the next mode down, and
 * to the kernels once the stack is empty; the mode is pushed back afterwards, also when the handler throws.
 * Nested modes therefore see a call outermost-last: the innermost (last entered) mode handles it first.
 *
 * Note [Key sets inside a handler]
 * The handler runs with every key above `Python` in the exclude set, as PyTorch's `pythonFallback` does with its
 * `ExcludeDispatchKeyGuard(after_Python_keyset)`: the call already passed autograd, ADInplaceOrView and the
 * profiler, so operators called inside the handler must not pass them again. The include and exclude sets in
 * force when the fallback was reached are snapshotted and restored exactly when the handler returns or throws
 * (the part of PyTorch's TLS snapshot that matters here; Switchyard has no `PythonTLSSnapshot` key).
 *
 * Without a mode, the fallback serves tensor subclasses: a tensor whose keyset has the `Python` bit and whose
 * class has a static `torchDispatch(op, types, args, kwargs)` handles the call, trying the classes in argument
 * order until one does not return {@linkcode NotImplemented}, as PyTorch's subclass dispatch does.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet, keyHi } from '../dispatch/dispatch_key_set.ts';
import { Dispatcher, type RegistrationHandle } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { Stack } from '../dispatch/ivalue.ts';
import { KernelFunction, pushReturns } from '../dispatch/kernel_function.ts';
import { localKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Tensor } from '../tensor/tensor.ts';

/**
 * The value a subclass's `torchDispatch` returns to let the next class handle the call (Python's
 * `NotImplemented`).
 *
 * @example
 * ```ts
 * import { NotImplemented, WrapperTensor } from '../../mod.ts';
 * class Picky extends WrapperTensor {
 *   static torchDispatch(op) {
 *     return op.name === 'aten::neg' ? NotImplemented : undefined;
 *   }
 * }
 * ```
 */
export const NotImplemented: unique symbol = Symbol('NotImplemented');

/** Keyword arguments of an intercepted call: the schema's keyword-only arguments by name. */
export type DispatchKwargs = Record<string, unknown>;

/** A class that intercepts its instances' operators (PyTorch's `__torch_dispatch__` classmethod). */
export interface TorchDispatchClass {
  /** Handles an operator called with one of this class's instances among its arguments. */
  torchDispatch(
    op: OperatorHandle,
    types: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown;
}

const PYTHON_HI = keyHi(DispatchKey.Python);
// Every functionality above Python (PyTorch's after_Python_keyset): excluded while a handler runs.
const ABOVE_PYTHON_HI = ~(DispatchKeySet.fullAfter(DispatchKey.Python).hi | PYTHON_HI);

const modeStack: DispatchMode[] = [];
let registration: RegistrationHandle | undefined;

/**
 * Registers the Python-key fallback on the default dispatcher; idempotent. Entering a mode or making a
 * subclass tensor does it.
 *
 * @example
 * ```ts
 * import { registerPythonFallback } from './dispatch_mode.ts';
 * registerPythonFallback();
 * ```
 */
export function registerPythonFallback(): void {
  registration ??= Dispatcher.singleton().registerFallback(
    DispatchKey.Python,
    KernelFunction.fromBoxed(pythonFallback),
    'registered at core/features/dispatch_mode.ts',
  );
}

// The Python bit of the include set mirrors "the mode stack is not empty" (PyTorch's TorchDispatchModeTLS).
function syncPythonKey(): void {
  if (modeStack.length > 0) localKeys.includedHi |= PYTHON_HI;
  else localKeys.includedHi &= ~PYTHON_HI;
}

/**
 * Pushes a mode on this agent's mode stack (PyTorch's `_push_mode`); prefer `using _ = mode.enter()`.
 *
 * @example
 * ```ts
 * import { DispatchMode, popMode, pushMode } from './dispatch_mode.ts';
 * class Quiet extends DispatchMode {}
 * pushMode(new Quiet());
 * popMode();
 * ```
 */
export function pushMode(mode: DispatchMode): void {
  if (!(mode instanceof DispatchMode)) {
    throw new TypeError(`pushMode(): argument 'mode' must be a DispatchMode, not ${describe(mode)}`);
  }
  registerPythonFallback();
  modeStack.push(mode);
  syncPythonKey();
}

/**
 * Pops the top mode (PyTorch's `_pop_mode`) and returns it.
 *
 * @throws {RuntimeError} when the stack is empty.
 * @example
 * ```ts
 * import { DispatchMode, popMode, pushMode } from './dispatch_mode.ts';
 * const m = new (class extends DispatchMode {})();
 * pushMode(m);
 * popMode() === m; // true
 * ```
 */
export function popMode(): DispatchMode {
  const mode = modeStack.pop();
  if (mode === undefined) throw new RuntimeError('Trying to pop from an empty mode stack');
  syncPythonKey();
  return mode;
}

/**
 * The innermost active mode (PyTorch's `_get_current_dispatch_mode`), undefined when none.
 *
 * @example
 * ```ts
 * import { currentDispatchMode } from './dispatch_mode.ts';
 * currentDispatchMode(); // undefined outside any mode
 * ```
 */
export function currentDispatchMode(): DispatchMode | undefined {
  return modeStack[modeStack.length - 1];
}

/**
 * The active modes, outermost first (PyTorch's `_get_current_dispatch_mode_stack`).
 *
 * @example
 * ```ts
 * import { dispatchModeStack } from './dispatch_mode.ts';
 * dispatchModeStack().length; // 0 outside any mode
 * ```
 */
export function dispatchModeStack(): DispatchMode[] {
  return modeStack.slice();
}

function describe(v: unknown): string {
  return v === null ? 'null' : typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v;
}

/**
 * A dispatch mode (PyTorch's `TorchDispatchMode`): override {@linkcode dispatch} to see, change or replace every
 * operator call made while the mode is active. The default `dispatch` calls the operator unchanged.
 *
 * @example
 * ```ts
 * import { callOp, DispatchMode, randn } from '../../mod.ts';
 * class LoggingMode extends DispatchMode {
 *   readonly log: string[] = [];
 *   override dispatch(op, types, args, kwargs) {
 *     this.log.push(op.name);
 *     return callOp(op, args, kwargs);
 *   }
 * }
 * const mode = new LoggingMode();
 * mode.run(() => randn(2, 2).relu());
 * mode.log; // ['aten::randn', 'aten::relu']
 * ```
 */
export abstract class DispatchMode implements Disposable {
  #entered = 0;

  /**
   * Handles one operator call: `args` are the schema's positional arguments, `kwargs` its keyword-only ones,
   * `types` the tensor subclasses among the arguments. Return what the operator returns (an array for several
   * returns). Runs with this mode popped: `callOp(op, args, kwargs)` goes to the modes below, then the kernels.
   */
  dispatch(
    op: OperatorHandle,
    _types: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown {
    return callOp(op, args, kwargs);
  }

  /** Pushes the mode (PyTorch's `__enter__`); `using _ = mode.enter()` pops it at the end of the scope. */
  enter(): this {
    pushMode(this);
    this.#entered++;
    return this;
  }

  /**
   * Pops the mode (PyTorch's `__exit__`).
   *
   * @throws {RuntimeError} when the mode is not the innermost one (modes are exited in reverse order).
   */
  exit(): void {
    if (this.#entered === 0) return;
    if (currentDispatchMode() !== this) {
      throw new RuntimeError(
        `${this.constructor.name}.exit(): the mode is not the innermost active mode; exit nested modes first`,
      );
    }
    this.#entered--;
    popMode();
  }

  /** Same as {@linkcode exit}. */
  [Symbol.dispose](): void {
    this.exit();
  }

  /** Runs `fn` with the mode active and returns its result. */
  run<T>(fn: () => T): T {
    if (typeof fn !== 'function') {
      throw new TypeError(`${this.constructor.name}.run(): argument 'fn' must be a function, not ${describe(fn)}`);
    }
    this.enter();
    try {
      return fn();
    } finally {
      this.exit();
    }
  }
}

/**
 * Calls an operator with positional and keyword arguments as a dispatch handler receives them (PyTorch's
 * `func(*args, **kwargs)`). Unknown keyword names raise PyTorch's TypeError.
 *
 * @example
 * ```ts
 * import { callOp, Dispatcher, randn, registerOperators } from '../../mod.ts';
 * registerOperators();
 * const add = Dispatcher.singleton().findSchemaOrThrow('aten::add', 'Tensor');
 * callOp(add, [randn(2), randn(2)], { alpha: 2 });
 * ```
 */
export function callOp(op: OperatorHandle, args: readonly unknown[], kwargs: DispatchKwargs = {}): unknown {
  const schema = op.schema;
  if (schema === undefined) return op.call(...args);
  const names = Object.keys(kwargs);
  if (names.length === 0) return op.call(...args);
  const full: unknown[] = args.slice();
  let used = 0;
  for (let i = 0; i < schema.arguments.length; i++) {
    const a = schema.arguments[i];
    if (!a.kwargOnly) continue;
    while (full.length < i) full.push(undefined);
    if (Object.hasOwn(kwargs, a.name)) {
      full[i] = kwargs[a.name];
      used++;
    } else {
      full[i] = undefined;
    }
  }
  if (used !== names.length) {
    const bad = names.find((n) => !schema.arguments.some((a) => a.kwargOnly && a.name === n));
    throw new TypeError(`${op.name}() got an unexpected keyword argument '${bad}'`);
  }
  while (full.length > 0 && full[full.length - 1] === undefined) full.pop();
  return op.call(...full);
}

/**
 * Splits the top `n` boxed arguments of a call into positional values and keyword-only values (by name), as a
 * dispatch handler receives them; the stack is left as it is.
 *
 * @example
 * ```ts
 * import { splitArguments } from './dispatch_mode.ts';
 * // inside a boxed fallback: const [args, kwargs] = splitArguments(op, stack, op.schema!.arguments.length);
 * ```
 */
export function splitArguments(op: OperatorHandle, stack: Stack, n: number): [unknown[], DispatchKwargs] {
  const schema = op.schema;
  const first = stack.length - n;
  const args: unknown[] = [];
  const kwargs: DispatchKwargs = {};
  for (let i = 0; i < n; i++) {
    const value = stack[first + i].toJS();
    const a = schema?.arguments[i];
    if (a !== undefined && a.kwargOnly) kwargs[a.name] = value;
    else args.push(value);
  }
  return [args, kwargs];
}

function subclassesOf(args: readonly unknown[], kwargs: DispatchKwargs): TorchDispatchClass[] {
  const types: TorchDispatchClass[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!Tensor.isTensor(v) || (v.keySetHi & PYTHON_HI) === 0) return;
    const cls = v.constructor as unknown as TorchDispatchClass;
    if (typeof cls.torchDispatch === 'function' && !types.includes(cls)) types.push(cls);
  };
  args.forEach(visit);
  Object.values(kwargs).forEach(visit);
  return types;
}

function pythonFallback(op: OperatorHandle, _ks: DispatchKeySet, stack: Stack): void {
  const n = op.schema?.arguments.length ?? stack.length;
  const [args, kwargs] = splitArguments(op, stack, n);
  stack.length -= n;
  const types = subclassesOf(args, kwargs);
  const saved = { ...localKeys };
  localKeys.excludedHi |= ABOVE_PYTHON_HI;
  let result: unknown;
  try {
    const mode = modeStack.pop();
    if (mode !== undefined) {
      syncPythonKey();
      try {
        result = mode.dispatch(op, types, args, kwargs);
      } finally {
        modeStack.push(mode);
      }
    } else {
      result = dispatchToSubclass(op, types, args, kwargs);
    }
  } finally {
    Object.assign(localKeys, saved);
    syncPythonKey();
  }
  pushReturns(op, stack, result);
}

function dispatchToSubclass(
  op: OperatorHandle,
  types: readonly TorchDispatchClass[],
  args: unknown[],
  kwargs: DispatchKwargs,
): unknown {
  if (types.length === 0) {
    throw new RuntimeError(
      `${op.name}: reached the Python dispatch key with no active dispatch mode and no tensor subclass with ` +
        'a static torchDispatch among the arguments',
    );
  }
  for (const cls of types) {
    const result = cls.torchDispatch(op, types, args, kwargs);
    if (result !== NotImplemented) return result;
  }
  throw new TypeError(
    `Multiple dispatch failed for '${op.name}'; all torchDispatch handlers returned NotImplemented:\n\n` +
      types.map((t) => `  - tensor subclass ${(t as unknown as { name: string }).name}`).join('\n'),
  );
}

/**
 * Adds the `Python` key to a tensor's keyset, so its operators reach its class's static `torchDispatch` (the
 * role of PyTorch's `_make_wrapper_subclass` / `_make_subclass`). The tensor keeps its backend bits.
 *
 * @example
 * ```ts
 * import { enablePythonKey, randn } from '../../mod.ts';
 * // in a subclass constructor: enablePythonKey(this)
 * ```
 */
export function enablePythonKey(t: Tensor): void {
  if (!Tensor.isTensor(t)) throw new TypeError(`enablePythonKey(): expected a Tensor, got ${describe(t)}`);
  registerPythonFallback();
  t.keySetHi |= PYTHON_HI;
}
