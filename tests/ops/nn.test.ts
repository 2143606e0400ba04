// softmax / log_softmax with their backward kernels, nll_loss and cross_entropy against float64 references
// computed here, a few literal values printed by PyTorch 1.13, and PyTorch's error messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  crossEntropy,
  type DType,
  logSoftmax,
  memoryStats,
  nllLoss,
  nllLossNd,
  registerOperators,
  softmax,
  type Tensor,
  tensor,
  toDType,
} from '../../mod.ts';
import { emptyMeta } from '../../core/ops/registry.ts';
import { FLOAT_DTYPES, nonContiguousTensor, randomTensor, restride, rng, tolerance, values } from './_helpers.ts';

const next = rng(0x5f7);
const ops = registerOperators();
const MEAN = 1, SUM = 2, NONE = 0;
/** The public API's names of the reductions, by `at::Reduction` code. */
const R = ['none', 'mean', 'sum'] as const;

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

function assertValues(
  actual: Tensor,
  want: number[],
  shape: readonly number[],
  what: string,
  tol = tolerance(actual.dtype),
) {
  assert.deepEqual([...actual.shape], [...shape], `${what}: shape`);
  const got = values(actual);
  assert.equal(got.length, want.length, `${what}: numel`);
  for (let i = 0; i < got.length; i++) {
    if (Number.isNaN(want[i]) && Number.isNaN(got[i])) continue;
    if (got[i] === want[i]) continue;
    if (!(Math.abs(got[i] - want[i]) <= tol.atol + tol.rtol * Math.abs(want[i]))) {
      assert.fail(`${what}: element ${i} is ${got[i]}, expected ${want[i]}`);
    }
  }
}

/** Row-major `[outer, R, inner]` lines along `dim`: calls `fn` with the flat indices of each line. */
function forEachLine(shape: readonly number[], dim: number, fn: (indices: number[]) => void) {
  const d = shape.length === 0 ? 0 : (dim + shape.length) % shape.length;
  const R = shape.length === 0 ? 1 : shape[d];
  const inner = shape.slice(d + 1).reduce((a, b) => a * b, 1);
  const outer = shape.slice(0, d).reduce((a, b) => a * b, 1);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) fn(Array.from({ length: R }, (_, r) => (o * R + r) * inner + j));
  }
}

function refLogSoftmax(x: number[], shape: readonly number[], dim: number): number[] {
  const out = new Array<number>(x.length);
  forEachLine(shape, dim, (idx) => {
    const m = Math.max(...idx.map((i) => x[i]));
    const lse = Math.log(idx.reduce((s, i) => s + Math.exp(x[i] - m), 0));
    for (const i of idx) out[i] = x[i] - m - lse;
  });
  return out;
}
const refSoftmax = (x: number[], shape: readonly number[], dim: number) => refLogSoftmax(x, shape, dim).map(Math.exp);

/** Float64 nll_loss over `[N, C]` log-probabilities: the loss (per row for 'none') and the total weight. */
function refNll(
  logp: number[],
  C: number,
  target: number[],
  weight: number[] | null,
  reduction: number,
  ignore: number,
) {
  const rows: number[] = [];
  let loss = 0, total = 0;
  target.forEach((t, n) => {
    if (t === ignore) {
      rows.push(0);
      return;
    }
    const w = weight === null ? 1 : weight[t];
    rows.push(-w * logp[n * C + t]);
    loss -= w * logp[n * C + t];
    total += w;
  });
  if (reduction === NONE) return { out: rows, total: 0 };
  return { out: [reduction === MEAN ? loss / total : loss], total };
}

/** Float64 cross-entropy of `[N, C]` logits, class-index targets, as PyTorch defines it (label smoothing too). */
function refCrossEntropy(
  x: number[],
  N: number,
  C: number,
  target: number[],
  weight: number[] | null,
  reduction: number,
  ignore: number,
  ls: number,
) {
  const logp = refLogSoftmax(x, [N, C], 1);
  const nll = refNll(logp, C, target, weight, reduction, ignore);
  if (ls <= 0) return nll.out;
  const smooth = target.map((t, n) => {
    if (t === ignore) return 0;
    let s = 0;
    for (let c = 0; c < C; c++) s -= logp[n * C + c] * (weight === null ? 1 : weight[c]);
    return s;
  });
  const sum = smooth.reduce((a, b) => a + b, 0);
  const ret = reduction === NONE ? smooth : [reduction === MEAN ? sum / nll.total : sum];
  return ret.map((r, i) => (1 - ls) * nll.out[i] + r * (ls / C));
}

