/**
 * The bookkeeping of one backward run: how many edges still owe each node a gradient, the gradients waiting
 * for each node (summed as they arrive), and which gradients the run owns and frees once consumed.
 *
 * Note [Run state on nodes]
 * Counting and buffering touch every node a few times, so the run keeps a node's entry in a slot on the node
 * itself rather than in hash maps (which cost several hash lookups per node, growing with the graph as the
 * maps outgrow the caches). A nested run (a hook that runs backward) finds a slot another active run owns;
 * it then keeps its entry for that node in a map of its own, so runs never share an entry. A finished run
 * clears the slots it set.
 *
 * Note [Gradients freed as they are consumed]
 * PyTorch moves a node's input buffer into the call and drops it after, so a backward pass holds only the
 * gradients still waiting. Here a gradient tensor may sit in several slots at once (AddBackward hands one
 * object to both inputs) or be passed through by a node (ExpandBackward returns its input), so the run
 * counts, per gradient it owns, the buffer entries holding it plus the node currently consuming it; at zero it
 * is disposed. The run owns the gradients its own nodes compute (and the implicit ones it seeds); a gradient
 * the user passed in, or one a custom backward or a hook returned, may be the user's own tensor and is never
 * freed early (the run's scope still frees what was made during the run). A gradient that ends up as a leaf's
 * `.grad` or as a captured result leaves the run's ownership (`keep`).
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { engineOps } from './engine_ops.ts';
import { type Edge, engineSlotOf, type Node, setEngineSlot } from './node.ts';

/** One run's entry for one node. */
interface NodeRun {
  readonly run: GraphRun;
  /** Edges of the reachable graph that have not yet delivered to this node. */
  dependencies: number;
  /** Gradients received so far, one per output of the node. */
  buffer: Array<Tensor | null> | null;
}

/**
 * One backward run's state (see Note [Run state on nodes] and Note [Gradients freed as they are consumed]).
 *
 * @example
 * ```ts
 * import { GraphRun } from './graph_run.ts';
 * const run = new GraphRun();
 * // run.add(edge, g); run.countDependencies(roots); ... run.finish();
 * ```
 */
export class GraphRun {
  #active = true;
  readonly #touched: Node[] = [];
  #overflow: Map<Node, NodeRun> | undefined;
  /** Gradients the run owns → buffer entries holding them (+1 while a node consumes one). */
  readonly #uses = new Map<Tensor, number>();

  #entry(node: Node): NodeRun {
    const slot = engineSlotOf(node) as NodeRun | undefined;
    if (slot !== undefined && slot.run === this) return slot;
    if (slot !== undefined && slot.run.#active) {
      // Another run (the one this one is nested in) is using the node's slot.
      this.#overflow ??= new Map();
      let entry = this.#overflow.get(node);
      if (entry === undefined) {
        entry = { run: this, dependencies: 0, buffer: null };
        this.#overflow.set(node, entry);
      }
      return entry;
    }
    const entry: NodeRun = { run: this, dependencies: 0, buffer: null };
    setEngineSlot(node, entry);
    this.#touched.push(node);
    return entry;
  }

  /**
   * Counts, for every node reachable from `start`, the edges pointing into it (a loop, not recursion); returns
   * the start nodes nothing points to, which are ready.
   */
  countDependencies(start: readonly Node[]): Node[] {
    const seen = new Set<Node>(start);
    const stack = [...seen];
    for (const node of stack) this.#entry(node);
    while (stack.length > 0) {
      const edges = stack.pop()!.nextEdges;
      for (let i = 0; i < edges.length; i++) {
        const edge = edges[i];
        if (edge === null) continue;
        const next = edge.node;
        const entry = this.#entry(next);
        if (entry.dependencies++ === 0 && !seen.has(next)) stack.push(next);
      }
    }
    return [...seen].filter((node) => this.#entry(node).dependencies === 0);
  }

  /** One edge into `node` delivered; whether the node is now ready. */
  delivered(node: Node): boolean {
    return --this.#entry(node).dependencies === 0;
  }

  /** Marks a gradient the run computed as owned by it (freed once nothing holds it). */
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
    const entry = this.#entry(node);
    let buffer = entry.buffer;
    if (buffer === null) {
      buffer = entry.buffer = new Array<Tensor | null>(Math.max(node.numOutputs, edge.inputNr + 1)).fill(null);
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
    const entry = this.#entry(node);
    const buffer = entry.buffer;
    entry.buffer = null;
    return buffer ?? new Array<Tensor | null>(node.numOutputs).fill(null);
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

  /** Ends the run: clears the slots it set on nodes. */
  finish(): void {
    this.#active = false;
    for (const node of this.#touched) {
      if ((engineSlotOf(node) as NodeRun | undefined)?.run === this) setEngineSlot(node, undefined);
    }
    this.#touched.length = 0;
    this.#overflow = undefined;
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
