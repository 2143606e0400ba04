// Opcodes of the elementwise kernel families, plus fill and copy.
//
// The opcode numbers are part of the kernel ABI: core/cpu/exports_elementwise.ts mirrors them as `UnaryOp` and
// `BinaryOp`, and tests/cpu/wasm_loader.test.ts checks the mirror against these exported globals. Append new
// opcodes at the end; never renumber.
//
// Kernels: unary.ts (unary_*), binary.ts (binary_*, comparisons and logical ops), ternary.ts (where, clamp,
// lerp), cast.ts (cast_*). This file holds fill_* and copy_*.

import { DT_BF16, DT_BOOL, DT_F16, DT_F32, DT_F64, DT_I16, DT_I32, DT_I64, DT_I8, DT_U8 } from './common';
import { f32ToBf16, f32ToF16, itemSize, STATUS_BAD_ARGUMENT, STATUS_OK, STATUS_UNSUPPORTED } from './common';
import { blockCount, blockOff0, blockOff1, blockOffsets, descNdim, innerSize, innerStride } from './strided';
import { midSize, midStride } from './strided';

// ---- unary (out = f(a); out is Bool for LOGICAL_NOT and ISNAN) -----------------------------------------------
export const UNARY_NEG: i32 = 0;
export const UNARY_ABS: i32 = 1;
export const UNARY_SIGN: i32 = 2;
export const UNARY_EXP: i32 = 3;
export const UNARY_LOG: i32 = 4;
export const UNARY_LOG1P: i32 = 5;
export const UNARY_EXPM1: i32 = 6;
export const UNARY_SQRT: i32 = 7;
export const UNARY_RSQRT: i32 = 8;
export const UNARY_SIN: i32 = 9;
export const UNARY_COS: i32 = 10;
export const UNARY_TANH: i32 = 11;
export const UNARY_SIGMOID: i32 = 12;
export const UNARY_RELU: i32 = 13;
export const UNARY_GELU: i32 = 14;
export const UNARY_GELU_TANH: i32 = 15;
export const UNARY_SILU: i32 = 16;
export const UNARY_ERF: i32 = 17;
export const UNARY_FLOOR: i32 = 18;
export const UNARY_CEIL: i32 = 19;
export const UNARY_ROUND: i32 = 20;
export const UNARY_TRUNC: i32 = 21;
export const UNARY_RECIPROCAL: i32 = 22;
export const UNARY_LOGICAL_NOT: i32 = 23;
export const UNARY_ISNAN: i32 = 24;
export const UNARY_BITWISE_NOT: i32 = 25;
export const UNARY_OP_COUNT: i32 = 26;

// ---- binary (out = a op b; out is Bool from LOGICAL_AND on) ----------------------------------------------------
export const BINARY_ADD: i32 = 0;
export const BINARY_SUB: i32 = 1;
export const BINARY_MUL: i32 = 2;
export const BINARY_DIV: i32 = 3;
export const BINARY_DIV_TRUNC: i32 = 4;
export const BINARY_DIV_FLOOR: i32 = 5;
export const BINARY_REMAINDER: i32 = 6;
export const BINARY_FMOD: i32 = 7;
export const BINARY_POW: i32 = 8;
export const BINARY_MINIMUM: i32 = 9;
export const BINARY_MAXIMUM: i32 = 10;
export const BINARY_ATAN2: i32 = 11;
export const BINARY_BITWISE_AND: i32 = 12;
export const BINARY_BITWISE_OR: i32 = 13;
export const BINARY_BITWISE_XOR: i32 = 14;
export const BINARY_LOGICAL_AND: i32 = 15;
export const BINARY_LOGICAL_OR: i32 = 16;
export const BINARY_LOGICAL_XOR: i32 = 17;
export const BINARY_EQ: i32 = 18;
export const BINARY_NE: i32 = 19;
export const BINARY_LT: i32 = 20;
export const BINARY_LE: i32 = 21;
export const BINARY_GT: i32 = 22;
export const BINARY_GE: i32 = 23;
export const BINARY_OP_COUNT: i32 = 24;

// ---- clamp flags ----------------------------------------------------------------------------------------------
/** clamp_*: the lower bound is present. */
export const CLAMP_HAS_MIN: i32 = 1;
/** clamp_*: the upper bound is present. */
export const CLAMP_HAS_MAX: i32 = 2;

// ---------------------------------------------------------------------------------------------------------------
// fill and copy move bits, so they are generic over the element width only (u8/u16/u32/u64), not the dtype.

/** Fills a row of `n` elements of width T with the bits `bits`; contiguous rows use 64-byte v128 stores. */
function fillRow<T>(o: usize, n: i32, so: isize, bits: u64): void {
  let i = 0;
  if (so == <isize>sizeof<T>()) {
    const v = i64x2.splat(<i64>bits);
    const vectors = (n * <i32>sizeof<T>()) >> 4;
    for (; i + 4 <= vectors; i += 4) {
      v128.store(o, v);
      v128.store(o, v, 16);
      v128.store(o, v, 32);
      v128.store(o, v, 48);
      o += 64;
    }
    for (; i < vectors; i++) {
      v128.store(o, v);
      o += 16;
    }
    i = (vectors << 4) / <i32>sizeof<T>();
  }
  for (; i < n; i++) {
    store<T>(o, <T>bits);
    o += so;
  }
}

