// Binary elementwise operators (arithmetic, division modes, remainder/fmod, pow, minimum/maximum, atan2, bitwise,
// logical and comparison ops, where and clamp) against float64 references on seeded random data: every dtype each
// CPU kernel takes in PyTorch 1.13, odd shapes, broadcasting with size-0/size-1 dims and 0-d tensors,
// non-contiguous and expanded views, the same tensor as both operands, scalar overloads and in-place variants.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  atan2,
  bfloat16BitsToNumber,
  bitwiseAnd,
  bitwiseOr,
  bitwiseXor,
  clamp,
  clampMax,
  clampMin,
  div,
  type DType,
  eq,
  float16BitsToNumber,
  fmod,
  full,
  ge,
  gt,
  le,
  logicalAnd,
  logicalOr,
  logicalXor,
  lt,
  maximum,
  memoryStats,
  minimum,
  mul,
  ne,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  pow,
  promoteTypes,
  remainder,
  scope,
  sub,
  Tensor,
  tensor,
  toDType,
  where,
} from '../../mod.ts';
import { ALL_DTYPES, restride, rng, values } from './_helpers.ts';

type Operand = Tensor | number | boolean;

function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

// ---- references --------------------------------------------------------------------------------------------------

const FLOATS = new Set(['float16', 'bfloat16', 'float32', 'float64']);
const isFloat = (d: string) => FLOATS.has(d);
const INT_BITS: Record<string, number> = { uint8: 8, int8: 8, int16: 16, int32: 32, int64: 64 };

/** The value `dtype` stores for `x`: casts truncate and wrap, float16/bfloat16 round through float32. */
function castRef(x: number, dtype: string): number {
  switch (dtype) {
    case 'bool':
      return x !== 0 ? 1 : 0;
    case 'float64':
      return x;
    case 'float32':
      return Math.fround(x);
    case 'float16':
      return float16BitsToNumber(numberToFloat16Bits(Math.fround(x)));
    case 'bfloat16':
      return bfloat16BitsToNumber(numberToBFloat16Bits(Math.fround(x)));
    case 'int64':
      return Number(BigInt.asIntN(64, BigInt(Math.trunc(x))));
    case 'uint8':
      return Number(BigInt.asUintN(8, BigInt(Math.trunc(x))));
    default:
      return Number(BigInt.asIntN(INT_BITS[dtype], BigInt(Math.trunc(x))));
  }
}

/** float32 for float16/bfloat16 (PyTorch's opmath type), else the dtype itself. */
const opmath = (dtype: string) => (dtype === 'float16' || dtype === 'bfloat16' ? 'float32' : dtype);

/** c10::div_floor_floating, each operation rounded to `c` (the kernel's compute type). */
function divFloorFloat(a: number, b: number, c: string): number {
  const r = (x: number) => castRef(x, c);
  if (b === 0) return a / b;
  const mod = a % b;
  let q = r(r(a - mod) / b);
  if (mod !== 0 && (b < 0) !== (mod < 0)) q = r(q - 1);
  if (q === 0) return Math.sign(a / b) < 0 || Object.is(a / b, -0) ? -0 : 0;
  let fl = Math.floor(q);
  if (r(q - fl) > 0.5) fl += 1;
  return fl;
}

function ipow(a: number, b: number, dtype: string): number {
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  return castRef(Number(BigInt.asIntN(64, BigInt(a) ** BigInt(b))), dtype);
}

const bigOp = (a: number, b: number, f: (x: bigint, y: bigint) => bigint) => Number(f(BigInt(a), BigInt(b)));

/** A binary operator, its float64 reference and how it types its result. */
interface BinaryOp {
  readonly name: string;
  readonly fn: (a: Tensor, b: Operand) => Tensor;
  /** The result from compute-dtype inputs, before the cast to the output dtype. */
  readonly ref: (a: number, b: number, compute: string) => number;
  readonly kind: 'arith' | 'float' | 'compare';
  /** Compute dtypes PyTorch 1.13's CPU kernel takes. */
  readonly dtypes: readonly string[];
  /** Integer divisors must be nonzero; exponents small and non-negative. */
  readonly divisor?: boolean;
  readonly exponent?: boolean;
  /** Allowed error in units in the last place of the output dtype (0: exact). */
  readonly ulp?: number;
}

const ALL = ALL_DTYPES as readonly string[];
const NO_BOOL = ALL.filter((d) => d !== 'bool');
const INTEGRAL_AND_BOOL = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64'];
const nan = (a: number, b: number) => Number.isNaN(a) || Number.isNaN(b);

