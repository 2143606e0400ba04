/**
 * Activations, losses and predicates written as decompositions into existing operators, the way PyTorch 1.13
 * writes `selu`, `binary_cross_entropy_with_logits`, `l1_loss`, `kl_div`, `cosine_similarity`, `isclose`,
 * `isinf`/`isfinite` (aten/src/ATen/native/Activation.cpp, Loss.cpp, TensorCompare.cpp, Distance.cpp). The
 * operators PyTorch gives kernels of their own (`leaky_relu`, `elu`, `softplus`, `mish`, `hardtanh`,
 * `log_sigmoid`, `smooth_l1_loss`, `huber_loss`, `binary_cross_entropy`) have them on the CPU here too
 * (kernels_as/activation.ts); their decompositions below, in the formulas PyTorch's kernels evaluate, are the
 * default backend kernel that every other backend (WebGPU) runs below autograd, and the CPU's path for the
 * operands its kernels do not take (mixed dtypes, broadcasting, integer `hardtanh`). Their gradients come from the
 * derivative formulas (derivatives_activations.ts) on every backend.
 *
 * Note [Composite activations]
 * Each decomposition checks its dtype with the dispatch list of PyTorch's CPU kernel (`"elu_cpu" not implemented for
 * 'Long'`) and then evaluates the kernel's formula with `where` selecting the branch, so values match PyTorch's
 * formulas; gradients are those of the formulas' parts, which equal PyTorch's derivative formulas (`hardtanh`
 * routes its gradient through a `where` so that, as in PyTorch's `hardtanh_backward`, none passes at exactly
 * `min_val` / `max_val`).
 *
 * @module
 */
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { bool, type DType, getDefaultDtype } from '../tensor/dtype.ts';
import { broadcastShapes, wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries, toDtype } from './aten_call.ts';
import { resultTypeOf } from './meta_elementwise.ts';
import { LossReduction } from './meta_nn.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;
const num = (x: number | boolean) => (typeof x === 'boolean' ? Number(x) : x);

/** PyTorch's `AT_DISPATCH_FLOATING_TYPES_AND(BFloat16, ...)` refusal for the other dtypes. */
function checkFloating(self: Tensor, kernel: string, bfloat16 = true): void {
  const d = self.dtype;
  const ok = d.name === 'float32' || d.name === 'float64' || (bfloat16 && d.name === 'bfloat16');
  if (!ok) throw new RuntimeError(`"${kernel}" not implemented for '${d.scalarTypeName}'`);
}

const where = (c: Tensor, a: Tensor, b: Tensor) => aten('where', 'self').call(c, a, b) as Tensor;

/** Applies a loss reduction (0 none, 1 mean, 2 sum) to the elementwise loss, consuming it. */
function reduce(loss: Tensor, reduction: number, temps: Temporaries): Tensor {
  if (reduction === LossReduction.none) return temps.keep(loss);
  return reduction === LossReduction.mean ? loss.mean() : loss.sum();
}

/**
 * `leaky_relu(x, negative_slope)`: `x > 0 ? x : x * negative_slope`.
 *
 * @example
 * ```ts
 * import { leakyRelu, tensor } from '../../mod.ts';
 * leakyRelu(tensor([-2, 3])).tolist(); // [-0.02, 3]
 * ```
 */
export function leakyRelu(self: Tensor, negativeSlope: number | boolean): Tensor {
  checkFloating(self, 'leaky_relu_cpu');
  using temps = new Temporaries();
  const positive = temps.track(self.gt(0));
  const scaled = temps.track(self.mul(num(negativeSlope)));
  return where(positive, self, scaled);
}

/**
 * `elu(x, alpha, scale, input_scale)`: `x > 0 ? x * scale : (exp(x * input_scale) - 1) * alpha * scale`.
 *
 * @example
 * ```ts
 * import { elu, tensor } from '../../mod.ts';
 * elu(tensor([0, 2])).tolist(); // [0, 2]
 * ```
 */
