/**
 * CPU kernels of the elementwise operators: each computes its result metadata with the operator's Meta
 * function, allocates the output, converts inputs to the compute dtype (TensorIterator's common dtype) and
 * runs the wasm kernel, contiguous-SIMD or strided (Note [Elementwise plan] in iterator.ts).
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import { isIntegral } from '../tensor/promotion.ts';
import { Tensor } from '../tensor/tensor.ts';
import { ELEMENTWISE_OPS } from '../ops/decl_elementwise.ts';
import type { TensorMeta } from '../ops/op_decl.ts';
import {
  type BinaryKind,
  binaryTypes,
  broadcastOperands,
  type Operand,
  resultTypeOf,
  type UnaryKind,
  unaryTypes,
} from '../ops/meta_elementwise.ts';
import { BinaryOp, ClampFlags, UnaryOp } from './exports_elementwise.ts';
import { asDtype, copyIntoCpu, dataPtr, emptyCpu, hasInternalOverlap, planElementwise } from './iterator.ts';
import { checkStatus, cpuRuntime } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;
type ElementwiseOp = keyof typeof ELEMENTWISE_OPS;
// deno-lint-ignore no-explicit-any
type AnyMeta = (...args: any[]) => TensorMeta;

/** The operator's Meta function: backends run it first for PyTorch's checks and the result metadata. */
const metaOf = (key: ElementwiseOp) => ELEMENTWISE_OPS[key].meta as AnyMeta;

const scalarValue = (s: number | boolean): number => (typeof s === 'boolean' ? (s ? 1 : 0) : s);
const INTEGER_DIVISION = new Set<number>([BinaryOp.divTrunc, BinaryOp.divFloor, BinaryOp.remainder, BinaryOp.fmod]);

/** Runs a binary kernel writing `out` (compute dtype, or Bool for comparisons) from `a` and `b`. */
function runBinary(op: number, name: string, out: Tensor, a: Tensor, b: Operand, compute: DType, alpha: number): void {
  const k = cpuRuntime().kernels;
  const ta = asDtype(a, compute);
  const tb = b instanceof Tensor ? asDtype(b, compute) : b;
  try {
    if (typeof tb !== 'object' && isIntegral(compute, false) && INTEGER_DIVISION.has(op) && scalarValue(tb) === 0) {
      throw new Error('ZeroDivisionError');
    }
    const operands = tb instanceof Tensor ? [out, ta, tb] : [out, ta];
    const plan = planElementwise(out.shape, operands);
    if (plan.numel === 0) return;
    const code = compute.scalarType;
    let status: number;
    if (tb instanceof Tensor) {
      status = plan.contiguous
        ? k.binary_contig(op, code, dataPtr(out), dataPtr(ta), dataPtr(tb), plan.numel, alpha)
        : k.binary_strided(op, code, dataPtr(out), dataPtr(ta), dataPtr(tb), plan.desc, alpha);
    } else {
      const s = scalarValue(tb);
      status = plan.contiguous
        ? k.binary_scalar_contig(op, code, dataPtr(out), dataPtr(ta), s, plan.numel, alpha)
        : k.binary_scalar_strided(op, code, dataPtr(out), dataPtr(ta), s, plan.desc, alpha);
    }
    checkStatus(status, name, code);
  } finally {
    if (ta !== a) ta.dispose();
    if (tb !== b && tb instanceof Tensor) tb.dispose();
  }
}

