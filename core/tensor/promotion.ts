/**
 * Type promotion: PyTorch's `promoteTypes` table (c10/core/ScalarType.cpp), `result_type` with its
 * category rules for dimensioned tensors, zero-dim tensors and wrapped numbers
 * (aten/src/ATen/native/TypeProperties.cpp), and the same-kind `canCast` rule used by in-place ops
 * and `out=` arguments (c10/core/ScalarType.h).
 *
 * @example
 * ```ts
 * import { int32 } from './dtype.ts';
 * import { resultType, tensorOperand } from './promotion.ts';
 * console.log(`${resultType(tensorOperand(int32), 2.5)}`); // torch.float32
 * ```
 *
 * @module
 */
import {
  bfloat16,
  bool,
  type DType,
  float16,
  float32,
  float64,
  getDefaultDtype,
  int16,
  int32,
  int64,
  int8,
  uint8,
} from './dtype.ts';
import { FloatScalar } from './float_scalar.ts';

// Note [Promotion table]
// This is c10's _promoteTypesLookup (c10/core/ScalarType.cpp) without the complex rows and
// columns. It is PyTorch's, not NumPy's, in three places: uint8 with int8 gives int16 (no
// unsigned result wider than the inputs), any integer with a floating type gives that floating
// type (int64 + float16 is float16), and float16 with bfloat16 gives float32, the narrowest type
// holding both ranges. Bool promotes to anything.
const u1 = uint8, i1 = int8, i2 = int16, i4 = int32, i8 = int64;
const f2 = float16, f4 = float32, f8 = float64, b1 = bool, bf = bfloat16;
const AXIS: readonly DType[] = [u1, i1, i2, i4, i8, f2, f4, f8, b1, bf];
// deno-fmt-ignore
const LOOKUP: readonly (readonly DType[])[] = [
  /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf */
  /* u1 */ [u1, i2, i2, i4, i8, f2, f4, f8, u1, bf],
  /* i1 */ [i2, i1, i2, i4, i8, f2, f4, f8, i1, bf],
  /* i2 */ [i2, i2, i2, i4, i8, f2, f4, f8, i2, bf],
  /* i4 */ [i4, i4, i4, i4, i8, f2, f4, f8, i4, bf],
  /* i8 */ [i8, i8, i8, i8, i8, f2, f4, f8, i8, bf],
  /* f2 */ [f2, f2, f2, f2, f2, f2, f4, f8, f2, f4],
  /* f4 */ [f4, f4, f4, f4, f4, f4, f4, f8, f4, f4],
  /* f8 */ [f8, f8, f8, f8, f8, f8, f8, f8, f8, f8],
  /* b1 */ [u1, i1, i2, i4, i8, f2, f4, f8, b1, bf],
  /* bf */ [bf, bf, bf, bf, bf, f4, f4, f8, bf, bf],
];

// The table re-indexed by ScalarType code, so a lookup is one multiply and one array read.
const CODES = 16;
const BY_CODES: DType[] = new Array(CODES * CODES);
for (let a = 0; a < AXIS.length; a++) {
  for (let b = 0; b < AXIS.length; b++) BY_CODES[AXIS[a].scalarType * CODES + AXIS[b].scalarType] = LOOKUP[a][b];
}

/**
 * The smallest dtype that both `a` and `b` convert to without changing category
 * (`torch.promote_types`). Symmetric, idempotent and associative.
 *
 * @example
 * ```ts
 * import { int8, uint8 } from './dtype.ts';
 * import { promoteTypes } from './promotion.ts';
 * console.log(`${promoteTypes(uint8, int8)}`); // torch.int16
 * ```
 */
export function promoteTypes(a: DType, b: DType): DType {
  return BY_CODES[a.scalarType * CODES + b.scalarType];
}

/**
 * True for float16, bfloat16, float32 and float64 (c10's `isFloatingType`).
 *
 * @example
 * ```ts
 * import { bfloat16 } from './dtype.ts';
 * import { isFloatingType } from './promotion.ts';
 * console.log(isFloatingType(bfloat16)); // true
 * ```
 */
export function isFloatingType(dtype: DType): boolean {
  return dtype.isFloatingPoint;
}

/**
 * True for the integer dtypes, and for bool when `includeBool` (c10's `isIntegralType`).
 *
 * @example
 * ```ts
 * import { bool } from './dtype.ts';
 * import { isIntegral } from './promotion.ts';
 * console.log(isIntegral(bool, false), isIntegral(bool, true)); // false true
 * ```
 */
export function isIntegral(dtype: DType, includeBool: boolean): boolean {
  return dtype === bool ? includeBool : !dtype.isFloatingPoint && !dtype.isComplex;
}

