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
import { canGenerateCode } from '../dispatch/call_stub.ts';
import { AFTER_AUTOGRAD_KEYSET, AUTOGRAD_DISPATCH_KEYSET } from '../dispatch/dispatch_key_set.ts';
import type { FunctionSchema } from '../dispatch/function_schema.ts';
import { excludeKeys } from '../dispatch/local_dispatch_key_set.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { autogradStateOf, gradientEdge } from './autograd_meta.ts';
import { checkInplace, rebaseHistory } from './copy_slices.ts';
import { geometryOf } from './engine_ops.ts';
import { gradMode } from './grad_mode.ts';
import { type Edge, Node } from './node.ts';
import { SavedVariable } from './saved_variable.ts';

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
  /** Tensor arguments whose layout (sizes, strides, offset) the formula reads, as `<name>_geometry`. */
  readonly geometry?: readonly string[];
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
    if (this.#saved.size > 0) { for (const v of this.#saved.values()) v.release(); }
  }
}

const BELOW_AUTOGRAD_HI = AFTER_AUTOGRAD_KEYSET.hi;

/**
 * A copy of `self` taken before an in-place operator overwrites it (PyTorch's `original_self = self.clone()`).
 * It is recorded (CloneBackward0), so that double backward through the saved value reaches `self`'s history.
 */
function originalSelf(t: Tensor): Tensor {
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

  const savesGeometry = names.map((name) => derivative.geometry?.includes(name) === true);
  const geometryKeys = names.map((name) => `${name}_geometry`);
  const savesOutputs = saveNames.some((name) => name.startsWith('result'));
  const firstOutputOnly = [0];

  const record = (hi: number, lo: number, args: unknown[]): unknown => {
    const self = args[0];
    if (inPlace && self instanceof Tensor) checkInplace(self);
    // The inputs' histories before anything changes (PyTorch's collect_next_edges; reading a view's grad_fn
    // may raise its in-place error, before anything was saved).
    const edges: Array<Edge | null> = [];
    const inputs: InputInfo[] = [];
    const addInput = (name: string, x: unknown, element: number) => {
      const isTensor = x instanceof Tensor;
      edges.push(isTensor ? gradientEdge(x) : null);
      inputs.push({
        name,
        element,
        shape: isTensor ? x.shape : [],
        dtype: isTensor ? x.dtype : (undefined as unknown as DType),
      });
    };
    for (let k = 0; k < differentiable.length; k++) {
      const d = differentiable[k];
      const v = args[d.index];
      if (Array.isArray(v)) {
        for (let element = 0; element < v.length; element++) addInput(d.name, v[element], element);
      } else addInput(d.name, v, 0);
    }
    // Save inputs before an in-place operator overwrites them.
    const saved = new Map<string, SavedVariable>();
    const values: Record<string, unknown> = {};
    try {
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        const v = args[i];
        if (v instanceof Tensor) {
          if (savesArgument[i]) {
            // An in-place operator overwrites `self`: its formula needs the original values (PyTorch's
            // original_self), so save a copy rather than the tensor whose version is about to change.
            const original = inPlace && i === 0 ? originalSelf(v) : v;
            try {
              saved.set(name, new SavedVariable(original));
            } finally {
              if (original !== v) original.dispose();
            }
          }
          values[shapeKeys[i]] = v.shape;
          if (savesGeometry[i]) values[geometryKeys[i]] = geometryOf(v);
        } else if (!Array.isArray(v) || !v.some((x) => x instanceof Tensor)) {
          values[name] = v;
        } else {
          // A Tensor[] argument: formulas get the shapes (cat splits its gradient by them).
          values[name] = v.map((x: Tensor) => x.shape);
        }
      }
    } catch (e) {
      for (const v of saved.values()) v.release();
      throw e;
    }
    let out: unknown;
    try {
      using _below = excludeKeys(AUTOGRAD_DISPATCH_KEYSET);
      out = op.redispatch(hi & BELOW_AUTOGRAD_HI, lo, ...args);
    } catch (e) {
      for (const v of saved.values()) v.release();
      throw e;
    }
    const outputs = Array.isArray(out) ? out as Tensor[] : out instanceof Tensor ? [out] : [];
    if (outputs.length === 0) {
      for (const v of saved.values()) v.release();
      return out;
    }
    if (savesOutputs) {
      outputs.forEach((t, i) => {
        const key = i === 0 ? 'result' : `result${i}`;
        if (saveNames.includes(key)) saved.set(key, new SavedVariable(t, true));
      });
    }
    const node = new FormulaNode(derivative, edges, inputs, saved, values, reduce, outputs.length);
    if (inPlace) {
      if (outputs[0].dtype.isFloatingPoint) rebaseHistory(outputs[0], node);
    } else {
      const differentiableOutputs = derivative.outputs ?? (returnsList ? outputs.map((_, i) => i) : firstOutputOnly);
      for (const i of differentiableOutputs) {
        const t = outputs[i];
        if (t instanceof Tensor && t.dtype.isFloatingPoint) autogradStateOf(t).setHistory(node, i);
      }
    }
    node.freeIfUnheld(); // no output took the node: nothing can reach it
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
  if (!canGenerateCode()) {
    // Note [Stubs without code generation] in core/dispatch/call_stub.ts: the same logic as a closure.
    return (hi: number, lo: number, ...args: unknown[]): unknown => {
      if (gradMode.enabled) {
        for (const i of differentiable) if (requiresGrad(args[i])) return record(hi, lo, args);
      }
      return op.redispatch(hi & BELOW_AUTOGRAD_HI, lo, ...args);
    };
  }
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
