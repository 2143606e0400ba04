/**
 * Scalars beyond JS numbers: bigints as int64 values (exact where the storage path allows, PyTorch's
 * "Overflow when unpacking long" outside int64), and `floatScalar` marking an integral value as a Python
 * float for type promotion. Expected dtypes and values are PyTorch 1.13's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  arange,
  clamp,
  div,
  eq,
  FloatScalar,
  floatScalar,
  fmod,
  full,
  memoryStats,
  pow,
  remainder,
  RuntimeError,
  type Scalar,
  scope,
  sub,
  type Tensor,
  tensor,
  where,
} from '../../mod.ts';
import { values } from './_helpers.ts';

function scoped(fn: () => void): () => void {
  return () => {
    const before = memoryStats().liveTensors;
    scope(fn);
    assert.equal(memoryStats().liveTensors, before);
  };
}

/** The exact int64 values of a tensor, as bigints. */
function int64Values(t: Tensor): bigint[] {
  const c = t.contiguous();
  const bytes = c.storage.bytes();
  return [...new BigInt64Array(bytes.buffer, bytes.byteOffset + c.storageOffset * 8, c.numel)];
}

const overflow = { name: 'RuntimeError', message: 'Overflow when unpacking long' };

describe('bigint scalars', () => {
  it(
    'are int64 values: exact through tensor() at any int64 magnitude, and through kernels up to 2^53',
    scoped(() => {
      const big = 2n ** 62n + 1n; // needs 63 bits
      assert.deepEqual(int64Values(tensor([big, -(2n ** 63n), 2n ** 63n - 1n])), [big, -(2n ** 63n), 2n ** 63n - 1n]);
      assert.equal(tensor([big]).dtype.name, 'int64');
      assert.deepEqual(int64Values(full([2], 2n ** 40n, { dtype: 'int64' })), [2n ** 40n, 2n ** 40n]);
      assert.deepEqual(int64Values(full([2], 2n ** 53n - 1n)), [2n ** 53n - 1n, 2n ** 53n - 1n]);
      assert.equal(full([1], 5n).dtype.name, 'int64'); // a bigint is an int, as a Python int is
      const i = tensor([1, -2, 3]);
      assert.deepEqual(int64Values(add(i, 5n)), [6n, 3n, 8n]);
      assert.deepEqual(int64Values(i.clone().fill_(-(2n ** 52n))), [-(2n ** 52n), -(2n ** 52n), -(2n ** 52n)]);
      assert.deepEqual(eq(i, 3n).toArray(), [false, false, true]);
      assert.deepEqual(values(clamp(i, -1n, 2n)), [1, -1, 2]);
      assert.deepEqual(values(i.mul(3n)), [3, -6, 9]);
      assert.equal(i.mul(3n).dtype.name, 'int64');
      assert.deepEqual(values(arange(1n, 4n)), [1, 2, 3]);
      // Int arguments take bigints too (dims, sizes).
      assert.deepEqual(i.unsqueeze(0n as unknown as number).shape, [1, 3]);
    }),
  );

  it(
    'convert for float tensors, as PyTorch converts a Python int',
    scoped(() => {
      const f = tensor([1.5, -2.5], { dtype: 'float64' });
      assert.deepEqual(values(add(f, 2n)), [3.5, -0.5]);
      assert.equal(add(f, 2n).dtype.name, 'float64');
      assert.deepEqual(values(tensor([2n ** 63n - 1n], { dtype: 'float64' })), [2 ** 63]);
    }),
  );

  it(
    "outside int64 raise PyTorch's overflow error and leave nothing behind",
    scoped(() => {
      const i = tensor([1, 2]);
      assert.throws(() => full([2], 2n ** 63n, { dtype: 'int64' }), overflow);
      assert.throws(() => full([2], 2n ** 70n), overflow);
      assert.throws(() => add(i, -(2n ** 63n) - 1n), overflow);
      assert.throws(() => i.fill_(2n ** 64n), overflow);
      assert.throws(() => eq(i, 2n ** 63n), overflow);
      assert.throws(() => tensor([2n ** 63n]), overflow);
      assert.throws(() => tensor([-(2n ** 63n) - 1n]), overflow);
      assert.deepEqual(int64Values(add(i, -(2n ** 52n))), [1n - 2n ** 52n, 2n - 2n ** 52n]);
      assert.deepEqual(values(i), [1, 2]); // the failed fill_ wrote nothing
    }),
  );
});

