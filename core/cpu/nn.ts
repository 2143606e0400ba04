/**
 * CPU kernels of the NN operators: softmax / log-softmax and their backward over a contiguous `[outer, R,
 * inner]` view of the input (R the softmax dim), and nll_loss forward / backward over `[N, C]`
 * log-probabilities (kernels_as/softmax.ts).
 *
 * @module
 */
import { float16, int64 } from '../tensor/dtype.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import { numelOf, wrapDim } from '../tensor/shape.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { NnBackendOpName } from '../ops/decl_nn.ts';
import { checkSameScalarType } from '../ops/meta_linalg.ts';
import {
  checkNllDtypes,
  nllLossBackwardShapes,
  nllLossForwardShapes,
  softmaxBackwardMeta,
  softmaxMeta,
} from '../ops/meta_nn.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { Temporaries } from '../ops/aten_call.ts';
import { KernelStatus } from './exports_elementwise.ts';
import { LinalgStatus } from './exports_linalg.ts';
import { castCpu, emptyCpu } from './iterator.ts';
import { contiguousAddress, kernels } from './boundary.ts';
import { splitOuter, splitsElementwise } from './parallel.ts';
import { checkStatus } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `t` itself when contiguous and of `dtype`, else a contiguous copy of that dtype (the caller frees it). */
function dense(t: Tensor, dtype: DType = t.dtype): Tensor {
  return t.dtype === dtype && t.isContiguous() ? t : castCpu(t, dtype);
}

/** `[outer, R, inner]` of a softmax over `dim` (a 0-d tensor is one element). */
function softmaxBlocks(shape: readonly number[], dim: number): [number, number, number] {
  if (shape.length === 0) return [1, 1, 1];
  const d = wrapDim(dim, shape.length);
  return [numelOf(shape.slice(0, d)), shape[d], numelOf(shape.slice(d + 1))];
}

/** PyTorch's kernel names, which its unsupported-dtype messages quote (log_softmax's non-last-dim one too). */
function softmaxKernelName(log: boolean, backward: boolean, shape: readonly number[], dim: number): string {
  const lastDim = shape.length === 0 || wrapDim(dim, shape.length) === shape.length - 1;
  const base = backward ? 'softmax_backward' : 'softmax';
  if (!lastDim) return log && backward ? 'log_softmax_backward_kernel_impl' : `${base}_kernel_impl`;
  return `${log ? 'log_' : ''}${base}_lastdim_kernel_impl`;
}

function checkFloating(name: string, dtype: DType): void {
  if (!dtype.isFloatingPoint) checkStatus(KernelStatus.unsupported, name, dtype.scalarType);
}

function softmaxForward(log: boolean): Kernel {
  const op = log ? '_log_softmax' : '_softmax';
  return ((_hi: number, _lo: number, self: Tensor, dim: number, halfToFloat: boolean) => {
    const m = softmaxMeta(op, self, dim, halfToFloat);
    if (halfToFloat) throw new RuntimeError('softmax with half to float conversion is not supported on CPU');
    checkFloating(softmaxKernelName(log, false, self.shape, dim), self.dtype);
    using temps = new Temporaries();
    const input = temps.track(dense(self), self);
    return filledOrFreed(emptyCpu(m.shape, m.dtype), (out) => {
      const [outer, R, inner] = softmaxBlocks(self.shape, dim);
      if (outer * R * inner > 0) {
        const code = self.dtype.scalarType, n = outer * R * inner;
        const o = contiguousAddress(out, op, n), a = contiguousAddress(input, op, n);
        const row = R * inner * self.dtype.itemSize;
        const status = splitsElementwise(n) && outer > 1
          ? splitOuter('softmax', [code, o, a, outer, R, inner, log ? 1 : 0], [[1, row], [2, row]], 3)
          : kernels().softmax(code, o, a, outer, R, inner, log ? 1 : 0);
        checkStatus(status, op, code);
      }
    });
  }) as Kernel;
}

function softmaxBackward(log: boolean): Kernel {
  return ((_hi: number, _lo: number, grad: Tensor, output: Tensor, dim: number, inputDtype: DType) => {
    const m = softmaxBackwardMeta(grad, output, dim, inputDtype);
    checkFloating(softmaxKernelName(log, true, grad.shape, dim), grad.dtype);
    checkSameScalarType(grad.dtype, output.dtype);
    using temps = new Temporaries();
    const g = temps.track(dense(grad), grad), y = temps.track(dense(output), output);
    const result = emptyCpu(grad.shape, grad.dtype);
    try {
      const [outer, R, inner] = softmaxBlocks(grad.shape, dim);
      if (outer * R * inner > 0) {
        const code = grad.dtype.scalarType, n = outer * R * inner;
        const name = log ? '_log_softmax_backward_data' : '_softmax_backward_data';
        const o = contiguousAddress(result, name, n), pg = contiguousAddress(g, name, n);
        const py = contiguousAddress(y, name, n), row = R * inner * grad.dtype.itemSize;
        const status = splitsElementwise(n) && outer > 1
          ? splitOuter('softmax_backward', [code, o, pg, py, outer, R, inner, log ? 1 : 0], [[1, row], [2, row], [
            3,
            row,
          ]], 4)
          : kernels().softmax_backward(code, o, pg, py, outer, R, inner, log ? 1 : 0);
        checkStatus(status, name, code);
      }
      if (m.dtype === result.dtype) return result;
      // PyTorch's half_to_float backward: a float32 gradient of a float16 input comes back as float16.
      const converted = castCpu(result, float16);
      result.dispose();
      return converted;
    } catch (e) {
      result.dispose();
      throw e;
    }
  }) as Kernel;
}

