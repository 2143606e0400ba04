// View operators: shapes, strides and offsets (literals checked against PyTorch 1.13), values against a
// float64 gather reference on seeded random data, storage and version sharing, PyTorch's errors, Meta parity
// and no leaked tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  asStrided,
  diagonal,
  empty,
  expand,
  flatten,
  memoryStats,
  narrow,
  permute,
  reshape,
  RuntimeError,
  scope,
  select,
  slice,
  squeeze,
  t,
  type Tensor,
  tensor,
  transpose,
  unflatten,
  unsqueeze,
  view,
} from '../../mod.ts';
import { ALL_DTYPES, assertClose, nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

/** Row-major multi-index of flat index `i`. */
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

/** Expected values of an output of `outShape` whose element at `idx` is the input's element at `map(idx)`. */
function gather(input: Tensor, outShape: readonly number[], map: (idx: number[]) => number[]): number[] {
  const src = values(input);
  return Array.from({ length: numel(outShape) }, (_, i) => src[ravel(map(unravel(i, outShape)), input.shape)]);
}

/** Runs a test body in a scope (every tensor it makes is freed) and checks that nothing outlives it. */
function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

const geometry = (x: Tensor): [number[], number[], number] => [[...x.shape], [...x.stride()], x.storageOffset];

function throwsWith(fn: () => unknown, message: string, type: new (...args: never[]) => Error = Error): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof type, `expected ${type.name}, got ${(e as Error).constructor.name}`);
    assert.equal((e as Error).message, message);
    return true;
  });
}

/** A contiguous [2, 3, 4] float32 tensor, laid out like PyTorch's `torch.zeros(2, 3, 4)`. */
const box = () => randomTensor([2, 3, 4], 'float32', rng(7));

const VIEW_INCOMPATIBLE = "view size is not compatible with input tensor's size and stride (at least one dimension " +
  'spans across two contiguous subspaces). Use .reshape(...) instead.';

describe('view', () => {
  it(
    'infers -1, keeps row-major values and shares storage and version counter with its base',
    scoped(() => {
      const next = rng(1);
      for (const [shape, size] of [[[3, 4, 5], [-1, 5]], [[60], [5, 3, 4]], [[2, 1, 7], [7, -1]], [[0, 3], [3, 0]]]) {
        const x = randomTensor(shape, 'float64', next);
        const v = view(x, size);
        assert.deepEqual(values(v), values(x));
        assert.equal(v.base, x);
        assert.equal(v.storage, x.storage);
        assert.equal(v.versionCounter, x.versionCounter);
        assert.equal(v.view(-1).base, x, 'a view of a view records the original base');
      }
    }),
  );

  it(
    'computes strides like PyTorch for non-contiguous, 0-d and size-0 tensors',
    scoped(() => {
      const x = nonContiguousTensor([4, 6], 'float32', rng(2)); // strides [1, 4]
      const split = x.view([4, 2, 3]);
      assert.deepEqual(geometry(split), [[4, 2, 3], [1, 12, 4], 0]);
      assertClose(split, values(x), [4, 2, 3]);
      throwsWith(() => x.view([24]), VIEW_INCOMPATIBLE, RuntimeError);
      assert.deepEqual(geometry(tensor(5).view([1, 1])), [[1, 1], [1, 1], 0]);
      const e = randomTensor([0, 3], 'float32', rng(3));
      assert.deepEqual(geometry(e.view([3, 0])), [[3, 0], [1, 1], 0]);
      assert.deepEqual(geometry(e.t().view([3, 0])), [[3, 0], [1, 3], 0]);
      assert.deepEqual(geometry(randomTensor([4, 0, 3], 'int8', rng(3)).view([0, 4, 3])), [[0, 4, 3], [12, 3, 1], 0]);
      assert.deepEqual(geometry(randomTensor([3, 4], 'bool', rng(3)).view([4, -1])), [[4, 3], [3, 1], 0]);
    }),
  );

  it(
    "raises PyTorch's errors for impossible shapes",
    scoped(() => {
      const x = randomTensor([7], 'float32', rng(4));
      throwsWith(() => x.view([2, -1]), "shape '[2, -1]' is invalid for input of size 7");
      throwsWith(() => x.view([-1, -1]), 'only one dimension can be inferred');
      throwsWith(() => x.view([7, -2]), 'invalid shape dimension -2');
      throwsWith(
        () => randomTensor([0], 'float32', rng(4)).view([0, -1]),
        'cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 can be ' +
          'any value and is ambiguous',
      );
    }),
  );
});

