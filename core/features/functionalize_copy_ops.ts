/**
 * The `{view}_copy` operators of `functionalize(fn, { remove: 'mutationsAndViews' })` (PyTorch's `view_copy`,
 * `select_copy.int`, `permute_copy`, ...): each returns a fresh tensor with the elements its view would alias.
 *
 * Note [Copy variants on demand]
 * PyTorch declares a `_copy` twin for every view op in native_functions.yaml. Here they are defined the first
 * time `mutationsAndViews` mode meets a view op, from the view's own schema with the alias annotations
 * dropped, so the op table is unchanged unless the mode is used and a new view op needs no second declaration.
 * The kernel (CompositeExplicitAutograd, so every backend and Meta) is the view followed by `clone`; below a
 * graph capture it is one node. Its Autograd kernel differentiates through that same composition when an
 * input requires grad, and otherwise steps aside.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { IValue, type Stack } from '../dispatch/ivalue.ts';
import { boxed, Library } from '../dispatch/library.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { isGradEnabled } from '../autograd/grad_mode.ts';

const BELOW_AUTOGRAD = DispatchKeySet.fullAfter(DispatchKey.AutogradOther);
const copies = new Map<string, OperatorHandle>();
let library: Library | undefined;

/** The `_copy` schema of a view op's schema: renamed, alias annotations dropped. */
export function copySchemaText(view: OperatorHandle): string {
  const text = String(view.schema);
  const open = text.indexOf('(');
  const head = text.slice(0, open);
  const dot = head.indexOf('.');
  const name = dot < 0 ? `${head}_copy` : `${head.slice(0, dot)}_copy${head.slice(dot)}`;
  return name + text.slice(open).replace(/Tensor\([^)]*\)/g, 'Tensor');
}

/** Runs the view op on the arguments and copies every result (the `_copy` op's computation). */
function viewThenClone(view: OperatorHandle, args: Stack): IValue[] {
  const stack = args.slice();
  // A copy needs no viewable layout: `view_copy` reshapes (the values functionalize replays may be laid out
  // differently from the eager tensors they stand for).
  const name = view.schema!.name;
  (name === 'aten::view' || name === 'aten::_unsafe_view' ? aten('reshape') : view).callBoxed(stack);
  const copy = (v: IValue): IValue =>
    v.isTensor()
      ? IValue.tensor(aten('clone').call(v.toTensor<Tensor>(), null) as Tensor)
      : v.isList()
      ? IValue.list(v.toList().map(copy))
      : v;
  return stack.map(copy);
}

function requiresGrad(v: IValue): boolean {
  if (v.isTensor()) return (v.toTensor<Tensor>() as unknown as { requiresGrad: boolean }).requiresGrad === true;
  return v.isList() && v.toList().some(requiresGrad);
}

/**
 * The `_copy` twin of a view operator, defined on first use (Note [Copy variants on demand]).
 *
 * @example
 * ```ts
 * import { copyVariantOf } from './functionalize_copy_ops.ts';
 * import { aten } from '../ops/aten_call.ts';
 * import { randn } from '../../mod.ts';
 * copyVariantOf(aten('t')).call(randn(2, 3)); // aten::t_copy: a new [3, 2] tensor
 * ```
 */
export function copyVariantOf(view: OperatorHandle): OperatorHandle {
  const key = String(view.schema!.operatorName);
  const known = copies.get(key);
  if (known !== undefined) return known;
  const schemaText = copySchemaText(view);
  const name = schemaText.slice(0, schemaText.indexOf('('));
  const dot = name.indexOf('.');
  const existing = Dispatcher.singleton().findSchema(
    dot < 0 ? name : name.slice(0, dot),
    dot < 0 ? '' : name.slice(dot + 1),
  );
  if (existing !== undefined) {
    copies.set(key, existing);
    return existing;
  }
  library ??= new Library('aten', 'FRAGMENT', undefined, { location: 'core/features/functionalize_copy_ops.ts' });
  const op = library.define(schemaText) as unknown as OperatorHandle;
  const n = view.schema!.arguments.length;
  const qualified = name.slice(name.indexOf('::') + 2);
  library.impl(
    qualified,
    boxed((_op, _ks, stack) => {
      const args = stack.splice(stack.length - n, n);
      stack.push(...viewThenClone(view, args));
    }),
    DispatchKey.CompositeExplicitAutograd,
  );
  library.impl(
    qualified,
    boxed((self, ks, stack) => {
      if (isGradEnabled() && stack.slice(stack.length - n).some(requiresGrad)) {
        const args = stack.splice(stack.length - n, n);
        stack.push(...viewThenClone(view, args));
        return;
      }
      self.redispatchBoxed(ks.and(BELOW_AUTOGRAD), stack);
    }),
    DispatchKey.Autograd,
  );
  copies.set(key, op);
  return op;
}
