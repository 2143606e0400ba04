// deno-lint-ignore-file no-explicit-any
/**
 * Functional autograd transforms on top of the engine, as functorch's `torch.func` has them: `grad`,
 * `gradAndValue`, `vjp` and `jacrev`. They compose with `vmap`: under a vmap, the differentiated inputs are
 * made batched at every active level (expanded where they were not), so the physical graph keeps the
 * samples apart and one backward pass of the summed outputs gives every sample's own gradient.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { enableGrad } from '../autograd/grad_mode.ts';
import { grad as autogradGrad } from '../autograd/tensor_autograd.ts';
import { activeLevels, alignPhysical, permuteIfNeeded, physicalOf, wrapPhysical } from './vmap_batched.ts';
import { flattenTree, unflattenTree } from './vmap_tree.ts';
import { vmap } from './vmap.ts';

let depth = 0;

/** Options of {@linkcode grad} and {@linkcode gradAndValue}. */
export interface GradTransformOptions {
  /** Which positional argument(s) to differentiate with respect to (default 0). */
  readonly argnums?: number | readonly number[];
  /** `fn` returns `[output, aux]`; aux is returned beside the gradient, not differentiated. */
  readonly hasAux?: boolean;
}

/** A differentiable stand-in for an input: a physical leaf (or alias) and the levels it is batched at. */
interface Primal {
  readonly input: Tensor;
  readonly leaf: Tensor;
  readonly levels: readonly number[];
}

function makePrimal(x: Tensor): Primal {
  const levels = activeLevels().map((l) => l.level);
  const t = alignPhysical(x, levels, x.ndim, true);
  const ag = (t as unknown as { requiresGrad: boolean }).requiresGrad;
  // An input that already requires grad (an outer grad transform) is differentiated through an alias, so the
  // outer graph stays connected; otherwise a fresh leaf.
  const leaf = ag ? aten('view').call(t, t.shape) as Tensor : (t.detach() as Tensor).requiresGrad_(true);
  return { input: x, leaf, levels };
}

/** The physical layout of a value for an output batched at `outLevels`: its own extra levels first. */
function physicalCotangent(v: Tensor, outLevels: readonly number[], outRank: number): Tensor {
  const { levels } = physicalOf(v);
  const extra = levels.filter((l) => !outLevels.includes(l));
  const all = [...new Set([...levels, ...outLevels])].sort((a, b) => a - b);
  const t = alignPhysical(v, all, outRank, true);
  const order = [...extra.map((l) => all.indexOf(l)), ...outLevels.map((l) => all.indexOf(l))];
  for (let d = all.length; d < t.ndim; d++) order.push(d);
  return wrapPhysical(permuteIfNeeded(t, order), extra);
}

/** The gradient of a primal's physical leaf as a value batched at the primal's levels (and any newer ones). */
function logicalGradient(g: Tensor, primal: Primal): Tensor {
  const { t, levels: extra } = physicalOf(g);
  const all = [...extra, ...primal.levels];
  const sorted = [...all].sort((a, b) => a - b);
  const order = sorted.map((l) => all.indexOf(l));
  for (let d = all.length; d < t.ndim; d++) order.push(d);
  return wrapPhysical(permuteIfNeeded(t, order), sorted);
}

/** Gradients of `outputs` (cotangents `cotangents`) with respect to the primals. */
function backward(outputs: Tensor[], cotangents: Tensor[], primals: Primal[]): Tensor[] {
  const roots: Tensor[] = [], grads: Tensor[] = [];
  outputs.forEach((out, i) => {
    const { t, levels } = physicalOf(out);
    if (!(t as unknown as { requiresGrad: boolean }).requiresGrad) return;
    roots.push(t);
    grads.push(physicalCotangent(cotangents[i], levels, out.ndim));
  });
  const createGraph = depth > 1 || primals.some((p) => p.leaf.gradFn != null);
  const result = roots.length === 0
    ? primals.map(() => null)
    : autogradGrad(roots, primals.map((p) => p.leaf), { gradOutputs: grads, createGraph, allowUnused: true });
  return primals.map((p, i) => {
    const g = result[i];
    if (g === null) return aten('zeros_like').call(p.input, null, null, null, null, null) as Tensor;
    return logicalGradient(g, p);
  });
}

