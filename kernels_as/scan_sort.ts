// Scan and sort kernels along one dimension of a contiguous tensor viewed as [outer, n, inner]: element
// (o, j, i) sits at index (o * n + j) * inner + i.
//
//   scan_contig(op, dtype, out, src, outer, n, inner)
//       op SCAN_SUM: out[o, j, i] = sum of src[o, 0..j, i]; op SCAN_PROD: the product. out and src have the same
//       dtype (the caller converts to the result dtype first, as PyTorch's cumsum does). Floating dtypes
//       accumulate in f64 (PyTorch's CPU acc_type of float is double) and round each output once; integers
//       accumulate in i64 and wrap to their width like C++.
//   sort_contig(dtype, values, indices, src, outer, n, inner, descending, work)
//       sorts each line (o, :, i) stably: values gets the sorted elements (same dtype as src), indices (int64)
//       their positions in the line. NaN sorts after every number ascending and before every number
//       descending, as PyTorch's comparators put it; equal keys keep their order (a stable merge sort).
//       `work` is a scratch block of 24 * n bytes (two arrays of the line's keys as f64, or i64 for int64,
//       and two of i32 positions).
//
// Every dtype of Note [Dtype codes] is handled: AT_DISPATCH_ALL_TYPES_AND3(Half, BFloat16, Bool) for sort,
// AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16) plus the bool-free integer path for the scans (a Bool scan is
// never asked for: cumsum of Bool produces int64). Int64 keys compare as i64 (exact beyond 2^53).

import { DT_BOOL, DT_F32, DT_F64, DT_I32, DT_I64, isFloatingDtype, isKnownDtype, itemSize } from './common';
import { loadAsF64, storeFromF64 } from './common';
import { STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';

export const SCAN_SUM: i32 = 0;
export const SCAN_PROD: i32 = 1;

/** Loads an integer element (any integer dtype or Bool) as i64. */
function loadInt(dtype: i32, ptr: usize): i64 {
  if (dtype == DT_I64) return load<i64>(ptr);
  return <i64>loadAsF64(dtype, ptr);
}

/** Stores an i64 into an integer element, wrapping to its width. */
function storeInt(dtype: i32, ptr: usize, v: i64): void {
  switch (itemSize(dtype)) {
    case 1:
      store<u8>(ptr, <u8>v);
      break;
    case 2:
      store<u16>(ptr, <u16>v);
      break;
    case 4:
      store<u32>(ptr, <u32>v);
      break;
    default:
      store<i64>(ptr, v);
  }
}

/** One scan over `outer * inner` lines of `n` elements of type T, accumulating in A (f64 or i64). */
// @ts-ignore: decorator
@inline
function scanTyped<T, A>(op: i32, out: usize, src: usize, outer: i32, n: i32, inner: i32): void {
  const size = <usize>sizeof<T>();
  const step = <usize>inner * size;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const start = ((<usize>o * <usize>n) * <usize>inner + <usize>i) * size;
      let ps = src + start, po = out + start;
      let acc: A = op == SCAN_SUM ? <A>0 : <A>1;
      if (op == SCAN_SUM) {
        for (let j = 0; j < n; j++) {
          acc += <A>load<T>(ps);
          store<T>(po, <T>acc);
          ps += step;
          po += step;
        }
      } else {
        for (let j = 0; j < n; j++) {
          acc *= <A>load<T>(ps);
          store<T>(po, <T>acc);
          ps += step;
          po += step;
        }
      }
    }
  }
}

