// Factory operators: empty, zeros, ones, full, arange, linspace, eye and the *_like composites, on the CPU and
// the meta device, with PyTorch's dtype inference, errors and (for arange and linspace) PyTorch 1.13's CPU
// values bit for bit. Expected values come from the installed PyTorch 1.13: first elements as literals and a
// SHA-256 of all of them (float64 little-endian).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  arange,
  empty,
  emptyLike,
  eye,
  full,
  fullLike,
  getDefaultDtype,
  linspace,
  memoryStats,
  NotImplementedError,
  ones,
  onesLike,
  RuntimeError,
  setDefaultDtype,
  type Tensor,
  zeros,
  zerosLike,
} from '../../mod.ts';
import { ALL_DTYPES, restride, rng, values } from './_helpers.ts';

type DTypeName = (typeof ALL_DTYPES)[number];

function digest(xs: number[]): string {
  return createHash('sha256').update(new Uint8Array(Float64Array.from(xs).buffer)).digest('hex').slice(0, 32);
}

function contiguous(shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    out[i] = s;
    s *= Math.max(shape[i], 1);
  }
  return out;
}

const SHAPES: number[][] = [[], [0], [1], [7], [2, 0, 3], [3, 1, 5], [2, 3, 4, 1]];

describe('empty, zeros, ones, full', () => {
  for (const dtype of ALL_DTYPES) {
    it(`make contiguous ${dtype} tensors of any shape`, () => {
      for (const shape of SHAPES) {
        const n = shape.reduce((a, b) => a * b, 1);
        const z = zeros(shape, { dtype }), o = ones(shape, { dtype }), e = empty(shape, { dtype });
        for (const t of [z, o, e]) {
          assert.deepEqual([t.dtype.name, [...t.shape], [...t.stride()]], [dtype, shape, contiguous(shape)]);
          assert.equal(t.device.type, 'cpu');
        }
        assert.deepEqual(values(z), new Array(n).fill(0));
        assert.deepEqual(values(o), new Array(n).fill(1));
        const fill = dtype === 'bool' ? 1 : dtype === 'uint8' ? 200 : dtype.startsWith('int') ? -7 : -2.5;
        assert.deepEqual(values(full(shape, fill, { dtype })), new Array(n).fill(fill));
        for (const t of [z, o, e]) t.dispose();
      }
    });
  }

  it('take a single int as a size only where the size is their one positional argument, as PyTorch', () => {
    assert.deepEqual(zeros(3).shape, [3]);
    assert.throws(() => full(2 as unknown as number[], 1.5), {
      name: 'TypeError',
      message: "full(): argument 'size' (position 1) must be tuple of SymInts, not int",
    });
  });

  it('use the default dtype, and full infers its dtype from the fill value', () => {
    assert.equal(zeros([1]).dtype.name, 'float32');
    assert.equal(full([1], 1.5).dtype.name, 'float32');
    assert.equal(full([1], 3).dtype.name, 'int64');
    assert.equal(full([1], true).dtype.name, 'bool');
    setDefaultDtype('float64');
    try {
      assert.equal(ones([1]).dtype.name, 'float64');
      assert.equal(full([1], 0.5).dtype.name, 'float64');
      assert.equal(full([1], 2).dtype.name, 'int64');
    } finally {
      setDefaultDtype('float32');
    }
    assert.equal(getDefaultDtype().name, 'float32');
  });

  it('convert the fill value as c10 does, with its overflow errors', () => {
    assert.deepEqual(values(full([2], 1.5, { dtype: 'int32' })), [1, 1]);
    assert.deepEqual(values(full([2], -1, { dtype: 'uint8' })), [255, 255]);
    assert.deepEqual(values(full([1], -255, { dtype: 'uint8' })), [1]);
    assert.deepEqual(values(full([2], 3, { dtype: 'bool' })), [1, 1]);
    assert.deepEqual(values(full([1], NaN, { dtype: 'bool' })), [1]);
    assert.ok(Number.isNaN(values(full([1], NaN, { dtype: 'float16' }))[0]));
    assert.deepEqual(values(full([1], 1e39, { dtype: 'float64' })), [1e39]);
    const overflow = (v: number, dtype: DTypeName, name: string) =>
      assert.throws(
        () => full([2], v, { dtype }),
        (e: Error) =>
          e instanceof RuntimeError && e.message === `value cannot be converted to type ${name} without overflow`,
        `${v} ${dtype}`,
      );
    overflow(300, 'uint8', 'uint8_t');
    overflow(-256, 'uint8', 'uint8_t');
    overflow(-1.5, 'uint8', 'uint8_t');
    overflow(255.5, 'uint8', 'uint8_t');
    overflow(-129, 'int8', 'int8_t');
    overflow(1e39, 'int16', 'int16_t');
    overflow(Infinity, 'int32', 'int');
    overflow(NaN, 'int64', 'int64_t');
    overflow(70000, 'float16', 'at::Half');
    overflow(1e39, 'bfloat16', 'at::BFloat16');
    overflow(1e39, 'float32', 'float');
    // Meta tensors are checked the same way.
    assert.throws(() => full([2], 300, { dtype: 'uint8', device: 'meta' }), /uint8_t without overflow/);
  });

  it('make meta tensors', () => {
    for (const t of [empty([2, 3], { device: 'meta' }), zeros([2, 3], { device: 'meta', dtype: 'int8' })]) {
      assert.deepEqual([t.device.type, ...t.shape], ['meta', 2, 3]);
    }
    const f = full([4], true, { device: 'meta' });
    assert.deepEqual([f.device.type, f.dtype.name], ['meta', 'bool']);
    assert.equal(
      String(ones([2], { device: 'meta', dtype: 'int32' })),
      "tensor(..., device='meta', size=(2,), dtype=torch.int32)",
    );
    assert.throws(() => f.toArray(), /meta tensor/);
  });

  it("raise PyTorch's errors for bad sizes and layouts", () => {
    for (const device of ['cpu', 'meta'] as const) {
      assert.throws(
        () => zeros([2, -3], { device }),
        /^RuntimeError: Trying to create tensor with negative dimension -3: \[2, -3\]$/,
      );
      assert.throws(() => full([-1], 1, { device }), /negative dimension -1: \[-1\]/);
      // A fractional size is a type error before any kernel runs, as PyTorch's argument parser raises it.
      assert.throws(() => empty([2, 1.5], { device }), {
        name: 'TypeError',
        message: "empty(): argument 'size' must be tuple of SymInts, but found element of type float at pos 2",
      });
    }
    assert.throws(() => zeros([2], { layout: 'sparse' as 'strided' }), /only the strided layout/);
  });
});

