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
 * convolution) plus the largest gemm workspace of the three products, or what the Winograd forward needs when
 * it applies (Note [Winograd F(2x2, 3x3)]), whichever is larger. 0 for an unsupported dtype.
 */
export function conv2d_workspace_bytes(
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
): f64 {
  if (!isConvDtype(dtype) || groups <= 0 || H < 0 || W < 0) return 0;
  const es = dtype == DT_F32 ? 4 : 8;
  const Cg = C / groups, OCg = OC / groups, OHW = OH * OW;
  const K = Cg * KH * KW;
  const colBytes: f64 = isPointwise(KH, KW, sh, sw, ph, pw) ? 0 : <f64>K * <f64>OHW * <f64>es;
  const g1 = gemm_workspace_bytes(dtype, OCg, OHW, K);
  const g2 = gemm_workspace_bytes(dtype, K, OHW, OCg);
  const g3 = gemm_workspace_bytes(dtype, OCg, K, OHW);
  const im2colBytes = colBytes + 128 + <f64>max(g1, max(g2, g3));
  if (!isWinograd(KH, KW, sh, sw, dh, dw)) return im2colBytes;
  const forward = winogradBytes(dtype, N, Cg, OCg, OH, OW);
  // The input gradient: a Winograd convolution of the output gradient with the flipped, transposed weight.
  const backward = winogradBytes(dtype, N, OCg, Cg, H, W) + <f64>C * <f64>OCg * 9 * <f64>es + 128;
  return max(im2colBytes, max(forward, max(backward, winogradWeightBytes(dtype, N, Cg, OCg, OH, OW))));
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
  if (isWinograd(KH, KW, sh, sw, dh, dw) && C / groups >= WINOGRAD_MIN_CHANNELS) {
    return winogradForward<T>(dtype, N, C, H, W, OC, OH, OW, ph, pw, groups, input, weight, bias, out, work);
  }
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
  if (isWinograd(KH, KW, sh, sw, dh, dw) && ph <= 2 && pw <= 2 && OCg >= WINOGRAD_MIN_CHANNELS) {
    // gradIn = conv(gradOut, W') with W'[g, c, o] = W[g, o, c] flipped in both spatial dims, padding 2 - p
    // (the full correlation's adjoint), itself a 3x3 stride-1 convolution: Note [Winograd F(2x2, 3x3)].
    const flipped = alignUp64(work);
    for (let g = 0; g < groups; g++) {
      for (let c = 0; c < Cg; c++) {
        for (let o = 0; o < OCg; o++) {
          const from = weight + ((<usize>(g * OCg + o) * <usize>Cg + <usize>c) * 9) * es;
          const to = flipped + ((<usize>(g * Cg + c) * <usize>OCg + <usize>o) * 9) * es;
          for (let k = 0; k < 9; k++) store<T>(to + <usize>k * es, load<T>(from + <usize>(8 - k) * es));
        }
      }
    }
    const rest = alignUp64(flipped + <usize>C * <usize>OCg * 9 * es);
    return winogradForward<T>(dtype, N, OC, OH, OW, C, H, W, 2 - ph, 2 - pw, groups, gradOut, flipped, 0, gradIn, rest);
  }
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
  if (OHW == 0 || N == 0) return STATUS_OK;
  if (isWinograd(KH, KW, sh, sw, dh, dw) && Cg >= WINOGRAD_MIN_CHANNELS) {
    return winogradWeightGrad<T>(dtype, N, C, H, W, OC, OH, OW, ph, pw, groups, gradOut, input, gradW, work);
  }
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
// Note [Winograd F(2x2, 3x3)]: a 3x3 convolution with stride 1 and dilation 1 computes each 2x2 output tile
// from a 4x4 input patch d as Y = A^T [(G g G^T) . (B^T d B)] A (Lavin & Gray 2015), with
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
//   A^T = [1 1 1 0; 0 1 -1 -1].
// The elementwise product summed over input channels is 16 independent products, one per position xi of the
// 4x4 transformed tile: M[xi] (OCg x T) = U[xi] (OCg x Cg) @ V[xi] (Cg x T) for T tiles, which the packed gemm
// runs. That is 16 * Cg multiply-adds per output tile and channel against im2col's 36 * Cg: 2.25x fewer,
// for the price of the transforms (a few adds per element) and a little accuracy (the transforms' 1/2 and the
// sums of four terms, a few ulp; float64 keeps float64's accuracy). Tiles of several samples are batched so that
// each gemm has about WINOGRAD_TILES columns. Below WINOGRAD_MIN_CHANNELS input channels per group the
// transforms would dominate and im2col runs instead.

const WINOGRAD_TILES: i32 = 1024;
const WINOGRAD_MIN_CHANNELS: i32 = 8;

// @ts-ignore: decorator
@inline
function isWinograd(KH: i32, KW: i32, sh: i32, sw: i32, dh: i32, dw: i32): bool {
  return KH == 3 && KW == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1;
}

/** Samples per chunk: enough for about WINOGRAD_TILES tiles, at least 1, at most N. */
// @ts-ignore: decorator
@inline
function winogradChunk(N: i32, tilesPerSample: i32): i32 {
  return max(1, min(N, (WINOGRAD_TILES + tilesPerSample - 1) / max(tilesPerSample, 1)));
}

function winogradBytes(dtype: i32, N: i32, Cg: i32, OCg: i32, OH: i32, OW: i32): f64 {
  const es: f64 = dtype == DT_F32 ? 4 : 8;
  const tps = ((OH + 1) >> 1) * ((OW + 1) >> 1);
  const T = winogradChunk(N, tps) * tps;
  const weights = 16 * <f64>OCg * <f64>Cg * es;
  const v = 16 * <f64>Cg * <f64>T * es;
  const m = 16 * <f64>OCg * <f64>T * es;
  return weights + v + m + 4 * 64 + <f64>gemm_workspace_bytes(dtype, OCg, T, Cg);
}

function winogradForward<T>(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  OH: i32,
  OW: i32,
  ph: i32,
  pw: i32,
  groups: i32,
  input: usize,
  weight: usize,
  bias: usize,
  out: usize,
  work: usize,
): i32 {
  const es = <usize>sizeof<T>();
  const Cg = C / groups, OCg = OC / groups;
  const tH = (OH + 1) >> 1, tW = (OW + 1) >> 1, tps = tH * tW;
  const S = winogradChunk(N, tps), Tmax = S * tps;
  const U = alignUp64(work);
  const V = alignUp64(U + <usize>16 * <usize>OCg * <usize>Cg * es);
  const M = alignUp64(V + <usize>16 * <usize>Cg * <usize>Tmax * es);
  const gw = alignUp64(M + <usize>16 * <usize>OCg * <usize>Tmax * es);
  const HW = <usize>H * <usize>W, OHW = <usize>OH * <usize>OW;
  for (let g = 0; g < groups; g++) {
    winogradWeights<T>(weight + <usize>(g * OCg) * <usize>Cg * 9 * es, OCg, Cg, U);
    for (let n0 = 0; n0 < N; n0 += S) {
      const s = min(S, N - n0), T = s * tps;
      for (let j = 0; j < s; j++) {
        const src = input + (<usize>(n0 + j) * <usize>C + <usize>(g * Cg)) * HW * es;
        if (sizeof<T>() == 4) winogradInputF32(src, Cg, H, W, tH, tW, ph, pw, V, T, j * tps);
        else winogradInput<T>(src, Cg, H, W, tH, tW, ph, pw, V, T, j * tps);
      }
      for (let xi = 0; xi < 16; xi++) {
        const status = gemm_generic(
          dtype,
          OCg,
          T,
          Cg,
          1,
          U + <usize>xi * <usize>OCg * <usize>Cg * es,
          Cg,
          1,
          V + <usize>xi * <usize>Cg * <usize>T * es,
          T,
          1,
          0,
          M + <usize>xi * <usize>OCg * <usize>T * es,
          T,
          1,
          gw,
        );
        if (status != STATUS_OK) return status;
      }
      for (let j = 0; j < s; j++) {
        const dst = out + (<usize>(n0 + j) * <usize>OC + <usize>(g * OCg)) * OHW * es;
        const b = bias == 0 ? <usize>0 : bias + <usize>(g * OCg) * es;
        if (sizeof<T>() == 4) winogradOutputF32(M, OCg, T, j * tps, tW, OH, OW, b, dst);
        else winogradOutput<T>(M, OCg, T, j * tps, tW, OH, OW, b, dst);
      }
    }
  }
  return STATUS_OK;
}

/**
 * Workspace of the Winograd weight gradient: dU (16 x OCg x Cg), V (16 x Cg x T), Z (16 x OCg x T) for a chunk
 * of T tiles, and the gemm's.
 */
function winogradWeightBytes(dtype: i32, N: i32, Cg: i32, OCg: i32, OH: i32, OW: i32): f64 {
  const es: f64 = dtype == DT_F32 ? 4 : 8;
  const tps = ((OH + 1) >> 1) * ((OW + 1) >> 1);
  const T = winogradChunk(N, tps) * tps;
  return 16 * <f64>OCg * <f64>Cg * es + 16 * <f64>Cg * <f64>T * es + 16 * <f64>OCg * <f64>T * es + 4 * 64 +
    <f64>gemm_workspace_bytes(dtype, Cg, OCg, T);
}

/**
 * The weight gradient of a 3x3 stride-1 convolution by Winograd (Note [Winograd F(2x2, 3x3)]): with
 * Y = A^T (U . V) A per tile and U = G g G^T, dL/dU[xi] = sum over tiles of Z[xi] V[xi] with Z = A dY A^T, one
 * gemm per xi over all tiles of all samples, and dL/dg = G^T dU G. The gemm computes dU^T[xi] (Cg x OCg) =
 * V[xi] (Cg x T) @ Z[xi] (T x OCg, stored tile-major), so that both operands are read along their rows.
 */
function winogradWeightGrad<T>(
  dtype: i32,
  N: i32,
  C: i32,
  H: i32,
  W: i32,
  OC: i32,
  OH: i32,
  OW: i32,
  ph: i32,
  pw: i32,
  groups: i32,
  gradOut: usize,
  input: usize,
  gradW: usize,
  work: usize,
): i32 {
  const es = <usize>sizeof<T>();
  const Cg = C / groups, OCg = OC / groups;
  const tH = (OH + 1) >> 1, tW = (OW + 1) >> 1, tps = tH * tW;
  const S = winogradChunk(N, tps), Tmax = S * tps;
  const dU = alignUp64(work);
  const V = alignUp64(dU + <usize>16 * <usize>OCg * <usize>Cg * es);
  const Z = alignUp64(V + <usize>16 * <usize>Cg * <usize>Tmax * es);
  const gw = alignUp64(Z + <usize>16 * <usize>OCg * <usize>Tmax * es);
  const HW = <usize>H * <usize>W, OHW = <usize>OH * <usize>OW;
  for (let g = 0; g < groups; g++) {
    for (let n0 = 0; n0 < N; n0 += S) {
      const s = min(S, N - n0), T = s * tps;
      for (let j = 0; j < s; j++) {
        const src = input + (<usize>(n0 + j) * <usize>C + <usize>(g * Cg)) * HW * es;
        if (sizeof<T>() == 4) winogradInputF32(src, Cg, H, W, tH, tW, ph, pw, V, T, j * tps);
        else winogradInput<T>(src, Cg, H, W, tH, tW, ph, pw, V, T, j * tps);
        const dy = gradOut + (<usize>(n0 + j) * <usize>OC + <usize>(g * OCg)) * OHW * es;
        winogradGradTiles<T>(dy, OCg, OH, OW, tH, tW, Z, T, j * tps);
      }
      const beta: f64 = n0 == 0 ? 0 : 1;
      for (let xi = 0; xi < 16; xi++) {
        // dU^T[xi] (Cg x OCg) (+)= V[xi] (Cg x T) @ Z[xi] (T x OCg).
        const status = gemm_generic(
          dtype,
          Cg,
          OCg,
          T,
          1,
          V + <usize>xi * <usize>Cg * <usize>T * es,
          T,
          1,
          Z + <usize>xi * <usize>T * <usize>OCg * es,
          OCg,
          1,
          beta,
          dU + <usize>xi * <usize>OCg * <usize>Cg * es,
          OCg,
          1,
          gw,
        );
        if (status != STATUS_OK) return status;
      }
    }
    winogradWeightsBack<T>(dU, OCg, Cg, gradW + <usize>(g * OCg) * <usize>Cg * 9 * es);
  }
  return STATUS_OK;
}

/**
 * Z[xi][t0 + tile][o] = (A dY A^T)[xi] for every 2x2 tile dY of the OCg gradient planes at `dy` (0 outside).
 * Channels go in blocks of 8 with the tiles inside, so the stores of a block stay within a few cache lines and
 * only 8 planes are read at once.
 */
function winogradGradTiles<T>(dy: usize, OCg: i32, OH: i32, OW: i32, tH: i32, tW: i32, Z: usize, T: i32, t0: i32): void {
  const es = <usize>sizeof<T>();
  const plane = <usize>OCg * <usize>T * es;
  for (let o0 = 0; o0 < OCg; o0 += 8) {
    const o1 = min(o0 + 8, OCg);
    for (let ty = 0; ty < tH; ty++) {
      const h = 2 * ty;
      const down = h + 1 < OH;
      for (let tx = 0; tx < tW; tx++) {
        const w = 2 * tx;
        const right = w + 1 < OW;
        const tile = Z + ((<usize>t0 + <usize>(ty * tW + tx)) * <usize>OCg) * es;
        for (let o = o0; o < o1; o++) {
          const q = dy + (<usize>o * <usize>OH * <usize>OW + <usize>h * <usize>OW + <usize>w) * es;
          const p00 = load<T>(q), p01: T = right ? load<T>(q + es) : <T>0;
          const p10: T = down ? load<T>(q + <usize>OW * es) : <T>0;
          const p11: T = right && down ? load<T>(q + <usize>OW * es + es) : <T>0;
          // Rows of A dY (4 x 2), then each row [u, v] -> [u, u + v, u - v, -v].
          const u1 = p00 + p10, v1 = p01 + p11, u2 = p00 - p10, v2 = p01 - p11;
          const at = tile + <usize>o * es;
          store<T>(at, p00);
          store<T>(at + plane, p00 + p01);
          store<T>(at + 2 * plane, p00 - p01);
          store<T>(at + 3 * plane, -p01);
          store<T>(at + 4 * plane, u1);
          store<T>(at + 5 * plane, u1 + v1);
          store<T>(at + 6 * plane, u1 - v1);
          store<T>(at + 7 * plane, -v1);
          store<T>(at + 8 * plane, u2);
          store<T>(at + 9 * plane, u2 + v2);
          store<T>(at + 10 * plane, u2 - v2);
          store<T>(at + 11 * plane, -v2);
          store<T>(at + 12 * plane, -p10);
          store<T>(at + 13 * plane, -(p10 + p11));
          store<T>(at + 14 * plane, p11 - p10);
          store<T>(at + 15 * plane, p11);
        }
      }
    }
  }
}

/** gradW[o][c] (3x3) = G^T dU[o][c] G, from dU^T stored as [xi][c][o] (4x4 per (o, c)). */
function winogradWeightsBack<T>(dU: usize, OCg: i32, Cg: i32, gradW: usize): void {
  const es = <usize>sizeof<T>();
  const plane = <usize>OCg * <usize>Cg * es;
  const half: T = <T>0.5;
  for (let o = 0; o < OCg; o++) {
    for (let c = 0; c < Cg; c++) {
      const at = dU + (<usize>c * <usize>OCg + <usize>o) * es;
      const k = gradW + (<usize>o * <usize>Cg + <usize>c) * 9 * es;
      // G^T = [1 1/2 1/2 0; 0 1/2 -1/2 0; 0 1/2 1/2 1]: rows of G^T dU (3 x 4), then columns by G.
      for (let col = 0; col < 4; col++) {
        const m0 = load<T>(at + <usize>col * plane), m1 = load<T>(at + <usize>(4 + col) * plane);
        const m2 = load<T>(at + <usize>(8 + col) * plane), m3 = load<T>(at + <usize>(12 + col) * plane);
        store<T>(WINOGRAD_SCRATCH + <usize>col * 8, <T>(m0 + (m1 + m2) * half));
        store<T>(WINOGRAD_SCRATCH + <usize>(4 + col) * 8, <T>((m1 - m2) * half));
        store<T>(WINOGRAD_SCRATCH + <usize>(8 + col) * 8, <T>((m1 + m2) * half + m3));
      }
      for (let r = 0; r < 3; r++) {
        const a0 = load<T>(WINOGRAD_SCRATCH + <usize>(r * 4) * 8), a1 = load<T>(WINOGRAD_SCRATCH + <usize>(r * 4 + 1) * 8);
        const a2 = load<T>(WINOGRAD_SCRATCH + <usize>(r * 4 + 2) * 8), a3 = load<T>(WINOGRAD_SCRATCH + <usize>(r * 4 + 3) * 8);
        store<T>(k + <usize>(r * 3) * es, a0 + (a1 + a2) * half);
        store<T>(k + <usize>(r * 3 + 1) * es, (a1 - a2) * half);
        store<T>(k + <usize>(r * 3 + 2) * es, (a1 + a2) * half + a3);
      }
    }
  }
}

/** 12 slots of 8 bytes for winogradWeightsBack's intermediate 3 x 4 matrix. */
const WINOGRAD_SCRATCH: usize = memory.data(12 * 8, 16);

/** U[xi][o][c] = (G g G^T)[xi] for the 3x3 kernels g of weight [OCg, Cg, 3, 3]. */
function winogradWeights<T>(weight: usize, OCg: i32, Cg: i32, U: usize): void {
  const es = <usize>sizeof<T>();
  const plane = <usize>OCg * <usize>Cg * es;
  const half: T = <T>0.5;
  for (let o = 0; o < OCg; o++) {
    for (let c = 0; c < Cg; c++) {
      const k = weight + (<usize>o * <usize>Cg + <usize>c) * 9 * es;
      const at = (<usize>o * <usize>Cg + <usize>c) * es;
      // u = G g (4 x 3), one column j at a time, then U = u G^T row by row.
      const u = memory.data(12 * 8, 16);
      for (let j = 0; j < 3; j++) {
        const g0 = load<T>(k + <usize>j * es), g1 = load<T>(k + <usize>(3 + j) * es), g2 = load<T>(k + <usize>(6 + j) * es);
        store<T>(u + <usize>j * es, g0);
        store<T>(u + <usize>(3 + j) * es, (g0 + g1 + g2) * half);
        store<T>(u + <usize>(6 + j) * es, (g0 - g1 + g2) * half);
        store<T>(u + <usize>(9 + j) * es, g2);
      }
      for (let i = 0; i < 4; i++) {
        const r0 = load<T>(u + <usize>(i * 3) * es), r1 = load<T>(u + <usize>(i * 3 + 1) * es);
        const r2 = load<T>(u + <usize>(i * 3 + 2) * es);
        store<T>(U + <usize>(i * 4) * plane + at, r0);
        store<T>(U + <usize>(i * 4 + 1) * plane + at, (r0 + r1 + r2) * half);
        store<T>(U + <usize>(i * 4 + 2) * plane + at, (r0 - r1 + r2) * half);
        store<T>(U + <usize>(i * 4 + 3) * plane + at, r2);
      }
    }
  }
}

/** One input element, 0 outside the plane. */
// @ts-ignore: decorator
@inline
function pix<T>(plane: usize, H: i32, W: i32, h: i32, w: i32): T {
  if (<u32>h >= <u32>H || <u32>w >= <u32>W) return <T>0;
  return load<T>(plane + (<usize>h * <usize>W + <usize>w) * <usize>sizeof<T>());
}

/** V[xi] at `at` (planes `plane` bytes apart) = (B^T d B)[xi] for the 4x4 patch d at (h, w) of plane `p`. */
// @ts-ignore: decorator
@inline
function winogradInputTile<T>(p: usize, H: i32, W: i32, h: i32, w: i32, at: usize, plane: usize): void {
  const es = <usize>sizeof<T>();
  let d00: T, d01: T, d02: T, d03: T, d10: T, d11: T, d12: T, d13: T;
  let d20: T, d21: T, d22: T, d23: T, d30: T, d31: T, d32: T, d33: T;
  if (h >= 0 && w >= 0 && h + 4 <= H && w + 4 <= W) {
    const q = p + (<usize>h * <usize>W + <usize>w) * es, rs = <usize>W * es;
    d00 = load<T>(q), d01 = load<T>(q + es), d02 = load<T>(q + 2 * es), d03 = load<T>(q + 3 * es);
    d10 = load<T>(q + rs), d11 = load<T>(q + rs + es), d12 = load<T>(q + rs + 2 * es), d13 = load<T>(q + rs + 3 * es);
    const q2 = q + 2 * rs, q3 = q + 3 * rs;
    d20 = load<T>(q2), d21 = load<T>(q2 + es), d22 = load<T>(q2 + 2 * es), d23 = load<T>(q2 + 3 * es);
    d30 = load<T>(q3), d31 = load<T>(q3 + es), d32 = load<T>(q3 + 2 * es), d33 = load<T>(q3 + 3 * es);
  } else {
    d00 = pix<T>(p, H, W, h, w), d01 = pix<T>(p, H, W, h, w + 1);
    d02 = pix<T>(p, H, W, h, w + 2), d03 = pix<T>(p, H, W, h, w + 3);
    d10 = pix<T>(p, H, W, h + 1, w), d11 = pix<T>(p, H, W, h + 1, w + 1);
    d12 = pix<T>(p, H, W, h + 1, w + 2), d13 = pix<T>(p, H, W, h + 1, w + 3);
    d20 = pix<T>(p, H, W, h + 2, w), d21 = pix<T>(p, H, W, h + 2, w + 1);
    d22 = pix<T>(p, H, W, h + 2, w + 2), d23 = pix<T>(p, H, W, h + 2, w + 3);
    d30 = pix<T>(p, H, W, h + 3, w), d31 = pix<T>(p, H, W, h + 3, w + 1);
    d32 = pix<T>(p, H, W, h + 3, w + 2), d33 = pix<T>(p, H, W, h + 3, w + 3);
  }
  // Rows: t = B^T d.
  const a0 = d00 - d20, a1 = d01 - d21, a2 = d02 - d22, a3 = d03 - d23;
  const b0 = d10 + d20, b1 = d11 + d21, b2 = d12 + d22, b3 = d13 + d23;
  const c0 = d20 - d10, c1 = d21 - d11, c2 = d22 - d12, c3 = d23 - d13;
  const e0 = d10 - d30, e1 = d11 - d31, e2 = d12 - d32, e3 = d13 - d33;
  // Columns: V = t B.
  store<T>(at, a0 - a2);
  store<T>(at + plane, a1 + a2);
  store<T>(at + 2 * plane, a2 - a1);
  store<T>(at + 3 * plane, a1 - a3);
  store<T>(at + 4 * plane, b0 - b2);
  store<T>(at + 5 * plane, b1 + b2);
  store<T>(at + 6 * plane, b2 - b1);
  store<T>(at + 7 * plane, b1 - b3);
  store<T>(at + 8 * plane, c0 - c2);
  store<T>(at + 9 * plane, c1 + c2);
  store<T>(at + 10 * plane, c2 - c1);
  store<T>(at + 11 * plane, c1 - c3);
  store<T>(at + 12 * plane, e0 - e2);
  store<T>(at + 13 * plane, e1 + e2);
  store<T>(at + 14 * plane, e2 - e1);
  store<T>(at + 15 * plane, e1 - e3);
}

/** V[xi][c][t0 + tile] = (B^T d B)[xi] for every 4x4 input patch d of the Cg planes at `src`. */
function winogradInput<T>(
  src: usize,
  Cg: i32,
  H: i32,
  W: i32,
  tH: i32,
  tW: i32,
  ph: i32,
  pw: i32,
  V: usize,
  T: i32,
  t0: i32,
): void {
  const es = <usize>sizeof<T>();
  const plane = <usize>Cg * <usize>T * es;
  for (let c = 0; c < Cg; c++) {
    const p = src + <usize>c * <usize>H * <usize>W * es;
    const row0 = V + (<usize>c * <usize>T + <usize>t0) * es;
    for (let ty = 0; ty < tH; ty++) {
      for (let tx = 0; tx < tW; tx++) {
        winogradInputTile<T>(p, H, W, 2 * ty - ph, 2 * tx - pw, row0 + <usize>(ty * tW + tx) * es, plane);
      }
    }
  }
}

/** Row r of a patch as four f32 vectors, lane i holding column k of tile i (columns w + 2i + k, k = 0..3). */
// @ts-ignore: decorator
@inline
function patchColumn(v0: v128, v1: v128, v2: v128, k: i32): v128 {
  if (k == 0) return v128.shuffle<f32>(v0, v1, 0, 2, 4, 6);
  if (k == 1) return v128.shuffle<f32>(v0, v1, 1, 3, 5, 7);
  if (k == 2) return v128.shuffle<f32>(v128.shuffle<f32>(v0, v1, 0, 2, 4, 6), v128.shuffle<f32>(v1, v2, 0, 2, 4, 6), 1, 2, 3, 6);
  return v128.shuffle<f32>(v128.shuffle<f32>(v0, v1, 1, 3, 5, 7), v128.shuffle<f32>(v1, v2, 1, 3, 5, 7), 1, 2, 3, 6);
}

/**
 * winogradInput for f32, four tiles along a row at a time (lanes are tiles, so each of the 16 results is one
 * contiguous vector store); patches reaching past the left or right edge take the scalar path, rows outside
 * the plane are zero vectors.
 */
function winogradInputF32(
  src: usize,
  Cg: i32,
  H: i32,
  W: i32,
  tH: i32,
  tW: i32,
  ph: i32,
  pw: i32,
  V: usize,
  T: i32,
  t0: i32,
): void {
  const plane = <usize>Cg * <usize>T * 4;
  const zero = f32x4.splat(0);
  for (let c = 0; c < Cg; c++) {
    const p = src + <usize>c * <usize>H * <usize>W * 4;
    const row0 = V + (<usize>c * <usize>T + <usize>t0) * 4;
    for (let ty = 0; ty < tH; ty++) {
      const h = 2 * ty - ph;
      let tx = 0;
      while (tx < tW) {
        const w = 2 * tx - pw;
        const at = row0 + <usize>(ty * tW + tx) * 4;
        // Four tiles read columns w .. w + 9.
        if (tx + 4 > tW || w < 0 || w + 10 > W) {
          winogradInputTile<f32>(p, H, W, h, w, at, plane);
          tx++;
          continue;
        }
        let r0c0 = zero, r0c1 = zero, r0c2 = zero, r0c3 = zero, r1c0 = zero, r1c1 = zero, r1c2 = zero, r1c3 = zero;
        let r2c0 = zero, r2c1 = zero, r2c2 = zero, r2c3 = zero, r3c0 = zero, r3c1 = zero, r3c2 = zero, r3c3 = zero;
        for (let r = 0; r < 4; r++) {
          const hr = h + r;
          if (hr < 0 || hr >= H) continue;
          const q = p + (<usize>hr * <usize>W + <usize>w) * 4;
          const v0 = v128.load(q), v1 = v128.load(q, 16), v2 = v128.load64_zero(q, 32);
          const k0 = patchColumn(v0, v1, v2, 0), k1 = patchColumn(v0, v1, v2, 1);
          const k2 = patchColumn(v0, v1, v2, 2), k3 = patchColumn(v0, v1, v2, 3);
          if (r == 0) {
            r0c0 = k0, r0c1 = k1, r0c2 = k2, r0c3 = k3;
          } else if (r == 1) {
            r1c0 = k0, r1c1 = k1, r1c2 = k2, r1c3 = k3;
          } else if (r == 2) {
            r2c0 = k0, r2c1 = k1, r2c2 = k2, r2c3 = k3;
          } else {
            r3c0 = k0, r3c1 = k1, r3c2 = k2, r3c3 = k3;
          }
        }
        const a0 = f32x4.sub(r0c0, r2c0), a1 = f32x4.sub(r0c1, r2c1), a2 = f32x4.sub(r0c2, r2c2), a3 = f32x4.sub(r0c3, r2c3);
        const b0 = f32x4.add(r1c0, r2c0), b1 = f32x4.add(r1c1, r2c1), b2 = f32x4.add(r1c2, r2c2), b3 = f32x4.add(r1c3, r2c3);
        const c0 = f32x4.sub(r2c0, r1c0), c1 = f32x4.sub(r2c1, r1c1), c2 = f32x4.sub(r2c2, r1c2), c3 = f32x4.sub(r2c3, r1c3);
        const e0 = f32x4.sub(r1c0, r3c0), e1 = f32x4.sub(r1c1, r3c1), e2 = f32x4.sub(r1c2, r3c2), e3 = f32x4.sub(r1c3, r3c3);
        v128.store(at, f32x4.sub(a0, a2));
        v128.store(at + plane, f32x4.add(a1, a2));
        v128.store(at + 2 * plane, f32x4.sub(a2, a1));
        v128.store(at + 3 * plane, f32x4.sub(a1, a3));
        v128.store(at + 4 * plane, f32x4.sub(b0, b2));
        v128.store(at + 5 * plane, f32x4.add(b1, b2));
        v128.store(at + 6 * plane, f32x4.sub(b2, b1));
        v128.store(at + 7 * plane, f32x4.sub(b1, b3));
        v128.store(at + 8 * plane, f32x4.sub(c0, c2));
        v128.store(at + 9 * plane, f32x4.add(c1, c2));
        v128.store(at + 10 * plane, f32x4.sub(c2, c1));
        v128.store(at + 11 * plane, f32x4.sub(c1, c3));
        v128.store(at + 12 * plane, f32x4.sub(e0, e2));
        v128.store(at + 13 * plane, f32x4.add(e1, e2));
        v128.store(at + 14 * plane, f32x4.sub(e2, e1));
        v128.store(at + 15 * plane, f32x4.sub(e1, e3));
        tx += 4;
      }
    }
  }
}

/** winogradOutput for f32, four tiles along a row at a time where their 8 output columns are all inside. */
function winogradOutputF32(M: usize, OCg: i32, T: i32, t0: i32, tW: i32, OH: i32, OW: i32, bias: usize, dst: usize): void {
  const plane = <usize>OCg * <usize>T * 4;
  const tH = (OH + 1) >> 1;
  for (let o = 0; o < OCg; o++) {
    const bs: f32 = bias == 0 ? 0 : load<f32>(bias + <usize>o * 4);
    const bv = f32x4.splat(bs);
    const row0 = M + (<usize>o * <usize>T + <usize>t0) * 4;
    const y = dst + <usize>o * <usize>OH * <usize>OW * 4;
    for (let ty = 0; ty < tH; ty++) {
      const h = 2 * ty;
      let tx = 0;
      while (tx < tW) {
        const at = row0 + <usize>(ty * tW + tx) * 4;
        if (tx + 4 > tW || 2 * tx + 8 > OW) {
          winogradOutputTile<f32>(at, plane, bs, y, h, 2 * tx, OH, OW);
          tx++;
          continue;
        }
        const m0 = v128.load(at), m1 = v128.load(at + plane), m2 = v128.load(at + 2 * plane);
        const m3 = v128.load(at + 3 * plane), m4 = v128.load(at + 4 * plane), m5 = v128.load(at + 5 * plane);
        const m6 = v128.load(at + 6 * plane), m7 = v128.load(at + 7 * plane), m8 = v128.load(at + 8 * plane);
        const m9 = v128.load(at + 9 * plane), m10 = v128.load(at + 10 * plane), m11 = v128.load(at + 11 * plane);
        const m12 = v128.load(at + 12 * plane), m13 = v128.load(at + 13 * plane), m14 = v128.load(at + 14 * plane);
        const m15 = v128.load(at + 15 * plane);
        const s0 = f32x4.add(f32x4.add(m0, m4), m8), s1 = f32x4.add(f32x4.add(m1, m5), m9);
        const s2 = f32x4.add(f32x4.add(m2, m6), m10), s3 = f32x4.add(f32x4.add(m3, m7), m11);
        const r0 = f32x4.sub(f32x4.sub(m4, m8), m12), r1 = f32x4.sub(f32x4.sub(m5, m9), m13);
        const r2 = f32x4.sub(f32x4.sub(m6, m10), m14), r3 = f32x4.sub(f32x4.sub(m7, m11), m15);
        const y00 = f32x4.add(f32x4.add(f32x4.add(s0, s1), s2), bv);
        const y01 = f32x4.add(f32x4.sub(f32x4.sub(s1, s2), s3), bv);
        const p = y + (<usize>h * <usize>OW + <usize>(2 * tx)) * 4;
        v128.store(p, v128.shuffle<f32>(y00, y01, 0, 4, 1, 5));
        v128.store(p, v128.shuffle<f32>(y00, y01, 2, 6, 3, 7), 16);
        if (h + 1 < OH) {
          const y10 = f32x4.add(f32x4.add(f32x4.add(r0, r1), r2), bv);
          const y11 = f32x4.add(f32x4.sub(f32x4.sub(r1, r2), r3), bv);
          const q = p + <usize>OW * 4;
          v128.store(q, v128.shuffle<f32>(y10, y11, 0, 4, 1, 5));
          v128.store(q, v128.shuffle<f32>(y10, y11, 2, 6, 3, 7), 16);
        }
        tx += 4;
      }
    }
  }
}

/** The 2x2 output tile at (h, w) from M's 16 entries at `at` (planes `plane` bytes apart), clipped, + bias. */
// @ts-ignore: decorator
@inline
function winogradOutputTile<T>(at: usize, plane: usize, bv: T, y: usize, h: i32, w: i32, OH: i32, OW: i32): void {
  const es = <usize>sizeof<T>();
  const m0 = load<T>(at), m1 = load<T>(at + plane), m2 = load<T>(at + 2 * plane), m3 = load<T>(at + 3 * plane);
  const m4 = load<T>(at + 4 * plane), m5 = load<T>(at + 5 * plane), m6 = load<T>(at + 6 * plane);
  const m7 = load<T>(at + 7 * plane), m8 = load<T>(at + 8 * plane), m9 = load<T>(at + 9 * plane);
  const m10 = load<T>(at + 10 * plane), m11 = load<T>(at + 11 * plane), m12 = load<T>(at + 12 * plane);
  const m13 = load<T>(at + 13 * plane), m14 = load<T>(at + 14 * plane), m15 = load<T>(at + 15 * plane);
  // Rows: s = A^T m (2 x 4).
  const s0 = m0 + m4 + m8, s1 = m1 + m5 + m9, s2 = m2 + m6 + m10, s3 = m3 + m7 + m11;
  const r0 = m4 - m8 - m12, r1 = m5 - m9 - m13, r2 = m6 - m10 - m14, r3 = m7 - m11 - m15;
  // Columns: Y = s A (2 x 2), clipped to the output.
  const p = y + (<usize>h * <usize>OW + <usize>w) * es;
  store<T>(p, s0 + s1 + s2 + bv);
  if (w + 1 < OW) store<T>(p + es, s1 - s2 - s3 + bv);
  if (h + 1 < OH) {
    const q = p + <usize>OW * es;
    store<T>(q, r0 + r1 + r2 + bv);
    if (w + 1 < OW) store<T>(q + es, r1 - r2 - r3 + bv);
  }
}

/** out[o] (OH x OW, + bias[o]) = A^T m A of M[xi][o][t0 + tile] for every tile of one sample. */
function winogradOutput<T>(M: usize, OCg: i32, T: i32, t0: i32, tW: i32, OH: i32, OW: i32, bias: usize, dst: usize): void {
  const es = <usize>sizeof<T>();
  const plane = <usize>OCg * <usize>T * es;
  const tH = (OH + 1) >> 1;
  for (let o = 0; o < OCg; o++) {
    const bv: T = bias == 0 ? <T>0 : load<T>(bias + <usize>o * es);
    const row0 = M + (<usize>o * <usize>T + <usize>t0) * es;
    const y = dst + <usize>o * <usize>OH * <usize>OW * es;
    for (let ty = 0; ty < tH; ty++) {
      for (let tx = 0; tx < tW; tx++) {
        winogradOutputTile<T>(row0 + <usize>(ty * tW + tx) * es, plane, bv, y, 2 * ty, 2 * tx, OH, OW);
      }
    }
  }
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

// ---------------------------------------------------------------------------------------------------------
// Batch normalisation over [N, C, HW] (contiguous), statistics per channel accumulated in f64.

/**
 * out = (x - mean) * invstd * weight + bias per channel c. Training: mean and the biased variance of the
 * batch, written to saveMean / saveInvstd (invstd = 1 / sqrt(var + eps)), and the running statistics (when
 * given: address != 0) moved by `momentum`, the variance unbiased (count / (count - 1)) as PyTorch does.
 * Evaluation: the running statistics (required), saveMean / saveInvstd not written. weight / bias 0 for none.
 */
export function batch_norm_forward(
  dtype: i32,
  N: i32,
  C: i32,
  HW: i32,
  input: usize,
  weight: usize,
  bias: usize,
  runningMean: usize,
  runningVar: usize,
  training: i32,
  momentum: f64,
  eps: f64,
  out: usize,
  saveMean: usize,
  saveInvstd: usize,
): i32 {
  if (training == 0 && (runningMean == 0 || runningVar == 0)) return STATUS_BAD_ARGUMENT;
  if (dtype == DT_F32) {
    batchNormForward<f32>(N, C, HW, input, weight, bias, runningMean, runningVar, training != 0, momentum, eps, out, saveMean, saveInvstd);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    batchNormForward<f64>(N, C, HW, input, weight, bias, runningMean, runningVar, training != 0, momentum, eps, out, saveMean, saveInvstd);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

function batchNormForward<T>(
  N: i32,
  C: i32,
  HW: i32,
  input: usize,
  weight: usize,
  bias: usize,
  runningMean: usize,
  runningVar: usize,
  training: bool,
  momentum: f64,
  eps: f64,
  out: usize,
  saveMean: usize,
  saveInvstd: usize,
): void {
  const es = <usize>sizeof<T>();
  const count = <f64>N * <f64>HW;
  for (let c = 0; c < C; c++) {
    let mean: f64, invstd: f64;
    if (training) {
      let sum: f64 = 0;
      for (let n = 0; n < N; n++) {
        const row = input + (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
        for (let p = 0; p < HW; p++) sum += <f64>load<T>(row + <usize>p * es);
      }
      mean = sum / count;
      let sq: f64 = 0;
      for (let n = 0; n < N; n++) {
        const row = input + (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
        for (let p = 0; p < HW; p++) {
          const d = <f64>load<T>(row + <usize>p * es) - mean;
          sq += d * d;
        }
      }
      const variance = sq / count;
      invstd = 1 / Math.sqrt(variance + eps);
      store<T>(saveMean + <usize>c * es, <T>mean);
      store<T>(saveInvstd + <usize>c * es, <T>invstd);
      if (runningMean != 0) {
        const at = runningMean + <usize>c * es;
        store<T>(at, <T>((1 - momentum) * <f64>load<T>(at) + momentum * mean));
      }
      if (runningVar != 0) {
        const at = runningVar + <usize>c * es;
        const unbiased = count > 1 ? (sq / (count - 1)) : NaN;
        store<T>(at, <T>((1 - momentum) * <f64>load<T>(at) + momentum * unbiased));
      }
    } else {
      mean = <f64>load<T>(runningMean + <usize>c * es);
      invstd = 1 / Math.sqrt(<f64>load<T>(runningVar + <usize>c * es) + eps);
    }
    const w: f64 = weight == 0 ? 1 : <f64>load<T>(weight + <usize>c * es);
    const b: f64 = bias == 0 ? 0 : <f64>load<T>(bias + <usize>c * es);
    const scale = invstd * w, shift = b - mean * scale;
    for (let n = 0; n < N; n++) {
      const offset = (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
      for (let p = 0; p < HW; p++) {
        const at = <usize>p * es;
        store<T>(out + offset + at, <T>(<f64>load<T>(input + offset + at) * scale + shift));
      }
    }
  }
}

/**
 * Gradients of batch_norm_forward: gradIn (training: through the batch statistics saveMean / saveInvstd;
 * evaluation: dy * invstd * weight with the running statistics), gradWeight[c] = sum dy * (x - mean) * invstd,
 * gradBias[c] = sum dy. Each output address may be 0 (not wanted); `mean` and `varOrInvstd` are saveMean and
 * saveInvstd in training, runningMean and runningVar in evaluation.
 */
export function batch_norm_backward(
  dtype: i32,
  N: i32,
  C: i32,
  HW: i32,
  gradOut: usize,
  input: usize,
  weight: usize,
  mean: usize,
  varOrInvstd: usize,
  training: i32,
  eps: f64,
  gradIn: usize,
  gradWeight: usize,
  gradBias: usize,
): i32 {
  if (dtype == DT_F32) {
    batchNormBackward<f32>(N, C, HW, gradOut, input, weight, mean, varOrInvstd, training != 0, eps, gradIn, gradWeight, gradBias);
    return STATUS_OK;
  }
  if (dtype == DT_F64) {
    batchNormBackward<f64>(N, C, HW, gradOut, input, weight, mean, varOrInvstd, training != 0, eps, gradIn, gradWeight, gradBias);
    return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

function batchNormBackward<T>(
  N: i32,
  C: i32,
  HW: i32,
  gradOut: usize,
  input: usize,
  weight: usize,
  meanAt: usize,
  varOrInvstd: usize,
  training: bool,
  eps: f64,
  gradIn: usize,
  gradWeight: usize,
  gradBias: usize,
): void {
  const es = <usize>sizeof<T>();
  const count = <f64>N * <f64>HW;
  for (let c = 0; c < C; c++) {
    const mean = <f64>load<T>(meanAt + <usize>c * es);
    const invstd: f64 = training
      ? <f64>load<T>(varOrInvstd + <usize>c * es)
      : 1 / Math.sqrt(<f64>load<T>(varOrInvstd + <usize>c * es) + eps);
    let sumDy: f64 = 0, sumDyXmu: f64 = 0;
    for (let n = 0; n < N; n++) {
      const offset = (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
      for (let p = 0; p < HW; p++) {
        const at = offset + <usize>p * es;
        const dy = <f64>load<T>(gradOut + at);
        sumDy += dy;
        sumDyXmu += dy * (<f64>load<T>(input + at) - mean);
      }
    }
    if (gradWeight != 0) store<T>(gradWeight + <usize>c * es, <T>(sumDyXmu * invstd));
    if (gradBias != 0) store<T>(gradBias + <usize>c * es, <T>sumDy);
    if (gradIn == 0) continue;
    const w: f64 = weight == 0 ? 1 : <f64>load<T>(weight + <usize>c * es);
    const meanDy = sumDy / count, proj = sumDyXmu * invstd * invstd / count;
    for (let n = 0; n < N; n++) {
      const offset = (<usize>n * <usize>C + <usize>c) * <usize>HW * es;
      for (let p = 0; p < HW; p++) {
        const at = offset + <usize>p * es;
        const dy = <f64>load<T>(gradOut + at);
        const g = training ? (dy - meanDy - (<f64>load<T>(input + at) - mean) * proj) * invstd * w : dy * invstd * w;
        store<T>(gradIn + at, <T>g);
      }
    }
  }
}
