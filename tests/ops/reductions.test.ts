// Reductions (sum, mean, prod, max, min, amax, amin, argmax, argmin) against float64 references computed here,
// with PyTorch 1.13's dtype rules and error messages (checked by hand against the installed torch).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  amax,
  amin,
  argmax,
  argmin,
  type DType,
  max,
  mean,
  memoryStats,
  min,
  prod,
  sum,
  type Tensor,
  tensor,
  toDType,
} from '../../mod.ts';
import { emptyMeta } from '../../core/ops/registry.ts';
import { resetPeakStorageBytes } from '../../core/tensor/storage.ts';
import { ALL_DTYPES, nonContiguousTensor, randomTensor, restride, rng, tolerance, values } from './_helpers.ts';

const next = rng(0x5eed);

/** Tensors made in a test, disposed at its end; the live count must come back to where it started. */
function bag() {
  const start = memoryStats().liveTensors;
  const held: Tensor[] = [];
  return {
    keep<T extends Tensor | Tensor[]>(t: T): T {
      if (Array.isArray(t)) held.push(...t);
      else held.push(t);
      return t;
    },
    done() {
      for (const t of held) t.dispose();
      assert.equal(memoryStats().liveTensors, start, 'leaked tensors');
    },
  };
}

/** The values of `t` grouped by output element of a reduction over `mask`, output in row-major order. */
function groups(t: Tensor, mask: readonly boolean[]): number[][] {
  const shape = t.shape, vals = values(t);
  const out = new Map<number, number[]>();
  const index = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < vals.length; i++) {
    let key = 0;
    for (let d = 0; d < shape.length; d++) if (!mask[d]) key = key * shape[d] + index[d];
    let list = out.get(key);
    if (list === undefined) out.set(key, list = []);
    list.push(vals[i]);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  const keptCount = shape.reduce((n, s, d) => (mask[d] ? n : n * s), 1);
  return Array.from({ length: keptCount }, (_, k) => out.get(k) ?? []);
}

function reducedShape(shape: readonly number[], mask: readonly boolean[], keepdim: boolean): number[] {
  return shape.flatMap((s, d) => (mask[d] ? (keepdim ? [1] : []) : [s]));
}

const maskOf = (ndim: number, dims: readonly number[] | null) =>
  Array.from(
    { length: ndim },
    (_, d) => dims === null || dims.length === 0 || dims.some((x) => (x + ndim) % ndim === d),
  );

const refSum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const refMax = (xs: number[]) => (xs.some(Number.isNaN) ? NaN : Math.max(...xs));
const refMin = (xs: number[]) => (xs.some(Number.isNaN) ? NaN : Math.min(...xs));
const refArgmax = (xs: number[]) => {
  let best = 0;
  for (let i = 1; i < xs.length; i++) {
    if (Number.isNaN(xs[best])) break;
    if (Number.isNaN(xs[i]) || xs[i] > xs[best]) best = i;
  }
  return best;
};
const refArgmin = (xs: number[]) => refArgmax(xs.map((x) => -x));

/**
 * Checks a reduction result against `ref` per group: a float sum may be off by rounding in proportion to the sum
 * of magnitudes (so cancellation does not fail a correct kernel); integers and max-like results are exact.
 */
function assertReduction(
  actual: Tensor,
  groupsIn: number[][],
  shape: readonly number[],
  ref: (xs: number[]) => number,
  scale: (xs: number[]) => number,
  what: string,
): void {
  assert.deepEqual([...actual.shape], [...shape], `${what}: shape`);
  const got = values(actual);
  const tol = tolerance(actual.dtype);
  assert.equal(got.length, groupsIn.length, `${what}: numel`);
  for (let i = 0; i < got.length; i++) {
    const want = ref(groupsIn[i]);
    if (Number.isNaN(want) && Number.isNaN(got[i])) continue;
    const bound = tol.atol + tol.rtol * scale(groupsIn[i]);
    if (!(Math.abs(got[i] - want) <= bound)) assert.fail(`${what}: element ${i} is ${got[i]}, expected ${want}`);
  }
}

