// The Tensor class on real data: sizes and strides, element access (toArray for every dtype, tolist, item),
// the version counter views share, and printing: PyTorch 1.13's repr character for character (expected strings
// from the installed torch's `repr(t)`), also through Deno.inspect / Bun.inspect / node:util's inspect.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { arange, eye, linspace, manualSeed, rand, randn, Tensor, tensor, zeros } from '../../mod.ts';
import {
  ALL_DTYPES,
  nonContiguousTensor,
  randomTensor,
  randomValues,
  restride,
  rng,
  roundTo,
  values,
} from '../ops/_helpers.ts';

function contiguous(shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    out[i] = s;
    s *= Math.max(shape[i], 1);
  }
  return out;
}

const reshape = (t: Tensor, shape: number[]) => restride(t, shape, contiguous(shape), 0);

describe('Tensor sizes and strides', () => {
  it('report shape, ndim, numel, size(), stride() and contiguity', () => {
    const t = zeros([2, 3, 4]);
    assert.deepEqual([[...t.shape], t.ndim, t.dim(), t.numel], [[2, 3, 4], 3, 3, 24]);
    assert.deepEqual([[...t.size()], t.size(0), t.size(-1), [...t.stride()], t.stride(-3)], [[2, 3, 4], 2, 4, [
      12,
      4,
      1,
    ], 12]);
    assert.ok(t.isContiguous());
    const v = restride(t, [4, 3], [1, 4], 0);
    assert.deepEqual([[...v.stride()], v.isContiguous(), v.numel], [[1, 4], false, 12]);
    const s = zeros([]);
    assert.deepEqual([[...s.shape], s.ndim, s.numel, [...s.stride()]], [[], 0, 1, []]);
    assert.equal(zeros([3, 0]).numel, 0);
    v.dispose();
    s.dispose();
  });

  it("raise PyTorch's error for a dim out of range", () => {
    const t = zeros([2, 3]);
    assert.throws(
      () => t.size(2),
      /^RangeError: Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$/,
    );
    assert.throws(() => t.stride(-3), /but got -3/);
    t.dispose();
  });
});

describe('Tensor element access', () => {
  for (const dtype of ALL_DTYPES) {
    it(`toArray() reads ${dtype} contiguous and strided tensors in row-major order`, () => {
      const next = rng(ALL_DTYPES.indexOf(dtype) + 1);
      for (const shape of [[7], [3, 5], [2, 1, 4], [0, 3], []]) {
        const n = shape.reduce((a, b) => a * b, 1);
        const flat = randomValues(n, dtype, next);
        const t = tensor(dtype === 'bool' ? flat.map((v) => v !== 0) : flat, { dtype });
        const shaped = reshape(t, shape);
        const expected = flat.map((v) => roundTo(v, dtype));
        const got = shaped.toArray();
        assert.equal(got.length, n);
        if (dtype === 'bool') assert.ok(got.every((v) => typeof v === 'boolean'));
        assert.deepEqual(values(shaped), expected);
        shaped.dispose();
      }
      if (dtype !== 'bool') {
        // A transposed view reads element [i][j] from storage offset i + j * rows.
        const nc = nonContiguousTensor([3, 4], dtype, next);
        const storage = restride(nc, [12], [1], 0);
        const flat = values(storage);
        const view = restride(storage, [3, 4], [1, 3], 0);
        const expected = Array.from({ length: 12 }, (_, k) => flat[Math.floor(k / 4) + (k % 4) * 3]);
        assert.deepEqual(values(view), expected);
        view.dispose();
      }
    });
  }

  it('toArray() gives int64 values as the nearest numbers', () => {
    assert.deepEqual(tensor(BigInt64Array.of(2n ** 60n + 1n, -5n)).toArray(), [2 ** 60, -5]);
  });

  it('tolist() nests like the shape and gives a 0-d value itself', () => {
    const t = reshape(arange(6), [2, 3]);
    assert.deepEqual(t.tolist(), [[0, 1, 2], [3, 4, 5]]);
    assert.deepEqual(restride(t, [3, 2], [1, 3], 0).tolist(), [[0, 3], [1, 4], [2, 5]]);
    assert.deepEqual(zeros([2, 0]).tolist(), [[], []]);
    assert.deepEqual(zeros([0, 2]).tolist(), []);
    assert.equal(tensor(3).tolist(), 3);
    assert.deepEqual(tensor([[true], [false]]).tolist(), [[true], [false]]);
  });

  it('item() gives the value of one-element tensors', () => {
    assert.equal(tensor(5).item(), 5);
    assert.equal(tensor([[2.5]]).item(), 2.5);
    assert.equal(tensor([true]).item(), true);
    assert.equal(zeros([1, 1, 1], { dtype: 'float16' }).item(), 0);
    assert.throws(() => tensor([1, 2]).item(), /^Error: a Tensor with 2 elements cannot be converted to Scalar$/);
    assert.throws(() => zeros([0]).item(), /a Tensor with 0 elements cannot be converted to Scalar/);
    assert.throws(() => zeros([1], { device: 'meta' }).item(), /meta tensor/);
  });
});

