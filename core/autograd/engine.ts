/**
 * The autograd engine: runs backward nodes in dependency order from the roots, accumulating gradients into
 * leaves (`backward`) or capturing them for given inputs (`grad`).
 *
 * Note [Engine order and memory]
 * A node runs when every node that feeds gradient into it has run (dependency counts over the reachable
 * graph); among ready nodes the most recently created runs first, as in PyTorch's ready queue. The whole run
 * is one `scope()`: intermediate gradients are freed at the end, and only what outlives the run (leaf `.grad`
 * tensors, captured gradients) is kept. A gradient tensor handed to one leaf is never shared with another,
 * because leaf gradients are later accumulated in place.
 *
 * @module
 */
import { keep, scope } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { enableGrad, noGrad } from './grad_mode.ts';
import { adjustCreateGraphDepth, type Edge, type GradHook, Node } from './node.ts';

/** The operators the engine needs, supplied by the ops layer (the engine knows no operator). */
export interface EngineOps {
  /** Out-of-place sum of two gradients. */
  add(a: Tensor, b: Tensor): Tensor;
  /** In-place accumulation into a leaf's existing gradient. */
  addInPlace(into: Tensor, g: Tensor): void;
  /** A tensor of ones shaped like `t` (the implicit gradient of a scalar root). */
  onesLike(t: Tensor): Tensor;
  /** A copy. */
  clone(t: Tensor): Tensor;
}

let engineOps: EngineOps | undefined;

/** Supplies the engine's operators (called once by the ops layer). */
export function setEngineOps(ops: EngineOps): void {
  engineOps = ops;
}

function ops(): EngineOps {
  if (engineOps === undefined) throw new Error('autograd engine used before the operators were registered');
  return engineOps;
}

/**
 * The node that accumulates into a leaf's `.grad` (PyTorch's AccumulateGrad). One per leaf, kept on it.
 */
export class AccumulateGrad extends Node {
  /** The leaf. */
  readonly variable: Tensor;
  /** Accumulates into `variable.grad` in place when true (set by the engine per run). */
  owned: Set<Tensor> | undefined;

  /** The node for a leaf. */
  constructor(variable: Tensor) {
    super([], 1);
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
      const own = this.owned?.has(g) || g.base !== undefined || !g.isContiguous() ? ops().clone(g) : g;
      this.owned?.add(own);
      meta.grad = keep(own);
    } else {
      ops().addInPlace(existing, g);
    }
    return [];
  }
}

/** The gradient edge of a tensor: its gradFn output, or its leaf accumulator; null when it needs no grad. */
export function gradientEdge(t: Tensor): Edge | null {
  const meta = t.autograd;
  if (meta === undefined) return null;
  if (meta.gradFn !== null && meta.gradFn !== undefined) return { node: meta.gradFn as Node, inputNr: meta.outputNr };
  if (!meta.requiresGrad) return null;
  return { node: accumulatorOf(t), inputNr: 0 };
}

// Keyed by the autograd state, which aliases of a variable (saved tensors) share with it.
const accumulators = new WeakMap<object, AccumulateGrad>();

/** The AccumulateGrad node of a leaf (created once per variable). */
export function accumulatorOf(t: Tensor): AccumulateGrad {
  const key = t.autograd ?? t;
  let node = accumulators.get(key);
  if (node === undefined) {
    node = new AccumulateGrad(t);
    accumulators.set(key, node);
  }
  return node;
}

/** Options of a backward run. */
export interface RunOptions {
  /** Keep saved tensors so the graph can be run again. */
  readonly retainGraph: boolean;
  /** Record the backward computation itself (for higher-order gradients). */
  readonly createGraph: boolean;
  /** When given, capture the gradients of these tensors instead of accumulating into leaves. */
  readonly captureFor?: readonly Tensor[];
  /** With captureFor: whether an input the outputs do not depend on is an error. */
  readonly allowUnused?: boolean;
}

/**
 * Runs backward from `roots` seeded with `grads` (a null gradient means ones for a one-element root).
 * Returns the captured gradients when `captureFor` is given.
 */
export function runBackward(
  roots: readonly Tensor[],
  grads: ReadonlyArray<Tensor | null>,
  options: RunOptions,
): Array<Tensor | null> {
  if (options.createGraph) adjustCreateGraphDepth(1);
  try {
    return scope(() => {
      using _mode = options.createGraph ? enableGrad() : noGrad();
      return execute(roots, grads, options);
    });
  } finally {
    if (options.createGraph) adjustCreateGraphDepth(-1);
  }
}