const BINARY_OPS: readonly BinaryOp[] = [
  { name: 'add', fn: (a, b) => add(a, b), ref: (a, b) => a + b, kind: 'arith', dtypes: ALL },
  { name: 'sub', fn: (a, b) => sub(a, b), ref: (a, b) => a - b, kind: 'arith', dtypes: NO_BOOL },
  { name: 'mul', fn: (a, b) => mul(a, b), ref: (a, b) => a * b, kind: 'arith', dtypes: ALL },
  { name: 'div', fn: (a, b) => div(a, b), ref: (a, b) => a / b, kind: 'float', dtypes: ALL },
  {
    name: 'div trunc',
    fn: (a, b) => div(a, b, { roundingMode: 'trunc' }),
    ref: (a, b, c) => (isFloat(c) ? Math.trunc(castRef(a / b, c)) : Math.trunc(a / b)),
    kind: 'arith',
    dtypes: NO_BOOL,
    divisor: true,
  },
  {
    name: 'div floor',
    fn: (a, b) => div(a, b, { roundingMode: 'floor' }),
    ref: (a, b, c) => (isFloat(c) ? divFloorFloat(a, b, opmath(c)) : Math.floor(a / b)),
    kind: 'arith',
    dtypes: NO_BOOL,
    divisor: true,
  },
  {
    name: 'remainder',
    fn: (a, b) => remainder(a, b),
    ref: (a, b, c) => {
      const mod = a % b;
      return mod !== 0 && (b < 0) !== (mod < 0) ? castRef(mod + b, opmath(c)) : mod;
    },
    kind: 'arith',
    dtypes: NO_BOOL,
    divisor: true,
  },
  { name: 'fmod', fn: (a, b) => fmod(a, b), ref: (a, b) => a % b, kind: 'arith', dtypes: NO_BOOL, divisor: true },
  {
    name: 'pow',
    fn: (a, b) => pow(a, b),
    ref: (a, b, c) => (isFloat(c) ? a ** b : ipow(a, b, c)),
    kind: 'arith',
    dtypes: NO_BOOL,
    exponent: true,
    ulp: 1,
  },
  {
    name: 'minimum',
    fn: (a, b) => minimum(a, b as Tensor),
    ref: (a, b) => (nan(a, b) ? NaN : Math.min(a, b)),
    kind: 'arith',
    dtypes: ALL,
  },
  {
    name: 'maximum',
    fn: (a, b) => maximum(a, b as Tensor),
    ref: (a, b) => (nan(a, b) ? NaN : Math.max(a, b)),
    kind: 'arith',
    dtypes: ALL,
  },
  {
    name: 'atan2',
    fn: (a, b) => atan2(a, b as Tensor),
    ref: Math.atan2,
    kind: 'float',
    dtypes: ALL.filter((d) => d !== 'float16'),
    ulp: 2,
  },
  {
    name: 'bitwise_and',
    fn: (a, b) => bitwiseAnd(a, b as Tensor),
    ref: (a, b) => bigOp(a, b, (x, y) => x & y),
    kind: 'arith',
    dtypes: INTEGRAL_AND_BOOL,
  },
  {
    name: 'bitwise_or',
    fn: (a, b) => bitwiseOr(a, b as Tensor),
    ref: (a, b) => bigOp(a, b, (x, y) => x | y),
    kind: 'arith',
    dtypes: INTEGRAL_AND_BOOL,
  },
  {
    name: 'bitwise_xor',
    fn: (a, b) => bitwiseXor(a, b as Tensor),
    ref: (a, b) => bigOp(a, b, (x, y) => x ^ y),
    kind: 'arith',
    dtypes: INTEGRAL_AND_BOOL,
  },
  {
    name: 'logical_and',
    fn: (a, b) => logicalAnd(a, b as Tensor),
    ref: (a, b) => +(a !== 0 && b !== 0),
    kind: 'compare',
    dtypes: ALL,
  },
  {
    name: 'logical_or',
    fn: (a, b) => logicalOr(a, b as Tensor),
    ref: (a, b) => +(a !== 0 || b !== 0),
    kind: 'compare',
    dtypes: ALL,
  },
  {
    name: 'logical_xor',
    fn: (a, b) => logicalXor(a, b as Tensor),
    ref: (a, b) => +((a !== 0) !== (b !== 0)),
    kind: 'compare',
    dtypes: ALL,
  },
  { name: 'eq', fn: (a, b) => eq(a, b), ref: (a, b) => +(a === b), kind: 'compare', dtypes: ALL },
  { name: 'ne', fn: (a, b) => ne(a, b), ref: (a, b) => +(a !== b), kind: 'compare', dtypes: ALL },
  { name: 'lt', fn: (a, b) => lt(a, b), ref: (a, b) => +(a < b), kind: 'compare', dtypes: ALL },
  { name: 'le', fn: (a, b) => le(a, b), ref: (a, b) => +(a <= b), kind: 'compare', dtypes: ALL },
  { name: 'gt', fn: (a, b) => gt(a, b), ref: (a, b) => +(a > b), kind: 'compare', dtypes: ALL },
  { name: 'ge', fn: (a, b) => ge(a, b), ref: (a, b) => +(a >= b), kind: 'compare', dtypes: ALL },
];

const outDtypeOf = (op: BinaryOp, compute: string) =>
  op.kind === 'compare' ? 'bool' : op.kind === 'float' && !isFloat(compute) ? 'float32' : compute;

// ---- data --------------------------------------------------------------------------------------------------------

interface Options {
  readonly divisor?: boolean;
  readonly exponent?: boolean;
}

/** Random values: floats in [-4, 4) with some NaN, ±inf, ±0 and integers; integers nonzero for divisors. */
function randomData(n: number, dtype: string, next: () => number, opts: Options = {}): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = next();
    let v: number;
    if (dtype === 'bool') v = r < 0.5 ? 0 : 1;
    else if (!isFloat(dtype)) {
      if (opts.exponent) v = Math.floor(r * 6);
      else v = dtype === 'uint8' ? Math.floor(r * 256) : Math.floor(r * 256) - 128;
      if (opts.divisor && v === 0) v = 3;
    } else if (r < 0.06) v = [NaN, Infinity, -Infinity, 0, -0][Math.floor(next() * 5)];
    else if (r < 0.15) v = Math.round(next() * 8 - 4);
    else v = next() * 8 - 4;
    out.push(v);
  }
  return out;
}

const numelOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  for (let i = shape.length - 1, acc = 1; i >= 0; i--) {
    s[i] = acc;
    acc *= Math.max(shape[i], 1);
  }
  return s;
}

function make(shape: number[], dtype: string, next: () => number, opts: Options = {}): Tensor {
  const v = randomData(numelOf(shape), dtype, next, opts);
  const flat = tensor(dtype === 'bool' ? v.map((x) => x !== 0) : v, { dtype: dtype as 'float32' });
  return restride(flat, shape, contiguousStrides(shape), 0);
}

/** A view whose last two dims are transposed in memory (non-contiguous), or a step-2 view for 1-d. */
function strided(shape: number[], dtype: string, next: () => number, opts: Options = {}): Tensor {
  if (shape.length < 2) {
    const base = make([2 * (shape[0] ?? 1) + 1], dtype, next, opts);
    return restride(base, shape, shape.length === 0 ? [] : [2], 1);
  }
  const n = shape.length;
  const swapped = [...shape];
  [swapped[n - 1], swapped[n - 2]] = [swapped[n - 2], swapped[n - 1]];
  const base = make(swapped, dtype, next, opts);
  const strides = [...base.stride()];
  [strides[n - 1], strides[n - 2]] = [strides[n - 2], strides[n - 1]];
  return restride(base, shape, strides, 0);
}

