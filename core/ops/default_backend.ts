/**
 * Default backend kernels: what PyTorch's structured operators register at CompositeExplicitAutogradNonFunctional
 * (`[default backend kernel]` in its dumps). Such a kernel runs for every backend without a kernel of its own, and
 * for a call that has no tensor to dispatch on (`cat([])`, whose keyset is empty, lands in the Undefined slot it
 * fills), so the operator's checks give PyTorch's error there instead of the dispatcher's "no tensor arguments".
 * It checks its arguments with the operator's Meta function, then computes through other operators.
 *
 * @module
 */
import { filledOrFreed } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from './aten_call.ts';
import { catDim, catMeta, catSkips } from './view_copy_meta.ts';

/**
 * `cat` for any backend: PyTorch's checks (`torch.cat(): expected a non-empty list of Tensors`, ...), then each
 * input copied into its slice of a new tensor on the first input's device.
 *
 * @example
 * ```ts
 * import { catDefaultBackend } from './default_backend.ts';
 * import { tensor } from '../../mod.ts';
 * catDefaultBackend([tensor([1]), tensor([2, 3])], 0); // tensor([1, 2, 3])
 * ```
 */
export function catDefaultBackend(tensors: readonly Tensor[], dim: number): Tensor {
  const meta = catMeta(tensors, dim);
  const d = catDim(tensors, dim);
  const out = aten('empty', 'memory_format').call(
    meta.shape,
    meta.dtype,
    null,
    tensors[0].device,
    null,
    null,
  ) as Tensor;
  return filledOrFreed(out, () => {
    let start = 0;
    for (const t of tensors) {
      if (catSkips(t) || t.shape[d] === 0) continue;
      const slice = aten('narrow').call(out, d, start, t.shape[d]) as Tensor;
      try {
        aten('copy_').call(slice, t, false);
      } finally {
        slice.dispose();
      }
      start += t.shape[d];
    }
  });
}
