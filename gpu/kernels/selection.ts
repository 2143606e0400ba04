/**
 * WebGPU entry of `nonzero`: its output shape depends on the values, which WebGPU cannot read back
 * synchronously, so it refuses with a `NotImplementedError` naming `nonzeroAsync` (Note [GPU nonzero] in
 * nonzero.ts).
 *
 * @module
 */
import { NotImplementedError } from '../../core/dispatch/errors.ts';
import type { SelectionBackendOpName } from '../../core/ops/decl_selection.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/**
 * The WebGPU entries of the selection operators (each refuses, see the module note).
 *
 * @example
 * ```ts
 * import { GPU_SELECTION_KERNELS } from './selection.ts';
 * typeof GPU_SELECTION_KERNELS.nonzero; // 'function'
 * ```
 */
export const GPU_SELECTION_KERNELS: { readonly [K in SelectionBackendOpName]: Kernel } = {
  'nonzero': (() => {
    throw new NotImplementedError(
      'nonzero: the synchronous operator cannot run on webgpu tensors (its output shape depends on the values, ' +
        'and WebGPU has no synchronous readback); use await nonzeroAsync(t) (or maskedSelectAsync(t, mask)), ' +
        'which counts on the GPU, awaits the count and fills the result there',
    );
  }) as Kernel,
};
