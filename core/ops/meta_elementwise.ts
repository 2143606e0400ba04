/**
 * Shape and dtype rules of elementwise operators (the Meta functions), with PyTorch's checks and messages.
 * Backends call the same functions, so a Meta tensor always has the shape and dtype the real result has.
 *
 * Note [Allocation-free checks]
 * A CPU `add` of two one-element tensors must cost a few hundred nanoseconds end to end, so the checks that
 * every elementwise call runs (type promotion, broadcasting, devices, in-place rules) take their operands as
 * fixed parameters instead of arrays, keep their state in locals, and return shapes that already exist (the
 * input's own `shape`) when nothing broadcasts. Only the error paths build strings and arrays.
 *
 * @module
 */
import { outputStridesOf } from './output_layout.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { bool, getDefaultDtype, int64 } from '../tensor/dtype.ts';
import { canCast, isIntegral, promoteTypes } from '../tensor/promotion.ts';
import { Tensor } from '../tensor/tensor.ts';
import { TYPE_META_NAMES } from './decl_factories.ts';
import type { TensorMeta } from './op_decl.ts';

/**
 * A tensor or a Python-style scalar operand (a JS number or boolean is a wrapped number).
 *
 * @example
 * ```ts
 * import type { Operand } from './meta_elementwise.ts';
 * const scalar: Operand = 2.5;
 * ```
 */
export type Operand = Tensor | number | boolean;

/**
 * How a binary elementwise operator types its result.
 *
 * @example
 * ```ts
 * import type { BinaryKind } from './meta_elementwise.ts';
 * const division: BinaryKind = 'float';
 * ```
 */
export type BinaryKind =
  /** Result = promoted type (add, mul, remainder, pow, minimum, ...). */
  | 'arith'
  /** Like arith, but integer results become the default float type (true division, atan2). */
  | 'float'
  /** Boolean result; computed in the promoted type (eq, lt, ...; logical_and, ...). */
  | 'compare';

/**
 * How a unary operator types its result.
 *
 * @example
 * ```ts
 * import type { UnaryKind } from './meta_elementwise.ts';
 * const exponential: UnaryKind = 'float';
 * ```
 */
export type UnaryKind =
  /** Same dtype as the input (neg, abs, floor, relu, ...). */
  | 'same'
  /** Integral and bool inputs give the default float type (exp, sin, sqrt, sigmoid, ...). */
  | 'float'
  /** Boolean result (logical_not, isnan). */
  | 'bool';

// ---- type promotion ----------------------------------------------------------------------------------------------

// ATen's ResultTypeState in module locals (Note [Allocation-free checks]); every entry point resets it.
let dimResult: DType | undefined;
let zeroResult: DType | undefined;
let wrappedResult: DType | undefined;

function foldOperand(x: Operand | null | undefined): void {
  if (x === null || x === undefined) return;
  if (x instanceof Tensor) {
    if (x.shape.length > 0) dimResult = dimResult === undefined ? x.dtype : promoteTypes(dimResult, x.dtype);
    else zeroResult = zeroResult === undefined ? x.dtype : promoteTypes(zeroResult, x.dtype);
    return;
  }
  // A wrapped number: bool, int64 for integral values (JS cannot tell 1 from 1.0), else the default dtype.
  const d = typeof x === 'boolean' ? bool : Number.isInteger(x) ? int64 : getDefaultDtype();
  wrappedResult = wrappedResult === undefined ? d : promoteTypes(wrappedResult, d);
}

// ATen's combine_categories: the higher-priority category wins unless the lower one is of a higher kind
// (bool < integral < floating), in which case the two promote.
function combineCategories(higher: DType | undefined, lower: DType | undefined): DType | undefined {
  if (higher === undefined) return lower;
  if (higher.isFloatingPoint || lower === undefined) return higher;
  if (higher === bool || lower.isFloatingPoint) return promoteTypes(higher, lower);
  return higher;
}