describe('reshape, flatten and unflatten', () => {
  it(
    'reshape returns a view when the strides allow one and a contiguous copy otherwise',
    scoped(() => {
      const x = nonContiguousTensor([3, 4], 'float64', rng(5)); // transposed layout
      const aliased = reshape(x, [3, 2, 2]);
      assert.equal(aliased.storage, x.storage);
      assert.equal(aliased.base, x);
      assertClose(aliased, values(x), [3, 2, 2]);
      const copied = reshape(x, [12]);
      assert.notEqual(copied.storage, x.storage);
      assert.equal(copied.base, undefined);
      assert.ok(copied.isContiguous());
      assertClose(copied, values(x), [12]);
      const twoBySix = x.reshape([2, 6]);
      assert.deepEqual(geometry(twoBySix), [[2, 6], [6, 1], 0]);
      assertClose(twoBySix, values(x), [2, 6]);
    }),
  );

  it(
    'flatten merges a range of dims, returns self for one dim and makes 0-d tensors 1-d',
    scoped(() => {
      const x = box();
      assert.deepEqual(geometry(flatten(x, 1, 2)), [[2, 12], [12, 1], 0]);
      assert.deepEqual([...flatten(x).shape], [24]);
      assert.deepEqual([...x.flatten(0, -2).shape], [6, 4]);
      assert.equal(x.flatten(1, 1), x);
      const nc = nonContiguousTensor([2, 3, 5], 'int32', rng(6));
      assertClose(nc.flatten(-2, -1), values(nc), [2, 15]);
      assert.deepEqual(geometry(tensor(3).flatten()), [[1], [1], 0]);
      throwsWith(() => x.flatten(2, 1), 'flatten() has invalid args: start_dim cannot come after end_dim');
    }),
  );

  it(
    'unflatten splits a dim (with -1) and reports bad sizes as PyTorch does',
    scoped(() => {
      const x = box();
      assert.deepEqual(geometry(unflatten(x, 1, [3, 1])), [[2, 3, 1, 4], [12, 4, 4, 1], 0]);
      const w = x.unflatten(-1, [2, -1]);
      assert.deepEqual(geometry(w), [[2, 3, 2, 2], [12, 4, 2, 1], 0]);
      assertClose(w, values(x), [2, 3, 2, 2]);
      throwsWith(
        () => x.unflatten(1, [2, -1]),
        "unflatten: Provided sizes [2, -1] don't multiply up to the size of dim 1 (3) in the input tensor",
      );
      throwsWith(
        () => x.unflatten(-2, [2, 2]),
        "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor",
      );
      throwsWith(() => x.unflatten(1, []), 'unflatten: sizes must be non-empty');
    }),
  );
});

describe('permute, transpose and t', () => {
  it(
    'reorder dims of random, non-contiguous and size-0/size-1 tensors like a float64 gather',
    scoped(() => {
      const next = rng(8);
      for (const shape of [[2, 3, 5], [1, 4, 3], [3, 0, 2], [5, 1, 1]]) {
        for (const x of [randomTensor(shape, 'float64', next), nonContiguousTensor(shape, 'float64', next)]) {
          const p = permute(x, [2, 0, 1]);
          assertClose(p, gather(x, p.shape, ([i, j, k]) => [j, k, i]), [shape[2], shape[0], shape[1]]);
          const q = x.permute([-1, -2, -3]);
          assertClose(q, gather(x, q.shape, ([i, j, k]) => [k, j, i]), [shape[2], shape[1], shape[0]]);
          const tr = transpose(x, 0, -1);
          assertClose(tr, gather(x, tr.shape, ([i, j, k]) => [k, j, i]), [shape[2], shape[1], shape[0]]);
          assert.deepEqual([...tr.stride()], [...x.stride()].reverse());
          const same = x.transpose(1, 1);
          assert.notEqual(same, x);
          assert.deepEqual(geometry(same), geometry(x));
        }
      }
    }),
  );

  it(
    "t transposes 2-d, keeps 1-d and 0-d, and the dim errors are PyTorch's",
    scoped(() => {
      const m = randomTensor([3, 5], 'int64', rng(9));
      const mt = t(m);
      assert.deepEqual(geometry(mt), [[5, 3], [1, 5], 0]);
      assertClose(mt, gather(m, [5, 3], ([i, j]) => [j, i]), [5, 3]);
      assert.deepEqual(geometry(randomTensor([4], 'int64', rng(9)).t()), [[4], [1], 0]);
      assert.deepEqual(geometry(tensor(1).t()), [[], [], 0]);
      const b = box();
      throwsWith(() => b.t(), 't() expects a tensor with <= 2 dimensions, but self is 3D', RuntimeError);
      throwsWith(
        () => b.permute([0, 1]),
        'permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ' +
          'ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2',
      );
      throwsWith(() => b.permute([0, 1, 1]), 'permute(): duplicate dims are not allowed.');
      throwsWith(
        () => b.permute([0, 1, 5]),
        'Dimension out of range (expected to be in range of [-3, 2], but got 5)',
        RangeError,
      );
      throwsWith(
        () => b.transpose(0, 3),
        'Dimension out of range (expected to be in range of [-3, 2], but got 3)',
        RangeError,
      );
    }),
  );
});

