/**
 * `vmap`: the vectorizing map (PyTorch's `torch.vmap` / `torch.func.vmap`). `vmap(fn)` returns a function that
 * maps `fn` over a dimension of its inputs: each input to map over becomes a BatchedTensor (one sample's view,
 * Note [Batched tensor layout] in `vmap_batched.ts`) and every operator on it runs a batching rule at the
 * Batched key, or the boxed for-loop fallback. Composes with autograd and with itself (nested vmap).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { type DeferredRegistrations, Dispatcher } from '../dispatch/dispatcher.ts';
import { localKeys } from '../dispatch/local_dispatch_key_set.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { Library } from '../dispatch/library.ts';
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { registerBatchingRules } from './batching_rules.ts';
import './batching_rules_views.ts';
import './batching_rules_nn.ts';
import { batchedFallback } from './vmap_fallback.ts';
import { registerVmapRandomness } from './vmap_random.ts';
import {
  BatchedTensor,
  moveDim,
  physicalDim,
  physicalOf,
  popLevel,
  pushLevel,
  type Randomness,
  wrapPhysical,
} from './vmap_batched.ts';
import { flattenTree, treeSpecText, unflattenTree } from './vmap_tree.ts';

/** `inDims`: a dimension (or null, not mapped) for every input, or a structure matching the inputs. */
export type InDims = number | null | readonly InDims[] | { readonly [key: string]: InDims };
/** `outDims`: where the mapped dimension goes in each output (a number, null, or a matching structure). */
export type OutDims = number | null | readonly OutDims[] | { readonly [key: string]: OutDims };

/** Options of {@linkcode vmap}. */
export interface VmapOptions {
  /** Which dimension of each input to map over (default 0 for every tensor). */
  readonly inDims?: InDims;
  /** Where the mapped dimension goes in the outputs (default 0). */
  readonly outDims?: OutDims;
  /** Random operators: `'error'` (default), `'different'` per sample, or `'same'` for the whole batch. */
  readonly randomness?: Randomness;
  /** Map `chunkSize` samples at a time (PyTorch's `chunk_size`, less memory; 1 is a loop); default all at once. */
  readonly chunkSize?: number | null;
}

let registered = false;
let fallbackLibrary: Library | undefined;
let deferred: DeferredRegistrations | undefined;

/**
 * Registers the batching rules, the Batched fallback and the random operators' VmapMode kernels now (idempotent).
 * Importing this module defers them until first needed (Note [Deferred registrations] in
 * core/dispatch/dispatcher.ts): the first `vmap` call, a registration at Batched or VmapMode, a dispatch that reaches
 * those keys, or any inspection of the dispatch tables runs them, so no program can tell the difference.
 *
 * @example
 * ```ts
 * import { registerVmap } from './vmap.ts';
 * registerVmap();
 * ```
 */
export function registerVmap(): void {
  if (registered) return;
  registered = true;
  deferred?.cancel(); // running now: the deferred group must not run again
  deferred = undefined;
  registerBatchingRules();
  registerVmapRandomness();
  fallbackLibrary = new Library('_', 'IMPL', DispatchKey.Batched, { location: 'core/features/vmap_fallback.ts' });
  fallbackLibrary.fallback(batchedFallback, { debug: 'vmap for-loop fallback' });
}

deferred = Dispatcher.singleton().deferRegistrations(
  'vmap (batching rules, random kernels, for-loop fallback)',
  [DispatchKey.Batched, DispatchKey.VmapMode],
  registerVmap,
);

const RANDOMNESS: readonly string[] = ['error', 'different', 'same'];
const VMAP_MODE = DispatchKeySet.of(DispatchKey.VmapMode);

// deno-lint-ignore ban-types
const nameOf = (fn: Function) => (fn.name !== undefined && fn.name !== '' ? fn.name : '<anonymous>');
const show = (v: unknown): string =>
  v === null
    ? 'None'
    : Array.isArray(v)
    ? `(${v.map(show).join(', ')}${v.length === 1 ? ',' : ''})`
    : typeof v === 'object'
    ? `{${Object.entries(v as object).map(([k, x]) => `${k}: ${show(x)}`).join(', ')}}`
    : String(v);