export function elu(
  self: Tensor,
  alpha: number | boolean,
  scale: number | boolean,
  inputScale: number | boolean,
): Tensor {
  checkFloating(self, 'elu_cpu');
  using temps = new Temporaries();
  const a = num(alpha), s = num(scale), is = num(inputScale);
  const positive = temps.track(self.gt(0));
  const pos = s === 1 ? self : temps.track(self.mul(s));
  const inner = is === 1 ? self : temps.track(self.mul(is));
  const em1 = temps.track(inner.expm1());
  const neg = temps.track(em1.mul(a * s));
  return where(positive, pos, neg);
}

const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;

/**
 * `selu(x)`: `elu(x, alpha = 1.6732632423543772, scale = 1.0507009873554805)`.
 *
 * @example
 * ```ts
 * import { selu, tensor } from '../../mod.ts';
 * selu(tensor([1])).tolist(); // [1.0507009873554805]
 * ```
 */
export function selu(self: Tensor): Tensor {
  return elu(self, SELU_ALPHA, SELU_SCALE, 1);
}

/**
 * `softplus(x, beta, threshold)`: `x * beta > threshold ? x : log1p(exp(x * beta)) / beta`.
 *
 * @example
 * ```ts
 * import { softplus, tensor } from '../../mod.ts';
 * softplus(tensor([0])).tolist(); // [0.6931...]
 * ```
 */
export function softplus(self: Tensor, beta: number | boolean, threshold: number | boolean): Tensor {
  checkFloating(self, 'softplus_cpu');
  using temps = new Temporaries();
  const b = num(beta);
  const scaled = b === 1 ? self : temps.track(self.mul(b));
  const linear = temps.track(scaled.gt(num(threshold)));
  // exp only where it is used, so that the unused branch's gradient is not inf * 0.
  const safe = temps.track(aten('where', 'ScalarSelf').call(linear, 0, scaled) as Tensor);
  const soft = temps.track(temps.track(safe.exp()).log1p());
  const divided = b === 1 ? soft : temps.track(soft.div(b));
  return where(linear, self, divided);
}

/**
 * `mish(x)`: `x * tanh(softplus(x))`.
 *
 * @example
 * ```ts
 * import { mish, tensor } from '../../mod.ts';
 * mish(tensor([0])).tolist(); // [0]
 * ```
 */
export function mish(self: Tensor): Tensor {
  checkFloating(self, 'mish_cpu');
  using temps = new Temporaries();
  const sp = temps.track(softplus(self, 1, 20));
  return self.mul(temps.track(sp.tanh()));
}

/**
 * `hardtanh(x, min_val, max_val)`: `clamp(x, min_val, max_val)`, bounds truncated to integers for integer
 * inputs (PyTorch's legacy behaviour: the bounds do not promote).
 *
 * @example
 * ```ts
 * import { hardtanh, tensor } from '../../mod.ts';
 * hardtanh(tensor([-2, 0.5, 2])).tolist(); // [-1, 0.5, 1]
 * ```
 */
export function hardtanh(self: Tensor, minVal: number | boolean, maxVal: number | boolean): Tensor {
  if (self.dtype.name === 'bool') throw new RuntimeError('Bool inputs not supported for hardtanh');
  let lo = num(minVal), hi = num(maxVal);
  if (!self.dtype.isFloatingPoint) {
    lo = Math.trunc(lo);
    hi = Math.trunc(hi);
    if (self.dtype.name === 'uint8' && (lo < 0 || hi < 0)) {
      throw new RuntimeError('cannot do hardtanh on an unsigned type with negative limits');
    }
  }
  if (!self.requiresGrad) return aten('clamp').call(self, lo, hi) as Tensor;
  // PyTorch's hardtanh_backward passes the gradient only strictly inside (min_val, max_val); clamp's would pass
  // it at the bounds too. The values are clamp's; the gradient flows through `self` where it is strictly inside.
  using temps = new Temporaries();
  const clamped = temps.track(temps.track(aten('clamp').call(self, lo, hi) as Tensor).detach());
  const inside = temps.track(temps.track(self.gt(lo)).logicalAnd(temps.track(self.lt(hi))));
  return where(inside, self, clamped);
}

