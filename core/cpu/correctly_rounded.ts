/**
 * Correctly rounded `log`, `sin` and `cos` of a float64, for the samplers that promise PyTorch's values.
 *
 * PyTorch's float64 normal sampler calls glibc's `log`, `cos` and `sin`, which are correctly rounded but for rare
 * inputs. JavaScript's `Math.log/cos/sin` are not specified that tightly and differ between engines (V8's fdlibm
 * ports are off by one ulp on about 1 input in 15; JavaScriptCore calls the system libm), so the same seed gave
 * different float64 normals in Node, Deno and Bun. These functions round once a value accurate to about 2^-64
 * (table-driven, with exact products) when the error bound shows that rounding it is safe (Ziv's test), else a
 * double-double evaluation (about 100 significant bits), so every runtime gives the same, correctly rounded, result.
 *
 * @module
 */

// Results of the double-double operations below: (hi, lo) with |lo| <= ulp(hi) / 2.
let rh = 0;
let rl = 0;

const SPLITTER = 134217729; // 2^27 + 1: Dekker's split of a double into two 26-bit halves

/** (ah + al) * (bh + bl) into (rh, rl). */
function mulDD(ah: number, al: number, bh: number, bl: number): void {
  const p = ah * bh;
  let t = SPLITTER * ah;
  const a1 = t - (t - ah), a2 = ah - a1;
  t = SPLITTER * bh;
  const b1 = t - (t - bh), b2 = bh - b1;
  let e = ((a1 * b1 - p) + a1 * b2 + a2 * b1) + a2 * b2; // p + e = ah * bh exactly
  e += ah * bl + al * bh;
  rh = p + e;
  rl = e - (rh - p);
}

/** (ah + al) + (bh + bl) into (rh, rl), with both error terms kept. */
function addDD(ah: number, al: number, bh: number, bl: number): void {
  const s = ah + bh;
  let v = s - ah;
  let e = (ah - (s - v)) + (bh - v);
  const t = al + bl;
  v = t - al;
  const f = (al - (t - v)) + (bl - v);
  e += t;
  const h = s + e;
  e = e - (h - s) + f;
  rh = h + e;
  rl = e - (rh - h);
}

/** 1 / d as a double-double (hi, lo), for the series coefficients. */
function reciprocal(d: number): [number, number] {
  const hi = 1 / d;
  mulDD(hi, 0, d, 0); // hi * d exactly
  return [hi, ((1 - rh) - rl) / d];
}

// log(m) = 2 s (1 + z/3 + z^2/5 + ...), s = (m - 1) / (m + 1), z = s^2 <= 0.0295 for m in [sqrt(1/2), sqrt(2)].
// Terms with k >= LOG_DD_TERMS weigh less than 2^-55 of the sum and are summed in double.
const LOG_TERMS = 22;
const LOG_DD_TERMS = 11;
// Series coefficients, as the tables below, are computed on first use, not at import.
let LOG_COEF: Array<[number, number]> | undefined;
const LN2_HI = 0.6931471805599453, LN2_LO = 2.3190468138462996e-17;
const SQRT2 = Math.SQRT2;

/** log(x) for a finite x > 0, x != 1, as a double-double into (rh, rl). */
function logDD(x: number): void {
  let e = 0;
  if (x < 2 ** -1000) {
    x *= 2 ** 100; // subnormals and near: scale into the normal range first (exact)
    e = -100;
  }
  let k = Math.floor(Math.log2(x));
  let m = x * 2 ** -k; // exact: a power of two
  if (m >= 2) {
    m /= 2;
    k++;
  } else if (m < 1) {
    m *= 2;
    k--;
  }
  if (m > SQRT2) {
    m /= 2;
    k++;
  }
  e += k;
  // s = (m - 1) / (m + 1) as a double-double; m - 1 is exact (Sterbenz).
  const num = m - 1;
  const dh = m + 1, dl = m - (dh - 1);
  const sh = num / dh;
  mulDD(sh, 0, dh, dl);
  const sl = ((num - rh) - rl) / dh;
  mulDD(sh, sl, sh, sl);
  const zh = rh, zl = rl;
  LOG_COEF ??= Array.from({ length: LOG_TERMS }, (_, k) => reciprocal(2 * k + 1));
  let acc = LOG_COEF[LOG_TERMS - 1][0];
  for (let i = LOG_TERMS - 2; i >= LOG_DD_TERMS; i--) acc = acc * zh + LOG_COEF[i][0];
  let ah = acc, al = 0;
  for (let i = LOG_DD_TERMS - 1; i >= 0; i--) {
    mulDD(ah, al, zh, zl);
    addDD(rh, rl, LOG_COEF[i][0], LOG_COEF[i][1]);
    ah = rh;
    al = rl;
  }
  mulDD(ah, al, 2 * sh, 2 * sl);
  if (e === 0) return;
  const lh = rh, ll = rl;
  mulDD(e, 0, LN2_HI, LN2_LO);
  addDD(rh, rl, lh, ll);
}

