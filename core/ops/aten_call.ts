/**
 * Typed calls of `aten` operators for the composite kernels. Composites decompose into public operators so
 * that every backend, and autograd, sees the parts; they run after registration, so they find the operators by
 * name in the dispatcher (the declarations cannot import the generated API: it is made from them).
 *
 * @module
 */
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';

const handles = new Map<string, OperatorHandle>();

/**
 * The `aten::name.overload` operator of the default dispatcher (found once, then cached).
 *
 * @example
 * ```ts
 * import { aten } from './aten_call.ts';
 * // after registerOperators(): aten('mm').call(a, b)
 * ```
 */
export function aten(name: string, overload = ''): OperatorHandle {
  const key = overload === '' ? name : `${name}.${overload}`;
  let op = handles.get(key);
  if (op === undefined) {
    op = Dispatcher.singleton().findSchemaOrThrow(`aten::${name}`, overload);
    handles.set(key, op);
  }
  return op;
}

/**
 * `aten::to.dtype` (returns `self` itself when it already has the dtype, like PyTorch).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { float64 } from '../tensor/dtype.ts';
 * import { toDtype } from './aten_call.ts';
 * toDtype(tensor([1, 2]), float64).dtype.name; // 'float64'
 * ```
 */
export function toDtype(self: Tensor, dtype: DType): Tensor {
  return aten('to', 'dtype').call(self, dtype, false, false, null) as Tensor;
}

/**
 * The intermediate tensors of a composite kernel, freed when the scope ends (`using temps = new
 * Temporaries()`), on success and on error alike.
 *
 * @example
 * ```ts
 * import { Temporaries } from './aten_call.ts';
 * // using temps = new Temporaries();
 * // const a = temps.track(x.mul(2), x); // tracked unless the op returned x itself
 * ```
 */
export class Temporaries implements Disposable {
  readonly #tensors: Tensor[] = [];

  /** Frees `t` at the end of the scope, unless it is one of `inputs` (ops like `to` may return their input). */
  track(t: Tensor, ...inputs: Tensor[]): Tensor {
    if (!inputs.includes(t)) this.#tensors.push(t);
    return t;
  }

  /** Stops tracking `t` (a temporary that turned out to be the result) and returns it. */
  keep(t: Tensor): Tensor {
    const i = this.#tensors.indexOf(t);
    if (i >= 0) this.#tensors.splice(i, 1);
    return t;
  }

  /** Frees every tracked tensor. */
  [Symbol.dispose](): void {
    for (const x of this.#tensors) x.dispose();
    this.#tensors.length = 0;
  }
}