/** `base` ([n]) read as `shape` ([..., n]) with stride 0 in the leading dims (an expanded view). */
function expanded(shape: number[], dtype: string, next: () => number, opts: Options = {}): Tensor {
  const base = make([shape[shape.length - 1]], dtype, next, opts);
  return restride(base, shape, shape.map((_, i) => (i === shape.length - 1 ? 1 : 0)), 0);
}

/** A view of `t`'s storage sharing its version counter (`t` stays alive). */
function viewOf(t: Tensor, shape: number[], strides: number[], offset: number): Tensor {
  t.storage.retain();
  return new Tensor({
    storage: t.storage,
    shape,
    strides,
    storageOffset: offset,
    dtype: t.dtype,
    version: t.versionCounter,
  });
}

/** The broadcast shape of two shapes (the test's own, independent of the library's). */
function broadcast(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, i) => {
    const x = a[a.length - n + i] ?? 1, y = b[b.length - n + i] ?? 1;
    return x === 1 ? y : x;
  });
}

/** `t`'s values read at every index of `shape` (broadcasting). */
function valuesAt(t: Tensor, shape: readonly number[]): number[] {
  const v = values(t), ts = t.shape, n = numelOf(shape);
  const stride = contiguousStrides(ts);
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    let rest = i, offset = 0;
    for (let d = shape.length - 1; d >= 0; d--) {
      const idx = rest % shape[d];
      rest = Math.floor(rest / shape[d]);
      const td = d - (shape.length - ts.length);
      if (td >= 0 && ts[td] !== 1) offset += idx * stride[td];
    }
    out[i] = v[offset];
  }
  return out;
}

// ---- comparison --------------------------------------------------------------------------------------------------

function ulpOf(x: number, dtype: string): number {
  const [mant, emin] = dtype === 'float64'
    ? [52, -1022]
    : dtype === 'float32'
    ? [23, -126]
    : dtype === 'float16'
    ? [10, -14]
    : [7, -126];
  const e = x === 0 || !Number.isFinite(x) ? emin : Math.max(Math.floor(Math.log2(Math.abs(x))), emin);
  return 2 ** (e - mant);
}

/** Elementwise comparison: NaN matches NaN, infinities must match exactly, finite values within `ulp`. */
function assertValues(actual: Tensor, expected: number[], ulp: number, what: string): void {
  const got = values(actual);
  assert.equal(got.length, expected.length, `${what}: numel`);
  for (let i = 0; i < got.length; i++) {
    const g = got[i], e = expected[i];
    if (g === e || (Number.isNaN(g) && Number.isNaN(e))) continue;
    const ok = Number.isFinite(e) && Number.isFinite(g) && Math.abs(g - e) <= ulp * ulpOf(e, actual.dtype.name);
    if (!ok) assert.fail(`${what}: element ${i} is ${g}, expected ${e}`);
  }
}

/**
 * Runs `op` on `a` and `b` (tensor or scalar) and checks dtype, shape and values against the reference computed
 * in float64 from the inputs converted to the compute dtype, then cast to the output dtype.
 */
function check(op: BinaryOp, a: Tensor, b: Operand, compute: string, what: string): void {
  const out = op.fn(a, b);
  const outDtype = outDtypeOf(op, compute);
  const shape = typeof b === 'object' ? broadcast(a.shape, b.shape) : [...a.shape];
  assert.equal(out.dtype.name, outDtype, `${what}: dtype`);
  assert.deepEqual([...out.shape], shape, `${what}: shape`);
  // Inputs (a wrapped scalar too) are converted straight to the dtype the kernel computes in: for true
  // division of integers that is the default float dtype, so `uint8_tensor / -2` divides by -2.0.
  const opCompute = op.kind === 'float' ? outDtype : compute;
  const av = valuesAt(a, shape).map((x) => castRef(x, opCompute));
  const bv = typeof b === 'object' ? valuesAt(b, shape).map((x) => castRef(x, opCompute)) : null;
  const s = typeof b === 'object' ? 0 : castRef(typeof b === 'boolean' ? +b : b, opCompute);
  const expected = av.map((x, i) => castRef(op.ref(x, bv === null ? s : bv[i], opCompute), outDtype));
  const ulp = op.ulp === undefined || !isFloat(outDtype) ? 0 : outDtype === 'float64' ? op.ulp : op.ulp + 1;
  assertValues(out, expected, ulp, what);
}

// ---- tests -------------------------------------------------------------------------------------------------------

const LAYOUTS: ReadonlyArray<{
  name: string;
  make: (d: string, next: () => number, op: BinaryOp) => [Tensor, Tensor];
}> = [
  { name: 'odd contiguous', make: (d, n, op) => [make([3, 5], d, n), make([3, 5], d, n, op)] },
  { name: 'broadcast [4,1,3] x [5,1]', make: (d, n, op) => [make([4, 1, 3], d, n), make([5, 1], d, n, op)] },
  { name: 'transposed views', make: (d, n, op) => [strided([5, 4], d, n), strided([5, 4], d, n, op)] },
  { name: 'step-2 view x expanded', make: (d, n, op) => [strided([7], d, n), expanded([3, 7], d, n, op)] },
  { name: 'size-0 dim', make: (d, n, op) => [make([0, 3], d, n), make([3], d, n, op)] },
  { name: 'size-0 broadcast', make: (d, n, op) => [make([2, 0], d, n), make([2, 1], d, n, op)] },
  { name: '0-d x [2,3]', make: (d, n, op) => [make([], d, n), make([2, 3], d, n, op)] },
  { name: '0-d x 0-d', make: (d, n, op) => [make([], d, n), make([], d, n, op)] },
  { name: 'size-1 dims', make: (d, n, op) => [make([1, 7], d, n), make([1, 1], d, n, op)] },
];

