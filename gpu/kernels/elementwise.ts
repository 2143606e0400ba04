/**
 * WebGPU kernels of the elementwise operators: each runs its operator's checks (the rules shared with the Meta
 * function and the CPU kernel), checks the compute dtype (Note [GPU dtype dispatch]), allocates the output laid
 * out as TensorIterator lays it out, and runs one generated kernel (Note [GPU elementwise plan]) that converts
 * every input to the compute dtype as it loads it.
 *
 * @module
 */
import { RuntimeError } from '../../core/dispatch/errors.ts';
import { bfloat16, bool, type DType, float16, float32 } from '../../core/tensor/dtype.ts';
import { isIntegral } from '../../core/tensor/promotion.ts';
import { Tensor } from '../../core/tensor/tensor.ts';
import { type BackendDecl, ELEMENTWISE_OPS } from '../../core/ops/decl_elementwise.ts';
import {
  binaryComputeDtype,
  binaryOutDtype,
  type BinaryRule,
  broadcastOperands,
  checkBinary,
  checkClamp,
  checkClampInPlace,
  checkGeluApproximate,
  checkRoundingMode,
  checkUnary,
  checkWhere,
  type Operand,
  resultTypeOf,
  unaryComputeDtype,
  unaryOutDtype,
  type UnaryRule,
} from '../../core/ops/meta_elementwise.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { kindOf } from '../wgsl/dtypes.ts';
import { elementwiseOutput } from '../tensors.ts';
import { runElementwise, type ScalarOperand } from './elementwise_engine.ts';
import { BINARY, exprFor, type OpExpr, UNARY } from './elementwise_ops.ts';
import {
  ALL,
  ALL_BUT_BOOL,
  ALL_BUT_BOOL_HALF,
  checkDispatch,
  checkScalarFits,
  dispatch,
  type DtypeDispatch,
  FLOATING,
  FLOATING_BUT_HALF,
  INTEGRAL,
  INTEGRAL_AND_BOOL,
  scalarNumber,
  scalarOperand,
} from './scalars.ts';
import { copyInto, onGpu } from './copy.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;
type ElementwiseOp = keyof typeof ELEMENTWISE_OPS;

function ruleOf<R>(key: ElementwiseOp): R {
  return (ELEMENTWISE_OPS[key] as BackendDecl & { rule: R }).rule;
}

function expression(op: OpExpr, d: DtypeDispatch, compute: DType, names: { a: string; b?: string; s?: string }) {
  const kind = kindOf(compute, d.name);
  const expr = exprFor(op, kind, names);
  if (expr === undefined) checkDispatch({ name: d.name, dtypes: 0 }, compute);
  return { kind, expr: expr! };
}

/** Writes `op(inputs)` into `out`, computing in `compute`; 0-d CPU tensors are moved to the GPU first. */
function run(
  name: string,
  op: OpExpr,
  d: DtypeDispatch,
  out: Tensor,
  operands: readonly Operand[],
  compute: DType,
  alpha?: number,
): void {
  const inputs: Array<Tensor | ScalarOperand> = [];
  const moved: Tensor[] = [];
  const names = ['v0', 'v1', 'v2'];
  try {
    for (const x of operands) {
      if (x instanceof Tensor) {
        const g = onGpu(x);
        if (g !== x) moved.push(g);
        inputs.push(g);
      } else inputs.push(scalarOperand(x, compute, d.name));
    }
    if (alpha !== undefined) inputs.push(scalarOperand(alpha, compute, d.name));
    const { kind, expr } = expression(op, d, compute, { a: names[0], b: names[1], s: names[2] });
    let e = expr;
    // PyTorch rounds a reduced-float quotient to the dtype before truncating it (div with rounding_mode='trunc').
    if (op === BINARY.divTrunc && (compute === float16 || compute === bfloat16)) {
      e = `trunc(${compute === float16 ? 'round_f16' : 'round_bf16'}(v0 / v1))`;
    }
    runElementwise({
      name,
      out,
      inputs,
      inputKinds: inputs.map(() => kind),
      expr: e,
      exprKind: op.result === 'bool' ? 'i32' : kind,
    });
  } finally {
    for (const t of moved) t.dispose();
  }
}