function checkFunction(fn: unknown, api: string): void {
  if (typeof fn !== 'function') {
    throw new TypeError(`${api}: expected a function, got ${fn === null ? 'null' : typeof fn}`);
  }
}

function argnumsOf(argnums: unknown, n: number, api: string): number[] {
  const list = typeof argnums === 'number' ? [argnums] : Array.isArray(argnums) ? argnums : undefined;
  if (list === undefined || list.length === 0 || !list.every(Number.isInteger)) {
    throw new RuntimeError(`${api}: argnums must be int or Tuple[int, ...], got: ${String(argnums)}`);
  }
  return list.map((a) => {
    if (a < -n || a >= n) {
      throw new RuntimeError(`Got argnum=${a}, but only ${n} positional inputs`);
    }
    return a < 0 ? a + n : a;
  });
}

/** Runs `fn` on differentiable copies of the chosen arguments; returns gradient(s), value and aux. */
function gradAndValueImpl(fn: (...args: any[]) => any, options: GradTransformOptions, args: unknown[]) {
  const api = 'grad_and_value(f)(*args)';
  const nums = argnumsOf(options.argnums ?? 0, args.length, api);
  const primals: Primal[] = [];
  const trees = nums.map((i) => flattenTree(args[i]));
  const call = args.slice();
  nums.forEach((argnum, j) => {
    const leaves = trees[j].leaves.map((leaf) => {
      if (!(leaf instanceof Tensor)) {
        throw new RuntimeError(
          `${api}: Expected argnums to point to Tensors (or structures of them), got ${typeof leaf}`,
        );
      }
      const p = makePrimal(leaf);
      primals.push(p);
      return wrapPhysical(p.leaf, p.levels);
    });
    call[argnum] = unflattenTree(leaves, trees[j].spec);
  });
  depth++;
  try {
    const result = enableGrad(() => fn(...call));
    let output = result, aux: unknown = undefined;
    if (options.hasAux === true) {
      if (!Array.isArray(result) || result.length !== 2) {
        throw new RuntimeError(`${api}: output of function f should be a tuple: (output, aux) if has_aux is True`);
      }
      [output, aux] = result;
    }
    if (!(output instanceof Tensor)) {
      throw new RuntimeError(`${api}: Expected f(*args) to return a Tensor, got ${typeof output}`);
    }
    if (output.ndim !== 0) {
      throw new RuntimeError(
        `${api}: Expected f(*args) to return a scalar Tensor, got tensor with ${output.ndim} dims. Maybe you ` +
          'wanted to use the vjp or jacrev APIs instead?',
      );
    }
    const ones = aten('ones_like').call(output, null, null, null, null, null) as Tensor;
    const grads = backward([output], [ones], primals);
    let next = 0;
    const perArg = nums.map((_, j) => unflattenTree(trees[j].leaves.map(() => grads[next++]), trees[j].spec));
    const gradient = typeof (options.argnums ?? 0) === 'number' ? perArg[0] : perArg;
    return { gradient, value: output.detach() as Tensor, aux };
  } finally {
    depth--;
  }
}

