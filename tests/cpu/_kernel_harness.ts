/**
 * Test helper for the wasm kernels: one kernel instance over its own shared memory, a bump allocator starting at
 * `heapBase()`, typed reads and writes by dtype code, strided descriptors, a seeded PRNG and JS reference
 * conversions for float16 / bfloat16.
 *
 * ```ts
 * const h = harness();                        // or harness({ flavor: 'simd' })
 * const a = h.put(DT.f32, [1, 2, 3]);          // allocate + fill, returns a byte pointer
 * const out = h.alloc(3 * 4);
 * h.k.binary_scalar_contig(BinaryOp.add, DT.f32, out, a, 1, 3, 1);
 * h.get(DT.f32, out, 3);                       // [2, 3, 4]
 * h.reset();                                   // frees everything (call between tests if you like)
 * ```
 *
 * Pointers are byte offsets into `h.memory`. Views are created on each call because the memory may grow.
 *
 * @module
 */
import { createKernelMemory, instantiateKernels, type KernelFlavor } from '../../core/cpu/wasm.ts';
import type { KernelExports } from '../../core/cpu/kernel_exports.ts';

/** PyTorch ScalarType codes by short name. */
export const DT = { u8: 0, i8: 1, i16: 2, i32: 3, i64: 4, f16: 5, f32: 6, f64: 7, bool: 11, bf16: 15 } as const;

/** A dtype code of {@linkcode DT}. */
export type Dtype = typeof DT[keyof typeof DT];

/** Every dtype code, in ScalarType order. */
export const ALL_DTYPES: readonly Dtype[] = [
  DT.u8,
  DT.i8,
  DT.i16,
  DT.i32,
  DT.i64,
  DT.f16,
  DT.f32,
  DT.f64,
  DT.bool,
  DT.bf16,
];

/** The float dtypes. */
export const FLOAT_DTYPES: readonly Dtype[] = [DT.f16, DT.bf16, DT.f32, DT.f64];

/** The integer dtypes (not Bool). */
export const INT_DTYPES: readonly Dtype[] = [DT.u8, DT.i8, DT.i16, DT.i32, DT.i64];

/** Short names for messages. */
export const DTYPE_NAME: Record<Dtype, string> = {
  0: 'u8',
  1: 'i8',
  2: 'i16',
  3: 'i32',
  4: 'i64',
  5: 'f16',
  6: 'f32',
  7: 'f64',
  11: 'bool',
  15: 'bf16',
};

/** Bytes per element. */
export function itemSize(dtype: Dtype): number {
  switch (dtype) {
    case DT.u8:
    case DT.i8:
    case DT.bool:
      return 1;
    case DT.i16:
    case DT.f16:
    case DT.bf16:
      return 2;
    case DT.i32:
    case DT.f32:
      return 4;
    default:
      return 8;
  }
}

/** The kernel instance, its memory and helpers (see the module doc). */
export interface KernelHarness {
  readonly k: KernelExports;
  readonly memory: WebAssembly.Memory;
  /** Allocates `bytes` (64-byte aligned, zero-filled); grows the memory when needed. */
  alloc(bytes: number): number;
  /** Frees everything allocated so far. */
  reset(): void;
  /** Allocates room for `values.length` elements of `dtype` and stores them (as {@linkcode store} does). */
  put(dtype: Dtype, values: ArrayLike<number>): number;
  /** Stores numbers as `dtype` at `ptr`: ints wrap (via BigInt for i64), f16/bf16 round to nearest even. */
  store(dtype: Dtype, ptr: number, values: ArrayLike<number>): void;
  /** Reads `n` elements of `dtype` at `ptr` as numbers (i64 via Number(), f16/bf16 decoded). */
  get(dtype: Dtype, ptr: number, n: number): number[];
  /** Raw bits of `n` 2-byte elements (for f16/bf16 bit comparisons). */
  bits16(ptr: number, n: number): Uint16Array;
  /** Writes a strided descriptor `[ndim, sizes..., strides of each operand...]` and returns its pointer. */
  desc(sizes: readonly number[], ...strides: readonly (readonly number[])[]): number;
  f32(ptr: number, n: number): Float32Array;
  f64(ptr: number, n: number): Float64Array;
  i32(ptr: number, n: number): Int32Array;
  u8(ptr: number, n: number): Uint8Array;
  i64(ptr: number, n: number): BigInt64Array;
}

/**
 * A fresh kernel instance over a fresh shared memory (up to `maximumPages`, default 4096 = 256 MiB).
 */