const PLAIN_ADD: OpExpr = { f32: 'a + b', i32: 'a + b', i64: 'i64_add(a, b)' };
const PLAIN_SUB: OpExpr = { f32: 'a - b', i32: 'a - b', i64: 'i64_sub(a, b)' };

/** PyTorch's `pow(Tensor, Scalar)` runs sqrt, rsqrt and reciprocal for 0.5, -0.5 and -1 (float32, bfloat16). */
function powAsUnary(exponent: Operand, compute: DType): OpExpr | undefined {
  if (compute !== float32 && compute !== bfloat16) return undefined;
  if (exponent === 0.5) return UNARY.sqrt;
  if (exponent === -0.5) return UNARY.rsqrt;
  if (exponent === -1) return UNARY.reciprocal;
  return undefined;
}

function checkScalarDivisor(op: OpExpr, other: Operand, compute: DType): void {
  const divides = op === BINARY.divTrunc || op === BINARY.divFloor || op === BINARY.remainder || op === BINARY.fmod;
  if (divides && !(other instanceof Tensor) && isIntegral(compute, false) && Math.trunc(scalarNumber(other)) === 0) {
    throw new RuntimeError('ZeroDivisionError');
  }
}

function runBinary(
  d: DtypeDispatch,
  op: OpExpr,
  out: Tensor,
  self: Operand,
  other: Operand,
  compute: DType,
  alpha = 1,
) {
  checkScalarDivisor(op, other, compute);
  const unary = op === BINARY.pow && self instanceof Tensor && !(other instanceof Tensor)
    ? powAsUnary(other, compute)
    : undefined;
  if (unary !== undefined) return run(d.name, unary, d, out, [self], compute);
  // alpha = 1 (nearly every call) needs no multiply: plain `a + b` / `a - b`.
  const scaled = (op === BINARY.add || op === BINARY.sub) && alpha !== 1;
  run(
    d.name,
    scaled ? op : op === BINARY.add ? PLAIN_ADD : op === BINARY.sub ? PLAIN_SUB : op,
    d,
    out,
    [self, other],
    compute,
    scaled ? alpha : undefined,
  );
}

function binary(key: ElementwiseOp, op: OpExpr, d: DtypeDispatch, withAlpha = false): Kernel {
  const rule = ruleOf<BinaryRule>(key);
  const kernel = (self: Operand, other: Operand, alpha: number | boolean): Tensor => {
    const shape = broadcastOperands(self, other);
    const common = checkBinary(rule, null, shape, self, other, alpha);
    const compute = binaryComputeDtype(rule.kind, common);
    const ones = !(self instanceof Tensor) && self === 1; // pow(1, exponent): ones before any dtype dispatch
    if (!ones) checkDispatch(d, compute);
    const out = elementwiseOutput(shape, binaryOutDtype(rule.kind, common), self, other);
    return filledOrFreed(out, () => {
      if (ones) fill(out, 1);
      else runBinary(d, op, out, self, other, compute, scalarNumber(alpha));
    });
  };
  return (withAlpha
    ? (_hi: number, _lo: number, a: Operand, b: Operand, alpha: number | boolean) => kernel(a, b, alpha)
    : (_hi: number, _lo: number, a: Operand, b: Operand) => kernel(a, b, 1)) as Kernel;
}

function binaryInPlace(key: ElementwiseOp, op: OpExpr, d: DtypeDispatch, withAlpha = false): Kernel {
  const rule = ruleOf<BinaryRule>(key);
  const kernel = (self: Tensor, other: Operand, alpha: number | boolean): Tensor => {
    const common = checkBinary(rule, self, broadcastOperands(self, other), self, other, alpha);
    const compute = binaryComputeDtype(rule.kind, common);
    checkDispatch(d, compute);
    runBinary(d, op, self, self, other, compute, scalarNumber(alpha));
    return self;
  };
  return (withAlpha
    ? (_hi: number, _lo: number, a: Tensor, b: Operand, alpha: number | boolean) => kernel(a, b, alpha)
    : (_hi: number, _lo: number, a: Tensor, b: Operand) => kernel(a, b, 1)) as Kernel;
}

