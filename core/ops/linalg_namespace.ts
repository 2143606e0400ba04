/**
 * The `linalg` namespace of the public API (`torch.linalg`): the functions PyTorch files under `torch.linalg`,
 * camelCased.
 *
 * @module
 */
import { linalgVectorNorm } from './generated_api.js';

/**
 * `torch.linalg`: `linalg.vectorNorm(x, ord, dim, keepdim, { dtype })`.
 *
 * @example
 * ```ts
 * import { linalg, tensor } from '../../mod.ts';
 * linalg.vectorNorm(tensor([3, 4], { dtype: 'float32' })).item(); // 5
 * ```
 */
export const linalg: { readonly vectorNorm: typeof linalgVectorNorm } = Object.freeze({
  vectorNorm: linalgVectorNorm,
});
