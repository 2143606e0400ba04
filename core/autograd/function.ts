/**
 * Custom autograd functions (PyTorch's `torch.autograd.Function`): a forward computed without recording and
 * a hand-written backward, joined into the graph as one node whose gradients are checked as PyTorch checks
 * them (see function_validation.ts).
 *
 * @module
 */
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { Tensor } from '../tensor/tensor.ts';
import { autogradStateOf, CreationMeta, gradientEdge, ViewAutogradState } from './autograd_meta.ts';
import { type InputMetadata, inputMetadata, validateCustomGradients } from './function_validation.ts';
import { isGradEnabled, noGrad } from './grad_mode.ts';
import { type Edge, Node } from './node.ts';
import { SavedVariable } from './saved_variable.ts';

/**
 * What forward and backward share (PyTorch's `ctx`).
 *
 * @example
 * ```ts
 * import { defineFunction } from '../../mod.ts';
 * const scale = defineFunction({
 *   forward(ctx, x, k: number) {
 *     ctx.values.k = k;
 *     return x.mul(k);
 *   },
 *   backward: (ctx, g) => [g.mul(ctx.values.k as number), null],
 * });
 * ```
 */
export class FunctionContext {
  #toSave: Tensor[] = [];
  readonly #saved: SavedVariable[] = [];
  #node: Node | undefined;
  /** Whether each input needs a gradient (false for non-tensors and tensors that do not require grad). */
  readonly needsInputGrad: readonly boolean[];
  /** Anything else forward wants to pass to backward. */
  readonly values: Record<string, unknown> = {};

  /** Made by {@linkcode defineFunction}. */
  constructor(needsInputGrad: readonly boolean[]) {
    this.needsInputGrad = needsInputGrad;
  }

  /**
   * Saves tensors for backward, with version checks (PyTorch's `ctx.save_for_backward`). They are saved when
   * the function joins the graph, after forward (nothing is saved when no input needs a gradient).
   */
  saveForBackward(...tensors: Tensor[]): void {
    tensors.forEach((t, i) => {
      if (!Tensor.isTensor(t)) {
        throw new TypeError(`save_for_backward can only save variables, but argument ${i} is not a Tensor`);
      }
    });
    this.#toSave = tensors;
  }

  /** The saved tensors, checked for in-place changes since they were saved. */
  get savedTensors(): Tensor[] {
    return this.#saved.map((v) => v.unpack(this.#node!));
  }