export function harness(options: { flavor?: KernelFlavor; maximumPages?: number } = {}): KernelHarness {
  const memory = createKernelMemory({ initialPages: 16, maximumPages: options.maximumPages ?? 4096 });
  const k = instantiateKernels(memory, { flavor: options.flavor });
  const base = k.heapBase();
  let top = base;
  const buf = () => memory.buffer as unknown as ArrayBuffer;
  const h: KernelHarness = {
    k,
    memory,
    alloc(bytes) {
      const ptr = top;
      top = Math.ceil((ptr + Math.max(bytes, 1)) / 64) * 64;
      const need = top - memory.buffer.byteLength;
      if (need > 0) memory.grow(Math.ceil(need / 65536));
      new Uint8Array(buf(), ptr, top - ptr).fill(0);
      return ptr;
    },
    reset() {
      top = base;
    },
    put(dtype, values) {
      const ptr = h.alloc(values.length * itemSize(dtype));
      h.store(dtype, ptr, values);
      return ptr;
    },
    store(dtype, ptr, values) {
      const n = values.length;
      switch (dtype) {
        case DT.u8:
        case DT.bool:
          new Uint8Array(buf(), ptr, n).set(
            Array.from(values, (v) => Number(BigInt.asUintN(8, BigInt(Math.trunc(v))))),
          );
          break;
        case DT.i8:
          new Int8Array(buf(), ptr, n).set(Array.from(values, (v) => Number(BigInt.asIntN(8, BigInt(Math.trunc(v))))));
          break;
        case DT.i16:
          new Int16Array(buf(), ptr, n).set(
            Array.from(values, (v) => Number(BigInt.asIntN(16, BigInt(Math.trunc(v))))),
          );
          break;
        case DT.i32:
          new Int32Array(buf(), ptr, n).set(
            Array.from(values, (v) => Number(BigInt.asIntN(32, BigInt(Math.trunc(v))))),
          );
          break;
        case DT.i64:
          new BigInt64Array(buf(), ptr, n).set(Array.from(values, (v) => BigInt.asIntN(64, BigInt(Math.trunc(v)))));
          break;
        case DT.f16:
          new Uint16Array(buf(), ptr, n).set(Array.from(values, f16Bits));
          break;
        case DT.bf16:
          new Uint16Array(buf(), ptr, n).set(Array.from(values, bf16Bits));
          break;
        case DT.f32:
          new Float32Array(buf(), ptr, n).set(values);
          break;
        case DT.f64:
          new Float64Array(buf(), ptr, n).set(values);
          break;
      }
    },
    get(dtype, ptr, n) {
      switch (dtype) {
        case DT.u8:
        case DT.bool:
          return Array.from(new Uint8Array(buf(), ptr, n));
        case DT.i8:
          return Array.from(new Int8Array(buf(), ptr, n));
        case DT.i16:
          return Array.from(new Int16Array(buf(), ptr, n));
        case DT.i32:
          return Array.from(new Int32Array(buf(), ptr, n));
        case DT.i64:
          return Array.from(new BigInt64Array(buf(), ptr, n), Number);
        case DT.f16:
          return Array.from(new Uint16Array(buf(), ptr, n), f16Value);
        case DT.bf16:
          return Array.from(new Uint16Array(buf(), ptr, n), bf16Value);
        case DT.f32:
          return Array.from(new Float32Array(buf(), ptr, n));
        case DT.f64:
          return Array.from(new Float64Array(buf(), ptr, n));
      }
    },
    bits16: (ptr, n) => new Uint16Array(buf(), ptr, n),
    desc(sizes, ...strides) {
      const words = [sizes.length, ...sizes, ...strides.flat()];
      const ptr = h.alloc(words.length * 4);
      new Int32Array(buf(), ptr, words.length).set(words);
      return ptr;
    },
    f32: (ptr, n) => new Float32Array(buf(), ptr, n),
    f64: (ptr, n) => new Float64Array(buf(), ptr, n),
    i32: (ptr, n) => new Int32Array(buf(), ptr, n),
    u8: (ptr, n) => new Uint8Array(buf(), ptr, n),
    i64: (ptr, n) => new BigInt64Array(buf(), ptr, n),
  };
  return h;
}

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- float16 / bfloat16 references (plain f64 arithmetic, independent of the kernels' bit tricks) ----------

/** Rounds a non-negative number to an integer, ties to even. */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** The binary exponent e with 2^e <= x < 2^(e+1), for finite x > 0. */
function exponentOf(x: number): number {
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e--;
  if (2 ** (e + 1) <= x) e++;
  return e;
}

/** Generic IEEE encoder: `mantBits` fraction bits, `expBits` exponent bits, round to nearest even. */
function encode(x: number, expBits: number, mantBits: number): number {
  const bias = (1 << (expBits - 1)) - 1;
  const expMask = (1 << expBits) - 1;
  const sign = x < 0 || Object.is(x, -0) ? 1 << (expBits + mantBits) : 0;
  if (Number.isNaN(x)) return (expMask << mantBits) | (1 << (mantBits - 1));
  const a = Math.abs(x);
  if (a === Infinity) return sign | (expMask << mantBits);
  if (a === 0) return sign;
  const minExp = 1 - bias;
  const e = Math.max(exponentOf(a), minExp);
  const m = roundHalfEven(a / 2 ** (e - mantBits)); // exact scaling by a power of two
  // Subnormal: biased exponent 0 and m < 2^mantBits; a carry into the exponent field is the correct encoding.
  const bits = e === minExp && m < 2 ** mantBits ? m : ((e + bias) << mantBits) + m - 2 ** mantBits;
  return sign | Math.min(bits, expMask << mantBits);
}

/** Float16 bits of `x` (rounded directly from the f64 value, ties to even). */
export function f16Bits(x: number): number {
  return encode(x, 5, 10);
}

/** bfloat16 bits of `x` (rounded directly from the f64 value, ties to even). */
export function bf16Bits(x: number): number {
  return encode(x, 8, 7);
}

/** The value of float16 bits. */
export function f16Value(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1024 + m) * 2 ** (e - 25);
}

