// pow's gradients at base 0 and exponent 0 follow PyTorch's masks (FunctionsManual.cpp pow_backward*); the
// expected values are what PyTorch 1.13 computes for these inputs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pow, scope, tensor } from '../../mod.ts';

const f32 = (xs: number[]) => tensor(new Float32Array(xs));

describe("pow's gradients where base or exponent is 0", () => {
  it('Tensor ** Tensor: 0 for self where the exponent is 0, 0 for the exponent where base 0 meets exponent >= 0', () => {
    scope(() => {
      const x = f32([0, 0, 2, 0]).requiresGrad_(), e = f32([0, 2, 0, -1]).requiresGrad_();
      x.pow(e).backward(f32([1, 1, NaN, 1]));
      assert.deepEqual(x.grad!.toArray(), [0, 0, 0, -Infinity]);
      assert.deepEqual(e.grad!.toArray(), [0, 0, NaN, -Infinity]);
    });
  });

  it('Tensor ** 0: a zero gradient, even for an infinite incoming gradient', () => {
    scope(() => {
      const x = f32([0, 3]).requiresGrad_();
      x.pow(0).backward(f32([Infinity, 1]));
      assert.deepEqual(x.grad!.toArray(), [0, 0]);
    });
  });

  it('0 ** Tensor and 2 ** Tensor', () => {
    scope(() => {
      const e = f32([0, 2, -1]).requiresGrad_();
      pow(0, e).sum().backward();
      assert.deepEqual(e.grad!.toArray(), [0, 0, -Infinity]);
      const e2 = f32([0, 2, -1]).requiresGrad_();
      pow(2, e2).sum().backward();
      const want = [0, 2, -1].map((v) => Math.fround(Math.fround(2 ** v) * Math.fround(Math.LN2)));
      (e2.grad!.toArray() as number[]).forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-6 * Math.abs(want[i])));
    });
  });
});
