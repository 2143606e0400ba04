// .T / .mT, the dtype shorthands, new_empty/new_zeros/new_ones/new_full and newTensor: values, dtypes,
// devices, views, autograd through the shorthands, and errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, randn, scope, tensor } from '../../mod.ts';
import { nonContiguousTensor, rng, values } from './_helpers.ts';

const next = rng(0xc0de);

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

describe('Tensor conveniences', () => {
  it('.T reverses the dims and .mT swaps the last two, as views', () =>
    leakFree(() => {
      const x = nonContiguousTensor([2, 3, 4], 'float32', next);
      assert.deepEqual([...x.T.shape], [4, 3, 2]);
      assert.deepEqual(x.T.tolist(), x.permute([2, 1, 0]).tolist());
      assert.deepEqual([...x.mT.shape], [2, 4, 3]);
      assert.deepEqual(x.mT.tolist(), x.transpose(1, 2).tolist());
      const m = tensor([[1, 2], [3, 4]], { dtype: 'float32' });
      const t = m.T;
      m.add_(10);
      assert.deepEqual(t.tolist(), [[11, 13], [12, 14]]); // shares storage
      assert.deepEqual(tensor([1, 2]).T.tolist(), [1, 2]);
      assert.throws(() => tensor([1, 2]).mT, {
        message: 'tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.',
      });
    }));
  it('dtype shorthands convert (truncating floats to integers) and differentiate', () =>
    leakFree(() => {
      const x = tensor([1.7, -2.5, 0]);
      const cases: [string, string, number[]][] = [
        ['float', 'float32', [Math.fround(1.7), -2.5, 0]],
        ['double', 'float64', [Math.fround(1.7), -2.5, 0]],
        ['long', 'int64', [1, -2, 0]],
        ['int', 'int32', [1, -2, 0]],
        ['short', 'int16', [1, -2, 0]],
        ['char', 'int8', [1, -2, 0]],
        ['bool', 'bool', [1, 1, 0]],
        ['half', 'float16', [1.7001953125, -2.5, 0]],
        ['bfloat16', 'bfloat16', [1.703125, -2.5, 0]],
      ];
      for (const [name, dtype, want] of cases) {
        const y = (x as unknown as Record<string, () => typeof x>)[name]();
        assert.equal(y.dtype.name, dtype, name);
        assert.deepEqual(values(y), want, name);
      }
      assert.deepEqual(tensor([3, 255]).byte().tolist(), [3, 255]);
      const w = randn([3]).requiresGrad_();
      w.double().mul(2).sum().backward();
      assert.deepEqual(w.grad!.tolist(), [2, 2, 2]);
      assert.equal(w.grad!.dtype.name, 'float32');
      w.grad!.dispose(); // grads outlive scopes
      assert.throws(() => (x.float as (a: unknown) => unknown)('channels_last'), TypeError);
    }));
  it('new_empty / new_zeros / new_ones / new_full take dtype and device from self unless given', () =>
    leakFree(() => {
      const x = tensor([1, 2], { dtype: 'float64' });
      const z = x.newZeros([2, 3]);
      assert.equal(z.dtype.name, 'float64');
      assert.deepEqual(z.tolist(), [[0, 0, 0], [0, 0, 0]]);
      assert.deepEqual(x.newOnes([2], { dtype: 'int32' }).tolist(), [1, 1]);
      assert.equal(x.newOnes([2], { dtype: 'int32' }).dtype.name, 'int32');
      assert.deepEqual(x.newFull([3], 7.5).tolist(), [7.5, 7.5, 7.5]);
      assert.deepEqual([...x.newEmpty([4, 0]).shape], [4, 0]);
      assert.equal(x.newEmpty([1]).device.type, 'cpu');
      assert.equal(x.newZeros([1]).requiresGrad, false);
      assert.throws(() => x.newZeros([-1]));
    }));
  it('x.unique() is unique(x)', () =>
    leakFree(() => {
      const x = tensor([3, 1, 3]);
      assert.deepEqual((x.unique() as typeof x).tolist(), [1, 3]);
      const [v, c] = x.unique({ returnCounts: true }) as (typeof x)[];
      assert.deepEqual([v.tolist(), c.tolist()], [[1, 3], [1, 2]]);
    }));
  it('newTensor copies data with self dtype unless given', () =>
    leakFree(() => {
      const x = tensor([1], { dtype: 'float16' });
      const y = x.newTensor([0.5, 2]);
      assert.equal(y.dtype.name, 'float16');
      assert.deepEqual(y.tolist(), [0.5, 2]);
      assert.equal(x.newTensor([1, 2], { dtype: 'int64' }).dtype.name, 'int64');
      assert.equal(tensor([1.5]).newTensor([1], { requiresGrad: true }).requiresGrad, true);
    }));
});