describe('floatScalar', () => {
  it('is a Number that promotion reads as a float', () => {
    const s = floatScalar(3);
    assert.ok(s instanceof FloatScalar && s instanceof Number);
    assert.equal(Number(s), 3);
    assert.equal(String(s), '3.0');
    assert.throws(() => floatScalar('3' as unknown as number), TypeError);
  });

  it(
    'makes every Scalar argument a float, with the dtypes and values PyTorch gives for int64 and 3.0',
    scoped(() => {
      const i = tensor([1, 2, 3]), m = tensor([true, false, true]);
      const f = floatScalar;
      const cases: Array<[string, Tensor, string, number[] | boolean[]]> = [
        ['add', add(i, f(3)), 'float32', [4, 5, 6]],
        ['sub', sub(i, f(3)), 'float32', [-2, -1, 0]],
        ['mul', i.mul(f(3)), 'float32', [3, 6, 9]],
        ['div', div(i, f(2)), 'float32', [0.5, 1, 1.5]],
        ['div floor', div(i, f(2), { roundingMode: 'floor' }), 'float32', [0, 1, 1]],
        ['remainder', remainder(i, f(2)), 'float32', [1, 0, 1]],
        ['fmod', fmod(i, f(2)), 'float32', [1, 0, 1]],
        ['pow', pow(i, f(2)), 'float32', [1, 4, 9]],
        ['pow reversed', pow(f(2), i), 'float32', [2, 4, 8]],
        ['eq', eq(i, f(2)), 'bool', [false, true, false]],
        ['where', where(m, i, f(0)), 'float32', [1, 0, 3]],
        ['clamp', clamp(i, f(0), f(2)), 'float32', [1, 2, 2]],
        ['clamp_min', i.clampMin(f(2)), 'float32', [2, 2, 3]],
        ['clamp_max', i.clampMax(f(2)), 'float32', [1, 2, 2]],
        ['masked_fill keeps self dtype', i.maskedFill(m, f(7)), 'int64', [7, 2, 7]],
        ['full', full([2], f(3)), 'float32', [3, 3]],
        ['arange', arange(f(1), f(4)), 'float32', [1, 2, 3]],
        ['tensor', tensor([f(1), 2]), 'float32', [1, 2]],
      ];
      for (const [what, t, dtype, expected] of cases) {
        assert.equal(t.dtype.name, dtype, what);
        assert.deepEqual(t.toArray(), expected, what);
      }
      // Plain integral numbers stay ints, as Python ints do.
      assert.equal(pow(i, 2).dtype.name, 'int64');
      assert.equal(full([2], 3).dtype.name, 'int64');
    }),
  );

  it(
    'is a float where PyTorch refuses one: an integral alpha',
    scoped(() => {
      const i = tensor([1, 2]);
      assert.throws(() => add(i, i, { alpha: floatScalar(2) }), {
        name: 'RuntimeError',
        message: 'For integral input tensors, argument alpha must not be a floating point number.',
      });
      assert.throws(() => i.unsqueeze(floatScalar(0) as unknown as number), {
        name: 'TypeError',
        message: "unsqueeze(): argument 'dim' (position 1) must be int, not float",
      });
      const d = tensor([1, 2], { dtype: 'float64' });
      assert.deepEqual(values(add(d, i, { alpha: floatScalar(2) })), [3, 6]);
      assert.ok(new RuntimeError('x') instanceof Error);
    }),
  );

  it('is accepted wherever a Scalar is (type check)', () => {
    const scalars: Scalar[] = [1, 2.5, true, 2n, floatScalar(1)];
    assert.equal(scalars.length, 5);
  });
});
