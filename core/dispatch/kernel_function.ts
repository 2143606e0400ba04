/**
 * KernelFunction: what a dispatch table slot points at. A kernel is unboxed (a plain function taking the
 * keyset words and then the schema's arguments), boxed (a function over an IValue stack), or the special
 * fallthrough kernel that tells the dispatcher to skip its key.
 *
 * Note [Unboxed and boxed kernels]
 * Unboxed kernels are the fast path: the dispatcher calls them with `(ksHi, ksLo, ...args)` and builds no
 * IValues. Boxed kernels `(op, ks, stack)` are what generic code (fallbacks such as a profiler or a tracer)
 * writes once for every operator. Registering either gives the other through an adapter derived from the
 * operator's schema: `boxUnboxedKernel` pops the arguments off the stack and pushes the result, while the
 * reverse direction (boxing positional arguments) lives in the operator's slow path, which knows the schema.
 *
 * @module
 */
import type { DispatchKeySet } from './dispatch_key_set.ts';
import type { Stack } from './ivalue.ts';
import { isDispatchKeySource, IValue } from './ivalue.ts';
import type { OperatorHandle } from './operator_handle.ts';

/**
 * An unboxed kernel: the masked keyset words, then the schema's arguments in order (keyword-only ones
 * included). Returns a single value, an array for several returns, or undefined for `-> ()`.
 */
// deno-lint-ignore no-explicit-any
export type UnboxedKernel = (ksHi: number, ksLo: number, ...args: any[]) => any;

/** A boxed kernel: pops the operator's arguments from the top of `stack` and pushes its returns. */
export type BoxedKernel = (op: OperatorHandle, ks: DispatchKeySet, stack: Stack) => void;

/** The message PyTorch gives when a fallthrough kernel is actually invoked. */
export const FALLTHROUGH_EXECUTED_MESSAGE: string =
  'fallthrough_kernel was executed but it should have been short-circuited by the dispatcher. ' +
  'This could occur if you registered a fallthrough kernel as a override for a specific operator ' +
  '(as opposed to a backend fallback); this is NOT currently supported, and we do not intend to ' +
  'add support for it in the near future.  If you do find yourself in need of this, ' +
  'let us know in the bug tracker.';

/**
 * A kernel as the dispatcher stores it.
 *
 * @example
 * ```ts
 * import { KernelFunction } from './kernel_function.ts';
 * const k = KernelFunction.fromUnboxed((_hi, _lo, x) => x);
 * k.dumpState(); // 'boxed unboxed '
 * ```
 */
export class KernelFunction {
  #unboxed: UnboxedKernel | undefined;
  #boxed: BoxedKernel | undefined;
  #make: (() => UnboxedKernel) | undefined;
  /** Whether this is the fallthrough kernel. */
  readonly isFallthrough: boolean;

  private constructor(
    unboxed: UnboxedKernel | undefined,
    boxed: BoxedKernel | undefined,
    isFallthrough: boolean,
    make?: () => UnboxedKernel,
  ) {
    this.#unboxed = unboxed;
    this.#boxed = boxed;
    this.isFallthrough = isFallthrough;
    this.#make = make;
  }

