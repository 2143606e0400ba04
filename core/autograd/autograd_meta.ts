/**
 * The autograd state a tensor carries (PyTorch's `AutogradMeta` and `DifferentiableViewMeta`): whether it
 * requires grad, its `.grad`, and its history (grad_fn and output number), which holds the grad_fn node
 * while the tensor lives (see Note [Graph lifetime] in node.ts).
 *
 * Note [Views and their history]
 * A tensor made by a view operator is a differentiable view of a base: the first tensor up the chain that is
 * not itself such a view (views of views record the root, as PyTorch does). An in-place change of a view
 * rewrites the base's history (CopySlices, see copy_slices.ts), and an in-place change of the base or of
 * another view changes what every view of that base holds. So a view's grad_fn is checked against the shared
 * version counter whenever it is read: when the version moved since it was made, it is regenerated as an
 * `AsStridedBackward0` from the base's current history, as PyTorch's `VariableHooks::grad_fn` does. How the
 * view was made (normal, several outputs at once, under no_grad, in inference mode, in a custom function)
 * decides whether such an in-place change is allowed (`handleViewOnRebase`, with PyTorch's messages).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { AutogradMeta, Tensor } from '../tensor/tensor.ts';
import { accumulatorOf } from './accumulate_grad.ts';
import { AsStridedViewBackward } from './as_strided_view_node.ts';
import { geometryOf } from './engine_ops.ts';
import type { Edge, GradHook, Node } from './node.ts';

/**
 * How a view was made (PyTorch's `CreationMeta`), which decides whether it may be modified in place.
 *
 * @example
 * ```ts
 * import { CreationMeta } from './autograd_meta.ts';
 * CreationMeta.MultiOutputNode; // a view returned by split/chunk/unbind
 * ```
 */
export const CreationMeta = {
  Default: 0,
  InCustomFunction: 1,
  MultiOutputNode: 2,
  NoGradMode: 3,
  InferenceMode: 4,
} as const;

/** One of {@linkcode CreationMeta}'s values. */
export type CreationMeta = typeof CreationMeta[keyof typeof CreationMeta];

/**
 * The creation meta of a view of a view (PyTorch's `propagate_creation_meta`): a normal view keeps its
 * input's restriction; an inference-mode input keeps its own.
 *
 * @example
 * ```ts
 * import { CreationMeta, propagateCreationMeta } from './autograd_meta.ts';
 * propagateCreationMeta(CreationMeta.MultiOutputNode, CreationMeta.Default); // MultiOutputNode
 * ```
 */
export function propagateCreationMeta(previous: CreationMeta, created: CreationMeta): CreationMeta {
  if (created === CreationMeta.Default) return previous;
  return previous === CreationMeta.InferenceMode ? previous : created;
}

/**
 * The autograd state of a tensor that is not a differentiable view.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { autogradStateOf } from './autograd_meta.ts';
 * autogradStateOf(tensor([1], { dtype: 'float32' })).requiresGrad; // false
 * ```
 */
export class AutogradState implements AutogradMeta {
  /** Whether the tensor requires grad (true for every tensor with a history). */
  requiresGrad = false;
  /** The accumulated gradient. */
  grad: Tensor | null = null;
  /** This tensor's output number in its grad_fn. */
  outputNr = 0;
  /** Whether `retainGrad()` was called. */
  retainsGrad = false;
  /** The hook `retainGrad()` put on the grad_fn. */
  retainGradHook: GradHook | undefined;
  #gradFn: Node | null = null;
  readonly #owner: Tensor;

  /** The state of `owner`. */
  constructor(owner: Tensor) {
    this.#owner = owner;
  }

  /** The node that made this tensor, or null for a leaf. */
  get gradFn(): Node | null {
    return this.#gradFn;
  }

  /** Whether a leaf's gradient is accumulated (its own flag). */
  get leafRequiresGrad(): boolean {
    return this.requiresGrad;
  }

