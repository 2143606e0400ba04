/**
 * Batching rules at the Batched key, by operator family: pointwise operators (broadcasting, type promotion and
 * in-place variants, written once from each schema), reductions, and the registration of every family
 * (views in `batching_rules_views.ts`, linear algebra, softmax, losses and indexing in
 * `batching_rules_nn.ts`). Operators without a rule take the boxed fallback (`vmap_fallback.ts`).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { Library } from '../dispatch/library.ts';
import { KernelFunction } from '../dispatch/kernel_function.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { Argument } from '../dispatch/function_schema.ts';
import { resultType, tensorOperand } from '../tensor/promotion.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten, toDtype } from '../ops/aten_call.ts';
import { ELEMENTWISE_OPS } from '../ops/decl_elementwise.ts';
import { huberLoss, smoothL1Loss } from '../ops/activation_composites.ts';
import { registerOperators } from '../ops/registry.ts';
import { alignPhysical, physicalDim, physicalOf, unionLevels, wrapPhysical } from './vmap_batched.ts';

/** An unboxed kernel at the Batched key: the keyset words, then the schema's arguments. */
// deno-lint-ignore no-explicit-any
export type BatchRule = (hi: number, lo: number, ...args: any[]) => unknown;

const isTensorArg = (a: Argument) =>
  a.type.kind === 'Tensor' || (a.type.kind === 'Optional' && a.type.elem.kind === 'Tensor');

/** The error of an in-place operator whose `self` is not batched where another operand is (PyTorch's). */
export function inplaceError(op: string): RuntimeError {
  return new RuntimeError(
    `vmap: ${op}(self, *extra_args) is not possible because there exists a Tensor \`other\` in extra_args that ` +
      'has more elements than `self`. This happened due to `other` being vmapped over but `self` not being ' +
      `vmapped over in a vmap. Please try to use out-of-place operators instead of ${op}. If said operator is ` +
      'being called inside the PyTorch framework, please file a bug report instead.',
  );
}

/** Whether `levels` contains every level of `sub`. */
export function coversLevels(levels: readonly number[], sub: readonly number[]): boolean {
  return sub.every((l) => levels.includes(l));
}

/**
 * The rule of a pointwise operator: its tensor operands broadcast against each other. The batch dimensions
 * of all operands are lined up in front, and batched operands of lower logical rank get size-1 dimensions
 * after them, so that the physical call broadcasts exactly as the logical one. Type promotion treats a
 * logically 0-d operand as 0-d, which its physical form (with batch dimensions) is not: when dtypes differ,
 * operands are first converted to the logical common dtype.
 */
function pointwiseRule(op: OperatorHandle): BatchRule {
  const schema = op.schema!;
  const tensorArgs: number[] = [];
  const promoting: number[] = [];
  schema.arguments.forEach((a, i) => {
    if (!isTensorArg(a)) return;
    tensorArgs.push(i);
    if (a.name !== 'condition' && a.name !== 'mask') promoting.push(i);
  });
  const inPlace = schema.arguments[0]?.aliasInfo?.isWrite === true;
  return (_hi, _lo, ...args) => {
    const lists: Array<readonly number[]> = [];
    let rank = 0;
    for (const i of tensorArgs) {
      const a = args[i];
      if (!(a instanceof Tensor)) continue;
      lists.push(physicalOf(a).levels);
      rank = Math.max(rank, a.ndim);
    }
    const levels = unionLevels(lists);
    const call = args.slice();
    let common: DType | undefined;
    let mixed = false;
    for (const i of promoting) {
      const a = args[i];
      if (!(a instanceof Tensor)) continue;
      if (common !== undefined && a.dtype !== common) mixed = true;
      common ??= a.dtype;
    }
    if (mixed) {
      common = resultType(
        ...promoting.filter((i) => args[i] instanceof Tensor).map((i) => {
          const t = args[i] as Tensor;
          return tensorOperand(t.dtype, t.ndim);
        }),
      );
    }
    if (inPlace) {
      const self = args[0] as Tensor;
      if (!coversLevels(physicalOf(self).levels, levels)) throw inplaceError(op.name);
      if (mixed && common !== self.dtype) common = undefined;
      rank = self.ndim;
    }
    for (const i of tensorArgs) {
      const a = args[i];
      if (!(a instanceof Tensor)) continue;
      let t = alignPhysical(a, levels, rank);
      if (mixed && common !== undefined && promoting.includes(i) && t.dtype !== common) t = toDtype(t, common);
      call[i] = t;
    }
    const out = op.call(...call) as Tensor;
    return inPlace ? args[0] : wrapPhysical(out, levels);
  };
}

