/**
 * Correctly rounded `log`, `sin` and `cos` of a float64, for the samplers that promise PyTorch's values.
 *
 * PyTorch's float64 normal sampler calls glibc's `log`, `cos` and `sin`, which are correctly rounded but for rare
 * inputs. JavaScript's `Math.log/cos/sin` are not specified that tightly and differ between engines (V8's fdlibm
 * ports are off by one ulp on about 1 input in 15; JavaScriptCore calls the system libm), so the same seed gave
 * different float64 normals in Node, Deno and Bun. These functions evaluate in double-double arithmetic (about
 * 100 significant bits) and round once, so every runtime gives the same, correctly rounded, result.
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
const LOG_COEF = Array.from({ length: LOG_TERMS }, (_, k) => reciprocal(2 * k + 1));
const LN2_HI = 0.6931471805599453, LN2_LO = 2.3190468138462996e-17;
const SQRT2 = Math.SQRT2;

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
  if (e === 0) return rh + rl;
  const lh = rh, ll = rl;
  mulDD(e, 0, LN2_HI, LN2_LO);
  addDD(rh, rl, lh, ll);
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
const SIN_COEF = factorialReciprocals(true);
const COS_COEF = factorialReciprocals(false);
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
  if (!(Math.abs(x) <= TRIG_MAX)) {
    out[0] = Math.sin(x);
    out[1] = Math.cos(x);
    return;
  }
  if (x === 0) {
    out[0] = x; // keeps the sign of zero
    out[1] = 1;
    return;
  }
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
  mulDD(r0h, r0l, r0h, r0l);
  const zh = rh, zl = rl;
  trigSeries(SIN_COEF, zh, zl);
  mulDD(rh, rl, r0h, r0l);
  const s = rh + rl;
  trigSeries(COS_COEF, zh, zl);
  const c = rh + rl;
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
