/**
 * Shape rules of the convolution and pooling operators with PyTorch 1.13's checks and messages
 * (Convolution.cpp's `check_shape_forward`, Pool.h's `pool2d_shape_check`, `pooling_output_shape`), and the
 * 2-d geometry the CPU kernels take (a 1-d convolution is a 2-d one of height 1, as PyTorch runs it).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { int64 } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { checkSameDevice } from './meta_elementwise.ts';
import type { TensorMeta } from './op_decl.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;

/** PyTorch's `torch.FloatTensor`-style type name of a tensor. */
const typeName = (t: Tensor) => `torch.${t.dtype.scalarTypeName}Tensor`;

/**
 * The geometry of one convolution in the kernels' terms (input `[N, C, H, W]`, weight `[OC, C / groups, KH,
 * KW]`, output `[N, OC, OH, OW]`); for a transposed convolution these are the terms of the convolution whose
 * input gradient it is (its output is `[N, C, H, W]`, its input `[N, OC, OH, OW]`).
 *
 * @example
 * ```ts
 * import type { ConvGeometry } from './meta_conv.ts';
 * const g: Partial<ConvGeometry> = { N: 1, groups: 1 };
 * ```
 */
export interface ConvGeometry {
  readonly N: number;
  readonly C: number;
  readonly H: number;
  readonly W: number;
  readonly OC: number;
  readonly KH: number;
  readonly KW: number;
  readonly OH: number;
  readonly OW: number;
  readonly sh: number;
  readonly sw: number;
  readonly ph: number;
  readonly pw: number;
  readonly dh: number;
  readonly dw: number;
  readonly groups: number;
}

/** PyTorch's `expand_param_if_needed`: one value for every spatial dim, or exactly one per dim. */
function expandParam(values: readonly number[], name: string, dims: number): number[] {
  if (values.length === 1) return new Array<number>(dims).fill(values[0]);
  if (values.length !== dims) {
    throw new RuntimeError(
      `expected ${name} to be a single integer value or a list of ${dims} values to match the convolution ` +
        `dimensions, but got ${name}=${list(values)}`,
    );
  }
  return [...values];
}

/** The checked parameters of a convolution call and its output shape. */
export interface ConvParams {
  readonly stride: number[];
  readonly padding: number[];
  readonly dilation: number[];
  readonly outputPadding: number[];
  readonly outputShape: number[];
}

/**
 * `convolution`'s checks (PyTorch's `_convolution` and `check_shape_forward`, in its order) and output shape.
 * Inputs are batched (`[N, C, *spatial]`, 1 or 2 spatial dims).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { convolutionParams } from './meta_conv.ts';
 * convolutionParams(zeros([1, 3, 5, 5]), zeros([4, 3, 3, 3]), null, [1], [0], [1], false, [0], 1).outputShape;
 * // [1, 4, 3, 3]
 * ```
 */