export function scan_contig(op: i32, dtype: i32, out: usize, src: usize, outer: i32, n: i32, inner: i32): i32 {
  if (op != SCAN_SUM && op != SCAN_PROD) return STATUS_BAD_ARGUMENT;
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (dtype == DT_BOOL) return STATUS_UNSUPPORTED;
  switch (dtype) {
    case DT_F32:
      scanTyped<f32, f64>(op, out, src, outer, n, inner);
      return STATUS_OK;
    case DT_F64:
      scanTyped<f64, f64>(op, out, src, outer, n, inner);
      return STATUS_OK;
    case DT_I64:
      scanTyped<i64, i64>(op, out, src, outer, n, inner);
      return STATUS_OK;
    case DT_I32:
      scanTyped<i32, i64>(op, out, src, outer, n, inner);
      return STATUS_OK;
  }
  // The other dtypes (u8, i8, i16, f16, bf16) through the generic element access.
  const size = <usize>itemSize(dtype);
  const floating = isFloatingDtype(dtype);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let accF: f64 = op == SCAN_SUM ? 0.0 : 1.0;
      let accI: i64 = op == SCAN_SUM ? 0 : 1;
      for (let j = 0; j < n; j++) {
        const at = (<usize>o * <usize>n + <usize>j) * <usize>inner + <usize>i;
        const ps = src + at * size, po = out + at * size;
        if (floating) {
          const x = loadAsF64(dtype, ps);
          accF = op == SCAN_SUM ? accF + x : accF * x;
          storeFromF64(dtype, po, accF);
        } else {
          const x = loadInt(dtype, ps);
          accI = op == SCAN_SUM ? accI + x : accI * x;
          storeInt(dtype, po, accI);
        }
      }
    }
  }
  return STATUS_OK;
}

/** Whether key `x` must come before key `y` (strictly), NaN last ascending / first descending. */
// @ts-ignore: decorator
@inline
function beforeF(x: f64, y: f64, descending: bool): bool {
  const xn = x != x, yn = y != y;
  if (descending) return (xn && !yn) || x > y;
  return (!xn && yn) || x < y;
}

/**
 * Stable bottom-up merge sort of (key, position) pairs kept in parallel arrays (keys `kA`, positions `pA`;
 * `kB`, `pB` the scratch of the same sizes), so that every pass reads and writes sequentially. Returns 0 when
 * the sorted pairs ended in the A arrays, 1 when in the B arrays.
 */
// @ts-ignore: decorator
@inline
function mergeSort<K>(kA: usize, pA: usize, kB: usize, pB: usize, n: i32, desc: bool): i32 {
  let kf = kA, pf = pA, kt = kB, pt = pB, inB = 0;
  for (let width = 1; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = min(lo + width, n), hi = min(lo + 2 * width, n);
      let l = lo, r = mid, k = lo;
      while (l < mid && r < hi) {
        const kl = load<K>(kf + (<usize>l << 3)), kr = load<K>(kf + (<usize>r << 3));
        // Take the right run's element only when it is strictly before: equal keys stay in order.
        let takeRight: bool;
        if (isFloat<K>()) takeRight = beforeF(<f64>kr, <f64>kl, desc);
        else takeRight = desc ? kr > kl : kr < kl;
        if (takeRight) {
          store<K>(kt + (<usize>k << 3), kr);
          store<i32>(pt + (<usize>k << 2), load<i32>(pf + (<usize>r << 2)));
          r++;
        } else {
          store<K>(kt + (<usize>k << 3), kl);
          store<i32>(pt + (<usize>k << 2), load<i32>(pf + (<usize>l << 2)));
          l++;
        }
        k++;
      }
      const from = l < mid ? l : r, count = l < mid ? mid - l : hi - r;
      if (count > 0) {
        memory.copy(kt + (<usize>k << 3), kf + (<usize>from << 3), <usize>count << 3);
        memory.copy(pt + (<usize>k << 2), pf + (<usize>from << 2), <usize>count << 2);
      }
    }
    let t = kf;
    kf = kt;
    kt = t;
    t = pf;
    pf = pt;
    pt = t;
    inB ^= 1;
  }
  return inB;
}

