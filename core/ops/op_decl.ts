/**
 * The shape of an operator declaration: one entry per operator overload, in the spirit of PyTorch's
 * `native_functions.yaml`. From the table come the dispatcher registrations (`registry.ts`), the Meta
 * kernels, and the typed functional API and Tensor methods (`codegen.ts` writes them).
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';

/** Shape and dtype of one output (what a Meta kernel produces and a backend allocates). */
export interface TensorMeta {
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** The output's strides when it is not contiguous (elementwise outputs follow their inputs' layout). */
  readonly strides?: readonly number[];
}

/**
 * Output metadata from the operator's arguments (the schema's arguments, in order). Runs before any data is
 * touched, so it is also where argument checks with PyTorch's messages belong.
 */
// deno-lint-ignore no-explicit-any
export type MetaFn = (...args: any[]) => TensorMeta | readonly TensorMeta[];

/** A kernel written without the keyset words (composite decompositions and views call public ops). */
// deno-lint-ignore no-explicit-any
export type OpImpl = (...args: any[]) => any;

/** How an operator is implemented. */
export type OpKind =
  /** Backend kernels (CPU, WebGPU) plus a Meta kernel made from `meta`. */
  | 'backend'
  /** A decomposition into other operators, registered at CompositeImplicitAutograd. */
  | 'composite-implicit'
  /** One kernel for every backend, registered at CompositeExplicitAutograd (views, metadata ops). */
  | 'composite-explicit'
  /** A factory: a BackendSelect kernel picks the backend from the `device` argument. */
  | 'factory';

/** One operator overload. */
export interface OpDecl {
  /** PyTorch schema without the namespace (`aten` is added): `add.Tensor(Tensor self, ...) -> Tensor`. */
  readonly schema: string;
  /** How it is implemented. */
  readonly kind: OpKind;
  /** Output metadata (required for `backend` and `factory` ops). */
  readonly meta?: MetaFn;
  /** The implementation of a composite op. */
  readonly impl?: OpImpl;
  /**
   * For a backend op: a kernel for every backend without its own (and for calls with no tensor argument),
   * registered at CompositeExplicitAutogradNonFunctional as PyTorch's structured ops register their default
   * backend kernel (core/ops/default_backend.ts).
   */
  readonly defaultBackend?: OpImpl;
  /** Name in the functional API (default: the camelCased base name); `false` for none. */
  readonly function?: string | false;
  /** Name of the Tensor method (default: none; `true` means the function name). */
  readonly method?: string | boolean;
  /**
   * The Python-binding signature (a schema) where PyTorch binds the overload differently from its schema,
   * as `Tensor.to(device=None, dtype=None, ...)` binds `to.dtype_layout`; its arguments name schema arguments.
   */
  readonly python?: string;
  /** One-line description for the generated JSDoc. */
  readonly doc: string;
}
