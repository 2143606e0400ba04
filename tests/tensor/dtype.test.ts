import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ALL_DTYPES,
  bfloat16,
  bfloat16BitsToNumber,
  bool,
  DType,
  dtypeFromName,
  dtypeFromScalarType,
  type DTypeName,
  float16,
  float16BitsToNumber,
  float32,
  float64,
  getDefaultDtype,
  int16,
  int32,
  int64,
  int8,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  ScalarType,
  setDefaultDtype,
  toDType,
  typedArrayFor,
  uint8,
} from '../../core/tensor/dtype.ts';

// [name, ScalarType code, itemSize, isFloatingPoint, isSigned], from c10/core/ScalarType.h and
// torch.dtype's attributes in PyTorch 1.13.
const EXPECTED: [DTypeName, number, number, boolean, boolean][] = [
  ['uint8', 0, 1, false, false],
  ['int8', 1, 1, false, true],
  ['int16', 2, 2, false, true],
  ['int32', 3, 4, false, true],
  ['int64', 4, 8, false, true],
  ['float16', 5, 2, true, true],
  ['float32', 6, 4, true, true],
  ['float64', 7, 8, true, true],
  ['bool', 11, 1, false, false],
  ['bfloat16', 15, 2, true, true],
];

const f16round = (Math as { f16round?: (x: number) => number }).f16round;

/** c10::BFloat16's round_to_nearest_even from float bits (c10/util/BFloat16.h), for float32 inputs. */
function c10BFloat16FromFloat(value: number): number {
  if (Number.isNaN(value)) return 0x7fc0;
  const word = new Uint32Array(new Float32Array([value]).buffer)[0];
  return ((word + (((word >>> 16) & 1) + 0x7fff)) >>> 16) & 0xffff;
}

describe('ScalarType and DType', () => {
  it('use PyTorch ScalarType codes', () => {
    assert.deepEqual(
      { ...ScalarType },
      { Byte: 0, Char: 1, Short: 2, Int: 3, Long: 4, Half: 5, Float: 6, Double: 7, Bool: 11, BFloat16: 15 },
    );
    assert.equal(ScalarType.Float, 6);
  });

  it('describe each dtype as torch.dtype does', () => {
    assert.deepEqual(
      ALL_DTYPES.map((d) => [d.name, d.scalarType, d.itemSize, d.isFloatingPoint, d.isSigned]),
      EXPECTED,
    );
    for (const d of ALL_DTYPES) {
      assert.equal(d.isComplex, false);
      assert.equal(String(d), `torch.${d.name}`);
      assert.equal(ScalarType[d.scalarTypeName], d.scalarType);
    }
  });

  it('are frozen singletons', () => {
    assert.ok(Object.isFrozen(float32));
    assert.throws(() => {
      (float32 as { itemSize: number }).itemSize = 8;
    }, TypeError);
    assert.equal(DType.float32, float32);
    assert.equal(new Set(ALL_DTYPES).size, 10);
  });

  it('map to and from ScalarType codes', () => {
    for (const d of ALL_DTYPES) assert.equal(dtypeFromScalarType(d.scalarType), d);
    assert.equal(dtypeFromScalarType(ScalarType.BFloat16), bfloat16);
    assert.throws(() => dtypeFromScalarType(8), { name: 'TypeError', message: /Unsupported ScalarType code 8/ });
    assert.throws(() => dtypeFromScalarType(1.5), TypeError);
  });
});

describe('dtype names', () => {
  it('accept canonical names and PyTorch aliases', () => {
    const aliases: [string, DType][] = [
      ['float', float32],
      ['double', float64],
      ['half', float16],
      ['long', int64],
      ['int', int32],
      ['short', int16],
      ['torch.int8', int8],
      ['uint8', uint8],
      ['bool', bool],
      ['bfloat16', bfloat16],
    ];
    for (const [name, d] of aliases) assert.equal(dtypeFromName(name), d, name);
    for (const d of ALL_DTYPES) assert.equal(toDType(d.name), d);
  });

  it('toDType passes a DType through', () => {
    assert.equal(toDType(float64), float64);
  });

  it('reject unknown names with the culprit and the valid names', () => {
    assert.throws(() => toDType('floot' as DTypeName), (e: unknown) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /^Invalid dtype 'floot': expected one of /);
      assert.match(e.message, /float32, .*long/);
      return true;
    });
    assert.throws(() => dtypeFromName('complex64'), TypeError);
  });
});

describe('default dtype', () => {
  it("is float32 and takes floating types only, with PyTorch's message", () => {
    assert.equal(getDefaultDtype(), float32);
    try {
      setDefaultDtype(float64);
      assert.equal(getDefaultDtype(), float64);
      setDefaultDtype('bfloat16'); // allowed in PyTorch 1.13 too
      assert.equal(getDefaultDtype(), bfloat16);
      for (const d of [int64, bool, uint8]) {
        assert.throws(() => setDefaultDtype(d), {
          name: 'TypeError',
          message: 'Only floating-point types are supported as the default type',
        });
      }
      assert.equal(getDefaultDtype(), bfloat16);
    } finally {
      setDefaultDtype(float32);
    }
  });
});

