import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BinaryOp, ClampFlags, KernelStatus, UnaryOp } from '../../core/cpu/exports_elementwise.ts';
import {
  ALL_DTYPES,
  DT,
  type Dtype,
  DTYPE_NAME,
  FLOAT_DTYPES,
  harness,
  INT_DTYPES,
  itemSize,
  type KernelHarness,
  mulberry32,
  randomValues,
  roundTo,
  ulpDistance,
  wrapInt,
} from './_kernel_harness.ts';

const h = harness();
const LENGTHS = [1, 3, 17, 1007];
const isFloat = (d: Dtype) => FLOAT_DTYPES.includes(d);
const isInt = (d: Dtype) => INT_DTYPES.includes(d);

/** Special float inputs appended to random ones. */
const SPECIALS = [0, -0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, NaN, Infinity, -Infinity, 1e-3, 80, -80];

// ---- reference math ------------------------------------------------------------------------------------------------

// erf, erfc and gelu references in 256-bit fixed point (BigInt): the Maclaurin series of erf is summed exactly
// enough that erfc = 1 - erf keeps ~140 significant bits for |x| <= 7.5, so the references are correctly rounded
// to f64 and the kernels can be held to a couple of ulp. Beyond 7.5, erf rounds to +-1 and erfc/gelu underflow
// (gelu's random inputs stay within [-10, 10], so t = -x/sqrt 2 stays within 7.1).
const FRAC = 256n;
const ONE = 1n << FRAC;
/** floor(2/sqrt(pi) * 2^256) and floor(2^256 / sqrt 2), from mpmath at 120 digits. */
const TWO_OVER_SQRT_PI = 130657381209852114387528029350014196574164286124850014242073919076264802271585n;
const INV_SQRT2 = 81877371507464127617551201542979628307507432471243237061821853600756754782485n;

/** x (a finite double) as an exact fixed-point BigInt, truncated below 2^-256. */
function toFixed(x: number): bigint {
  if (x === 0) return 0n;
  const f = new Float64Array([Math.abs(x)]);
  const bits = new BigUint64Array(f.buffer)[0];
  const exp = Number((bits >> 52n) & 0x7ffn);
  const mant = exp === 0 ? bits & 0xfffffffffffffn : (bits & 0xfffffffffffffn) | (1n << 52n);
  const shift = BigInt(Math.max(exp, 1) - 1075) + FRAC;
  const v = shift >= 0n ? mant << shift : mant >> -shift;
  return x < 0 ? -v : v;
}

const fromFixed = (v: bigint) => Number(v) / 2 ** 256;

/** erf of a fixed-point argument, in fixed point (|x| <= 7.5). */
function erfFixed(x: bigint): bigint {
  const x2 = (x * x) >> FRAC;
  let p = x; // (-1)^n x^(2n+1) / n!
  let sum = x;
  for (let n = 1n; n < 2000n; n++) {
    p = -((p * x2) >> FRAC) / n;
    const term = p / (2n * n + 1n);
    if (term === 0n) break;
    sum += term;
  }
  return (sum * TWO_OVER_SQRT_PI) >> FRAC;
}

function erfRef(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (Math.abs(x) > 7.5) return Math.sign(x);
  return fromFixed(erfFixed(toFixed(x)));
}

/** 0.5 x erfc(-x/sqrt 2) with the argument itself in fixed point (no rounding of t). */
function geluRef(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x === Infinity) return Infinity;
  if (x === -Infinity) return NaN; // -inf * 0, as PyTorch's formula gives
  if (x < -10.5) return -0;
  const fx = toFixed(x);
  const t = -((fx * INV_SQRT2) >> FRAC);
  const limit = toFixed(7.5);
  const erfc = t > limit ? 0n : t < -limit ? 2n * ONE : ONE - erfFixed(t);
  return fromFixed((fx * erfc) >> (FRAC + 1n));
}

const geluTanhRef = (x: number) => {
  const u = Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x);
  return x / (1 + Math.exp(-2 * u));
};

// ---- unary --------------------------------------------------------------------------------------------------------

type UnaryName = keyof typeof UnaryOp;

interface UnaryCase {
  dtypes: readonly Dtype[];
  /** Float reference in f64. */
  f?: (x: number) => number;
  /** Integer reference (result is wrapped to the dtype). */
  int?: (x: bigint) => bigint;
  /** Allowed ulps for f32 / f64 results (f16 and bf16 always allow 1, as they round an f32 result). */
  ulps?: [number, number];
  /** Output is Bool. */
  bool?: (x: number) => boolean;
  /** Input range. */
  range?: [number, number];
}