describe('arange', () => {
  it('infers int64 from integral arguments and the default dtype otherwise', () => {
    const t = arange(5);
    assert.deepEqual([t.dtype.name, values(t)], ['int64', [0, 1, 2, 3, 4]]);
    assert.deepEqual(values(arange(1, 4)), [1, 2, 3]);
    assert.deepEqual(values(arange(-5, 5, 3)), [-5, -2, 1, 4]);
    assert.deepEqual(values(arange(5, 1, -1)), [5, 4, 3, 2]);
    assert.deepEqual(values(arange(true)), [0]); // booleans are integral
    const f = arange(1, 2.5, 0.5);
    assert.deepEqual([f.dtype.name, values(f)], ['float32', [1, 1.5, 2]]);
    assert.equal(arange(0, 5, { dtype: 'float64' }).dtype.name, 'float64');
    assert.deepEqual(arange(0).shape, [0]);
  });

  it('sizes as PyTorch does: ceil((end - start) / step), integer arithmetic for int64', () => {
    assert.deepEqual(values(arange(0.5, 3, { dtype: 'int64' })), [0, 1, 2]);
    assert.deepEqual(values(arange(0, 5.5, 2, { dtype: 'int64' })), [0, 2, 4]);
    assert.deepEqual(values(arange(-2.5, 5.5, 2, { dtype: 'int64' })), [-2, 0, 2, 4]);
    assert.deepEqual(values(arange(1, 2 ** 40, 2 ** 38)), [1, 274877906945, 549755813889, 824633720833]);
    assert.deepEqual(values(arange(0, 1e39, 1e38, { dtype: 'float32' })).slice(3, 5), [
      3.0000000054977558e38,
      Infinity,
    ]);
  });

  it("reproduces the rounding of PyTorch's vectorized loop", () => {
    // 0.9 computed as 0.8 + 0.1 in a second vector of 8 (n = 16), but as 0 + 9 * 0.1 in the scalar tail (n = 10).
    assert.equal(values(arange(0, 1.6, 0.1))[9], 0.9000000357627869);
    assert.equal(values(arange(0, 1, 0.1))[9], 0.8999999761581421);
  });

  // [start, end, step, dtype, size, first values, digest]
  const CASES: Array<[number, number, number, DTypeName, number, number[], string]> = [
    [
      0,
      1.6,
      0.1,
      'float32',
      16,
      [0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896],
      '9ce7f7714ccf50b2864878db7da14332',
    ],
    [
      -3.3,
      7.1,
      0.37,
      'float32',
      29,
      [-3.299999952316284, -2.930000066757202, -2.559999942779541, -2.190000057220459],
      'e5f8894d62bf07a7bb3a0128072f5e21',
    ],
    [
      0.5,
      1000.5,
      1.3,
      'float32',
      770,
      [0.5, 1.7999999523162842, 3.0999999046325684, 4.400000095367432],
      'b49c3aac8b92adac1683c78ae8377794',
    ],
    [10, -10, -0.3, 'float64', 67, [10, 9.7, 9.4, 9.1], 'd81c17f70010e47592b0443c1b9645ed'],
    [0.001, 2.5, 0.013, 'float64', 193, [0.001, 0.013999999999999999, 0.027, 0.04], '78a37bc48475000e1f17f4ccc20b0c30'],
    [1, 100, 0.7, 'float16', 142, [1, 1.7001953125, 2.400390625, 3.099609375], 'b820ee765b2ab36ba30b0c6bf2043112'],
    [-3.3, 7.1, 0.37, 'bfloat16', 29, [-3.296875, -2.9375, -2.5625, -2.1875], '063007a3ee38729ea020cd4d4746fb2e'],
    [-7, 300, 7, 'uint8', 44, [249, 0, 7, 14], '091adf1150bfaedbbaba3658579e64dc'],
    [-7, 300, 7, 'int8', 44, [-7, 0, 7, 14], 'eef68204fcb3047a082a02fe8824ab90'],
    [5, -20, -3, 'int16', 9, [5, 2, -1, -4], '5b53b7d9f13aff24fa384c43e079b138'],
    [0, 70000, 1000, 'float16', 70, [0, 1000, 2000, 3000], 'fa4cb25f1a3293ebac141e01d0553ad8'],
    [-2.5, 5.5, 2, 'int32', 4, [-2, 0, 2, 4], '02e9ea0ff5dcdb26a7b5873acc7c541e'],
  ];
  for (const [start, end, step, dtype, size, head, hash] of CASES) {
    it(`arange(${start}, ${end}, ${step}, ${dtype}) matches PyTorch bit for bit`, () => {
      const t = arange(start, end, step, { dtype });
      assert.deepEqual([t.dtype.name, ...t.shape], [dtype, size]);
      const got = values(t);
      assert.deepEqual(got.slice(0, head.length), head);
      assert.equal(digest(got), hash);
      t.dispose();
    });
  }

  it('makes meta tensors with the same size and dtype rules', () => {
    const m = arange(0, 1, 0.1, { device: 'meta' });
    assert.deepEqual([m.device.type, m.dtype.name, ...m.shape], ['meta', 'float32', 10]);
    assert.deepEqual(arange(7, { device: 'meta' }).shape, [7]);
  });

  it("raises PyTorch's errors", () => {
    for (const device of ['cpu', 'meta'] as const) {
      assert.throws(() => arange(0, 10, 0, { device }), /^RuntimeError: step must be nonzero$/);
      assert.throws(() => arange(0, 1, 0.3, { dtype: 'int32', device }), /step must be nonzero/);
      assert.throws(
        () => arange(5, 1, { device }),
        /^RuntimeError: upper bound and larger bound inconsistent with step sign$/,
      );
      assert.throws(() => arange(1, 5, -1, { device }), /inconsistent with step sign/);
      assert.throws(() => arange(-1, { device }), /inconsistent with step sign/);
      assert.throws(() => arange(Infinity, { device }), /^RuntimeError: unsupported range: 0 -> inf$/);
      assert.throws(() => arange(NaN, { device }), /unsupported range: 0 -> nan/);
      assert.throws(() => arange(0, Infinity, 1, { dtype: 'int64', device }), /int64_t without overflow/);
      assert.throws(() => arange(0, 1e20, 1e-5, { device }), /^RuntimeError: invalid size, possible overflow\?$/);
      assert.throws(
        () => arange(10, { dtype: 'bool', device }),
        (e: Error) => e instanceof NotImplementedError && e.message === `"arange_cpu" not implemented for 'Bool'`,
      );
    }
    assert.throws(() => (arange as (...a: unknown[]) => Tensor)(), TypeError);
  });
});

