/**
 * The engine's input buffers: the gradients waiting for each node, summed as they arrive, and freed as soon
 * as nothing needs them any more.
 *
 * Note [Gradients freed as they are consumed]
 * PyTorch moves a node's input buffer into the call and drops it after, so a backward pass holds only the
 * gradients still waiting. Here a gradient tensor may sit in several slots at once (AddBackward hands one
 * object to both inputs) or be passed through by a node (ExpandBackward returns its input), so the buffers
 * count, per gradient the run owns, the slots holding it plus the node currently consuming it; at zero it is
 * disposed. The run owns the gradients its own nodes compute (and the implicit ones it seeds); a gradient the
 * user passed in, or one a custom backward or a hook returned, may be the user's own tensor and is never
 * freed early (the run's scope still frees what was made during the run). A gradient that ends up as a leaf's
 * `.grad` or as a captured result is released from ownership (`keep`).
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { engineOps } from './engine_ops.ts';
import type { Edge, Node } from './node.ts';

/**
 * Gradients waiting per node, with the ownership count of Note [Gradients freed as they are consumed].
 *
 * @example
 * ```ts
 * import { InputBuffers } from './input_buffers.ts';
 * const buffers = new InputBuffers();
 * // buffers.add(edge, g); const inputs = buffers.take(node); ... buffers.consumed(inputs, outputs);
 * ```
 */
export class InputBuffers {
  readonly #buffers = new Map<Node, Array<Tensor | null>>();
  /** Gradients the run owns → slots holding them (+1 while a node consumes one). */
  readonly #uses = new Map<Tensor, number>();

  /** Marks a gradient the run computed as owned by it (freed once no slot holds it). */
  own(g: Tensor): void {
    if (!this.#uses.has(g)) this.#uses.set(g, 0);
  }

  /** Releases `g` from the run's ownership: it outlives the run (a leaf's grad, a captured gradient). */
  keep(g: Tensor): void {
    this.#uses.delete(g);
  }

  /** Adds `g` to input `edge.inputNr` of `edge.node`, summing with what is there. */
  add(edge: Edge, g: Tensor): void {
    const node = edge.node;
    let buffer = this.#buffers.get(node);
    if (buffer === undefined) {
      buffer = new Array<Tensor | null>(Math.max(node.numOutputs, edge.inputNr + 1)).fill(null);
      this.#buffers.set(node, buffer);
    }
    const prev = buffer[edge.inputNr];
    if (prev === null) {
      buffer[edge.inputNr] = g;
      this.#use(g, 1);
      return;
    }
    const sum = engineOps().add(prev, g);
    this.own(sum);
    buffer[edge.inputNr] = sum;
    this.#use(sum, 1);
    this.#use(prev, -1);
    this.#freeIfUnused(prev);
  }

  /** Removes and returns a node's inputs (null where none arrived); they stay held until `consumed`. */
  take(node: Node): Array<Tensor | null> {
    const buffer = this.#buffers.get(node);
    if (buffer === undefined) return new Array<Tensor | null>(node.numOutputs).fill(null);
    this.#buffers.delete(node);
    return buffer;
  }

  /**
   * After a node ran on `taken` (what `take` gave) and its outputs were added on: frees every gradient of
   * either list that the run owns and nothing holds any more.
   */
  consumed(taken: ReadonlyArray<Tensor | null>, outputs: ReadonlyArray<Tensor | null>): void {
    for (const g of taken) if (g !== null) this.#use(g, -1);
    for (const g of taken) if (g !== null) this.#freeIfUnused(g);
    for (const g of outputs) if (g !== null && g !== undefined) this.#freeIfUnused(g);
  }

  #use(g: Tensor, delta: 1 | -1): void {
    const uses = this.#uses.get(g);
    if (uses !== undefined) this.#uses.set(g, uses + delta);
  }

  #freeIfUnused(g: Tensor): void {
    if (this.#uses.get(g) !== 0) return;
    this.#uses.delete(g);
    g.dispose();
  }
}
