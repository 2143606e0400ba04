// Joining, splitting and flipping: cat, stack, split, split_with_sizes, chunk, unbind and flip against float64
// references on seeded random data for every dtype, with PyTorch 1.13's shapes, promotion and messages, Meta
// parity and no leaked tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cat,
  chunk,
  Dispatcher,
  empty,
  flip,
  memoryStats,
  RuntimeError,
  scope,
  split,
  splitWithSizes,
  stack,
  type Tensor,
  tensor,
  unbind,
} from '../../mod.ts';
import { ALL_DTYPES, nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';
import { catDefaultBackend } from '../../core/ops/default_backend.ts';

function unravel(i: number, shape: readonly number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    idx[d] = i % shape[d];
    i = Math.floor(i / shape[d]);
  }
  return idx;
}
const ravel = (idx: readonly number[], shape: readonly number[]) => idx.reduce((acc, x, d) => acc * shape[d] + x, 0);
const numel = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Expected values of an output of `outShape` whose element at `idx` is `at(idx)`. */
function build(outShape: readonly number[], at: (idx: number[]) => number): number[] {
  return Array.from({ length: numel(outShape) }, (_, i) => at(unravel(i, outShape)));
}

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

/** Exact comparison of values (NaN equals NaN) and shape. */
function assertValues(actual: Tensor, expected: number[], shape: readonly number[], what = ''): void {
  assert.deepEqual([...actual.shape], [...shape], `${what} shape`);
  const got = values(actual);
  got.forEach((g, i) => {
    if (!(g === expected[i] || (Number.isNaN(g) && Number.isNaN(expected[i])))) {
      assert.fail(`${what} element ${i}: got ${g}, expected ${expected[i]}`);
    }
  });
}

/** The float64 reference of `cat(parts, dim)` (all parts of the same rank). */
function catRef(parts: readonly Tensor[], dim: number): { shape: number[]; values: number[] } {
  const shape = [...parts[0].shape];
  shape[dim] = parts.reduce((n, p) => n + p.shape[dim], 0);
  const vals = parts.map(values);
  return {
    shape,
    values: build(shape, (idx) => {
      let k = idx[dim], p = 0;
      while (k >= parts[p].shape[dim]) k -= parts[p++].shape[dim];
      const at = [...idx];
      at[dim] = k;
      return vals[p][ravel(at, parts[p].shape)];
    }),
  };
}

describe('cat', () => {
  it(
    'concatenates random and non-contiguous tensors along every dim, negative dims included',
    scoped(() => {
      const next = rng(1);
      for (const dim of [0, 1, 2, -1, -3]) {
        const d = (dim + 3) % 3;
        const sizes = [1, 4, 0, 2];
        const parts = sizes.map((n, i) => {
          const shape = [3, 2, 5];
          shape[d] = n;
          return i % 2 === 0 ? randomTensor(shape, 'float64', next) : nonContiguousTensor(shape, 'float64', next);
        });
        const out = cat(parts, dim);
        const ref = catRef(parts, d);
        assertValues(out, ref.values, ref.shape, `dim ${dim}`);
        assert.ok(out.isContiguous());
      }
    }),
  );

  it(
    'concatenates every dtype and promotes mixed dtypes as torch.cat does',
    scoped(() => {
      const next = rng(2);
      for (const dtype of ALL_DTYPES) {
        const parts = [randomTensor([2, 3], dtype, next), nonContiguousTensor([4, 3], dtype, next)];
        const out = cat(parts);
        assert.equal(out.dtype.name, dtype);
        const ref = catRef(parts, 0);
        assertValues(out, ref.values, ref.shape, dtype);
      }
      const cases: Array<[string, string, string]> = [
        ['int32', 'float16', 'float16'],
        ['bool', 'uint8', 'uint8'],
        ['uint8', 'int8', 'int16'],
        ['bfloat16', 'float16', 'float32'],
        ['int64', 'float32', 'float32'],
        ['bool', 'float64', 'float64'],
      ];
      for (const [a, b, result] of cases) {
        const x = randomTensor([2, 2], a, next), y = randomTensor([1, 2], b, next);
        const out = cat([x, y]);
        assert.equal(out.dtype.name, result, `${a} + ${b}`);
        assertValues(out, [...values(x), ...values(y)], [3, 2], `${a} + ${b}`);
      }
    }),
  );

  it(
    'skips 1-d empty tensors (legacy behaviour) but still promotes with them',
    scoped(() => {
      const next = rng(3);
      const x = randomTensor([2, 2], 'int32', next);
      const skipped = randomTensor([0], 'int64', next);
      const out = cat([skipped, x, skipped], 1);
      assert.equal(out.dtype.name, 'int64');
      assertValues(out, values(x), [2, 2]);
      const none = cat([randomTensor([0], 'float32', next), randomTensor([0], 'float64', next)]);
      assert.deepEqual([...none.shape], [0]);
      assert.equal(none.dtype.name, 'float64');
      const zeroRows = cat([randomTensor([0, 3], 'float32', next), randomTensor([2, 3], 'float32', next)]);
      assert.deepEqual([...zeroRows.shape], [2, 3]);
    }),
  );

  it(
    "raises PyTorch's errors",
    scoped(() => {
      const a = randomTensor([2, 2], 'float32', rng(4)), b = randomTensor([3, 3], 'float32', rng(4));
      throwsWith(
        () => cat([a, b], 0),
        'Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in ' +
          'the list.',
        RuntimeError,
      );
      throwsWith(
        () => cat([a, a, b], -1),
        'Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 2 in ' +
          'the list.',
      );
      throwsWith(() => cat([a, tensor([1, 2])], 1), 'Tensors must have same number of dimensions: got 2 and 1');
      throwsWith(
        () => cat([a, a], 2),
        'Dimension out of range (expected to be in range of [-2, 1], but got 2)',
        RangeError,
      );
      throwsWith(() => cat([tensor(1), tensor(2)]), 'zero-dimensional tensor (at position 0) cannot be concatenated');
      // An empty list has no tensor to dispatch on: the default backend kernel in the Undefined slot checks it.
      throwsWith(() => cat([]), 'torch.cat(): expected a non-empty list of Tensors');
    }),
  );

  it(
    'gives Meta results, also when Meta and CPU tensors are mixed',
    scoped(() => {
      const cpu = randomTensor([2, 2], 'int8', rng(5));
      const meta = empty([3, 2], { device: 'meta', dtype: 'float16' });
      const out = cat([cpu, meta]);
      assert.equal(out.device.type, 'meta');
      assert.deepEqual([...out.shape], [5, 2]);
      assert.equal(out.dtype.name, 'float16');
      throwsWith(
        () => cat([meta, empty([3, 3], { device: 'meta' })], 0),
        'Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in ' +
          'the list.',
      );
    }),
  );
});

