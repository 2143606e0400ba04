/**
 * CPU kernels of the random operators. They draw from the same mt19937 stream as PyTorch and transform it
 * the way PyTorch 1.13's CPU kernels do, so that a seed gives PyTorch's values: see Note [PyTorch's samplers].
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import { type DType, getDefaultDtype } from '../tensor/dtype.ts';
import { defaultCpuGenerator, type Generator } from '../tensor/generator.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import {
  checkNormalArgs,
  checkRandomRange,
  checkUniformBounds,
  randintMeta,
  type RandomBackendOpName,
} from '../ops/decl_random.ts';
import { checkLayout, checkSize } from '../ops/decl_factories.ts';
import { inferDenseStrides } from '../ops/view_layout.ts';
import { dtypeRounder, fma, fmaf, storeValues } from './factories.ts';
import { emptyCpu, hasInternalOverlap } from './iterator.ts';
import { crLog, crSinCos } from './correctly_rounded.ts';
import { hostElements } from './boundary.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

// Note [PyTorch's samplers]
// - Uniform (`uniform_real_distribution<T>`): float types take the low `digits` bits of one 32-bit draw
//   (24 for float, 11 for half, 8 for bfloat16) times 2^-digits; double takes 53 bits of a 64-bit value made
//   of two draws. The result is `x * (to - from) + from`, fused into one rounding by GCC.
// - Normal, contiguous with at least 16 elements (`normal_fill`): every element first gets a uniform sample,
//   then each block of 16 becomes 8 Box-Muller pairs (j, j + 8); when the size is not a multiple of 16 the
//   last 16 elements are redrawn and transformed again. float32 runs the AVX2 kernel, whose log and sincos
//   are Cephes polynomials in float arithmetic (emulated below step by step, with GCC's FMA contractions).
// - Normal otherwise (`normal_distribution<double>`): two double uniforms per pair, `r * cos` returned and
//   `r * sin` cached in the generator for the next sample, across calls.
// - Integers in [from, to): `draw % (to - from) + from`, a 64-bit draw when the range needs it.
// float64 normal samples go through correctly rounded log/cos/sin (correctly_rounded.ts), the same in every
// runtime; glibc's (what PyTorch calls) are not always correctly rounded: about 0.1% of float64 normals differ
// from PyTorch's in the last bit.

const TWO_POW_M24 = 2 ** -24;
const TWO_POW_M53 = 2 ** -53;
const f = Math.fround;
const sinCos = new Float64Array(2); // crSinCos's output: [sin, cos]

/** Element offsets of a CPU tensor in TensorIterator's order (memory order for dense layouts). */
function iterationOffsets(t: Tensor): Float64Array {
  const shape = t.shape, strides = t.stride(), nd = shape.length, n = t.numel;
  // Dense strides in the tensor's dim order rank the dims from innermost to outermost.
  const dense = inferDenseStrides(shape, strides);
  const order = shape.map((_, i) => i).sort((a, b) => dense[b] - dense[a] || a - b);
  const sizes = order.map((d) => shape[d]), steps = order.map((d) => strides[d]);
  const offsets = new Float64Array(n);
  const index = new Array<number>(nd).fill(0);
  let offset = t.storageOffset;
  for (let i = 0; i < n; i++) {
    offsets[i] = offset;
    for (let d = nd - 1; d >= 0; d--) {
      if (++index[d] < sizes[d]) {
        offset += steps[d];
        break;
      }
      offset -= steps[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
  return offsets;
}

function checkWritable(t: Tensor): void {
  if (hasInternalOverlap(t)) {
    throw new RuntimeError(
      'unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.',
    );
  }
}

/** Writes `values` (in iteration order) into `t`. */
function store(t: Tensor, values: ArrayLike<number>): void {
  storeValues(t, values, t.isContiguous() ? undefined : iterationOffsets(t));
}

interface FloatFormat {
  /** Rounds a float to the dtype. */
  readonly round: (x: number) => number;
  /** `numeric_limits<T>::digits`. */
  readonly digits: number;
}

function floatFormat(dtype: DType): FloatFormat {
  switch (dtype.name) {
    case 'float16':
      return { round: dtypeRounder(dtype), digits: 11 };
    case 'bfloat16':
      return { round: dtypeRounder(dtype), digits: 8 };
    case 'float32':
      return { round: f, digits: 24 };
    default:
      return { round: (x) => x, digits: 53 };
  }
}

// ---------------------------------------------------------------------------------------------------------
// uniform_
// ---------------------------------------------------------------------------------------------------------

/** `n` samples of `uniform_real_distribution<T>(from, to)` for a floating dtype. */
function uniformValues(g: Generator, n: number, dtype: DType, from: number, to: number): Float64Array {
  const out = new Float64Array(n);
  if (dtype.name === 'float64') {
    const range = to - from;
    if (from === 0 && to === 1) { for (let i = 0; i < n; i++) out[i] = g.random53() * TWO_POW_M53; }
    else for (let i = 0; i < n; i++) out[i] = fma(g.random53() * TWO_POW_M53, range, from);
    return out;
  }
  const { round, digits } = floatFormat(dtype);
  const mask = 2 ** digits - 1, scale = 2 ** -digits;
  const lo = round(from), hi = round(to), range = round(hi - lo);
  for (let i = 0; i < n; i++) out[i] = fmaf((g.random() & mask) * scale, range, lo);
  return out;
}

function uniformCpu(self: Tensor, from: number, to: number, generator: Generator | null): Tensor {
  const g = generator ?? defaultCpuGenerator();
  return g.use(() => uniformWith(self, from, to, g));
}

function uniformWith(self: Tensor, from: number, to: number, g: Generator): Tensor {
  self.assertAlive('uniform_');
  checkUniformBounds(self.dtype, from, to);
  checkWritable(self);
  const n = self.numel;
  if (n === 0) return self;
  if (self.dtype.name === 'float32' && from === 0 && to === 1 && self.isContiguous()) {
    // The common case (`rand`): straight into memory, 24 bits of one draw each.
    const data = hostElements(self, 'uniform_', n) as Float32Array;
    for (let i = 0; i < n; i++) data[i] = (g.random() & 0xffffff) * TWO_POW_M24;
    return self;
  }
  store(self, uniformValues(g, n, self.dtype, from, to));
  return self;
}

// ---------------------------------------------------------------------------------------------------------
// normal_
// ---------------------------------------------------------------------------------------------------------

// avx_mathfun.h's constants, as float32.
const LOG_P = [
  7.0376836292e-2,
  -1.1514610310e-1,
  1.1676998740e-1,
  -1.2420140846e-1,
  1.4249322787e-1,
  -1.6668057665e-1,
  2.0000714765e-1,
  -2.4999993993e-1,
  3.3333331174e-1,
].map(f);
const LOG_Q1 = f(-2.12194440e-4), LOG_Q2 = f(0.693359375), SQRT_HALF = f(0.707106781186547524);
const MIN_NORM = 1.1754943508222875e-38;
const DP1 = f(-0.78515625), DP2 = f(-2.4187564849853515625e-4), DP3 = f(-3.77489497744594108e-8);
const SIN_P0 = f(-1.9515295891e-4), SIN_P1 = f(8.3321608736e-3), SIN_P2 = f(-1.6666654611e-1);
const COS_P0 = f(2.443315711809948e-5), COS_P1 = f(-1.388731625493765e-3), COS_P2 = f(4.166664568298827e-2);
const FOUR_OVER_PI = f(1.27323954473516);
const TWO_PI_F = f(2 * Math.PI);
const BITS_F = new Float32Array(1);
const BITS_I = new Int32Array(BITS_F.buffer);

/** `log256_ps` for one lane, with the FMA contractions GCC makes in PyTorch's AVX2 build. */
function logAvx(x: number): number {
  if (x <= 0) return NaN;
  BITS_F[0] = Math.max(x, MIN_NORM);
  const exponent = (BITS_I[0] >>> 23) - 0x7f;
  BITS_I[0] = (BITS_I[0] & ~0x7f800000) | 0x3f000000; // the mantissa, as a value in [0.5, 1)
  let m = BITS_F[0];
  let e = f(exponent + 1);
  const below = m < SQRT_HALF;
  const add = below ? m : 0;
  m = f(m - 1);
  if (below) e = f(e - 1);
  m = f(m + add);
  const z = f(m * m);
  let y = LOG_P[0];
  for (let i = 1; i < 9; i++) y = fmaf(y, m, LOG_P[i]);
  y = f(y * m);
  y = fmaf(y, z, f(e * LOG_Q1));
  y = fmaf(-z, 0.5, y);
  return fmaf(e, LOG_Q2, f(m + y));
}

let sinOut = 0, cosOut = 0;

/** `sincos256_ps` for one lane; writes `sinOut` and `cosOut`. */
function sinCosAvx(angle: number): void {
  let x = Math.abs(angle);
  let j = Math.trunc(f(x * FOUR_OVER_PI));
  j = (j + 1) & ~1;
  const y = f(j);
  const sinSign = (angle < 0) !== ((j & 4) !== 0);
  const cosSign = (~(j - 2) & 4) !== 0;
  const usePolyOne = (j & 2) === 0;
  x = fmaf(y, DP1, x);
  x = fmaf(y, DP2, x);
  x = fmaf(y, DP3, x);
  const z = f(x * x);
  let c = fmaf(fmaf(COS_P0, z, COS_P1), z, COS_P2);
  c = fmaf(f(c * z), z, -f(z * 0.5));
  c = f(c + 1);
  let s = f(fmaf(fmaf(SIN_P0, z, SIN_P1), z, SIN_P2) * z);
  s = fmaf(s, x, x);
  const sine = usePolyOne ? s : c, cosine = usePolyOne ? c : s;
  sinOut = sinSign ? -sine : sine;
  cosOut = cosSign ? -cosine : cosine;
}

/** `normal_fill_16_AVX2` on `data[o..o+16)`. */
function normalFill16Avx(data: Float32Array, o: number, mean: number, std: number): void {
  for (let j = 0; j < 8; j++) {
    const u1 = f(1 - data[o + j]), u2 = data[o + j + 8];
    const radius = f(Math.sqrt(f(-2 * logAvx(u1))));
    sinCosAvx(f(TWO_PI_F * u2));
    data[o + j] = fmaf(f(radius * cosOut), std, mean);
    data[o + j + 8] = fmaf(f(radius * sinOut), std, mean);
  }
}

/** `normal_fill_16<scalar_t>` on `data[o..o+16)` in double (float64) or half arithmetic (`round`). */
function normalFill16(
  data: Float64Array,
  o: number,
  mean: number,
  std: number,
  round?: (x: number) => number,
  bfloat = false,
): void {
  for (let j = 0; j < 8; j++) {
    if (round === undefined) {
      const u1 = 1 - data[o + j], u2 = data[o + j + 8];
      const radius = Math.sqrt(-2 * crLog(u1));
      crSinCos(2 * Math.PI * u2, sinCos);
      data[o + j] = fma(radius * sinCos[1], std, mean);
      data[o + j + 8] = fma(radius * sinCos[0], std, mean);
    } else if (bfloat) {
      // c10's BFloat16-math.h gives bfloat16 its own std::log/sqrt/cos/sin, and bfloat16 arithmetic rounds
      // every operation to bfloat16.
      const u1 = round(1 - data[o + j]), u2 = data[o + j + 8];
      const radius = round(Math.sqrt(round(-2 * round(Math.log(u1)))));
      const theta = round(f(2 * Math.PI * u2));
      data[o + j] = round(round(round(radius * round(Math.cos(theta))) * std) + mean);
      data[o + j + 8] = round(round(round(radius * round(Math.sin(theta))) * std) + mean);
    } else {
      // float16 operands convert to float for logf/cosf/sinf and each result is stored as float16.
      const u1 = round(1 - data[o + j]), u2 = data[o + j + 8];
      const radius = round(f(Math.sqrt(f(-2 * f(Math.log(u1))))));
      const theta = round(f(2 * Math.PI * u2));
      data[o + j] = round(fmaf(f(radius * f(Math.cos(theta))), std, mean));
      data[o + j + 8] = round(fmaf(f(radius * f(Math.sin(theta))), std, mean));
    }
  }
}

/** One sample of `normal_distribution<double>(mean, std)`, using and refilling the generator's cache. */
function normalScalar(g: Generator, mean: number, std: number): number {
  let value: number;
  if (g.nextDoubleNormal !== undefined) {
    value = g.nextDoubleNormal;
    g.nextDoubleNormal = undefined;
  } else {
    const u1 = g.random53() * TWO_POW_M53, u2 = g.random53() * TWO_POW_M53;
    const r = Math.sqrt(-2 * crLog(1 - u2));
    crSinCos(2 * Math.PI * u1, sinCos);
    g.nextDoubleNormal = r * sinCos[0];
    value = r * sinCos[1];
  }
  return fma(value, std, mean);
}

function normalCpu(self: Tensor, mean: number, std: number, generator: Generator | null): Tensor {
  const g = generator ?? defaultCpuGenerator();
  return g.use(() => normalWith(self, mean, std, g));
}

function normalWith(self: Tensor, mean: number, std: number, g: Generator): Tensor {
  self.assertAlive('normal_');
  checkNormalArgs(self.dtype, std);
  checkWritable(self);
  const n = self.numel;
  if (n === 0) return self;
  if (n < 16 || !self.isContiguous()) {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = normalScalar(g, mean, std);
    store(self, values);
    return self;
  }
  if (self.dtype.name === 'float32') {
    const data = hostElements(self, 'normal_', n) as Float32Array;
    for (let i = 0; i < n; i++) data[i] = (g.random() & 0xffffff) * TWO_POW_M24;
    const m = f(mean), s = f(std);
    for (let i = 0; i + 16 <= n; i += 16) normalFill16Avx(data, i, m, s);
    if (n % 16 !== 0) {
      for (let i = n - 16; i < n; i++) data[i] = (g.random() & 0xffffff) * TWO_POW_M24;
      normalFill16Avx(data, n - 16, m, s);
    }
    return self;
  }
  const half = self.dtype.itemSize === 2, bfloat = self.dtype.name === 'bfloat16';
  const { round } = floatFormat(self.dtype);
  const data = uniformValues(g, n, self.dtype, 0, 1);
  const m = round(mean), s = round(std);
  for (let i = 0; i + 16 <= n; i += 16) normalFill16(data, i, m, s, half ? round : undefined, bfloat);
  if (n % 16 !== 0) {
    data.set(uniformValues(g, 16, self.dtype, 0, 1), n - 16);
    normalFill16(data, n - 16, m, s, half ? round : undefined, bfloat);
  }
  store(self, data);
  return self;
}

// ---------------------------------------------------------------------------------------------------------
// Factories: rand, randn, randint
// ---------------------------------------------------------------------------------------------------------

function randomFactory(size: readonly number[], dtype: DType, layout: string | null, fill: (t: Tensor) => void) {
  checkLayout(layout);
  return filledOrFreed(emptyCpu(checkSize(size), dtype), fill);
}

/** Integers in [from, to) as `random_(from, to)` draws them, written to a fresh contiguous tensor. */
function fillRandomRange(out: Tensor, from: number, to: number, g: Generator): void {
  const n = out.numel;
  if (n === 0) return;
  const range = to - from;
  const wide = range >= 2 ** 32 && ['int64', 'float64', 'float32', 'bfloat16'].includes(out.dtype.name);
  if (!wide && Math.abs(from) + range <= 2 ** 53) {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = (g.random() % range) + from;
    storeValues(out, values);
    return;
  }
  // 64-bit arithmetic, wrapping as PyTorch's uint64 + int64 does.
  const bigRange = BigInt(range), bigFrom = BigInt(from);
  const draw = wide ? () => g.random64() : () => BigInt(g.random());
  if (out.dtype.name === 'int64') {
    const data = hostElements(out, 'random_', n) as BigInt64Array;
    for (let i = 0; i < n; i++) data[i] = BigInt.asIntN(64, (draw() % bigRange) + bigFrom);
    return;
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = Number(BigInt.asIntN(64, (draw() % bigRange) + bigFrom));
  storeValues(out, values);
}

type Rest = [DType | null, string | null, Device | null, boolean | null];

const rand = (size: readonly number[], g: Generator | null, dtype: DType | null, layout: string | null) => {
  const d = dtype ?? getDefaultDtype();
  checkUniformBounds(d, 0, 1);
  return randomFactory(size, d, layout, (t) => uniformCpu(t, 0, 1, g));
};
const randn = (size: readonly number[], g: Generator | null, dtype: DType | null, layout: string | null) => {
  const d = dtype ?? getDefaultDtype();
  checkNormalArgs(d, 1);
  return randomFactory(size, d, layout, (t) => normalCpu(t, 0, 1, g));
};
const randint = (
  low: number,
  high: number,
  size: readonly number[],
  g: Generator | null,
  dtype: DType | null,
  layout: string | null,
) => {
  const meta = randintMeta(low, high, size, dtype, layout);
  const [from, to] = checkRandomRange(meta.dtype, low, high);
  return randomFactory(size, meta.dtype, layout, (t) => {
    const gen = g ?? defaultCpuGenerator();
    gen.use(() => fillRandomRange(t, from, to, gen));
  });
};

/**
 * CPU kernels of the random operators (registered by register.ts).
 *
 * @example
 * ```ts
 * import { CPU_RANDOM_KERNELS } from './random.ts';
 * typeof CPU_RANDOM_KERNELS.normal_; // 'function'
 * ```
 */
export const CPU_RANDOM_KERNELS: { readonly [K in RandomBackendOpName]: Kernel } = {
  'rand':
    ((_hi: number, _lo: number, size: readonly number[], ...[dtype, layout]: Rest) =>
      rand(size, null, dtype, layout)) as Kernel,
  'rand.generator':
    ((_hi: number, _lo: number, size: readonly number[], g: Generator | null, ...[dtype, layout]: Rest) =>
      rand(size, g, dtype, layout)) as Kernel,
  'randn':
    ((_hi: number, _lo: number, size: readonly number[], ...[dtype, layout]: Rest) =>
      randn(size, null, dtype, layout)) as Kernel,
  'randn.generator':
    ((_hi: number, _lo: number, size: readonly number[], g: Generator | null, ...[dtype, layout]: Rest) =>
      randn(size, g, dtype, layout)) as Kernel,
  'randint':
    ((_hi: number, _lo: number, high: number, size: readonly number[], ...[dtype, layout]: Rest) =>
      randint(0, high, size, null, dtype, layout)) as Kernel,
  'randint.generator': ((
    _hi: number,
    _lo: number,
    high: number,
    size: readonly number[],
    g: Generator | null,
    ...[dtype, layout]: Rest
  ) => randint(0, high, size, g, dtype, layout)) as Kernel,
  'randint.low': ((
    _hi: number,
    _lo: number,
    low: number,
    high: number,
    size: readonly number[],
    ...[dtype, layout]: Rest
  ) => randint(low, high, size, null, dtype, layout)) as Kernel,
  'randint.low_generator': ((
    _hi: number,
    _lo: number,
    low: number,
    high: number,
    size: readonly number[],
    g: Generator | null,
    ...[dtype, layout]: Rest
  ) => randint(low, high, size, g, dtype, layout)) as Kernel,
  'uniform_':
    ((_hi: number, _lo: number, self: Tensor, from: number, to: number, g: Generator | null) =>
      uniformCpu(self, from, to, g)) as Kernel,
  'normal_':
    ((_hi: number, _lo: number, self: Tensor, mean: number, std: number, g: Generator | null) =>
      normalCpu(self, mean, std, g)) as Kernel,
};
