import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DT,
  type Dtype,
  DTYPE_NAME,
  FLOAT_DTYPES,
  harness,
  INT_DTYPES,
  itemSize,
  type KernelHarness,
  mulberry32,
  randomValues,
  roundTo,
  ulpDistance,
  wrapInt,
} from './_kernel_harness.ts';
import { KernelStatus } from '../../core/cpu/exports_elementwise.ts';

const rand = mulberry32(0x6e44);

/** How a logical rows x cols operand sits in memory. */
type Layout = 'row' | 'col' | 'padded' | 'stepped';
const LAYOUTS: readonly Layout[] = ['row', 'col', 'padded', 'stepped'];

/** A placed operand: its pointer, element strides and logical row-major values. */
interface Operand {
  ptr: number;
  sRow: number;
  sCol: number;
  values: number[];
}

function strides(layout: Layout, rows: number, cols: number): [number, number] {
  switch (layout) {
    case 'row':
      return [cols, 1];
    case 'col':
      return [1, rows]; // a transposed view of a contiguous cols x rows matrix
    case 'padded':
      return [cols + 3, 1];
    case 'stepped':
      return [2 * cols + 1, 2];
  }
}

/**
 * Allocates and fills an operand. Elements between the strided ones are NaN (floats), so a kernel that reads
 * outside the view poisons its result.
 */
function place(h: KernelHarness, dtype: Dtype, rows: number, cols: number, layout: Layout, values?: number[]): Operand {
  const [sRow, sCol] = strides(layout, rows, cols);
  const span = rows === 0 || cols === 0 ? 1 : (rows - 1) * sRow + (cols - 1) * sCol + 1;
  const logical = values ??
    randomValues(rand, dtype, rows * cols, -2, 2).map((v) => (FLOAT_DTYPES.includes(dtype) ? v : wrapInt(dtype, v)));
  const filler = FLOAT_DTYPES.includes(dtype) ? NaN : 77;
  const storage = new Array<number>(span).fill(filler);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) storage[i * sRow + j * sCol] = logical[i * cols + j];
  return { ptr: h.put(dtype, storage), sRow, sCol, values: logical };
}

function read(h: KernelHarness, dtype: Dtype, op: Operand, rows: number, cols: number): number[] {
  const span = rows === 0 || cols === 0 ? 0 : (rows - 1) * op.sRow + (cols - 1) * op.sCol + 1;
  const all = h.get(dtype, op.ptr, span);
  const out: number[] = [];
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out.push(all[i * op.sRow + j * op.sCol]);
  return out;
}

/** f64 reference, plus the magnitude sum(|a||b|) + |beta c| per entry for error bounds. */
function reference(
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: number[],
  B: number[],
  beta: number,
  C: number[],
) {
  const want: number[] = [];
  const scale: number[] = [];
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      let mag = 0;
      for (let k = 0; k < K; k++) {
        s += A[i * K + k] * B[k * N + j];
        mag += Math.abs(A[i * K + k] * B[k * N + j]);
      }
      const c = beta === 0 ? 0 : beta * C[i * N + j];
      want.push(alpha * s + c);
      scale.push(Math.abs(alpha) * mag + Math.abs(c));
    }
  }
  return { want, scale };
}

/** Exact integer reference: alpha * sum + beta * c, wrapped to the dtype (the test values keep it below 2^53). */
function integerReference(
  dtype: Dtype,
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: number[],
  B: number[],
  beta: number,
  C: number[],
) {
  const out: number[] = [];
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += A[i * K + k] * B[k * N + j];
      out.push(wrapInt(dtype, alpha * s + (beta === 0 ? 0 : beta * C[i * N + j])));
    }
  }
  return out;
}

interface Case {
  M: number;
  N: number;
  K: number;
  alpha?: number;
  beta?: number;
  layoutA?: Layout;
  layoutB?: Layout;
  layoutC?: Layout;
  /** Initial C: 'nan' (only with beta = 0), or random. */
  c?: 'nan' | 'random';
}

