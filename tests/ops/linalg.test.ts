// Matrix products (mm, bmm, addmm, dot, mv) and their decompositions (matmul, linear) against float64
// references computed here, with PyTorch 1.13's dispatch rules and error messages (checked by hand against the
// installed torch). Transposed operands reach the gemm kernel as strided views and are never copied.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addmm,
  bmm,
  dot,
  type DType,
  linear,
  matmul,
  memoryStats,
  mm,
  mv,
  Tensor,
  tensor,
  toDType,
} from '../../mod.ts';
import { emptyMeta } from '../../core/ops/registry.ts';
import { resetPeakStorageBytes } from '../../core/tensor/storage.ts';
import { ALL_DTYPES, randomTensor, restride, rng, tolerance, values } from './_helpers.ts';

const next = rng(0x11a1);

/** A view of `t`'s storage with the given sizes and strides; `t` stays usable (unlike `restride`). */
function viewOf(t: Tensor, shape: number[], strides: number[]): Tensor {
  t.storage.retain();
  return new Tensor({ storage: t.storage, shape, strides, storageOffset: t.storageOffset, dtype: t.dtype });
}

function bag() {
  const start = memoryStats().liveTensors;
  const held: Tensor[] = [];
  return {
    keep<T extends Tensor>(t: T): T {
      held.push(t);
      return t;
    },
    done() {
      for (const t of held) t.dispose();
      assert.equal(memoryStats().liveTensors, start, 'leaked tensors');
    },
  };
}

/** How a rows x cols operand is laid out: row-major, a transposed view, or every other column of a wider matrix. */
type Layout = 'contiguous' | 'transposed' | 'stepped';

function matrix(rows: number, cols: number, dtype: string, layout: Layout): Tensor {
  switch (layout) {
    case 'contiguous':
      return randomTensor([rows, cols], dtype, next);
    case 'transposed':
      return restride(randomTensor([cols, rows], dtype, next), [rows, cols], [1, rows], 0);
    case 'stepped':
      return restride(randomTensor([rows, 2 * cols + 1], dtype, next), [rows, cols], [2 * cols + 1, 2], 1);
  }
}

const BITS: Record<string, number> = { uint8: 8, int8: 8, int16: 16, int32: 32, int64: 64 };

/** `v` wrapped to an integer dtype, as the products wrap (values stay below 2^53 here). */
function wrap(v: number, dtype: string): number {
  const bits = BITS[dtype];
  if (bits === undefined || bits === 64) return v;
  const m = 2 ** bits;
  const u = ((v % m) + m) % m;
  return dtype !== 'uint8' && u >= m / 2 ? u - m : u;
}

/** Float64 `a @ b` with NumPy's matmul rules, and the sum of |a_ik b_kj| per entry (the rounding scale). */
function refMatmul(a: Tensor, b: Tensor): { shape: number[]; want: number[]; scale: number[] } {
  const av = values(a), bv = values(b);
  const as = a.ndim === 1 ? [1, a.shape[0]] : [...a.shape];
  const bs = b.ndim === 1 ? [b.shape[0], 1] : [...b.shape];
  const [n, k] = as.slice(-2), p = bs[bs.length - 1];
  const ab = as.slice(0, -2), bb = bs.slice(0, -2);
  const nb = Math.max(ab.length, bb.length);
  const batch: number[] = [];
  for (let i = 0; i < nb; i++) {
    const x = ab[ab.length - nb + i] ?? 1, y = bb[bb.length - nb + i] ?? 1;
    batch.push(x === 1 ? y : x);
  }
  const count = batch.reduce((s, x) => s * x, 1);
  const offsetOf = (shape: number[], index: number[], matrixSize: number) => {
    let o = 0;
    for (let i = 0; i < shape.length; i++) {
      o = o * shape[i] + (shape[i] === 1 ? 0 : index[index.length - shape.length + i]);
    }
    return o * matrixSize;
  };
  const want: number[] = [], scale: number[] = [];
  const index = new Array<number>(nb).fill(0);
  for (let c = 0; c < count; c++) {
    const oa = offsetOf(ab, index, n * k), ob = offsetOf(bb, index, k * p);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < p; j++) {
        let s = 0, m = 0;
        for (let q = 0; q < k; q++) {
          const t = av[oa + i * k + q] * bv[ob + q * p + j];
          s += t;
          m += Math.abs(t);
        }
        want.push(s);
        scale.push(m);
      }
    }
    for (let d = nb - 1; d >= 0; d--) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
  const shape = [...batch, ...(a.ndim > 1 ? [n] : []), ...(b.ndim > 1 ? [p] : [])];
  return { shape, want, scale };
}

