/**
 * Custom autograd functions (PyTorch's `torch.autograd.Function`): a forward computed without recording and
 * a hand-written backward, joined into the graph as one node.
 *
 * @module
 */
import { Tensor } from '../tensor/tensor.ts';
import { gradientEdge } from './engine.ts';
import { isGradEnabled, noGrad } from './grad_mode.ts';
import { Node, SavedVariable } from './node.ts';

/** What forward and backward share (PyTorch's `ctx`). */
export class FunctionContext {
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

  /** Saves tensors for backward, with version checks (PyTorch's `ctx.save_for_backward`). */
  saveForBackward(...tensors: Tensor[]): void {
    for (const t of tensors) this.#saved.push(new SavedVariable(t));
  }

  /** The saved tensors, checked for in-place changes since they were saved. */
  get savedTensors(): Tensor[] {
    return this.#saved.map((v) => v.unpack(this.#node!));
  }

  /** @internal Links the context to its node (for error messages) and frees saved tensors on release. */
  attach(node: Node): void {
    this.#node = node;
  }

  /** @internal Frees the saved tensors. */
  release(): void {
    for (const v of this.#saved) v.release();
  }
}

/** A custom function's definition. */
export interface FunctionDefinition<Args extends unknown[]> {
  /** Name of the backward node (default `CustomFunctionBackward`). */
  readonly name?: string;
  /** Computes the output; runs without recording. */
  forward(ctx: FunctionContext, ...args: Args): Tensor;
  /** Gradients of the inputs (one per argument; null for non-tensors or ones that need none). */
  backward(ctx: FunctionContext, grad: Tensor): Array<Tensor | null>;
}

class CustomNode extends Node {
  readonly #name: string;
  readonly #ctx: FunctionContext;
  readonly #backward: (ctx: FunctionContext, grad: Tensor) => Array<Tensor | null>;
  readonly #tensorArgs: number[];

  constructor(
    name: string,
    ctx: FunctionContext,
    backward: (ctx: FunctionContext, grad: Tensor) => Array<Tensor | null>,
    edges: ReturnType<typeof gradientEdge>[],
    tensorArgs: number[],
  ) {
    super(edges, 1);
    this.#name = name;
    this.#ctx = ctx;
    this.#backward = backward;
    this.#tensorArgs = tensorArgs;
    ctx.attach(this);
  }

  name(): string {
    return this.#name;
  }

  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const g = grads[0];
    if (g === null) return this.#tensorArgs.map(() => null);
    const all = this.#backward(this.#ctx, g);
    return this.#tensorArgs.map((i) => all[i] ?? null);
  }

  override release(): void {
    this.#ctx.release();
  }
}

/**
 * Defines a custom differentiable function; returns its `apply`.
 *
 * @example
 * ```ts
 * import { defineFunction, tensor } from '../../mod.ts';
 * const square = defineFunction({
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
  const name = definition.name ?? 'CustomFunctionBackward';
  return (...args: Args): Tensor => {
    const needs = args.map((a) => isGradEnabled() && a instanceof Tensor && a.requiresGrad);
    const ctx = new FunctionContext(needs);
    const out = noGrad(() => definition.forward(ctx, ...args));
    if (!needs.some((x) => x)) {
      ctx.release();
      return out;
    }
    const tensorArgs = args.flatMap((a, i) => (a instanceof Tensor ? [i] : []));
    const edges = tensorArgs.map((i) => (needs[i] ? gradientEdge(args[i] as Tensor) : null));
    const node = new CustomNode(name, ctx, definition.backward, edges, tensorArgs);
    const meta = out.autograd ??= {
      requiresGrad: false,
      grad: null,
      gradFn: null,
      outputNr: 0,
      retainsGrad: false,
      hooks: [],
    };
    meta.requiresGrad = true;
    meta.gradFn = node;
    meta.outputNr = 0;
    return out;
  };
}