describe('Tensor version counter', () => {
  it('is shared by views and bumped by in-place operators', () => {
    const base = zeros([4]);
    const view = restride(zeros([4]), [2], [2], 0);
    base.storage.retain();
    const alias = new Tensor({
      storage: base.storage,
      shape: [2],
      strides: [1],
      storageOffset: 2,
      dtype: base.dtype,
      version: base.versionCounter,
      base,
    });
    assert.equal(alias.base, base);
    const v0 = base.version;
    alias.uniform_();
    assert.equal(base.version, v0 + 1);
    base.normal_();
    assert.equal(alias.version, v0 + 2);
    assert.equal(view.version, 0);
    for (const t of [base, view, alias]) t.dispose();
  });
});

// repr(t) of the same tensors in PyTorch 1.13.
const PYTORCH_REPR: Record<string, string> = {
  'int': 'tensor([1, 2, 3])',
  'float2d': 'tensor([[ 1.5000, -2.2500],\n        [ 3.0000,  4.0000]])',
  'small': 'tensor([1.0000e-05, 1.0000e+00])',
  'big': 'tensor([1.0000e+10, 1.0000e+00])',
  'mixed': 'tensor([1.0000e-01, 1.0000e+05])',
  'nonfinite': 'tensor([   nan,    inf,   -inf, 1.5000])',
  'bool': 'tensor([ True, False])',
  'scalar_f': 'tensor(3.5000)',
  'scalar_i': 'tensor(7)',
  'scalar_b': 'tensor(True)',
  'empty': 'tensor([])',
  'empty_i': 'tensor([], dtype=torch.int64)',
  'empty2': 'tensor([], size=(2, 0))',
  'f64': 'tensor([1.2500, 2.5000], dtype=torch.float64)',
  'i32': 'tensor([[ 1, -2],\n        [30,  4]], dtype=torch.int32)',
  'f16': 'tensor([0.1000, 2.5000], dtype=torch.float16)',
  'bf16': 'tensor([0.1001, 2.5000], dtype=torch.bfloat16)',
  'u8': 'tensor([  0, 255], dtype=torch.uint8)',
  'i8': 'tensor([-128,  127], dtype=torch.int8)',
  'i16': 'tensor([-3,  3], dtype=torch.int16)',
  'summ': 'tensor([   0,    1,    2,  ..., 1997, 1998, 1999])',
  'summ2d':
    'tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.7000e+01, 9.8000e+01,\n         9.9000e+01],\n        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.9700e+02, 1.9800e+02,\n         1.9900e+02],\n        [2.0000e+02, 2.0100e+02, 2.0200e+02,  ..., 2.9700e+02, 2.9800e+02,\n         2.9900e+02],\n        ...,\n        [2.7000e+03, 2.7010e+03, 2.7020e+03,  ..., 2.7970e+03, 2.7980e+03,\n         2.7990e+03],\n        [2.8000e+03, 2.8010e+03, 2.8020e+03,  ..., 2.8970e+03, 2.8980e+03,\n         2.8990e+03],\n        [2.9000e+03, 2.9010e+03, 2.9020e+03,  ..., 2.9970e+03, 2.9980e+03,\n         2.9990e+03]])',
  '3d':
    'tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n         [ 8,  9, 10, 11]],\n\n        [[12, 13, 14, 15],\n         [16, 17, 18, 19],\n         [20, 21, 22, 23]]])',
  'rand':
    'tensor([[0.4963, 0.7682, 0.0885, 0.1320],\n        [0.3074, 0.6341, 0.4901, 0.8964],\n        [0.4556, 0.6323, 0.3489, 0.4017]])',
  'randn64': 'tensor([[ 0.4033,  0.8380, -0.7193],\n        [-0.4033, -0.5966,  0.1820]], dtype=torch.float64)',
  'negzero': 'tensor([-0., 1.])',
  'intlike_f': 'tensor([1., 2., 3.])',
  'huge_i': 'tensor([1099511627776,            -3])',
  'eye': 'tensor([[1., 0., 0.],\n        [0., 1., 0.],\n        [0., 0., 1.]])',
  'linspace':
    'tensor([-1.0000e+00, -6.6667e-01, -3.3333e-01, -2.9802e-08,  3.3333e-01,\n         6.6667e-01,  1.0000e+00])',
  'wide':
    'tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000, 45.0000, 46.5000,\n        48.0000, 49.5000, 51.0000, 52.5000, 54.0000, 55.5000, 57.0000, 58.5000])',
  'meta': "tensor(..., device='meta', size=(2, 3))",
  'meta_i': "tensor(..., device='meta', size=(2,), dtype=torch.int32)",
  'transposed': 'tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])',
};

