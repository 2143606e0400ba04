/**
 * CPU kernels of the pointwise activations with scalar parameters (`leaky_relu`, `elu`, `softplus`, `hardtanh`,
 * `mish`, `log_sigmoid`): one pass of `activation_contig` / `activation_strided` (kernels_as/activation.ts,
 * Note [Activation kernels]) over any layout, split across the intra-op pool like the other elementwise ops.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../dispatch/errors.ts';
import type { ActivationKernelOpName } from '../ops/decl_activations.ts';
import {
  binaryCrossEntropy as bceComposite,
  hardtanh as hardtanhComposite,
  huberLoss as huberComposite,
  smoothL1Loss as smoothL1Composite,
} from '../ops/activation_composites.ts';
import { LossReduction } from '../ops/meta_nn.ts';
import { outputStridesOf } from '../ops/output_layout.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { contiguousAddress, kernels } from './boundary.ts';
import { ActivationOp, LossOp } from './exports_elementwise.ts';
import { emptyCpu, emptyStridedCpu, planElementwise } from './iterator.ts';
import { itemSizesOf, splitElementwise, splitsElementwise } from './parallel.ts';
import { checkStatus } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** float32, float64, bfloat16: PyTorch's AT_DISPATCH_FLOATING_TYPES_AND(BFloat16) for these kernels. */
function checkDtype(self: Tensor, kernel: string): void {
  const d = self.dtype.name;
  if (d !== 'float32' && d !== 'float64' && d !== 'bfloat16') {
    throw new NotImplementedError(`"${kernel}" not implemented for '${self.dtype.scalarTypeName}'`);
  }
}

/** A Scalar argument as a number (Bool counts as 0 / 1), with PyTorch's message for anything else. */
function scalarArg(op: string, name: string, value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return Number(value);
  throw new TypeError(`${op}(): argument '${name}' must be Number, not ${value === null ? 'None' : typeof value}`);
}