const ALL_BUT_BOOL = ALL_DTYPES.filter((d) => d !== DT.bool);
const INT_AND_BOOL = [...INT_DTYPES, DT.bool];
const UNARY: Record<UnaryName, UnaryCase> = {
  neg: { dtypes: ALL_BUT_BOOL, f: (x) => -x, int: (x) => -x, ulps: [0, 0] },
  abs: { dtypes: ALL_BUT_BOOL, f: Math.abs, int: (x) => (x < 0n ? -x : x), ulps: [0, 0] },
  sign: { dtypes: ALL_DTYPES, f: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0), int: (x) => (x > 0n ? 1n : x < 0n ? -1n : 0n) },
  exp: { dtypes: FLOAT_DTYPES, f: Math.exp, ulps: [1, 2] },
  log: { dtypes: FLOAT_DTYPES, f: Math.log, ulps: [1, 2], range: [-1, 20] },
  log1p: { dtypes: FLOAT_DTYPES, f: Math.log1p, ulps: [1, 2], range: [-1.5, 20] },
  expm1: { dtypes: FLOAT_DTYPES, f: Math.expm1, ulps: [1, 2] },
  sqrt: { dtypes: FLOAT_DTYPES, f: Math.sqrt, ulps: [0, 0], range: [-1, 100] },
  rsqrt: { dtypes: FLOAT_DTYPES, f: (x) => 1 / Math.sqrt(x), ulps: [1, 1], range: [-1, 100] },
  sin: { dtypes: FLOAT_DTYPES, f: Math.sin, ulps: [1, 2], range: [-100, 100] },
  cos: { dtypes: FLOAT_DTYPES, f: Math.cos, ulps: [1, 2], range: [-100, 100] },
  tanh: { dtypes: FLOAT_DTYPES, f: Math.tanh, ulps: [2, 2] },
  // sigmoid and silu: below x = -87 the f32 results are subnormal and keep only a few significant bits.
  sigmoid: { dtypes: FLOAT_DTYPES, f: (x) => 1 / (1 + Math.exp(-x)), ulps: [3, 3], range: [-85, 85] },
  relu: { dtypes: ALL_BUT_BOOL, f: (x) => (Number.isNaN(x) ? NaN : Math.max(x, 0)), int: (x) => (x > 0n ? x : 0n) },
  gelu: { dtypes: FLOAT_DTYPES, f: geluRef, ulps: [1, 4] },
  geluTanh: { dtypes: FLOAT_DTYPES, f: geluTanhRef, ulps: [1, 4] },
  silu: { dtypes: FLOAT_DTYPES, f: (x) => x / (1 + Math.exp(-x)), ulps: [4, 4], range: [-85, 85] },
  erf: { dtypes: FLOAT_DTYPES, f: erfRef, ulps: [1, 1], range: [-5, 5] },
  floor: { dtypes: ALL_BUT_BOOL, f: Math.floor, int: (x) => x, ulps: [0, 0] },
  ceil: { dtypes: ALL_BUT_BOOL, f: Math.ceil, int: (x) => x, ulps: [0, 0] },
  round: { dtypes: ALL_BUT_BOOL, f: roundHalfEven, int: (x) => x, ulps: [0, 0] },
  trunc: { dtypes: ALL_BUT_BOOL, f: Math.trunc, int: (x) => x, ulps: [0, 0] },
  reciprocal: { dtypes: FLOAT_DTYPES, f: (x) => 1 / x, ulps: [0, 0] },
  logicalNot: { dtypes: ALL_DTYPES, bool: (x) => x === 0 },
  isnan: { dtypes: ALL_DTYPES, bool: (x) => Number.isNaN(x) },
  bitwiseNot: { dtypes: INT_AND_BOOL, int: (x) => ~x, bool: (x) => x === 0 },
};

function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** Expected unary result for one input. */
function unaryExpected(name: UnaryName, dtype: Dtype, x: number): number {
  const c = UNARY[name];
  if (c.bool && (c.int === undefined || dtype === DT.bool)) return c.bool(x) ? 1 : 0;
  if (!isFloat(dtype)) {
    const v = dtype === DT.bool ? BigInt(x) : BigInt(x);
    return wrapInt(dtype, c.int!(v));
  }
  // Compute types: f16/bf16/f32 go through f32, so the input is exact and the f32 result is rounded again.
  return roundTo(dtype, c.f!(x));
}

function checkUnaryResult(name: UnaryName, dtype: Dtype, inputs: number[], got: number[]): void {
  const c = UNARY[name];
  const boolOut = c.bool !== undefined && (c.int === undefined || dtype === DT.bool);
  for (let i = 0; i < inputs.length; i++) {
    const want = unaryExpected(name, dtype, inputs[i]);
    if (boolOut || !isFloat(dtype)) {
      assert.equal(got[i], want, `${name} ${DTYPE_NAME[dtype]} x=${inputs[i]}`);
      continue;
    }
    const tol = dtype === DT.f32 ? c.ulps?.[0] ?? 0 : dtype === DT.f64 ? c.ulps?.[1] ?? 0 : 1;
    const d = ulpDistance(dtype, got[i], want);
    assert.ok(d <= tol, `${name} ${DTYPE_NAME[dtype]} x=${inputs[i]}: got ${got[i]}, want ${want} (${d} ulp)`);
  }
}

function unaryInputs(name: UnaryName, dtype: Dtype, n: number, seed: number): number[] {
  const [lo, hi] = UNARY[name].range ?? [-10, 10];
  const xs = randomValues(mulberry32(seed), dtype, n, lo, hi);
  if (isFloat(dtype) && n > 100) { for (let i = 0; i < SPECIALS.length; i++) xs[i] = roundTo(dtype, SPECIALS[i]); }
  if (isInt(dtype) && n > 100) {
    // Extremes exercise wrapping (neg/abs of INT_MIN); i64 extremes are tested with BigInt elsewhere.
    const min = dtype === DT.u8 ? 0 : dtype === DT.i64 ? -(2 ** 53) : -(2 ** (itemSize(dtype) * 8 - 1));
    xs[0] = min;
    xs[1] = dtype === DT.u8 ? 255 : -min - 1;
    xs[2] = 0;
  }
  return xs;
}

function outDtypeOfUnary(name: UnaryName, dtype: Dtype): Dtype {
  const c = UNARY[name];
  return c.bool !== undefined && (c.int === undefined || dtype === DT.bool) ? DT.bool : dtype;
}

