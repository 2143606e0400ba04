/**
 * The ADInplaceOrView kernels (PyTorch's `VariableType`'s sibling `ADInplaceOrViewType`): in-place operators
 * bump the version counters of the tensors they write; view operators mark their outputs as differentiable
 * views of their input's base, recording how they were made (see Note [Views and their history] in
 * autograd_meta.ts). Both run whether or not anything requires grad, below autograd.
 *
 * @module
 */
import { canGenerateCode } from '../dispatch/call_stub.ts';
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

// Note [Fixed-arity ADInplaceOrView kernels]
// Every call of a view or in-place operator passes through its ADInplaceOrView kernel, whether or not anything
// requires grad, so these kernels are generated with the schema's exact parameters (no rest-argument array),
// as the autograd kernels are: `BEFORE` sees the arguments first, `AFTER` the arguments and the result.
const factories = new Map<number, (...deps: unknown[]) => unknown>();

type Hook = (out: unknown, a0: unknown, a1: unknown, a2: unknown, a3: unknown, a4: unknown) => void;
type Kernel = (hi: number, lo: number, ...args: unknown[]) => unknown;

function fixedArityKernel(op: OperatorHandle, before: Hook | undefined, after: Hook): Kernel {
  const arity = op.schema!.arguments.length;
  if (!canGenerateCode()) {
    // Note [Stubs without code generation] in core/dispatch/call_stub.ts: the same logic as a closure.
    return ((hi: number, lo: number, ...args: unknown[]) => {
      const [a0, a1, a2, a3, a4] = args;
      if (before !== undefined) before(undefined, a0, a1, a2, a3, a4);
      const out = op.redispatch(hi & BELOW_AD_INPLACE_OR_VIEW_HI, lo, ...args);
      after(out, a0, a1, a2, a3, a4);
      return out;
    }) as Kernel;
  }
  let factory = factories.get(arity);
  if (factory === undefined) {
    const params = Array.from({ length: arity }, (_, i) => `a${i}`);
    const rest = params.map((p) => `, ${p}`).join('');
    const hookArgs = Array.from({ length: 5 }, (_, i) => (i < arity ? `, a${i}` : ', undefined')).join('');
    factory = new Function(
      'OP',
      'B',
      'BEFORE',
      'AFTER',
      `return function adInplaceOrView(h, l${rest}) {
` +
        `  if (BEFORE !== undefined) BEFORE(undefined${hookArgs});
` +
        `  const out = OP.redispatch(h & B, l${rest});
` +
        `  AFTER(out${hookArgs});
` +
        `  return out;
};`,
    ) as (...deps: unknown[]) => unknown;
    factories.set(arity, factory);
  }
  return factory(op, BELOW_AD_INPLACE_OR_VIEW_HI, before, after) as Kernel;
}

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
export function inplaceKernel(op: OperatorHandle): Kernel {
  const written = op.schema!.arguments.flatMap((a, i) => (a.aliasInfo?.isWrite ? [i] : []));
  if (written.some((i) => i > 4)) throw new Error(`${op.name}: a written argument past the fifth is not supported`);
  const argAt = (i: number, a0: unknown, a1: unknown, a2: unknown, a3: unknown, a4: unknown) =>
    i === 0 ? a0 : i === 1 ? a1 : i === 2 ? a2 : i === 3 ? a3 : a4;
  return fixedArityKernel(
    op,
    (_out, a0, a1, a2, a3, a4) => {
      if (isInferenceModeEnabled()) return;
      for (let k = 0; k < written.length; k++) {
        const t = argAt(written[k], a0, a1, a2, a3, a4);
        if (t instanceof Tensor && t.isInference) throw new RuntimeError(INFERENCE_INPLACE_MESSAGE);
      }
    },
    (_out, a0, a1, a2, a3, a4) => {
      for (let k = 0; k < written.length; k++) {
        const t = argAt(written[k], a0, a1, a2, a3, a4);
        if (t instanceof Tensor && !t.isInference) t.versionCounter.version++;
      }
    },
  );
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
export function viewKernel(op: OperatorHandle): Kernel {
  const returnsViews = op.schema!.returns.length === 1 && op.schema!.returns[0].type.kind === 'List';
  return fixedArityKernel(op, undefined, (out, input) => {
    const creation = isInferenceModeEnabled()
      ? CreationMeta.InferenceMode
      : !gradMode.enabled
      ? CreationMeta.NoGradMode
      : returnsViews
      ? CreationMeta.MultiOutputNode
      : CreationMeta.Default;
    if (Array.isArray(out)) { for (const view of out) markView(view as Tensor, input as Tensor, creation); }
    else markView(out as Tensor, input as Tensor, creation);
  });
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