describe('stack', () => {
  it(
    'stacks along a new dim, negative dims included, for every dtype',
    scoped(() => {
      const next = rng(6);
      for (const dtype of ALL_DTYPES) {
        const parts = [randomTensor([2, 3], dtype, next), nonContiguousTensor([2, 3], dtype, next)];
        const vals = parts.map(values);
        for (const dim of [0, 1, 2, -1, -3]) {
          const d = (dim + 3) % 3;
          const out = stack(parts, dim);
          const shape = [2, 3];
          shape.splice(d, 0, 2);
          const ref = build(shape, (idx) => {
            const p = idx[d];
            const rest = idx.filter((_, k) => k !== d);
            return vals[p][ravel(rest, [2, 3])];
          });
          assertValues(out, ref, shape, `${dtype} dim ${dim}`);
        }
      }
    }),
  );

  it(
    "raises PyTorch's errors",
    scoped(() => {
      throwsWith(() => stack([]), 'stack expects a non-empty TensorList');
      throwsWith(
        () => stack([tensor([1, 2]), tensor([1, 2, 3])]),
        'stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1',
      );
      throwsWith(
        () => stack([tensor([1, 2]), tensor([1, 2])], 2),
        'Dimension out of range (expected to be in range of [-2, 1], but got 2)',
      );
      const s = stack([tensor(1), tensor(2)]);
      assertValues(s, [1, 2], [2]);
    }),
  );
});

