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
import { fallthroughKernel, Library, splitArguments } from '../dispatch/library.ts';
import { parseSchema } from '../dispatch/schema_parser.ts';
import { KernelFunction } from '../dispatch/kernel_function.ts';
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

const LOCATION = 'core/ops/declarations.ts';
const KIND_OPTIONS: Readonly<Record<OpDecl['kind'], { readonly debug: string }>> = {
  'backend': { debug: `backend kernel from ${LOCATION}` },
  'factory': { debug: `factory kernel from ${LOCATION}` },
  'composite-implicit': { debug: `composite-implicit kernel from ${LOCATION}` },
  'composite-explicit': { debug: `composite-explicit kernel from ${LOCATION}` },
};
const DEFAULT_BACKEND = { debug: `default backend kernel from ${LOCATION}` };
/** The keys registerKernels registers at. */
const KERNEL_KEYS: readonly DispatchKey[] = Object.freeze([
  DispatchKey.Meta,
  DispatchKey.CompositeExplicitAutogradNonFunctional,
  DispatchKey.BackendSelect,
  DispatchKey.CompositeImplicitAutograd,
  DispatchKey.CompositeExplicitAutograd,
  DispatchKey.ADInplaceOrView,
  DispatchKey.Autograd,
]);

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
  const def = new Library('aten', 'FRAGMENT', undefined, { dispatcher, location: LOCATION });
  const impl = new Library('aten', 'IMPL', undefined, { dispatcher, location: LOCATION });
  libraries.push(def, impl);
  const out: Record<string, OperatorHandle> = {};
  // Note [Operators materialize on first use] (core/dispatch/dispatcher.ts): the declarations are defined
  // deferred, so nothing here parses a schema. Each operator's own kernels are deferred registrations of the
  // operator (Note [Deferred registrations]): registered as it materializes, or before anything could tell (its
  // dump, a registration for it, a reader of the whole table store). What registering them needs from the schema
  // (which argument is written to) comes from `declarationFacts`, and the kernels generated from the schema are
  // deferred kernels, built when their operator is first used.
  for (const [name, decl] of Object.entries(OPS) as Array<[string, OpDecl]>) {
    const op = def.defineDeferred(decl.schema);
    out[name] = op;
    // Every operator with its own kernels must say how it differentiates: a missing formula would silently cut
    // the graph. Factories make leaves; the rest are listed as not differentiable. Checked here, at import.
    const derivative = DERIVATIVES[name as OpName];
    if (
      derivative === undefined && decl.kind !== 'composite-implicit' && decl.kind !== 'factory' &&
      !NOT_DIFFERENTIABLE.has(name)
    ) {
      throw new Error(`Operator aten::${name} has no derivative formula and is not listed as not differentiable`);
    }
    dispatcher.deferOperatorRegistrations(op, () => registerKernels(impl, name, decl, op, derivative), KERNEL_KEYS);
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

/**
 * An operator's own kernels: Meta, its composite or BackendSelect kernel, ADInplaceOrView when it mutates an
 * argument or returns a view, and Autograd. Run as the operator's deferred registrations (see registerOperators).
 */
function registerKernels(
  impl: Library,
  name: string,
  decl: OpDecl,
  op: OperatorHandle,
  derivative: (typeof DERIVATIVES)[OpName] | undefined,
): void {
  const facts = declarationFacts(decl.schema);
  const opts = KIND_OPTIONS[decl.kind];
  switch (decl.kind) {
    case 'backend':
      impl.impl(name, metaKernel(decl.meta!, facts.firstWrites), DispatchKey.Meta, opts);
      if (decl.defaultBackend !== undefined) {
        impl.impl(
          name,
          dropKeySet(decl.defaultBackend),
          DispatchKey.CompositeExplicitAutogradNonFunctional,
          DEFAULT_BACKEND,
        );
      }
      break;
    case 'factory':
      impl.impl(name, metaKernel(decl.meta!, facts.firstWrites), DispatchKey.Meta, opts);
      impl.impl(name, KernelFunction.deferred(() => backendSelectKernel(op)), DispatchKey.BackendSelect, opts);
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
  if (facts.mutable) {
    impl.impl(name, KernelFunction.deferred(() => inplaceKernel(op)), DispatchKey.ADInplaceOrView, opts);
  } else if (decl.kind === 'composite-explicit' && facts.firstAliased) {
    impl.impl(name, KernelFunction.deferred(() => viewKernel(op)), DispatchKey.ADInplaceOrView, opts);
  }
  // Autograd is a dispatch key: operators with a derivative get a recording kernel at the Autograd alias.
  // The others (not differentiable, or composite-implicit, which differentiate through their
  // decomposition) fall through, also at AutogradMeta, which has no framework fallthrough in PyTorch.
  if (derivative !== undefined) {
    const autograd = KernelFunction.deferred(() => makeAutogradKernel(op, derivative, reduceGradient));
    impl.impl(name, autograd, DispatchKey.Autograd, opts);
  } else if (decl.kind !== 'composite-implicit') {
    impl.impl(name, fallthroughKernel, DispatchKey.Autograd, opts);
  }
}

/** What registration needs to know about a declaration's arguments (see {@linkcode declarationFacts}). */
export interface DeclarationFacts {
  /** The first argument has an alias annotation (`Tensor(a) self`, `Tensor(a!) self`). */
  readonly firstAliased: boolean;
  /** The first argument is written to (`Tensor(a!) self`). */
  readonly firstWrites: boolean;
  /** Some argument is written to (the parsed schema's `isMutable`). */
  readonly mutable: boolean;
}

/**
 * Reads, without parsing the schema, which arguments of an operator declaration carry alias annotations and which
 * are written: the top-level arguments between the first `(` and its `)`, an annotation being the parenthesis in an
 * argument's type (before any `=`) and a write its `!`. It serves the library's own declarations, whose schemas are
 * parsed only on first use; tests/dispatch/lazy_registration.test.ts checks it against the parsed schema of every
 * one.
 *
 * @example
 * ```ts
 * import { declarationFacts } from './registry.ts';
 * declarationFacts('add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)');
 * // { firstAliased: true, firstWrites: true, mutable: true }
 * ```
 */
export function declarationFacts(schemaText: string): DeclarationFacts {
  const args = splitArguments(schemaText);
  if (args === undefined) {
    // Text the splitter leaves to the parser (escapes in a default): parse it, once, at registration.
    const schema = parseSchema(schemaText);
    return {
      firstAliased: schema.arguments[0]?.aliasInfo !== undefined,
      firstWrites: schema.arguments[0]?.aliasInfo?.isWrite === true,
      mutable: schema.isMutable,
    };
  }
  return factsOf(args);
}

/** The facts of a declaration's arguments as {@linkcode splitArguments} gives them. */
function factsOf(args: readonly string[]): DeclarationFacts {
  let firstAliased = false, firstWrites = false, mutable = false;
  for (let i = 0; i < args.length; i++) {
    // An annotation is the parenthesis in the argument's type (before any default), a write its `!`.
    const arg = args[i];
    const eq = arg.indexOf('=');
    const at = arg.indexOf('(');
    if (at < 0 || (eq >= 0 && at > eq)) continue;
    const close = arg.indexOf(')', at);
    const end = close >= 0 && (eq < 0 || close < eq) ? close : at; // an unclosed annotation writes nothing
    const writes = arg.indexOf('!', at);
    const written = writes >= 0 && writes < end;
    if (i === 0) {
      firstAliased = true;
      firstWrites = written;
    }
    if (written) mutable = true;
  }
  return { firstAliased, firstWrites, mutable };
}

// deno-lint-ignore no-explicit-any
function dropKeySet(fn: (...args: any[]) => unknown) {
  // Composite kernels call public operators, which dispatch afresh, so they ignore the keyset.
  // deno-lint-ignore no-explicit-any
  return (_hi: number, _lo: number, ...args: any[]) => fn(...args);
}
