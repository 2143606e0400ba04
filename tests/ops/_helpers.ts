// Shared helpers for operator tests: seeded random data, strided views built directly on a storage (so tests
// do not depend on the view operators they may be testing), and comparison against float64 references.
import assert from 'node:assert/strict';
import { type DType, Tensor, tensor, toDType } from '../../mod.ts';

/** A seeded PRNG (mulberry32): deterministic test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random values for a dtype: floats in [-3, 3), integers in a small signed range, booleans. */
export function randomValues(n: number, dtypeLike: DType | string, next: () => number): number[] {
  const dtype = toDType(dtypeLike as DType);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = next();
    if (dtype.name === 'bool') out.push(r < 0.5 ? 0 : 1);
    else if (dtype.name === 'uint8') out.push(Math.floor(r * 200));
    else if (!dtype.isFloatingPoint) out.push(Math.floor(r * 200) - 100);
    else out.push(r * 6 - 3);
  }
  return out;
}

/** A contiguous random tensor. */
export function randomTensor(shape: number[], dtypeLike: DType | string, next: () => number): Tensor {
  const dtype = toDType(dtypeLike as DType);
  const n = shape.reduce((a, b) => a * b, 1);
  const values = randomValues(n, dtype, next);
  const flat = tensor(dtype.name === 'bool' ? values.map((v) => v !== 0) : values, { dtype });
  return restride(flat, shape, contiguous(shape), 0);
}

function contiguous(shape: number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= Math.max(shape[i], 1);
  }
  return s;
}

/** A view of `base`'s storage with the given sizes, strides and offset (shares storage, like as_strided). */
export function restride(base: Tensor, shape: number[], strides: number[], offset: number): Tensor {
  base.storage.retain();
  const view = new Tensor({
    storage: base.storage,
    shape,
    strides,
    storageOffset: offset,
    dtype: base.dtype,
    version: base.versionCounter,
  });
  base.dispose();
  return view;
}

/**
 * A non-contiguous random tensor of `shape`: its data is laid out transposed (last two dims swapped), or with
 * a step of 2 in the last dim for 1-d shapes.
 */
export function nonContiguousTensor(shape: number[], dtypeLike: DType | string, next: () => number): Tensor {
  if (shape.length >= 2) {
    const swapped = [...shape];
    const n = shape.length;
    [swapped[n - 1], swapped[n - 2]] = [swapped[n - 2], swapped[n - 1]];
    const base = randomTensor(swapped, dtypeLike, next);
    const strides = [...base.stride()];
    [strides[n - 1], strides[n - 2]] = [strides[n - 2], strides[n - 1]];
    return restride(base, shape, strides, 0);
  }
  const len = shape[0] ?? 1;
  const base = randomTensor([2 * len + 1], dtypeLike, next);
  return restride(base, shape, shape.length === 0 ? [] : [2], 1);
}

/** The tensor's values as float64 numbers in row-major order (booleans as 0/1). */
export function values(t: Tensor): number[] {
  return t.toArray().map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
}

/** Tolerances per dtype for comparing with a float64 reference. */
export function tolerance(dtypeLike: DType | string): { rtol: number; atol: number } {
  const d = toDType(dtypeLike as DType);
  switch (d.name) {
    case 'float16':
      return { rtol: 1e-3, atol: 1e-3 };
    case 'bfloat16':
      return { rtol: 1e-2, atol: 1e-2 };
    case 'float32':
      return { rtol: 1e-5, atol: 1e-6 };
    case 'float64':
      return { rtol: 1e-12, atol: 1e-12 };
    default:
      return { rtol: 0, atol: 0 };
  }
}

/** Asserts shape and elementwise closeness to expected values (NaN equals NaN). */
export function assertClose(
  actual: Tensor,
  expected: number[],
  shape: readonly number[],
  tol = tolerance(actual.dtype),
  what = '',
): void {
  assert.deepEqual([...actual.shape], [...shape], `${what} shape`);
  const got = values(actual);
  assert.equal(got.length, expected.length, `${what} numel`);
  for (let i = 0; i < got.length; i++) {
    const a = got[i], e = expected[i];
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;
    const ok = Math.abs(a - e) <= tol.atol + tol.rtol * Math.abs(e);
    if (!ok) assert.fail(`${what} element ${i}: got ${a}, expected ${e} (rtol ${tol.rtol}, atol ${tol.atol})`);
  }
}

/** The float64 value a dtype would store for `x` (rounding like a cast). */
export function roundTo(x: number, dtypeLike: DType | string): number {
  const d = toDType(dtypeLike as DType);
  switch (d.name) {
    case 'float32':
      return Math.fround(x);
    case 'float64':
      return x;
    case 'float16':
    case 'bfloat16': {
      const t = tensor([x], { dtype: d });
      const v = values(t)[0];
      t.dispose();
      return v;
    }
    case 'bool':
      return x !== 0 ? 1 : 0;
    default:
      return Math.trunc(x);
  }
}

/** All dtypes, for sweeping. */
export const ALL_DTYPES = [
  'bool',
  'uint8',
  'int8',
  'int16',
  'int32',
  'int64',
  'float16',
  'bfloat16',
  'float32',
  'float64',
] as const;
/** Floating dtypes. */
export const FLOAT_DTYPES = ['float16', 'bfloat16', 'float32', 'float64'] as const;