// The fast path: x = 2^e m, m in [0.75, 1.5), c = 1 + j/128 nearest to m, r = (m - c)/c with |r| < 2^-7.5;
// log x = e ln2 + log c + log1p(r). ln2 in three parts (the first with 42 bits, so e * LN2_A is exact).
const LN2_A = 0.6931471805598903, LN2_B = 5.497923018708371e-14, LN2_C = 1.94704509238075e-31;
const LOG_TABLE_MIN = -32; // j from -32 (c = 0.75) to 64 (c = 1.5)
const LOGC_HI = new Float64Array(97);
const LOGC_LO = new Float64Array(97);
// The tables are filled on first use, not at import (Note [Operators materialize on first use] in
// core/dispatch/dispatcher.ts: importing the package does no work its first `add` does not need).
let logTableReady = false;
function fillLogTable(): void {
  for (let j = LOG_TABLE_MIN; j <= 64; j++) {
    if (j === 0) continue;
    logDD(1 + j / 128);
    LOGC_HI[j - LOG_TABLE_MIN] = rh;
    LOGC_LO[j - LOG_TABLE_MIN] = rl;
  }
  logTableReady = true;
}
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // index of the high word

/**
 * The float64 nearest to the natural logarithm of `x`.
 *
 * @example
 * ```ts
 * import { crLog } from './correctly_rounded.ts';
 * crLog(0.1); // -2.3025850929940455
 * ```
 */
export function crLog(x: number): number {
  if (!(x > 0) || x === Infinity) return Math.log(x); // NaN, negatives, 0 and Infinity: exact special values
  if (x === 1) return 0;
  bits[0] = x;
  const high = words[HIGH];
  const biased = high >>> 20;
  if (biased === 0) {
    logDD(x); // subnormal
    return rh + rl;
  }
  let e = biased - 1023;
  words[HIGH] = (high & 0xfffff) | 0x3ff00000;
  let m = bits[0]; // [1, 2)
  if (m >= 1.5) {
    m *= 0.5;
    e++;
  }
  const j = Math.round((m - 1) * 128);
  const c = 1 + j / 128;
  const t = m - c; // exact (Sterbenz)
  const r = t / c;
  // r's rounding error: t - r c exactly (Dekker's product; c has at most 8 bits).
  let v = SPLITTER * r;
  const r1 = v - (v - r), r2 = r - r1;
  v = SPLITTER * c;
  const c1 = v - (v - c), c2 = c - c1;
  const p = r * c;
  const pe = ((r1 * c1 - p) + r1 * c2 + r2 * c1) + r2 * c2;
  const rLow = ((t - p) - pe) / c;
  // r^2 exactly, for the -r^2/2 term.
  const q = r * r;
  const qe = ((r1 * r1 - q) + 2 * r1 * r2) + r2 * r2;
  const tail = r * q *
    (1 / 3 + r * (-1 / 4 + r * (1 / 5 + r * (-1 / 6 + r * (1 / 7 + r * (-1 / 8 + r * (1 / 9 + r * (-1 / 10))))))));
  const a = e * LN2_A; // exact
  if (!logTableReady) fillLogTable();
  const ch = j === 0 ? 0 : LOGC_HI[j - LOG_TABLE_MIN], cl = j === 0 ? 0 : LOGC_LO[j - LOG_TABLE_MIN];
  // s = a + ch + r - q/2 with the rounding errors of each sum kept.
  let s = a + ch;
  v = s - a;
  let low = (a - (s - v)) + (ch - v);
  let s2 = s + r;
  v = s2 - s;
  low += (s - (s2 - v)) + (r - v);
  s = s2;
  const hq = -0.5 * q;
  s2 = s + hq;
  v = s2 - s;
  low += (s - (s2 - v)) + (hq - v);
  s = s2;
  low += e * LN2_B + e * LN2_C + cl + rLow - r * rLow - 0.5 * qe + tail;
  const h = s + low;
  const l = low - (h - s);
  const bound = 2 ** -64 * Math.abs(r) + 2 ** -96 * (Math.abs(a) + Math.abs(ch));
  if (h + (l + bound) === h + (l - bound)) return h + l;
  logDD(x);
  return rh + rl;
}

