/**
 * The boxed kernel at the Functionalize key (PyTorch's generated RegisterFunctionalization kernels and its
 * `functionalizeFallback` in one): every operator on a functional tensor lands here, below autograd.
 *
 * - An in-place op (an argument written, `Tensor(a!)`: every `foo_` overload, and `out=` variants) runs its
 *   functional variant (`foo`, or the out-of-place forms of `copy_`, `zero_`, `fill_`, `uniform_`, `normal_`)
 *   on the synced values, and the result becomes the written tensor's new value, logged to its storage (Note
 *   [Functional storage and the update log] in `functionalize_tensor.ts`). In-place ops without a functional
 *   variant are refused with PyTorch's error.
 * - A view op (`Tensor(a)` returns) runs on the value (or its `_copy` twin in `mutationsAndViews` mode) and
 *   its outputs are functional tensors of the same storage, one view step longer.
 * - Any other op is the fallback: unwrap (syncing first), call, wrap the outputs as new bases.
 *
 * Ops run on the unwrapped values through a full `call`, so the dispatch below sees them as ordinary calls:
 * autograd on the values, a graph capture mode, an outer vmap or functionalize.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { IValue, type Stack } from '../dispatch/ivalue.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { canCast } from '../tensor/promotion.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { viewGeometry } from '../ops/view_geometry.ts';
import { copyVariantOf } from './functionalize_copy_ops.ts';
import {
  adopt,
  commitFunctionalUpdate,
  FunctionalTensor,
  type RemoveMode,
  runAsParentOf,
  runAtLevel,
  runningLevel,
  syncFunctional,
} from './functionalize_tensor.ts';
import { callBoxedValues, findOperator, overlapError, viewMetaFor } from './functionalize_views.ts';

const BELOW_FUNCTIONALIZE = DispatchKeySet.fullAfter(DispatchKey.Functionalize);
const BELOW_FUNCTIONALIZE_NO_PYTHON = BELOW_FUNCTIONALIZE.remove(DispatchKey.Python);

const modes = new Map<number, RemoveMode>();

/** Records the remove mode of a functionalize level while it runs. */
export function setLevelMode(level: number, mode: RemoveMode | undefined): void {
  if (mode === undefined) modes.delete(level);
  else modes.set(level, mode);
}

function highestLevel(args: readonly IValue[]): number {
  let level = 0;
  const visit = (v: IValue): void => {
    if (v.isTensor()) {
      const t = v.toTensor<Tensor>();
      if (t instanceof FunctionalTensor && t.level > level) level = t.level;
    } else if (v.isList()) v.toList().forEach(visit);
  };
  args.forEach(visit);
  return level;
}

/** `v` with the functional tensors of `level` replaced by their synced values. */
function unwrapValue(v: IValue, level: number): IValue {
  if (v.isTensor()) {
    const t = v.toTensor<Tensor>();
    if (!(t instanceof FunctionalTensor) || t.level !== level) return v;
    syncFunctional(t);
    return IValue.tensor(t.value);
  }
  if (v.isList()) return IValue.list(v.toList().map((e) => unwrapValue(e, level)));
  return v;
}

/** `v` with every tensor wrapped as a new functional base of `level`. */
function wrapValue(v: IValue, level: number): IValue {
  if (v.isTensor()) return IValue.tensor(new FunctionalTensor(adopt(v.toTensor<Tensor>(), level), level));
  if (v.isList()) return IValue.list(v.toList().map((e) => wrapValue(e, level)));
  return v;
}

const NON_FUNCTIONAL_MESSAGE = 'mutating a non-functional tensor with a functional tensor is not allowed. Please ' +
  'ensure that all of your inputs are wrapped inside of a functionalize() call.';

function noFunctionalVariant(op: OperatorHandle): RuntimeError {
  return new RuntimeError(
    `Found a custom (non-ATen) operator that either mutates or its inputs: ${
      op.name.slice(op.name.indexOf('::') + 2)
    }` +
      `. Getting these operators to work with functionalization requires some extra work. For mutable ` +
      'ops you need to register a corresponding out-of-place variant of the op, and you also need to register a ' +
      'Functionalization kernel that performs some boilerplate, telling functionalization to map from the mutable ' +
      'op to the out-of-place op.',
  );
}

type FunctionalForm = (args: readonly unknown[], mode: RemoveMode) => Tensor;

