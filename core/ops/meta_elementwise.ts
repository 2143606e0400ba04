/**
 * Shape and dtype rules of elementwise operators (the Meta functions), with PyTorch's checks and messages.
 * Backends call the same functions, so a Meta tensor always has the shape and dtype the real result has.
 *
 * @module
 */
import type { DType } from '../tensor/dtype.ts';
import { bool, getDefaultDtype } from '../tensor/dtype.ts';
import { isIntegral, resultType, scalarOperand, tensorOperand } from '../tensor/promotion.ts';
import { broadcastShapes } from '../tensor/shape.ts';
import { Tensor } from '../tensor/tensor.ts';
import type { TensorMeta } from './op_decl.ts';

/** A tensor or a Python-style scalar operand. */
export type Operand = Tensor | number | boolean;

/** How an elementwise operator types its result. */
export type BinaryKind =
  /** Result = promoted type (add, mul, remainder, pow, minimum, ...). */
  | 'arith'
  /** Like arith, but integer results become the default float type (true division, atan2). */
  | 'float'
  /** Boolean result; computed in the promoted type (eq, lt, ...; logical_and, ...). */
  | 'compare'
  /** Integral or bool operands only (bitwise_and, ...). */
  | 'bitwise';

/** Compute and output dtypes of an elementwise operation. */
export interface ElementwiseTypes {
  /** The dtype the kernel computes in (inputs are converted to it). */
  readonly compute: DType;
  /** The result's dtype. */
  readonly out: DType;
}

function operandOf(x: Operand) {
  return x instanceof Tensor ? tensorOperand(x.dtype, x.ndim) : scalarOperand(x);
}

/** PyTorch's `result_type` over tensors and scalars. */
export function resultTypeOf(operands: readonly Operand[]): DType {
  return resultType(...operands.map(operandOf));
}

/** Checks that tensor operands share a device (0-d CPU tensors may join any device, as in PyTorch). */
export function checkSameDevice(op: string, operands: readonly Operand[]): void {
  let device: string | undefined;
  for (const x of operands) {
    if (!(x instanceof Tensor)) continue;
    x.assertAlive(op);
    if (x.ndim === 0 && x.device.type === 'cpu') continue;
    const d = x.device.toString();
    if (device === undefined) device = d;
    else if (device !== d) {
      throw new Error(
        `Expected all tensors to be on the same device, but found at least two devices, ${device} and ${d}!`,
      );
    }
  }
}

/**
 * The dtypes of a binary elementwise operation (PyTorch's TensorIterator common dtype plus the op's rule).
 *
 * @example
 * ```ts
 * // binaryTypes('float', int64Tensor, 2) -> compute and out float32
 * ```
 */
export function binaryTypes(kind: BinaryKind, self: Operand, other: Operand): ElementwiseTypes {
  const common = resultType(operandOf(self), operandOf(other));
  switch (kind) {
    case 'arith':
      return { compute: common, out: common };
    case 'float': {
      const t = isIntegral(common, true) ? getDefaultDtype() : common;
      return { compute: t, out: t };
    }
    case 'compare':
      return { compute: common, out: bool };
    case 'bitwise':
      return { compute: common, out: common };
  }
}

/** Shape of the broadcast of the tensor operands (scalars broadcast to anything). */
export function broadcastOperands(operands: readonly Operand[]): number[] {
  let shape: number[] = [];
  for (const x of operands) if (x instanceof Tensor) shape = broadcastShapes(shape, x.shape);
  return shape;
}

/** Meta function of a binary elementwise operator. */
export function binaryMeta(op: string, kind: BinaryKind, self: Operand, other: Operand): TensorMeta {
  checkSameDevice(op, [self, other]);
  return { shape: broadcastOperands([self, other]), dtype: binaryTypes(kind, self, other).out };
}

/** PyTorch's `alpha_check` and the bool subtraction errors. */
export function checkAlpha(op: 'add' | 'sub', self: Operand, other: Operand, alpha: number | boolean): void {
  const t = resultType(operandOf(self), operandOf(other));
  if (op === 'sub') {
    const selfBool = self instanceof Tensor ? self.dtype === bool : typeof self === 'boolean';
    const otherBool = other instanceof Tensor ? other.dtype === bool : typeof other === 'boolean';
    if (selfBool && otherBool) {
      throw new Error(
        'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.',
      );
    }
    if (selfBool || otherBool) {
      throw new Error(
        'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.',
      );
    }
  }
  if (t === bool && typeof alpha !== 'boolean' && alpha !== 0 && alpha !== 1) {
    throw new Error('Boolean alpha only supported for Boolean results.');
  }
  if (isIntegral(t, true) && typeof alpha === 'number' && !Number.isInteger(alpha)) {
    throw new Error('For integral input tensors, argument alpha must not be a floating point number.');
  }
}

/** How a unary operator types its result. */
export type UnaryKind =
  /** Same dtype as the input (neg, abs, floor, relu, ...). */
  | 'same'
  /** Integral and bool inputs give the default float type (exp, sin, sqrt, sigmoid, ...). */
  | 'float'
  /** Boolean result (logical_not, isnan). */
  | 'bool';

/** Dtypes of a unary elementwise operation. */
export function unaryTypes(kind: UnaryKind, self: Tensor): ElementwiseTypes {
  switch (kind) {
    case 'same':
      return { compute: self.dtype, out: self.dtype };
    case 'float': {
      const t = isIntegral(self.dtype, true) ? getDefaultDtype() : self.dtype;
      return { compute: t, out: t };
    }
    case 'bool':
      return { compute: self.dtype, out: bool };
  }
}

/** Meta function of a unary elementwise operator. */
export function unaryMeta(op: string, kind: UnaryKind, self: Tensor): TensorMeta {
  self.assertAlive(op);
  if (op === 'neg' && self.dtype === bool) {
    throw new Error(
      'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.',
    );
  }
  return { shape: self.shape, dtype: unaryTypes(kind, self).out };
}

/**
 * Checks an in-place elementwise result against its destination: same shape as the broadcast, and a
 * result type that can be cast to the destination's dtype (PyTorch's messages).
 */
export function checkInPlace(self: Tensor, meta: TensorMeta): void {
  const shape = meta.shape;
  if (shape.length !== self.shape.length || shape.some((s, i) => s !== self.shape[i])) {
    throw new Error(
      `output with shape [${self.shape.join(', ')}] doesn't match the broadcast shape [${shape.join(', ')}]`,
    );
  }
  if (!canCastInPlace(meta.dtype, self.dtype)) {
    throw new Error(
      `result type ${meta.dtype.scalarTypeName} can't be cast to the desired output type ${self.dtype.scalarTypeName}`,
    );
  }
}

function canCastInPlace(from: DType, to: DType): boolean {
  // PyTorch's canCast: no float -> integral, no non-bool -> bool.
  if (from.isFloatingPoint && !to.isFloatingPoint) return false;
  if (from !== bool && to === bool) return false;
  return true;
}
