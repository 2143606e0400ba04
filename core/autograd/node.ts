/**
 * The autograd graph: backward nodes (PyTorch's `torch::autograd::Node`) and the edges to the nodes of their
 * inputs, with the reference counting that frees a graph when its last output goes.
 *
 * Note [Graph lifetime]
 * PyTorch frees a graph with its last output: nodes are shared pointers held by the tensors whose grad_fn they
 * are and by the edges of later nodes. Here the same count is kept by hand, because a JavaScript graph only
 * goes when the garbage collector runs, long after the WebAssembly memory its saved tensors hold has run out.
 * A node is held by (1) each live tensor whose gradFn it is (the tensor's autograd state takes and drops the
 * hold as its history changes and when it is disposed), (2) each edge of another node that points to it, and
 * (3) each saved input whose gradFn it is (PyTorch's SavedVariable keeps the input's grad_fn alive). A saved
 * *output* does not hold its own node (PyTorch's weak reference), or a node would keep itself alive. When the
 * count reaches zero the node frees its saved tensors and drops its edges, which may free further nodes: that
 * goes through one worklist, never by recursion, so a 100k-deep chain frees without growing the stack.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';

/** Where a gradient flows: input `inputNr` of `node`. */
export interface Edge {
  /** The node that receives the gradient. */
  readonly node: Node;
  /** Which of the node's inputs it arrives at. */
  readonly inputNr: number;
}

let nextSequenceNr = 0;

/** A hook on a node's incoming gradient for one output; may return a replacement (same size and dtype). */
export type GradHook = (grad: Tensor) => Tensor | void | null;

// Nodes whose hold count reached zero, freed one after another (see Note [Graph lifetime]).
const toFree: Node[] = [];
let freeing = false;

function freeUnheld(node: Node): void {
  if (freeing) {
    toFree.push(node);
    return;
  }
  freeing = true;
  try {
    node.free();
    while (toFree.length > 0) toFree.pop()!.free();
  } finally {
    freeing = false;
  }
}

/**
 * The slot a backward run keeps its bookkeeping of `node` in (see Note [Run state on nodes] in graph_run.ts);
 * for the engine only.
 *
 * @example
 * ```ts
 * // graph_run.ts: const state = engineSlotOf(node) as NodeRun | undefined;
 * ```
 */
export let engineSlotOf: (node: Node) => unknown;
/**
 * Sets the slot {@linkcode engineSlotOf} reads; for the engine only.
 *
 * @example
 * ```ts
 * // graph_run.ts: setEngineSlot(node, { run: this, dependencies: 0, buffer: null });
 * ```
 */
export let setEngineSlot: (node: Node, slot: unknown) => void;

/**
 * A backward function. `apply` maps the gradients of the node's outputs to the gradients of its inputs,
 * one per entry of `nextEdges`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * const x = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
 * const y = x.mul(x);
 * y.gradFn?.name(); // 'MulBackward0'
 * y.gradFn?.nextFunctions; // [[AccumulateGrad, 0], [AccumulateGrad, 0]]
 * ```
 */
export abstract class Node {
  /** Where each input's gradient goes (null for inputs that do not require grad). */
  readonly nextEdges: Array<Edge | null>;
  /** Creation order; the engine runs later nodes first, as PyTorch does. */
  readonly sequenceNr: number;
  #preHooks: Map<number, GradHook[]> | undefined;
  /** Number of outputs (gradients `apply` receives). */
  readonly numOutputs: number;
  #holders = 0;
  #freed = false;
  #engineSlot: unknown = undefined;

  static {
    engineSlotOf = (node) => node.#engineSlot;
    setEngineSlot = (node, slot) => {
      node.#engineSlot = slot;
    };
  }

  /**
   * A node with edges to the given inputs (each edge holds its node). `sequenceNr` defaults to the next
   * creation number.
   */
  constructor(nextEdges: Array<Edge | null>, numOutputs = 1, sequenceNr = nextSequenceNr++) {
    this.nextEdges = nextEdges;
    this.numOutputs = numOutputs;
    this.sequenceNr = sequenceNr;
    for (let i = 0; i < nextEdges.length; i++) nextEdges[i]?.node.hold();
  }

  /** Hooks on the gradient of each output; created on first use (most nodes never get one). */
  get preHooks(): Map<number, GradHook[]> {
    return this.#preHooks ??= new Map();
  }

  /** Whether any pre-hook was registered. */
  get hasPreHooks(): boolean {
    return this.#preHooks !== undefined && this.#preHooks.size > 0;
  }

  /** PyTorch's `next_functions`: `[node, inputNr]` per input, `[null, 0]` where no gradient flows. */
  get nextFunctions(): Array<[Node | null, number]> {
    return this.nextEdges.map((e) => (e === null ? [null, 0] : [e.node, e.inputNr]));
  }

  /** Takes one hold on this node (see Note [Graph lifetime]). */
  hold(): void {
    this.#holders++;
  }

  /** Gives one hold back; the last one frees the node. */
  drop(): void {
    if (--this.#holders === 0) freeUnheld(this);
  }

  /** Frees the node now if nothing holds it (a node made for outputs that none of them took). */
  freeIfUnheld(): void {
    if (this.#holders === 0) freeUnheld(this);
  }

  /**
   * Whether `apply` returns gradients it made itself (or its inputs passed through), which the engine may free
   * once consumed; false for nodes running user code that may return the user's own tensors.
   */
  get returnsOwnGradients(): boolean {
    return true;
  }

  /** Whether the node was freed because nothing held it any more. */
  get isFreed(): boolean {
    return this.#freed;
  }

  /** Frees what the node saved and drops its edges; only the worklist calls it. */
  free(): void {
    if (this.#freed) return;
    this.#freed = true;
    this.release();
    const edges = this.nextEdges;
    for (let i = 0; i < edges.length; i++) {
      const edge = edges[i];
      if (edge === null) continue;
      edges[i] = null;
      edge.node.drop();
    }
  }

  /** PyTorch's node name, e.g. `MulBackward0`. */
  abstract name(): string;
  /** Input gradients from output gradients (null means zero). */
  abstract apply(grads: Array<Tensor | null>): Array<Tensor | null>;
  /** Frees what the node saved for backward; a later `apply` must fail with PyTorch's message. */
  release(): void {}
  /** PyTorch's repr: `<MulBackward0 object>`. */
  toString(): string {
    return `<${this.name()} object>`;
  }
}

/** The message for using a graph whose saved tensors were freed. */
export const FREED_GRAPH_MESSAGE: string =
  'Trying to backward through the graph a second time (or directly access saved ' +
  'tensors after they have already been freed). Saved intermediate values of the graph are freed when you call ' +
  '.backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second ' +
  'time or if you need to access saved tensors after calling backward.';