describe('unary kernels', () => {
  for (const name of Object.keys(UNARY) as UnaryName[]) {
    it(`${name} matches the float64 reference on every supported dtype, contiguous, all tail lengths`, () => {
      for (const dtype of UNARY[name].dtypes) {
        for (const n of LENGTHS) {
          h.reset();
          const xs = unaryInputs(name, dtype, n, 1000 + n + dtype);
          const a = h.put(dtype, xs);
          const od = outDtypeOfUnary(name, dtype);
          const out = h.alloc(n * itemSize(od));
          assert.equal(h.k.unary_contig(UnaryOp[name], dtype, out, a, n), KernelStatus.ok, `${name} ${dtype}`);
          checkUnaryResult(name, dtype, xs, h.get(od, out, n));
        }
      }
    });
  }

  it('runs strided views: a transposed input into a reversed (negative stride) output', () => {
    for (const name of ['neg', 'exp', 'relu', 'isnan', 'round'] as UnaryName[]) {
      for (const dtype of UNARY[name].dtypes) {
        h.reset();
        const rows = 5, cols = 7, n = rows * cols;
        const xs = unaryInputs(name, dtype, n, 77);
        const a = h.put(dtype, xs); // a is stored [cols, rows]; we read it as its transpose [rows, cols]
        const od = outDtypeOfUnary(name, dtype);
        const out = h.alloc(n * itemSize(od));
        // out[r][c] lives at n-1 - (r*cols + c): base at the last element, strides [-cols, -1].
        const outLast = out + (n - 1) * itemSize(od);
        const desc = h.desc([rows, cols], [-cols, -1], [1, rows]);
        assert.equal(h.k.unary_strided(UnaryOp[name], dtype, outLast, a, desc), KernelStatus.ok);
        const got = h.get(od, out, n);
        for (let r = 0; r < rows; r++) {
          for (let c = 0; c < cols; c++) {
            const x = xs[c * rows + r];
            checkUnaryResult(name, dtype, [x], [got[n - 1 - (r * cols + c)]]);
          }
        }
      }
    }
  });

  it('bitwise_not on Bool is logical not', () => {
    h.reset();
    const a = h.put(DT.bool, [0, 1, 1, 0]);
    const out = h.alloc(4);
    assert.equal(h.k.unary_contig(UnaryOp.bitwiseNot, DT.bool, out, a, 4), KernelStatus.ok);
    assert.deepEqual(h.get(DT.bool, out, 4), [1, 0, 0, 1]);
  });

  it('returns unsupported, writing nothing, for float-only ops on integers and integer-only ops on floats', () => {
    const cases: [UnaryName, Dtype][] = [
      ['exp', DT.i32],
      ['sqrt', DT.u8],
      ['gelu', DT.i64],
      ['neg', DT.bool],
      ['abs', DT.bool],
      ['floor', DT.bool],
      ['bitwiseNot', DT.f32],
      ['bitwiseNot', DT.f16],
    ];
    for (const [name, dtype] of cases) {
      h.reset();
      const a = h.put(dtype, [1, 2, 3]);
      const out = h.put(dtype, [7, 7, 7]);
      assert.equal(h.k.unary_contig(UnaryOp[name], dtype, out, a, 3), KernelStatus.unsupported, `${name} ${dtype}`);
      const desc = h.desc([3], [1], [1]);
      assert.equal(h.k.unary_strided(UnaryOp[name], dtype, out, a, desc), KernelStatus.unsupported);
      assert.deepEqual(h.get(dtype, out, 3), [7, 7, 7]);
    }
  });
});

// ---- binary -------------------------------------------------------------------------------------------------------

type BinaryName = keyof typeof BinaryOp;

interface BinaryCase {
  dtypes: readonly Dtype[];
  /** Float reference; `r` rounds to the compute type (fround for f16/bf16/f32, identity for f64). */
  f?: (a: number, b: number, r: (x: number) => number, alpha: number) => number;
  /** Integer (and Bool) reference in BigInt; the result is wrapped to the dtype. */
  int?: (a: bigint, b: bigint, alpha: bigint) => bigint;
  /** Bool-valued reference (comparisons, logical ops), on numbers. */
  test?: (a: number, b: number) => boolean;
  ulps?: [number, number];
  /** Avoid zero divisors in random data (integers). */
  nonzeroB?: boolean;
  /** Input range for b. */
  bRange?: [number, number];
}

const bdiv = (a: bigint, b: bigint) => (b === 0n ? 0n : a / b);
const bfloorDiv = (a: bigint, b: bigint) => {
  if (b === 0n) return 0n;
  const q = a / b;
  return (a % b !== 0n) && ((a < 0n) !== (b < 0n)) ? q - 1n : q;
};
const bremainder = (a: bigint, b: bigint) => {
  if (b === 0n) return 0n;
  const r = a % b;
  return r !== 0n && (r < 0n) !== (b < 0n) ? r + b : r;
};
const bpow = (a: bigint, e: bigint) => {
  if (e < 0n) return a === 1n ? 1n : a === -1n ? (e % 2n === 0n ? 1n : -1n) : 0n;
  let result = 1n;
  let base = BigInt.asIntN(64, a);
  while (e > 0n) {
    if (e & 1n) result = BigInt.asIntN(64, result * base);
    base = BigInt.asIntN(64, base * base);
    e >>= 1n;
  }
  return result;
};
function fdivFloor(a: number, b: number, r: (x: number) => number): number {
  if (b === 0) return a / b;
  const mod = a % b;
  let div = r((a - mod) / b);
  if (mod !== 0 && (b < 0) !== (mod < 0)) div = r(div - 1);
  if (div !== 0) {
    let fl = Math.floor(div);
    if (r(div - fl) > 0.5) fl += 1;
    return fl;
  }
  return Math.sign(a / b) < 0 || Object.is(a / b, -0) ? -0 : 0;
}
function fremainder(a: number, b: number, r: (x: number) => number): number {
  const mod = a % b;
  return mod !== 0 && (b < 0) !== (mod < 0) ? r(mod + b) : mod;
}
const nanMin = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b));
const nanMax = (a: number, b: number) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));

