// Convolution (im2col + the packed gemm of matmul.ts) and 2-d pooling over contiguous NCHW tensors.
//
// Note [Convolution as gemm]: for one sample n and group g, im2col copies the input planes
// [Cg, H, W] into a column matrix col [Cg * KH * KW, OH * OW] (row (c, kh, kw), column (oh, ow) holds the input
// element the kernel tap (kh, kw) sees for output (oh, ow), 0 in the padding), so that
//   out[n, g]        = W_g [OCg, Cg*KH*KW] @ col                       (forward)
//   col'             = W_g^T @ gradOut[n, g],  gradIn[n, g] = col2im(col')   (backward of the input)
//   gradW_g         += gradOut[n, g] @ col^T                           (backward of the weight, summed over n)
// The transposes are strides given to the gemm, which packs its operands anyway, so nothing is copied for
// them. A 1x1 kernel with stride 1 and no padding needs no im2col: the input planes are the column matrix.
// The transposed convolution is the same three products with the roles exchanged (its forward is the
// backward of the input of the convolution whose weight it shares), which the TypeScript side arranges.
//
// Pooling works per plane (N * C planes of H x W); max pooling records the flat index h * W + w of the
// element it picked, as PyTorch does, and its backward scatters through those indices after checking them.
import { DT_F32, DT_F64, STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { alignUp64, STATUS_TARGET_OUT_OF_BOUNDS } from './linalg_util';
import { gemm_generic, gemm_workspace_bytes } from './matmul';

// @ts-ignore: decorator
@inline
function isConvDtype(dtype: i32): bool {
  return dtype == DT_F32 || dtype == DT_F64;
}

/** im2col of one [C, H, W] block into col [C * KH * KW, OH * OW] (Note [Convolution as gemm]). */
function im2col<T>(
  src: usize,
  C: i32,
  H: i32,
  W: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  col: usize,
): void {
  const es = <usize>sizeof<T>();
  let row = col;
  for (let c = 0; c < C; c++) {
    const plane = src + <usize>c * <usize>H * <usize>W * es;
    for (let kh = 0; kh < KH; kh++) {
      for (let kw = 0; kw < KW; kw++) {
        const w0 = kw * dw - pw;
        // Output columns whose input column w0 + ow * sw lies in [0, W): [owLo, owHi).
        let owLo = 0;
        if (w0 < 0) owLo = (-w0 + sw - 1) / sw;
        let owHi = OW;
        const last = W - 1 - w0; // ow * sw <= last
        if (last < 0) owHi = 0;
        else owHi = min(OW, last / sw + 1);
        if (owLo > owHi) owLo = owHi;
        for (let oh = 0; oh < OH; oh++) {
          const ih = oh * sh - ph + kh * dh;
          const dst = row + <usize>oh * <usize>OW * es;
          if (ih < 0 || ih >= H) {
            memory.fill(dst, 0, <usize>OW * es);
            continue;
          }
          const line = plane + <usize>ih * <usize>W * es;
          if (owLo > 0) memory.fill(dst, 0, <usize>owLo * es);
          if (sw == 1) {
            if (owHi > owLo) {
              memory.copy(dst + <usize>owLo * es, line + <usize>(w0 + owLo) * es, <usize>(owHi - owLo) * es);
            }
          } else {
            for (let ow = owLo; ow < owHi; ow++) {
              store<T>(dst + <usize>ow * es, load<T>(line + <usize>(w0 + ow * sw) * es));
            }
          }
          if (owHi < OW) memory.fill(dst + <usize>owHi * es, 0, <usize>(OW - owHi) * es);
        }
        row += <usize>OH * <usize>OW * es;
      }
    }
  }
}

/** col2im: dst [C, H, W] = the sum of col's entries over the positions im2col read them from (dst zeroed first). */
function col2im<T>(
  col: usize,
  C: i32,
  H: i32,
  W: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  dst: usize,
): void {
  const es = <usize>sizeof<T>();
  memory.fill(dst, 0, <usize>C * <usize>H * <usize>W * es);
  let row = col;
  for (let c = 0; c < C; c++) {
    const plane = dst + <usize>c * <usize>H * <usize>W * es;
    for (let kh = 0; kh < KH; kh++) {
      for (let kw = 0; kw < KW; kw++) {
        const w0 = kw * dw - pw;
        let owLo = 0;
        if (w0 < 0) owLo = (-w0 + sw - 1) / sw;
        let owHi = OW;
        const last = W - 1 - w0;
        if (last < 0) owHi = 0;
        else owHi = min(OW, last / sw + 1);
        for (let oh = 0; oh < OH; oh++) {
          const ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= H) continue;
          const from = row + <usize>oh * <usize>OW * es;
          const line = plane + <usize>ih * <usize>W * es;
          for (let ow = owLo; ow < owHi; ow++) {
            const p = line + <usize>(w0 + ow * sw) * es;
            store<T>(p, load<T>(p) + load<T>(from + <usize>ow * es));
          }
        }
        row += <usize>OH * <usize>OW * es;
      }
    }
  }
}

