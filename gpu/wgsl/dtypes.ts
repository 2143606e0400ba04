/**
 * How each dtype lives in GPU buffers and in WGSL: the `AT_DISPATCH` of the WebGPU backend. A kernel is written
 * once over a *compute kind* (f32, i32 or i64) and instantiated per dtype by the load, store and conversion
 * snippets below.
 *
 * Note [GPU element layout]
 * WGSL has no 8- or 16-bit storage types, and sub-word stores from many invocations would race, so every
 * element takes one 32-bit word: float16 and bfloat16 hold their value as an f32 (rounded to the dtype on every
 * store: the same arithmetic as the CPU kernels, which compute reduced floats in float and round the result),
 * int8, int16, uint8 and bool an i32 (wrapped to the dtype on every store). int64 takes two words (low, high)
 * and is computed with the 64-bit helpers of `I64_WGSL`; float64 takes two words too but is storage only: WGSL
 * has no f64, so copies, views and transfers work and every computing kernel refuses it with PyTorch's
 * `"op" not implemented for 'Double'`. Buffers are therefore `4 * numel` bytes (8 for int64 and float64), and
 * transfers convert to and from the CPU's packed bytes (gpu/transfer.ts).
 *
 * @module
 */
import { NotImplementedError } from '../../core/dispatch/errors.ts';
import type { DType } from '../../core/tensor/dtype.ts';

/** The WGSL value type a dtype computes in. */
export type Kind = 'f32' | 'i32' | 'i64';

/**
 * Bytes one element takes in a GPU buffer (Note [GPU element layout]).
 *
 * @example
 * ```ts
 * import { gpuItemBytes } from './dtypes.ts';
 * import { uint8 } from '../../core/tensor/dtype.ts';
 * gpuItemBytes(uint8); // 4
 * ```
 */
export function gpuItemBytes(dtype: DType): number {
  return dtype.name === 'int64' || dtype.name === 'float64' ? 8 : 4;
}

/** Words one element takes. */
function gpuItemWords(dtype: DType): number {
  return gpuItemBytes(dtype) / 4;
}

/**
 * The compute kind of a dtype; float64 has none, and raises PyTorch's message naming `op`.
 *
 * @example
 * ```ts
 * import { kindOf } from './dtypes.ts';
 * import { float16 } from '../../core/tensor/dtype.ts';
 * kindOf(float16, 'add'); // 'f32'
 * ```
 */
export function kindOf(dtype: DType, op: string): Kind {
  switch (dtype.name) {
    case 'float32':
    case 'float16':
    case 'bfloat16':
      return 'f32';
    case 'int64':
      return 'i64';
    case 'float64':
      throw new NotImplementedError(`"${op}" not implemented for '${dtype.scalarTypeName}'`);
    default:
      return 'i32';
  }
}

/**
 * The WGSL type of a kind.
 *
 * @example
 * ```ts
 * import { wgslType } from './dtypes.ts';
 * wgslType('i64'); // 'vec2<u32>'
 * ```
 */
export function wgslType(kind: Kind): string {
  return kind === 'i64' ? 'vec2<u32>' : kind;
}

/**
 * WGSL reading element `e` (a u32 expression) of buffer `buf` as `dtype`'s compute kind.
 *
 * @example
 * ```ts
 * import { loadWgsl } from './dtypes.ts';
 * import { float16 } from '../../core/tensor/dtype.ts';
 * loadWgsl(float16, 'b0', 'i'); // 'bitcast<f32>(b0[i])'
 * ```
 */
export function loadWgsl(dtype: DType, buf: string, e: string): string {
  switch (gpuItemWords(dtype)) {
    case 2:
      return `vec2<u32>(${buf}[2u * (${e})], ${buf}[2u * (${e}) + 1u])`;
    default:
      return dtype.isFloatingPoint ? `bitcast<f32>(${buf}[${e}])` : `bitcast<i32>(${buf}[${e}])`;
  }
}

