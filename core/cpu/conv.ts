/**
 * CPU kernels of the convolution and pooling operators (kernels_as/conv.ts): operands are made contiguous,
 * the Meta function's checks run first, and every kernel call takes its addresses from the kernel boundary.
 * A convolution is im2col plus the packed gemm inside one wasm call per operator (Note [Convolution as gemm]
 * in kernels_as/conv.ts); a transposed convolution runs the same kernels with the roles of input and output
 * exchanged.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { type DType, int64 } from '../tensor/dtype.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { Temporaries } from '../ops/aten_call.ts';
import type { BatchNormBackendOpName, ConvBackendOpName } from '../ops/decl_conv.ts';
import {
  adaptiveAvgPool2dBackwardMeta,
  adaptiveAvgPool2dShape,
  avgPool2dBackwardMeta,
  avgPool2dParams,
  type ConvGeometry,
  convGeometry,
  convolutionBackwardMeta,
  convolutionParams,
  maxPool2dBackwardMeta,
  nativeBatchNormBackwardMeta,
  nativeBatchNormMeta,
  pool2dParams,
} from '../ops/meta_conv.ts';
import { KernelStatus } from './exports_elementwise.ts';
import { LinalgStatus } from './exports_linalg.ts';
import { castCpu, copyIntoCpu, emptyCpu } from './iterator.ts';
import { contiguousAddress, kernels, withWorkspace } from './boundary.ts';
import { checkStatus } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `t` itself when contiguous, else a contiguous copy (tracked by `temps`). */
function dense(t: Tensor, temps: Temporaries): Tensor {
  return t.isContiguous() ? t : temps.track(castCpu(t, t.dtype), t);
}

/** PyTorch's unsupported-dtype error for the convolution and pooling kernels (float32 and float64 only). */
function checkDtype(name: string, dtype: DType): void {
  if (dtype.name !== 'float32' && dtype.name !== 'float64') {
    checkStatus(KernelStatus.unsupported, name, dtype.scalarType);
  }
}

const CONV_NAME = 'slow_conv2d_cpu';

/** The geometry words every convolution kernel takes after the dtype. */
const geometryArgs = (g: ConvGeometry) =>
  [g.N, g.C, g.H, g.W, g.OC, g.KH, g.KW, g.OH, g.OW, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.groups] as const;

/** Runs `fn` with the workspace the convolution kernels need for `g`. */
function withConvWorkspace<T>(dtype: DType, g: ConvGeometry, fn: (work: number) => T): T {
  const bytes = kernels().conv2d_workspace_bytes(dtype.scalarType, ...geometryArgs(g));
  return withWorkspace(CONV_NAME, bytes, fn);
}

const inputCount = (g: ConvGeometry) => g.N * g.C * g.H * g.W;
const outputCount = (g: ConvGeometry) => g.N * g.OC * g.OH * g.OW;
const weightCount = (g: ConvGeometry) => g.OC * (g.C / g.groups) * g.KH * g.KW;

/** out = conv(x, w) (+ bias): x `[N, C, H, W]`, out `[N, OC, OH, OW]` in `g`'s terms. */
function forwardInto(dtype: DType, g: ConvGeometry, x: Tensor, w: Tensor, bias: Tensor | null, out: Tensor): void {
  if (outputCount(g) === 0) return;
  const code = dtype.scalarType;
  const px = contiguousAddress(x, CONV_NAME, inputCount(g)), pw = contiguousAddress(w, CONV_NAME, weightCount(g));
  const pb = bias === null ? 0 : contiguousAddress(bias, CONV_NAME, g.OC);
  const po = contiguousAddress(out, CONV_NAME, outputCount(g));
  const status = withConvWorkspace(
    dtype,
    g,
    (work) => kernels().conv2d_forward(code, ...geometryArgs(g), px, pw, pb, po, work),
  );
  checkStatus(status, CONV_NAME, code);
}

/** gradIn `[N, C, H, W]` from gradOut `[N, OC, OH, OW]` and the weight. */
function backwardInputInto(dtype: DType, g: ConvGeometry, gradOut: Tensor, w: Tensor, gradIn: Tensor): void {
  if (inputCount(g) === 0) return;
  const code = dtype.scalarType;
  const pg = contiguousAddress(gradOut, CONV_NAME, outputCount(g));
  const pw = contiguousAddress(w, CONV_NAME, weightCount(g));
  const pi = contiguousAddress(gradIn, CONV_NAME, inputCount(g));
  const status = withConvWorkspace(
    dtype,
    g,
    (work) => kernels().conv2d_backward_input(code, ...geometryArgs(g), pg, pw, pi, work),
  );
  checkStatus(status, CONV_NAME, code);
}