describe('binary operators against float64 references', () => {
  for (const op of BINARY_OPS) {
    it(
      `${op.name} on every dtype its CPU kernel takes, in every layout`,
      scoped(() => {
        const next = rng(op.name.length * 7919 + op.name.charCodeAt(0));
        for (const dtype of op.dtypes) {
          for (const layout of LAYOUTS) {
            const [a, b] = layout.make(dtype, next, op);
            check(op, a, b, dtype, `${op.name} ${dtype} ${layout.name}`);
          }
          if (!op.divisor && !op.exponent) {
            const a = strided([6, 5], dtype, next);
            check(op, a, a, dtype, `${op.name} ${dtype} same tensor twice`);
            const sq = make([5, 5], dtype, next);
            check(op, sq, viewOf(sq, [5, 5], [1, 5], 0), dtype, `${op.name} ${dtype} a tensor and its transpose`);
          }
        }
      }),
    );
  }

  it(
    'scalar overloads convert the scalar to the compute dtype (int, float and bool scalars)',
    scoped(() => {
      const next = rng(11);
      const scalarOps = BINARY_OPS.filter((op) => ['add', 'sub', 'mul', 'div', 'eq', 'lt', 'ge'].includes(op.name));
      for (const op of scalarOps) {
        for (const dtype of op.dtypes) {
          for (const s of [3, -2, 2.75, 0.1]) {
            const compute = Number.isInteger(s) || isFloat(dtype) ? dtype : 'float32';
            const c = dtype === 'bool' && Number.isInteger(s) ? 'int64' : compute;
            check(op, strided([4, 3], dtype, next), s, c, `${op.name}(${dtype}, ${s})`);
          }
        }
      }
      // A bool scalar with a bool tensor stays bool; with anything else it takes the tensor's dtype.
      check(BINARY_OPS[0], make([5], 'bool', next), true, 'bool', 'add(bool, true)');
      check(BINARY_OPS[2], make([5], 'int16', next), true, 'int16', 'mul(int16, true)');
    }),
  );

  it(
    'remainder, fmod and the rounding modes with scalar divisors follow PyTorch 1.13 signs',
    scoped(() => {
      const x = tensor([-7, -3.5, -1, 0, 2, 5.5, 7]);
      assert.deepEqual(values(remainder(x, 3)), [2, 2.5, 2, 0, 2, 2.5, 1]);
      assert.deepEqual(values(remainder(x, -3)), [-1, -0.5, -1, 0, -1, -0.5, -2]);
      assert.deepEqual(values(fmod(x, 3)), [-1, -0.5, -1, 0, 2, 2.5, 1]);
      assert.deepEqual(values(fmod(x, -3)), [-1, -0.5, -1, 0, 2, 2.5, 1]);
      assert.deepEqual(values(div(x, 2, { roundingMode: 'trunc' })), [-3, -1, -0, 0, 1, 2, 3]);
      assert.deepEqual(values(div(x, 2, { roundingMode: 'floor' })), [-4, -2, -1, 0, 1, 2, 3]);
      assert.deepEqual(values(div(x, 2, { roundingMode: null })), [-3.5, -1.75, -0.5, 0, 1, 2.75, 3.5]);
      const i = tensor([-7, -3, 3, 7], { dtype: 'int32' });
      assert.deepEqual(values(remainder(i, 2)), [1, 1, 1, 1]);
      assert.deepEqual(values(remainder(i, -2)), [-1, -1, -1, -1]);
      assert.deepEqual(values(fmod(i, 2)), [-1, -1, 1, 1]);
      assert.deepEqual(values(div(i, 2, { roundingMode: 'floor' })), [-4, -2, 1, 3]);
      assert.deepEqual(values(div(i, -2, { roundingMode: 'trunc' })), [3, 1, -1, -3]);
      // torch.div(torch.tensor([-128], dtype=torch.int8), -1, rounding_mode='trunc') wraps to -128.
      assert.deepEqual(values(div(tensor([-128], { dtype: 'int8' }), -1, { roundingMode: 'trunc' })), [-128]);
      // Float division by zero follows IEEE; the rounding modes keep the infinities and NaN.
      const z = tensor([1, -1, 0], { dtype: 'float32' });
      assert.deepEqual(values(div(z, 0)), [Infinity, -Infinity, NaN]);
      assert.deepEqual(values(div(z, 0, { roundingMode: 'floor' })), [Infinity, -Infinity, NaN]);
      assert.ok(values(remainder(z, 0)).every(Number.isNaN));
    }),
  );

  it(
    'bfloat16 and float16 trunc division rounds the quotient to the dtype before truncating, as PyTorch',
    scoped(() => {
      // torch.div(torch.tensor([1.6015625], dtype=torch.bfloat16), torch.tensor([0.10693359375],
      // dtype=torch.bfloat16), rounding_mode='trunc') is 15: the quotient 14.977 rounds to 15 first.
      const a = tensor([1.6015625], { dtype: 'bfloat16' }), b = tensor([0.10693359375], { dtype: 'bfloat16' });
      assert.deepEqual(values(div(a, b, { roundingMode: 'trunc' })), [15]);
      assert.deepEqual(values(div(a, 0.10693359375, { roundingMode: 'trunc' })), [15]);
      const h = tensor([2047.75], { dtype: 'float16' });
      assert.deepEqual(values(div(h, tensor([1.0009765625], { dtype: 'float16' }), { roundingMode: 'trunc' })), [
        2046,
      ]);
    }),
  );

  it(
    'pow: integer powers wrap, negative integer exponents in tensors give 0 or ±1, pow.Scalar and fast paths',
    scoped(() => {
      // torch.pow(torch.tensor([2, 3, -1, 1, 0]), torch.tensor([-1, -2, -3, -4, -1])) -> [0, 0, -1, 1, 0]
      assert.deepEqual(values(pow(tensor([2, 3, -1, 1, 0]), tensor([-1, -2, -3, -4, -1]))), [0, 0, -1, 1, 0]);
      assert.deepEqual(values(pow(tensor([3], { dtype: 'int8' }), 5)), [-13]);
      assert.deepEqual(values(pow(2, tensor([-1, 2]))), [0, 4]);
      const p = pow(2.5, tensor([1, 2, 3], { dtype: 'int32' }));
      assert.equal(p.dtype.name, 'float32');
      assert.deepEqual(values(p), [2.5, 6.25, 15.625]);
      // pow(1, x) is 1 everywhere, even for NaN exponents and bool tensors (PyTorch fills).
      const ones = pow(1, tensor([NaN, -Infinity, 3]));
      assert.deepEqual(values(ones), [1, 1, 1]);
      const b = pow(1, tensor([true, false]));
      assert.equal(b.dtype.name, 'int64');
      assert.deepEqual(values(b), [1, 1]);
      assert.deepEqual(values(pow(tensor([true, false]), 2)), [1, 0]);
      // Exponents 0.5, -0.5 and -1 run sqrt, rsqrt and reciprocal, as in PyTorch: -0 ** 0.5 is -0, -inf is NaN.
      const s = values(pow(tensor([-0, -Infinity, 4]), 0.5));
      assert.ok(Object.is(s[0], -0) && Number.isNaN(s[1]) && s[2] === 2);
      assert.deepEqual(values(pow(tensor([4, 0.25]), -0.5)), [0.5, 2]);
      assert.deepEqual(values(pow(tensor([4, -0], { dtype: 'float64' }), -1)), [0.25, -Infinity]);
      assert.deepEqual(values(pow(tensor([4, 3], { dtype: 'int64' }), 0.5)), [2, Math.fround(Math.sqrt(3))]);
      assert.deepEqual(values(pow(tensor([NaN, 2]), 0)), [1, 1]);
      // float16 rounds the exponent to float16 first: 0.1 -> 0.0999755859375.
      const h = values(pow(tensor([3], { dtype: 'float16' }), 0.1))[0];
      assert.equal(h, float16BitsToNumber(numberToFloat16Bits(Math.fround(3 ** 0.0999755859375))));
    }),
  );

  it(
    'minimum and maximum propagate NaN from either side; bool minimum/maximum are and/or',
    scoped(() => {
      const a = tensor([NaN, 1, 2, -Infinity]), b = tensor([0, NaN, 1, 5]);
      assert.deepEqual(values(minimum(a, b)), [NaN, NaN, 1, -Infinity]);
      assert.deepEqual(values(maximum(a, b)), [NaN, NaN, 2, 5]);
      const t = tensor([true, true, false, false]), f = tensor([true, false, true, false]);
      assert.deepEqual(values(minimum(t, f)), [1, 0, 0, 0]);
      assert.deepEqual(values(maximum(t, f)), [1, 1, 1, 0]);
      assert.equal(minimum(t, f).dtype.name, 'bool');
    }),
  );

  it(
    'comparisons convert the scalar to the tensor dtype: uint8 == -1 matches 255, as in PyTorch',
    scoped(() => {
      const u = tensor([255, 0, 1], { dtype: 'uint8' });
      assert.deepEqual(values(eq(u, -1)), [1, 0, 0]);
      assert.deepEqual(values(lt(tensor([0], { dtype: 'uint8' }), 256)), [0]);
      assert.deepEqual(values(gt(tensor([1, 2, 3], { dtype: 'int32' }), 2.5)), [0, 0, 1]);
      assert.deepEqual(values(ne(tensor([NaN, 1]), tensor([NaN, 1]))), [1, 0]);
    }),
  );
});

