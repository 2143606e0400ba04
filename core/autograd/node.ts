/**
 * The autograd graph: backward nodes (PyTorch's `torch::autograd::Node`), edges to the nodes of the
 * inputs, saved variables with version checks, and the AccumulateGrad node of leaf tensors.
 *
 * @module
 */
import { Tensor } from '../tensor/tensor.ts';
import { keep } from '../tensor/lifetime.ts';

/** Where a gradient flows: input `inputNr` of `node`. */
export interface Edge {
  readonly node: Node;
  readonly inputNr: number;
}

let nextSequenceNr = 0;
let recordingDuringBackward = 0;

/** Marks (+1) or unmarks (-1) a createGraph backward run, whose recorded graph outlives its scope. */
export function adjustCreateGraphDepth(delta: 1 | -1): void {
  recordingDuringBackward += delta;
}

/** A hook on a node's incoming gradient for one output; may return a replacement. */
export type GradHook = (grad: Tensor) => Tensor | void;

/**
 * A backward function. `apply` maps the gradients of the node's outputs to the gradients of its inputs,
 * one per entry of `nextEdges`.
 *
 * @example
 * ```ts
 * // tensor.gradFn?.name() === 'MulBackward0'
 * ```
 */
export abstract class Node {
  /** Where each input's gradient goes (null for inputs that do not require grad). */
  nextEdges: Array<Edge | null>;
  /** Creation order; the engine runs later nodes first, as PyTorch does. */
  readonly sequenceNr: number;
  #preHooks: Map<number, GradHook[]> | undefined;
  /** Number of outputs (gradients `apply` receives). */
  readonly numOutputs: number;

  /** A node with edges to the given inputs. */
  constructor(nextEdges: Array<Edge | null>, numOutputs = 1) {
    this.nextEdges = nextEdges;
    this.numOutputs = numOutputs;
    this.sequenceNr = nextSequenceNr++;
  }

  /** Hooks on the gradient of each output; created on first use (most nodes never get one). */
  get preHooks(): Map<number, GradHook[]> {
    return this.#preHooks ??= new Map();
  }

  /** Whether any pre-hook was registered. */
  get hasPreHooks(): boolean {
    return this.#preHooks !== undefined && this.#preHooks.size > 0;
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
export const FREED_GRAPH_MESSAGE = 'Trying to backward through the graph a second time (or directly access saved ' +
  'tensors after they have already been freed). Saved intermediate values of the graph are freed when you call ' +
  '.backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second ' +
  'time or if you need to access saved tensors after calling backward.';

/**
 * A tensor saved for backward. It keeps its own reference to the storage (so the caller may dispose the
 * original) and the version it had, so that an in-place change before backward is reported.
 */
export class SavedVariable {
  #alias: Tensor | undefined;
  #original: Tensor | undefined;
  readonly #version: number;
  readonly #isOutput: boolean;
  /** Saves `t` (an alias sharing storage and version counter). */
  constructor(t: Tensor, isOutput = false) {
    // A graph recorded during a createGraph backward outlives that run's scope (it is differentiated again
    // later), so what it saves is exempt from the scope.
    this.#alias = recordingDuringBackward > 0 ? keep(aliasOf(t)) : aliasOf(t);
    this.#original = t;
    this.#version = t.versionCounter.version;
    this.#isOutput = isOutput;
  }

  /** The saved tensor; throws PyTorch's errors if it was freed or modified in place. */
  unpack(node: Node, outputNr = 0): Tensor {
    const t = this.#alias;
    if (t === undefined) throw new Error(FREED_GRAPH_MESSAGE);
    if (t.versionCounter.version !== this.#version) {
      const type = `torch.${t.dtype.scalarTypeName}Tensor [${t.shape.join(', ')}]`;
      const role = this.#isOutput ? `, which is output ${outputNr} of ${node.name()},` : '';
      throw new Error(
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

  /** Drops the saved reference. */
  release(): void {
    this.#alias?.dispose();
    this.#alias = undefined;
    this.#original = undefined;
  }
}

/** A new Tensor object over the same storage, layout and version counter (a detached alias). */
export function aliasOf(t: Tensor): Tensor {
  t.storage.retain();
  return (new Tensor({
    storage: t.storage,
    shape: t.shape,
    strides: t.stride(),
    storageOffset: t.storageOffset,
    dtype: t.dtype,
    version: t.versionCounter,
    base: t.base ?? t,
    inference: t.isInference,
  }));
}