export function sort_contig(
  dtype: i32,
  values: usize,
  indices: usize,
  src: usize,
  outer: i32,
  n: i32,
  inner: i32,
  descending: i32,
  work: usize,
): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 0 || outer < 0 || inner < 0) return STATUS_BAD_ARGUMENT;
  const size = <usize>itemSize(dtype);
  const desc = descending != 0;
  const stride = <usize>inner * size;
  // work: keys A (8 bytes each: f64, or i64 for int64), keys B, positions A, positions B (i32).
  const kA = work, kB = kA + (<usize>n << 3), pA = kB + (<usize>n << 3), pB = pA + (<usize>n << 2);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const base = (<usize>o * <usize>n * <usize>inner + <usize>i) * size;
      const line = src + base;
      for (let j = 0; j < n; j++) {
        const p = line + <usize>j * stride;
        if (dtype == DT_I64) store<i64>(kA + (<usize>j << 3), load<i64>(p));
        else if (dtype == DT_F32) store<f64>(kA + (<usize>j << 3), <f64>load<f32>(p));
        else if (dtype == DT_F64) store<f64>(kA + (<usize>j << 3), load<f64>(p));
        else store<f64>(kA + (<usize>j << 3), loadAsF64(dtype, p));
        store<i32>(pA + (<usize>j << 2), j);
      }
      const inB = dtype == DT_I64
        ? mergeSort<i64>(kA, pA, kB, pB, n, desc)
        : mergeSort<f64>(kA, pA, kB, pB, n, desc);
      const sorted = inB != 0 ? pB : pA;
      for (let j = 0; j < n; j++) {
        const p = load<i32>(sorted + (<usize>j << 2));
        memory.copy(values + base + <usize>j * stride, line + <usize>p * stride, size);
        store<i64>(indices + (base / size + <usize>j * <usize>inner) * 8, <i64>p);
      }
    }
  }
  return STATUS_OK;
}

/** Whether sorted keys `x` and `y` are the same value for `mode` (every NaN is one value). */
// @ts-ignore: decorator
@inline
function sameKey<K>(x: K, y: K): bool {
  if (isFloat<K>()) return x == y || (x != x && y != y);
  return x == y;
}

/**
 * mode_contig(dtype, values, indices, src, outer, n, inner, work): for each line (o, :, i) of `src` (n >= 1),
 * the most frequent value (the smallest of the most frequent ones; every NaN counts as one value, larger than
 * every number) into `values[o, i]` (same dtype, the element's exact bits) and the last position holding it into
 * `indices[o, i]` (int64). The line is stably sorted ascending (as sort_contig), so runs of equal keys are
 * contiguous and each run's last record is its last position. `work` is a scratch block of 24 * n bytes.
 */
export function mode_contig(
  dtype: i32,
  values: usize,
  indices: usize,
  src: usize,
  outer: i32,
  n: i32,
  inner: i32,
  work: usize,
): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (n < 1 || outer < 0 || inner < 0) return STATUS_BAD_ARGUMENT;
  const size = <usize>itemSize(dtype);
  const stride = <usize>inner * size;
  const kA = work, kB = kA + (<usize>n << 3), pA = kB + (<usize>n << 3), pB = pA + (<usize>n << 2);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const line = src + (<usize>o * <usize>n * <usize>inner + <usize>i) * size;
      for (let j = 0; j < n; j++) {
        const p = line + <usize>j * stride;
        if (dtype == DT_I64) store<i64>(kA + (<usize>j << 3), load<i64>(p));
        else if (dtype == DT_F32) store<f64>(kA + (<usize>j << 3), <f64>load<f32>(p));
        else if (dtype == DT_F64) store<f64>(kA + (<usize>j << 3), load<f64>(p));
        else store<f64>(kA + (<usize>j << 3), loadAsF64(dtype, p));
        store<i32>(pA + (<usize>j << 2), j);
      }
      const integer = dtype == DT_I64;
      const inB = integer ? mergeSort<i64>(kA, pA, kB, pB, n, false) : mergeSort<f64>(kA, pA, kB, pB, n, false);
      const keys = inB != 0 ? kB : kA, positions = inB != 0 ? pB : pA;
      let best = 0, bestCount = 0, start = 0;
      for (let j = 1; j <= n; j++) {
        let ends = j == n;
        if (!ends) {
          const a = keys + (<usize>(j - 1) << 3), b = keys + (<usize>j << 3);
          ends = integer ? !sameKey<i64>(load<i64>(a), load<i64>(b)) : !sameKey<f64>(load<f64>(a), load<f64>(b));
        }
        if (ends) {
          if (j - start > bestCount) {
            bestCount = j - start;
            best = j - 1;
          }
          start = j;
        }
      }
      const p = load<i32>(positions + (<usize>best << 2));
      const at = <usize>o * <usize>inner + <usize>i;
      memory.copy(values + at * size, line + <usize>p * stride, size);
      store<i64>(indices + at * 8, <i64>p);
    }
  }
  return STATUS_OK;
}