const BINARY: Record<BinaryName, BinaryCase> = {
  add: { dtypes: ALL_DTYPES, f: (a, b, r, al) => a + r(al * b), int: (a, b, al) => a + al * b },
  sub: { dtypes: ALL_BUT_BOOL, f: (a, b, r, al) => a - r(al * b), int: (a, b, al) => a - al * b },
  mul: { dtypes: ALL_DTYPES, f: (a, b) => a * b, int: (a, b) => a * b },
  div: { dtypes: FLOAT_DTYPES, f: (a, b) => a / b },
  divTrunc: { dtypes: ALL_BUT_BOOL, f: (a, b, r) => Math.trunc(r(a / b)), int: bdiv, nonzeroB: true },
  divFloor: { dtypes: ALL_BUT_BOOL, f: fdivFloor, int: bfloorDiv, nonzeroB: true },
  remainder: { dtypes: ALL_BUT_BOOL, f: fremainder, int: bremainder, nonzeroB: true },
  fmod: { dtypes: ALL_BUT_BOOL, f: (a, b) => a % b, int: (a, b) => (b === 0n ? 0n : a % b), nonzeroB: true },
  // JavaScriptCore's Math.pow is off by up to ~20 ulp for large results (the kernel uses musl's pow).
  pow: { dtypes: ALL_BUT_BOOL, f: (a, b) => Math.pow(a, b), int: bpow, ulps: [1, 32], bRange: [-3, 6] },
  minimum: { dtypes: ALL_DTYPES, f: nanMin, int: (a, b) => (a < b ? a : b) },
  maximum: { dtypes: ALL_DTYPES, f: nanMax, int: (a, b) => (a > b ? a : b) },
  atan2: { dtypes: FLOAT_DTYPES, f: Math.atan2, ulps: [1, 1] },
  bitwiseAnd: { dtypes: INT_AND_BOOL, int: (a, b) => a & b },
  bitwiseOr: { dtypes: INT_AND_BOOL, int: (a, b) => a | b },
  bitwiseXor: { dtypes: INT_AND_BOOL, int: (a, b) => a ^ b },
  logicalAnd: { dtypes: ALL_DTYPES, test: (a, b) => a !== 0 && b !== 0 },
  logicalOr: { dtypes: ALL_DTYPES, test: (a, b) => a !== 0 || b !== 0 },
  logicalXor: { dtypes: ALL_DTYPES, test: (a, b) => (a !== 0) !== (b !== 0) },
  eq: { dtypes: ALL_DTYPES, test: (a, b) => a === b },
  ne: { dtypes: ALL_DTYPES, test: (a, b) => a !== b },
  lt: { dtypes: ALL_DTYPES, test: (a, b) => a < b },
  le: { dtypes: ALL_DTYPES, test: (a, b) => a <= b },
  gt: { dtypes: ALL_DTYPES, test: (a, b) => a > b },
  ge: { dtypes: ALL_DTYPES, test: (a, b) => a >= b },
};

const computeRound = (dtype: Dtype) => (dtype === DT.f64 ? (x: number) => x : Math.fround);

function binaryExpected(name: BinaryName, dtype: Dtype, a: number, b: number, alpha: number): number {
  const c = BINARY[name];
  if (c.test) return c.test(a, b) ? 1 : 0;
  if (!isFloat(dtype)) {
    const al = dtype === DT.bool ? (alpha !== 0 ? 1n : 0n) : BigInt(wrapInt(dtype, alpha));
    return wrapInt(dtype, c.int!(BigInt(a), BigInt(b), al));
  }
  const r = computeRound(dtype);
  return roundTo(dtype, c.f!(a, b, r, r(alpha)));
}

/** a + alpha*b computed with one rounding (what relaxed_madd gives where the engine fuses it). */
function fusedExpected(name: BinaryName, dtype: Dtype, a: number, b: number, alpha: number): number {
  const al = computeRound(dtype)(alpha);
  return roundTo(dtype, name === 'add' ? a + al * b : a - al * b);
}

function checkBinary(name: BinaryName, dtype: Dtype, as: number[], bs: number[], got: number[], alpha: number) {
  const c = BINARY[name];
  const mayFuse = (name === 'add' || name === 'sub') && alpha !== 1 && isFloat(dtype);
  for (let i = 0; i < got.length; i++) {
    const want = binaryExpected(name, dtype, as[i], bs[i], alpha);
    if (mayFuse && Object.is(got[i], fusedExpected(name, dtype, as[i], bs[i], alpha))) continue;
    const msg = `${name} ${DTYPE_NAME[dtype]} a=${as[i]} b=${bs[i]} alpha=${alpha}: got ${got[i]}, want ${want}`;
    if (c.test || !isFloat(dtype)) {
      assert.equal(got[i], want, msg);
    } else {
      // f16/bf16 may be 1 ulp off where an f32 result sits at a rounding tie of the reference; alpha may fuse.
      const tol = dtype === DT.f32 ? c.ulps?.[0] ?? 0 : dtype === DT.f64 ? c.ulps?.[1] ?? 0 : 1;
      assert.ok(ulpDistance(dtype, got[i], want) <= tol, msg);
    }
  }
}