function assertProduct(actual: Tensor, ref: { shape: number[]; want: number[]; scale: number[] }, what: string) {
  assert.deepEqual([...actual.shape], ref.shape, `${what}: shape`);
  const got = values(actual);
  const dtype = actual.dtype.name;
  const tol = tolerance(dtype);
  for (let i = 0; i < got.length; i++) {
    const want = dtype in BITS ? wrap(ref.want[i], dtype) : ref.want[i];
    const bound = tol.atol + tol.rtol * ref.scale[i];
    if (!(Math.abs(got[i] - want) <= bound)) assert.fail(`${what}: element ${i} is ${got[i]}, expected ${want}`);
  }
}

describe('mm', () => {
  const shapes: Array<[number, number, number]> = [[1, 1, 1], [3, 7, 5], [17, 33, 7], [1, 33, 17], [33, 17, 1], [
    65,
    129,
    67,
  ]];
  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype}: odd sizes, every layout of both operands`, () => {
      const b = bag();
      for (const [M, K, N] of shapes) {
        for (const la of ['contiguous', 'transposed', 'stepped'] as const) {
          for (const lb of ['contiguous', 'transposed', 'stepped'] as const) {
            if (M * K * N > 10_000 && (la === 'stepped' || lb === 'stepped')) continue;
            const x = b.keep(matrix(M, K, dtype, la)), y = b.keep(matrix(K, N, dtype, lb));
            assertProduct(b.keep(mm(x, y)), refMatmul(x, y), `${M}x${K}x${N} ${la} @ ${lb}`);
          }
        }
      }
      b.done();
    });
  }

  it('every dtype the kernels claim: integers wrap like PyTorch, half types round once; Bool is refused', () => {
    const b = bag();
    for (const dtype of ALL_DTYPES) {
      const x = b.keep(matrix(5, 33, dtype, 'transposed')), y = b.keep(matrix(33, 3, dtype, 'contiguous'));
      if (dtype === 'bool') {
        assert.throws(() => mm(x, y), { message: `"addmm_impl_cpu_" not implemented for 'Bool'` });
        continue;
      }
      const out = b.keep(mm(x, y));
      assert.equal(out.dtype.name, dtype);
      assertProduct(out, refMatmul(x, y), dtype);
    }
    b.done();
  });

  it('empty sizes: K = 0 gives zeros, M = 0 or N = 0 an empty result', () => {
    const b = bag();
    const e = (shape: number[]) => b.keep(restride(tensor([], { dtype: 'float32' }), shape, [shape[1], 1], 0));
    const x = b.keep(randomTensor([4, 3], 'float32', next));
    assert.deepEqual(b.keep(mm(e([2, 0]), e([0, 3]))).toArray(), [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(b.keep(mm(e([0, 4]), x)).shape, [0, 3]);
    assert.deepEqual(b.keep(mm(x, e([3, 0]))).shape, [4, 0]);
    b.done();
  });

  it('transposed and strided operands are not copied: the only new storage is the result', () => {
    const b = bag();
    const [M, K, N] = [96, 160, 80];
    for (
      const [la, lb] of [['transposed', 'transposed'], ['stepped', 'transposed'], ['contiguous', 'stepped']] as const
    ) {
      const x = b.keep(matrix(M, K, 'float32', la)), y = b.keep(matrix(K, N, 'float32', lb));
      const before = memoryStats().bytes;
      resetPeakStorageBytes();
      const out = b.keep(mm(x, y));
      assert.equal(memoryStats().peakBytes - before, M * N * 4, `${la} @ ${lb}`);
      assertProduct(out, refMatmul(x, y), `${la} @ ${lb}`);
    }
    // bmm with a broadcast (stride-0) batch and transposed matrices.
    const batched = b.keep(restride(randomTensor([N, K], 'float32', next), [3, K, N], [0, 1, K], 0));
    const lhs = b.keep(restride(randomTensor([3, K, M], 'float32', next), [3, M, K], [K * M, 1, M], 0));
    const before = memoryStats().bytes;
    resetPeakStorageBytes();
    const out = b.keep(bmm(lhs, batched));
    assert.equal(memoryStats().peakBytes - before, 3 * M * N * 4, 'bmm');
    assertProduct(out, refMatmul(lhs, batched), 'bmm');
    b.done();
  });

  it('raises PyTorch errors', () => {
    const b = bag();
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    assert.throws(() => mm(f(2, 3), f(4, 5)), { message: 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)' });
    assert.throws(() => mm(f(3), f(3, 5)), { message: 'self must be a matrix' });
    assert.throws(() => mm(f(2, 3), f(3)), { message: 'mat2 must be a matrix' });
    assert.throws(() => mm(f(2, 3), b.keep(randomTensor([3, 2], 'float64', next))), {
      message: 'expected scalar type Float but found Double',
    });
    assert.throws(() => mm(b.keep(randomTensor([2, 3], 'int32', next)), f(3, 2)), {
      message: 'expected scalar type Int but found Float',
    });
    assert.throws(() => mm(b.keep(randomTensor([2, 3], 'bool', next)), f(3, 2)), {
      message: `"addmm_impl_cpu_" not implemented for 'Bool'`,
    });
    assert.throws(() => mm(f(2, 3), b.keep(randomTensor([3, 2], 'bool', next))), {
      message: 'expected scalar type Float but found Bool',
    });
    b.done();
  });
});

describe('bmm, addmm, dot, mv', () => {
  it('bmm: batches of odd sizes, strided operands, every non-Bool dtype', () => {
    const b = bag();
    for (const dtype of ['float32', 'float64', 'int32', 'bfloat16'] as const) {
      const x = b.keep(randomTensor([3, 7, 17], dtype, next));
      const y = b.keep(restride(randomTensor([3, 5, 17], dtype, next), [3, 17, 5], [85, 1, 17], 0));
      assertProduct(b.keep(bmm(x, y)), refMatmul(x, y), `bmm ${dtype}`);
    }
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    assert.deepEqual(b.keep(bmm(f(0, 2, 3), f(0, 3, 4))).shape, [0, 2, 4]);
    assert.throws(() => bmm(f(2, 3), f(2, 3, 4)), { message: 'batch1 must be a 3D tensor' });
    assert.throws(() => bmm(f(2, 2, 3), f(3, 4)), { message: 'batch2 must be a 3D tensor' });
    assert.throws(() => bmm(f(2, 2, 3), f(3, 3, 4)), {
      message: 'Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].',
    });
    assert.throws(() => bmm(f(2, 2, 3), f(2, 4, 4)), {
      message: 'Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].',
    });
    assert.throws(
      () => bmm(b.keep(randomTensor([1, 2, 2], 'bool', next)), b.keep(randomTensor([1, 2, 2], 'bool', next))),
      {
        message: `"bmm" not implemented for 'Bool'`,
      },
    );
    b.done();
  });

  it('addmm: beta * self + alpha * mat1 @ mat2 with self broadcast; beta = 0 ignores self', () => {
    const b = bag();
    const m1 = b.keep(matrix(5, 7, 'float64', 'transposed')), m2 = b.keep(matrix(7, 3, 'float64', 'stepped'));
    const product = refMatmul(m1, m2);
    for (const selfShape of [[5, 3], [3], [1, 3], [5, 1], []]) {
      const self = b.keep(randomTensor(selfShape, 'float64', next));
      const sv = values(self);
      const at = (i: number, j: number) =>
        selfShape.length === 0
          ? sv[0]
          : selfShape.length === 1
          ? sv[j]
          : sv[(selfShape[0] === 1 ? 0 : i) * selfShape[1] + (selfShape[1] === 1 ? 0 : j)];
      const out = b.keep(addmm(self, m1, m2, { beta: -0.5, alpha: 1.5 }));
      const want = product.want.map((v, idx) => 1.5 * v - 0.5 * at(Math.floor(idx / 3), idx % 3));
      assertProduct(out, { shape: [5, 3], want, scale: product.scale.map((s) => 2 * s + 2) }, `self ${selfShape}`);
    }
    const nan = b.keep(tensor([[NaN, NaN, NaN]]));
    const ignored = b.keep(addmm(b.keep(tensor([NaN, NaN, NaN], { dtype: 'float64' })), m1, m2, { beta: 0 }));
    assertProduct(ignored, product, 'beta = 0');
    assert.ok(values(b.keep(addmm(nan, b.keep(tensor([[1.5]])), b.keep(tensor([[2.5, 1, 0]]))))).every(Number.isNaN));
    // Integer alpha and beta are truncated toward zero, as PyTorch's integral gemm does.
    const ones = (s: number[]) => b.keep(restride(tensor(new Array(s[0] * s[1]).fill(1)), s, [s[1], 1], 0));
    assert.deepEqual(b.keep(addmm(ones([2, 2]), ones([2, 3]), ones([3, 2]), { alpha: 1.5 })).toArray(), [4, 4, 4, 4]);
    assert.deepEqual(b.keep(addmm(ones([2, 2]), ones([2, 3]), ones([3, 2]), { beta: 0.5 })).toArray(), [3, 3, 3, 3]);
    b.done();
  });

  it('addmm: PyTorch errors', () => {
    const b = bag();
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    assert.throws(() => addmm(f(3, 3), f(2, 3), f(3, 2)), {
      message:
        'The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 2].  Tensor sizes: [3, 3]',
    });
    assert.throws(() => addmm(f(1, 2, 2), f(2, 3), f(3, 2)), {
      message:
        'expand(torch.FloatTensor{[1, 2, 2]}, size=[2, 2]): the number of sizes provided (2) must be greater or equal to the number of dimensions in the tensor (3)',
    });
    assert.throws(() => addmm(f(2, 2), f(3), f(3, 2)), { message: 'mat1 must be a matrix, got 1-D tensor' });
    assert.throws(() => addmm(f(2, 2), f(2, 3), f(4, 2)), {
      message: 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)',
    });
    const d = b.keep(randomTensor([3, 2], 'float64', next));
    assert.throws(() => addmm(f(2, 2), f(2, 3), d), { message: 'self and mat2 must have the same dtype' });
    assert.throws(() => addmm(f(2, 2), b.keep(randomTensor([2, 3], 'float64', next)), f(3, 2)), {
      message: 'mat1 and mat2 must have the same dtype',
    });
    b.done();
  });

  it('dot and mv against float64 references, strided vectors, and PyTorch errors', () => {
    const b = bag();
    for (const dtype of ['float32', 'float64', 'int64', 'float16'] as const) {
      const u = b.keep(restride(randomTensor([67], dtype, next), [33], [2], 1));
      const v = b.keep(randomTensor([33], dtype, next));
      const r = refMatmul(u, v);
      assertProduct(b.keep(dot(u, v)), r, `dot ${dtype}`);
      const a = b.keep(matrix(17, 33, dtype, 'transposed'));
      assertProduct(b.keep(mv(a, u)), refMatmul(a, u), `mv ${dtype}`);
    }
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    const g = (...s: number[]) => b.keep(randomTensor(s, 'float64', next));
    assert.equal(b.keep(dot(f(0), f(0))).item(), 0);
    assert.throws(() => dot(f(3), f(4)), {
      message:
        'inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively',
    });
    assert.throws(() => dot(f(3, 1), f(3)), { message: '1D tensors expected, but got 2D and 1D tensors' });
    assert.throws(() => dot(f(3), g(3)), {
      message: 'dot : expected both vectors to have same dtype, but found Float and Double',
    });
    assert.throws(() => mv(f(2, 3), f(4)), { message: 'size mismatch, got 2, 2x3,4' });
    assert.throws(() => mv(f(3), f(3)), { message: 'vector + matrix @ vector expected, got 1, 1, 1' });
    assert.throws(() => mv(f(2, 3), f(3, 1)), { message: 'vector + matrix @ vector expected, got 1, 2, 2' });
    assert.throws(() => mv(f(2, 3), g(3)), { message: 'expected scalar type Float but found Double' });
    const bools = b.keep(randomTensor([3], 'bool', next));
    assert.throws(() => dot(bools, bools), { message: `"dot" not implemented for 'Bool'` });
    assert.throws(() => mv(b.keep(randomTensor([2, 3], 'bool', next)), bools), {
      message: `"addmv_impl_cpu" not implemented for 'Bool'`,
    });
    b.done();
  });
});

describe('matmul', () => {
  const cases: Array<[number[], number[]]> = [
    [[7], [7]],
    [[3, 7], [7]],
    [[7], [7, 5]],
    [[3, 7], [7, 5]],
    [[5, 3, 7], [7]],
    [[7], [5, 7, 3]],
    [[5, 3, 7], [7, 4]],
    [[3, 7], [5, 7, 4]],
    [[5, 1, 3, 7], [4, 7, 2]],
    [[2, 3, 7], [2, 7, 4]],
    [[1, 3, 7], [6, 7, 1]],
    [[2, 1, 1, 7], [3, 7, 2]],
    [[0, 3, 7], [7, 2]],
    [[4, 3, 0], [0, 5]],
  ];
  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype}: PyTorch's dispatch cases (dot, mv, mm, folded, broadcast bmm), contiguous results`, () => {
      const b = bag();
      for (const [sa, sb] of cases) {
        const x = b.keep(randomTensor(sa, dtype, next)), y = b.keep(randomTensor(sb, dtype, next));
        const out = b.keep(matmul(x, y));
        assertProduct(out, refMatmul(x, y), `${JSON.stringify(sa)} @ ${JSON.stringify(sb)}`);
        assert.ok(out.isContiguous(), `${JSON.stringify(sa)} @ ${JSON.stringify(sb)} contiguous`);
        assert.equal(out.base, undefined, 'the result is not a view');
      }
      b.done();
    });
  }

  it('transposed batches (the bmm path instead of folding) and the method form', () => {
    const b = bag();
    const x = b.keep(restride(randomTensor([5, 7, 3], 'float32', next), [5, 3, 7], [21, 1, 3], 0));
    const y = b.keep(randomTensor([7, 4], 'float32', next));
    assertProduct(b.keep(matmul(x, y)), refMatmul(x, y), 'transposed batch @ matrix');
    const z = b.keep(restride(randomTensor([5, 4, 7], 'float32', next), [5, 7, 4], [28, 1, 7], 0));
    const w = b.keep(randomTensor([3, 7], 'float32', next));
    assertProduct(b.keep(w.matmul(z)), refMatmul(w, z), 'matrix @ transposed batch');
    b.done();
  });

  it('raises the errors of whichever product PyTorch would call', () => {
    const b = bag();
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    const g = (...s: number[]) => b.keep(randomTensor(s, 'float64', next));
    const cases: Array<[() => unknown, string]> = [
      [
        () => matmul(b.keep(tensor(1.5)), f(3)),
        'both arguments to matmul need to be at least 1D, but they are 0D and 1D',
      ],
      [
        () => matmul(f(3), b.keep(tensor(1.5))),
        'both arguments to matmul need to be at least 1D, but they are 1D and 0D',
      ],
      [
        () => matmul(f(3), f(4)),
        'inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively',
      ],
      [() => matmul(f(2, 3), f(4)), 'size mismatch, got 2, 2x3,4'],
      [() => matmul(f(3), f(4, 2)), 'mat1 and mat2 shapes cannot be multiplied (1x3 and 4x2)'],
      [() => matmul(f(2, 3), f(4, 2)), 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)'],
      [() => matmul(f(5, 2, 3), f(4)), 'size mismatch, got 10, 10x3,4'],
      [() => matmul(f(3), f(5, 4, 2)), 'size mismatch, got 10, 10x4,3'],
      [() => matmul(f(5, 2, 3), f(4, 2)), 'mat1 and mat2 shapes cannot be multiplied (10x3 and 4x2)'],
      [() => matmul(f(2, 3), f(5, 4, 2)), 'mat1 and mat2 shapes cannot be multiplied (10x4 and 3x2)'],
      [
        () => matmul(b.keep(restride(randomTensor([5, 3, 2], 'float32', next), [5, 2, 3], [6, 1, 2], 0)), f(4, 2)),
        'Expected size for first two dimensions of batch2 tensor to be: [5, 3] but got: [5, 4].',
      ],
      [
        () => matmul(f(5, 2, 3), f(5, 4, 2)),
        'Expected size for first two dimensions of batch2 tensor to be: [5, 3] but got: [5, 4].',
      ],
      [
        () => matmul(f(5, 2, 3), f(4, 3, 2)),
        'The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 0',
      ],
      [() => matmul(f(2, 3), g(3, 2)), 'expected scalar type Float but found Double'],
      [() => matmul(f(4, 2, 3), g(4, 3, 2)), 'expected scalar type Float but found Double'],
      [() => matmul(f(3), g(3)), 'dot : expected both vectors to have same dtype, but found Float and Double'],
    ];
    for (const [call, message] of cases) assert.throws(call, { message });
    b.done(); // failed calls freed their temporaries too
  });
});

