/**
 * Declarations of the elementwise operators: arithmetic, comparisons, logical, unary math, activations,
 * `where`, `clamp`. Each entry is PyTorch's schema for the overload plus its Meta function.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';
import {
  type BinaryKind,
  binaryMeta,
  binaryTypes,
  broadcastOperands,
  checkAlpha,
  checkInPlace,
  checkSameDevice,
  type Operand,
  resultTypeOf,
  type UnaryKind,
  unaryMeta,
} from './meta_elementwise.ts';
import { bool } from '../tensor/dtype.ts';

const bin = (op: string, kind: BinaryKind): MetaFn => (self: Operand, other: Operand) =>
  binaryMeta(op, kind, self, other);
const binInPlace = (op: string, kind: BinaryKind): MetaFn => (self: Tensor, other: Operand) => {
  const m = binaryMeta(op, kind, self, other);
  checkInPlace(self, m);
  return { shape: self.shape, dtype: self.dtype };
};
const addLike = (op: 'add' | 'sub'): MetaFn => (self: Operand, other: Operand, alpha: number | boolean) => {
  checkAlpha(op, self, other, alpha);
  return binaryMeta(op, 'arith', self, other);
};
const addLikeInPlace = (op: 'add' | 'sub'): MetaFn => (self: Tensor, other: Operand, alpha: number | boolean) => {
  checkAlpha(op, self, other, alpha);
  checkInPlace(self, binaryMeta(op, 'arith', self, other));
  return { shape: self.shape, dtype: self.dtype };
};
const ROUNDING_MODES = new Set([null, 'trunc', 'floor']);
const divMeta = (self: Operand, other: Operand, mode: string | null): TensorMeta => {
  if (!ROUNDING_MODES.has(mode)) {
    throw new Error(`div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '${mode}'`);
  }
  return binaryMeta('div', mode === null ? 'float' : 'arith', self, other);
};
function clampMeta(self: Tensor, min: Operand | null, max: Operand | null): TensorMeta {
  if (min === null && max === null) throw new Error("torch.clamp: At least one of 'min' or 'max' must not be None");
  const operands = [self, ...(min === null ? [] : [min]), ...(max === null ? [] : [max])];
  checkSameDevice('clamp', operands);
  const dtype = resultTypeOf(operands);
  if (dtype === bool) throw new Error(`"clamp" not implemented for 'Bool'`);
  return { shape: broadcastOperands(operands), dtype };
}
const un = (op: string, kind: UnaryKind): MetaFn => (self: Tensor) => unaryMeta(op, kind, self);
const unInPlace = (op: string, kind: UnaryKind): MetaFn => (self: Tensor) => {
  checkInPlace(self, unaryMeta(op, kind, self));
  return { shape: self.shape, dtype: self.dtype };
};

/** A declaration with backend kernels and a Meta function. */
export interface BackendDecl extends OpDecl {
  readonly kind: 'backend';
  readonly meta: MetaFn;
}

function backend(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): BackendDecl {
  return { ...extra, schema, kind: 'backend', meta, doc };
}
const method: Partial<OpDecl> = { method: true };
const inplace: Partial<OpDecl> = { function: false, method: true };

/** Names of the elementwise operators (PyTorch's `name.overload`). */
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
  | 'clamp.Tensor';