function typeText(v: unknown): string {
  if (v === null) return "<class 'NoneType'>";
  if (Array.isArray(v)) return "<class 'list'>";
  return `<class '${typeof v === 'object' ? (v as object).constructor?.name ?? 'object' : typeof v}'>`;
}

function checkOutDims(outDims: unknown, name: string): void {
  const ok = (x: unknown): boolean =>
    x === null || Number.isInteger(x) || (Array.isArray(x) && x.every(ok)) ||
    (typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype && Object.values(x as object).every(ok));
  if (!ok(outDims)) {
    throw new ValueError(
      `vmap(${name}, ..., out_dims=${show(outDims)}): \`out_dims\` must be an int, None or a python collection of ` +
        'ints representing where in the outputs the vmapped dimension should appear.',
    );
  }
}

/** The input with its mapped dimension made a batch dimension at `level`. */
function addBatchDim(x: Tensor, dim: number, level: number): Tensor {
  const { t, levels } = physicalOf(x);
  const k = levels.length;
  return new BatchedTensor(moveDim(t, physicalDim(dim, x.ndim, k), k), [...levels, level]);
}

/** The output with the batch dimension of `level` moved to logical position `outDim` (expanded if absent). */
function removeBatchDim(x: Tensor, level: number, size: number, outDim: number): Tensor {
  const { t, levels } = physicalOf(x);
  const j = levels.indexOf(level);
  if (j < 0) {
    const k = levels.length;
    const d = physicalDim(outDim, x.ndim + 1, k);
    const u = aten('unsqueeze').call(t, d) as Tensor;
    const shape = u.shape.slice();
    shape[d] = size;
    return wrapPhysical(aten('expand').call(u, shape, false) as Tensor, levels);
  }
  const rest = levels.filter((l) => l !== level);
  const d = physicalDim(outDim, x.ndim + 1, rest.length);
  return wrapPhysical(moveDim(t, j, d), rest);
}

/**
 * The vectorizing map (PyTorch's `torch.vmap`): a function that runs `fn` once over a batch, as if on every
 * sample, without a loop. `inDims` says which dimension of each argument is the batch (`null`: not mapped;
 * an array or object for a nested argument), `outDims` where the batch dimension goes in each output.
 * Operators run batching rules; those without one fall back to a loop with a warning. Nests, and composes
 * with autograd and with `func.grad` (per-sample gradients: `vmap(func.grad(loss), { inDims: [null, 0, 0] })`).
 *
 * @example
 * ```ts
 * import { dot, randn, vmap } from '../../mod.ts';
 * const batchedDot = vmap((a, b) => dot(a, b)); // [N, D], [N, D] -> [N]
 * batchedDot(randn([4, 5]), randn([4, 5])).shape; // [4]
 * vmap((x, w) => x.matmul(w), { inDims: [0, null] })(randn([4, 3]), randn([3, 2])).shape; // [4, 2]
 * ```
 */