  /**
   * Sets the history (PyTorch's `set_gradient_edge`), moving the owner's hold from the old node to `node`.
   * With `moveRetainGrad` (an in-place change of this tensor itself), a `retainGrad()` hook follows, as
   * PyTorch's C++ hooks do; tensor hooks stay on the node they were registered on.
   */
  setHistory(node: Node, outputNr: number, moveRetainGrad = false): void {
    const old = this.#gradFn;
    const held = !this.#owner.isDisposed;
    if (held) node.hold();
    if (moveRetainGrad && this.retainGradHook !== undefined) {
      moveHook(this.retainGradHook, old, this.outputNr, node, outputNr);
    }
    this.#gradFn = node;
    this.outputNr = outputNr;
    this.requiresGrad = true;
    if (held) old?.drop();
  }

  /** Gives back the owner's hold on its grad_fn (the tensor was disposed). */
  onOwnerDisposed(tensor: Tensor): void {
    if (tensor === this.#owner) this.#gradFn?.drop();
  }
}

/**
 * The autograd state of a differentiable view (PyTorch's `DifferentiableViewMeta`); see
 * Note [Views and their history].
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { ViewAutogradState } from './autograd_meta.ts';
 * const v = tensor([1, 2], { dtype: 'float32' }).narrow(0, 0, 1);
 * v.autograd instanceof ViewAutogradState; // true
 * ```
 */
export class ViewAutogradState implements AutogradMeta {
  /** The accumulated gradient (a view that requires grad itself is a leaf). */
  grad: Tensor | null = null;
  /** This view's output number in its grad_fn. */
  outputNr = 0;
  /** Whether `retainGrad()` was called. */
  retainsGrad = false;
  /** The hook `retainGrad()` put on the grad_fn (it follows a regenerated grad_fn). */
  retainGradHook: GradHook | undefined;
  /** The tensor this one is a view of (never itself a differentiable view). */
  readonly base: Tensor;
  /** How the view was made. */
  creationMeta: CreationMeta;
  #requiresGrad = false;
  #gradFn: Node | null = null;
  #attrVersion: number;
  readonly #owner: Tensor;

  /** The state of the view `owner` of `base`. */
  constructor(owner: Tensor, base: Tensor, creationMeta: CreationMeta) {
    this.#owner = owner;
    this.base = base;
    this.creationMeta = creationMeta;
    this.#attrVersion = owner.versionCounter.version;
  }

  /** Whether the view requires grad: its own flag, its history, or its base's (PyTorch's rule). */
  get requiresGrad(): boolean {
    return this.#requiresGrad || this.#gradFn !== null || this.base.autograd?.requiresGrad === true;
  }
  set requiresGrad(value: boolean) {
    this.#requiresGrad = value;
  }

  /** Whether a leaf's gradient is accumulated (its own flag). */
  get leafRequiresGrad(): boolean {
    return this.#requiresGrad;
  }

  /** The grad_fn recorded when the view was made, without regenerating it (for error messages). */
  get recordedGradFn(): Node | null {
    return this.#gradFn;
  }

