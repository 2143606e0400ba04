/**
 * CPU kernels of the elementwise operators. Each runs its operator's checks (the rule shared with the Meta
 * function), checks the compute dtype against PyTorch 1.13's CPU dispatch list for the kernel, allocates the
 * output, converts inputs to the compute dtype (TensorIterator's common dtype) and runs the wasm kernel,
 * contiguous-SIMD or strided (Note [Elementwise plan] in iterator.ts).
 *
 * Note [Elementwise hot path]
 * `add` of two small float32 tensors is dominated by fixed costs, so the common case (operands already in the
 * compute dtype, contiguous at the output's shape) calls the `_contig` export directly: the checks allocate
 * nothing (Note [Allocation-free checks] in meta_elementwise.ts), no operand array or plan object is built,
 * and no closure is created per call. Everything else (casts, broadcasting, strided views, in-place writes
 * through a temporary) takes the general path through `planElementwise`.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../dispatch/errors.ts';
import type { DType } from '../tensor/dtype.ts';
import {
  bfloat16,
  bfloat16BitsToNumber,
  bool,
  float16,
  float16BitsToNumber,
  float32,
  float64,
  int16,
  int32,
  int64,
  int8,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  uint8,
} from '../tensor/dtype.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import { isIntegral } from '../tensor/promotion.ts';
import { Tensor } from '../tensor/tensor.ts';
import { type BackendDecl, ELEMENTWISE_OPS } from '../ops/decl_elementwise.ts';
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
} from '../ops/meta_elementwise.ts';
import { BinaryOp, ClampFlags, UnaryOp } from './exports_elementwise.ts';
import { asDtype, copyIntoCpu, emptyCpu, emptyStridedCpu, planElementwise } from './iterator.ts';
import { outputStridesOf } from '../ops/output_layout.ts';
import { contiguousAddress, hostElements, kernels } from './boundary.ts';
import { itemSizesOf, splitElementwise, splitsElementwise } from './parallel.ts';
import { checkStatus } from './runtime.ts';
import { scalarNumber } from '../tensor/float_scalar.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;
type ElementwiseOp = keyof typeof ELEMENTWISE_OPS;

// ---- dtype dispatch lists ----------------------------------------------------------------------------------------

/**
 * A CPU kernel's `AT_DISPATCH` list in PyTorch 1.13: the compute dtypes it handles (a bit per ScalarType code)
 * and the name its `"<name>" not implemented for '<Type>'` error uses. Checked before any allocation, so the
 * error also comes for empty tensors, as in PyTorch.
 */
interface DtypeDispatch {
  readonly name: string;
  readonly dtypes: number;
}

const bits = (...dtypes: DType[]): number => dtypes.reduce((m, d) => m | (1 << d.scalarType), 0);
const INTEGRAL = bits(uint8, int8, int16, int32, int64);
const ALL = INTEGRAL | bits(bool, float16, bfloat16, float32, float64);
const ALL_BUT_BOOL = ALL & ~bits(bool);
const ALL_BUT_BOOL_HALF = ALL_BUT_BOOL & ~bits(float16);
const FLOATING = bits(float16, bfloat16, float32, float64);
const FLOATING_BUT_HALF = bits(bfloat16, float32, float64);
const INTEGRAL_AND_BOOL = INTEGRAL | bits(bool);
const REDUCED_FLOAT = bits(float16, bfloat16);

const dispatch = (name: string, dtypes: number): DtypeDispatch => ({ name, dtypes });

function checkDispatch(d: DtypeDispatch, dtype: DType): void {
  if ((d.dtypes & (1 << dtype.scalarType)) === 0) {
    throw new NotImplementedError(`"${d.name}" not implemented for '${dtype.scalarTypeName}'`);
  }
}

// ---- scalars -----------------------------------------------------------------------------------------------------

const scalarValue = scalarNumber;

/**
 * A scalar operand as the kernel sees it: PyTorch wraps it in a tensor and casts that to the compute dtype.
 * For float16/bfloat16 it is rounded to the dtype (through float, as c10's conversion does) before the
 * arithmetic, since the kernels keep float precision for reduced-float scalars. For integral dtypes an integer
 * scalar wraps to the dtype's width as the int64 wrapped number's cast does (`int32 + 2**40` adds 0), and a
 * float one truncates first.
 */
function scalarIn(s: number, dtype: DType): number {
  if (dtype === float16) return float16BitsToNumber(numberToFloat16Bits(Math.fround(s)));
  if (dtype === bfloat16) return bfloat16BitsToNumber(numberToBFloat16Bits(Math.fround(s)));
  if (isIntegral(dtype, false)) return wrapInteger(s, dtype);
  return s;
}

const INT_BITS: Partial<Record<string, number>> = { uint8: 8, int8: 8, int16: 16, int32: 32, int64: 64 };

/**
 * An integral scalar converted to `dtype` as C++ converts an int64 to it: truncation, then two's-complement
 * wrapping to the width (uint8 unsigned). Exact for every integer a JS number holds exactly.
 */
function wrapInteger(s: number, dtype: DType): number {
  if (!Number.isFinite(s)) return s; // kept for the kernel's own conversion (NaN/inf scalars with ints)
  const v = Math.trunc(s) + 0;
  const bits = INT_BITS[dtype.name];
  if (bits === undefined) return v;
  if (Number.isSafeInteger(v) && bits === 32) return v | 0;
  if (Number.isSafeInteger(v) && bits < 32) return dtype === uint8 ? v & 0xff : (v << (32 - bits)) >> (32 - bits);
  const wrapped = dtype === uint8 ? BigInt.asUintN(bits, BigInt(v)) : BigInt.asIntN(bits, BigInt(v));
  return Number(wrapped);
}

