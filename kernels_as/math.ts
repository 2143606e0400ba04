// Scalar math the AssemblyScript standard library lacks (erf, erfc) and the composite activations built on it.
//
// Note [Activation precision]: gelu and erf for f16/bf16/f32 are evaluated in f64 and rounded once. The f32
// formula 0.5*x*(1+erf(x/sqrt 2)) cancels catastrophically for x < -3 (the result is tiny, 1+erf is computed
// from two numbers near 1), and even the erfc form loses ~2*t^2 ulp to the rounding of t = x/sqrt 2. In f64
// both errors sit far below f32's ulp, so the f32 result is within 1 ulp of the true value. f64 results use
// gelu64Precise, which also removes the rounding error of t (PyTorch's f64 kernel uses the cancelling 1 + erf form).
//
// erf and erfc below are a port of musl's src/math/erf.c, whose origin is FreeBSD's s_erf.c:
// ====================================================
// Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
// Developed at SunPro, a Sun Microsystems, Inc. business.
// Permission to use, copy, modify, and distribute this
// software is freely granted, provided that this notice
// is preserved.
// ====================================================

// @ts-ignore: decorator
@lazy const erx = 8.45062911510467529297e-1;
// @ts-ignore: decorator
@lazy const efx8 = 1.02703333676410069053e+0;
// @ts-ignore: decorator
@lazy const efx = 1.28379167095512586316e-1;

// @ts-ignore: decorator
@inline
function erfSmallR(z: f64): f64 {
  // (erf(x) - x) / x on |x| < 0.84375, as r/s with z = x*x.
  const r = 1.28379167095512558561e-1 +
    z * (-3.25042107247001499370e-1 +
      z * (-2.84817495755985104766e-2 + z * (-5.77027029648944159157e-3 + z * -2.37630166566501626084e-5)));
  const s = 1.0 +
    z * (3.97917223959155352819e-1 +
      z * (6.50222499887672944485e-2 +
        z * (5.08130628187576562776e-3 + z * (1.32494738004321644526e-4 + z * -3.96022827877536812320e-6))));
  return r / s;
}

// @ts-ignore: decorator
@inline
function erfMidP(s: f64): f64 {
  return -2.36211856075265944077e-3 +
    s * (4.14856118683748331666e-1 +
      s * (-3.72207876035701323847e-1 +
        s * (3.18346619901161753674e-1 +
          s * (-1.10894694282396677476e-1 + s * (3.54783043256182359371e-2 + s * -2.16637559486879084300e-3)))));
}

// @ts-ignore: decorator
@inline
function erfMidQ(s: f64): f64 {
  return 1.0 +
    s * (1.06420880400844228286e-1 +
      s * (5.40397917702171048937e-1 +
        s * (7.18286544141962662868e-2 +
          s * (1.26171219808761642112e-1 + s * (1.36370839120290507362e-2 + s * 1.19844998467991074170e-2)))));
}

/** exp(-x*x - 0.5625 + R/S) / x for 1.25 <= x < 28 (x positive), the asymptotic erfc form. */
function erfcTail(x: f64, ix: u32): f64 {
  const s = 1.0 / (x * x);
  let R: f64, S: f64;
  if (ix < 0x4006db6d) {
    R = -9.86494403484714822705e-3 +
      s * (-6.93858572707181764372e-1 +
        s * (-1.05586262253232909814e+1 +
          s * (-6.23753324503260060396e+1 +
            s * (-1.62396669462573470355e+2 +
              s * (-1.84605092906711035994e+2 + s * (-8.12874355063065934246e+1 + s * -9.81432934416914548592e+0))))));
    S = 1.0 +
      s * (1.96512716674392571292e+1 +
        s * (1.37657754143519042600e+2 +
          s * (4.34565877475229228821e+2 +
            s * (6.45387271733267880336e+2 +
              s * (4.29008140027567833386e+2 +
                s * (1.08635005541779435134e+2 + s * (6.57024977031928170135e+0 + s * -6.04244152148580987438e-2)))))));
  } else {
    R = -9.86494292470009928597e-3 +
      s * (-7.99283237680523006574e-1 +
        s * (-1.77579549177547519889e+1 +
          s * (-1.60636384855821916062e+2 +
            s * (-6.37566443368389627722e+2 + s * (-1.02509513161107724954e+3 + s * -4.83519191608651397019e+2)))));
    S = 1.0 +
      s * (3.03380607434824582924e+1 +
        s * (3.25792512996573918826e+2 +
          s * (1.53672958608443695994e+3 +
            s * (3.19985821950859553908e+3 +
              s * (2.55305040643316442583e+3 + s * (4.74528541206955367215e+2 + s * -2.24409524465858183362e+1))))));
  }
  // z = x with the low word cleared, so -z*z is exact and the rest goes into a small correction.
  const z = reinterpret<f64>(reinterpret<u64>(x) & 0xffffffff00000000);
  return Math.exp(-z * z - 0.5625) * Math.exp((z - x) * (z + x) + R / S) / x;
}