describe('in-place binary operators', () => {
  const IN_PLACE: ReadonlyArray<[string, (a: Tensor, b: Operand) => Tensor, BinaryOp]> = [
    ['add_', (a, b) => a.add_(b), BINARY_OPS[0]],
    ['sub_', (a, b) => a.sub_(b), BINARY_OPS[1]],
    ['mul_', (a, b) => a.mul_(b), BINARY_OPS[2]],
    ['div_', (a, b) => a.div_(b), BINARY_OPS[3]],
  ];

  it(
    'write into self (also non-contiguous and 0-d self), return self and bump the version counter',
    scoped(() => {
      const next = rng(21);
      for (const [name, fn, op] of IN_PLACE) {
        for (const dtype of op.dtypes.filter((d) => op.kind !== 'float' || isFloat(d))) {
          for (
            const [self, other] of [
              [make([3, 4], dtype, next), make([4], dtype, next)],
              [strided([5, 3], dtype, next), strided([5, 3], dtype, next)],
              [make([], dtype, next), make([], dtype, next)],
              [make([0, 2], dtype, next), make([2], dtype, next)],
            ] as Array<[Tensor, Tensor]>
          ) {
            const expected = valuesAt(self, self.shape).map((x, i) =>
              castRef(op.ref(x, valuesAt(other, self.shape)[i], dtype), dtype)
            );
            const version = self.version;
            const r = fn(self, other);
            assert.equal(r, self, `${name} returns self`);
            assert.equal(self.version, version + 1, `${name} bumps the version`);
            assertValues(self, expected, 0, `${name} ${dtype} [${self.shape}]`);
          }
          const s = make([2, 3], dtype, next), k = dtype === 'bool' ? true : 2;
          const expected = values(s).map((x) => castRef(op.ref(x, +k, dtype), dtype));
          fn(s, k);
          assertValues(s, expected, 0, `${name}(${dtype}, ${k})`);
        }
      }
    }),
  );

  it(
    'compute in the promoted dtype and cast back into self; alpha scales the other operand',
    scoped(() => {
      // torch.ones(2, dtype=torch.half).add_(torch.tensor([1e-4, 2.5])) -> [1.0, 3.5] in float16
      const h = tensor([1, 1], { dtype: 'float16' });
      h.add_(tensor([1e-4, 2.5]));
      assert.deepEqual(values(h), [1, 3.5]);
      const i = tensor([1, 2, 3], { dtype: 'int32' });
      i.add_(tensor([10, 20, 30], { dtype: 'int64' }), { alpha: 2 });
      assert.deepEqual(values(i), [21, 42, 63]);
      i.sub_(1, { alpha: 3 });
      assert.deepEqual(values(i), [18, 39, 60]);
      const f = tensor([1.5, -2]);
      f.mul_(tensor(2, { dtype: 'float64' }));
      assert.equal(f.dtype.name, 'float32');
      assert.deepEqual(values(f), [3, -4]);
      const self = tensor([1, 2, 3]);
      self.add_(self);
      assert.deepEqual(values(self), [2, 4, 6]);
      // Interleaved views of one storage: x[::2] += x[1::2] is allowed (neither is dense, as in PyTorch).
      const x = tensor([1, 10, 2, 20, 3, 30]);
      const evens = viewOf(x, [3], [2], 0);
      evens.add_(viewOf(x, [3], [2], 1));
      assert.deepEqual(values(x), [11, 10, 22, 20, 33, 30]);
      assert.equal(x.version, 1, 'views share the version counter');
    }),
  );

  it(
    'add and sub with alpha match a + alpha * b (within one rounding for floats: the kernels may fuse)',
    scoped(() => {
      const next = rng(23);
      for (const dtype of NO_BOOL) {
        for (const alpha of [2, -3]) {
          const a = make([3, 4], dtype, next), b = make([4], dtype, next);
          for (const [fn, sign] of [[add, 1], [sub, -1]] as const) {
            const out = fn(a, b, { alpha });
            const bv = valuesAt(b, [3, 4]);
            const expected = valuesAt(a, [3, 4]).map((x, i) => castRef(x + sign * alpha * bv[i], dtype));
            assertValues(out, expected, isFloat(dtype) ? 1 : 0, `${fn.name} ${dtype} alpha ${alpha}`);
          }
        }
        const af = make([5], dtype, next), bf = make([5], dtype, next);
        if (isFloat(dtype)) {
          const expected = values(af).map((x, i) => castRef(x + 0.5 * values(bf)[i], dtype));
          assertValues(add(af, bf, { alpha: 0.5 }), expected, 1, `add ${dtype} alpha 0.5`);
        }
      }
      // Bool tensors take integral alphas: torch.add(b, b, alpha=2) is a logical or.
      const t = tensor([true, false, false]), u = tensor([false, false, true]);
      assert.deepEqual(values(add(t, u, { alpha: 2 })), [1, 0, 1]);
      assert.deepEqual(values(add(t, u, { alpha: true })), [1, 0, 1]);
    }),
  );
});