/**
 * `log_sigmoid(x)`: `min(x, 0) - log1p(exp(-|x|))`, stable for large `|x|`.
 *
 * @example
 * ```ts
 * import { logSigmoid, tensor } from '../../mod.ts';
 * logSigmoid(tensor([0])).tolist(); // [-0.6931...]
 * ```
 */
export function logSigmoid(self: Tensor): Tensor {
  checkFloating(self, 'log_sigmoid_cpu');
  using temps = new Temporaries();
  const minimum = temps.track(aten('clamp_max').call(self, 0) as Tensor);
  const negAbs = temps.track(temps.track(self.abs()).neg());
  const tail = temps.track(temps.track(negAbs.exp()).log1p());
  return minimum.sub(tail);
}

function sameShapeCheck(self: Tensor, target: Tensor): void {
  const a = self.shape, b = target.shape;
  if (a.length !== b.length || a.some((s, i) => s !== b[i])) {
    throw new ValueError(
      `Using a target size (torch.Size(${list(b)})) that is different to the input size (torch.Size(${
        list(a)
      })) is deprecated. Please ensure they have the same size.`,
    );
  }
}

/**
 * `binary_cross_entropy(input, target, weight, reduction)`: `-(t * max(log x, -100) + (1 - t) * max(log(1 - x),
 * -100))`, times `weight`; inputs must lie in [0, 1].
 *
 * @example
 * ```ts
 * import { binaryCrossEntropy, tensor } from '../../mod.ts';
 * binaryCrossEntropy(tensor([0.5]), tensor([1])).item(); // ln 2
 * ```
 */
export function binaryCrossEntropy(self: Tensor, target: Tensor, weight: Tensor | null, reduction: number): Tensor {
  sameShapeCheck(self, target);
  checkFloating(self, 'binary_cross_entropy', true);
  using temps = new Temporaries();
  // PyTorch's kernel checks the range element by element; here it takes a read of the data, which only the CPU
  // has synchronously (a WebGPU input goes unchecked: out-of-range probabilities give NaN losses there).
  if (self.device.type === 'cpu') {
    // x >= 0 && x <= 1 is false for NaN too, as in PyTorch's check.
    const inside = temps.track(temps.track(self.ge(0)).logicalAnd(temps.track(self.le(1))));
    if (temps.track(inside.all()).item() === false) {
      throw new RuntimeError('all elements of input should be between 0 and 1');
    }
  }
  const logX = temps.track(aten('clamp_min').call(temps.track(self.log()), -100) as Tensor);
  const oneMinus = temps.track(temps.track(self.neg()).log1p());
  const log1mX = temps.track(aten('clamp_min').call(oneMinus, -100) as Tensor);
  // (t - 1) * log(1 - x) - t * log(x)
  const tm1 = temps.track(target.sub(1));
  const left = temps.track(tm1.mul(log1mX));
  const right = temps.track(target.mul(logX));
  let loss = temps.track(left.sub(right));
  if (weight !== null) loss = temps.track(loss.mul(weight));
  return reduce(loss, reduction, temps);
}

/**
 * `binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)`: the stable form
 * `(1 - t) * x + lw * (log(exp(-m) + exp(-x - m)) + m)` with `m = max(-x, 0)` and `lw = 1 + (pos_weight - 1) * t`.
 *
 * @example
 * ```ts
 * import { binaryCrossEntropyWithLogits, tensor } from '../../mod.ts';
 * binaryCrossEntropyWithLogits(tensor([0]), tensor([1])).item(); // ln 2
 * ```
 */