// deno-lint-ignore no-explicit-any
export function vmap<F extends (...args: any[]) => any>(
  fn: F,
  options: VmapOptions = {},
): (...args: Parameters<F>) => ReturnType<F> {
  if (typeof fn !== 'function') throw new TypeError(`vmap: expected a function to vmap over, got ${typeOf(fn)}`);
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`vmap: expected an options object, got ${typeOf(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'inDims' && key !== 'outDims' && key !== 'randomness' && key !== 'chunkSize') {
      throw new TypeError(`vmap() got an unexpected keyword argument '${key}'`);
    }
  }
  const inDims = options.inDims === undefined ? 0 : options.inDims;
  const outDims = options.outDims === undefined ? 0 : options.outDims;
  const randomness = options.randomness ?? 'error';
  const name = nameOf(fn);
  if (!RANDOMNESS.includes(randomness)) {
    throw new RuntimeError(`Only allowed values for randomness are 'error', 'different', or 'same'. Got ${randomness}`);
  }
  checkOutDims(outDims, name);
  const chunkSize = options.chunkSize ?? null;
  if (chunkSize !== null && !(Number.isInteger(chunkSize) && chunkSize > 0)) {
    throw new ValueError(`vmap: chunk_size should be None or greater than 0. (got ${chunkSize})`);
  }
  // Flat in_dims (an int, or one int or null per argument) over flat arguments (no arrays or plain objects) need
  // no tree walk: the common call `vmap(f, { inDims: [0, null] })(x, w)` skips flattening and rebuilding.
  const flatInDims = Number.isInteger(inDims) ||
    (Array.isArray(inDims) && inDims.every((d) => d === null || Number.isInteger(d)));
  // deno-lint-ignore no-explicit-any
  return (...args: any[]): any => {
    const head = () => `vmap(${name}, in_dims=${show(inDims)}, ...)(<inputs>): `;
    if (!Number.isInteger(inDims) && !Array.isArray(inDims)) {
      throw new ValueError(
        `${head()}expected \`in_dims\` to be int or a (potentially nested) tuple matching the structure of inputs, ` +
          `got: ${typeText(inDims)}.`,
      );
    }
    if (args.length === 0) {
      throw new ValueError(
        `vmap(${name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to vmap over a ` +
          'function with no inputs. The latter is unsupported.',
      );
    }
    const flatArgs = flatInDims && (!Array.isArray(inDims) || inDims.length === args.length) && args.every(isLeaf);
    const { leaves, spec } = flatArgs ? { leaves: args, spec: undefined } : flattenTree(args);
    const dims = flatArgs
      ? (Array.isArray(inDims) ? inDims.slice() : args.map(() => inDims))
      : broadcastInDims(inDims, args);
    if (dims === undefined) {
      throw new ValueError(
        `${head()}in_dims is not compatible with the structure of \`inputs\`. in_dims has structure ` +
          `${treeSpecText(flattenTree(inDims).spec)} but inputs has structure ${treeSpecText(spec!)}.`,
      );
    }
    let size = -1, mismatch = false;
    for (let i = 0; i < leaves.length; i++) {
      const arg = leaves[i], d = dims[i] as number | null;
      if (d !== null && !Number.isInteger(d)) {
        throw new ValueError(
          `${head()}Got in_dim=${show(d)} for an input but in_dim must be either an integer dimension or None.`,
        );
      }
      if (d === null) continue;
      if (!(arg instanceof Tensor)) {
        throw new ValueError(
          `${head()}Got in_dim=${d} for an input but the input is of type ${typeText(arg)}. We cannot vmap over ` +
            'non-Tensor arguments, please use None as the respective in_dim',
        );
      }
      arg.assertAlive('vmap');
      if (d < -arg.ndim || d >= arg.ndim) {
        throw new ValueError(
          `${head()}Got in_dim=${d} for some input, but that input is a Tensor of dimensionality ${arg.ndim} so ` +
            `expected in_dim to satisfy -${arg.ndim} <= in_dim < ${arg.ndim}.`,
        );
      }
      if (d < 0) dims[i] = d + arg.ndim;
      const n = arg.shape[dims[i] as number];
      if (size >= 0 && n !== size) mismatch = true;
      size = n;
    }
    if (size < 0) throw new ValueError('vmap: Expected at least one Tensor to vmap over');
    if (mismatch) {
      const sizes = leaves.flatMap((a, j) => dims[j] === null ? [] : [(a as Tensor).shape[dims[j] as number]]);
      throw new ValueError(
        `vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [${sizes.join(', ')}] ` +
          'for the mapped dimension',
      );
    }
    const runBatch = (inputs: unknown[], n: number) => {
      if (!registered) registerVmap(); // before VmapMode joins the include set below, which bypasses its watch
      const level = pushLevel(n, randomness);
      // VmapMode joins the include set for the call (what `includeKeys` does, without a guard object per call).
      const addedHi = VMAP_MODE.hi & ~localKeys.includedHi, addedLo = VMAP_MODE.lo & ~localKeys.includedLo;
      localKeys.includedHi |= addedHi;
      localKeys.includedLo |= addedLo;
      try {
        const batched = inputs.slice();
        for (let i = 0; i < batched.length; i++) {
          if (dims[i] !== null) batched[i] = addBatchDim(batched[i] as Tensor, dims[i] as number, level.level);
        }
        const outputs = fn(...(spec === undefined ? batched : unflattenTree(batched, spec) as unknown[]));
        return unwrapOutputs(outputs, outDims, level.level, n, name);
      } finally {
        localKeys.includedHi &= ~addedHi;
        localKeys.includedLo &= ~addedLo;
        popLevel(level);
      }
    };
    if (chunkSize === null || chunkSize >= size) return runBatch(leaves, size);
    // Chunks: the mapped inputs narrowed to `chunkSize` samples at a time, the outputs concatenated along their
    // out dims (an output with out dim null is taken from the first chunk).
    const chunks: unknown[] = [];
    for (let start = 0; start < size; start += chunkSize) {
      const n = Math.min(chunkSize, size - start);
      chunks.push(
        runBatch(leaves.map((arg, i) => dims[i] === null ? arg : aten('narrow').call(arg, dims[i], start, n)), n),
      );
    }
    const flat = chunks.map((c) => flattenTree(c).leaves);
    const outSpec = flattenTree(chunks[0]).spec;
    const flatDims = chunks[0] instanceof Tensor
      ? [Array.isArray(outDims) ? outDims[0] : outDims]
      : broadcastInDims(outDims, chunks[0])!;
    return unflattenTree(
      flat[0].map((first, j) => {
        const d = flatDims[j];
        if (d === null || !(first instanceof Tensor)) return first;
        return aten('cat').call(flat.map((leavesOfChunk) => leavesOfChunk[j]), d);
      }),
      outSpec,
    );
  };
}

function typeOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** `inDims` broadcast over the flattened arguments (PyTorch's `_broadcast_to_and_flatten`), or undefined. */
function broadcastInDims(inDims: unknown, args: unknown): unknown[] | undefined {
  const out: unknown[] = [];
  const walk = (spec: unknown, value: unknown): boolean => {
    if (spec === null || typeof spec === 'number' || !isContainer(spec)) {
      const n = flattenTree(value).leaves.length;
      for (let i = 0; i < n; i++) out.push(spec);
      return true;
    }
    if (Array.isArray(spec)) {
      if (!Array.isArray(value) || value.length !== spec.length) return false;
      return spec.every((s, i) => walk(s, value[i]));
    }
    if (!isPlainObject(value)) return false;
    const keys = Object.keys(spec as object), valueKeys = Object.keys(value as object);
    if (keys.length !== valueKeys.length || keys.some((k) => !valueKeys.includes(k))) return false;
    return valueKeys.every((k) => walk((spec as Record<string, unknown>)[k], (value as Record<string, unknown>)[k]));
  };
  return walk(inDims, args) ? out : undefined;
}

const isLeaf = (v: unknown) => !Array.isArray(v) && !isPlainObject(v);
const isPlainObject = (v: unknown) =>
  typeof v === 'object' && v !== null && !(v instanceof Tensor) && Object.getPrototypeOf(v) === Object.prototype;
const isContainer = (v: unknown) => Array.isArray(v) || isPlainObject(v);

function unwrapOutputs(outputs: unknown, outDims: unknown, level: number, size: number, name: string): unknown {
  if (outputs instanceof Tensor && Number.isInteger(outDims)) {
    return removeBatchDim(outputs, level, size, outDims as number);
  }
  const { leaves, spec } = flattenTree(outputs);
  let dims: unknown[] | undefined;
  if (outputs instanceof Tensor) {
    dims = Number.isInteger(outDims) || outDims === null
      ? [outDims]
      : Array.isArray(outDims) && outDims.length === 1
      ? outDims
      : undefined;
  } else {
    dims = broadcastInDims(outDims, outputs);
  }
  if (dims === undefined) {
    throw new ValueError(
      `vmap(${name}, ..., out_dims=${show(outDims)})(<inputs>): out_dims is not compatible with the structure of ` +
        `\`outputs\`. out_dims has structure ${treeSpecText(flattenTree(outDims).spec)} but outputs has structure ` +
        `${treeSpecText(spec)}.`,
    );
  }
  const unwrapped = leaves.map((out, i) => {
    const d = dims![i];
    if (d === null) {
      if (out instanceof BatchedTensor && out.levels.includes(level)) {
        throw new ValueError(`vmap(${name}, ...): \`${name}\` can not return a BatchedTensor when out_dim is None`);
      }
      return out;
    }
    if (!(out instanceof Tensor)) {
      throw new ValueError(
        `vmap(${name}, ...): \`${name}\` must only return Tensors, got type ${typeText(out)}. Did you mean to set ` +
          'out_dim= to None for output?',
      );
    }
    return removeBatchDim(out, level, size, d as number);
  });
  return unflattenTree(unwrapped, spec);
}
