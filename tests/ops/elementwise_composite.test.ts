// rsub and where with Python-scalar operands: values, result dtypes, errors and gradients as PyTorch 1.13 gives
// them for the same calls.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { floatScalar, memoryStats, rsub, scope, type Tensor, tensor, toDType, where } from '../../mod.ts';
import { randomTensor, rng, values } from './_helpers.ts';

const f32 = (xs: number[]) => tensor(new Float32Array(xs));

describe('rsub', () => {
  it('computes other - alpha * self, for tensor and scalar `other`, with broadcasting', () => {
    scope(() => {
      assert.deepEqual(rsub(f32([1, 2]), 5).toArray(), [4, 3]);
      assert.deepEqual(rsub(tensor([1, 2]), 5, { alpha: 2 }).toArray(), [3, 1]);
      assert.deepEqual(rsub(f32([1, 2]), f32([10, 20]), { alpha: 3 }).toArray(), [7, 14]);
      const next = rng(3);
      const a = randomTensor([3, 1, 4], 'float64', next), b = randomTensor([2, 1], 'float64', next);
      const av = values(a), bv = values(b);
      const got = values(rsub(a, b, { alpha: 0.5 }));
      let k = 0;
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 2; j++) {
          for (let l = 0; l < 4; l++) assert.equal(got[k++], bv[j] - 0.5 * av[i * 4 + l]);
        }
      }
    });
  });

  it('promotes and wraps as sub does, and raises its errors', () => {
    scope(() => {
      assert.equal(rsub(tensor([1], { dtype: 'int32' }), 2.5).dtype.name, 'float32');
      assert.deepEqual(rsub(tensor([1], { dtype: 'int32' }), 2 ** 40).toArray(), [-1]); // 2**40 wraps to 0 in int32
      assert.equal(rsub(tensor([1, 2]), floatScalar(3)).dtype.name, 'float32');
      assert.throws(
        () => rsub(tensor([true]), 1),
        /Subtraction, the `-` operator, with a bool tensor is not supported/,
      );
      assert.throws(
        () => rsub(tensor([1, 2]), 5, { alpha: 1.5 }),
        /For integral input tensors, argument alpha must not be a floating point number/,
      );
    });
  });

  it('differentiates as RsubBackward0 / RsubBackward1', () => {
    scope(() => {
      const x = f32([1, 2]).requiresGrad_();
      const y = rsub(x, 3, { alpha: 2 });
      assert.equal(y.gradFn?.name(), 'RsubBackward1');
      y.sum().backward();
      assert.deepEqual(x.grad!.toArray(), [-2, -2]);
      const p = f32([1, 2]).requiresGrad_(), q = f32([1, 2]).requiresGrad_();
      const z = rsub(p, q, { alpha: 2 });
      assert.equal(z.gradFn?.name(), 'RsubBackward0');
      z.sum().backward();
      assert.deepEqual(p.grad!.toArray(), [-2, -2]);
      assert.deepEqual(q.grad!.toArray(), [1, 1]);
    });
  });
});

describe('where with scalar operands', () => {
  it('gives the result dtype of its operands, converting scalars with the overflow check', () => {
    const before = memoryStats().liveTensors;
    scope(() => {
      const t = tensor([1, 2], { dtype: 'int32' }), c = t.gt(1);
      const cases: Array<[() => Tensor, number[] | boolean[], string]> = [
        [() => where(c, 2.5, t), [1, 2.5], 'float32'],
        [() => where(c, 1, 0), [0, 1], 'int64'],
        [() => where(c, floatScalar(1), 0), [0, 1], 'float32'],
        [() => where(c, true, false), [false, true], 'bool'],
        [() => where(c, 3, t.to(toDType('float64'))), [1, 3], 'float64'],
        [() => where(c, 7, t), [1, 7], 'int32'],
      ];
      for (const [make, want, dtype] of cases) {
        const r = make();
        assert.deepEqual(r.toArray(), want);
        assert.equal(r.dtype.name, dtype);
      }
      assert.throws(() => where(c, 2 ** 40, t), /value cannot be converted to type int without overflow/);
    });
    assert.equal(memoryStats().liveTensors, before);
  });

  it('records WhereBackward0 through where.self', () => {
    scope(() => {
      const x = f32([1, 2]).requiresGrad_();
      const y = where(x.gt(1), 2, x);
      assert.equal(y.gradFn?.name(), 'WhereBackward0');
      y.sum().backward();
      assert.deepEqual(x.grad!.toArray(), [1, 0]);
    });
  });
});