// @ts-ignore: decorator
@inline
function isPointwise(KH: i32, KW: i32, sh: i32, sw: i32, ph: i32, pw: i32): bool {
  return KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
}

/**
 * Workspace bytes of the three convolution kernels for one geometry: a column matrix (none for a pointwise
 * convolution) plus the largest gemm workspace of the three products. 0 for an unsupported dtype.
 */
export function conv2d_workspace_bytes(
  dtype: i32,
  Cg: i32,
  OCg: i32,
  KH: i32,
  KW: i32,
  OHW: i32,
  pointwise: i32,
): f64 {
  if (!isConvDtype(dtype)) return 0;
  const es = dtype == DT_F32 ? 4 : 8;
  const K = Cg * KH * KW;
  const colBytes: f64 = pointwise != 0 ? 0 : <f64>K * <f64>OHW * <f64>es;
  const g1 = gemm_workspace_bytes(dtype, OCg, OHW, K);
  const g2 = gemm_workspace_bytes(dtype, K, OHW, OCg);
  const g3 = gemm_workspace_bytes(dtype, OCg, K, OHW);
  return colBytes + 128 + <f64>max(g1, max(g2, g3));
}

/** Column matrix and gemm workspace addresses inside one workspace block. */
// @ts-ignore: decorator
@inline
function gemmWork(work: usize, colBytes: usize): usize {
  return alignUp64(work + colBytes);
}

/**
 * Forward convolution of a contiguous input [N, C, H, W] with a contiguous weight [OC, C / groups, KH, KW]
 * and an optional bias [OC] (0 for none) into a contiguous out [N, OC, OH, OW]. f32 and f64.
 */
export function conv2d_forward(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  input: usize,
  weight: usize,
  bias: usize,
  out: usize,
  work: usize,
): i32 {
  if (dtype == DT_F32) {
    return convForward<f32>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, input, weight, bias, out, work);
  }
  if (dtype == DT_F64) {
    return convForward<f64>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, input, weight, bias, out, work);
  }
  return STATUS_UNSUPPORTED;
}

function convForward<T>(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  input: usize,
  weight: usize,
  bias: usize,
  out: usize,
  work: usize,
): i32 {
  if (groups <= 0 || C % groups != 0 || OC % groups != 0) return STATUS_BAD_ARGUMENT;
  const es = <usize>sizeof<T>();
  const Cg = C / groups, OCg = OC / groups, K = Cg * KH * KW, OHW = OH * OW, HW = H * W;
  const pointwise = isPointwise(KH, KW, sh, sw, ph, pw);
  const col = alignUp64(work);
  const colBytes: usize = pointwise ? <usize>0 : <usize>K * <usize>OHW * es;
  const gw = gemmWork(col, colBytes);
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      let b = col;
      const src = input + (<usize>n * <usize>C + <usize>(g * Cg)) * <usize>HW * es;
      if (pointwise) b = src;
      else im2col<T>(src, Cg, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, col);
      const dst = out + (<usize>n * <usize>OC + <usize>(g * OCg)) * <usize>OHW * es;
      let beta: f64 = 0;
      if (bias != 0) {
        for (let o = 0; o < OCg; o++) {
          const v = load<T>(bias + <usize>(g * OCg + o) * es);
          const row = dst + <usize>o * <usize>OHW * es;
          for (let p = 0; p < OHW; p++) store<T>(row + <usize>p * es, v);
        }
        beta = 1;
      }
      const wg = weight + <usize>(g * OCg) * <usize>K * es;
      const status = gemm_generic(dtype, OCg, OHW, K, 1, wg, K, 1, b, OHW, 1, beta, dst, OHW, 1, gw);
      if (status != STATUS_OK) return status;
    }
  }
  return STATUS_OK;
}