const absSum = (xs: number[]) => xs.reduce((a, b) => a + Math.abs(b), 0);
const exact = () => 0;

describe('reductions over dim subsets', () => {
  const layouts: Array<[string, (dtype: string) => Tensor]> = [
    ['contiguous', (d) => randomTensor([3, 7, 5], d, next)],
    ['transposed last dims', (d) => nonContiguousTensor([3, 7, 5], d, next)],
    // A permuted view: memory order is dim 2, then 0, then 1.
    ['permuted', (d) => restride(randomTensor([5, 3, 7], d, next), [3, 7, 5], [7, 1, 21], 0)],
    ['broadcast (stride-0)', (d) => restride(randomTensor([3, 1, 5], d, next), [3, 7, 5], [5, 0, 1], 0)],
    ['stepped with a size-1 dim', (d) => restride(randomTensor([3, 1, 34], d, next), [3, 1, 17], [34, 34, 2], 1)],
  ];
  const subsets: Array<number[] | null> = [null, [], [0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2], [-1], [-3, -1]];

  for (const dtype of ['float32', 'float64'] as const) {
    for (const [layout, make] of layouts) {
      it(`sum, mean, amax, amin of a ${layout} ${dtype} tensor over every dim subset, keepdim both ways`, () => {
        const b = bag();
        const x = b.keep(make(dtype));
        for (const dims of subsets) {
          const mask = maskOf(3, dims);
          const g = groups(x, mask);
          for (const keepdim of [false, true]) {
            const shape = reducedShape(x.shape, mask, keepdim);
            const what = `dims ${JSON.stringify(dims)} keepdim ${keepdim}`;
            assertReduction(b.keep(sum(x, dims, keepdim)), g, shape, refSum, absSum, `sum ${what}`);
            const meanRef = (xs: number[]) => refSum(xs) / xs.length;
            assertReduction(
              b.keep(mean(x, dims, keepdim)),
              g,
              shape,
              meanRef,
              (xs) => absSum(xs) / xs.length,
              `mean ${what}`,
            );
            if (dims !== null) {
              assertReduction(b.keep(amax(x, dims, keepdim)), g, shape, refMax, exact, `amax ${what}`);
              assertReduction(b.keep(amin(x, dims, keepdim)), g, shape, refMin, exact, `amin ${what}`);
            }
          }
        }
        b.done();
      });
    }
  }

  it('max.dim, min.dim and argmax / argmin along each dim of strided tensors', () => {
    const b = bag();
    for (const [, make] of layouts) {
      const x = b.keep(make('float32'));
      for (let dim = -3; dim < 3; dim++) {
        const mask = maskOf(3, [dim]);
        const g = groups(x, mask);
        for (const keepdim of [false, true]) {
          const shape = reducedShape(x.shape, mask, keepdim);
          const [mx, ix] = b.keep(max(x, dim, keepdim));
          assertReduction(mx, g, shape, refMax, exact, `max dim ${dim}`);
          assertReduction(ix, g, shape, refArgmax, exact, `max indices dim ${dim}`);
          assert.equal(ix.dtype.name, 'int64');
          const [mn, jx] = b.keep(min(x, dim, keepdim));
          assertReduction(mn, g, shape, refMin, exact, `min dim ${dim}`);
          assertReduction(jx, g, shape, refArgmin, exact, `min indices dim ${dim}`);
          assertReduction(b.keep(argmax(x, dim, keepdim)), g, shape, refArgmax, exact, `argmax dim ${dim}`);
          assertReduction(b.keep(argmin(x, dim, keepdim)), g, shape, refArgmin, exact, `argmin dim ${dim}`);
        }
      }
      // Without a dim the index counts in row-major order of the logical shape, whatever the layout.
      const all = [values(x)];
      assertReduction(b.keep(argmax(x)), all, [], refArgmax, exact, 'argmax');
      assertReduction(b.keep(argmin(x, null, true)), all, [1, 1, 1], refArgmin, exact, 'argmin keepdim');
      assertReduction(b.keep(max(x)), all, [], refMax, exact, 'max');
      assertReduction(b.keep(min(x)), all, [], refMin, exact, 'min');
    }
    b.done();
  });

  it('a long float32 sum stays within a few ulps of the float64 sum (SIMD path with a ragged tail)', () => {
    const b = bag();
    const x = b.keep(randomTensor([100_003], 'float32', next));
    const g = [values(x)];
    const s = b.keep(sum(x));
    const want = refSum(g[0]);
    assert.ok(Math.abs((s.item() as number) - want) <= 1e-6 * absSum(g[0]), `${s.item()} vs ${want}`);
    const xt = b.keep(restride(randomTensor([201, 33], 'float32', next), [33, 201], [1, 33], 0));
    const meanRef = (xs: number[]) => refSum(xs) / xs.length;
    assertReduction(
      b.keep(mean(xt, [1])),
      groups(xt, [false, true]),
      [33],
      meanRef,
      (xs) => absSum(xs) / xs.length,
      'mean',
    );
    b.done();
  });
});

