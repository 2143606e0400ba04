/**
 * CPU kernels of the factory operators. `arange` and `linspace` reproduce PyTorch 1.13's CPU values bit for
 * bit: see Note [Vectorized ranges].
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { type DTypeArray, numberToBFloat16Bits, numberToFloat16Bits, typedArrayFor } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import {
  arangePlan,
  checkedConvert,
  eyeMeta,
  type FACTORY_OPS,
  factoryMeta,
  fullMeta,
  linspaceMeta,
} from '../ops/decl_factories.ts';
import { emptyCpu } from './iterator.ts';
import { contiguousAddress, hostBlock, kernels } from './boundary.ts';
import { checkStatus } from './runtime.ts';
import { scalarNumber } from '../tensor/float_scalar.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/**
 * Fills a contiguous CPU tensor with a value (already converted to the dtype: see `checkedConvert`).
 *
 * @example
 * ```ts
 * import { emptyCpu } from './iterator.ts';
 * import { fillCpu } from './factories.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * fillCpu(emptyCpu([3], float32), 1.5).dispose();
 * ```
 */
export function fillCpu(t: Tensor, value: number | boolean): Tensor {
  if (t.numel === 0) return t;
  const v = scalarNumber(value);
  const n = t.numel;
  const status = kernels().fill_contig(t.dtype.scalarType, contiguousAddress(t, 'fill_', n), v, n);
  checkStatus(status, 'fill_', t.dtype.scalarType);
  return t;
}

/**
 * Writes `values[i]` to element `offsets[i]` (in elements from the storage start) of a CPU tensor's storage,
 * or to its contiguous elements from `t.storageOffset` when `offsets` is omitted, converting as C++'s
 * `static_cast` does: integers truncate and wrap, float16/bfloat16 round through float32.
 *
 * @example
 * ```ts
 * import { emptyCpu } from './iterator.ts';
 * import { storeValues } from './factories.ts';
 * import { int32 } from '../tensor/dtype.ts';
 * const t = emptyCpu([2], int32);
 * storeValues(t, Float64Array.of(1.7, -2.5)); // [1, -2]
 * t.dispose();
 * ```
 */
export function storeValues(t: Tensor, values: ArrayLike<number>, offsets?: ArrayLike<number>): void {
  const n = values.length;
  if (n === 0) return;
  const bytes = hostBlock(t, 'fill_');
  const buffer = bytes.buffer, base = bytes.byteOffset;
  const capacity = Math.floor(bytes.byteLength / t.dtype.itemSize);
  const start = t.storageOffset;
  const at = offsets === undefined ? (i: number) => start + i : (i: number) => offsets[i];
  switch (t.dtype.name) {
    case 'int64': {
      // Two 32-bit halves: BigInt conversions per element would be far slower.
      const words = new Int32Array(buffer, base, capacity * 2);
      for (let i = 0; i < n; i++) {
        const v = Math.trunc(values[i]), hi = Math.floor(v / 4294967296), o = 2 * at(i);
        words[o] = v - hi * 4294967296;
        words[o + 1] = hi;
      }
      return;
    }
    case 'float16':
    case 'bfloat16': {
      const halves = new Uint16Array(buffer, base, capacity);
      const convert = t.dtype.name === 'float16' ? numberToFloat16Bits : numberToBFloat16Bits;
      for (let i = 0; i < n; i++) halves[at(i)] = convert(Math.fround(values[i]));
      return;
    }
    case 'bool': {
      const flags = new Uint8Array(buffer, base, capacity);
      for (let i = 0; i < n; i++) flags[at(i)] = values[i] !== 0 ? 1 : 0;
      return;
    }
    default: {
      const out = typedArrayFor(t.dtype, buffer, base, capacity) as Exclude<DTypeArray, BigInt64Array>;
      // TypedArray stores truncate and wrap integers as static_cast does (in-range values) and round floats.
      if (offsets === undefined) out.set(values, start);
      else for (let i = 0; i < n; i++) out[offsets[i]] = values[i];
    }
  }
}

