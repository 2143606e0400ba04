/**
 * WebGPU kernels of 2-d pooling: `max_pool2d_with_indices`, `avg_pool2d`, `_adaptive_avg_pool2d` and their
 * backward operators, over `[N, C, H, W]` or `[C, H, W]` inputs read through their strides.
 *
 * Note [GPU pooling]
 * The forward kernels run one invocation per output element, looping over its window in the order the CPU
 * kernels do (so ties and NaN pick the same maximum, and sums round the same way). The backward kernels gather
 * instead of scattering: one invocation per input element loops over the outputs whose windows can contain it
 * (a range computed from the geometry) and adds their contributions in output order, so no two invocations
 * write the same element, no atomics are needed and the result is deterministic and equal to the CPU's. Max
 * pooling's backward adds the gradient of each output whose recorded index is this element, as PyTorch's CUDA
 * kernel does; an index outside its plane is a device-side error (Note [Device-side errors] in
 * gpu/commands.ts) checked by a pass over the indices. An index inside its plane but outside its window (never
 * produced by the forward kernel) contributes nothing here, where the CPU kernel adds it anyway.
 *
 * @module
 */
import { int64 } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import {
  adaptiveAvgPool2dBackwardMeta,
  adaptiveAvgPool2dShape,
  avgPool2dBackwardMeta,
  avgPool2dParams,
  maxPool2dBackwardMeta,
  type Pool2d,
  pool2dParams,
} from '../../core/ops/meta_conv.ts';
import { type BoundOperand, KernelBindings } from '../boundary.ts';
import { DeviceError, kernelId } from '../commands.ts';
import type { GpuRuntime } from '../runtime.ts';
import { emptyGpu } from '../tensors.ts';
import { loadWgsl, storeWgsl } from '../wgsl/dtypes.ts';
import { at4, checkConvDtype, lift4 } from './conv.ts';
import { runItems } from './custom.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** A pooling operand bound as 4-d (`[C, H, W]` read as `[1, C, H, W]`). */
interface Operand4 {
  readonly t: Tensor;
  readonly bound: BoundOperand;
  readonly strides: readonly number[];
}

function bind4(b: KernelBindings, t: Tensor, write: boolean): Operand4 {
  const { sizes, strides } = lift4(t, true);
  return { t, bound: b.strided(t, sizes, strides, write), strides };
}

/** Channels of a 3-d or 4-d pooling input (planes are (n, c) pairs). */
const channels = (t: Tensor) => t.shape[t.ndim - 3];

// Parameter words of the pooling kernels (word 0 is the item count, written by runItems).
const GEOM = ['C', 'H', 'W', 'OH', 'OW', 'kh', 'kw', 'sh', 'sw', 'padh', 'padw', 'dh', 'dw'] as const;
const W_EXTRA = 14, W_A = 16, W_B = 21, W_OUT = 26, W_OUT2 = 27, WORDS = 28;

/** WGSL `let`s of the geometry words. */
const GEOMETRY = GEOM.map((n, i) => `let ${n} = pw(${i + 1}u);`).join(' ');
/** Item `t` as an output element (oh, ow) of plane (nb, c). */
const OUTPUT_ITEM = 'let ow = t % OW; let r = t / OW; let oh = r % OH; let p = r / OH; let nb = p / C; let c = p % C;';
/** Item `t` as an input element (h, x) of plane (nb, c). */
const INPUT_ITEM = 'let x = t % W; let r = t / W; let h = r % H; let p = r / H; let nb = p / C; let c = p % C;';

/** Writes the geometry and the operands' parameters of one pooling dispatch. */
function poolParams(
  q: GpuRuntime['queue'],
  slot: number,
  geometry: readonly number[],
  extra: readonly number[],
  operands: ReadonlyArray<Operand4 | undefined>,
  outOffsets: readonly number[],
): void {
  geometry.forEach((v, i) => (q.words[slot + 1 + i] = v));
  extra.forEach((v, i) => (q.ints[slot + W_EXTRA + i] = v));
  operands.forEach((o, j) => {
    if (o === undefined) return;
    const base = j === 0 ? W_A : W_B;
    q.ints[slot + base] = o.bound.offset;
    for (let i = 0; i < 4; i++) q.ints[slot + base + 1 + i] = o.strides[i];
  });
  outOffsets.forEach((o, i) => (q.words[slot + W_OUT + i] = o));
}

