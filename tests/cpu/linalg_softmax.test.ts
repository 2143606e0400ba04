import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DT,
  type Dtype,
  DTYPE_NAME,
  FLOAT_DTYPES,
  harness,
  itemSize,
  mulberry32,
  randomValues,
  roundTo,
  ulpDistance,
} from './_kernel_harness.ts';
import { KernelStatus } from '../../core/cpu/exports_elementwise.ts';
import { LinalgStatus, Reduction } from '../../core/cpu/exports_linalg.ts';

const h = harness();
const rand = mulberry32(0x50f7);

type Shape = readonly [number, number, number];

const SHAPES: readonly Shape[] = [
  [1, 1, 1],
  [3, 7, 1],
  [2, 17, 1],
  [1, 129, 1],
  [2, 1000, 1],
  [2, 33, 5],
  [1, 7, 17],
  [3, 65, 3],
  [1, 5, 33],
];

/**
 * f64 softmax / log_softmax over R of [outer, R, inner], with a per-element error bound for a computation in a
 * type of unit roundoff `eps`: x - m is rounded (relative error eps |x - m| in exp's argument) and so is log s.
 */
function softmaxReference(x: readonly number[], [outer, R, inner]: Shape, log: boolean, eps = 0) {
  const want = new Array<number>(x.length);
  const tol = new Array<number>(x.length);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      const at = (r: number) => (o * R + r) * inner + j;
      let m = -Infinity;
      for (let r = 0; r < R; r++) m = Number.isNaN(x[at(r)]) || Number.isNaN(m) ? NaN : Math.max(m, x[at(r)]);
      let s = 0;
      for (let r = 0; r < R; r++) s += Math.exp(x[at(r)] - m);
      for (let r = 0; r < R; r++) {
        const d = Math.abs(x[at(r)] - m);
        want[at(r)] = log ? x[at(r)] - m - Math.log(s) : Math.exp(x[at(r)] - m) / s;
        tol[at(r)] = log ? 4 * eps * (d + Math.abs(Math.log(s)) + 1) : 4 * eps * (d + 4) * want[at(r)];
      }
    }
  }
  return { want, tol };
}

/**
 * Close in the dtype's terms: within `tol` (f32 / f64), or within `ulps` of the rounded reference (f16 / bf16,
 * whose f32 computation is far more precise than their rounding), or below an underflow floor.
 */
function assertClose(
  dtype: Dtype,
  got: readonly number[],
  want: readonly number[],
  what: string,
  ulps = 1,
  tol?: readonly number[],
) {
  const floor = dtype === DT.f64 ? 1e-300 : dtype === DT.f16 ? 1e-7 : 1e-37;
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i])) {
      assert.ok(Number.isNaN(got[i]), `${what} [${i}]: ${got[i]} vs NaN`);
      continue;
    }
    const w = roundTo(dtype, want[i]);
    const ok = got[i] === w || Math.abs(got[i] - w) <= floor || ulpDistance(dtype, got[i], w) <= ulps ||
      (tol !== undefined && Math.abs(got[i] - want[i]) <= tol[i]);
    assert.ok(ok, `${what} [${i}]: ${got[i]} vs ${want[i]}`);
  }
}

/** The unit roundoff of a float dtype. */
function epsOf(dtype: Dtype): number {
  return dtype === DT.f64 ? 2 ** -53 : dtype === DT.f32 ? 2 ** -24 : dtype === DT.f16 ? 2 ** -11 : 2 ** -8;
}

/** Checks softmax / log_softmax output against the reference with the error model above. */
function assertSoftmax(
  dtype: Dtype,
  got: readonly number[],
  x: readonly number[],
  shape: Shape,
  log: boolean,
  what: string,
) {
  // f16 / bf16 compute in f32, so their bound is f32's; their rounding is covered by the 1-ulp allowance.
  const { want, tol } = softmaxReference(x, shape, log, epsOf(dtype === DT.f64 ? DT.f64 : DT.f32));
  assertClose(dtype, got, want, what, 1, tol);
}

function runSoftmax(dtype: Dtype, x: readonly number[], shape: Shape, log: boolean, inPlace = false): number[] {
  h.reset();
  const a = h.put(dtype, x);
  const out = inPlace ? a : h.alloc(x.length * itemSize(dtype));
  assert.equal(h.k.softmax(dtype, out, a, shape[0], shape[1], shape[2], log ? 1 : 0), KernelStatus.ok);
  return h.get(dtype, out, x.length);
}