// Note [Vectorized ranges]
// PyTorch's CPU arange and linspace run `cpu_serial_kernel_vec`: blocks of two AVX2 vectors, each vector made
// by `Vectorized<T>::arange(base, step)` = `base + k * step` from a base computed for its first index, and a
// scalar loop for the tail. Rounding therefore depends on the block structure (and on GCC contracting
// `a + b * c` into fused multiply-adds), so the same values need the same structure: VECTOR_LANES holds the
// AVX2 lane counts, `fma`/`fmaf` the fused operations (which ones GCC fused was found by matching the values of
// PyTorch 1.13's x86-64 build on hundreds of random ranges per dtype). One parallel chunk is assumed: for more than 32768
// elements PyTorch's values also depend on its thread count (they equal `torch.set_num_threads(1)`).

/** AVX2 lanes per dtype (`Vectorized<T>::size()`). */
const VECTOR_LANES: { readonly [name: string]: number } = {
  float64: 4,
  int64: 4,
  float32: 8,
  int32: 8,
  float16: 16,
  bfloat16: 16,
  int16: 16,
  int8: 32,
  uint8: 32,
};

const SPLIT = 134217729; // 2^27 + 1, Veltkamp's splitter

/**
 * `fma(a, b, c)` in double precision (a*b + c with one rounding), from error-free transformations.
 *
 * @example
 * ```ts
 * import { fma } from './factories.ts';
 * fma(0.1, 10, -1); // 5.551115123125783e-17, where 0.1 * 10 - 1 gives 0
 * ```
 */
export function fma(a: number, b: number, c: number): number {
  const p = a * b;
  if (!Number.isFinite(p) || !Number.isFinite(c)) return p + c;
  let t = SPLIT * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b), bl = b - bh;
  const e = ah * bh - p + ah * bl + al * bh + al * bl;
  const s = p + c, v = s - p;
  const err = p - (s - v) + (c - v);
  return s + (err + e);
}

/**
 * `fmaf(a, b, c)` for float32 operands, correctly rounded to float32. The product of two floats is exact in
 * a double, so only the sum can round twice: that happens only when it lands on a float midpoint.
 *
 * @example
 * ```ts
 * import { fmaf } from './factories.ts';
 * fmaf(Math.fround(0.1), 3, 1); // 1.2999999523162842
 * ```
 */
export function fmaf(a: number, b: number, c: number): number {
  const p = a * b, s = p + c;
  const r = Math.fround(s);
  if (r === s) return r;
  // `s` is a float midpoint exactly when `2s - r` (computed exactly then) is the float on its other side.
  const other = 2 * s - r;
  if (Math.fround(other) !== other || !Number.isFinite(s)) return r;
  const v = s - p, err = p - (s - v) + (c - v);
  if (err === 0) return r; // a true tie: fround already rounded it to even
  return (err > 0) === (other > r) ? other : r;
}

/**
 * The value a store of `x` into a floating dtype keeps: float32 rounding, float16/bfloat16 rounding through
 * float32 (as C++'s conversions from double go), float64 unchanged.
 *
 * @example
 * ```ts
 * import { dtypeRounder } from './factories.ts';
 * import { float16 } from '../tensor/dtype.ts';
 * dtypeRounder(float16)(0.1); // 0.0999755859375
 * ```
 */
export function dtypeRounder(dtype: DType): (x: number) => number {
  switch (dtype.name) {
    case 'float16':
      return (x) => halfValue(numberToFloat16Bits(Math.fround(x)));
    case 'bfloat16':
      return (x) => bfloatValue(numberToBFloat16Bits(Math.fround(x)));
    case 'float32':
      return Math.fround;
    default:
      return (x) => x;
  }
}

function halfValue(bits: number): number {
  const e = (bits >> 10) & 0x1f, m = bits & 0x3ff, s = bits & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m === 0 ? s * Infinity : NaN;
  return s * (1024 + m) * 2 ** (e - 25);
}

const BFLOAT_SCRATCH = new Float32Array(1);
const BFLOAT_BITS = new Int32Array(BFLOAT_SCRATCH.buffer);