function binaryInputs(name: BinaryName, dtype: Dtype, n: number, seed: number): [number[], number[]] {
  const rand = mulberry32(seed);
  const c = BINARY[name];
  const as = randomValues(rand, dtype, n);
  const [blo, bhi] = c.bRange ?? [-10, 10];
  const bs = randomValues(rand, dtype, n, blo, bhi);
  if (dtype === DT.i64 && (name === 'mul' || name === 'pow')) {
    // keep products exact in float64 for the readback
    for (let i = 0; i < n; i++) as[i] = Math.round(as[i]) % 1000;
  }
  if (c.nonzeroB && !isFloat(dtype)) { for (let i = 0; i < n; i++) if (bs[i] === 0) bs[i] = 3; }
  if (isFloat(dtype) && n > 100) {
    for (let i = 0; i < SPECIALS.length; i++) {
      as[i] = roundTo(dtype, SPECIALS[i]);
      bs[i + SPECIALS.length] = roundTo(dtype, SPECIALS[i]);
      as[i + 2 * SPECIALS.length] = roundTo(dtype, SPECIALS[i]);
      bs[i + 2 * SPECIALS.length] = roundTo(dtype, SPECIALS[(i + 3) % SPECIALS.length]);
    }
  }
  if (n > 100 && !isFloat(dtype)) {
    for (let i = 0; i < 20; i++) bs[50 + i] = as[50 + i]; // equal pairs for comparisons
  }
  return [as, bs];
}

const outDtypeOfBinary = (name: BinaryName, dtype: Dtype) => (BINARY[name].test ? DT.bool : dtype);

