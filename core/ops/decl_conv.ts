/**
 * Declarations of the convolution, pooling and batch-norm operators, with PyTorch 1.13's schemas. The backend
 * operators (`convolution` and its backward, the pooling kernels and their backward) have CPU kernels
 * (core/cpu/conv.ts) and Meta functions (meta_conv.ts); the everyday names (`conv1d`, `conv2d` with numeric or
 * `'same'` / `'valid'` padding, `conv_transpose2d`, `max_pool2d`, `adaptive_avg_pool2d`, `batch_norm`) are
 * decompositions, as in PyTorch, so autograd differentiates them through the backend operators' formulas.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';
import {
  adaptiveAvgPool2dBackwardMeta,
  adaptiveAvgPool2dMeta,
  avgPool2dBackwardMeta,
  avgPool2dMeta,
  convolutionBackwardMeta,
  convolutionMeta,
  maxPool2dBackwardMeta,
  maxPool2dWithIndicesMeta,
  nativeBatchNormBackwardMeta,
  nativeBatchNormMeta,
} from './meta_conv.ts';
import type { MetaFn, OpDecl, OpImpl } from './op_decl.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;

function backend(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { function: false, ...extra, schema, kind: 'backend', meta, doc };
}

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/** `convolution` on an input with one more (batch) dim than `spatial + 1`, after PyTorch's rank check. */
function convNd(
  name: string,
  spatial: number,
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: readonly number[],
  padding: readonly number[],
  dilation: readonly number[],
  transposed: boolean,
  outputPadding: readonly number[],
  groups: number,
): Tensor {
  input.assertAlive(name);
  const unbatched = spatial + 1, batched = spatial + 2;
  if (input.ndim !== unbatched && input.ndim !== batched) {
    throw new RuntimeError(
      `Expected ${unbatched}D (unbatched) or ${batched}D (batched) input to ${name}, but got input of size: ${
        list(input.shape)
      }`,
    );
  }
  const op = aten('convolution');
  if (input.ndim === batched) {
    return op.call(input, weight, bias, stride, padding, dilation, transposed, outputPadding, groups) as Tensor;
  }
  using temps = new Temporaries();
  const x = temps.track(input.unsqueeze(0));
  const y = temps.track(
    op.call(x, weight, bias, stride, padding, dilation, transposed, outputPadding, groups) as Tensor,
  );
  return y.squeeze(0);
}

/** `conv{1,2}d` with `padding='valid'` / `'same'` (PyTorch's `_convolution_mode`). */
function convPaddingMode(
  name: string,
  spatial: number,
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: readonly number[],
  padding: string,
  dilation: readonly number[],
  groups: number,
): Tensor {
  if (padding === 'valid') return convNd(name, spatial, input, weight, bias, stride, [0], dilation, false, [0], groups);
  if (padding !== 'same') throw new RuntimeError(`Invalid padding string: '${padding}'`);
  if (stride.some((s) => s !== 1)) throw new RuntimeError("padding='same' is not supported for strided convolutions");
  weight.assertAlive(name);
  const k = weight.shape.slice(2);
  const d = dilation.length === 1 ? k.map(() => dilation[0]) : dilation;
  // Total padding d * (k - 1) per dim; an odd total puts the extra element on the right (PyTorch's choice).
  const total = k.map((kk, i) => d[i] * (kk - 1));
  const left = total.map((t) => Math.floor(t / 2));
  const asymmetric = total.map((t, i) => t - 2 * left[i]);
  if (asymmetric.every((a) => a === 0)) {
    return convNd(name, spatial, input, weight, bias, stride, left, d, false, [0], groups);
  }
  // Pad both sides by the right amount, then drop the first output of each asymmetric dim: output o of the
  // wider convolution starts at o - right = (o - 1) - left.
  const right = total.map((t, i) => t - left[i]);
  using temps = new Temporaries();
  let y = temps.track(convNd(name, spatial, input, weight, bias, stride, right, d, false, [0], groups));
  const rank = y.ndim;
  for (let i = 0; i < k.length; i++) {
    if (asymmetric[i] === 0) continue;
    const dim = rank - k.length + i;
    y = temps.track(y.narrow(dim, 1, y.shape[dim] - 1));
  }
  const out = y.contiguous();
  if (out === y) temps.keep(y);
  return out;
}