const CPP_NAMES: Partial<Record<string, string>> = {
  uint8: 'uint8_t',
  int8: 'int8_t',
  int16: 'int16_t',
  int32: 'int',
  float16: 'at::Half',
  bfloat16: 'at::BFloat16',
  float32: 'float',
};

/**
 * c10's `checked_convert`: a Scalar bound that does not fit the dtype is an error (`clamp(int8, 0, 1000)`).
 *
 * @example
 * ```ts
 * import { checkScalarFits } from './elementwise.ts';
 * import { int8 } from '../tensor/dtype.ts';
 * checkScalarFits(100, int8); // fits; 1000 would throw
 * ```
 */
export function checkScalarFits(s: number, dtype: DType): void {
  let fits = true;
  if (dtype === bool || dtype === int64 || dtype === float64) return;
  if (dtype.isFloatingPoint) {
    const max = dtype === float16 ? 65504 : 3.4028234663852886e38;
    fits = !Number.isFinite(s) || Math.abs(s) <= max;
  } else {
    const size = 8 * dtype.itemSize;
    if (dtype === uint8) fits = s <= 255 && s >= -255; // unsigned types also take negatives, as in c10
    else fits = s >= -(2 ** (size - 1)) && s <= 2 ** (size - 1) - 1;
  }
  if (!fits) {
    const cpp = CPP_NAMES[dtype.name] ?? dtype.name;
    throw new RuntimeError(`value cannot be converted to type ${cpp} without overflow`);
  }
}

/**
 * A 0-d CPU tensor holding a scalar (what PyTorch calls a wrapped number).
 *
 * @example
 * ```ts
 * import { scalarTensor } from './elementwise.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * scalarTensor(2, float32).dispose();
 * ```
 */
export function scalarTensor(value: number | boolean, dtype: DType): Tensor {
  const t = emptyCpu([], dtype);
  const v = scalarIn(scalarValue(value), dtype);
  const status = kernels().fill_contig(dtype.scalarType, contiguousAddress(t, 'fill_', 1), v, 1);
  checkStatus(status, 'fill_', dtype.scalarType);
  return t;
}

// ---- helpers -----------------------------------------------------------------------------------------------------

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether `t` can be read by a `_contig` kernel producing `shape` in `dtype`: no cast, no broadcast, dense. */
function isDirect(t: Tensor, shape: readonly number[], dtype: DType): boolean {
  return t.dtype === dtype && sameShape(t.shape, shape) && t.isContiguous();
}

function numelOfShape(shape: readonly number[]): number {
  let n = 1;
  for (let i = 0; i < shape.length; i++) n *= shape[i];
  return n;
}

/** Opcodes (a bit each) that raise PyTorch's ZeroDivisionError for integral zero divisors. */
const DIVIDES = (1 << BinaryOp.divTrunc) | (1 << BinaryOp.divFloor) | (1 << BinaryOp.remainder) |
  (1 << BinaryOp.fmod);

/** PyTorch's integer-division check: any zero divisor raises (the kernels would write 0 instead). */
function checkNoZeroDivisor(b: Tensor): void {
  const k = kernels();
  const isZero = emptyCpu(b.shape, bool);
  try {
    const plan = planElementwise('eq', b.shape, [isZero, b]);
    const code = b.dtype.scalarType;
    const [out, a] = plan.ptrs;
    const status = plan.contiguous
      ? k.binary_scalar_contig(BinaryOp.eq, code, out, a, 0, plan.numel, 1)
      : k.binary_scalar_strided(BinaryOp.eq, code, out, a, 0, plan.desc, 1);
    checkStatus(status, 'eq', code);
    if ((hostElements(isZero, 'eq', plan.numel) as Uint8Array).indexOf(1) >= 0) {
      throw new RuntimeError('ZeroDivisionError');
    }
  } finally {
    isZero.dispose();
  }
}

/**
 * A new output of `shape` laid out as TensorIterator lays it out from the operands: contiguous when the inputs
 * are, else following their memory order (Note [Elementwise output layout] in core/ops/output_layout.ts).
 */
function outputFor(shape: readonly number[], dtype: DType, a: Operand, b?: Operand | null, c?: Operand | null): Tensor {
  const strides = outputStridesOf(shape, a, b, c);
  return strides === undefined ? emptyCpu(shape, dtype) : emptyStridedCpu(shape, strides, dtype);
}

// ---- binary ------------------------------------------------------------------------------------------------------

/** How a binary operator runs on the CPU: its checks, the wasm opcode, and the dtypes that opcode handles. */
interface BinarySpec {
  readonly rule: BinaryRule;
  readonly opcode: number;
  readonly dispatch: DtypeDispatch;
}

function ruleOf<R>(key: ElementwiseOp): R {
  const rule = (ELEMENTWISE_OPS[key] as BackendDecl & { rule?: R }).rule;
  if (rule === undefined) throw new Error(`The declaration of ${key} has no elementwise rule`);
  return rule;
}

/**
 * Writes `a op b` (`b` a tensor or scalar) into `out`, computing in `compute`; `out` has the compute dtype, or
 * Bool for comparisons. Temporaries are freed on every path.
 */
