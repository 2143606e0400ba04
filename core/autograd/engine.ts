/**
 * The autograd engine: runs backward nodes in dependency order from the roots, accumulating gradients into
 * leaves (`backward`) or capturing them for given inputs (`grad`).
 *
 * Note [Engine order and memory]
 * A node runs when every node that feeds gradient into it has run (dependency counts over the reachable
 * graph); among ready nodes the most recently created runs first, as in PyTorch's ready queue, which here is a
 * binary heap on the sequence number (AccumulateGrad nodes have the largest). Counting, running and releasing
 * are loops over explicit worklists, never recursion, so the cost is linear in the graph (plus a logarithm
 * for the heap) and a 100k-deep chain does not grow the stack. The whole run is one `scope()`: intermediate
 * gradients are freed at the end, and only what outlives the run (leaf `.grad` tensors, captured gradients)
 * is kept. A gradient tensor handed to one leaf is never shared with another, because leaf gradients are
 * later accumulated in place.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { scope } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import { AccumulateGrad } from './accumulate_grad.ts';
import { gradientEdge } from './autograd_meta.ts';
import { engineOps } from './engine_ops.ts';
import { GraphRun } from './graph_run.ts';
import { enableGrad, noGrad } from './grad_mode.ts';
import type { Edge, GradHook, Node } from './node.ts';
import { ReadyQueue } from './ready_queue.ts';

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
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { runBackward } from './engine.ts';
 * const x = tensor([3], { dtype: 'float32' }).requiresGrad_();
 * const [g] = runBackward([x.mul(x)], [null], { retainGraph: false, createGraph: false, captureFor: [x] });
 * g?.item(); // 6
 * ```
 */
export function runBackward(
  roots: readonly Tensor[],
  grads: ReadonlyArray<Tensor | null>,
  options: RunOptions,
): Array<Tensor | null> {
  return scope(() => {
    using _mode = options.createGraph ? enableGrad() : noGrad();
    return execute(roots, grads, options);
  });
}

function rootEdgesOf(roots: readonly Tensor[], grads: ReadonlyArray<Tensor | null>, run: GraphRun): Edge[] {
  const edges: Edge[] = [];
  roots.forEach((root, i) => {
    if (!Tensor.isTensor(root)) throw new TypeError(`backward(): element ${i} of tensors is not a Tensor`);
    root.assertAlive('backward()');
    const edge = gradientEdge(root);
    if (edge === null) {
      throw new RuntimeError(`element ${i} of tensors does not require grad and does not have a grad_fn`);
    }
    let g = grads[i] ?? null;
    if (g === null) {
      if (root.numel !== 1) throw new RuntimeError('grad can be implicitly created only for scalar outputs');
      g = engineOps().onesLike(root);
      run.own(g);
    } else if (!Tensor.isTensor(g)) {
      throw new TypeError(`backward(): grad_tensors[${i}] must be a Tensor or null`);
    } else if (g.shape.length !== root.shape.length || g.shape.some((s, d) => s !== root.shape[d])) {
      throw new RuntimeError(
        `Mismatch in shape: grad_output[${i}] has a shape of [${g.shape.join(', ')}] and output[${i}] has a shape of [${
          root.shape.join(', ')
        }].`,
      );
    }
    edges.push(edge);
    run.add(edge, g);
  });
  return edges;
}

function execute(
  roots: readonly Tensor[],
  grads: ReadonlyArray<Tensor | null>,
  options: RunOptions,
): Array<Tensor | null> {
  const run = new GraphRun();
  try {
    return runGraph(run, roots, grads, options);
  } finally {
    run.finish();
  }
}

