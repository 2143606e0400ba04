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
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { gradientEdge } from './engine.ts';
import { gradMode } from './grad_mode.ts';
import { type Edge, Node, SavedVariable } from './node.ts';

/** Saved state a formula reads: saved tensors unpacked, plus the non-tensor arguments. */
export type SavedValues = Record<string, unknown> & { readonly result?: Tensor };

/**
 * The gradient of one differentiable input given the output gradient `grad` (the first output's), the saved
 * values, and the gradients of every output (for operators with several outputs; null where an output got
 * none). For a `Tensor[]` argument it returns one gradient per element.
 */
export type GradFormula = (grad: Tensor, saved: SavedValues, grads: ReadonlyArray<Tensor | null>) => Tensor | Tensor[];

/**
 * A derivative formula (the role of one `derivatives.yaml` entry). `grads` maps each differentiable input
 * argument to its gradient; broadcasting is reduced back to each input's shape and dtype by the node.
 */
export interface Derivative {
  /** Backward node name, PyTorch's (e.g. `MulBackward0`). */
  readonly name: string;
  /** Arguments to save (by schema name), `result` for the (first) output, `result1`... for the others. */
  readonly save?: readonly string[];
  /** Gradient per differentiable input (by schema name). */
  readonly grads: Readonly<Record<string, GradFormula>>;
  /** Outputs that carry gradient, for operators returning several (default: all of a list, the first of a tuple). */
  readonly outputs?: readonly number[];
}

/** Reduces a gradient to an input's shape and dtype (the broadcasting reduction PyTorch does per input). */
export type ShapeReducer = (grad: Tensor, shape: readonly number[], dtype: DType) => Tensor;

