/**
 * CPU kernels of the factory operators.
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { getDefaultDtype } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { type FACTORY_OPS, factoryMeta, fullMeta } from '../ops/decl_factories.ts';
import { dataPtr, emptyCpu } from './iterator.ts';
import { checkStatus, cpuRuntime } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** Fills a contiguous CPU tensor with a value. */
export function fillCpu(t: Tensor, value: number | boolean): Tensor {
  if (t.numel === 0) return t;
  const v = typeof value === 'boolean' ? (value ? 1 : 0) : value;
  const status = cpuRuntime().kernels.fill_contig(t.dtype.scalarType, dataPtr(t), v, t.numel);
  checkStatus(status, 'fill_', t.dtype.scalarType);
  return t;
}

type FactoryArgs = [readonly number[], DType | null, unknown, Device | null, unknown];

const filled = (value: number) =>
  ((_hi: number, _lo: number, ...[size, dtype]: FactoryArgs) =>
    fillCpu(emptyCpu(factoryMeta(size, dtype, null, null).shape, dtype ?? getDefaultDtype()), value)) as Kernel;

/** CPU kernels of the factory operators. */
export const CPU_FACTORY_KERNELS: { readonly [K in keyof typeof FACTORY_OPS]: Kernel } = {
  'empty.memory_format': ((_hi: number, _lo: number, ...[size, dtype, layout]: FactoryArgs) => {
    const meta = factoryMeta(size, dtype, layout as null, null);
    return emptyCpu(meta.shape, meta.dtype);
  }) as Kernel,
  'zeros': filled(0),
  'ones': filled(1),
  'full':
    ((_hi: number, _lo: number, size: readonly number[], fill: number | boolean, dtype: DType | null, layout: null) => {
      const meta = fullMeta(size, fill, dtype, layout);
      return fillCpu(emptyCpu(meta.shape, meta.dtype), fill);
    }) as Kernel,
};