/** gradW `[OC, C / groups, KH, KW]` from gradOut and the input. */
function backwardWeightInto(dtype: DType, g: ConvGeometry, gradOut: Tensor, x: Tensor, gradW: Tensor): void {
  if (weightCount(g) === 0) return;
  const code = dtype.scalarType;
  const pg = contiguousAddress(gradOut, CONV_NAME, outputCount(g));
  const px = contiguousAddress(x, CONV_NAME, inputCount(g));
  const pw = contiguousAddress(gradW, CONV_NAME, weightCount(g));
  const status = withConvWorkspace(
    dtype,
    g,
    (work) => kernels().conv2d_backward_weight(code, ...geometryArgs(g), pg, px, pw, work),
  );
  checkStatus(status, CONV_NAME, code);
}

/** out[n, c, :] += bias[c] (sum = false) or bias[c] = sum of out[:, c, :] (sum = true); out `[N, C, HW]`. */
function channelBias(dtype: DType, sum: boolean, N: number, C: number, HW: number, out: Tensor, bias: Tensor): void {
  if (C === 0) return;
  const code = dtype.scalarType;
  const po = contiguousAddress(out, CONV_NAME, N * C * HW), pb = contiguousAddress(bias, CONV_NAME, C);
  checkStatus(kernels().conv_channel_bias(code, sum ? 1 : 0, N, C, HW, po, pb), CONV_NAME, code);
}

function convolution(
  _hi: number,
  _lo: number,
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: number[],
  padding: number[],
  dilation: number[],
  transposed: boolean,
  outputPadding: number[],
  groups: number,
): Tensor {
  const p = convolutionParams(input, weight, bias, stride, padding, dilation, transposed, outputPadding, groups);
  checkDtype(CONV_NAME, input.dtype);
  using temps = new Temporaries();
  const x = dense(input, temps), w = dense(weight, temps), b = bias === null ? null : dense(bias, temps);
  const g = convGeometry(input.shape, weight.shape, p, transposed, groups);
  return filledOrFreed(emptyCpu(p.outputShape, input.dtype), (out) => {
    if (!transposed) {
      forwardInto(input.dtype, g, x, w, b, out);
      return;
    }
    // The transposed convolution is the input gradient of the convolution `g` describes, plus its bias.
    backwardInputInto(input.dtype, g, x, w, out);
    if (b !== null && out.numel > 0) channelBias(input.dtype, false, g.N, g.C, g.H * g.W, out, b);
  });
}