/** One differentiable input edge: argument name, element index for `Tensor[]` arguments, metadata. */
interface InputInfo {
  readonly name: string;
  readonly element: number;
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
    numOutputs: number,
  ) {
    super(edges, numOutputs);
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
    const first = grads.find((g) => g !== null) ?? null;
    if (first === null) return this.#inputs.map(() => null);
    const saved: Record<string, unknown> = { ...this.#values };
    for (const [name, variable] of this.#saved) saved[name] = variable.unpack(this);
    const computed = new Map<string, Tensor | Tensor[]>();
    return this.#inputs.map((input, i) => {
      if (this.nextEdges[i] === null) return null;
      let g = computed.get(input.name);
      if (g === undefined) {
        g = this.#derivative.grads[input.name](grads[0] ?? first, saved, grads);
        computed.set(input.name, g);
      }
      const own = Array.isArray(g) ? g[input.element] : g;
      return this.#reduce(own, input.shape, input.dtype);
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

function cloneBelowAutograd(t: Tensor): Tensor {
  using _below = excludeKeys(AUTOGRAD_DISPATCH_KEYSET);
  return Dispatcher.singleton().findSchemaOrThrow('aten::clone').call(t, null) as Tensor;
}

function requiresGrad(v: unknown): boolean {
  if (v instanceof Tensor) return v.autograd?.requiresGrad === true;
  if (Array.isArray(v)) {
    for (const t of v) {
      if (t instanceof Tensor && t.autograd?.requiresGrad === true) return true;
    }
  }
  return false;
}

function autogradMetaOf(t: Tensor) {
  return t.autograd ??= { requiresGrad: false, grad: null, gradFn: null, outputNr: 0, retainsGrad: false, hooks: [] };
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
  const returnsList = schema.returns.length === 1 && schema.returns[0].type.kind === 'List';
  const shapeKeys = names.map((name) => `${name}_shape`);
  const savesArgument = names.map((name) => saveNames.includes(name));

  const record = (hi: number, lo: number, args: unknown[]): unknown => {
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
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const v = args[i];
      if (v instanceof Tensor) {
        if (savesArgument[i]) {
          // An in-place operator overwrites `self`: its formula needs the original values (PyTorch's
          // original_self), so save a copy rather than the tensor whose version is about to change.
          const original = inPlace && i === 0 ? cloneBelowAutograd(v) : v;
          saved.set(name, new SavedVariable(original));
          if (original !== v) original.dispose();
        }
        values[shapeKeys[i]] = v.shape;
      } else if (!Array.isArray(v) || !v.some((x) => x instanceof Tensor)) {
        values[name] = v;
      } else {
        // A Tensor[] argument: formulas get the shapes (cat splits its gradient by them).
        values[name] = v.map((x: Tensor) => x.shape);
      }
    }
    const edges: Array<Edge | null> = [];
    const inputs: InputInfo[] = [];
    for (const d of differentiable) {
      const v = args[d.index];
      const list = Array.isArray(v) ? v : [v];
      list.forEach((x, element) => {
        const isTensor = x instanceof Tensor;
        edges.push(isTensor ? gradientEdge(x) : null);
        inputs.push({
          name: d.name,
          element,
          shape: isTensor ? x.shape : [],
          dtype: isTensor ? x.dtype : (undefined as unknown as DType),
        });
      });
    }
    let out: unknown;
    {
      using _below = excludeKeys(AUTOGRAD_DISPATCH_KEYSET);
      out = op.redispatch(hi & BELOW_AUTOGRAD_HI, lo, ...args);
    }
    const outputs = Array.isArray(out) ? out as Tensor[] : out instanceof Tensor ? [out] : [];
    if (outputs.length === 0) return out;
    outputs.forEach((t, i) => {
      const key = i === 0 ? 'result' : `result${i}`;
      if (saveNames.includes(key)) saved.set(key, new SavedVariable(t, true));
    });
    const node = new FormulaNode(derivative, edges, inputs, saved, values, reduce, outputs.length);
    const differentiableOutputs = derivative.outputs ?? (returnsList ? outputs.map((_, i) => i) : [0]);
    for (const i of differentiableOutputs) {
      const t = outputs[i];
      if (!(t instanceof Tensor) || !t.dtype.isFloatingPoint) continue;
      const meta = autogradMetaOf(t);
      meta.requiresGrad = true;
      meta.gradFn = node;
      meta.outputNr = i;
    }
    return out;
  };
  return fixedArityKernel(op, schema.arguments.length, differentiable.map((d) => d.index), record);
}

// Note [Fixed-arity autograd kernels]
// Every call of a differentiable operator passes through its autograd kernel, so the path that records
// nothing must cost almost nothing: a generated function with the schema's exact parameters checks grad mode
// and the differentiable arguments' requiresGrad, then redispatches below autograd. Only a call that records
// builds an argument array.
const kernelFactories = new Map<string, (...deps: unknown[]) => unknown>();

function fixedArityKernel(
  op: OperatorHandle,
  arity: number,
  differentiable: readonly number[],
  record: (hi: number, lo: number, args: unknown[]) => unknown,
) {
  const key = `${arity}:${differentiable.join(',')}`;
  let factory = kernelFactories.get(key);
  if (factory === undefined) {
    const params = Array.from({ length: arity }, (_, i) => `a${i}`);
    const checks = differentiable.map((i) => `R(a${i})`).join(' || ') || 'false';
    const rest = params.map((p) => `, ${p}`).join('');
    factory = new Function(
      'G',
      'R',
      'OP',
      'B',
      'REC',
      `return function autograd(h, l${rest}) {
` +
        `  if (G.enabled && (${checks})) return REC(h, l, [${params.join(', ')}]);
` +
        `  return OP.redispatch(h & B, l${rest});
};`,
    ) as (...deps: unknown[]) => unknown;
    kernelFactories.set(key, factory);
  }
  return factory(gradMode, requiresGrad, op, BELOW_AUTOGRAD_HI, record) as (
    hi: number,
    lo: number,
    ...args: unknown[]
  ) => unknown;
}