/** The logical dimensions a `int[]?` reduction argument names (all of them for null or an empty list). */
function reducedDims(dim: number[] | number | null | undefined, rank: number, k: number): number[] {
  const dims = dim === null || dim === undefined ? [] : typeof dim === 'number' ? [dim] : dim;
  if (dims.length === 0) return [...Array(rank).keys()].map((d) => d + k);
  return dims.map((d) => physicalDim(d, rank, k));
}

/** The physical tensor of a batched `self` with at least one logical dimension, and its batch levels. */
function atLeast1d(self: Tensor): { t: Tensor; levels: readonly number[]; k: number; scalar: boolean } {
  const { t, levels } = physicalOf(self);
  const scalar = self.ndim === 0;
  return { t: scalar ? aten('unsqueeze').call(t, levels.length) as Tensor : t, levels, k: levels.length, scalar };
}

/** The physical tensor of `self` with its logical dimensions flattened into one. */
function flattenLogical(self: Tensor): { t: Tensor; levels: readonly number[]; k: number } {
  const { t, levels } = physicalOf(self);
  const k = levels.length;
  return { t: aten('reshape').call(t, [...t.shape.slice(0, k), self.numel]) as Tensor, levels, k };
}

function reductionRules(): Record<string, BatchRule> {
  const dimReduce =
    (name: string, overload: string) =>
    (_hi: number, _lo: number, self: Tensor, dim: number[] | null, keep: boolean, dtype: unknown) => {
      const { t, levels, k, scalar } = atLeast1d(self);
      const dims = scalar ? [k] : reducedDims(dim, self.ndim, k);
      let out = aten(name, overload).call(t, dims, keep, dtype) as Tensor;
      if (scalar && keep) out = aten('squeeze', 'dim').call(out, k) as Tensor;
      return wrapPhysical(out, levels);
    };
  const sumDim = dimReduce('sum', 'dim_IntList');
  const meanDim = dimReduce('mean', 'dim');
  const full = (reduce: typeof sumDim) => (hi: number, lo: number, self: Tensor, dtype: unknown) =>
    reduce(hi, lo, self, null, false, dtype);
  const extreme = (name: 'amax' | 'amin') => (_hi: number, _lo: number, self: Tensor, dim: number[], keep: boolean) => {
    const { t, levels, k, scalar } = atLeast1d(self);
    const dims = scalar ? [k] : reducedDims(dim, self.ndim, k);
    let out = aten(name).call(t, dims, keep) as Tensor;
    if (scalar && keep) out = aten('squeeze', 'dim').call(out, k) as Tensor;
    return wrapPhysical(out, levels);
  };
  const fullExtreme = (name: 'amax' | 'amin') => (_hi: number, _lo: number, self: Tensor) => {
    if (self.numel === 0) {
      throw new RuntimeError(
        `${name === 'amax' ? 'max' : 'min'}(): Expected reduction dim to be specified for input.numel() == 0. ` +
          "Specify the reduction dim with the 'dim' argument.",
      );
    }
    const { t, levels, k } = flattenLogical(self);
    return wrapPhysical(aten(name).call(t, [k], false) as Tensor, levels);
  };
  const withIndices = (name: 'max' | 'min') => (_hi: number, _lo: number, self: Tensor, dim: number, keep: boolean) => {
    const { t, levels, k, scalar } = atLeast1d(self);
    const d = scalar ? k : physicalDim(dim, self.ndim, k);
    let [values, indices] = aten(name, 'dim').call(t, d, keep) as Tensor[];
    if (scalar && keep) {
      values = aten('squeeze', 'dim').call(values, k) as Tensor;
      indices = aten('squeeze', 'dim').call(indices, k) as Tensor;
    }
    return [wrapPhysical(values, levels), wrapPhysical(indices, levels)];
  };
  const argExtreme =
    (name: 'argmax' | 'argmin') => (_hi: number, _lo: number, self: Tensor, dim: number | null, keep: boolean) => {
      if (dim === null || dim === undefined) {
        const { t, levels, k } = flattenLogical(self);
        let out = aten(name).call(t, k, false) as Tensor;
        if (keep) out = aten('reshape').call(out, [...out.shape, ...self.shape.map(() => 1)]) as Tensor;
        return wrapPhysical(out, levels);
      }
      const { t, levels, k, scalar } = atLeast1d(self);
      let out = aten(name).call(t, scalar ? k : physicalDim(dim, self.ndim, k), keep) as Tensor;
      if (scalar && keep) out = aten('squeeze', 'dim').call(out, k) as Tensor;
      return wrapPhysical(out, levels);
    };
  const prodDim = (_hi: number, _lo: number, self: Tensor, dim: number, keep: boolean, dtype: unknown) => {
    const { t, levels, k, scalar } = atLeast1d(self);
    let out = aten('prod', 'dim_int').call(t, scalar ? k : physicalDim(dim, self.ndim, k), keep, dtype) as Tensor;
    if (scalar && keep) out = aten('squeeze', 'dim').call(out, k) as Tensor;
    return wrapPhysical(out, levels);
  };
  return {
    'sum': full(sumDim),
    'sum.dim_IntList': sumDim,
    'mean': full(meanDim),
    'mean.dim': meanDim,
    'amax': extreme('amax'),
    'amin': extreme('amin'),
    'max': fullExtreme('amax'),
    'min': fullExtreme('amin'),
    'max.dim': withIndices('max'),
    'min.dim': withIndices('min'),
    'argmax': argExtreme('argmax'),
    'argmin': argExtreme('argmin'),
    'prod.dim_int': prodDim,
    'prod': (_hi: number, _lo: number, self: Tensor, dtype: unknown) => {
      const { t, levels, k } = flattenLogical(self);
      return wrapPhysical(aten('prod', 'dim_int').call(t, k, false, dtype) as Tensor, levels);
    },
  };
}