function checkGradOptions(options: unknown, api: string): GradTransformOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${api}: expected an options object`);
  for (const key of Object.keys(options)) {
    if (key !== 'argnums' && key !== 'hasAux') {
      throw new TypeError(`${api}() got an unexpected keyword argument '${key}'`);
    }
  }
  return options as GradTransformOptions;
}

/**
 * The gradient of a scalar function (PyTorch's `torch.func.grad`): `grad(f)(x)` is df/dx. `argnums` picks the
 * argument(s); `hasAux` lets `f` return `[loss, aux]` (then `[gradient, aux]` is returned). Composes with
 * `vmap` for per-sample gradients, and with itself for higher derivatives.
 *
 * @example
 * ```ts
 * import { func, randn, vmap } from '../../mod.ts';
 * const loss = (w, x) => x.matmul(w).tanh().sum();
 * const w = randn([3]), xs = randn([8, 3]);
 * const perSample = vmap(func.grad(loss), { inDims: [null, 0] })(w, xs); // [8, 3]: one gradient per sample
 * func.grad((x) => x.sin().sum())(randn([4])).shape; // [4]
 * ```
 */
export function grad(fn: (...args: any[]) => any, options: GradTransformOptions = {}): (...args: any[]) => any {
  checkFunction(fn, 'grad');
  const opts = checkGradOptions(options, 'grad');
  return (...args: unknown[]) => {
    const { gradient, aux } = gradAndValueImpl(fn, opts, args);
    return opts.hasAux === true ? [gradient, aux] : gradient;
  };
}

/**
 * Gradient and value together (PyTorch's `torch.func.grad_and_value`): `[gradient, value]`, or
 * `[gradient, [value, aux]]` with `hasAux`.
 *
 * @example
 * ```ts
 * import { func, tensor, float32 } from '../../mod.ts';
 * const [g, v] = func.gradAndValue((x) => x.mul(x).sum())(tensor([1, 2], { dtype: float32 }));
 * g.tolist(); // [2, 4]
 * v.item(); // 5
 * ```
 */
export function gradAndValue(fn: (...args: any[]) => any, options: GradTransformOptions = {}): (...args: any[]) => any {
  checkFunction(fn, 'grad_and_value');
  const opts = checkGradOptions(options, 'grad_and_value');
  return (...args: unknown[]) => {
    const { gradient, value, aux } = gradAndValueImpl(fn, opts, args);
    return opts.hasAux === true ? [gradient, [value, aux]] : [gradient, value];
  };
}

/**
 * The vector-Jacobian product (PyTorch's `torch.func.vjp`): `vjp(f, primals)` runs `f(...primals)` and returns
 * `[output, vjpFn]`, where `vjpFn(cotangents)` gives the gradient for every primal (a list). `cotangents`
 * has the structure of the output. With `hasAux`, `f` returns `[output, aux]` and so does the result, as
 * `[output, vjpFn, aux]`. `vjpFn` may be vmapped (that is how `jacrev` works).
 *
 * @example
 * ```ts
 * import { func, ones, randn } from '../../mod.ts';
 * const x = randn([3]);
 * const [y, vjpFn] = func.vjp((a) => a.mul(a), [x]);
 * const [dx] = vjpFn(ones([3])); // 2 * x
 * ```
 */
export function vjp(
  fn: (...args: any[]) => any,
  primals: readonly unknown[],
  options: { readonly hasAux?: boolean } = {},
): [any, (cotangents: any) => any[], ...unknown[]] {
  checkFunction(fn, 'vjp');
  if (!Array.isArray(primals)) throw new TypeError('vjp: expected the primals as an array of arguments');
  const trees = primals.map((p) => flattenTree(p));
  const all: Primal[] = [];
  const call = primals.map((_p, i) => {
    const leaves = trees[i].leaves.map((leaf) => {
      if (!(leaf instanceof Tensor)) return leaf;
      const primal = makePrimal(leaf);
      all.push(primal);
      return wrapPhysical(primal.leaf, primal.levels);
    });
    return unflattenTree(leaves, trees[i].spec);
  });
  depth++;
  let result: unknown;
  try {
    result = enableGrad(() => fn(...call));
  } finally {
    depth--;
  }
  let output = result, aux: unknown;
  if (options.hasAux === true) {
    if (!Array.isArray(result) || result.length !== 2) {
      throw new RuntimeError(
        'vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True',
      );
    }
    [output, aux] = result;
  }
  const out = flattenTree(output);
  for (const leaf of out.leaves) {
    if (!(leaf instanceof Tensor)) {
      throw new RuntimeError(
        `vjp(f, *primals): Expected f to be a function that has non-empty output, got ${typeof leaf}`,
      );
    }
  }
  const detached = unflattenTree(out.leaves.map((t) => (t as Tensor).detach()), out.spec);
  const vjpFn = (cotangents: unknown) => {
    const ct = flattenTree(cotangents).leaves;
    if (ct.length !== out.leaves.length) {
      throw new RuntimeError(
        `Expected pytree structure of cotangents to be the same as pytree structure of outputs to the function. ` +
          `cotangents: ${ct.length} tensors, primal output: ${out.leaves.length} tensors`,
      );
    }
    ct.forEach((c, i) => {
      const o = out.leaves[i] as Tensor;
      if (!(c instanceof Tensor) || c.shape.join() !== o.shape.join()) {
        throw new RuntimeError(
          `Mismatch in shape: grad_output[${i}] has a shape of [${
            c instanceof Tensor ? c.shape.join(', ') : typeof c
          }] ` +
            `and output[${i}] has a shape of [${o.shape.join(', ')}].`,
        );
      }
    });
    depth++;
    try {
      const grads = enableGrad(() => backward(out.leaves as Tensor[], ct as Tensor[], all));
      let next = 0;
      return primals.map((_p, i) =>
        unflattenTree(trees[i].leaves.map((leaf) => (leaf instanceof Tensor ? grads[next++] : null)), trees[i].spec)
      );
    } finally {
      depth--;
    }
  };
  return options.hasAux === true ? [detached, vjpFn, aux] : [detached, vjpFn];
}

/**
 * The Jacobian by reverse mode (PyTorch's `torch.func.jacrev`): `jacrev(f)(x)` has shape
 * `[...f(x).shape, ...x.shape]`, computed as one vmapped vjp over the rows of an identity matrix.
 *
 * @example
 * ```ts
 * import { func, randn } from '../../mod.ts';
 * func.jacrev((x) => x.sin())(randn([3])).shape; // [3, 3]: diag(cos x)
 * ```
 */
export function jacrev(
  fn: (...args: any[]) => any,
  options: { readonly argnums?: number } = {},
): (...args: any[]) => Tensor {
  checkFunction(fn, 'jacrev');
  const argnum = options.argnums ?? 0;
  return (...args: unknown[]) => {
    const [a] = argnumsOf(argnum, args.length, 'jacrev');
    const x = args[a];
    if (!(x instanceof Tensor)) throw new RuntimeError(`jacrev: argument ${a} must be a Tensor`);
    const [y, vjpFn] = vjp((v: Tensor) => {
      const call = args.slice();
      call[a] = v;
      return fn(...call);
    }, [x]);
    if (!(y instanceof Tensor)) throw new RuntimeError('jacrev: expected f to return a single Tensor');
    const m = y.numel;
    const eye = aten('eye').call(m, y.dtype, null, y.device, null) as Tensor;
    const basis = aten('reshape').call(eye, [m, ...y.shape]) as Tensor;
    const rows = vmap((v: Tensor) => (vjpFn(v)[0] as Tensor))(basis);
    return aten('reshape').call(rows, [...y.shape, ...x.shape]) as Tensor;
  };
}

/**
 * The Jacobian-vector product (PyTorch's `torch.func.jvp`): `jvp(f, primals, tangents)` gives
 * `[f(...primals), J·tangents]`. The engine has no forward mode, so it is the transpose of a vjp: the vjp
 * `u -> Jᵀu` is linear in `u`, and its own vjp with cotangent `tangents` is `J·tangents` (the double-backward
 * trick, which needs the derivatives' derivatives the engine records with `createGraph`).
 *
 * @example
 * ```ts
 * import { float64, func, tensor } from '../../mod.ts';
 * const x = tensor([1, 2], { dtype: float64 });
 * const [y, dy] = func.jvp((a) => a.mul(a), [x], [tensor([1, 0], { dtype: float64 })]);
 * dy.tolist(); // [2, 0]
 * ```
 */
export function jvp(
  fn: (...args: any[]) => any,
  primals: readonly Tensor[],
  tangents: readonly Tensor[],
): [Tensor, Tensor] {
  checkFunction(fn, 'jvp');
  if (!Array.isArray(primals) || !Array.isArray(tangents)) {
    throw new TypeError('jvp(f, primals, tangents): Expected primals and tangents to be arrays of Tensors');
  }
  if (primals.length !== tangents.length) {
    throw new RuntimeError(
      `jvp(f, primals, tangents): Expected primals and tangents to have the same python structure. For example, ` +
        `if primals is a tuple of 3 tensors, tangents also must be. Got primals with ${primals.length} tensors and ` +
        `tangents with ${tangents.length} tensors`,
    );
  }
  primals.forEach((p, i) => {
    const t = tangents[i];
    if (!(p instanceof Tensor) || !(t instanceof Tensor)) {
      throw new RuntimeError('jvp(f, primals, tangents): Expected primals and tangents to only contain Tensors');
    }
    if (p.shape.join() !== t.shape.join()) {
      throw new RuntimeError(
        `jvp(f, primals, tangents): Expected primals and tangents to have the same shape, got [${
          p.shape.join(', ')
        }] ` +
          `and [${t.shape.join(', ')}]`,
      );
    }
  });
  let output: Tensor | undefined;
  const [, transposed] = vjp((u: Tensor) => {
    const [out, vjpFn] = vjp(fn, primals);
    if (!(out instanceof Tensor)) throw new RuntimeError('jvp(f, primals, tangents): Expected f to return a Tensor');
    output = out;
    return (vjpFn(u) as Tensor[]).map((g) => g);
  }, [aten('zeros_like').call(primalsOutput(fn, primals), null, null, null, null, null) as Tensor]);
  const [dy] = transposed([...tangents]) as Tensor[];
  return [output!, dy];
}

/** The output of `fn` on detached primals, for its shape (no graph is kept). */
function primalsOutput(fn: (...args: any[]) => any, primals: readonly Tensor[]): Tensor {
  const out = fn(...primals.map((p) => p.detach()));
  if (!(out instanceof Tensor)) throw new RuntimeError('jvp(f, primals, tangents): Expected f to return a Tensor');
  return out.detach() as Tensor;
}

/**
 * The Jacobian by forward products (PyTorch's `torch.func.jacfwd`): `jacfwd(f)(x)` has shape
 * `[...f(x).shape, ...x.shape]`, one vmapped `jvp` over the columns of an identity matrix.
 *
 * @example
 * ```ts
 * import { func, randn } from '../../mod.ts';
 * func.jacfwd((x) => x.exp())(randn([3])).shape; // [3, 3]
 * ```
 */
export function jacfwd(
  fn: (...args: any[]) => any,
  options: { readonly argnums?: number } = {},
): (...args: any[]) => Tensor {
  checkFunction(fn, 'jacfwd');
  const argnum = options.argnums ?? 0;
  return (...args: unknown[]) => {
    const [a] = argnumsOf(argnum, args.length, 'jacfwd');
    const x = args[a];
    if (!(x instanceof Tensor)) throw new RuntimeError(`jacfwd: argument ${a} must be a Tensor`);
    const f = (v: Tensor) => {
      const call = args.slice();
      call[a] = v;
      return fn(...call);
    };
    const n = x.numel;
    const eye = aten('eye').call(n, x.dtype, null, x.device, null) as Tensor;
    const basis = aten('reshape').call(eye, [n, ...x.shape]) as Tensor;
    const columns = vmap((t: Tensor) => jvp(f, [x], [t])[1])(basis); // [n, ...out]
    const outRank = columns.ndim - 1;
    const moved = aten('permute').call(columns, [...Array(outRank).keys()].map((d) => d + 1).concat([0])) as Tensor;
    const outShape = columns.shape.slice(1);
    return aten('reshape').call(moved, [...outShape, ...x.shape]) as Tensor;
  };
}