describe('typedArrayFor', () => {
  it('views each dtype with its TypedArray at an offset of a shared buffer', () => {
    const buffer = new SharedArrayBuffer(64);
    const expected: Record<DTypeName, string> = {
      bool: 'Uint8Array',
      uint8: 'Uint8Array',
      int8: 'Int8Array',
      int16: 'Int16Array',
      int32: 'Int32Array',
      int64: 'BigInt64Array',
      float16: 'Uint16Array',
      bfloat16: 'Uint16Array',
      float32: 'Float32Array',
      float64: 'Float64Array',
    };
    for (const d of ALL_DTYPES) {
      const view = typedArrayFor(d, buffer, 8, 3);
      assert.equal(view.constructor.name, expected[d.name]);
      assert.equal(view.byteOffset, 8);
      assert.equal(view.length, 3);
      assert.equal(view.buffer, buffer);
    }
    const longs = typedArrayFor(int64, buffer, 0, 2);
    longs[1] = -5n;
    assert.equal(typedArrayFor(int32, buffer, 8, 2)[0], -5);
  });
});

describe('float16 conversion', () => {
  it('round-trips all 65536 bit patterns (NaNs become the canonical quiet NaN)', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = float16BitsToNumber(bits);
      const back = numberToFloat16Bits(value);
      if (Number.isNaN(value)) {
        assert.equal((bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0, true);
        assert.equal(back & 0x7fff, 0x7e00);
      } else if (back !== bits) {
        assert.fail(`bits ${bits.toString(16)} -> ${value} -> ${back.toString(16)}`);
      }
      if (f16round && !Number.isNaN(value)) assert.equal(f16round(value), value);
    }
  });

  it('rounds midpoints between neighbours to the even one, and anything off them to the nearer', () => {
    for (let bits = 0; bits < 0x7bff; bits++) { // the last finite one ties to infinity: below
      const low = float16BitsToNumber(bits), high = float16BitsToNumber(bits + 1);
      const mid = (low + high) / 2; // exact in a double
      const even = bits % 2 === 0 ? bits : bits + 1;
      assert.equal(numberToFloat16Bits(mid), even, `midpoint above ${bits.toString(16)}`);
      assert.equal(numberToFloat16Bits(-mid), even | 0x8000);
      const nudge = (high - low) / 1024;
      assert.equal(numberToFloat16Bits(mid - nudge), bits);
      assert.equal(numberToFloat16Bits(mid + nudge), bits + 1);
    }
  });

  it('handles overflow, underflow, signed zero and NaN like c10::Half', () => {
    assert.equal(numberToFloat16Bits(65504), 0x7bff);
    assert.equal(numberToFloat16Bits(65519.99), 0x7bff);
    assert.equal(numberToFloat16Bits(65520), 0x7c00); // the tie goes to the even side: infinity
    assert.equal(numberToFloat16Bits(-1e10), 0xfc00);
    assert.equal(numberToFloat16Bits(2 ** -25), 0); // half the smallest subnormal ties to zero
    assert.equal(numberToFloat16Bits(2 ** -25 * 1.0001), 1);
    assert.equal(numberToFloat16Bits(-0), 0x8000);
    assert.equal(numberToFloat16Bits(NaN), 0x7e00);
    assert.equal(float16BitsToNumber(0xfc00), -Infinity);
    assert.equal(float16BitsToNumber(1), 2 ** -24);
  });

  it('agrees with Math.f16round on arbitrary doubles', { skip: !f16round }, () => {
    fc.assert(
      fc.property(fc.double(), (x) => {
        const got = float16BitsToNumber(numberToFloat16Bits(x));
        return Object.is(got, f16round!(x)) || (Number.isNaN(got) && Number.isNaN(x));
      }),
      { numRuns: 20000 },
    );
  });
});

describe('bfloat16 conversion', () => {
  it('round-trips all 65536 bit patterns (NaNs become 0x7fc0)', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = bfloat16BitsToNumber(bits);
      const back = numberToBFloat16Bits(value);
      if (Number.isNaN(value)) assert.equal(back, 0x7fc0);
      else if (back !== bits) assert.fail(`bits ${bits.toString(16)} -> ${value} -> ${back.toString(16)}`);
    }
  });

  it("rounds midpoints to even and matches c10's float32 rounding for every neighbour pair", () => {
    for (let bits = 0; bits < 0x7f7f; bits++) {
      const low = bfloat16BitsToNumber(bits), high = bfloat16BitsToNumber(bits + 1);
      const mid = (low + high) / 2;
      const even = bits % 2 === 0 ? bits : bits + 1;
      assert.equal(numberToBFloat16Bits(mid), even);
      assert.equal(numberToBFloat16Bits(-mid), even | 0x8000);
      assert.equal(c10BFloat16FromFloat(mid), even); // the midpoint is exact in float32 too
      const nudge = (high - low) / 1024;
      assert.equal(numberToBFloat16Bits(mid - nudge), bits);
      assert.equal(numberToBFloat16Bits(mid + nudge), bits + 1);
    }
  });

  it('matches c10::BFloat16 on arbitrary float32 values', () => {
    fc.assert(
      fc.property(fc.float(), (x) => numberToBFloat16Bits(x) === c10BFloat16FromFloat(x)),
      { numRuns: 20000 },
    );
    assert.equal(numberToBFloat16Bits(Math.PI), 0x4049);
    assert.equal(numberToBFloat16Bits(3.4e38), 0x7f80);
    assert.equal(numberToBFloat16Bits((bfloat16BitsToNumber(0x7f7f) + 2 ** 128) / 2), 0x7f80); // tie to even: inf
    assert.equal(numberToBFloat16Bits(-Infinity), 0xff80);
  });
});