function runGraph(
  run: GraphRun,
  roots: readonly Tensor[],
  grads: ReadonlyArray<Tensor | null>,
  options: RunOptions,
): Array<Tensor | null> {
  const rootEdges = rootEdgesOf(roots, grads, run);
  const ready = run.countDependencies([...new Set(rootEdges.map((e) => e.node))]);

  // Where captured gradients come from: a leaf's accumulator, or a non-leaf's gradFn output.
  const captureAt = new Map<Node, Array<[inputNr: number, slot: number]>>();
  const captured: Array<Tensor | null> = (options.captureFor ?? []).map(() => null);
  options.captureFor?.forEach((t, slot) => {
    if (!Tensor.isTensor(t)) throw new TypeError(`grad(): element ${slot} of inputs is not a Tensor`);
    const edge = gradientEdge(t);
    if (edge === null) throw new RuntimeError('One of the differentiated Tensors does not require grad');
    const list = captureAt.get(edge.node) ?? [];
    list.push([edge.inputNr, slot]);
    captureAt.set(edge.node, list);
  });
  const capturing = options.captureFor !== undefined;

  const owned = new Set<Tensor>();
  const queue = new ReadyQueue();
  for (const node of ready) queue.push(node);
  const executed: Node[] = [];
  while (!queue.isEmpty) {
    const node = queue.pop();
    executed.push(node);
    const taken = run.take(node);
    const inputs = node.hasPreHooks ? runHooks(node.preHooks, taken) : taken;
    const captures = captureAt.get(node);
    if (captures !== undefined) {
      for (const [inputNr, slot] of captures) {
        const g = inputs[inputNr];
        captured[slot] = g;
        if (g !== null) run.keep(g);
      }
    }
    let outputs: Array<Tensor | null> = [];
    if (node instanceof AccumulateGrad) {
      if (!capturing) {
        node.owned = owned;
        node.apply(inputs);
        node.owned = undefined;
        const kept = node.variable.autograd?.grad;
        if (kept !== null && kept !== undefined) run.keep(kept);
      }
    } else if (inputs.some((g) => g !== null)) {
      // A node's temporaries are freed as soon as it returns; its outputs move on to the run's scope.
      outputs = scope(() => node.apply(inputs));
      if (node.returnsOwnGradients) {
        for (const g of outputs) if (g !== null && !inputs.includes(g) && !taken.includes(g)) run.own(g);
      }
    }
    const edges = node.nextEdges;
    for (let i = 0; i < edges.length; i++) {
      const edge = edges[i];
      if (edge === null) continue;
      const g = outputs[i] ?? null;
      if (g !== null) run.add(edge, g);
      if (run.delivered(edge.node)) queue.push(edge.node);
    }
    run.consumed(taken, outputs);
  }
  if (!options.retainGraph) { for (const node of executed) node.release(); }
  // Captured gradients are the run's result: scope() moves them to the caller's scope.
  if (capturing && !options.allowUnused && captured.some((g) => g === null)) {
    throw new RuntimeError(
      'One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.',
    );
  }
  return captured;
}

/**
 * The gradients after the node's hooks ran on them: a hook may return a replacement of the same size and type
 * (PyTorch's checks of a hook's result), or nothing to keep the gradient.
 */
function runHooks(hooks: Map<number, GradHook[]>, taken: ReadonlyArray<Tensor | null>): Array<Tensor | null> {
  const grads = taken.slice();
  for (const [index, list] of hooks) {
    for (const hook of list) {
      const g = grads[index];
      if (g === null || g === undefined) continue;
      const replaced: unknown = hook(g);
      if (replaced === undefined || replaced === null) continue;
      const name = hook.name || '<anonymous>';
      if (!Tensor.isTensor(replaced)) {
        const type = Array.isArray(replaced) ? 'list' : typeof replaced;
        throw new TypeError(`expected Variable, but hook returned '${type}'`);
      }
      if (replaced.shape.length !== g.shape.length || replaced.shape.some((s, d) => s !== g.shape[d])) {
        throw new RuntimeError(`hook '${name}' has changed the size of value`);
      }
      if (replaced.dtype !== g.dtype) {
        const type = (t: Tensor) => `torch.${t.dtype.scalarTypeName}Tensor`;
        throw new RuntimeError(`hook '${name}' has changed the type of value (was ${type(g)} got ${type(replaced)})`);
      }
      grads[index] = replaced;
    }
  }
  return grads;
}