describe('softmax and log_softmax', () => {
  for (const dtype of FLOAT_DTYPES) {
    it(`${dtype}: every dim of contiguous and transposed 3-d inputs`, () => {
      const b = bag();
      for (
        const x of [b.keep(randomTensor([3, 7, 33], dtype, next)), b.keep(nonContiguousTensor([5, 1, 17], dtype, next))]
      ) {
        const xv = values(x);
        for (let dim = -3; dim < 3; dim++) {
          // float16 / bfloat16 compute in float32 and round once; compare with the dtype's tolerance.
          assertValues(b.keep(softmax(x, dim)), refSoftmax(xv, x.shape, dim), x.shape, `softmax dim ${dim}`);
          const tol = dtype === 'float32' ? { rtol: 1e-5, atol: 1e-5 } : tolerance(dtype);
          assertValues(
            b.keep(x.logSoftmax(dim)),
            refLogSoftmax(xv, x.shape, dim),
            x.shape,
            `log_softmax dim ${dim}`,
            tol,
          );
        }
      }
      b.done();
    });
  }

  it('dtype converts first; 0-d, size-0 and size-1 dims; large and infinite inputs as PyTorch', () => {
    const b = bag();
    const x = b.keep(randomTensor([4, 9], 'float32', next));
    const d = b.keep(softmax(x, 1, 'float64'));
    assert.equal(d.dtype.name, 'float64');
    assertValues(d, refSoftmax(values(x), x.shape, 1), x.shape, 'softmax to float64', { rtol: 1e-12, atol: 1e-15 });
    const ints = b.keep(tensor([[1, 2, 3], [0, 0, 9]]));
    assertValues(b.keep(logSoftmax(ints, 1, 'float32')), refLogSoftmax([1, 2, 3, 0, 0, 9], [2, 3], 1), [2, 3], 'ints');
    assert.equal(b.keep(softmax(b.keep(tensor(3.5)), 0)).item(), 1);
    assert.equal(b.keep(logSoftmax(b.keep(tensor(3.5)), -1)).item(), 0);
    const empty = b.keep(restride(tensor([], { dtype: 'float32' }), [0, 3], [3, 1], 0));
    assert.deepEqual(b.keep(softmax(empty, 1)).shape, [0, 3]);
    assert.deepEqual(b.keep(softmax(b.keep(restride(tensor([], { dtype: 'float32' }), [3, 0], [1, 1], 0)), 1)).shape, [
      3,
      0,
    ]);
    assert.deepEqual(b.keep(softmax(b.keep(randomTensor([3, 1], 'float32', next)), 1)).toArray(), [1, 1, 1]);
    // PyTorch: [[nan, nan], [1, 0], [0.2689414322, 0.7310585976]] and its logs [[nan, nan], [0, -inf], ...].
    const edge = b.keep(tensor([[-Infinity, -Infinity], [0, -Infinity], [1000, 1001]]));
    assertValues(b.keep(softmax(edge, 1)), [NaN, NaN, 1, 0, 0.2689414322376251, 0.7310585975646973], [3, 2], 'edge');
    assertValues(
      b.keep(logSoftmax(edge, 1)),
      [NaN, NaN, 0, -Infinity, -1.31326162815094, -0.31326165795326233],
      [3, 2],
      'log edge',
    );
    b.done();
  });

  it('raises PyTorch errors', () => {
    const b = bag();
    const longs = b.keep(tensor([[1, 2, 3], [4, 5, 6]]));
    assert.throws(() => softmax(longs, 1), { message: `"softmax_lastdim_kernel_impl" not implemented for 'Long'` });
    assert.throws(() => softmax(longs, 0), { message: `"softmax_kernel_impl" not implemented for 'Long'` });
    assert.throws(() => logSoftmax(longs, -1), {
      message: `"log_softmax_lastdim_kernel_impl" not implemented for 'Long'`,
    });
    assert.throws(() => logSoftmax(longs, 0), { message: `"softmax_kernel_impl" not implemented for 'Long'` });
    assert.throws(() => softmax(b.keep(tensor(2)), 0), {
      message: `"softmax_lastdim_kernel_impl" not implemented for 'Long'`,
    });
    const x = b.keep(randomTensor([2, 3], 'float32', next));
    assert.throws(() => softmax(x, 2), {
      message: 'Dimension out of range (expected to be in range of [-2, 1], but got 2)',
    });
    const half = b.keep(randomTensor([2, 3], 'float16', next));
    assert.throws(() => ops['_softmax'].call(half, 1, true), {
      message: 'softmax with half to float conversion is not supported on CPU',
    });
    b.done();
  });

  it('backward kernels match y * (g - sum(g * y)) and g - exp(y) * sum(g)', () => {
    const b = bag();
    for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
      for (const dim of [0, 1, -1]) {
        const x = b.keep(randomTensor([5, 7, 3], dtype, next));
        const g = b.keep(nonContiguousTensor([5, 7, 3], dtype, next));
        const y = b.keep(softmax(x, dim)), ly = b.keep(logSoftmax(x, dim));
        const yv = values(y), lyv = values(ly), gv = values(g);
        const want = new Array<number>(yv.length), wantLog = new Array<number>(yv.length);
        forEachLine(x.shape, dim, (idx) => {
          const dotGY = idx.reduce((s, i) => s + gv[i] * yv[i], 0);
          const sumG = idx.reduce((s, i) => s + gv[i], 0);
          for (const i of idx) {
            want[i] = yv[i] * (gv[i] - dotGY);
            wantLog[i] = gv[i] - Math.exp(lyv[i]) * sumG;
          }
        });
        const tol = dtype === 'float32' ? { rtol: 1e-5, atol: 1e-5 } : tolerance(dtype);
        const dx = b.keep(ops['_softmax_backward_data'].call(g, y, dim, toDType(dtype)) as Tensor);
        assertValues(dx, want, x.shape, `softmax backward ${dtype} dim ${dim}`, tol);
        const dlx = b.keep(ops['_log_softmax_backward_data'].call(g, ly, dim, toDType(dtype)) as Tensor);
        assertValues(dlx, wantLog, x.shape, `log_softmax backward ${dtype} dim ${dim}`, tol);
      }
    }
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    assert.throws(() => ops['_softmax_backward_data'].call(f(2, 3), f(3, 2), 1, toDType('float32')), {
      message:
        "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but [2, 3] does not equal [3, 2] (while checking arguments for softmax_backward)",
    });
    assert.throws(
      () =>
        ops['_softmax_backward_data'].call(
          f(2, 3),
          b.keep(randomTensor([2, 3], 'float64', next)),
          1,
          toDType('float32'),
        ),
      {
        message: 'expected scalar type Float but found Double',
      },
    );
    const longs = b.keep(randomTensor([2, 3], 'int64', next));
    assert.throws(() => ops['_softmax_backward_data'].call(longs, longs, 0, toDType('int64')), {
      message: `"softmax_backward_kernel_impl" not implemented for 'Long'`,
    });
    assert.throws(() => ops['_log_softmax_backward_data'].call(longs, longs, 1, toDType('int64')), {
      message: `"log_softmax_backward_lastdim_kernel_impl" not implemented for 'Long'`,
    });
    b.done();
  });
});