/** The error function (musl erf, < 1 ulp). */
export function erf64(x: f64): f64 {
  const hx = <u32>(reinterpret<u64>(x) >> 32);
  const ix = hx & 0x7fffffff;
  const negative = (hx >> 31) != 0;
  if (ix >= 0x7ff00000) return (negative ? -1.0 : 1.0) + 1.0 / x; // erf(nan) = nan, erf(+-inf) = +-1
  if (ix < 0x3feb0000) {
    if (ix < 0x3e300000) {
      if (ix < 0x00800000) return 0.125 * (8.0 * x + efx8 * x); // avoid underflow
      return x + efx * x;
    }
    return x + x * erfSmallR(x * x);
  }
  if (ix < 0x3ff40000) {
    const s = Math.abs(x) - 1.0;
    const pq = erfMidP(s) / erfMidQ(s);
    return negative ? -erx - pq : erx + pq;
  }
  if (ix >= 0x40180000) return negative ? -1.0 : 1.0; // |x| >= 6
  const r = erfcTail(Math.abs(x), ix);
  return negative ? r - 1.0 : 1.0 - r;
}

/** The complementary error function 1 - erf(x), accurate where the result is tiny (musl erfc). */
export function erfc64(x: f64): f64 {
  const hx = <u32>(reinterpret<u64>(x) >> 32);
  const ix = hx & 0x7fffffff;
  const negative = (hx >> 31) != 0;
  if (ix >= 0x7ff00000) return (negative ? 2.0 : 0.0) + 1.0 / x; // erfc(nan) = nan, erfc(+-inf) = 0, 2
  if (ix < 0x3feb0000) {
    if (ix < 0x3c700000) return 1.0 - x;
    const y = erfSmallR(x * x);
    if (negative || hx < 0x3fd00000) return 1.0 - (x + x * y); // x < 1/4
    return 0.5 - (x * y + (x - 0.5));
  }
  if (ix < 0x3ff40000) {
    const s = Math.abs(x) - 1.0;
    const pq = erfMidP(s) / erfMidQ(s);
    return negative ? 1.0 + (erx + pq) : 1.0 - erx - pq;
  }
  if (ix < 0x403c0000) {
    if (negative && ix >= 0x40180000) return 2.0; // x < -6
    const r = erfcTail(Math.abs(x), ix);
    return negative ? 2.0 - r : r;
  }
  return negative ? 2.0 : 0.0;
}

/** gelu(x) = x * Phi(x) = 0.5 * x * erfc(-x / sqrt 2); the erfc form is accurate for negative x. */
export function gelu64(x: f64): f64 {
  return 0.5 * x * erfc64(-x * 0.70710678118654752440);
}

/** a * b - p exactly, for p = fl(a * b) (Dekker's product with Veltkamp splitting; no FMA needed). */
// @ts-ignore: decorator
@inline
function productError(a: f64, b: f64, p: f64): f64 {
  const split = 134217729.0; // 2^27 + 1
  let c = split * a;
  const ahi = c - (c - a);
  const alo = a - ahi;
  c = split * b;
  const bhi = c - (c - b);
  const blo = b - bhi;
  return ahi * bhi - p + ahi * blo + alo * bhi + alo * blo;
}

/**
 * gelu64 for f64 results: also corrects for the rounding of t = -x/sqrt 2. erfc(t) falls like exp(-t^2), so an
 * error dt in t becomes a relative error 2t*dt in the result (~36 ulp at x = -6). dt is recovered exactly (the
 * product error of -x*C_HI plus -x*C_LO, where C_HI + C_LO = 1/sqrt 2) and removed to first order with
 * erfc'(t) = -2/sqrt(pi) exp(-t^2).
 */
export function gelu64Precise(x: f64): f64 {
  const C_HI = 0.7071067811865476;
  const C_LO = -4.833646656726457e-17;
  const nx = -x;
  const t = nx * C_HI;
  if (!isFinite<f64>(t)) return gelu64(x); // +-inf, NaN: no rounding error to correct
  const dt = productError(nx, C_HI, t) + nx * C_LO;
  const e = erfc64(t) - 1.1283791670955126 * Math.exp(-t * t) * dt;
  return 0.5 * x * e;
}

/**
 * The tanh approximation 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))), written with 1 + tanh(u) =
 * 2 / (1 + exp(-2u)) so negative x does not cancel.
 */
export function geluTanh64(x: f64): f64 {
  const u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return x / (1.0 + Math.exp(-2.0 * u));
}

/**
 * sigmoid in f64: 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, with e = exp(-|x|) <= 1, so neither side
 * overflows and the tiny results for very negative x keep their relative accuracy.
 */
// @ts-ignore: decorator
@inline
export function sigmoid64(x: f64): f64 {
  const e = Math.exp(-Math.abs(x));
  const r = 1.0 / (1.0 + e);
  return x >= 0 ? r : e * r;
}

/** sigmoid in f32, as sigmoid64 (a few ulp: expf is within 1 ulp, the other steps round once each). */
// @ts-ignore: decorator
@inline
export function sigmoid32(x: f32): f32 {
  const e = Mathf.exp(-Mathf.abs(x));
  const r = <f32>1 / (<f32>1 + e);
  return x >= 0 ? r : e * r;
}
