import { describe, it } from 'node:test';
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
import { arange, memoryStats, scope, type Tensor, tensor } from '../../mod.ts';
import { formatExponential, formatFixed, type FormatSource, formatTensor } from '../../core/tensor/format.ts';
import type { PrintOptions } from '../../core/tensor/print_options.ts';

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

/** Wraps a FormatSource to count the elements read. */
function counting(source: FormatSource): { source: FormatSource; reads: () => number } {
  let reads = 0;
  return {
    source: {
      ...source,
      get: (i) => {
        reads++;
        return source.get(i);
      },
    },
    reads: () => reads,
  };
}

describe('printing reads only the elements it prints', () => {
  it('a summarised 10^8-element source is read at its edge items only', () => {
    const { source, reads } = counting(src([10_000, 10_000], float32, (i) => (i % 10_000) / 7));
    const text = formatTensor(source);
    // 6 rows x 6 columns are shown; the formatter reads each twice (to measure the width, then to print).
    assert.ok(reads() <= 2 * 36, `${reads()} reads`);
    assert.equal(text.split('\n').length, 13);
  });

  it('an expanded 10^4 x 10^4 Tensor prints as PyTorch does, in milliseconds and without allocating', () => {
    using row = arange(10_000, { dtype: 'float32' });
    using scaled = row.div(7);
    using huge = scaled.expand([10_000, 10_000]);
    const before = memoryStats();
    const start = performance.now();
    const text = String(huge);
    const elapsed = performance.now() - start;
    const rowText = '[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.4281e+03, 1.4283e+03,\n         1.4284e+03]';
    assert.equal(
      text,
      `tensor([${rowText},\n        ${rowText},\n        ${rowText},\n        ...,\n        ${rowText},\n        ` +
        `${rowText},\n        ${rowText}])`,
    );
    // Reading all 10^8 elements (as printing once did) takes seconds; the edge items take well under one.
    assert.ok(elapsed < 250, `${elapsed} ms`);
    const after = memoryStats();
    assert.deepEqual([after.liveTensors, after.bytes], [before.liveTensors, before.bytes]);
  });

  it('a real 2000 x 3000 tensor and its transpose print from the edges', () => {
    using flat = arange(2000 * 3, { dtype: 'float32' });
    using quarter = flat.div(4);
    using matrix = quarter.reshape([2000, 3]);
    using transposed = matrix.t();
    assert.equal(
      String(transposed),
      'tensor([[0.0000e+00, 7.5000e-01, 1.5000e+00,  ..., 1.4978e+03, 1.4985e+03,\n         1.4992e+03],\n' +
        '        [2.5000e-01, 1.0000e+00, 1.7500e+00,  ..., 1.4980e+03, 1.4988e+03,\n         1.4995e+03],\n' +
        '        [5.0000e-01, 1.2500e+00, 2.0000e+00,  ..., 1.4982e+03, 1.4990e+03,\n         1.4998e+03]])',
    );
  });
});

