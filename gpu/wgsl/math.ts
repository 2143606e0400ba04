/**
 * WGSL math the elementwise operators need beyond WGSL's built-ins, with C's and PyTorch's semantics where WGSL's
 * differ: `pow` of negative bases, NaN-propagating `maximum`/`minimum`, `log1p`/`expm1` accurate near zero,
 * `erf`, Python's floor division and remainder, and integer powers.
 *
 * @module
 */

/**
 * The helpers, included in every elementwise kernel (unused functions cost nothing once compiled).
 *
 * @example
 * ```ts
 * import { MATH_WGSL } from './math.ts';
 * MATH_WGSL.includes('fn pow_f'); // true
 * ```
 */
export const MATH_WGSL = `
fn pow_f(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return 1.0; }
  if (is_nan(a) || is_nan(b)) { return nan_f(); }
  if (a == 1.0) { return 1.0; }
  if (b == 1.0) { return a; }
  if (a == 0.0) {
    let odd = trunc(b) == b && abs(b) < 16777216.0 && (i32(b) & 1) == 1;
    if (b < 0.0) { return select(inf_f(), 1.0 / a, odd); }
    return select(0.0, a, odd);
  }
  let r = exp2(b * log2(abs(a)));
  if (a > 0.0) { return r; }
  if (trunc(b) != b) { return nan_f(); }
  let odd = abs(b) < 16777216.0 && (i32(b) & 1) == 1;
  return select(r, -r, odd);
}
fn pow_i(a: i32, b: i32) -> i32 {
  if (b < 0i) {
    if (a == 1i) { return 1i; }
    if (a == -1i) { return select(1i, -1i, (b & 1i) == 1i); }
    return 0i;
  }
  var base = a; var e = b; var r = 1i;
  loop { if (e == 0i) { break; } if ((e & 1i) == 1i) { r = r * base; } base = base * base; e = e >> 1u; }
  return r;
}
// NaN-propagating, and a ±0 tie keeps \`a\` as PyTorch's std::max / std::min do (WGSL's max/min leave both open).
fn max_nan(a: f32, b: f32) -> f32 { if (is_nan(a)) { return a; } if (is_nan(b)) { return b; } return select(a, b, a < b); }
fn min_nan(a: f32, b: f32) -> f32 { if (is_nan(a)) { return a; } if (is_nan(b)) { return b; } return select(a, b, b < a); }
fn log1p_f(x: f32) -> f32 { let u = 1.0 + x; if (u == 1.0) { return x; } return log(u) * x / (u - 1.0); }
fn expm1_f(x: f32) -> f32 {
  if (abs(x) < 1e-5) { return x + 0.5 * x * x; }
  return exp(x) - 1.0;
}
fn erf_f(x: f32) -> f32 {
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.5 * z);
  let r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  let e = 1.0 - r;
  if (z < 1e-3) { return x * 1.1283791670955126; }
  return select(e, -e, x < 0.0);
}
// WGSL leaves clamp and tanh of NaN undefined (llvmpipe gives -1); PyTorch gives NaN.
fn tanh_f(x: f32) -> f32 { if (is_nan(x)) { return x; } return tanh(clamp(x, -15.0, 15.0)); }
fn sigmoid_f(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
fn sign_f(x: f32) -> f32 { return select(0.0, 1.0, x > 0.0) - select(0.0, 1.0, x < 0.0); }
fn fmod_f(a: f32, b: f32) -> f32 { return a - b * trunc(a / b); }
fn remainder_f(a: f32, b: f32) -> f32 {
  let m = fmod_f(a, b);
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { return m + b; }
  return m;
}
fn div_floor_f(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = fmod_f(a, b);
  var d = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (d == 0.0) { return select(0.0, -0.0, (a / b) < 0.0); }
  let f = floor(d);
  return select(f, f + 1.0, d - f > 0.5);
}
// Integer quotients on magnitudes: WGSL's i32 '/' and '%' become GLSL's on the GL backend, which leaves
// negative operands undefined.
fn quot_i(a: i32, b: i32) -> i32 {
  let q = bitcast<i32>(bitcast<u32>(abs(a)) / bitcast<u32>(abs(b)));
  return select(q, -q, (a < 0i) != (b < 0i));
}
fn rem_i(a: i32, b: i32) -> i32 { return a - b * quot_i(a, b); }
fn div_trunc_i(a: i32, b: i32) -> i32 { if (b == 0i) { report(3u, 0u, 0u, 0u); return 0i; } return quot_i(a, b); }
fn div_floor_i(a: i32, b: i32) -> i32 {
  if (b == 0i) { report(3u, 0u, 0u, 0u); return 0i; }
  let q = quot_i(a, b);
  if ((rem_i(a, b) != 0i) && ((a < 0i) != (b < 0i))) { return q - 1i; }
  return q;
}
fn remainder_i(a: i32, b: i32) -> i32 {
  if (b == 0i) { report(3u, 0u, 0u, 0u); return 0i; }
  let r = rem_i(a, b);
  if (r != 0i && ((r < 0i) != (b < 0i))) { return r + b; }
  return r;
}
fn fmod_i(a: i32, b: i32) -> i32 { if (b == 0i) { report(3u, 0u, 0u, 0u); return 0i; } return rem_i(a, b); }
fn i64_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64_lt(a, b)); }
fn i64_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64_lt(b, a)); }
fn i64_abs(a: vec2<u32>) -> vec2<u32> { return select(a, i64_neg(a), i64_is_neg(a)); }
fn i64_sign(a: vec2<u32>) -> vec2<u32> {
  if (i64_is_neg(a)) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  return vec2<u32>(select(0u, 1u, any(a != vec2<u32>(0u))), 0u);
}
fn i64_nonzero(a: vec2<u32>) -> bool { return any(a != vec2<u32>(0u)); }
`;