/**
 * The 32-bit word storing `v` (of a one-word dtype's compute kind), rounded or wrapped to the dtype.
 *
 * @example
 * ```ts
 * import { wordWgsl } from './dtypes.ts';
 * import { int8 } from '../../core/tensor/dtype.ts';
 * wordWgsl(int8, 'x'); // 'bitcast<u32>((x << 24u) >> 24u)'
 * ```
 */
export function wordWgsl(dtype: DType, v: string): string {
  switch (dtype.name) {
    case 'float16':
      return `bitcast<u32>(round_f16(${v}))`;
    case 'bfloat16':
      return `bitcast<u32>(round_bf16(${v}))`;
    case 'int16':
      return `bitcast<u32>((${v} << 16u) >> 16u)`;
    case 'int8':
      return `bitcast<u32>((${v} << 24u) >> 24u)`;
    case 'uint8':
      return `bitcast<u32>(${v} & 255i)`;
    case 'bool':
      return `select(0u, 1u, ${v} != 0i)`;
    default:
      return `bitcast<u32>(${v})`;
  }
}

/**
 * A WGSL statement storing `v` (of `dtype`'s compute kind) as element `e` of `buf`, rounded or wrapped.
 *
 * @example
 * ```ts
 * import { storeWgsl } from './dtypes.ts';
 * import { bool } from '../../core/tensor/dtype.ts';
 * storeWgsl(bool, 'b0', 'i', 'v'); // 'b0[i] = select(0u, 1u, v != 0i);'
 * ```
 */
export function storeWgsl(dtype: DType, buf: string, e: string, v: string): string {
  switch (dtype.name) {
    case 'int64':
    case 'float64':
      return `{ let s = ${v}; ${buf}[2u * (${e})] = s.x; ${buf}[2u * (${e}) + 1u] = s.y; }`;
    case 'float32':
      return `${buf}[${e}] = bitcast<u32>(${v});`;
    case 'float16':
      return `${buf}[${e}] = bitcast<u32>(round_f16(${v}));`;
    case 'bfloat16':
      return `${buf}[${e}] = bitcast<u32>(round_bf16(${v}));`;
    case 'int16':
      return `${buf}[${e}] = bitcast<u32>((${v} << 16u) >> 16u);`;
    case 'int8':
      return `${buf}[${e}] = bitcast<u32>((${v} << 24u) >> 24u);`;
    case 'uint8':
      return `${buf}[${e}] = bitcast<u32>(${v} & 255i);`;
    case 'bool':
      return `${buf}[${e}] = select(0u, 1u, ${v} != 0i);`;
    default:
      return `${buf}[${e}] = bitcast<u32>(${v});`;
  }
}

/**
 * WGSL converting `v` from one compute kind to another, as C++'s `static_cast` converts.
 *
 * @example
 * ```ts
 * import { convertKind } from './dtypes.ts';
 * convertKind('x', 'i32', 'i64'); // 'i64_from_i32(x)'
 * ```
 */
export function convertKind(v: string, from: Kind, to: Kind): string {
  if (from === to) return v;
  if (to === 'f32') return from === 'i32' ? `f32(${v})` : `i64_to_f32(${v})`;
  if (to === 'i32') return from === 'f32' ? `i32(${v})` : `bitcast<i32>((${v}).x)`;
  return from === 'f32' ? `i64_from_f32(${v})` : `i64_from_i32(${v})`;
}

/**
 * WGSL converting `v` of kind `from` to the compute kind of `to`, as C++'s `static_cast` converts (for bool:
 * nonzero is true). float64 on either side is refused (`op` names the kernel).
 *
 * @example
 * ```ts
 * import { convertWgsl } from './dtypes.ts';
 * import { bool } from '../../core/tensor/dtype.ts';
 * convertWgsl('x', 'f32', bool, 'copy_'); // 'select(0i, 1i, (x) != 0.0)'
 * ```
 */
export function convertWgsl(v: string, from: Kind, to: DType, op: string): string {
  const target = kindOf(to, op);
  if (to.name === 'bool') {
    if (from === 'f32') return `select(0i, 1i, (${v}) != 0.0)`;
    if (from === 'i64') return `select(0i, 1i, any((${v}) != vec2<u32>(0u)))`;
    return `select(0i, 1i, (${v}) != 0i)`;
  }
  return convertKind(v, from, target);
}

