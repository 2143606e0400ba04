// Indexing operators (index_select, index_add, embedding and its backward, gather, scatter_add, masked_fill)
// against float64 references computed here on seeded random data: every dtype, odd shapes, non-contiguous
// inputs and indices, duplicate indices (accumulated exactly and in order), PyTorch 1.13's error messages, and
// no leaked tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  embedding,
  gather,
  indexSelect,
  maskedFill,
  memoryStats,
  RuntimeError,
  scatterAdd,
  scope,
  type Tensor,
  tensor,
} from '../../mod.ts';
import { ALL_DTYPES, nonContiguousTensor, randomTensor, rng, roundTo, values } from './_helpers.ts';

function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

/** Row-major positions of a shape. */
function positions(shape: readonly number[]): number[][] {
  let out: number[][] = [[]];
  for (const s of shape) out = out.flatMap((p) => Array.from({ length: s }, (_, i) => [...p, i]));
  return out;
}
const flatIndex = (shape: readonly number[], p: readonly number[]) => p.reduce((acc, v, i) => acc * shape[i] + v, 0);
const randomIndex = (n: number, bound: number, next: () => number) =>
  Array.from({ length: n }, () => Math.floor(next() * bound));

describe('index_select and embedding', () => {
  for (const dtype of ALL_DTYPES) {
    it(
      `gathers ${dtype} rows along each dim, from non-contiguous inputs`,
      scoped(() => {
        const next = rng(11);
        const x = nonContiguousTensor([3, 5, 4], dtype, next);
        const xs = values(x);
        for (const dim of [0, 1, 2, -1]) {
          const d = (dim + 3) % 3;
          const idx = randomIndex(7, x.shape[d], next);
          for (const indexDtype of ['int64', 'int32'] as const) {
            const y = indexSelect(x, dim, tensor(idx, { dtype: indexDtype }));
            const shape = x.shape.map((s, i) => (i === d ? idx.length : s));
            assert.deepEqual(y.shape, shape);
            const expected = positions(shape).map((p) =>
              xs[flatIndex(x.shape, p.map((v, i) => (i === d ? idx[v] : v)))]
            );
            assert.deepEqual(values(y), expected);
          }
        }
        const e = embedding(x.select(1, 2), tensor([[2, 0], [2, 2]]));
        assert.deepEqual(e.shape, [2, 2, 4]);
        const w = values(x.select(1, 2));
        assert.deepEqual(values(e), [2, 0, 2, 2].flatMap((r) => w.slice(4 * r, 4 * r + 4)));
      }),
    );
  }

  it(
    "raises PyTorch's errors",
    scoped(() => {
      const x = randomTensor([3, 4], 'float32', rng(1));
      assert.throws(() => indexSelect(x, 0, tensor([3])), /^RangeError: index out of range in self$/);
      assert.throws(() => indexSelect(x, 0, tensor([-1])), /index out of range in self/);
      assert.throws(
        () => indexSelect(x, 0, tensor([1], { dtype: 'float32' })),
        (e) => e instanceof RuntimeError && e.message === 'index_select(): Expected dtype int32 or int64 for index',
      );
      assert.throws(() => indexSelect(x, 0, tensor([[1]])), /index_select\(\): Index is supposed to be a vector/);
      assert.throws(() => embedding(x, tensor([3])), /index out of range in self/);
      assert.throws(() => embedding(tensor([1, 2]), tensor([0])), /'weight' must be 2-D/);
      assert.throws(
        () => embedding(x, tensor([1], { dtype: 'float32' })),
        /Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead \(while checking arguments for embedding\)/,
      );
    }),
  );
});