describe('where and clamp', () => {
  it(
    'where picks from broadcast operands of every dtype, promoting self and other (tensor or scalar)',
    scoped(() => {
      const next = rng(31);
      for (const dtype of ALL) {
        for (const otherDtype of [dtype, 'float32', 'int64']) {
          const cond = make([3, 1], 'bool', next), x = strided([4], dtype, next), y = make([3, 4], otherDtype, next);
          const out = where(cond, x, y);
          const common = promoteTypes(toDType(dtype as DType['name']), toDType(otherDtype as DType['name'])).name;
          assert.equal(out.dtype.name, common, `where ${dtype} ${otherDtype}`);
          const c = valuesAt(cond, [3, 4]), xv = valuesAt(x, [3, 4]), yv = valuesAt(y, [3, 4]);
          assertValues(out, c.map((k, i) => castRef(k ? xv[i] : yv[i], common)), 0, `where ${dtype} ${otherDtype}`);
        }
        for (const s of [2, 2.5, true]) {
          const cond = make([2, 3], 'bool', next), x = make([3], dtype, next);
          const out = where(cond, x, s);
          const d = typeof s === 'number' && !Number.isInteger(s) && !isFloat(dtype)
            ? 'float32'
            : dtype === 'bool' && typeof s === 'number'
            ? 'int64'
            : dtype;
          assert.equal(out.dtype.name, d, `where(${dtype}, ${s})`);
          const c = valuesAt(cond, [2, 3]), xv = valuesAt(x, [2, 3]);
          const expected = c.map((k, i) => castRef(k ? xv[i] : +s, d));
          assertValues(out, expected, 0, `where(${dtype}, ${s})`);
        }
      }
      const empty = where(make([0, 2], 'bool', next), make([2], 'float32', next), 1);
      assert.deepEqual([...empty.shape], [0, 2]);
    }),
  );

  it(
    'clamp with scalar bounds, one bound, min > max and NaN, on every dtype clamp_scalar_cpu takes',
    scoped(() => {
      const next = rng(32);
      for (const dtype of ALL.filter((d) => d !== 'bool' && d !== 'float16')) {
        for (const [lo, hi] of [[-1, 1], [null, 2], [-2, null], [2, -2], [-1.5, 2.5]] as const) {
          const x = strided([4, 3], dtype, next);
          const out = clamp(x, lo, hi);
          const d = isFloat(dtype) || (Number.isInteger(lo ?? 0) && Number.isInteger(hi ?? 0)) ? dtype : 'float32';
          assert.equal(out.dtype.name, d);
          const l = lo === null ? -Infinity : castRef(lo, d), h = hi === null ? Infinity : castRef(hi, d);
          const expected = values(x).map((v) => castRef(Number.isNaN(v) ? v : Math.min(Math.max(v, l), h), d));
          assertValues(out, expected, 0, `clamp(${dtype}, ${lo}, ${hi})`);
        }
      }
      // torch.clamp(x, 0, nan) is all NaN; a single NaN bound is ignored (clamp_min/clamp_max kernels).
      const x = tensor([1, 2, NaN]);
      assert.ok(values(clamp(x, 0, NaN)).every(Number.isNaN));
      assert.deepEqual(values(clamp(x, NaN)), [1, 2, NaN]);
      assert.deepEqual(values(clamp(x, null, NaN)), [1, 2, NaN]);
      // Integer bounds of an unsigned tensor wrap like c10's conversion: clamp(uint8, -3, 6) is all 6.
      assert.deepEqual(values(clamp(tensor([1, 5, 9], { dtype: 'uint8' }), -3, 6)), [6, 6, 6]);
      // bfloat16 bounds are rounded to bfloat16 first: 1.0039 -> 1.
      assert.deepEqual(values(clamp(tensor([1, 2], { dtype: 'bfloat16' }), 1.0039)), [1, 2]);
      // A bool tensor with integer bounds promotes to int64.
      const b = clamp(tensor([true, false]), 0, 1);
      assert.equal(b.dtype.name, 'int64');
      assert.deepEqual(values(b), [1, 0]);
    }),
  );

  it(
    'clamp with tensor bounds broadcasts and promotes; one tensor bound is maximum/minimum (any dtype)',
    scoped(() => {
      const next = rng(33);
      for (const dtype of ALL) {
        const x = make([3, 4], dtype, next), lo = make([4], dtype, next), hi = strided([3, 1], dtype, next);
        const lv = valuesAt(lo, [3, 4]), hv = valuesAt(hi, [3, 4]), xv = values(x);
        const max = (a: number, b: number) => (nan(a, b) ? NaN : Math.max(a, b));
        const min = (a: number, b: number) => (nan(a, b) ? NaN : Math.min(a, b));
        assertValues(clamp(x, lo), xv.map((v, i) => max(v, lv[i])), 0, `clamp(${dtype}, lo)`);
        assertValues(clamp(x, null, hi), xv.map((v, i) => min(v, hv[i])), 0, `clamp(${dtype}, None, hi)`);
        if (dtype !== 'bool' && dtype !== 'float16') {
          const expected = xv.map((v, i) => min(max(v, lv[i]), hv[i]));
          assertValues(clamp(x, lo, hi), expected, 0, `clamp(${dtype}, lo, hi)`);
        }
      }
      // clamp(int64 tensor, float bound) promotes to float32; a float16 tensor with float32 bounds too.
      const i = clamp(tensor([1, 5, 9]), tensor([2.5]), tensor([6.5]));
      assert.equal(i.dtype.name, 'float32');
      assert.deepEqual(values(i), [2.5, 5, 6.5]);
      assert.equal(clamp(tensor([1], { dtype: 'float16' }), tensor([0.5])).dtype.name, 'float32');
      const n = clamp(tensor([2, 1]), tensor([NaN, 0]), tensor([0.5, 0.5]));
      assert.deepEqual(values(n), [NaN, 0.5]);
    }),
  );

  it(
    'clamp_min and clamp_max, out of place and in place (also on strided views), on every dtype their kernels take',
    scoped(() => {
      const next = rng(34);
      for (const dtype of ALL.filter((d) => d !== 'bool' && d !== 'float16')) {
        for (const bound of [-1, 2, 0.5]) {
          const d = isFloat(dtype) || Number.isInteger(bound) ? dtype : 'float32';
          const b = castRef(bound, d);
          const x = strided([5, 3], dtype, next), xv = values(x);
          const lower = xv.map((v) => castRef(Number.isNaN(v) ? v : Math.max(v, b), d));
          const upper = xv.map((v) => castRef(Number.isNaN(v) ? v : Math.min(v, b), d));
          const lo = clampMin(x, bound), hi = x.clampMax(bound);
          assert.equal(lo.dtype.name, d);
          assertValues(lo, lower, 0, `clamp_min(${dtype}, ${bound})`);
          assertValues(hi, upper, 0, `clamp_max(${dtype}, ${bound})`);
          if (d !== dtype) continue; // in place needs the bound's type to be self's (checked below)
          // In place through a transposed view: the base's elements change where the view maps them.
          const base = make([3, 5], dtype, next), view = base.t();
          const viewValues = values(view.contiguous());
          assert.equal(view.clampMin_(bound), view);
          assertValues(view, viewValues.map((v) => castRef(Number.isNaN(v) ? v : Math.max(v, b), d)), 0, 'clamp_min_');
          const y = make([4], dtype, next), yv = values(y);
          y.clampMax_(bound);
          assertValues(y, yv.map((v) => castRef(Number.isNaN(v) ? v : Math.min(v, b), d)), 0, 'clamp_max_');
          const z = make([2, 3], dtype, next), zv = values(z);
          z.clamp_(-bound, bound + 1);
          const [l, h] = [castRef(-bound, d), castRef(bound + 1, d)];
          assertValues(z, zv.map((v) => castRef(Number.isNaN(v) ? v : Math.min(Math.max(v, l), h), d)), 0, 'clamp_');
        }
      }
      // A NaN bound: clamp_min and clamp_max give NaN everywhere, clamp_ with one NaN bound ignores it.
      const x = tensor([1, 2, NaN]);
      assert.ok(values(clampMin(x, NaN)).every(Number.isNaN));
      assert.ok(values(clampMax(x, NaN)).every(Number.isNaN));
      assert.ok(values(x.clone().clampMin_(NaN)).every(Number.isNaN));
      assert.deepEqual(values(x.clone().clamp_(NaN)), [1, 2, NaN]);
      // An integer tensor with a float bound promotes out of place; a bool tensor with an integer bound to int64.
      const i = clampMin(tensor([1, 5, 9], { dtype: 'int8' }), 2.5);
      assert.equal(i.dtype.name, 'float32');
      assert.deepEqual(values(i), [2.5, 5, 9]);
      const bl = clampMin(tensor([true, false]), 0);
      assert.equal(bl.dtype.name, 'int64');
      assert.deepEqual(values(bl), [1, 0]);
      // An unsigned tensor's negative bound wraps like c10's conversion: clamp_min_(uint8, -3) is all 253.
      assert.deepEqual(values(tensor([1, 5, 9], { dtype: 'uint8' }).clampMin_(-3)), [253, 253, 253]);
    }),
  );

  it(
    "in-place clamps refuse what PyTorch refuses, in PyTorch's words, and leave self unchanged",
    scoped(() => {
      const cases: Array<[() => unknown, string | RegExp]> = [
        [() => tensor([1, 2]).clamp_(0.5), "result type Float can't be cast to the desired output type long int"],
        [() => tensor([1, 2]).clampMin_(0.5), "result type Float can't be cast to the desired output type long int"],
        [() => tensor([true, false]).clampMin_(0), "result type Long can't be cast to the desired output type bool"],
        [() => tensor([1, 2], { dtype: 'int16' }).clampMax_(2.5), /output type short int$/],
        [() => tensor([1, 2], { dtype: 'float16' }).clampMax_(1), `"clamp_max_scalar_cpu" not implemented for 'Half'`],
        [() => tensor([1, 2], { dtype: 'float16' }).clampMin(0), `"clamp_min_cpu" not implemented for 'Half'`],
        [() => tensor([1, 2]).clamp_(), "torch.clamp: At least one of 'min' or 'max' must not be None"],
        [() => tensor([1, 2]).expand([2, 2]).clampMin_(0), /more than one element of the written-to tensor/],
        [
          () => tensor([1, 2], { dtype: 'int8' }).clampMin(1000),
          'value cannot be converted to type int8_t without overflow',
        ],
      ];
      for (const [call, message] of cases) {
        assert.throws(
          call,
          (e: Error) => (typeof message === 'string' ? e.message === message : message.test(e.message)),
        );
      }
      const kept = tensor([3, -4]);
      assert.throws(() => kept.clamp_(0.5));
      assert.deepEqual(values(kept), [3, -4]);
    }),
  );
});