describe('softmax / log_softmax', () => {
  for (const log of [false, true]) {
    const name = log ? 'log_softmax' : 'softmax';

    it(`${name} matches the f64 reference for every float dtype, rows and columns`, () => {
      for (const dtype of FLOAT_DTYPES) {
        for (const shape of SHAPES) {
          const x = randomValues(rand, dtype, shape[0] * shape[1] * shape[2], -8, 8);
          assertSoftmax(
            dtype,
            runSoftmax(dtype, x, shape, log),
            x,
            shape,
            log,
            `${name} ${DTYPE_NAME[dtype]} [${shape}]`,
          );
        }
      }
    });

    it(`${name} is stable for large-magnitude inputs`, () => {
      for (const dtype of [DT.f32, DT.f64]) {
        for (const shape of [[2, 100, 1], [1, 50, 7]] as const) {
          const x = randomValues(rand, dtype, shape[0] * shape[1] * shape[2], -1e4, 1e4);
          assertSoftmax(dtype, runSoftmax(dtype, x, shape, log), x, shape, log, `${name} ${DTYPE_NAME[dtype]} large`);
        }
        const shifted = runSoftmax(dtype, [1000, 1001, 1002], [1, 3, 1], log);
        assertSoftmax(dtype, shifted, [0, 1, 2], [1, 3, 1], log, `${name} shift invariance`);
      }
    });

    it(`${name} works in place`, () => {
      const x = randomValues(rand, DT.f32, 2 * 37 * 3, -5, 5);
      for (const shape of [[6, 37, 1], [2, 37, 3]] as const) {
        assertSoftmax(DT.f32, runSoftmax(DT.f32, x, shape, log, true), x, shape, log, `${name} in place`);
      }
    });
  }

  it('rows sum to 1', () => {
    for (const dtype of [DT.f32, DT.f64]) {
      const shape: Shape = [4, 1001, 1];
      const y = runSoftmax(dtype, randomValues(rand, dtype, 4 * 1001, -20, 20), shape, false);
      for (let o = 0; o < 4; o++) {
        const s = y.slice(o * 1001, (o + 1) * 1001).reduce((p, q) => p + q, 0);
        assert.ok(Math.abs(s - 1) < (dtype === DT.f32 ? 1e-5 : 1e-13), `${DTYPE_NAME[dtype]} row ${o} sums to ${s}`);
      }
    }
  });

  it('gives exact zeros (and -inf logs) for -inf logits and NaN rows for NaN inputs', () => {
    const x = [0, -Infinity, 1, -Infinity, 2, 3, -Infinity, 0, 0];
    const y = runSoftmax(DT.f32, x, [1, 9, 1], false);
    assert.deepEqual([y[1], y[3], y[6]], [0, 0, 0]);
    assertSoftmax(DT.f32, y, x, [1, 9, 1], false, 'masked softmax');
    const logY = runSoftmax(DT.f32, x, [1, 9, 1], true);
    assert.deepEqual([logY[1], logY[3], logY[6]], [-Infinity, -Infinity, -Infinity]);
    const withNaN = runSoftmax(DT.f32, [1, 2, NaN, 4, 5, 6, 7, 8, 9, 10], [2, 5, 1], false);
    assert.ok(withNaN.slice(0, 5).every(Number.isNaN), 'the row holding NaN is NaN');
    assert.ok(withNaN.slice(5).every((v) => !Number.isNaN(v)), 'the other row is not');
  });

  it('the plain SIMD build (unfused exp polynomial) agrees too', () => {
    const simd = harness({ flavor: 'simd' });
    for (const log of [false, true]) {
      for (const shape of [[3, 77, 1], [1, 9, 13]] as const) {
        const n = shape[0] * shape[1] * shape[2];
        const x = randomValues(rand, DT.f32, n, -10, 10);
        const a = simd.put(DT.f32, x);
        const out = simd.alloc(n * 4);
        assert.equal(simd.k.softmax(DT.f32, out, a, shape[0], shape[1], shape[2], log ? 1 : 0), KernelStatus.ok);
        assertSoftmax(DT.f32, simd.get(DT.f32, out, n), x, shape, log, `simd build log=${log} [${shape}]`);
      }
    }
  });

  it('rejects integer and Bool inputs', () => {
    for (const dtype of [DT.i32, DT.i64, DT.u8, DT.bool]) {
      assert.equal(h.k.softmax(dtype, 0, 0, 1, 1, 1, 0), KernelStatus.unsupported);
      assert.equal(h.k.softmax_backward(dtype, 0, 0, 0, 1, 1, 1, 0), KernelStatus.unsupported);
    }
  });
});