// Out-of-place forms of the in-place ops whose `foo` twin this runtime does not declare (PyTorch has `copy`,
// `zero`, `fill.Scalar`, `uniform`, `normal_functional`).
const FUNCTIONAL_FORMS: Readonly<Record<string, FunctionalForm>> = {
  'aten::copy_': ([self, src], mode) => {
    const s = self as Tensor;
    const converted = aten('_to_copy').call(src, s.dtype, null, s.device, null, false, null) as Tensor;
    if (converted.shape.length === s.shape.length && converted.shape.every((d, i) => d === s.shape[i])) {
      return converted;
    }
    if (mode === 'mutationsAndViews') return copyVariantOf(aten('expand')).call(converted, s.shape, false) as Tensor;
    return aten('clone').call(aten('expand').call(converted, s.shape, false), null) as Tensor;
  },
  'aten::zero_': ([self]) => aten('zeros_like').call(self, null, null, null, null, null) as Tensor,
  'aten::fill_.Scalar': ([self, value]) => aten('full_like').call(self, value, null, null, null, null, null) as Tensor,
  'aten::uniform_': ([self, from, to, generator]) => {
    const s = self as Tensor;
    const r = aten('rand', 'generator').call(s.shape, generator, s.dtype, null, s.device, null) as Tensor;
    return aten('add', 'Scalar').call(
      aten('mul', 'Scalar').call(r, (to as number) - (from as number)),
      from,
      1,
    ) as Tensor;
  },
  'aten::normal_': ([self, mean, std, generator]) => {
    const s = self as Tensor;
    const r = aten('randn', 'generator').call(s.shape, generator, s.dtype, null, s.device, null) as Tensor;
    return aten('add', 'Scalar').call(aten('mul', 'Scalar').call(r, std), mean, 1) as Tensor;
  },
};

/**
 * The out-of-place computation of an in-place op, on unwrapped arguments; its result(s), one per written
 * argument. `foo_.overload` runs `foo.overload` on the same arguments; `foo.out` (`foo.bar_out`) runs `foo`
 * (`foo.bar`) on the arguments that are not written.
 */
function functionalResults(op: OperatorHandle, args: Stack, written: readonly number[], mode: RemoveMode): unknown[] {
  const overload = op.schema!.overloadName;
  const form = FUNCTIONAL_FORMS[op.name];
  if (form !== undefined) return [form(args.map((v) => v.toJS()), mode)];
  const name = op.schema!.name;
  let functional: OperatorHandle | undefined;
  let inputs = args;
  if (name.endsWith('_')) {
    functional = findOperator(name.slice(0, -1), overload);
  } else if (overload === 'out' || overload.endsWith('_out')) {
    functional = findOperator(name, overload === 'out' ? '' : overload.slice(0, -4));
    inputs = args.filter((_, i) => !written.includes(i));
  }
  if (functional === undefined || functional.schema!.arguments.length !== inputs.length) throw noFunctionalVariant(op);
  const results = callBoxedValues(functional, inputs.slice());
  return results.length === 1 && Array.isArray(results[0]) ? results[0] : results;
}

const shapeText = (s: readonly number[]) => `[${s.join(', ')}]`;

function inPlace(
  op: OperatorHandle,
  args: Stack,
  written: readonly number[],
  level: number,
  mode: RemoveMode,
): IValue[] {
  const targets = written.map((i) => {
    const v = args[i];
    const t = v.isTensor() ? v.toTensor<Tensor>() : undefined;
    if (!(t instanceof FunctionalTensor) || t.level !== level) throw new RuntimeError(NON_FUNCTIONAL_MESSAGE);
    const overlaps = t.viewMetas.some((m) => m.overlapping) ||
      t.shape.some((size, d) => size > 1 && t.stride()[d] === 0);
    if (overlaps) throw overlapError();
    return t;
  });
  const results = functionalResults(op, args.map((v) => unwrapValue(v, level)), written, mode);
  targets.forEach((t, j) => {
    let value = results[j] as Tensor;
    if (value.shape.length !== t.shape.length || value.shape.some((d, i) => d !== t.shape[i])) {
      throw new RuntimeError(
        `output with shape ${shapeText(t.shape)} doesn't match the broadcast shape ${shapeText(value.shape)}`,
      );
    }
    if (value.dtype !== t.dtype) {
      if (!canCast(value.dtype, t.dtype)) {
        throw new RuntimeError(
          `result type ${value.dtype.scalarTypeName} can't be cast to the desired output type ${t.dtype.scalarTypeName}`,
        );
      }
      value = aten('_to_copy').call(value, t.dtype, null, null, null, false, null) as Tensor;
    }
    commitFunctionalUpdate(t, value);
  });
  // In-place ops return the tensors they wrote (`Tensor(a!)`), as eager does.
  return op.schema!.returns.map((r, j) => {
    const k = r.aliasInfo === undefined ? -1 : written.findIndex((i) => {
      const set = op.schema!.arguments[i].aliasInfo!.beforeSets[0];
      return r.aliasInfo!.beforeSets.includes(set);
    });
    return IValue.tensor(targets[k >= 0 ? k : Math.min(j, targets.length - 1)]);
  });
}