/** PyTorch's `check_dims_match_num_input_features`. */
function checkFeatures(name: string, expected: number, t: Tensor | null): void {
  if (t !== null && t.numel !== expected) {
    throw new RuntimeError(`${name} should contain ${expected} elements not ${t.numel}`);
  }
}

/**
 * `batch_norm`: normalises each channel (dim 1) of `[N, C, *]` by the batch statistics (training, updating the
 * running statistics in place with `momentum`, the variance unbiased as PyTorch does) or by the running
 * statistics (evaluation), then scales by `weight` and shifts by `bias`.
 */
function batchNorm(
  input: Tensor,
  weight: Tensor | null,
  bias: Tensor | null,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  training: boolean,
  momentum: number,
  eps: number,
  _cudnnEnabled: boolean,
): Tensor {
  input.assertAlive('batch_norm');
  if (input.ndim < 2) {
    throw new RuntimeError(`batch_norm: expected an input with at least 2 dims [N, C, *], got ${list(input.shape)}`);
  }
  const C = input.shape[1];
  // PyTorch's _batch_norm_impl_index checks the running statistics first, then weight and bias.
  checkFeatures('running_mean', C, runningMean);
  if (runningMean === null && !training) throw new RuntimeError('running_mean must be defined in evaluation mode');
  checkFeatures('running_var', C, runningVar);
  if (runningVar === null && !training) throw new RuntimeError('running_var must be defined in evaluation mode');
  checkFeatures('weight', C, weight);
  checkFeatures('bias', C, bias);
  // On the CPU the native kernel runs (float32 and float64; one pass per statistic, its own backward); other
  // devices run the decomposition below, which autograd differentiates through.
  if (input.device.type === 'cpu') {
    const [out, saveMean, saveInvstd] = aten('native_batch_norm').call(
      input,
      weight,
      bias,
      runningMean,
      runningVar,
      training,
      momentum,
      eps,
    ) as [Tensor, Tensor, Tensor];
    saveMean.dispose();
    saveInvstd.dispose();
    return out;
  }
  const dims = [0, ...Array.from({ length: input.ndim - 2 }, (_, i) => i + 2)];
  const view = input.shape.map((s, i) => (i === 1 ? s : 1));
  using temps = new Temporaries();
  let centred: Tensor, invStd: Tensor;
  if (training) {
    const count = input.numel / Math.max(C, 1);
    const mean = temps.track(input.mean(dims, true));
    centred = temps.track(input.sub(mean));
    const squares = temps.track(centred.mul(centred));
    const variance = temps.track(squares.mean(dims, true));
    invStd = temps.track(temps.track(variance.add(eps)).rsqrt());
    if (runningMean !== null || runningVar !== null) {
      noGrad(() => {
        using t = new Temporaries();
        if (runningMean !== null) {
          const m = t.track(t.track(mean.detach()).reshape([C]));
          const converted = t.track(m.to(runningMean.dtype), m);
          runningMean.mul_(1 - momentum).add_(converted, { alpha: momentum });
        }
        if (runningVar !== null) {
          const unbiased = count > 1 ? count / (count - 1) : Number.NaN;
          const v = t.track(t.track(t.track(variance.detach()).reshape([C])).mul(unbiased));
          const converted = t.track(v.to(runningVar.dtype), v);
          runningVar.mul_(1 - momentum).add_(converted, { alpha: momentum });
        }
      });
    }
  } else {
    const mean = temps.track(runningMean!.reshape(view));
    centred = temps.track(input.sub(mean));
    const variance = temps.track(runningVar!.reshape(view));
    invStd = temps.track(temps.track(variance.add(eps)).rsqrt());
  }
  let out = centred.mul(invStd);
  if (weight !== null) {
    const w = temps.track(weight.reshape(view));
    temps.track(out);
    out = out.mul(w);
  }
  if (bias !== null) {
    const b = temps.track(bias.reshape(view));
    temps.track(out);
    out = out.add(b);
  }
  return out;
}

