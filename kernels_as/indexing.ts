// Indexing kernels: gathers (index_select, embedding, gather) and accumulating scatters (index_add,
// scatter_add, embedding_dense_backward), for every dtype.
//
//   index_find_invalid(indexDtype, index, n, bound)          first i with index[i] outside [0, bound), or -1
//   gather_strided(dtype, out, src, index, indexDtype, desc, srcDimStride)
//       out[p] = src[p with dim -> index[p]]        desc operands: out, src (stride 0 along dim), index
//   scatter_add_strided(dtype, out, src, index, indexDtype, desc, outDimStride, alpha, skip)
//       out[p with dim -> index[p]] += alpha * src[p]  desc operands: out (stride 0 along dim), src, index;
//       positions whose index equals `skip` are left out (embedding's padding_idx; pass -1 for none)
//
// Note [Indexing descriptor]: the descriptor is the strided one (strided.ts) over the iteration shape (the
// index's shape for gather/scatter_add; index_select and index_add pass the index with stride 0 outside `dim`).
// The indexed operand's stride along `dim` is 0 in the descriptor and passed separately, so the address of an
// element is `offset(p) + index[p] * dimStride`. Indices are int32 or int64 and must be checked first with
// `index_find_invalid`: these kernels do not bounds-check.
//
// Note [Deterministic accumulation]: positions are visited in row-major order of the iteration shape, one at a
// time, so duplicate indices accumulate in a fixed order and give the same bits on every run. Integers add in
// i64 and wrap to their width (exact, as in C++); floats add in their own precision (f16/bf16 through f32, as
// c10's Half arithmetic does).

import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { bf16ToF32, f16ToF32, f32ToBf16, f32ToF16, isKnownDtype, itemSize } from './common';
import { STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { descNdim, descSize, descStride } from './strided';

// @ts-ignore: decorator
@inline
function loadIndex(indexDtype: i32, ptr: usize): i64 {
  return indexDtype == DT_I64 ? load<i64>(ptr) : <i64>load<i32>(ptr);
}

/** The position of the first index outside [0, bound) in a contiguous index of `n` elements, or -1. */
export function index_find_invalid(indexDtype: i32, index: usize, n: i32, bound: i64): i32 {
  if (indexDtype != DT_I64 && indexDtype != DT_I32) return -2;
  const width: usize = indexDtype == DT_I64 ? 8 : 4;
  for (let i = 0; i < n; i++) {
    const v = loadIndex(indexDtype, index + <usize>i * width);
    if (v < 0 || v >= bound) return i;
  }
  return -1;
}

/** Element offset of row `row` (a position over every dimension but the last) in operand `k`. */
// @ts-ignore: decorator
@inline
function rowOffset(desc: usize, ndim: i32, k: i32, row: i32): isize {
  let rest = row;
  let off: isize = 0;
  for (let d = ndim - 2; d >= 0; d--) {
    const size = descSize(desc, d);
    off += <isize>(rest % size) * descStride(desc, ndim, k, d);
    rest /= size;
  }
  return off;
}

function rowCount(desc: usize, ndim: i32): i32 {
  let rows: i32 = 1;
  for (let d = 0; d < ndim; d++) {
    const size = descSize(desc, d);
    if (size == 0) return 0;
    if (d < ndim - 1) rows *= size;
  }
  return rows;
}

function copyElement(width: i32, dst: usize, src: usize): void {
  if (width == 4) store<u32>(dst, load<u32>(src));
  else if (width == 8) store<u64>(dst, load<u64>(src));
  else if (width == 2) store<u16>(dst, load<u16>(src));
  else store<u8>(dst, load<u8>(src));
}

/** Gathers along one dimension (see the file comment); `srcDimStride` is in elements. */
export function gather_strided(
  dtype: i32,
  out: usize,
  src: usize,
  index: usize,
  indexDtype: i32,
  desc: usize,
  srcDimStride: i32,
): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (indexDtype != DT_I64 && indexDtype != DT_I32) return STATUS_BAD_ARGUMENT;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const width = itemSize(dtype);
  const iw: isize = indexDtype == DT_I64 ? 8 : 4;
  const w = <isize>width;
  const rows = rowCount(desc, ndim);
  const n = ndim == 0 ? 1 : descSize(desc, ndim - 1);
  const so = ndim == 0 ? <isize>0 : descStride(desc, ndim, 0, ndim - 1) * w;
  const ss = ndim == 0 ? <isize>0 : descStride(desc, ndim, 1, ndim - 1) * w;
  const si = ndim == 0 ? <isize>0 : descStride(desc, ndim, 2, ndim - 1) * iw;
  const dimStride = <isize>srcDimStride * w;
  for (let row = 0; row < rows; row++) {
    let o = out + <usize>(rowOffset(desc, ndim, 0, row) * w);
    let s = src + <usize>(rowOffset(desc, ndim, 1, row) * w);
    let x = index + <usize>(rowOffset(desc, ndim, 2, row) * iw);
    for (let i = 0; i < n; i++) {
      const at = <isize>loadIndex(indexDtype, x);
      copyElement(width, o, s + <usize>(at * dimStride));
      o += so;
      s += ss;
      x += si;
    }
  }
  return STATUS_OK;
}

