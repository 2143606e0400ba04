import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ALL_DTYPES,
  DT,
  type Dtype,
  DTYPE_NAME,
  FLOAT_DTYPES,
  harness,
  INT_DTYPES,
  itemSize,
  mulberry32,
  randomValues,
  roundTo,
  ulpDistance,
  wrapInt,
} from './_kernel_harness.ts';
import { KernelStatus } from '../../core/cpu/exports_elementwise.ts';
import { LinalgStatus, type ReduceKernel } from '../../core/cpu/exports_linalg.ts';

const h = harness();
const rand = mulberry32(0x5eed);

/** [outer, R, inner] cases: rows, columns (narrow and 4 KB+ rows, which take the 8-row path), odd sizes. */
const SHAPES: readonly (readonly [number, number, number])[] = [
  [1, 1, 1],
  [1, 7, 1],
  [3, 17, 1],
  [2, 129, 1],
  [1, 1000, 1],
  [2, 33, 5],
  [1, 65, 17],
  [3, 7, 33],
  [1, 3, 65],
  [1, 24, 1030],
  [1, 9, 600],
];

/** Random values as they read back once stored as `dtype` (integers wrapped to the type, no -0). */
function randomStored(dtype: Dtype, n: number, lo = -10, hi = 10): number[] {
  const values = randomValues(rand, dtype, n, lo, hi);
  return FLOAT_DTYPES.includes(dtype) ? values : values.map((v) => wrapInt(dtype, v));
}

type SumLike = 'sum' | 'prod' | 'mean';
type Extreme = 'max' | 'min';

/** f64 reference of op over R for every (o, j), on the stored values (numbers; exact for the test's ranges). */
function reference(
  values: readonly number[],
  [outer, R, inner]: readonly [number, number, number],
  op: SumLike | Extreme,
): number[] {
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      let acc = op === 'prod' ? 1 : op === 'max' ? -Infinity : op === 'min' ? Infinity : 0;
      for (let r = 0; r < R; r++) {
        const v = values[(o * R + r) * inner + j];
        if (op === 'sum' || op === 'mean') acc += v;
        else if (op === 'prod') acc *= v;
        else if (Number.isNaN(v) || Number.isNaN(acc)) acc = NaN;
        else acc = op === 'max' ? Math.max(acc, v) : Math.min(acc, v);
      }
      out.push(op === 'mean' ? acc / R : acc);
    }
  }
  return out;
}

/** Exact integer sum / prod wrapped to 64 bits (or to the dtype when it is its own output). */
function integerReference(
  values: readonly number[],
  [outer, R, inner]: readonly [number, number, number],
  op: 'sum' | 'prod',
  outDtype: Dtype,
): number[] {
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      let acc = op === 'prod' ? 1n : 0n;
      for (let r = 0; r < R; r++) {
        const v = BigInt(values[(o * R + r) * inner + j]);
        acc = BigInt.asIntN(64, op === 'sum' ? acc + v : acc * v);
      }
      out.push(wrapInt(outDtype, acc));
    }
  }
  return out;
}

function kernel(op: SumLike | Extreme | 'argmax' | 'argmin'): ReduceKernel {
  return h.k[`reduce_${op}`];
}

/** Runs a reduction, returning the status and the outputs read back as `outDtype`. */
function run(
  op: SumLike | Extreme | 'argmax' | 'argmin',
  dtype: Dtype,
  outDtype: Dtype,
  values: readonly number[],
  shape: readonly [number, number, number],
): { status: number; out: number[] } {
  h.reset();
  const [outer, R, inner] = shape;
  const a = h.put(dtype, values);
  const out = h.alloc(outer * inner * itemSize(outDtype));
  const status = kernel(op)(dtype, outDtype, out, a, outer, R, inner);
  return { status, out: h.get(outDtype, out, outer * inner) };
}

