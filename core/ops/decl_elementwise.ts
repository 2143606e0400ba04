/**
 * Declarations of the elementwise operators: arithmetic, comparisons, logical, unary math, activations,
 * `where`, `clamp`. Each entry is PyTorch's schema for the overload plus its Meta function.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';
import {
  binaryInPlaceMeta,
  binaryMeta,
  type BinaryRule,
  broadcastOperands,
  checkClamp,
  checkClampInPlace,
  checkGeluApproximate,
  checkNeg,
  checkPowExponent,
  checkRelu,
  checkRoundingMode,
  checkSub,
  checkWhere,
  type Operand,
  resultTypeOf,
  unaryInPlaceMeta,
  unaryMeta,
  type UnaryRule,
} from './meta_elementwise.ts';
import { outputStridesOf } from './output_layout.ts';

/**
 * A declaration with backend kernels and a Meta function.
 *
 * @example
 * ```ts
 * import { type BackendDecl, ELEMENTWISE_OPS } from './decl_elementwise.ts';
 * const where: BackendDecl = ELEMENTWISE_OPS['where.self'];
 * ```
 */
export interface BackendDecl extends OpDecl {
  readonly kind: 'backend';
  readonly meta: MetaFn;
}

/**
 * A binary elementwise declaration: its rule is shared by the Meta function and every backend's kernel.
 *
 * @example
 * ```ts
 * import { type BinaryDecl, ELEMENTWISE_OPS } from './decl_elementwise.ts';
 * (ELEMENTWISE_OPS['sub.Tensor'] as BinaryDecl).rule.alpha; // true
 * ```
 */
export interface BinaryDecl extends BackendDecl {
  readonly rule: BinaryRule;
}

/**
 * A unary elementwise declaration (see {@linkcode BinaryDecl}).
 *
 * @example
 * ```ts
 * import { ELEMENTWISE_OPS, type UnaryDecl } from './decl_elementwise.ts';
 * (ELEMENTWISE_OPS['exp'] as UnaryDecl).rule.kind; // 'float'
 * ```
 */
export interface UnaryDecl extends BackendDecl {
  readonly rule: UnaryRule;
}

const method: Partial<OpDecl> = { method: true };
const inplace: Partial<OpDecl> = { function: false, method: true };

// Schemas with an `alpha` pass it as the third argument; the others get the default 1.
function binary(schema: string, rule: BinaryRule, doc: string, extra: Partial<OpDecl> = {}): BinaryDecl {
  const meta = (self: Operand, other: Operand, alpha?: number | boolean) => binaryMeta(rule, self, other, alpha);
  return { ...extra, schema, kind: 'backend', meta, doc, rule };
}
function binaryInPlace(schema: string, rule: BinaryRule, doc: string): BinaryDecl {
  const meta = (self: Tensor, other: Operand, alpha?: number | boolean) => binaryInPlaceMeta(rule, self, other, alpha);
  return { ...inplace, schema, kind: 'backend', meta, doc, rule };
}
function unary(schema: string, rule: UnaryRule, doc: string, extra: Partial<OpDecl> = method): UnaryDecl {
  return { ...extra, schema, kind: 'backend', meta: (self: Tensor) => unaryMeta(rule, self), doc, rule };
}
function unaryInPlace(schema: string, rule: UnaryRule, doc: string): UnaryDecl {
  return { ...inplace, schema, kind: 'backend', meta: (self: Tensor) => unaryInPlaceMeta(rule, self), doc, rule };
}
/** Meta function of `zero_` and `fill_`: the result is `self`. */
function fillMeta(self: Tensor): TensorMeta {
  self.assertAlive('fill_');
  return { shape: self.shape, dtype: self.dtype };
}

function backend(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): BackendDecl {
  return { ...extra, schema, kind: 'backend', meta, doc };
}

const ADD: BinaryRule = { op: 'add', kind: 'arith', alpha: true };
const SUB: BinaryRule = { op: 'sub', kind: 'arith', alpha: true, check: checkSub };
const MUL: BinaryRule = { op: 'mul', kind: 'arith' };
const DIV: BinaryRule = { op: 'div', kind: 'float' };
const DIV_ROUNDING: BinaryRule = { op: 'div', kind: 'arith' };
const POW: BinaryRule = { op: 'pow', kind: 'arith', check: checkPowExponent };
const arith = (op: string): BinaryRule => ({ op, kind: 'arith' });
const compare = (op: string): BinaryRule => ({ op, kind: 'compare' });
const same = (op: string, check?: (self: Tensor) => void): UnaryRule => ({ op, kind: 'same', check });
const float = (op: string): UnaryRule => ({ op, kind: 'float' });
const NEG = same('neg', checkNeg);
const RELU = same('relu', checkRelu);

