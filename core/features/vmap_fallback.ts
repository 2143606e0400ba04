/**
 * The boxed fallback at the Batched key: every operator without a batching rule still works under vmap.
 * A composite (CompositeImplicitAutograd) operator runs its decomposition on the batched tensors, so its parts
 * meet their own rules; any other operator runs once per sample, on plain slices, and the results are stacked
 * (PyTorch's `batchedTensorForLoopFallback`, with its performance warning once per operator).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { boxArguments, IValue, type Stack } from '../dispatch/ivalue.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { inplaceError } from './batching_rules.ts';
import { physicalOf, sizeOfLevel, unionLevels, wrapPhysical } from './vmap_batched.ts';

const BELOW_BATCHED = DispatchKeySet.fullAfter(DispatchKey.Batched);

let warningHandler: ((message: string) => void) | null = (message) => console.warn(`UserWarning: ${message}`);
const warned = new Set<string>();

/**
 * Where the fallback's performance warning goes (default `console.warn`, once per operator); `null` silences
 * it (PyTorch's `torch._C._functorch._set_vmap_fallback_warning_enabled(False)`). Setting a handler also
 * forgets which operators already warned.
 *
 * @example
 * ```ts
 * import { setVmapFallbackWarningHandler } from '../../mod.ts';
 * const seen: string[] = [];
 * setVmapFallbackWarningHandler((m) => seen.push(m));
 * ```
 */
export function setVmapFallbackWarningHandler(handler: ((message: string) => void) | null): void {
  if (handler !== null && typeof handler !== 'function') {
    throw new TypeError(`setVmapFallbackWarningHandler: expected a function or null, got ${typeof handler}`);
  }
  warningHandler = handler;
  warned.clear();
}

function warnFallback(name: string): void {
  if (warningHandler === null || warned.has(name)) return;
  warned.add(name);
  warningHandler(
    `There is a performance drop because we have not yet implemented the batching rule for ${name}. ` +
      'Please file us an issue on GitHub so that we can prioritize its implementation.',
  );
}

/** The tensors of one argument IValue (a tensor, a list of tensors, or none). */
function tensorsOf(v: IValue): Tensor[] {
  if (v.isTensor()) return [v.toTensor<Tensor>()];
  if (v.isList()) return v.toList().filter((i) => i.isTensor()).map((i) => i.toTensor<Tensor>());
  return [];
}

/** A plain slice of `x` at the batch indices `index` (one per level of `levels`). */
function sliceAt(x: Tensor, levels: readonly number[], index: readonly number[]): Tensor {
  const { t, levels: own } = physicalOf(x);
  let out = t;
  for (const level of own) out = aten('select', 'int').call(out, 0, index[levels.indexOf(level)]) as Tensor;
  return out;
}

function sliceValue(v: IValue, levels: readonly number[], index: readonly number[]): IValue {
  if (v.isTensor()) return IValue.tensor(sliceAt(v.toTensor<Tensor>(), levels, index));
  if (v.isList() && v.toList().some((i) => i.isTensor())) {
    return IValue.list(v.toList().map((i) => sliceValue(i, levels, index)));
  }
  return v;
}

/**
 * The Batched key's boxed fallback (see the module note).
 *
 * @example
 * ```ts
 * import { batchedFallback } from './vmap_fallback.ts';
 * // registered by registerBatchingRules(): new Library('_', 'IMPL', DispatchKey.Batched).fallback(batchedFallback)
 * ```
 */
export function batchedFallback(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
  if (op.hasKernelForDispatchKey(DispatchKey.CompositeImplicitAutograd)) {
    op.redispatchBoxed(ks.and(BELOW_BATCHED), stack);
    return;
  }
  runLoop(op, stack);
}

function runLoop(op: OperatorHandle, stack: Stack): void {
  const schema = op.schema!;
  const n = schema.arguments.length;
  const args = stack.splice(stack.length - n, n);
  const inPlace = schema.arguments[0]?.aliasInfo?.isWrite === true;
  const returnsAlias = schema.returns.some((r) => r.aliasInfo !== undefined);
  if (returnsAlias && !inPlace) {
    throw new RuntimeError(
      `Batching rule not implemented for ${op.name}; the fallback path doesn't work on out= or view ops.`,
    );
  }
  const returnsOk = schema.returns.every((r) =>
    r.type.kind === 'Tensor' || (r.type.kind === 'List' && r.type.elem.kind === 'Tensor')
  );
  if (!returnsOk) {
    throw new RuntimeError(`Batching rule not implemented for ${op.name}. We could not generate a fallback.`);
  }
  const levels = unionLevels(args.flatMap((v) => tensorsOf(v).map((t) => physicalOf(t).levels)));
  if (inPlace) {
    const self = args[0].toTensor<Tensor>();
    if (physicalOf(self).levels.length !== levels.length) throw inplaceError(op.name);
  }
  warnFallback(op.name);
  const sizes = levels.map(sizeOfLevel);
  const total = sizes.reduce((a, b) => a * b, 1);
  const results: IValue[][] = [];
  const index = sizes.map(() => 0);
  for (let i = 0; i < total; i++) {
    let rest = i;
    for (let d = sizes.length - 1; d >= 0; d--) {
      index[d] = rest % sizes[d];
      rest = Math.floor(rest / sizes[d]);
    }
    const sliced = args.map((v) => sliceValue(v, levels, index));
    op.callBoxed(sliced);
    results.push(sliced);
  }
  if (inPlace) {
    stack.push(args[0]);
    return;
  }
  const stackOf = (parts: Tensor[]) => {
    if (parts.length === 0) throw new RuntimeError(`vmap: ${op.name} was called with a batch of size 0`);
    const flat = aten('stack').call(parts, 0) as Tensor;
    return wrapPhysical(aten('reshape').call(flat, [...sizes, ...parts[0].shape]) as Tensor, levels);
  };
  schema.returns.forEach((r, j) => {
    if (r.type.kind === 'Tensor') {
      stack.push(IValue.tensor(stackOf(results.map((res) => res[j].toTensor<Tensor>()))));
      return;
    }
    const lists = results.map((res) => res[j].toList().map((v) => v.toTensor<Tensor>()));
    const count = lists[0]?.length ?? 0;
    if (lists.some((l) => l.length !== count)) {
      throw new RuntimeError(`vmap: ${op.name} returned lists of different lengths for different samples`);
    }
    stack.push(IValue.list(Array.from({ length: count }, (_, e) => IValue.tensor(stackOf(lists.map((l) => l[e]))))));
  });
}

/**
 * The for-loop fallback called from a batching rule that handles only some cases (an unboxed call with the
 * schema's arguments): boxes them, runs the loop and returns the result(s).
 *
 * @example
 * ```ts
 * import { forLoopFallback } from './vmap_fallback.ts';
 * // inside a rule: return forLoopFallback(aten('index_select'), [self, dim, index]);
 * ```
 */
export function forLoopFallback(op: OperatorHandle, args: readonly unknown[]): unknown {
  const schema = op.schema!;
  const stack = boxArguments(schema.arguments, args);
  runLoop(op, stack);
  const out = stack.map((v) => v.toJS());
  return schema.returns.length === 1 ? out[0] : out;
}