describe('nll_loss', () => {
  it('forward: every reduction, with and without class weights and ignored targets, 1-d and 2-d inputs', () => {
    const b = bag();
    for (const dtype of ['float32', 'float64', 'bfloat16'] as const) {
      const [N, C] = [17, 7];
      const logp = b.keep(nonContiguousTensor([N, C], dtype, next));
      const targets = Array.from({ length: N }, (_, n) => (n % 5 === 3 ? -100 : Math.floor(next() * C)));
      const target = b.keep(tensor(targets));
      const weight = b.keep(randomTensor([C], dtype, next));
      const tol = dtype === 'bfloat16' ? { rtol: 2e-2, atol: 2e-2 } : { rtol: 1e-5, atol: 1e-5 };
      for (const w of [null, weight]) {
        for (const reduction of [NONE, MEAN, SUM]) {
          const ref = refNll(values(logp), C, targets, w === null ? null : values(w), reduction, -100);
          const [out, total] = b.keep(ops['nll_loss_forward'].call(logp, target, w, reduction, -100) as Tensor[]);
          assertValues(out, ref.out, reduction === NONE ? [N] : [], `nll ${dtype} ${reduction}`, tol);
          assertValues(total, [ref.total], [], `total weight ${dtype} ${reduction}`, tol);
          assertValues(
            b.keep(nllLoss(logp, target, w, R[reduction])),
            ref.out,
            reduction === NONE ? [N] : [],
            'nllLoss',
            tol,
          );
        }
      }
    }
    // A 1-d input is one sample: 0-d target, 0-d result for every reduction.
    const row = b.keep(randomTensor([5], 'float32', next));
    const rv = values(row);
    assertValues(b.keep(nllLoss(row, b.keep(tensor(3)), null, R[NONE])), [-rv[3]], [], '1-d none');
    assertValues(b.keep(nllLoss(row, b.keep(tensor(3)))), [-rv[3]], [], '1-d mean');
    // uint8 targets are accepted, as PyTorch does; ignore_index may be any class.
    const x = b.keep(randomTensor([3, 4], 'float32', next));
    const xv = values(x);
    assertValues(
      b.keep(nllLoss(x, b.keep(tensor([1, 0, 3], { dtype: 'uint8' })), null, R[SUM])),
      [-(xv[1] + xv[4] + xv[11])],
      [],
      'uint8',
    );
    assertValues(
      b.keep(nllLoss(x, b.keep(tensor([1, 0, 3])), null, R[MEAN], 0)),
      [-(xv[1] + xv[11]) / 2],
      [],
      'ignore 0',
    );
    // Everything ignored, or nothing at all: mean is NaN (0 / 0), sum is 0.
    assert.ok(Number.isNaN(b.keep(nllLoss(x, b.keep(tensor([-100, -100, -100])))).item() as number));
    const none = b.keep(restride(tensor([], { dtype: 'float32' }), [0, 4], [4, 1], 0));
    const noTargets = b.keep(tensor([], { dtype: 'int64' }));
    assert.ok(Number.isNaN(b.keep(nllLoss(none, noTargets)).item() as number));
    assert.equal(b.keep(nllLoss(none, noTargets, null, R[SUM])).item(), 0);
    assert.deepEqual(b.keep(nllLoss(none, noTargets, null, R[NONE])).shape, [0]);
    b.done();
  });

  it('backward: -weight[t] * g at each kept target, divided by the total weight for mean', () => {
    const b = bag();
    const [N, C] = [9, 5];
    const logp = b.keep(randomTensor([N, C], 'float64', next));
    const targets = [0, 4, -100, 2, 2, 1, 3, -100, 4];
    const target = b.keep(tensor(targets));
    const weight = b.keep(randomTensor([C], 'float64', next));
    const wv = values(weight);
    for (const reduction of [NONE, MEAN, SUM]) {
      const [, total] = b.keep(ops['nll_loss_forward'].call(logp, target, weight, reduction, -100) as Tensor[]);
      const grad = b.keep(reduction === NONE ? randomTensor([N], 'float64', next) : tensor(1.5, { dtype: 'float64' }));
      const gv = values(grad);
      const want = new Array<number>(N * C).fill(0);
      targets.forEach((t, n) => {
        if (t === -100) return;
        const g = reduction === NONE ? gv[n] : reduction === MEAN ? gv[0] / (total.item() as number) : gv[0];
        want[n * C + t] = -wv[t] * g;
      });
      const dx = b.keep(ops['nll_loss_backward'].call(grad, logp, target, weight, reduction, -100, total) as Tensor);
      assertValues(dx, want, [N, C], `backward ${reduction}`);
    }
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    const t4 = b.keep(tensor([1, 0, 4, 2]));
    const x = f(4, 5);
    assert.throws(
      () => ops['nll_loss_backward'].call(b.keep(tensor(1.5)), x, t4, null, NONE, -100, b.keep(tensor(4.5))),
      {
        message: 'Dimension specified as 0 but tensor has no dimensions',
      },
    );
    assert.throws(() => ops['nll_loss_backward'].call(f(3), x, t4, null, NONE, -100, b.keep(tensor(4.5))), {
      message: 'Expected a tensor of dimension 1 and tensor.size[0] == 4 but got: dimension 1 and tensor.size[0] = 3',
    });
    assert.throws(() => ops['nll_loss_backward'].call(f(2), x, t4, null, MEAN, -100, b.keep(tensor(4.5))), {
      message: 'Expected a single element grad_output tensor, but got: [2]',
    });
    assert.throws(() => ops['nll_loss_backward'].call(b.keep(tensor(1.5)), x, t4, null, MEAN, -100, f(2)), {
      message: 'expected total_weight to be a  single element tensor, got: [2] (2 elements)',
    });
    assert.throws(
      () => ops['nll_loss_backward'].call(b.keep(randomTensor([4], 'float64', next)), x, t4, null, NONE, -100, f()),
      {
        message: 'expected scalar type Float but found Double',
      },
    );
    b.done();
  });

  it('raises PyTorch errors', () => {
    const b = bag();
    const x = b.keep(randomTensor([4, 5], 'float32', next));
    const t = b.keep(tensor([1, 0, 4, 2]));
    const cases: Array<[() => unknown, string]> = [
      [() => nllLoss(x, b.keep(tensor([1, 0, 4, 2], { dtype: 'int32' }))), 'expected scalar type Long but found Int'],
      [() => nllLoss(x, b.keep(tensor([1, 7, 4, 2]))), 'Target 7 is out of bounds.'],
      [() => nllLoss(x, b.keep(tensor([1, -1, 4, 2])), null, R[NONE]), 'Target -1 is out of bounds.'],
      [
        () => nllLoss(b.keep(randomTensor([2, 3, 4], 'float32', next)), b.keep(tensor([[0, 1, 2, 0], [1, 1, 1, 1]]))),
        'input tensor should be 1D or 2D',
      ],
      [() => nllLoss(b.keep(tensor(1.5)), b.keep(tensor(0))), 'input tensor should be 1D or 2D'],
      [
        () => nllLoss(x, b.keep(tensor([[1], [0], [4], [2]]))),
        '0D or 1D target tensor expected, multi-target not supported',
      ],
      [() => nllLoss(x, b.keep(tensor([1, 0, 4]))), 'size mismatch (got input: [4, 5], target: [3])'],
      [
        () => nllLoss(b.keep(randomTensor([5], 'float32', next)), b.keep(tensor([3]))),
        'size mismatch (got input: [5], target: [1])',
      ],
      [
        () => nllLoss(x, t, b.keep(randomTensor([4], 'float32', next))),
        'weight tensor should be defined either for all 5 classes or no classes but got weight tensor of shape: [4]',
      ],
      [() => nllLoss(x, t, b.keep(randomTensor([5], 'float64', next))), 'expected scalar type Float but found Double'],
      [() => nllLoss(b.keep(tensor([[1, 2]])), b.keep(tensor([0]))), `"nll_loss_out_frame" not implemented for 'Long'`],
    ];
    for (const [call, message] of cases) assert.throws(call, { message });
    b.done();
  });
});