/**
 * PyTorch's `result_type` over up to four operands (`null` and `undefined` are skipped), without allocating:
 * dimensioned tensors outrank zero-dim tensors, which outrank wrapped numbers, unless a lower category is of a
 * higher kind. Takes an array too, for other operator families.
 *
 * @example
 * ```ts
 * import { resultTypeOf } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * const x = tensor([1, 2], { dtype: 'int8' });
 * `${resultTypeOf(x, 1000)}`; // 'torch.int8'
 * `${resultTypeOf(x, 2.5)}`; // 'torch.float32'
 * x.dispose();
 * ```
 */
export function resultTypeOf(
  a: Operand | null | readonly (Operand | null)[],
  b?: Operand | null,
  c?: Operand | null,
  d?: Operand | null,
): DType {
  dimResult = zeroResult = wrappedResult = undefined;
  if (Array.isArray(a)) {
    for (const x of a as readonly (Operand | null)[]) foldOperand(x);
  } else {
    foldOperand(a as Operand | null);
    foldOperand(b);
    foldOperand(c);
    foldOperand(d);
  }
  const result = combineCategories(dimResult, combineCategories(zeroResult, wrappedResult));
  if (result === undefined) throw new TypeError('Result type of no operands is undefined: pass at least one operand');
  return result;
}

/**
 * The result dtype of a binary operator of `kind` whose operands promote to `common`.
 *
 * @example
 * ```ts
 * import { binaryOutDtype } from './meta_elementwise.ts';
 * import { int64 } from '../tensor/dtype.ts';
 * binaryOutDtype('float', int64).name; // 'float32'
 * ```
 */
export function binaryOutDtype(kind: BinaryKind, common: DType): DType {
  if (kind === 'compare') return bool;
  if (kind === 'float' && isIntegral(common, true)) return getDefaultDtype();
  return common;
}

/**
 * The dtype a binary operator of `kind` computes in: the promoted dtype, or the default float for `float`.
 *
 * @example
 * ```ts
 * import { binaryComputeDtype } from './meta_elementwise.ts';
 * import { int64 } from '../tensor/dtype.ts';
 * binaryComputeDtype('compare', int64).name; // 'int64'
 * ```
 */
export function binaryComputeDtype(kind: BinaryKind, common: DType): DType {
  return kind === 'float' && isIntegral(common, true) ? getDefaultDtype() : common;
}

/**
 * The dtype a unary operator of `kind` computes in.
 *
 * @example
 * ```ts
 * import { unaryComputeDtype } from './meta_elementwise.ts';
 * import { int8 } from '../tensor/dtype.ts';
 * unaryComputeDtype('float', int8).name; // 'float32'
 * ```
 */
export function unaryComputeDtype(kind: UnaryKind, dtype: DType): DType {
  return kind === 'float' && isIntegral(dtype, true) ? getDefaultDtype() : dtype;
}

/**
 * The result dtype of a unary operator of `kind`.
 *
 * @example
 * ```ts
 * import { unaryOutDtype } from './meta_elementwise.ts';
 * import { float16 } from '../tensor/dtype.ts';
 * unaryOutDtype('bool', float16).name; // 'bool'
 * ```
 */
export function unaryOutDtype(kind: UnaryKind, dtype: DType): DType {
  return kind === 'bool' ? bool : unaryComputeDtype(kind, dtype);
}

// ---- broadcasting ------------------------------------------------------------------------------------------------

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The broadcast shape of up to three operands (scalars and `null` broadcast to anything). Returns one of the
 * inputs' own `shape` arrays when they agree, so the common case allocates nothing; treat it as read-only.
 *
 * @example
 * ```ts
 * import { broadcastOperands } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * const x = tensor([[1], [2]]);
 * broadcastOperands(x, tensor([1, 2, 3])); // [2, 3]
 * ```
 */
export function broadcastOperands(
  a: Operand | null | readonly (Operand | null)[],
  b?: Operand | null,
  c?: Operand | null,
): readonly number[] {
  if (Array.isArray(a)) {
    let shape: readonly number[] = [];
    for (const x of a as readonly (Operand | null)[]) if (x instanceof Tensor) shape = broadcastPair(shape, x.shape);
    return shape;
  }
  let shape: readonly number[] = a instanceof Tensor ? a.shape : [];
  if (b instanceof Tensor) shape = broadcastPair(shape, b.shape);
  if (c instanceof Tensor) shape = broadcastPair(shape, c.shape);
  return shape;
}