function inputFor(op: SumLike | Extreme, dtype: Dtype, n: number): number[] {
  if (op === 'prod') {
    return FLOAT_DTYPES.includes(dtype) ? randomStored(dtype, n, 0.6, 1.5) : randomStored(dtype, n, -3, 3)
      .map((v) => (dtype === DT.u8 ? v % 4 : v));
  }
  return randomStored(dtype, n);
}

/** Tolerance in ulps of the output dtype for a float sum-like result. */
function assertClose(
  dtype: Dtype,
  got: readonly number[],
  want: readonly number[],
  scale: readonly number[],
  what: string,
) {
  for (let i = 0; i < want.length; i++) {
    if (dtype === DT.f32 || dtype === DT.f64) {
      const eps = dtype === DT.f32 ? 2 ** -23 : 2 ** -52;
      const tol = 8 * eps * Math.max(scale[i], Math.abs(want[i]), 1e-30);
      assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]} vs ${want[i]} (tol ${tol})`);
    } else {
      assert.ok(ulpDistance(dtype, got[i], roundTo(dtype, want[i])) <= 1, `${what}[${i}]: ${got[i]} vs ${want[i]}`);
    }
  }
}

describe('reduce_sum / reduce_prod / reduce_mean', () => {
  for (const op of ['sum', 'prod', 'mean'] as const) {
    it(`${op} matches an f64 reference for every float dtype and shape`, () => {
      for (const dtype of FLOAT_DTYPES) {
        for (const shape of SHAPES) {
          const n = shape[0] * shape[1] * shape[2];
          const values = inputFor(op, dtype, n);
          const { status, out } = run(op, dtype, dtype, values, shape);
          assert.equal(status, KernelStatus.ok);
          const scale = op === 'prod' ? reference(values, shape, 'prod') : reference(values.map(Math.abs), shape, op);
          assertClose(dtype, out, reference(values, shape, op), scale, `${op} ${DTYPE_NAME[dtype]} [${shape}]`);
        }
      }
    });
  }

  for (const op of ['sum', 'prod'] as const) {
    it(`integer and Bool ${op} is exact in int64, or wraps in the input type when asked`, () => {
      for (const dtype of [...INT_DTYPES, DT.bool]) {
        for (const shape of SHAPES) {
          const n = shape[0] * shape[1] * shape[2];
          const values = op === 'sum' && dtype !== DT.bool ? randomStored(dtype, n, -1e4, 1e4) : inputFor(op, dtype, n);
          const wide = run(op, dtype, DT.i64, values, shape);
          assert.equal(wide.status, KernelStatus.ok);
          assert.deepEqual(
            wide.out,
            integerReference(values, shape, op, DT.i64),
            `${op} ${DTYPE_NAME[dtype]} [${shape}]`,
          );
          if (dtype === DT.bool) continue;
          const own = run(op, dtype, dtype, values, shape);
          assert.equal(own.status, KernelStatus.ok);
          assert.deepEqual(own.out, integerReference(values, shape, op, dtype), `${op} ${DTYPE_NAME[dtype]} -> itself`);
        }
      }
    });
  }

  it('an empty reduction gives the identity: sum 0, prod 1, mean NaN', () => {
    for (const dtype of [DT.f32, DT.f16, DT.f64]) {
      assert.deepEqual(run('sum', dtype, dtype, [], [2, 0, 3]).out, [0, 0, 0, 0, 0, 0]);
      assert.deepEqual(run('prod', dtype, dtype, [], [2, 0, 1]).out, [1, 1]);
      assert.ok(run('mean', dtype, dtype, [], [1, 0, 1]).out.every(Number.isNaN));
    }
    assert.deepEqual(run('sum', DT.i32, DT.i64, [], [1, 0, 2]).out, [0, 0]);
  });

  it('propagates NaN and infinities like IEEE addition', () => {
    const values = [1, 2, NaN, 4, 5, 6, 7, 8, 9];
    assert.ok(Number.isNaN(run('sum', DT.f32, DT.f32, values, [1, 9, 1]).out[0]));
    assert.deepEqual(run('sum', DT.f32, DT.f32, [1, Infinity, 2], [1, 3, 1]).out, [Infinity]);
    assert.ok(Number.isNaN(run('sum', DT.f64, DT.f64, [Infinity, -Infinity], [1, 2, 1]).out[0]));
    const columns = run('sum', DT.f32, DT.f32, [1, NaN, 3, 4, 5, 6], [1, 2, 3]).out;
    assert.deepEqual([columns[0], Number.isNaN(columns[1]), columns[2]], [5, true, 9]);
  });

  it('keeps a 1e6-element f32 sum within a few ulps of the f64 sum (cascade)', () => {
    for (const shape of [[1, 1_000_000, 1], [1, 250_000, 4]] as const) {
      const n = shape[0] * shape[1] * shape[2];
      const values = Array.from({ length: n }, () => Math.fround(1 + rand()));
      const { out } = run('sum', DT.f32, DT.f32, values, shape);
      const want = reference(values, shape, 'sum');
      for (let j = 0; j < out.length; j++) {
        // A single running f32 accumulator is off by ~1e4 ulps here.
        assert.ok(ulpDistance(DT.f32, out[j], want[j]) <= 4, `[${shape}] ${out[j]} vs ${want[j]}`);
      }
    }
  });

  it('rejects what PyTorch rejects', () => {
    assert.equal(run('mean', DT.i32, DT.i32, [1, 2], [1, 2, 1]).status, KernelStatus.unsupported);
    assert.equal(run('mean', DT.bool, DT.bool, [1, 0], [1, 2, 1]).status, KernelStatus.unsupported);
    assert.equal(run('sum', DT.f32, DT.f64, [1, 2], [1, 2, 1]).status, KernelStatus.badArgument);
    assert.equal(run('sum', DT.bool, DT.bool, [1, 0], [1, 2, 1]).status, KernelStatus.badArgument);
    assert.equal(run('sum', DT.i16, DT.i32, [1, 2], [1, 2, 1]).status, KernelStatus.badArgument);
    assert.equal(h.k.reduce_sum(9, 9, h.alloc(8), h.alloc(8), 1, 1, 1), KernelStatus.unsupported);
  });
});

describe('reduce_max / reduce_min', () => {
  it('match the reference exactly for every dtype and shape', () => {
    for (const op of ['max', 'min'] as const) {
      for (const dtype of ALL_DTYPES) {
        for (const shape of SHAPES) {
          const values = randomStored(dtype, shape[0] * shape[1] * shape[2], -1e4, 1e4);
          const { status, out } = run(op, dtype, dtype, values, shape);
          assert.equal(status, KernelStatus.ok);
          assert.deepEqual(out, reference(values, shape, op), `${op} ${DTYPE_NAME[dtype]} [${shape}]`);
        }
      }
    }
  });

  it('handles the extremes of each integer type (no identity leaks into the result)', () => {
    assert.deepEqual(run('max', DT.i8, DT.i8, [-128, -128, -128], [1, 3, 1]).out, [-128]);
    assert.deepEqual(run('min', DT.u8, DT.u8, [255, 255], [1, 2, 1]).out, [255]);
    assert.deepEqual(run('max', DT.i64, DT.i64, [-5, -7, -6], [1, 3, 1]).out, [-5]);
    assert.deepEqual(run('min', DT.i64, DT.i64, [5, 3, 4, 9, -2, 8], [1, 3, 2]).out, [-2, 3]);
    assert.deepEqual(run('max', DT.f32, DT.f32, [-Infinity, -Infinity], [1, 2, 1]).out, [-Infinity]);
  });

  it('propagate NaN in rows and columns, in every float dtype', () => {
    for (const dtype of FLOAT_DTYPES) {
      for (const shape of [[1, 37, 1], [1, 37, 9], [2, 5, 1100]] as const) {
        const n = shape[0] * shape[1] * shape[2];
        const values = randomStored(dtype, n);
        for (let k = 0; k < 3; k++) values[Math.floor(rand() * n)] = NaN;
        for (const op of ['max', 'min'] as const) {
          const want = reference(values, shape, op);
          const { out } = run(op, dtype, dtype, values, shape);
          assert.deepEqual(out.map(Number.isNaN), want.map(Number.isNaN), `${op} ${DTYPE_NAME[dtype]} [${shape}]`);
          assert.deepEqual(out.filter((v) => !Number.isNaN(v)), want.filter((v) => !Number.isNaN(v)));
        }
      }
    }
  });

  it('report an empty reduction instead of inventing a value', () => {
    for (const op of ['max', 'min', 'argmax', 'argmin'] as const) {
      assert.equal(
        run(op, DT.f32, op.startsWith('arg') ? DT.i64 : DT.f32, [], [2, 0, 1]).status,
        LinalgStatus.emptyReduction,
      );
    }
    assert.equal(run('max', DT.f32, DT.f32, [], [0, 0, 1]).status, KernelStatus.ok, 'nothing to compute');
  });
});

/** First index of the extreme (NaN wins) per (o, j). */
function argReference(
  values: readonly number[],
  [outer, R, inner]: readonly [number, number, number],
  op: 'max' | 'min',
) {
  const out: number[] = [];
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      let best = 0;
      for (let r = 1; r < R; r++) {
        const v = values[(o * R + r) * inner + j];
        const b = values[(o * R + best) * inner + j];
        if (Number.isNaN(b)) break;
        if (Number.isNaN(v) || (op === 'max' ? v > b : v < b)) best = r;
      }
      out.push(best);
    }
  }
  return out;
}

describe('reduce_argmax / reduce_argmin / reduce_*_with_indices', () => {
  it('return the first index of the extreme, with ties and NaN, for every dtype', () => {
    for (const dtype of ALL_DTYPES) {
      for (const shape of SHAPES) {
        const n = shape[0] * shape[1] * shape[2];
        // A narrow range makes ties common; a few NaNs in float inputs.
        const values = randomStored(dtype, n, -3, 3);
        if (FLOAT_DTYPES.includes(dtype) && n > 20) values[Math.floor(rand() * n)] = NaN;
        for (const op of ['max', 'min'] as const) {
          const want = argReference(values, shape, op);
          const what = `arg${op} ${DTYPE_NAME[dtype]} [${shape}]`;
          if (dtype !== DT.bool) {
            const arg = run(`arg${op}`, dtype, DT.i64, values, shape);
            assert.equal(arg.status, KernelStatus.ok, what);
            assert.deepEqual(arg.out, want, what);
          }
          h.reset();
          const [outer, R, inner] = shape;
          const a = h.put(dtype, values);
          const vals = h.alloc(outer * inner * itemSize(dtype));
          const idx = h.alloc(outer * inner * 8);
          const status = h.k[`reduce_${op}_with_indices`](dtype, vals, idx, a, outer, R, inner);
          assert.equal(status, KernelStatus.ok, what);
          const indices = h.get(DT.i64, idx, outer * inner);
          assert.deepEqual(indices, want, `${what} with values`);
          const gotValues = h.get(dtype, vals, outer * inner);
          const wantValues = indices.map((r, k) => values[(Math.floor(k / inner) * R + r) * inner + (k % inner)]);
          assert.deepEqual(gotValues, wantValues, `${what} values`);
        }
      }
    }
  });

  it('reject Bool for argmax (PyTorch: "argmax_cpu" not implemented for \'Bool\') and non-Long outputs', () => {
    assert.equal(run('argmax', DT.bool, DT.i64, [1, 0], [1, 2, 1]).status, KernelStatus.unsupported);
    assert.equal(run('argmin', DT.f32, DT.i32, [1, 0], [1, 2, 1]).status, KernelStatus.badArgument);
    assert.equal(run('max', DT.f32, DT.f64, [1, 0], [1, 2, 1]).status, KernelStatus.badArgument);
  });
});