function runBinary(spec: BinarySpec, out: Tensor, a: Tensor, b: Operand, compute: DType, alpha: number): void {
  const shape = out.shape;
  const numel = numelOfShape(shape);
  if (numel === 0) return;
  const k = kernels();
  const code = compute.scalarType;
  // Note [Rounded division of reduced floats]: for float16/bfloat16 PyTorch computes trunc(a / b) with the
  // quotient rounded to the dtype first; the kernel truncates the float quotient, so divide, then truncate.
  const truncate = spec.opcode === BinaryOp.divTrunc && (REDUCED_FLOAT & (1 << code)) !== 0;
  const op = truncate ? BinaryOp.div : spec.opcode;
  const integerDivision = (DIVIDES & (1 << op)) !== 0 && isIntegral(compute, false);
  if (b instanceof Tensor) {
    if (isDirect(a, shape, compute) && isDirect(b, shape, compute) && out.isContiguous()) {
      if (integerDivision) checkNoZeroDivisor(b);
      const name = spec.dispatch.name;
      const o = contiguousAddress(out, name, numel), pa = contiguousAddress(a, name, numel);
      const pb = contiguousAddress(b, name, numel);
      const status = splitsElementwise(numel)
        ? splitElementwise('binary', [op, code, o, pa, pb, 0, alpha], itemSizesOf(out, a, b), numel)
        : k.binary_contig(op, code, o, pa, pb, numel, alpha);
      checkStatus(status, name, code);
    } else {
      const ta = asDtype(a, compute);
      let tb: Tensor | undefined;
      try {
        tb = asDtype(b, compute);
        if (integerDivision) checkNoZeroDivisor(tb);
        const plan = planElementwise(spec.dispatch.name, shape, [out, ta, tb]);
        const [o, pa, pb] = plan.ptrs;
        const status = splitsElementwise(numel)
          ? splitElementwise('binary', [op, code, o, pa, pb, 0, alpha], itemSizesOf(out, ta, tb), numel, plan)
          : plan.contiguous
          ? k.binary_contig(op, code, o, pa, pb, numel, alpha)
          : k.binary_strided(op, code, o, pa, pb, plan.desc, alpha);
        checkStatus(status, spec.dispatch.name, code);
      } finally {
        if (ta !== a) ta.dispose();
        if (tb !== undefined && tb !== b) tb.dispose();
      }
    }
    if (truncate) truncAfterDiv(out);
    return;
  }
  const s = scalarIn(scalarValue(b), compute);
  if (integerDivision && s === 0) throw new RuntimeError('ZeroDivisionError');
  const unaryOp = op === BinaryOp.pow ? powAsUnary(s, compute) : -1;
  if (unaryOp !== -1) {
    runUnary(spec.dispatch.name, unaryOp, out, a, compute);
  } else if (isDirect(a, shape, compute) && out.isContiguous()) {
    const name = spec.dispatch.name;
    const o = contiguousAddress(out, name, numel);
    const pa = contiguousAddress(a, name, numel);
    const status = splitsElementwise(numel)
      ? splitElementwise('binary_scalar', [op, code, o, pa, s, 0, alpha], itemSizesOf(out, a), numel)
      : k.binary_scalar_contig(op, code, o, pa, s, numel, alpha);
    checkStatus(status, name, code);
  } else {
    const ta = asDtype(a, compute);
    try {
      const plan = planElementwise(spec.dispatch.name, shape, [out, ta]);
      const [o, pa] = plan.ptrs;
      const status = splitsElementwise(numel)
        ? splitElementwise('binary_scalar', [op, code, o, pa, s, 0, alpha], itemSizesOf(out, ta), numel, plan)
        : plan.contiguous
        ? k.binary_scalar_contig(op, code, o, pa, s, numel, alpha)
        : k.binary_scalar_strided(op, code, o, pa, s, plan.desc, alpha);
      checkStatus(status, spec.dispatch.name, code);
    } finally {
      if (ta !== a) ta.dispose();
    }
  }
  if (truncate) truncAfterDiv(out);
}

function truncAfterDiv(out: Tensor): void {
  runUnary('div_trunc_cpu', UnaryOp.trunc, out, out, out.dtype);
}

/**
 * PyTorch's `pow(Tensor, Scalar)` runs sqrt, rsqrt and reciprocal kernels for the exponents 0.5, -0.5 and -1
 * (float32, float64 and bfloat16), which differs from `pow` for -0 and -inf; returns that unary opcode or -1.
 */
function powAsUnary(exponent: number, compute: DType): number {
  if (compute !== float32 && compute !== float64 && compute !== bfloat16) return -1;
  if (exponent === 0.5) return UnaryOp.sqrt;
  if (exponent === -0.5) return UnaryOp.rsqrt;
  if (exponent === -1) return UnaryOp.reciprocal;
  return -1;
}

/** `s op b` with the scalar on the left (`pow.Scalar`). */
function runReversed(spec: BinarySpec, out: Tensor, s: number | boolean, b: Tensor, compute: DType): void {
  const numel = out.numel;
  if (numel === 0) return;
  const k = kernels();
  const code = compute.scalarType;
  const value = scalarIn(scalarValue(s), compute);
  const tb = asDtype(b, compute);
  try {
    const plan = planElementwise(spec.dispatch.name, out.shape, [out, tb]);
    const [o, pb] = plan.ptrs;
    const status = splitsElementwise(numel)
      ? splitElementwise('binary_rscalar', [spec.opcode, code, o, value, pb, 0, 1], itemSizesOf(out, tb), numel, plan)
      : plan.contiguous
      ? k.binary_rscalar_contig(spec.opcode, code, o, value, pb, numel, 1)
      : k.binary_rscalar_strided(spec.opcode, code, o, value, pb, plan.desc, 1);
    checkStatus(status, spec.dispatch.name, code);
  } finally {
    if (tb !== b) tb.dispose();
  }
}