describe('softmax_backward', () => {
  function backwardReference(g: readonly number[], y: readonly number[], [outer, R, inner]: Shape, log: boolean) {
    const out = new Array<number>(g.length);
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        const at = (r: number) => (o * R + r) * inner + j;
        let s = 0;
        for (let r = 0; r < R; r++) s += log ? g[at(r)] : g[at(r)] * y[at(r)];
        for (let r = 0; r < R; r++) out[at(r)] = log ? g[at(r)] - Math.exp(y[at(r)]) * s : y[at(r)] * (g[at(r)] - s);
      }
    }
    return out;
  }

  for (const log of [false, true]) {
    it(`${log ? 'log_softmax' : 'softmax'} backward matches the f64 formula for every float dtype`, () => {
      for (const dtype of FLOAT_DTYPES) {
        for (const shape of SHAPES) {
          const n = shape[0] * shape[1] * shape[2];
          h.reset();
          const x = randomValues(rand, dtype, n, -4, 4);
          const y = softmaxReference(x, shape, log).want.map((v) => roundTo(dtype, v));
          const g = randomValues(rand, dtype, n, -1, 1);
          const [gp, yp, gi] = [h.put(dtype, g), h.put(dtype, y), h.alloc(n * itemSize(dtype))];
          assert.equal(
            h.k.softmax_backward(dtype, gi, gp, yp, shape[0], shape[1], shape[2], log ? 1 : 0),
            KernelStatus.ok,
          );
          const want = backwardReference(g, y, shape, log);
          const got = h.get(dtype, gi, n);
          // Differences of nearly equal terms: bound the error by the terms' magnitude, not the result's.
          const eps = dtype === DT.f64 ? 2 ** -52 : dtype === DT.f32 ? 2 ** -23 : dtype === DT.f16 ? 2 ** -10 : 2 ** -7;
          for (let i = 0; i < n; i++) {
            const tol = 4 * eps * (Math.abs(want[i]) + Math.abs(g[i]) + 1) *
              (dtype === DT.f32 || dtype === DT.f64 ? Math.sqrt(shape[1]) : 2);
            assert.ok(
              Math.abs(got[i] - want[i]) <= tol,
              `${DTYPE_NAME[dtype]} [${shape}] [${i}]: ${got[i]} vs ${want[i]}`,
            );
          }
        }
      }
    });
  }
});

