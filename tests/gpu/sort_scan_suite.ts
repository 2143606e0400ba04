// The WebGPU sort, scans, mode and sampling kernels against the CPU kernels: seeded values with ties and NaN, odd
// line lengths (not powers of two), every dim, strided views, every dtype the kernels claim; gradients through
// sort / cumsum / cumprod / mode; Philox against its host reference and the samplers' distributions (seeded, with
// bounds many standard deviations wide, so they cannot flake).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import {
  argsort,
  bernoulli,
  cumprod,
  cumsum,
  full,
  Generator,
  kthvalue,
  manualSeed,
  maskedSelect,
  maskedSelectAsync,
  median,
  mode,
  multinomial,
  nonzero,
  nonzeroAsync,
  sort,
  type Tensor,
  tensor,
  topk,
  unique,
  uniqueAsync,
  where,
  whereAsync,
} from '../../mod.ts';
import { restride, rng } from '../ops/_helpers.ts';
import { philox4x32 } from '../../gpu/kernels/philox.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });
const device = 'webgpu' as const;

const SORT_DTYPES = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32'] as const;

/** Values with many ties (a few distinct values), NaN and signed zeros among floats. */
function tiedValues(n: number, dtype: string, next: () => number): (number | boolean)[] {
  return Array.from({ length: n }, () => {
    const r = next();
    if (dtype === 'bool') return r < 0.5;
    if (dtype === 'uint8') return Math.floor(r * 7) * 30;
    if (!dtype.startsWith('float') && !dtype.startsWith('bfloat')) return Math.floor(r * 9) - 4;
    if (r < 0.05) return NaN;
    if (r < 0.1) return -0;
    return Math.floor(r * 11) / 2 - 2.5;
  });
}

/** A CPU tensor of `shape` with tied values; `strided`: a transposed or stepped view of a larger buffer. */
function input(shape: number[], dtype: string, next: () => number, strided: boolean): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  if (!strided) return tensor(tiedValues(n, dtype, next), { dtype: dtype as 'float32' }).reshape(shape);
  // Every dim stepped by 2 (innermost) and the dims laid out in reverse order.
  const strides: number[] = new Array(shape.length);
  let acc = 2;
  for (let d = 0; d < shape.length; d++) {
    strides[d] = acc;
    acc *= shape[d];
  }
  const base = tensor(tiedValues(acc + 1, dtype, next), { dtype: dtype as 'float32' });
  return restride(base, shape, strides, 1);
}

const SHAPES = [[37], [5, 33], [3, 7, 11]];