describe('linspace', () => {
  it('fills the first half from start and the second from end, as PyTorch', () => {
    const t = linspace(-1, 1, 7);
    // The middle value is PyTorch's -2.9802e-08, not 0.
    assert.deepEqual(values(t), [
      -1,
      -0.6666666269302368,
      -0.3333333134651184,
      -2.9802322387695312e-8,
      0.3333333134651184,
      0.6666666269302368,
      1,
    ]);
    assert.deepEqual(values(linspace(0, 1, 5)), [0, 0.25, 0.5, 0.75, 1]);
    assert.deepEqual(values(linspace(3, -3, 7)), [3, 2, 1, 0, -1, -2, -3]);
  });

  // [start, end, steps, dtype, first values, digest]
  const CASES: Array<[number, number, number, DTypeName, number[], string]> = [
    [
      1,
      100,
      1000,
      'float32',
      [1, 1.0990991592407227, 1.1981981992721558, 1.2972972393035889],
      '7cadcea373228c8969e115907aa1b998',
    ],
    [
      10,
      -10,
      101,
      'float32',
      [10, 9.800000190734863, 9.600000381469727, 9.399999618530273],
      '29f8591157717d940f702a22d2096cf9',
    ],
    [0.1, 0.7, 33, 'float64', [0.1, 0.11875000000000001, 0.1375, 0.15625], 'ad03d480df9513e1c150a3f7745ddc9b'],
    [
      1,
      100,
      1000,
      'float64',
      [1, 1.0990990990990992, 1.1981981981981982, 1.2972972972972974],
      '24b173fd02c4fa06a85a2c164c7de23e',
    ],
    [-3.3, 7.1, 40, 'float16', [-3.30078125, -3.033203125, -2.767578125, -2.5], '7e0a053d1eb0abcb4d4d8f8f0c0193b4'],
    [10, -10, 101, 'bfloat16', [10, 9.8125, 9.625, 9.375], '8b0c2a115cdddb7f1ebe260b30077964'],
    [-3.3, 7.1, 40, 'int64', [-3, -2, -2, -2], 'c8047b78a9db8c3f30ab1219e9579b4c'],
    [10, -10, 101, 'int32', [10, 9, 9, 9], 'fa82a666dbca503520e6c794dd06f28b'],
    [1, 100, 1000, 'uint8', [1, 1, 1, 1], 'bcad3cad7fdf041e001c22d98f73acad'],
    [10, -10, 101, 'int8', [10, 9, 9, 9], 'f616295ec859927217cc463c26965b6e'],
    [0, 255, 70, 'int16', [0, 3, 7, 11], 'eaa00cc93244eb36601bd4c8f9ced4bc'],
    [-10, 10, 6, 'uint8', [246, 198, 151, 104], 'c225f98960092fb468454838ea422230'],
  ];
  for (const [start, end, steps, dtype, head, hash] of CASES) {
    it(`linspace(${start}, ${end}, ${steps}, ${dtype}) matches PyTorch bit for bit`, () => {
      const t = linspace(start, end, steps, { dtype });
      assert.deepEqual([t.dtype.name, ...t.shape], [dtype, steps]);
      const got = values(t);
      assert.deepEqual(got.slice(0, head.length), head);
      assert.equal(digest(got), hash);
      t.dispose();
    });
  }

  it('handles 0 and 1 steps, and the meta device', () => {
    assert.deepEqual(linspace(0, 1, 0).shape, [0]);
    assert.deepEqual(values(linspace(2, 9, 1)), [2]);
    const m = linspace(0, 1, 5, { device: 'meta', dtype: 'float64' });
    assert.deepEqual([m.device.type, m.dtype.name, ...m.shape], ['meta', 'float64', 5]);
  });

  it("raises PyTorch's errors", () => {
    assert.throws(() => linspace(0, 1, -1), /^RuntimeError: number of steps must be non-negative$/);
    assert.throws(() => linspace(0, 1, 5, { dtype: 'bool' }), /"linspace_cpu" not implemented for 'Bool'/);
    assert.throws(() => linspace(0, 1e39, 3), /value cannot be converted to type float without overflow/);
    assert.throws(() => linspace(0, 300, 3, { dtype: 'uint8' }), /uint8_t without overflow/);
  });
});

