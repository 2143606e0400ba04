import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ALL_DTYPES,
  bfloat16,
  bool,
  type DType,
  dtypeFromName,
  float16,
  float32,
  float64,
  int16,
  int32,
  int64,
  int8,
  setDefaultDtype,
  uint8,
} from '../../core/tensor/dtype.ts';
import {
  assertCanCast,
  canCast,
  isFloatingType,
  isIntegral,
  newResultTypeState,
  type OperandKind,
  promoteTypes,
  resultType,
  type ResultTypeInput,
  resultTypeOfState,
  scalarOperand,
  tensorOperand,
  updateResultTypeState,
} from '../../core/tensor/promotion.ts';

// c10/core/ScalarType.cpp, `_promoteTypesLookup`, with the complex rows and columns (c2, c4, c8)
// dropped and the remaining codes written out as dtype names. Confirmed cell by cell against
// torch.promote_types in PyTorch 1.13 (Debian python3-torch 1.13.1).
const AXIS = ['uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64', 'bool', 'bfloat16'];
// deno-fmt-ignore
const TABLE = [
  /*            uint8       int8        int16       int32       int64       float16     float32     float64     bool        bfloat16 */
  /* uint8 */  ['uint8',    'int16',    'int16',    'int32',    'int64',    'float16',  'float32',  'float64',  'uint8',    'bfloat16'],
  /* int8 */   ['int16',    'int8',     'int16',    'int32',    'int64',    'float16',  'float32',  'float64',  'int8',     'bfloat16'],
  /* int16 */  ['int16',    'int16',    'int16',    'int32',    'int64',    'float16',  'float32',  'float64',  'int16',    'bfloat16'],
  /* int32 */  ['int32',    'int32',    'int32',    'int32',    'int64',    'float16',  'float32',  'float64',  'int32',    'bfloat16'],
  /* int64 */  ['int64',    'int64',    'int64',    'int64',    'int64',    'float16',  'float32',  'float64',  'int64',    'bfloat16'],
  /* float16 */['float16',  'float16',  'float16',  'float16',  'float16',  'float16',  'float32',  'float64',  'float16',  'float32'],
  /* float32 */['float32',  'float32',  'float32',  'float32',  'float32',  'float32',  'float32',  'float64',  'float32',  'float32'],
  /* float64 */['float64',  'float64',  'float64',  'float64',  'float64',  'float64',  'float64',  'float64',  'float64',  'float64'],
  /* bool */   ['uint8',    'int8',     'int16',    'int32',    'int64',    'float16',  'float32',  'float64',  'bool',     'bfloat16'],
  /* bfloat16 */['bfloat16','bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'float32',  'float32',  'float64',  'bfloat16', 'bfloat16'],
];

// torch.can_cast in PyTorch 1.13 for the same axis ('1' = allowed): c10's canCast refuses
// floating -> integral (not bool) and anything but bool -> bool.
// deno-fmt-ignore
const CAN_CAST = [
  /*            u1 i1 i2 i4 i8 f2 f4 f8 b1 bf */
  /* uint8 */   '1  1  1  1  1  1  1  1  0  1',
  /* int8 */    '1  1  1  1  1  1  1  1  0  1',
  /* int16 */   '1  1  1  1  1  1  1  1  0  1',
  /* int32 */   '1  1  1  1  1  1  1  1  0  1',
  /* int64 */   '1  1  1  1  1  1  1  1  0  1',
  /* float16 */ '0  0  0  0  0  1  1  1  0  1',
  /* float32 */ '0  0  0  0  0  1  1  1  0  1',
  /* float64 */ '0  0  0  0  0  1  1  1  0  1',
  /* bool */    '1  1  1  1  1  1  1  1  1  1',
  /* bfloat16 */'0  0  0  0  0  1  1  1  0  1',
];

const t = (dtype: DType) => tensorOperand(dtype);
const zeroDim = (dtype: DType) => tensorOperand(dtype, 0);
const wrapped = (dtype: DType) => ({ dtype, kind: 'scalar' as const });
const anyDtype = fc.constantFrom(...ALL_DTYPES);

describe('promoteTypes', () => {
  it("matches c10's table for all 100 pairs", () => {
    AXIS.forEach((a, i) => {
      AXIS.forEach((b, j) => {
        assert.equal(promoteTypes(dtypeFromName(a), dtypeFromName(b)).name, TABLE[i][j], `${a} + ${b}`);
      });
    });
  });

  it("has PyTorch's special cases", () => {
    assert.equal(promoteTypes(uint8, int8), int16);
    assert.equal(promoteTypes(float16, bfloat16), float32);
    assert.equal(promoteTypes(int64, float16), float16);
    assert.equal(promoteTypes(bool, uint8), uint8);
  });

  it('is symmetric, idempotent and associative, with bool as identity', () => {
    fc.assert(
      fc.property(anyDtype, anyDtype, anyDtype, (a, b, c) =>
        promoteTypes(a, b) === promoteTypes(b, a) &&
        promoteTypes(a, a) === a &&
        promoteTypes(promoteTypes(a, b), c) === promoteTypes(a, promoteTypes(b, c)) &&
        promoteTypes(a, bool) === a),
      { numRuns: 2000 },
    );
  });
});

describe('resultType', () => {
  const cases: [string, ResultTypeInput[], DType][] = [
    ['int tensor + 2.5 is the default dtype', [t(int32), 2.5], float32],
    ['int8 tensor + int 1000 stays int8', [t(int8), 1000], int8],
    ['float16 tensor + float64 0-dim tensor stays float16', [t(float16), zeroDim(float64)], float16],
    ['uint8 tensor + int8 0-dim tensor stays uint8', [t(uint8), zeroDim(int8)], uint8],
    ['bool tensor + 1 is int64', [t(bool), 1], int64],
    ['bool tensor + True stays bool', [t(bool), true], bool],
    ['bool tensor + 2.5 is the default dtype', [t(bool), 2.5], float32],
    ['int32 tensor + int64 0-dim tensor stays int32', [t(int32), zeroDim(int64)], int32],
    ['int32 tensor + float64 0-dim tensor is float64', [t(int32), zeroDim(float64)], float64],
    ['bool tensor + int8 0-dim tensor is int8', [t(bool), zeroDim(int8)], int8],
    ['two 0-dim tensors promote normally', [zeroDim(uint8), zeroDim(int8)], int16],
    ['0-dim tensor beats a wrapped number of its kind', [zeroDim(int16), 100000], int16],
    ['0-dim int tensor + 2.5 is the default dtype', [zeroDim(int64), 2.5], float32],
    ['float32 tensor + int 7 stays float32', [t(float32), 7], float32],
    ['bfloat16 tensor + float16 0-dim tensor stays bfloat16', [t(bfloat16), zeroDim(float16)], bfloat16],
    ['dimensioned tensors promote normally', [t(float16), t(bfloat16)], float32],
    ['wrapped numbers alone: int + float', [3, 0.5], float32],
    ['wrapped numbers alone: bool + int', [true, 3], int64],
    ['a bigint is an int', [t(int8), 5n], int8],
    ['three operands', [t(uint8), zeroDim(float64), 3], float64],
  ];
  for (const [name, operands, expected] of cases) {
    it(name, () => {
      assert.equal(resultType(...operands), expected);
      assert.equal(resultType(...[...operands].reverse()), expected);
    });
  }

  it('gives floating wrapped numbers the default dtype', () => {
    try {
      setDefaultDtype(float64);
      assert.equal(resultType(t(int32), 2.5), float64);
      assert.equal(resultType(t(float32), 2.5), float32);
      setDefaultDtype(float16);
      assert.equal(resultType(t(int64), wrapped(float64)), float16);
    } finally {
      setDefaultDtype(float32);
    }
  });

  it('equals promoteTypes when all operands are dimensioned, and ignores operand order', () => {
    const operand = fc.record({
      dtype: anyDtype,
      kind: fc.constantFrom<OperandKind[]>('tensor', 'zeroDimTensor', 'scalar'),
    });
    fc.assert(
      fc.property(anyDtype, anyDtype, (a, b) => resultType(t(a), t(b)) === promoteTypes(a, b)),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.array(operand, { minLength: 1, maxLength: 5 }), (ops) => {
        return resultType(...ops) === resultType(...[...ops].reverse());
      }),
      { numRuns: 2000 },
    );
  });

  it("exposes ATen's ResultTypeState", () => {
    const state = newResultTypeState();
    assert.equal(updateResultTypeState(state, t(int8)), state);
    updateResultTypeState(state, zeroDim(float64));
    updateResultTypeState(state, 1000);
    assert.deepEqual(state, { dimResult: int8, zeroResult: float64, wrappedResult: int64 });
    assert.equal(resultTypeOfState(state), float64);
    assert.throws(() => resultType(), /^TypeError: Result type of no operands/);
  });

  it('classifies JS scalars as Python would see them', () => {
    assert.equal(scalarOperand(1).dtype, int64);
    assert.equal(scalarOperand(-0).dtype, int64); // JS cannot tell 1 from 1.0, nor -0 from -0.0
    assert.equal(scalarOperand(0.5).dtype, float64);
    assert.equal(scalarOperand(NaN).dtype, float64);
    assert.equal(scalarOperand(Infinity).dtype, float64);
    assert.equal(scalarOperand(false).dtype, bool);
    assert.equal(scalarOperand(2n ** 70n).dtype, int64);
    assert.equal(scalarOperand(1).kind, 'scalar');
    assert.throws(() => scalarOperand('1' as never), /^TypeError: Invalid scalar 1/);
  });
});

describe('casting and categories', () => {
  it('canCast matches torch.can_cast for all 100 pairs', () => {
    AXIS.forEach((a, i) => {
      const row = CAN_CAST[i].split(/\s+/);
      AXIS.forEach((b, j) => {
        assert.equal(canCast(dtypeFromName(a), dtypeFromName(b)), row[j] === '1', `${a} -> ${b}`);
      });
    });
  });

  it("assertCanCast throws PyTorch's message", () => {
    assert.throws(() => assertCanCast(float32, int64), {
      name: 'TypeError',
      message: "Result type Float can't be cast to the desired output type Long",
    });
    assert.throws(() => assertCanCast(int64, bool), /Result type Long can't be cast to the desired output type Bool/);
    assertCanCast(int64, float32);
  });

  it('isIntegral and isFloatingType', () => {
    assert.deepEqual(ALL_DTYPES.filter((d) => isIntegral(d, false)), [uint8, int8, int16, int32, int64]);
    assert.deepEqual(ALL_DTYPES.filter((d) => isIntegral(d, true)), [uint8, int8, int16, int32, int64, bool]);
    assert.deepEqual(ALL_DTYPES.filter(isFloatingType), [float16, float32, float64, bfloat16]);
  });
});
