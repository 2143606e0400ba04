/**
 * vmap rule coverage beyond the basics: type promotion of logically 0-d operands, in-place operators, indexing,
 * concatenation of batched and unbatched tensors, tuple-returning reductions, the fallback for custom operators
 * (lists, in-place, nested levels), in-place randomness, and the options and errors of the func transforms.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addmm,
  bmm,
  cat,
  DispatchKey,
  dot,
  embedding,
  float32,
  float64,
  func,
  gather,
  indexAdd,
  indexSelect,
  int32,
  Library,
  manualSeed,
  mm,
  ones,
  randint,
  randintLike,
  randn,
  scatterAdd,
  setVmapFallbackWarningHandler,
  stack,
  type Tensor,
  tensor,
  vmap,
  zeros,
} from '../../mod.ts';

function loop(fn: (...a: Tensor[]) => Tensor, inputs: Tensor[], dims: Array<number | null>): Tensor {
  const j = dims.findIndex((d) => d !== null);
  const n = inputs[j].shape[dims[j]!];
  return stack(
    Array.from({ length: n }, (_, i) => fn(...inputs.map((x, k) => (dims[k] === null ? x : x.select(dims[k]!, i))))),
  );
}

function close(a: Tensor, b: Tensor, tol = 1e-5): void {
  assert.deepEqual(a.shape, b.shape);
  assert.equal(a.dtype, b.dtype);
  const x = a.toArray() as number[], y = b.toArray() as number[];
  x.forEach((v, i) => assert.ok(Math.abs(v - y[i]) <= tol * (1 + Math.abs(y[i])), `element ${i}: ${v} vs ${y[i]}`));
}

describe('vmap rules', () => {
  it('a logically 0-d operand promotes as a 0-d tensor', () => {
    manualSeed(20);
    const x = randn([5, 3]), z = randn([5], { dtype: float64 });
    const f = (a: Tensor, b: Tensor) => a.add(b);
    close(vmap(f)(x, z), loop(f, [x, z], [0, 0])); // float32, as per sample
    const i = randint(0, 3, [5, 3]), j = randint(0, 3, [5], { dtype: int32 });
    assert.equal(vmap((a: Tensor, b: Tensor) => a.mul(b))(i, j).dtype.name, 'int64');
  });
  it('in-place operators write through to the batched input', () => {
    manualSeed(21);
    const y = randn([4, 3]), before = y.clone(), b = randn([3]);
    const out = vmap((a: Tensor, c: Tensor) => a.mul_(2).add_(c), { inDims: [0, null] })(y, b);
    close(y, before.mul(2).add(b));
    close(out, y);
  });
  it('indexing: gather, scatterAdd, indexAdd, indexSelect, embedding', () => {
    manualSeed(22);
    const x = randn([4, 3, 5]), idx = randint(0, 5, [4, 3, 2]), src = randn([4, 3, 2]);
    const g = (a: Tensor, i: Tensor) => gather(a, 1, i);
    close(vmap(g)(x, idx), loop(g, [x, idx], [0, 0]));
    const s = (a: Tensor, i: Tensor, v: Tensor) => scatterAdd(a, 1, i, v);
    close(vmap(s)(x, idx, src), loop(s, [x, idx, src], [0, 0, 0]));
    const rows = tensor([2, 0, 2]);
    const ia = (a: Tensor, v: Tensor) => indexAdd(a, 0, rows, v);
    const v3 = randn([4, 3, 5]);
    close(vmap(ia)(x, v3), loop(ia, [x, v3], [0, 0]));
    const is = (a: Tensor) => indexSelect(a, 1, tensor([4, 0]));
    close(vmap(is)(x), loop(is, [x], [0]));
    const w = randn([6, 2]), ids = randint(0, 6, [4, 3]);
    const e = (i: Tensor) => embedding(w, i);
    close(vmap(e)(ids), loop(e, [ids], [0]));
  });
  it('cat of batched and unbatched tensors, addmm, max with indices, views', () => {
    manualSeed(23);
    const x = randn([4, 2, 3]), c = randn([1, 3]);
    const f = (a: Tensor) => cat([a, c, a.flip([1])], 0);
    close(vmap(f)(x), loop(f, [x], [0]));
    const bias = randn([4, 2]), m1 = randn([4, 2, 3]), m2 = randn([3, 2]);
    const h = (b: Tensor, p: Tensor) => addmm(b, p, m2, { beta: 0.5, alpha: 2 });
    close(vmap(h)(bias, m1), loop(h, [bias, m1], [0, 0]));
    const mx = (a: Tensor) => {
      const [values, indices] = a.max(1, true) as unknown as [Tensor, Tensor];
      return values.add(indices);
    };
    close(vmap(mx)(x), loop(mx, [x], [0]));
    const sq = randn([4, 3, 3]);
    const v = (a: Tensor) =>
      a.diagonal().add(a.unsqueeze(0).expand([2, 3, 3]).sum(0).squeeze().clone().contiguous().sum(1));
    close(vmap(v)(sq), loop(v, [sq], [0]));
  });
  it('linear algebra errors name the logical shapes (PyTorch messages)', () => {
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => mm(a, b))(randn([2, 3, 4]), randn([2, 5, 6])),
      /mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x6\)/,
    );
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => bmm(a, b))(randn([2, 1, 3, 4]), randn([2, 5, 4, 6])),
      /Expected size for first two dimensions of batch2 tensor to be: \[1, 4\] but got: \[5, 4\]\./,
    );
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => dot(a, b))(randn([2, 3]), randn([2, 3], { dtype: float64 })),
      /dot : expected both vectors to have same dtype, but found Float and Double/,
    );
    assert.throws(
      () => vmap((a: Tensor, b: Tensor) => mm(a, b))(randn([2, 3]), randn([2, 3, 3])),
      /self must be a matrix/,
    );
  });
  it('factories inside vmap are unbatched and broadcast', () => {
    const x = randn([4, 3]);
    close(
      vmap((a: Tensor) => zeros([3]).add(a).add(ones([2, 3])))(x),
      loop((a) => zeros([3]).add(a).add(ones([2, 3])), [x], [0]),
    );
  });
});

describe('vmap as_strided (PyTorch batching rule: strides and offset per example)', () => {
  /** Per-example as_strided with the offset taken relative to the batched tensor's, as PyTorch defines it. */
  function asStridedLoop(xs: Tensor, dim: number, size: number[], stride: number[], offset?: number): Tensor {
    return stack(Array.from({ length: xs.shape[dim] }, (_, i) => {
      const x = xs.select(dim, i);
      return x.asStrided(size, stride, (offset ?? xs.storageOffset) + x.storageOffset - xs.storageOffset);
    }));
  }
  const values = (t: Tensor) => t.contiguous().toArray();

  it('matches the loop on contiguous, offset, transposed and odd-strided inputs, and returns views', () => {
    manualSeed(30);
    const seen: string[] = [];
    setVmapFallbackWarningHandler((m) => seen.push(m));
    try {
      const xs = randn([4, 6]);
      for (
        const [size, stride, offset] of [[[2, 2], [1, 2]], [[2, 2], [1, 2], 1], [[3], [2], 0], [[2, 3], [0, 1]]] as [
          number[],
          number[],
          number?,
        ][]
      ) {
        const out = vmap((x: Tensor) => x.asStrided(size, stride, offset ?? null))(xs);
        assert.deepEqual(out.shape, [4, ...size]);
        assert.deepEqual(
          values(out),
          values(asStridedLoop(xs, 0, size, stride, offset)),
          `${size} ${stride} ${offset}`,
        );
      }
      // batch dimension not in front in memory (inDims 1): each example starts at its own column
      const ys = randn([6, 5]);
      const cols = vmap((x: Tensor) => x.asStrided([3, 2], [2, 5]), { inDims: 1 })(ys);
      assert.deepEqual(values(cols), values(asStridedLoop(ys, 1, [3, 2], [2, 5])));
      // an odd-strided view with a storage offset: PyTorch's worked example, checked by hand with functorch
      const base = tensor(Array.from({ length: 30 }, (_, i) => i), { dtype: float32 });
      const v = base.narrow(0, 2, 28).asStrided([4, 6], [7, 1], 3);
      const picked = vmap((x: Tensor) => x.asStrided([3], [2], 4))(v);
      assert.deepEqual(picked.tolist(), [[4, 6, 8], [11, 13, 15], [18, 20, 22], [25, 27, 29]]);
      // nested vmap: both batch dimensions keep their strides
      const zs = tensor(Array.from({ length: 24 }, (_, i) => i), { dtype: float32 }).reshape([2, 3, 4]);
      assert.deepEqual(
        vmap(vmap((x: Tensor) => x.asStrided([2], [2], 0)))(zs).tolist(),
        [[[0, 2], [4, 6], [8, 10]], [[12, 14], [16, 18], [20, 22]]],
      );
      // an empty view needs no memory
      assert.deepEqual(vmap((x: Tensor) => x.asStrided([0], [2], 100))(xs).shape, [4, 0]);
      // the result is a view: writes reach the batched input
      const b = zeros([3, 5]);
      vmap((x: Tensor) => x.asStrided([2], [2], 1).add_(1))(b);
      assert.deepEqual(b.tolist(), Array(3).fill([0, 1, 0, 1, 0]));
      assert.deepEqual(seen, [], 'as_strided has a rule: no fallback');
    } finally {
      setVmapFallbackWarningHandler(null);
    }
  });

  it('gradients through a batched as_strided equal the per-example ones', () => {
    manualSeed(31);
    const xs = randn([3, 7]);
    const loss = (x: Tensor) => x.asStrided([3, 2], [2, 1], 1).mul(x.asStrided([3, 2], [2, 1], 1)).sum();
    const perExample = vmap(func.grad(loss))(xs);
    const expected = stack(Array.from({ length: 3 }, (_, i) => func.grad(loss)(xs.select(0, i).clone())));
    close(perExample, expected);
  });

  it("refuses views outside the example's memory with PyTorch's messages, and stays usable", () => {
    const xs = randn([4, 6]);
    assert.throws(() => vmap((x: Tensor) => x.asStrided([3, 3], [2, 1]))(xs), {
      message: 'result = tensor.as_strided([3, 3], [2, 1], 0) can access memory outside of `tensor`. `result` can ' +
        'access some memory in range [0, 7], but `tensor` can only access some memory in range [0, 6]. This is not ' +
        'supported inside of vmap, please try to rewrite the `as_strided` call as a sequence of PyTorch view ' +
        'operations',
    });
    assert.throws(() => vmap((x: Tensor) => x.asStrided([2], [1], 5))(xs.narrow(1, 0, 5)), {
      message: 'result = tensor.as_strided([2], [1], 5) can access memory outside of `tensor`. `result` can access ' +
        'some memory in range [5, 7], but `tensor` can only access some memory in range [0, 5]. This is not ' +
        'supported inside of vmap, please try to rewrite the `as_strided` call as a sequence of PyTorch view ' +
        'operations',
    });
    const v = randn([30]).narrow(0, 2, 28).asStrided([4, 6], [7, 1], 3);
    assert.throws(
      () => vmap((x: Tensor) => x.asStrided([3], [2], 1))(v),
      /`result` can access some memory in range \[1, 6\], but `tensor` can only access some memory in range \[3, 9\]/,
    );
    assert.throws(() => vmap((x: Tensor) => x.asStrided([2], [1]))(zeros([4, 0])), {
      message: 'result = tensor.as_strided([2], [1], 0) can access memory outside of `tensor`. `tensor` has no ' +
        'storage but the passed-in (size, stride, storage_offset) imply a result with some storage. This is not ' +
        'supported inside of vmap, please try to rewrite the `as_strided` call as a sequence of PyTorch view ' +
        'operations',
    });
    assert.throws(() => vmap((x: Tensor) => x.asStrided([2], [1, 2]))(xs), {
      message: 'Tensor.as_strided(size, stride, ...): size and stride must have the same length! Got size [2] and ' +
        'stride [1, 2]',
    });
    assert.deepEqual(vmap((x: Tensor) => x.asStrided([2], [3]))(xs).shape, [4, 2]);
  });
});