describe('pow follows C pow at its special values, as PyTorch does', () => {
  for (const dtype of ['float32', 'float64'] as const) {
    it(`pow(1, y) = 1, pow(x, 0) = 1 and pow(-1, +-inf) = 1 in ${dtype}`, () => {
      const base = tensor([1, 1, 1, -1, -1, 2, 0, 1.5, 0], { dtype });
      const exponent = tensor([-Infinity, Infinity, NaN, Infinity, -Infinity, 0, NaN, 2, 0], { dtype });
      assert.deepEqual(values(pow(base, exponent)), [1, 1, 1, 1, 1, 1, NaN, 2.25, 1]);
      assert.deepEqual(values(pow(tensor([NaN, -1], { dtype }), 0)), [1, 1]);
    });
  }
});

describe('integer scalars beyond an integral tensor’s range', () => {
  // PyTorch 1.13: the int64 wrapped number is cast to the compute dtype, which wraps (two's complement).
  it('wrap to the width for arithmetic, alpha and comparisons, as PyTorch computes them', () => {
    const before = memoryStats().liveTensors;
    scope(() => {
      const t = tensor([1, 2], { dtype: 'int32' });
      const cases: Array<[number, number[], number[], number[]]> = [
        [2 ** 40, [1, 2], [0, 0], [1, 2]],
        [2 ** 40 + 3, [4, 5], [3, 6], [-2, -1]],
        [-(2 ** 33) - 1, [0, 1], [-1, -2], [2, 3]],
        [2 ** 31, [-2147483647, -2147483646], [-2147483648, 0], [-2147483647, -2147483646]],
        [2 ** 53 - 1, [0, 1], [-1, -2], [2, 3]],
      ];
      for (const [s, sum, product, difference] of cases) {
        assert.deepEqual(t.add(s).toArray(), sum, `int32 + ${s}`);
        assert.deepEqual(t.mul(s).toArray(), product, `int32 * ${s}`);
        assert.deepEqual(t.sub(s).toArray(), difference, `int32 - ${s}`);
        assert.deepEqual(t.eq(s).toArray(), [false, false], `int32 == ${s}`);
      }
      assert.deepEqual(t.add(2 ** 40, { alpha: 2 }).toArray(), [1, 2]);
      const u = tensor([1, 2], { dtype: 'uint8' });
      assert.deepEqual(u.add(300).toArray(), [45, 46]);
      assert.deepEqual(u.add(-1).toArray(), [0, 1]);
      assert.deepEqual(u.mul(1000).toArray(), [232, 208]);
      const i8 = tensor([1, 2], { dtype: 'int8' });
      assert.deepEqual(i8.add(300).toArray(), [45, 46]);
      assert.deepEqual(i8.gt(300).toArray(), [false, false]); // 300 is 44 as int8
      assert.deepEqual(i8.eq(257).toArray(), [true, false]); // 257 is 1 as int8
    });
    assert.equal(memoryStats().liveTensors, before);
  });

  it('but where, clamp and masked_fill convert their scalar with PyTorch’s overflow check', () => {
    scope(() => {
      const t = tensor([1, 2], { dtype: 'int32' });
      assert.throws(() => where(t.gt(1), t, 2 ** 40), /value cannot be converted to type int without overflow/);
      assert.throws(() => clamp(t, 0, 2 ** 40), /value cannot be converted to type int without overflow/);
      assert.deepEqual(where(t.gt(1), t, 7).toArray(), [7, 2]);
    });
  });
});