/** `*o += alpha * *s` for one element of `dtype` (Note [Deterministic accumulation]). */
function accumulate(dtype: i32, o: usize, s: usize, alpha: f64): void {
  switch (dtype) {
    case DT_F32:
      store<f32>(o, load<f32>(o) + <f32>alpha * load<f32>(s));
      break;
    case DT_F64:
      store<f64>(o, load<f64>(o) + alpha * load<f64>(s));
      break;
    case DT_F16:
      store<u16>(o, f32ToF16(f16ToF32(load<u16>(o)) + <f32>alpha * f16ToF32(load<u16>(s))));
      break;
    case DT_BF16:
      store<u16>(o, f32ToBf16(bf16ToF32(load<u16>(o)) + <f32>alpha * bf16ToF32(load<u16>(s))));
      break;
    case DT_BOOL:
      store<u8>(o, load<u8>(o) != 0 || (alpha != 0 && load<u8>(s) != 0) ? 1 : 0);
      break;
    case DT_I64:
      store<i64>(o, load<i64>(o) + <i64>alpha * load<i64>(s));
      break;
    case DT_I32:
      store<i32>(o, <i32>(<i64>load<i32>(o) + <i64>alpha * <i64>load<i32>(s)));
      break;
    case DT_I16:
      store<i16>(o, <i16>(<i64>load<i16>(o) + <i64>alpha * <i64>load<i16>(s)));
      break;
    case DT_I8:
      store<i8>(o, <i8>(<i64>load<i8>(o) + <i64>alpha * <i64>load<i8>(s)));
      break;
    case DT_U8:
      store<u8>(o, <u8>(<i64>load<u8>(o) + <i64>alpha * <i64>load<u8>(s)));
      break;
  }
}

/** Accumulates along one dimension (see the file comment); `outDimStride` is in elements. */
export function scatter_add_strided(
  dtype: i32,
  out: usize,
  src: usize,
  index: usize,
  indexDtype: i32,
  desc: usize,
  outDimStride: i32,
  alpha: f64,
  skip: i64,
): i32 {
  if (!isKnownDtype(dtype)) return STATUS_UNSUPPORTED;
  if (indexDtype != DT_I64 && indexDtype != DT_I32) return STATUS_BAD_ARGUMENT;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const w = <isize>itemSize(dtype);
  const iw: isize = indexDtype == DT_I64 ? 8 : 4;
  const rows = rowCount(desc, ndim);
  const n = ndim == 0 ? 1 : descSize(desc, ndim - 1);
  const so = ndim == 0 ? <isize>0 : descStride(desc, ndim, 0, ndim - 1) * w;
  const ss = ndim == 0 ? <isize>0 : descStride(desc, ndim, 1, ndim - 1) * w;
  const si = ndim == 0 ? <isize>0 : descStride(desc, ndim, 2, ndim - 1) * iw;
  const dimStride = <isize>outDimStride * w;
  for (let row = 0; row < rows; row++) {
    let o = out + <usize>(rowOffset(desc, ndim, 0, row) * w);
    let s = src + <usize>(rowOffset(desc, ndim, 1, row) * w);
    let x = index + <usize>(rowOffset(desc, ndim, 2, row) * iw);
    for (let i = 0; i < n; i++) {
      const at = loadIndex(indexDtype, x);
      if (at != skip) accumulate(dtype, o + <usize>(<isize>at * dimStride), s, alpha);
      o += so;
      s += ss;
      x += si;
    }
  }
  return STATUS_OK;
}