/** Operators whose schema is pointwise beyond the elementwise declarations. */
const EXTRA_POINTWISE = [
  'where.ScalarOther',
  'where.ScalarSelf',
  'where.Scalar',
  'masked_fill.Scalar',
  'masked_fill_.Scalar',
  'fill_.Scalar',
  'copy_',
  'rsub.Tensor',
  'rsub.Scalar',
  'clamp.Tensor',
  'leaky_relu',
  'elu',
  'softplus',
  'hardtanh',
  'mish',
  'log_sigmoid',
];

let library: Library | undefined;
const ruleTables: Array<() => Record<string, BatchRule>> = [];

/** Adds a table of rules (by declaration name) to what {@linkcode registerBatchingRules} registers. */
export function addRuleTable(table: () => Record<string, BatchRule>): void {
  ruleTables.push(table);
}

// smooth_l1_loss and huber_loss, which have kernels of their own on the CPU, run their decomposition on batched
// tensors, as they did while they were composites (each part has a batching rule), rather than the loop of the
// fallback. binary_cross_entropy's decomposition reads its range check with item(), which vmap refuses: it takes
// the fallback (its kernel per sample).
addRuleTable(() => ({
  'smooth_l1_loss': (_hi: number, _lo: number, self: Tensor, target: Tensor, reduction: number, beta: number) =>
    smoothL1Loss(self, target, reduction, beta),
  'huber_loss': (_hi: number, _lo: number, self: Tensor, target: Tensor, reduction: number, delta: number) =>
    huberLoss(self, target, reduction, delta),
}));

/**
 * Registers the batching rules at the Batched key (idempotent). `registerVmap` (vmap.ts) does it, when first needed.
 *
 * @example
 * ```ts
 * import { registerBatchingRules } from './batching_rules.ts';
 * registerBatchingRules();
 * ```
 */
export function registerBatchingRules(): void {
  if (library !== undefined) return;
  const ops = registerOperators() as Record<string, OperatorHandle>;
  const lib = new Library('aten', 'IMPL', DispatchKey.Batched, { location: 'core/features/batching_rules.ts' });
  // Set first: a registration at Batched runs the deferred vmap group (Note [Deferred registrations] in
  // core/dispatch/dispatcher.ts), which calls this again.
  library = lib;
  const done = new Set<string>();
  const put = (name: string, rule: BatchRule | KernelFunction) => {
    if (done.has(name) || ops[name] === undefined) return;
    done.add(name);
    lib.impl(name, rule, undefined, { debug: `batching rule for aten::${name}` });
  };
  for (const table of ruleTables) for (const [name, rule] of Object.entries(table())) put(name, rule);
  for (const [name, rule] of Object.entries(reductionRules())) put(name, rule as BatchRule);
  // A pointwise rule reads its operator's schema: built when the operator is first used (Note [Operators
  // materialize on first use] in core/dispatch/dispatcher.ts), so registering it parses nothing.
  for (const name of [...Object.keys(ELEMENTWISE_OPS), ...EXTRA_POINTWISE]) {
    if (ops[name] !== undefined) put(name, KernelFunction.deferred(() => pointwiseRule(ops[name])));
  }
}
