// Unary elementwise operators (neg, abs, sign, the float math functions, relu, gelu none/tanh, silu, rounding,
// logical_not, bitwise_not, isnan) and their in-place variants against float64 references on seeded random data
// with NaN, ±inf and ±0: every dtype each CPU kernel takes in PyTorch 1.13, odd, size-0, size-1 and 0-d shapes,
// non-contiguous and expanded inputs. Exactly rounded ops must match exactly; transcendental float32 ops within a
// few ulp of the float64 reference; float16/bfloat16 results within one ulp (computed in float32, rounded once).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  abs,
  bfloat16BitsToNumber,
  bitwiseNot,
  ceil,
  cos,
  erf,
  exp,
  expm1,
  float16BitsToNumber,
  floor,
  gelu,
  isnan,
  log,
  log1p,
  logicalNot,
  memoryStats,
  neg,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  reciprocal,
  relu,
  round,
  rsqrt,
  scope,
  sigmoid,
  sign,
  silu,
  sin,
  sqrt,
  tanh,
  Tensor,
  tensor,
  trunc,
} from '../../mod.ts';
import { ALL_DTYPES, restride, rng, values } from './_helpers.ts';

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
    case 'uint8':
      return Number(BigInt.asUintN(8, BigInt(Math.trunc(x))));
    default:
      return Number(BigInt.asIntN(INT_BITS[dtype], BigInt(Math.trunc(x))));
  }
}

const SQRT_PI = Math.sqrt(Math.PI);

/**
 * e^(-s·x²) for s = 1 or 1/2, with x² split exactly into p + err (Veltkamp/Dekker): the rounding error of x*x
 * alone would cost the tails of erf and gelu dozens of ulps.
 */
function expNegSquare(x: number, s: number): number {
  const c = 134217729 * x, hi = c - (c - x), lo = x - hi;
  const p = x * x;
  const err = hi * hi - p + 2 * hi * lo + lo * lo;
  return Math.exp(-p * s) * (1 - err * s);
}

/** erf(z) for 0 <= z < 0.5 by its positive series 2/√π e^(-z²) Σ 2ⁿ z^(2n+1) / (1·3···(2n+1)); `e` = e^(-z²). */
function erfSeries(z: number, e: number): number {
  let term = z, sum = z;
  for (let n = 1; n < 200 && term > 1e-18 * sum; n++) {
    term *= (2 * z * z) / (2 * n + 1);
    sum += term;
  }
  return (2 / SQRT_PI) * e * sum;
}

/** erfc(z) for z >= 0.5 by its continued fraction, evaluated backwards (5000 terms: good to an ulp); e = e^(-z²). */
function erfcFraction(z: number, e: number): number {
  let f = z;
  for (let k = 5000; k >= 1; k--) f = z + k / 2 / f;
  return e / SQRT_PI / f;
}

function erfRef(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (!Number.isFinite(x)) return Math.sign(x);
  const a = Math.abs(x), e = expNegSquare(a, 1);
  const r = a < 0.5 ? erfSeries(a, e) : 1 - erfcFraction(a, e);
  return x < 0 ? -r : r;
}

/** gelu(x) = x/2 · erfc(-x/√2), with erfc evaluated so that the negative tail keeps its relative precision. */
function geluRef(x: number): number {
  if (Number.isNaN(x) || x === -Infinity) return NaN; // -inf * 0, as PyTorch computes it
  if (x === Infinity) return Infinity;
  const z = -x * Math.SQRT1_2, e = expNegSquare(x, 0.5); // e = e^(-z²)
  const a = Math.abs(z);
  const erfA = a < 0.5 ? erfSeries(a, e) : 1 - erfcFraction(a, e);
  const erfc = z >= 0.5 ? erfcFraction(z, e) : z >= 0 ? 1 - erfA : 1 + erfA;
  return (x / 2) * erfc;
}

function geluTanhRef(x: number): number {
  if (!Number.isFinite(x)) return x > 0 ? x : NaN;
  const y = Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x);
  // 1 + tanh(y) = 2 / (1 + e^(-2y)), which keeps its precision for very negative y.
  return (x / 2) * (2 / (1 + Math.exp(-2 * y)));
}

const sigmoidRef = (x: number) => 1 / (1 + Math.exp(-x));

function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r === 0 && x < 0 ? -0 : r;
}