function broadcastPair(a: readonly number[], b: readonly number[]): readonly number[] {
  if (sameShape(a, b) || b.length === 0) return a;
  if (a.length === 0) return b;
  // shape.ts's broadcastShapes, but raising RuntimeError as TensorIterator does.
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = n - 1; i >= 0; i--) {
    const sa = a[i - n + a.length] ?? 1, sb = b[i - n + b.length] ?? 1;
    if (sa !== sb && sa !== 1 && sb !== 1) {
      throw new RuntimeError(
        `The size of tensor a (${sa}) must match the size of tensor b (${sb}) at non-singleton dimension ${i}`,
      );
    }
    out[i] = sa === 1 ? sb : sa;
  }
  return out;
}

// ---- devices -----------------------------------------------------------------------------------------------------

let commonDevice: Device | undefined;

function noteDevice(x: Operand | null | undefined): void {
  // TensorIterator takes the first non-CPU device as the common one.
  if (x instanceof Tensor && x.device.type !== 'cpu' && commonDevice === undefined) commonDevice = x.device;
}

function deviceMismatch(common: Device, found: Device): RuntimeError {
  return new RuntimeError(
    `Expected all tensors to be on the same device, but found at least two devices, ${common} and ${found}!`,
  );
}

/**
 * TensorIterator's device check: all tensors share a device, except that an operator with `allowCpuScalars`
 * (the binary arithmetic and comparison ops) accepts one 0-d CPU input on another device. `out` is the written
 * tensor of an in-place operator (never excused). Also raises for disposed tensors.
 *
 * @example
 * ```ts
 * import { checkDevices } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkDevices('add', true, null, tensor([1]), tensor([2])); // no throw: both on the CPU
 * ```
 */
export function checkDevices(
  op: string,
  allowCpuScalars: boolean,
  out: Tensor | null,
  a: Operand | null,
  b: Operand | null = null,
  c: Operand | null = null,
): void {
  if (out !== null) out.assertAlive(op);
  if (a instanceof Tensor) a.assertAlive(op);
  if (b instanceof Tensor) b.assertAlive(op);
  if (c instanceof Tensor) c.assertAlive(op);
  commonDevice = undefined;
  noteDevice(out);
  noteDevice(a);
  noteDevice(b);
  noteDevice(c);
  const common = commonDevice as Device | undefined;
  if (common === undefined) return; // every tensor is on the CPU
  if (out !== null && !out.device.equals(common)) throw deviceMismatch(common, out.device);
  let scalars = allowCpuScalars ? 1 : 0;
  for (const x of [a, b, c]) {
    if (!(x instanceof Tensor) || x.device.equals(common)) continue;
    if (scalars > 0 && x.ndim === 0 && x.device.type === 'cpu') {
      scalars--;
      continue;
    }
    throw deviceMismatch(common, x.device);
  }
}

/**
 * Checks that tensor operands share a device (a 0-d CPU tensor may join another device), with
 * TensorIterator's message. For operator families that take their operands as a list.
 *
 * @example
 * ```ts
 * import { checkSameDevice } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkSameDevice('mm', [tensor([[1]]), tensor([[2]])]); // no throw
 * ```
 */
export function checkSameDevice(op: string, operands: readonly (Operand | null)[]): void {
  let common: Device | undefined;
  for (const x of operands) {
    if (!(x instanceof Tensor)) continue;
    x.assertAlive(op);
    if (common === undefined && x.device.type !== 'cpu') common = x.device;
  }
  if (common === undefined) return;
  for (const x of operands) {
    if (x instanceof Tensor && !x.device.equals(common) && !(x.ndim === 0 && x.device.type === 'cpu')) {
      throw deviceMismatch(common, x.device);
    }
  }
}

// ---- in-place and overlap rules ----------------------------------------------------------------------------------

/** Whether some element of `t` is reachable by two index tuples (PyTorch's has_internal_overlap == YES). */
/**
 * Whether writing to `t` could write one memory location twice (a broadcast dim: stride 0, size > 1). An empty
 * tensor counts as contiguous, so never overlaps (PyTorch's `has_internal_overlap`).
 *
 * @example
 * ```ts
 * import { hasInternalOverlap } from './meta_elementwise.ts';
 * import { zeros } from '../../mod.ts';
 * hasInternalOverlap(zeros([1]).expand([3])); // true
 * ```
 */
