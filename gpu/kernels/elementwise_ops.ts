/**
 * WGSL expressions of the elementwise operators, per compute kind (`a`, `b` the operands, `s` alpha): the
 * single source each operator's kernels are generated from, per dtype (Note [GPU elementwise plan]). A kind
 * an operator has no expression for is one its dtype list excludes.
 *
 * @module
 */
import type { Kind } from '../wgsl/dtypes.ts';

/** An operator's expression per kind, and the kind of its result when that is not the compute kind. */
export interface OpExpr {
  readonly f32?: string;
  readonly i32?: string;
  readonly i64?: string;
  /** `'bool'` for comparisons and logical operators: the expression is an i32 0 or 1. */
  readonly result?: 'bool';
}

const cmp = (f: string, i64: string): OpExpr => ({
  f32: `select(0i, 1i, ${f})`,
  i32: `select(0i, 1i, ${f})`,
  i64: `select(0i, 1i, ${i64})`,
  result: 'bool',
});
const logical = (join: string): OpExpr => ({
  f32: `select(0i, 1i, (a != 0.0) ${join} (b != 0.0))`,
  i32: `select(0i, 1i, (a != 0i) ${join} (b != 0i))`,
  i64: `select(0i, 1i, i64_nonzero(a) ${join} i64_nonzero(b))`,
  result: 'bool',
});
const floatOnly = (f32: string): OpExpr => ({ f32 });
const rounding = (f32: string): OpExpr => ({ f32, i32: 'a', i64: 'a' });

/**
 * Binary operators.
 *
 * @example
 * ```ts
 * import { BINARY } from './elementwise_ops.ts';
 * BINARY.mul.i64; // 'i64_mul(a, b)'
 * ```
 */
export const BINARY = {
  add: { f32: 'a + s * b', i32: 'a + s * b', i64: 'i64_add(a, i64_mul(s, b))' },
  sub: { f32: 'a - s * b', i32: 'a - s * b', i64: 'i64_sub(a, i64_mul(s, b))' },
  mul: { f32: 'a * b', i32: 'a * b', i64: 'i64_mul(a, b)' },
  div: floatOnly('a / b'),
  divTrunc: { f32: 'trunc(a / b)', i32: 'div_trunc_i(a, b)' },
  divFloor: { f32: 'div_floor_f(a, b)', i32: 'div_floor_i(a, b)' },
  remainder: { f32: 'remainder_f(a, b)', i32: 'remainder_i(a, b)' },
  fmod: { f32: 'fmod_f(a, b)', i32: 'fmod_i(a, b)' },
  pow: { f32: 'pow_f(a, b)', i32: 'pow_i(a, b)' },
  minimum: { f32: 'min_nan(a, b)', i32: 'min(a, b)', i64: 'i64_min(a, b)' },
  maximum: { f32: 'max_nan(a, b)', i32: 'max(a, b)', i64: 'i64_max(a, b)' },
  atan2: floatOnly('atan2(a, b)'),
  bitwiseAnd: { i32: 'a & b', i64: 'a & b' },
  bitwiseOr: { i32: 'a | b', i64: 'a | b' },
  bitwiseXor: { i32: 'a ^ b', i64: 'a ^ b' },
  logicalAnd: logical('&&'),
  logicalOr: logical('||'),
  logicalXor: logical('!='),
  eq: cmp('a == b', 'i64_eq(a, b)'),
  ne: cmp('a != b', '!i64_eq(a, b)'),
  lt: cmp('a < b', 'i64_lt(a, b)'),
  le: cmp('a <= b', '!i64_lt(b, a)'),
  gt: cmp('a > b', 'i64_lt(b, a)'),
  ge: cmp('a >= b', '!i64_lt(a, b)'),
} as const satisfies Record<string, OpExpr>;

/**
 * Unary operators.
 *
 * @example
 * ```ts
 * import { UNARY } from './elementwise_ops.ts';
 * UNARY.exp.f32; // 'exp(a)'
 * ```
 */
export const UNARY = {
  neg: { f32: '-a', i32: '-a', i64: 'i64_neg(a)' },
  abs: { f32: 'abs(a)', i32: 'abs(a)', i64: 'i64_abs(a)' },
  sign: { f32: 'sign_f(a)', i32: 'sign(a)', i64: 'i64_sign(a)' },
  exp: floatOnly('exp(a)'),
  log: floatOnly('log(a)'),
  log1p: floatOnly('log1p_f(a)'),
  expm1: floatOnly('expm1_f(a)'),
  sqrt: floatOnly('sqrt(a)'),
  rsqrt: floatOnly('1.0 / sqrt(a)'),
  sin: floatOnly('sin(a)'),
  cos: floatOnly('cos(a)'),
  tanh: floatOnly('tanh_f(a)'),
  sigmoid: floatOnly('sigmoid_f(a)'),
  erf: floatOnly('erf_f(a)'),
  reciprocal: floatOnly('1.0 / a'),
  relu: { f32: 'select(a, 0.0, a < 0.0)', i32: 'max(a, 0i)', i64: 'i64_max(a, vec2<u32>(0u))' },
  gelu: floatOnly('0.5 * a * (1.0 + erf_f(a * 0.7071067811865476))'),
  geluTanh: floatOnly('0.5 * a * (1.0 + tanh_f(0.7978845608028654 * (a + 0.044715 * a * a * a)))'),
  silu: floatOnly('a / (1.0 + exp(-a))'),
  floor: rounding('floor(a)'),
  ceil: rounding('ceil(a)'),
  round: rounding('round(a)'),
  trunc: rounding('trunc(a)'),
  logicalNot: {
    f32: 'select(0i, 1i, a == 0.0)',
    i32: 'select(0i, 1i, a == 0i)',
    i64: 'select(0i, 1i, !i64_nonzero(a))',
    result: 'bool',
  },
  bitwiseNot: { i32: '~a', i64: '~a' },
  isnan: { f32: 'select(0i, 1i, is_nan(a))', i32: '0i', i64: '0i', result: 'bool' },
} as const satisfies Record<string, OpExpr>;

/**
 * The expression of `op` for `kind` over the operand names given, or undefined where it has none.
 *
 * @example
 * ```ts
 * import { BINARY, exprFor } from './elementwise_ops.ts';
 * exprFor(BINARY.add, 'f32', { a: 'v0', b: 'v1', s: 'v2' }); // 'v0 + v2 * v1'
 * ```
 */
export function exprFor(op: OpExpr, kind: Kind, names: { a: string; b?: string; s?: string }): string | undefined {
  const template = op[kind];
  if (template === undefined) return undefined;
  return template.replace(/\b([abs])\b/g, (m) => (names as Record<string, string | undefined>)[m] ?? m);
}