/**
 * Gradient of the convolution's input: gradIn [N, C, H, W] from gradOut [N, OC, OH, OW] and the weight
 * [OC, C / groups, KH, KW], all contiguous. Every element of gradIn is written.
 */
export function conv2d_backward_input(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  gradOut: usize,
  weight: usize,
  gradIn: usize,
  work: usize,
): i32 {
  if (dtype == DT_F32) {
    return convBackwardInput<f32>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, gradOut, weight, gradIn, work);
  }
  if (dtype == DT_F64) {
    return convBackwardInput<f64>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, gradOut, weight, gradIn, work);
  }
  return STATUS_UNSUPPORTED;
}

function convBackwardInput<T>(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  gradOut: usize,
  weight: usize,
  gradIn: usize,
  work: usize,
): i32 {
  if (groups <= 0 || C % groups != 0 || OC % groups != 0) return STATUS_BAD_ARGUMENT;
  const es = <usize>sizeof<T>();
  const Cg = C / groups, OCg = OC / groups, K = Cg * KH * KW, OHW = OH * OW, HW = H * W;
  const pointwise = isPointwise(KH, KW, sh, sw, ph, pw);
  const col = alignUp64(work);
  const colBytes: usize = pointwise ? <usize>0 : <usize>K * <usize>OHW * es;
  const gw = gemmWork(col, colBytes);
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      const go = gradOut + (<usize>n * <usize>OC + <usize>(g * OCg)) * <usize>OHW * es;
      const gi = gradIn + (<usize>n * <usize>C + <usize>(g * Cg)) * <usize>HW * es;
      const wg = weight + <usize>(g * OCg) * <usize>K * es;
      // W_g^T: K x OCg with strides (1, K).
      const dst = pointwise ? gi : col;
      const status = gemm_generic(dtype, K, OHW, OCg, 1, wg, 1, K, go, OHW, 1, 0, dst, OHW, 1, gw);
      if (status != STATUS_OK) return status;
      if (!pointwise) col2im<T>(col, Cg, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, gi);
    }
  }
  return STATUS_OK;
}

/**
 * Gradient of the convolution's weight: gradW [OC, C / groups, KH, KW] = the sum over the batch of
 * gradOut[n, g] @ im2col(input[n, g])^T, all contiguous. Every element of gradW is written (zeros when N = 0).
 */
export function conv2d_backward_weight(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  gradOut: usize,
  input: usize,
  gradW: usize,
  work: usize,
): i32 {
  if (dtype == DT_F32) {
    return convBackwardWeight<f32>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, gradOut, input, gradW, work);
  }
  if (dtype == DT_F64) {
    return convBackwardWeight<f64>(dtype, N, C, H, W, OC, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups, gradOut, input, gradW, work);
  }
  return STATUS_UNSUPPORTED;
}

function convBackwardWeight<T>(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  KH: i32,
  KW: i32,
  OH: i32,
  OW: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  groups: i32,
  gradOut: usize,
  input: usize,
  gradW: usize,
  work: usize,
): i32 {
  if (groups <= 0 || C % groups != 0 || OC % groups != 0) return STATUS_BAD_ARGUMENT;
  const es = <usize>sizeof<T>();
  const Cg = C / groups, OCg = OC / groups, K = Cg * KH * KW, OHW = OH * OW, HW = H * W;
  const pointwise = isPointwise(KH, KW, sh, sw, ph, pw);
  const col = alignUp64(work);
  const colBytes: usize = pointwise ? <usize>0 : <usize>K * <usize>OHW * es;
  const gw = gemmWork(col, colBytes);
  if (N == 0 || OHW == 0) memory.fill(gradW, 0, <usize>OC * <usize>K * es);
  if (OHW == 0) return STATUS_OK;
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      const src = input + (<usize>n * <usize>C + <usize>(g * Cg)) * <usize>HW * es;
      let b = col;
      if (pointwise) b = src;
      else im2col<T>(src, Cg, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, col);
      const go = gradOut + (<usize>n * <usize>OC + <usize>(g * OCg)) * <usize>OHW * es;
      const dst = gradW + <usize>(g * OCg) * <usize>K * es;
      // col^T: OHW x K with strides (1, OHW).
      const beta: f64 = n == 0 ? 0 : 1;
      const status = gemm_generic(dtype, OCg, K, OHW, 1, go, OHW, 1, b, 1, OHW, beta, dst, K, 1, gw);
      if (status != STATUS_OK) return status;
    }
  }
  return STATUS_OK;
}

