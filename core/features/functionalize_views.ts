/**
 * View steps of `functionalize` (PyTorch's ViewMeta and FunctionalInverses): how a view is made again from a
 * new base (`forward`), and how a new value of the view is written back into its base without writing anything
 * in place (`reverse`).
 *
 * Note [View inverses]
 * Views that keep every element and only reorder or regroup them (`view`, `_unsafe_view`, `unsqueeze`,
 * `squeeze`, `permute`, `transpose`, `t`) are inverted by the opposite reshape or permutation. Every other view
 * (`select`, `slice`, `narrow`, `diagonal`, `as_strided`, the parts of `split`/`unbind`/`chunk`, and any view op
 * a later declaration adds) is inverted by one generic scatter built from out-of-place ops this runtime has:
 * the same view step applied to `arange(base.numel())` tells which base element each view element is; a
 * `scatter_add` of `1..m` over those indices gives, for every base element, one plus the position of the view
 * element that covers it (0: not covered); `index_select` gathers the new values and `where` keeps the base
 * elsewhere. PyTorch uses one `*_scatter` op per view instead; the result is the same.
 * `expand` views may cover an element more than once: writing through them is refused (as eager does when
 * the written tensor itself overlaps).
 *
 * @module
 */
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { IValue } from '../dispatch/ivalue.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { int64 } from '../tensor/dtype.ts';
import { numelOf } from '../tensor/shape.ts';
import { aten } from '../ops/aten_call.ts';
import type { RemoveMode, ViewMeta } from './functionalize_tensor.ts';
import { copyVariantOf } from './functionalize_copy_ops.ts';

/** Calls `op` boxed on IValues and returns its results as JS values. */
export function callBoxedValues(op: OperatorHandle, stack: IValue[]): unknown[] {
  op.callBoxed(stack);
  return stack.map((v) => v.toJS());
}

const SHAPE_VIEWS = new Set(['aten::view', 'aten::_unsafe_view', 'aten::unsqueeze', 'aten::squeeze']);

/** `x` reshaped to `shape`: a reshape, or a copying view in `mutationsAndViews` mode. */
function reshapeTo(x: Tensor, shape: readonly number[], mode: RemoveMode): Tensor {
  if (mode === 'mutationsAndViews') return copyVariantOf(aten('view')).call(x, shape) as Tensor;
  return aten('reshape').call(x, shape) as Tensor;
}

function permuteBy(x: Tensor, dims: readonly number[], mode: RemoveMode): Tensor {
  const op = mode === 'mutationsAndViews' ? copyVariantOf(aten('permute')) : aten('permute');
  return op.call(x, dims) as Tensor;
}

/**
 * The view step of `op` applied to its first argument with the other arguments `rest` (boxed, as the op got
 * them), taking output `outIndex` of an op that returns a list.
 *
 * @example
 * ```ts
 * import { viewMetaFor } from './functionalize_views.ts';
 * // inside the Functionalize kernel: viewMetaFor(aten('select', 'int'), [IValue.int(0), IValue.int(1)], -1, 'mutations')
 * ```
 */
export function viewMetaFor(op: OperatorHandle, rest: readonly IValue[], outIndex: number, mode: RemoveMode): ViewMeta {
  const name = op.name;
  const base = op.schema!.name;
  const run = mode === 'mutationsAndViews' ? copyVariantOf(op) : replayOp(op);
  const forward = (base: Tensor): Tensor => {
    const out = callBoxedValues(run, [IValue.tensor(base), ...rest])[0];
    return (outIndex < 0 ? out : (out as Tensor[])[outIndex]) as Tensor;
  };
  const args = rest.map((v) => v.toJS());
  let overlapping = false;
  let reverse: (base: Tensor, view: Tensor) => Tensor;
  if (SHAPE_VIEWS.has(base)) {
    reverse = (base, view) => reshapeTo(view, base.shape, mode);
  } else if (base === 'aten::permute') {
    const raw = args[0] as number[];
    const dims = raw.map((d) => (d < 0 ? d + raw.length : d));
    const inverse = dims.map((_, i) => dims.indexOf(i));
    reverse = (_base, view) => permuteBy(view, inverse, mode);
  } else if (base === 'aten::transpose' || base === 'aten::t') {
    reverse = (_base, view) =>
      (run.schema!.arguments.length === 1
        ? run.call(view)
        : callBoxedValues(run, [IValue.tensor(view), ...rest])[0]) as Tensor;
  } else {
    overlapping = base === 'aten::expand';
    reverse = (base, view) => scatterInto(base, view, forward, mode);
  }
  return { name, forward, reverse, overlapping };
}

// `view` on a regenerated value whose layout changed (a base rebuilt out of place) may not be viewable any
// more; a reshape makes the same elements either way.
function replayOp(op: OperatorHandle): OperatorHandle {
  const base = op.schema!.name;
  return base === 'aten::view' || base === 'aten::_unsafe_view' ? aten('reshape') : op;
}

/** `base` with the elements the view step `forward` reaches replaced by `view` (Note [View inverses]). */
function scatterInto(base: Tensor, view: Tensor, forward: (b: Tensor) => Tensor, mode: RemoveMode): Tensor {
  const n = numelOf(base.shape);
  const m = numelOf(view.shape);
  if (m === 0) return base;
  const device = base.device;
  const positions = reshapeTo(aten('arange').call(n, int64, null, device, null) as Tensor, base.shape, mode);
  const index = reshapeTo(forward(positions), [m], mode);
  const zeros = aten('zeros').call([n], int64, null, device, null) as Tensor;
  const ordinals = aten('arange', 'start').call(1, m + 1, int64, null, device, null) as Tensor;
  const cover = aten('scatter_add').call(zeros, 0, index, ordinals) as Tensor;
  const source = aten('clamp_min').call(aten('sub', 'Scalar').call(cover, 1, 1), 0) as Tensor;
  const values = aten('index_select').call(reshapeTo(view, [m], mode), 0, source) as Tensor;
  const covered = aten('gt', 'Scalar').call(cover, 0) as Tensor;
  const merged = aten('where', 'self').call(covered, values, reshapeTo(base, [n], mode)) as Tensor;
  return reshapeTo(merged, base.shape, mode);
}

/** The error of an in-place write whose target covers an element of its base more than once. */
export function overlapError(): RuntimeError {
  return new RuntimeError(
    'unsupported operation: more than one element of the written-to tensor refers to a single memory location. ' +
      'Please clone() the tensor before performing the operation.',
  );
}

/** Whether a dispatcher operator exists (used to find functional variants). */
export function findOperator(name: string, overload: string): OperatorHandle | undefined {
  return Dispatcher.singleton().findSchema(name, overload);
}