describe('squeeze, unsqueeze and expand', () => {
  it(
    'squeeze drops size-1 dims (all of them, or one that has size 1) and unsqueeze inserts one',
    scoped(() => {
      const x = randomTensor([1, 3, 1, 2], 'float32', rng(10));
      assert.deepEqual(geometry(squeeze(x)), [[3, 2], [2, 1], 0]);
      assert.deepEqual(geometry(squeeze(x, 2)), [[1, 3, 2], [6, 2, 1], 0]);
      assert.deepEqual(geometry(x.squeeze(1)), [[1, 3, 1, 2], [6, 2, 2, 1], 0]);
      assert.deepEqual(geometry(x.squeeze(-4)), [[3, 1, 2], [2, 2, 1], 0]);
      const s = tensor(2);
      assert.deepEqual(geometry(s.squeeze()), [[], [], 0]);
      assert.deepEqual(geometry(s.squeeze(0)), [[], [], 0]);
      assert.deepEqual(geometry(s.unsqueeze(0)), [[1], [1], 0]);
      const b = box();
      assert.deepEqual(geometry(unsqueeze(b, -4)), [[1, 2, 3, 4], [24, 12, 4, 1], 0]);
      assert.deepEqual(geometry(b.unsqueeze(1)), [[2, 1, 3, 4], [12, 12, 4, 1], 0]);
      assert.deepEqual(geometry(b.unsqueeze(-1)), [[2, 3, 4, 1], [12, 4, 1, 1], 0]);
      assertClose(b.unsqueeze(2), values(b), [2, 3, 1, 4]);
      const nc = nonContiguousTensor([3, 1, 4], 'float64', rng(10));
      assertClose(nc.squeeze().unsqueeze(0), values(nc), [1, 3, 4]);
      throwsWith(
        () => b.squeeze(3),
        'Dimension out of range (expected to be in range of [-3, 2], but got 3)',
        RangeError,
      );
      throwsWith(() => b.unsqueeze(4), 'Dimension out of range (expected to be in range of [-4, 3], but got 4)');
      throwsWith(() => s.squeeze(1), 'Dimension out of range (expected to be in range of [-1, 0], but got 1)');
    }),
  );

  it(
    'expand repeats size-1 dims with stride 0 and adds leading dims, like a broadcast gather',
    scoped(() => {
      const next = rng(11);
      const x = nonContiguousTensor([3, 1], 'float64', next);
      const e = expand(x, [2, 3, 4]);
      assert.deepEqual([...e.stride()].slice(1), [x.stride(0), 0]);
      assertClose(e, gather(x, [2, 3, 4], ([, i]) => [i, 0]), [2, 3, 4]);
      assert.deepEqual(geometry(x.expand([-1, -1])), geometry(x));
      const other = randomTensor([5, 3, 7], 'float64', next);
      assertClose(x.expandAs(other), gather(x, [5, 3, 7], ([, i]) => [i, 0]), [5, 3, 7]);
      assert.deepEqual(geometry(box().expand([2, -1, 3, 4])), [[2, 2, 3, 4], [0, 12, 4, 1], 0]);
      assert.deepEqual(geometry(tensor(1.5).expand([1])), [[1], [0], 0]);
      assert.deepEqual(geometry(tensor(1.5).expand([1, 1])), [[1, 1], [0, 0], 0]);
      assert.deepEqual(geometry(tensor([1, 2]).expand([1, 2])), [[1, 2], [2, 1], 0]);
      assert.deepEqual(geometry(randomTensor([2, 3], 'float32', next).t().expand([4, 3, 2])), [
        [4, 3, 2],
        [0, 1, 3],
        0,
      ]);
      assert.deepEqual([...randomTensor([0, 1], 'float32', next).expand([0, 5]).shape], [0, 5]);
    }),
  );

  it(
    "raises PyTorch's expand errors, naming the tensor type as PyTorch does",
    scoped(() => {
      const b = box();
      throwsWith(
        () => b.expand([3, 4]),
        'expand(torch.FloatTensor{[2, 3, 4]}, size=[3, 4]): the number of sizes provided (2) must be greater or ' +
          'equal to the number of dimensions in the tensor (3)',
      );
      throwsWith(
        () => b.expand([2, 5, 4]),
        'The expanded size of the tensor (5) must match the existing size (3) at non-singleton dimension 1.  ' +
          'Target sizes: [2, 5, 4].  Tensor sizes: [2, 3, 4]',
      );
      throwsWith(
        () => b.expand([-1, 2, 3, 4]),
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0",
      );
      const cases: Array<[string, string, 'cpu' | 'meta']> = [
        ['float64', 'MetaDoubleType', 'meta'],
        ['float32', 'MetaFloatType', 'meta'],
        ['float64', 'torch.DoubleTensor', 'cpu'],
        ['bool', 'CPUBoolType', 'cpu'],
        ['bfloat16', 'CPUBFloat16Type', 'cpu'],
        ['float16', 'torch.HalfTensor', 'cpu'],
        ['int8', 'torch.CharTensor', 'cpu'],
        ['uint8', 'torch.ByteTensor', 'cpu'],
        ['int16', 'torch.ShortTensor', 'cpu'],
        ['int32', 'torch.IntTensor', 'cpu'],
        ['int64', 'torch.LongTensor', 'cpu'],
      ];
      for (const [dtype, name, device] of cases) {
        const x = empty([3], { dtype: dtype as 'float64', device });
        throwsWith(
          () => x.expand([]),
          `expand(${name}{[3]}, size=[]): the number of sizes provided (0) must be greater or equal to the number ` +
            'of dimensions in the tensor (1)',
        );
      }
    }),
  );
});