  /** The view's grad_fn, regenerated from the base's history when the base changed in place since. */
  get gradFn(): Node | null {
    if (this.#gradFn === null && this.base.autograd?.requiresGrad !== true) return null;
    const version = this.#owner.versionCounter.version;
    if (version !== this.#attrVersion) {
      handleViewOnRebase(this, true);
      const node = new AsStridedViewBackward(gradientEdge(this.base), geometryOf(this.base), geometryOf(this.#owner));
      if (this.retainGradHook !== undefined) moveHook(this.retainGradHook, this.#gradFn, this.outputNr, node, 0);
      this.#replaceGradFn(node, 0);
      this.#attrVersion = version;
    }
    return this.#gradFn;
  }

  /** Sets the history the view operator recorded (the view's own grad_fn). */
  setHistory(node: Node, outputNr: number): void {
    this.#replaceGradFn(node, outputNr);
  }

  /** Gives back the owner's hold on its grad_fn (the tensor was disposed). */
  onOwnerDisposed(tensor: Tensor): void {
    if (tensor === this.#owner) this.#gradFn?.drop();
  }

  #replaceGradFn(node: Node, outputNr: number): void {
    const old = this.#gradFn;
    const held = !this.#owner.isDisposed;
    if (held) node.hold();
    this.#gradFn = node;
    this.outputNr = outputNr;
    if (held) old?.drop();
  }
}

function moveHook(hook: GradHook, from: Node | null, fromNr: number, to: Node, toNr: number): void {
  const list = from?.preHooks.get(fromNr);
  const i = list?.indexOf(hook) ?? -1;
  if (i >= 0) list!.splice(i, 1);
  const target = to.preHooks.get(toNr);
  if (target === undefined) to.preHooks.set(toNr, [hook]);
  else target.push(hook);
}

/** Either kind of state. */
export type AnyAutogradState = AutogradState | ViewAutogradState;

/**
 * The autograd state of `t`, created on first use.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { autogradStateOf } from './autograd_meta.ts';
 * const t = tensor([1], { dtype: 'float32' });
 * autogradStateOf(t) === t.autograd; // true
 * ```
 */
export function autogradStateOf(t: Tensor): AnyAutogradState {
  return (t.autograd ??= new AutogradState(t)) as AnyAutogradState;
}

/**
 * The gradient edge of a tensor: its grad_fn output, or its leaf accumulator; null when it needs no grad.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { gradientEdge } from './autograd_meta.ts';
 * gradientEdge(tensor([1], { dtype: 'float32' }).requiresGrad_())?.node.name(); // 'AccumulateGrad'
 * ```
 */
export function gradientEdge(t: Tensor): Edge | null {
  const meta = t.autograd as AnyAutogradState | undefined;
  if (meta === undefined) return null;
  const fn = meta.gradFn;
  if (fn !== null) return { node: fn, inputNr: meta.outputNr };
  if (!meta.leafRequiresGrad) return null;
  return { node: accumulatorOf(t), inputNr: 0 };
}

/**
 * Raises PyTorch's error when a view that may not be modified in place was (`indirect`: its base or another
 * view of its base was), per its creation meta (PyTorch's `handle_view_on_rebase`).
 *
 * @example
 * ```ts
 * import { noGrad, tensor } from '../../mod.ts';
 * import { handleViewOnRebase, type ViewAutogradState } from './autograd_meta.ts';
 * const x = tensor([1, 2], { dtype: 'float32' });
 * handleViewOnRebase(x.narrow(0, 0, 1).autograd as ViewAutogradState, false); // a normal view: no error
 * const v = noGrad(() => x.narrow(0, 0, 1));
 * try {
 *   handleViewOnRebase(v.autograd as ViewAutogradState, false);
 * } catch (e) {
 *   // RuntimeError: A view was created in no_grad mode and is being modified inplace with grad mode enabled. ...
 * }
 * ```
 */
export function handleViewOnRebase(state: ViewAutogradState, indirect: boolean): void {
  const meta = state.creationMeta;
  if (meta === CreationMeta.Default) return;
  const modified = indirect ? 'its base or another view of its base has been' : 'is being';
  const fn = state.recordedGradFn;
  let message: string;
  if (fn !== null) {
    message = `Output ${state.outputNr} of ${fn.name()} is a view and ${modified} modified inplace.`;
  } else if (meta === CreationMeta.InferenceMode) {
    message = `A view was created in inference mode and ${modified} modified inplace in normal mode.`;
  } else {
    message = `A view was created in no_grad mode and ${modified} modified inplace with grad mode enabled.`;
  }
  const ambiguous = ' Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your ' +
    'code by moving both the view and the inplace either both inside the';
  const tracked = " block (if you don't want the inplace to be tracked) or both outside (if you want the inplace " +
    'to be tracked).';
  switch (meta) {
    case CreationMeta.MultiOutputNode:
      message += ' This view is the output of a function that returns multiple views. Such functions do not allow ' +
        'the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.';
      break;
    case CreationMeta.NoGradMode:
      message += `${ambiguous} no_grad${tracked}`;
      break;
    case CreationMeta.InferenceMode:
      message += `${ambiguous} inference_mode${tracked}`;
      break;
    case CreationMeta.InCustomFunction:
      message += ' This view was created inside a custom Function (or because an input was returned as-is) and ' +
        'the autograd logic to handle view+inplace would override the custom backward associated with the custom ' +
        'Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the ' +
        'output of the custom Function.';
      break;
  }
  throw new RuntimeError(message);
}