// sin r = r (1 - z/3! + z^2/5! - ...), cos r = 1 - z/2! + z^2/4! - ..., z = r^2 <= (pi/4)^2 after reduction.
const TRIG_TERMS = 16;
const TRIG_DD_TERMS = 9;
function factorialReciprocals(odd: boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let fh = 1, fl = 0; // (2k + odd)! as a double-double, exact while it fits in 106 bits
  for (let k = 0; k < TRIG_TERMS; k++) {
    if (k > 0) {
      mulDD(fh, fl, (2 * k - 1 + (odd ? 1 : 0)) * (2 * k + (odd ? 1 : 0)), 0);
      fh = rh;
      fl = rl;
    }
    // 1 / (fh + fl) to double-double accuracy, with the sign of the series.
    const qh = 1 / fh;
    mulDD(qh, 0, fh, fl);
    const ql = ((1 - rh) - rl) / fh;
    const sign = k % 2 === 0 ? 1 : -1;
    out.push([sign * qh, sign * ql]);
  }
  return out;
}
let SIN_COEF: Array<[number, number]> | undefined;
let COS_COEF: Array<[number, number]> | undefined;
const PIO2_1 = 1.5707963267948966, PIO2_2 = 6.123233995736766e-17, PIO2_3 = -1.4973849048591698e-33;
const TWO_OVER_PI = 0.6366197723675814;
const TRIG_MAX = 2 ** 20; // beyond this the three-part pi/2 no longer reduces exactly enough

/** Series `coef` in z = (zh, zl), into (rh, rl). */
function trigSeries(coef: Array<[number, number]>, zh: number, zl: number): void {
  let acc = coef[TRIG_TERMS - 1][0];
  for (let i = TRIG_TERMS - 2; i >= TRIG_DD_TERMS; i--) acc = acc * zh + coef[i][0];
  let ah = acc, al = 0;
  for (let i = TRIG_DD_TERMS - 1; i >= 0; i--) {
    mulDD(ah, al, zh, zl);
    addDD(rh, rl, coef[i][0], coef[i][1]);
    ah = rh;
    al = rl;
  }
}

// sin and cos of a reduced argument r = (r0h, r0l), |r| <= pi/4 + a hair, as double-doubles.
let sinHi = 0, sinLo = 0, cosHi = 0, cosLo = 0;
function sinCosReduced(r0h: number, r0l: number): void {
  mulDD(r0h, r0l, r0h, r0l);
  const zh = rh, zl = rl;
  trigSeries(SIN_COEF ??= factorialReciprocals(true), zh, zl);
  mulDD(rh, rl, r0h, r0l);
  sinHi = rh;
  sinLo = rl;
  trigSeries(COS_COEF ??= factorialReciprocals(false), zh, zl);
  cosHi = rh;
  cosLo = rl;
}

/** The double-double evaluation of crSinCos. */
function sinCosSlow(x: number, out: Float64Array): void {
  // r = x - k pi/2 in double-double, |r| <= pi/4 (a hair more from rounding k).
  const k = Math.round(x * TWO_OVER_PI);
  let r0h = x, r0l = 0;
  if (k !== 0) {
    mulDD(k, 0, PIO2_1, 0);
    const p1h = rh, p1l = rl;
    addDD(x, 0, -p1h, -p1l);
    const ah = rh, al = rl;
    mulDD(k, 0, PIO2_2, 0);
    const p2h = rh, p2l = rl;
    addDD(ah, al, -p2h, -p2l - k * PIO2_3);
    r0h = rh;
    r0l = rl;
  }
  sinCosReduced(r0h, r0l);
  const s = sinHi + sinLo, c = cosHi + cosLo;
  switch (((k % 4) + 4) % 4) {
    case 0:
      out[0] = s;
      out[1] = c;
      break;
    case 1:
      out[0] = c;
      out[1] = -s;
      break;
    case 2:
      out[0] = -s;
      out[1] = -c;
      break;
    default:
      out[0] = -c;
      out[1] = s;
  }
}

// The fast path, for |x| <= FAST_TRIG_MAX: x = j pi/128 + r, |r| <= pi/256, and
// sin x = sin(a) cos(r) + cos(a) sin(r), cos x = cos(a) cos(r) - sin(a) sin(r) with a = j pi/128 from a table of
// double-doubles. pi/128 in three parts, the first two with 44 bits so that j * part is exact for j < 512.
const PI128_1 = 0.024543692606171064, PI128_2 = -8.039549375414092e-16, PI128_3 = 4.537274959342751e-30;
const PI128_HI = 0.02454369260617026, PI128_LO = 9.567553118338697e-19;
const FAST_TRIG_MAX = 6.3; // j <= 257
const TRIG_TABLE = 258;
const SIN_A_HI = new Float64Array(TRIG_TABLE), SIN_A_LO = new Float64Array(TRIG_TABLE);
const COS_A_HI = new Float64Array(TRIG_TABLE), COS_A_LO = new Float64Array(TRIG_TABLE);
let trigTableReady = false; // filled on first use, as the log table
function fillTrigTable(): void {
  trigTableReady = true;
  for (let j = 0; j < TRIG_TABLE; j++) {
    // j pi/128 = q pi/2 + i pi/128, |i| <= 32
    const q = Math.round(j / 64), i = j - 64 * q;
    mulDD(i, 0, PI128_HI, PI128_LO);
    sinCosReduced(rh, rl);
    const quadrant = q % 4;
    const sh = [sinHi, cosHi, -sinHi, -cosHi][quadrant], sl = [sinLo, cosLo, -sinLo, -cosLo][quadrant];
    const ch = [cosHi, -sinHi, -cosHi, sinHi][quadrant], cl = [cosLo, -sinLo, -cosLo, sinLo][quadrant];
    SIN_A_HI[j] = sh + 0; // + 0: no negative zero in the table
    SIN_A_LO[j] = sl + 0;
    COS_A_HI[j] = ch + 0;
    COS_A_LO[j] = cl + 0;
  }
}