describe('reduction dtypes', () => {
  it('every dtype: result dtypes follow PyTorch (integral and bool sum / prod give int64)', () => {
    const b = bag();
    for (const name of ALL_DTYPES) {
      const x = b.keep(randomTensor([4, 6], name, next));
      const isBool = name === 'bool', isFloat = toDType(name).isFloatingPoint;
      const g1 = groups(x, [false, true]), gAll = [values(x)];
      const tol = isFloat ? absSum : exact;
      const s = b.keep(sum(x, [1]));
      assert.equal(s.dtype.name, isFloat ? name : 'int64', `sum dtype of ${name}`);
      assertReduction(s, g1, [4], refSum, tol, `sum ${name}`);
      const p = b.keep(prod(x, 0));
      assert.equal(p.dtype.name, isFloat ? name : 'int64', `prod dtype of ${name}`);
      const refProd = (xs: number[]) => xs.reduce((a, c) => a * c, 1);
      assertReduction(
        p,
        groups(x, [true, false]),
        [6],
        refProd,
        (xs) => xs.reduce((a, c) => a * Math.abs(c), 1),
        `prod ${name}`,
      );
      const mx = b.keep(max(x));
      assert.equal(mx.dtype.name, name);
      assertReduction(mx, gAll, [], refMax, exact, `max ${name}`);
      assertReduction(b.keep(amin(x, [0])), groups(x, [true, false]), [6], refMin, exact, `amin ${name}`);
      const [values1, indices1] = b.keep(max(x, 1));
      assertReduction(values1, g1, [4], refMax, exact, `max.dim ${name}`);
      assertReduction(indices1, g1, [4], refArgmax, exact, `max.dim indices ${name}`);
      if (isFloat) {
        assertReduction(
          b.keep(mean(x)),
          gAll,
          [],
          (xs) => refSum(xs) / xs.length,
          (xs) => absSum(xs) / xs.length,
          `mean ${name}`,
        );
      } else {
        const typeName = toDType(name).scalarTypeName;
        assert.throws(() => mean(x), {
          message:
            `mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ${typeName}`,
        });
      }
      if (isBool) {
        assert.throws(() => argmax(x), { message: `"argmax_cpu" not implemented for 'Bool'` });
        assert.throws(() => argmin(x, 1), { message: `"argmin_cpu" not implemented for 'Bool'` });
      } else {
        assertReduction(b.keep(argmax(x, 1)), g1, [4], refArgmax, exact, `argmax ${name}`);
        assertReduction(b.keep(argmin(x)), gAll, [], refArgmin, exact, `argmin ${name}`);
      }
    }
    b.done();
  });

  it('the dtype argument converts the input first, as PyTorch does', () => {
    const b = bag();
    // int8 sums wrap in int8: 300 * 100 = 30000 = 48 (mod 256).
    const bytes = b.keep(tensor(new Array(300).fill(100), { dtype: 'int8' }));
    const wrapped = b.keep(sum(bytes, null, false, { dtype: 'int8' }));
    assert.equal(wrapped.dtype.name, 'int8');
    assert.equal(wrapped.item(), 48);
    assert.equal(b.keep(sum(bytes)).item(), 30000);
    // Floats convert to int32 before summing: 1 + 2, not trunc(4.6).
    const f = b.keep(tensor([1.7, 2.9]));
    const asInt = b.keep(sum(f, null, false, { dtype: 'int32' }));
    assert.deepEqual([asInt.dtype.name, asInt.item()], ['int32', 3]);
    const p = b.keep(prod(f, { dtype: 'int32' }));
    assert.deepEqual([p.dtype.name, p.item()], ['int32', 2]);
    // A bool result is any() for sum and all() for prod.
    const mixed = b.keep(tensor([[0, 2], [0, 0]]));
    const any = b.keep(sum(mixed, [1], false, { dtype: 'bool' }));
    assert.deepEqual([any.dtype.name, any.toArray()], ['bool', [true, false]]);
    const all = b.keep(prod(b.keep(tensor([[3, 2], [0, 1]])), 1, false, { dtype: 'bool' }));
    assert.deepEqual(all.toArray(), [true, false]);
    // mean of integers with a floating dtype; a double sum of float32 input.
    const ints = b.keep(tensor([1, 2, 4]));
    const m = b.keep(mean(ints, null, false, { dtype: 'float64' }));
    assert.deepEqual([m.dtype.name, m.item()], ['float64', 7 / 3]);
    const d = b.keep(sum(b.keep(tensor([0.1, 0.2], { dtype: 'float32' })), [0], false, { dtype: 'float64' }));
    assert.deepEqual([d.dtype.name, d.item()], ['float64', Math.fround(0.1) + Math.fround(0.2)]);
    assert.throws(() => mean(f, null, false, { dtype: 'int64' }), {
      message:
        'mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: Long',
    });
    // A single int works where an int list is expected; methods reach the same kernels.
    assert.deepEqual(b.keep(sum(mixed, 1)).toArray(), [2, 0]);
    assert.deepEqual(b.keep(mixed.sum(-2, true)).toArray(), [0, 2]);
    assert.deepEqual(b.keep(mean(b.keep(tensor([[1.5, 2.5], [3.5, 4.5]])), 0)).toArray(), [2.5, 3.5]);
    assert.equal(b.keep(mixed.sum({ dtype: 'float64' })).item(), 2);
    assert.deepEqual(b.keep(mixed.sum([0])).toArray(), [0, 2]);
    assert.deepEqual(b.keep(mixed.argmax(1, true)).shape, [2, 1]);
    b.done();
  });
});

