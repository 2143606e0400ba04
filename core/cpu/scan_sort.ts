/**
 * CPU kernels of `cumsum`, `cumprod`, `sort.stable` and `mode`: the input converted to a contiguous tensor of the result
 * dtype, viewed as `[outer, n, inner]` around the scanned / sorted dim, and one call of the wasm kernel
 * (kernels_as/scan_sort.ts).
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { modeMeta, scanMeta, sortMeta } from '../ops/meta_scan_sort.ts';
import { contiguousAddress, kernels, withWorkspace } from './boundary.ts';
import { ScanOp } from './exports_scan_sort.ts';
import { castCpu, emptyCpu } from './iterator.ts';
import { checkStatus } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `t` itself when contiguous with `dtype`, else a contiguous copy of that dtype (the caller frees it). */
function contiguousAs(t: Tensor, dtype: DType): Tensor {
  return t.dtype === dtype && t.isContiguous() ? t : castCpu(t, dtype);
}

/** `[outer, n, inner]` around `dim` (a 0-d tensor is one line of one element). */
function lines(shape: readonly number[], dim: number): [number, number, number] {
  if (shape.length === 0) return [1, 1, 1];
  let outer = 1, inner = 1;
  for (let i = 0; i < dim; i++) outer *= shape[i];
  for (let i = dim + 1; i < shape.length; i++) inner *= shape[i];
  return [outer, shape[dim], inner];
}

function scan(op: number, name: string): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: number, dtype: DType | null) => {
    const meta = scanMeta(self, dim, dtype);
    const out = emptyCpu(meta.shape, meta.dtype);
    const numel = out.numel;
    if (numel === 0) return out;
    const input = contiguousAs(self, meta.dtype);
    try {
      const [outer, n, inner] = lines(self.shape, wrapDim(dim, self.ndim));
      const code = meta.dtype.scalarType;
      const status = kernels().scan_contig(
        op,
        code,
        contiguousAddress(out, name, numel),
        contiguousAddress(input, name, numel),
        outer,
        n,
        inner,
      );
      checkStatus(status, name, code);
    } catch (e) {
      out.dispose();
      throw e;
    } finally {
      if (input !== self) input.dispose();
    }
    return out;
  }) as Kernel;
}

function sortStable(
  _hi: number,
  _lo: number,
  self: Tensor,
  stable: boolean | null,
  dim: number,
  descending: boolean,
): [Tensor, Tensor] {
  const [vm, im] = sortMeta(self, stable, dim);
  const values = emptyCpu(vm.shape, vm.dtype), indices = emptyCpu(im.shape, im.dtype);
  const numel = values.numel;
  if (numel === 0) return [values, indices];
  const input = contiguousAs(self, self.dtype);
  try {
    const [outer, n, inner] = lines(self.shape, wrapDim(dim, self.ndim));
    const code = self.dtype.scalarType, name = 'sort';
    const status = withWorkspace(name, 24 * n, (work) =>
      kernels().sort_contig(
        code,
        contiguousAddress(values, name, numel),
        contiguousAddress(indices, name, numel),
        contiguousAddress(input, name, numel),
        outer,
        n,
        inner,
        descending ? 1 : 0,
        work,
      ));
    checkStatus(status, name, code);
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw e;
  } finally {
    if (input !== self) input.dispose();
  }
  return [values, indices];
}

function mode(_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean): [Tensor, Tensor] {
  const [vm, im] = modeMeta(self, dim, keepdim);
  const values = emptyCpu(vm.shape, vm.dtype), indices = emptyCpu(im.shape, im.dtype);
  const numel = self.numel;
  if (numel === 0) return [values, indices];
  const input = contiguousAs(self, self.dtype);
  try {
    const [outer, n, inner] = lines(self.shape, wrapDim(dim, self.ndim));
    const code = self.dtype.scalarType, name = 'mode', count = outer * inner;
    const status = withWorkspace(name, 24 * n, (work) =>
      kernels().mode_contig(
        code,
        contiguousAddress(values, name, count),
        contiguousAddress(indices, name, count),
        contiguousAddress(input, name, numel),
        outer,
        n,
        inner,
        work,
      ));
    checkStatus(status, name, code);
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw e;
  } finally {
    if (input !== self) input.dispose();
  }
  return [values, indices];
}

/**
 * The CPU kernels of the scans, of `sort.stable` and of `mode`.
 *
 * @example
 * ```ts
 * import { CPU_SCAN_SORT_KERNELS } from './scan_sort.ts';
 * typeof CPU_SCAN_SORT_KERNELS['cumsum']; // 'function'
 * ```
 */
export const CPU_SCAN_SORT_KERNELS: { readonly [K in 'cumsum' | 'cumprod' | 'sort.stable' | 'mode']: Kernel } = {
  'cumsum': scan(ScanOp.sum, 'cumsum'),
  'cumprod': scan(ScanOp.prod, 'cumprod'),
  'sort.stable': sortStable as Kernel,
  'mode': mode as Kernel,
};