describe('binary kernels', () => {
  for (const name of Object.keys(BINARY) as BinaryName[]) {
    it(`${name} matches the reference on every supported dtype: tensor-tensor, tensor-scalar, scalar-tensor`, () => {
      for (const dtype of BINARY[name].dtypes) {
        const alphas = name === 'add' || name === 'sub' ? [1, dtype === DT.bool ? 1 : 3] : [1];
        for (const n of LENGTHS) {
          for (const alpha of alphas) {
            h.reset();
            const [as, bs] = binaryInputs(name, dtype, n, 2000 + n * 7 + dtype);
            const a = h.put(dtype, as);
            const b = h.put(dtype, bs);
            const od = outDtypeOfBinary(name, dtype);
            const out = h.alloc(n * itemSize(od));
            const op = BinaryOp[name];
            assert.equal(h.k.binary_contig(op, dtype, out, a, b, n, alpha), KernelStatus.ok);
            checkBinary(name, dtype, as, bs, h.get(od, out, n), alpha);
            // scalar right / left with a scalar taken from the data (so it is representable)
            const s = bs[n >> 1];
            assert.equal(h.k.binary_scalar_contig(op, dtype, out, a, s, n, alpha), KernelStatus.ok);
            checkBinary(name, dtype, as, new Array(n).fill(s), h.get(od, out, n), alpha);
            const t = as[n >> 1];
            assert.equal(h.k.binary_rscalar_contig(op, dtype, out, t, b, n, alpha), KernelStatus.ok);
            checkBinary(name, dtype, new Array(n).fill(t), bs, h.get(od, out, n), alpha);
          }
        }
      }
    });
  }

  it('broadcasts with stride 0, transposes, and walks 4-d views with a zero-size edge case', () => {
    const rand = mulberry32(5);
    for (const name of ['add', 'mul', 'divFloor', 'maximum', 'lt', 'logicalXor', 'bitwiseXor'] as BinaryName[]) {
      for (const dtype of BINARY[name].dtypes) {
        h.reset();
        const [d0, d1, d2, d3] = [2, 3, 4, 5];
        const n = d0 * d1 * d2 * d3;
        const as = randomValues(rand, dtype, n);
        const bs = randomValues(rand, dtype, d3); // broadcast along dims 0-2
        if (BINARY[name].nonzeroB && !isFloat(dtype)) { for (let i = 0; i < d3; i++) if (bs[i] === 0) bs[i] = 2; }
        const a = h.put(dtype, as); // a stored as [d3, d2, d1, d0] and read transposed
        const b = h.put(dtype, bs);
        const od = outDtypeOfBinary(name, dtype);
        const out = h.alloc(n * itemSize(od));
        const desc = h.desc(
          [d0, d1, d2, d3],
          [d1 * d2 * d3, d2 * d3, d3, 1],
          [1, d0, d0 * d1, d0 * d1 * d2],
          [0, 0, 0, 1],
        );
        assert.equal(h.k.binary_strided(BinaryOp[name], dtype, out, a, b, desc, 1), KernelStatus.ok);
        const got = h.get(od, out, n);
        const wantA: number[] = [];
        const wantB: number[] = [];
        for (let i = 0; i < d0; i++) {
          for (let j = 0; j < d1; j++) {
            for (let k = 0; k < d2; k++) {
              for (let l = 0; l < d3; l++) {
                wantA.push(as[i + d0 * j + d0 * d1 * k + d0 * d1 * d2 * l]);
                wantB.push(bs[l]);
              }
            }
          }
        }
        checkBinary(name, dtype, wantA, wantB, got, 1);
        // A zero-size dimension writes nothing.
        const sentinel = h.get(od, out, n);
        const empty = h.desc([d0, 0, d3], [1, 1, 1], [1, 1, 1], [1, 1, 1]);
        assert.equal(h.k.binary_strided(BinaryOp[name], dtype, out, a, b, empty, 1), KernelStatus.ok);
        assert.deepEqual(h.get(od, out, n), sentinel);
      }
    }
  });

  it('handles ndim 0 and scalar forms on strided views', () => {
    h.reset();
    const a = h.put(DT.f32, [1.5]);
    const b = h.put(DT.f32, [2.25]);
    const out = h.alloc(4);
    assert.equal(h.k.binary_strided(BinaryOp.mul, DT.f32, out, a, b, h.desc([]), 1), KernelStatus.ok);
    assert.deepEqual(h.get(DT.f32, out, 1), [3.375]);
    // out[i][j] = 10 - a[j][i] over a 3x2 transpose, via the scalar-left form
    const xs = [1, 2, 3, 4, 5, 6];
    const m = h.put(DT.i32, xs); // stored [2, 3]
    const o2 = h.alloc(6 * 4);
    assert.equal(
      h.k.binary_rscalar_strided(BinaryOp.sub, DT.i32, o2, 10, m, h.desc([3, 2], [2, 1], [1, 3]), 1),
      KernelStatus.ok,
    );
    assert.deepEqual(h.get(DT.i32, o2, 6), [9, 6, 8, 5, 7, 4]);
    assert.equal(
      h.k.binary_scalar_strided(BinaryOp.ge, DT.i32, o2, m, 3, h.desc([3, 2], [2, 1], [1, 3]), 1),
      KernelStatus.ok,
    );
    assert.deepEqual(h.get(DT.bool, o2, 6), [0, 1, 0, 1, 1, 1]);
  });

  it('int64 arithmetic is exact and wraps at 64 bits', () => {
    h.reset();
    const big = [2n ** 62n, -(2n ** 63n), 2n ** 63n - 1n, 123456789012345678n];
    const other = [2n ** 62n, -1n, 1n, 1000n];
    const a = h.alloc(32), b = h.alloc(32), out = h.alloc(32);
    h.i64(a, 4).set(big);
    h.i64(b, 4).set(other);
    h.k.binary_contig(BinaryOp.add, DT.i64, out, a, b, 4, 1);
    assert.deepEqual([...h.i64(out, 4)], big.map((x, i) => BigInt.asIntN(64, x + other[i])));
    h.k.binary_contig(BinaryOp.mul, DT.i64, out, a, b, 4, 1);
    assert.deepEqual([...h.i64(out, 4)], big.map((x, i) => BigInt.asIntN(64, x * other[i])));
    h.k.binary_contig(BinaryOp.divTrunc, DT.i64, out, a, b, 4, 1);
    assert.deepEqual([...h.i64(out, 4)], [1n, BigInt.asIntN(64, 2n ** 63n), 2n ** 63n - 1n, 123456789012345n]);
    h.k.binary_contig(BinaryOp.lt, DT.i64, out, a, b, 4, 1);
    assert.deepEqual(h.get(DT.bool, out, 4), [0, 1, 0, 0]);
  });

  it('integer division by zero writes 0 instead of trapping; INT_MIN / -1 wraps', () => {
    for (const dtype of INT_DTYPES) {
      h.reset();
      const min = dtype === DT.u8 ? 0 : -(2 ** (itemSize(dtype) * 8 - 1));
      const a = h.put(dtype, [7, -7, min, 5]);
      const b = h.put(dtype, [0, 0, -1, 0]);
      const out = h.alloc(32);
      for (const op of [BinaryOp.divTrunc, BinaryOp.divFloor, BinaryOp.remainder, BinaryOp.fmod]) {
        assert.equal(h.k.binary_contig(op, dtype, out, a, b, 4, 1), KernelStatus.ok);
        const got = h.get(dtype, out, 4);
        assert.equal(got[0], 0);
        assert.equal(got[1], 0);
        assert.equal(got[3], 0);
        const want = op === BinaryOp.divTrunc || op === BinaryOp.divFloor ? wrapInt(dtype, -min) : 0;
        if (dtype !== DT.u8 && dtype !== DT.i64) assert.equal(got[2], want, `${op} ${dtype}`);
      }
    }
  });

  it('float division and remainder follow Python: signs, zero divisors, exact floor quotients', () => {
    h.reset();
    const as = [7, -7, 7, -7, 1, -1, 0, 5.5];
    const bs = [2, 2, -2, -2, 0, 0, 0, 0.5];
    const a = h.put(DT.f64, as);
    const b = h.put(DT.f64, bs);
    const out = h.alloc(64);
    h.k.binary_contig(BinaryOp.divFloor, DT.f64, out, a, b, 8, 1);
    assert.deepEqual(h.get(DT.f64, out, 8), [3, -4, -4, 3, Infinity, -Infinity, NaN, 11]);
    h.k.binary_contig(BinaryOp.remainder, DT.f64, out, a, b, 8, 1);
    assert.deepEqual(h.get(DT.f64, out, 8), [1, 1, -1, -1, NaN, NaN, NaN, 0]);
    h.k.binary_contig(BinaryOp.fmod, DT.f64, out, a, b, 8, 1);
    assert.deepEqual(h.get(DT.f64, out, 8), [1, -1, 1, -1, NaN, NaN, NaN, 0]);
  });

  it('integer pow uses PyTorch rules for negative exponents', () => {
    h.reset();
    const a = h.put(DT.i32, [2, 1, -1, -1, 3, 0, -2]);
    const b = h.put(DT.i32, [-1, -5, -3, -4, 0, 0, 31]);
    const out = h.alloc(28);
    h.k.binary_contig(BinaryOp.pow, DT.i32, out, a, b, 7, 1);
    assert.deepEqual(h.get(DT.i32, out, 7), [0, 1, -1, 1, 1, 1, -(2 ** 31)]);
  });

  it('returns unsupported for combinations PyTorch rejects, leaving the output untouched', () => {
    const cases: [BinaryName, Dtype][] = [
      ['sub', DT.bool],
      ['div', DT.i32],
      ['div', DT.bool],
      ['divFloor', DT.bool],
      ['pow', DT.bool],
      ['atan2', DT.i64],
      ['bitwiseAnd', DT.f32],
      ['bitwiseXor', DT.bf16],
    ];
    for (const [name, dtype] of cases) {
      h.reset();
      const a = h.put(dtype, [1, 1]);
      const out = h.put(dtype, [5, 5]);
      const op = BinaryOp[name];
      const msg = `${name} ${DTYPE_NAME[dtype]}`;
      assert.equal(h.k.binary_contig(op, dtype, out, a, a, 2, 1), KernelStatus.unsupported, msg);
      assert.equal(h.k.binary_scalar_contig(op, dtype, out, a, 1, 2, 1), KernelStatus.unsupported, msg);
      assert.equal(h.k.binary_rscalar_contig(op, dtype, out, 1, a, 2, 1), KernelStatus.unsupported, msg);
      assert.equal(h.k.binary_strided(op, dtype, out, a, a, h.desc([2], [1], [1], [1]), 1), KernelStatus.unsupported);
      assert.deepEqual(h.get(dtype, out, 2), [5, 5]);
    }
    h.reset();
    const p = h.alloc(64);
    assert.equal(h.k.binary_contig(99, DT.f32, p, p, p, 1, 1), KernelStatus.badArgument);
    assert.equal(h.k.binary_contig(BinaryOp.add, 9, p, p, p, 1, 1), KernelStatus.unsupported);
    assert.equal(h.k.binary_contig(BinaryOp.add, DT.f32, p, p, p, -1, 1), KernelStatus.badArgument);
    const tooDeep = h.desc(new Array(65).fill(1), new Array(65).fill(0), new Array(65).fill(0), new Array(65).fill(0));
    assert.equal(h.k.binary_strided(BinaryOp.add, DT.f32, p, p, p, tooDeep, 1), KernelStatus.badArgument);
  });
});

