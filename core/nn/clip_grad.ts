/**
 * Gradient clipping (`torch.nn.utils.clip_grad_norm_`, `clip_grad_value_`, PyTorch 1.13): rescales or clamps
 * the `.grad` of parameters in place, between `backward()` and `optimizer.step()`.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';
import { tensor } from '../ops/creation.ts';
import { amax, amin, clampMax, fullLike, stack, sum } from '../ops/generated_api.js';
import { keep, scope } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';

/** Options of {@linkcode clipGradNorm_}. */
export interface ClipGradNormOptions {
  /** The p of the p-norm: a positive number, 0 (count of non-zeros), `Infinity` or `-Infinity` (default 2). */
  normType?: number;
  /** Throw when the total norm is NaN or infinite instead of scaling by it (default false). */
  errorIfNonfinite?: boolean;
}

function parameterList(what: string, parameters: unknown): Tensor[] {
  if (Tensor.isTensor(parameters)) return [parameters];
  if (
    typeof parameters !== 'object' || parameters === null ||
    typeof (parameters as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function'
  ) {
    throw new TypeError(
      `${what}: argument 'parameters' must be a Tensor or an iterable of Tensors, not ${pyTypeName(parameters)}`,
    );
  }
  const list = [...parameters as Iterable<unknown>];
  list.forEach((p, i) => {
    if (!Tensor.isTensor(p)) {
      throw new TypeError(`${what}: parameters[${i}] must be a Tensor, not ${pyTypeName(p)}`);
    }
    p.assertAlive(what);
  });
  return list as Tensor[];
}

/** A float as Python prints it (`2.0`, `inf`), for PyTorch's messages. */
function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

const isReduced = (t: Tensor) => t.dtype.name === 'float16' || t.dtype.name === 'bfloat16';

/**
 * The p-norm of all elements of `t` (`torch.norm(t, p)`), a 0-d tensor of `t`'s dtype, except that float16 and
 * bfloat16 are reduced in float32 (as PyTorch accumulates them) and their norm stays float32 here.
 */
function vectorNorm(t: Tensor, p: number): Tensor {
  if (isReduced(t)) return vectorNorm(t.to({ dtype: 'float32' }), p);
  if (p === Infinity) return amax(t.abs());
  if (p === -Infinity) return amin(t.abs());
  if (p === 0) return sum(t.ne(0)).to({ dtype: t.dtype });
  if (p === 1) return sum(t.abs());
  if (p === 2) return sum(t.mul(t)).sqrt();
  return sum(t.abs().pow(p)).pow(1 / p);
}

/**
 * Scales the gradients of `parameters` in place so that their total p-norm (the norm of the vector of all
 * gradient elements) is at most `maxNorm`, and returns that norm before clipping as a 0-d tensor (which the
 * caller disposes). Parameters without a gradient are skipped; with none at all the norm is 0.
 * The scale is `min(1, maxNorm / (norm + 1e-6))`, as PyTorch's.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { clipGradNorm_ } from './clip_grad.ts';
 * const p = tensor([1, 1], { dtype: 'float32' }).requiresGrad_();
 * p.grad = tensor([3, 4], { dtype: 'float32' });
 * const norm = clipGradNorm_([p], 1); // norm 5; p.grad ≈ [0.6, 0.8]
 * ```
 */
export function clipGradNorm_(
  parameters: Iterable<Tensor> | Tensor,
  maxNorm: number,
  options: ClipGradNormOptions = {},
): Tensor {
  const what = 'clip_grad_norm_()';
  const params = parameterList(what, parameters);
  if (typeof maxNorm !== 'number') {
    throw new TypeError(`${what}: argument 'maxNorm' must be float, not ${pyTypeName(maxNorm)}`);
  }
  if (!isOptions(options)) throw new TypeError(`${what}: expected an options object, got ${pyTypeName(options)}`);
  for (const key of Object.keys(options)) {
    if (key !== 'normType' && key !== 'errorIfNonfinite') {
      throw new TypeError(`clip_grad_norm_() got an unexpected keyword argument '${key}'`);
    }
  }
  const normType = options.normType ?? 2;
  const errorIfNonfinite = options.errorIfNonfinite ?? false;
  if (typeof normType !== 'number' || Number.isNaN(normType) || normType < 0 && normType !== -Infinity) {
    throw new TypeError(`${what}: argument 'normType' must be a non-negative float or ±inf, got ${normType}`);
  }
  if (typeof errorIfNonfinite !== 'boolean') {
    throw new TypeError(`${what}: argument 'errorIfNonfinite' must be bool, not ${pyTypeName(errorIfNonfinite)}`);
  }
  const grads = params.map((p) => p.grad).filter((g): g is Tensor => g !== null);
  if (grads.length === 0) return tensor(0, { dtype: 'float32' });
  return noGrad(() =>
    scope(() => {
      const norms = grads.map((g) => vectorNorm(g, normType));
      let total: Tensor;
      if (norms.length === 1) total = norms[0];
      else if (normType === Infinity) total = amax(stack(norms));
      else if (normType === -Infinity) total = amin(stack(norms));
      else total = vectorNorm(stack(norms), normType);
      if (errorIfNonfinite) {
        const value = Number(total.item());
        if (!Number.isFinite(value)) {
          throw new RuntimeError(
            `The total norm of order ${pyFloat(normType)} for gradients from \`parameters\` is non-finite, so ` +
              'it cannot be clipped. To disable this error and scale the gradients by the non-finite norm ' +
              'anyway, set `error_if_nonfinite=False`',
          );
        }
      }
      const denominator = total.add(1e-6);
      const coefficient = clampMax(fullLike(denominator, maxNorm).div(denominator), 1);
      for (const g of grads) g.mul_(coefficient.dtype === g.dtype ? coefficient : coefficient.to({ dtype: g.dtype }));
      // Gradients all float16 (or all bfloat16): the norm in their dtype, as PyTorch returns it.
      const dtype = grads[0].dtype;
      if (isReduced(grads[0]) && grads.every((g) => g.dtype === dtype)) return keep(total.to({ dtype }));
      return keep(total);
    })
  );
}

/**
 * Clamps the gradients of `parameters` in place to `[-clipValue, clipValue]`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { clipGradValue_ } from './clip_grad.ts';
 * const p = tensor([1, 1], { dtype: 'float32' }).requiresGrad_();
 * p.grad = tensor([3, -0.5], { dtype: 'float32' });
 * clipGradValue_([p], 1); // p.grad is [1, -0.5]
 * ```
 */
export function clipGradValue_(parameters: Iterable<Tensor> | Tensor, clipValue: number): void {
  const what = 'clip_grad_value_()';
  const params = parameterList(what, parameters);
  if (typeof clipValue !== 'number' || Number.isNaN(clipValue)) {
    throw new TypeError(`${what}: argument 'clipValue' must be float, not ${pyTypeName(clipValue)}`);
  }
  noGrad(() =>
    scope(() => {
      for (const p of params) {
        const g = p.grad;
        if (g === null) continue;
        // The CPU kernels have no float16 clamp (as PyTorch 1.13's); clamping in float32 rounds the same.
        if (g.dtype.name === 'float16') g.copy_(g.to({ dtype: 'float32' }).clamp(-clipValue, clipValue));
        else g.clamp_(-clipValue, clipValue);
      }
    })
  );
}