export function binaryCrossEntropyWithLogits(
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  posWeight: Tensor | null,
  reduction: number,
): Tensor {
  sameShapeCheck(self, target);
  using temps = new Temporaries();
  const negX = temps.track(self.neg());
  const m = temps.track(aten('clamp_min').call(negX, 0) as Tensor);
  const negM = temps.track(m.neg());
  const a = temps.track(negM.exp());
  const b = temps.track(temps.track(negX.sub(m)).exp());
  const logTerm = temps.track(temps.track(temps.track(a.add(b)).log()).add(m));
  const oneMinusT = temps.track(aten('rsub', 'Scalar').call(target, 1, 1) as Tensor);
  const first = temps.track(oneMinusT.mul(self));
  let loss: Tensor;
  if (posWeight !== null) {
    const lw = temps.track(temps.track(temps.track(posWeight.sub(1)).mul(target)).add(1));
    loss = temps.track(first.add(temps.track(lw.mul(logTerm))));
  } else {
    loss = temps.track(first.add(logTerm));
  }
  if (weight !== null) loss = temps.track(loss.mul(weight));
  return reduce(loss, reduction, temps);
}

/**
 * `l1_loss(input, target, reduction)`: `|input - target|` reduced.
 *
 * @example
 * ```ts
 * import { l1Loss, tensor } from '../../mod.ts';
 * l1Loss(tensor([1, 2]), tensor([2, 0])).item(); // 1.5
 * ```
 */
export function l1Loss(self: Tensor, target: Tensor, reduction: number): Tensor {
  using temps = new Temporaries();
  const loss = temps.track(temps.track(self.sub(target)).abs());
  return reduce(loss, reduction, temps);
}

/** The piecewise loss of smooth_l1 (`scale` 1/beta, shift beta/2) and huber (`scale` 1, shift delta/2 * delta). */
function piecewise(self: Tensor, target: Tensor, cut: number, huber: boolean, reduction: number): Tensor {
  using temps = new Temporaries();
  const z = temps.track(temps.track(self.sub(target)).abs());
  const inside = temps.track(z.lt(cut));
  const sq = temps.track(temps.track(z.mul(z)).mul(huber ? 0.5 : 0.5 / cut));
  const lin = huber ? temps.track(temps.track(z.sub(0.5 * cut)).mul(cut)) : temps.track(z.sub(0.5 * cut));
  const loss = temps.track(where(inside, sq, lin));
  return reduce(loss, reduction, temps);
}

/**
 * `smooth_l1_loss(input, target, reduction, beta)`: `|d| < beta ? 0.5 d^2 / beta : |d| - beta / 2`, the L1 loss
 * when `beta` is 0.
 *
 * @example
 * ```ts
 * import { smoothL1Loss, tensor } from '../../mod.ts';
 * smoothL1Loss(tensor([0.5, 3]), tensor([0, 0]), { reduction: 'none' }).tolist(); // [0.125, 2.5]
 * ```
 */
export function smoothL1Loss(self: Tensor, target: Tensor, reduction: number, beta: number): Tensor {
  if (beta < 0) throw new RuntimeError('smooth_l1_loss does not support negative values for beta.');
  if (beta === 0) return l1Loss(self, target, reduction);
  return piecewise(self, target, beta, false, reduction);
}

/**
 * `huber_loss(input, target, reduction, delta)`: `|d| < delta ? 0.5 d^2 : delta * (|d| - delta / 2)`.
 *
 * @example
 * ```ts
 * import { huberLoss, tensor } from '../../mod.ts';
 * huberLoss(tensor([0.5, 3]), tensor([0, 0]), { reduction: 'none' }).tolist(); // [0.125, 2.5]
 * ```
 */
export function huberLoss(self: Tensor, target: Tensor, reduction: number, delta: number): Tensor {
  if (!(delta > 0)) throw new RuntimeError('huber_loss does not support non-positive values for delta.');
  return piecewise(self, target, delta, true, reduction);
}