  /** @internal Saves what forward asked for and links the context to its node (for error messages). */
  attach(node: Node): void {
    this.#node = node;
    try {
      for (const t of this.#toSave) this.#saved.push(new SavedVariable(t));
    } catch (e) {
      this.release();
      throw e;
    } finally {
      this.#toSave = [];
    }
  }

  /** @internal Frees the saved tensors. */
  release(): void {
    for (const v of this.#saved) v.release();
    this.#saved.length = 0;
    this.#toSave = [];
  }
}

/** A custom function's definition. */
export interface FunctionDefinition<Args extends unknown[]> {
  /** Name of the backward node (default `CustomFunctionBackward`), as PyTorch's `<ClassName>Backward`. */
  readonly name?: string;
  /** Computes the output; runs without recording. */
  forward(ctx: FunctionContext, ...args: Args): Tensor;
  /**
   * Gradients of the inputs: one per argument (null for non-tensors and ones that need none; extra trailing
   * nulls are allowed), or a single tensor for a one-argument function.
   */
  backward(ctx: FunctionContext, grad: Tensor): Array<Tensor | null> | Tensor | null;
}

class CustomNode extends Node {
  readonly #name: string;
  readonly #ctx: FunctionContext;
  readonly #backward: FunctionDefinition<unknown[]>['backward'];
  readonly #inputs: ReadonlyArray<InputMetadata | null>;

  constructor(
    name: string,
    ctx: FunctionContext,
    backward: FunctionDefinition<unknown[]>['backward'],
    edges: Array<Edge | null>,
    inputs: ReadonlyArray<InputMetadata | null>,
  ) {
    super(edges, 1);
    this.#name = name;
    this.#ctx = ctx;
    this.#backward = backward;
    this.#inputs = inputs;
  }

  name(): string {
    return this.#name;
  }

  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const g = grads[0];
    if (g === null) return this.nextEdges.map(() => null);
    return validateCustomGradients(this.#name, this.#backward(this.#ctx, g), this.#inputs, this.nextEdges);
  }

  override release(): void {
    this.#ctx.release();
  }

  /** A user's backward may return tensors the user keeps: the engine never frees them early. */
  override get returnsOwnGradients(): boolean {
    return false;
  }
}

/** An output that is an input, returned as-is, becomes a view of it (PyTorch's `view_as` in `_wrap_outputs`). */
function viewOfInput(t: Tensor): Tensor {
  return noGrad(() => Dispatcher.singleton().findSchemaOrThrow('aten::view').call(t, t.shape) as Tensor);
}

/**
 * Defines a custom differentiable function; returns its `apply`.
 *
 * @example
 * ```ts
 * import { defineFunction, tensor } from '../../mod.ts';
 * const square = defineFunction({
 *   name: 'SquareBackward',
 *   forward(ctx, x) {
 *     ctx.saveForBackward(x);
 *     return x.mul(x);
 *   },
 *   backward(ctx, g) {
 *     const [x] = ctx.savedTensors;
 *     return [g.mul(x).mul(2)];
 *   },
 * });
 * const x = tensor([3], { dtype: 'float32' }).requiresGrad_();
 * square(x).backward();
 * ```
 */
export function defineFunction<Args extends unknown[]>(
  definition: FunctionDefinition<Args>,
): (...args: Args) => Tensor {
  if (typeof definition !== 'object' || definition === null) {
    throw new TypeError('defineFunction(): expected an object with forward and backward functions');
  }
  const { forward, backward } = definition;
  if (typeof forward !== 'function' || typeof backward !== 'function') {
    throw new TypeError('defineFunction(): forward and backward must be functions');
  }
  if (definition.name !== undefined && typeof definition.name !== 'string') {
    throw new TypeError('defineFunction(): name must be a string');
  }
  const name = definition.name ?? 'CustomFunctionBackward';
  return (...args: Args): Tensor => {
    const gradEnabled = isGradEnabled();
    const needs = args.map((a) => gradEnabled && Tensor.isTensor(a) && a.requiresGrad);
    const ctx = new FunctionContext(needs);
    let out: unknown;
    try {
      out = noGrad(() => forward.call(definition, ctx, ...args));
    } catch (e) {
      ctx.release();
      throw e;
    }
    if (!Tensor.isTensor(out)) {
      ctx.release();
      throw new TypeError(`${name}: forward must return a Tensor, got ${out === null ? 'null' : typeof out}`);
    }
    const output = args.includes(out) ? viewOfInput(out) : out;
    // Integer outputs are not differentiable: they get no history (PyTorch's `is_differentiable` check).
    if (!needs.some((x) => x) || !output.dtype.isFloatingPoint) {
      ctx.release();
      return output;
    }
    const edges = args.map((a, i) => (needs[i] ? gradientEdge(a as Tensor) : null));
    const definedBackward = backward as FunctionDefinition<unknown[]>['backward'];
    const node = new CustomNode(name, ctx, definedBackward, edges, inputMetadata(args));
    try {
      ctx.attach(node);
    } catch (e) {
      node.freeIfUnheld();
      if (output !== out) output.dispose();
      throw e;
    }
    const state = autogradStateOf(output);
    state.setHistory(node, 0);
    if (state instanceof ViewAutogradState) state.creationMeta = CreationMeta.InCustomFunction;
    node.freeIfUnheld();
    return output;
  };
}
