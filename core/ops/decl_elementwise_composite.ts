/**
 * Elementwise overloads PyTorch implements by composing others: `rsub` (`other - alpha * self`) and `where` with a
 * Python scalar for `self` (or both). They run on every backend through the operators they call.
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries, toDtype } from './aten_call.ts';
import { checkAlpha, checkSub, type Operand, resultTypeOf } from './meta_elementwise.ts';
import type { OpDecl } from './op_decl.ts';

/** Names of the composite elementwise overloads. */
export type ElementwiseCompositeOpName = 'rsub.Tensor' | 'rsub.Scalar' | 'where.ScalarSelf' | 'where.Scalar';

const negated = (alpha: number | boolean) => (typeof alpha === 'boolean' ? -Number(alpha) : -alpha);

/**
 * `rsub.Scalar`: `other - alpha * self` as `(self * -alpha) + other`. Negation is exact and the product is rounded
 * once either way, so the result equals PyTorch's `other - alpha * self` except for float16/bfloat16 with an alpha
 * other than ±1 (there PyTorch rounds only once, in float), which is documented.
 */
function rsubScalar(self: Tensor, other: number | boolean, alpha: number | boolean): Tensor {
  checkSub(other, self);
  checkAlpha(resultTypeOf(self, other), alpha);
  using temps = new Temporaries();
  const scaled = temps.track(aten('mul', 'Scalar').call(self, negated(alpha)) as Tensor, self);
  return aten('add', 'Scalar').call(scaled, other, 1) as Tensor;
}

/** A 0-dim tensor of `dtype` holding the Python scalar `value` (a checked conversion, as scalar_to_tensor does). */
function scalarTensor(value: number | boolean, dtype: DType, device: Device): Tensor {
  return aten('full').call([], value, dtype, null, device, null) as Tensor;
}

/** `where` with a Python scalar for `self` and/or `other`: both converted to their result type first. */
function whereScalars(condition: Tensor, self: Operand, other: Operand): Tensor {
  const dtype = resultTypeOf(self, other);
  using temps = new Temporaries();
  const asTensor = (x: Operand) =>
    x instanceof Tensor ? temps.track(toDtype(x, dtype), x) : temps.track(scalarTensor(x, dtype, condition.device));
  return aten('where', 'self').call(condition, asTensor(self), asTensor(other)) as Tensor;
}

/**
 * Declarations of the composite elementwise overloads.
 *
 * @example
 * ```ts
 * import { ELEMENTWISE_COMPOSITE_OPS } from './decl_elementwise_composite.ts';
 * ELEMENTWISE_COMPOSITE_OPS['rsub.Scalar'].kind; // 'composite-explicit'
 * ```
 */
export const ELEMENTWISE_COMPOSITE_OPS: { readonly [K in ElementwiseCompositeOpName]: OpDecl } = {
  // Composite-explicit, with their own derivatives (RsubBackward0/1, as PyTorch names them).
  'rsub.Tensor': {
    schema: 'rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor',
    kind: 'composite-explicit',
    impl: (self: Tensor, other: Tensor, alpha: number | boolean) =>
      aten('sub', 'Tensor').call(other, self, alpha) as Tensor,
    doc: '`other - alpha * self` (subtraction with the operands swapped).',
  },
  'rsub.Scalar': {
    schema: 'rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor',
    kind: 'composite-explicit',
    impl: rsubScalar,
    doc: '`other - alpha * self` for a scalar `other`.',
  },
  'where.ScalarSelf': {
    schema: 'where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor',
    kind: 'composite-implicit',
    impl: whereScalars,
    doc: 'Chooses the scalar `self` where `condition` is true, else `other`.',
  },
  'where.Scalar': {
    schema: 'where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor',
    kind: 'composite-implicit',
    impl: whereScalars,
    doc: 'Chooses the scalar `self` where `condition` is true, else the scalar `other`.',
  },
};