/**
 * `kl_div(input, target, reduction, log_target)`: `target * (log(target) - input)` (0 where the target is 0),
 * or `exp(target) * (target - input)` for log-space targets. `reduction` mean averages over every element.
 *
 * @example
 * ```ts
 * import { klDiv, tensor } from '../../mod.ts';
 * klDiv(tensor([-1]), tensor([1]), { reduction: 'sum' }).item(); // 1
 * ```
 */
export function klDiv(self: Tensor, target: Tensor, reduction: number, logTarget: boolean): Tensor {
  using temps = new Temporaries();
  let loss: Tensor;
  if (logTarget) {
    loss = temps.track(temps.track(target.exp()).mul(temps.track(target.sub(self))));
  } else {
    // xlogy(t, t) - t * x, with xlogy(0, y) = 0.
    const isZero = temps.track(target.eq(0));
    const safe = temps.track(aten('where', 'ScalarSelf').call(isZero, 1, target) as Tensor);
    const tlogt = temps.track(target.mul(temps.track(safe.log())));
    const xlogy = temps.track(aten('where', 'ScalarSelf').call(isZero, 0, tlogt) as Tensor);
    loss = temps.track(xlogy.sub(temps.track(target.mul(self))));
  }
  return reduce(loss, reduction, temps);
}

/**
 * `cosine_similarity(x1, x2, dim, eps)`: `sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2))` along `dim`,
 * after broadcasting (PyTorch 1.13's formula).
 *
 * @example
 * ```ts
 * import { cosineSimilarity, tensor } from '../../mod.ts';
 * cosineSimilarity(tensor([[1, 0]]), tensor([[1, 1]])).tolist(); // [0.7071...]
 * ```
 */
export function cosineSimilarity(x1: Tensor, x2: Tensor, dim: number, eps: number): Tensor {
  using temps = new Temporaries();
  const ndim = Math.max(x1.ndim, x2.ndim);
  const d = wrapDim(dim, ndim);
  const common = resultTypeOf(x1, x2);
  if (!common.isFloatingPoint) {
    throw new RuntimeError(
      `expected common dtype to be floating point, yet common dtype is ${common.scalarTypeName}`,
    );
  }
  const size = broadcastShapes(x1.shape, x2.shape);
  const c1 = temps.track(toDtype(x1, common), x1), c2 = temps.track(toDtype(x2, common), x2);
  const a = temps.track(c1.expand(size)), b = temps.track(c2.expand(size));
  const w12 = temps.track(temps.track(a.mul(b)).sum([d]));
  const w1 = temps.track(temps.track(a.mul(a)).sum([d]));
  const w2 = temps.track(temps.track(b.mul(b)).sum([d]));
  const n12 = temps.track(aten('clamp_min').call(temps.track(w1.mul(w2)), eps * eps) as Tensor);
  return w12.div(temps.track(n12.sqrt()));
}

/**
 * `isinf(x)`: true at `+inf` and `-inf` (always false for integer and bool tensors).
 *
 * @example
 * ```ts
 * import { isinf, tensor } from '../../mod.ts';
 * isinf(tensor([1, Infinity, -Infinity, NaN])).tolist(); // [false, true, true, false]
 * ```
 */
export function isinf(self: Tensor): Tensor {
  if (!self.dtype.isFloatingPoint) return aten('zeros_like').call(self, bool, null, null, null, null) as Tensor;
  using temps = new Temporaries();
  return temps.track(self.eq(Infinity)).logicalOr(temps.track(self.eq(-Infinity)));
}

/**
 * `isfinite(x)`: true where the value is neither infinite nor NaN (always true for integer and bool tensors).
 *
 * @example
 * ```ts
 * import { isfinite, tensor } from '../../mod.ts';
 * isfinite(tensor([1, Infinity, NaN])).tolist(); // [true, false, false]
 * ```
 */
export function isfinite(self: Tensor): Tensor {
  if (!self.dtype.isFloatingPoint) return aten('ones_like').call(self, bool, null, null, null, null) as Tensor;
  using temps = new Temporaries();
  // Comparisons with NaN are false, and the infinities lie outside (-inf, inf).
  return temps.track(self.gt(-Infinity)).logicalAnd(temps.track(self.lt(Infinity)));
}

