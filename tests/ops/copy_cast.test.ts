// Copies and casts: clone, contiguous, copy_, _to_copy and to, against float64/JS references on seeded random
// data for every dtype pair, with float16/bfloat16 rounding edge cases, layouts and errors checked against
// PyTorch 1.13, Meta parity and no leaked tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  _toCopy,
  bfloat16BitsToNumber,
  clone,
  contiguous,
  empty,
  float16BitsToNumber,
  memoryStats,
  NotImplementedError,
  numberToBFloat16Bits,
  numberToFloat16Bits,
  RuntimeError,
  scope,
  type Tensor,
  tensor,
} from '../../mod.ts';
import { ALL_DTYPES, nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

/** Runs a test body in a scope (every tensor it makes is freed) and checks that nothing outlives it. */
function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

function throwsWith(fn: () => unknown, message: string, type: new (...args: never[]) => Error = Error): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof type, `expected ${type.name}, got ${(e as Error).constructor.name}`);
    assert.equal((e as Error).message, message);
    return true;
  });
}

const wrap = (x: number, bits: number, signed: boolean) => {
  const m = 2 ** bits;
  const r = ((x % m) + m) % m;
  return signed && r >= m / 2 ? r - m : r;
};

/**
 * The value a PyTorch cast to `to` stores for `x` (Note [Cast semantics] in kernels_as/cast.ts): floats to
 * integers truncate and wrap, anything to bool is `!= 0`, and float16/bfloat16 round to nearest even from the
 * float32 value, as c10's `Half(float(x))` does.
 */
function castRef(x: number, to: string): number {
  switch (to) {
    case 'bool':
      return x !== 0 ? 1 : 0;
    case 'float64':
      return x;
    case 'float32':
      return Math.fround(x);
    case 'float16':
      return float16BitsToNumber(numberToFloat16Bits(Math.fround(x)));
    case 'bfloat16':
      return bfloat16BitsToNumber(numberToBFloat16Bits(Math.fround(x)));
    case 'uint8':
      return wrap(Math.trunc(x), 8, false);
    case 'int8':
      return wrap(Math.trunc(x), 8, true);
    case 'int16':
      return wrap(Math.trunc(x), 16, true);
    case 'int32':
      return wrap(Math.trunc(x), 32, true);
    default:
      return Math.trunc(x) + 0; // integers have no -0
  }
}

/** Exact comparison (NaN equals NaN; -0 and 0 differ). */
function assertExact(actual: Tensor, expected: number[], what: string): void {
  const got = values(actual);
  assert.equal(got.length, expected.length, `${what}: numel`);
  got.forEach((g, i) => {
    if (!(Object.is(g, expected[i]) || (Number.isNaN(g) && Number.isNaN(expected[i])))) {
      assert.fail(`${what}: element ${i} is ${g}, expected ${expected[i]}`);
    }
  });
}

const stridesOf = (x: Tensor) => [...x.stride()];

