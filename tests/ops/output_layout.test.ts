// Elementwise outputs and flip follow their inputs' memory order as TensorIterator and empty_like(preserve)
// lay them out (Note [Elementwise output layout] in core/ops/output_layout.ts). The expected strides are what
// PyTorch 1.13 gives for the same expressions; values are checked against the inputs, element by element.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, randn, scope, type Tensor, where } from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng, values } from './_helpers.ts';

const strides = (t: Tensor) => [...t.stride()];

for (const device of ['cpu', 'meta'] as const) {
  describe(`output layout on ${device}`, () => {
    const make = (shape: number[], seed: number) =>
      device === 'cpu' ? randomTensor(shape, 'float32', rng(seed)) : randn(shape, { device: 'meta' });

    it('follows a transposed input, for unary, binary, scalar, comparison, where and clamp', () => {
      scope(() => {
        const t = make([3, 4], 1).t(); // strides [1, 4]
        const cases: Array<[string, Tensor, number[]]> = [
          ['exp', t.exp(), [1, 4]],
          ['neg', t.neg(), [1, 4]],
          ['relu', t.relu(), [1, 4]],
          ['t + t', t.add(t), [1, 4]],
          ['t + contiguous', t.add(make([4, 3], 2)), [1, 4]],
          ['contiguous + t', make([4, 3], 3).add(t), [3, 1]],
          ['t + row', t.add(make([3], 4)), [1, 4]],
          ['t * column', t.mul(make([4, 1], 5)), [1, 4]],
          ['t + scalar', t.add(1), [1, 4]],
          ['t == t', t.eq(t), [1, 4]],
          ['where', where(t.gt(0), t, 0), [1, 4]],
          ['clamp', t.clamp(0, 1), [1, 4]],
          ['flip(0)', t.flip([0]), [1, 4]],
          ['flip(1)', t.flip([1]), [1, 4]],
        ];
        for (const [what, out, want] of cases) {
          assert.deepEqual(strides(out), want, what);
          assert.equal(out.device.type, device, what);
        }
      });
    });

    it('follows a 3-d permutation; sliced and expanded inputs give contiguous outputs', () => {
      scope(() => {
        const b = make([2, 3, 4], 6).permute([2, 0, 1]);
        assert.deepEqual(strides(b.exp()), [1, 12, 4]);
        assert.deepEqual(strides(b.add(b)), [1, 12, 4]);
        const sliced = make([4, 6], 7).slice(1, 0, null, 2);
        assert.deepEqual(strides(sliced.exp()), [3, 1]);
        assert.deepEqual(strides(sliced.flip([0])), [3, 1]);
        const expanded = make([3, 1], 8).expand([3, 4]);
        assert.deepEqual(strides(expanded.exp()), [4, 1]);
        assert.deepEqual(strides(expanded.flip([0])), [4, 1]);
        const size1 = make([1, 5], 9).t(); // contiguous despite its strides
        assert.deepEqual(strides(size1.exp()), [1, 1]);
      });
    });
  });
}

describe('values of permuted outputs', () => {
  it('equal the elementwise result at every index, for every layout the rule produces', () => {
    const before = memoryStats().liveTensors;
    scope(() => {
      const next = rng(10);
      const a = randomTensor([2, 3, 4], 'float64', next).permute([2, 0, 1]);
      const b = nonContiguousTensor([4, 2, 3], 'float64', next);
      const av = values(a), bv = values(b);
      const sum = a.add(b), prod = a.mul(b), e = a.exp();
      assert.deepEqual(strides(sum), [1, 12, 4]);
      assert.deepEqual(values(sum), av.map((x, i) => x + bv[i]));
      assert.deepEqual(values(prod), av.map((x, i) => x * bv[i]));
      values(e).forEach((v, i) => assert.ok(Math.abs(v - Math.exp(av[i])) <= 1e-15 * Math.exp(av[i]), `exp ${i}`));
      assert.deepEqual(
        values(a.flip([1])),
        [0, 1, 2, 3].flatMap((i) => [1, 0].flatMap((j) => [0, 1, 2].map((k) => av[i * 6 + j * 3 + k]))),
      );
    });
    assert.equal(memoryStats().liveTensors, before);
  });
});