// ---- ternary, fill, copy ----------------------------------------------------------------------------------------------

describe('ternary kernels', () => {
  it('where selects per element for every dtype, contiguous and broadcast', () => {
    const rand = mulberry32(9);
    for (const dtype of ALL_DTYPES) {
      for (const n of LENGTHS) {
        h.reset();
        const conds = Array.from({ length: n }, () => (rand() < 0.5 ? 0 : rand() < 0.5 ? 1 : 2));
        const as = randomValues(rand, dtype, n);
        const bs = randomValues(rand, dtype, n);
        const c = h.put(DT.u8, conds);
        const a = h.put(dtype, as);
        const b = h.put(dtype, bs);
        const out = h.alloc(n * itemSize(dtype));
        assert.equal(h.k.where_contig(dtype, out, c, a, b, n), KernelStatus.ok);
        const want = conds.map((x, i) => (x ? as[i] : bs[i]));
        assert.deepEqual(h.get(dtype, out, n), want, DTYPE_NAME[dtype]);
        // where(cond, a, scalar b broadcast)
        assert.equal(h.k.where_strided(dtype, out, c, a, b, h.desc([n], [1], [1], [1], [0])), KernelStatus.ok);
        assert.deepEqual(h.get(dtype, out, n), conds.map((x, i) => (x ? as[i] : bs[0])));
      }
    }
  });

  it('clamp with scalar bounds, one-sided bounds and NaN, for every non-Bool dtype', () => {
    for (const dtype of ALL_BUT_BOOL) {
      for (const n of LENGTHS) {
        h.reset();
        const xs = randomValues(mulberry32(n + dtype), dtype, n);
        if (isFloat(dtype) && n > 10) xs[3] = NaN;
        const a = h.put(dtype, xs);
        const out = h.alloc(n * itemSize(dtype));
        const [lo, hi] = dtype === DT.u8 ? [50, 200] : [-3, 4];
        for (const flags of [ClampFlags.min | ClampFlags.max, ClampFlags.min, ClampFlags.max, 0]) {
          assert.equal(h.k.clamp_contig(dtype, out, a, n, lo, hi, flags), KernelStatus.ok);
          const want = xs.map((x) => {
            if (Number.isNaN(x)) return NaN;
            let y = x;
            if (flags & ClampFlags.min) y = Math.max(y, lo);
            if (flags & ClampFlags.max) y = Math.min(y, hi);
            return y;
          });
          assert.deepEqual(h.get(dtype, out, n), want, `${DTYPE_NAME[dtype]} flags=${flags}`);
        }
      }
    }
    h.reset();
    const a = h.put(DT.f32, [1, 5, -5]);
    const out = h.alloc(12);
    h.k.clamp_contig(DT.f32, out, a, 3, NaN, 2, ClampFlags.min | ClampFlags.max);
    assert.deepEqual(h.get(DT.f32, out, 3), [NaN, NaN, NaN]);
    h.k.clamp_contig(DT.f32, out, a, 3, 3, 2, ClampFlags.min | ClampFlags.max); // min > max gives max
    assert.deepEqual(h.get(DT.f32, out, 3), [2, 2, 2]);
    assert.equal(h.k.clamp_contig(DT.bool, out, a, 3, 0, 1, 3), KernelStatus.unsupported);
  });

  it('clamp with tensor bounds, broadcast and strided', () => {
    h.reset();
    const xs = [-5, 0, 5, 10, -10, 3];
    const a = h.put(DT.i32, xs);
    const lo = h.put(DT.i32, [-1, 1]);
    const hi = h.put(DT.i32, [4, 2]);
    const out = h.alloc(24);
    // [3, 2] view: lo and hi broadcast along rows
    const desc = h.desc([3, 2], [2, 1], [2, 1], [0, 1], [0, 1]);
    assert.equal(h.k.clamp_tensor_strided(DT.i32, out, a, lo, hi, desc, 3), KernelStatus.ok);
    assert.deepEqual(h.get(DT.i32, out, 6), [-1, 1, 4, 2, -1, 2]);
    assert.equal(h.k.clamp_tensor_strided(DT.i32, out, a, lo, 0, desc, ClampFlags.min), KernelStatus.ok);
    assert.deepEqual(h.get(DT.i32, out, 6), [-1, 1, 5, 10, -1, 3]);
    const f = h.put(DT.f64, [1, 2, 3]);
    const flo = h.put(DT.f64, [0, NaN, 5]);
    const fhi = h.put(DT.f64, [0.5, 9, 6]);
    assert.equal(h.k.clamp_tensor_contig(DT.f64, out, f, flo, fhi, 3, 3), KernelStatus.ok);
    assert.deepEqual(h.get(DT.f64, out, 3), [0.5, NaN, 5]);
  });

  it('lerp with scalar and tensor weights reproduces both ends exactly', () => {
    for (const dtype of FLOAT_DTYPES) {
      h.reset();
      const n = 1007;
      const rand = mulberry32(dtype);
      const as = randomValues(rand, dtype, n);
      const bs = randomValues(rand, dtype, n);
      const ws = randomValues(rand, dtype, n, -0.5, 1.5);
      const a = h.put(dtype, as);
      const b = h.put(dtype, bs);
      const w = h.put(dtype, ws);
      const out = h.alloc(n * itemSize(dtype));
      const r = computeRound(dtype);
      const lerp = (x: number, y: number, t: number) =>
        Math.abs(t) < 0.5 ? r(x + r(t * r(y - x))) : r(y - r(r(y - x) * r(1 - t)));
      assert.equal(h.k.lerp_contig(dtype, out, a, b, w, n), KernelStatus.ok);
      const got = h.get(dtype, out, n);
      for (let i = 0; i < n; i++) {
        const want = roundTo(dtype, lerp(as[i], bs[i], ws[i]));
        assert.ok(ulpDistance(dtype, got[i], want) <= 1, `lerp ${DTYPE_NAME[dtype]} ${got[i]} ${want}`);
      }
      for (const t of [0, 1, 0.25, 0.75]) {
        assert.equal(h.k.lerp_scalar_contig(dtype, out, a, b, t, n), KernelStatus.ok);
        const g = h.get(dtype, out, n);
        if (t === 0) assert.deepEqual(g, as);
        if (t === 1) assert.deepEqual(g, bs);
        for (let i = 0; i < n; i++) {
          assert.ok(ulpDistance(dtype, g[i], roundTo(dtype, lerp(as[i], bs[i], r(t)))) <= 1);
        }
      }
    }
    h.reset();
    const p = h.alloc(64);
    assert.equal(h.k.lerp_contig(DT.i32, p, p, p, p, 1), KernelStatus.unsupported);
    assert.equal(h.k.lerp_scalar_strided(DT.bool, p, p, p, 0.5, h.desc([1], [1], [1], [1])), KernelStatus.unsupported);
  });
});