describe('clone and contiguous', () => {
  it(
    'clone copies every dtype into new storage, keeping the dimension order of dense layouts',
    scoped(() => {
      const next = rng(1);
      for (const dtype of ALL_DTYPES) {
        const x = nonContiguousTensor([3, 5], dtype, next); // strides [1, 3]
        const c = clone(x);
        assert.equal(c.dtype, x.dtype);
        assert.notEqual(c.storage, x.storage);
        assert.equal(c.base, undefined);
        assert.deepEqual(stridesOf(c), [1, 3]);
        assertExact(c, values(x), dtype);
        const d = x.clone({ memoryFormat: 'contiguous_format' });
        assert.deepEqual(stridesOf(d), [5, 1]);
        assertExact(d, values(x), dtype);
      }
      const x = randomTensor([4], 'int32', next);
      const c = x.clone();
      c.copy_(tensor(7));
      assert.notDeepEqual(values(x), values(c), 'the clone does not share memory');
    }),
  );

  it(
    'clone lays out non-dense inputs as PyTorch does (infer_dense_strides)',
    scoped(() => {
      const next = rng(2);
      const t34 = randomTensor([3, 4], 'float32', next).t(); // shape [4, 3], strides [1, 4]
      assert.deepEqual(stridesOf(t34.clone()), [1, 4]);
      assert.deepEqual(stridesOf(t34.slice(0, 0, null, 2).clone()), [1, 2]);
      const p = randomTensor([2, 3, 4], 'float32', next).permute([2, 0, 1]).slice(2, 0, null, 2);
      assert.deepEqual([...p.shape, ...p.stride()], [4, 2, 2, 1, 12, 8]);
      const pc = p.clone();
      assert.deepEqual(stridesOf(pc), [1, 8, 4]);
      assertExact(pc, values(p), 'permuted clone');
      assert.deepEqual(stridesOf(randomTensor([1, 3], 'float32', next).expand([4, 3]).clone()), [3, 1]);
      assert.deepEqual(stridesOf(randomTensor([3, 1], 'float32', next).expand([3, 4]).clone()), [4, 1]);
      assert.deepEqual(stridesOf(randomTensor([1, 3], 'float32', next).asStrided([1, 3], [100, 1]).clone()), [100, 1]);
      const e = randomTensor([3, 1], 'int16', next).expand([3, 4]);
      assertExact(e.clone(), values(e), 'expanded clone');
    }),
  );

  it(
    'contiguous returns self when already contiguous and a contiguous copy otherwise',
    scoped(() => {
      const x = randomTensor([2, 3], 'float64', rng(3));
      assert.equal(contiguous(x), x);
      assert.equal(x.unsqueeze(1).contiguous().storage, x.storage);
      const tr = x.t();
      const c = tr.contiguous();
      assert.notEqual(c, tr);
      assert.deepEqual(stridesOf(c), [2, 1]);
      assertExact(c, values(tr), 'contiguous');
      throwsWith(
        () => tr.contiguous({ memoryFormat: 'preserve_format' }),
        'preserve memory format is unsupported by the contiguous operator',
        RuntimeError,
      );
    }),
  );
});