/**
 * Float helpers: NaN tests on bits (safe from fast-math folding), NaN and infinity made at run time (Tint
 * refuses a constant expression that evaluates to one), and rounding to float16 / bfloat16.
 *
 * @example
 * ```ts
 * import { FLOAT_WGSL } from './dtypes.ts';
 * FLOAT_WGSL.includes('fn round_f16'); // true
 * ```
 */
export const FLOAT_WGSL = `
var<private> NAN_BITS: u32 = 0x7fc00000u;
var<private> INF_BITS: u32 = 0x7f800000u;
fn nan_f() -> f32 { return bitcast<f32>(NAN_BITS); }
fn inf_f() -> f32 { return bitcast<f32>(INF_BITS); }
fn is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn round_f16(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let s = b & 0x80000000u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return x; }
  if (a >= 0x477ff000u) { return bitcast<f32>(s | 0x7f800000u); }
  if (a < 0x38800000u) { return bitcast<f32>(s | bitcast<u32>(round(abs(x) * 16777216.0) * 5.9604644775390625e-8)); }
  let lsb = (a >> 13u) & 1u;
  return bitcast<f32>(s | ((a + 0xfffu + lsb) & 0xffffe000u));
}
fn round_bf16(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return bitcast<f32>((b & 0xffff0000u) | 0x00400000u); }
  return bitcast<f32>((b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u);
}
`;

/**
 * 64-bit integer helpers over `vec2<u32>(low, high)` words (two's complement, wrapping as int64 does).
 *
 * @example
 * ```ts
 * import { I64_WGSL } from './dtypes.ts';
 * I64_WGSL.includes('fn i64_mul'); // true
 * ```
 */
export const I64_WGSL = `
fn i64_from_i32(x: i32) -> vec2<u32> { return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0i)); }
fn i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn i64_neg(a: vec2<u32>) -> vec2<u32> { return i64_add(~a, vec2<u32>(1u, 0u)); }
fn i64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return i64_add(a, i64_neg(b)); }
fn mul_u32_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
fn i64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = mul_u32_wide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}
fn i64_is_neg(a: vec2<u32>) -> bool { return (a.y & 0x80000000u) != 0u; }
fn i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  if (a.y != b.y) { return bitcast<i32>(a.y) < bitcast<i32>(b.y); }
  return a.x < b.x;
}
fn i64_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return all(a == b); }
fn i64_from_f32(x: f32) -> vec2<u32> {
  let t = trunc(abs(x));
  if (is_nan(x) || t >= 9.223372036854775808e18) { return vec2<u32>(0u, 0x80000000u); }
  let hi = floor(t / 4294967296.0);
  let m = vec2<u32>(u32(t - hi * 4294967296.0), u32(hi));
  return select(m, i64_neg(m), x < 0.0);
}
fn u64_to_f32(m: vec2<u32>) -> f32 {
  if (m.y == 0u) {
    if (m.x < 0x1000000u) { return f32(m.x); }
    let drop = 8u - countLeadingZeros(m.x);
    var mant = m.x >> drop;
    let rest = m.x & ((1u << drop) - 1u);
    let half = 1u << (drop - 1u);
    if (rest > half || (rest == half && (mant & 1u) == 1u)) { mant += 1u; }
    return ldexp(f32(mant), i32(drop));
  }
  let lz = countLeadingZeros(m.y);
  var hi = m.y;
  var lo = m.x;
  if (lz > 0u) { hi = (m.y << lz) | (m.x >> (32u - lz)); lo = m.x << lz; }
  var mant = hi >> 8u;
  let rest = hi & 0xffu;
  if (rest > 0x80u || (rest == 0x80u && (lo != 0u || (mant & 1u) == 1u))) { mant += 1u; }
  return ldexp(f32(mant), i32(40u - lz));
}
fn i64_to_f32(a: vec2<u32>) -> f32 {
  let neg = i64_is_neg(a);
  let f = u64_to_f32(select(a, i64_neg(a), neg));
  return select(f, -f, neg);
}
`;
