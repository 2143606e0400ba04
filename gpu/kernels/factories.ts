/**
 * WebGPU kernels of the factory operators: `empty`, fills, `eye` (a fill of the diagonal view), and `arange` /
 * `linspace` computed per element as PyTorch's CUDA kernels compute them (`start + step * i` in the compute
 * kind; linspace counting the second half back from `end`), which can differ from the CPU's values in the last
 * bit of a float.
 *
 * @module
 */
import type { DType } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import {
  arangePlan,
  checkedConvert,
  eyeMeta,
  type FACTORY_OPS,
  factoryMeta,
  fullMeta,
  linspaceMeta,
} from '../../core/ops/decl_factories.ts';
import { aliasWithGeometry } from '../../core/ops/view_ops.ts';
import { kindOf } from '../wgsl/dtypes.ts';
import { emptyGpu } from '../tensors.ts';
import { runElementwise } from './elementwise_engine.ts';
import { fill } from './elementwise.ts';
import { scalarOperand } from './scalars.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;
type FactoryArgs = [readonly number[], DType | null, unknown];
type RangeRest = [DType | null, string | null];

const filled = (value: number) =>
  ((_hi: number, _lo: number, ...[size, dtype, layout]: FactoryArgs) => {
    const meta = factoryMeta(size, dtype, layout as null, null);
    return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => fill(out, value));
  }) as Kernel;

/** Writes `start + step * i` (the compute kind of `out`'s dtype) into the contiguous `out`. */
function ramp(name: string, out: Tensor, start: number, step: number): void {
  const kind = kindOf(out.dtype, name);
  const s = scalarOperand(start, out.dtype, name), d = scalarOperand(step, out.dtype, name);
  const index = kind === 'f32' ? 'f32(i)' : kind === 'i32' ? 'i32(i)' : 'i64_from_i32(i32(i))';
  const linear = kind === 'i64' ? `i64_add(v0, i64_mul(v1, ${index}))` : `v0 + v1 * ${index}`;
  runElementwise({ name, out, inputs: [s, d], inputKinds: [kind, kind], expr: linear, exprKind: kind });
}

function arange(start: number, end: number, step: number, dtype: DType | null, layout: string | null): Tensor {
  const plan = arangePlan(start, end, step, dtype, layout);
  kindOf(plan.dtype, 'arange_webgpu');
  return filledOrFreed(emptyGpu(plan.shape, plan.dtype), (out) => ramp('arange_webgpu', out, plan.start, plan.step));
}

function linspace(start: number, end: number, steps: number, dtype: DType | null, layout: string | null): Tensor {
  const meta = linspaceMeta(start, end, steps, dtype, layout);
  kindOf(meta.dtype, 'linspace_webgpu');
  return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => {
    if (steps === 0) return;
    const from = checkedConvert(start, meta.dtype), to = checkedConvert(end, meta.dtype);
    if (steps === 1) return void fill(out, from);
    // Computed in float for every dtype (integers truncate), the second half counting back from `end`.
    const f = (x: number) => ({ scalar: x, kind: 'f32' as const });
    const u = (x: number) => ({ scalar: x, kind: 'i32' as const });
    runElementwise({
      name: 'linspace_webgpu',
      out,
      inputs: [f(from), f((to - from) / (steps - 1)), f(to), u(steps - 1), u(Math.floor(steps / 2))],
      inputKinds: ['f32', 'f32', 'f32', 'i32', 'i32'],
      expr: 'select(v2 - v1 * f32(u32(v3) - i), v0 + v1 * f32(i), i < u32(v4))',
      exprKind: 'f32',
    });
  });
}

function eye(n: number, m: number | undefined, dtype: DType | null, layout: string | null): Tensor {
  const meta = eyeMeta(n, m, dtype, layout);
  return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => {
    fill(out, 0);
    const [rows, cols] = meta.shape;
    const diagonal = aliasWithGeometry(out, { shape: [Math.min(rows, cols)], strides: [cols + 1], offset: 0 }, 'eye');
    try {
      fill(diagonal, 1);
    } finally {
      diagonal.dispose();
    }
  });
}

/**
 * WebGPU kernels of the factory operators.
 *
 * @example
 * ```ts
 * import { GPU_FACTORY_KERNELS } from './factories.ts';
 * typeof GPU_FACTORY_KERNELS.arange; // 'function'
 * ```
 */
export const GPU_FACTORY_KERNELS: { readonly [K in keyof typeof FACTORY_OPS]: Kernel } = {
  'empty.memory_format': ((_hi: number, _lo: number, ...[size, dtype, layout]: FactoryArgs) => {
    const meta = factoryMeta(size, dtype, layout as null, null);
    return emptyGpu(meta.shape, meta.dtype);
  }) as Kernel,
  'zeros': filled(0),
  'ones': filled(1),
  'full': ((_hi: number, _lo: number, size: readonly number[], value: number | boolean, dtype: DType | null) => {
    const meta = fullMeta(size, value, dtype, null);
    return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => fill(out, checkedConvert(value, meta.dtype)));
  }) as Kernel,
  'arange':
    ((_hi: number, _lo: number, end: number, ...[dtype, layout]: RangeRest) =>
      arange(0, end, 1, dtype, layout)) as Kernel,
  'arange.start':
    ((_hi: number, _lo: number, start: number, end: number, ...[dtype, layout]: RangeRest) =>
      arange(start, end, 1, dtype, layout)) as Kernel,
  'arange.start_step':
    ((_hi: number, _lo: number, start: number, end: number, step: number, ...[dtype, layout]: RangeRest) =>
      arange(start, end, step, dtype, layout)) as Kernel,
  'linspace':
    ((_hi: number, _lo: number, start: number, end: number, steps: number, ...[dtype, layout]: RangeRest) =>
      linspace(start, end, steps, dtype, layout)) as Kernel,
  'eye':
    ((_hi: number, _lo: number, n: number, ...[dtype, layout]: RangeRest) =>
      eye(n, undefined, dtype, layout)) as Kernel,
  'eye.m':
    ((_hi: number, _lo: number, n: number, m: number, ...[dtype, layout]: RangeRest) =>
      eye(n, m, dtype, layout)) as Kernel,
};