describe('copy_', () => {
  it(
    'converts between every pair of dtypes, broadcasting into non-contiguous destinations',
    scoped(() => {
      const next = rng(4);
      for (const from of ALL_DTYPES) {
        for (const to of ALL_DTYPES) {
          const dst = nonContiguousTensor([3, 4], to, next);
          const src = from === to ? nonContiguousTensor([3, 4], from, next) : randomTensor([4], from, next);
          const s = values(src);
          const r = dst.copy_(src);
          assert.equal(r, dst);
          assert.equal(dst.version, 1);
          const expected = Array.from({ length: 12 }, (_, i) => castRef(s[from === to ? i : i % 4], to));
          assertExact(dst, expected, `${from} -> ${to}`);
        }
      }
    }),
  );

  it(
    'handles 0-d, size-0 and size-1 shapes and copies into views of a bigger tensor',
    scoped(() => {
      const next = rng(5);
      const x = randomTensor([3, 1, 5], 'float32', next);
      x.copy_(tensor(2.5, { dtype: 'float64' }));
      assert.ok(values(x).every((v) => v === 2.5));
      const e = randomTensor([0, 4], 'int64', next);
      assert.equal(e.copy_(randomTensor([4], 'float32', next)), e);
      const s = tensor(1, { dtype: 'int8' });
      s.copy_(tensor([[-7.9]]).view([]));
      assert.deepEqual(values(s), [-7]);
      const big = randomTensor([4, 6], 'float64', next);
      const before = values(big);
      const src = randomTensor([2, 3], 'float16', next);
      big.slice(0, 1, 3).slice(1, 0, null, 2).copy_(src);
      const sv = values(src);
      const expected = [...before];
      for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) expected[(i + 1) * 6 + 2 * j] = sv[i * 3 + j];
      assertExact(big, expected, 'copy into a strided view');
    }),
  );

  it(
    'copies between overlapping views of one storage as if through a temporary',
    scoped(() => {
      const a = tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], { dtype: 'float64' });
      assert.equal(a.copy_(a), a);
      const same = a.view([12]);
      assert.equal(same.copy_(a), same);
      assert.deepEqual(values(a), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      // The destination a[0:12:2] is not dense, so PyTorch cannot prove the overlap and allows the copy; it then
      // reads elements it has already written (it gives a[6] == 3). Switchyard reads from a snapshot of `src`.
      a.slice(0, 0, null, 2).copy_(a.slice(0, 1, 7));
      assert.deepEqual(values(a), [1, 1, 2, 3, 3, 5, 4, 7, 5, 9, 6, 11]);
      assert.equal(a.version, 3);
    }),
  );

  it(
    "raises PyTorch's errors for bad shapes, overlapping writes and meta sources",
    scoped(() => {
      const x = randomTensor([2, 3], 'float32', rng(6));
      throwsWith(
        () => x.copy_(randomTensor([4], 'float32', rng(6))),
        'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1',
      );
      throwsWith(
        () => x.copy_(randomTensor([2, 2, 3], 'float32', rng(6))),
        "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]",
      );
      throwsWith(
        () => randomTensor([1, 3], 'float32', rng(6)).expand([2, 3]).copy_(x),
        'unsupported operation: more than one element of the written-to tensor refers to a single memory location. ' +
          'Please clone() the tensor before performing the operation.',
      );
      const a = tensor([0, 1, 2, 3, 4, 5]);
      const partial = 'unsupported operation: some elements of the input tensor and the written-to tensor refer to ' +
        'a single memory location. Please clone() the tensor before performing the operation.';
      throwsWith(() => a.slice(0, 1).copy_(a.slice(0, 0, 5)), partial);
      const sq = randomTensor([3, 3], 'float32', rng(6));
      throwsWith(() => sq.t().copy_(sq), partial);
      assert.deepEqual(values(a), [0, 1, 2, 3, 4, 5], 'a failed copy writes nothing');
      assert.equal(a.version, 0, 'a failed copy does not bump the version');
      throwsWith(
        () => x.copy_(empty([2, 3], { device: 'meta' })),
        'Cannot copy out of meta tensor; no data!',
        NotImplementedError,
      );
      // Disjoint halves of one storage copy fine.
      a.slice(0, 0, 3).copy_(a.slice(0, 3));
      assert.deepEqual(values(a), [3, 4, 5, 3, 4, 5]);
    }),
  );
});

