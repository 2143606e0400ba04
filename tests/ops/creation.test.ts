// tensor(data): nested arrays, typed arrays, scalars and booleans, PyTorch's dtype inference and storage
// conversions, its errors for ragged input, the meta device; and the factories whose overloads PyTorch tells
// apart by position (arange, eye, randint, randintLike) binding the aten overload PyTorch would.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  arange,
  Dispatcher,
  eye,
  Generator,
  memoryStats,
  randint,
  randintLike,
  RuntimeError,
  setDefaultDtype,
  type Tensor,
  tensor,
  zeros,
} from '../../mod.ts';
import { ALL_DTYPES, randomValues, rng, roundTo, values } from './_helpers.ts';

describe('tensor() infers the dtype as PyTorch does', () => {
  const cases: Array<[string, unknown, string, number[]]> = [
    ['integers', [1, 2, 3], 'int64', [3]],
    ['floats', [1, 2.5], 'float32', [2]],
    ['booleans', [true, false], 'bool', [2]],
    ['booleans and integers', [true, 1], 'int64', [2]],
    ['booleans and floats', [true, 2.5], 'float32', [2]],
    ['an empty list', [], 'float32', [0]],
    ['an empty row', [[]], 'float32', [1, 0]],
    ['empty rows', [[], []], 'float32', [2, 0]],
    ['an integer', 3, 'int64', []],
    ['a float', 3.5, 'float32', []],
    ['a boolean', true, 'bool', []],
    ['NaN and infinities', [NaN, Infinity], 'float32', [2]],
    ['nested lists', [[[1], [2]], [[3], [4]]], 'int64', [2, 2, 1]],
  ];
  for (const [what, data, dtype, shape] of cases) {
    it(what, () => {
      const t = tensor(data as number[]);
      assert.deepEqual([t.dtype.name, [...t.shape]], [dtype, shape]);
      t.dispose();
    });
  }

  it('uses the default dtype for floats', () => {
    setDefaultDtype('float64');
    try {
      assert.equal(tensor([0.5]).dtype.name, 'float64');
      assert.equal(tensor([1]).dtype.name, 'int64');
    } finally {
      setDefaultDtype('float32');
    }
  });

  it('keeps the type of typed arrays, also as rows', () => {
    const typed: Array<[ArrayLike<number> | BigInt64Array, string]> = [
      [Float32Array.of(1, 2), 'float32'],
      [Float64Array.of(1, 2), 'float64'],
      [Int32Array.of(1, 2), 'int32'],
      [Int16Array.of(1, 2), 'int16'],
      [Int8Array.of(1, 2), 'int8'],
      [Uint8Array.of(1, 2), 'uint8'],
      [BigInt64Array.of(1n, 2n), 'int64'],
    ];
    for (const [data, dtype] of typed) {
      const t = tensor(data as ArrayLike<number>);
      assert.deepEqual([t.dtype.name, values(t)], [dtype, [1, 2]]);
    }
    const rows = tensor([Float32Array.of(1, 2), Float32Array.of(3, 4)]);
    assert.deepEqual([rows.dtype.name, [...rows.shape], values(rows)], ['float32', [2, 2], [1, 2, 3, 4]]);
    const mixed = tensor([Float32Array.of(1, 2), Int32Array.of(3, 4)]);
    assert.equal(mixed.dtype.name, 'int64'); // no common row type: inferred from the values
    assert.equal(tensor(Uint16Array.of(1, 2) as unknown as number[]).dtype.name, 'int64');
  });

  it('keeps int64 values beyond 2^53 from a BigInt64Array', () => {
    const big = 2n ** 62n + 1n;
    const t = tensor(BigInt64Array.of(big, -big));
    const bytes = t.storage.bytes();
    assert.deepEqual([...new BigInt64Array(bytes.buffer, bytes.byteOffset, 2)], [big, -big]);
  });
});

describe('tensor() stores values', () => {
  it('round-trips seeded random data of every dtype, nested at odd shapes', () => {
    const next = rng(11);
    for (const dtype of ALL_DTYPES) {
      for (const shape of [[5], [3, 1, 4], [2, 0], [1, 1]]) {
        const n = shape.reduce((a, b) => a * b, 1);
        const flat = randomValues(n, dtype, next);
        const nest = (offset: number, dim: number): unknown =>
          dim === shape.length ? (dtype === 'bool' ? flat[offset] !== 0 : flat[offset]) : Array.from(
            { length: shape[dim] },
            (_, i) => nest(offset + i * shape.slice(dim + 1).reduce((a, b) => a * b, 1), dim + 1),
          );
        const t = tensor(nest(0, 0) as number[], { dtype });
        assert.deepEqual([...t.shape], shape);
        assert.deepEqual(values(t), flat.map((v) => roundTo(v, dtype)), `${dtype} ${shape}`);
        t.dispose();
      }
    }
  });

  it("converts as torch.tensor does, with Python's overflow messages", () => {
    assert.deepEqual(values(tensor([-1], { dtype: 'uint8' })), [255]);
    assert.deepEqual(values(tensor([2.7, -2.7], { dtype: 'int8' })), [2, -2]);
    assert.deepEqual(values(tensor([70000], { dtype: 'float16' })), [Infinity]);
    assert.deepEqual(values(tensor([0.5, 0], { dtype: 'bool' })), [1, 0]);
    assert.deepEqual(values(tensor([[1, 2], [3, 4]], { dtype: 'bool' })), [1, 1, 1, 1]);
    assert.deepEqual(values(tensor([1.5], { dtype: 'float64' })), [1.5]);
    const overflow = (v: number, dtype: 'uint8' | 'int32' | 'int64', name: string) =>
      assert.throws(
        () => tensor([v], { dtype }),
        (e: Error) =>
          e instanceof RuntimeError && e.message === `value cannot be converted to type ${name} without overflow`,
      );
    overflow(300, 'uint8', 'uint8');
    overflow(1e10, 'int32', 'int32');
    overflow(NaN, 'int64', 'int64');
  });

  it('frees the tensor when a value does not fit', () => {
    const before = memoryStats();
    assert.throws(() => tensor([1, 2, 300], { dtype: 'uint8' }));
    assert.equal(memoryStats().liveTensors, before.liveTensors);
    assert.equal(memoryStats().bytes, before.bytes);
  });

  it('makes meta tensors without data', () => {
    const t = tensor([[1, 2, 3]], { device: 'meta' });
    assert.deepEqual([t.device.type, t.dtype.name, [...t.shape]], ['meta', 'int64', [1, 3]]);
    assert.throws(() => t.toArray(), /meta tensor/);
  });
});