function divModeMeta(self: Operand, other: Operand, mode: string | null): TensorMeta {
  checkRoundingMode(mode);
  return binaryMeta(mode === null ? DIV : DIV_ROUNDING, self, other);
}

function whereMeta(cond: Tensor, self: Operand, other: Operand): TensorMeta {
  checkWhere(cond, self, other);
  const shape = broadcastOperands(cond, self, other);
  return { shape, dtype: resultTypeOf(self, other), strides: outputStridesOf(shape, cond, self, other) };
}

function clampMeta(self: Tensor, min: Operand | null, max: Operand | null): TensorMeta {
  checkClamp(self, min, max);
  const shape = broadcastOperands(self, min, max);
  return { shape, dtype: resultTypeOf(self, min, max), strides: outputStridesOf(shape, self, min, max) };
}

/** Meta function of `clamp_`, `clamp_min_` and `clamp_max_`: the result is `self`. */
function clampInPlaceMeta(self: Tensor, min: number | boolean | null, max: number | boolean | null): TensorMeta {
  checkClampInPlace(self, min, max);
  return { shape: self.shape, dtype: self.dtype };
}

function geluMeta(self: Tensor, approximate: string): TensorMeta {
  checkGeluApproximate(approximate);
  return unaryMeta(GELU, self);
}
const GELU = same('gelu');

/**
 * Names of the elementwise operators (PyTorch's `name.overload`).
 *
 * @example
 * ```ts
 * import type { ElementwiseOpName } from './decl_elementwise.ts';
 * const name: ElementwiseOpName = 'div.Tensor_mode';
 * ```
 */
export type ElementwiseOpName =
  | 'add.Tensor'
  | 'add.Scalar'
  | 'add_.Tensor'
  | 'add_.Scalar'
  | 'sub.Tensor'
  | 'sub.Scalar'
  | 'sub_.Tensor'
  | 'sub_.Scalar'
  | 'mul.Tensor'
  | 'mul.Scalar'
  | 'mul_.Tensor'
  | 'mul_.Scalar'
  | 'div.Tensor'
  | 'div.Scalar'
  | 'div.Tensor_mode'
  | 'div.Scalar_mode'
  | 'div_.Tensor'
  | 'div_.Scalar'
  | 'remainder.Tensor'
  | 'remainder.Scalar'
  | 'fmod.Tensor'
  | 'fmod.Scalar'
  | 'pow.Tensor_Tensor'
  | 'pow.Tensor_Scalar'
  | 'pow.Scalar'
  | 'minimum'
  | 'maximum'
  | 'atan2'
  | 'bitwise_and.Tensor'
  | 'bitwise_or.Tensor'
  | 'bitwise_xor.Tensor'
  | 'logical_and'
  | 'logical_or'
  | 'logical_xor'
  | 'eq.Tensor'
  | 'eq.Scalar'
  | 'ne.Tensor'
  | 'ne.Scalar'
  | 'lt.Tensor'
  | 'lt.Scalar'
  | 'le.Tensor'
  | 'le.Scalar'
  | 'gt.Tensor'
  | 'gt.Scalar'
  | 'ge.Tensor'
  | 'ge.Scalar'
  | 'neg'
  | 'neg_'
  | 'abs'
  | 'sign'
  | 'exp'
  | 'exp_'
  | 'log'
  | 'log1p'
  | 'expm1'
  | 'sqrt'
  | 'rsqrt'
  | 'sin'
  | 'cos'
  | 'tanh'
  | 'tanh_'
  | 'sigmoid'
  | 'sigmoid_'
  | 'erf'
  | 'reciprocal'
  | 'relu'
  | 'relu_'
  | 'sqrt_'
  | 'zero_'
  | 'fill_.Scalar'
  | 'gelu'
  | 'silu'
  | 'floor'
  | 'ceil'
  | 'round'
  | 'trunc'
  | 'logical_not'
  | 'bitwise_not'
  | 'isnan'
  | 'where.self'
  | 'where.ScalarOther'
  | 'clamp'
  | 'clamp.Tensor'
  | 'clamp_'
  | 'clamp_min'
  | 'clamp_max'
  | 'clamp_min_'
  | 'clamp_max_';