describe('nll_loss', () => {
  const N = 13;
  const C = 7;

  /** PyTorch's nll_loss in f64. */
  function nllReference(
    logp: readonly number[],
    target: readonly number[],
    weight: readonly number[] | null,
    reduction: number,
    ignore: number,
  ) {
    const perSample: number[] = [];
    let loss = 0;
    let total = 0;
    for (let n = 0; n < target.length; n++) {
      const t = target[n];
      if (t === ignore) {
        perSample.push(0);
        continue;
      }
      const w = weight ? weight[t] : 1;
      perSample.push(-logp[n * C + t] * w);
      loss -= logp[n * C + t] * w;
      total += w;
    }
    if (reduction === Reduction.none) return { out: perSample, total: 0 };
    return { out: [reduction === Reduction.mean ? loss / total : loss], total };
  }

  function setup(dtype: Dtype, target: readonly number[], withWeight: boolean) {
    h.reset();
    const logp = softmaxReference(randomValues(rand, DT.f64, target.length * C, -3, 3), [target.length, C, 1], true)
      .want.map((v) => roundTo(dtype, v));
    const weight = withWeight ? randomValues(rand, dtype, C, 0.1, 2) : null;
    return {
      logp,
      weight,
      logpPtr: h.put(dtype, logp),
      targetPtr: h.put(DT.i64, target),
      weightPtr: weight ? h.put(dtype, weight) : 0,
    };
  }

  /** Random classes, with every fifth sample set to the ignored index. */
  const targets = (ignore: number) =>
    Array.from({ length: N }, (_, n) => (n % 5 === 4 ? ignore : Math.floor(rand() * C)));

  it('forward and backward match PyTorch for none / mean / sum, with and without weights, ignoring targets', () => {
    for (const dtype of FLOAT_DTYPES) {
      for (const withWeight of [false, true]) {
        for (const reduction of [Reduction.none, Reduction.mean, Reduction.sum]) {
          for (const ignore of [-100, 2]) {
            const target = targets(ignore);
            const s = setup(dtype, target, withWeight);
            const what = `${DTYPE_NAME[dtype]} weight=${withWeight} reduction=${reduction} ignore=${ignore}`;
            const outLen = reduction === Reduction.none ? N : 1;
            const out = h.alloc(outLen * itemSize(dtype));
            const total = h.alloc(8);
            const status = h.k.nll_loss_forward(
              dtype,
              out,
              total,
              s.logpPtr,
              s.targetPtr,
              s.weightPtr,
              N,
              C,
              reduction,
              BigInt(ignore),
            );
            assert.equal(status, KernelStatus.ok, what);
            const want = nllReference(s.logp, target, s.weight, reduction, ignore);
            assertClose(dtype, h.get(dtype, out, outLen), want.out, `forward ${what}`, 2);
            assertClose(dtype, h.get(dtype, total, 1), [want.total], `total weight ${what}`, 2);

            // Backward: zeros everywhere but -w[t] * g at the non-ignored targets.
            const gradOut = h.put(
              dtype,
              reduction === Reduction.none ? randomValues(rand, dtype, N, -1, 1) : [roundTo(dtype, 1.5)],
            );
            const g = h.get(dtype, gradOut, outLen);
            const gradIn = h.put(dtype, new Array<number>(N * C).fill(NaN));
            const bStatus = h.k.nll_loss_backward(
              dtype,
              gradIn,
              gradOut,
              s.targetPtr,
              s.weightPtr,
              total,
              N,
              C,
              reduction,
              BigInt(ignore),
            );
            assert.equal(bStatus, KernelStatus.ok, what);
            const totalWeight = h.get(dtype, total, 1)[0];
            const wantGrad = new Array<number>(N * C).fill(0);
            for (let n = 0; n < N; n++) {
              if (target[n] === ignore) continue;
              const gn = reduction === Reduction.none ? g[n] : reduction === Reduction.mean ? g[0] / totalWeight : g[0];
              wantGrad[n * C + target[n]] = -(s.weight ? s.weight[target[n]] : 1) * gn;
            }
            assertClose(dtype, h.get(dtype, gradIn, N * C), wantGrad, `backward ${what}`, 2);
          }
        }
      }
    }
  });

  it('mean over all-ignored or empty batches is NaN, sum is 0', () => {
    const s = setup(DT.f32, [-100, -100], false);
    const out = h.alloc(4);
    const total = h.alloc(4);
    assert.equal(
      h.k.nll_loss_forward(DT.f32, out, total, s.logpPtr, s.targetPtr, 0, 2, C, Reduction.mean, -100n),
      KernelStatus.ok,
    );
    assert.ok(Number.isNaN(h.f32(out, 1)[0]));
    assert.equal(h.f32(total, 1)[0], 0);
    assert.equal(
      h.k.nll_loss_forward(DT.f32, out, total, s.logpPtr, s.targetPtr, 0, 0, C, Reduction.mean, -100n),
      KernelStatus.ok,
    );
    assert.ok(Number.isNaN(h.f32(out, 1)[0]));
    assert.equal(
      h.k.nll_loss_forward(DT.f32, out, total, s.logpPtr, s.targetPtr, 0, 0, C, Reduction.sum, -100n),
      KernelStatus.ok,
    );
    assert.equal(h.f32(out, 1)[0], 0);
  });

  it('reports an out-of-bounds target (and writes nothing), and rejects bad arguments', () => {
    for (const bad of [7, -1, 100]) {
      const s = setup(DT.f32, [0, 3, bad, 1], false);
      const out = h.put(DT.f32, [42, 42, 42, 42]);
      const status = h.k.nll_loss_forward(DT.f32, out, 0, s.logpPtr, s.targetPtr, 0, 4, C, Reduction.none, -100n);
      assert.equal(status, LinalgStatus.targetOutOfBounds, `target ${bad}`);
      assert.deepEqual(h.get(DT.f32, out, 4), [42, 42, 42, 42]);
      const grad = h.alloc(4 * C * 4);
      const bStatus = h.k.nll_loss_backward(DT.f32, grad, out, s.targetPtr, 0, 0, 4, C, Reduction.none, -100n);
      assert.equal(bStatus, LinalgStatus.targetOutOfBounds);
    }
    assert.equal(h.k.nll_loss_forward(DT.i64, 0, 0, 0, 0, 0, 0, C, Reduction.sum, -100n), KernelStatus.unsupported);
    assert.equal(h.k.nll_loss_forward(DT.f32, 0, 0, 0, 0, 0, 0, C, 3, -100n), KernelStatus.badArgument);
  });
});