interface UnaryOp {
  readonly name: string;
  readonly fn: (x: Tensor) => Tensor;
  readonly ref: (x: number, dtype: string) => number;
  /** How the result is typed: the input dtype, the default float for integers, or bool. */
  readonly kind: 'same' | 'float' | 'bool';
  readonly dtypes: readonly string[];
  /** Allowed error in float32 ulps (float64 gets the same count, float16/bfloat16 one ulp); 0: exact. */
  readonly ulp?: number;
  /** Absolute slack for results that cancel to tiny values (gelu's negative tail). */
  readonly atol?: number;
}

const ALL = ALL_DTYPES as readonly string[];
const NO_BOOL = ALL.filter((d) => d !== 'bool');
const NO_HALF = ALL.filter((d) => d !== 'float16');
const INTEGRAL = ['uint8', 'int8', 'int16', 'int32', 'int64'];
const ROUNDING = [...INTEGRAL, 'bfloat16', 'float32', 'float64'];
const FLOAT_NO_HALF = ['bfloat16', 'float32', 'float64'];
const isNaNish = (x: number) => Number.isNaN(x);

const UNARY_OPS: readonly UnaryOp[] = [
  { name: 'neg', fn: neg, ref: (x) => -x, kind: 'same', dtypes: NO_BOOL },
  { name: 'abs', fn: abs, ref: Math.abs, kind: 'same', dtypes: NO_BOOL },
  {
    name: 'sign',
    fn: sign,
    ref: (x, d) => (d === 'bool' ? x : x > 0 ? 1 : x < 0 ? -1 : 0),
    kind: 'same',
    dtypes: ALL,
  },
  { name: 'exp', fn: exp, ref: Math.exp, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'log', fn: log, ref: Math.log, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'log1p', fn: log1p, ref: Math.log1p, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'expm1', fn: expm1, ref: Math.expm1, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'sqrt', fn: sqrt, ref: Math.sqrt, kind: 'float', dtypes: NO_HALF },
  { name: 'rsqrt', fn: rsqrt, ref: (x) => 1 / Math.sqrt(x), kind: 'float', dtypes: NO_HALF, ulp: 1 },
  { name: 'sin', fn: sin, ref: Math.sin, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'cos', fn: cos, ref: Math.cos, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'tanh', fn: tanh, ref: Math.tanh, kind: 'float', dtypes: NO_HALF, ulp: 2 },
  { name: 'sigmoid', fn: sigmoid, ref: sigmoidRef, kind: 'float', dtypes: NO_HALF, ulp: 3 },
  { name: 'erf', fn: erf, ref: erfRef, kind: 'float', dtypes: NO_HALF, ulp: 3 },
  { name: 'reciprocal', fn: reciprocal, ref: (x) => 1 / x, kind: 'float', dtypes: ALL },
  {
    name: 'relu',
    fn: relu,
    ref: (x) => (isNaNish(x) ? x : Math.max(x, 0)),
    kind: 'same',
    dtypes: NO_BOOL.filter((d) => d !== 'float16'),
  },
  {
    name: 'gelu',
    fn: (x) => gelu(x),
    ref: geluRef,
    kind: 'same',
    dtypes: FLOAT_NO_HALF,
    ulp: 4,
    atol: 1e-7,
  },
  {
    name: 'gelu tanh',
    fn: (x) => gelu(x, { approximate: 'tanh' }),
    ref: geluTanhRef,
    kind: 'same',
    dtypes: FLOAT_NO_HALF,
    ulp: 4,
    atol: 1e-7,
  },
  { name: 'silu', fn: silu, ref: (x) => x * sigmoidRef(x), kind: 'same', dtypes: FLOAT_NO_HALF, ulp: 3 },
  { name: 'floor', fn: floor, ref: Math.floor, kind: 'same', dtypes: ROUNDING },
  { name: 'ceil', fn: ceil, ref: Math.ceil, kind: 'same', dtypes: ROUNDING },
  { name: 'round', fn: round, ref: roundHalfEven, kind: 'same', dtypes: ROUNDING },
  { name: 'trunc', fn: trunc, ref: Math.trunc, kind: 'same', dtypes: ROUNDING },
  { name: 'logical_not', fn: logicalNot, ref: (x) => +(x === 0), kind: 'bool', dtypes: ALL },
  {
    name: 'bitwise_not',
    fn: bitwiseNot,
    ref: (x, d) => (d === 'bool' ? 1 - x : Number(~BigInt(x))),
    kind: 'same',
    dtypes: ['bool', ...INTEGRAL],
  },
  { name: 'isnan', fn: isnan, ref: (x) => +Number.isNaN(x), kind: 'bool', dtypes: ALL },
];