/** PyTorch's message for the first target outside `[0, C)` that is not `ignoreIndex`. */
function throwTargetOutOfBounds(target: Tensor, classes: number, ignoreIndex: number): never {
  for (const v of target.toArray() as number[]) {
    if (v !== ignoreIndex && (v < 0 || v >= classes)) throw new RangeError(`Target ${v} is out of bounds.`);
  }
  throw new RangeError('Target is out of bounds.');
}

/** The nll_loss operands as the kernel reads them: dense, int64 targets, weights of the input's dtype. */
function nllOperands(self: Tensor, target: Tensor, weight: Tensor | null, temps: Temporaries) {
  const logp = temps.track(dense(self), self);
  const t = temps.track(dense(target, int64), target);
  const w = weight === null ? null : temps.track(dense(weight), weight);
  const classes = self.shape[self.ndim - 1];
  const batch = self.ndim === 2 ? self.shape[0] : 1;
  return { logp, t, w, classes, batch };
}

function nllLossForward(
  _hi: number,
  _lo: number,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): [Tensor, Tensor] {
  const [outMeta, totalMeta] = nllLossForwardShapes(self, target, weight, reduction);
  checkFloating('nll_loss_out_frame', self.dtype);
  checkNllDtypes(self, target, weight);
  using temps = new Temporaries();
  const ops = nllOperands(self, target, weight, temps);
  const outputs: Tensor[] = [];
  try {
    const output = emptyCpu(outMeta.shape, outMeta.dtype);
    outputs.push(output);
    const totalWeight = emptyCpu(totalMeta.shape, totalMeta.dtype);
    outputs.push(totalWeight);
    const code = self.dtype.scalarType, name = 'nll_loss_out_frame', { batch, classes } = ops;
    const status = kernels().nll_loss_forward(
      code,
      contiguousAddress(output, name, reduction === 0 ? batch : 1),
      contiguousAddress(totalWeight, name, 1),
      contiguousAddress(ops.logp, name, batch * classes),
      contiguousAddress(ops.t, name, batch),
      ops.w === null ? 0 : contiguousAddress(ops.w, name, classes),
      ops.batch,
      ops.classes,
      reduction,
      BigInt(ignoreIndex),
    );
    if (status === LinalgStatus.targetOutOfBounds) throwTargetOutOfBounds(ops.t, ops.classes, ignoreIndex);
    checkStatus(status, 'nll_loss_out_frame', code);
    return [output, totalWeight];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}

function nllLossBackward(
  _hi: number,
  _lo: number,
  gradOutput: Tensor,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
  totalWeight: Tensor,
): Tensor {
  const m = nllLossBackwardShapes(gradOutput, self, target, weight, reduction, totalWeight);
  checkFloating('nll_loss_backward_out_frame', self.dtype);
  checkNllDtypes(self, target, weight);
  checkSameScalarType(self.dtype, gradOutput.dtype);
  using temps = new Temporaries();
  const ops = nllOperands(self, target, weight, temps);
  const g = temps.track(dense(gradOutput), gradOutput);
  const tw = temps.track(dense(totalWeight, self.dtype), totalWeight);
  const gradInput = emptyCpu(m.shape, m.dtype);
  try {
    const code = self.dtype.scalarType, name = 'nll_loss_backward_out_frame', { batch, classes } = ops;
    const status = kernels().nll_loss_backward(
      code,
      contiguousAddress(gradInput, name, batch * classes),
      contiguousAddress(g, name, reduction === 0 ? batch : 1),
      contiguousAddress(ops.t, name, batch),
      ops.w === null ? 0 : contiguousAddress(ops.w, name, classes),
      contiguousAddress(tw, name, 1),
      ops.batch,
      ops.classes,
      reduction,
      BigInt(ignoreIndex),
    );
    if (status === LinalgStatus.targetOutOfBounds) throwTargetOutOfBounds(ops.t, ops.classes, ignoreIndex);
    checkStatus(status, 'nll_loss_backward_out_frame', code);
  } catch (e) {
    gradInput.dispose();
    throw e;
  }
  return gradInput;
}

/**
 * CPU kernels of the NN operators.
 *
 * @example
 * ```ts
 * import { CPU_NN_KERNELS } from './nn.ts';
 * typeof CPU_NN_KERNELS['_softmax']; // 'function'
 * ```
 */
export const CPU_NN_KERNELS: { readonly [K in NnBackendOpName]: Kernel } = {
  '_softmax': softmaxForward(false),
  '_log_softmax': softmaxForward(true),
  '_softmax_backward_data': softmaxBackward(false),
  '_log_softmax_backward_data': softmaxBackward(true),
  'nll_loss_forward': nllLossForward as Kernel,
  'nll_loss_backward': nllLossBackward as Kernel,
};
