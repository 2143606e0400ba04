// Print options: PyTorch's defaults and profiles, sciMode reset, and the checks setPrintOptions makes (PyTorch
// itself accepts anything and fails when printing); expected reprs are PyTorch 1.13's with the same options.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type DType, float32, int64 } from '../../core/tensor/dtype.ts';
import { type FormatSource, formatTensor } from '../../core/tensor/format.ts';
import { getPrintOptions, type PrintOptions, setPrintOptions } from '../../core/tensor/print_options.ts';

/** A FormatSource over literal values, or over `values(flatIndex)`. */
function src(
  shape: number[],
  dtype: DType,
  values: (number | bigint)[] | ((i: number) => number | bigint),
): FormatSource {
  const get = typeof values === 'function' ? values : (i: number) => values[i];
  return { shape, dtype, device: 'cpu', get };
}

describe('print options', () => {
  afterEach(() => setPrintOptions({ profile: 'default' }));

  it("default to PyTorch's", () => {
    assert.deepEqual({ ...getPrintOptions() }, {
      precision: 4,
      threshold: 1000,
      edgeitems: 3,
      linewidth: 80,
      sciMode: undefined,
    });
  });

  it('apply globally, and profiles set the same values as torch.set_printoptions', () => {
    setPrintOptions({ profile: 'short' });
    assert.deepEqual({ ...getPrintOptions() }, {
      precision: 2,
      threshold: 1000,
      edgeitems: 2,
      linewidth: 80,
      sciMode: undefined,
    });
    assert.equal(formatTensor(src([3], float32, [1 / 3, 2 / 3, 1])), 'tensor([0.33, 0.67, 1.00])');
    setPrintOptions({ profile: 'full' });
    assert.equal(getPrintOptions().threshold, Infinity);
    assert.equal(formatTensor(src([1001], int64, (i) => BigInt(i))).includes('...'), false);
  });

  it('reset sciMode unless it is passed, as torch.set_printoptions does', () => {
    setPrintOptions({ sciMode: true });
    assert.equal(getPrintOptions().sciMode, true);
    setPrintOptions({ precision: 3 });
    assert.equal(getPrintOptions().sciMode, undefined);
    assert.equal(getPrintOptions().precision, 3);
  });

  it('reject invalid values, naming them', () => {
    assert.throws(() => setPrintOptions({ precision: -1 }), /^RangeError: Invalid print option precision=-1/);
    assert.throws(() => setPrintOptions({ linewidth: 1.5 }), /Invalid print option linewidth=1.5/);
    assert.equal(getPrintOptions().precision, 4);
  });

  it('reject negative, fractional and non-numeric counts, unknown options and profiles, leaving the options as they were', () => {
    setPrintOptions({ precision: 6, sciMode: true });
    const before = { ...getPrintOptions() };
    const bad: Array<[unknown, ErrorConstructor, string]> = [
      [{ precision: -1 }, RangeError, 'Invalid print option precision=-1: expected a non-negative integer'],
      [{ precision: 2.5 }, RangeError, 'Invalid print option precision=2.5: expected a non-negative integer'],
      [{ precision: NaN }, RangeError, 'Invalid print option precision=NaN: expected a non-negative integer'],
      [{ precision: Infinity }, RangeError, 'Invalid print option precision=Infinity: expected a non-negative integer'],
      [{ precision: '3' }, TypeError, "Invalid print option precision='3': expected a non-negative integer"],
      [{ threshold: -1 }, RangeError, 'Invalid print option threshold=-1: expected a non-negative integer or Infinity'],
      [
        { threshold: 0.5 },
        RangeError,
        'Invalid print option threshold=0.5: expected a non-negative integer or Infinity',
      ],
      [
        { threshold: NaN },
        RangeError,
        'Invalid print option threshold=NaN: expected a non-negative integer or Infinity',
      ],
      [
        { threshold: null },
        TypeError,
        'Invalid print option threshold=null: expected a non-negative integer or Infinity',
      ],
      [{ edgeitems: -2 }, RangeError, 'Invalid print option edgeitems=-2: expected a non-negative integer'],
      [{ edgeitems: 1.5 }, RangeError, 'Invalid print option edgeitems=1.5: expected a non-negative integer'],
      [{ linewidth: -80 }, RangeError, 'Invalid print option linewidth=-80: expected a non-negative integer'],
      [{ linewidth: 80n }, TypeError, 'Invalid print option linewidth=80: expected a non-negative integer'],
      [{ sciMode: 'yes' }, TypeError, "Invalid print option sciMode='yes': expected true, false or undefined"],
      [{ sciMode: 1 }, TypeError, 'Invalid print option sciMode=1: expected true, false or undefined'],
      [{ sciMode: null }, TypeError, 'Invalid print option sciMode=null: expected true, false or undefined'],
      [{ profile: 'long' }, RangeError, "Invalid print option profile='long': expected 'default', 'short' or 'full'"],
      [
        { profile: 'toString' },
        RangeError,
        "Invalid print option profile='toString': expected 'default', 'short' or 'full'",
      ],
      [{ precison: 3 }, TypeError, "setPrintOptions() got an unexpected keyword argument 'precison'"],
      [{ sci_mode: true }, TypeError, "setPrintOptions() got an unexpected keyword argument 'sci_mode'"],
      [null, TypeError, 'setPrintOptions(): expected an options object, got null'],
      [4, TypeError, 'setPrintOptions(): expected an options object, got 4'],
      [[4], TypeError, 'setPrintOptions(): expected an options object, got an array'],
      // Nothing is applied when any option is bad, not even the valid ones before it.
      [
        { profile: 'short', precision: 2, edgeitems: -1 },
        RangeError,
        'Invalid print option edgeitems=-1: expected a non-negative integer',
      ],
    ];
    for (const [options, ErrorClass, message] of bad) {
      assert.throws(
        () => setPrintOptions(options as Partial<PrintOptions>),
        (e: Error) => e.constructor === ErrorClass && e.message === message,
        String(message),
      );
      assert.deepEqual({ ...getPrintOptions() }, before);
    }
  });

  it('accept the limits: zero counts, an infinite threshold, no argument at all', () => {
    setPrintOptions({ precision: 0, threshold: 0, edgeitems: 0, linewidth: 0 });
    assert.deepEqual({ ...getPrintOptions() }, {
      precision: 0,
      threshold: 0,
      edgeitems: 0,
      linewidth: 0,
      sciMode: undefined,
    });
    // PyTorch 1.13 with the same options (a 1-d `self[-0:]` is the whole dimension; linewidth 0: one per line).
    assert.equal(
      formatTensor(src([10], int64, (i) => BigInt(i))),
      'tensor([ ...,\n' + Array.from({ length: 10 }, (_, i) => `        ${i}`).join(',\n') + '])',
    );
    setPrintOptions({ threshold: Infinity, sciMode: false });
    setPrintOptions();
    assert.equal(getPrintOptions().sciMode, undefined);
    assert.equal(getPrintOptions().threshold, Infinity);
  });

  it('formatTensor checks the options it is given the same way', () => {
    assert.throws(
      () => formatTensor(src([1], int64, [1n]), { edgeitems: -1 }),
      /^RangeError: Invalid print option edgeitems=-1/,
    );
  });
});