describe('reduction edge cases', () => {
  it('empty reductions: sum 0, prod 1, mean NaN; max-like ops raise PyTorch errors', () => {
    const b = bag();
    const e = b.keep(tensor([], { dtype: 'float32' }));
    const x = b.keep(restride(e, [0, 3], [3, 1], 0));
    assert.deepEqual(b.keep(sum(x, [0])).toArray(), [0, 0, 0]);
    assert.deepEqual(b.keep(prod(x, 0)).toArray(), [1, 1, 1]);
    assert.ok(values(b.keep(mean(x, [0]))).every(Number.isNaN));
    assert.ok(Number.isNaN(b.keep(mean(x)).item() as number));
    assert.equal(b.keep(sum(x)).item(), 0);
    assert.deepEqual(b.keep(sum(x, [1])).shape, [0]);
    const [v, i] = b.keep(max(x, 1));
    assert.deepEqual([v.shape, i.shape], [[0], [0]]);
    assert.deepEqual(b.keep(amax(x, [1], true)).shape, [0, 1]);
    assert.deepEqual(b.keep(argmax(x, 1)).shape, [0]);
    const unspecified =
      "Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.";
    assert.throws(() => max(x), { message: `max(): ${unspecified}` });
    assert.throws(() => min(x), { message: `min(): ${unspecified}` });
    assert.throws(() => amax(x), { message: `amax(): ${unspecified}` });
    assert.throws(() => max(x, 0), {
      name: 'RangeError',
      message: 'max(): Expected reduction dim 0 to have non-zero size.',
    });
    assert.throws(() => amin(x, [1, 0]), { message: 'amin(): Expected reduction dim 0 to have non-zero size.' });
    assert.throws(() => argmax(x), {
      message: 'argmax(): Expected reduction dim to be specified for input.numel() == 0.',
    });
    assert.throws(() => argmin(x, -2), { message: 'argmin(): Expected reduction dim 0 to have non-zero size.' });
    b.done();
  });

  it('NaN propagates through max, min, amax and sum; argmax picks the first NaN', () => {
    const b = bag();
    const x = b.keep(tensor([[1, NaN, 3, NaN], [4, 5, -6, 0.5]]));
    assert.ok(Number.isNaN(b.keep(max(x)).item() as number));
    assert.ok(Number.isNaN(b.keep(min(x)).item() as number));
    assert.deepEqual(values(b.keep(amax(x, [1]))).map(String), ['NaN', '5']);
    assert.deepEqual(values(b.keep(sum(x, [1]))).map(String), ['NaN', '3.5']);
    assert.equal(b.keep(argmax(x)).item(), 1);
    assert.equal(b.keep(argmin(x)).item(), 1);
    const [v, i] = b.keep(max(x, 1));
    assert.deepEqual([values(v).map(String), i.toArray()], [['NaN', '5'], [1, 1]]);
    // Ties resolve to the first occurrence.
    const ties = b.keep(tensor([[2, 7, 7, 1], [3, 3, 3, 3]]));
    assert.deepEqual(b.keep(argmax(ties, 1)).toArray(), [1, 0]);
    const [, j] = b.keep(min(ties, 1));
    assert.deepEqual(j.toArray(), [3, 0]);
    b.done();
  });

  it('dims: negative dims wrap, repeats and out-of-range dims are PyTorch errors, 0-d tensors reduce over dim 0', () => {
    const b = bag();
    const x = b.keep(randomTensor([2, 3], 'float64', next));
    assert.throws(() => sum(x, [0, 0]), { message: 'dim 0 appears multiple times in the list of dims' });
    assert.throws(() => sum(x, [1, -1]), { message: 'dim 1 appears multiple times in the list of dims' });
    assert.throws(() => sum(x, [2]), {
      name: 'RangeError',
      message: 'Dimension out of range (expected to be in range of [-2, 1], but got 2)',
    });
    assert.throws(() => max(x, -3), {
      message: 'Dimension out of range (expected to be in range of [-2, 1], but got -3)',
    });
    assert.deepEqual(b.keep(sum(x, [], true)).shape, [1, 1]);
    const s = b.keep(tensor(3.5));
    assert.equal(b.keep(sum(s, [0])).item(), 3.5);
    assert.deepEqual(b.keep(sum(s, [-1], true)).shape, []);
    const [v, i] = b.keep(max(s, 0));
    assert.deepEqual([v.item(), i.item(), i.shape], [3.5, 0, []]);
    assert.equal(b.keep(argmax(s, 0)).item(), 0);
    assert.throws(() => sum(s, [1]), {
      message: 'Dimension out of range (expected to be in range of [-1, 0], but got 1)',
    });
    b.done();
  });

  it('reads contiguous and transposed inputs in place: the only allocation is the result', () => {
    const b = bag();
    const x = b.keep(randomTensor([64, 48], 'float32', next));
    const xt = b.keep(restride(randomTensor([48, 64], 'float32', next), [64, 48], [1, 64], 0));
    for (
      const [what, input, dims, outBytes] of [
        ['full sum', x, null, 4],
        ['row sums', x, [1], 64 * 4],
        ['column sums', x, [0], 48 * 4],
        ['row sums of a transposed view', xt, [1], 64 * 4],
        ['full sum of a transposed view', xt, [0, 1], 4],
      ] as const
    ) {
      const before = memoryStats().bytes;
      resetPeakStorageBytes();
      b.keep(sum(input, dims as number[] | null));
      assert.equal(memoryStats().peakBytes - before, outBytes, what);
    }
    b.done();
  });

  it('errors leave no tensors behind', () => {
    const b = bag();
    const x = b.keep(randomTensor([3, 4], 'bool', next));
    const start = memoryStats();
    for (let k = 0; k < 3; k++) {
      assert.throws(() => argmax(x));
      assert.throws(() => mean(x));
      assert.throws(() => sum(x, [5]));
    }
    const now = memoryStats();
    assert.deepEqual([now.liveTensors, now.bytes], [start.liveTensors, start.bytes]);
    b.done();
  });
});