function execute(
  roots: readonly Tensor[],
  grads: ReadonlyArray<Tensor | null>,
  options: RunOptions,
): Array<Tensor | null> {
  const buffers = new Map<Node, Array<Tensor | null>>();
  const addTo = (edge: Edge, g: Tensor) => {
    let buffer = buffers.get(edge.node);
    if (buffer === undefined) {
      buffer = new Array<Tensor | null>(Math.max(edge.node.numOutputs, edge.inputNr + 1)).fill(null);
      buffers.set(edge.node, buffer);
    }
    const prev = buffer[edge.inputNr];
    buffer[edge.inputNr] = prev === null ? g : ops().add(prev, g);
  };

  const rootEdges: Edge[] = [];
  roots.forEach((root, i) => {
    root.assertAlive('backward()');
    const edge = gradientEdge(root);
    if (edge === null) throw new Error(`element ${i} of tensors does not require grad and does not have a grad_fn`);
    let g = grads[i] ?? null;
    if (g === null) {
      if (root.numel !== 1) throw new Error('grad can be implicitly created only for scalar outputs');
      g = ops().onesLike(root);
    } else if (g.shape.length !== root.shape.length || g.shape.some((s, d) => s !== root.shape[d])) {
      throw new Error(
        `Mismatch in shape: grad_output[${i}] has a shape of [${g.shape.join(', ')}] and output[${i}] has a shape of [${
          root.shape.join(', ')
        }].`,
      );
    }
    rootEdges.push(edge);
    addTo(edge, g);
  });

  // Dependencies: how many edges of the reachable graph point into each node.
  const dependencies = new Map<Node, number>();
  const seen = new Set<Node>();
  const stack = rootEdges.map((e) => e.node);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    for (const edge of node.nextEdges) {
      if (edge === null) continue;
      dependencies.set(edge.node, (dependencies.get(edge.node) ?? 0) + 1);
      stack.push(edge.node);
    }
  }

  // Where captured gradients come from: a leaf's accumulator, or a non-leaf's gradFn output.
  const captureAt = new Map<Node, Array<[inputNr: number, slot: number]>>();
  const captured: Array<Tensor | null> = (options.captureFor ?? []).map(() => null);
  options.captureFor?.forEach((t, slot) => {
    const edge = gradientEdge(t);
    if (edge === null) throw new Error('One of the differentiated Tensors does not require grad');
    const list = captureAt.get(edge.node) ?? [];
    list.push([edge.inputNr, slot]);
    captureAt.set(edge.node, list);
  });
  const capturing = options.captureFor !== undefined;

  const owned = new Set<Tensor>();
  const ready: Node[] = [...seen].filter((n) => (dependencies.get(n) ?? 0) === 0);
  const executed: Node[] = [];
  while (ready.length > 0) {
    // The most recently created ready node runs first.
    let best = 0;
    for (let i = 1; i < ready.length; i++) if (ready[i].sequenceNr > ready[best].sequenceNr) best = i;
    const node = ready.splice(best, 1)[0];
    executed.push(node);
    const inputs = buffers.get(node) ?? new Array<Tensor | null>(node.numOutputs).fill(null);
    buffers.delete(node);
    if (node.hasPreHooks) runHooks(node.preHooks, inputs);
    const captures = captureAt.get(node);
    if (captures !== undefined) { for (const [inputNr, slot] of captures) captured[slot] = inputs[inputNr]; }
    let outputs: Array<Tensor | null> = [];
    if (node instanceof AccumulateGrad) {
      if (!capturing) {
        node.owned = owned;
        node.apply(inputs);
        node.owned = undefined;
      }
    } else if (inputs.some((g) => g !== null)) {
      outputs = node.apply(inputs);
    }
    node.nextEdges.forEach((edge, i) => {
      if (edge === null) return;
      const g = outputs[i] ?? null;
      if (g !== null) addTo(edge, g);
      const left = dependencies.get(edge.node)! - 1;
      dependencies.set(edge.node, left);
      if (left === 0) ready.push(edge.node);
    });
  }
  if (!options.retainGraph) { for (const node of executed) node.release(); }
  // Captured gradients are the run's result: scope() moves them to the caller's scope.
  if (capturing && !options.allowUnused && captured.some((g) => g === null)) {
    throw new Error(
      'One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.',
    );
  }
  return captured;
}

function runHooks(hooks: Map<number, GradHook[]>, grads: Array<Tensor | null>): void {
  for (const [index, list] of hooks) {
    for (const hook of list) {
      const g = grads[index];
      if (g === null || g === undefined) continue;
      const replaced = hook(g);
      if (replaced !== undefined) grads[index] = replaced;
    }
  }
}
