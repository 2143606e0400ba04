// nn.utils.clipGradNorm_ and clipGradValue_ against float64 references of PyTorch 1.13's definitions:
// total = ‖(‖g₁‖ₚ, ‖g₂‖ₚ, ...)‖ₚ, every gradient scaled by min(1, maxNorm / (total + 1e-6)); values clamped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, memoryStats, nn, randn, type Tensor, tensor } from '../../mod.ts';

const { clipGradNorm_, clipGradValue_ } = nn.utils;

function pNorm(values: number[], p: number): number {
  if (p === Infinity) return Math.max(...values.map(Math.abs));
  if (p === -Infinity) return Math.min(...values.map(Math.abs));
  if (p === 0) return values.filter((v) => v !== 0).length;
  return values.reduce((s, v) => s + Math.abs(v) ** p, 0) ** (1 / p);
}

function withGrad(shape: number[], dtype: 'float32' | 'float64' = 'float32'): Tensor {
  const p = randn(shape, { dtype }).requiresGrad_();
  p.grad = randn(shape, { dtype }).mul(3);
  return p;
}

function disposeAll(params: Tensor[]): void {
  for (const p of params) {
    p.grad?.dispose();
    p.dispose();
  }
}

describe('clipGradNorm_', () => {
  for (const normType of [2, 1, Infinity, 3, 0.5, 0, -Infinity]) {
    for (const maxNorm of [0.5, 1e6]) {
      it(`norm type ${normType}, maxNorm ${maxNorm}: returns the total norm and scales every gradient`, () => {
        manualSeed(normType === Infinity ? 7 : 11);
        const params = [withGrad([3, 5]), withGrad([7]), withGrad([2, 2, 2])];
        const noGradParam = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
        const before = params.map((p) => p.grad!.toArray() as number[]);
        const expectedTotal = pNorm(before.map((g) => pNorm(g, normType)), normType);
        const live = memoryStats().liveTensors;
        const total = clipGradNorm_([...params, noGradParam], maxNorm, { normType });
        assert.equal(memoryStats().liveTensors, live + 1);
        assert.deepEqual(total.shape, []);
        const got = total.item() as number;
        assert.ok(Math.abs(got - expectedTotal) <= 1e-5 * expectedTotal, `total ${got} vs ${expectedTotal}`);
        const coefficient = Math.min(1, maxNorm / (expectedTotal + 1e-6));
        params.forEach((p, i) => {
          (p.grad!.toArray() as number[]).forEach((v, j) => {
            const want = before[i][j] * coefficient;
            assert.ok(Math.abs(v - want) <= 1e-5 * Math.abs(want) + 1e-7, `grad ${i}[${j}]: ${v} vs ${want}`);
          });
        });
        if (coefficient === 1) params.forEach((p, i) => assert.deepEqual(p.grad!.toArray(), before[i]));
        assert.equal(noGradParam.grad, null);
        total.dispose();
        disposeAll([...params, noGradParam]);
      });
    }
  }

  it('takes one tensor, float64 gradients and non-contiguous gradients (a transposed view)', () => {
    manualSeed(3);
    const p = withGrad([4, 3], 'float64');
    const q = randn([3, 4], { dtype: 'float32' }).requiresGrad_();
    const base = randn([4, 3], { dtype: 'float32' });
    q.grad = base.t();
    const g = p.grad!.toArray() as number[];
    const total = clipGradNorm_(p, 1);
    const norm = pNorm(g, 2);
    assert.ok(Math.abs((total.item() as number) - norm) < 1e-12 * norm);
    (p.grad!.toArray() as number[]).forEach((v, i) => assert.ok(Math.abs(v - g[i] / (norm + 1e-6)) < 1e-14));
    total.dispose();
    const qBefore = q.grad!.toArray() as number[];
    const qNorm = pNorm(qBefore, 2);
    clipGradNorm_([q], 0.1).dispose();
    (q.grad!.toArray() as number[]).forEach((v, i) =>
      assert.ok(Math.abs(v - qBefore[i] * 0.1 / (qNorm + 1e-6)) < 1e-6)
    );
    disposeAll([p, q]);
    base.dispose();
  });

  it('float16 and bfloat16 gradients are reduced in float32; mixed float32/float64 give a float64 norm', () => {
    for (const dtype of ['float16', 'bfloat16'] as const) {
      const p = tensor([1, 2, 3], { dtype }).requiresGrad_();
      p.grad = tensor([3, -4, 0], { dtype });
      const total = clipGradNorm_([p], 1);
      assert.equal(total.dtype.name, dtype);
      assert.equal(total.item(), 5);
      // Within two rounding steps of the format (the scale is rounded to it, then the product).
      const ulp = dtype === 'float16' ? 2 ** -10 : 2 ** -7;
      (p.grad.toArray() as number[]).forEach((v, i) => {
        const want = [3, -4, 0][i] / (5 + 1e-6);
        assert.ok(Math.abs(v - want) <= ulp * Math.abs(want), `${dtype}[${i}]: ${v} vs ${want}`);
      });
      total.dispose();
      clipGradValue_([p], 0.5);
      assert.deepEqual(p.grad.toArray(), [0.5, -0.5, 0]);
      disposeAll([p]);
    }
    const a = tensor([0], { dtype: 'float32' }).requiresGrad_();
    const b = tensor([0], { dtype: 'float64' }).requiresGrad_();
    a.grad = tensor([3], { dtype: 'float32' });
    b.grad = tensor([4], { dtype: 'float64' });
    const total = clipGradNorm_([a, b], 1);
    assert.equal(total.dtype.name, 'float64');
    assert.equal(total.item(), 5);
    assert.equal(a.grad.dtype.name, 'float32');
    assert.deepEqual(a.grad.toArray(), [Math.fround(3 / (5 + 1e-6))]);
    assert.ok(Math.abs((b.grad.item() as number) - 4 / (5 + 1e-6)) < 1e-15);
    total.dispose();
    disposeAll([a, b]);
  });

  it('no gradients at all: the norm is 0 and nothing changes', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const total = clipGradNorm_([p], 1);
    assert.equal(total.item(), 0);
    total.dispose();
    p.dispose();
  });

  it("errorIfNonfinite raises PyTorch's error for NaN and inf norms; otherwise scales by them", () => {
    const p = tensor([1, 2], { dtype: 'float32' }).requiresGrad_();
    p.grad = tensor([Infinity, 1], { dtype: 'float32' });
    assert.throws(
      () => clipGradNorm_([p], 1, { errorIfNonfinite: true }),
      /^RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`$/,
    );
    p.grad.dispose();
    p.grad = tensor([NaN, 1], { dtype: 'float32' });
    assert.throws(() => clipGradNorm_([p], 1, { normType: Infinity, errorIfNonfinite: true }), /order inf/);
    assert.deepEqual(p.grad.toArray().map(Number.isNaN), [true, false]);
    const total = clipGradNorm_([p], 1);
    assert.ok(Number.isNaN(total.item()));
    total.dispose();
    p.grad.dispose();
    p.dispose();
  });

  it('checks its arguments', () => {
    const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
    assert.throws(() => clipGradNorm_(5 as never, 1), /argument 'parameters' must be a Tensor or an iterable/);
    assert.throws(() => clipGradNorm_([p, 'x'] as never, 1), /parameters\[1\] must be a Tensor, not str/);
    assert.throws(() => clipGradNorm_([p], '1' as never), /argument 'maxNorm' must be float, not str/);
    assert.throws(() => clipGradNorm_([p], 1, { normType: -1 }), /normType/);
    assert.throws(() => clipGradNorm_([p], 1, { norm_type: 2 } as never), /unexpected keyword argument 'norm_type'/);
    p.dispose();
  });
});

describe('clipGradValue_', () => {
  it('clamps every gradient in place, float32 and float64, and skips parameters without one', () => {
    manualSeed(5);
    const a = withGrad([4, 4]);
    const b = withGrad([9], 'float64');
    const c = tensor([1], { dtype: 'float32' }).requiresGrad_();
    const before = [a, b].map((p) => p.grad!.toArray() as number[]);
    const gradObjects = [a.grad, b.grad];
    clipGradValue_([a, b, c], 1.5);
    [a, b].forEach((p, i) => {
      assert.equal(p.grad, gradObjects[i]);
      assert.deepEqual(
        p.grad!.toArray(),
        before[i].map((v) => Math.min(1.5, Math.max(-1.5, v))).map((v) => i === 0 ? Math.fround(v) : v),
      );
    });
    assert.ok(before[0].some((v) => Math.abs(v) > 1.5));
    assert.throws(() => clipGradValue_([a], NaN), /argument 'clipValue' must be float/);
    disposeAll([a, b, c]);
  });
});
