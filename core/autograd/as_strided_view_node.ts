/**
 * The grad_fn a view gets when its base (or another view of the base) was modified in place after the view
 * was made: PyTorch regenerates it as an `AsStridedBackward0` from the base's current history.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { engineOps, type TensorGeometry } from './engine_ops.ts';
import { type Edge, Node } from './node.ts';

/**
 * `AsStridedBackward0` over a view's geometry: scatters the view's gradient into the base's layout.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * const w = tensor([1, 2, 3], { dtype: 'float32' }).requiresGrad_();
 * const x = w.mul(1), v = x.narrow(0, 1, 2);
 * x.mul_(2);
 * v.gradFn?.name(); // 'AsStridedBackward0'
 * ```
 */
export class AsStridedViewBackward extends Node {
  readonly #base: TensorGeometry;
  readonly #view: TensorGeometry;

  /** The node of a view with geometry `view` over a base with geometry `base`, whose gradient goes to `edge`. */
  constructor(edge: Edge | null, base: TensorGeometry, view: TensorGeometry) {
    super([edge], 1);
    this.#base = base;
    this.#view = view;
  }

  /** `AsStridedBackward0`, PyTorch's name. */
  name(): string {
    return 'AsStridedBackward0';
  }

  /** The base's gradient. */
  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const g = grads[0];
    if (g === null || this.nextEdges[0] === null) return [null];
    const view = this.#view;
    return [engineOps().asStridedBackward(g, this.#base, view.shape, view.strides, view.offset)];
  }
}