describe('linear', () => {
  it('input @ weight.T + bias for 1-d, 2-d and 3-d inputs (fused and unfused paths), with and without bias', () => {
    const b = bag();
    const weight = b.keep(randomTensor([5, 7], 'float64', next));
    const bias = b.keep(randomTensor([5], 'float64', next));
    const wT = b.keep(viewOf(weight, [7, 5], [1, 7]));
    const inputs = [
      b.keep(randomTensor([7], 'float64', next)),
      b.keep(randomTensor([3, 7], 'float64', next)),
      b.keep(randomTensor([2, 3, 7], 'float64', next)),
      b.keep(restride(randomTensor([3, 2, 7], 'float64', next), [2, 3, 7], [7, 14, 1], 0)),
      b.keep(randomTensor([2, 1, 3, 7], 'float64', next)),
    ];
    for (const input of inputs) {
      const ref = refMatmul(input, wT);
      assertProduct(b.keep(linear(input, weight)), ref, `no bias ${input.shape}`);
      const bv = values(bias);
      const want = ref.want.map((v, i) => v + bv[i % 5]);
      assertProduct(
        b.keep(linear(input, weight, bias)),
        { ...ref, want, scale: ref.scale.map((s) => s + 3) },
        `bias ${input.shape}`,
      );
    }
    const vecWeight = b.keep(randomTensor([7], 'float64', next));
    assert.deepEqual(b.keep(linear(inputs[1], vecWeight)).shape, [3]);
    b.done();
  });

  it('raises PyTorch errors', () => {
    const b = bag();
    const f = (...s: number[]) => b.keep(randomTensor(s, 'float32', next));
    assert.throws(() => linear(f(4, 3), f(5, 4)), {
      message: 'mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)',
    });
    assert.throws(() => linear(f(2, 4, 3), f(5, 3), f(4)), {
      message:
        'The expanded size of the tensor (5) must match the existing size (4) at non-singleton dimension 1.  Target sizes: [8, 5].  Tensor sizes: [4]',
    });
    assert.throws(() => linear(f(2, 4, 3), f(1, 5, 3)), {
      message: 't() expects a tensor with <= 2 dimensions, but self is 3D',
    });
    b.done();
  });
});

