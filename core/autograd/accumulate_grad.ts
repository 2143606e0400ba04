/**
 * AccumulateGrad: the node that adds the gradient reaching a leaf into its `.grad`.
 *
 * @module
 */
import { keep } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { engineOps } from './engine_ops.ts';
import { Node } from './node.ts';

/**
 * The node that accumulates into a leaf's `.grad` (PyTorch's AccumulateGrad). One per leaf, kept on it. Its
 * sequence number is the largest, as PyTorch's is, so a leaf's gradient is stored as soon as it is complete.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * const w = tensor([1], { dtype: 'float32' }).requiresGrad_();
 * w.mul(2).gradFn?.nextFunctions[0][0]?.name(); // 'AccumulateGrad'
 * ```
 */
export class AccumulateGrad extends Node {
  /** The leaf. */
  readonly variable: Tensor;
  /** Gradient objects this run already handed to a leaf (set by the engine per run). */
  owned: Set<Tensor> | undefined;

  /** The node for a leaf. */
  constructor(variable: Tensor) {
    super([], 1, Number.MAX_SAFE_INTEGER);
    this.variable = variable;
  }
  /** `AccumulateGrad`. */
  name(): string {
    return 'AccumulateGrad';
  }
  /** Adds the incoming gradient to the leaf's `.grad`. */
  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const g = grads[0];
    const meta = this.variable.autograd;
    if (g === null || meta === undefined) return [];
    const existing = meta.grad;
    if (existing === null || existing.isDisposed) {
      // A gradient object may reach several leaves (AddBackward passes one object on to both inputs):
      // each leaf gets its own, because later accumulation is in place.
      // It is also copied when it is a view or not contiguous (an expanded gradient has stride 0), since the
      // leaf's grad is later accumulated in place (PyTorch's AccumulateGrad layout contract).
      const own = this.owned?.has(g) || g.base !== undefined || !g.isContiguous() ? engineOps().clone(g) : g;
      this.owned?.add(own);
      meta.grad = keep(own);
    } else {
      engineOps().addInPlace(existing, g);
    }
    return [];
  }
  /** An accumulator holds nothing to free; it lives as long as its leaf's autograd state. */
  override free(): void {}
}

// Keyed by the autograd state, which aliases of a variable (saved tensors) share with it.
const accumulators = new WeakMap<object, AccumulateGrad>();

/**
 * The AccumulateGrad node of a leaf (created once per variable).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { accumulatorOf } from './accumulate_grad.ts';
 * const w = tensor([1], { dtype: 'float32' }).requiresGrad_();
 * accumulatorOf(w) === accumulatorOf(w); // true
 * ```
 */
export function accumulatorOf(t: Tensor): AccumulateGrad {
  const key = t.autograd ?? t;
  let node = accumulators.get(key);
  if (node === undefined) {
    node = new AccumulateGrad(t);
    accumulators.set(key, node);
  }
  return node;
}