describe('split, split_with_sizes, chunk and unbind', () => {
  it(
    'split makes views of consecutive chunks, the last one shorter',
    scoped(() => {
      const x = nonContiguousTensor([7, 3], 'float64', rng(7));
      const xv = values(x);
      const parts = split(x, 3);
      assert.deepEqual(parts.map((p) => p.shape[0]), [3, 3, 1]);
      parts.forEach((p, i) => {
        assert.equal(p.base, x);
        assert.equal(p.storage, x.storage);
        assertValues(p, xv.slice(9 * i, 9 * i + p.numel), [p.shape[0], 3]);
      });
      assert.deepEqual(x.split(7).map((p) => [...p.shape]), [[7, 3]]);
      assert.deepEqual(x.split(10).map((p) => [...p.shape]), [[7, 3]]);
      const cols = x.split(2, -1);
      assert.deepEqual(cols.map((p) => [...p.shape]), [[7, 2], [7, 1]]);
      assertValues(cols[1], build([7, 1], ([i]) => xv[i * 3 + 2]), [7, 1]);
      const sized = x.split([2, 0, 5]);
      assert.deepEqual(sized.map((p) => [...p.shape]), [[2, 3], [0, 3], [5, 3]]);
      assertValues(sized[2], xv.slice(6), [5, 3]);
      const empty0 = randomTensor([0], 'float32', rng(7)).split(0);
      assert.deepEqual(empty0.map((p) => [...p.shape]), [[0]]);
    }),
  );

  it(
    'split_with_sizes, chunk and unbind give the sizes PyTorch gives',
    scoped(() => {
      const next = rng(8);
      const x = randomTensor([3, 4], 'int32', next);
      assert.deepEqual(splitWithSizes(x, [1, 3], 1).map((p) => [...p.shape]), [[3, 1], [3, 3]]);
      assert.deepEqual(chunk(randomTensor([5], 'float32', next), 3).map((p) => p.shape[0]), [2, 2, 1]);
      assert.deepEqual(randomTensor([6], 'float32', next).chunk(4).map((p) => p.shape[0]), [2, 2, 2]);
      assert.deepEqual(randomTensor([0, 2], 'float32', next).chunk(3).map((p) => [...p.shape]), [[0, 2], [0, 2], [
        0,
        2,
      ]]);
      assert.deepEqual(x.chunk(2, -1).map((p) => [...p.shape]), [[3, 2], [3, 2]]);
      const rows = unbind(x);
      assert.equal(rows.length, 3);
      const xv = values(x);
      rows.forEach((r, i) => assertValues(r, xv.slice(4 * i, 4 * i + 4), [4]));
      const cols = x.unbind(-1);
      assert.equal(cols.length, 4);
      cols.forEach((c, j) => assertValues(c, [xv[j], xv[4 + j], xv[8 + j]], [3]));
      assert.equal(cols[0].base, x);
      assert.deepEqual(randomTensor([0, 2], 'float32', next).unbind(0), []);
    }),
  );

  it(
    "raise PyTorch's errors",
    scoped(() => {
      const x = randomTensor([2, 3, 4], 'float32', rng(9)), s = tensor(1);
      throwsWith(() => x.split(0), 'split_size can only be 0 if dimension size is 0, but got dimension size of 2');
      throwsWith(() => x.split(-1), 'split expects split_size be non-negative, but got split_size=-1');
      throwsWith(() => s.split(1), 'split expects at least a 1-dimensional tensor', RuntimeError);
      throwsWith(
        () => x.split([2, 2], 1),
        "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 1), but got " +
          'split_sizes=[2, 2]',
      );
      throwsWith(
        () => x.split([1, -1, 3], 1),
        'split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[1, -1, 3]',
      );
      throwsWith(
        () => x.split([1, 1], -2),
        "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension -2), but got " +
          'split_sizes=[1, 1]',
      );
      throwsWith(() => x.chunk(0), 'chunk expects `chunks` to be greater than 0, got: 0');
      throwsWith(() => s.chunk(1), 'chunk expects at least a 1-dimensional tensor');
      throwsWith(
        () => x.unbind(3),
        'Dimension out of range (expected to be in range of [-3, 2], but got 3)',
        RangeError,
      );
      throwsWith(() => s.unbind(0), 'Dimension specified as 0 but tensor has no dimensions', RangeError);
    }),
  );

  it(
    'work on Meta tensors',
    scoped(() => {
      const m = empty([5, 4], { device: 'meta' });
      assert.deepEqual(m.split(2).map((p) => [...p.shape]), [[2, 4], [2, 4], [1, 4]]);
      assert.deepEqual(m.chunk(2, 1).map((p) => [...p.stride()]), [[4, 1], [4, 1]]);
      assert.equal(m.unbind(1).length, 4);
      assert.ok(m.unbind(1).every((p) => p.device.type === 'meta'));
    }),
  );
});