describe('cross_entropy', () => {
  // torch.nn.functional.cross_entropy in PyTorch 1.13 printed these for the logits and targets below.
  const logits = [[1.5, 2, 3, -1], [1, 1, 1, 1], [0.25, -2, 4, 0.5]];
  it('matches values printed by PyTorch 1.13', () => {
    const b = bag();
    const x = b.keep(tensor(logits));
    const t = b.keep(tensor([2, 0, 3]));
    const w = b.keep(tensor([0.5, 2, 1, 3]));
    const close = (got: Tensor, want: number[]) =>
      assertValues(got, want, got.shape, 'torch value', { rtol: 2e-6, atol: 1e-6 });
    close(b.keep(crossEntropy(x, t)), [1.8055936098098755]);
    close(b.keep(crossEntropy(x, t, w)), [2.6295504570007324]);
    close(b.keep(crossEntropy(x, t, null, R[MEAN], -100, 0.2)), [1.9014270305633545]);
    close(b.keep(crossEntropy(x, t, w, R[MEAN], -100, 0.2)), [2.6767966747283936]);
    close(b.keep(crossEntropy(x, b.keep(tensor([2, -100, 3])), w, R[NONE], -100, 0.2)), [
      1.272791862487793,
      0,
      9.767729759216309,
    ]);
    const probs = b.keep(softmax(x, 0));
    close(b.keep(crossEntropy(x, probs, w, R[MEAN], -100, 0.3)), [3.9523651599884033]);
    close(b.keep(crossEntropy(x, probs, null, R[NONE])), [2.579603672027588, 1.6566288471221924, 1.9321520328521729]);
    // Negative label smoothing is ignored, as in PyTorch.
    close(b.keep(crossEntropy(x, t, null, R[MEAN], -100, -0.5)), [1.8055936098098755]);
    b.done();
  });

  it('class-index targets against float64 references: weights, ignore_index, label smoothing, every reduction', () => {
    const b = bag();
    const [N, C] = [33, 7];
    for (const dtype of ['float32', 'float64'] as const) {
      const x = b.keep(nonContiguousTensor([N, C], dtype, next));
      const targets = Array.from({ length: N }, (_, n) => (n % 7 === 2 ? 5 : Math.floor(next() * C)));
      const target = b.keep(tensor(targets));
      const weight = b.keep(randomTensor([C], dtype, next));
      for (const w of [null, weight]) {
        for (const ls of [0, 0.1, 1]) {
          for (const ignore of [-100, 5]) {
            for (const reduction of [NONE, MEAN, SUM]) {
              const want = refCrossEntropy(
                values(x),
                N,
                C,
                targets,
                w === null ? null : values(w),
                reduction,
                ignore,
                ls,
              );
              const got = b.keep(crossEntropy(x, target, w, R[reduction], ignore, ls));
              const what = `${dtype} w=${w !== null} ls=${ls} ignore=${ignore} reduction=${reduction}`;
              assertValues(got, want, reduction === NONE ? [N] : [], what, { rtol: 1e-5, atol: 1e-5 });
            }
          }
        }
      }
    }
    // A 1-d input is one sample with a 0-d target.
    const row = b.keep(randomTensor([6], 'float64', next));
    const want = refCrossEntropy(values(row), 1, 6, [4], null, MEAN, -100, 0.25);
    assertValues(b.keep(crossEntropy(row, b.keep(tensor(4)), null, R[MEAN], -100, 0.25)), want, [], '1-d');
    b.done();
  });

  it('N-d inputs [N, C, d] take the class from dim 1 (PyTorch flattens them for nll_loss)', () => {
    const b = bag();
    const x = b.keep(randomTensor([2, 3, 4], 'float64', next));
    const targets = [0, 2, 1, 1, 2, 2, 0, -100];
    const target = b.keep(tensor([targets.slice(0, 4), targets.slice(4)]));
    // Reference: move the class dim last, then the 2-d formula over 8 rows.
    const xv = values(x);
    const rows: number[] = [];
    for (let n = 0; n < 2; n++) {
      for (let d = 0; d < 4; d++) for (let c = 0; c < 3; c++) rows.push(xv[(n * 3 + c) * 4 + d]);
    }
    for (const reduction of [NONE, MEAN, SUM]) {
      for (const ls of [0, 0.2]) {
        const want = refCrossEntropy(rows, 8, 3, targets, null, reduction, -100, ls);
        const got = b.keep(crossEntropy(x, target, null, R[reduction], -100, ls));
        assertValues(got, want, reduction === NONE ? [2, 4] : [], `reduction ${reduction} ls ${ls}`);
      }
    }
    // nll_loss_nd (torch.nn.functional.nll_loss) over the log-probabilities gives the same loss.
    const logp = b.keep(logSoftmax(x, 1));
    const flatLogp = refLogSoftmax(rows, [8, 3], 1);
    for (const reduction of [NONE, MEAN, SUM]) {
      const want = refNll(flatLogp, 3, targets, null, reduction, -100).out;
      assertValues(
        b.keep(nllLossNd(logp, target, null, R[reduction])),
        want,
        reduction === NONE ? [2, 4] : [],
        `nd ${reduction}`,
      );
    }
    assertValues(
      b.keep(nllLossNd(b.keep(tensor([[[-0.5, -2], [-1, -0.25]]])), b.keep(tensor([[0, 1]])))),
      [0.375],
      [],
      'doc',
    );
    assert.throws(() => nllLossNd(b.keep(tensor(1.5)), b.keep(tensor(0))), {
      message: 'Expected 1 or more dimensions (got 0)',
    });
    assert.throws(() => crossEntropy(x, b.keep(tensor([[0, 1, 2], [0, 1, 2]]))), {
      message: 'Expected target size [2, 4], got [2, 3]',
    });
    assert.throws(() => crossEntropy(x, b.keep(tensor([[0, 1, 2, 0]]))), {
      message: 'Expected input batch_size (2) to match target batch_size (1).',
    });
    b.done();
  });

  it('probability targets: -(log_softmax * target * weight) summed over classes', () => {
    const b = bag();
    const [N, C] = [5, 6];
    const x = b.keep(randomTensor([N, C], 'float64', next));
    const p = b.keep(softmax(b.keep(randomTensor([N, C], 'float64', next)), 1));
    const w = b.keep(randomTensor([C], 'float64', next));
    const logp = refLogSoftmax(values(x), [N, C], 1), pv = values(p), wv = values(w);
    for (const weighted of [false, true]) {
      for (const ls of [0, 0.3]) {
        const rows = Array.from({ length: N }, (_, n) => {
          let s = 0;
          for (let c = 0; c < C; c++) {
            s -= logp[n * C + c] * (pv[n * C + c] * (1 - ls) + ls / C) * (weighted ? wv[c] : 1);
          }
          return s;
        });
        const total = rows.reduce((a, c) => a + c, 0);
        const weight = weighted ? w : null;
        const what = `weighted ${weighted} ls ${ls}`;
        assertValues(b.keep(crossEntropy(x, p, weight, R[NONE], -100, ls)), rows, [N], what);
        assertValues(b.keep(crossEntropy(x, p, weight, R[SUM], -100, ls)), [total], [], what);
        assertValues(b.keep(crossEntropy(x, p, weight, R[MEAN], -100, ls)), [total / N], [], what);
      }
    }
    const empty = b.keep(restride(tensor([], { dtype: 'float32' }), [0, 5], [5, 1], 0));
    assert.ok(Number.isNaN(b.keep(crossEntropy(empty, empty)).item() as number));
    b.done();
  });

  it('raises PyTorch errors', () => {
    const b = bag();
    const x = b.keep(randomTensor([4, 5], 'float32', next));
    const t = b.keep(tensor([1, 0, 4, 2]));
    const cases: Array<[() => unknown, string]> = [
      [
        () => crossEntropy(x, b.keep(tensor([1, 0, 4, 2], { dtype: 'int32' }))),
        'expected scalar type Long but found Int',
      ],
      [() => crossEntropy(x, b.keep(tensor([1, 7, 4, 2]))), 'Target 7 is out of bounds.'],
      [() => crossEntropy(x, b.keep(tensor([1, 7, 4, 2])), null, R[MEAN], -100, 0.1), 'Target 7 is out of bounds.'],
      [() => crossEntropy(x, t, null, R[MEAN], -100, 1.5), 'label_smoothing must be between 0.0 and 1.0. Got: 1.5'],
      [
        () => crossEntropy(x, b.keep(softmax(x, 1)), null, R[MEAN], -100, 1.5),
        'label_smoothing must be between 0.0 and 1.0. Got: 1.5',
      ],
      [
        () => crossEntropy(x, b.keep(tensor([[0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 1]]))),
        'Expected floating point type for target with class probabilities, got Long',
      ],
      [
        () => crossEntropy(b.keep(tensor(1.5)), b.keep(tensor(0))),
        'Expected floating point type for target with class probabilities, got Long',
      ],
      [
        () => crossEntropy(b.keep(tensor([[1, 2]])), b.keep(tensor([0]))),
        `"log_softmax_lastdim_kernel_impl" not implemented for 'Long'`,
      ],
      [
        () => crossEntropy(x, b.keep(softmax(x, 1)), b.keep(randomTensor([4], 'float32', next))),
        'cross_entropy: weight tensor should be defined either for all 5 classes or no classes but got weight tensor of shape: [4]',
      ],
    ];
    for (const [call, message] of cases) assert.throws(call, { message });
    b.done();
  });
});

