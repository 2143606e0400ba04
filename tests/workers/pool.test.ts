// Intra-op threads: kernels split across the worker pool give the single-thread results bit for bit
// (elementwise, casts, copies, matrix products, row-wise reductions, softmax), full reductions are deterministic
// for a thread count, and the pool survives faults.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as sy from '../../mod.ts';
import type { Tensor } from '../../mod.ts';
import { currentIntraOpPool, setPoolChunkTimer, whenThreadsReady } from '../../core/workers/pool.ts';
import { setSplitThresholds, splitGemm } from '../../core/cpu/parallel.ts';
import { contiguousAddress, kernels } from '../../core/cpu/boundary.ts';
import { cpuRuntime } from '../../core/cpu/runtime.ts';
import { nonContiguousTensor, randomTensor, restride, rng } from '../ops/_helpers.ts';

/** Every element as a number (booleans 0/1), for comparisons with Object.is (so -0 and NaN count). */
function elements(t: Tensor): number[] {
  return t.toArray().map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : Number(v)));
}

function assertSameBits(actual: number[], expected: number[], what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) {
      assert.fail(`${what}: element ${i} is ${actual[i]} with threads, ${expected[i]} on one thread`);
    }
  }
}

/** A case computes a result from inputs made by `make` (called once, before any thread count is set). */
interface Case {
  readonly name: string;
  readonly run: () => Tensor;
}

const next = rng(0x7a11);
const n = 5003; // odd, above the lowered threshold, not a multiple of any vector width