// ---- data --------------------------------------------------------------------------------------------------------

function randomData(n: number, dtype: string, next: () => number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = next();
    if (dtype === 'bool') out.push(r < 0.5 ? 0 : 1);
    else if (!isFloat(dtype)) out.push(dtype === 'uint8' ? Math.floor(r * 256) : Math.floor(r * 256) - 128);
    else if (r < 0.06) out.push([NaN, Infinity, -Infinity, 0, -0][Math.floor(next() * 5)]);
    else if (r < 0.16) out.push(Math.round(next() * 16 - 8) / 2); // integers and halves: rounding ties
    else if (r < 0.2) out.push((next() - 0.5) * 1e-3); // tiny values: log1p, expm1, erf near 0
    else out.push(next() * 16 - 8);
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

function make(shape: number[], dtype: string, next: () => number): Tensor {
  const v = randomData(numelOf(shape), dtype, next);
  const flat = tensor(dtype === 'bool' ? v.map((x) => x !== 0) : v, { dtype: dtype as 'float32' });
  return restride(flat, shape, contiguousStrides(shape), 0);
}

/** A transposed (non-contiguous) view of fresh data. */
function transposed(rows: number, cols: number, dtype: string, next: () => number): Tensor {
  return restride(make([cols, rows], dtype, next), [rows, cols], [1, rows], 0);
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

const LAYOUTS: ReadonlyArray<{ name: string; make: (d: string, next: () => number) => Tensor }> = [
  { name: 'odd contiguous', make: (d, n) => make([7, 9], d, n) },
  { name: 'transposed', make: (d, n) => transposed(5, 6, d, n) },
  { name: 'step-3 view', make: (d, n) => restride(make([31], d, n), [10], [3], 1) },
  { name: 'expanded', make: (d, n) => restride(make([5], d, n), [3, 5], [0, 1], 0) },
  { name: 'size-0', make: (d, n) => make([4, 0], d, n) },
  { name: 'size-1 dims', make: (d, n) => make([1, 6, 1], d, n) },
  { name: '0-d', make: (d, n) => make([], d, n) },
];

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

function assertValues(
  actual: Tensor,
  expected: number[],
  ulp: number,
  atol: number,
  what: string,
  inputs?: number[],
): void {
  const got = values(actual);
  assert.equal(got.length, expected.length, `${what}: numel`);
  for (let i = 0; i < got.length; i++) {
    const g = got[i], e = expected[i];
    if (g === e || (Number.isNaN(g) && Number.isNaN(e))) continue;
    const ok = Number.isFinite(e) && Number.isFinite(g) &&
      Math.abs(g - e) <= ulp * ulpOf(e, actual.dtype.name) + atol;
    if (!ok) assert.fail(`${what}: element ${i} is ${g}, expected ${e}${inputs ? ` (input ${inputs[i]})` : ''}`);
  }
}

function outDtypeOf(op: UnaryOp, dtype: string): string {
  if (op.kind === 'bool') return 'bool';
  return op.kind === 'float' && !isFloat(dtype) ? 'float32' : dtype;
}

function check(op: UnaryOp, x: Tensor, what: string): Tensor {
  const dtype = x.dtype.name;
  const out = op.fn(x);
  const outDtype = outDtypeOf(op, dtype);
  assert.equal(out.dtype.name, outDtype, `${what}: dtype`);
  assert.deepEqual([...out.shape], [...x.shape], `${what}: shape`);
  const compute = op.kind === 'float' ? outDtype : dtype;
  const expected = values(x).map((v) => castRef(op.ref(castRef(v, compute), dtype), outDtype));
  const exact = op.ulp === undefined || !isFloat(outDtype);
  const ulp = exact ? 0 : outDtype === 'float16' || outDtype === 'bfloat16' ? 1 : op.ulp!;
  const atol = exact || op.atol === undefined ? 0 : op.atol * (outDtype === 'float64' ? 1e-8 : 1);
  assertValues(out, expected, ulp, atol, what, values(x));
  return out;
}

// ---- tests -------------------------------------------------------------------------------------------------------

describe('unary operators against float64 references', () => {
  for (const op of UNARY_OPS) {
    it(
      `${op.name} on every dtype its CPU kernel takes, in every layout`,
      scoped(() => {
        const next = rng(op.name.length * 104729 + op.name.charCodeAt(1));
        for (const dtype of op.dtypes) {
          for (const layout of LAYOUTS) check(op, layout.make(dtype, next), `${op.name} ${dtype} ${layout.name}`);
        }
      }),
    );
  }

  it(
    'round is half-to-even and keeps -0, as torch.round',
    scoped(() => {
      // torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5])) -> [0., 2., 2., -0., -2., -2.]
      const r = values(round(tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5])));
      assert.deepEqual(r, [0, 2, 2, -0, -2, -2]);
      assert.ok(Object.is(r[3], -0));
      const big = values(round(tensor([8388607.5, 4503599627370495.5, -4503599627370494.5], { dtype: 'float64' })));
      assert.deepEqual(big, [8388608, 4503599627370496, -4503599627370494]);
      assert.deepEqual(values(round(tensor([0.5, 1.5, 2.5], { dtype: 'bfloat16' }))), [0, 2, 2]);
    }),
  );

  it(
    'sign gives 0 for NaN and ±0; isnan and the rounding ops pass integers through',
    scoped(() => {
      // torch.sign(torch.tensor([nan, -0., 0., -3., inf])) -> [0., 0., 0., -1., 1.]
      assert.deepEqual(values(sign(tensor([NaN, -0, 0, -3, Infinity]))), [0, 0, 0, -1, 1]);
      assert.deepEqual(values(isnan(tensor([NaN, Infinity, 0]))), [1, 0, 0]);
      assert.deepEqual(values(isnan(tensor([1, 2], { dtype: 'int64' }))), [0, 0]);
      const i = tensor([-3, 7], { dtype: 'int16' });
      for (const f of [floor, ceil, round, trunc]) {
        const r = f(i);
        assert.equal(r.dtype.name, 'int16');
        assert.deepEqual(values(r), [-3, 7]);
      }
      // torch.neg(uint8 [1, 0, 255]) wraps; torch.abs(int8 -128) stays -128.
      assert.deepEqual(values(neg(tensor([1, 0, 255], { dtype: 'uint8' }))), [255, 0, 1]);
      assert.deepEqual(values(abs(tensor([-128], { dtype: 'int8' }))), [-128]);
      assert.deepEqual(values(reciprocal(tensor([0, 2], { dtype: 'int32' }))), [Infinity, 0.5]);
      assert.deepEqual(values(logicalNot(tensor([NaN, 0, -0, 2]))), [0, 1, 1, 0]);
    }),
  );

  it(
    'erf and gelu in float64 are within two ulps of 40-digit values (mpmath)',
    scoped(() => {
      const ex = [-3.5, -1.8479357175529003, -0.3, 1e-5, 0.7, 2.2, 5.5];
      const erfExact = [
        -0.99999925690162765859,
        -0.99103473255935630945,
        -0.32862675945912741619,
        0.000011283791670579000273,
        0.67780119383741844228,
        0.99813715370201811014,
        0.99999999999999264215,
      ];
      assertValues(erf(tensor(ex, { dtype: 'float64' })), erfExact, 2, 0, 'erf float64', ex);
      const gx = [-30, -8, -3.943273212760687, -1, 0.5, 3.943273212760687];
      const geluExact = [
        -1.4720141781444561179e-196,
        -4.9767684594174272988e-15,
        -0.0001584742326509750634,
        -0.15865525393145705141,
        0.34573123063700655182,
        3.9431147385280358993,
      ];
      assertValues(gelu(tensor(gx, { dtype: 'float64' })), geluExact, 2, 0, 'gelu float64', gx);
    }),
  );

  it(
    'gelu (none and tanh) and silu keep their precision in the tails',
    scoped(() => {
      const xs = [-30, -12, -5.888952359829007, -1, -1e-8, 0, 1e-8, 0.5, 3, 12];
      const x = tensor(xs, { dtype: 'float64' });
      const g = values(gelu(x));
      const t = values(gelu(x, { approximate: 'tanh' }));
      const s = values(silu(x));
      xs.forEach((v, i) => {
        const close = (a: number, e: number) => Math.abs(a - e) <= 1e-13 * Math.abs(e) + 1e-300;
        assert.ok(close(g[i], geluRef(v)), `gelu(${v}) = ${g[i]}, expected ${geluRef(v)}`);
        assert.ok(close(t[i], geluTanhRef(v)), `gelu tanh(${v}) = ${t[i]}, expected ${geluTanhRef(v)}`);
        assert.ok(close(s[i], v * sigmoidRef(v)), `silu(${v}) = ${s[i]}`);
      });
      // Values PyTorch 1.13 prints: gelu(tensor([-1., 0.5, 3.])) and gelu(..., approximate='tanh').
      assert.deepEqual(values(gelu(tensor([-1, 0.5, 3]))).map((v) => v.toFixed(4)), ['-0.1587', '0.3457', '2.9960']);
      assert.deepEqual(
        values(gelu(tensor([-1, 0.5, 3]), { approximate: 'tanh' })).map((v) => v.toFixed(4)),
        ['-0.1588', '0.3457', '2.9964'],
      );
    }),
  );
});