describe('narrow, select and slice', () => {
  it(
    'give the storage offsets PyTorch gives, clamping slice bounds',
    scoped(() => {
      const b = box();
      const cases: Array<[Tensor, [number[], number[], number]]> = [
        [narrow(b, 1, 2, 1), [[2, 1, 4], [12, 4, 1], 8]],
        [b.narrow(1, -1, 1), [[2, 1, 4], [12, 4, 1], 8]],
        [b.narrow(1, 3, 0), [[2, 0, 4], [12, 4, 1], 12]],
        [select(b, 1, -3), [[2, 4], [12, 1], 0]],
        [b.select(-1, 3), [[2, 3], [12, 4], 3]],
        [slice(b, 1, -10, 10, 2), [[2, 2, 4], [12, 8, 1], 0]],
        [b.slice(1, 2, 1), [[2, 0, 4], [12, 4, 1], 8]],
        [b.slice(1, 5, 7), [[2, 0, 4], [12, 4, 1], 12]],
        [b.slice(-1, null, null, 3), [[2, 3, 2], [12, 4, 3], 0]],
        [b.slice(), [[2, 3, 4], [12, 4, 1], 0]],
        [b.slice(2, -3, -1), [[2, 3, 2], [12, 4, 1], 1]],
      ];
      for (const [v, expected] of cases) assert.deepEqual(geometry(v), expected);
    }),
  );

  it(
    'select the same elements as a float64 gather on random non-contiguous tensors',
    scoped(() => {
      const next = rng(12);
      for (const x of [randomTensor([4, 5, 3], 'float64', next), nonContiguousTensor([4, 5, 3], 'float64', next)]) {
        const cases: Array<[number | null, number | null, number]> = [
          [1, 4, 2],
          [-4, null, 3],
          [null, -1, 1],
          [-100, 100, 4],
          [3, 2, 1],
        ];
        for (const [start, end, step] of cases) {
          const s = x.slice(1, start, end, step);
          const lo = Math.min(Math.max(start === null ? 0 : start < 0 ? start + 5 : start, 0), 5);
          assertClose(s, gather(x, s.shape, ([i, j, k]) => [i, lo + j * step, k]), s.shape);
        }
        for (const index of [0, 2, -1]) {
          assertClose(x.select(-2, index), gather(x, [4, 3], ([i, k]) => [i, (index + 5) % 5, k]), [4, 3]);
        }
        assertClose(x.narrow(0, 1, 2), gather(x, [2, 5, 3], ([i, j, k]) => [i + 1, j, k]), [2, 5, 3]);
        assertClose(x.narrow(-1, -2, 2), gather(x, [4, 5, 2], ([i, j, k]) => [i, j, k + 1]), [4, 5, 2]);
      }
    }),
  );

  it(
    "raise PyTorch's errors",
    scoped(() => {
      const b = box(), s = tensor(1);
      throwsWith(() => b.narrow(1, 2, 2), 'start (2) + length (2) exceeds dimension size (3).');
      throwsWith(() => b.narrow(1, 0, -1), 'start (0) + length (-1) exceeds dimension size (3).');
      throwsWith(() => b.narrow(1, 4, 0), 'Dimension out of range (expected to be in range of [-3, 2], but got 4)');
      throwsWith(() => b.narrow(1, -4, 1), 'Dimension out of range (expected to be in range of [-3, 2], but got -4)');
      throwsWith(() => s.narrow(0, 0, 1), 'narrow() cannot be applied to a 0-dim tensor.');
      throwsWith(() => b.select(1, 3), 'select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1');
      throwsWith(() => b.select(-2, 5), 'select(): index 5 out of range for tensor of size [2, 3, 4] at dimension 1');
      throwsWith(() => b.select(1, -4), 'select(): index -4 out of range for tensor of size [2, 3, 4] at dimension 1');
      throwsWith(() => s.select(0, 0), 'select() cannot be applied to a 0-dim tensor.', RangeError);
      throwsWith(() => b.slice(1, 0, 3, 0), 'slice step must be positive');
      throwsWith(() => b.slice(1, 0, 3, -1), 'slice step must be positive');
      throwsWith(() => s.slice(0, 0, 1), 'slice() cannot be applied to a 0-dim tensor.', RangeError);
    }),
  );
});