/**
 * PyTorch's same-kind casting rule (`torch.can_cast`): a floating type does not cast to an integral
 * one, and nothing but bool casts to bool. In-place ops and `out=` arguments check their computed
 * result type against the output with it.
 *
 * @example
 * ```ts
 * import { float32, int64 } from './dtype.ts';
 * import { canCast } from './promotion.ts';
 * console.log(canCast(int64, float32), canCast(float32, int64)); // true false
 * ```
 */
export function canCast(from: DType, to: DType): boolean {
  if (from.isFloatingPoint && isIntegral(to, false)) return false;
  return from === bool || to !== bool;
}

/**
 * Throws PyTorch's error when {@linkcode canCast} refuses `from` -> `to`.
 *
 * @example
 * ```ts
 * import { float32, int64 } from './dtype.ts';
 * import { assertCanCast } from './promotion.ts';
 * try {
 *   assertCanCast(float32, int64);
 * } catch (e) {
 *   console.log((e as Error).message); // Result type Float can't be cast to the desired output type Long
 * }
 * ```
 */
export function assertCanCast(from: DType, to: DType): void {
  if (!canCast(from, to)) {
    throw new TypeError(
      `Result type ${from.scalarTypeName} can't be cast to the desired output type ${to.scalarTypeName}`,
    );
  }
}

/**
 * How an operand takes part in {@linkcode resultType}, as TensorImpl tells ATen:
 * - `tensor`: a tensor with at least one dimension;
 * - `zeroDimTensor`: a 0-dim tensor that the user made (`torch.tensor(5.)`);
 * - `scalar`: a wrapped number, i.e. a JS number or boolean passed where the schema says Scalar.
 */
export type OperandKind = 'tensor' | 'zeroDimTensor' | 'scalar';

/** One operand of {@linkcode resultType}. */
export interface ResultTypeOperand {
  /** The tensor's dtype; for a wrapped number int64, float64 or bool. */
  readonly dtype: DType;
  /** Which of ATen's three categories the operand falls in. */
  readonly kind: OperandKind;
}

/** An operand, or a JS scalar that becomes a wrapped number by {@linkcode scalarOperand}. */
export type ResultTypeInput = ResultTypeOperand | number | boolean | bigint | FloatScalar;

const LONG_SCALAR: ResultTypeOperand = Object.freeze({ dtype: int64, kind: 'scalar' });
const DOUBLE_SCALAR: ResultTypeOperand = Object.freeze({ dtype: float64, kind: 'scalar' });
const BOOL_SCALAR: ResultTypeOperand = Object.freeze({ dtype: bool, kind: 'scalar' });

/**
 * The wrapped-number operand PyTorch makes of a Python scalar: `bool` -> Bool, `int` -> Long,
 * `float` -> Double. JS cannot tell `1` from `1.0`, so an integral number counts as a Python int
 * (`int8_tensor + 1.0` stays int8 here where PyTorch gives float32); pass a non-integral value, or
 * a `{ dtype: float64, kind: 'scalar' }` operand, or a `floatScalar(1)`, to mean a float. A bigint is an int.
 * NaN and the infinities are floats.
 *
 * @example
 * ```ts
 * import { scalarOperand } from './promotion.ts';
 * console.log(`${scalarOperand(3).dtype} ${scalarOperand(0.5).dtype}`); // torch.int64 torch.float64
 * ```
 */
export function scalarOperand(value: number | boolean | bigint | FloatScalar): ResultTypeOperand {
  if (value instanceof FloatScalar) return DOUBLE_SCALAR;
  switch (typeof value) {
    case 'boolean':
      return BOOL_SCALAR;
    case 'bigint':
      return LONG_SCALAR;
    case 'number':
      return Number.isInteger(value) ? LONG_SCALAR : DOUBLE_SCALAR;
    default:
      throw new TypeError(`Invalid scalar ${String(value)}: expected a number, boolean or bigint`);
  }
}

/**
 * A tensor operand, its kind taken from its number of dimensions.
 *
 * @example
 * ```ts
 * import { float32 } from './dtype.ts';
 * import { tensorOperand } from './promotion.ts';
 * console.log(tensorOperand(float32, 0).kind); // zeroDimTensor
 * ```
 */
export function tensorOperand(dtype: DType, dim = 1): ResultTypeOperand {
  return { dtype, kind: dim === 0 ? 'zeroDimTensor' : 'tensor' };
}

/**
 * ATen's ResultTypeState: the promoted dtype of each category seen so far (`undefined` = none).
 * TensorIterator-like code can fold operands into one without allocating.
 */