describe('NN operators on Meta tensors', () => {
  const meta = (shape: number[], dtype: DType | string = 'float32') =>
    emptyMeta({ shape, dtype: toDType(dtype as DType) });
  it('give the shapes and dtypes the CPU kernels give, and the same shape errors', () => {
    const b = bag();
    const target = (s: number[]) => {
      const flat = tensor(Array.from({ length: s.reduce((x, y) => x * y, 1) }, (_, i) => i % 3));
      const shaped = flat.view(s);
      flat.dispose();
      return shaped;
    };
    const calls: Array<[string, Array<[number[], string, boolean?]>, (...t: Tensor[]) => Tensor | Tensor[]]> = [
      ['softmax', [[[3, 4], 'float32']], (x) => softmax(x, 0)],
      ['softmax dtype', [[[3, 4], 'float32']], (x) => softmax(x, 1, 'float64')],
      ['log_softmax 0-d', [[[], 'float64']], (x) => logSoftmax(x, 0)],
      ['softmax bad dim', [[[3, 4], 'float32']], (x) => softmax(x, 2)],
      [
        'nll_loss_forward',
        [[[4, 3], 'float32'], [[4], 'int64', true]],
        (x, t) => ops['nll_loss_forward'].call(x, t, null, NONE, -100) as Tensor[],
      ],
      ['nll_loss', [[[4, 3], 'float32'], [[4], 'int64', true]], (x, t) => nllLoss(x, t)],
      ['nll_loss size mismatch', [[[4, 3], 'float32'], [[3], 'int64', true]], (x, t) => nllLoss(x, t)],
      ['cross_entropy', [[[4, 3], 'float32'], [[4], 'int64', true]], (x, t) => crossEntropy(x, t, null, R[NONE])],
      [
        'cross_entropy smoothing',
        [[[4, 3], 'float32'], [[4], 'int64', true]],
        (x, t) => crossEntropy(x, t, null, R[MEAN], -100, 0.1),
      ],
      ['cross_entropy probabilities', [[[4, 3], 'float32'], [[4, 3], 'float32']], (x, t) => crossEntropy(x, t)],
      [
        'cross_entropy N-d',
        [[[2, 3, 5], 'float32'], [[2, 5], 'int64', true]],
        (x, t) => crossEntropy(x, t, null, R[NONE]),
      ],
    ];
    for (const [what, specs, call] of calls) {
      const cpuArgs = specs.map(([s, d, isTarget]) => b.keep(isTarget ? target(s) : randomTensor(s, d, next)));
      const metaArgs = specs.map(([s, d]) => b.keep(meta(s, d)));
      let cpu: Tensor[] | Error, onMeta: Tensor[] | Error;
      try {
        const r = call(...cpuArgs);
        cpu = b.keep(Array.isArray(r) ? r : [r]);
      } catch (e) {
        cpu = e as Error;
      }
      try {
        const r = call(...metaArgs);
        onMeta = b.keep(Array.isArray(r) ? r : [r]);
      } catch (e) {
        onMeta = e as Error;
      }
      if (cpu instanceof Error) {
        assert.ok(onMeta instanceof Error, `${what}: meta should fail like cpu (${cpu.message})`);
        assert.equal(onMeta.message, cpu.message, what);
      } else {
        assert.ok(!(onMeta instanceof Error), `${what}: ${onMeta}`);
        assert.deepEqual(
          onMeta.map((t) => [t.shape, t.dtype.name, t.device.type]),
          cpu.map((t) => [t.shape, t.dtype.name, 'meta']),
          what,
        );
      }
    }
    b.done();
  });
});