// ---------------------------------------------------------------------------------------------------------
// Pooling over planes [P, H, W] (P = N * C).

/**
 * Max pooling of each plane: out and indices [P, OH, OW] (indices int64, flat h * W + w). NaN wins as in
 * PyTorch (`val > max || isnan(val)`); a window entirely in the padding cannot occur (pad <= kernel / 2).
 */
export function max_pool2d_forward(
  dtype: i32,
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  kh: i32,
  kw: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  input: usize,
  out: usize,
  indices: usize,
): i32 {
  if (dtype == DT_F32) {
    maxPoolForward<f32>(P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, input, out, indices);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    maxPoolForward<f64>(P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw, input, out, indices);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

function maxPoolForward<T>(
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  kh: i32,
  kw: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  dh: i32,
  dw: i32,
  input: usize,
  out: usize,
  indices: usize,
): void {
  const es = <usize>sizeof<T>();
  for (let p = 0; p < P; p++) {
    const plane = input + <usize>p * <usize>H * <usize>W * es;
    const o = <usize>p * <usize>OH * <usize>OW;
    for (let oh = 0; oh < OH; oh++) {
      let h0 = oh * sh - ph;
      const h1 = min(h0 + (kh - 1) * dh + 1, H);
      while (h0 < 0) h0 += dh;
      for (let ow = 0; ow < OW; ow++) {
        let w0 = ow * sw - pw;
        const w1 = min(w0 + (kw - 1) * dw + 1, W);
        while (w0 < 0) w0 += dw;
        let best: T = <T>-Infinity;
        let at: i64 = <i64>h0 * <i64>W + <i64>w0;
        for (let h = h0; h < h1; h += dh) {
          for (let w = w0; w < w1; w += dw) {
            const idx = h * W + w;
            const v = load<T>(plane + <usize>idx * es);
            if (v > best || isNaN(v)) {
              best = v;
              at = <i64>idx;
            }
          }
        }
        const q = o + <usize>oh * <usize>OW + <usize>ow;
        store<T>(out + q * es, best);
        store<i64>(indices + q * 8, at);
      }
    }
  }
}

/**
 * Backward of max pooling: gradIn [P, HW] = zeros, then gradIn[p, indices[p, q]] += gradOut[p, q] for the
 * Q = OH * OW outputs of each plane. An index outside [0, HW) gives STATUS_TARGET_OUT_OF_BOUNDS (nothing is
 * read through it; gradIn is then partly written).
 */
export function max_pool2d_backward(
  dtype: i32,
  P: i32,
  HW: i32,
  Q: i32,
  gradOut: usize,
  indices: usize,
  gradIn: usize,
): i32 {
  if (dtype == DT_F32) return maxPoolBackward<f32>(P, HW, Q, gradOut, indices, gradIn);
  if (dtype == DT_F64) return maxPoolBackward<f64>(P, HW, Q, gradOut, indices, gradIn);
  return STATUS_UNSUPPORTED;
}

function maxPoolBackward<T>(P: i32, HW: i32, Q: i32, gradOut: usize, indices: usize, gradIn: usize): i32 {
  const es = <usize>sizeof<T>();
  memory.fill(gradIn, 0, <usize>P * <usize>HW * es);
  for (let p = 0; p < P; p++) {
    const gi = gradIn + <usize>p * <usize>HW * es;
    const base = <usize>p * <usize>Q;
    for (let q = 0; q < Q; q++) {
      const idx = load<i64>(indices + (base + <usize>q) * 8);
      if (idx < 0 || idx >= <i64>HW) return STATUS_TARGET_OUT_OF_BOUNDS;
      const at = gi + <usize>idx * es;
      store<T>(at, load<T>(at) + load<T>(gradOut + (base + <usize>q) * es));
    }
  }
  return STATUS_OK;
}

/** PyTorch's avg_pool2d window: [h0, h1) x [w0, w1) clipped to the input, and its divisor. */
// @ts-ignore: decorator
@inline
function avgDivisor(h0: i32, h1: i32, w0: i32, w1: i32, poolSize: i32, countIncludePad: i32, divisor: i32): i32 {
  if (divisor != 0) return divisor;
  if (countIncludePad != 0) return poolSize;
  return (h1 - h0) * (w1 - w0);
}

/**
 * Average pooling of each plane [P, H, W] into out [P, OH, OW] (PyTorch's avg_pool2d: windows clipped to the
 * padded input count the padding when countIncludePad; divisor != 0 overrides the count).
 */
export function avg_pool2d_forward(
  dtype: i32,
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  kh: i32,
  kw: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  countIncludePad: i32,
  divisor: i32,
  input: usize,
  out: usize,
): i32 {
  if (dtype == DT_F32) {
    avgPool<f32>(false, P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, countIncludePad, divisor, input, out);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    avgPool<f64>(false, P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, countIncludePad, divisor, input, out);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

/** Backward of avg_pool2d: gradIn [P, H, W] from gradOut [P, OH, OW] (every element of gradIn written). */
export function avg_pool2d_backward(
  dtype: i32,
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  kh: i32,
  kw: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  countIncludePad: i32,
  divisor: i32,
  gradOut: usize,
  gradIn: usize,
): i32 {
  if (dtype == DT_F32) {
    avgPool<f32>(true, P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, countIncludePad, divisor, gradIn, gradOut);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    avgPool<f64>(true, P, H, W, OH, OW, kh, kw, sh, sw, ph, pw, countIncludePad, divisor, gradIn, gradOut);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

/** Forward (plane -> pooled) or backward (pooled gradient spread back over `plane`, zeroed first). */
function avgPool<T>(
  backward: bool,
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  kh: i32,
  kw: i32,
  sh: i32,
  sw: i32,
  ph: i32,
  pw: i32,
  countIncludePad: i32,
  divisor: i32,
  planes: usize,
  pooled: usize,
): void {
  const es = <usize>sizeof<T>();
  if (backward) memory.fill(planes, 0, <usize>P * <usize>H * <usize>W * es);
  for (let p = 0; p < P; p++) {
    const plane = planes + <usize>p * <usize>H * <usize>W * es;
    const o = pooled + <usize>p * <usize>OH * <usize>OW * es;
    for (let oh = 0; oh < OH; oh++) {
      const h0 = oh * sh - ph;
      const h1 = min(h0 + kh, H + ph);
      for (let ow = 0; ow < OW; ow++) {
        const w0 = ow * sw - pw;
        const w1 = min(w0 + kw, W + pw);
        const poolSize = (h1 - h0) * (w1 - w0);
        const ch0 = max(h0, 0), cw0 = max(w0, 0), ch1 = min(h1, H), cw1 = min(w1, W);
        const at = o + (<usize>oh * <usize>OW + <usize>ow) * es;
        if (ch0 >= ch1 || cw0 >= cw1) {
          if (!backward) store<T>(at, 0);
          continue;
        }
        const d = <T>avgDivisor(ch0, ch1, cw0, cw1, poolSize, countIncludePad, divisor);
        if (backward) {
          const g = load<T>(at) / d;
          for (let h = ch0; h < ch1; h++) {
            for (let w = cw0; w < cw1; w++) {
              const q = plane + (<usize>h * <usize>W + <usize>w) * es;
              store<T>(q, load<T>(q) + g);
            }
          }
        } else {
          let sum: T = 0;
          for (let h = ch0; h < ch1; h++) {
            for (let w = cw0; w < cw1; w++) sum += load<T>(plane + (<usize>h * <usize>W + <usize>w) * es);
          }
          store<T>(at, sum / d);
        }
      }
    }
  }
}

/**
 * Adaptive average pooling of each plane [P, H, W] into [P, OH, OW] (window of output i along a dim of input
 * size I: [floor(i * I / O), ceil((i + 1) * I / O))), or its backward (`backward` != 0: gradIn [P, H, W]
 * written whole from gradOut [P, OH, OW]).
 */
export function adaptive_avg_pool2d(
  dtype: i32,
  backward: i32,
  P: i32,
  H: i32,
  W: i32,
  OH: i32,
  OW: i32,
  planes: usize,
  pooled: usize,
): i32 {
  if (dtype == DT_F32) {
    adaptiveAvg<f32>(backward != 0, P, H, W, OH, OW, planes, pooled);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    adaptiveAvg<f64>(backward != 0, P, H, W, OH, OW, planes, pooled);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

// @ts-ignore: decorator
@inline
function startIndex(o: i32, O: i32, I: i32): i32 {
  return <i32>((<i64>o * <i64>I) / <i64>O);
}

// @ts-ignore: decorator
@inline
function endIndex(o: i32, O: i32, I: i32): i32 {
  return <i32>((<i64>(o + 1) * <i64>I + <i64>O - 1) / <i64>O);
}

function adaptiveAvg<T>(backward: bool, P: i32, H: i32, W: i32, OH: i32, OW: i32, planes: usize, pooled: usize): void {
  const es = <usize>sizeof<T>();
  if (backward) memory.fill(planes, 0, <usize>P * <usize>H * <usize>W * es);
  for (let p = 0; p < P; p++) {
    const plane = planes + <usize>p * <usize>H * <usize>W * es;
    const o = pooled + <usize>p * <usize>OH * <usize>OW * es;
    for (let oh = 0; oh < OH; oh++) {
      const h0 = startIndex(oh, OH, H), h1 = endIndex(oh, OH, H);
      for (let ow = 0; ow < OW; ow++) {
        const w0 = startIndex(ow, OW, W), w1 = endIndex(ow, OW, W);
        const at = o + (<usize>oh * <usize>OW + <usize>ow) * es;
        const count = <T>((h1 - h0) * (w1 - w0));
        if (backward) {
          const g = load<T>(at) / count;
          for (let h = h0; h < h1; h++) {
            for (let w = w0; w < w1; w++) {
              const q = plane + (<usize>h * <usize>W + <usize>w) * es;
              store<T>(q, load<T>(q) + g);
            }
          }
        } else {
          let sum: T = 0;
          for (let h = h0; h < h1; h++) {
            for (let w = w0; w < w1; w++) sum += load<T>(plane + (<usize>h * <usize>W + <usize>w) * es);
          }
          store<T>(at, sum / count);
        }
      }
    }
  }
}

/**
 * Per-channel bias: out[n, c, :] += bias[c] over a contiguous out [N, C, HW] (the transposed convolution's
 * bias), or (`sum` != 0) the reverse: bias[c] = the sum of out[n, c, :] over n and the plane, accumulated in
 * f64 (the bias gradient). f32 and f64.
 */
export function conv_channel_bias(dtype: i32, sum: i32, N: i32, C: i32, HW: i32, out: usize, bias: usize): i32 {
  if (dtype == DT_F32) {
    channelBias<f32>(sum != 0, N, C, HW, out, bias);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    channelBias<f64>(sum != 0, N, C, HW, out, bias);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

function channelBias<T>(sum: bool, N: i32, C: i32, HW: i32, out: usize, bias: usize): void {
  const es = <usize>sizeof<T>();
  for (let c = 0; c < C; c++) {
    let acc: f64 = 0;
    const b = load<T>(bias + <usize>c * es);
    for (let n = 0; n < N; n++) {
      const row = out + (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
      for (let p = 0; p < HW; p++) {
        const at = row + <usize>p * es;
        if (sum) acc += <f64>load<T>(at);
        else store<T>(at, load<T>(at) + b);
      }
    }
    if (sum) store<T>(bias + <usize>c * es, <T>acc);
  }
}
