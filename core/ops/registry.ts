/**
 * Registers every declared operator with the dispatcher: its schema in namespace `aten`, its Meta kernel
 * (from the declaration's `meta`), its composite or BackendSelect kernel, its ADInplaceOrView kernel when it
 * mutates an argument or returns a view, and its Autograd kernel (recording with its derivative formula, or a
 * fallthrough when it is not differentiable). Backends register their own kernels (`core/cpu`).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { fallthroughKernel, Library } from '../dispatch/library.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Device } from '../tensor/device.ts';
import { Storage } from '../tensor/storage.ts';
import { Tensor } from '../tensor/tensor.ts';
import { type OpName, OPS } from './declarations.ts';
import { DERIVATIVES, NOT_DIFFERENTIABLE, reduceGradient } from './derivatives.ts';
import { makeAutogradKernel } from '../autograd/autograd_kernel.ts';
import { setEngineOps } from '../autograd/engine_ops.ts';
import { inplaceKernel, viewKernel } from '../autograd/inplace_or_view.ts';
import { asStridedBackward } from './as_strided_backward.ts';
import type { OpDecl, TensorMeta } from './op_decl.ts';
import { backendSelectKernel } from './backend_select.ts';

/** Operator handles by declaration name (`add.Tensor`). */
export type OpHandles = { readonly [K in OpName]: OperatorHandle };

let handles: OpHandles | undefined;
const libraries: Library[] = [];

/** A new meta tensor with the given metadata (Meta kernels return these). */
export function emptyMeta(meta: TensorMeta): Tensor {
  return new Tensor({
    storage: Storage.allocate(Device.meta, 0),
    shape: meta.shape,
    strides: meta.strides,
    dtype: meta.dtype,
  });
}

function metaKernel(meta: (...args: unknown[]) => TensorMeta | readonly TensorMeta[], inPlace: boolean) {
  return (_hi: number, _lo: number, ...args: unknown[]) => {
    const m = meta(...args); // PyTorch's checks, and the result's metadata
    if (inPlace) return args[0]; // an in-place operator returns the tensor it wrote to
    return Array.isArray(m) ? m.map(emptyMeta) : emptyMeta(m as TensorMeta);
  };
}

/**
 * Defines every declared operator in the default dispatcher (idempotent) and returns their handles.
 *
 * @example
 * ```ts
 * import { registerOperators } from './registry.ts';
 * registerOperators()['add.Tensor'].name; // 'aten::add.Tensor'
 * ```
 */
export function registerOperators(dispatcher: Dispatcher = Dispatcher.singleton()): OpHandles {
  if (handles !== undefined) return handles;
  const location = 'core/ops/declarations.ts';
  const def = new Library('aten', 'FRAGMENT', undefined, { dispatcher, location });
  const impl = new Library('aten', 'IMPL', undefined, { dispatcher, location });
  libraries.push(def, impl);
  const out: Record<string, OperatorHandle> = {};
  for (const [name, decl] of Object.entries(OPS) as Array<[string, OpDecl]>) {
    const op = def.define(decl.schema);
    out[name] = op;
    const opts = { debug: `${decl.kind} kernel from ${location}` };
    switch (decl.kind) {
      case 'backend':
        impl.impl(
          name,
          metaKernel(decl.meta!, op.schema!.arguments[0]?.aliasInfo?.isWrite === true),
          DispatchKey.Meta,
          opts,
        );
        if (decl.defaultBackend !== undefined) {
          impl.impl(name, dropKeySet(decl.defaultBackend), DispatchKey.CompositeExplicitAutogradNonFunctional, {
            debug: `default backend kernel from ${location}`,
          });
        }
        break;
      case 'factory':
        impl.impl(
          name,
          metaKernel(decl.meta!, op.schema!.arguments[0]?.aliasInfo?.isWrite === true),
          DispatchKey.Meta,
          opts,
        );
        impl.impl(name, backendSelectKernel(op), DispatchKey.BackendSelect, opts);
        break;
      case 'composite-implicit':
        impl.impl(name, dropKeySet(decl.impl!), DispatchKey.CompositeImplicitAutograd, opts);
        break;
      case 'composite-explicit':
        impl.impl(name, dropKeySet(decl.impl!), DispatchKey.CompositeExplicitAutograd, opts);
        break;
    }
    // ADInplaceOrView: in-place operators count versions; view operators (one kernel for every backend,
    // returning an alias of `self`) mark their outputs as differentiable views.
    if (op.schema!.isMutable) impl.impl(name, inplaceKernel(op), DispatchKey.ADInplaceOrView, opts);
    else if (decl.kind === 'composite-explicit' && op.schema!.arguments[0]?.aliasInfo !== undefined) {
      impl.impl(name, viewKernel(op), DispatchKey.ADInplaceOrView, opts);
    }
    // Autograd is a dispatch key: operators with a derivative get a recording kernel at the Autograd alias.
    // The others (not differentiable, or composite-implicit, which differentiate through their
    // decomposition) fall through, also at AutogradMeta, which has no framework fallthrough in PyTorch.
    const derivative = DERIVATIVES[name as OpName];
    if (derivative !== undefined) {
      impl.impl(name, makeAutogradKernel(op, derivative, reduceGradient), DispatchKey.Autograd, opts);
    } else if (decl.kind !== 'composite-implicit') {
      // Every operator with its own kernels must say how it differentiates: a missing formula would silently
      // cut the graph. Factories make leaves; the rest are listed as not differentiable.
      if (decl.kind !== 'factory' && !NOT_DIFFERENTIABLE.has(name)) {
        throw new Error(`Operator aten::${name} has no derivative formula and is not listed as not differentiable`);
      }
      impl.impl(name, fallthroughKernel, DispatchKey.Autograd, opts);
    }
  }
  handles = out as OpHandles;
  setEngineOps({
    add: (a, b) => a.add(b),
    addInPlace: (into, g) => void into.add_(g),
    onesLike: (t) => handles!['ones'].call(t.shape, t.dtype, null, t.device, null) as Tensor,
    clone: (t) => handles!['clone'].call(t, 'contiguous_format') as Tensor,
    zeros: (shape, like) => handles!['zeros'].call(shape, like.dtype, null, like.device, null) as Tensor,
    asStrided: (t, size, stride, offset) => handles!['as_strided'].call(t, size, stride, offset) as Tensor,
    copyInto: (dst, src) => void handles!['copy_'].call(dst, src, false),
    sumTo: (grad, shape) => reduceGradient(grad, shape, undefined),
    convert: (t, dtype, device) => handles!['_to_copy'].call(t, dtype, null, device, null, false, null) as Tensor,
    asStridedBackward,
  });
  return handles;
}

// deno-lint-ignore no-explicit-any
function dropKeySet(fn: (...args: any[]) => unknown) {
  // Composite kernels call public operators, which dispatch afresh, so they ignore the keyset.
  // deno-lint-ignore no-explicit-any
  return (_hi: number, _lo: number, ...args: any[]) => fn(...args);
}