function bfloatValue(bits: number): number {
  BFLOAT_BITS[0] = bits << 16;
  return BFLOAT_SCRATCH[0];
}

/**
 * The values of PyTorch's CPU `arange` for `n` elements from `start` by `step` (both already in the
 * accumulate type), as doubles that a store converts exactly as PyTorch's kernel does.
 */
function arangeValues(n: number, dtype: DType, start: number, step: number): Float64Array {
  const out = new Float64Array(n);
  if (!dtype.isFloatingPoint) {
    // Integer accumulation (int64) is exact; the store wraps to the dtype.
    for (let i = 0; i < n; i++) out[i] = start + step * i;
    return out;
  }
  const lanes = VECTOR_LANES[dtype.name];
  const half = dtype.itemSize === 2;
  // float and double accumulate in double; float16/bfloat16 in float (the index converts to float too).
  const mulAdd = half ? fmaf : fma;
  const index = half ? Math.fround : (x: number) => x;
  const store = dtypeRounder(dtype);
  let i = 0;
  for (; i <= n - 2 * lanes; i += 2 * lanes) {
    for (let v = i; v < i + 2 * lanes; v += lanes) {
      const base = store(mulAdd(step, index(v), start));
      for (let k = 0; k < lanes; k++) out[v + k] = mulAdd(k, step, base);
    }
  }
  for (; i < n; i++) out[i] = mulAdd(step, index(i), start);
  return out;
}

/** The values of PyTorch's CPU `linspace` (see Note [Vectorized ranges]; the second half counts from `end`). */
function linspaceValues(steps: number, dtype: DType, startValue: number | boolean, endValue: number | boolean) {
  const out = new Float64Array(steps);
  const start = checkedConvert(startValue, dtype), end = checkedConvert(endValue, dtype);
  if (steps === 1) {
    out[0] = start;
    return out;
  }
  const halfway = Math.floor(steps / 2);
  const lanes = VECTOR_LANES[dtype.name];
  let value: (idx: number) => number; // the scalar loop
  let lane: (base: number, k: number) => number; // element k of a vector starting at `base`
  let cast: (x: number) => number; // scalar_t(x)
  if (dtype.itemSize === 2 && dtype.isFloatingPoint) {
    // Half arithmetic: every operation rounds to the half type, integers convert to it first.
    const r = dtypeRounder(dtype);
    const [s, e] = [r(start), r(end)];
    const step = r(r(e - s) / r(steps - 1));
    value = (idx) => idx < halfway ? r(s + r(step * r(idx))) : r(e - r(step * r(steps - idx - 1)));
    lane = (base, k) => r(base + r(r(k) * step));
    cast = r;
  } else if (dtype.isFloatingPoint) {
    const single = dtype.name === 'float32';
    const f = single ? Math.fround : (x: number) => x;
    const mulAdd = single ? fmaf : fma;
    // float arithmetic converts the int64 counts to float first.
    const step = f(f(end - start) / f(steps - 1));
    value = (idx) => idx < halfway ? mulAdd(step, f(idx), start) : mulAdd(-step, f(steps - idx - 1), end);
    lane = (base, k) => f(base + f(k * step));
    cast = f;
  } else {
    // Integers step in double; every result truncates (the store wraps it to the dtype).
    const step = (end - start) / (steps - 1);
    value = (idx) => Math.trunc(idx < halfway ? fma(step, idx, start) : fma(-step, steps - idx - 1, end));
    lane = (base, k) => Math.trunc(base + k * step);
    cast = (x) => wrapInteger(Math.trunc(x), dtype);
  }
  let i = 0;
  for (; i <= steps - 2 * lanes; i += 2 * lanes) {
    for (let v = i; v < i + 2 * lanes; v += lanes) {
      const base = cast(value(v));
      for (let k = 0; k < lanes; k++) out[v + k] = lane(base, k);
    }
  }
  for (; i < steps; i++) out[i] = value(i);
  return out;
}