describe('as_strided and diagonal', () => {
  it(
    'as_strided views the storage with explicit geometry and checks its bounds',
    scoped(() => {
      const x = randomTensor([3, 3], 'float64', rng(13));
      const flat = values(x);
      assertClose(asStrided(x, [2, 2], [1, 3], 1), [flat[1], flat[4], flat[2], flat[5]], [2, 2]);
      assert.deepEqual(geometry(x.slice(0, 1).asStrided([2], [1])), [[2], [1], 3]);
      assert.deepEqual(geometry(x.asStrided([0, 2], [100, 2], 50)), [[0, 2], [100, 2], 50]);
      throwsWith(() => x.asStrided([2, 2], [1, 2], -1), 'Tensor: invalid storage offset -1');
      throwsWith(
        () => x.asStrided([2, 2], [1, -2], 1),
        'as_strided: Negative strides are not supported at the moment, got strides: [1, -2]',
      );
      throwsWith(() => x.asStrided([2, 2], [1, 2, 3]), 'mismatch in length of strides and shape');
      throwsWith(
        () => x.asStrided([2, 2], [100, 2]),
        'setStorage: sizes [2, 2], strides [100, 2], storage offset 0, and itemsize 8 requiring a storage size of ' +
          '824 are out of bounds for storage of size 72',
      );
    }),
  );

  it(
    'diagonal moves the diagonal last, with offsets above and below, like a gather',
    scoped(() => {
      const b = box();
      assert.deepEqual(geometry(diagonal(b, 1, 1, 2)), [[2, 3], [12, 5], 1]);
      assert.deepEqual(geometry(b.diagonal(-1, 2, 1)), [[2, 3], [12, 5], 1]);
      assert.deepEqual(geometry(b.diagonal(5, 1, 2)), [[2, 0], [12, 5], 0]);
      assert.deepEqual(geometry(b.diagonal()), [[4, 2], [1, 16], 0]);
      const x = nonContiguousTensor([4, 3, 5], 'float64', rng(14));
      for (const offset of [0, 2, -1, -3, 6]) {
        const d = x.diagonal(offset, 0, 2);
        const len = offset >= 0 ? Math.max(Math.min(4, 5 - offset), 0) : Math.max(Math.min(4 + offset, 5), 0);
        const map = ([j, k]: number[]) => (offset >= 0 ? [k, j, k + offset] : [k - offset, j, k]);
        assertClose(d, gather(x, [3, len], map), [3, len]);
      }
      throwsWith(() => b.diagonal(0, 0, 0), 'diagonal dimensions cannot be identical 0, 0');
      throwsWith(() => b.diagonal(0, 0, -3), 'diagonal dimensions cannot be identical 0, -3');
    }),
  );
});