export function hasInternalOverlap(t: Tensor): boolean {
  if (t.numel === 0) return false;
  const strides = t.stride();
  for (let i = 0; i < t.shape.length; i++) if (strides[i] === 0 && t.shape[i] > 1) return true;
  return false;
}

/** Whether the elements of `t` cover a dense block of memory exactly once, in some dimension order. */
function isNonOverlappingAndDense(t: Tensor): boolean {
  const shape = t.shape, strides = t.stride();
  if (t.isContiguous()) return true;
  // Sort dimensions by stride (insertion sort: ndim is small), skipping size-1 dims, and check that each
  // stride is the product of the sizes below it.
  const dims: number[] = [];
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 0) return true;
    if (shape[d] === 1) continue;
    let i = dims.length;
    while (i > 0 && strides[dims[i - 1]] > strides[d]) i--;
    dims.splice(i, 0, d);
  }
  let expected = 1;
  for (const d of dims) {
    if (strides[d] !== expected) return false;
    expected *= shape[d];
  }
  return true;
}

const INTERNAL_OVERLAP = 'unsupported operation: more than one element of the written-to tensor refers to a single ' +
  'memory location. Please clone() the tensor before performing the operation.';
const PARTIAL_OVERLAP = 'unsupported operation: some elements of the input tensor and the written-to tensor refer ' +
  'to a single memory location. Please clone() the tensor before performing the operation.';

/**
 * PyTorch's `assert_no_partial_overlap(out, input)`: an input may alias the written tensor only exactly (same
 * elements, same strides). Like PyTorch, only dense layouts are compared; other cases are let through.
 */
function checkNoPartialOverlap(out: Tensor, input: Operand | null): void {
  if (!(input instanceof Tensor) || input === out || input.storage !== out.storage) return;
  if (out.numel === 0 || input.numel === 0) return;
  if (!isNonOverlappingAndDense(out) || !isNonOverlappingAndDense(input)) return;
  const outBegin = out.storageOffset * out.dtype.itemSize;
  const inBegin = input.storageOffset * input.dtype.itemSize;
  const outEnd = outBegin + out.numel * out.dtype.itemSize;
  const inEnd = inBegin + input.numel * input.dtype.itemSize;
  if (outBegin === inBegin && outEnd === inEnd) {
    const so = out.stride(), si = input.stride();
    if (out.dtype === input.dtype && sameShape(so, si)) return; // full overlap: elementwise is fine
    throw new RuntimeError(PARTIAL_OVERLAP);
  }
  if (outBegin < inEnd && inBegin < outEnd) throw new RuntimeError(PARTIAL_OVERLAP);
}

/**
 * TensorIterator's memory-overlap checks for an in-place operator writing `self` and reading the inputs:
 * no internal overlap in `self`, no partial overlap between `self` and an input.
 *
 * @example
 * ```ts
 * import { checkOverlap } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * const x = tensor([1, 2, 3]);
 * checkOverlap(x, x, null); // reading what is written, element by element, is fine
 * ```
 */
export function checkOverlap(
  self: Tensor,
  a: Operand | null,
  b: Operand | null = null,
  c: Operand | null = null,
): void {
  if (hasInternalOverlap(self)) throw new RuntimeError(INTERNAL_OVERLAP);
  checkNoPartialOverlap(self, a);
  checkNoPartialOverlap(self, b);
  checkNoPartialOverlap(self, c);
}

/**
 * Checks an in-place result of `shape` and dtype `result` against its destination `self`: the shapes match
 * and `result` can be cast to `self`'s dtype, with TensorIterator's messages.
 *
 * @example
 * ```ts
 * import { checkInPlace } from './meta_elementwise.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * import { tensor } from '../ops/creation.ts';
 * const x = tensor([1, 2, 3]);
 * try {
 *   checkInPlace(x, [2, 3], float32);
 * } catch (e) {
 *   (e as Error).message; // "output with shape [3] doesn't match the broadcast shape [2, 3]"
 * }
 * ```
 */