describe("tensor() raises PyTorch's errors", () => {
  it('for ragged lists', () => {
    assert.throws(() => tensor([[1, 2], [3]]), /^ValueError: expected sequence of length 2 at dim 1 \(got 1\)$/);
    assert.throws(() => tensor([[1, 2], [3, 4, 5]]), /expected sequence of length 2 at dim 1 \(got 3\)/);
    assert.throws(() => tensor([[1, 2], []]), /expected sequence of length 2 at dim 1 \(got 0\)/);
    assert.throws(() => tensor([[[1], [2]], [[3]]]), /expected sequence of length 2 at dim 1 \(got 1\)/);
    assert.throws(() => tensor([[1], 2] as number[][]), /^TypeError: not a sequence$/);
    assert.throws(() => tensor([1, [2]] as number[]), TypeError);
  });

  it('for values that are not numbers', () => {
    assert.throws(() => tensor([null] as unknown as number[]), /^RuntimeError: Could not infer dtype of NoneType$/);
    assert.throws(() => tensor(['a'] as unknown as number[]), /^TypeError: new\(\): invalid data type 'str'$/);
  });
});

describe('factories with positional overloads', () => {
  /** The aten overloads a call dispatches to, read from the dispatch trace (top-level `[call]` lines). */
  function overloadsCalled(fn: () => Tensor): string[] {
    const d = Dispatcher.singleton();
    const lines: string[] = [];
    const error = console.error;
    console.error = (line: string) => lines.push(line);
    d.traceEnabled = true;
    try {
      fn().dispose();
    } finally {
      d.traceEnabled = false;
      console.error = error;
    }
    return lines.flatMap((l) => l.match(/^\[call\] op=\[([^\]]+)\]/)?.[1] ?? []);
  }

  it('arange binds aten::arange, arange.start or arange.start_step by argument count', () => {
    assert.deepEqual(overloadsCalled(() => arange(5)), ['aten::arange']);
    assert.deepEqual(overloadsCalled(() => arange(1, 5, { dtype: 'float64' })), ['aten::arange.start']);
    assert.deepEqual(overloadsCalled(() => arange(1, 5, 2)), ['aten::arange.start_step']);
    assert.deepEqual(values(arange(1, 5, { dtype: 'float64' })), [1, 2, 3, 4]);
    const forward = (options?: { dtype?: 'int32' }) => arange(3, options); // an absent options object
    assert.deepEqual([forward().dtype.name, forward({ dtype: 'int32' }).dtype.name], ['int64', 'int32']);
    assert.throws(
      () => (arange as (...a: unknown[]) => Tensor)(1, 2, 3, 4),
      /^TypeError: arange\(\) received an invalid combination of arguments/,
    );
  });

  it('eye binds aten::eye or eye.m', () => {
    assert.deepEqual(overloadsCalled(() => eye(3)), ['aten::eye']);
    assert.deepEqual(overloadsCalled(() => eye(3, 2, { dtype: 'int32' })), ['aten::eye.m']);
    assert.throws(() => (eye as (...a: unknown[]) => Tensor)(), TypeError);
  });

  it('randint binds the .generator overloads only when a generator is given', () => {
    assert.deepEqual(overloadsCalled(() => randint(10, [3])), ['aten::randint']);
    assert.deepEqual(overloadsCalled(() => randint(2, 10, [3])), ['aten::randint.low']);
    const g = new Generator(0);
    assert.deepEqual(overloadsCalled(() => randint(10, [3], { generator: g })), ['aten::randint.generator']);
    assert.deepEqual(overloadsCalled(() => randint(2, 10, [3], { generator: g })), ['aten::randint.low_generator']);
    assert.throws(() => (randint as (...a: unknown[]) => Tensor)(3), /randint\(\) received an invalid combination/);
    assert.throws(() => (randint as (...a: unknown[]) => Tensor)(10, 3), TypeError); // a size must be a list
  });

  it('randintLike binds randint_like or randint_like.low_dtype', () => {
    const x = zeros([2, 2]);
    assert.equal(overloadsCalled(() => randintLike(x, 4))[0], 'aten::randint_like');
    assert.equal(overloadsCalled(() => randintLike(x, 1, 4))[0], 'aten::randint_like.low_dtype');
    assert.throws(() => (randintLike as (...a: unknown[]) => Tensor)(x), TypeError);
    x.dispose();
  });

  it('free what they allocate', () => {
    const before = memoryStats();
    const x = zeros([3, 3]);
    for (const t of [arange(7), eye(3), randint(4, [5]), randintLike(x, 2, 9)]) t.dispose();
    x.dispose();
    assert.deepEqual(memoryStats().liveTensors, before.liveTensors);
  });
});