const DIV = dispatch('div_true_cpu', FLOATING);
const divTrue = binary('div.Tensor', BINARY.div, DIV) as (hi: number, lo: number, a: Operand, b: Operand) => Tensor;

function divMode(hi: number, lo: number, self: Tensor, other: Operand, mode: string | null): Tensor {
  checkRoundingMode(mode);
  if (mode === null) return divTrue(hi, lo, self, other);
  const d = mode === 'trunc' ? dispatch('div_trunc_cpu', ALL_BUT_BOOL) : dispatch('div_floor_cpu', ALL_BUT_BOOL);
  const op = mode === 'trunc' ? BINARY.divTrunc : BINARY.divFloor;
  const shape = broadcastOperands(self, other);
  const compute = checkBinary({ op: 'div', kind: 'arith' }, null, shape, self, other, 1);
  checkDispatch(d, compute);
  return filledOrFreed(
    elementwiseOutput(shape, compute, self, other),
    (out) => runBinary(d, op, out, self, other, compute),
  );
}

function unary(key: ElementwiseOp, op: OpExpr, d: DtypeDispatch): Kernel {
  const rule = ruleOf<UnaryRule>(key);
  return ((_hi: number, _lo: number, self: Tensor) => unaryOutOfPlace(rule, op, d, self)) as Kernel;
}

function unaryOutOfPlace(rule: UnaryRule, op: OpExpr, d: DtypeDispatch, self: Tensor): Tensor {
  checkUnary(rule, self, false);
  const compute = unaryComputeDtype(rule.kind, self.dtype);
  checkDispatch(d, compute);
  const chosen = op === UNARY.bitwiseNot && compute === bool ? UNARY.logicalNot : op;
  return filledOrFreed(
    elementwiseOutput(self.shape, unaryOutDtype(rule.kind, self.dtype), self),
    (out) => run(d.name, chosen, d, out, [self], compute),
  );
}

function unaryInPlace(key: ElementwiseOp, op: OpExpr, d: DtypeDispatch): Kernel {
  const rule = ruleOf<UnaryRule>(key);
  return ((_hi: number, _lo: number, self: Tensor) => {
    checkUnary(rule, self, true);
    const compute = unaryComputeDtype(rule.kind, self.dtype);
    checkDispatch(d, compute);
    run(d.name, op, d, self, [self], compute);
    return self;
  }) as Kernel;
}

/**
 * Writes one value into every element of `self` in any layout (`fill_`, `zero_`; expanded tensors too).
 *
 * @example
 * ```ts
 * import { fill } from './elementwise.ts';
 * // fill(gpuTensor, 0)
 * ```
 */
export function fill(self: Tensor, value: number | boolean): Tensor {
  self.assertAlive('fill_');
  const v = scalarNumber(value);
  checkScalarFits(v, self.dtype);
  const s = scalarOperand(v, self.dtype, 'fill_');
  runElementwise({ name: 'fill_', out: self, inputs: [s], inputKinds: [s.kind], expr: 'v0', exprKind: s.kind });
  return self;
}

function gelu(_hi: number, _lo: number, self: Tensor, approximate: string): Tensor {
  checkGeluApproximate(approximate);
  const op = approximate === 'tanh' ? UNARY.geluTanh : UNARY.gelu;
  return unaryOutOfPlace({ op: 'gelu', kind: 'same' }, op, dispatch('GeluKernelImpl', FLOATING_BUT_HALF), self);
}

// ---- where and clamp ---------------------------------------------------------------------------------------------

const WHERE: OpExpr = { f32: 'select(b, s, a != 0i)', i32: 'select(b, s, a != 0i)', i64: 'select(b, s, a != 0i)' };