describe('fill and copy', () => {
  it('fill converts the value like a cast and covers SIMD bodies and tails', () => {
    for (const dtype of ALL_DTYPES) {
      for (const n of [...LENGTHS, 64]) {
        for (const v of [0, 1, -1.75, 300.5, NaN]) {
          h.reset();
          const out = h.alloc(n * itemSize(dtype) + 16);
          h.u8(out, n * itemSize(dtype) + 16).fill(0xab);
          assert.equal(h.k.fill_contig(dtype, out, v, n), KernelStatus.ok);
          const want = isFloat(dtype)
            ? roundTo(dtype, v)
            : dtype === DT.bool
            ? (v !== 0 ? 1 : 0)
            : Number.isNaN(v)
            ? 0
            : wrapInt(dtype, Math.trunc(v));
          assert.deepEqual(h.get(dtype, out, n), new Array(n).fill(want), `${DTYPE_NAME[dtype]} n=${n} v=${v}`);
          assert.equal(h.u8(out + n * itemSize(dtype), 1)[0], 0xab, 'wrote past the end');
        }
      }
    }
  });

  it('fill_strided writes only the view and copy_strided gathers a transpose', () => {
    h.reset();
    const out = h.put(DT.f32, new Array(12).fill(0));
    assert.equal(h.k.fill_strided(DT.f32, out + 4, 2.5, h.desc([3, 2], [4, 2])), KernelStatus.ok);
    assert.deepEqual(h.get(DT.f32, out, 12), [0, 2.5, 0, 2.5, 0, 2.5, 0, 2.5, 0, 2.5, 0, 2.5]);
    for (const dtype of ALL_DTYPES) {
      const xs = randomValues(mulberry32(3), dtype, 12);
      const a = h.put(dtype, xs); // [3, 4]
      const t = h.alloc(12 * itemSize(dtype));
      assert.equal(h.k.copy_strided(dtype, t, a, h.desc([4, 3], [3, 1], [1, 4])), KernelStatus.ok);
      const want: number[] = [];
      for (let i = 0; i < 4; i++) for (let j = 0; j < 3; j++) want.push(xs[j * 4 + i]);
      assert.deepEqual(h.get(dtype, t, 12), want);
      assert.equal(h.k.copy_contig(dtype, t, a, 12), KernelStatus.ok);
      assert.deepEqual(h.get(dtype, t, 12), xs);
    }
    assert.equal(h.k.fill_contig(9, out, 1, 1), KernelStatus.unsupported);
  });
});

describe('plain SIMD build', () => {
  it('computes the same results as the relaxed build (within 1 ulp where relaxed may fuse)', () => {
    const plain: KernelHarness = harness({ flavor: 'simd' });
    assert.equal(plain.k.relaxedSimdBuild(), 0);
    for (const dtype of [DT.f32, DT.f64, DT.i32, DT.f16]) {
      for (const name of ['add', 'sub', 'mul', 'maximum', 'lt'] as BinaryName[]) {
        const n = 1007;
        const [as, bs] = binaryInputs(name, dtype, n, 42);
        const a = plain.put(dtype, as);
        const b = plain.put(dtype, bs);
        const od = outDtypeOfBinary(name, dtype);
        const out = plain.alloc(n * itemSize(od));
        for (const alpha of [1, 3]) {
          assert.equal(plain.k.binary_contig(BinaryOp[name], dtype, out, a, b, n, alpha), KernelStatus.ok);
          checkBinary(name, dtype, as, bs, plain.get(od, out, n), alpha);
        }
      }
    }
  });
});