describe('Tensor printing matches PyTorch 1.13', () => {
  const make: Record<string, () => Tensor> = {
    int: () => tensor([1, 2, 3]),
    float2d: () => tensor([[1.5, -2.25], [3, 4]]),
    small: () => tensor([1e-5, 1], { dtype: 'float32' }),
    big: () => tensor([1e10, 1], { dtype: 'float32' }),
    mixed: () => tensor([0.1, 100000]),
    nonfinite: () => tensor([NaN, Infinity, -Infinity, 1.5]),
    bool: () => tensor([true, false]),
    scalar_f: () => tensor(3.5),
    scalar_i: () => tensor(7),
    scalar_b: () => tensor(true),
    empty: () => tensor([]),
    empty_i: () => tensor([], { dtype: 'int64' }),
    empty2: () => zeros([2, 0]),
    f64: () => tensor([1.25, 2.5], { dtype: 'float64' }),
    i32: () => tensor([[1, -2], [30, 4]], { dtype: 'int32' }),
    f16: () => tensor([0.1, 2.5], { dtype: 'float16' }),
    bf16: () => tensor([0.1, 2.5], { dtype: 'bfloat16' }),
    u8: () => tensor([0, 255], { dtype: 'uint8' }),
    i8: () => tensor([-128, 127], { dtype: 'int8' }),
    i16: () => tensor([-3, 3], { dtype: 'int16' }),
    summ: () => arange(2000),
    summ2d: () => reshape(arange(3000, { dtype: 'float32' }), [30, 100]),
    '3d': () => reshape(arange(24), [2, 3, 4]),
    rand: () => {
      manualSeed(0);
      return rand([3, 4]);
    },
    randn64: () => randn([2, 3], { dtype: 'float64' }), // continues the stream after `rand`, as in PyTorch
    negzero: () => tensor([-0, 1], { dtype: 'float32' }),
    intlike_f: () => tensor([1, 2, 3], { dtype: 'float32' }),
    huge_i: () => tensor([2 ** 40, -3]),
    eye: () => eye(3),
    linspace: () => linspace(-1, 1, 7),
    wide: () => arange(0, 60, 1.5),
    meta: () => zeros([2, 3], { device: 'meta' }),
    meta_i: () => zeros([2], { dtype: 'int32', device: 'meta' }),
    transposed: () => restride(reshape(arange(6, { dtype: 'float32' }), [2, 3]), [3, 2], [1, 3], 0),
  };
  for (const [name, build] of Object.entries(make)) {
    it(name, () => {
      const t = build();
      assert.equal(String(t), PYTORCH_REPR[name]);
      t.dispose();
    });
  }

  it("prints through the runtimes' inspect hooks", () => {
    const t = tensor([[1.5, -2.25], [3, 4]]);
    const g = globalThis as { Deno?: { inspect(v: unknown): string }; Bun?: { inspect(v: unknown): string } };
    // Node's own inspect is node:util's (checked below in every runtime).
    const runtimeInspect = g.Deno?.inspect ?? g.Bun?.inspect ?? inspect;
    assert.equal(runtimeInspect(t), PYTORCH_REPR.float2d);
    assert.equal(inspect(t), PYTORCH_REPR.float2d);
    assert.match(runtimeInspect({ weight: tensor([1]) }), /weight: tensor\(\[1\]\)/);
    const disposed = tensor([1]);
    disposed.dispose();
    assert.equal(String(disposed), 'tensor(<disposed>)');
  });

  it('summarizes random data above the threshold like PyTorch (edge items only)', () => {
    const t = randomTensor([1001], 'int32', rng(5));
    const text = String(t);
    assert.match(text, /^tensor\(\[ *-?\d+, +-?\d+, +-?\d+, +\.\.\., +-?\d+, +-?\d+, +-?\d+\], dtype=torch\.int32\)$/);
    const xs = values(t);
    const shown = text.match(/-?\d+(?=[,\]])/g)!.map(Number);
    assert.deepEqual(shown, [...xs.slice(0, 3), ...xs.slice(-3)]);
    t.dispose();
  });
});

describe('Tensor.cpu()', () => {
  it("returns a CPU tensor itself and refuses a meta tensor with PyTorch's message", () => {
    const t = tensor([1, 2]);
    assert.equal(t.cpu(), t);
    const m = zeros([2], { device: 'meta' });
    assert.throws(
      () => m.cpu(),
      (e: Error) =>
        e.constructor.name === 'NotImplementedError' && e.message === 'Cannot copy out of meta tensor; no data!',
    );
    t.dispose();
    m.dispose();
  });
});
