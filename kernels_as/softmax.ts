// softmax / log_softmax over R of a contiguous [outer, R, inner] input, their backward, and nll_loss.
//
// Note [Stable softmax]: y = exp(x - m) / sum exp(x - m) with m the max over R, so no exp overflows and the
// largest term is exactly 1; log_softmax is (x - m) - log(sum exp(x - m)), PyTorch's order of operations.
// A row takes three passes: max, exp-and-sum (softmax stores the exps in `out` when it is the compute type),
// then scale by 1 / sum (or subtract the log-sum). A NaN anywhere in a row makes m NaN, so the whole row is NaN,
// as in PyTorch. Half and BFloat16 compute in f32; softmax then recomputes exp in the last pass rather than
// rounding it to 16 bits twice. `out` may alias `a`: each pass reads a position before it writes it.
//
// Note [Vector exp]: exp for f32 lanes is Cephes' expf: n = round(x log2 e) by the 1.5 * 2^23 trick (whose bits
// also hold n + 127, so shifting them left by 23 builds 2^n), r = x - n ln 2 in two parts, a degree-6
// polynomial, about 1 ulp. Lanes below ln 2^-126 are masked to 0 (so exp(-inf) = 0 exactly, which masked-out
// logits need); there is no upper clamp because every caller passes x <= 0 (x - max, or a log-probability):
// above 88.7 the result would be garbage, not inf. No min / max clamps: wasm's NaN-propagating f32x4.min / max
// cost ~8 instructions each on x64 and doubled the cost of the whole exp. The constants live in EXP_CONSTANTS
// (linalg_util.ts Note [Constants in hot loops]). f64 lanes use the scalar Math.exp.
import {
  DT_BF16,
  DT_F16,
  DT_F32,
  DT_F64,
  elemBytes,
  isBFloat16Tag,
  isHalfTag,
  ld,
  st,
  STATUS_BAD_ARGUMENT,
  STATUS_OK,
  STATUS_UNSUPPORTED,
} from './common';
import { hsum, loadVec, madd, STATUS_TARGET_OUT_OF_BOUNDS, storeVec } from './linalg_util';

const EXP_CONSTANTS: usize = memory.data<f32>(
  [
    1.44269504088896341, 1.44269504088896341, 1.44269504088896341, 1.44269504088896341, // log2(e)
    12583039.0, 12583039.0, 12583039.0, 12583039.0, // 1.5 * 2^23 + 127
    -0.693359375, -0.693359375, -0.693359375, -0.693359375, // -ln 2, high part
    2.12194440e-4, 2.12194440e-4, 2.12194440e-4, 2.12194440e-4, // -ln 2, low part
    1.9875691500e-4, 1.9875691500e-4, 1.9875691500e-4, 1.9875691500e-4, // p0
    1.3981999507e-3, 1.3981999507e-3, 1.3981999507e-3, 1.3981999507e-3, // p1
    8.3334519073e-3, 8.3334519073e-3, 8.3334519073e-3, 8.3334519073e-3, // p2
    4.1665795894e-2, 4.1665795894e-2, 4.1665795894e-2, 4.1665795894e-2, // p3
    1.6666665459e-1, 1.6666665459e-1, 1.6666665459e-1, 1.6666665459e-1, // p4
    5.0000001201e-1, 5.0000001201e-1, 5.0000001201e-1, 5.0000001201e-1, // p5
    1.0, 1.0, 1.0, 1.0,
    -87.336544750553102, -87.336544750553102, -87.336544750553102, -87.336544750553102, // ln 2^-126
  ],
  16,
);

/**
 * exp of 4 f32 lanes (Note [Vector exp]). The caller loads six constants into locals once (each kernel below
 * starts with the same six v128.load lines); the six polynomial coefficients are loaded from EXP_CONSTANTS at
 * each use instead, which keeps the live vectors within JSC's registers (Bun ran this 2x slower when all 13
 * stayed live).
 */