describe('index_add, scatter_add and embedding backward', () => {
  for (const dtype of ALL_DTYPES) {
    it(
      `accumulates duplicate ${dtype} indices exactly and in order`,
      scoped(() => {
        const next = rng(23);
        const self = nonContiguousTensor([4, 5], dtype, next);
        const src = nonContiguousTensor([6, 5], dtype, next);
        const idx = randomIndex(6, 4, next);
        const s = values(self), v = values(src);
        const alpha = dtype === 'bool' ? 1 : 2;
        const expected = [...s];
        for (let j = 0; j < 6; j++) {
          for (let c = 0; c < 5; c++) {
            const at = idx[j] * 5 + c;
            const sum = expected[at] + alpha * v[j * 5 + c];
            expected[at] = dtype === 'bool' ? (sum !== 0 ? 1 : 0) : wrap(roundTo(sum, dtype), dtype);
          }
        }
        const y = self.indexAdd(0, tensor(idx), src, { alpha });
        assert.deepEqual(values(y), expected);
        const index = tensor(positions([6, 5]).map(([j, c]) => (j + c) % 4)).reshape([6, 5]);
        const z = scatterAdd(self, 0, index, src);
        const ref = [...s];
        positions([6, 5]).forEach(([j, c]) => {
          const at = ((j + c) % 4) * 5 + c;
          const sum = ref[at] + v[j * 5 + c];
          ref[at] = dtype === 'bool' ? (sum !== 0 ? 1 : 0) : wrap(roundTo(sum, dtype), dtype);
        });
        assert.deepEqual(values(z), ref);
      }),
    );
  }

  it(
    'embedding gradients sum rows per index, skip padding_idx and scale by frequency',
    scoped(() => {
      const w = tensor([[0, 1], [2, 3], [4, 5]], { dtype: 'float64' }).requiresGrad_();
      const y = embedding(w, tensor([[1, 1], [2, 0]]), 2, true);
      y.mul(tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], { dtype: 'float64' })).sum().backward();
      // torch.embedding(w, idx, padding_idx=2, scale_grad_by_freq=True): row 1 is (1+3)/2, (2+4)/2; row 2 is 0.
      assert.deepEqual(values(w.grad!), [7, 8, 2, 3, 0, 0]);
      w.grad!.dispose();
    }),
  );

  it(
    "raises PyTorch's errors",
    scoped(() => {
      const x = randomTensor([3, 4], 'float32', rng(2));
      assert.throws(() => x.indexAdd(0, tensor([3]), randomTensor([1, 4], 'float32', rng(3))), /index out of range/);
      assert.throws(
        () => x.indexAdd(0, tensor([1]), randomTensor([2, 4], 'float32', rng(3))),
        /index_add_\(\): Number of indices \(1\) should be equal to source.size\(dim\): \(2\), for dim: 0/,
      );
      assert.throws(
        () => x.indexAdd(0, tensor([1]), randomTensor([1, 4], 'float64', rng(3))),
        /index_add_\(\): self \(Float\) and source \(Double\) must have the same scalar type/,
      );
      assert.throws(() => scatterAdd(x, 0, tensor([[3]]), x), /index 3 is out of bounds for dimension 0 with size 3/);
      assert.throws(
        () => scatterAdd(x, 0, tensor([[1]]), randomTensor([3, 4], 'float64', rng(3))),
        /scatter\(\): Expected self.dtype/,
      );
      assert.throws(() => scatterAdd(x, 0, tensor([[1]], { dtype: 'int32' }), x), /Expected dtype int64 for index/);
    }),
  );
});

function wrap(v: number, dtype: string): number {
  switch (dtype) {
    case 'uint8':
      return v & 0xff;
    case 'int8':
      return (v << 24) >> 24;
    case 'int16':
      return (v << 16) >> 16;
    case 'int32':
      return v | 0;
    default:
      return v;
  }
}

describe('gather and masked_fill', () => {
  for (const dtype of ALL_DTYPES) {
    it(
      `gathers and fills ${dtype} through strided views`,
      scoped(() => {
        const next = rng(5);
        const x = nonContiguousTensor([3, 5], dtype, next);
        const xs = values(x);
        const idx = randomIndex(6, 3, next);
        const index = nonContiguousTensor([2, 3], 'int64', next).mul(0).add(tensor(idx).reshape([3, 2]).t());
        const ix = values(index);
        const y = gather(x, 0, index);
        assert.deepEqual(values(y), positions([2, 3]).map(([i, j]) => xs[ix[i * 3 + j] * 5 + j]));
        const mask = tensor([true, false, true, true, false]);
        const value = dtype === 'bool' ? true : 3;
        const f = maskedFill(x, mask, value);
        assert.deepEqual(values(f), xs.map((v, i) => ([0, 2, 3].includes(i % 5) ? Number(value) : v)));
        const t: Tensor = x.clone();
        t.maskedFill_(mask, value);
        assert.deepEqual(values(t), values(f));
      }),
    );
  }

  it(
    "raises PyTorch's errors",
    scoped(() => {
      const x = randomTensor([3, 4], 'float32', rng(4));
      assert.throws(() => gather(x, 0, tensor([[3]])), /index 3 is out of bounds for dimension 0 with size 3/);
      assert.throws(() => gather(x, 0, tensor([[-1]])), /index -1 is out of bounds for dimension 0 with size 3/);
      assert.throws(
        () => gather(x, 0, tensor([[1]], { dtype: 'int32' })),
        /gather\(\): Expected dtype int64 for index/,
      );
      assert.throws(() => gather(x, 0, tensor([1])), /Index tensor must have the same number of dimensions as input/);
      assert.throws(
        () => x.maskedFill_(tensor([[true], [false], [true], [true]]), 1),
        /The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 0/,
      );
      assert.throws(
        () => randomTensor([2], 'int8', rng(1)).maskedFill(tensor([true, false]), 1000),
        /value cannot be converted to type int8_t without overflow/,
      );
    }),
  );
});