const geometryOf = (p: Pool2d, C: number) =>
  [C, p.H, p.W, p.OH, p.OW, p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw] as const;

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
  const name = 'max_pool2d_with_indices_webgpu';
  checkConvDtype(name, self.dtype);
  const out = emptyGpu(p.outputShape, self.dtype);
  let indices: Tensor | undefined;
  try {
    indices = emptyGpu(p.outputShape, int64);
    const n = p.P * p.OH * p.OW;
    if (n === 0) return [out, indices];
    const b = new KernelBindings(name);
    const x = bind4(b, self, false);
    const po = b.contiguous(out, n, true), pi = b.contiguous(indices, n, true);
    const idx = indices;
    runItems({
      key: `max_pool2d|${self.dtype.name}|${b.access.join()}|${x.bound.slot}${po.slot}${pi.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        OUTPUT_ITEM,
        'var h0 = i32(oh * sh) - i32(padh); let h1 = min(h0 + i32((kh - 1u) * dh) + 1i, i32(H));',
        'var w0 = i32(ow * sw) - i32(padw); let w1 = min(w0 + i32((kw - 1u) * dw) + 1i, i32(W));',
        'if (h0 < 0i) { h0 = h0 + ((-h0 + i32(dh) - 1i) / i32(dh)) * i32(dh); }',
        'if (w0 < 0i) { w0 = w0 + ((-w0 + i32(dw) - 1i) / i32(dw)) * i32(dw); }',
        'var best = -inf_f(); var arg = h0 * i32(W) + w0;',
        'for (var ih = h0; ih < h1; ih = ih + i32(dh)) {',
        '  for (var iw = w0; iw < w1; iw = iw + i32(dw)) {',
        `    let v = ${loadWgsl(self.dtype, `b${x.bound.slot}`, at4(W_A, 'nb', 'c', 'ih', 'iw'))};`,
        '    if (v > best || is_nan(v)) { best = v; arg = ih * i32(W) + iw; }',
        '  }',
        '}',
        storeWgsl(out.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 'best'),
        storeWgsl(int64, `b${pi.slot}`, `pw(${W_OUT2}u) + t`, 'vec2<u32>(bitcast<u32>(arg), 0u)'),
      ],
      params: (q, slot) => poolParams(q, slot, geometryOf(p, channels(self)), [], [x], [po.offset, pi.offset]),
    });
    return [out, idx];
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
  const name = 'max_pool2d_with_indices_backward_webgpu';
  checkConvDtype(name, self.dtype);
  return filledOrFreed(emptyGpu(self.shape, self.dtype), (gradIn) => {
    const n = p.P * p.H * p.W;
    if (n === 0) return;
    const geometry = geometryOf(p, channels(self));
    // The indices are checked first: an index outside its plane is a device-side error.
    const vb = new KernelBindings(name);
    const vi = bind4(vb, indices, false);
    const id = kernelId('max_pool2d_with_indices_backward');
    runItems({
      key: `max_pool2d_indices_check|${vb.access.join()}`,
      bindings: vb,
      words: WORDS,
      items: p.P * p.OH * p.OW,
      body: () => [
        GEOMETRY,
        OUTPUT_ITEM,
        `let iv = ${loadWgsl(int64, `b${vi.bound.slot}`, at4(W_A, 'nb', 'c', 'i32(oh)', 'i32(ow)'))};`,
        `if (iv.y != 0u || iv.x >= H * W) { report(${DeviceError.indexOutOfBounds}u, ${id}u, iv.x, iv.y); }`,
      ],
      params: (q, slot) => poolParams(q, slot, geometry, [], [vi], []),
    });
    const b = new KernelBindings(name);
    const g = bind4(b, grad, false), pi = bind4(b, indices, false), ix = pi.bound;
    const po = b.contiguous(gradIn, n, true);
    runItems({
      key: `max_pool2d_bw|${grad.dtype.name}|${b.access.join()}|${g.bound.slot}${ix.slot}${po.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        INPUT_ITEM,
        'let me = h * W + x;',
        'let hl = i32(h + padh) - i32((kh - 1u) * dh); let wl = i32(x + padw) - i32((kw - 1u) * dw);',
        'let oh0 = select(0i, (hl + i32(sh) - 1i) / i32(sh), hl > 0i);',
        'let ow0 = select(0i, (wl + i32(sw) - 1i) / i32(sw), wl > 0i);',
        'let oh1 = min(i32(OH) - 1i, i32(h + padh) / i32(sh)); let ow1 = min(i32(OW) - 1i, i32(x + padw) / i32(sw));',
        'var s = 0.0;',
        'for (var oh = oh0; oh <= oh1; oh = oh + 1i) {',
        '  for (var ow = ow0; ow <= ow1; ow = ow + 1i) {',
        `    let iv = ${loadWgsl(int64, `b${ix.slot}`, at4(W_B, 'nb', 'c', 'oh', 'ow'))};`,
        `    if (iv.y == 0u && iv.x == me) { s = s + ${
          loadWgsl(grad.dtype, `b${g.bound.slot}`, at4(W_A, 'nb', 'c', 'oh', 'ow'))
        }; }`,
        '  }',
        '}',
        storeWgsl(gradIn.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 's'),
      ],
      params: (q, slot) => poolParams(q, slot, geometry, [], [g, pi], [po.offset]),
    });
  });
}