// @ts-ignore: decorator
@inline
function expF32x4(x: v128, log2e: v128, magic: v128, ln2Hi: v128, ln2Lo: v128, one: v128, lo: v128): v128 {
  const t = madd<f32>(x, log2e, magic);
  const n = f32x4.sub(t, magic);
  let r = madd<f32>(n, ln2Hi, x);
  r = madd<f32>(n, ln2Lo, r);
  let y = madd<f32>(v128.load(EXP_CONSTANTS, 64), r, v128.load(EXP_CONSTANTS, 80));
  y = madd<f32>(y, r, v128.load(EXP_CONSTANTS, 96));
  y = madd<f32>(y, r, v128.load(EXP_CONSTANTS, 112));
  y = madd<f32>(y, r, v128.load(EXP_CONSTANTS, 128));
  y = madd<f32>(y, r, v128.load(EXP_CONSTANTS, 144));
  y = f32x4.add(madd<f32>(y, f32x4.mul(r, r), r), one);
  // Below ln 2^-126 the exponent field underflows into garbage: mask those lanes to 0 (NaN lanes compare
  // false and stay NaN).
  return v128.andnot(f32x4.mul(y, i32x4.shl(t, 23)), f32x4.lt(x, lo));
}

/** exp of each lane of a vector of V: expF32x4 for f32, the scalar Math.exp per lane for f64. */
// @ts-ignore: decorator
@inline
function expVec<V>(x: v128, log2e: v128, magic: v128, ln2Hi: v128, ln2Lo: v128, one: v128, lo: v128): v128 {
  if (sizeof<V>() == 8) {
    return f64x2.replace_lane(f64x2.splat(Math.exp(f64x2.extract_lane(x, 0))), 1, Math.exp(f64x2.extract_lane(x, 1)));
  }
  return expF32x4(x, log2e, magic, ln2Hi, ln2Lo, one, lo);
}

/** Scalar exp in V (the row tails and the strided column path). */
// @ts-ignore: decorator
@inline
function expScalar<V>(x: V): V {
  if (sizeof<V>() == 8) return <V>Math.exp(<f64>x);
  return <V>Mathf.exp(<f32>x);
}

// @ts-ignore: decorator
@inline
function logScalar<V>(x: V): V {
  if (sizeof<V>() == 8) return <V>Math.log(<f64>x);
  return <V>Mathf.log(<f32>x);
}

/** True when `out` can hold intermediate exps without rounding (storage is the compute type). */
// @ts-ignore: decorator
@inline
function storesCompute<T>(): bool {
  return !isHalfTag<T>() && !isBFloat16Tag<T>();
}

/** Max over n elements spaced `stride` bytes apart (n >= 1), NaN-propagating. */
function maxStrided<T, V>(p: usize, n: i32, stride: usize): V {
  let m0 = ld<T, V>(p);
  let m1 = m0;
  let i = 1;
  p += stride;
  for (; i + 1 < n; i += 2) {
    m0 = max<V>(m0, ld<T, V>(p));
    m1 = max<V>(m1, ld<T, V>(p + stride));
    p += stride << 1;
  }
  if (i < n) m0 = max<V>(m0, ld<T, V>(p));
  return max<V>(m0, m1);
}

/** Max of the lanes of a vector of V (NaN-propagating). */
// @ts-ignore: decorator
@inline
function maxLanes<V>(v: v128): V {
  if (sizeof<V>() == 8) return max<V>(v128.extract_lane<V>(v, 0), v128.extract_lane<V>(v, 1));
  return max<V>(
    max<V>(v128.extract_lane<V>(v, 0), v128.extract_lane<V>(v, 1)),
    max<V>(v128.extract_lane<V>(v, 2), v128.extract_lane<V>(v, 3)),
  );
}

/** log of each lane (only once per column tile, so scalar). */
// @ts-ignore: decorator
@inline
function logLanes<V>(v: v128): v128 {
  if (sizeof<V>() == 8) {
    return f64x2.replace_lane(f64x2.splat(Math.log(f64x2.extract_lane(v, 0))), 1, Math.log(f64x2.extract_lane(v, 1)));
  }
  let r = f32x4.splat(Mathf.log(f32x4.extract_lane(v, 0)));
  r = f32x4.replace_lane(r, 1, Mathf.log(f32x4.extract_lane(v, 1)));
  r = f32x4.replace_lane(r, 2, Mathf.log(f32x4.extract_lane(v, 2)));
  return f32x4.replace_lane(r, 3, Mathf.log(f32x4.extract_lane(v, 3)));
}