/** `op(self; p0, p1, p2)` into a new tensor laid out like `self`. */
function runActivation(kernel: string, op: number, self: Tensor, p0: number, p1: number, p2: number): Tensor {
  checkDtype(self, kernel);
  const strides = outputStridesOf(self.shape, self);
  const out = strides === undefined
    ? emptyCpu(self.shape, self.dtype)
    : emptyStridedCpu(self.shape, strides, self.dtype);
  const numel = out.numel;
  if (numel === 0) return out;
  try {
    const k = kernels();
    const code = self.dtype.scalarType;
    let status: number;
    if (self.isContiguous() && out.isContiguous()) {
      const o = contiguousAddress(out, kernel, numel);
      const a = contiguousAddress(self, kernel, numel);
      status = splitsElementwise(numel)
        ? splitElementwise('activation', [op, code, o, a, 0, p0, p1, p2], itemSizesOf(out, self), numel)
        : k.activation_contig(op, code, o, a, numel, p0, p1, p2);
    } else {
      const plan = planElementwise(kernel, out.shape, [out, self]);
      const [o, a] = plan.ptrs;
      status = splitsElementwise(numel)
        ? splitElementwise('activation', [op, code, o, a, 0, p0, p1, p2], itemSizesOf(out, self), numel, plan)
        : plan.contiguous
        ? k.activation_contig(op, code, o, a, numel, p0, p1, p2)
        : k.activation_strided(op, code, o, a, plan.desc, p0, p1, p2);
    }
    checkStatus(status, kernel, code);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

function leakyRelu(_hi: number, _lo: number, self: Tensor, negativeSlope: unknown): Tensor {
  const slope = scalarArg('leaky_relu', 'negative_slope', negativeSlope);
  return runActivation('leaky_relu_cpu', ActivationOp.leakyRelu, self, slope, 0, 0);
}

function elu(_hi: number, _lo: number, self: Tensor, alpha: unknown, scale: unknown, inputScale: unknown): Tensor {
  const a = scalarArg('elu', 'alpha', alpha);
  const s = scalarArg('elu', 'scale', scale);
  const is = scalarArg('elu', 'input_scale', inputScale);
  return runActivation('elu_cpu', ActivationOp.elu, self, a, s, is);
}

function softplus(_hi: number, _lo: number, self: Tensor, beta: unknown, threshold: unknown): Tensor {
  const b = scalarArg('softplus', 'beta', beta);
  const t = scalarArg('softplus', 'threshold', threshold);
  return runActivation('softplus_cpu', ActivationOp.softplus, self, b, t, 0);
}

function hardtanh(_hi: number, _lo: number, self: Tensor, minVal: unknown, maxVal: unknown): Tensor {
  const lo = scalarArg('hardtanh', 'min_val', minVal);
  const hi = scalarArg('hardtanh', 'max_val', maxVal);
  const d = self.dtype.name;
  // hardtanh is clamp in PyTorch: integer dtypes (and its refusals) go through clamp's kernel.
  if (d !== 'float32' && d !== 'float64' && d !== 'bfloat16') return hardtanhComposite(self, lo, hi);
  return runActivation('clamp_scalar_cpu', ActivationOp.hardtanh, self, lo, hi, 0);
}

function mish(_hi: number, _lo: number, self: Tensor): Tensor {
  return runActivation('mish_cpu', ActivationOp.mish, self, 0, 0, 0);
}

function logSigmoid(_hi: number, _lo: number, self: Tensor): Tensor {
  return runActivation('log_sigmoid_cpu', ActivationOp.logSigmoid, self, 0, 0, 0);
}

// ---- pointwise losses ----------------------------------------------------------------------------------------------

/** Whether the loss kernel takes these operands: one float dtype of the kernel's, the same shape. */
function lossFastPath(self: Tensor, target: Tensor): boolean {
  const d = self.dtype.name;
  if (target.dtype !== self.dtype || (d !== 'float32' && d !== 'float64' && d !== 'bfloat16')) return false;
  const a = self.shape, b = target.shape;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The elementwise loss `op(self, target; p0)` into a new tensor laid out like `self`. */
function runLoss(name: string, op: number, self: Tensor, target: Tensor, p0: number): Tensor {
  const strides = outputStridesOf(self.shape, self, target);
  const out = strides === undefined
    ? emptyCpu(self.shape, self.dtype)
    : emptyStridedCpu(self.shape, strides, self.dtype);
  const numel = out.numel;
  if (numel === 0) return out;
  try {
    const k = kernels();
    const code = self.dtype.scalarType;
    const plan = planElementwise(name, out.shape, [out, self, target]);
    const [o, a, b] = plan.ptrs;
    const status = splitsElementwise(numel)
      ? splitElementwise('loss', [op, code, o, a, b, 0, p0], itemSizesOf(out, self, target), numel, plan)
      : plan.contiguous
      ? k.loss_contig(op, code, o, a, b, numel, p0)
      : k.loss_strided(op, code, o, a, b, plan.desc, p0);
    if (status === LossOp.outOfRange) throw new RuntimeError('all elements of input should be between 0 and 1');
    checkStatus(status, name, code);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

/** PyTorch's `apply_loss_reduction`: the elementwise loss itself, its mean or its sum (consuming it). */
function applyReduction(loss: Tensor, reduction: number): Tensor {
  if (reduction === LossReduction.none) return loss;
  try {
    return reduction === LossReduction.mean ? loss.mean() : loss.sum();
  } finally {
    loss.dispose();
  }
}

function smoothL1Loss(_hi: number, _lo: number, self: Tensor, target: Tensor, reduction: number, beta: number): Tensor {
  if (!(beta > 0) || !lossFastPath(self, target)) return smoothL1Composite(self, target, reduction, beta);
  return applyReduction(runLoss('smooth_l1_loss', LossOp.smoothL1, self, target, beta), reduction);
}

function huberLoss(_hi: number, _lo: number, self: Tensor, target: Tensor, reduction: number, delta: number): Tensor {
  if (!(delta > 0) || !lossFastPath(self, target)) return huberComposite(self, target, reduction, delta);
  return applyReduction(runLoss('huber_loss', LossOp.huber, self, target, delta), reduction);
}

function binaryCrossEntropy(
  _hi: number,
  _lo: number,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
): Tensor {
  if (!lossFastPath(self, target)) return bceComposite(self, target, weight, reduction);
  let loss = runLoss('binary_cross_entropy', LossOp.bce, self, target, 0);
  if (weight !== null) {
    try {
      const weighted = loss.mul(weight);
      loss.dispose();
      loss = weighted;
    } catch (e) {
      loss.dispose();
      throw e;
    }
  }
  return applyReduction(loss, reduction);
}

/**
 * The CPU kernels of the activations and pointwise losses, keyed by operator name.
 *
 * @example
 * ```ts
 * import { CPU_ACTIVATION_KERNELS } from './activations.ts';
 * typeof CPU_ACTIVATION_KERNELS['softplus']; // 'function'
 * ```
 */
export const CPU_ACTIVATION_KERNELS: { readonly [K in ActivationKernelOpName]: Kernel } = {
  'leaky_relu': leakyRelu as Kernel,
  'elu': elu as Kernel,
  'softplus': softplus as Kernel,
  'hardtanh': hardtanh as Kernel,
  'mish': mish as Kernel,
  'log_sigmoid': logSigmoid as Kernel,
  'binary_cross_entropy': binaryCrossEntropy as Kernel,
  'smooth_l1_loss': smoothL1Loss as Kernel,
  'huber_loss': huberLoss as Kernel,
};
