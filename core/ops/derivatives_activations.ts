/**
 * Derivative formulas of the pointwise activations with kernels of their own (derivatives.yaml's
 * `leaky_relu_backward`, `elu_backward`, `softplus_backward`, `hardtanh_backward`, `mish_backward`,
 * `log_sigmoid_backward`), written with other operators so that they differentiate again.
 *
 * @module
 */
import type { Derivative, SavedValues } from '../autograd/autograd_kernel.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { Tensor } from '../tensor/tensor.ts';

const op = (name: string, overload = '') => Dispatcher.singleton().findSchemaOrThrow(`aten::${name}`, overload);
const t = (s: SavedValues, name: string) => s[name] as Tensor;
const num = (s: SavedValues, name: string) => Number(s[name]);
const where = (c: Tensor, a: Tensor, b: Tensor) => op('where', 'self').call(c, a, b) as Tensor;
/** `value` where `keep` holds, 0 elsewhere. */
const maskedZero = (keep: Tensor, value: Tensor) => op('where', 'ScalarOther').call(keep, value, 0) as Tensor;

/** `leaky_relu_backward`: `x > 0 ? g : g * negative_slope`. */
function leakyReluBackward(g: Tensor, x: Tensor, slope: number): Tensor {
  return where(x.gt(0), g, g.mul(slope));
}

/** `elu_backward` (is_result = false): `x <= 0 ? g * input_scale * alpha * scale * exp(x * input_scale) : g * scale`. */
function eluBackward(g: Tensor, x: Tensor, alpha: number, scale: number, inputScale: number): Tensor {
  const neg = g.mul(x.mul(inputScale).exp()).mul(inputScale * alpha * scale);
  return where(x.le(0), neg, g.mul(scale));
}

/** `softplus_backward`: `x * beta > threshold ? g : g * z / (z + 1)` with `z = exp(x * beta)`, i.e. sigmoid. */
function softplusBackward(g: Tensor, x: Tensor, beta: number, threshold: number): Tensor {
  const bx = x.mul(beta);
  return where(bx.gt(threshold), g, g.mul(bx.sigmoid()));
}

/** `hardtanh_backward`: 0 where `x <= min_val` or `x >= max_val`, `g` elsewhere (NaN passes, as in PyTorch). */
function hardtanhBackward(g: Tensor, x: Tensor, lo: number, hi: number): Tensor {
  const outside = x.le(lo).logicalOr(x.ge(hi));
  return maskedZero(outside.logicalNot(), g);
}

/** `mish_backward`: `g * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2))`. */
function mishBackward(g: Tensor, x: Tensor): Tensor {
  const tsp = x.exp().log1p().tanh();
  const sig = x.sigmoid();
  return g.mul(tsp.add(x.mul(sig).mul(tsp.mul(tsp).neg().add(1))));
}

/** `log_sigmoid_backward`: `g * (1 - sigmoid(x))`, as `g * sigmoid(-x)` (PyTorch's stable `z / (1 + z)` form). */
function logSigmoidBackward(g: Tensor, x: Tensor): Tensor {
  return g.mul(x.neg().sigmoid());
}

/** The output gradient of a loss spread over its elements: divided by their count for reduction mean. */
function perElement(g: Tensor, reduction: number, numel: number): Tensor {
  return reduction === 1 ? g.div(numel) : g;
}

/** `smooth_l1_loss_backward`: `clamp(d / beta, -1, 1) * g` with `d = self - target` (`sign(d) * g` for beta 0). */
function smoothL1Backward(g: Tensor, x: Tensor, t: Tensor, reduction: number, beta: number): Tensor {
  const d = x.sub(t);
  const gn = perElement(g, reduction, d.numel);
  return (beta === 0 ? d.sign() : d.div(beta).clamp(-1, 1)).mul(gn);
}

/** `huber_loss_backward`: `clamp(d, -delta, delta) * g` with `d = self - target`. */
function huberBackward(g: Tensor, x: Tensor, t: Tensor, reduction: number, delta: number): Tensor {
  const d = x.sub(t);
  return d.clamp(-delta, delta).mul(perElement(g, reduction, d.numel));
}

