/**
 * Declarations of factory operators. They have no tensor arguments: the BackendSelect kernel routes them
 * by their `device` argument (seeds' exercise 7).
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { bool, getDefaultDtype, int64 } from '../tensor/dtype.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';

const TENSOR_OPTIONS = 'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None';

/** Validates a size argument (PyTorch's `check_size_nonnegative`). */
export function checkSize(size: readonly number[]): readonly number[] {
  for (const s of size) {
    if (!Number.isInteger(s) || s < 0) {
      throw new Error(`Trying to create tensor with negative dimension ${s}: [${size.join(', ')}]`);
    }
  }
  return size;
}

/** Checks the layout option (only strided tensors exist). */
export function checkLayout(layout: number | string | null): void {
  if (layout !== null && layout !== 0 && layout !== 'strided') {
    throw new Error(`Switchyard supports only the strided layout, got ${layout}`);
  }
}

/** Meta function of `empty`, `zeros`, `ones`. */
export const factoryMeta = (
  size: readonly number[],
  dtype: DType | null,
  layout: number | string | null,
  _device: Device | null,
): TensorMeta => {
  checkLayout(layout);
  return { shape: checkSize(size), dtype: dtype ?? getDefaultDtype() };
};

/** Meta function of `full`: PyTorch infers the dtype from the fill value (bool, int64, default float). */
export function fullMeta(
  size: readonly number[],
  fill: number | boolean,
  dtype: DType | null,
  layout: number | string | null,
): TensorMeta {
  checkLayout(layout);
  const inferred = dtype ?? (typeof fill === 'boolean' ? bool : Number.isInteger(fill) ? int64 : getDefaultDtype());
  return { shape: checkSize(size), dtype: inferred };
}

/** A factory declaration. */
export interface FactoryDecl extends OpDecl {
  readonly kind: 'factory';
  readonly meta: MetaFn;
}

function factory(schema: string, meta: MetaFn, doc: string): FactoryDecl {
  return { schema, kind: 'factory', meta, doc };
}

/** Names of the factory operators. */
export type FactoryOpName =
  | 'empty.memory_format'
  | 'zeros'
  | 'ones'
  | 'full';

/** Factory declarations. */
export const FACTORY_OPS: { readonly [K in FactoryOpName]: FactoryDecl } = {
  'empty.memory_format': factory(
    `empty.memory_format(SymInt[] size, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    factoryMeta,
    'A tensor with uninitialised data.',
  ),
  'zeros': factory(`zeros(SymInt[] size, *, ${TENSOR_OPTIONS}) -> Tensor`, factoryMeta, 'A tensor filled with 0.'),
  'ones': factory(`ones(SymInt[] size, *, ${TENSOR_OPTIONS}) -> Tensor`, factoryMeta, 'A tensor filled with 1.'),
  'full': factory(
    `full(SymInt[] size, Scalar fill_value, *, ${TENSOR_OPTIONS}) -> Tensor`,
    fullMeta,
    'A tensor filled with `fill_value` (dtype inferred from it when not given).',
  ),
};
