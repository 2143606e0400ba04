import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  bfloat16,
  bool,
  type DType,
  float16,
  float32,
  float64,
  int32,
  int64,
  setDefaultDtype,
  uint8,
} from '../../core/tensor/dtype.ts';
import {
  formatExponential,
  formatFixed,
  type FormatSource,
  formatTensor,
  getPrintOptions,
  type PrintOptions,
  setPrintOptions,
} from '../../core/tensor/format.ts';

/** A FormatSource over literal values, or over `values(flatIndex)`. */
function src(
  shape: number[],
  dtype: DType,
  values: (number | bigint | boolean)[] | ((i: number) => number | bigint | boolean),
  device = 'cpu',
): FormatSource {
  const get = typeof values === 'function' ? values : (i: number) => values[i];
  return { shape, dtype, device, get };
}

interface Case {
  name: string;
  source: FormatSource;
  expected: string;
  options?: Partial<PrintOptions>;
  defaultDtype?: DType;
}

// Every expected string is repr() of the same tensor printed by PyTorch 1.13 (Debian's python3-torch
// 1.13.1), with torch.set_printoptions / torch.set_default_dtype set as `options` / `defaultDtype` say.
const CASES: Case[] = [
  {
    name: '0-dim float32 in int mode',
    source: src([], float32, [3]),
    expected: 'tensor(3.)',
  },
  {
    name: '0-dim negative zero',
    source: src([], float32, [-0]),
    expected: 'tensor(-0.)',
  },
  {
    name: '0-dim float64 gets a dtype suffix',
    source: src([], float64, [2.5]),
    expected: 'tensor(2.5000, dtype=torch.float64)',
  },
  {
    name: '0-dim int64 has no dtype suffix',
    source: src([], int64, [7n]),
    expected: 'tensor(7)',
  },
  {
    name: '0-dim bool',
    source: src([], bool, [true]),
    expected: 'tensor(True)',
  },
  {
    name: 'bool vector is right-aligned to True/False',
    source: src([2], bool, [true, false]),
    expected: 'tensor([ True, False])',
  },
  {
    name: 'integral floats print with a trailing point',
    source: src([3], float32, [1, 2, 3]),
    expected: 'tensor([1., 2., 3.])',
  },
  {
    name: 'fixed notation with precision 4',
    source: src([3], float32, [1, 2.5, -3]),
    expected: 'tensor([ 1.0000,  2.5000, -3.0000])',
  },
  {
    name: 'int32 vector',
    source: src([3], int32, [1, -2, 3]),
    expected: 'tensor([ 1, -2,  3], dtype=torch.int32)',
  },
  {
    name: 'uint8 vector',
    source: src([2], uint8, [0, 255]),
    expected: 'tensor([  0, 255], dtype=torch.uint8)',
  },
  {
    name: 'int64 extremes from bigints',
    source: src([2], int64, [-(2n ** 63n), 2n ** 63n - 1n]),
    expected: 'tensor([-9223372036854775808,  9223372036854775807])',
  },
  {
    name: 'nan and inf do not count towards the width',
    source: src([4], float32, [1.5, Infinity, NaN, -Infinity]),
    expected: 'tensor([1.5000,    inf,    nan,   -inf])',
  },
  {
    name: 'nan in int mode gets no point',
    source: src([2], float32, [1, NaN]),
    expected: 'tensor([1., nan])',
  },
  {
    name: 'negative zero keeps its sign',
    source: src([2], float32, [-0, 1]),
    expected: 'tensor([-0., 1.])',
  },
  {
    name: 'small values switch to scientific notation',
    source: src([2], float32, [1e-5, 1]),
    expected: 'tensor([1.0000e-05, 1.0000e+00])',
  },
  {
    name: 'integral values above 1e8 switch to scientific notation',
    source: src([2], float32, [1e9, 1]),
    expected: 'tensor([1.0000e+09, 1.0000e+00])',
  },
  {
    name: 'ties round half to even like Python',
    source: src([3], float64, [0.03125, 0.09375, 2.5]),
    expected: 'tensor([0.0312, 0.0938, 2.5000], dtype=torch.float64)',
  },
  {
    name: 'float32 values print their exact double',
    source: src([3], float32, [0.1, 0.2, 0.3]),
    expected: 'tensor([0.1000000015, 0.2000000030, 0.3000000119])',
    options: { precision: 10 },
  },
  {
    name: 'float16 values and suffix',
    source: src([3], float16, [65504, -1, 0.0999755859375]),
    expected: 'tensor([ 6.5504e+04, -1.0000e+00,  9.9976e-02], dtype=torch.float16)',
  },
  {
    name: 'bfloat16 values and suffix',
    source: src([2], bfloat16, [3.140625, 1]),
    expected: 'tensor([3.1406, 1.0000], dtype=torch.bfloat16)',
  },
  {
    name: '2-d int64 matrix',
    source: src([3, 4], int64, (i) => BigInt(i)),
    expected: 'tensor([[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n        [ 8,  9, 10, 11]])',
  },
  {
    name: '3-d tensors separate blocks with a blank line',
    source: src([2, 3, 4], float32, (i) => i / 4),
    expected:
      'tensor([[[0.0000, 0.2500, 0.5000, 0.7500],\n         [1.0000, 1.2500, 1.5000, 1.7500],\n         [2.0000, 2.2500, 2.5000, 2.7500]],\n\n        [[3.0000, 3.2500, 3.5000, 3.7500],\n         [4.0000, 4.2500, 4.5000, 4.7500],\n         [5.0000, 5.2500, 5.5000, 5.7500]]])',
  },
  {
    name: '1-d summary above the threshold',
    source: src([2000], float32, (i) => i),
    expected: 'tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        1.9990e+03])',
  },
  {
    name: '2-d summary',
    source: src([40, 40], int64, (i) => BigInt(i)),
    expected:
      'tensor([[   0,    1,    2,  ...,   37,   38,   39],\n        [  40,   41,   42,  ...,   77,   78,   79],\n        [  80,   81,   82,  ...,  117,  118,  119],\n        ...,\n        [1480, 1481, 1482,  ..., 1517, 1518, 1519],\n        [1520, 1521, 1522,  ..., 1557, 1558, 1559],\n        [1560, 1561, 1562,  ..., 1597, 1598, 1599]])',
  },
  {
    name: '3-d summary',
    source: src([12, 12, 12], float32, (i) => (i % 17) / 8),
    expected:
      'tensor([[[0.0000, 0.1250, 0.2500,  ..., 1.1250, 1.2500, 1.3750],\n         [1.5000, 1.6250, 1.7500,  ..., 0.5000, 0.6250, 0.7500],\n         [0.8750, 1.0000, 1.1250,  ..., 2.0000, 0.0000, 0.1250],\n         ...,\n         [0.7500, 0.8750, 1.0000,  ..., 1.8750, 2.0000, 0.0000],\n         [0.1250, 0.2500, 0.3750,  ..., 1.2500, 1.3750, 1.5000],\n         [1.6250, 1.7500, 1.8750,  ..., 0.6250, 0.7500, 0.8750]],\n\n        [[1.0000, 1.1250, 1.2500,  ..., 0.0000, 0.1250, 0.2500],\n         [0.3750, 0.5000, 0.6250,  ..., 1.5000, 1.6250, 1.7500],\n         [1.8750, 2.0000, 0.0000,  ..., 0.8750, 1.0000, 1.1250],\n         ...,\n         [1.7500, 1.8750, 2.0000,  ..., 0.7500, 0.8750, 1.0000],\n         [1.1250, 1.2500, 1.3750,  ..., 0.1250, 0.2500, 0.3750],\n         [0.5000, 0.6250, 0.7500,  ..., 1.6250, 1.7500, 1.8750]],\n\n        [[2.0000, 0.0000, 0.1250,  ..., 1.0000, 1.1250, 1.2500],\n         [1.3750, 1.5000, 1.6250,  ..., 0.3750, 0.5000, 0.6250],\n         [0.7500, 0.8750, 1.0000,  ..., 1.8750, 2.0000, 0.0000],\n         ...,\n         [0.6250, 0.7500, 0.8750,  ..., 1.7500, 1.8750, 2.0000],\n         [0.0000, 0.1250, 0.2500,  ..., 1.1250, 1.2500, 1.3750],\n         [1.5000, 1.6250, 1.7500,  ..., 0.5000, 0.6250, 0.7500]],\n\n        ...,\n\n        [[0.5000, 0.6250, 0.7500,  ..., 1.6250, 1.7500, 1.8750],\n         [2.0000, 0.0000, 0.1250,  ..., 1.0000, 1.1250, 1.2500],\n         [1.3750, 1.5000, 1.6250,  ..., 0.3750, 0.5000, 0.6250],\n         ...,\n         [1.2500, 1.3750, 1.5000,  ..., 0.2500, 0.3750, 0.5000],\n         [0.6250, 0.7500, 0.8750,  ..., 1.7500, 1.8750, 2.0000],\n         [0.0000, 0.1250, 0.2500,  ..., 1.1250, 1.2500, 1.3750]],\n\n        [[1.5000, 1.6250, 1.7500,  ..., 0.5000, 0.6250, 0.7500],\n         [0.8750, 1.0000, 1.1250,  ..., 2.0000, 0.0000, 0.1250],\n         [0.2500, 0.3750, 0.5000,  ..., 1.3750, 1.5000, 1.6250],\n         ...,\n         [0.1250, 0.2500, 0.3750,  ..., 1.2500, 1.3750, 1.5000],\n         [1.6250, 1.7500, 1.8750,  ..., 0.6250, 0.7500, 0.8750],\n         [1.0000, 1.1250, 1.2500,  ..., 0.0000, 0.1250, 0.2500]],\n\n        [[0.3750, 0.5000, 0.6250,  ..., 1.5000, 1.6250, 1.7500],\n         [1.8750, 2.0000, 0.0000,  ..., 0.8750, 1.0000, 1.1250],\n         [1.2500, 1.3750, 1.5000,  ..., 0.2500, 0.3750, 0.5000],\n         ...,\n         [1.1250, 1.2500, 1.3750,  ..., 0.1250, 0.2500, 0.3750],\n         [0.5000, 0.6250, 0.7500,  ..., 1.6250, 1.7500, 1.8750],\n         [2.0000, 0.0000, 0.1250,  ..., 1.0000, 1.1250, 1.2500]]])',
  },
  {
    name: 'long vectors wrap at linewidth 80',
    source: src([30], float32, (i) => i / 3),
    expected:
      'tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667,\n        9.0000, 9.3333, 9.6667])',
  },
  {
    name: 'meta tensors print no data',
    source: src([2, 3], float32, [], 'meta'),
    expected: "tensor(..., device='meta', size=(2, 3))",
  },
  {
    name: 'meta tensors name a non-default dtype',
    source: src([2, 3], int64, [], 'meta'),
    expected: "tensor(..., device='meta', size=(2, 3), dtype=torch.int64)",
  },
  {
    name: '0-dim meta tensor',
    source: src([], float32, [], 'meta'),
    expected: "tensor(..., device='meta', size=())",
  },
  {
    name: 'empty 1-d tensor',
    source: src([0], float32, []),
    expected: 'tensor([])',
  },
  {
    name: 'empty tensors print their size unless it is (0,)',
    source: src([0, 3], float32, []),
    expected: 'tensor([], size=(0, 3))',
  },
  {
    name: 'empty int64 tensors name their dtype',
    source: src([0], int64, []),
    expected: 'tensor([], dtype=torch.int64)',
  },
  {
    name: 'requires_grad suffix',
    source: { ...src([2], float32, [1, 2]), requiresGrad: true },
    expected: 'tensor([1., 2.], requires_grad=True)',
  },
  {
    name: 'grad_fn suffix wins over requires_grad',
    source: { ...src([2], float32, [1, 2]), requiresGrad: true, gradFnName: 'AddBackward0' },
    expected: 'tensor([1., 2.], grad_fn=<AddBackward0>)',
  },
  {
    name: 'suffixes wrap onto a new line',
    source: { ...src([3, 20], float32, (i) => i / 3), requiresGrad: true },
    expected:
      'tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,\n          1.3333,  1.6667,  2.0000,  2.3333,\n          2.6667,  3.0000,  3.3333,  3.6667,\n          4.0000,  4.3333,  4.6667,  5.0000,\n          5.3333,  5.6667,  6.0000,  6.3333],\n        [ 6.6667,  7.0000,  7.3333,  7.6667,\n          8.0000,  8.3333,  8.6667,  9.0000,\n          9.3333,  9.6667, 10.0000, 10.3333,\n         10.6667, 11.0000, 11.3333, 11.6667,\n         12.0000, 12.3333, 12.6667, 13.0000],\n        [13.3333, 13.6667, 14.0000, 14.3333,\n         14.6667, 15.0000, 15.3333, 15.6667,\n         16.0000, 16.3333, 16.6667, 17.0000,\n         17.3333, 17.6667, 18.0000, 18.3333,\n         18.6667, 19.0000, 19.3333, 19.6667]],\n       requires_grad=True)',
    options: { linewidth: 50 },
  },
  {
    name: 'precision option',
    source: src([3], float32, [1 / 3, 2 / 3, 1]),
    expected: 'tensor([0.33, 0.67, 1.00])',
    options: { precision: 2 },
  },
  {
    name: 'sciMode forced on',
    source: src([3], float32, [1, 2.5, 3]),
    expected: 'tensor([1.0000e+00, 2.5000e+00, 3.0000e+00])',
    options: { sciMode: true },
  },
  {
    name: 'sciMode is ignored for all-zero tensors',
    source: src([2], float32, [0, 0]),
    expected: 'tensor([0., 0.])',
    options: { sciMode: true },
  },
  {
    name: 'sciMode forced off',
    source: src([2], float64, [1e30, 1]),
    expected: 'tensor([1000000000000000019884624838656.,         1.], dtype=torch.float64)',
    options: { sciMode: false },
  },
  {
    name: 'threshold and edgeitems options',
    source: src([10], int64, (i) => BigInt(i)),
    expected: 'tensor([0, 1,  ..., 8, 9])',
    options: { threshold: 5, edgeitems: 2 },
  },
  {
    name: 'short profile',
    source: src([3, 3], float32, (i) => i / 7),
    expected: 'tensor([[0.00, 0.14, 0.29],\n        [0.43, 0.57, 0.71],\n        [0.86, 1.00, 1.14]])',
    options: { precision: 2, edgeitems: 2 },
  },
  {
    name: 'three-digit exponents',
    source: src([3], float64, [1e300, 1e-300, -2.5]),
    expected: 'tensor([1.0000e+300, 1.0000e-300, -2.5000e+00], dtype=torch.float64)',
  },
  {
    name: 'narrow linewidth keeps one element per line',
    source: src([3], float32, [100000, 200000, 300000]),
    expected: 'tensor([100000.,\n        200000.,\n        300000.])',
    options: { linewidth: 10 },
  },
  {
    name: 'default dtype float64 names float32',
    source: src([2], float32, [1, 2]),
    expected: 'tensor([1., 2.], dtype=torch.float32)',
    defaultDtype: float64,
  },
  {
    name: 'default dtype float64 omits float64',
    source: src([2], float64, [1, 2]),
    expected: 'tensor([1., 2.])',
    defaultDtype: float64,
  },
];