describe('products on Meta tensors', () => {
  const meta = (shape: number[], dtype: DType | string = 'float32') =>
    emptyMeta({ shape, dtype: toDType(dtype as DType) });
  it('give the shapes and dtypes the CPU kernels give, and the same errors', () => {
    const b = bag();
    const calls: Array<[string, number[][], (...t: Tensor[]) => Tensor]> = [
      ['mm', [[2, 3], [3, 4]], (x, y) => mm(x, y)],
      ['mm bad', [[2, 3], [4, 4]], (x, y) => mm(x, y)],
      ['bmm', [[2, 3, 4], [2, 4, 5]], (x, y) => bmm(x, y)],
      ['addmm', [[4], [2, 3], [3, 4]], (x, y, z) => addmm(x, y, z)],
      ['addmm bad self', [[3], [2, 3], [3, 4]], (x, y, z) => addmm(x, y, z)],
      ['dot', [[5], [5]], (x, y) => dot(x, y)],
      ['mv', [[2, 5], [5]], (x, y) => mv(x, y)],
      ['matmul folded', [[5, 2, 3], [3, 4]], (x, y) => matmul(x, y)],
      ['matmul transposed fold', [[2, 3], [5, 3, 4]], (x, y) => matmul(x, y)],
      ['matmul broadcast', [[5, 1, 2, 3], [4, 3, 2]], (x, y) => matmul(x, y)],
      ['matmul bad batch', [[5, 2, 3], [4, 3, 2]], (x, y) => matmul(x, y)],
      ['linear 3-d', [[2, 4, 3], [5, 3], [5]], (x, y, z) => linear(x, y, z)],
      ['linear 1-d', [[3], [5, 3]], (x, y) => linear(x, y)],
    ];
    for (const dtype of ['float32', 'int64'] as const) {
      for (const [what, shapes, call] of calls) {
        const cpuArgs = shapes.map((s) => b.keep(randomTensor(s, dtype, next)));
        const metaArgs = shapes.map((s) => b.keep(meta(s, dtype)));
        let cpu: Tensor | Error, onMeta: Tensor | Error;
        try {
          cpu = b.keep(call(...cpuArgs));
        } catch (e) {
          cpu = e as Error;
        }
        try {
          onMeta = b.keep(call(...metaArgs));
        } catch (e) {
          onMeta = e as Error;
        }
        if (cpu instanceof Error) {
          assert.ok(onMeta instanceof Error, `${what}: meta should fail like cpu (${cpu.message})`);
          assert.equal(onMeta.message, cpu.message, what);
        } else {
          assert.ok(!(onMeta instanceof Error), `${what}: ${onMeta}`);
          assert.deepEqual(
            [onMeta.shape, onMeta.dtype.name, onMeta.device.type],
            [cpu.shape, cpu.dtype.name, 'meta'],
            what,
          );
        }
      }
    }
    b.done();
  });
});
