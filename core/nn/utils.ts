/**
 * `torch.nn.utils`: gradient clipping (`clipGradNorm_`, `clipGradValue_`). Reached as `nn.utils`.
 *
 * @example
 * ```ts
 * import { nn, tensor } from '../../mod.ts';
 * const p = tensor([1, 1], { dtype: 'float32' }).requiresGrad_();
 * p.grad = tensor([3, 4], { dtype: 'float32' });
 * nn.utils.clipGradNorm_([p], 1).dispose(); // p.grad ≈ [0.6, 0.8]
 * ```
 *
 * @module
 */
export { clipGradNorm_, type ClipGradNormOptions, clipGradValue_ } from './clip_grad.ts';