/** The value of bfloat16 bits. */
export function bf16Value(bits: number): number {
  const f = new Float32Array(new Uint32Array([bits << 16]).buffer);
  return f[0];
}

/** Rounds like storing into `dtype` and reading back: fround for f32, f16/bf16 via f32 first (as the kernels). */
export function roundTo(dtype: Dtype, x: number): number {
  switch (dtype) {
    case DT.f32:
      return Math.fround(x);
    case DT.f16:
      return f16Value(f16Bits(Math.fround(x)));
    case DT.bf16:
      return bf16Value(bf16Bits(Math.fround(x)));
    default:
      return x;
  }
}

/** Distance in units of the last place of `dtype` between two floats (0 for equal, Infinity for NaN mismatch). */
export function ulpDistance(dtype: Dtype, got: number, want: number): number {
  if (Number.isNaN(got) || Number.isNaN(want)) return Number.isNaN(got) && Number.isNaN(want) ? 0 : Infinity;
  if (got === want) return 0;
  if (!Number.isFinite(got) || !Number.isFinite(want)) return Infinity;
  const mant = dtype === DT.f64 ? 52 : dtype === DT.f32 ? 23 : dtype === DT.f16 ? 10 : 7;
  const minExp = dtype === DT.f64 ? -1022 : dtype === DT.f32 ? -126 : dtype === DT.f16 ? -14 : -126;
  const mag = Math.max(Math.abs(want), Math.abs(got));
  const e = mag === 0 ? minExp : Math.max(exponentOf(mag), minExp);
  return Math.abs(got - want) / 2 ** (e - mant);
}

/** Random values in [lo, hi), rounded to `dtype` (integers for integer dtypes, 0/1 for Bool). */
export function randomValues(rand: () => number, dtype: Dtype, n: number, lo = -10, hi = 10): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const x = lo + (hi - lo) * rand();
    if (dtype === DT.bool) out[i] = rand() < 0.5 ? 0 : 1;
    else if (dtype === DT.u8) out[i] = Math.floor(rand() * 256);
    else if (dtype === DT.i8 || dtype === DT.i16 || dtype === DT.i32 || dtype === DT.i64) out[i] = Math.round(x) + 0;
    else out[i] = roundTo(dtype, x);
  }
  return out;
}

/** Wraps an integer to a dtype's range (two's complement), like a C cast between integer types. */
export function wrapInt(dtype: Dtype, v: number | bigint): number {
  const b = typeof v === 'bigint' ? v : BigInt(Math.trunc(v));
  switch (dtype) {
    case DT.u8:
      return Number(BigInt.asUintN(8, b));
    case DT.i8:
      return Number(BigInt.asIntN(8, b));
    case DT.i16:
      return Number(BigInt.asIntN(16, b));
    case DT.i32:
      return Number(BigInt.asIntN(32, b));
    case DT.i64:
      return Number(BigInt.asIntN(64, b));
    case DT.bool:
      return b !== 0n ? 1 : 0;
    default:
      return Number(b);
  }
}