describe('vmap fallback for operators without a rule', () => {
  it('a custom operator returning a list, and an in-place one, run per sample (also nested)', () => {
    using def = new Library('vmaptest', 'DEF');
    const halves = def.define('vmaptest::halves(Tensor x) -> Tensor[]');
    const twice = def.define('vmaptest::twice_(Tensor(a!) x) -> Tensor(a!)');
    using impl = new Library('vmaptest', 'IMPL');
    impl.impl(halves, (_hi, _lo, x) => [x.narrow(0, 0, 1).mul(1), x.narrow(0, 1, 1).mul(1)], DispatchKey.CPU);
    impl.impl(twice, (_hi, _lo, x) => x.mul_(2), DispatchKey.CPU);
    const seen: string[] = [];
    setVmapFallbackWarningHandler((m) => seen.push(m));
    try {
      const x = randn([3, 2, 4]);
      const parts = vmap((a: Tensor) => halves.call(a))(x) as unknown as Tensor[];
      close(parts[0], x.narrow(1, 0, 1));
      close(parts[1], x.narrow(1, 1, 1));
      const z = randn([2, 3, 2]);
      close(vmap(vmap((a: Tensor) => halves.call(a)[1]))(z), z.narrow(2, 1, 1));
      const y = randn([3, 2]), y0 = y.clone();
      vmap((a: Tensor) => twice.call(a))(y);
      close(y, y0.mul(2));
      assert.equal(seen.length, 2);
      assert.match(seen[0], /batching rule for vmaptest::halves\./);
      assert.match(seen[1], /batching rule for vmaptest::twice_\./);
    } finally {
      setVmapFallbackWarningHandler(null);
    }
  });
});