describe('_to_copy and to', () => {
  it(
    'to returns self when nothing changes and copy is false, a converted copy otherwise',
    scoped(() => {
      const x = nonContiguousTensor([3, 4], 'int32', rng(7));
      assert.equal(x.to({ dtype: 'int32' }), x);
      assert.equal(x.to({ device: 'cpu' }), x);
      assert.equal(x.to(), x);
      // Every strided tensor suggests the contiguous format, so PyTorch aliases here even though x is not contiguous.
      assert.equal(x.to({ memoryFormat: 'contiguous_format' }), x);
      const copy = x.to({ copy: true });
      assert.notEqual(copy, x);
      assert.notEqual(copy.storage, x.storage);
      assert.deepEqual(stridesOf(copy), stridesOf(x), 'preserve_format keeps the dense dimension order');
      assertExact(copy, values(x), 'to(copy=True)');
      const f = x.to({ dtype: 'float16' });
      assert.equal(f.dtype.name, 'float16');
      assertExact(f, values(x).map((v) => castRef(v, 'float16')), 'int32 -> float16');
      const g = x.to({ dtype: 'float64', memoryFormat: 'contiguous_format' });
      assert.deepEqual(stridesOf(g), [4, 1]);
      const h = _toCopy(x, { dtype: 'bool' });
      assertExact(h, values(x).map((v) => castRef(v, 'bool')), 'int32 -> bool');
    }),
  );

  it(
    'converts every dtype to every dtype like a JS reference',
    scoped(() => {
      const next = rng(8);
      for (const from of ALL_DTYPES) {
        const x = randomTensor([2, 3, 3], from, next).slice(1, 0, null, 2);
        const v = values(x);
        for (const to of ALL_DTYPES) {
          const y = _toCopy(x, { dtype: to });
          assert.deepEqual([...y.shape], [...x.shape]);
          assertExact(y, v.map((e) => castRef(e, to)), `${from} -> ${to}`);
          assert.deepEqual([...x.to({ dtype: to, copy: true }).transpose(0, 2).shape], [3, 2, 2]);
        }
        const empty0 = randomTensor([0, 3], from, next).to({ dtype: 'float64' });
        assert.deepEqual([...empty0.shape], [0, 3]);
      }
    }),
  );

  it(
    'moves tensors to the meta device, and refuses to copy data out of it',
    scoped(() => {
      const x = nonContiguousTensor([3, 4], 'float32', rng(9));
      const m = x.to({ device: 'meta' });
      assert.equal(m.device.type, 'meta');
      assert.deepEqual([...m.shape], [3, 4]);
      assert.deepEqual(stridesOf(m), [1, 3]);
      const md = x.to({ device: 'meta', dtype: 'float64' });
      assert.equal(md.dtype.name, 'float64');
      assert.equal(md.device.type, 'meta');
      assert.equal(m.to({ device: 'meta' }), m);
      assert.equal(m.to({ dtype: 'int8' }).dtype.name, 'int8');
      throwsWith(() => m.to({ device: 'cpu' }), 'Cannot copy out of meta tensor; no data!', NotImplementedError);
      throwsWith(() => _toCopy(m, { device: 'cpu' }), 'Cannot copy out of meta tensor; no data!', NotImplementedError);
      const mc = m.clone();
      assert.equal(mc.device.type, 'meta');
      assert.deepEqual([...mc.shape], [3, 4]);
      assert.equal(m.contiguous().device.type, 'meta');
    }),
  );
});

