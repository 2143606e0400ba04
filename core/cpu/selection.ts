/**
 * CPU kernel of `nonzero`: the input read as a contiguous bool mask through the kernel boundary's host view,
 * then one row of coordinates per true element, in row-major order.
 *
 * @module
 */
import { bool, int64 } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { SelectionBackendOpName } from '../ops/decl_selection.ts';
import { hostElements } from './boundary.ts';
import { storeValues } from './factories.ts';
import { castCpu, emptyCpu } from './iterator.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

function nonzero(_hi: number, _lo: number, self: Tensor): Tensor {
  self.assertAlive('nonzero');
  const ndim = self.ndim, shape = self.shape, n = self.numel;
  const mask = castCpu(self, bool); // != 0 per element (NaN counts as non-zero)
  try {
    const flags = n === 0 ? new Uint8Array(0) : (hostElements(mask, 'nonzero', n) as Uint8Array);
    let count = 0;
    for (let i = 0; i < n; i++) count += flags[i];
    const out = emptyCpu([count, ndim], int64);
    if (count === 0 || ndim === 0) return out;
    const coords = new Float64Array(count * ndim);
    const index = new Array<number>(ndim).fill(0);
    let row = 0;
    for (let i = 0; i < n; i++) {
      if (flags[i] !== 0) {
        for (let d = 0; d < ndim; d++) coords[row * ndim + d] = index[d];
        row++;
      }
      for (let d = ndim - 1; d >= 0; d--) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    storeValues(out, coords);
    return out;
  } finally {
    mask.dispose();
  }
}

/**
 * The CPU kernels of the selection operators.
 *
 * @example
 * ```ts
 * import { CPU_SELECTION_KERNELS } from './selection.ts';
 * typeof CPU_SELECTION_KERNELS.nonzero; // 'function'
 * ```
 */
export const CPU_SELECTION_KERNELS: { readonly [K in SelectionBackendOpName]: Kernel } = {
  'nonzero': nonzero as Kernel,
};