describe('vmap randomness, in place', () => {
  it("'same' fills every sample alike, 'different' each its own; an unbatched target is refused under 'different'", () => {
    manualSeed(24);
    const rows = (t: Tensor) => new Set((t.tolist() as number[][]).map((r) => r.join()));
    const same = vmap((a: Tensor) => a.clone().normal_(), { randomness: 'same' })(zeros([4, 3]));
    assert.equal(rows(same).size, 1);
    const diff = vmap((a: Tensor) => a.clone().uniform_(), { randomness: 'different' })(zeros([4, 3]));
    assert.equal(rows(diff).size, 4);
    const outside = zeros([3]);
    assert.throws(
      () => vmap((a: Tensor) => outside.normal_().add(a), { randomness: 'different' })(zeros([4, 3])),
      /vmap: Cannot ask for different inplace randomness on an unbatched tensor/,
    );
    const ints = vmap((a: Tensor) => randintLike(a, 100), { randomness: 'different' })(
      zeros([4, 3], { dtype: float32 }),
    );
    assert.equal(rows(ints).size, 4);
  });
});

describe('func transform options and errors', () => {
  it('argnums as a list, hasAux, gradAndValue', () => {
    const x = tensor([1, 2], { dtype: float64 }), y = tensor([3, 4], { dtype: float64 });
    const [gx, gy] = func.grad((a: Tensor, b: Tensor) => a.mul(b).sum(), { argnums: [0, 1] })(x, y) as Tensor[];
    close(gx, y);
    close(gy, x);
    const [g, aux] = func.grad((a: Tensor) => [a.pow(2).sum(), a.mul(10)], { hasAux: true })(x) as [Tensor, Tensor];
    close(g, x.mul(2));
    close(aux, x.mul(10));
    const [g2, value] = func.gradAndValue((a: Tensor) => a.exp().sum())(x) as [Tensor, Tensor];
    close(g2, x.exp());
    close(value, x.exp().sum());
  });
  it("PyTorch's errors", () => {
    const x = tensor([1, 2], { dtype: float64 });
    assert.throws(
      () => func.grad((a: Tensor) => a.mul(2))(x),
      /Expected f\(\*args\) to return a scalar Tensor, got tensor with 1 dims/,
    );
    assert.throws(
      () => func.grad((a: Tensor) => a.sum(), { hasAux: true })(x),
      /output of function f should be a tuple: \(output, aux\) if has_aux is True/,
    );
    assert.throws(
      () => func.grad((a: Tensor) => a.sum(), { argnums: 3 })(x),
      /Got argnum=3, but only 1 positional inputs/,
    );
    const [, vjpFn] = func.vjp((a: Tensor) => a.mul(2), [x]);
    assert.throws(
      () => vjpFn(tensor([1, 2, 3], { dtype: float64 })),
      /Mismatch in shape: grad_output\[0\] has a shape of \[3\] and output\[0\] has a shape of \[2\]/,
    );
    close(vjpFn(tensor([1, 1], { dtype: float64 }))[0] as Tensor, tensor([2, 2], { dtype: float64 }));
  });
  it('jacrev under vmap gives per-sample Jacobians', () => {
    manualSeed(25);
    const xs = randn([3, 4], { dtype: float64 });
    const f = (a: Tensor) => a.tanh().mul(a.sum());
    const js = vmap(func.jacrev(f))(xs);
    close(js, loop((a) => func.jacrev(f)(a), [xs], [0]), 1e-10);
  });
  it('jvp and jacfwd (forward products through double backward) agree with jacrev', () => {
    manualSeed(26);
    const m = randn([2, 3], { dtype: float64 }), z = randn([3], { dtype: float64 });
    const g = (a: Tensor) => m.matmul(a).tanh().mul(a.sum());
    const t = randn([3], { dtype: float64 });
    const [y, dy] = func.jvp(g, [z], [t]);
    close(y, g(z));
    close(dy, func.jacrev(g)(z).matmul(t), 1e-10);
    close(func.jacfwd(g)(z), func.jacrev(g)(z), 1e-10);
    assert.throws(
      () => func.jvp(g, [z], [randn([2], { dtype: float64 })]),
      /Expected primals and tangents to have the same shape/,
    );
  });
});