function fillOnes(out: Tensor): void {
  const code = out.dtype.scalarType;
  const n = out.numel;
  checkStatus(kernels().fill_contig(code, contiguousAddress(out, 'fill_', n), 1, n), 'fill_', code);
}

/** The out-of-place kernel of a binary operator; `alpha` only where the schema has it. */
function binary(key: ElementwiseOp, opcode: number, d: DtypeDispatch, withAlpha = false): Kernel {
  const spec: BinarySpec = { rule: ruleOf<BinaryRule>(key), opcode, dispatch: d };
  const run = (self: Operand, other: Operand, alpha: number | boolean): Tensor => {
    const rule = spec.rule;
    const shape = broadcastOperands(self, other);
    const common = checkBinary(rule, null, shape, self, other, alpha);
    const compute = binaryComputeDtype(rule.kind, common);
    // pow(1, exponent) is one everywhere, before any dtype dispatch (PyTorch fills; `true` is not 1 there).
    const fill = !(self instanceof Tensor) && self === 1;
    if (!fill) checkDispatch(spec.dispatch, compute);
    const out = outputFor(shape, binaryOutDtype(rule.kind, common), self, other);
    try {
      if (self instanceof Tensor) runBinary(spec, out, self, other, compute, scalarValue(alpha));
      else if (fill) fillOnes(out);
      else runReversed(spec, out, self, other as Tensor, compute);
    } catch (e) {
      out.dispose();
      throw e;
    }
    return out;
  };
  // Kernels declare exactly their schema's parameters: the dispatcher checks arity at registration.
  return (withAlpha
    ? (_hi: number, _lo: number, self: Operand, other: Operand, alpha: number | boolean) => run(self, other, alpha)
    : (_hi: number, _lo: number, self: Operand, other: Operand) => run(self, other, 1)) as Kernel;
}

/** Writes `self op other` into `self` (through a temporary in the compute dtype when `self` has another). */
function binaryInPlace(key: ElementwiseOp, opcode: number, d: DtypeDispatch, withAlpha = false): Kernel {
  const spec: BinarySpec = { rule: ruleOf<BinaryRule>(key), opcode, dispatch: d };
  const run = (self: Tensor, other: Operand, alpha: number | boolean): Tensor => {
    const rule = spec.rule;
    const common = checkBinary(rule, self, broadcastOperands(self, other), self, other, alpha);
    const compute = binaryComputeDtype(rule.kind, common);
    checkDispatch(spec.dispatch, compute);
    if (self.dtype === compute) {
      runBinary(spec, self, self, other, compute, scalarValue(alpha));
      return self;
    }
    const tmp = emptyCpu(self.shape, compute);
    try {
      runBinary(spec, tmp, self, other, compute, scalarValue(alpha));
      copyIntoCpu(self, tmp);
    } finally {
      tmp.dispose();
    }
    return self;
  };
  return (withAlpha
    ? (_hi: number, _lo: number, self: Tensor, other: Operand, alpha: number | boolean) => run(self, other, alpha)
    : (_hi: number, _lo: number, self: Tensor, other: Operand) => run(self, other, 1)) as Kernel;
}

const DIV = dispatch('div_true_cpu', FLOATING);
const DIV_TRUNC: BinarySpec = {
  rule: { op: 'div', kind: 'arith' },
  opcode: BinaryOp.divTrunc,
  dispatch: dispatch('div_trunc_cpu', ALL_BUT_BOOL),
};
const DIV_FLOOR: BinarySpec = {
  rule: { op: 'div', kind: 'arith' },
  opcode: BinaryOp.divFloor,
  dispatch: dispatch('div_floor_cpu', ALL_BUT_BOOL),
};
const divTrue = binary('div.Tensor', BinaryOp.div, DIV) as (hi: number, lo: number, a: Operand, b: Operand) => Tensor;