/**
 * `where(cond, self, other)` into `out` (other a tensor or scalar), computing in `out`'s dtype.
 *
 * @example
 * ```ts
 * // whereInto(out, mask, a, 0)
 * ```
 */
export function whereInto(out: Tensor, cond: Tensor, self: Operand, other: Operand): void {
  const dtype = out.dtype;
  const kind = kindOf(dtype, 'where_webgpu');
  const inputs: Array<Tensor | ScalarOperand> = [];
  const moved: Tensor[] = [];
  try {
    for (const x of [cond, self, other]) {
      if (x instanceof Tensor) {
        const g = onGpu(x);
        if (g !== x) moved.push(g);
        inputs.push(g);
      } else inputs.push(scalarOperand(x, dtype, 'where_webgpu'));
    }
    runElementwise({
      name: 'where_webgpu',
      out,
      inputs,
      inputKinds: ['i32', kind, kind],
      expr: exprFor(WHERE, kind, { a: 'v0', b: 'v2', s: 'v1' })!,
      exprKind: kind,
    });
  } finally {
    for (const t of moved) t.dispose();
  }
}

function where(_hi: number, _lo: number, cond: Tensor, self: Tensor, other: Operand): Tensor {
  checkWhere(cond, self, other);
  const shape = broadcastOperands(cond, self, other);
  const dtype = resultTypeOf(self, other);
  if (!(other instanceof Tensor)) checkScalarFits(scalarNumber(other), dtype);
  kindOf(dtype, 'where_webgpu');
  return filledOrFreed(elementwiseOutput(shape, dtype, cond, self, other), (out) => whereInto(out, cond, self, other));
}