/** `binary_cross_entropy_backward`: `g * (x - t) / max(x (1 - x), 1e-12) * weight`. */
function bceBackward(g: Tensor, x: Tensor, t: Tensor, weight: Tensor | null, reduction: number): Tensor {
  const denom = x.mul(x.neg().add(1)).clampMin(1e-12);
  let r = x.sub(t).div(denom).mul(perElement(g, reduction, x.numel));
  if (weight !== null) r = r.mul(weight);
  return r;
}

/** The target's gradient: `g * (max(log(1 - x), -100) - max(log x, -100)) * weight`, the clamped loss's. */
function bceTargetBackward(g: Tensor, x: Tensor, weight: Tensor | null, reduction: number): Tensor {
  const d = x.neg().log1p().clampMin(-100).sub(x.log().clampMin(-100));
  let r = d.mul(perElement(g, reduction, x.numel));
  if (weight !== null) r = r.mul(weight);
  return r;
}

/**
 * Derivatives of the activations and pointwise losses, keyed like the operator table.
 *
 * @example
 * ```ts
 * import { ACTIVATION_DERIVATIVES } from './derivatives_activations.ts';
 * ACTIVATION_DERIVATIVES['softplus'].name; // 'SoftplusBackward0'
 * ```
 */
export const ACTIVATION_DERIVATIVES = {
  'leaky_relu': {
    name: 'LeakyReluBackward0',
    save: ['self'],
    grads: { self: (g, s) => leakyReluBackward(g, t(s, 'self'), num(s, 'negative_slope')) },
  },
  'elu': {
    name: 'EluBackward0',
    save: ['self'],
    grads: {
      self: (g, s) => eluBackward(g, t(s, 'self'), num(s, 'alpha'), num(s, 'scale'), num(s, 'input_scale')),
    },
  },
  'softplus': {
    name: 'SoftplusBackward0',
    save: ['self'],
    grads: { self: (g, s) => softplusBackward(g, t(s, 'self'), num(s, 'beta'), num(s, 'threshold')) },
  },
  'hardtanh': {
    name: 'HardtanhBackward0',
    save: ['self'],
    grads: { self: (g, s) => hardtanhBackward(g, t(s, 'self'), num(s, 'min_val'), num(s, 'max_val')) },
  },
  'mish': { name: 'MishBackward0', save: ['self'], grads: { self: (g, s) => mishBackward(g, t(s, 'self')) } },
  'log_sigmoid': {
    name: 'LogSigmoidBackward0',
    save: ['self'],
    grads: { self: (g, s) => logSigmoidBackward(g, t(s, 'self')) },
  },
  'smooth_l1_loss': {
    name: 'SmoothL1LossBackward0',
    save: ['self', 'target'],
    grads: {
      self: (g, s) => smoothL1Backward(g, t(s, 'self'), t(s, 'target'), num(s, 'reduction'), num(s, 'beta')),
      target: (g, s) => smoothL1Backward(g, t(s, 'self'), t(s, 'target'), num(s, 'reduction'), num(s, 'beta')).neg(),
    },
  },
  'huber_loss': {
    name: 'HuberLossBackward0',
    save: ['self', 'target'],
    grads: {
      self: (g, s) => huberBackward(g, t(s, 'self'), t(s, 'target'), num(s, 'reduction'), num(s, 'delta')),
      target: (g, s) => huberBackward(g, t(s, 'self'), t(s, 'target'), num(s, 'reduction'), num(s, 'delta')).neg(),
    },
  },
  'binary_cross_entropy': {
    name: 'BinaryCrossEntropyBackward0',
    save: ['self', 'target', 'weight'],
    grads: {
      self: (g, s) =>
        bceBackward(g, t(s, 'self'), t(s, 'target'), (s.weight ?? null) as Tensor | null, num(s, 'reduction')),
      target: (g, s) => bceTargetBackward(g, t(s, 'self'), (s.weight ?? null) as Tensor | null, num(s, 'reduction')),
    },
  },
} as const satisfies Record<string, Derivative>;