export function convolutionParams(
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  transposed: boolean,
  outputPadding: readonly number[],
  groups: number,
): ConvParams {
  input.assertAlive('convolution');
  weight.assertAlive('convolution');
  checkSameDevice('convolution', bias === null ? [input, weight] : [input, weight, bias]);
  const k = weight.ndim, dims = k - 2;
  if (dims <= 0) throw new RuntimeError('weight should have at least three dimensions');
  const s = expandParam(stride, 'stride', dims), p = expandParam(padding, 'padding', dims);
  const d = expandParam(dilation, 'dilation', dims), op = expandParam(outputPadding, 'output_padding', dims);
  if (groups <= 0) throw new RuntimeError('non-positive groups is not supported');
  if (p.some((x) => x < 0)) throw new RuntimeError('negative padding is not supported');
  if (op.some((x) => x < 0)) throw new RuntimeError('negative output_padding is not supported');
  if (s.some((x) => x <= 0)) throw new RuntimeError('non-positive stride is not supported');
  if (d.some((x) => x <= 0)) throw new RuntimeError('non-positive dilation is not supported');
  const w = weight.shape;
  if (input.ndim !== k) {
    throw new RuntimeError(
      `Expected ${k}-dimensional input for ${k}-dimensional weight ${list(w)}, but got ${input.ndim}-dimensional ` +
        `input of size ${list(input.shape)} instead`,
    );
  }
  if (dims > 2) throw new RuntimeError(`convolution: ${dims}-d convolutions are not supported (1-d and 2-d are)`);
  if (w[0] < groups) {
    throw new RuntimeError(
      `Given groups=${groups}, expected weight to be at least ${groups} at dimension 0, but got weight of size ` +
        `${list(w)} instead`,
    );
  }
  if (w[0] % groups !== 0) {
    throw new RuntimeError(
      `Given groups=${groups}, expected weight to be divisible by ${groups} at dimension 0, but got weight of ` +
        `size [${list(w)}] instead`,
    );
  }
  const spatial = input.shape.slice(2), kernel = w.slice(2);
  let outputShape: number[];
  if (!transposed) {
    if (input.shape[1] !== w[1] * groups) {
      throw new RuntimeError(
        `Given groups=${groups}, weight of size ${list(w)}, expected input${list(input.shape)} to have ` +
          `${w[1] * groups} channels, but got ${input.shape[1]} channels instead`,
      );
    }
    if (bias !== null && (bias.ndim !== 1 || bias.shape[0] !== w[0])) {
      throw new RuntimeError(
        `Given weight of size ${list(w)}, expected bias to be 1-dimensional with ${w[0]} elements, but got bias ` +
          `of size ${list(bias.shape)} instead`,
      );
    }
    const padded = spatial.map((x, i) => x + 2 * p[i]);
    const effective = kernel.map((x, i) => d[i] * (x - 1) + 1);
    if (padded.some((x, i) => x < effective[i])) {
      throw new RuntimeError(
        `Calculated padded input size per channel: (${padded.join(' x ')}). Kernel size: (${
          effective.join(' x ')
        }). Kernel size can't be greater than actual input size`,
      );
    }
    outputShape = [input.shape[0], w[0], ...padded.map((x, i) => Math.floor((x - effective[i]) / s[i]) + 1)];
  } else {
    if (input.shape[1] !== w[0]) {
      throw new RuntimeError(
        `Given transposed=1, weight of size ${list(w)}, expected input${list(input.shape)} to have ${w[0]} ` +
          `channels, but got ${input.shape[1]} channels instead`,
      );
    }
    if (bias !== null && (bias.ndim !== 1 || bias.shape[0] !== w[1] * groups)) {
      throw new RuntimeError(
        `Given transposed=1, weight of size ${list(w)}, expected bias to be 1-dimensional with ${
          w[1] * groups
        } elements, but got bias of size ${list(bias.shape)} instead`,
      );
    }
    if (op.some((x, i) => x >= s[i] && x >= d[i])) {
      // PyTorch's message names the 2-d terms (a 1-d convolution runs as a 2-d one of height 1).
      const [oh, ow] = op.length === 1 ? [0, op[0]] : op, [sh, sw] = s.length === 1 ? [1, s[0]] : s;
      const [dh, dw] = d.length === 1 ? [1, d[0]] : d;
      throw new RuntimeError(
        `output padding must be smaller than either stride or dilation, but got output_padding_height: ${oh} ` +
          `output_padding_width: ${ow} stride_height: ${sh} stride_width: ${sw} dilation_height: ${dh} ` +
          `dilation_width: ${dw}`,
      );
    }
    const out = spatial.map((x, i) => (x - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op[i] + 1);
    if (out.some((x) => x <= 0)) {
      throw new RuntimeError(
        `Given input size per channel: (${spatial.join(' x ')}). Calculated output size per channel: (${
          out.join(' x ')
        }). Output size is too small`,
      );
    }
    outputShape = [input.shape[0], w[1] * groups, ...out];
  }
  // PyTorch 1.13 runs float32 through MKLDNN and float64 through its slow kernels, whose messages differ.
  const mkldnn = input.dtype.name === 'float32';
  for (const [t, what] of [[weight, 'weight'], [bias, 'bias']] as const) {
    if (t === null || t.dtype === input.dtype) continue;
    if (!mkldnn) {
      throw new RuntimeError(
        `expected scalar type ${input.dtype.scalarTypeName} but found ${t.dtype.scalarTypeName}`,
      );
    }
    throw new RuntimeError(
      what === 'weight'
        ? `Input type (${typeName(input)}) and weight type (${typeName(t)}) should be the same or input should ` +
          'be a MKLDNN tensor and weight is a dense tensor'
        : `Input type (${input.dtype.name.replace('32', '').replace('float64', 'double')}) and bias type (${
          t.dtype.name === 'float64' ? 'double' : t.dtype.name === 'float32' ? 'float' : t.dtype.name
        }) should be the same`,
    );
  }
  return { stride: s, padding: p, dilation: d, outputPadding: op, outputShape };
}

/**
 * Meta of `convolution`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { convolutionMeta } from './meta_conv.ts';
 * convolutionMeta(zeros([2, 4, 7]), zeros([6, 2, 3]), null, [2], [1], [1], false, [0], 2).shape; // [2, 6, 4]
 * ```
 */
export function convolutionMeta(
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  transposed: boolean,
  outputPadding: readonly number[],
  groups: number,
): TensorMeta {
  const p = convolutionParams(input, weight, bias, stride, padding, dilation, transposed, outputPadding, groups);
  return { shape: p.outputShape, dtype: input.dtype };
}

/**
 * The kernels' 2-d geometry of a checked convolution (a 1-d one is 2-d with height 1); `output` is the
 * convolution's output shape (for a transposed one: the shape of its result).
 *
 * @example
 * ```ts
 * import { convGeometry } from './meta_conv.ts';
 * const p = { stride: [1], padding: [0], dilation: [1], outputPadding: [0], outputShape: [1, 2, 3] };
 * convGeometry([1, 1, 5], [2, 1, 3], p, false, 1).OW; // 3
 * ```
 */
export function convGeometry(
  inputShape: readonly number[],
  weightShape: readonly number[],
  p: ConvParams,
  transposed: boolean,
  groups: number,
): ConvGeometry {
  const two = (xs: readonly number[], fill: number) => (xs.length === 1 ? [fill, xs[0]] : [xs[0], xs[1]]);
  const one = inputShape.length === 3;
  const lift = (shape: readonly number[]) => (one ? [shape[0], shape[1], 1, shape[2]] : [...shape]);
  const inS = lift(inputShape), outS = lift(p.outputShape), wS = lift(weightShape);
  const [sh, sw] = two(p.stride, 1), [ph, pw] = two(p.padding, 0), [dh, dw] = two(p.dilation, 1);
  // The convolution's own input and output; a transposed convolution reads the pair the other way round.
  const [x, y] = transposed ? [outS, inS] : [inS, outS];
  return {
    N: x[0],
    C: x[1],
    H: x[2],
    W: x[3],
    OC: y[1],
    KH: wS[2],
    KW: wS[3],
    OH: y[2],
    OW: y[3],
    sh,
    sw,
    ph,
    pw,
    dh,
    dw,
    groups,
  };
}

/**
 * Meta of `convolution_backward`: gradients shaped as the input, the weight and `bias_sizes`; an output not
 * asked for by `output_mask` is an empty tensor (PyTorch returns an undefined one).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { convolutionBackwardMeta } from './meta_conv.ts';
 * const x = zeros([1, 3, 5, 5]), w = zeros([4, 3, 3, 3]);
 * convolutionBackwardMeta(zeros([1, 4, 3, 3]), x, w, [4], [1], [0], [1], false, [0], 1, [true, true, true])[2].shape;
 * // [4]
 * ```
 */
export function convolutionBackwardMeta(
  gradOutput: Tensor,
  input: Tensor,
  weight: Tensor,
  biasSizes: readonly number[] | null,
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  transposed: boolean,
  outputPadding: readonly number[],
  groups: number,
  outputMask: readonly boolean[],
): readonly [TensorMeta, TensorMeta, TensorMeta] {
  gradOutput.assertAlive('convolution_backward');
  const p = convolutionParams(input, weight, null, stride, padding, dilation, transposed, outputPadding, groups);
  if (gradOutput.ndim !== p.outputShape.length || gradOutput.shape.some((s, i) => s !== p.outputShape[i])) {
    throw new RuntimeError(
      `Expected grad_output of size ${list(p.outputShape)} but got ${list(gradOutput.shape)} (while checking ` +
        `arguments for convolution_backward)`,
    );
  }
  if (gradOutput.dtype !== input.dtype) {
    throw new RuntimeError(
      `expected scalar type ${input.dtype.scalarTypeName} but found ${gradOutput.dtype.scalarTypeName}`,
    );
  }
  const dtype = input.dtype;
  const biasShape = biasSizes ?? [0];
  return [
    { shape: outputMask[0] ? input.shape : [0], dtype },
    { shape: outputMask[1] ? weight.shape : [0], dtype },
    { shape: outputMask[2] && biasSizes !== null ? biasShape : [0], dtype },
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Pooling.

/** PyTorch's `div_rtn` (division rounding toward negative infinity). */
const divRtn = (x: number, y: number) => Math.floor(x / y);

/**
 * PyTorch's `pooling_output_shape`: the output size of a pooling along one dim.
 *
 * @example
 * ```ts
 * import { poolingOutputShape } from './meta_conv.ts';
 * [poolingOutputShape(5, 2, 0, 2, 1, false), poolingOutputShape(5, 2, 0, 2, 1, true)]; // [2, 3]
 * ```
 */
export function poolingOutputShape(
  size: number,
  kernel: number,
  pad: number,
  stride: number,
  dilation: number,
  ceilMode: boolean,
): number {
  if (stride === 0) throw new RuntimeError('stride should not be zero');
  if (pad < 0) throw new RuntimeError(`pad must be non-negative, but got pad: ${pad}`);
  if (pad > Math.trunc(kernel / 2)) {
    throw new RuntimeError(`pad should be at most half of kernel size, but got pad=${pad} and kernel_size=${kernel}`);
  }
  let out = divRtn(size + 2 * pad - dilation * (kernel - 1) - 1 + (ceilMode ? stride - 1 : 0), stride) + 1;
  if (ceilMode && (out - 1) * stride >= size + pad) out--;
  return out;
}

/** The checked, expanded parameters of a 2-d pooling and the input viewed as planes. */
export interface Pool2d {
  readonly kh: number;
  readonly kw: number;
  readonly sh: number;
  readonly sw: number;
  readonly ph: number;
  readonly pw: number;
  readonly dh: number;
  readonly dw: number;
  /** Planes (N * C, or C unbatched), input height and width, output height and width. */
  readonly P: number;
  readonly H: number;
  readonly W: number;
  readonly OH: number;
  readonly OW: number;
  readonly outputShape: number[];
}

function pairArg(op: string, values: readonly number[], what: string, allowEmpty: boolean): number[] | null {
  if (values.length === 1) return [values[0], values[0]];
  if (values.length === 2) return [values[0], values[1]];
  if (values.length === 0 && allowEmpty) return null;
  throw new RuntimeError(`${op}: ${what}`);
}

/**
 * The checks of max_pool2d / avg_pool2d (their argument-count checks, then `pool2d_shape_check`) and geometry.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { pool2dParams } from './meta_conv.ts';
 * pool2dParams('max_pool2d', zeros([1, 2, 5, 5]), [2], [], [0], [1], false).outputShape; // [1, 2, 2, 2]
 * ```
 */
export function pool2dParams(
  op: 'max_pool2d' | 'avg_pool2d',
  input: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  ceilMode: boolean,
): Pool2d {
  input.assertAlive(op);
  const [kh, kw] = pairArg(op, kernelSize, 'kernel_size must either be a single int, or a tuple of two ints', false)!;
  const st = pairArg(op, stride, 'stride must either be omitted, a single int, or a tuple of two ints', true);
  const [sh, sw] = st ?? [kh, kw];
  const padText = op === 'max_pool2d'
    ? 'padding must be either be a single int, or a tuple of two ints'
    : 'padding must either be a single int, or a tuple of two ints';
  const [ph, pw] = pairArg(op, padding, padText, false)!;
  const [dh, dw] = pairArg(op, dilation, 'dilation must be either a single int, or a tuple of two ints', false)!;
  const nd = input.ndim;
  if (op === 'max_pool2d' && nd !== 3 && nd !== 4) {
    throw new RuntimeError('non-empty 3D or 4D (batch mode) tensor expected for input');
  }
  // avg_pool2d reads sizes -3, -2 and -1 first (PyTorch's IndexError for fewer dims).
  if (nd < 3) wrapDim(-3, nd);
  const s = input.shape;
  const H = s[nd - 2], W = s[nd - 1], C = s[nd - 3];
  // PyTorch computes the output size (with its own checks) before pool2d_shape_check.
  const OH = poolingOutputShape(H, kh, ph, sh, dh, ceilMode), OW = poolingOutputShape(W, kw, pw, sw, dw, ceilMode);
  if (kh <= 0 || kw <= 0) {
    throw new RuntimeError(`kernel size should be greater than zero, but got kH: ${kh} kW: ${kw}`);
  }
  if (sh <= 0 || sw <= 0) throw new RuntimeError(`stride should be greater than zero, but got dH: ${sh} dW: ${sw}`);
  if (dh <= 0 || dw <= 0) {
    throw new RuntimeError(`dilation should be greater than zero, but got dilationH: ${dh} dilationW: ${dw}`);
  }
  const validDims = s[nd - 3] !== 0 && s[nd - 2] !== 0;
  if (!((nd === 3 && validDims && s[2] !== 0) || (nd === 4 && validDims && s[3] !== 0))) {
    throw new RuntimeError(
      `Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:${list(s)}`,
    );
  }
  if (kw / 2 < pw || kh / 2 < ph) {
    throw new RuntimeError(
      `pad should be smaller than or equal to half of kernel size, but got padW = ${pw}, padH = ${ph}, kW = ${kw}, ` +
        `kH = ${kh}`,
    );
  }
  if (OW < 1 || OH < 1) {
    throw new RuntimeError(
      `Given input size: (${C}x${H}x${W}). Calculated output size: (${C}x${OH}x${OW}). Output size is too small`,
    );
  }
  const P = nd === 4 ? s[0] * C : C;
  return { kh, kw, sh, sw, ph, pw, dh, dw, P, H, W, OH, OW, outputShape: [...s.slice(0, nd - 2), OH, OW] };
}

/**
 * Meta of `max_pool2d_with_indices`: the pooled values and their int64 indices.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { maxPool2dWithIndicesMeta } from './meta_conv.ts';
 * maxPool2dWithIndicesMeta(zeros([2, 5, 5]), [2], [], [0], [1], false)[1].dtype.name; // 'int64'
 * ```
 */
export function maxPool2dWithIndicesMeta(
  self: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  ceilMode: boolean,
): readonly [TensorMeta, TensorMeta] {
  const p = pool2dParams('max_pool2d', self, kernelSize, stride, padding, dilation, ceilMode);
  return [{ shape: p.outputShape, dtype: self.dtype }, { shape: p.outputShape, dtype: int64 }];
}

/** Checks that a pooling gradient has the pooled shape. */
function checkGradShape(op: string, grad: Tensor, shape: readonly number[]): void {
  grad.assertAlive(op);
  if (grad.ndim !== shape.length || grad.shape.some((s, i) => s !== shape[i])) {
    throw new RuntimeError(`${op}: expected grad_output of size ${list(shape)}, but got ${list(grad.shape)}`);
  }
}

/**
 * Meta of `max_pool2d_with_indices_backward`: the input's shape.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { maxPool2dBackwardMeta } from './meta_conv.ts';
 * const x = zeros([1, 4, 4]);
 * maxPool2dBackwardMeta(zeros([1, 2, 2]), x, [2], [], [0], [1], false, zeros([1, 2, 2], { dtype: 'int64' })).shape;
 * // [1, 4, 4]
 * ```
 */
export function maxPool2dBackwardMeta(
  grad: Tensor,
  self: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  ceilMode: boolean,
  indices: Tensor,
): TensorMeta {
  const p = pool2dParams('max_pool2d', self, kernelSize, stride, padding, dilation, ceilMode);
  checkGradShape('max_pool2d_with_indices_backward', grad, p.outputShape);
  checkGradShape('max_pool2d_with_indices_backward', indices, p.outputShape);
  if (indices.dtype !== int64) {
    throw new RuntimeError(`expected scalar type Long but found ${indices.dtype.scalarTypeName}`);
  }
  if (grad.dtype !== self.dtype) {
    throw new RuntimeError(`expected scalar type ${self.dtype.scalarTypeName} but found ${grad.dtype.scalarTypeName}`);
  }
  return { shape: self.shape, dtype: self.dtype };
}

/** avg_pool2d's checks beyond the shared ones. */
function avgParams(
  self: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  ceilMode: boolean,
  divisorOverride: number | null,
): Pool2d {
  const p = pool2dParams('avg_pool2d', self, kernelSize, stride, padding, [1], ceilMode);
  if (divisorOverride !== null && divisorOverride === 0) throw new RuntimeError('divisor must be not zero');
  return p;
}

/**
 * The geometry of `avg_pool2d` (checked).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { avgPool2dParams } from './meta_conv.ts';
 * avgPool2dParams(zeros([1, 5, 5]), [3], [2], [1], false, null).OH; // 3
 * ```
 */
export const avgPool2dParams = avgParams;

/**
 * Meta of `avg_pool2d`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { avgPool2dMeta } from './meta_conv.ts';
 * avgPool2dMeta(zeros([1, 5, 5]), [2], [], [0], true, true, null).shape; // [1, 3, 3]
 * ```
 */
export function avgPool2dMeta(
  self: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  ceilMode: boolean,
  _countIncludePad: boolean,
  divisorOverride: number | null,
): TensorMeta {
  const p = avgParams(self, kernelSize, stride, padding, ceilMode, divisorOverride);
  return { shape: p.outputShape, dtype: self.dtype };
}

/**
 * Meta of `avg_pool2d_backward`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { avgPool2dBackwardMeta } from './meta_conv.ts';
 * avgPool2dBackwardMeta(zeros([1, 2, 2]), zeros([1, 4, 4]), [2], [], [0], false, true, null).shape; // [1, 4, 4]
 * ```
 */
export function avgPool2dBackwardMeta(
  grad: Tensor,
  self: Tensor,
  kernelSize: readonly number[],
  stride: readonly number[],
  padding: readonly number[],
  ceilMode: boolean,
  _countIncludePad: boolean,
  divisorOverride: number | null,
): TensorMeta {
  const p = avgParams(self, kernelSize, stride, padding, ceilMode, divisorOverride);
  checkGradShape('avg_pool2d_backward', grad, p.outputShape);
  if (grad.dtype !== self.dtype) {
    throw new RuntimeError(`expected scalar type ${self.dtype.scalarTypeName} but found ${grad.dtype.scalarTypeName}`);
  }
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * The checks of `_adaptive_avg_pool2d` (PyTorch's `adaptive_avg_pool2d_out_cpu_template`); returns the output
 * shape.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { adaptiveAvgPool2dShape } from './meta_conv.ts';
 * adaptiveAvgPool2dShape(zeros([2, 3, 7, 7]), [1, 1]); // [2, 3, 1, 1]
 * ```
 */
export function adaptiveAvgPool2dShape(self: Tensor, outputSize: readonly number[]): number[] {
  self.assertAlive('adaptive_avg_pool2d');
  if (outputSize.length !== 2) throw new RuntimeError('adaptive_avg_pool2d: output_size must be 2');
  const nd = self.ndim;
  if (nd !== 3 && nd !== 4) {
    throw new RuntimeError(`adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ${list(self.shape)}`);
  }
  for (let i = nd - 2; i < nd; i++) {
    if (self.shape[i] === 0) {
      throw new RuntimeError(
        `adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has ` +
          `sizes ${list(self.shape)} with dimension ${i} being empty`,
      );
    }
  }
  if (outputSize.some((x) => x < 0)) {
    throw new RuntimeError(
      `adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {${
        outputSize.join(', ')
      }}`,
    );
  }
  return [...self.shape.slice(0, nd - 2), outputSize[0], outputSize[1]];
}

/**
 * Meta of `_adaptive_avg_pool2d`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { adaptiveAvgPool2dMeta } from './meta_conv.ts';
 * adaptiveAvgPool2dMeta(zeros([3, 7, 7]), [2, 3]).shape; // [3, 2, 3]
 * ```
 */
export function adaptiveAvgPool2dMeta(self: Tensor, outputSize: readonly number[]): TensorMeta {
  return { shape: adaptiveAvgPool2dShape(self, outputSize), dtype: self.dtype };
}

/**
 * Meta of `_adaptive_avg_pool2d_backward`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { adaptiveAvgPool2dBackwardMeta } from './meta_conv.ts';
 * adaptiveAvgPool2dBackwardMeta(zeros([3, 1, 1]), zeros([3, 7, 7])).shape; // [3, 7, 7]
 * ```
 */
export function adaptiveAvgPool2dBackwardMeta(grad: Tensor, self: Tensor): TensorMeta {
  grad.assertAlive('adaptive_avg_pool2d_backward');
  self.assertAlive('adaptive_avg_pool2d_backward');
  if (grad.ndim !== self.ndim || grad.ndim < 3 || grad.shape.slice(0, -2).some((s, i) => s !== self.shape[i])) {
    throw new RuntimeError(
      `adaptive_avg_pool2d_backward: grad_output of size ${list(grad.shape)} does not match input ${list(self.shape)}`,
    );
  }
  if (grad.dtype !== self.dtype) {
    throw new RuntimeError(`expected scalar type ${self.dtype.scalarTypeName} but found ${grad.dtype.scalarTypeName}`);
  }
  return { shape: self.shape, dtype: self.dtype };
}

// ---------------------------------------------------------------------------------------------------------
// Batch norm.

/** Checks that every given tensor has `input`'s dtype (PyTorch's kernels' `expected scalar type` error). */
function checkSameDtype(input: Tensor, others: ReadonlyArray<Tensor | null>): void {
  for (const t of others) {
    if (t !== null && t.dtype !== input.dtype) {
      throw new RuntimeError(`expected scalar type ${input.dtype.scalarTypeName} but found ${t.dtype.scalarTypeName}`);
    }
  }
}

/** Checks a per-channel tensor of `C` elements. */
function checkChannels(name: string, C: number, t: Tensor | null): void {
  if (t !== null && t.numel !== C) throw new RuntimeError(`${name} should contain ${C} elements not ${t.numel}`);
}

/**
 * Meta of `native_batch_norm`: the output (the input's shape) and the saved mean and inverse standard deviation
 * (`[C]` in training, empty in evaluation, as PyTorch's CPU kernel returns them).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { nativeBatchNormMeta } from './meta_conv.ts';
 * nativeBatchNormMeta(zeros([4, 3, 2, 2]), null, null, null, null, true, 0.1, 1e-5)[1].shape; // [3]
 * ```
 */
export function nativeBatchNormMeta(
  input: Tensor,
  weight: Tensor | null,
  bias: Tensor | null,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  training: boolean,
  _momentum: number,
  _eps: number,
): readonly [TensorMeta, TensorMeta, TensorMeta] {
  input.assertAlive('native_batch_norm');
  const given = [weight, bias, runningMean, runningVar].filter((t): t is Tensor => t !== null);
  checkSameDevice('native_batch_norm', [input, ...given]);
  if (input.ndim < 2) {
    throw new RuntimeError(`native_batch_norm: expected an input with at least 2 dims, got ${list(input.shape)}`);
  }
  const C = input.shape[1];
  checkChannels('running_mean', C, runningMean);
  checkChannels('running_var', C, runningVar);
  checkChannels('weight', C, weight);
  checkChannels('bias', C, bias);
  if (!training && (runningMean === null || runningVar === null)) {
    throw new RuntimeError('running_mean must be defined in evaluation mode');
  }
  checkSameDtype(input, [weight, bias, runningMean, runningVar]);
  const saved = { shape: training ? [C] : [0], dtype: input.dtype };
  return [{ shape: input.shape, dtype: input.dtype }, saved, saved];
}

/**
 * Meta of `native_batch_norm_backward`: gradients shaped as the input, `[C]` and `[C]` (empty where
 * `output_mask` does not ask).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { nativeBatchNormBackwardMeta } from './meta_conv.ts';
 * const x = zeros([4, 3]), s = zeros([3]);
 * nativeBatchNormBackwardMeta(x, x, null, null, null, s, s, true, 1e-5, [true, true, false])[1].shape; // [3]
 * ```
 */
export function nativeBatchNormBackwardMeta(
  gradOut: Tensor,
  input: Tensor,
  weight: Tensor | null,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  saveMean: Tensor | null,
  saveInvstd: Tensor | null,
  train: boolean,
  _eps: number,
  outputMask: readonly boolean[],
): readonly [TensorMeta, TensorMeta, TensorMeta] {
  gradOut.assertAlive('native_batch_norm_backward');
  input.assertAlive('native_batch_norm_backward');
  if (gradOut.ndim !== input.ndim || gradOut.shape.some((s, i) => s !== input.shape[i])) {
    throw new RuntimeError(
      `native_batch_norm_backward: grad_out of size ${list(gradOut.shape)} does not match input ${list(input.shape)}`,
    );
  }
  if (input.ndim < 2) throw new RuntimeError('native_batch_norm_backward: expected an input with at least 2 dims');
  const C = input.shape[1];
  const stats = train ? [saveMean, saveInvstd] : [runningMean, runningVar];
  if (stats.some((t) => t === null)) {
    throw new RuntimeError(
      train
        ? 'native_batch_norm_backward: save_mean and save_invstd are required in training mode'
        : 'running_mean must be defined in evaluation mode',
    );
  }
  checkChannels('weight', C, weight);
  for (const t of stats) checkChannels(train ? 'save_mean' : 'running_mean', C, t);
  checkSameDtype(input, [gradOut, weight, ...stats]);
  const dtype = input.dtype;
  return [
    { shape: outputMask[0] ? input.shape : [0], dtype },
    { shape: outputMask[1] ? [C] : [0], dtype },
    { shape: outputMask[2] ? [C] : [0], dtype },
  ];
}