describe('formatTensor matches PyTorch 1.13 repr()', () => {
  for (const { name, source, expected, options, defaultDtype } of CASES) {
    it(name, () => {
      try {
        if (defaultDtype) setDefaultDtype(defaultDtype);
        assert.equal(formatTensor(source, options), expected);
      } finally {
        setDefaultDtype(float32);
      }
    });
  }

  it('prints non-cpu devices as a suffix', () => {
    // Traced through _str_intern: any device type other than the default 'cpu' is named.
    assert.equal(formatTensor(src([2], float32, [1, 2], 'webgpu:0')), "tensor([1., 2.], device='webgpu:0')");
    assert.equal(formatTensor(src([0], int32, [], 'webgpu')), "tensor([], device='webgpu', dtype=torch.int32)");
  });
});

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
});

describe('Python number formatting', () => {
  // Expected values are Python 3.11's '{:.Nf}' / '{:.Ne}'.format(x).
  it('formatFixed rounds the exact value half to even', () => {
    const cases: [number, number, string][] = [
      [0.03125, 4, '0.0312'],
      [0.09375, 4, '0.0938'],
      [2.5, 0, '2'],
      [3.5, 0, '4'],
      [0.5, 0, '0'],
      [-0.5, 0, '-0'],
      [-0, 4, '-0.0000'],
      [-0.00001, 4, '-0.0000'],
      [1e22, 0, '10000000000000000000000'],
      [1e30, 2, '1000000000000000019884624838656.00'],
      [0.1, 20, '0.10000000000000000555'],
      [5e-324, 3, '0.000'],
      [123.456, 1, '123.5'],
      [NaN, 4, 'nan'],
      [-Infinity, 4, '-inf'],
    ];
    for (const [x, digits, expected] of cases) assert.equal(formatFixed(x, digits), expected, `${x}`);
  });

  it('formatExponential rounds half to even and pads the exponent to two digits', () => {
    const cases: [number, number, string][] = [
      [12345.678, 4, '1.2346e+04'],
      [0, 4, '0.0000e+00'],
      [-0, 2, '-0.00e+00'],
      [1e-5, 4, '1.0000e-05'],
      [99999.5, 4, '1.0000e+05'], // 9.99995e4 is a tie; 9 is odd, so it rounds up
      [99999.5, 3, '1.000e+05'],
      [125, 1, '1.2e+02'],
      [135, 1, '1.4e+02'],
      [1e300, 4, '1.0000e+300'],
      [5e-324, 4, '4.9407e-324'],
      [1.7976931348623157e308, 2, '1.80e+308'],
      [12345, 0, '1e+04'],
      [Infinity, 4, 'inf'],
    ];
    for (const [x, digits, expected] of cases) assert.equal(formatExponential(x, digits), expected, `${x}`);
  });
});
