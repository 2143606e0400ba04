// A float64 reference model of strided tensors for the fuzz suite: a reference storage (a Float64Array) shared by
// reference views exactly as tensors share storages, so in-place writes through views are modelled too. Values
// are kept as the dtype holds them (rounded to float32, wrapped to int32, ...), computed in float64.
import { type DType, float64 } from '../../mod.ts';

/** Values of one storage. */
export class RefStorage {
  readonly data: Float64Array;
  constructor(data: Float64Array) {
    this.data = data;
  }
}

/** A strided view of a reference storage. */
export interface Ref {
  readonly storage: RefStorage;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly dtype: DType;
}

export const numelOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = s;
    s *= Math.max(shape[d], 1);
  }
  return strides;
}

/** Element offsets of a view in row-major order of its shape. */
export function offsets(r: Ref): number[] {
  const n = numelOf(r.shape), nd = r.shape.length;
  const out = new Array<number>(n);
  const index = new Array<number>(nd).fill(0);
  let o = r.offset;
  for (let i = 0; i < n; i++) {
    out[i] = o;
    for (let d = nd - 1; d >= 0; d--) {
      if (++index[d] < r.shape[d]) {
        o += r.strides[d];
        break;
      }
      o -= r.strides[d] * (r.shape[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

/** The values of a view in row-major order. */
export const refValues = (r: Ref): number[] => offsets(r).map((o) => r.storage.data[o]);

/** C's float to int64/int32 conversion as x86-64 performs it: the minimum for NaN and out-of-range values. */
const toInt64 = (v: number) => (Number.isNaN(v) || v < -(2 ** 63) || v >= 2 ** 63 ? -(2 ** 63) : Math.trunc(v) + 0);
const toInt32 = (v: number) => (Number.isNaN(v) || v < -(2 ** 31) || v >= 2 ** 31 ? -(2 ** 31) : Math.trunc(v) + 0);

/** How a dtype stores a float64 value (PyTorch's conversions for the dtypes the fuzz uses). */
export function storeAs(dtype: DType, v: number): number {
  switch (dtype.name) {
    case 'float32':
      return Math.fround(v);
    case 'float64':
      return v;
    case 'int32':
      return toInt32(v);
    case 'int64':
      return toInt64(v);
    case 'uint8': // through int64, then wrapped
      return Number(BigInt.asUintN(8, BigInt(toInt64(v))));
    case 'bool':
      return v !== 0 ? 1 : 0;
    default:
      throw new Error(`the fuzz reference does not model ${dtype.name}`);
  }
}

/** A new contiguous reference tensor holding `values` stored as `dtype`. */
export function fresh(shape: readonly number[], dtype: DType, values: readonly number[]): Ref {
  const data = Float64Array.from(values, (v) => storeAs(dtype, v));
  return { storage: new RefStorage(data), shape: [...shape], strides: contiguousStrides(shape), offset: 0, dtype };
}

/** Writes `values` (row-major, float64) into a view, as the view's dtype stores them. */
export function writeInto(r: Ref, values: readonly number[]): void {
  offsets(r).forEach((o, i) => (r.storage.data[o] = storeAs(r.dtype, values[i])));
}

/** PyTorch's broadcast shape, or undefined when the shapes do not broadcast. */
export function broadcast(a: readonly number[], b: readonly number[]): number[] | undefined {
  const n = Math.max(a.length, b.length), out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1, y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) return undefined;
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** The view of `r` expanded to `shape` (stride 0 on broadcast dims). */
export function expandRef(r: Ref, shape: readonly number[]): Ref {
  const lead = shape.length - r.shape.length;
  const strides = shape.map((s, d) => {
    if (d < lead) return 0;
    return r.shape[d - lead] === 1 && s !== 1 ? 0 : r.strides[d - lead];
  });
  return { ...r, shape: [...shape], strides };
}

/** Whether two views of one storage could touch a common element (conservative: their spans meet). */
export function mayOverlap(a: Ref, b: Ref): boolean {
  if (a.storage !== b.storage || numelOf(a.shape) === 0 || numelOf(b.shape) === 0) return false;
  const span = (r: Ref) => {
    let lo = r.offset, hi = r.offset;
    r.shape.forEach((s, d) => (r.strides[d] > 0 ? (hi += (s - 1) * r.strides[d]) : (lo += (s - 1) * r.strides[d])));
    return [lo, hi];
  };
  const [alo, ahi] = span(a), [blo, bhi] = span(b);
  return alo <= bhi && blo <= ahi;
}

/** Whether a view reaches some element of its storage more than once (overlapping strides, not only stride 0). */
export function selfOverlapping(r: Ref): boolean {
  const at = offsets(r);
  return new Set(at).size < at.length;
}

/** Whether writing to a view writes one element twice (a broadcast dim; an empty view never does). */
export const hasInternalOverlap = (r: Ref) =>
  numelOf(r.shape) > 0 && r.shape.some((s, d) => s > 1 && r.strides[d] === 0);

/** Relative/absolute tolerance for comparing a dtype's result with a float64 reference. */
export function tolerance(dtype: DType, terms = 1): number {
  if (dtype === float64) return 1e-12 * terms;
  if (dtype.name === 'float32') return 2e-6 * terms;
  return 0;
}

/** Whether `actual` matches `expected` within `tol` (relative to the magnitude), NaN matching NaN. */
export function close(actual: number, expected: number, tol: number, scale = Math.abs(expected)): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= tol * Math.max(1, scale);
}