/** Copies a row of `n` elements of width T. */
function copyRow<T>(o: usize, a: usize, n: i32, so: isize, sa: isize): void {
  if (so == <isize>sizeof<T>() && sa == so) {
    memory.copy(o, a, <usize>n * sizeof<T>());
    return;
  }
  for (let i = 0; i < n; i++) {
    store<T>(o, load<T>(a));
    o += so;
    a += sa;
  }
}

/**
 * The bits of `value` converted to `dtype` (by the rules of `st`, Note [Float to int casts]) and replicated to
 * fill 8 bytes, or 0 for an unknown dtype. Computed in registers: scratch memory would race between workers.
 */
function fillBits(dtype: i32, value: f64): u64 {
  switch (dtype) {
    case DT_U8:
    case DT_I8:
      return <u64>(<u8>(<i32>value)) * 0x0101010101010101;
    case DT_BOOL:
      return value != 0 ? 0x0101010101010101 : 0;
    case DT_I16:
      return <u64>(<u16>(<i32>value)) * 0x0001000100010001;
    case DT_F16:
      return <u64>f32ToF16(<f32>value) * 0x0001000100010001;
    case DT_BF16:
      return <u64>f32ToBf16(<f32>value) * 0x0001000100010001;
    case DT_I32:
      return <u64>(<u32>(<i32>value)) * 0x0000000100000001;
    case DT_F32:
      return <u64>reinterpret<u32>(<f32>value) * 0x0000000100000001;
    case DT_I64:
      return <u64>(<i64>value);
    case DT_F64:
      return reinterpret<u64>(value);
  }
  return 0;
}

/** Dispatches a fill row on the element width. */
function fillRowBytes(width: i32, o: usize, n: i32, so: isize, bits: u64): void {
  if (width == 1) fillRow<u8>(o, n, so, bits);
  else if (width == 2) fillRow<u16>(o, n, so, bits);
  else if (width == 4) fillRow<u32>(o, n, so, bits);
  else fillRow<u64>(o, n, so, bits);
}

/** Dispatches a copy row on the element width. */
function copyRowBytes(width: i32, o: usize, a: usize, n: i32, so: isize, sa: isize): void {
  if (width == 1) copyRow<u8>(o, a, n, so, sa);
  else if (width == 2) copyRow<u16>(o, a, n, so, sa);
  else if (width == 4) copyRow<u32>(o, a, n, so, sa);
  else copyRow<u64>(o, a, n, so, sa);
}

/**
 * out[0..n) = value converted to `dtype` (floats round to nearest even, integers truncate toward zero and
 * saturate to i32/i64 before wrapping, bool is value != 0). i64 fills are exact only up to 2^53.
 */
export function fill_contig(dtype: i32, out: usize, value: f64, n: i32): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  fillRowBytes(width, out, n, width, fillBits(dtype, value));
  return STATUS_OK;
}

/** fill_contig over a strided view; `desc` has one operand (out). */
export function fill_strided(dtype: i32, out: usize, value: f64, desc: usize): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const bits = fillBits(dtype, value);
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * width;
  const mo = midStride(desc, ndim, 0) * width;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 1, blk);
    let po = out + <usize>(blockOff0 * width);
    for (let m = 0; m < mid; m++) {
      fillRowBytes(width, po, inner, so, bits);
      po += <usize>mo;
    }
  }
  return STATUS_OK;
}

/** out[0..n) = a[0..n), same dtype (memory.copy; overlapping ranges behave like memmove). */
export function copy_contig(dtype: i32, out: usize, a: usize, n: i32): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  if (n < 0) return STATUS_BAD_ARGUMENT;
  memory.copy(out, a, <usize>n * <usize>width);
  return STATUS_OK;
}

/** Strided copy between two views of the same dtype; `desc` operands: out, a. Overlap is not supported. */
export function copy_strided(dtype: i32, out: usize, a: usize, desc: usize): i32 {
  const width = itemSize(dtype);
  if (width == 0) return STATUS_UNSUPPORTED;
  const ndim = descNdim(desc);
  if (ndim < 0) return STATUS_BAD_ARGUMENT;
  const inner = innerSize(desc, ndim);
  const mid = midSize(desc, ndim);
  const so = innerStride(desc, ndim, 0) * width;
  const sa = innerStride(desc, ndim, 1) * width;
  const mo = midStride(desc, ndim, 0) * width;
  const ma = midStride(desc, ndim, 1) * width;
  const blocks = blockCount(desc, ndim);
  for (let blk = 0; blk < blocks; blk++) {
    blockOffsets(desc, ndim, 2, blk);
    let po = out + <usize>(blockOff0 * width);
    let pa = a + <usize>(blockOff1 * width);
    for (let m = 0; m < mid; m++) {
      copyRowBytes(width, po, pa, inner, so, sa);
      po += <usize>mo;
      pa += <usize>ma;
    }
  }
  return STATUS_OK;
}