function wrapInteger(v: number, dtype: DType): number {
  switch (dtype.name) {
    case 'uint8':
      return v & 0xff;
    case 'int8':
      return (v << 24) >> 24;
    case 'int16':
      return (v << 16) >> 16;
    case 'int32':
      return v | 0;
    default:
      return v;
  }
}

type FactoryArgs = [readonly number[], DType | null, unknown, Device | null, unknown];
type RangeRest = [DType | null, string | null, Device | null, boolean | null];

const filled = (value: number) =>
  ((_hi: number, _lo: number, ...[size, dtype, layout]: FactoryArgs) => {
    const meta = factoryMeta(size, dtype, layout as string | null, null);
    return fillCpu(emptyCpu(meta.shape, meta.dtype), value);
  }) as Kernel;

function arangeCpu(start: number, end: number, step: number, dtype: DType | null, layout: string | null): Tensor {
  const plan = arangePlan(start, end, step, dtype, layout);
  const out = emptyCpu(plan.shape, plan.dtype);
  storeValues(out, arangeValues(plan.shape[0], plan.dtype, plan.start, plan.step));
  return out;
}

function eyeCpu(n: number, m: number | undefined, dtype: DType | null, layout: string | null): Tensor {
  const meta = eyeMeta(n, m, dtype, layout);
  const out = fillCpu(emptyCpu(meta.shape, meta.dtype), 0);
  const [rows, cols] = meta.shape, diagonal = Math.min(rows, cols);
  const offsets = Array.from({ length: diagonal }, (_, i) => out.storageOffset + i * (cols + 1));
  storeValues(out, new Float64Array(diagonal).fill(1), offsets);
  return out;
}

/**
 * CPU kernels of the factory operators (registered by register.ts).
 *
 * @example
 * ```ts
 * import { CPU_FACTORY_KERNELS } from './factories.ts';
 * typeof CPU_FACTORY_KERNELS.arange; // 'function'
 * ```
 */
export const CPU_FACTORY_KERNELS: { readonly [K in keyof typeof FACTORY_OPS]: Kernel } = {
  'empty.memory_format': ((_hi: number, _lo: number, ...[size, dtype, layout]: FactoryArgs) => {
    const meta = factoryMeta(size, dtype, layout as null, null);
    return emptyCpu(meta.shape, meta.dtype);
  }) as Kernel,
  'zeros': filled(0),
  'ones': filled(1),
  'full':
    ((_hi: number, _lo: number, size: readonly number[], fill: number | boolean, dtype: DType | null, layout: null) => {
      const meta = fullMeta(size, fill, dtype, layout);
      return fillCpu(emptyCpu(meta.shape, meta.dtype), checkedConvert(fill, meta.dtype));
    }) as Kernel,
  'arange':
    ((_hi: number, _lo: number, end: number, ...[dtype, layout]: RangeRest) =>
      arangeCpu(0, end, 1, dtype, layout)) as Kernel,
  'arange.start':
    ((_hi: number, _lo: number, start: number, end: number, ...[dtype, layout]: RangeRest) =>
      arangeCpu(start, end, 1, dtype, layout)) as Kernel,
  'arange.start_step':
    ((_hi: number, _lo: number, start: number, end: number, step: number, ...[dtype, layout]: RangeRest) =>
      arangeCpu(start, end, step, dtype, layout)) as Kernel,
  'linspace': ((_hi: number, _lo: number, start: number, end: number, steps: number, ...[dtype, layout]: RangeRest) => {
    const meta = linspaceMeta(start, end, steps, dtype, layout);
    const out = emptyCpu(meta.shape, meta.dtype);
    if (steps > 0) storeValues(out, linspaceValues(steps, meta.dtype, start, end));
    return out;
  }) as Kernel,
  'eye':
    ((_hi: number, _lo: number, n: number, ...[dtype, layout]: RangeRest) =>
      eyeCpu(n, undefined, dtype, layout)) as Kernel,
  'eye.m':
    ((_hi: number, _lo: number, n: number, m: number, ...[dtype, layout]: RangeRest) =>
      eyeCpu(n, m, dtype, layout)) as Kernel,
};