  /** The unboxed function, when the kernel was written unboxed (a deferred kernel is built here). */
  get unboxed(): UnboxedKernel | undefined {
    if (this.#make !== undefined) this.#build();
    return this.#unboxed;
  }

  /** The boxed function: written boxed, or the adapter around the unboxed function. */
  get boxed(): BoxedKernel | undefined {
    if (this.#make !== undefined) this.#build();
    return this.#boxed;
  }

  /** Whether this is a deferred kernel not built yet ({@linkcode KernelFunction.deferred}). */
  get isDeferred(): boolean {
    return this.#make !== undefined;
  }

  #build(): void {
    const fn = this.#make!();
    if (typeof fn !== 'function') throw new TypeError('KernelFunction.deferred: the factory must return a function');
    this.#make = undefined;
    this.#unboxed = fn;
    this.#boxed = boxUnboxedKernel(fn);
  }

  /**
   * An unboxed kernel built on first use: `make` runs when the dispatcher first needs the function (when its
   * operator materializes, see Note [Operators materialize on first use] in dispatcher.ts) or when `unboxed` or
   * `boxed` is read. For kernels generated from their operator's schema, so that registering them does not parse
   * the schema. The kernel's parameter count is not checked against the schema (the factory builds it from the
   * schema).
   *
   * @example
   * ```ts
   * import { KernelFunction } from './kernel_function.ts';
   * const k = KernelFunction.deferred(() => (_hi: number, _lo: number, x: number) => x + 1);
   * k.isDeferred; // true
   * k.unboxed!(0, 0, 1); // 2
   * ```
   */
  static deferred(make: () => UnboxedKernel): KernelFunction {
    if (typeof make !== 'function') throw new TypeError('KernelFunction.deferred: expected a function');
    return new KernelFunction(undefined, undefined, false, make);
  }

  /** Wraps an unboxed kernel (its boxed form is an adapter). */
  static fromUnboxed(fn: UnboxedKernel): KernelFunction {
    if (typeof fn !== 'function') throw new TypeError('KernelFunction.fromUnboxed: expected a function');
    return new KernelFunction(fn, boxUnboxedKernel(fn), false);
  }

  /** Wraps a boxed kernel (unboxed calls reach it through the operator's boxing adapter). */
  static fromBoxed(fn: BoxedKernel): KernelFunction {
    if (typeof fn !== 'function') throw new TypeError('KernelFunction.fromBoxed: expected a function');
    return new KernelFunction(undefined, fn, false);
  }

  static readonly #fallthrough: KernelFunction = new KernelFunction(undefined, () => {
    throw new Error(FALLTHROUGH_EXECUTED_MESSAGE);
  }, true);

  /** The fallthrough kernel: a slot holding it is skipped by dispatch (PyTorch's `makeFallthrough`). */
  static fallthrough(): KernelFunction {
    return KernelFunction.#fallthrough;
  }

  /** Whether the slot holds a real kernel (PyTorch's `isValid`): every KernelFunction does. */
  isValid(): boolean {
    return this.#make !== undefined || this.#boxed !== undefined;
  }

  /** PyTorch's `KernelFunction::dumpState`: which forms the kernel has. */
  dumpState(): string {
    return (this.isFallthrough ? 'fallthrough ' : '') + 'boxed ' + (this.unboxed !== undefined ? 'unboxed ' : '');
  }
}

/**
 * The boxed adapter of an unboxed kernel: pops the arguments the operator's schema declares (or the whole
 * stack for an operator without a schema), calls the kernel and pushes its returns.
 *
 * @example
 * ```ts
 * import { boxUnboxedKernel } from './kernel_function.ts';
 * const boxed = boxUnboxedKernel((_hi, _lo, a: number) => a + 1);
 * ```
 */
export function boxUnboxedKernel(fn: UnboxedKernel): BoxedKernel {
  return (op, ks, stack) => {
    const schema = op.schema;
    const n = schema === undefined ? stack.length : schema.arguments.length;
    const first = stack.length - n;
    const hi = ks.hi, lo = ks.lo;
    // Fixed arities avoid building an argument array: the round trip through a boxed fallback is hot for
    // profilers and tracers.
    let result: unknown;
    switch (n) {
      case 0:
        result = fn(hi, lo);
        break;
      case 1:
        result = fn(hi, lo, stack[first].toJS());
        break;
      case 2:
        result = fn(hi, lo, stack[first].toJS(), stack[first + 1].toJS());
        break;
      case 3:
        result = fn(hi, lo, stack[first].toJS(), stack[first + 1].toJS(), stack[first + 2].toJS());
        break;
      default:
        result = fn(hi, lo, ...stack.slice(first).map((v) => v.toJS()));
    }
    stack.length = first;
    pushReturns(op, stack, result);
  };
}

/** Pushes a kernel's JavaScript result onto the stack as the schema's returns. */
export function pushReturns(op: OperatorHandle, stack: Stack, result: unknown): void {
  const returns = op.schema?.returns;
  if (returns === undefined) {
    if (result !== undefined) stack.push(IValue.infer(result));
    return;
  }
  if (returns.length === 1) {
    const type = returns[0].type;
    stack.push(
      type.kind === 'Tensor' && isDispatchKeySource(result)
        ? new IValue('Tensor', result)
        : IValue.fromSchema(type, result, () => `return of '${op.name}'`),
    );
  } else if (returns.length > 1) {
    if (!Array.isArray(result) || result.length !== returns.length) {
      throw new TypeError(`Kernel for '${op.name}' must return an array of ${returns.length} values`);
    }
    for (let i = 0; i < returns.length; i++) {
      stack.push(IValue.fromSchema(returns[i].type, result[i], () => `return ${i} of '${op.name}'`));
    }
  }
}

/** Pops an operator's returns off the stack and gives them back in the unboxed convention. */
export function popReturns(op: OperatorHandle, stack: Stack): unknown {
  const returns = op.schema?.returns;
  const n = returns === undefined ? Math.min(stack.length, 1) : returns.length;
  if (returns === undefined || n === 1) return n === 0 ? undefined : stack.pop()!.toJS();
  if (n === 0) return undefined;
  return stack.splice(stack.length - n, n).map((v) => v.toJS());
}