export interface ResultTypeState {
  /** Promoted dtype of the tensors with at least one dimension. */
  dimResult: DType | undefined;
  /** Promoted dtype of the 0-dim tensors. */
  zeroResult: DType | undefined;
  /** Promoted dtype of the wrapped numbers, floating ones counted as the default dtype. */
  wrappedResult: DType | undefined;
}

/**
 * A state with no operands.
 *
 * @example
 * ```ts
 * import { float32 } from './dtype.ts';
 * import { newResultTypeState, resultTypeOfState, tensorOperand, updateResultTypeState } from './promotion.ts';
 * const state = updateResultTypeState(newResultTypeState(), tensorOperand(float32));
 * console.log(`${resultTypeOfState(state)}`); // torch.float32
 * ```
 */
export function newResultTypeState(): ResultTypeState {
  return { dimResult: undefined, zeroResult: undefined, wrappedResult: undefined };
}

function promoteSkipUndefined(a: DType | undefined, b: DType | undefined): DType | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return promoteTypes(a, b);
}

/**
 * Folds one operand into `state` (ATen's `update_result_type_state`) and returns the same object.
 * A floating wrapped number counts as the default dtype, so `int_tensor + 2.5` is float32.
 *
 * @example
 * ```ts
 * import { int8 } from './dtype.ts';
 * import { newResultTypeState, resultTypeOfState, tensorOperand, updateResultTypeState } from './promotion.ts';
 * const state = newResultTypeState();
 * updateResultTypeState(state, tensorOperand(int8));
 * updateResultTypeState(state, 1000);
 * console.log(`${resultTypeOfState(state)}`); // torch.int8
 * ```
 */
export function updateResultTypeState(state: ResultTypeState, operand: ResultTypeInput): ResultTypeState {
  const described = typeof operand === 'object' && !(operand instanceof FloatScalar) ? operand : scalarOperand(operand);
  let current = described.dtype;
  switch (described.kind) {
    case 'tensor':
      state.dimResult = promoteSkipUndefined(state.dimResult, current);
      break;
    case 'zeroDimTensor':
      state.zeroResult = promoteSkipUndefined(state.zeroResult, current);
      break;
    case 'scalar':
      if (current.isFloatingPoint) current = getDefaultDtype();
      state.wrappedResult = promoteSkipUndefined(state.wrappedResult, current);
      break;
    default:
      throw new TypeError(`Invalid operand kind '${described.kind satisfies never}'`);
  }
  return state;
}

// ATen's combine_categories: the higher-priority category wins unless the lower one is of a
// higher kind (bool < integral < floating), in which case the two promote.
function combineCategories(higher: DType | undefined, lower: DType | undefined): DType | undefined {
  if (higher !== undefined && higher.isFloatingPoint) return higher;
  if (higher === bool || (lower !== undefined && lower.isFloatingPoint)) return promoteSkipUndefined(higher, lower);
  return higher ?? lower;
}

/**
 * The dtype that `state`'s operands compute in (ATen's `result_type(ResultTypeState)`).
 *
 * @example
 * ```ts
 * import { float16, float64 } from './dtype.ts';
 * import { newResultTypeState, resultTypeOfState, tensorOperand, updateResultTypeState } from './promotion.ts';
 * const state = newResultTypeState();
 * updateResultTypeState(state, tensorOperand(float16));
 * updateResultTypeState(state, tensorOperand(float64, 0));
 * console.log(`${resultTypeOfState(state)}`); // torch.float16
 * ```
 */
export function resultTypeOfState(state: ResultTypeState): DType {
  const result = combineCategories(state.dimResult, combineCategories(state.zeroResult, state.wrappedResult));
  if (result === undefined) throw new TypeError('Result type of no operands is undefined: pass at least one operand');
  return result;
}

/**
 * `torch.result_type` over any number of operands. Dimensioned tensors take priority over zero-dim
 * tensors, which take priority over wrapped numbers; a lower-priority operand only matters when it
 * is of a higher kind (bool < integral < floating). So `uint8_tensor + int8_zero_dim` is uint8,
 * `int8_tensor + 1000` is int8, `bool_tensor + 1` is int64 and `int32_tensor + 2.5` is the default
 * dtype. JS cannot tell `1` from `1.0`: see {@linkcode scalarOperand}.
 *
 * @example
 * ```ts
 * import { bool, uint8 } from './dtype.ts';
 * import { resultType, tensorOperand } from './promotion.ts';
 * console.log(`${resultType(tensorOperand(bool), 1)}`); // torch.int64
 * console.log(`${resultType(tensorOperand(uint8), { dtype: uint8, kind: 'scalar' })}`); // torch.uint8
 * ```
 */
export function resultType(...operands: ResultTypeInput[]): DType {
  const state = newResultTypeState();
  for (const operand of operands) updateResultTypeState(state, operand);
  return resultTypeOfState(state);
}