/**
 * Names of the convolution and pooling operators with kernels of their own (on the CPU, core/cpu/conv.ts, and
 * on WebGPU, gpu/kernels/conv.ts and gpu/kernels/pool.ts).
 *
 * @example
 * ```ts
 * import type { ConvBackendOpName } from './decl_conv.ts';
 * const name: ConvBackendOpName = 'convolution';
 * ```
 */
export type ConvBackendOpName =
  | 'convolution'
  | 'convolution_backward'
  | 'max_pool2d_with_indices'
  | 'max_pool2d_with_indices_backward'
  | 'avg_pool2d'
  | 'avg_pool2d_backward'
  | '_adaptive_avg_pool2d'
  | '_adaptive_avg_pool2d_backward';

/**
 * Names of the batch-norm operators with kernels of their own (CPU only: `batch_norm` decomposes on other
 * devices, and other backends raise the dispatcher's missing-kernel error for these).
 *
 * @example
 * ```ts
 * import type { BatchNormBackendOpName } from './decl_conv.ts';
 * const name: BatchNormBackendOpName = 'native_batch_norm';
 * ```
 */
export type BatchNormBackendOpName = 'native_batch_norm' | 'native_batch_norm_backward';

/**
 * Names of the convolution, pooling and normalisation decompositions.
 *
 * @example
 * ```ts
 * import type { ConvCompositeOpName } from './decl_conv.ts';
 * const name: ConvCompositeOpName = 'conv2d';
 * ```
 */
export type ConvCompositeOpName =
  | 'conv1d'
  | 'conv1d.padding'
  | 'conv2d'
  | 'conv2d.padding'
  | 'conv_transpose1d'
  | 'conv_transpose2d.input'
  | 'max_pool2d'
  | 'adaptive_avg_pool2d'
  | 'batch_norm';

/**
 * Declarations of the convolution, pooling and batch-norm operators.
 *
 * @example
 * ```ts
 * import { CONV_OPS } from './decl_conv.ts';
 * CONV_OPS['conv2d'].kind; // 'composite-implicit'
 * ```
 */