describe('WebGPU sort, scans, mode and samplers', { skip: gpuSkip }, () => {
  it('sort.stable matches the CPU exactly (values and indices) for every dtype, dim, order and layout', async () => {
    const next = rng(11);
    for (const dtype of SORT_DTYPES) {
      for (const shape of SHAPES) {
        for (const strided of shape.length === 2 ? [false, true] : [shape.length === 3]) {
          const x = input(shape, dtype, next, strided), g = gpu(x);
          for (let dim = -shape.length; dim < shape.length; dim++) {
            for (const descending of [false, true]) {
              const what = `sort ${dtype} ${shape} strided=${strided} dim=${dim} desc=${descending}`;
              const [cv, ci] = sort(x, dim, { descending });
              const [gv, gi] = sort(g, dim, { descending });
              await assertSameAsCpu(cv, gv, 0, `${what} values`);
              await assertSameAsCpu(ci, gi, 0, `${what} indices`);
            }
          }
        }
      }
    }
  });

  it('sorts long lines (padding to a power of two), 0-d, one-element and empty tensors', async () => {
    const next = rng(12);
    const long = input([2, 1500], 'float32', next, false);
    for (const descending of [false, true]) {
      const [cv, ci] = sort(long, 1, { descending }), [gv, gi] = sort(gpu(long), 1, { descending });
      await assertSameAsCpu(cv, gv, 0, 'long values');
      await assertSameAsCpu(ci, gi, 0, 'long indices');
    }
    const big = tensor(Array.from({ length: 3001 }, () => Math.floor(next() * 2 ** 40) - 2 ** 39), { dtype: 'int64' });
    await assertSameAsCpu(sort(big)[1], sort(gpu(big))[1], 0, 'int64 beyond 2^32');
    for (const x of [tensor(2.5), tensor([7]), tensor([], { dtype: 'float32' }), full([3, 0], 1)]) {
      const [cv, ci] = sort(x, -1), [gv, gi] = sort(gpu(x), -1);
      await assertSameAsCpu(cv, gv, 0, `values ${x.shape}`);
      await assertSameAsCpu(ci, gi, 0, `indices ${x.shape}`);
    }
    const nan = tensor([NaN, 1, -Infinity, NaN, Infinity, -1], { device });
    assert.deepEqual(await sort(nan)[0].toArrayAsync(), [-Infinity, -1, 1, Infinity, NaN, NaN]);
    assert.deepEqual(await sort(nan)[1].toArrayAsync(), [2, 5, 1, 4, 0, 3]);
    assert.deepEqual(await sort(nan, { descending: true })[1].toArrayAsync(), [0, 3, 4, 1, 5, 2]);
  });

  it('argsort, topk, kthvalue and median run on the GPU sort and match the CPU', async () => {
    const next = rng(13);
    for (const dtype of ['float32', 'int32', 'int64'] as const) {
      const x = input([6, 19], dtype, next, true), g = gpu(x);
      await assertSameAsCpu(argsort(x, 1, { descending: true }), argsort(g, 1, { descending: true }), 0, 'argsort');
      const [tv, ti] = topk(x, 5, 1), [gtv, gti] = topk(g, 5, 1);
      await assertSameAsCpu(tv, gtv, 0, 'topk values');
      await assertSameAsCpu(ti, gti, 0, 'topk indices');
      const [kv, ki] = kthvalue(x, 4, 0, true), [gkv, gki] = kthvalue(g, 4, 0, true);
      await assertSameAsCpu(kv, gkv, 0, 'kthvalue values');
      await assertSameAsCpu(ki, gki, 0, 'kthvalue indices');
      const [mv, mi] = median(x, 1), [gmv, gmi] = median(g, 1);
      await assertSameAsCpu(mv, gmv, 0, 'median values');
      await assertSameAsCpu(mi, gmi, 0, 'median indices');
    }
  });

  it('refuses float64 as the other computing kernels do, and checks the dim', () => {
    const d = tensor([1, 2], { dtype: 'float64', device });
    assert.throws(() => sort(d), /"sort_webgpu" not implemented for 'Double'/);
    assert.throws(() => cumsum(d, 0), /"cumsum_webgpu" not implemented for 'Double'/);
    assert.throws(() => mode(d), /"mode_webgpu" not implemented for 'Double'/);
    assert.throws(() => sort(tensor([1, 2], { device }), 1), /Dimension out of range/);
  });

  it('cumsum and cumprod match the CPU for every dtype, dim, layout, result dtype and long lines', async () => {
    const next = rng(14);
    const dtypes = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32'] as const;
    for (const dtype of dtypes) {
      for (const shape of [[37], [5, 33], [3, 7, 11], [2, 700]]) {
        const x = input(shape, dtype, next, shape.length === 3), g = gpu(x);
        for (let dim = 0; dim < shape.length; dim++) {
          const reduced = dtype === 'float16' || dtype === 'bfloat16';
          const tol = reduced ? 2e-2 : 1e-4;
          await assertSameAsCpu(cumsum(x, dim), cumsum(g, dim), tol, `cumsum ${dtype} ${shape} ${dim}`);
          if (shape[dim] <= 40 && !dtype.startsWith('float') && dtype !== 'bfloat16') {
            await assertSameAsCpu(cumprod(x, dim), cumprod(g, dim), 0, `cumprod ${dtype} ${shape} ${dim}`);
          }
        }
      }
    }
    // Products of values near 1 over long lines (chunked), float and float16 results, and explicit dtypes.
    const near = tensor(Array.from({ length: 3 * 900 }, () => 0.9 + next() * 0.2)).reshape([3, 900]);
    await assertSameAsCpu(cumprod(near, 1), cumprod(gpu(near), 1), 1e-4, 'cumprod long float32');
    await assertSameAsCpu(cumsum(near, 1), cumsum(gpu(near), 1), 1e-5, 'cumsum long float32');
    const ints = input([4, 600], 'int32', next, false);
    for (const dtype of ['int32', 'int8', 'float32', 'int64'] as const) {
      await assertSameAsCpu(cumsum(ints, 1, { dtype }), cumsum(gpu(ints), 1, { dtype }), 1e-5, `cumsum to ${dtype}`);
    }
    const small = input([3, 30], 'int32', next, false);
    await assertSameAsCpu(cumprod(small, 1), cumprod(gpu(small), 1), 0, 'cumprod int64 wrapping');
    await assertSameAsCpu(cumprod(small, 1, { dtype: 'int32' }), cumprod(gpu(small), 1, { dtype: 'int32' }), 0, 'i32');
    const halves = input([4, 20], 'float16', next, true);
    await assertSameAsCpu(cumprod(halves, 1), cumprod(gpu(halves), 1), 2e-2, 'cumprod float16');
    await assertSameAsCpu(cumsum(tensor(3), 0), cumsum(gpu(tensor(3)), 0), 0, '0-d');
  });

  it('mode matches the CPU (values and the last index) for every dtype, dim, keepdim and layout', async () => {
    const next = rng(15);
    for (const dtype of SORT_DTYPES) {
      for (const shape of SHAPES) {
        const x = input(shape, dtype, next, shape.length > 1), g = gpu(x);
        for (let dim = 0; dim < shape.length; dim++) {
          for (const keepdim of [false, true]) {
            const [cv, ci] = mode(x, dim, { keepdim }), [gv, gi] = mode(g, dim, { keepdim });
            await assertSameAsCpu(cv, gv, 0, `mode ${dtype} ${shape} ${dim} values`);
            await assertSameAsCpu(ci, gi, 0, `mode ${dtype} ${shape} ${dim} indices`);
          }
        }
      }
    }
    const [v, i] = mode(tensor([3, 1, 1, 3, 2], { device }));
    assert.deepEqual([await v.itemAsync(), await i.itemAsync()], [1, 2]);
    assert.throws(() => mode(tensor([], { device })), /mode\(\): Expected reduction dim 0 to have non-zero size\./);
  });

  it('gradients through sort, cumsum, cumprod and mode on webgpu equal the CPU ones', async () => {
    const next = rng(16);
    const data = Array.from({ length: 4 * 9 }, () => Math.round(next() * 8) / 4 - 1);
    const ops: [string, (x: Tensor) => Tensor][] = [
      ['sort', (x) => sort(x, 1, { descending: true })[0]],
      ['cumsum', (x) => cumsum(x, 0)],
      ['cumprod', (x) => cumprod(x, 1)],
      ['mode', (x) => mode(x, 1, { keepdim: true })[0]],
    ];
    const weights = tensor(Array.from({ length: 36 }, (_, k) => (k % 7) - 3)).reshape([4, 9]);
    for (const [name, f] of ops) {
      const c = tensor(data, { requiresGrad: true });
      const g = tensor(data, { requiresGrad: true, device });
      const out = (x: Tensor) => f(x.reshape([4, 9]));
      const wc = out(c).shape[1] === 9 ? weights : weights.narrow(1, 0, 1);
      out(c).mul(wc).sum().backward();
      out(g).mul(gpu(wc)).sum().backward();
      await assertSameAsCpu(c.grad!, g.grad!, 1e-5, `${name} gradient`);
    }
  });

  it('Philox4x32-10 on the GPU reproduces the host reference (bernoulli of p = 0.3, keyed by the generator)', async () => {
    const key = new Generator(1234);
    const k = [key.random(), key.random()];
    assert.deepEqual(philox4x32([0, 0, 0, 0], [0, 0]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    const n = 4099;
    const out = bernoulli(full([n], 0, { device }), 0.3, { generator: new Generator(1234) });
    const got = await out.toArrayAsync();
    const expected = Array.from(
      { length: n },
      (_, t) => ((philox4x32([t, 0, 0, 0], k)[0] >>> 8) * 2 ** -24 < 0.3 ? 1 : 0),
    );
    assert.deepEqual(got, expected);
  });

  it('bernoulli: distribution, strided probabilities, reproducibility under manualSeed, errors at readback', async () => {
    const n = 20000;
    manualSeed(21);
    const p = full([n], 0.25, { device });
    const a = bernoulli(p), b = bernoulli(p);
    const ma = Number(await a.sum().itemAsync()) / n, mb = Number(await b.sum().itemAsync()) / n;
    // sd = sqrt(0.25 * 0.75 / 20000) = 0.0031: 0.02 is 6.5 sd.
    assert.ok(Math.abs(ma - 0.25) < 0.02 && Math.abs(mb - 0.25) < 0.02, `${ma} ${mb}`);
    assert.notDeepEqual(await a.toArrayAsync(), await b.toArrayAsync(), 'consecutive calls must differ');
    manualSeed(21);
    assert.deepEqual(await bernoulli(p).toArrayAsync(), await a.toArrayAsync(), 'manualSeed reproduces');
    // Probabilities 0 and 1 through a strided view, reduced float dtypes keep their dtype.
    const ps = gpu(tensor([[0, 1], [1, 0], [0, 1]], { dtype: 'float16' })).t();
    const s = bernoulli(ps);
    assert.equal(s.dtype.name, 'float16');
    assert.deepEqual(await s.tolistAsync(), [[0, 1, 0], [1, 0, 1]]);
    const half = bernoulli(full([n], 0, { device, dtype: 'int32' }), 0.5);
    assert.equal(half.dtype.name, 'int32');
    assert.ok(Math.abs(Number(await half.sum().itemAsync()) / n - 0.5) < 0.025);
    bernoulli(tensor([0.5, 1.5], { device }));
    await assert.rejects(p.sum().itemAsync(), /Expected p_in >= 0 && p_in <= 1 to be true, but got false\./);
    assert.equal(await p.sum().itemAsync(), n / 4, 'the runtime stays usable');
  });

  it('multinomial with and without replacement: frequencies, no repeats, zero weights, errors', async () => {
    manualSeed(22);
    const n = 20000;
    const w = tensor([[1, 2, 7, 0], [1, 1, 1, 1]], { device, dtype: 'float32' });
    const draws = (await multinomial(w, n, true).toArrayAsync()) as number[];
    for (const [row, probs] of [[0, [0.1, 0.2, 0.7, 0]], [1, [0.25, 0.25, 0.25, 0.25]]] as const) {
      const counts = [0, 0, 0, 0];
      for (let s = 0; s < n; s++) counts[draws[row * n + s]]++;
      // sd <= sqrt(0.25 / 20000) = 0.0035: 0.025 is over 7 sd; a zero weight is never drawn.
      counts.forEach((c, j) => assert.ok(Math.abs(c / n - probs[j]) < 0.025, `row ${row}: ${counts}`));
      if (row === 0) assert.equal(counts[3], 0);
    }
    // Without replacement: each row a permutation prefix; zero weights come last; first picks follow p.
    const rows = 4000;
    const weights = gpu(full([rows, 1], 1).mul(tensor([[1, 2, 3, 4, 0]], { dtype: 'float32' })));
    const picks = (await multinomial(weights, 5).toArrayAsync()) as number[];
    const first = [0, 0, 0, 0, 0];
    for (let r = 0; r < rows; r++) {
      const row = picks.slice(5 * r, 5 * r + 5);
      assert.deepEqual([...row].sort(), [0, 1, 2, 3, 4]);
      assert.equal(row[4], 4, 'the zero weight is drawn last');
      first[row[0]]++;
    }
    // sd <= sqrt(0.25 / 4000) = 0.0079: 0.05 is over 6 sd.
    [0.1, 0.2, 0.3, 0.4, 0].forEach((p, j) => assert.ok(Math.abs(first[j] / rows - p) < 0.05, `${first}`));
    manualSeed(23);
    const one = await multinomial(w, 3).tolistAsync();
    manualSeed(23);
    assert.deepEqual(await multinomial(w, 3).tolistAsync(), one);
    assert.throws(() => multinomial(w, 5), /cannot sample n_sample > prob_dist.size\(-1\) samples without replacement/);
    multinomial(tensor([0.5, -1], { device }), 1);
    await assert.rejects(w.sum().itemAsync(), /probability tensor contains either `inf`, `nan` or element < 0/);
    multinomial(tensor([[0.5, Infinity]], { device }), 2, true);
    await assert.rejects(w.sum().itemAsync(), /probability tensor contains either `inf`, `nan` or element < 0/);
    multinomial(tensor([0, 0], { device, dtype: 'float32' }), 2, true);
    await assert.rejects(w.sum().itemAsync(), /invalid multinomial distribution \(sum of probabilities <= 0\)/);
  });

  it('nonzeroAsync and maskedSelectAsync count on the GPU, await the count and match the CPU', async () => {
    const next = rng(24);
    for (const dtype of ['bool', 'int32', 'int64', 'float32', 'float16'] as const) {
      for (const [shape, strided] of [[[1000], false], [[3, 5, 70], true], [[4, 9], false]] as const) {
        const x = input([...shape], dtype, next, strided);
        const g = await nonzeroAsync(gpu(x));
        await assertSameAsCpu(nonzero(x), g, 0, `nonzero ${dtype} ${shape} strided=${strided}`);
      }
    }
    assert.deepEqual((await nonzeroAsync(gpu(tensor([0, 0])))).shape, [0, 1]);
    assert.deepEqual((await nonzeroAsync(gpu(tensor(3)))).shape, [1, 0]);
    assert.deepEqual((await nonzeroAsync(tensor([0, 2]))).tolist(), [[1]], 'CPU tensors take the operator');
    assert.throws(() => nonzero(gpu(tensor([1]))), /use await nonzeroAsync\(t\)/);
    // masked_select: broadcasting, views, and the gradient through index_select.
    const data = tensor(Array.from({ length: 12 }, (_, k) => k - 5.5)).reshape([3, 4]);
    const mask = tensor([true, false, true, true]);
    await assertSameAsCpu(maskedSelect(data, mask), await maskedSelectAsync(gpu(data), gpu(mask)), 0, 'masked');
    const v = tensor(Array.from({ length: 12 }, (_, k) => k / 3), { requiresGrad: true, device });
    const picked = await maskedSelectAsync(v.reshape([3, 4]).t(), gpu(tensor([[true], [false], [true], [false]])));
    picked.mul(2).sum().backward();
    assert.deepEqual(await v.grad!.toArrayAsync(), [2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0]);
    await assert.rejects(maskedSelectAsync(gpu(data), gpu(tensor([1, 0, 1, 1]))), /expected BoolTensor for mask/);
  });

  it('uniqueAsync and whereAsync run on the GPU and equal the CPU operators (ties, NaN, views, dim, empty)', async () => {
    const next = rng(25);
    for (const dtype of ['bool', 'int32', 'int64', 'float32', 'float16'] as const) {
      for (const [shape, strided] of [[[300], false], [[3, 5, 7], true], [[4, 9], false]] as const) {
        const x = input([...shape], dtype, next, strided);
        const what = `${dtype} ${shape} strided=${strided}`;
        const cpu = unique(x, { returnInverse: true, returnCounts: true });
        const got = await uniqueAsync(gpu(x), { returnInverse: true, returnCounts: true }) as Tensor[];
        assert.equal(got.length, 3);
        for (const [k, name] of ['values', 'inverse', 'counts'].entries()) {
          assert.equal(got[k].device.type, 'webgpu', `${what} ${name} stays on the GPU`);
          await assertSameAsCpu(cpu[k], got[k], 0, `unique ${what} ${name}`);
        }
        // unique slices along a dim, on the strided input
        const d = shape.length - 1;
        const cpuDim = unique(x, { dim: d, returnCounts: true });
        const gotDim = await uniqueAsync(gpu(x), { dim: d, returnCounts: true }) as Tensor[];
        await assertSameAsCpu(cpuDim[0], gotDim[0], 0, `unique dim ${what}`);
        await assertSameAsCpu(cpuDim[1], gotDim[1], 0, `unique dim counts ${what}`);
        const cond = x.ne(0);
        const [cw, gw] = [where(cond), await whereAsync(gpu(cond))];
        assert.equal(gw.length, shape.length);
        for (let k = 0; k < cw.length; k++) await assertSameAsCpu(cw[k], gw[k], 0, `where ${what} [${k}]`);
      }
    }
    const plain = await uniqueAsync(gpu(tensor([2.5, NaN, -1, 2.5, NaN])));
    assert.ok(!Array.isArray(plain));
    assert.deepEqual(await plain.toArrayAsync(), [-1, 2.5, NaN, NaN], 'every NaN is its own value, as on the CPU');
    const empty = await uniqueAsync(gpu(tensor([])), { returnInverse: true, returnCounts: true }) as Tensor[];
    assert.deepEqual(empty.map((t) => t.shape), [[0], [0], [0]]);
    assert.deepEqual((await whereAsync(gpu(tensor(3)))).map((t) => t.shape), [[1]]);
    assert.deepEqual(
      ((await uniqueAsync(tensor([3, 1, 3]), { returnInverse: true })) as Tensor[]).map((t) => t.tolist()),
      [[1, 3], [1, 0, 1]],
      'CPU tensors take the operators',
    );
    await assert.rejects(
      uniqueAsync(gpu(tensor([1])), { returnCounts: 1 as unknown as boolean }),
      /argument 'returnCounts' must be bool, not int/,
    );
    await assert.rejects(uniqueAsync(gpu(tensor([1])), { bogus: 1 } as never), /unexpected keyword argument 'bogus'/);
    await assert.rejects(uniqueAsync({} as Tensor), /argument 'input' must be Tensor/);
    await assert.rejects(
      uniqueAsync(gpu(tensor([1])), { dim: 1.5 }),
      /uniqueAsync\(\): argument 'dim' must be int, not float/,
    );
    assert.throws(() => unique(tensor([1]), { dim: NaN }), /unique\(\): argument 'dim' must be int, not float/);
  });
});