function view(op: OperatorHandle, args: Stack, level: number, mode: RemoveMode): IValue[] {
  const self = args[0].toTensor<FunctionalTensor>();
  syncFunctional(self);
  const rest = args.slice(1).map((v) => unwrapValue(v, level));
  // `view` checks the layout eager mode would have (the wrapper's), then reshapes the value, whose layout may
  // differ once its base was rebuilt out of place.
  const base = op.schema!.name;
  const isPlainView = base === 'aten::view' || base === 'aten::_unsafe_view';
  if (isPlainView && base === 'aten::view') {
    viewGeometry({ shape: self.shape, strides: self.stride(), offset: 0 }, rest[0].toJS() as number[]);
  }
  const run = mode === 'mutationsAndViews' ? copyVariantOf(op) : isPlainView ? aten('reshape') : op;
  const out = callBoxedValues(run, [IValue.tensor(self.value), ...rest]);
  const make = (value: Tensor, index: number) =>
    new FunctionalTensor(
      adopt(value, level),
      level,
      self.functionalStorage,
      [...self.viewMetas, viewMetaFor(op, rest, index, mode)],
      self.versionCounter,
    );
  return out.map((r) =>
    Array.isArray(r)
      ? IValue.list((r as Tensor[]).map((t, i) => IValue.tensor(make(t, i))))
      : IValue.tensor(make(r as Tensor, -1))
  );
}

/**
 * The Functionalize key's boxed kernel (see the module note).
 *
 * @example
 * ```ts
 * import { functionalizeKernel } from './functionalize_kernel.ts';
 * // registered by registerFunctionalize(): new Library('_', 'IMPL', DispatchKey.Functionalize).fallback(functionalizeKernel)
 * ```
 */
export function functionalizeKernel(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
  const schema = op.schema!;
  const n = schema.arguments.length;
  const level = highestLevel(stack.slice(stack.length - n));
  if (level === 0) {
    plainArguments(op, ks, stack);
    return;
  }
  if (op.hasKernelForDispatchKey(DispatchKey.CompositeImplicitAutograd)) {
    // A composite reached with autograd excluded: its parts come back here one by one.
    op.redispatchBoxed(ks.and(BELOW_FUNCTIONALIZE_NO_PYTHON), stack);
    return;
  }
  runAsParentOf(level, () => functionalizeCall(op, stack, n, level));
}

// Factories of uninitialized memory stay plain: their callers (`tensor()`, `fromArray`) fill the bytes directly.
const UNINITIALIZED = new Set(['aten::empty', 'aten::empty_like', 'aten::empty_strided']);

/**
 * An op without functional arguments, reached through the include set while functionalized code runs (Note
 * [Fresh tensors and the running level]): in-place and view ops on plain tensors run as they are (as in
 * PyTorch); any other op runs below and its outputs become functional tensors of the running level.
 */
function plainArguments(op: OperatorHandle, ks: DispatchKeySet, stack: Stack): void {
  const schema = op.schema!;
  const level = runningLevel();
  const below = ks.and(BELOW_FUNCTIONALIZE);
  if (
    level === 0 || schema.isMutable || schema.returns.some((r) => r.aliasInfo !== undefined) ||
    UNINITIALIZED.has(schema.name)
  ) {
    op.redispatchBoxed(below, stack);
    return;
  }
  const first = stack.length - schema.arguments.length;
  runAtLevel(0, () => op.redispatchBoxed(below, stack));
  for (let i = first; i < stack.length; i++) stack[i] = wrapValue(stack[i], level);
}

function functionalizeCall(op: OperatorHandle, stack: Stack, n: number, level: number): void {
  const schema = op.schema!;
  const mode = modes.get(level) ?? 'mutations';
  const args = stack.splice(stack.length - n, n);
  const written = schema.arguments.flatMap((a, i) => (a.aliasInfo?.isWrite === true ? [i] : []));
  if (written.length > 0) {
    stack.push(...inPlace(op, args, written, level, mode));
    return;
  }
  const self = args[0]?.isTensor() ? args[0].toTensor<Tensor>() : undefined;
  const isView = schema.returns.some((r) => r.aliasInfo !== undefined);
  if (isView && self instanceof FunctionalTensor && self.level === level) {
    stack.push(...view(op, args, level, mode));
    return;
  }
  const unwrapped = args.map((v) => unwrapValue(v, level));
  op.callBoxed(unwrapped);
  stack.push(...unwrapped.map((v) => wrapValue(v, level)));
}
