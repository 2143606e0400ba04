// Reductions over a contiguous input viewed as [outer, R, inner], reducing R: out[o, j] = op_r a[o, r, j].
//
// The TypeScript side permutes / copies so that the reduced dims form one block (full reduction: outer = inner
// = 1; reducing the last dims: inner = 1; `sum(dim=0)` of a matrix: outer = 1, inner = columns). Sizes are
// element counts, pointers byte offsets in the shared memory. Every export returns a status (common.ts Note
// [Status codes], plus STATUS_EMPTY_REDUCTION from linalg_util.ts).
//
// Note [Reduction accumulation]: accumulation follows PyTorch's CPU acc types. f32 accumulates in f32, f64 in
// f64, Half/BFloat16 in f32 (rounded once when stored). Integer and Bool sum/prod accumulate in their output
// type: int64 by default (the TS side passes outDtype = Long), or the input type itself when the caller asks
// for it (wrapping sum and product commute with truncation mod 2^bits, so this equals "int64, then cast").
// mean exists only for floating types, like PyTorch.
//
// Note [Cascade summation]: a float sum of n terms in one accumulator has error growing like n * eps. PyTorch
// uses cascade summation; we do the same with blocks: 8 vector accumulators sum a block of 16 vectors each
// (512 f32), block results go to a level-0 vector, every 64 blocks level 0 is added into level 1, every 64
// level-1 additions into level 2. Each term then passes through ~16 + 3 + 64 + 64 + n / 2^21 additions
// instead of n / 32, which keeps a 16M-element f32 sum within a few ulps of the f64 result. Column sums
// (inner > 1) use the same scheme over rows with blocks of 64 rows (except wide rows: Note [Wide column sums]).
// The vector accumulators are also what makes the row sum bandwidth-bound rather than latency-bound (8
// independent add chains).
import {
  DT_BF16,
  DT_BOOL,
  DT_F16,
  DT_F32,
  DT_F64,
  DT_I16,
  DT_I32,
  DT_I64,
  DT_I8,
  DT_U8,
  elemBytes,
  ld,
  st,
  STATUS_BAD_ARGUMENT,
  STATUS_OK,
  STATUS_UNSUPPORTED,
} from './common';
import { copyElem, loadVec, STATUS_EMPTY_REDUCTION, storeVec } from './linalg_util';
import { maxFirst, minFirst, vMaxFirst, vMinFirst } from './simd';

// Reduction operators as marker types: `changetype<Op>(0) instanceof OpSum` is decided at compile time, so each
// instantiation keeps only its own branch (AssemblyScript generics take types, not values).
@final @unmanaged class OpSum {}
@final @unmanaged class OpProd {}
@final @unmanaged class OpMean {}
@final @unmanaged class OpMax {}
@final @unmanaged class OpMin {}

// @ts-ignore: decorator
@inline
function isOp<Op, X>(): bool {
  return changetype<Op>(0) instanceof X;
}

/** Identity of Op in V: 0, 1, or the extreme the other values displace (-inf for a float max). */
// @ts-ignore: decorator
@inline
function identity<Op, V>(): V {
  if (isOp<Op, OpProd>()) return <V>1;
  if (isOp<Op, OpMax>()) {
    if (isFloat<V>()) return <V>-Infinity;
    return isSigned<V>() ? <V>(<i64>-1 << (<i64>sizeof<V>() * 8 - 1)) : <V>0;
  }
  if (isOp<Op, OpMin>()) {
    if (isFloat<V>()) return <V>Infinity;
    return isSigned<V>() ? <V>~(<i64>-1 << (<i64>sizeof<V>() * 8 - 1)) : <V>-1;
  }
  return <V>0;
}

/** Scalar combine: max / min propagate NaN and keep the accumulated (earlier) value on ±0 ties (Note [Signed zero ties]). */
// @ts-ignore: decorator
@inline
function combine<Op, V>(a: V, b: V): V {
  if (isOp<Op, OpProd>()) return a * b;
  if (isOp<Op, OpMax>()) return maxFirst<V>(a, b);
  if (isOp<Op, OpMin>()) return minFirst<V>(a, b);
  return a + b;
}