export function checkInPlace(self: Tensor, shape: readonly number[], result: DType): void {
  if (!sameShape(shape, self.shape)) {
    throw new RuntimeError(
      `output with shape [${self.shape.join(', ')}] doesn't match the broadcast shape [${shape.join(', ')}]`,
    );
  }
  if (!canCast(result, self.dtype)) {
    throw new RuntimeError(
      `result type ${result.scalarTypeName} can't be cast to the desired output type ${self.dtype.scalarTypeName}`,
    );
  }
}

// ---- operator-specific checks ------------------------------------------------------------------------------------

const isBoolOperand = (x: Operand): boolean => (x instanceof Tensor ? x.dtype === bool : typeof x === 'boolean');

/**
 * PyTorch's `sub_check`: subtraction refuses bool operands.
 *
 * @example
 * ```ts
 * import { checkSub } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkSub(tensor([1.5]), 2); // no throw
 * ```
 */
export function checkSub(self: Operand, other: Operand): void {
  const a = isBoolOperand(self), b = isBoolOperand(other);
  if (a && b) {
    throw new RuntimeError(
      'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` ' +
        'operator instead.',
    );
  }
  if (a || b) {
    throw new RuntimeError(
      'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, ' +
        'use the `~` or `logical_not()` operator instead.',
    );
  }
}

/**
 * PyTorch's `alpha_check` against the result dtype of add/sub.
 *
 * @example
 * ```ts
 * import { checkAlpha } from './meta_elementwise.ts';
 * import { int64 } from '../tensor/dtype.ts';
 * checkAlpha(int64, 2); // no throw; checkAlpha(int64, 0.5) throws
 * ```
 */
export function checkAlpha(dtype: DType, alpha: number | boolean): void {
  if (typeof alpha === 'boolean' && dtype !== bool) {
    throw new RuntimeError('Boolean alpha only supported for Boolean results.');
  }
  // A floatScalar alpha is a float even when integral: Number.isInteger is false for it (Note [Float scalars]).
  if (!dtype.isFloatingPoint && typeof alpha !== 'boolean' && !Number.isInteger(alpha)) {
    throw new RuntimeError('For integral input tensors, argument alpha must not be a floating point number.');
  }
}

/**
 * Negation refuses bool tensors (PyTorch's `neg` check).
 *
 * @example
 * ```ts
 * import { checkNeg } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkNeg(tensor([1])); // no throw
 * ```
 */
export function checkNeg(self: Tensor): void {
  if (self.dtype === bool) {
    throw new RuntimeError(
      'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the ' +
        '`~` or `logical_not()` operator instead.',
    );
  }
}

/**
 * `relu` refuses bool tensors.
 *
 * @example
 * ```ts
 * import { checkRelu } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkRelu(tensor([1])); // no throw
 * ```
 */
export function checkRelu(self: Tensor): void {
  if (self.dtype === bool) throw new RuntimeError('Boolean inputs not supported for relu');
}

/**
 * `pow(Tensor, Scalar)`'s NumPy rule: an integral (or bool) base with a negative integral exponent is refused.
 *
 * @example
 * ```ts
 * import { checkPowExponent } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkPowExponent(tensor([2.5]), -1); // no throw: the base is floating
 * ```
 */
export function checkPowExponent(self: Operand, exponent: Operand): void {
  if (!(self instanceof Tensor) || exponent instanceof Tensor || !isIntegral(self.dtype, true)) return;
  if (typeof exponent === 'number' && Number.isInteger(exponent) && exponent < 0) {
    throw new RuntimeError('Integers to negative integer powers are not allowed.');
  }
}

/**
 * `div`'s rounding mode check.
 *
 * @example
 * ```ts
 * import { checkRoundingMode } from './meta_elementwise.ts';
 * checkRoundingMode('floor'); // no throw
 * ```
 */
export function checkRoundingMode(mode: string | null): void {
  if (mode !== null && mode !== 'trunc' && mode !== 'floor') {
    throw new RuntimeError(
      `div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '${mode}'`,
    );
  }
}

/**
 * `gelu`'s approximate check.
 *
 * @example
 * ```ts
 * import { checkGeluApproximate } from './meta_elementwise.ts';
 * checkGeluApproximate('tanh'); // no throw
 * ```
 */
