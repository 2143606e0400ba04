/**
 * The ADInplaceOrView kernels (PyTorch's `VariableType`'s sibling `ADInplaceOrViewType`): in-place operators
 * bump the version counters of the tensors they write; view operators mark their outputs as differentiable
 * views of their input's base, recording how they were made (see Note [Views and their history] in
 * autograd_meta.ts). Both run whether or not anything requires grad, below autograd.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { isInferenceModeEnabled, Tensor } from '../tensor/tensor.ts';
import { CreationMeta, propagateCreationMeta, ViewAutogradState } from './autograd_meta.ts';
import { gradMode } from './grad_mode.ts';

const BELOW_AD_INPLACE_OR_VIEW_HI = DispatchKeySet.fullAfter(DispatchKey.ADInplaceOrView).hi;

const INFERENCE_INPLACE_MESSAGE = 'Inplace update to inference tensor outside InferenceMode is not allowed.' +
  'You can make a clone to get a normal tensor before doing inplace update.' +
  'See https://github.com/pytorch/rfcs/pull/17 for more details.';

/**
 * The ADInplaceOrView kernel of an in-place operator: after the kernels below it ran, bump the version counter
 * of every argument the schema marks as written (`Tensor(a!)`), as PyTorch's ADInplaceOrView kernels do.
 * Autograd compares versions to detect in-place changes to saved tensors. An inference tensor has no version
 * counter: outside inference mode it may not be changed in place (refused before anything is written).
 *
 * @example
 * ```ts
 * // registry.ts: impl.impl(name, inplaceKernel(op), DispatchKey.ADInplaceOrView)
 * ```
 */
export function inplaceKernel(op: OperatorHandle) {
  const written = op.schema!.arguments.flatMap((a, i) => (a.aliasInfo?.isWrite ? [i] : []));
  return (hi: number, lo: number, ...args: unknown[]): unknown => {
    const inInferenceMode = isInferenceModeEnabled();
    if (!inInferenceMode) {
      for (const i of written) {
        const t = args[i];
        if (t instanceof Tensor && t.isInference) throw new RuntimeError(INFERENCE_INPLACE_MESSAGE);
      }
    }
    const result = op.redispatch(hi & BELOW_AD_INPLACE_OR_VIEW_HI, lo, ...args);
    for (const i of written) {
      const t = args[i];
      if (t instanceof Tensor && !t.isInference) t.versionCounter.version++;
    }
    return result;
  };
}

/**
 * The ADInplaceOrView kernel of a view operator (`Tensor(a) self -> Tensor(a)`): its outputs become
 * differentiable views of the input's base, made normally, under no_grad, in inference mode, or (for
 * operators returning several views: split, unbind) as outputs of a multi-output node.
 *
 * @example
 * ```ts
 * // registry.ts: impl.impl('narrow', viewKernel(op), DispatchKey.ADInplaceOrView)
 * ```
 */
export function viewKernel(op: OperatorHandle) {
  const returnsViews = op.schema!.returns.length === 1 && op.schema!.returns[0].type.kind === 'List';
  return (hi: number, lo: number, ...args: unknown[]): unknown => {
    const out = op.redispatch(hi & BELOW_AD_INPLACE_OR_VIEW_HI, lo, ...args);
    const input = args[0] as Tensor;
    const creation = isInferenceModeEnabled()
      ? CreationMeta.InferenceMode
      : !gradMode.enabled
      ? CreationMeta.NoGradMode
      : returnsViews
      ? CreationMeta.MultiOutputNode
      : CreationMeta.Default;
    if (Array.isArray(out)) { for (const view of out) markView(view as Tensor, input, creation); }
    else markView(out as Tensor, input, creation);
    return out;
  };
}

/**
 * Makes `view` a differentiable view of `input`'s base.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CreationMeta } from './autograd_meta.ts';
 * import { markView } from './inplace_or_view.ts';
 * const x = tensor([1, 2], { dtype: 'float32' });
 * markView(x.detach(), x, CreationMeta.Default); // as a view operator would
 * ```
 */
export function markView(view: Tensor, input: Tensor, creation: CreationMeta): void {
  if (view === input || view.isInference || view.autograd !== undefined) return;
  const inputState = input.autograd;
  view.autograd = inputState instanceof ViewAutogradState
    ? new ViewAutogradState(view, inputState.base, propagateCreationMeta(inputState.creationMeta, creation))
    : new ViewAutogradState(view, input, creation);
}
