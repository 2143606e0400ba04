/**
 * Finding the tensors a value holds: what `scope()` keeps of its function's result and what `keep()` exempts.
 *
 * Note [What a result holds]
 * A value holds a tensor when the tensor can be reached from it through
 * - arrays (their elements), `Map`s (keys and values) and `Set`s (values);
 * - plain objects and class instances: their own enumerable *data* properties, string- or symbol-keyed;
 * - objects that list what they own through a `[heldTensors]()` method (an `nn.Module` lists its parameters,
 *   their gradients and its buffers, recursively), instead of their properties.
 * Getters are not called: reading a getter could run arbitrary code, make new tensors while the scope is
 * closing, or be slow, so a tensor reachable only through a getter (or a `#private` field, or a closure) is
 * not kept; return the tensor itself, store it in a data property, implement `[heldTensors]()`, or `keep()` it.
 * Tensors are leaves: nothing is followed from a tensor here (its gradient is the caller's business).
 * Typed arrays, buffers, promises, weak collections, dates and regular expressions hold no tensors.
 * Each object is visited once (cycles are fine), and the walk stops {@linkcode MAX_HELD_DEPTH} levels deep.
 *
 * @module
 */

/**
 * The method through which an object lists the tensors it owns (or values holding them), for `scope()` and
 * `keep()`; `nn.Module` implements it.
 *
 * @example
 * ```ts
 * import { heldTensors, scope, type Tensor, zeros } from '../../mod.ts';
 * class Pair {
 *   #a: Tensor;
 *   #b: Tensor;
 *   constructor(a: Tensor, b: Tensor) {
 *     this.#a = a;
 *     this.#b = b;
 *   }
 *   [heldTensors]() {
 *     return [this.#a, this.#b];
 *   }
 * }
 * const pair = scope(() => new Pair(zeros([2]), zeros([3]))); // both tensors outlive the scope
 * ```
 */
export const heldTensors: unique symbol = Symbol.for('switchyard.heldTensors');

/** An object that lists the tensors it owns (see {@linkcode heldTensors}). */
export interface HoldsTensors {
  /** The tensors this object owns, or values that hold them. */
  [heldTensors](): Iterable<unknown>;
}

/**
 * How deep {@linkcode forEachHeldTensor} descends into nested containers.
 *
 * @example
 * ```ts
 * import { MAX_HELD_DEPTH } from './held_tensors.ts';
 * MAX_HELD_DEPTH; // 32
 * ```
 */
export const MAX_HELD_DEPTH = 32;

/**
 * Calls `onTensor` for every tensor `value` holds (Note [What a result holds]), each once; `isTensor` tells
 * tensors from other objects.
 *
 * @example
 * ```ts
 * import { forEachHeldTensor } from './held_tensors.ts';
 * import { isTensor, zeros } from '../../mod.ts';
 * const found: unknown[] = [];
 * forEachHeldTensor({ a: [zeros([1])], b: new Map([['k', zeros([2])]]) }, isTensor, (t) => found.push(t));
 * found.length; // 2
 * ```
 */
export function forEachHeldTensor<T>(
  value: unknown,
  isTensor: (v: unknown) => v is T,
  onTensor: (tensor: T) => void,
): void {
  const seen = new Set<object>();
  const visit = (v: unknown, depth: number): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (isTensor(v)) return onTensor(v);
    if (depth >= MAX_HELD_DEPTH || holdsNothing(v)) return;
    const list = (v as Partial<HoldsTensors>)[heldTensors];
    if (typeof list === 'function') {
      for (const item of list.call(v)) visit(item, depth + 1);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v[i], depth + 1);
    } else if (v instanceof Map) {
      v.forEach((item, key) => {
        visit(key, depth + 1);
        visit(item, depth + 1);
      });
    } else if (v instanceof Set) {
      v.forEach((item) => visit(item, depth + 1));
    } else {
      for (const key of Reflect.ownKeys(v)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(v, key);
        if (descriptor !== undefined && descriptor.enumerable && 'value' in descriptor) {
          visit(descriptor.value, depth + 1);
        }
      }
    }
  };
  visit(value, 0);
}

function holdsNothing(v: object): boolean {
  return ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Promise || v instanceof WeakMap ||
    v instanceof WeakSet || v instanceof WeakRef || v instanceof Date || v instanceof RegExp ||
    (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer);
}