function cases(): Case[] {
  const f32a = randomTensor([n], 'float32', next), f32b = randomTensor([n], 'float32', next);
  const i32a = randomTensor([37, 129], 'int32', next), i32row = randomTensor([129], 'int32', next);
  const col = randomTensor([37, 1], 'float64', next), row = randomTensor([1, 129], 'float64', next);
  const tA = nonContiguousTensor([61, 83], 'float64', next), tB = randomTensor([61, 83], 'float64', next);
  const step = nonContiguousTensor([4099], 'float32', next);
  const h1 = randomTensor([3001], 'float16', next), h2 = randomTensor([3001], 'float16', next);
  const bf = randomTensor([2, 1999], 'bfloat16', next);
  const u8 = randomTensor([4111], 'uint8', next), i64 = nonContiguousTensor([47, 71], 'int64', next);
  const cond = randomTensor([53, 67], 'bool', next);
  const wa = randomTensor([53, 67], 'float32', next), wb = randomTensor([67], 'float32', next);
  const m1 = randomTensor([173, 61], 'float32', next), m2 = randomTensor([61, 95], 'float32', next);
  const wide1 = randomTensor([5, 70], 'float32', next), wide2 = randomTensor([70, 301], 'float32', next);
  const d1 = nonContiguousTensor([99, 40], 'float64', next), d2 = randomTensor([40, 77], 'float64', next);
  const im1 = randomTensor([50, 31], 'int32', next), im2 = randomTensor([31, 44], 'int32', next);
  const b1 = randomTensor([3, 45, 33], 'float32', next), b2 = randomTensor([3, 33, 50], 'float32', next);
  const rows = randomTensor([300, 50], 'float32', next), tall = randomTensor([2000, 7], 'float64', next);
  const ints = randomTensor([3, 2001], 'int32', next), cube = randomTensor([4, 30, 17], 'float32', next);
  // Row panels over one shared packed B (Note [Shared packed B]): K over two 256-element slices with a tail, N
  // tails that are not whole slivers, column ranges packed by different threads, views, addmm, 16-bit floats.
  const k1 = randomTensor([131, 300], 'float32', next), k2 = randomTensor([300, 77], 'float32', next);
  const t1 = nonContiguousTensor([131, 300], 'float32', next), t2 = nonContiguousTensor([300, 77], 'float32', next);
  const bias = randomTensor([131, 77], 'float32', next), biasRow = randomTensor([77], 'float32', next);
  const s1 = restride(randomTensor([101, 2 * 263], 'float64', next), [101, 263], [2 * 263, 2], 1);
  const s2 = restride(randomTensor([263 * 3, 45], 'float64', next), [263, 45], [3 * 45, 1], 45);
  const q1 = randomTensor([1, 50, 270], 'float32', next), q2 = nonContiguousTensor([1, 270, 41], 'float32', next);
  const h3 = randomTensor([60, 100], 'float16', next), h4 = nonContiguousTensor([100, 37], 'float16', next);
  // bfloat16 packs all of K in one slice with 120-column blocks: N = 130 spans two blocks.
  const bw1 = randomTensor([130, 8200], 'bfloat16', next), bw2 = randomTensor([8200, 130], 'bfloat16', next);
  return [
    { name: 'add float32 contiguous', run: () => sy.add(f32a, f32b, { alpha: 0.5 }) },
    { name: 'sub int32 broadcast row', run: () => sy.sub(i32a, i32row) },
    { name: 'mul float64 outer broadcast', run: () => sy.mul(col, row) },
    { name: 'div float64 transposed view', run: () => sy.div(tA, tB) },
    { name: 'exp float32 step-2 view', run: () => sy.exp(step) },
    { name: 'add float16', run: () => sy.add(h1, h2) },
    { name: 'sigmoid bfloat16', run: () => sy.sigmoid(bf) },
    { name: 'gt float32 (bool result)', run: () => sy.gt(f32a, f32b) },
    { name: 'mul uint8 by a scalar', run: () => sy.mul(u8, 3) },
    { name: 'add int64 view and scalar', run: () => sy.add(i64, 7) },
    { name: 'where with broadcasting', run: () => sy.where(cond, wa, wb) },
    { name: 'clamp float32', run: () => sy.clamp(f32a, -1, 0.5) },
    { name: 'cast float32 to float16', run: () => f32a.to({ dtype: sy.float16 }) },
    { name: 'cast int64 view to float32', run: () => i64.to({ dtype: sy.float32 }) },
    { name: 'copy of a transposed view', run: () => sy.contiguous(tA) },
    { name: 'fill_ a strided view', run: () => sy.zeros([61, 83], { dtype: sy.float64 }).t().fill_(2.5) },
    { name: 'mm float32 (row panels)', run: () => sy.mm(m1, m2) },
    { name: 'mm float32 wide (column panels)', run: () => sy.mm(wide1, wide2) },
    { name: 'mm float64 transposed operand', run: () => sy.mm(d1, d2) },
    { name: 'mm int32', run: () => sy.mm(im1, im2) },
    { name: 'bmm float32', run: () => sy.bmm(b1, b2) },
    { name: 'mm float32 shared B, K and N tails', run: () => sy.mm(k1, k2) },
    { name: 'mm float32 shared B, transposed operands', run: () => sy.mm(t1, t2) },
    { name: 'addmm float32 shared B, beta and alpha', run: () => sy.addmm(bias, t1, k2, { beta: 0.5, alpha: -1.5 }) },
    { name: 'addmm float32 shared B, broadcast input', run: () => sy.addmm(biasRow, k1, t2, { beta: 2, alpha: 3 }) },
    { name: 'mm float64 shared B, strided views', run: () => sy.mm(s1, s2) },
    { name: 'bmm float32 of one product (shared B)', run: () => sy.bmm(q1, q2) },
    { name: 'mm float16 shared B', run: () => sy.mm(h3, h4) },
    { name: 'mm bfloat16 shared B over two column blocks', run: () => sy.mm(bw1, bw2) },
    { name: 'sum over rows (outer split)', run: () => sy.sum(rows, 1) },
    { name: 'max.dim over rows (outer split)', run: () => sy.max(rows, 1)[0] },
    { name: 'argmax over rows (outer split)', run: () => sy.argmax(rows, { dim: 1 }) },
    { name: 'max.dim indices over rows', run: () => sy.max(rows, 1)[1] },
    { name: 'softmax over rows', run: () => sy.softmax(rows, 1) },
    { name: 'logSoftmax over a middle dim', run: () => sy.logSoftmax(cube, 1) },
    { name: 'amax of everything (R split)', run: () => sy.amax(tall, [0, 1]) },
    { name: 'int32 sum of everything (R split)', run: () => sy.sum(ints) },
  ];
}

