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
//       `work` is a scratch block of 8 * n bytes (two i32 permutations).
//
// Every dtype of Note [Dtype codes] is handled: AT_DISPATCH_ALL_TYPES_AND3(Half, BFloat16, Bool) for sort,
// AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16) plus the bool-free integer path for the scans (a Bool scan is
// never asked for: cumsum of Bool produces int64). Int64 keys compare as i64 (exact beyond 2^53).

import { DT_BOOL, DT_I64, isFloatingDtype, isKnownDtype, itemSize, loadAsF64, storeFromF64 } from './common';
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

export function scan_contig(op: i32, dtype: i32, out: usize, src: usize, outer: i32, n: i32, inner: i32): i32 {
  if (op != SCAN_SUM && op != SCAN_PROD) return STATUS_BAD_ARGUMENT;
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (dtype == DT_BOOL) return STATUS_UNSUPPORTED;
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

/** Whether the element at `a` must come before the one at `b` (strictly), NaN last ascending / first descending. */
// @ts-ignore: decorator
@inline
function before(dtype: i32, a: usize, b: usize, descending: bool): bool {
  if (dtype == DT_I64) {
    const x = load<i64>(a), y = load<i64>(b);
    return descending ? x > y : x < y;
  }
  const x = loadAsF64(dtype, a), y = loadAsF64(dtype, b);
  const xn = x != x, yn = y != y;
  if (descending) return (xn && !yn) || x > y;
  return (!xn && yn) || x < y;
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
  const permA = work, permB = work + <usize>n * 4;
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const base = (<usize>o * <usize>n * <usize>inner + <usize>i) * size;
      const line = src + base;
      for (let j = 0; j < n; j++) store<i32>(permA + <usize>j * 4, j);
      // Bottom-up merge sort of the permutation by key; `from` holds the current runs.
      let from = permA, to = permB;
      for (let width = 1; width < n; width *= 2) {
        for (let lo = 0; lo < n; lo += 2 * width) {
          const mid = min(lo + width, n), hi = min(lo + 2 * width, n);
          let l = lo, r = mid, k = lo;
          while (l < mid && r < hi) {
            const pl = load<i32>(from + <usize>l * 4), pr = load<i32>(from + <usize>r * 4);
            // Take the right run's element only when it is strictly before: equal keys stay in order.
            if (before(dtype, line + <usize>pr * stride, line + <usize>pl * stride, desc)) {
              store<i32>(to + <usize>k * 4, pr);
              r++;
            } else {
              store<i32>(to + <usize>k * 4, pl);
              l++;
            }
            k++;
          }
          while (l < mid) store<i32>(to + <usize>(k++) * 4, load<i32>(from + <usize>(l++) * 4));
          while (r < hi) store<i32>(to + <usize>(k++) * 4, load<i32>(from + <usize>(r++) * 4));
        }
        const t = from;
        from = to;
        to = t;
      }
      for (let j = 0; j < n; j++) {
        const p = load<i32>(from + <usize>j * 4);
        memory.copy(values + base + <usize>j * stride, line + <usize>p * stride, size);
        store<i64>(indices + (base / size + <usize>j * <usize>inner) * 8, <i64>p);
      }
    }
  }
  return STATUS_OK;
}