describe('views alias their base', () => {
  it(
    'writes through a view reach the base, and the version counter is shared and bumped',
    scoped(() => {
      const x = randomTensor([4, 6], 'float32', rng(15));
      const before = values(x);
      const v = x.t().slice(0, 1, 5, 2).select(1, 2); // x[2, 1:5:2]
      assert.equal(v.base, x);
      assert.equal(x.version, 0);
      assert.equal(v.copy_(tensor([10, 20])), v);
      assert.equal(x.version, 1);
      assert.equal(v.version, 1);
      const expected = [...before];
      expected[2 * 6 + 1] = 10;
      expected[2 * 6 + 3] = 20;
      assertClose(x, expected, [4, 6]);
      x.unsqueeze(0).copy_(tensor(0));
      assert.equal(x.version, 2);
      assert.ok(values(x).every((e) => e === 0));
    }),
  );

  it('a view keeps the storage alive after its base is disposed', () => {
    const base = memoryStats();
    const x = tensor([[1, 2], [3, 4]]);
    const v = x.t();
    x.dispose();
    assert.deepEqual(values(v), [1, 3, 2, 4]);
    v.dispose();
    assert.equal(memoryStats().liveTensors, base.liveTensors);
    assert.equal(memoryStats().storages, base.storages);
    throwsWith(() => v.view([4]), "view(): argument 'self' was disposed and cannot be used any more", RuntimeError);
  });

  it('views, reshape copies and errors leave no tensor behind once results are disposed', () => {
    const base = memoryStats();
    const x = nonContiguousTensor([3, 4], 'float32', rng(17));
    const results = [
      x.view([3, 2, 2]),
      x.reshape([12]),
      x.flatten(),
      x.permute([1, 0]),
      x.expand([2, 3, 4]),
      x.slice(1, 1, null, 2),
      x.unsqueeze(0),
      x.diagonal(),
      ...x.split(2, 1),
    ];
    for (const fn of [() => x.view([12]), () => x.expand([5]), () => x.select(0, 9), () => x.unflatten(0, [2, 2])]) {
      assert.throws(fn);
    }
    for (const r of results) r.dispose();
    x.dispose();
    assert.equal(memoryStats().liveTensors, base.liveTensors);
    assert.equal(memoryStats().storages, base.storages);
  });
});

describe('views on every dtype and on Meta', () => {
  it(
    'permute, slice and reshape give the same elements on every dtype',
    scoped(() => {
      const next = rng(16);
      for (const dtype of ALL_DTYPES) {
        const x = nonContiguousTensor([3, 4, 2], dtype, next);
        const p = x.permute([1, 2, 0]).slice(0, 1, null, 2);
        assert.equal(p.dtype, x.dtype);
        const map = ([i, j, k]: number[]) => [k, 1 + 2 * i, j];
        assertClose(p, gather(x, [2, 2, 3], map), [2, 2, 3]);
        assertClose(p.reshape([-1]), gather(x, [12], ([n]) => map(unravel(n, [2, 2, 3]))), [12]);
      }
    }),
  );

  it(
    'Meta tensors get the geometry CPU tensors get',
    scoped(() => {
      const cpu = box();
      const meta = empty([2, 3, 4], { device: 'meta' });
      const ops: Array<(x: Tensor) => Tensor> = [
        (x) => x.view([6, -1]),
        (x) => x.permute([2, 0, 1]),
        (x) => x.transpose(0, 2).reshape([4, 6]),
        (x) => x.squeeze().unsqueeze(1),
        (x) => x.expand([5, 2, 3, 4]),
        (x) => x.narrow(2, 1, 2),
        (x) => x.select(1, 2),
        (x) => x.slice(2, 1, null, 2),
        (x) => x.diagonal(1, 1, 2),
        (x) => x.asStrided([3], [5], 2),
        (x) => x.flatten(0, 1),
        (x) => x.unflatten(2, [2, 2]),
        (x) => x.transpose(0, 1).reshape([-1]),
      ];
      for (const op of ops) {
        const a = op(cpu), b = op(meta);
        assert.equal(b.device.type, 'meta');
        assert.deepEqual([...b.shape], [...a.shape]);
        assert.equal(b.dtype, a.dtype);
        if (a.base !== undefined) assert.deepEqual(geometry(b), geometry(a));
      }
      throwsWith(() => meta.transpose(0, 1).view([-1]), VIEW_INCOMPATIBLE);
    }),
  );
});