/** Runs one product through gemm_f32 / gemm_f64 / gemm_generic and checks it against the reference. */
function check(h: KernelHarness, dtype: Dtype, entry: 'gemm_f32' | 'gemm_f64' | 'gemm_generic', c: Case): void {
  h.reset();
  const { M, N, K } = c;
  const alpha = c.alpha ?? 1;
  const beta = c.beta ?? 0;
  const A = place(h, dtype, M, K, c.layoutA ?? 'row');
  const B = place(h, dtype, K, N, c.layoutB ?? 'row');
  const c0 = c.c === 'nan' ? new Array<number>(M * N).fill(NaN) : undefined;
  const C = place(h, dtype, M, N, c.layoutC ?? 'row', c0);
  const work = h.alloc(h.k.gemm_workspace_bytes(dtype, M, N, K));
  const args = [
    M,
    N,
    K,
    alpha,
    A.ptr,
    A.sRow,
    A.sCol,
    B.ptr,
    B.sRow,
    B.sCol,
    beta,
    C.ptr,
    C.sRow,
    C.sCol,
    work,
  ] as const;
  const status = entry === 'gemm_generic' ? h.k.gemm_generic(dtype, ...args) : h.k[entry](...args);
  const what = `${entry} ${DTYPE_NAME[dtype]} ${JSON.stringify(c)}`;
  assert.equal(status, KernelStatus.ok, what);
  const got = read(h, dtype, C, M, N);
  if (!FLOAT_DTYPES.includes(dtype)) {
    assert.deepEqual(got, integerReference(dtype, M, N, K, alpha, A.values, B.values, beta, C.values), what);
    return;
  }
  const { want, scale } = reference(M, N, K, alpha, A.values, B.values, beta, C.values);
  const eps = dtype === DT.f64 ? 2 ** -52 : 2 ** -23;
  for (let i = 0; i < want.length; i++) {
    // The classic bound |err| <= K eps sum|a||b| for the f32 / f64 accumulation (+ the final rounding).
    const tol = (K + 2) * eps * scale[i];
    if (dtype === DT.f32 || dtype === DT.f64) {
      assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what} [${i}]: ${got[i]} vs ${want[i]} (tol ${tol})`);
    } else {
      // f16 / bf16: f32 accumulation, one rounding at the end; at most one ulp away from the rounded f64 result
      // unless the f32 error straddles a rounding boundary.
      const near = Math.abs(got[i] - roundTo(dtype, want[i])) <= tol ||
        ulpDistance(dtype, got[i], roundTo(dtype, want[i])) <= 1;
      assert.ok(near, `${what} [${i}]: ${got[i]} vs ${want[i]}`);
    }
  }
}

const ODD_SHAPES: readonly [number, number, number][] = [
  [1, 1, 1],
  [3, 7, 17],
  [17, 33, 65],
  [65, 129, 33],
  [7, 1, 129],
  [1, 65, 7],
  [33, 17, 3],
  [13, 9, 300],
  // full 4- and 6-row slivers of A with K = 0, 1, 2, 3 mod 4: the 4 x 4 transposes of the contiguous-row packing
  [24, 8, 16],
  [36, 9, 18],
  [48, 8, 5],
  [12, 16, 7],
];

for (const flavor of ['relaxed-simd', 'simd'] as const) {
  // The relaxed build picks a 6 x 8 or 4 x 8 micro-tile by probing madd fusion; the plain build always 4 x 8.
  const h = harness({ flavor });

  describe(`gemm_f32 (${flavor} build)`, () => {
    it('matches an f64 reference for odd shapes and every layout of A and B (transposes included)', () => {
      // The plain build differs only in its micro-tile: plain and transposed layouts suffice there.
      const layouts: readonly Layout[] = flavor === 'simd' ? ['row', 'col'] : LAYOUTS;
      for (const [M, N, K] of ODD_SHAPES) {
        for (const layoutA of layouts) {
          for (const layoutB of layouts) check(h, DT.f32, 'gemm_f32', { M, N, K, layoutA, layoutB });
        }
      }
    });

    it('never reads C when beta = 0, accumulates with beta = 1, and scales by alpha and beta', () => {
      for (const [M, N, K] of ODD_SHAPES) {
        check(h, DT.f32, 'gemm_f32', { M, N, K, beta: 0, c: 'nan' });
        check(h, DT.f32, 'gemm_f32', { M, N, K, beta: 1, c: 'random' });
        check(h, DT.f32, 'gemm_f32', { M, N, K, alpha: 0.5, beta: -2, c: 'random', layoutC: 'padded' });
        check(h, DT.f32, 'gemm_f32', { M, N, K, alpha: -1.5, beta: 0.25, c: 'random', layoutC: 'col' });
      }
    });

    it('crosses the cache blocks: M > MC, K > KC (beta applied once), N > NC', () => {
      check(h, DT.f32, 'gemm_f32', { M: 150, N: 20, K: 520, beta: 1, c: 'random', layoutA: 'col' });
      check(h, DT.f32, 'gemm_f32', { M: 2, N: 4100, K: 3, beta: 0.5, c: 'random', layoutB: 'col' });
    });

    it('with alpha = 0 leaves A and B unread (BLAS), so their NaNs do not reach C', () => {
      h.reset();
      const A = h.put(DT.f32, [NaN, 1, 2, 3]);
      const C = h.put(DT.f32, [1, 2, 3, 4]);
      const work = h.alloc(h.k.gemm_workspace_bytes(DT.f32, 2, 2, 2));
      assert.equal(h.k.gemm_f32(2, 2, 2, 0, A, 2, 1, A, 2, 1, 0.5, C, 2, 1, work), KernelStatus.ok);
      assert.deepEqual(h.get(DT.f32, C, 4), [0.5, 1, 1.5, 2]);
    });

    it('with K = 0 writes beta * C (zeros for beta = 0, even over NaN)', () => {
      check(h, DT.f32, 'gemm_f32', { M: 3, N: 5, K: 0, beta: 0, c: 'nan' });
      check(h, DT.f32, 'gemm_f32', { M: 3, N: 5, K: 0, beta: 2, c: 'random' });
      check(h, DT.f32, 'gemm_f32', { M: 0, N: 5, K: 4 });
    });
  });

  describe(`gemm_f64 (${flavor} build)`, () => {
    it('matches an f64 reference for odd shapes, layouts, alpha and beta', () => {
      for (const [M, N, K] of ODD_SHAPES) {
        check(h, DT.f64, 'gemm_f64', { M, N, K, layoutA: 'col', layoutB: 'stepped', beta: 0, c: 'nan' });
        check(h, DT.f64, 'gemm_f64', { M, N, K, layoutA: 'padded', layoutB: 'col', alpha: 2, beta: -1, c: 'random' });
      }
      check(h, DT.f64, 'gemm_f64', { M: 80, N: 9, K: 600, beta: 1, c: 'random' });
    });
  });
}

describe('gemm_generic', () => {
  const h = harness();

  it('handles f16 and bf16 (accumulating in f32) for odd shapes and layouts', () => {
    for (const dtype of [DT.f16, DT.bf16]) {
      for (const [M, N, K] of ODD_SHAPES) {
        check(h, dtype, 'gemm_generic', { M, N, K, layoutA: 'col', beta: 0, c: 'nan' });
        check(h, dtype, 'gemm_generic', {
          M,
          N,
          K,
          layoutB: 'col',
          alpha: 0.5,
          beta: 1,
          c: 'random',
          layoutC: 'padded',
        });
      }
      check(h, dtype, 'gemm_generic', { M: 20, N: 30, K: 700, beta: 1, c: 'random' });
    }
  });

  it('is exact (wrapping) for every integer dtype', () => {
    for (const dtype of INT_DTYPES) {
      for (const [M, N, K] of ODD_SHAPES) {
        check(h, dtype, 'gemm_generic', { M, N, K, layoutA: 'col', layoutB: 'padded' });
        check(h, dtype, 'gemm_generic', { M, N, K, alpha: 3, beta: -2, c: 'random', layoutC: 'col' });
      }
    }
    // Products that overflow the narrow types wrap like PyTorch's accumulation in the type.
    h.reset();
    const A = h.put(DT.i8, [100, 100]);
    const B = h.put(DT.i8, [100, 27]);
    const C = h.alloc(1);
    const work = h.alloc(h.k.gemm_workspace_bytes(DT.i8, 1, 1, 2));
    assert.equal(h.k.gemm_generic(DT.i8, 1, 1, 2, 1, A, 2, 1, B, 1, 1, 0, C, 1, 1, work), KernelStatus.ok);
    assert.deepEqual(h.get(DT.i8, C, 1), [wrapInt(DT.i8, 100 * 100 + 100 * 27)]);
  });

  it('runs f32 and f64 through the packed kernels', () => {
    check(h, DT.f32, 'gemm_generic', { M: 9, N: 11, K: 13, alpha: 2, beta: 0.5, c: 'random', layoutA: 'col' });
    check(h, DT.f64, 'gemm_generic', { M: 9, N: 11, K: 13, layoutB: 'col' });
  });

  it('rejects Bool and negative sizes', () => {
    assert.equal(h.k.gemm_workspace_bytes(DT.bool, 2, 2, 2), 0);
    assert.equal(h.k.gemm_generic(DT.bool, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0), KernelStatus.unsupported);
    assert.equal(h.k.gemm_generic(DT.f32, -1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0), KernelStatus.badArgument);
  });
});

describe('bmm', () => {
  const h = harness();

  it('multiplies each batch with its own strides, broadcasting a batch stride of 0', () => {
    for (const dtype of [DT.f32, DT.f64, DT.bf16, DT.i32]) {
      h.reset();
      const [batch, M, N, K] = [3, 5, 7, 9];
      const A = place(h, dtype, batch * M, K, 'row'); // batches stacked: sAb = M * K
      const B = place(h, dtype, K, N, 'col'); // one B^T view shared by every batch: sBb = 0
      const C = place(
        h,
        dtype,
        batch * M,
        N,
        'row',
        new Array<number>(batch * M * N).fill(FLOAT_DTYPES.includes(dtype) ? NaN : 5),
      );
      const work = h.alloc(h.k.gemm_workspace_bytes(dtype, M, N, K));
      const status = h.k.bmm(
        dtype,
        batch,
        M,
        N,
        K,
        1,
        A.ptr,
        M * K,
        K,
        1,
        B.ptr,
        0,
        B.sRow,
        B.sCol,
        0,
        C.ptr,
        M * N,
        N,
        1,
        work,
      );
      assert.equal(status, KernelStatus.ok);
      const got = h.get(dtype, C.ptr, batch * M * N);
      for (let b = 0; b < batch; b++) {
        const a = A.values.slice(b * M * K, (b + 1) * M * K);
        const { want } = reference(M, N, K, 1, a, B.values, 0, []);
        const gotBatch = got.slice(b * M * N, (b + 1) * M * N);
        for (let i = 0; i < want.length; i++) {
          const tol = dtype === DT.bf16 ? 2 ** -7 * Math.abs(want[i]) + 1e-6 : 1e-5 * (1 + Math.abs(want[i]));
          assert.ok(
            Math.abs(gotBatch[i] - want[i]) <= tol,
            `bmm ${DTYPE_NAME[dtype]} batch ${b} [${i}]: ${gotBatch[i]} vs ${want[i]}`,
          );
        }
      }
    }
  });

  it('rejects Bool even for an empty batch', () => {
    assert.equal(h.k.bmm(DT.bool, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0), KernelStatus.unsupported);
  });
});

describe('gemm_workspace_bytes', () => {
  it('is enough for the largest blocks and small for small products', () => {
    const h = harness();
    for (const dtype of [DT.f32, DT.f64, DT.f16, DT.bf16, ...INT_DTYPES]) {
      assert.ok(h.k.gemm_workspace_bytes(dtype, 1, 1, 1) > 0);
      assert.ok(h.k.gemm_workspace_bytes(dtype, 1, 1, 1) < 4096, DTYPE_NAME[dtype]);
    }
    // f32 blocks: 144 x 256 of A and 256 x 4096 of B at most, whatever the size.
    assert.ok(h.k.gemm_workspace_bytes(DT.f32, 10000, 10000, 10000) < 5 * 2 ** 20);
    assert.equal(itemSize(DT.f32), 4);
  });
});
