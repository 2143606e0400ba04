/**
 * In-place operations and history: PyTorch's `check_inplace` and `rebase_history`, and the `CopySlices` node
 * that an in-place change of a view gives its base.
 *
 * Note [CopySlices]
 * `x.narrow(0, 0, 1).mul_(10)` changes `x`: its gradient must flow through the multiplication for the slice
 * and unchanged elsewhere. So the in-place node `fn` (here MulBackward) is not the view's history but is
 * wrapped in a CopySlices node that becomes the *base's* history: it takes the base's gradient, hands the
 * slice of it to `fn` (the gradient with respect to the view's old values comes back and replaces the slice),
 * and passes the whole on to the base's previous history. `fn`'s other inputs (the `10` if it were a tensor)
 * get their gradients from `fn` directly. The view's own grad_fn is regenerated afterwards from the base's new
 * history (see Note [Views and their history] in autograd_meta.ts).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { autogradStateOf, gradientEdge, handleViewOnRebase, ViewAutogradState } from './autograd_meta.ts';
import { engineOps, geometryOf, type TensorGeometry } from './engine_ops.ts';
import { FREED_GRAPH_MESSAGE, Node } from './node.ts';

/**
 * The history of a base after an in-place change of one of its views (see Note [CopySlices]).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * const w = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
 * const x = w.mul(1);
 * x.narrow(0, 0, 1).mul_(10);
 * x.gradFn?.name(); // 'CopySlices'
 * ```
 */
export class CopySlices extends Node {
  readonly #base: TensorGeometry;
  readonly #view: TensorGeometry;
  #fn: Node | null;

  /** Wraps `fn`, the in-place node of `view`, as the new history of `base`. */
  constructor(base: Tensor, view: Tensor, fn: Node) {
    const edges = fn.nextEdges.slice();
    edges[0] = gradientEdge(base); // the base's history before this change
    super(edges, 1);
    this.#base = geometryOf(base);
    this.#view = geometryOf(view);
    this.#fn = fn;
    fn.hold();
  }

  /** `CopySlices`, PyTorch's name. */
  name(): string {
    return 'CopySlices';
  }

  /** The base's gradient with the view's slice replaced by `fn`'s, and `fn`'s other inputs' gradients. */
  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const fn = this.#fn;
    if (fn === null) throw new RuntimeError(FREED_GRAPH_MESSAGE);
    const out = new Array<Tensor | null>(this.nextEdges.length).fill(null);
    const grad = grads[0];
    if (grad === null) return out;
    const ops = engineOps();
    const base = this.#base, view = this.#view;
    const result = stridedLike(grad, base);
    const slice = ops.asStrided(result, view.shape, view.strides, view.offset - base.offset);
    const res = fn.apply([ops.clone(slice)]);
    for (let i = 1; i < out.length; i++) out[i] = res[i] ?? null;
    if (this.nextEdges[0] !== null) {
      // The in-place op replaced the slice: what reaches the old values is fn's gradient for its self.
      const own = res[0] ?? null;
      if (own === null) ops.copyInto(slice, ops.zeros(view.shape, grad));
      else ops.copyInto(slice, own);
      out[0] = result;
    }
    return out;
  }

  /** Frees the wrapped node's saved tensors; the graph cannot run through this node again. */
  override release(): void {
    const fn = this.#fn;
    if (fn === null) return;
    this.#fn = null;
    fn.release();
    fn.drop();
  }
}

/** A copy of `grad` laid out with `geometry`'s sizes and strides at offset 0 (PyTorch's new_empty_strided + copy_). */
function stridedLike(grad: Tensor, geometry: TensorGeometry): Tensor {
  const ops = engineOps();
  const { shape, strides } = geometry;
  let extent = 1;
  let dense = true, expected = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] === 0) extent = 0;
    if (extent !== 0) extent += (shape[d] - 1) * strides[d];
    if (shape[d] !== 1 && strides[d] !== expected) dense = false;
    expected *= shape[d];
  }
  if (dense) return ops.clone(grad);
  const result = ops.asStrided(ops.zeros([extent], grad), shape, strides, 0);
  ops.copyInto(result, grad);
  return result;
}

/**
 * PyTorch's `check_inplace`: the errors of an in-place operation that records, before anything changes.
 *
 * @example
 * ```ts
 * // autograd kernel of an in-place op: checkInplace(self) before saving or redispatching
 * ```
 */
export function checkInplace(self: Tensor): void {
  const state = self.autograd;
  if (state === undefined) return;
  if (state instanceof ViewAutogradState) {
    handleViewOnRebase(state, false);
    if (state.requiresGrad && isLeaf(state.base)) {
      throw new RuntimeError('a view of a leaf Variable that requires grad is being used in an in-place operation.');
    }
  }
  if (state.requiresGrad && state.gradFn === null) {
    throw new RuntimeError('a leaf Variable that requires grad is being used in an in-place operation.');
  }
}

function isLeaf(t: Tensor): boolean {
  const fn = t.autograd?.gradFn;
  return fn === null || fn === undefined;
}

/**
 * PyTorch's `rebase_history`: after an in-place operation recorded `fn`, `fn` becomes `self`'s history, or,
 * when `self` is a view, its base's (through CopySlices, see Note [CopySlices]).
 *
 * @example
 * ```ts
 * // autograd kernel of an in-place op, after the redispatch: rebaseHistory(self, node)
 * ```
 */
export function rebaseHistory(self: Tensor, fn: Node): void {
  const state = autogradStateOf(self);
  if (state instanceof ViewAutogradState) {
    const base = state.base;
    const copySlices = new CopySlices(base, self, fn);
    autogradStateOf(base).setHistory(copySlices, 0);
    state.outputNr = 0;
    void state.gradFn; // regenerates the view's grad_fn from the base's new history
    return;
  }
  state.setHistory(fn, 0, true);
}