describe('printing views, expanded and strided tensors matches PyTorch 1.13 repr()', () => {
  // Each `build` makes the tensor from PyTorch's expression in its name (through owned temporaries).
  const x = () => arange(60, { dtype: 'float32' }).div(8).reshape([3, 4, 5]);
  const cases: Array<[string, () => Tensor, string]> = [
    [
      'x.permute(2, 0, 1)',
      () => x().permute([2, 0, 1]),
      'tensor([[[0.0000, 0.6250, 1.2500, 1.8750],\n         [2.5000, 3.1250, 3.7500, 4.3750],\n         [5.0000, 5.6250, 6.2500, 6.8750]],\n\n        [[0.1250, 0.7500, 1.3750, 2.0000],\n         [2.6250, 3.2500, 3.8750, 4.5000],\n         [5.1250, 5.7500, 6.3750, 7.0000]],\n\n        [[0.2500, 0.8750, 1.5000, 2.1250],\n         [2.7500, 3.3750, 4.0000, 4.6250],\n         [5.2500, 5.8750, 6.5000, 7.1250]],\n\n        [[0.3750, 1.0000, 1.6250, 2.2500],\n         [2.8750, 3.5000, 4.1250, 4.7500],\n         [5.3750, 6.0000, 6.6250, 7.2500]],\n\n        [[0.5000, 1.1250, 1.7500, 2.3750],\n         [3.0000, 3.6250, 4.2500, 4.8750],\n         [5.5000, 6.1250, 6.7500, 7.3750]]])',
    ],
    [
      'x[:, ::2, 1:]',
      () => x().slice(1, null, null, 2).slice(2, 1),
      'tensor([[[0.1250, 0.2500, 0.3750, 0.5000],\n         [1.3750, 1.5000, 1.6250, 1.7500]],\n\n        [[2.6250, 2.7500, 2.8750, 3.0000],\n         [3.8750, 4.0000, 4.1250, 4.2500]],\n\n        [[5.1250, 5.2500, 5.3750, 5.5000],\n         [6.3750, 6.5000, 6.6250, 6.7500]]])',
    ],
    [
      'x.select(1, 2)',
      () => x().select(1, 2),
      'tensor([[1.2500, 1.3750, 1.5000, 1.6250, 1.7500],\n        [3.7500, 3.8750, 4.0000, 4.1250, 4.2500],\n        [6.2500, 6.3750, 6.5000, 6.6250, 6.7500]])',
    ],
    [
      'torch.arange(12).reshape(3, 4).t()',
      () => arange(12).reshape([3, 4]).t(),
      'tensor([[ 0,  4,  8],\n        [ 1,  5,  9],\n        [ 2,  6, 10],\n        [ 3,  7, 11]])',
    ],
    [
      '(torch.arange(5.) - 2).reshape(1, 5).expand(4, 5)',
      () => arange(5, { dtype: 'float32' }).sub(2).reshape([1, 5]).expand([4, 5]),
      'tensor([[-2., -1.,  0.,  1.,  2.],\n        [-2., -1.,  0.,  1.,  2.],\n        [-2., -1.,  0.,  1.,  2.],\n        [-2., -1.,  0.,  1.,  2.]])',
    ],
    [
      'torch.arange(16, dtype=torch.float64).reshape(4, 4).diagonal(1)',
      () => arange(16, { dtype: 'float64' }).reshape([4, 4]).diagonal(1),
      'tensor([ 1.,  6., 11.], dtype=torch.float64)',
    ],
    [
      'torch.arange(10, dtype=torch.int32).as_strided((4, 3), (2, 1), 1)',
      () => arange(10, { dtype: 'int32' }).asStrided([4, 3], [2, 1], 1),
      'tensor([[1, 2, 3],\n        [3, 4, 5],\n        [5, 6, 7],\n        [7, 8, 9]], dtype=torch.int32)',
    ],
    [
      '(torch.arange(10000.) * 3).reshape(10000, 1).expand(10000, 10000).t()',
      () => arange(10_000, { dtype: 'float32' }).mul(3).reshape([10_000, 1]).expand([10_000, 10_000]).t(),
      'tensor([' +
      Array(6).fill('[0.0000e+00, 3.0000e+00, 6.0000e+00,  ..., 2.9991e+04, 2.9994e+04,\n         2.9997e+04]')
        .map((row, i) => (i === 3 ? '...,\n        ' : '') + row).join(',\n        ') +
      '])',
    ],
    [
      'torch.arange(24000).reshape(20, 30, 40)[::2, 1:, ::3]',
      () => arange(24_000).reshape([20, 30, 40]).slice(0, null, null, 2).slice(1, 1).slice(2, null, null, 3),
      'tensor([[[   40,    43,    46,  ...,    73,    76,    79],\n         [   80,    83,    86,  ...,   113,   116,   119],\n         [  120,   123,   126,  ...,   153,   156,   159],\n         ...,\n         [ 1080,  1083,  1086,  ...,  1113,  1116,  1119],\n         [ 1120,  1123,  1126,  ...,  1153,  1156,  1159],\n         [ 1160,  1163,  1166,  ...,  1193,  1196,  1199]],\n\n        [[ 2440,  2443,  2446,  ...,  2473,  2476,  2479],\n         [ 2480,  2483,  2486,  ...,  2513,  2516,  2519],\n         [ 2520,  2523,  2526,  ...,  2553,  2556,  2559],\n         ...,\n         [ 3480,  3483,  3486,  ...,  3513,  3516,  3519],\n         [ 3520,  3523,  3526,  ...,  3553,  3556,  3559],\n         [ 3560,  3563,  3566,  ...,  3593,  3596,  3599]],\n\n        [[ 4840,  4843,  4846,  ...,  4873,  4876,  4879],\n         [ 4880,  4883,  4886,  ...,  4913,  4916,  4919],\n         [ 4920,  4923,  4926,  ...,  4953,  4956,  4959],\n         ...,\n         [ 5880,  5883,  5886,  ...,  5913,  5916,  5919],\n         [ 5920,  5923,  5926,  ...,  5953,  5956,  5959],\n         [ 5960,  5963,  5966,  ...,  5993,  5996,  5999]],\n\n        ...,\n\n        [[16840, 16843, 16846,  ..., 16873, 16876, 16879],\n         [16880, 16883, 16886,  ..., 16913, 16916, 16919],\n         [16920, 16923, 16926,  ..., 16953, 16956, 16959],\n         ...,\n         [17880, 17883, 17886,  ..., 17913, 17916, 17919],\n         [17920, 17923, 17926,  ..., 17953, 17956, 17959],\n         [17960, 17963, 17966,  ..., 17993, 17996, 17999]],\n\n        [[19240, 19243, 19246,  ..., 19273, 19276, 19279],\n         [19280, 19283, 19286,  ..., 19313, 19316, 19319],\n         [19320, 19323, 19326,  ..., 19353, 19356, 19359],\n         ...,\n         [20280, 20283, 20286,  ..., 20313, 20316, 20319],\n         [20320, 20323, 20326,  ..., 20353, 20356, 20359],\n         [20360, 20363, 20366,  ..., 20393, 20396, 20399]],\n\n        [[21640, 21643, 21646,  ..., 21673, 21676, 21679],\n         [21680, 21683, 21686,  ..., 21713, 21716, 21719],\n         [21720, 21723, 21726,  ..., 21753, 21756, 21759],\n         ...,\n         [22680, 22683, 22686,  ..., 22713, 22716, 22719],\n         [22720, 22723, 22726,  ..., 22753, 22756, 22759],\n         [22760, 22763, 22766,  ..., 22793, 22796, 22799]]])',
    ],
    [
      'torch.tensor([2**62 + 1, -2**63, 2**53 + 1])',
      () => tensor(new BigInt64Array([2n ** 62n + 1n, -(2n ** 63n), 2n ** 53n + 1n])),
      'tensor([ 4611686018427387905, -9223372036854775808,     9007199254740993])',
    ],
    [
      '(torch.arange(12, dtype=torch.float16) / 3).reshape(3, 4)[:, 1::2]',
      () => arange(12, { dtype: 'float16' }).div(3).reshape([3, 4]).slice(1, 1, null, 2),
      'tensor([[0.3333, 1.0000],\n        [1.6670, 2.3340],\n        [3.0000, 3.6660]], dtype=torch.float16)',
    ],
    [
      '(torch.arange(6).reshape(2, 3) % 2 == 0).t()',
      () => arange(6).reshape([2, 3]).remainder(2).eq(0).t(),
      'tensor([[ True, False],\n        [False,  True],\n        [ True, False]])',
    ],
  ];
  for (const [name, build, expected] of cases) {
    it(name, () => {
      const before = memoryStats().liveTensors;
      scope(() => assert.equal(String(build()), expected));
      assert.equal(memoryStats().liveTensors, before);
    });
  }
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