describe('intra-op threads', () => {
  let all: Case[];
  let single: number[][];

  before(() => {
    sy.setNumThreads(1);
    setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 });
    all = cases();
    single = all.map((c) => elements(c.run()));
  });

  after(() => {
    setSplitThresholds();
    sy.setNumThreads(1);
  });

  it('getNumThreads defaults to at least one thread and reflects setNumThreads', () => {
    sy.setNumThreads(2);
    assert.equal(sy.getNumThreads(), 2);
  });

  it('gives bitwise the single-thread results, with work done on the workers', async () => {
    sy.setNumThreads(2);
    await whenThreadsReady(); // a pool starts on first use: make one, then wait for its worker
    sy.add(sy.ones([2000]), 1);
    await whenThreadsReady();
    const pool = currentIntraOpPool()!;
    assert.equal(pool.readyWorkers, 1);
    for (let i = 0; i < all.length; i++) assertSameBits(elements(all[i].run()), single[i], all[i].name);
  });

  it('workers claim chunks while the calling agent is busy, in memory grown after they started', async () => {
    sy.setNumThreads(2);
    sy.add(sy.ones([2000]), 1);
    await whenThreadsReady();
    const pool = currentIntraOpPool()!;
    const before = pool.workerChunks;
    // Made after the worker started, and large enough to grow the memory: workers see the grown memory.
    const grown = cpuRuntime().memory.buffer.byteLength;
    const pad = sy.empty([grown / 4], { dtype: sy.float32 });
    const x = sy.zeros([8 * 256], { dtype: sy.float32 });
    assert.ok(cpuRuntime().memory.buffer.byteLength > grown);
    const address = contiguousAddress(x, 'test', 8 * 256);
    const chunks = Array.from({ length: 8 }, (_, c) => [6, address + c * 1024, c + 1, 256]);
    let local = 0;
    const status = pool.run('fill_contig', chunks, {
      fill_contig: (...args: number[]) => {
        // A slow calling agent: the worker has time to wake and claim chunks.
        const until = performance.now() + 20;
        while (performance.now() < until);
        local++;
        return (kernels() as unknown as Record<string, (...a: number[]) => number>).fill_contig(...args);
      },
    });
    assert.equal(status, 0);
    assert.ok(pool.workerChunks - before > 0 && local < 8, `the worker ran ${pool.workerChunks - before} chunks`);
    assert.equal(pool.workerChunks - before + local, 8);
    const got = elements(x);
    for (let c = 0; c < 8; c++) assert.ok(got.slice(c * 256, c * 256 + 256).every((v) => v === c + 1), `chunk ${c}`);
    pad.dispose();
  });

  it('matches float64 references for a split matmul', () => {
    sy.setNumThreads(2);
    const a = randomTensor([97, 130], 'float32', next), b = randomTensor([130, 88], 'float32', next);
    const got = elements(sy.mm(a, b));
    const A = elements(a), B = elements(b);
    for (let i = 0; i < 97; i++) {
      for (let j = 0; j < 88; j++) {
        let ref = 0;
        for (let k = 0; k < 130; k++) ref += A[i * 130 + k] * B[k * 88 + j];
        assert.ok(Math.abs(got[i * 88 + j] - ref) <= 1e-4 * (1 + Math.abs(ref)), `C[${i}, ${j}]`);
      }
    }
  });

  it('packs B once per split product, by the pool, and frees the packing', () => {
    sy.setNumThreads(2);
    const a = randomTensor([96, 300], 'float32', next), b = randomTensor([300, 70], 'float32', next);
    sy.mm(a, b).dispose(); // warm up: the pool and the allocator's blocks exist before counting
    const jobs: string[] = [];
    const previous = setPoolChunkTimer((kernel) => jobs.push(kernel));
    const live = cpuRuntime().allocator.stats().liveAllocations;
    try {
      const c = sy.mm(a, b);
      assert.deepEqual(jobs, ['gemm_pack_b', 'gemm_prepacked']);
      const A = elements(a), B = elements(b), C = elements(c);
      for (const [i, j] of [[0, 0], [95, 69], [47, 33], [12, 64]]) {
        let ref = 0;
        for (let k = 0; k < 300; k++) ref += A[i * 300 + k] * B[k * 70 + j];
        assert.ok(Math.abs(C[i * 70 + j] - ref) <= 1e-4 * (1 + Math.abs(ref)), `C[${i}, ${j}]`);
      }
      assert.equal(cpuRuntime().allocator.stats().liveAllocations, live + 1, 'the packed B and workspaces are freed');
      // Below PACK_SPLIT_MIN the calling agent packs B alone: one pool job.
      setSplitThresholds({ elementwise: 1000, matmul: 4096 });
      jobs.length = 0;
      const small = sy.mm(a, b);
      assert.deepEqual(jobs, ['gemm_prepacked']);
      assertSameBits(elements(small), C, 'B packed by the calling agent alone');
      setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 });
      // Integer products pack nothing: they keep one gemm job.
      jobs.length = 0;
      sy.mm(randomTensor([50, 31], 'int32', next), randomTensor([31, 44], 'int32', next));
      assert.deepEqual(jobs, ['gemm_generic']);
    } finally {
      setPoolChunkTimer(previous);
      setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 });
    }
  });

  it('full reductions are deterministic for a thread count and close to float64', () => {
    sy.setNumThreads(2);
    const x = randomTensor([200_003], 'float32', next), X = elements(x);
    const ref = X.reduce((s, v) => s + v, 0);
    const first = elements(sy.sum(x))[0];
    for (let r = 0; r < 5; r++) assert.ok(Object.is(elements(sy.sum(x))[0], first), `run ${r}`);
    assert.ok(Math.abs(first - ref) <= 1e-3, `${first} against ${ref}`);
    const mean = elements(sy.mean(x))[0];
    for (let r = 0; r < 3; r++) assert.ok(Object.is(elements(sy.mean(x))[0], mean));
    assert.ok(Math.abs(mean - ref / X.length) <= 1e-7);
    const cols = randomTensor([4001, 9], 'float64', next), C = elements(cols);
    const colSum = elements(sy.sum(cols, 0));
    for (let j = 0; j < 9; j++) {
      let s = 0;
      for (let i = 0; i < 4001; i++) s += C[i * 9 + j];
      assert.ok(Math.abs(colSum[j] - s) <= 1e-9, `column ${j}`);
    }
    assert.deepEqual(elements(sy.sum(cols, 0)), colSum);
  });

  it('splits at the default thresholds too', async () => {
    setSplitThresholds();
    try {
      sy.setNumThreads(2);
      sy.add(sy.ones([2000]), 1);
      await whenThreadsReady();
      const big = sy.full([1 << 18], 1.5);
      assert.equal(elements(sy.sum(sy.mul(big, 2)))[0], 3 * (1 << 18));
      const x = randomTensor([(1 << 18) + 17], 'float32', next), y = sy.exp(x);
      const X = elements(x), Y = elements(y);
      for (let i = 0; i < X.length; i += 997) assert.ok(Math.abs(Y[i] - Math.exp(X[i])) <= 1e-6 * Math.exp(X[i]));
    } finally {
      setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 });
    }
  });

  it('rejects invalid thread counts with a clear error', () => {
    assert.throws(() => sy.setNumThreads(0), /setNumThreads: expected a positive integer/);
    assert.throws(() => sy.setNumThreads(1.5), /setNumThreads: expected a positive integer/);
    assert.throws(() => sy.setNumThreads('2' as unknown as number), /setNumThreads: expected a positive integer/);
    assert.equal(sy.getNumThreads(), 2);
  });

  it('keeps 1 thread working and refuses more without SharedArrayBuffer', () => {
    const saved = globalThis.SharedArrayBuffer;
    sy.setNumThreads(1);
    try {
      // deno-lint-ignore no-explicit-any
      (globalThis as any).SharedArrayBuffer = undefined;
      assert.throws(
        () => sy.setNumThreads(2),
        (e: Error) => e.name === 'ThreadPoolError' && /SharedArrayBuffer/.test(e.message),
      );
      assert.equal(sy.getNumThreads(), 1);
      assert.deepEqual(elements(sy.add(sy.ones([3000]), 1)).slice(0, 2), [2, 2]);
    } finally {
      globalThis.SharedArrayBuffer = saved;
    }
  });
});