describe('float16 and bfloat16 casts round like PyTorch', () => {
  // Bits printed by PyTorch 1.13: torch.tensor(VALUES, dtype=src).to(torch.float16 / torch.bfloat16).
  const VALUES = [
    1 + 2 ** -11, // halfway between two float16 values: rounds to even
    1 + 3 * 2 ** -11, // halfway: rounds up to even
    65504, // largest float16
    65519.99, // just below the overflow threshold
    65520, // rounds to float16 infinity
    2 ** -25, // halfway to the smallest subnormal: rounds to 0
    3 * 2 ** -26,
    2 ** -24, // smallest float16 subnormal
    2 ** -14 - 2 ** -25, // halfway between the largest subnormal and the smallest normal
    -0,
    NaN,
    Infinity,
    -65520,
    1e-8,
    2049,
    2051,
    0.1,
  ];
  const F16 = [
    0x3c00,
    0x3c02,
    0x7bff,
    0x7bff,
    0x7c00,
    0x0,
    0x1,
    0x1,
    0x400,
    0x8000,
    0x7e00,
    0x7c00,
    0xfc00,
    0x0,
    0x6800,
    0x6802,
    0x2e66,
  ];
  const BF16 = [
    0x3f80,
    0x3f80,
    0x4780,
    0x4780,
    0x4780,
    0x3300,
    0x3340,
    0x3380,
    0x3880,
    0x8000,
    0x7fc0,
    0x7f80,
    0xc780,
    0x322c,
    0x4500,
    0x4500,
    0x3dcd,
  ];

  for (const src of ['float32', 'float64'] as const) {
    it(
      `from ${src}: ties to even, overflow to infinity, subnormals, signed zero and NaN`,
      scoped(() => {
        const x = tensor(VALUES, { dtype: src });
        assertExact(x.to({ dtype: 'float16' }), F16.map(float16BitsToNumber), `${src} -> float16`);
        assertExact(x.to({ dtype: 'bfloat16' }), BF16.map(bfloat16BitsToNumber), `${src} -> bfloat16`);
        const back = x.to({ dtype: 'float16' }).to({ dtype: src });
        assertExact(back, F16.map(float16BitsToNumber), 'float16 values are exact in wider types');
      }),
    );
  }

  it(
    'rounds float64 through float32 first, as c10::Half(float(x)) does',
    scoped(() => {
      // Just above a float16 (bfloat16) tie in float64, exactly on it in float32: PyTorch rounds to even.
      const x = tensor([1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -8 + 2 ** -40], { dtype: 'float64' });
      assertExact(x.slice(0, 0, 1).to({ dtype: 'float16' }), [1], 'float64 -> float16');
      assertExact(x.slice(0, 1, 2).to({ dtype: 'bfloat16' }), [1], 'float64 -> bfloat16');
      const big = tensor([2 ** 53, -3, 70000, 2 ** 24 + 1], { dtype: 'int64' });
      assertExact(big.to({ dtype: 'float16' }), [Infinity, -3, Infinity, Infinity], 'int64 -> float16');
      assertExact(big.to({ dtype: 'float32' }), [2 ** 53, -3, 70000, 2 ** 24], 'int64 -> float32');
    }),
  );

  it(
    'truncates floats toward zero and wraps integers into narrower types, as PyTorch prints',
    scoped(() => {
      assertExact(tensor([-1.5, 2.7, -2.7, 255.9, 300.5]).to({ dtype: 'uint8' }), [255, 2, 254, 255, 44], 'uint8');
      assertExact(tensor([-1.5, 2.7, -2.7, 127.9, 200]).to({ dtype: 'int8' }), [-1, 2, -2, 127, -56], 'int8');
      assertExact(tensor([300, -129, 128], { dtype: 'int32' }).to({ dtype: 'int8' }), [44, 127, -128], 'int8');
      assertExact(tensor([300, -1], { dtype: 'int32' }).to({ dtype: 'uint8' }), [44, 255], 'uint8');
      assertExact(tensor([0, -0, NaN, 0.5]).to({ dtype: 'bool' }), [0, 0, 1, 1], 'bool');
      assertExact(tensor([true, false]).to({ dtype: 'float16' }), [1, 0], 'bool -> float16');
    }),
  );
});

describe('float to integer casts of values the integer cannot hold', () => {
  // PyTorch 1.13 on x86-64 (C casts compiled to cvttss2si/cvttsd2si): int64 and uint8 go through int64, int32,
  // int16 and int8 through int32, and NaN, infinities and out-of-range values become that type's minimum.
  const VALUES = [
    3000000001,
    5e9 + 7,
    -3000000001,
    70000,
    -70000,
    40000.5,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 63,
    1e30,
    NaN,
  ];
  const TORCH: Record<string, Record<string, Array<number | bigint>>> = {
    float32: {
      uint8: [0, 0, 0, 112, 144, 64, 0, 0, 0, 0, 0],
      int8: [0, 0, 0, 112, -112, 64, 0, 0, 0, 0, 0],
      int16: [0, 0, 0, 4464, -4464, -25536, 0, 0, 0, 0, 0],
      int32: [
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        70000,
        -70000,
        40000,
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
      ],
      int64: [
        3000000000n,
        5000000000n,
        -3000000000n,
        70000n,
        -70000n,
        40000n,
        2147483648n,
        -2147483648n,
        -(2n ** 63n),
        -(2n ** 63n),
        -(2n ** 63n),
      ],
    },
    float64: {
      uint8: [1, 7, 255, 112, 144, 64, 0, 255, 0, 0, 0],
      int8: [0, 0, 0, 112, -112, 64, 0, 0, 0, 0, 0],
      int16: [0, 0, 0, 4464, -4464, -25536, 0, 0, 0, 0, 0],
      int32: [
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        70000,
        -70000,
        40000,
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
        -(2 ** 31),
      ],
      int64: [
        3000000001n,
        5000000007n,
        -3000000001n,
        70000n,
        -70000n,
        40000n,
        2147483648n,
        -2147483649n,
        -(2n ** 63n),
        -(2n ** 63n),
        -(2n ** 63n),
      ],
    },
  };
  for (const [src, targets] of Object.entries(TORCH)) {
    it(`from ${src}, as PyTorch gives them, contiguous (vector paths) and strided`, () => {
      scope(() => {
        // Repeated so the contiguous kernels run their vector loops, and read with a step for the strided ones.
        const data = Array.from({ length: 4 }, () => VALUES).flat();
        const x = src === 'float32' ? tensor(new Float32Array(data)) : tensor(new Float64Array(data));
        for (const [dst, expected] of Object.entries(targets)) {
          for (
            const [what, from, want] of [
              ['contiguous', x, Array.from({ length: 4 }, () => expected).flat()],
              ['strided', x.narrow(0, 0, 22).view([2, 11]).t(), expected.flatMap((v) => [v, v])],
            ] as const
          ) {
            const out = empty([...from.shape], { dtype: dst as 'int64' }).copy_(from);
            const bytes = out.contiguous();
            const got = dst === 'int64'
              ? [...new BigInt64Array(bytes.toArray().map((v) => BigInt(v as number)))]
              : bytes.toArray();
            const wantValues = dst === 'int64' ? want.map((v) => BigInt.asIntN(64, BigInt(v))) : want;
            if (dst === 'int64') {
              // toArray() reads int64 through float64: compare with the same rounding.
              assert.deepEqual(got.map(Number), wantValues.map(Number), `${src} -> ${dst} ${what}`);
            } else {
              assert.deepEqual(got, wantValues, `${src} -> ${dst} ${what}`);
            }
          }
        }
      });
    });
  }
});