describe('eye', () => {
  it('puts ones on the diagonal of n×n and n×m matrices', () => {
    const next = rng(3);
    for (let trial = 0; trial < 8; trial++) {
      const n = Math.floor(next() * 6), m = Math.floor(next() * 6);
      for (const dtype of ['float32', 'int32', 'bool', 'float16', 'int64'] as const) {
        const t = trial % 2 === 0 ? eye(n, m, { dtype }) : eye(n, { dtype });
        const cols = trial % 2 === 0 ? m : n;
        assert.deepEqual([t.dtype.name, ...t.shape], [dtype, n, cols]);
        const expected = Array.from({ length: n * cols }, (_, i) => (Math.floor(i / cols) === i % cols ? 1 : 0));
        assert.deepEqual(values(t), expected);
        t.dispose();
      }
    }
    assert.equal(eye(2).dtype.name, 'float32');
    assert.deepEqual(eye(3, { device: 'meta' }).shape, [3, 3]);
  });

  it("raises PyTorch's errors", () => {
    assert.throws(() => eye(-1), /^RuntimeError: n must be greater or equal to 0, got -1$/);
    assert.throws(() => eye(2, -1), /^RuntimeError: m must be greater or equal to 0, got -1$/);
  });
});

describe('*_like factories', () => {
  it('copy shape, dtype and device, and keep the dim order of permuted and sliced inputs', () => {
    const base = zeros([2, 3, 4]);
    const permuted = restride(base, [4, 2, 3], [1, 12, 4], 0); // permute(2, 0, 1)
    assert.deepEqual([...zerosLike(permuted).stride()], [1, 12, 4]);
    const sliced = restride(zeros([4, 6]), [2, 2], [12, 3], 0); // [::2, ::3]
    assert.deepEqual([...onesLike(sliced).stride()], [2, 1]);
    const transposed = restride(zeros([4, 6]), [6, 4], [1, 6], 0);
    assert.deepEqual([...emptyLike(transposed, { memoryFormat: 'contiguous_format' }).stride()], [4, 1]);
    assert.deepEqual([...emptyLike(transposed, { memoryFormat: 'preserve_format' }).stride()], [1, 6]);
    const f = fullLike(transposed, 2.5);
    assert.deepEqual([[...f.stride()], values(f)], [[1, 6], new Array(24).fill(2.5)]);
    for (const t of [permuted, sliced, transposed]) t.dispose();
  });

  it('convert the fill value to the dtype of self unless a dtype is given', () => {
    const i = ones([2, 3], { dtype: 'int32' });
    assert.deepEqual(values(fullLike(i, 2.7)), [2, 2, 2, 2, 2, 2]);
    assert.deepEqual(values(fullLike(ones([2]), true)), [1, 1]);
    assert.equal(onesLike(ones([2]), { dtype: 'int64' }).dtype.name, 'int64');
    assert.equal(zerosLike(i).dtype.name, 'int32');
    assert.throws(() => fullLike(zeros([1], { dtype: 'uint8' }), 300), /uint8_t without overflow/);
  });

  it('follow a meta self, or move to the given device', () => {
    const m = zerosLike(ones([2, 3], { device: 'meta' }));
    assert.deepEqual([m.device.type, ...m.shape], ['meta', 2, 3]);
    const c = onesLike(m, { device: 'cpu' });
    assert.deepEqual([c.device.type, values(c)], ['cpu', [1, 1, 1, 1, 1, 1]]);
    const fromCpu = emptyLike(c, { device: 'meta', dtype: 'float16' });
    assert.deepEqual([fromCpu.device.type, fromCpu.dtype.name], ['meta', 'float16']);
  });

  it('check that self is alive', () => {
    const t = ones([2]);
    t.dispose();
    assert.throws(() => zerosLike(t), /zeros_like\(\): argument 'input' was disposed/);
    assert.throws(() => emptyLike(t), /empty_like\(\): argument 'input' was disposed/);
  });
});

describe('factory memory', () => {
  it('frees every temporary: live tensors and bytes return to their baseline', () => {
    const before = memoryStats();
    const transposed = restride(ones([3, 4]), [4, 3], [1, 4], 0);
    const made = [
      transposed,
      zeros([5, 5]),
      full([3], 7),
      arange(0, 100, 0.5),
      linspace(0, 1, 33, { dtype: 'float16' }),
      eye(4, 3),
      zerosLike(transposed),
      fullLike(transposed, 3, { dtype: 'int8' }),
    ];
    assert.throws(() => full([2], 300, { dtype: 'uint8' }));
    assert.throws(() => arange(10, { dtype: 'bool' }));
    assert.throws(() => fullLike(transposed, 300, { dtype: 'uint8' }));
    for (const t of made) t.dispose();
    const after = memoryStats();
    assert.deepEqual([after.liveTensors, after.bytes, after.storages], [
      before.liveTensors,
      before.bytes,
      before.storages,
    ]);
  });
});