describe('float32 sin and cos over the whole float range', () => {
  it(
    'stay within 1 ulp of the true value, huge arguments included (PyTorch: SLEEF, 1 ulp)',
    scoped(() => {
      // Values where a lossy argument reduction goes wrong (8.77e26 gave 0.24 for sin, whose true value is ~1),
      // then a seeded sweep over every binade.
      const next = rng(31);
      const xs = [8.43835682327257e26, 8.766722149440333e26, -1.1906297485465137e27, 1e20, 3.4e38, -3.4e38, 1e-30];
      for (let i = 0; i < 4000; i++) xs.push((next() < 0.5 ? -1 : 1) * next() * 2 ** (Math.floor(next() * 250) - 125));
      const x = tensor(new Float32Array(xs));
      const inputs = values(x);
      for (const [name, got, f] of [['sin', values(sin(x)), Math.sin], ['cos', values(cos(x)), Math.cos]] as const) {
        inputs.forEach((v, i) => {
          const want = f(v), ulp = Math.max(Math.abs(want) * 2 ** -23, 2 ** -149);
          assert.ok(Math.abs(got[i] - want) <= ulp, `${name}(${v}) = ${got[i]}, expected ${want}`);
        });
      }
    }),
  );
});

describe('in-place unary operators', () => {
  const IN_PLACE: ReadonlyArray<[string, (t: Tensor) => Tensor, string]> = [
    ['neg_', (t) => t.neg_(), 'neg'],
    ['exp_', (t) => t.exp_(), 'exp'],
    ['tanh_', (t) => t.tanh_(), 'tanh'],
    ['sigmoid_', (t) => t.sigmoid_(), 'sigmoid'],
    ['relu_', (t) => t.relu_(), 'relu'],
  ];

  it(
    'write into self (contiguous, transposed, 0-d, size-0), return it and bump its version',
    scoped(() => {
      const next = rng(41);
      for (const [name, fn, opName] of IN_PLACE) {
        const op = UNARY_OPS.find((o) => o.name === opName)!;
        for (const dtype of op.dtypes.filter((d) => op.kind === 'same' || isFloat(d))) {
          for (const self of [make([3, 5], dtype, next), transposed(4, 3, dtype, next), make([], dtype, next)]) {
            const expected = values(self).map((v) => castRef(op.ref(v, dtype), dtype));
            const version = self.version;
            assert.equal(fn(self), self);
            assert.equal(self.version, version + 1);
            const ulp = op.ulp === undefined || !isFloat(dtype)
              ? 0
              : dtype === 'float32' || dtype === 'float64'
              ? op.ulp
              : 1;
            assertValues(self, expected, ulp, 0, `${name} ${dtype} [${self.shape}]`);
          }
          const empty = make([0, 3], dtype, next);
          assert.equal(fn(empty), empty);
        }
      }
    }),
  );

  it(
    'an in-place op writes through a strided view into its base and bumps the shared version',
    scoped(() => {
      const base = tensor([1, -2, 3, -4, 5, -6]);
      viewOf(base, [3], [2], 1).relu_();
      assert.deepEqual(values(base), [1, 0, 3, 0, 5, 0]);
      viewOf(base, [3], [2], 0).neg_();
      assert.deepEqual(values(base), [-1, 0, -3, 0, -5, 0]);
      assert.equal(base.version, 2);
    }),
  );
});