const CLAMP_BOTH = dispatch('clamp_scalar_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_MIN = dispatch('clamp_min_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_MAX = dispatch('clamp_max_scalar_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_TENSOR = dispatch('clamp_cpu', ALL_BUT_BOOL_HALF);
const MAXIMUM = dispatch('maximum_cpu', ALL);
const MINIMUM = dispatch('minimum_cpu', ALL);

// clamp(a, lo, hi) with PyTorch's NaN rules: a NaN input stays NaN; a NaN bound (both given) gives NaN.
const CLAMP: OpExpr = { f32: 'min_nan(max_nan(a, b), s)', i32: 'min(max(a, b), s)', i64: 'i64_min(i64_max(a, b), s)' };
const CLAMP_LOW: OpExpr = { f32: 'select(a, b, a < b)', i32: 'max(a, b)', i64: 'i64_max(a, b)' };
const CLAMP_HIGH: OpExpr = { f32: 'select(a, b, a > b)', i32: 'min(a, b)', i64: 'i64_min(a, b)' };

function clamp(_hi: number, _lo: number, self: Tensor, min: Operand | null, max: Operand | null): Tensor {
  checkClamp(self, min, max);
  const shape = broadcastOperands(self, min, max);
  const dtype = resultTypeOf(self, min, max);
  if (!(min instanceof Tensor) && !(max instanceof Tensor)) return clampScalar(self, min, max, dtype);
  if (min === null || max === null) {
    const d = min === null ? MINIMUM : MAXIMUM;
    checkDispatch(d, dtype);
    const op = min === null ? BINARY.minimum : BINARY.maximum;
    return filledOrFreed(
      elementwiseOutput(shape, dtype, self, min ?? max),
      (out) => run(d.name, op, d, out, [self, (min ?? max)!], dtype),
    );
  }
  checkDispatch(CLAMP_TENSOR, dtype);
  return filledOrFreed(
    elementwiseOutput(shape, dtype, self, min, max),
    (out) => run(CLAMP_TENSOR.name, CLAMP, CLAMP_TENSOR, out, [self, min, max], dtype),
  );
}

function clampScalar(
  self: Tensor,
  min: number | boolean | null,
  max: number | boolean | null,
  dtype: DType,
  nanBoundPropagates = false,
): Tensor {
  const d = min === null ? CLAMP_MAX : max === null ? CLAMP_MIN : CLAMP_BOTH;
  checkDispatch(d, dtype);
  const lo = min === null ? 0 : scalarNumber(min), hi = max === null ? 0 : scalarNumber(max);
  if (min !== null) checkScalarFits(lo, dtype);
  if (max !== null) checkScalarFits(hi, dtype);
  return filledOrFreed(elementwiseOutput(self.shape, dtype, self, min, max), (out) => {
    if (min === null || max === null) {
      // One NaN bound: clamp keeps `self`, clamp_min and clamp_max give NaN everywhere (as on the CPU).
      const bound = min === null ? hi : lo;
      if (Number.isNaN(bound)) {
        if (nanBoundPropagates) fill(out, NaN);
        else copyInto(out, self);
        return;
      }
      run(d.name, min === null ? CLAMP_HIGH : CLAMP_LOW, d, out, [self, bound], dtype);
      return;
    }
    run(d.name, CLAMP, d, out, [self, lo], dtype, hi);
  });
}

function clampInPlace(
  self: Tensor,
  min: number | boolean | null,
  max: number | boolean | null,
  nanBoundPropagates: boolean,
): Tensor {
  const dtype = checkClampInPlace(self, min, max);
  const tmp = clampScalar(self, min, max, dtype, nanBoundPropagates);
  try {
    copyInto(self, tmp);
  } finally {
    tmp.dispose();
  }
  return self;
}

// ---- the kernel table --------------------------------------------------------------------------------------------

const ADD = dispatch('add_cpu', ALL);
const SUB = dispatch('sub_cpu', ALL_BUT_BOOL);
const MUL = dispatch('mul_cpu', ALL);
const ANY = (name: string) => dispatch(name, ALL);
const BITWISE = (name: string) => dispatch(name, INTEGRAL_AND_BOOL);
const FLOAT_NO_HALF = (name: string) => dispatch(name, FLOATING_BUT_HALF);
const ROUNDING = (name: string) => dispatch(name, INTEGRAL | FLOATING_BUT_HALF);
const POW = dispatch('pow', ALL_BUT_BOOL);
const REMAINDER = dispatch('remainder_cpu', ALL_BUT_BOOL);
const FMOD = dispatch('fmod_cpu', ALL_BUT_BOOL);
const RELU = dispatch('clamp_min_cpu', ALL_BUT_BOOL_HALF);

/**
 * WebGPU kernels of the elementwise operators, keyed like the declarations.
 *
 * @example
 * ```ts
 * import { GPU_ELEMENTWISE_KERNELS } from './elementwise.ts';
 * typeof GPU_ELEMENTWISE_KERNELS['add.Tensor']; // 'function'
 * ```
 */
export const GPU_ELEMENTWISE_KERNELS: { readonly [K in ElementwiseOp]: Kernel } = {
  'add.Tensor': binary('add.Tensor', BINARY.add, ADD, true),
  'add.Scalar': binary('add.Scalar', BINARY.add, ADD, true),
  'add_.Tensor': binaryInPlace('add_.Tensor', BINARY.add, ADD, true),
  'add_.Scalar': binaryInPlace('add_.Scalar', BINARY.add, ADD, true),
  'sub.Tensor': binary('sub.Tensor', BINARY.sub, SUB, true),
  'sub.Scalar': binary('sub.Scalar', BINARY.sub, SUB, true),
  'sub_.Tensor': binaryInPlace('sub_.Tensor', BINARY.sub, SUB, true),
  'sub_.Scalar': binaryInPlace('sub_.Scalar', BINARY.sub, SUB, true),
  'mul.Tensor': binary('mul.Tensor', BINARY.mul, MUL),
  'mul.Scalar': binary('mul.Scalar', BINARY.mul, MUL),
  'mul_.Tensor': binaryInPlace('mul_.Tensor', BINARY.mul, MUL),
  'mul_.Scalar': binaryInPlace('mul_.Scalar', BINARY.mul, MUL),
  'div.Tensor': divTrue as Kernel,
  'div.Scalar': binary('div.Scalar', BINARY.div, DIV),
  'div.Tensor_mode': divMode as Kernel,
  'div.Scalar_mode': divMode as Kernel,
  'div_.Tensor': binaryInPlace('div_.Tensor', BINARY.div, DIV),
  'div_.Scalar': binaryInPlace('div_.Scalar', BINARY.div, DIV),
  'remainder.Tensor': binary('remainder.Tensor', BINARY.remainder, REMAINDER),
  'remainder.Scalar': binary('remainder.Scalar', BINARY.remainder, REMAINDER),
  'fmod.Tensor': binary('fmod.Tensor', BINARY.fmod, FMOD),
  'fmod.Scalar': binary('fmod.Scalar', BINARY.fmod, FMOD),
  'pow.Tensor_Tensor': binary('pow.Tensor_Tensor', BINARY.pow, POW),
  'pow.Tensor_Scalar': binary('pow.Tensor_Scalar', BINARY.pow, POW),
  'pow.Scalar': binary('pow.Scalar', BINARY.pow, POW),
  'minimum': binary('minimum', BINARY.minimum, MINIMUM),
  'maximum': binary('maximum', BINARY.maximum, MAXIMUM),
  'atan2': binary('atan2', BINARY.atan2, FLOAT_NO_HALF('atan2_cpu')),
  'bitwise_and.Tensor': binary('bitwise_and.Tensor', BINARY.bitwiseAnd, BITWISE('bitwise_and_cpu')),
  'bitwise_or.Tensor': binary('bitwise_or.Tensor', BINARY.bitwiseOr, BITWISE('bitwise_or_cpu')),
  'bitwise_xor.Tensor': binary('bitwise_xor.Tensor', BINARY.bitwiseXor, BITWISE('bitwise_xor_cpu')),
  'logical_and': binary('logical_and', BINARY.logicalAnd, ANY('logical_and_cpu')),
  'logical_or': binary('logical_or', BINARY.logicalOr, ANY('logical_or_cpu')),
  'logical_xor': binary('logical_xor', BINARY.logicalXor, ANY('logical_xor_cpu')),
  'eq.Tensor': binary('eq.Tensor', BINARY.eq, ANY('eq_cpu')),
  'eq.Scalar': binary('eq.Scalar', BINARY.eq, ANY('eq_cpu')),
  'ne.Tensor': binary('ne.Tensor', BINARY.ne, ANY('ne_cpu')),
  'ne.Scalar': binary('ne.Scalar', BINARY.ne, ANY('ne_cpu')),
  'lt.Tensor': binary('lt.Tensor', BINARY.lt, ANY('lt_cpu')),
  'lt.Scalar': binary('lt.Scalar', BINARY.lt, ANY('lt_cpu')),
  'le.Tensor': binary('le.Tensor', BINARY.le, ANY('le_cpu')),
  'le.Scalar': binary('le.Scalar', BINARY.le, ANY('le_cpu')),
  'gt.Tensor': binary('gt.Tensor', BINARY.gt, ANY('gt_cpu')),
  'gt.Scalar': binary('gt.Scalar', BINARY.gt, ANY('gt_cpu')),
  'ge.Tensor': binary('ge.Tensor', BINARY.ge, ANY('ge_cpu')),
  'ge.Scalar': binary('ge.Scalar', BINARY.ge, ANY('ge_cpu')),
  'neg': unary('neg', UNARY.neg, dispatch('neg_cpu', ALL_BUT_BOOL)),
  'neg_': unaryInPlace('neg_', UNARY.neg, dispatch('neg_cpu', ALL_BUT_BOOL)),
  'abs': unary('abs', UNARY.abs, dispatch('abs_cpu', ALL_BUT_BOOL)),
  'sign': unary('sign', UNARY.sign, ANY('sign_cpu')),
  'exp': unary('exp', UNARY.exp, FLOAT_NO_HALF('exp_vml_cpu')),
  'exp_': unaryInPlace('exp_', UNARY.exp, FLOAT_NO_HALF('exp_vml_cpu')),
  'log': unary('log', UNARY.log, FLOAT_NO_HALF('log_vml_cpu')),
  'log1p': unary('log1p', UNARY.log1p, FLOAT_NO_HALF('log1p_vml_cpu')),
  'expm1': unary('expm1', UNARY.expm1, FLOAT_NO_HALF('expm1_vml_cpu')),
  'sqrt': unary('sqrt', UNARY.sqrt, FLOAT_NO_HALF('sqrt_vml_cpu')),
  'rsqrt': unary('rsqrt', UNARY.rsqrt, FLOAT_NO_HALF('rsqrt_cpu')),
  'sin': unary('sin', UNARY.sin, FLOAT_NO_HALF('sin_vml_cpu')),
  'cos': unary('cos', UNARY.cos, FLOAT_NO_HALF('cos_vml_cpu')),
  'tanh': unary('tanh', UNARY.tanh, FLOAT_NO_HALF('tanh_vml_cpu')),
  'tanh_': unaryInPlace('tanh_', UNARY.tanh, FLOAT_NO_HALF('tanh_vml_cpu')),
  'sigmoid': unary('sigmoid', UNARY.sigmoid, FLOAT_NO_HALF('sigmoid_cpu')),
  'sigmoid_': unaryInPlace('sigmoid_', UNARY.sigmoid, FLOAT_NO_HALF('sigmoid_cpu')),
  'erf': unary('erf', UNARY.erf, FLOAT_NO_HALF('erf_vml_cpu')),
  'reciprocal': unary('reciprocal', UNARY.reciprocal, dispatch('reciprocal_cpu', FLOATING)),
  'relu': unary('relu', UNARY.relu, RELU),
  'relu_': unaryInPlace('relu_', UNARY.relu, RELU),
  'sqrt_': unaryInPlace('sqrt_', UNARY.sqrt, FLOAT_NO_HALF('sqrt_vml_cpu')),
  'zero_': ((_hi: number, _lo: number, self: Tensor) => fill(self, 0)) as Kernel,
  'fill_.Scalar': ((_hi: number, _lo: number, self: Tensor, value: number | boolean) => fill(self, value)) as Kernel,
  'gelu': gelu as Kernel,
  'silu': unary('silu', UNARY.silu, FLOAT_NO_HALF('silu_cpu')),
  'floor': unary('floor', UNARY.floor, ROUNDING('floor_vml_cpu')),
  'ceil': unary('ceil', UNARY.ceil, ROUNDING('ceil_vml_cpu')),
  'round': unary('round', UNARY.round, ROUNDING('round_vml_cpu')),
  'trunc': unary('trunc', UNARY.trunc, ROUNDING('trunc_vml_cpu')),
  'logical_not': unary('logical_not', UNARY.logicalNot, ANY('logical_not_cpu')),
  'bitwise_not': unary('bitwise_not', UNARY.bitwiseNot, BITWISE('bitwise_not_cpu')),
  'isnan': unary('isnan', UNARY.isnan, ANY('isnan')),
  'where.self': where as Kernel,
  'where.ScalarOther': where as Kernel,
  'clamp': clamp as Kernel,
  'clamp.Tensor': clamp as Kernel,
  'clamp_':
    ((_hi: number, _lo: number, self: Tensor, min: number | null, max: number | null) =>
      clampInPlace(self, min, max, false)) as Kernel,
  'clamp_min': ((_hi: number, _lo: number, self: Tensor, min: number) => {
    checkClamp(self, min, null);
    return clampScalar(self, min, null, resultTypeOf(self, min), true);
  }) as Kernel,
  'clamp_max': ((_hi: number, _lo: number, self: Tensor, max: number) => {
    checkClamp(self, null, max);
    return clampScalar(self, null, max, resultTypeOf(self, max), true);
  }) as Kernel,
  'clamp_min_':
    ((_hi: number, _lo: number, self: Tensor, min: number) => clampInPlace(self, min, null, true)) as Kernel,
  'clamp_max_':
    ((_hi: number, _lo: number, self: Tensor, max: number) => clampInPlace(self, null, max, true)) as Kernel,
};