describe('flip', () => {
  it(
    'reverses any set of dims of random, non-contiguous tensors of every dtype',
    scoped(() => {
      const next = rng(10);
      const shape = [3, 4, 5];
      for (const dtype of ALL_DTYPES) {
        for (const x of [randomTensor(shape, dtype, next), nonContiguousTensor(shape, dtype, next)]) {
          const xv = values(x);
          for (const dims of [[0], [2], [-1, 0], [0, 1, 2], []]) {
            const wrapped = dims.map((d) => (d + 3) % 3);
            const out = flip(x, dims);
            assert.equal(out.dtype, x.dtype);
            assert.notEqual(out.storage, x.storage);
            const ref = build(shape, (idx) => {
              const at = idx.map((v, d) => (wrapped.includes(d) ? shape[d] - 1 - v : v));
              return xv[ravel(at, shape)];
            });
            assertValues(out, ref, shape, `${dtype} flip ${dims}`);
          }
        }
      }
    }),
  );

  it(
    'handles views with offsets, size-0/size-1 dims, 0-d tensors and Meta tensors',
    scoped(() => {
      const next = rng(11);
      const base = randomTensor([6, 7], 'float32', next);
      const v = base.slice(0, 1, 5, 2).slice(1, 2, 6); // [2, 4] at an offset, row stride 14
      const vv = values(v);
      assertValues(flip(v, [0, 1]), [...vv].reverse(), [2, 4]);
      assertValues(v.flip([1]), build([2, 4], ([i, j]) => vv[i * 4 + 3 - j]), [2, 4]);
      assertValues(randomTensor([1, 0, 3], 'int16', next).flip([0, 1, 2]), [], [1, 0, 3]);
      assertValues(tensor(3.5).flip([0]), [3.5], []);
      const e = randomTensor([4, 1], 'int64', next).expand([4, 3]);
      const ev = values(e);
      assertValues(e.flip([0]), build([4, 3], ([i, j]) => ev[(3 - i) * 3 + j]), [4, 3]);
      const m = empty([2, 3], { device: 'meta', dtype: 'bfloat16' }).flip([1]);
      assert.equal(m.device.type, 'meta');
      assert.deepEqual([...m.shape], [2, 3]);
      assert.equal(m.dtype.name, 'bfloat16');
    }),
  );

  it(
    "raises PyTorch's errors",
    scoped(() => {
      const x = randomTensor([2, 3, 4], 'float32', rng(12));
      throwsWith(() => x.flip([0, 0]), 'dim 0 appears multiple times in the list of dims');
      throwsWith(() => x.flip([1, -2]), 'dim 1 appears multiple times in the list of dims');
      throwsWith(
        () => x.flip([3]),
        'Dimension out of range (expected to be in range of [-3, 2], but got 3)',
        RangeError,
      );
    }),
  );
});

describe('memory', () => {
  it('cat, stack, split, chunk and flip free every temporary, on success and on error', () => {
    const base = memoryStats();
    const next = rng(13);
    const a = nonContiguousTensor([3, 4], 'float16', next), b = randomTensor([2, 4], 'int32', next);
    const bad = randomTensor([2, 5], 'float32', next), skipped = randomTensor([0], 'float64', next);
    const made = [
      cat([a, skipped, b]),
      stack([a, a], 1),
      a.flip([0, 1]),
      ...a.split(2),
      ...a.chunk(3, 1),
      ...a.unbind(1),
    ];
    assert.throws(() => cat([a, bad]));
    assert.throws(() => stack([a, b]));
    assert.throws(() => a.flip([0, 0]));
    for (const t of [...made, a, b, bad, skipped]) t.dispose();
    assert.equal(memoryStats().liveTensors, base.liveTensors);
    assert.equal(memoryStats().storages, base.storages);
    assert.equal(memoryStats().bytes, base.bytes);
  });
});

describe("cat's default backend kernel", () => {
  it("gives PyTorch's message for an empty list, whose keyset is empty, and leaves nothing behind", () => {
    const before = memoryStats().liveTensors;
    assert.throws(
      () => cat([]),
      (e: Error) => e instanceof RuntimeError && e.message === 'torch.cat(): expected a non-empty list of Tensors',
    );
    assert.equal(memoryStats().liveTensors, before);
  });

  it('fills the Undefined slot and the backends without a kernel, as PyTorch dumps it', () => {
    const table = Dispatcher.singleton().findSchemaOrThrow('aten::cat').dumpComputedTable();
    assert.match(table, /^Undefined: default backend kernel from .* \[default backend kernel\]$/m);
    // PrivateUse1 never gets a kernel (WebGPU does once a test in the same process has initialized it).
    assert.match(table, /^PrivateUse1: default backend kernel from .* \[default backend kernel\]$/m);
    assert.match(table, /^CPU: cpu kernel cat \[kernel\]$/m);
  });

  it(
    'computes what the CPU kernel computes, promoting dtypes and skipping empty 1-d inputs',
    scoped(() => {
      const next = rng(41);
      const a = randomTensor([2, 3, 4], 'float32', next), b = nonContiguousTensor([2, 5, 4], 'int32', next);
      const skipped = empty([0], { dtype: 'float64' });
      for (const dim of [1, -2]) {
        const viaDefault = catDefaultBackend([a, skipped, b], dim);
        const viaCpu = cat([a, skipped, b], dim);
        assert.equal(viaDefault.dtype, viaCpu.dtype);
        assert.deepEqual([...viaDefault.shape], [2, 8, 4]);
        assert.deepEqual(values(viaDefault), values(viaCpu));
      }
      assert.throws(
        () => catDefaultBackend([a, randomTensor([3, 3, 4], 'float32', next)], 1),
        /Sizes of tensors must match/,
      );
    }),
  );
});