/**
 * Writes the float64 nearest to `sin(x)` into `out[0]` and the one nearest to `cos(x)` into `out[1]`
 * (for |x| <= 2^20; beyond that, `Math.sin/cos`).
 *
 * @example
 * ```ts
 * import { crSinCos } from './correctly_rounded.ts';
 * const out = new Float64Array(2);
 * crSinCos(1, out); // out: [0.8414709848078965, 0.5403023058681398]
 * ```
 */
export function crSinCos(x: number, out: Float64Array): void {
  const ax = Math.abs(x);
  if (!(ax <= FAST_TRIG_MAX) || ax < 2 ** -20) {
    if (!(ax <= TRIG_MAX)) {
      out[0] = Math.sin(x);
      out[1] = Math.cos(x);
    } else if (x === 0) {
      out[0] = x; // keeps the sign of zero
      out[1] = 1;
    } else sinCosSlow(x, out);
    return;
  }
  const j = Math.round(ax * (128 / Math.PI));
  // r = ax - j pi/128: the first difference is exact (Sterbenz, or j = 0), the second kept as a double-double.
  const t1 = ax - j * PI128_1;
  const t2 = -j * PI128_2;
  let r = t1 + t2;
  let v = r - t1;
  let rLow = (t1 - (r - v)) + (t2 - v) - j * PI128_3;
  v = r + rLow;
  rLow -= v - r;
  r = v;
  // r^2 exactly (Dekker) for cos r - 1 = -r^2/2 + ...; the higher terms in double.
  v = SPLITTER * r;
  const r1 = v - (v - r), r2 = r - r1;
  const z = r * r;
  const ze = ((r1 * r1 - z) + 2 * r1 * r2) + r2 * r2;
  const cosM1 = -0.5 * z - (0.5 * ze + r * rLow) + z * z * (1 / 24 + z * (-1 / 720 + z * (1 / 40320)));
  const sinTail = rLow + r * z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (1 / 362880))));
  if (!trigTableReady) fillTrigTable();
  const sah = SIN_A_HI[j], sal = SIN_A_LO[j], cah = COS_A_HI[j], cal = COS_A_LO[j];
  const bound = 2 ** -63 * (Math.abs(sah) + Math.abs(cah) * Math.abs(r)) + 2 ** -125;
  // sin: sah + cah r (exact product) + the small terms.
  let h = sinPlusProduct(sah, cah, r);
  let low = prodLow + sal + cal * r + sah * cosM1 + cah * sinTail;
  let s = h + low;
  let l = low - (s - h);
  const boundCos = 2 ** -63 * (Math.abs(cah) + Math.abs(sah) * Math.abs(r)) + 2 ** -125;
  if (s + (l + bound) !== s + (l - bound)) {
    sinCosSlow(x, out);
    return;
  }
  const sinX = s + l;
  // cos: cah - sah r + the small terms.
  h = sinPlusProduct(cah, -sah, r);
  low = prodLow + cal - sal * r + cah * cosM1 - sah * sinTail;
  s = h + low;
  l = low - (s - h);
  if (s + (l + boundCos) !== s + (l - boundCos)) {
    sinCosSlow(x, out);
    return;
  }
  out[0] = x < 0 ? -sinX : sinX;
  out[1] = s + l;
}

let prodLow = 0;
/** a + b * r rounded, its exact error (Dekker's product, then Knuth's sum) into prodLow. */
function sinPlusProduct(a: number, b: number, r: number): number {
  let v = SPLITTER * b;
  const b1 = v - (v - b), b2 = b - b1;
  v = SPLITTER * r;
  const r1 = v - (v - r), r2 = r - r1;
  const p = b * r;
  const pe = ((b1 * r1 - p) + b1 * r2 + b2 * r1) + b2 * r2;
  const s = a + p;
  v = s - a;
  prodLow = (a - (s - v)) + (p - v) + pe;
  return s;
}