/** WGSL of avg_pool2d's window of output (oh, ow): clipped bounds `ch0..ch1`, `cw0..cw1` and divisor `d`. */
const AVG_WINDOW = [
  'let h0 = i32(oh) * i32(sh) - i32(padh); let h1 = min(h0 + i32(kh), i32(H + padh));',
  'let w0 = i32(ow) * i32(sw) - i32(padw); let w1 = min(w0 + i32(kw), i32(W + padw));',
  'let ch0 = max(h0, 0i); let cw0 = max(w0, 0i); let ch1 = min(h1, i32(H)); let cw1 = min(w1, i32(W));',
  `var d = pi(${W_EXTRA + 1}u);`,
  `if (d == 0i) { d = select((ch1 - ch0) * (cw1 - cw0), (h1 - h0) * (w1 - w0), pi(${W_EXTRA}u) != 0i); }`,
].join(' ');

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
  const name = 'avg_pool2d_webgpu';
  checkConvDtype(name, self.dtype);
  return filledOrFreed(emptyGpu(p.outputShape, self.dtype), (out) => {
    const n = p.P * p.OH * p.OW;
    if (n === 0) return;
    const b = new KernelBindings(name);
    const x = bind4(b, self, false), po = b.contiguous(out, n, true);
    runItems({
      key: `avg_pool2d|${self.dtype.name}|${b.access.join()}|${x.bound.slot}${po.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        OUTPUT_ITEM,
        AVG_WINDOW,
        'var value = 0.0;',
        'if (ch0 < ch1 && cw0 < cw1) {',
        '  var s = 0.0;',
        '  for (var ih = ch0; ih < ch1; ih = ih + 1i) {',
        `    for (var iw = cw0; iw < cw1; iw = iw + 1i) { s = s + ${
          loadWgsl(self.dtype, `b${x.bound.slot}`, at4(W_A, 'nb', 'c', 'ih', 'iw'))
        }; }`,
        '  }',
        '  value = s / f32(d);',
        '}',
        storeWgsl(out.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 'value'),
      ],
      params: (q, slot) =>
        poolParams(
          q,
          slot,
          geometryOf(p, channels(self)),
          [countIncludePad ? 1 : 0, divisorOverride ?? 0],
          [x],
          [po.offset],
        ),
    });
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
  const name = 'avg_pool2d_backward_webgpu';
  checkConvDtype(name, self.dtype);
  return filledOrFreed(emptyGpu(self.shape, self.dtype), (gradIn) => {
    const n = p.P * p.H * p.W;
    if (n === 0) return;
    const b = new KernelBindings(name);
    const g = bind4(b, grad, false), po = b.contiguous(gradIn, n, true);
    runItems({
      key: `avg_pool2d_bw|${grad.dtype.name}|${b.access.join()}|${g.bound.slot}${po.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        INPUT_ITEM,
        'let hh = i32(h + padh); let ww = i32(x + padw);',
        'let oh0 = select(0i, (hh - i32(kh)) / i32(sh) + 1i, hh >= i32(kh));',
        'let ow0 = select(0i, (ww - i32(kw)) / i32(sw) + 1i, ww >= i32(kw));',
        'let oh1 = min(i32(OH) - 1i, hh / i32(sh)); let ow1 = min(i32(OW) - 1i, ww / i32(sw));',
        'var s = 0.0;',
        'for (var oh = oh0; oh <= oh1; oh = oh + 1i) {',
        '  for (var ow = ow0; ow <= ow1; ow = ow + 1i) {',
        `    ${AVG_WINDOW}`,
        '    if (i32(h) >= ch0 && i32(h) < ch1 && i32(x) >= cw0 && i32(x) < cw1) {',
        `      s = s + ${loadWgsl(grad.dtype, `b${g.bound.slot}`, at4(W_A, 'nb', 'c', 'oh', 'ow'))} / f32(d);`,
        '    }',
        '  }',
        '}',
        storeWgsl(gradIn.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 's'),
      ],
      params: (q, slot) =>
        poolParams(
          q,
          slot,
          geometryOf(p, channels(self)),
          [countIncludePad ? 1 : 0, divisorOverride ?? 0],
          [g],
          [po.offset],
        ),
    });
  });
}

