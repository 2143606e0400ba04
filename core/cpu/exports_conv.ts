/**
 * The typed surface of the convolution and pooling kernels (kernels_as/conv.ts). Tensors are contiguous NCHW;
 * pointers are byte offsets into the kernel memory, sizes element counts, dtypes PyTorch ScalarType codes
 * (float32 and float64; others give `KernelStatus.unsupported`). Every kernel returns a status.
 *
 * @example
 * ```ts
 * import type { ConvExports } from './exports_conv.ts';
 * type Forward = ConvExports['conv2d_forward'];
 * ```
 *
 * @module
 */

/** The geometry arguments every convolution kernel takes, in conv terms (input [N, C, H, W], out [N, OC, OH, OW]). */
type ConvGeometryArgs = [
  dtype: number,
  N: number,
  C: number,
  H: number,
  W: number,
  OC: number,
  KH: number,
  KW: number,
  OH: number,
  OW: number,
  sh: number,
  sw: number,
  ph: number,
  pw: number,
  dh: number,
  dw: number,
  groups: number,
];

/** Exports of kernels_as/conv.ts. */
export interface ConvExports {
  /** Workspace bytes for the convolution kernels of one geometry (0 for an unsupported dtype). */
  conv2d_workspace_bytes(...args: ConvGeometryArgs): number;
  /** out = conv(input, weight) + bias (bias 0 for none), by im2col and the packed gemm. */
  conv2d_forward(
    ...args: [...ConvGeometryArgs, input: number, weight: number, bias: number, out: number, work: number]
  ): number;
  /** gradIn (written whole) from gradOut and the weight. */
  conv2d_backward_input(
    ...args: [...ConvGeometryArgs, gradOut: number, weight: number, gradIn: number, work: number]
  ): number;
  /** gradW (written whole) from gradOut and the input. */
  conv2d_backward_weight(
    ...args: [...ConvGeometryArgs, gradOut: number, input: number, gradW: number, work: number]
  ): number;
  /** out[n, c, :] += bias[c] (`sum` 0), or bias[c] = sum of out[:, c, :] (`sum` 1). */
  conv_channel_bias(dtype: number, sum: number, N: number, C: number, HW: number, out: number, bias: number): number;
  /** Max pooling of P planes with int64 flat indices. */
  max_pool2d_forward(
    dtype: number,
    P: number,
    H: number,
    W: number,
    OH: number,
    OW: number,
    kh: number,
    kw: number,
    sh: number,
    sw: number,
    ph: number,
    pw: number,
    dh: number,
    dw: number,
    input: number,
    out: number,
    indices: number,
  ): number;
  /** Scatter-add of gradOut through the indices; an index outside a plane gives `LinalgStatus.targetOutOfBounds`. */
  max_pool2d_backward(
    dtype: number,
    P: number,
    HW: number,
    Q: number,
    gradOut: number,
    indices: number,
    gradIn: number,
  ): number;
  /** Average pooling of P planes. */
  avg_pool2d_forward(
    dtype: number,
    P: number,
    H: number,
    W: number,
    OH: number,
    OW: number,
    kh: number,
    kw: number,
    sh: number,
    sw: number,
    ph: number,
    pw: number,
    countIncludePad: number,
    divisor: number,
    input: number,
    out: number,
  ): number;
  /** Backward of average pooling (gradIn written whole). */
  avg_pool2d_backward(
    dtype: number,
    P: number,
    H: number,
    W: number,
    OH: number,
    OW: number,
    kh: number,
    kw: number,
    sh: number,
    sw: number,
    ph: number,
    pw: number,
    countIncludePad: number,
    divisor: number,
    gradOut: number,
    gradIn: number,
  ): number;
  /** Adaptive average pooling (`backward` 0: planes -> pooled; 1: pooled gradient -> planes, written whole). */
  adaptive_avg_pool2d(
    dtype: number,
    backward: number,
    P: number,
    H: number,
    W: number,
    OH: number,
    OW: number,
    planes: number,
    pooled: number,
  ): number;
  /** Batch norm over contiguous [N, C, HW] (training: batch statistics saved, running ones moved). */
  batch_norm_forward(
    dtype: number,
    N: number,
    C: number,
    HW: number,
    input: number,
    weight: number,
    bias: number,
    runningMean: number,
    runningVar: number,
    training: number,
    momentum: number,
    eps: number,
    out: number,
    saveMean: number,
    saveInvstd: number,
  ): number;
  /** Gradients of batch norm for the input, weight and bias (0 addresses: not wanted). */
  batch_norm_backward(
    dtype: number,
    N: number,
    C: number,
    HW: number,
    gradOut: number,
    input: number,
    weight: number,
    mean: number,
    varOrInvstd: number,
    training: number,
    eps: number,
    gradIn: number,
    gradWeight: number,
    gradBias: number,
  ): number;
}