/** An out-of-place binary kernel (with an `alpha` parameter for add and sub). */
function binary(key: ElementwiseOp, op: number, name: string, kind: BinaryKind, withAlpha = false): Kernel {
  const meta = metaOf(key);
  const run = (self: Operand, other: Operand, alpha: number | boolean) => {
    const m = meta(self, other, alpha); // PyTorch's checks and the result's shape and dtype
    const types = binaryTypes(kind, self, other);
    const out = emptyCpu(m.shape, m.dtype);
    try {
      if (self instanceof Tensor) runBinary(op, name, out, self, other, types.compute, scalarValue(alpha));
      else runReversed(op, name, out, scalarValue(self), other as Tensor, types.compute); // pow.Scalar: `s op b`
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

function runReversed(op: number, name: string, out: Tensor, s: number, b: Tensor, compute: DType): void {
  const k = cpuRuntime().kernels;
  const tb = asDtype(b, compute);
  try {
    const plan = planElementwise(out.shape, [out, tb]);
    if (plan.numel === 0) return;
    const status = plan.contiguous
      ? k.binary_rscalar_contig(op, compute.scalarType, dataPtr(out), s, dataPtr(tb), plan.numel, 1)
      : k.binary_rscalar_strided(op, compute.scalarType, dataPtr(out), s, dataPtr(tb), plan.desc, 1);
    checkStatus(status, name, compute.scalarType);
  } finally {
    if (tb !== b) tb.dispose();
  }
}

/** Writes a kernel result computed in `compute` into `self` (converting when self's dtype differs). */
function intoSelf(self: Tensor, compute: DType, write: (out: Tensor) => void): Tensor {
  if (hasInternalOverlap(self)) {
    throw new Error(
      'unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.',
    );
  }
  if (self.dtype === compute) {
    write(self);
    return self;
  }
  const tmp = emptyCpu(self.shape, compute);
  try {
    write(tmp);
    copyIntoCpu(self, tmp);
  } finally {
    tmp.dispose();
  }
  return self;
}

/** An in-place binary kernel (`add_`): the Meta function has already checked shape and castability. */
function binaryInPlace(key: ElementwiseOp, op: number, name: string, kind: BinaryKind, withAlpha = false): Kernel {
  const meta = metaOf(key);
  const run = (self: Tensor, other: Operand, alpha: number | boolean) => {
    meta(self, other, alpha); // shape and castability checks
    const { compute } = binaryTypes(kind, self, other);
    return intoSelf(self, compute, (out) => runBinary(op, name, out, self, other, compute, scalarValue(alpha)));
  };
  return (withAlpha
    ? (_hi: number, _lo: number, self: Tensor, other: Operand, alpha: number | boolean) => run(self, other, alpha)
    : (_hi: number, _lo: number, self: Tensor, other: Operand) => run(self, other, 1)) as Kernel;
}

function divMode(_hi: number, _lo: number, self: Tensor, other: Operand, mode: string | null): Tensor {
  metaOf('div.Tensor_mode')(self, other, mode);
  const op = mode === null ? BinaryOp.div : mode === 'trunc' ? BinaryOp.divTrunc : BinaryOp.divFloor;
  const kind: BinaryKind = mode === null ? 'float' : 'arith';
  const types = binaryTypes(kind, self, other);
  const out = emptyCpu(broadcastOperands([self, other]), types.out);
  try {
    runBinary(op, 'div', out, self, other, types.compute, 1);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

function runUnary(op: number, name: string, out: Tensor, a: Tensor, compute: DType): void {
  const k = cpuRuntime().kernels;
  const ta = asDtype(a, compute);
  try {
    const plan = planElementwise(out.shape, [out, ta]);
    if (plan.numel === 0) return;
    const status = plan.contiguous
      ? k.unary_contig(op, compute.scalarType, dataPtr(out), dataPtr(ta), plan.numel)
      : k.unary_strided(op, compute.scalarType, dataPtr(out), dataPtr(ta), plan.desc);
    checkStatus(status, name, compute.scalarType);
  } finally {
    if (ta !== a) ta.dispose();
  }
}

function unary(key: ElementwiseOp, op: number, name: string, kind: UnaryKind): Kernel {
  const meta = metaOf(key);
  return ((_hi: number, _lo: number, self: Tensor) => {
    meta(self);
    const types = unaryTypes(kind, self);
    const out = emptyCpu(self.shape, types.out);
    try {
      runUnary(op, name, out, self, types.compute);
    } catch (e) {
      out.dispose();
      throw e;
    }
    return out;
  }) as Kernel;
}

function unaryInPlace(key: ElementwiseOp, op: number, name: string, kind: UnaryKind): Kernel {
  const meta = metaOf(key);
  return ((_hi: number, _lo: number, self: Tensor) => {
    meta(self);
    const { compute } = unaryTypes(kind, self);
    return intoSelf(self, compute, (out) => runUnary(op, name, out, self, compute));
  }) as Kernel;
}

function gelu(_hi: number, _lo: number, self: Tensor, approximate: string): Tensor {
  metaOf('gelu')(self, approximate);
  const out = emptyCpu(self.shape, self.dtype);
  try {
    if (!self.dtype.isFloatingPoint) {
      throw new Error(`"GeluKernelImpl" not implemented for '${self.dtype.scalarTypeName}'`);
    }
    runUnary(approximate === 'tanh' ? UnaryOp.geluTanh : UnaryOp.gelu, 'gelu', out, self, self.dtype);
  } catch (e) {
    out.dispose();
    throw e;
  }
  return out;
}

function where(_hi: number, _lo: number, cond: Tensor, self: Tensor, other: Operand): Tensor {
  metaOf('where.self')(cond, self, other);
  const dtype = resultTypeOf([self, other]);
  const shape = broadcastOperands([cond, self, other]);
  const out = emptyCpu(shape, dtype);
  const ta = asDtype(self, dtype);
  const tb = other instanceof Tensor ? asDtype(other, dtype) : scalarTensor(other, dtype);
  try {
    const k = cpuRuntime().kernels;
    const plan = planElementwise(shape, [out, cond, ta, tb]);
    if (plan.numel > 0) {
      const status = plan.contiguous
        ? k.where_contig(dtype.scalarType, dataPtr(out), dataPtr(cond), dataPtr(ta), dataPtr(tb), plan.numel)
        : k.where_strided(dtype.scalarType, dataPtr(out), dataPtr(cond), dataPtr(ta), dataPtr(tb), plan.desc);
      checkStatus(status, 'where', dtype.scalarType);
    }
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (ta !== self) ta.dispose();
    if (tb !== other) tb.dispose();
  }
  return out;
}

/** A 0-d CPU tensor holding a scalar (what PyTorch calls a wrapped number). */
export function scalarTensor(value: number | boolean, dtype: DType): Tensor {
  const t = emptyCpu([], dtype);
  const status = cpuRuntime().kernels.fill_contig(dtype.scalarType, dataPtr(t), scalarValue(value), 1);
  checkStatus(status, 'fill_', dtype.scalarType);
  return t;
}

function clamp(_hi: number, _lo: number, self: Tensor, min: Operand | null, max: Operand | null): Tensor {
  metaOf('clamp')(self, min, max);
  const operands = [self, ...(min === null ? [] : [min]), ...(max === null ? [] : [max])];
  const dtype = resultTypeOf(operands);
  const out = emptyCpu(broadcastOperands(operands), dtype);
  const k = cpuRuntime().kernels;
  const ta = asDtype(self, dtype);
  const flags = (min === null ? 0 : ClampFlags.min) | (max === null ? 0 : ClampFlags.max);
  const temps: Tensor[] = [];
  try {
    if (!(min instanceof Tensor) && !(max instanceof Tensor)) {
      const plan = planElementwise(out.shape, [out, ta]);
      const lo = min === null ? 0 : scalarValue(min), hi = max === null ? 0 : scalarValue(max);
      if (plan.numel > 0) {
        const status = plan.contiguous
          ? k.clamp_contig(dtype.scalarType, dataPtr(out), dataPtr(ta), plan.numel, lo, hi, flags)
          : k.clamp_strided(dtype.scalarType, dataPtr(out), dataPtr(ta), plan.desc, lo, hi, flags);
        checkStatus(status, 'clamp', dtype.scalarType);
      }
    } else {
      const bound = (b: Operand | null) => {
        if (b === null) return scalarTensor(0, dtype);
        const t = b instanceof Tensor ? asDtype(b, dtype) : scalarTensor(b, dtype);
        if (t !== b) temps.push(t);
        return t;
      };
      const lo = bound(min), hi = bound(max);
      if (min === null) temps.push(lo);
      if (max === null) temps.push(hi);
      const plan = planElementwise(out.shape, [out, ta, lo, hi]);
      if (plan.numel > 0) {
        const status = plan.contiguous
          ? k.clamp_tensor_contig(
            dtype.scalarType,
            dataPtr(out),
            dataPtr(ta),
            dataPtr(lo),
            dataPtr(hi),
            plan.numel,
            flags,
          )
          : k.clamp_tensor_strided(
            dtype.scalarType,
            dataPtr(out),
            dataPtr(ta),
            dataPtr(lo),
            dataPtr(hi),
            plan.desc,
            flags,
          );
        checkStatus(status, 'clamp', dtype.scalarType);
      }
    }
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (ta !== self) ta.dispose();
    for (const t of temps) t.dispose();
  }
  return out;
}

/** CPU kernels of the elementwise operators. */
export const CPU_ELEMENTWISE_KERNELS: { readonly [K in keyof typeof ELEMENTWISE_OPS]: Kernel } = {
  'add.Tensor': binary('add.Tensor', BinaryOp.add, 'add', 'arith', true),
  'add.Scalar': binary('add.Scalar', BinaryOp.add, 'add', 'arith', true),
  'add_.Tensor': binaryInPlace('add_.Tensor', BinaryOp.add, 'add', 'arith', true),
  'add_.Scalar': binaryInPlace('add_.Scalar', BinaryOp.add, 'add', 'arith', true),
  'sub.Tensor': binary('sub.Tensor', BinaryOp.sub, 'sub', 'arith', true),
  'sub.Scalar': binary('sub.Scalar', BinaryOp.sub, 'sub', 'arith', true),
  'sub_.Tensor': binaryInPlace('sub_.Tensor', BinaryOp.sub, 'sub', 'arith', true),
  'sub_.Scalar': binaryInPlace('sub_.Scalar', BinaryOp.sub, 'sub', 'arith', true),
  'mul.Tensor': binary('mul.Tensor', BinaryOp.mul, 'mul', 'arith'),
  'mul.Scalar': binary('mul.Scalar', BinaryOp.mul, 'mul', 'arith'),
  'mul_.Tensor': binaryInPlace('mul_.Tensor', BinaryOp.mul, 'mul', 'arith'),
  'mul_.Scalar': binaryInPlace('mul_.Scalar', BinaryOp.mul, 'mul', 'arith'),
  'div.Tensor': binary('div.Tensor', BinaryOp.div, 'div', 'float'),
  'div.Scalar': binary('div.Scalar', BinaryOp.div, 'div', 'float'),
  'div.Tensor_mode': divMode as Kernel,
  'div.Scalar_mode': divMode as Kernel,
  'div_.Tensor': binaryInPlace('div_.Tensor', BinaryOp.div, 'div', 'float'),
  'div_.Scalar': binaryInPlace('div_.Scalar', BinaryOp.div, 'div', 'float'),
  'remainder.Tensor': binary('remainder.Tensor', BinaryOp.remainder, 'remainder', 'arith'),
  'remainder.Scalar': binary('remainder.Scalar', BinaryOp.remainder, 'remainder', 'arith'),
  'fmod.Tensor': binary('fmod.Tensor', BinaryOp.fmod, 'fmod', 'arith'),
  'fmod.Scalar': binary('fmod.Scalar', BinaryOp.fmod, 'fmod', 'arith'),
  'pow.Tensor_Tensor': binary('pow.Tensor_Tensor', BinaryOp.pow, 'pow', 'arith'),
  'pow.Tensor_Scalar': binary('pow.Tensor_Scalar', BinaryOp.pow, 'pow', 'arith'),
  'pow.Scalar': binary('pow.Scalar', BinaryOp.pow, 'pow', 'arith'),
  'minimum': binary('minimum', BinaryOp.minimum, 'minimum', 'arith'),
  'maximum': binary('maximum', BinaryOp.maximum, 'maximum', 'arith'),
  'atan2': binary('atan2', BinaryOp.atan2, 'atan2', 'float'),
  'bitwise_and.Tensor': binary('bitwise_and.Tensor', BinaryOp.bitwiseAnd, 'bitwise_and_cpu', 'bitwise'),
  'bitwise_or.Tensor': binary('bitwise_or.Tensor', BinaryOp.bitwiseOr, 'bitwise_or_cpu', 'bitwise'),
  'bitwise_xor.Tensor': binary('bitwise_xor.Tensor', BinaryOp.bitwiseXor, 'bitwise_xor_cpu', 'bitwise'),
  'logical_and': binary('logical_and', BinaryOp.logicalAnd, 'logical_and_cpu', 'compare'),
  'logical_or': binary('logical_or', BinaryOp.logicalOr, 'logical_or_cpu', 'compare'),
  'logical_xor': binary('logical_xor', BinaryOp.logicalXor, 'logical_xor_cpu', 'compare'),
  'eq.Tensor': binary('eq.Tensor', BinaryOp.eq, 'eq_cpu', 'compare'),
  'eq.Scalar': binary('eq.Scalar', BinaryOp.eq, 'eq_cpu', 'compare'),
  'ne.Tensor': binary('ne.Tensor', BinaryOp.ne, 'ne_cpu', 'compare'),
  'ne.Scalar': binary('ne.Scalar', BinaryOp.ne, 'ne_cpu', 'compare'),
  'lt.Tensor': binary('lt.Tensor', BinaryOp.lt, 'lt_cpu', 'compare'),
  'lt.Scalar': binary('lt.Scalar', BinaryOp.lt, 'lt_cpu', 'compare'),
  'le.Tensor': binary('le.Tensor', BinaryOp.le, 'le_cpu', 'compare'),
  'le.Scalar': binary('le.Scalar', BinaryOp.le, 'le_cpu', 'compare'),
  'gt.Tensor': binary('gt.Tensor', BinaryOp.gt, 'gt_cpu', 'compare'),
  'gt.Scalar': binary('gt.Scalar', BinaryOp.gt, 'gt_cpu', 'compare'),
  'ge.Tensor': binary('ge.Tensor', BinaryOp.ge, 'ge_cpu', 'compare'),
  'ge.Scalar': binary('ge.Scalar', BinaryOp.ge, 'ge_cpu', 'compare'),
  'neg': unary('neg', UnaryOp.neg, 'neg_cpu', 'same'),
  'neg_': unaryInPlace('neg_', UnaryOp.neg, 'neg_cpu', 'same'),
  'abs': unary('abs', UnaryOp.abs, 'abs_cpu', 'same'),
  'sign': unary('sign', UnaryOp.sign, 'sign_cpu', 'same'),
  'exp': unary('exp', UnaryOp.exp, 'exp_vml_cpu', 'float'),
  'exp_': unaryInPlace('exp_', UnaryOp.exp, 'exp_vml_cpu', 'float'),
  'log': unary('log', UnaryOp.log, 'log_vml_cpu', 'float'),
  'log1p': unary('log1p', UnaryOp.log1p, 'log1p_vml_cpu', 'float'),
  'expm1': unary('expm1', UnaryOp.expm1, 'expm1_vml_cpu', 'float'),
  'sqrt': unary('sqrt', UnaryOp.sqrt, 'sqrt_vml_cpu', 'float'),
  'rsqrt': unary('rsqrt', UnaryOp.rsqrt, 'rsqrt_cpu', 'float'),
  'sin': unary('sin', UnaryOp.sin, 'sin_vml_cpu', 'float'),
  'cos': unary('cos', UnaryOp.cos, 'cos_vml_cpu', 'float'),
  'tanh': unary('tanh', UnaryOp.tanh, 'tanh_vml_cpu', 'float'),
  'tanh_': unaryInPlace('tanh_', UnaryOp.tanh, 'tanh_vml_cpu', 'float'),
  'sigmoid': unary('sigmoid', UnaryOp.sigmoid, 'sigmoid_cpu', 'float'),
  'sigmoid_': unaryInPlace('sigmoid_', UnaryOp.sigmoid, 'sigmoid_cpu', 'float'),
  'erf': unary('erf', UnaryOp.erf, 'erf_vml_cpu', 'float'),
  'reciprocal': unary('reciprocal', UnaryOp.reciprocal, 'reciprocal_cpu', 'float'),
  'relu': unary('relu', UnaryOp.relu, 'clamp_min_scalar_cpu', 'same'),
  'relu_': unaryInPlace('relu_', UnaryOp.relu, 'clamp_min_scalar_cpu', 'same'),
  'gelu': gelu as Kernel,
  'silu': unary('silu', UnaryOp.silu, 'silu_cpu', 'same'),
  'floor': unary('floor', UnaryOp.floor, 'floor_cpu', 'same'),
  'ceil': unary('ceil', UnaryOp.ceil, 'ceil_cpu', 'same'),
  'round': unary('round', UnaryOp.round, 'round_cpu', 'same'),
  'trunc': unary('trunc', UnaryOp.trunc, 'trunc_cpu', 'same'),
  'logical_not': unary('logical_not', UnaryOp.logicalNot, 'logical_not_cpu', 'bool'),
  'bitwise_not': unary('bitwise_not', UnaryOp.bitwiseNot, 'bitwise_not_cpu', 'same'),
  'isnan': unary('isnan', UnaryOp.isnan, 'isnan', 'bool'),
  'where.self': where as Kernel,
  'where.ScalarOther': where as Kernel,
  'clamp': clamp as Kernel,
  'clamp.Tensor': clamp as Kernel,
};