function convolutionBackward(
  _hi: number,
  _lo: number,
  gradOutput: Tensor,
  input: Tensor,
  weight: Tensor,
  biasSizes: number[] | null,
  stride: number[],
  padding: number[],
  dilation: number[],
  transposed: boolean,
  outputPadding: number[],
  groups: number,
  outputMask: boolean[],
): [Tensor, Tensor, Tensor] {
  const metas = convolutionBackwardMeta(
    gradOutput,
    input,
    weight,
    biasSizes,
    stride,
    padding,
    dilation,
    transposed,
    outputPadding,
    groups,
    outputMask,
  );
  checkDtype(CONV_NAME, input.dtype);
  const p = convolutionParams(input, weight, null, stride, padding, dilation, transposed, outputPadding, groups);
  using temps = new Temporaries();
  const go = dense(gradOutput, temps), x = dense(input, temps), w = dense(weight, temps);
  const g = convGeometry(input.shape, weight.shape, p, transposed, groups);
  const dtype = input.dtype;
  const outputs: Tensor[] = [];
  try {
    for (const m of metas) outputs.push(emptyCpu(m.shape, m.dtype));
    const [gi, gw, gb] = outputs;
    if (!transposed) {
      if (outputMask[0]) backwardInputInto(dtype, g, go, w, gi);
      if (outputMask[1]) backwardWeightInto(dtype, g, go, x, gw);
      if (outputMask[2] && biasSizes !== null) channelBias(dtype, true, g.N, g.OC, g.OH * g.OW, go, gb);
    } else {
      // In `g`'s terms the transposed convolution's input is the gradient of an output and its output gradient
      // is the gradient of an input: its input gradient is a forward convolution of its output gradient, its
      // weight gradient the weight gradient of `g` with the roles of the two exchanged.
      if (outputMask[0]) forwardInto(dtype, g, go, w, null, gi);
      if (outputMask[1]) backwardWeightInto(dtype, g, x, go, gw);
      if (outputMask[2] && biasSizes !== null) channelBias(dtype, true, g.N, g.C, g.H * g.W, go, gb);
    }
    return [gi, gw, gb];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}

function maxPool2dWithIndices(
  _hi: number,
  _lo: number,
  self: Tensor,
  kernelSize: number[],
  stride: number[],
  padding: number[],
  dilation: number[],
  ceilMode: boolean,
): [Tensor, Tensor] {
  const p = pool2dParams('max_pool2d', self, kernelSize, stride, padding, dilation, ceilMode);
  checkDtype('max_pool2d', self.dtype);
  using temps = new Temporaries();
  const x = dense(self, temps);
  const out = emptyCpu(p.outputShape, self.dtype);
  let indices: Tensor | undefined;
  try {
    indices = emptyCpu(p.outputShape, int64);
    const n = p.P * p.OH * p.OW;
    if (n > 0) {
      const code = self.dtype.scalarType, name = 'max_pool2d';
      const status = kernels().max_pool2d_forward(
        code,
        p.P,
        p.H,
        p.W,
        p.OH,
        p.OW,
        p.kh,
        p.kw,
        p.sh,
        p.sw,
        p.ph,
        p.pw,
        p.dh,
        p.dw,
        contiguousAddress(x, name, p.P * p.H * p.W),
        contiguousAddress(out, name, n),
        contiguousAddress(indices, name, n),
      );
      checkStatus(status, name, code);
    }
    return [out, indices];
  } catch (e) {
    out.dispose();
    indices?.dispose();
    throw e;
  }
}

function maxPool2dBackward(
  _hi: number,
  _lo: number,
  grad: Tensor,
  self: Tensor,
  kernelSize: number[],
  stride: number[],
  padding: number[],
  dilation: number[],
  ceilMode: boolean,
  indices: Tensor,
): Tensor {
  maxPool2dBackwardMeta(grad, self, kernelSize, stride, padding, dilation, ceilMode, indices);
  const p = pool2dParams('max_pool2d', self, kernelSize, stride, padding, dilation, ceilMode);
  const name = 'max_pool2d_backward_out';
  checkDtype(name, self.dtype);
  using temps = new Temporaries();
  const g = dense(grad, temps), idx = dense(indices, temps);
  return filledOrFreed(emptyCpu(self.shape, self.dtype), (gradIn) => {
    const HW = p.H * p.W, Q = p.OH * p.OW;
    if (p.P * HW === 0) return;
    const code = self.dtype.scalarType;
    const status = kernels().max_pool2d_backward(
      code,
      p.P,
      HW,
      Q,
      contiguousAddress(g, name, p.P * Q),
      contiguousAddress(idx, name, p.P * Q),
      contiguousAddress(gradIn, name, p.P * HW),
    );
    if (status === LinalgStatus.targetOutOfBounds) {
      throw new RuntimeError(`${name}: found an invalid max index (outside [0, ${HW}) of its plane)`);
    }
    checkStatus(status, name, code);
  });
}

function avgPool2d(
  _hi: number,
  _lo: number,
  self: Tensor,
  kernelSize: number[],
  stride: number[],
  padding: number[],
  ceilMode: boolean,
  countIncludePad: boolean,
  divisorOverride: number | null,
): Tensor {
  const p = avgPool2dParams(self, kernelSize, stride, padding, ceilMode, divisorOverride);
  const name = 'avg_pool2d_out_frame';
  checkDtype(name, self.dtype);
  using temps = new Temporaries();
  const x = dense(self, temps);
  return filledOrFreed(emptyCpu(p.outputShape, self.dtype), (out) => {
    const n = p.P * p.OH * p.OW;
    if (n === 0) return;
    const code = self.dtype.scalarType;
    const status = kernels().avg_pool2d_forward(
      code,
      p.P,
      p.H,
      p.W,
      p.OH,
      p.OW,
      p.kh,
      p.kw,
      p.sh,
      p.sw,
      p.ph,
      p.pw,
      countIncludePad ? 1 : 0,
      divisorOverride ?? 0,
      contiguousAddress(x, name, p.P * p.H * p.W),
      contiguousAddress(out, name, n),
    );
    checkStatus(status, name, code);
  });
}

function avgPool2dBackward(
  _hi: number,
  _lo: number,
  grad: Tensor,
  self: Tensor,
  kernelSize: number[],
  stride: number[],
  padding: number[],
  ceilMode: boolean,
  countIncludePad: boolean,
  divisorOverride: number | null,
): Tensor {
  avgPool2dBackwardMeta(grad, self, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride);
  const p = avgPool2dParams(self, kernelSize, stride, padding, ceilMode, divisorOverride);
  const name = 'avg_pool2d_backward_out_frame';
  checkDtype(name, self.dtype);
  using temps = new Temporaries();
  const g = dense(grad, temps);
  return filledOrFreed(emptyCpu(self.shape, self.dtype), (gradIn) => {
    if (p.P * p.H * p.W === 0) return;
    const code = self.dtype.scalarType;
    const status = kernels().avg_pool2d_backward(
      code,
      p.P,
      p.H,
      p.W,
      p.OH,
      p.OW,
      p.kh,
      p.kw,
      p.sh,
      p.sw,
      p.ph,
      p.pw,
      countIncludePad ? 1 : 0,
      divisorOverride ?? 0,
      contiguousAddress(g, name, p.P * p.OH * p.OW),
      contiguousAddress(gradIn, name, p.P * p.H * p.W),
    );
    checkStatus(status, name, code);
  });
}

/** Planes, height and width of a 3-d or 4-d tensor. */
function planes(shape: readonly number[]): [number, number, number] {
  const nd = shape.length;
  return [nd === 4 ? shape[0] * shape[1] : shape[0], shape[nd - 2], shape[nd - 1]];
}

function adaptiveAvgPool2d(_hi: number, _lo: number, self: Tensor, outputSize: number[]): Tensor {
  const shape = adaptiveAvgPool2dShape(self, outputSize);
  const name = 'adaptive_avg_pool2d';
  checkDtype(name, self.dtype);
  using temps = new Temporaries();
  const x = dense(self, temps);
  return filledOrFreed(emptyCpu(shape, self.dtype), (out) => {
    const [P, H, W] = planes(self.shape), [OH, OW] = outputSize;
    if (P * OH * OW === 0) return;
    const code = self.dtype.scalarType;
    const status = kernels().adaptive_avg_pool2d(
      code,
      0,
      P,
      H,
      W,
      OH,
      OW,
      contiguousAddress(x, name, P * H * W),
      contiguousAddress(out, name, P * OH * OW),
    );
    checkStatus(status, name, code);
  });
}

function adaptiveAvgPool2dBackward(_hi: number, _lo: number, grad: Tensor, self: Tensor): Tensor {
  adaptiveAvgPool2dBackwardMeta(grad, self);
  const name = 'adaptive_avg_pool2d_backward_cpu';
  checkDtype(name, self.dtype);
  using temps = new Temporaries();
  const g = dense(grad, temps);
  return filledOrFreed(emptyCpu(self.shape, self.dtype), (gradIn) => {
    const [P, H, W] = planes(self.shape), OH = grad.shape[grad.ndim - 2], OW = grad.shape[grad.ndim - 1];
    if (P * H * W === 0) return;
    const code = self.dtype.scalarType;
    const status = kernels().adaptive_avg_pool2d(
      code,
      1,
      P,
      H,
      W,
      OH,
      OW,
      contiguousAddress(gradIn, name, P * H * W),
      contiguousAddress(g, name, P * OH * OW),
    );
    checkStatus(status, name, code);
  });
}

/** `[N, C, HW]` of a batch-norm input. */
function bnShape(input: Tensor): [number, number, number] {
  const N = input.shape[0], C = input.shape[1];
  return [N, C, N * C === 0 ? 0 : input.numel / (N * C)];
}

function nativeBatchNorm(
  _hi: number,
  _lo: number,
  input: Tensor,
  weight: Tensor | null,
  bias: Tensor | null,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  training: boolean,
  momentum: number,
  eps: number,
): [Tensor, Tensor, Tensor] {
  const metas = nativeBatchNormMeta(input, weight, bias, runningMean, runningVar, training, momentum, eps);
  const name = 'batch_norm';
  checkDtype(name, input.dtype);
  using temps = new Temporaries();
  const x = dense(input, temps);
  const w = weight === null ? null : dense(weight, temps), b = bias === null ? null : dense(bias, temps);
  // The running statistics are written in place: a non-contiguous one goes through a dense copy.
  const rm = runningMean === null ? null : dense(runningMean, temps);
  const rv = runningVar === null ? null : dense(runningVar, temps);
  const outputs: Tensor[] = [];
  try {
    for (const m of metas) outputs.push(emptyCpu(m.shape, m.dtype));
    const [out, saveMean, saveInvstd] = outputs;
    const [N, C, HW] = bnShape(input);
    if (C > 0) {
      const code = input.dtype.scalarType;
      const addr = (t: Tensor | null, n: number) => (t === null ? 0 : contiguousAddress(t, name, n));
      const status = kernels().batch_norm_forward(
        code,
        N,
        C,
        HW,
        contiguousAddress(x, name, N * C * HW),
        addr(w, C),
        addr(b, C),
        addr(rm, C),
        addr(rv, C),
        training ? 1 : 0,
        momentum,
        eps,
        contiguousAddress(out, name, N * C * HW),
        training ? contiguousAddress(saveMean, name, C) : 0,
        training ? contiguousAddress(saveInvstd, name, C) : 0,
      );
      checkStatus(status, name, code);
      if (training && rm !== null && rm !== runningMean) copyIntoCpu(runningMean!, rm);
      if (training && rv !== null && rv !== runningVar) copyIntoCpu(runningVar!, rv);
    }
    return [out, saveMean, saveInvstd];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}

function nativeBatchNormBackward(
  _hi: number,
  _lo: number,
  gradOut: Tensor,
  input: Tensor,
  weight: Tensor | null,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  saveMean: Tensor | null,
  saveInvstd: Tensor | null,
  train: boolean,
  eps: number,
  outputMask: boolean[],
): [Tensor, Tensor, Tensor] {
  const metas = nativeBatchNormBackwardMeta(
    gradOut,
    input,
    weight,
    runningMean,
    runningVar,
    saveMean,
    saveInvstd,
    train,
    eps,
    outputMask,
  );
  const name = 'batch_norm_backward_cpu';
  checkDtype(name, input.dtype);
  using temps = new Temporaries();
  const g = dense(gradOut, temps), x = dense(input, temps);
  const w = weight === null ? null : dense(weight, temps);
  const mean = dense((train ? saveMean : runningMean)!, temps);
  const spread = dense((train ? saveInvstd : runningVar)!, temps);
  const outputs: Tensor[] = [];
  try {
    for (const m of metas) outputs.push(emptyCpu(m.shape, m.dtype));
    const [gi, gw, gb] = outputs;
    const [N, C, HW] = bnShape(input);
    if (C > 0) {
      const code = input.dtype.scalarType, n = N * C * HW;
      const status = kernels().batch_norm_backward(
        code,
        N,
        C,
        HW,
        contiguousAddress(g, name, n),
        contiguousAddress(x, name, n),
        w === null ? 0 : contiguousAddress(w, name, C),
        contiguousAddress(mean, name, C),
        contiguousAddress(spread, name, C),
        train ? 1 : 0,
        eps,
        outputMask[0] ? contiguousAddress(gi, name, n) : 0,
        outputMask[1] ? contiguousAddress(gw, name, C) : 0,
        outputMask[2] ? contiguousAddress(gb, name, C) : 0,
      );
      checkStatus(status, name, code);
    }
    return [gi, gw, gb];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}

/**
 * CPU kernels of the convolution and pooling operators.
 *
 * @example
 * ```ts
 * import { CPU_CONV_KERNELS } from './conv.ts';
 * typeof CPU_CONV_KERNELS['convolution']; // 'function'
 * ```
 */
export const CPU_CONV_KERNELS: { readonly [K in ConvBackendOpName | BatchNormBackendOpName]: Kernel } = {
  'convolution': convolution as Kernel,
  'convolution_backward': convolutionBackward as Kernel,
  'max_pool2d_with_indices': maxPool2dWithIndices as Kernel,
  'max_pool2d_with_indices_backward': maxPool2dBackward as Kernel,
  'avg_pool2d': avgPool2d as Kernel,
  'avg_pool2d_backward': avgPool2dBackward as Kernel,
  '_adaptive_avg_pool2d': adaptiveAvgPool2d as Kernel,
  '_adaptive_avg_pool2d_backward': adaptiveAvgPool2dBackward as Kernel,
  'native_batch_norm': nativeBatchNorm as Kernel,
  'native_batch_norm_backward': nativeBatchNormBackward as Kernel,
};