describe('Meta parity and memory', () => {
  it(
    'Meta copies give the shapes and dtypes CPU copies give',
    scoped(() => {
      const cpu = nonContiguousTensor([2, 3], 'int16', rng(10));
      const meta = empty([2, 3], { device: 'meta', dtype: 'int16' });
      const ops: Array<(x: Tensor) => Tensor> = [
        (x) => x.clone(),
        (x) => x.t().contiguous(),
        (x) => x.to({ dtype: 'float32' }),
        (x) => _toCopy(x, { dtype: 'bool' }),
        (x) => x.copy_(tensor([1.5, 2, 3])),
      ];
      for (const op of ops) {
        const a = op(cpu), b = op(meta);
        assert.equal(b.device.type, 'meta');
        assert.deepEqual([...b.shape], [...a.shape]);
        assert.equal(b.dtype, a.dtype);
      }
      throwsWith(
        () => meta.copy_(tensor([1, 2])),
        'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1',
      );
    }),
  );

  it('copies and casts free every temporary, on success and on error', () => {
    const base = memoryStats();
    const next = rng(11);
    const a = tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], { dtype: 'float32' });
    const x = nonContiguousTensor([3, 4], 'bfloat16', next);
    const row = randomTensor([4], 'float64', next), bad = randomTensor([5], 'int8', next);
    const made = [x.clone(), x.contiguous(), x.to({ dtype: 'int64' }), _toCopy(x, { device: 'meta' }), x.flip([0])];
    const views = [a.slice(0, 0, null, 2), a.slice(0, 1, 6), a.slice(0, 1), a.slice(0, 0, 9)];
    views[0].copy_(views[1]); // overlapping: goes through a temporary
    x.copy_(row);
    assert.throws(() => views[2].copy_(views[3]));
    assert.throws(() => x.copy_(bad));
    // Tensor.to takes no layout (PyTorch's binding has none): an unknown options key.
    assert.throws(() => x.to({ dtype: 'float32', layout: 'sparse' } as { dtype: 'float32' }), TypeError);
    for (const t of [...made, ...views, a, x, row, bad]) t.dispose();
    assert.equal(memoryStats().liveTensors, base.liveTensors);
    assert.equal(memoryStats().storages, base.storages);
    assert.equal(memoryStats().bytes, base.bytes);
  });
});