/** softmax / log_softmax of one contiguous row of n >= 1 elements (Note [Stable softmax]). */
function softmaxRow<T, V>(out: usize, a: usize, n: i32, log: bool): void {
  const lanes = <i32>(16 / sizeof<V>());
  const es = elemBytes<T>();
  const vecBytes = <usize>lanes * es;
  const vecEnd = n - n % lanes;
  // Pass 1: max, 4 vector accumulators. pmax (one instruction; it never lets NaN in) plus a NaN flag is ~3x
  // cheaper than the NaN-propagating max (Note [Vector exp]); a NaN anywhere makes m NaN afterwards.
  const first = v128.splat<V>(ld<T, V>(a));
  let m0 = first, m1 = first, m2 = first, m3 = first;
  let nan = v128.splat<i32>(0);
  let i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const p = a + <usize>i * es;
    const x0 = loadVec<T, V>(p);
    const x1 = loadVec<T, V>(p + vecBytes);
    const x2 = loadVec<T, V>(p + vecBytes * 2);
    const x3 = loadVec<T, V>(p + vecBytes * 3);
    m0 = v128.pmax<V>(m0, x0);
    m1 = v128.pmax<V>(m1, x1);
    m2 = v128.pmax<V>(m2, x2);
    m3 = v128.pmax<V>(m3, x3);
    const nan01 = v128.or(v128.ne<V>(x0, x0), v128.ne<V>(x1, x1));
    nan = v128.or(nan, v128.or(nan01, v128.or(v128.ne<V>(x2, x2), v128.ne<V>(x3, x3))));
  }
  for (; i < vecEnd; i += lanes) {
    const x = loadVec<T, V>(a + <usize>i * es);
    m0 = v128.pmax<V>(m0, x);
    nan = v128.or(nan, v128.ne<V>(x, x));
  }
  let m = maxLanes<V>(v128.max<V>(v128.max<V>(m0, m1), v128.max<V>(m2, m3)));
  if (v128.any_true(nan)) m = <V>NaN;
  for (; i < n; i++) m = max<V>(m, ld<T, V>(a + <usize>i * es));
  const mv = v128.splat<V>(m);

  const log2e = v128.load(EXP_CONSTANTS);
  const magic = v128.load(EXP_CONSTANTS, 16);
  const ln2Hi = v128.load(EXP_CONSTANTS, 32);
  const ln2Lo = v128.load(EXP_CONSTANTS, 48);
  const one = v128.load(EXP_CONSTANTS, 160);
  const lo = v128.load(EXP_CONSTANTS, 176);

  // Pass 2: sum of exp(x - m); softmax keeps the exps in `out` when it can hold them exactly.
  const keep = !log && storesCompute<T>();
  let s0 = v128.splat<V>(0);
  let s1 = s0;
  i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const p = a + <usize>i * es;
    const e0 = expVec<V>(v128.sub<V>(loadVec<T, V>(p), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
    const e1 = expVec<V>(
      v128.sub<V>(loadVec<T, V>(p + vecBytes), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
    s0 = v128.add<V>(s0, e0);
    s1 = v128.add<V>(s1, e1);
    if (keep) {
      v128.store(out + <usize>i * es, e0);
      v128.store(out + <usize>i * es + vecBytes, e1);
    }
  }
  for (; i < vecEnd; i += lanes) {
    const e0 = expVec<V>(
      v128.sub<V>(loadVec<T, V>(a + <usize>i * es), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
    s0 = v128.add<V>(s0, e0);
    if (keep) v128.store(out + <usize>i * es, e0);
  }
  let sum = hsum<V>(v128.add<V>(s0, s1));
  for (; i < n; i++) {
    const e = expScalar<V>(ld<T, V>(a + <usize>i * es) - m);
    sum += e;
    if (keep) st<T, V>(out + <usize>i * es, e);
  }

  // Pass 3: normalise.
  if (log) {
    const logSum = logScalar<V>(sum);
    const ls = v128.splat<V>(logSum);
    for (i = 0; i < vecEnd; i += lanes) {
      const p = <usize>i * es;
      storeVec<T, V>(out + p, v128.sub<V>(v128.sub<V>(loadVec<T, V>(a + p), mv), ls));
    }
    for (; i < n; i++) st<T, V>(out + <usize>i * es, ld<T, V>(a + <usize>i * es) - m - logSum);
    return;
  }
  const inv = <V>1 / sum;
  const iv = v128.splat<V>(inv);
  for (i = 0; i < vecEnd; i += lanes) {
    const p = <usize>i * es;
    const e = keep
      ? v128.load(out + p)
      : expVec<V>(v128.sub<V>(loadVec<T, V>(a + p), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
    storeVec<T, V>(out + p, v128.mul<V>(e, iv));
  }
  for (; i < n; i++) {
    const p = <usize>i * es;
    const e = keep ? ld<T, V>(out + p) : expScalar<V>(ld<T, V>(a + p) - m);
    st<T, V>(out + p, e * inv);
  }
}

/** softmax / log_softmax of n >= 1 elements spaced `stride` bytes apart (scalar; the last few columns). */
function softmaxStrided<T, V>(out: usize, a: usize, n: i32, stride: usize, log: bool): void {
  const m = maxStrided<T, V>(a, n, stride);
  let sum = <V>0;
  for (let r = 0; r < n; r++) sum += expScalar<V>(ld<T, V>(a + <usize>r * stride) - m);
  if (log) {
    const logSum = logScalar<V>(sum);
    for (let r = 0; r < n; r++) {
      const p = <usize>r * stride;
      st<T, V>(out + p, ld<T, V>(a + p) - m - logSum);
    }
  } else {
    const inv = <V>1 / sum;
    for (let r = 0; r < n; r++) {
      const p = <usize>r * stride;
      st<T, V>(out + p, expScalar<V>(ld<T, V>(a + p) - m) * inv);
    }
  }
}

/** softmax / log_softmax over the rows of one [R, inner] slice, one vector of columns at a time. */
function softmaxColumns<T, V>(out: usize, a: usize, R: i32, inner: i32, log: bool): void {
  const lanes = <i32>(16 / sizeof<V>());
  const es = elemBytes<T>();
  const rowBytes = <usize>inner * es;
  const log2e = v128.load(EXP_CONSTANTS);
  const magic = v128.load(EXP_CONSTANTS, 16);
  const ln2Hi = v128.load(EXP_CONSTANTS, 32);
  const ln2Lo = v128.load(EXP_CONSTANTS, 48);
  const one = v128.load(EXP_CONSTANTS, 160);
  const lo = v128.load(EXP_CONSTANTS, 176);
  const keep = !log && storesCompute<T>();
  let j = 0;
  for (; j + lanes <= inner; j += lanes) {
    const src = a + <usize>j * es;
    const dst = out + <usize>j * es;
    let mv = loadVec<T, V>(src);
    for (let r = 1; r < R; r++) mv = v128.max<V>(mv, loadVec<T, V>(src + <usize>r * rowBytes));
    let sv = v128.splat<V>(0);
    for (let r = 0; r < R; r++) {
      const p = <usize>r * rowBytes;
      const e = expVec<V>(v128.sub<V>(loadVec<T, V>(src + p), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
      sv = v128.add<V>(sv, e);
      if (keep) v128.store(dst + p, e);
    }
    if (log) {
      const ls = logLanes<V>(sv);
      for (let r = 0; r < R; r++) {
        const p = <usize>r * rowBytes;
        storeVec<T, V>(dst + p, v128.sub<V>(v128.sub<V>(loadVec<T, V>(src + p), mv), ls));
      }
    } else {
      const iv = v128.div<V>(v128.splat<V>(<V>1), sv);
      for (let r = 0; r < R; r++) {
        const p = <usize>r * rowBytes;
        const e = keep
          ? v128.load(dst + p)
          : expVec<V>(v128.sub<V>(loadVec<T, V>(src + p), mv), log2e, magic, ln2Hi, ln2Lo, one, lo);
        storeVec<T, V>(dst + p, v128.mul<V>(e, iv));
      }
    }
  }
  for (; j < inner; j++) softmaxStrided<T, V>(out + <usize>j * es, a + <usize>j * es, R, rowBytes, log);
}

function softmaxTyped<T, V>(out: usize, a: usize, outer: i32, R: i32, inner: i32, log: bool): void {
  if (R <= 0) return;
  const sliceBytes = <usize>R * <usize>inner * elemBytes<T>();
  for (let o = 0; o < outer; o++) {
    const off = <usize>o * sliceBytes;
    if (inner == 1) softmaxRow<T, V>(out + off, a + off, R, log);
    else softmaxColumns<T, V>(out + off, a + off, R, inner, log);
  }
}

/**
 * out = softmax(a) (log = 0) or log_softmax(a) (log != 0) over R of a contiguous [outer, R, inner] input; f32,
 * f64, f16 and bf16 (computed in f32). `out` has a's shape and dtype and may be `a` itself.
 */
export function softmax(dtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32, log: i32): i32 {
  switch (dtype) {
    case DT_F32:
      softmaxTyped<f32, f32>(out, a, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_F64:
      softmaxTyped<f64, f64>(out, a, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_F16:
      softmaxTyped<u16, f32>(out, a, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_BF16:
      softmaxTyped<u32, f32>(out, a, outer, R, inner, log != 0);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

// ---------------------------------------------------------------------------------------------------------
// Backward. softmax: gradIn = y * (g - sum_r g * y); log_softmax: gradIn = g - exp(y) * sum_r g, with y the
// forward output and g the incoming gradient (PyTorch's _softmax_backward_data / _log_softmax_backward_data).

/** One slice [R, inner] with rows `stride` bytes apart, `cols` vector columns wide starting at each pointer. */
function softmaxBackwardVec<T, V>(gi: usize, g: usize, y: usize, R: i32, stride: usize, log: bool): void {
  const log2e = v128.load(EXP_CONSTANTS);
  const magic = v128.load(EXP_CONSTANTS, 16);
  const ln2Hi = v128.load(EXP_CONSTANTS, 32);
  const ln2Lo = v128.load(EXP_CONSTANTS, 48);
  const one = v128.load(EXP_CONSTANTS, 160);
  const lo = v128.load(EXP_CONSTANTS, 176);
  let sv = v128.splat<V>(0);
  for (let r = 0; r < R; r++) {
    const p = <usize>r * stride;
    const gv = loadVec<T, V>(g + p);
    sv = log ? v128.add<V>(sv, gv) : madd<V>(gv, loadVec<T, V>(y + p), sv);
  }
  for (let r = 0; r < R; r++) {
    const p = <usize>r * stride;
    const gv = loadVec<T, V>(g + p);
    const yv = loadVec<T, V>(y + p);
    if (log) {
      const e = expVec<V>(yv, log2e, magic, ln2Hi, ln2Lo, one, lo);
      storeVec<T, V>(gi + p, v128.sub<V>(gv, v128.mul<V>(e, sv)));
    } else {
      storeVec<T, V>(gi + p, v128.mul<V>(yv, v128.sub<V>(gv, sv)));
    }
  }
}

/** The scalar form of softmaxBackwardVec for one column (or one row, with stride = element size). */
function softmaxBackwardScalar<T, V>(gi: usize, g: usize, y: usize, R: i32, stride: usize, log: bool): void {
  let s = <V>0;
  for (let r = 0; r < R; r++) {
    const p = <usize>r * stride;
    s += log ? ld<T, V>(g + p) : ld<T, V>(g + p) * ld<T, V>(y + p);
  }
  for (let r = 0; r < R; r++) {
    const p = <usize>r * stride;
    const gv = ld<T, V>(g + p);
    const yv = ld<T, V>(y + p);
    st<T, V>(gi + p, log ? gv - expScalar<V>(yv) * s : yv * (gv - s));
  }
}

/** One contiguous row: vector sums with 2 accumulators, then the elementwise pass. */
function softmaxBackwardRow<T, V>(gi: usize, g: usize, y: usize, n: i32, log: bool): void {
  const lanes = <i32>(16 / sizeof<V>());
  const es = elemBytes<T>();
  const vecBytes = <usize>lanes * es;
  const vecEnd = n - n % lanes;
  let s0 = v128.splat<V>(0);
  let s1 = s0;
  let i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const p = <usize>i * es;
    if (log) {
      s0 = v128.add<V>(s0, loadVec<T, V>(g + p));
      s1 = v128.add<V>(s1, loadVec<T, V>(g + p + vecBytes));
    } else {
      s0 = madd<V>(loadVec<T, V>(g + p), loadVec<T, V>(y + p), s0);
      s1 = madd<V>(loadVec<T, V>(g + p + vecBytes), loadVec<T, V>(y + p + vecBytes), s1);
    }
  }
  for (; i < vecEnd; i += lanes) {
    const p = <usize>i * es;
    s0 = log ? v128.add<V>(s0, loadVec<T, V>(g + p)) : madd<V>(loadVec<T, V>(g + p), loadVec<T, V>(y + p), s0);
  }
  let s = hsum<V>(v128.add<V>(s0, s1));
  for (; i < n; i++) {
    const p = <usize>i * es;
    s += log ? ld<T, V>(g + p) : ld<T, V>(g + p) * ld<T, V>(y + p);
  }
  const log2e = v128.load(EXP_CONSTANTS);
  const magic = v128.load(EXP_CONSTANTS, 16);
  const ln2Hi = v128.load(EXP_CONSTANTS, 32);
  const ln2Lo = v128.load(EXP_CONSTANTS, 48);
  const one = v128.load(EXP_CONSTANTS, 160);
  const lo = v128.load(EXP_CONSTANTS, 176);
  const sv = v128.splat<V>(s);
  for (i = 0; i < vecEnd; i += lanes) {
    const p = <usize>i * es;
    const gv = loadVec<T, V>(g + p);
    const yv = loadVec<T, V>(y + p);
    if (log) {
      const e = expVec<V>(yv, log2e, magic, ln2Hi, ln2Lo, one, lo);
      storeVec<T, V>(gi + p, v128.sub<V>(gv, v128.mul<V>(e, sv)));
    } else {
      storeVec<T, V>(gi + p, v128.mul<V>(yv, v128.sub<V>(gv, sv)));
    }
  }
  for (; i < n; i++) {
    const p = <usize>i * es;
    const gv = ld<T, V>(g + p);
    const yv = ld<T, V>(y + p);
    st<T, V>(gi + p, log ? gv - expScalar<V>(yv) * s : yv * (gv - s));
  }
}

function softmaxBackwardTyped<T, V>(gi: usize, g: usize, y: usize, outer: i32, R: i32, inner: i32, log: bool): void {
  const lanes = <i32>(16 / sizeof<V>());
  const es = elemBytes<T>();
  const rowBytes = <usize>inner * es;
  const sliceBytes = <usize>R * rowBytes;
  for (let o = 0; o < outer; o++) {
    const off = <usize>o * sliceBytes;
    if (inner == 1) {
      softmaxBackwardRow<T, V>(gi + off, g + off, y + off, R, log);
      continue;
    }
    let j = 0;
    for (; j + lanes <= inner; j += lanes) {
      const c = off + <usize>j * es;
      softmaxBackwardVec<T, V>(gi + c, g + c, y + c, R, rowBytes, log);
    }
    for (; j < inner; j++) {
      const c = off + <usize>j * es;
      softmaxBackwardScalar<T, V>(gi + c, g + c, y + c, R, rowBytes, log);
    }
  }
}

/**
 * gradIn from gradOut (g) and the forward output `out` (y) of softmax (log = 0) or log_softmax (log != 0), all
 * contiguous [outer, R, inner] of one floating dtype. gradIn may alias gradOut.
 */
export function softmax_backward(
  dtype: i32,
  gradIn: usize,
  gradOut: usize,
  out: usize,
  outer: i32,
  R: i32,
  inner: i32,
  log: i32,
): i32 {
  switch (dtype) {
    case DT_F32:
      softmaxBackwardTyped<f32, f32>(gradIn, gradOut, out, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_F64:
      softmaxBackwardTyped<f64, f64>(gradIn, gradOut, out, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_F16:
      softmaxBackwardTyped<u16, f32>(gradIn, gradOut, out, outer, R, inner, log != 0);
      return STATUS_OK;
    case DT_BF16:
      softmaxBackwardTyped<u32, f32>(gradIn, gradOut, out, outer, R, inner, log != 0);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

// ---------------------------------------------------------------------------------------------------------
// nll_loss over log-probabilities logp [N, C] (contiguous) and int64 targets [N]; an optional weight [C].
//
// Note [nll_loss]: PyTorch's semantics: a target equal to ignoreIndex contributes nothing (and 0 in the
// 'none' output); any other target outside [0, C) is an error (STATUS_TARGET_OUT_OF_BOUNDS, checked for every
// target before anything is written, so the TS side can find the first culprit and raise `Target 7 is out of
// bounds.`). 'mean' divides by the total weight of the non-ignored targets (their count without weights), so
// an all-ignored batch gives 0 / 0 = NaN; an empty batch gives NaN for 'mean' and 0 for 'sum'. totalWeight
// receives that total for 'mean' and 'sum' and 0 for 'none' (the backward reads it). We accumulate in f64
// (PyTorch cascades in the input type), which is at least as accurate, and round once.

const REDUCTION_NONE: i32 = 0;
const REDUCTION_MEAN: i32 = 1;
const REDUCTION_SUM: i32 = 2;

/** True when every target is ignoreIndex or in [0, C). */
function targetsInRange(target: usize, N: i32, C: i32, ignoreIndex: i64): bool {
  for (let n = 0; n < N; n++) {
    const t = load<i64>(target + (<usize>n << 3));
    if (t != ignoreIndex && (t < 0 || t >= <i64>C)) return false;
  }
  return true;
}

function nllForwardTyped<T, V>(
  out: usize,
  totalWeight: usize,
  logp: usize,
  target: usize,
  weight: usize,
  N: i32,
  C: i32,
  reduction: i32,
  ignoreIndex: i64,
): void {
  const es = elemBytes<T>();
  if (reduction == REDUCTION_NONE) {
    for (let n = 0; n < N; n++) {
      const t = load<i64>(target + (<usize>n << 3));
      let v = <V>0;
      if (t != ignoreIndex) {
        const w = weight ? ld<T, V>(weight + <usize>t * es) : <V>1;
        v = -ld<T, V>(logp + (<usize>n * <usize>C + <usize>t) * es) * w;
      }
      st<T, V>(out + <usize>n * es, v);
    }
    if (totalWeight) st<T, V>(totalWeight, <V>0);
    return;
  }
  let loss: f64 = 0;
  let total: f64 = 0;
  for (let n = 0; n < N; n++) {
    const t = load<i64>(target + (<usize>n << 3));
    if (t == ignoreIndex) continue;
    const w: f64 = weight ? <f64>ld<T, V>(weight + <usize>t * es) : 1;
    loss -= <f64>ld<T, V>(logp + (<usize>n * <usize>C + <usize>t) * es) * w;
    total += w;
  }
  if (reduction == REDUCTION_MEAN) loss = N == 0 ? NaN : loss / total;
  st<T, V>(out, <V>loss);
  if (totalWeight) st<T, V>(totalWeight, <V>total);
}

/**
 * nll_loss forward: out is [N] for reduction 0 ('none'), a scalar for 1 ('mean') and 2 ('sum'); totalWeight
 * a scalar (may be 0 = not wanted); weight 0 = no class weights; target int64 [N]; logp [N, C]; floating
 * dtypes. Status STATUS_TARGET_OUT_OF_BOUNDS for a bad target (Note [nll_loss]).
 */
export function nll_loss_forward(
  dtype: i32,
  out: usize,
  totalWeight: usize,
  logp: usize,
  target: usize,
  weight: usize,
  N: i32,
  C: i32,
  reduction: i32,
  ignoreIndex: i64,
): i32 {
  if (reduction < REDUCTION_NONE || reduction > REDUCTION_SUM || N < 0 || C < 0) return STATUS_BAD_ARGUMENT;
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_F16 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  if (!targetsInRange(target, N, C, ignoreIndex)) return STATUS_TARGET_OUT_OF_BOUNDS;
  switch (dtype) {
    case DT_F32:
      nllForwardTyped<f32, f32>(out, totalWeight, logp, target, weight, N, C, reduction, ignoreIndex);
      break;
    case DT_F64:
      nllForwardTyped<f64, f64>(out, totalWeight, logp, target, weight, N, C, reduction, ignoreIndex);
      break;
    case DT_F16:
      nllForwardTyped<u16, f32>(out, totalWeight, logp, target, weight, N, C, reduction, ignoreIndex);
      break;
    case DT_BF16:
      nllForwardTyped<u32, f32>(out, totalWeight, logp, target, weight, N, C, reduction, ignoreIndex);
      break;
  }
  return STATUS_OK;
}

function nllBackwardTyped<T, V>(
  gradInput: usize,
  gradOutput: usize,
  target: usize,
  weight: usize,
  totalWeight: usize,
  N: i32,
  C: i32,
  reduction: i32,
  ignoreIndex: i64,
): void {
  const es = elemBytes<T>();
  memory.fill(gradInput, 0, <usize>N * <usize>C * es);
  let g = <V>0;
  if (reduction != REDUCTION_NONE) {
    g = ld<T, V>(gradOutput);
    if (reduction == REDUCTION_MEAN) g /= ld<T, V>(totalWeight);
  }
  for (let n = 0; n < N; n++) {
    const t = load<i64>(target + (<usize>n << 3));
    if (t == ignoreIndex) continue;
    const gn = reduction == REDUCTION_NONE ? ld<T, V>(gradOutput + <usize>n * es) : g;
    const w = weight ? ld<T, V>(weight + <usize>t * es) : <V>1;
    st<T, V>(gradInput + (<usize>n * <usize>C + <usize>t) * es, -w * gn);
  }
}

/**
 * nll_loss backward: gradInput [N, C] (fully written: zeros except at the targets) = -weight[t] * gradOutput
 * (gradOutput [N] for 'none', a scalar otherwise, divided by *totalWeight for 'mean'). Same statuses as forward.
 */
export function nll_loss_backward(
  dtype: i32,
  gradInput: usize,
  gradOutput: usize,
  target: usize,
  weight: usize,
  totalWeight: usize,
  N: i32,
  C: i32,
  reduction: i32,
  ignoreIndex: i64,
): i32 {
  if (reduction < REDUCTION_NONE || reduction > REDUCTION_SUM || N < 0 || C < 0) return STATUS_BAD_ARGUMENT;
  if (dtype != DT_F32 && dtype != DT_F64 && dtype != DT_F16 && dtype != DT_BF16) return STATUS_UNSUPPORTED;
  if (!targetsInRange(target, N, C, ignoreIndex)) return STATUS_TARGET_OUT_OF_BOUNDS;
  switch (dtype) {
    case DT_F32:
      nllBackwardTyped<f32, f32>(gradInput, gradOutput, target, weight, totalWeight, N, C, reduction, ignoreIndex);
      break;
    case DT_F64:
      nllBackwardTyped<f64, f64>(gradInput, gradOutput, target, weight, totalWeight, N, C, reduction, ignoreIndex);
      break;
    case DT_F16:
      nllBackwardTyped<u16, f32>(gradInput, gradOutput, target, weight, totalWeight, N, C, reduction, ignoreIndex);
      break;
    case DT_BF16:
      nllBackwardTyped<u32, f32>(gradInput, gradOutput, target, weight, totalWeight, N, C, reduction, ignoreIndex);
      break;
  }
  return STATUS_OK;
}