describe('signed zeros in maximum, minimum, clamp, relu and amax', () => {
  // PyTorch 1.13's scalar kernels use std::max / std::min: a ±0 tie keeps the first operand (Note [Signed zero
  // ties] in kernels_as/simd.ts). Values printed by PyTorch for these inputs.
  const signs = (t: Tensor) => (t.toArray() as number[]).map((v) => (Object.is(v, -0) ? '-0' : String(v)));
  for (const dtype of ['float32', 'float64'] as const) {
    for (const n of [4, 21]) { // 21: vector loops and a scalar tail
      it(`${dtype}, ${n} elements (contiguous, and broadcast from a scalar)`, () => {
        scope(() => {
          const negZero = full([n], -0, { dtype }), zero = full([n], 0, { dtype });
          assert.deepEqual(signs(maximum(negZero, zero)), new Array(n).fill('-0'));
          assert.deepEqual(signs(maximum(zero, negZero)), new Array(n).fill('0'));
          assert.deepEqual(signs(minimum(negZero, zero)), new Array(n).fill('-0'));
          assert.deepEqual(signs(minimum(zero, negZero)), new Array(n).fill('0'));
          assert.deepEqual(signs(negZero.relu()), new Array(n).fill('-0'));
          assert.deepEqual(signs(clampMin(negZero, 0)), new Array(n).fill('-0'));
          assert.deepEqual(signs(clampMax(zero, -0)), new Array(n).fill('0'));
          assert.deepEqual(signs(clamp(negZero, 0, 0)), new Array(n).fill('-0'));
          assert.deepEqual(signs(clamp(zero, -0, -0)), new Array(n).fill('0'));
          assert.deepEqual(signs(maximum(negZero, tensor(0, { dtype }))), new Array(n).fill('-0'));
          // NaN still wins over everything.
          const withNaN = maximum(negZero, full([n], NaN, { dtype }));
          assert.ok((withNaN.toArray() as number[]).every(Number.isNaN));
        });
      });
    }
  }
  it('amax and amin keep the first of equal zeros', () => {
    scope(() => {
      assert.deepEqual(signs(tensor(new Float32Array([-0, 0])).amax()), ['-0']);
      assert.deepEqual(signs(tensor(new Float32Array([0, -0])).amax()), ['0']);
      assert.deepEqual(signs(tensor(new Float64Array([0, -0])).amin()), ['0']);
      assert.deepEqual(signs(tensor(new Float64Array([-0, 0])).amin()), ['-0']);
    });
  });
});
