/**
 * The `Library` that `mod.ts` exports: the dispatcher's `Library`, typed so that `Tensor`, `ScalarType`, `Device` and
 * `Generator` in a schema string mean the runtime's classes (Note [Schema types] in core/dispatch/schema_types.ts).
 * It is the very same class at run time; only its types differ from the dispatcher's own, whose values are `any`
 * because the dispatcher knows nothing of tensors.
 *
 * @module
 */
import type { DispatchKey } from '../dispatch/dispatch_key.ts';
import { Library as DispatchLibrary, type LibraryKind, type LibraryOptions } from '../dispatch/library.ts';
import type { SchemaValueTypes } from '../dispatch/schema_types.ts';
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Generator } from '../tensor/generator.ts';
import type { Tensor } from '../tensor/tensor.ts';

/**
 * What the runtime's schema types stand for: `Tensor` is a {@linkcode Tensor}, `ScalarType` a {@linkcode DType}
 * (or its ScalarType code), `Device` a {@linkcode Device}, `Generator` a {@linkcode Generator}.
 *
 * @example
 * ```ts
 * import type { SchemaKernelArgs } from '../dispatch/schema_types.ts';
 * import type { TensorValueTypes } from './typed_library.ts';
 * type A = SchemaKernelArgs<'ns::f(Tensor x, ScalarType? d) -> Tensor', TensorValueTypes>; // [Tensor, DType | number | null]
 * ```
 */
export interface TensorValueTypes extends SchemaValueTypes {
  /** A runtime tensor. */
  readonly Tensor: Tensor;
  /** A dtype. */
  readonly ScalarType: DType;
  /** A device. */
  readonly Device: Device;
  /** A random generator. */
  readonly Generator: Generator;
}

/**
 * A block of operator registrations (PyTorch's `torch.library.Library`) whose handles and kernels are typed from
 * their schema strings.
 *
 * @example
 * ```ts
 * import { DispatchKey, Library, tensor } from '../../mod.ts';
 * using def = new Library('myops', 'DEF');
 * const scale = def.define('myops::scale(Tensor x, float factor=2.0) -> Tensor');
 * using impls = new Library('myops', 'IMPL');
 * impls.impl(scale, (_hi, _lo, x, factor) => x.mul(factor), DispatchKey.CPU); // x: Tensor, factor: number
 * scale.call(tensor([1, 2])); // tensor([2, 4]): the default factor
 * ```
 */
export type Library = DispatchLibrary<TensorValueTypes>;

/** The constructor of {@linkcode Library}. */
export interface LibraryConstructor {
  /** Opens a block; a DEF block claims the namespace. */
  new (ns: string, kind: LibraryKind, dispatchKey?: DispatchKey | string, options?: LibraryOptions): Library;
  /** The prototype every Library shares. */
  readonly prototype: Library;
}

/**
 * A block of operator registrations (PyTorch's `torch.library.Library`) whose handles and kernels are typed from
 * their schema strings: the dispatcher's `Library` class itself.
 *
 * @example
 * ```ts
 * import { Library } from '../../mod.ts';
 * using def = new Library('myops2', 'DEF');
 * const twice = def.define('myops2::twice(int x) -> int', { impl: (_hi, _lo, x) => 2 * x });
 * twice.call(21); // 42
 * ```
 */
export const Library: LibraryConstructor = DispatchLibrary;
