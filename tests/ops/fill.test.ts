// zero_, fill_ and sqrt_: in place, through views, with PyTorch's checks and gradients.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, tensor } from '../../mod.ts';
import { ALL_DTYPES, nonContiguousTensor, rng, values } from './_helpers.ts';

describe('fill_ and zero_', () => {
  for (const dtype of ALL_DTYPES) {
    it(`fill every element of a ${dtype} tensor, contiguous or strided`, () => {
      const before = memoryStats().liveTensors;
      const next = rng(11);
      const t = nonContiguousTensor([3, 5], dtype, next);
      const value = dtype === 'bool' ? true : dtype === 'uint8' ? 7 : -7;
      assert.equal(t.fill_(value), t);
      assert.deepEqual(values(t), new Array(15).fill(typeof value === 'boolean' ? 1 : value));
      t.zero_();
      assert.deepEqual(values(t), new Array(15).fill(0));
      assert.equal(t.version, 2, 'each in-place call bumps the version counter');
      t.dispose();
      assert.equal(memoryStats().liveTensors, before);
    });
  }

  it('writes through a view into its base, as PyTorch does', () => {
    const t = tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
    t.t().select(0, 1).fill_(9);
    assert.deepEqual(t.tolist(), [[1, 9, 3], [4, 9, 6]]);
    assert.equal(t.version, 1);
  });

  it('rejects values the dtype cannot hold, with PyTorch message', () => {
    assert.throws(
      () => tensor([1], { dtype: 'uint8' }).fill_(300),
      /value cannot be converted to type uint8_t without overflow/,
    );
  });

  it('gives zero gradient to what it overwrites; sqrt_ differentiates like sqrt', () => {
    const w = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
    const y = w.mul(2);
    y.fill_(3);
    y.sum().backward();
    assert.deepEqual(values(w.grad!), [0, 0]);
    const x = tensor([4, 9], { dtype: 'float64' }).requiresGrad_();
    const r = x.mul(1).sqrt_();
    assert.equal(r.gradFn?.name(), 'SqrtBackward0');
    assert.deepEqual(values(r), [2, 3]);
    r.sum().backward();
    assert.deepEqual(values(x.grad!), [0.25, 1 / 6]);
  });
});