/**
 * `isclose(a, b, rtol, atol, equal_nan)`: `a == b`, or both finite with `|a - b| <= atol + rtol * |b|`; integer
 * tensors are compared in the default float dtype (PyTorch's TensorCompare.cpp).
 *
 * @example
 * ```ts
 * import { isclose, tensor } from '../../mod.ts';
 * isclose(tensor([1, 2]), tensor([1 + 1e-9, 2.1])).tolist(); // [true, false]
 * ```
 */
export function isclose(self: Tensor, other: Tensor, rtol: number, atol: number, equalNan: boolean): Tensor {
  if (self.dtype !== other.dtype) {
    throw new RuntimeError(`${self.dtype.scalarTypeName} did not match ${other.dtype.scalarTypeName}`);
  }
  if (!(rtol >= 0)) throw new RuntimeError(`rtol must be greater than or equal to zero, but got ${formatFloat(rtol)}`);
  if (!(atol >= 0)) throw new RuntimeError(`atol must be greater than or equal to zero, but got ${formatFloat(atol)}`);
  using temps = new Temporaries();
  let close = temps.track(self.eq(other));
  if (equalNan && self.dtype.isFloatingPoint) {
    const bothNan = temps.track(temps.track(self.isnan()).logicalAnd(temps.track(other.isnan())));
    close = temps.track(close.logicalOr(bothNan));
  }
  if ((rtol === 0 && atol === 0) || self.dtype.name === 'bool') return temps.keep(close);
  let a = self, b = other;
  if (!self.dtype.isFloatingPoint) {
    const d: DType = getDefaultDtype();
    a = temps.track(toDtype(self, d), self);
    b = temps.track(toDtype(other, d), other);
  }
  const allowed = temps.track(temps.track(temps.track(b.mul(rtol)).abs()).add(atol));
  const actual = temps.track(temps.track(a.sub(b)).abs());
  const within = temps.track(actual.le(allowed));
  const finite = temps.track(isfinite(actual));
  return close.logicalOr(temps.track(within.logicalAnd(finite)));
}

/** A float as c10 prints it in messages (`-1` prints as `-1`, `0.5` as `0.5`). */
function formatFloat(x: number): string {
  return String(x);
}

/**
 * `allclose(a, b, rtol, atol, equal_nan)`: whether `isclose` holds everywhere.
 *
 * @example
 * ```ts
 * import { allclose, tensor } from '../../mod.ts';
 * allclose(tensor([1, 2]), tensor([1, 2 + 1e-9])); // true
 * ```
 */
export function allclose(self: Tensor, other: Tensor, rtol: number, atol: number, equalNan: boolean): boolean {
  using temps = new Temporaries();
  const close = temps.track(isclose(self, other, rtol, atol, equalNan));
  return temps.track(close.all()).item() === true;
}

/**
 * `equal(a, b)`: same shape and every element equal (NaN is not equal to itself).
 *
 * @example
 * ```ts
 * import { equal, tensor } from '../../mod.ts';
 * equal(tensor([1, 2]), tensor([1, 2])); // true
 * ```
 */
export function equal(self: Tensor, other: Tensor): boolean {
  if (self.device !== other.device) {
    throw new RuntimeError(
      `Cannot compare two tensors on different devices. Got: ${self.device} and ${other.device}`,
    );
  }
  if (self.dtype !== other.dtype) {
    throw new RuntimeError(
      `Expected object of scalar type ${self.dtype.scalarTypeName} but got scalar type ${other.dtype.scalarTypeName} for argument 'other'`,
    );
  }
  const a = self.shape, b = other.shape;
  if (a.length !== b.length || a.some((s, i) => s !== b[i])) return false;
  using temps = new Temporaries();
  const same = temps.track(self.eq(other));
  return temps.track(same.all()).item() === true;
}