export const CONV_OPS: { readonly [K in ConvBackendOpName | BatchNormBackendOpName | ConvCompositeOpName]: OpDecl } = {
  'convolution': backend(
    'convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, SymInt[] padding, int[] dilation, ' +
      'bool transposed, SymInt[] output_padding, int groups) -> Tensor',
    convolutionMeta,
    'A batched 1-d or 2-d convolution (or transposed convolution) with stride, padding, dilation and groups.',
    { function: 'convolution' },
  ),
  'convolution_backward': backend(
    'convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, int[] stride, ' +
      'SymInt[] padding, int[] dilation, bool transposed, SymInt[] output_padding, int groups, ' +
      'bool[3] output_mask) -> (Tensor, Tensor, Tensor)',
    convolutionBackwardMeta,
    'Gradients of `convolution` for its input, weight and bias (those `output_mask` asks for; the others are empty).',
  ),
  'max_pool2d_with_indices': backend(
    'max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, ' +
      'int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)',
    maxPool2dWithIndicesMeta,
    'Max pooling over the last two dims, with the flat index (h * W + w) of each maximum in its plane.',
    { function: 'maxPool2dWithIndices' },
  ),
  'max_pool2d_with_indices_backward': backend(
    'max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, ' +
      'int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor',
    maxPool2dBackwardMeta,
    'Gradient of max pooling: each output gradient added at the position its maximum came from.',
  ),
  'avg_pool2d': backend(
    'avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, ' +
      'bool count_include_pad=True, int? divisor_override=None) -> Tensor',
    avgPool2dMeta,
    'Average pooling over the last two dims.',
    { function: 'avgPool2d' },
  ),
  'avg_pool2d_backward': backend(
    'avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, ' +
      'bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor',
    avgPool2dBackwardMeta,
    'Gradient of average pooling.',
  ),
  '_adaptive_avg_pool2d': backend(
    '_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor',
    adaptiveAvgPool2dMeta,
    'Adaptive average pooling to `output_size` (the kernel behind `adaptive_avg_pool2d`).',
  ),
  '_adaptive_avg_pool2d_backward': backend(
    '_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor',
    adaptiveAvgPool2dBackwardMeta,
    'Gradient of adaptive average pooling.',
  ),
  'native_batch_norm': backend(
    'native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, ' +
      'bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)',
    nativeBatchNormMeta,
    'Batch norm over dim 1 with the saved batch mean and inverse standard deviation (running statistics updated in training).',
  ),
  'native_batch_norm_backward': backend(
    'native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, ' +
      'Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> ' +
      '(Tensor, Tensor, Tensor)',
    nativeBatchNormBackwardMeta,
    'Gradients of native_batch_norm for the input, weight and bias (those `output_mask` asks for; the others are empty).',
  ),
  'conv1d': composite(
    'conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, int[1] dilation=1, ' +
      'int groups=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: number[], d: number[], g: number) =>
      convNd('conv1d', 1, x, w, b, s, p, d, false, [0], g),
    '1-d convolution of `[N, C, L]` (or unbatched `[C, L]`) with a weight `[OC, C / groups, K]`.',
  ),
  'conv1d.padding': composite(
    'conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, str padding="valid", ' +
      'int[1] dilation=1, int groups=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: string, d: number[], g: number) =>
      convPaddingMode('conv1d', 1, x, w, b, s, p, d, g),
    "1-d convolution with `padding` 'valid' (none) or 'same' (output as long as the input; stride 1).",
  ),
  'conv2d': composite(
    'conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, ' +
      'int groups=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: number[], d: number[], g: number) =>
      convNd('conv2d', 2, x, w, b, s, p, d, false, [0], g),
    '2-d convolution of `[N, C, H, W]` (or unbatched `[C, H, W]`) with a weight `[OC, C / groups, KH, KW]`.',
  ),
  'conv2d.padding': composite(
    'conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, str padding="valid", ' +
      'int[2] dilation=1, int groups=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: string, d: number[], g: number) =>
      convPaddingMode('conv2d', 2, x, w, b, s, p, d, g),
    "2-d convolution with `padding` 'valid' (none) or 'same' (output as large as the input; stride 1).",
  ),
  'conv_transpose1d': composite(
    'conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, ' +
      'int[1] output_padding=0, int groups=1, int[1] dilation=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: number[], op: number[], g: number, d: number[]) =>
      convNd('conv_transpose1d', 1, x, w, b, s, p, d, true, op, g),
    '1-d transposed convolution (the gradient of conv1d for its input) with a weight `[C, OC / groups, K]`.',
  ),
  'conv_transpose2d.input': composite(
    'conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, ' +
      'int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor',
    (x: Tensor, w: Tensor, b: Tensor | null, s: number[], p: number[], op: number[], g: number, d: number[]) =>
      convNd('conv_transpose2d', 2, x, w, b, s, p, d, true, op, g),
    '2-d transposed convolution (the gradient of conv2d for its input) with a weight `[C, OC / groups, KH, KW]`.',
  ),
  'max_pool2d': composite(
    'max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, ' +
      'bool ceil_mode=False) -> Tensor',
    (self: Tensor, k: number[], s: number[], p: number[], d: number[], ceil: boolean) => {
      const [values, indices] = aten('max_pool2d_with_indices').call(self, k, s, p, d, ceil) as [Tensor, Tensor];
      indices.dispose();
      return values;
    },
    'Max pooling over the last two dims of `[N, C, H, W]` or `[C, H, W]` (stride defaults to the kernel size).',
  ),
  'adaptive_avg_pool2d': composite(
    'adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor',
    (self: Tensor, size: number[]) => aten('_adaptive_avg_pool2d').call(self, size) as Tensor,
    'Average pooling to a fixed `output_size`: window i of a dim spans [floor(i * In / Out), ceil((i + 1) * In / Out)).',
  ),
  'batch_norm': composite(
    'batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, ' +
      'bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor',
    batchNorm,
    'Batch normalisation over dim 1 of `[N, C, *]` (training: batch statistics, running statistics updated).',
  ),
};