export function checkGeluApproximate(approximate: string): void {
  if (approximate !== 'none' && approximate !== 'tanh') {
    throw new RuntimeError('approximate argument must be either none or tanh.');
  }
}

/**
 * `where`'s condition and device checks (PyTorch 1.13's messages; a 0-d CPU tensor may join another device).
 *
 * @example
 * ```ts
 * import { checkWhere } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkWhere(tensor([true]), tensor([1]), 2); // no throw
 * ```
 */
export function checkWhere(cond: Tensor, self: Operand, other: Operand): void {
  cond.assertAlive('where');
  if (self instanceof Tensor) self.assertAlive('where');
  if (other instanceof Tensor) other.assertAlive('where');
  let expected: Device | undefined;
  for (const x of [cond, self, other]) {
    if (!(x instanceof Tensor) || (x.ndim === 0 && x.device.type === 'cpu')) continue;
    if (expected === undefined) expected = x.device;
    else if (!x.device.equals(expected)) {
      throw new RuntimeError(`Tensor on device ${x.device} is not on the expected device ${expected}!`);
    }
  }
  if (cond.dtype !== bool) {
    throw new RuntimeError(
      `where expected condition to be a boolean tensor, but got a tensor with dtype ${cond.dtype.scalarTypeName}`,
    );
  }
}

/**
 * `clamp`'s checks: at least one bound, and (for tensor bounds) TensorIterator's device rule without CPU scalars.
 *
 * @example
 * ```ts
 * import { checkClamp } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkClamp(tensor([1]), 0, null); // no throw
 * ```
 */
export function checkClamp(self: Tensor, min: Operand | null, max: Operand | null): void {
  if (min === null && max === null) {
    throw new RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None");
  }
  checkDevices('clamp', false, null, self, min, max);
}

/**
 * The checks of `clamp_`, `clamp_min_` and `clamp_max_` (PyTorch's clamp meta functions writing into `self`):
 * `clamp`'s, then a floating `self` keeps its dtype while any other must equal the type the bounds promote it to,
 * then no internal overlap. Returns the dtype the clamp computes in.
 *
 * @example
 * ```ts
 * import { checkClampInPlace } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * try {
 *   checkClampInPlace(tensor([1, 2]), 0.5, null);
 * } catch (e) {
 *   (e as Error).message; // "result type Float can't be cast to the desired output type long int"
 * }
 * ```
 */
export function checkClampInPlace(self: Tensor, min: number | boolean | null, max: number | boolean | null): DType {
  checkClamp(self, min, max);
  const result = resultTypeOf(self, min, max);
  if (result !== self.dtype) {
    // PyTorch prints the destination as a caffe2 TypeMeta here ("long int"), not as a ScalarType.
    throw new RuntimeError(
      `result type ${result.scalarTypeName} can't be cast to the desired output type ${
        TYPE_META_NAMES[self.dtype.name]
      }`,
    );
  }
  checkOverlap(self, null);
  return result;
}

// ---- rules and Meta functions ------------------------------------------------------------------------------------

/**
 * What a binary elementwise operator checks and how it types its result.
 *
 * @example
 * ```ts
 * import { type BinaryRule, checkSub } from './meta_elementwise.ts';
 * const sub: BinaryRule = { op: 'sub', kind: 'arith', alpha: true, check: checkSub };
 * ```
 */
export interface BinaryRule {
  /** The operator's name in messages. */
  readonly op: string;
  readonly kind: BinaryKind;
  /** Checks that run before TensorIterator's (`sub`'s bool check, `pow`'s negative exponents). */
  readonly check?: (self: Operand, other: Operand) => void;
  /** The operator has an `alpha` (add, sub): PyTorch's `alpha_check` runs on the result dtype. */
  readonly alpha?: boolean;
}

/**
 * What a unary elementwise operator checks and how it types its result.
 *
 * @example
 * ```ts
 * import { checkNeg, type UnaryRule } from './meta_elementwise.ts';
 * const neg: UnaryRule = { op: 'neg', kind: 'same', check: checkNeg };
 * ```
 */
