/**
 * Autograd as a dispatch key: the kernel registered at an operator's Autograd alias key. When an input
 * requires grad and grad mode is on, it saves what the operator's derivative formula needs, redispatches
 * below autograd, and attaches a backward node to the output; otherwise it only redispatches.
 *
 * Note [Autograd kernel]
 * The redispatch runs with the autograd keys in the agent's exclude set (PyTorch's
 * `AutoDispatchBelowADInplaceOrView`), so operators that a backend or composite kernel calls internally do
 * not record. Inputs are saved as SavedVariables (aliases with the version at save time) so an in-place
 * change before backward is reported, and so the caller may dispose the originals.
 *
 * @module
 */
import { AFTER_AUTOGRAD_KEYSET, AUTOGRAD_DISPATCH_KEYSET } from '../dispatch/dispatch_key_set.ts';
import type { FunctionSchema } from '../dispatch/function_schema.ts';
import { excludeKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { gradientEdge } from './engine.ts';
import { isGradEnabled } from './grad_mode.ts';
import { type Edge, Node, SavedVariable } from './node.ts';

/** Saved state a formula reads: saved tensors unpacked, plus the non-tensor arguments. */
export type SavedValues = Record<string, unknown> & { readonly result?: Tensor };

/**
 * A derivative formula (the role of one `derivatives.yaml` entry). `grads` maps each differentiable input
 * argument to its gradient given the output gradient; broadcasting is reduced back to the input's shape and
 * dtype by the kernel.
 */
export interface Derivative {
  /** Backward node name, PyTorch's (e.g. `MulBackward0`). */
  readonly name: string;
  /** Tensor arguments to save (by schema name), and `result` to save the output. */
  readonly save?: readonly string[];
  /** Gradient per differentiable input (by schema name). */
  readonly grads: Readonly<Record<string, (grad: Tensor, saved: SavedValues) => Tensor>>;
}

/** Reduces a gradient to an input's shape and dtype (the broadcasting reduction PyTorch does per input). */
export type ShapeReducer = (grad: Tensor, shape: readonly number[], dtype: DType) => Tensor;

interface InputInfo {
  readonly name: string;
  readonly shape: readonly number[];
  readonly dtype: DType;
}

/** The backward node of one recorded call of an operator with a formula. */
export class FormulaNode extends Node {
  readonly #derivative: Derivative;
  readonly #inputs: InputInfo[];
  readonly #saved: Map<string, SavedVariable>;
  readonly #values: Record<string, unknown>;
  readonly #reduce: ShapeReducer;
  #released = false;

  /** Made by the autograd kernel. */
  constructor(
    derivative: Derivative,
    edges: Array<Edge | null>,
    inputs: InputInfo[],
    saved: Map<string, SavedVariable>,
    values: Record<string, unknown>,
    reduce: ShapeReducer,
  ) {
    super(edges, 1);
    this.#derivative = derivative;
    this.#inputs = inputs;
    this.#saved = saved;
    this.#values = values;
    this.#reduce = reduce;
  }

  /** PyTorch's node name. */
  name(): string {
    return this.#derivative.name;
  }

  /** Gradients of the differentiable inputs. */
  apply(grads: Array<Tensor | null>): Array<Tensor | null> {
    const grad = grads[0];
    if (grad === null) return this.#inputs.map(() => null);
    const saved: Record<string, unknown> = { ...this.#values };
    for (const [name, variable] of this.#saved) saved[name] = variable.unpack(this);
    return this.#inputs.map((input, i) => {
      if (this.nextEdges[i] === null) return null;
      const g = this.#derivative.grads[input.name](grad, saved);
      return this.#reduce(g, input.shape, input.dtype);
    });
  }

  /** Frees the saved tensors. */
  override release(): void {
    if (this.#released) return;
    this.#released = true;
    for (const v of this.#saved.values()) v.release();
  }
}

const BELOW_AUTOGRAD_HI = AFTER_AUTOGRAD_KEYSET.hi;

function requiresGrad(v: unknown): boolean {
  return v instanceof Tensor && v.autograd?.requiresGrad === true;
}

/**
 * The Autograd kernel of an operator with a derivative formula.
 *
 * @example
 * ```ts
 * // registry: impl.impl(name, makeAutogradKernel(op, formula, reduce), DispatchKey.Autograd);
 * ```
 */
export function makeAutogradKernel(op: OperatorHandle, derivative: Derivative, reduce: ShapeReducer) {
  const schema: FunctionSchema = op.schema!;
  const names = schema.arguments.map((a) => a.name);
  const differentiable = Object.keys(derivative.grads).map((name) => {
    const index = names.indexOf(name);
    if (index < 0) throw new Error(`Derivative ${derivative.name}: ${op.name} has no argument '${name}'`);
    return { name, index };
  });
  const inPlace = schema.arguments[0]?.aliasInfo?.isWrite === true;
  const saveNames = derivative.save ?? [];

  return (hi: number, lo: number, ...args: unknown[]): unknown => {
    let record = false;
    if (isGradEnabled()) { for (const d of differentiable) if (requiresGrad(args[d.index])) record = true; }
    // Nothing to record: pass straight through (no guard: inputs that need no grad cannot make nested calls
    // record either).
    if (!record) return op.redispatch(hi & BELOW_AUTOGRAD_HI, lo, ...args);
    const self = args[0];
    if (
      inPlace && self instanceof Tensor && self.autograd?.requiresGrad && !self.autograd.gradFn &&
      self.base === undefined
    ) {
      throw new Error('a leaf Variable that requires grad is being used in an in-place operation.');
    }
    // Save inputs before an in-place operator overwrites them.
    const saved = new Map<string, SavedVariable>();
    const values: Record<string, unknown> = {};
    names.forEach((name, i) => {
      const v = args[i];
      if (v instanceof Tensor) {
        if (saveNames.includes(name)) saved.set(name, new SavedVariable(v));
      } else {
        values[name] = v;
      }
    });
    const edges = differentiable.map((d) => {
      const v = args[d.index];
      return v instanceof Tensor ? gradientEdge(v) : null;
    });
    const inputs = differentiable.map((d) => {
      const v = args[d.index] as Tensor | number;
      return v instanceof Tensor
        ? { name: d.name, shape: v.shape, dtype: v.dtype }
        : { name: d.name, shape: [], dtype: undefined as unknown as DType };
    });
    let out: unknown;
    {
      using _below = excludeKeys(AUTOGRAD_DISPATCH_KEYSET);
      out = op.redispatch(hi & BELOW_AUTOGRAD_HI, lo, ...args);
    }
    if (!(out instanceof Tensor)) return out;
    if (saveNames.includes('result')) saved.set('result', new SavedVariable(out, true));
    const node = new FormulaNode(derivative, edges, inputs, saved, values, reduce);
    const meta = out.autograd ?? (out.autograd = {
      requiresGrad: false,
      grad: null,
      gradFn: null,
      outputNr: 0,
      retainsGrad: false,
      hooks: [],
    });
    meta.requiresGrad = true;
    meta.gradFn = node;
    meta.outputNr = 0;
    return out;
  };
}