/**
 * Elementwise operator declarations, keyed by PyTorch's `name.overload`.
 *
 * @example
 * ```ts
 * import { ELEMENTWISE_OPS } from './decl_elementwise.ts';
 * ELEMENTWISE_OPS['add.Tensor'].schema; // 'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'
 * ```
 */
export const ELEMENTWISE_OPS: { readonly [K in ElementwiseOpName]: BackendDecl } = {
  'add.Tensor': binary(
    'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    ADD,
    'Adds `other`, scaled by `alpha`, to `self`, with broadcasting and type promotion.',
    method,
  ),
  'add.Scalar': binary('add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor', ADD, 'Adds a scalar.'),
  'add_.Tensor': binaryInPlace(
    'add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    ADD,
    'In-place `add`.',
  ),
  'add_.Scalar': binaryInPlace(
    'add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)',
    ADD,
    'In-place `add` of a scalar.',
  ),
  'sub.Tensor': binary(
    'sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    SUB,
    'Subtracts `other`, scaled by `alpha`, from `self`.',
    method,
  ),
  'sub.Scalar': binary('sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor', SUB, 'Subtracts a scalar.'),
  'sub_.Tensor': binaryInPlace(
    'sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    SUB,
    'In-place `sub`.',
  ),
  'sub_.Scalar': binaryInPlace(
    'sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)',
    SUB,
    'In-place `sub` of a scalar.',
  ),
  'mul.Tensor': binary('mul.Tensor(Tensor self, Tensor other) -> Tensor', MUL, 'Multiplies elementwise.', method),
  'mul.Scalar': binary('mul.Scalar(Tensor self, Scalar other) -> Tensor', MUL, 'Multiplies by a scalar.'),
  'mul_.Tensor': binaryInPlace('mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)', MUL, 'In-place `mul`.'),
  'mul_.Scalar': binaryInPlace(
    'mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)',
    MUL,
    'In-place `mul` by a scalar.',
  ),
  'div.Tensor': binary(
    'div.Tensor(Tensor self, Tensor other) -> Tensor',
    DIV,
    'Divides elementwise (true division: integers give floats).',
    method,
  ),
  'div.Scalar': binary('div.Scalar(Tensor self, Scalar other) -> Tensor', DIV, 'Divides by a scalar.'),
  'div.Tensor_mode': backend(
    'div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor',
    divModeMeta,
    "Divides with rounding_mode 'trunc' or 'floor' (or None for true division).",
  ),
  'div.Scalar_mode': backend(
    'div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor',
    divModeMeta,
    'Divides by a scalar with a rounding mode.',
  ),
  'div_.Tensor': binaryInPlace('div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)', DIV, 'In-place `div`.'),
  'div_.Scalar': binaryInPlace(
    'div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)',
    DIV,
    'In-place `div` by a scalar.',
  ),
  'remainder.Tensor': binary(
    'remainder.Tensor(Tensor self, Tensor other) -> Tensor',
    arith('remainder'),
    'Python-style modulus: the result has the sign of the divisor.',
    method,
  ),
  'remainder.Scalar': binary(
    'remainder.Scalar(Tensor self, Scalar other) -> Tensor',
    arith('remainder'),
    'Python-style modulus by a scalar.',
  ),
  'fmod.Tensor': binary(
    'fmod.Tensor(Tensor self, Tensor other) -> Tensor',
    arith('fmod'),
    'C-style modulus: the result has the sign of the dividend.',
    method,
  ),
  'fmod.Scalar': binary(
    'fmod.Scalar(Tensor self, Scalar other) -> Tensor',
    arith('fmod'),
    'C-style modulus by a scalar.',
  ),
  'pow.Tensor_Tensor': binary(
    'pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor',
    POW,
    'Raises `self` to the power `exponent`.',
    method,
  ),
  'pow.Tensor_Scalar': binary(
    'pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor',
    POW,
    'Raises to a scalar power.',
  ),
  'pow.Scalar': binary('pow.Scalar(Scalar self, Tensor exponent) -> Tensor', POW, 'Raises a scalar to tensor powers.'),
  'minimum': binary(
    'minimum(Tensor self, Tensor other) -> Tensor',
    arith('minimum'),
    'Elementwise minimum (NaN propagates).',
    method,
  ),
  'maximum': binary(
    'maximum(Tensor self, Tensor other) -> Tensor',
    arith('maximum'),
    'Elementwise maximum (NaN propagates).',
    method,
  ),
  'atan2': binary(
    'atan2(Tensor self, Tensor other) -> Tensor',
    { op: 'atan2', kind: 'float' },
    'Elementwise arctangent of self / other with quadrant.',
    method,
  ),
  'bitwise_and.Tensor': binary(
    'bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor',
    arith('bitwise_and'),
    'Bitwise AND of integral or bool tensors.',
    method,
  ),
  'bitwise_or.Tensor': binary(
    'bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor',
    arith('bitwise_or'),
    'Bitwise OR of integral or bool tensors.',
    method,
  ),
  'bitwise_xor.Tensor': binary(
    'bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor',
    arith('bitwise_xor'),
    'Bitwise XOR of integral or bool tensors.',
    method,
  ),
  'logical_and': binary(
    'logical_and(Tensor self, Tensor other) -> Tensor',
    compare('logical_and'),
    'Elementwise logical AND (nonzero is true); bool result.',
    method,
  ),
  'logical_or': binary(
    'logical_or(Tensor self, Tensor other) -> Tensor',
    compare('logical_or'),
    'Elementwise logical OR; bool result.',
    method,
  ),
  'logical_xor': binary(
    'logical_xor(Tensor self, Tensor other) -> Tensor',
    compare('logical_xor'),
    'Elementwise logical XOR; bool result.',
    method,
  ),
  'eq.Tensor': binary(
    'eq.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('eq'),
    'Elementwise `==`; bool result.',
    method,
  ),
  'eq.Scalar': binary(
    'eq.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('eq'),
    'Elementwise `==` with a scalar.',
  ),
  'ne.Tensor': binary(
    'ne.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('ne'),
    'Elementwise `!=`; bool result.',
    method,
  ),
  'ne.Scalar': binary(
    'ne.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('ne'),
    'Elementwise `!=` with a scalar.',
  ),
  'lt.Tensor': binary(
    'lt.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('lt'),
    'Elementwise `<`; bool result.',
    method,
  ),
  'lt.Scalar': binary(
    'lt.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('lt'),
    'Elementwise `<` with a scalar.',
  ),
  'le.Tensor': binary(
    'le.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('le'),
    'Elementwise `<=`; bool result.',
    method,
  ),
  'le.Scalar': binary(
    'le.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('le'),
    'Elementwise `<=` with a scalar.',
  ),
  'gt.Tensor': binary(
    'gt.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('gt'),
    'Elementwise `>`; bool result.',
    method,
  ),
  'gt.Scalar': binary(
    'gt.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('gt'),
    'Elementwise `>` with a scalar.',
  ),
  'ge.Tensor': binary(
    'ge.Tensor(Tensor self, Tensor other) -> Tensor',
    compare('ge'),
    'Elementwise `>=`; bool result.',
    method,
  ),
  'ge.Scalar': binary(
    'ge.Scalar(Tensor self, Scalar other) -> Tensor',
    compare('ge'),
    'Elementwise `>=` with a scalar.',
  ),

  'neg': unary('neg(Tensor self) -> Tensor', NEG, 'Negates elementwise.'),
  'neg_': unaryInPlace('neg_(Tensor(a!) self) -> Tensor(a!)', NEG, 'In-place `neg`.'),
  'abs': unary('abs(Tensor self) -> Tensor', same('abs'), 'Absolute value.'),
  'sign': unary('sign(Tensor self) -> Tensor', same('sign'), 'Sign (-1, 0 or 1).'),
  'exp': unary('exp(Tensor self) -> Tensor', float('exp'), 'Exponential.'),
  'exp_': unaryInPlace('exp_(Tensor(a!) self) -> Tensor(a!)', float('exp'), 'In-place `exp`.'),
  'log': unary('log(Tensor self) -> Tensor', float('log'), 'Natural logarithm.'),
  'log1p': unary('log1p(Tensor self) -> Tensor', float('log1p'), 'log(1 + x), accurate for small x.'),
  'expm1': unary('expm1(Tensor self) -> Tensor', float('expm1'), 'exp(x) - 1, accurate for small x.'),
  'sqrt': unary('sqrt(Tensor self) -> Tensor', float('sqrt'), 'Square root.'),
  'rsqrt': unary('rsqrt(Tensor self) -> Tensor', float('rsqrt'), 'Reciprocal square root.'),
  'sin': unary('sin(Tensor self) -> Tensor', float('sin'), 'Sine.'),
  'cos': unary('cos(Tensor self) -> Tensor', float('cos'), 'Cosine.'),
  'tanh': unary('tanh(Tensor self) -> Tensor', float('tanh'), 'Hyperbolic tangent.'),
  'tanh_': unaryInPlace('tanh_(Tensor(a!) self) -> Tensor(a!)', float('tanh'), 'In-place `tanh`.'),
  'sigmoid': unary('sigmoid(Tensor self) -> Tensor', float('sigmoid'), 'Logistic sigmoid 1 / (1 + exp(-x)).'),
  'sigmoid_': unaryInPlace('sigmoid_(Tensor(a!) self) -> Tensor(a!)', float('sigmoid'), 'In-place `sigmoid`.'),
  'erf': unary('erf(Tensor self) -> Tensor', float('erf'), 'Gauss error function.'),
  'reciprocal': unary('reciprocal(Tensor self) -> Tensor', float('reciprocal'), '1 / x.'),
  'relu': unary('relu(Tensor self) -> Tensor', RELU, 'max(x, 0).'),
  'relu_': unaryInPlace('relu_(Tensor(a!) self) -> Tensor(a!)', RELU, 'In-place `relu`.'),
  'sqrt_': unaryInPlace('sqrt_(Tensor(a!) self) -> Tensor(a!)', float('sqrt'), 'In-place `sqrt`.'),
  'zero_': backend('zero_(Tensor(a!) self) -> Tensor(a!)', fillMeta, 'Fills `self` with zeros in place.', inplace),
  'fill_.Scalar': backend(
    'fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)',
    fillMeta,
    'Fills `self` with `value` in place.',
    inplace,
  ),
  'gelu': backend(
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    geluMeta,
    "Gaussian error linear unit; `approximate: 'tanh'` uses the tanh approximation.",
    method,
  ),
  'silu': unary('silu(Tensor self) -> Tensor', same('silu'), 'x * sigmoid(x).'),
  'floor': unary('floor(Tensor self) -> Tensor', same('floor'), 'Rounds down.'),
  'ceil': unary('ceil(Tensor self) -> Tensor', same('ceil'), 'Rounds up.'),
  'round': unary('round(Tensor self) -> Tensor', same('round'), 'Rounds half to even, like torch.round.'),
  'trunc': unary('trunc(Tensor self) -> Tensor', same('trunc'), 'Rounds toward zero.'),
  'logical_not': unary(
    'logical_not(Tensor self) -> Tensor',
    { op: 'logical_not', kind: 'bool' },
    'Elementwise NOT (zero is false); bool result.',
  ),
  'bitwise_not': unary(
    'bitwise_not(Tensor self) -> Tensor',
    same('bitwise_not'),
    'Bitwise NOT of integral or bool tensors.',
  ),
  'isnan': unary(
    'isnan(Tensor self) -> Tensor',
    { op: 'isnan', kind: 'bool' },
    'Whether each element is NaN; bool result.',
  ),

  'where.self': backend(
    'where.self(Tensor condition, Tensor self, Tensor other) -> Tensor',
    whereMeta,
    'Chooses `self` where `condition` is true, else `other`.',
  ),
  'where.ScalarOther': backend(
    'where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor',
    whereMeta,
    'Chooses `self` where `condition` is true, else the scalar `other`.',
  ),
  'clamp': backend(
    'clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor',
    clampMeta,
    'Limits values to [min, max].',
    method,
  ),
  'clamp.Tensor': backend(
    'clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor',
    clampMeta,
    'Limits values to tensors [min, max] (broadcast).',
  ),
  'clamp_': backend(
    'clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)',
    clampInPlaceMeta,
    'In-place `clamp`.',
    inplace,
  ),
  'clamp_min': backend(
    'clamp_min(Tensor self, Scalar min) -> Tensor',
    (self: Tensor, min: Operand) => clampMeta(self, min, null),
    'max(x, min): `clamp` with a lower bound only.',
    method,
  ),
  'clamp_max': backend(
    'clamp_max(Tensor self, Scalar max) -> Tensor',
    (self: Tensor, max: Operand) => clampMeta(self, null, max),
    'min(x, max): `clamp` with an upper bound only.',
    method,
  ),
  'clamp_min_': backend(
    'clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)',
    (self: Tensor, min: number | boolean) => clampInPlaceMeta(self, min, null),
    'In-place `clamp_min`.',
    inplace,
  ),
  'clamp_max_': backend(
    'clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)',
    (self: Tensor, max: number | boolean) => clampInPlaceMeta(self, null, max),
    'In-place `clamp_max`.',
    inplace,
  ),
};