/** WGSL of the adaptive window bounds of output `o` of `O` along a dim of `I` (PyTorch's start/end_index). */
const aStart = (o: string, O: string, I: string) => `((${o}) * ${I}) / ${O}`;
const aEnd = (o: string, O: string, I: string) => `((${o} + 1u) * ${I} + ${O} - 1u) / ${O}`;

/** The geometry words of an adaptive pooling: C, H, W, OH, OW (the rest unused). */
const adaptiveGeometry = (self: Tensor, OH: number, OW: number) =>
  [channels(self), self.shape[self.ndim - 2], self.shape[self.ndim - 1], OH, OW, 1, 1, 1, 1, 0, 0, 1, 1] as const;

/** Adaptive pooling sizes must keep `o * I` inside the kernels' 32-bit arithmetic. */
function checkAdaptiveSizes(name: string, H: number, W: number, OH: number, OW: number): void {
  if ((OH + 1) * H >= 2 ** 32 || (OW + 1) * W >= 2 ** 32) {
    throw new RangeError(`${name}: sizes ${H}x${W} -> ${OH}x${OW} are too large for the WebGPU kernel`);
  }
}

function adaptiveAvgPool2d(_hi: number, _lo: number, self: Tensor, outputSize: number[]): Tensor {
  const shape = adaptiveAvgPool2dShape(self, outputSize);
  const name = 'adaptive_avg_pool2d_webgpu';
  checkConvDtype(name, self.dtype);
  const [OH, OW] = outputSize;
  const H = self.shape[self.ndim - 2], W = self.shape[self.ndim - 1];
  checkAdaptiveSizes(name, H, W, OH, OW);
  return filledOrFreed(emptyGpu(shape, self.dtype), (out) => {
    const n = out.numel;
    if (n === 0) return;
    const b = new KernelBindings(name);
    const x = bind4(b, self, false), po = b.contiguous(out, n, true);
    runItems({
      key: `adaptive_avg_pool2d|${self.dtype.name}|${b.access.join()}|${x.bound.slot}${po.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        OUTPUT_ITEM,
        `let h0 = ${aStart('oh', 'OH', 'H')}; let h1 = ${aEnd('oh', 'OH', 'H')};`,
        `let w0 = ${aStart('ow', 'OW', 'W')}; let w1 = ${aEnd('ow', 'OW', 'W')};`,
        'var s = 0.0;',
        'for (var ih = h0; ih < h1; ih = ih + 1u) {',
        `  for (var iw = w0; iw < w1; iw = iw + 1u) { s = s + ${
          loadWgsl(self.dtype, `b${x.bound.slot}`, at4(W_A, 'nb', 'c', 'i32(ih)', 'i32(iw)'))
        }; }`,
        '}',
        storeWgsl(out.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 's / f32((h1 - h0) * (w1 - w0))'),
      ],
      params: (q, slot) => poolParams(q, slot, adaptiveGeometry(self, OH, OW), [], [x], [po.offset]),
    });
  });
}

function adaptiveAvgPool2dBackward(_hi: number, _lo: number, grad: Tensor, self: Tensor): Tensor {
  adaptiveAvgPool2dBackwardMeta(grad, self);
  const name = 'adaptive_avg_pool2d_backward_webgpu';
  checkConvDtype(name, self.dtype);
  const OH = grad.shape[grad.ndim - 2], OW = grad.shape[grad.ndim - 1];
  const H = self.shape[self.ndim - 2], W = self.shape[self.ndim - 1];
  checkAdaptiveSizes(name, H, W, OH, OW);
  return filledOrFreed(emptyGpu(self.shape, self.dtype), (gradIn) => {
    const n = gradIn.numel;
    if (n === 0) return;
    const b = new KernelBindings(name);
    const g = bind4(b, grad, false), po = b.contiguous(gradIn, n, true);
    runItems({
      key: `adaptive_avg_pool2d_bw|${grad.dtype.name}|${b.access.join()}|${g.bound.slot}${po.slot}`,
      bindings: b,
      words: WORDS,
      items: n,
      body: () => [
        GEOMETRY,
        INPUT_ITEM,
        // Output oh's window contains h exactly when floor(h * OH / H) <= oh < ceil((h + 1) * OH / H).
        'let oh0 = (h * OH) / H; let oh1 = min(OH, ((h + 1u) * OH + H - 1u) / H);',
        'let ow0 = (x * OW) / W; let ow1 = min(OW, ((x + 1u) * OW + W - 1u) / W);',
        'var s = 0.0;',
        'for (var oh = oh0; oh < oh1; oh = oh + 1u) {',
        `  let h0 = ${aStart('oh', 'OH', 'H')}; let h1 = ${aEnd('oh', 'OH', 'H')};`,
        '  for (var ow = ow0; ow < ow1; ow = ow + 1u) {',
        `    let w0 = ${aStart('ow', 'OW', 'W')}; let w1 = ${aEnd('ow', 'OW', 'W')};`,
        '    if (h >= h0 && h < h1 && x >= w0 && x < w1) {',
        `      s = s + ${
          loadWgsl(grad.dtype, `b${g.bound.slot}`, at4(W_A, 'nb', 'c', 'i32(oh)', 'i32(ow)'))
        } / f32((h1 - h0) * (w1 - w0));`,
        '    }',
        '  }',
        '}',
        storeWgsl(gradIn.dtype, `b${po.slot}`, `pw(${W_OUT}u) + t`, 's'),
      ],
      params: (q, slot) => poolParams(q, slot, adaptiveGeometry(self, OH, OW), [], [g], [po.offset]),
    });
  });
}

/**
 * WebGPU kernels of the pooling operators.
 *
 * @example
 * ```ts
 * import { GPU_POOL_KERNELS } from './pool.ts';
 * typeof GPU_POOL_KERNELS.avg_pool2d; // 'function'
 * ```
 */
export const GPU_POOL_KERNELS: {
  readonly [
    K in
      | 'max_pool2d_with_indices'
      | 'max_pool2d_with_indices_backward'
      | 'avg_pool2d'
      | 'avg_pool2d_backward'
      | '_adaptive_avg_pool2d'
      | '_adaptive_avg_pool2d_backward'
  ]: Kernel;
} = {
  'max_pool2d_with_indices': maxPool2dWithIndices as Kernel,
  'max_pool2d_with_indices_backward': maxPool2dBackward as Kernel,
  'avg_pool2d': avgPool2d as Kernel,
  'avg_pool2d_backward': avgPool2dBackward as Kernel,
  '_adaptive_avg_pool2d': adaptiveAvgPool2d as Kernel,
  '_adaptive_avg_pool2d_backward': adaptiveAvgPool2dBackward as Kernel,
};