export interface UnaryRule {
  /** The operator's name in messages. */
  readonly op: string;
  readonly kind: UnaryKind;
  /** Checks on the input (`neg` and `relu` refuse bool). */
  readonly check?: (self: Tensor) => void;
}

/**
 * Every check of a binary elementwise operator, in PyTorch's order, given the broadcast `shape`; returns the
 * promoted (common) dtype. `out` is the written tensor of an in-place operator (`self`), else `null`.
 *
 * @example
 * ```ts
 * import { checkBinary } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * const x = tensor([1, 2], { dtype: 'int32' });
 * `${checkBinary({ op: 'add', kind: 'arith', alpha: true }, null, x.shape, x, 2.5, 1)}`; // 'torch.float32'
 * ```
 */
export function checkBinary(
  rule: BinaryRule,
  out: Tensor | null,
  shape: readonly number[],
  self: Operand,
  other: Operand,
  alpha: number | boolean,
): DType {
  if (rule.check !== undefined) rule.check(self, other);
  checkDevices(rule.op, true, out, self, other);
  if (out !== null) checkOverlap(out, self, other);
  const common = resultTypeOf(self, other);
  if (out !== null) checkInPlace(out, shape, binaryOutDtype(rule.kind, common));
  if (rule.alpha === true) checkAlpha(common, alpha);
  return common;
}

/**
 * Every check of a unary elementwise operator (`inPlace`: writing `self`).
 *
 * @example
 * ```ts
 * import { checkUnary } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * checkUnary({ op: 'exp', kind: 'float' }, tensor([1.5]), true); // no throw
 * ```
 */
export function checkUnary(rule: UnaryRule, self: Tensor, inPlace: boolean): void {
  self.assertAlive(rule.op);
  if (rule.check !== undefined) rule.check(self);
  if (inPlace) {
    checkOverlap(self, self);
    checkInPlace(self, self.shape, unaryOutDtype(rule.kind, self.dtype));
  }
}

/**
 * Meta function of a binary elementwise operator.
 *
 * @example
 * ```ts
 * import { binaryMeta } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * binaryMeta({ op: 'div', kind: 'float' }, tensor([1, 2]), 2).dtype.name; // 'float32'
 * ```
 */
export function binaryMeta(rule: BinaryRule, self: Operand, other: Operand, alpha: number | boolean = 1): TensorMeta {
  const shape = broadcastOperands(self, other);
  const dtype = binaryOutDtype(rule.kind, checkBinary(rule, null, shape, self, other, alpha));
  return { shape, dtype, strides: outputStridesOf(shape, self, other) };
}

/**
 * Meta function of an in-place binary operator: the result is `self`'s shape and dtype.
 *
 * @example
 * ```ts
 * import { binaryInPlaceMeta } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * binaryInPlaceMeta({ op: 'mul', kind: 'arith' }, tensor([1.5, 2]), 2).shape; // [2]
 * ```
 */
export function binaryInPlaceMeta(
  rule: BinaryRule,
  self: Tensor,
  other: Operand,
  alpha: number | boolean = 1,
): TensorMeta {
  checkBinary(rule, self, broadcastOperands(self, other), self, other, alpha);
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * Meta function of a unary elementwise operator.
 *
 * @example
 * ```ts
 * import { unaryMeta } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * unaryMeta({ op: 'exp', kind: 'float' }, tensor([1, 2])).dtype.name; // 'float32'
 * ```
 */
export function unaryMeta(rule: UnaryRule, self: Tensor): TensorMeta {
  checkUnary(rule, self, false);
  return { shape: self.shape, dtype: unaryOutDtype(rule.kind, self.dtype), strides: outputStridesOf(self.shape, self) };
}

/**
 * Meta function of an in-place unary operator.
 *
 * @example
 * ```ts
 * import { unaryInPlaceMeta } from './meta_elementwise.ts';
 * import { tensor } from '../ops/creation.ts';
 * unaryInPlaceMeta({ op: 'exp', kind: 'float' }, tensor([1.5])).dtype.name; // 'float32'
 * ```
 */
export function unaryInPlaceMeta(rule: UnaryRule, self: Tensor): TensorMeta {
  checkUnary(rule, self, true);
  return { shape: self.shape, dtype: self.dtype };
}