/** A calling agent's chunk that takes 100 ms and does nothing: the worker claims the other chunk meanwhile. */
function slowNoop(): number {
  const until = performance.now() + 100;
  while (performance.now() < until);
  return 0;
}

describe('intra-op thread pool faults', () => {
  before(() => setSplitThresholds({ elementwise: 1000, matmul: 4096, packB: 256 }));
  after(() => {
    setSplitThresholds();
    sy.setNumThreads(1);
  });

  it('surfaces a kernel that traps in a worker and rebuilds the pool', async () => {
    sy.setNumThreads(2);
    sy.add(sy.ones([2000]), 1);
    await whenThreadsReady();
    const pool = currentIntraOpPool()!;
    // A fill far outside the memory traps in the worker. Chunks are claimed from the top: the calling agent
    // takes chunk 1 and, slowed down, leaves chunk 0 (the bad one) to the worker.
    assert.throws(
      () => pool.run('fill_contig', [[6, 0xfffffff0, 1, 64], [6, 0, 0, 0]], { fill_contig: slowNoop }),
      (e: Error) => e.name === 'ThreadPoolError' && /worker 1 failed in a kernel: RuntimeError/.test(e.message),
    );
    assert.equal(pool.closed, true);
    const x = randomTensor([4000], 'float32', next);
    assertSameBits(elements(sy.mul(x, 2)), elements(x).map((v) => Math.fround(v * 2)), 'after the fault');
    assert.notEqual(currentIntraOpPool(), pool);
  });

  it('frees the shared packed B when a thread traps in the product', async () => {
    sy.setNumThreads(2);
    sy.add(sy.ones([2000]), 1);
    await whenThreadsReady();
    const b = randomTensor([300, 64], 'float32', next), c = sy.zeros([96, 64], { dtype: sy.float32 });
    const pb = contiguousAddress(b, 'test', 300 * 64), pc = contiguousAddress(c, 'test', 96 * 64);
    const live = cpuRuntime().allocator.stats().liveAllocations;
    // B packs fine (on both threads); every row panel then reads A far outside the memory and traps.
    const bad = { address: 0xffff0000, rowStride: 300, colStride: 1 };
    assert.throws(
      () =>
        splitGemm('gemm_f32', 6, 4, 96, 64, 300, 1, bad, { address: pb, rowStride: 64, colStride: 1 }, 0, {
          address: pc,
          rowStride: 64,
          colStride: 1,
        }),
      (e: Error) => /out of bounds|ThreadPoolError|RuntimeError/.test(`${e.name} ${e.message}`),
    );
    assert.equal(cpuRuntime().allocator.stats().liveAllocations, live, 'the packed B and workspaces are freed');
    const a = randomTensor([96, 300], 'float32', next);
    const threaded = elements(sy.mm(a, b));
    sy.setNumThreads(1);
    assertSameBits(threaded, elements(sy.mm(a, b)), 'a product after the fault');
  });

  it('does not hang on a worker that dies mid-job, and rebuilds the pool', async () => {
    const { setThreadJobTimeout } = await import('../../core/workers/pool.ts');
    const { JOB_TEST_DIE } = await import('../../core/workers/pool_layout.ts');
    setThreadJobTimeout(300);
    try {
      sy.setNumThreads(2);
      sy.add(sy.ones([2000]), 1);
      await whenThreadsReady();
      const pool = currentIntraOpPool()!;
      const t0 = performance.now();
      assert.throws(
        () => pool.runJob(JOB_TEST_DIE, [[], []], slowNoop),
        (e: Error) => e.name === 'ThreadPoolError' && /did not finish a job within 300 ms/.test(e.message),
      );
      assert.ok(performance.now() - t0 < 5000);
      const x = randomTensor([4000], 'float32', next);
      assert.deepEqual(elements(sy.neg(x)), elements(x).map((v) => -v));
    } finally {
      setThreadJobTimeout(undefined);
    }
  });
});