/** Elementwise operator declarations, keyed by PyTorch's `name.overload`. */
export const ELEMENTWISE_OPS: { readonly [K in ElementwiseOpName]: BackendDecl } = {
  'add.Tensor': backend(
    'add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    addLike('add'),
    'Adds `other`, scaled by `alpha`, to `self`, with broadcasting and type promotion.',
    method,
  ),
  'add.Scalar': backend(
    'add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    addLike('add'),
    'Adds a scalar.',
  ),
  'add_.Tensor': backend(
    'add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    addLikeInPlace('add'),
    'In-place `add`.',
    inplace,
  ),
  'add_.Scalar': backend(
    'add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)',
    addLikeInPlace('add'),
    'In-place `add` of a scalar.',
    inplace,
  ),
  'sub.Tensor': backend(
    'sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    addLike('sub'),
    'Subtracts `other`, scaled by `alpha`, from `self`.',
    method,
  ),
  'sub.Scalar': backend(
    'sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    addLike('sub'),
    'Subtracts a scalar.',
  ),
  'sub_.Tensor': backend(
    'sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)',
    addLikeInPlace('sub'),
    'In-place `sub`.',
    inplace,
  ),
  'sub_.Scalar': backend(
    'sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)',
    addLikeInPlace('sub'),
    'In-place `sub` of a scalar.',
    inplace,
  ),
  'mul.Tensor': backend(
    'mul.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('mul', 'arith'),
    'Multiplies elementwise.',
    method,
  ),
  'mul.Scalar': backend(
    'mul.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('mul', 'arith'),
    'Multiplies by a scalar.',
  ),
  'mul_.Tensor': backend(
    'mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
    binInPlace('mul', 'arith'),
    'In-place `mul`.',
    inplace,
  ),
  'mul_.Scalar': backend(
    'mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)',
    binInPlace('mul', 'arith'),
    'In-place `mul` by a scalar.',
    inplace,
  ),
  'div.Tensor': backend(
    'div.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('div', 'float'),
    'Divides elementwise (true division: integers give floats).',
    method,
  ),
  'div.Scalar': backend('div.Scalar(Tensor self, Scalar other) -> Tensor', bin('div', 'float'), 'Divides by a scalar.'),
  'div.Tensor_mode': backend(
    'div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor',
    divMeta,
    "Divides with rounding_mode 'trunc' or 'floor' (or None for true division).",
  ),
  'div.Scalar_mode': backend(
    'div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor',
    divMeta,
    'Divides by a scalar with a rounding mode.',
  ),
  'div_.Tensor': backend(
    'div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)',
    binInPlace('div', 'float'),
    'In-place `div`.',
    inplace,
  ),
  'div_.Scalar': backend(
    'div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)',
    binInPlace('div', 'float'),
    'In-place `div` by a scalar.',
    inplace,
  ),
  'remainder.Tensor': backend(
    'remainder.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('remainder', 'arith'),
    'Python-style modulus: the result has the sign of the divisor.',
    method,
  ),
  'remainder.Scalar': backend(
    'remainder.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('remainder', 'arith'),
    'Python-style modulus by a scalar.',
  ),
  'fmod.Tensor': backend(
    'fmod.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('fmod', 'arith'),
    'C-style modulus: the result has the sign of the dividend.',
    method,
  ),
  'fmod.Scalar': backend(
    'fmod.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('fmod', 'arith'),
    'C-style modulus by a scalar.',
  ),
  'pow.Tensor_Tensor': backend(
    'pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor',
    bin('pow', 'arith'),
    'Raises `self` to the power `exponent`.',
    method,
  ),
  'pow.Tensor_Scalar': backend(
    'pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor',
    bin('pow', 'arith'),
    'Raises to a scalar power.',
  ),
  'pow.Scalar': backend(
    'pow.Scalar(Scalar self, Tensor exponent) -> Tensor',
    bin('pow', 'arith'),
    'Raises a scalar to tensor powers.',
  ),
  'minimum': backend(
    'minimum(Tensor self, Tensor other) -> Tensor',
    bin('minimum', 'arith'),
    'Elementwise minimum (NaN propagates).',
    method,
  ),
  'maximum': backend(
    'maximum(Tensor self, Tensor other) -> Tensor',
    bin('maximum', 'arith'),
    'Elementwise maximum (NaN propagates).',
    method,
  ),
  'atan2': backend(
    'atan2(Tensor self, Tensor other) -> Tensor',
    bin('atan2', 'float'),
    'Elementwise arctangent of self / other with quadrant.',
    method,
  ),
  'bitwise_and.Tensor': backend(
    'bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('bitwise_and', 'bitwise'),
    'Bitwise AND of integral or bool tensors.',
    method,
  ),
  'bitwise_or.Tensor': backend(
    'bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('bitwise_or', 'bitwise'),
    'Bitwise OR of integral or bool tensors.',
    method,
  ),
  'bitwise_xor.Tensor': backend(
    'bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('bitwise_xor', 'bitwise'),
    'Bitwise XOR of integral or bool tensors.',
    method,
  ),
  'logical_and': backend(
    'logical_and(Tensor self, Tensor other) -> Tensor',
    bin('logical_and', 'compare'),
    'Elementwise logical AND (nonzero is true); bool result.',
    method,
  ),
  'logical_or': backend(
    'logical_or(Tensor self, Tensor other) -> Tensor',
    bin('logical_or', 'compare'),
    'Elementwise logical OR; bool result.',
    method,
  ),
  'logical_xor': backend(
    'logical_xor(Tensor self, Tensor other) -> Tensor',
    bin('logical_xor', 'compare'),
    'Elementwise logical XOR; bool result.',
    method,
  ),
  'eq.Tensor': backend(
    'eq.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('eq', 'compare'),
    'Elementwise `==`; bool result.',
    method,
  ),
  'eq.Scalar': backend(
    'eq.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('eq', 'compare'),
    'Elementwise `==` with a scalar.',
  ),
  'ne.Tensor': backend(
    'ne.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('ne', 'compare'),
    'Elementwise `!=`; bool result.',
    method,
  ),
  'ne.Scalar': backend(
    'ne.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('ne', 'compare'),
    'Elementwise `!=` with a scalar.',
  ),
  'lt.Tensor': backend(
    'lt.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('lt', 'compare'),
    'Elementwise `<`; bool result.',
    method,
  ),
  'lt.Scalar': backend(
    'lt.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('lt', 'compare'),
    'Elementwise `<` with a scalar.',
  ),
  'le.Tensor': backend(
    'le.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('le', 'compare'),
    'Elementwise `<=`; bool result.',
    method,
  ),
  'le.Scalar': backend(
    'le.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('le', 'compare'),
    'Elementwise `<=` with a scalar.',
  ),
  'gt.Tensor': backend(
    'gt.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('gt', 'compare'),
    'Elementwise `>`; bool result.',
    method,
  ),
  'gt.Scalar': backend(
    'gt.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('gt', 'compare'),
    'Elementwise `>` with a scalar.',
  ),
  'ge.Tensor': backend(
    'ge.Tensor(Tensor self, Tensor other) -> Tensor',
    bin('ge', 'compare'),
    'Elementwise `>=`; bool result.',
    method,
  ),
  'ge.Scalar': backend(
    'ge.Scalar(Tensor self, Scalar other) -> Tensor',
    bin('ge', 'compare'),
    'Elementwise `>=` with a scalar.',
  ),

  'neg': backend('neg(Tensor self) -> Tensor', un('neg', 'same'), 'Negates elementwise.', method),
  'neg_': backend('neg_(Tensor(a!) self) -> Tensor(a!)', unInPlace('neg', 'same'), 'In-place `neg`.', inplace),
  'abs': backend('abs(Tensor self) -> Tensor', un('abs', 'same'), 'Absolute value.', method),
  'sign': backend('sign(Tensor self) -> Tensor', un('sign', 'same'), 'Sign (-1, 0 or 1).', method),
  'exp': backend('exp(Tensor self) -> Tensor', un('exp', 'float'), 'Exponential.', method),
  'exp_': backend('exp_(Tensor(a!) self) -> Tensor(a!)', unInPlace('exp', 'float'), 'In-place `exp`.', inplace),
  'log': backend('log(Tensor self) -> Tensor', un('log', 'float'), 'Natural logarithm.', method),
  'log1p': backend('log1p(Tensor self) -> Tensor', un('log1p', 'float'), 'log(1 + x), accurate for small x.', method),
  'expm1': backend('expm1(Tensor self) -> Tensor', un('expm1', 'float'), 'exp(x) - 1, accurate for small x.', method),
  'sqrt': backend('sqrt(Tensor self) -> Tensor', un('sqrt', 'float'), 'Square root.', method),
  'rsqrt': backend('rsqrt(Tensor self) -> Tensor', un('rsqrt', 'float'), 'Reciprocal square root.', method),
  'sin': backend('sin(Tensor self) -> Tensor', un('sin', 'float'), 'Sine.', method),
  'cos': backend('cos(Tensor self) -> Tensor', un('cos', 'float'), 'Cosine.', method),
  'tanh': backend('tanh(Tensor self) -> Tensor', un('tanh', 'float'), 'Hyperbolic tangent.', method),
  'tanh_': backend('tanh_(Tensor(a!) self) -> Tensor(a!)', unInPlace('tanh', 'float'), 'In-place `tanh`.', inplace),
  'sigmoid': backend(
    'sigmoid(Tensor self) -> Tensor',
    un('sigmoid', 'float'),
    'Logistic sigmoid 1 / (1 + exp(-x)).',
    method,
  ),
  'sigmoid_': backend(
    'sigmoid_(Tensor(a!) self) -> Tensor(a!)',
    unInPlace('sigmoid', 'float'),
    'In-place `sigmoid`.',
    inplace,
  ),
  'erf': backend('erf(Tensor self) -> Tensor', un('erf', 'float'), 'Gauss error function.', method),
  'reciprocal': backend('reciprocal(Tensor self) -> Tensor', un('reciprocal', 'float'), '1 / x.', method),
  'relu': backend('relu(Tensor self) -> Tensor', un('relu', 'same'), 'max(x, 0).', method),
  'relu_': backend('relu_(Tensor(a!) self) -> Tensor(a!)', unInPlace('relu', 'same'), 'In-place `relu`.', inplace),
  'gelu': backend(
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    (self: Tensor, approximate: string) => {
      if (approximate !== 'none' && approximate !== 'tanh') {
        throw new Error(
          `approximate argument must be either none or tanh.`,
        );
      }
      return unaryMeta('gelu', 'same', self);
    },
    "Gaussian error linear unit; `approximate: 'tanh'` uses the tanh approximation.",
    method,
  ),
  'silu': backend('silu(Tensor self) -> Tensor', un('silu', 'same'), 'x * sigmoid(x).', method),
  'floor': backend('floor(Tensor self) -> Tensor', un('floor', 'same'), 'Rounds down.', method),
  'ceil': backend('ceil(Tensor self) -> Tensor', un('ceil', 'same'), 'Rounds up.', method),
  'round': backend(
    'round(Tensor self) -> Tensor',
    un('round', 'same'),
    'Rounds half to even, like torch.round.',
    method,
  ),
  'trunc': backend('trunc(Tensor self) -> Tensor', un('trunc', 'same'), 'Rounds toward zero.', method),
  'logical_not': backend(
    'logical_not(Tensor self) -> Tensor',
    un('logical_not', 'bool'),
    'Elementwise NOT (zero is false); bool result.',
    method,
  ),
  'bitwise_not': backend(
    'bitwise_not(Tensor self) -> Tensor',
    un('bitwise_not', 'same'),
    'Bitwise NOT of integral or bool tensors.',
    method,
  ),
  'isnan': backend(
    'isnan(Tensor self) -> Tensor',
    un('isnan', 'bool'),
    'Whether each element is NaN; bool result.',
    method,
  ),

  'where.self': backend(
    'where.self(Tensor condition, Tensor self, Tensor other) -> Tensor',
    (cond: Tensor, self: Operand, other: Operand) => {
      checkSameDevice('where', [cond, self, other]);
      if (cond.dtype !== bool) {
        throw new Error(
          `where expected condition to be a boolean tensor, but got a tensor with dtype ${cond.dtype.scalarTypeName}`,
        );
      }
      return { shape: broadcastOperands([cond, self, other]), dtype: binaryTypes('arith', self, other).out };
    },
    'Chooses `self` where `condition` is true, else `other`.',
  ),
  'where.ScalarOther': backend(
    'where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor',
    (cond: Tensor, self: Operand, other: Operand) => {
      if (cond.dtype !== bool) {
        throw new Error(
          `where expected condition to be a boolean tensor, but got a tensor with dtype ${cond.dtype.scalarTypeName}`,
        );
      }
      return { shape: broadcastOperands([cond, self]), dtype: binaryTypes('arith', self, other).out };
    },
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
};