function divMode(hi: number, lo: number, self: Tensor, other: Operand, mode: string | null): Tensor {
  checkRoundingMode(mode);
  if (mode === null) return divTrue(hi, lo, self, other);
  const spec = mode === 'trunc' ? DIV_TRUNC : DIV_FLOOR;
  const shape = broadcastOperands(self, other);
  const compute = checkBinary(spec.rule, null, shape, self, other, 1);
  checkDispatch(spec.dispatch, compute);
  const out = outputFor(shape, compute, self, other);
  try {
    runBinary(spec, out, self, other, compute, 1);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

// ---- unary -------------------------------------------------------------------------------------------------------

/** Writes `op(a)` into `out` (the compute dtype, or Bool for logical_not and isnan), computing in `compute`. */
function runUnary(name: string, op: number, out: Tensor, a: Tensor, compute: DType): void {
  const numel = numelOfShape(out.shape);
  if (numel === 0) return;
  const k = kernels();
  const code = compute.scalarType;
  if (isDirect(a, out.shape, compute) && out.isContiguous()) {
    const o = contiguousAddress(out, name, numel);
    const pa = contiguousAddress(a, name, numel);
    const status = splitsElementwise(numel)
      ? splitElementwise('unary', [op, code, o, pa, 0], itemSizesOf(out, a), numel)
      : k.unary_contig(op, code, o, pa, numel);
    checkStatus(status, name, code);
    return;
  }
  const ta = asDtype(a, compute);
  try {
    const plan = planElementwise(name, out.shape, [out, ta]);
    const [o, pa] = plan.ptrs;
    const status = splitsElementwise(numel)
      ? splitElementwise('unary', [op, code, o, pa, 0], itemSizesOf(out, ta), numel, plan)
      : plan.contiguous
      ? k.unary_contig(op, code, o, pa, numel)
      : k.unary_strided(op, code, o, pa, plan.desc);
    checkStatus(status, name, code);
  } finally {
    if (ta !== a) ta.dispose();
  }
}

function unaryOutOfPlace(rule: UnaryRule, op: number, d: DtypeDispatch, self: Tensor): Tensor {
  checkUnary(rule, self, false);
  const compute = unaryComputeDtype(rule.kind, self.dtype);
  checkDispatch(d, compute);
  const out = outputFor(self.shape, unaryOutDtype(rule.kind, self.dtype), self);
  try {
    runUnary(d.name, op, out, self, compute);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

function unary(key: ElementwiseOp, op: number, d: DtypeDispatch): Kernel {
  const rule = ruleOf<UnaryRule>(key);
  return ((_hi: number, _lo: number, self: Tensor) => unaryOutOfPlace(rule, op, d, self)) as Kernel;
}

function unaryInPlace(key: ElementwiseOp, op: number, d: DtypeDispatch): Kernel {
  const rule = ruleOf<UnaryRule>(key);
  return ((_hi: number, _lo: number, self: Tensor) => {
    checkUnary(rule, self, true);
    const compute = unaryComputeDtype(rule.kind, self.dtype);
    checkDispatch(d, compute);
    runUnary(d.name, op, self, self, compute); // in-place unary ops keep the dtype (checkUnary made sure)
    return self;
  }) as Kernel;
}

const GELU = dispatch('GeluKernelImpl', FLOATING_BUT_HALF);
const GELU_RULE: UnaryRule = { op: 'gelu', kind: 'same' };

function gelu(_hi: number, _lo: number, self: Tensor, approximate: string): Tensor {
  checkGeluApproximate(approximate);
  return unaryOutOfPlace(GELU_RULE, approximate === 'tanh' ? UnaryOp.geluTanh : UnaryOp.gelu, GELU, self);
}

/** `fill_` / `zero_`: writes one value into every element of `self`, in any layout. */
function fillInPlace(self: Tensor, value: number | boolean): Tensor {
  const v = scalarNumber(value);
  checkScalarFits(v, self.dtype);
  const plan = planElementwise('fill_', self.shape, [self]);
  if (plan.numel === 0) return self;
  const k = kernels();
  const status = splitsElementwise(plan.numel)
    ? splitElementwise('fill', [self.dtype.scalarType, plan.ptrs[0], v, 0], itemSizesOf(self), plan.numel, plan)
    : plan.contiguous
    ? k.fill_contig(self.dtype.scalarType, plan.ptrs[0], v, plan.numel)
    : k.fill_strided(self.dtype.scalarType, plan.ptrs[0], v, plan.desc);
  checkStatus(status, 'fill_', self.dtype.scalarType);
  return self;
}

// ---- where and clamp ---------------------------------------------------------------------------------------------

function where(_hi: number, _lo: number, cond: Tensor, self: Tensor, other: Operand): Tensor {
  checkWhere(cond, self, other);
  const shape = broadcastOperands(cond, self, other);
  const dtype = resultTypeOf(self, other);
  const out = outputFor(shape, dtype, cond, self, other);
  let ta: Tensor | undefined, tb: Tensor | undefined;
  try {
    ta = asDtype(self, dtype);
    // A scalar `other` becomes a tensor of the result dtype by a checked conversion (PyTorch's scalar_to_tensor).
    if (!(other instanceof Tensor)) checkScalarFits(scalarValue(other), dtype);
    tb = other instanceof Tensor ? asDtype(other, dtype) : scalarTensor(other, dtype);
    const plan = planElementwise('where_cpu', shape, [out, cond, ta, tb]);
    if (plan.numel > 0) {
      const k = kernels();
      const [o, pc, pa, pb] = plan.ptrs;
      const status = splitsElementwise(plan.numel)
        ? splitElementwise(
          'where',
          [dtype.scalarType, o, pc, pa, pb, 0],
          itemSizesOf(out, cond, ta, tb),
          plan.numel,
          plan,
        )
        : plan.contiguous
        ? k.where_contig(dtype.scalarType, o, pc, pa, pb, plan.numel)
        : k.where_strided(dtype.scalarType, o, pc, pa, pb, plan.desc);
      checkStatus(status, 'where_cpu', dtype.scalarType);
    }
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (ta !== undefined && ta !== self) ta.dispose();
    if (tb !== undefined && tb !== other) tb.dispose();
  }
  return out;
}

const CLAMP_BOTH = dispatch('clamp_scalar_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_MIN = dispatch('clamp_min_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_MAX = dispatch('clamp_max_scalar_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_TENSOR = dispatch('clamp_cpu', ALL_BUT_BOOL_HALF);
const CLAMP_RULE: BinaryRule = { op: 'clamp', kind: 'arith' };
const MAXIMUM: BinarySpec = { rule: CLAMP_RULE, opcode: BinaryOp.maximum, dispatch: dispatch('maximum_cpu', ALL) };
const MINIMUM: BinarySpec = { rule: CLAMP_RULE, opcode: BinaryOp.minimum, dispatch: dispatch('minimum_cpu', ALL) };

function clamp(_hi: number, _lo: number, self: Tensor, min: Operand | null, max: Operand | null): Tensor {
  checkClamp(self, min, max);
  const shape = broadcastOperands(self, min, max);
  const dtype = resultTypeOf(self, min, max);
  if (!(min instanceof Tensor) && !(max instanceof Tensor)) return clampScalar(self, min, max, dtype);
  if (min === null || max === null) {
    // One tensor bound: PyTorch runs maximum (min) or minimum (max), which take every dtype and propagate NaN.
    const spec = min === null ? MINIMUM : MAXIMUM;
    return filledOrFreed(
      outputFor(shape, dtype, self, min ?? max),
      (out) => runBinary(spec, out, self, (min ?? max) as Operand, dtype, 1),
    );
  }
  checkDispatch(CLAMP_TENSOR, dtype);
  const out = outputFor(shape, dtype, self, min, max);
  let ta: Tensor | undefined, tl: Tensor | undefined, th: Tensor | undefined;
  try {
    ta = asDtype(self, dtype);
    tl = min instanceof Tensor ? asDtype(min, dtype) : scalarTensor(min, dtype);
    th = max instanceof Tensor ? asDtype(max, dtype) : scalarTensor(max, dtype);
    const plan = planElementwise(CLAMP_TENSOR.name, shape, [out, ta, tl, th]);
    if (plan.numel > 0) {
      const k = kernels(), code = dtype.scalarType, flags = ClampFlags.min | ClampFlags.max;
      const [o, pa, pl, ph] = plan.ptrs;
      const status = splitsElementwise(plan.numel)
        ? splitElementwise(
          'clamp_tensor',
          [code, o, pa, pl, ph, 0, flags],
          itemSizesOf(out, ta, tl, th),
          plan.numel,
          plan,
        )
        : plan.contiguous
        ? k.clamp_tensor_contig(code, o, pa, pl, ph, plan.numel, flags)
        : k.clamp_tensor_strided(code, o, pa, pl, ph, plan.desc, flags);
      checkStatus(status, CLAMP_TENSOR.name, code);
    }
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (ta !== undefined && ta !== self) ta.dispose();
    if (tl !== undefined && tl !== min) tl.dispose();
    if (th !== undefined && th !== max) th.dispose();
  }
  return out;
}

/**
 * `clamp_min` / `clamp_max`: `clamp` with one bound, except that a NaN bound makes every element NaN (PyTorch's
 * dedicated kernels return the NaN bound; `clamp` with one NaN bound ignores it).
 */
function clampOneBound(self: Tensor, min: number | boolean | null, max: number | boolean | null): Tensor {
  checkClamp(self, min, max);
  return clampScalar(self, min, max, resultTypeOf(self, min, max), true);
}

/** `clamp_`, `clamp_min_`, `clamp_max_`: clamps into a temporary in `self`'s dtype, then writes it back. */
function clampInPlace(
  self: Tensor,
  min: number | boolean | null,
  max: number | boolean | null,
  nanBoundPropagates: boolean,
): Tensor {
  const dtype = checkClampInPlace(self, min, max);
  const tmp = clampScalar(self, min, max, dtype, nanBoundPropagates);
  try {
    copyIntoCpu(self, tmp);
  } finally {
    tmp.dispose();
  }
  return self;
}

function clampScalar(
  self: Tensor,
  min: number | boolean | null,
  max: number | boolean | null,
  dtype: DType,
  nanBoundPropagates = false,
): Tensor {
  checkDispatch(min === null ? CLAMP_MAX : max === null ? CLAMP_MIN : CLAMP_BOTH, dtype);
  const lo = min === null ? 0 : scalarValue(min), hi = max === null ? 0 : scalarValue(max);
  if (min !== null) checkScalarFits(lo, dtype);
  if (max !== null) checkScalarFits(hi, dtype);
  const out = outputFor(self.shape, dtype, self, min, max);
  let ta: Tensor | undefined;
  try {
    if (min === null || max === null) {
      // With one NaN bound, clamp's kernels keep `self` (std::max(a, NaN) is a); clamp_min's and clamp_max's
      // give NaN everywhere.
      const bound = min === null ? hi : lo;
      if (Number.isNaN(bound)) {
        if (nanBoundPropagates) fillInPlace(out, NaN);
        else copyIntoCpu(out, self);
        return out;
      }
    }
    ta = asDtype(self, dtype);
    const plan = planElementwise('clamp_scalar_cpu', out.shape, [out, ta]);
    if (plan.numel > 0) {
      const k = kernels(), code = dtype.scalarType;
      const [o, pa] = plan.ptrs;
      const flags = (min === null ? 0 : ClampFlags.min) | (max === null ? 0 : ClampFlags.max);
      const l = scalarIn(lo, dtype), h = scalarIn(hi, dtype);
      const status = splitsElementwise(plan.numel)
        ? splitElementwise('clamp', [code, o, pa, 0, l, h, flags], itemSizesOf(out, ta), plan.numel, plan)
        : plan.contiguous
        ? k.clamp_contig(code, o, pa, plan.numel, l, h, flags)
        : k.clamp_strided(code, o, pa, plan.desc, l, h, flags);
      checkStatus(status, 'clamp_scalar_cpu', code);
    }
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (ta !== undefined && ta !== self) ta.dispose();
  }
  return out;
}

// ---- the kernel table --------------------------------------------------------------------------------------------

const ADD = dispatch('add_cpu', ALL);
const SUB = dispatch('sub_cpu', ALL_BUT_BOOL);
const MUL = dispatch('mul_cpu', ALL);
const REMAINDER = dispatch('remainder_cpu', ALL_BUT_BOOL);
const FMOD = dispatch('fmod_cpu', ALL_BUT_BOOL);
const POW = dispatch('pow', ALL_BUT_BOOL);
const ANY = (name: string) => dispatch(name, ALL);
const BITWISE = (name: string) => dispatch(name, INTEGRAL_AND_BOOL);
const FLOAT_NO_HALF = (name: string) => dispatch(name, FLOATING_BUT_HALF);
const ROUNDING = (name: string) => dispatch(name, INTEGRAL | FLOATING_BUT_HALF);

/**
 * CPU kernels of the elementwise operators, keyed like the declarations (`register.ts` registers them).
 *
 * @example
 * ```ts
 * import { CPU_ELEMENTWISE_KERNELS } from './elementwise.ts';
 * typeof CPU_ELEMENTWISE_KERNELS['add.Tensor']; // 'function'
 * ```
 */
export const CPU_ELEMENTWISE_KERNELS: { readonly [K in keyof typeof ELEMENTWISE_OPS]: Kernel } = {
  'add.Tensor': binary('add.Tensor', BinaryOp.add, ADD, true),
  'add.Scalar': binary('add.Scalar', BinaryOp.add, ADD, true),
  'add_.Tensor': binaryInPlace('add_.Tensor', BinaryOp.add, ADD, true),
  'add_.Scalar': binaryInPlace('add_.Scalar', BinaryOp.add, ADD, true),
  'sub.Tensor': binary('sub.Tensor', BinaryOp.sub, SUB, true),
  'sub.Scalar': binary('sub.Scalar', BinaryOp.sub, SUB, true),
  'sub_.Tensor': binaryInPlace('sub_.Tensor', BinaryOp.sub, SUB, true),
  'sub_.Scalar': binaryInPlace('sub_.Scalar', BinaryOp.sub, SUB, true),
  'mul.Tensor': binary('mul.Tensor', BinaryOp.mul, MUL),
  'mul.Scalar': binary('mul.Scalar', BinaryOp.mul, MUL),
  'mul_.Tensor': binaryInPlace('mul_.Tensor', BinaryOp.mul, MUL),
  'mul_.Scalar': binaryInPlace('mul_.Scalar', BinaryOp.mul, MUL),
  'div.Tensor': divTrue as Kernel,
  'div.Scalar': binary('div.Scalar', BinaryOp.div, DIV),
  'div.Tensor_mode': divMode as Kernel,
  'div.Scalar_mode': divMode as Kernel,
  'div_.Tensor': binaryInPlace('div_.Tensor', BinaryOp.div, DIV),
  'div_.Scalar': binaryInPlace('div_.Scalar', BinaryOp.div, DIV),
  'remainder.Tensor': binary('remainder.Tensor', BinaryOp.remainder, REMAINDER),
  'remainder.Scalar': binary('remainder.Scalar', BinaryOp.remainder, REMAINDER),
  'fmod.Tensor': binary('fmod.Tensor', BinaryOp.fmod, FMOD),
  'fmod.Scalar': binary('fmod.Scalar', BinaryOp.fmod, FMOD),
  'pow.Tensor_Tensor': binary('pow.Tensor_Tensor', BinaryOp.pow, POW),
  'pow.Tensor_Scalar': binary('pow.Tensor_Scalar', BinaryOp.pow, POW),
  'pow.Scalar': binary('pow.Scalar', BinaryOp.pow, POW),
  'minimum': binary('minimum', BinaryOp.minimum, ANY('minimum_cpu')),
  'maximum': binary('maximum', BinaryOp.maximum, ANY('maximum_cpu')),
  'atan2': binary('atan2', BinaryOp.atan2, FLOAT_NO_HALF('atan2_cpu')),
  'bitwise_and.Tensor': binary('bitwise_and.Tensor', BinaryOp.bitwiseAnd, BITWISE('bitwise_and_cpu')),
  'bitwise_or.Tensor': binary('bitwise_or.Tensor', BinaryOp.bitwiseOr, BITWISE('bitwise_or_cpu')),
  'bitwise_xor.Tensor': binary('bitwise_xor.Tensor', BinaryOp.bitwiseXor, BITWISE('bitwise_xor_cpu')),
  'logical_and': binary('logical_and', BinaryOp.logicalAnd, ANY('logical_and_cpu')),
  'logical_or': binary('logical_or', BinaryOp.logicalOr, ANY('logical_or_cpu')),
  'logical_xor': binary('logical_xor', BinaryOp.logicalXor, ANY('logical_xor_cpu')),
  'eq.Tensor': binary('eq.Tensor', BinaryOp.eq, ANY('eq_cpu')),
  'eq.Scalar': binary('eq.Scalar', BinaryOp.eq, ANY('eq_cpu')),
  'ne.Tensor': binary('ne.Tensor', BinaryOp.ne, ANY('ne_cpu')),
  'ne.Scalar': binary('ne.Scalar', BinaryOp.ne, ANY('ne_cpu')),
  'lt.Tensor': binary('lt.Tensor', BinaryOp.lt, ANY('lt_cpu')),
  'lt.Scalar': binary('lt.Scalar', BinaryOp.lt, ANY('lt_cpu')),
  'le.Tensor': binary('le.Tensor', BinaryOp.le, ANY('le_cpu')),
  'le.Scalar': binary('le.Scalar', BinaryOp.le, ANY('le_cpu')),
  'gt.Tensor': binary('gt.Tensor', BinaryOp.gt, ANY('gt_cpu')),
  'gt.Scalar': binary('gt.Scalar', BinaryOp.gt, ANY('gt_cpu')),
  'ge.Tensor': binary('ge.Tensor', BinaryOp.ge, ANY('ge_cpu')),
  'ge.Scalar': binary('ge.Scalar', BinaryOp.ge, ANY('ge_cpu')),
  'neg': unary('neg', UnaryOp.neg, dispatch('neg_cpu', ALL_BUT_BOOL)),
  'neg_': unaryInPlace('neg_', UnaryOp.neg, dispatch('neg_cpu', ALL_BUT_BOOL)),
  'abs': unary('abs', UnaryOp.abs, dispatch('abs_cpu', ALL_BUT_BOOL)),
  'sign': unary('sign', UnaryOp.sign, ANY('sign_cpu')),
  'exp': unary('exp', UnaryOp.exp, FLOAT_NO_HALF('exp_vml_cpu')),
  'exp_': unaryInPlace('exp_', UnaryOp.exp, FLOAT_NO_HALF('exp_vml_cpu')),
  'log': unary('log', UnaryOp.log, FLOAT_NO_HALF('log_vml_cpu')),
  'log1p': unary('log1p', UnaryOp.log1p, FLOAT_NO_HALF('log1p_vml_cpu')),
  'expm1': unary('expm1', UnaryOp.expm1, FLOAT_NO_HALF('expm1_vml_cpu')),
  'sqrt': unary('sqrt', UnaryOp.sqrt, FLOAT_NO_HALF('sqrt_vml_cpu')),
  'rsqrt': unary('rsqrt', UnaryOp.rsqrt, FLOAT_NO_HALF('rsqrt_cpu')),
  'sin': unary('sin', UnaryOp.sin, FLOAT_NO_HALF('sin_vml_cpu')),
  'cos': unary('cos', UnaryOp.cos, FLOAT_NO_HALF('cos_vml_cpu')),
  'tanh': unary('tanh', UnaryOp.tanh, FLOAT_NO_HALF('tanh_vml_cpu')),
  'tanh_': unaryInPlace('tanh_', UnaryOp.tanh, FLOAT_NO_HALF('tanh_vml_cpu')),
  'sigmoid': unary('sigmoid', UnaryOp.sigmoid, FLOAT_NO_HALF('sigmoid_cpu')),
  'sigmoid_': unaryInPlace('sigmoid_', UnaryOp.sigmoid, FLOAT_NO_HALF('sigmoid_cpu')),
  'erf': unary('erf', UnaryOp.erf, FLOAT_NO_HALF('erf_vml_cpu')),
  'reciprocal': unary('reciprocal', UnaryOp.reciprocal, dispatch('reciprocal_cpu', FLOATING)),
  'relu': unary('relu', UnaryOp.relu, dispatch('clamp_min_cpu', ALL_BUT_BOOL_HALF)),
  'relu_': unaryInPlace('relu_', UnaryOp.relu, dispatch('clamp_min_cpu', ALL_BUT_BOOL_HALF)),
  'sqrt_': unaryInPlace('sqrt_', UnaryOp.sqrt, FLOAT_NO_HALF('sqrt_vml_cpu')),
  'zero_': ((_hi: number, _lo: number, self: Tensor) => fillInPlace(self, 0)) as Kernel,
  'fill_.Scalar':
    ((_hi: number, _lo: number, self: Tensor, value: number | boolean) => fillInPlace(self, value)) as Kernel,
  'gelu': gelu as Kernel,
  'silu': unary('silu', UnaryOp.silu, FLOAT_NO_HALF('silu_cpu')),
  'floor': unary('floor', UnaryOp.floor, ROUNDING('floor_vml_cpu')),
  'ceil': unary('ceil', UnaryOp.ceil, ROUNDING('ceil_vml_cpu')),
  'round': unary('round', UnaryOp.round, ROUNDING('round_vml_cpu')),
  'trunc': unary('trunc', UnaryOp.trunc, ROUNDING('trunc_vml_cpu')),
  'logical_not': unary('logical_not', UnaryOp.logicalNot, ANY('logical_not_cpu')),
  'bitwise_not': unary('bitwise_not', UnaryOp.bitwiseNot, BITWISE('bitwise_not_cpu')),
  'isnan': unary('isnan', UnaryOp.isnan, ANY('isnan')),
  'where.self': where as Kernel,
  'where.ScalarOther': where as Kernel,
  'clamp': clamp as Kernel,
  'clamp.Tensor': clamp as Kernel,
  'clamp_':
    ((_hi: number, _lo: number, self: Tensor, min: number | null, max: number | null) =>
      clampInPlace(self, min, max, false)) as Kernel,
  'clamp_min': ((_hi: number, _lo: number, self: Tensor, min: number) => clampOneBound(self, min, null)) as Kernel,
  'clamp_max': ((_hi: number, _lo: number, self: Tensor, max: number) => clampOneBound(self, null, max)) as Kernel,
  'clamp_min_':
    ((_hi: number, _lo: number, self: Tensor, min: number) => clampInPlace(self, min, null, true)) as Kernel,
  'clamp_max_':
    ((_hi: number, _lo: number, self: Tensor, max: number) => clampInPlace(self, null, max, true)) as Kernel,
};
