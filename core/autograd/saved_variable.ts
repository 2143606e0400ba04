/**
 * Tensors saved for backward (PyTorch's `SavedVariable`): an alias with the version it had, so that an
 * in-place change before backward is reported, owned by the graph rather than by any `scope()`.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { keep } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import { FREED_GRAPH_MESSAGE, Node } from './node.ts';

/**
 * A tensor saved for backward. It keeps its own reference to the storage (so the caller may dispose the
 * original) and the version it had, so that an in-place change before backward is reported.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SavedVariable } from './saved_variable.ts';
 * const x = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
 * const y = x.mul(2);
 * const saved = new SavedVariable(y);
 * saved.release();
 * ```
 */
export class SavedVariable {
  #alias: Tensor | undefined;
  #original: Tensor | undefined;
  readonly #version: number;
  readonly #isOutput: boolean;
  #heldNode: Node | undefined;

  /**
   * Saves `t` (an alias sharing storage and version counter). `isOutput` marks an output of the node that
   * saves it: such a save does not hold that node (see Note [Graph lifetime] in node.ts).
   */
  constructor(t: Tensor, isOutput = false) {
    if (t.isInference) {
      throw new RuntimeError(
        'Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal ' +
          'tensor and use it in autograd.',
      );
    }
    // The graph owns the alias: it is freed with the node, not by the scope() it was recorded in.
    this.#alias = keep(aliasOf(t));
    this.#original = t;
    this.#version = t.versionCounter.version;
    this.#isOutput = isOutput;
    if (!isOutput) {
      const fn = t.autograd?.gradFn;
      if (fn instanceof Node) {
        fn.hold();
        this.#heldNode = fn;
      }
    }
  }

  /** The saved tensor; throws PyTorch's errors if it was freed or modified in place. */
  unpack(node: Node, outputNr = 0): Tensor {
    const t = this.#alias;
    if (t === undefined) throw new RuntimeError(FREED_GRAPH_MESSAGE);
    if (t.versionCounter.version !== this.#version) {
      const type = `torch.${t.dtype.scalarTypeName}Tensor [${t.shape.join(', ')}]`;
      const role = this.#isOutput ? `, which is output ${outputNr} of ${node.name()},` : '';
      throw new RuntimeError(
        `one of the variables needed for gradient computation has been modified by an inplace operation: [${type}]` +
          `${role} is at version ${t.versionCounter.version}; expected version ${this.#version} instead. Hint: ` +
          'enable anomaly detection to find the operation that failed to compute its gradient, with ' +
          'torch.autograd.set_detect_anomaly(True).',
      );
    }
    // The unpacked tensor is the same autograd variable as the original (shared requiresGrad, grad_fn and
    // leaf accumulator), read now because an output's grad_fn is set after it is saved. With createGraph,
    // backward formulas then record onto the original graph (double backward).
    t.autograd = this.#original?.autograd;
    return t;
  }

  /** Drops the saved reference (and the hold on the saved input's node). Idempotent. */
  release(): void {
    const alias = this.#alias;
    if (alias === undefined) return;
    this.#alias = undefined;
    this.#original = undefined;
    alias.autograd = undefined; // the alias shares the original's state but never owned its history
    alias.dispose();
    const held = this.#heldNode;
    this.#heldNode = undefined;
    held?.drop();
  }
}

/**
 * The method by which a tensor subclass makes its own aliases (`core/features/wrapper_tensor.ts`): a plain
 * Tensor over a wrapper's storage would lose the subclass and the keys its operators dispatch by.
 *
 * @example
 * ```ts
 * import { ALIAS_FOR_AUTOGRAD } from './saved_variable.ts';
 * // class MyWrapper extends Tensor { [ALIAS_FOR_AUTOGRAD]() { return new MyWrapper(...); } }
 * ```
 */
export const ALIAS_FOR_AUTOGRAD: unique symbol = Symbol.for('switchyard.aliasForAutograd');

/**
 * A new Tensor object over the same storage, layout and version counter (a detached alias); a tensor subclass
 * with an {@linkcode ALIAS_FOR_AUTOGRAD} method makes its own.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { aliasOf } from './saved_variable.ts';
 * const x = tensor([1, 2]);
 * const a = aliasOf(x); // same storage, no autograd history
 * ```
 */
export function aliasOf(t: Tensor): Tensor {
  const own = (t as { [ALIAS_FOR_AUTOGRAD]?: () => Tensor })[ALIAS_FOR_AUTOGRAD];
  if (own !== undefined) return own.call(t);
  t.storage.retain();
  return new Tensor({
    storage: t.storage,
    shape: t.shape,
    strides: t.stride(),
    storageOffset: t.storageOffset,
    dtype: t.dtype,
    version: t.versionCounter,
    base: t.base ?? t,
    inference: t.isInference,
  });
}