describe('reductions on Meta tensors', () => {
  const meta = (shape: number[], dtype: DType | string) => emptyMeta({ shape, dtype: toDType(dtype as DType) });
  it('give the shapes and dtypes the CPU kernels give, and the same errors', () => {
    const b = bag();
    const calls: Array<[string, (t: Tensor) => Tensor | Tensor[]]> = [
      ['sum', (t) => sum(t)],
      ['sum dims keepdim', (t) => sum(t, [0, -1], true)],
      ['sum dtype', (t) => sum(t, [1], false, { dtype: 'float64' })],
      ['prod dim', (t) => prod(t, 1, true)],
      ['mean dtype', (t) => mean(t, [2], false, { dtype: 'float32' })],
      ['max', (t) => max(t)],
      ['max.dim', (t) => max(t, 1)],
      ['min.dim keepdim', (t) => min(t, -1, true)],
      ['amax', (t) => amax(t, [0, 2])],
      ['argmax', (t) => argmax(t)],
      ['argmin dim', (t) => argmin(t, 0, true)],
    ];
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      const cpuInput = b.keep(randomTensor([2, 3, 5], dtype, next));
      const metaInput = b.keep(meta([2, 3, 5], dtype));
      for (const [what, call] of calls) {
        let cpu: Tensor[] | Error, onMeta: Tensor[] | Error;
        try {
          const r = call(cpuInput);
          cpu = b.keep(Array.isArray(r) ? r : [r]);
        } catch (e) {
          cpu = e as Error;
        }
        try {
          const r = call(metaInput);
          onMeta = b.keep(Array.isArray(r) ? r : [r]);
        } catch (e) {
          onMeta = e as Error;
        }
        if (cpu instanceof Error) {
          // argmax of bool fails only in the CPU kernel (PyTorch's Meta function accepts it too).
          if (!(onMeta instanceof Error)) assert.match(cpu.message, /not implemented for 'Bool'/, `${what} ${dtype}`);
          else assert.equal(onMeta.message, cpu.message, `${what} ${dtype}`);
          continue;
        }
        assert.ok(!(onMeta instanceof Error), `${what} ${dtype}: ${onMeta}`);
        assert.deepEqual(
          onMeta.map((t) => [t.shape, t.dtype.name, t.device.type]),
          cpu.map((t) => [t.shape, t.dtype.name, 'meta']),
          `${what} ${dtype}`,
        );
      }
    }
    const empty = b.keep(meta([0, 4], 'float32'));
    assert.throws(() => max(empty, 0), { message: 'max(): Expected reduction dim 0 to have non-zero size.' });
    assert.throws(() => mean(b.keep(meta([2], 'int64'))), /Got: Long/);
    b.done();
  });
});