/** Vector combine (f32x4.max / min propagate NaN too; i64x2 has no min / max instruction). */
// @ts-ignore: decorator
@inline
function combineVec<Op, V>(a: v128, b: v128): v128 {
  if (isOp<Op, OpProd>()) return v128.mul<V>(a, b);
  if (isOp<Op, OpMax>()) {
    if (sizeof<V>() == 8 && isInteger<V>()) return v128.bitselect(a, b, v128.gt<V>(a, b));
    return isFloat<V>() ? vMaxFirst<V>(a, b) : v128.max<V>(a, b);
  }
  if (isOp<Op, OpMin>()) {
    if (sizeof<V>() == 8 && isInteger<V>()) return v128.bitselect(a, b, v128.lt<V>(a, b));
    return isFloat<V>() ? vMinFirst<V>(a, b) : v128.min<V>(a, b);
  }
  return v128.add<V>(a, b);
}

/** Combines the lanes of a vector into one value, halving it with byte shuffles (lane indices must be constant). */
// @ts-ignore: decorator
@inline
function combineLanes<Op, V>(v: v128): V {
  v = combineVec<Op, V>(v, i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  if (sizeof<V>() <= 4) {
    v = combineVec<Op, V>(v, i8x16.shuffle(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  }
  if (sizeof<V>() <= 2) {
    v = combineVec<Op, V>(v, i8x16.shuffle(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  }
  if (sizeof<V>() == 1) {
    v = combineVec<Op, V>(v, i8x16.shuffle(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  }
  return v128.extract_lane<V>(v, 0);
}

/** mean divides the sum by the count (0 / 0 = NaN for an empty mean, like PyTorch); the others are final. */
// @ts-ignore: decorator
@inline
function finish<Op, V>(v: V, count: i32): V {
  if (isOp<Op, OpMean>()) return v / <V>count;
  return v;
}

// @ts-ignore: decorator
@inline
function finishVec<Op, V>(v: v128, count: i32): v128 {
  if (isOp<Op, OpMean>()) return v128.div<V>(v, v128.splat<V>(<V>count));
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Vector kernels: T stored, V computed (Note [Storage type vs compute type] in linalg_util.ts).

/** Reduces n elements of T spaced `stride` bytes apart, with the cascade of Note [Cascade summation]. */
function reduceStrided<T, V, Op>(p: usize, n: i32, stride: usize): V {
  let level0 = identity<Op, V>();
  let level1 = identity<Op, V>();
  let blocks = 0;
  let i = 0;
  while (i < n) {
    const end = min(n, i + 64);
    let a0 = identity<Op, V>();
    let a1 = identity<Op, V>();
    for (; i + 1 < end; i += 2) {
      a0 = combine<Op, V>(a0, ld<T, V>(p));
      a1 = combine<Op, V>(a1, ld<T, V>(p + stride));
      p += stride << 1;
    }
    if (i < end) {
      a0 = combine<Op, V>(a0, ld<T, V>(p));
      p += stride;
      i++;
    }
    level0 = combine<Op, V>(level0, combine<Op, V>(a0, a1));
    if (++blocks == 64) {
      level1 = combine<Op, V>(level1, level0);
      level0 = identity<Op, V>();
      blocks = 0;
    }
  }
  return combine<Op, V>(level1, level0);
}

/** Reduces n contiguous elements of T (inner = 1), 8 vector accumulators, cascaded. */
function reduceRow<T, V, Op>(p: usize, n: i32): V {
  const lanes = <i32>(16 / sizeof<V>());
  const vecBytes = <usize>lanes * elemBytes<T>();
  const blockLen = lanes * 8 * 16;
  const id = v128.splat<V>(identity<Op, V>());
  let level0 = id;
  let level1 = id;
  let level2 = id;
  let count0 = 0;
  let count1 = 0;
  let i = 0;
  for (; i + blockLen <= n; i += blockLen) {
    let a0 = id, a1 = id, a2 = id, a3 = id, a4 = id, a5 = id, a6 = id, a7 = id;
    for (let k = 0; k < 16; k++) {
      a0 = combineVec<Op, V>(a0, loadVec<T, V>(p));
      a1 = combineVec<Op, V>(a1, loadVec<T, V>(p + vecBytes));
      a2 = combineVec<Op, V>(a2, loadVec<T, V>(p + vecBytes * 2));
      a3 = combineVec<Op, V>(a3, loadVec<T, V>(p + vecBytes * 3));
      a4 = combineVec<Op, V>(a4, loadVec<T, V>(p + vecBytes * 4));
      a5 = combineVec<Op, V>(a5, loadVec<T, V>(p + vecBytes * 5));
      a6 = combineVec<Op, V>(a6, loadVec<T, V>(p + vecBytes * 6));
      a7 = combineVec<Op, V>(a7, loadVec<T, V>(p + vecBytes * 7));
      p += vecBytes * 8;
    }
    const block = combineVec<Op, V>(
      combineVec<Op, V>(combineVec<Op, V>(a0, a1), combineVec<Op, V>(a2, a3)),
      combineVec<Op, V>(combineVec<Op, V>(a4, a5), combineVec<Op, V>(a6, a7)),
    );
    level0 = combineVec<Op, V>(level0, block);
    if (++count0 == 64) {
      level1 = combineVec<Op, V>(level1, level0);
      level0 = id;
      count0 = 0;
      if (++count1 == 64) {
        level2 = combineVec<Op, V>(level2, level1);
        level1 = id;
        count1 = 0;
      }
    }
  }
  let tail = id;
  for (; i + lanes <= n; i += lanes) {
    tail = combineVec<Op, V>(tail, loadVec<T, V>(p));
    p += vecBytes;
  }
  const total = combineVec<Op, V>(combineVec<Op, V>(level2, level1), combineVec<Op, V>(level0, tail));
  let acc = combineLanes<Op, V>(total);
  for (; i < n; i++) {
    acc = combine<Op, V>(acc, ld<T, V>(p));
    p += elemBytes<T>();
  }
  return acc;
}

/**
 * Reduces one [R, inner] slice over its rows into `dst` (inner elements of T): columns in tiles of 4 vectors
 * (4 * 16 / sizeof<V> columns, one load per element and 12 live vectors for the 3 cascade levels), then single
 * vectors, then the last few columns one by one.
 */
function reduceColumns<T, V, Op>(dst: usize, p: usize, R: i32, inner: i32): void {
  const lanes = <i32>(16 / sizeof<V>());
  const es = elemBytes<T>();
  const vecBytes = <usize>lanes * es;
  const rowBytes = <usize>inner * es;
  const id = v128.splat<V>(identity<Op, V>());
  let j = 0;
  for (; j + 4 * lanes <= inner; j += 4 * lanes) {
    let q = p + <usize>j * es;
    let l0 = id, l1 = id, l2 = id, l3 = id;
    let m0 = id, m1 = id, m2 = id, m3 = id;
    let blocks = 0;
    let r = 0;
    while (r < R) {
      const end = min(R, r + 64);
      let b0 = id, b1 = id, b2 = id, b3 = id;
      for (; r < end; r++) {
        b0 = combineVec<Op, V>(b0, loadVec<T, V>(q));
        b1 = combineVec<Op, V>(b1, loadVec<T, V>(q + vecBytes));
        b2 = combineVec<Op, V>(b2, loadVec<T, V>(q + vecBytes * 2));
        b3 = combineVec<Op, V>(b3, loadVec<T, V>(q + vecBytes * 3));
        q += rowBytes;
      }
      l0 = combineVec<Op, V>(l0, b0);
      l1 = combineVec<Op, V>(l1, b1);
      l2 = combineVec<Op, V>(l2, b2);
      l3 = combineVec<Op, V>(l3, b3);
      if (++blocks == 64) {
        m0 = combineVec<Op, V>(m0, l0);
        m1 = combineVec<Op, V>(m1, l1);
        m2 = combineVec<Op, V>(m2, l2);
        m3 = combineVec<Op, V>(m3, l3);
        l0 = id;
        l1 = id;
        l2 = id;
        l3 = id;
        blocks = 0;
      }
    }
    const d = dst + <usize>j * es;
    storeVec<T, V>(d, finishVec<Op, V>(combineVec<Op, V>(m0, l0), R));
    storeVec<T, V>(d + vecBytes, finishVec<Op, V>(combineVec<Op, V>(m1, l1), R));
    storeVec<T, V>(d + vecBytes * 2, finishVec<Op, V>(combineVec<Op, V>(m2, l2), R));
    storeVec<T, V>(d + vecBytes * 3, finishVec<Op, V>(combineVec<Op, V>(m3, l3), R));
  }
  for (; j + lanes <= inner; j += lanes) {
    let q = p + <usize>j * es;
    let l0 = id;
    let m0 = id;
    let blocks = 0;
    let r = 0;
    while (r < R) {
      const end = min(R, r + 64);
      let b0 = id;
      for (; r < end; r++) {
        b0 = combineVec<Op, V>(b0, loadVec<T, V>(q));
        q += rowBytes;
      }
      l0 = combineVec<Op, V>(l0, b0);
      if (++blocks == 64) {
        m0 = combineVec<Op, V>(m0, l0);
        l0 = id;
        blocks = 0;
      }
    }
    storeVec<T, V>(dst + <usize>j * es, finishVec<Op, V>(combineVec<Op, V>(m0, l0), R));
  }
  for (; j < inner; j++) {
    const v = reduceStrided<T, V, Op>(p + <usize>j * es, R, rowBytes);
    st<T, V>(dst + <usize>j * es, finish<Op, V>(v, R));
  }
}

// Note [Wide column sums]: reduceColumns walks each column tile down all R rows, R concurrent address streams
// with a page or more between them once rows are wide; hardware prefetchers and the TLB lose track and it runs at
// ~7-9 GB/s for a 4096 x 4096 f32 matrix. Walking 8 rows at a time across every tile, combining into the output
// row, keeps 8 streams and runs at ~18 GB/s. The price is the cascade: the output row is one accumulator fed
// R / 8 partial sums, so the error bound grows like R / 8 * eps instead of staying near log levels (PyTorch's
// outer reduction keeps its cascade and walks like reduceColumns). We take the wide path only where the
// output type is the compute type (a Half output row would round at every step) and rows are at least 4 KB.
const WIDE_ROW_BYTES: usize = 4096;

/** True when T's storage is V itself (not a 16-bit float tag widened to f32, not Bool). */
// @ts-ignore: decorator
@inline
function storedAsComputed<T, V>(): bool {
  const sameKind = isFloat<T>() == isFloat<V>() && isSigned<T>() == isSigned<V>();
  return sizeof<T>() == sizeof<V>() && sameKind && !isBoolean<T>();
}

/**
 * The same result as reduceColumns for wide slices whose storage is the compute type (f32, f64, integer max /
 * min), streaming 8 rows at a time and combining each 8-row partial into `dst`. See Note [Wide column sums].
 */
function reduceColumnsWide<T, Op>(dst: usize, p: usize, R: i32, inner: i32): void {
  const lanes = <i32>(16 / sizeof<T>());
  const es = sizeof<T>();
  const vecBytes = <usize>lanes * es;
  const rowBytes = <usize>inner * es;
  const tiles = inner / (4 * lanes);
  const id = v128.splat<T>(identity<Op, T>());
  for (let j = 0; j < tiles * 4 * lanes; j += lanes) v128.store(dst + <usize>j * es, id);
  for (let r = 0; r < R; r += 8) {
    const rows = min(8, R - r);
    const chunk = p + <usize>r * rowBytes;
    for (let t = 0; t < tiles; t++) {
      let q = chunk + <usize>t * 4 * vecBytes;
      let b0 = id, b1 = id, b2 = id, b3 = id;
      for (let k = 0; k < rows; k++) {
        b0 = combineVec<Op, T>(b0, v128.load(q));
        b1 = combineVec<Op, T>(b1, v128.load(q, 16));
        b2 = combineVec<Op, T>(b2, v128.load(q, 32));
        b3 = combineVec<Op, T>(b3, v128.load(q, 48));
        q += rowBytes;
      }
      const d = dst + <usize>t * 4 * vecBytes;
      v128.store(d, combineVec<Op, T>(v128.load(d), b0));
      v128.store(d, combineVec<Op, T>(v128.load(d, 16), b1), 16);
      v128.store(d, combineVec<Op, T>(v128.load(d, 32), b2), 32);
      v128.store(d, combineVec<Op, T>(v128.load(d, 48), b3), 48);
    }
  }
  if (isOp<Op, OpMean>()) {
    const count = v128.splat<T>(<T>R);
    for (let j = 0; j < tiles * 4 * lanes; j += lanes) {
      const d = dst + <usize>j * es;
      v128.store(d, v128.div<T>(v128.load(d), count));
    }
  }
  for (let j = tiles * 4 * lanes; j < inner; j++) {
    const v = reduceStrided<T, T, Op>(p + <usize>j * es, R, rowBytes);
    st<T, T>(dst + <usize>j * es, finish<Op, T>(v, R));
  }
}

/** out[o, j] = op_r a[o, r, j] for a vector-capable (T, V): floats, and integer max / min. */
function reduceVector<T, V, Op>(out: usize, a: usize, outer: i32, R: i32, inner: i32): void {
  const es = elemBytes<T>();
  const sliceBytes = <usize>R * <usize>inner * es;
  for (let o = 0; o < outer; o++) {
    const src = a + <usize>o * sliceBytes;
    if (inner == 1) {
      st<T, V>(out + <usize>o * es, finish<Op, V>(reduceRow<T, V, Op>(src, R), R));
    } else {
      const dst = out + <usize>o * <usize>inner * es;
      if (storedAsComputed<T, V>() && <usize>inner * es >= WIDE_ROW_BYTES && R > 16) {
        reduceColumnsWide<T, Op>(dst, src, R, inner);
      } else {
        reduceColumns<T, V, Op>(dst, src, R, inner);
      }
    }
  }
}

/**
 * Integer and Bool sum / prod (and int64 max / min), accumulating in the output type O (Note [Reduction
 * accumulation]). Exact (wrapping) arithmetic needs no cascade; columns accumulate in the output row itself.
 */
function reduceScalar<T, O, Op>(out: usize, a: usize, outer: i32, R: i32, inner: i32): void {
  const es = sizeof<T>();
  const os = sizeof<O>();
  for (let o = 0; o < outer; o++) {
    let p = a + <usize>o * <usize>R * <usize>inner * es;
    const dst = out + <usize>o * <usize>inner * os;
    if (inner == 1) {
      let a0 = identity<Op, O>(), a1 = identity<Op, O>(), a2 = identity<Op, O>(), a3 = identity<Op, O>();
      let i = 0;
      for (; i + 4 <= R; i += 4) {
        a0 = combine<Op, O>(a0, ld<T, O>(p));
        a1 = combine<Op, O>(a1, ld<T, O>(p + es));
        a2 = combine<Op, O>(a2, ld<T, O>(p + es * 2));
        a3 = combine<Op, O>(a3, ld<T, O>(p + es * 3));
        p += es * 4;
      }
      for (; i < R; i++) {
        a0 = combine<Op, O>(a0, ld<T, O>(p));
        p += es;
      }
      store<O>(dst, combine<Op, O>(combine<Op, O>(a0, a1), combine<Op, O>(a2, a3)));
    } else {
      for (let j = 0; j < inner; j++) store<O>(dst + <usize>j * os, identity<Op, O>());
      for (let r = 0; r < R; r++) {
        for (let j = 0; j < inner; j++) {
          const d = dst + <usize>j * os;
          store<O>(d, combine<Op, O>(load<O>(d), ld<T, O>(p)));
          p += es;
        }
      }
    }
  }
}

/** Integer / Bool sum or prod: the output is int64 (outDtype Long) or the input type (outDtype == dtype). */
// @ts-ignore: decorator
@inline
function reduceIntegral<T, Op>(outDtype: i32, dtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  if (outDtype == DT_I64) reduceScalar<T, i64, Op>(out, a, outer, R, inner);
  else if (outDtype == dtype && dtype != DT_BOOL) reduceScalar<T, T, Op>(out, a, outer, R, inner);
  else return STATUS_BAD_ARGUMENT;
  return STATUS_OK;
}

/** AT_DISPATCH over dtype for sum / prod / mean. Floats keep their dtype (outDtype must equal dtype). */
function dispatchSumLike<Op>(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  const floating = dtype == DT_F32 || dtype == DT_F64 || dtype == DT_F16 || dtype == DT_BF16;
  if (floating && outDtype != dtype) return STATUS_BAD_ARGUMENT;
  if (!floating && isOp<Op, OpMean>()) return STATUS_UNSUPPORTED;
  switch (dtype) {
    case DT_F32:
      reduceVector<f32, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_F64:
      reduceVector<f64, f64, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_F16:
      reduceVector<u16, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_BF16:
      reduceVector<u32, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_U8:
      return reduceIntegral<u8, Op>(outDtype, dtype, out, a, outer, R, inner);
    case DT_BOOL:
      return reduceIntegral<bool, Op>(outDtype, dtype, out, a, outer, R, inner);
    case DT_I8:
      return reduceIntegral<i8, Op>(outDtype, dtype, out, a, outer, R, inner);
    case DT_I16:
      return reduceIntegral<i16, Op>(outDtype, dtype, out, a, outer, R, inner);
    case DT_I32:
      return reduceIntegral<i32, Op>(outDtype, dtype, out, a, outer, R, inner);
    case DT_I64:
      return reduceIntegral<i64, Op>(outDtype, dtype, out, a, outer, R, inner);
  }
  return STATUS_UNSUPPORTED;
}

/** AT_DISPATCH over every dtype for max / min (output dtype = input dtype; Bool max is any, min is all). */
function dispatchMinMax<Op>(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  if (outDtype != dtype) return STATUS_BAD_ARGUMENT;
  if (R == 0 && outer > 0 && inner > 0 && isKnown(dtype)) return STATUS_EMPTY_REDUCTION;
  switch (dtype) {
    case DT_F32:
      reduceVector<f32, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_F64:
      reduceVector<f64, f64, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_F16:
      reduceVector<u16, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_BF16:
      reduceVector<u32, f32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_U8:
      reduceVector<u8, u8, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_BOOL:
      reduceVector<bool, u8, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_I8:
      reduceVector<i8, i8, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_I16:
      reduceVector<i16, i16, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_I32:
      reduceVector<i32, i32, Op>(out, a, outer, R, inner);
      return STATUS_OK;
    case DT_I64:
      reduceVector<i64, i64, Op>(out, a, outer, R, inner);
      return STATUS_OK;
  }
  return STATUS_UNSUPPORTED;
}

// @ts-ignore: decorator
@inline
function isKnown(dtype: i32): bool {
  return (dtype >= DT_U8 && dtype <= DT_F64) || dtype == DT_BOOL || dtype == DT_BF16;
}

// ---------------------------------------------------------------------------------------------------------
// Exports: sum / prod / mean / max / min share one signature so the TS side can drive them from one table.

/** out[o, j] = sum_r a[o, r, j]. Floats: outDtype = dtype. Integers / Bool: outDtype = Long (or dtype). */
export function reduce_sum(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  return dispatchSumLike<OpSum>(dtype, outDtype, out, a, outer, R, inner);
}

/** out[o, j] = prod_r a[o, r, j]; dtype rules as reduce_sum. */
export function reduce_prod(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  return dispatchSumLike<OpProd>(dtype, outDtype, out, a, outer, R, inner);
}

/** out[o, j] = mean_r a[o, r, j]; floating dtypes only (STATUS_UNSUPPORTED otherwise), outDtype = dtype. */
export function reduce_mean(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  return dispatchSumLike<OpMean>(dtype, outDtype, out, a, outer, R, inner);
}

/** out[o, j] = max_r a[o, r, j], NaN-propagating; outDtype = dtype; R = 0 gives STATUS_EMPTY_REDUCTION. */
export function reduce_max(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  return dispatchMinMax<OpMax>(dtype, outDtype, out, a, outer, R, inner);
}

/** out[o, j] = min_r a[o, r, j], NaN-propagating; outDtype = dtype; R = 0 gives STATUS_EMPTY_REDUCTION. */
export function reduce_min(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  return dispatchMinMax<OpMin>(dtype, outDtype, out, a, outer, R, inner);
}

// ---------------------------------------------------------------------------------------------------------
// Index-returning reductions: argmax / argmin and max(dim) / min(dim) with values and indices.
//
// Note [Arg reductions]: the index is the first occurrence of the extreme, and NaN counts as larger (argmax)
// or smaller (argmin) than everything, so the first NaN wins, as in PyTorch. Rows (inner = 1) take two
// passes: a vector max / min (NaN-propagating, so it is NaN exactly when the row holds one), then a scan for
// the first element equal to it (or the first NaN). Columns (inner > 1) stream the rows once, keeping the
// running best index per column in the int64 output (and the running value in the values output, or, for
// argmax alone, re-reading it from the input row that index points at).

/** True when v should replace best: strictly greater (smaller), or the first NaN. */
// @ts-ignore: decorator
@inline
function better<Op, V>(v: V, best: V): bool {
  if (isOp<Op, OpMin>()) return v < best || (v != v && best == best);
  return v > best || (v != v && best == best);
}

function argReduce<T, V, Op>(values: usize, indices: usize, a: usize, outer: i32, R: i32, inner: i32): void {
  const es = elemBytes<T>();
  const rowBytes = <usize>inner * es;
  for (let o = 0; o < outer; o++) {
    const src = a + <usize>o * <usize>R * rowBytes;
    if (inner == 1) {
      const m = reduceRow<T, V, Op>(src, R);
      let i = 0;
      if (m != m) {
        while (true) {
          const v = ld<T, V>(src + <usize>i * es);
          if (v != v) break;
          i++;
        }
      } else {
        while (ld<T, V>(src + <usize>i * es) != m) i++;
      }
      store<i64>(indices + (<usize>o << 3), <i64>i);
      if (values) copyElem<T>(values + <usize>o * es, src + <usize>i * es);
      continue;
    }
    const idx = indices + ((<usize>o * <usize>inner) << 3);
    const vals = values ? values + <usize>o * rowBytes : 0;
    for (let j = 0; j < inner; j++) store<i64>(idx + (<usize>j << 3), 0);
    if (vals) memory.copy(vals, src, rowBytes);
    for (let r = 1; r < R; r++) {
      const row = src + <usize>r * rowBytes;
      for (let j = 0; j < inner; j++) {
        const off = <usize>j * es;
        const v = ld<T, V>(row + off);
        const bestAt = vals ? vals + off : src + <usize>load<i64>(idx + (<usize>j << 3)) * rowBytes + off;
        if (better<Op, V>(v, ld<T, V>(bestAt))) {
          store<i64>(idx + (<usize>j << 3), <i64>r);
          if (vals) copyElem<T>(vals + off, row + off);
        }
      }
    }
  }
}

/** AT_DISPATCH for the arg reductions; `values` may be 0 (argmax / argmin). Bool only with values. */
function dispatchArg<Op>(dtype: i32, values: usize, indices: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  if (!isKnown(dtype) || (dtype == DT_BOOL && !values)) return STATUS_UNSUPPORTED;
  if (R == 0 && outer > 0 && inner > 0) return STATUS_EMPTY_REDUCTION;
  switch (dtype) {
    case DT_F32:
      argReduce<f32, f32, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_F64:
      argReduce<f64, f64, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_F16:
      argReduce<u16, f32, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_BF16:
      argReduce<u32, f32, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_U8:
      argReduce<u8, u8, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_BOOL:
      argReduce<bool, u8, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_I8:
      argReduce<i8, i8, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_I16:
      argReduce<i16, i16, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_I32:
      argReduce<i32, i32, Op>(values, indices, a, outer, R, inner);
      break;
    case DT_I64:
      argReduce<i64, i64, Op>(values, indices, a, outer, R, inner);
      break;
  }
  return STATUS_OK;
}

/** out[o, j] = first r maximising a[o, r, j] (int64; NaN is the maximum). outDtype must be Long; no Bool. */
export function reduce_argmax(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  if (outDtype != DT_I64) return STATUS_BAD_ARGUMENT;
  return dispatchArg<OpMax>(dtype, 0, out, a, outer, R, inner);
}

/** out[o, j] = first r minimising a[o, r, j] (int64; NaN is the minimum). outDtype must be Long; no Bool. */
export function reduce_argmin(dtype: i32, outDtype: i32, out: usize, a: usize, outer: i32, R: i32, inner: i32): i32 {
  if (outDtype != DT_I64) return STATUS_BAD_ARGUMENT;
  return dispatchArg<OpMin>(dtype, 0, out, a, outer, R, inner);
}

/** max(dim): values (dtype) and int64 indices of the first maximum (NaN-propagating); every dtype. */
export function reduce_max_with_indices(
  dtype: i32,
  values: usize,
  indices: usize,
  a: usize,
  outer: i32,
  R: i32,
  inner: i32,
): i32 {
  if (!values) return STATUS_BAD_ARGUMENT;
  return dispatchArg<OpMax>(dtype, values, indices, a, outer, R, inner);
}

/** min(dim): values (dtype) and int64 indices of the first minimum (NaN-propagating); every dtype. */
export function reduce_min_with_indices(
  dtype: i32,
  values: usize,
  indices: usize,
  a: usize,
  outer: i32,
  R: i32,
  inner: i32,
): i32 {
  if (!values) return STATUS_BAD_ARGUMENT;
  return dispatchArg<OpMin>(dtype, values, indices, a, outer, R, inner);
}
