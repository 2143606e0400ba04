/**
 * functionalize: results and input mutations equal eager mode (seeded random float64 inputs, odd shapes, views of
 * views, writes through views, outputs aliasing inputs), graph capture without in-place (or view) ops, nesting
 * and composition with func.grad and vmap, and PyTorch's errors.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DispatchKey,
  DispatchKeySet,
  float32,
  float64,
  func,
  functionalize,
  FunctionalTensor,
  int64,
  isFunctionalTensor,
  keep,
  Library,
  manualSeed,
  memoryStats,
  randn,
  scope,
  type Tensor,
  tensor,
  trace,
  vmap,
  zeros,
} from '../../mod.ts';

type Fn = (...xs: Tensor[]) => unknown;

function leaves(v: unknown): Tensor[] {
  return Array.isArray(v) ? v.flatMap(leaves) : [v as Tensor];
}

function close(actual: Tensor, expected: Tensor, what = 'tensor'): void {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  const a = actual.toArray() as number[], e = expected.toArray() as number[];
  for (let i = 0; i < e.length; i++) {
    assert.ok(Math.abs(a[i] - e[i]) <= 1e-12 * (1 + Math.abs(e[i])), `${what}[${i}]: ${a[i]} vs ${e[i]}`);
  }
}

/** Runs `f` eagerly and functionalized on copies of `inputs`; outputs and the inputs afterwards must agree. */
function matchesEager(f: Fn, inputs: Tensor[], options?: { remove?: 'mutations' | 'mutationsAndViews' }): unknown {
  const eagerIn = inputs.map((x) => x.clone());
  const funcIn = inputs.map((x) => x.clone());
  const expected = leaves(f(...eagerIn));
  const result = functionalize(f, options)(...funcIn);
  const actual = leaves(result);
  assert.equal(actual.length, expected.length);
  actual.forEach((t, i) => {
    assert.ok(!isFunctionalTensor(t), `output ${i} is unwrapped`);
    close(t, expected[i], `output ${i}`);
  });
  funcIn.forEach((x, i) => close(x, eagerIn[i], `input ${i} after the call`));
  return result;
}

/** `ns::name.overload` -> `name`. */
const baseName = (target: string) => target.slice(target.indexOf('::') + 2).split('.')[0];

/** The op names (without overload) of a graph's calls. */
const opNames = (f: Fn, inputs: Tensor[], options?: { remove?: 'mutations' | 'mutationsAndViews' }) => {
  const g = trace(functionalize(f, options), inputs);
  return { g, names: g.calls.map((n) => baseName(n.target)) };
};

const VIEW_OPS = ['view', 'select', 'slice', 'narrow', 't', 'transpose', 'permute', 'unsqueeze', 'squeeze', 'expand'];

// In-place ops on intermediates and through views of views of inputs and intermediates.
function mixed(x: Tensor, y: Tensor): Tensor[] {
  const z = x.mul(y); // [5, 7]
  z.add_(1).mul_(y).sub_(x, { alpha: 0.5 });
  const zt = z.t(); // [7, 5]
  const part = zt.narrow(0, 2, 4).select(1, 3); // a view of a view of a view
  part.mul_(-2);
  const sibling = z.view([35]); // made before the next write, read after it
  z.diagonal().fill_(0.25);
  x.select(0, 4).narrow(0, 1, 5).copy_(y.select(0, 0).narrow(0, 0, 5)); // an input, through a view
  const xr = x.unsqueeze(0).squeeze(0).permute([1, 0]);
  xr.select(0, 6).clampMin_(0);
  y.neg_();
  return [z, sibling, zt, part, x.sum(1), xr];
}

describe('functionalize: results equal eager mode', () => {
  it('in-place ops on intermediates and inputs, through views of views, odd shapes', () => {
    manualSeed(11);
    matchesEager(mixed as Fn, [randn(5, 7, { dtype: float64 }), randn(5, 7, { dtype: float64 })]);
  });

  it('a write through a view reaches the base and the sibling views made before it', () => {
    manualSeed(12);
    matchesEager((x) => {
      const b = x.mul(1);
      const rows = b.unbind(0);
      const [left, right] = b.split(2, 1);
      rows[1].add_(100);
      const readLeft = left.mul(1); // reads a sibling after the write
      right.select(1, 0).zero_();
      const cols = b.chunk(3, 1);
      cols[2].mul_(3);
      return [b, rows[0], rows[2], left, right, readLeft, cols[0], b.expand([2, 3, 5]).sum(0)];
    }, [randn(3, 5, { dtype: float64 })]);
  });

  it('as_strided and diagonal views are written back with the generic scatter', () => {
    manualSeed(13);
    matchesEager((x) => {
      const b = x.add(0);
      b.asStrided([2, 2], [3, 1], 1).mul_(10);
      b.diagonal({ offset: 1 }).add_(7);
      return b;
    }, [randn(3, 3, { dtype: float64 })]);
  });

  it('ops without a rule go through the fallback (multi-output, reductions, matmul)', () => {
    manualSeed(14);
    matchesEager((x, w) => {
      const h = x.matmul(w);
      h.relu_();
      const [values, indices] = h.sort(1);
      h.select(1, 0).add_(indices.select(1, 0).to(float64));
      return [h.softmax(1), values, indices.to(float64), h.max()];
    }, [randn(4, 3, { dtype: float64 }), randn(3, 6, { dtype: float64 })]);
  });

  it('mutationsAndViews gives the same results', () => {
    manualSeed(15);
    matchesEager(mixed as Fn, [randn(5, 7, { dtype: float64 }), randn(5, 7, { dtype: float64 })], {
      remove: 'mutationsAndViews',
    });
  });
});

describe('functionalize: inputs and outputs', () => {
  it('applies input mutations at the end, once, with copy_', () => {
    const x = tensor([1, 2, 3, 4], { dtype: float64 });
    let seenInside: number[] = [];
    const out = functionalize((fx: Tensor) => {
      fx.select(0, 1).mul_(10);
      fx.add_(1);
      seenInside = x.toArray() as number[]; // the real input, untouched until the end
      return fx.mul(2);
    })(x);
    assert.deepEqual(seenInside, [1, 2, 3, 4]);
    assert.deepEqual(x.toArray(), [2, 21, 4, 5]);
    assert.deepEqual(out.toArray(), [4, 42, 8, 10]);
    const g = trace(
      functionalize((fx: Tensor) => {
        fx.select(0, 1).mul_(10);
        fx.add_(1);
        return fx.mul(2);
      }),
      [tensor([1, 2, 3, 4], { dtype: float64 })],
    );
    assert.equal(g.calls.filter((n) => n.target === 'aten::copy_').length, 1);
  });

  it('outputs that alias unmutated inputs stay aliases; after a write they hold the new values', () => {
    const x = randn(2, 3);
    assert.equal(functionalize((fx: Tensor) => fx)(x), x);
    const v = functionalize((fx: Tensor) => fx.view([-1]))(x) as Tensor;
    assert.equal(v.storage, x.storage);
    const x2 = tensor([[1, 2, 3], [4, 5, 6]], { dtype: float64 });
    const w = functionalize((fx: Tensor) => {
      const flat = fx.view([-1]);
      fx.select(0, 1).add_(1);
      return flat;
    })(x2) as Tensor;
    assert.deepEqual(w.toArray(), [1, 2, 3, 5, 6, 7]);
    assert.deepEqual(x2.toArray(), [1, 2, 3, 5, 6, 7]);
    assert.notEqual(w.storage, x2.storage);
  });

  it('memory stays flat: the call frees the values it made, scope() the wrappers', () => {
    const g = functionalize(mixed as Fn);
    const x = randn(5, 7, { dtype: float64 }), y = randn(5, 7, { dtype: float64 });
    scope(() => {
      g(x, y);
    });
    const before = memoryStats();
    for (let i = 0; i < 10; i++) {
      scope(() => {
        g(x, y);
      });
    }
    const after = memoryStats();
    assert.equal(after.liveTensors, before.liveTensors);
    assert.equal(after.bytes, before.bytes);
  });

  it('nested structures of inputs and outputs, non-tensor arguments pass through', () => {
    const out = functionalize((pair: Tensor[], k: number) => {
      pair[0].mul_(k);
      return { a: pair[0].add(pair[1]), k };
    })([tensor([1, 2]), tensor([3, 4])], 3) as { a: Tensor; k: number };
    assert.deepEqual(out.a.toArray(), [6, 10]);
    assert.equal(out.k, 3);
  });

  it('in-place ops keep the written dtype and check shapes as eager does', () => {
    const x = tensor([1, 2, 3], { dtype: float32 });
    functionalize((fx: Tensor) => fx.add_(tensor([0.5, 0.5, 0.5], { dtype: float64 })))(x);
    assert.equal(x.dtype, float32);
    assert.deepEqual(x.toArray(), [1.5, 2.5, 3.5]);
    assert.throws(
      () => functionalize((fx: Tensor) => fx.add_(1.5))(tensor([1, 2], { dtype: int64 })),
      { message: "result type Float can't be cast to the desired output type Long" },
    );
    assert.throws(
      () => functionalize((fx: Tensor) => fx.add_(randn(2, 3)))(randn(3)),
      { message: "output with shape [3] doesn't match the broadcast shape [2, 3]" },
    );
  });

  it('functional tensors read through: item, toArray, printing', () => {
    functionalize((fx: Tensor) => {
      assert.ok(fx instanceof FunctionalTensor);
      const v = fx.view([2, 2]);
      fx.mul_(2);
      assert.deepEqual(v.tolist(), [[2, 4], [6, 8]]);
      assert.equal(v.select(0, 1).select(0, 1).item(), 8);
      assert.match(String(v), /^FunctionalTensor\(/);
      return v;
    })(tensor([1, 2, 3, 4]));
  });
});

describe('functionalize: graph capture', () => {
  it('a traced functionalized function has no in-place op but the final copies into inputs', () => {
    manualSeed(21);
    const x = randn(5, 7, { dtype: float64 }), y = randn(5, 7, { dtype: float64 });
    const { g, names } = opNames(mixed as Fn, [x.clone(), y.clone()]);
    const inPlace = g.calls.filter((n) => baseName(n.target).endsWith('_'));
    assert.ok(names.includes('add') && names.includes('mul') && names.includes('where'));
    // Exactly one copy_ per mutated input, at the end, into a placeholder.
    assert.deepEqual(inPlace.map((n) => n.target), ['aten::copy_', 'aten::copy_']);
    const placeholders = g.placeholders.map((p) => p.name);
    inPlace.forEach((n) => assert.ok(placeholders.includes(String(n.args[0]))));
    assert.deepEqual(g.calls.slice(-2), inPlace);
    // Replay: same outputs and the same input mutations as eager.
    const ex = x.clone(), ey = y.clone(), rx = x.clone(), ry = y.clone();
    const expected = mixed(ex, ey);
    const replayed = g.run([rx, ry]) as Tensor[];
    replayed.forEach((t, i) => close(t, expected[i], `replayed output ${i}`));
    close(rx, ex, 'x after replay');
    close(ry, ey, 'y after replay');
  });

  it('mutationsAndViews: the graph has no view op either ({view}_copy instead)', () => {
    manualSeed(22);
    const { g, names } = opNames(mixed as Fn, [randn(5, 7, { dtype: float64 }), randn(5, 7, { dtype: float64 })], {
      remove: 'mutationsAndViews',
    });
    for (const name of names) assert.ok(!VIEW_OPS.includes(name), `view op ${name} in the graph`);
    assert.ok(names.includes('select_copy') && names.includes('t_copy') && names.includes('view_copy'));
    assert.deepEqual(names.filter((n) => n.endsWith('_')), ['copy_', 'copy_']);
    manualSeed(23);
    const x = randn(5, 7, { dtype: float64 }), y = randn(5, 7, { dtype: float64 });
    const ex = x.clone(), ey = y.clone(), rx = x.clone(), ry = y.clone();
    const expected = mixed(ex, ey);
    (g.run([rx, ry]) as Tensor[]).forEach((t, i) => close(t, expected[i], `replayed output ${i}`));
    close(rx, ex, 'x after replay');
    close(ry, ey, 'y after replay');
  });

  it('tensors made inside the function are functional too: in-place ops on them leave the graph', () => {
    const f = (x: Tensor) => {
      const acc = zeros([3], { dtype: float64 }); // a fresh tensor, written below
      assert.equal(isFunctionalTensor(acc), isFunctionalTensor(x));
      for (let i = 0; i < 3; i++) acc.add_(x.select(0, i));
      acc.narrow(0, 0, 2).mul_(x.select(0, 0).narrow(0, 0, 2));
      return acc;
    };
    manualSeed(24);
    const x = randn(3, 3, { dtype: float64 });
    const { g, names } = opNames(f, [x]);
    assert.deepEqual(names.filter((n) => n.endsWith('_')), []);
    close(g.run([x]) as Tensor, f(x.clone()), 'replayed');
    close(functionalize(f)(x) as Tensor, f(x.clone()), 'functionalized');
  });

  it('fake tracing: nothing computed, the input untouched, the same graph replays', () => {
    manualSeed(25);
    const x = randn(5, 7, { dtype: float64 }), y = randn(5, 7, { dtype: float64 });
    const xs = x.toArray(), ys = y.toArray();
    const g = trace(functionalize(mixed as Fn), [x, y], { tracingMode: 'fake' });
    assert.deepEqual(x.toArray(), xs);
    assert.deepEqual(y.toArray(), ys);
    assert.deepEqual(g.calls.map((n) => baseName(n.target)).filter((n) => n.endsWith('_')), ['copy_', 'copy_']);
    const ex = x.clone(), ey = y.clone(), rx = x.clone(), ry = y.clone();
    const expected = mixed(ex, ey);
    (g.run([rx, ry]) as Tensor[]).forEach((t, i) => close(t, expected[i], `replayed output ${i}`));
    close(rx, ex, 'x after replay');
    close(ry, ey, 'y after replay');
  });

  it('random in-place ops become out-of-place draws', () => {
    const x = randn(50);
    const { names } = opNames((fx) => {
      fx.uniform_(2, 3);
      return fx.normal_(5, 0.1).add(0);
    }, [x]);
    assert.ok(!names.some((n) => n === 'uniform_' || n === 'normal_'));
    const y = randn(50);
    functionalize((fy: Tensor) => fy.uniform_(2, 3))(y);
    assert.ok((y.toArray() as number[]).every((v) => v >= 2 && v <= 3));
  });
});

describe('functionalize: nesting and composition', () => {
  it('functionalize(functionalize(f)) equals eager and captures without in-place ops', () => {
    manualSeed(31);
    const x = randn(5, 7, { dtype: float64 }), y = randn(5, 7, { dtype: float64 });
    const ex = x.clone(), ey = y.clone(), fx = x.clone(), fy = y.clone();
    const expected = mixed(ex, ey);
    (functionalize(functionalize(mixed as Fn)) as Fn)(fx, fy);
    close(fx, ex, 'x');
    close(fy, ey, 'y');
    const g = trace(functionalize(functionalize(mixed as Fn)), [x.clone(), y.clone()]);
    assert.deepEqual(g.calls.map((n) => n.target).filter((t) => baseName(t).endsWith('_')), [
      'aten::copy_',
      'aten::copy_',
    ]);
    void expected;
  });

  const loss = (x: Tensor) => {
    const y = x.mul(2);
    y.narrow(0, 1, 4).mul_(x.narrow(0, 0, 4));
    y.select(0, 0).tanh_();
    return y.sin().sum();
  };

  it('func.grad(functionalize(f)) and functionalize(func.grad(f)) equal func.grad(f)', () => {
    manualSeed(32);
    const x = randn(5, { dtype: float64 });
    const expected = func.grad(loss)(x) as Tensor;
    close(func.grad(functionalize(loss))(x) as Tensor, expected, 'grad(functionalize(f))');
    close(functionalize(func.grad(loss))(x) as Tensor, expected, 'functionalize(grad(f))');
  });

  it('vmap(functionalize(f)) and functionalize(vmap(f)) equal a loop', () => {
    manualSeed(34);
    const f = (x: Tensor) => {
      const y = x.mul(1);
      y.select(0, 0).add_(1);
      y.narrow(0, 1, 2).mul_(x.narrow(0, 0, 2));
      return y;
    };
    const xs = randn(4, 3, { dtype: float64 });
    const expected = xs.unbind(0).map((x) => f(x.clone()));
    const a = vmap(functionalize(f))(xs) as Tensor;
    const b = functionalize(vmap(f))(xs) as Tensor;
    expected.forEach((e, i) => {
      close(a.select(0, i), e, `vmap(functionalize) sample ${i}`);
      close(b.select(0, i), e, `functionalize(vmap) sample ${i}`);
    });
  });
});

describe('functionalize: custom operators', () => {
  it('an out= variant becomes its functional op; a list-returning op goes through the fallback', () => {
    using def = new Library('fztest', 'DEF');
    const scale = def.define('fztest::scale(Tensor x, float s) -> Tensor');
    const scaleOut = def.define('fztest::scale.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)');
    const halves = def.define('fztest::halves(Tensor x) -> Tensor[]');
    using impl = new Library('fztest', 'IMPL');
    impl.impl(scale, (_hi, _lo, x, s) => x.mul(s), DispatchKey.CPU);
    impl.impl(scaleOut, (_hi, _lo, x, s, out) => out.copy_(x.mul(s)), DispatchKey.CPU);
    impl.impl(halves, (_hi, _lo, x) => [x.narrow(0, 0, 1).mul(1), x.narrow(0, 1, 1).mul(1)], DispatchKey.CPU);
    const f = (x: Tensor, out: Tensor) => {
      scaleOut.call(x, 3, out.select(0, 1));
      const [a, b] = halves.call(out) as unknown as Tensor[];
      return a.add(b);
    };
    manualSeed(41);
    matchesEager(f as Fn, [randn(3, { dtype: float64 }), randn(2, 3, { dtype: float64 })]);
    const { g, names } = opNames(f as Fn, [randn(3, { dtype: float64 }), randn(2, 3, { dtype: float64 })]);
    const targets = g.calls.map((n) => n.target);
    assert.ok(targets.includes('fztest::scale') && targets.includes('fztest::halves'));
    assert.ok(!targets.includes('fztest::scale.out'));
    assert.deepEqual(names.filter((n) => n.endsWith('_')), ['copy_']);
  });

  it('an in-place custom operator without a functional variant is refused in PyTorch words', () => {
    using def = new Library('fztest2', 'DEF');
    const bump = def.define('fztest2::bump_(Tensor(a!) x) -> Tensor(a!)');
    using impl = new Library('fztest2', 'IMPL');
    impl.impl(bump, (_hi, _lo, x) => x.add_(1), DispatchKey.CPU);
    assert.throws(
      () => functionalize((x: Tensor) => bump.call(x))(randn(2)),
      (e: Error) =>
        e.message.startsWith('Found a custom (non-ATen) operator that either mutates or its inputs: bump_.'),
    );
  });
});

describe('functionalize: errors', () => {
  it('argument checks in PyTorch words', () => {
    assert.throws(() => functionalize(3 as never), { message: 'functionalize: expected a function, got number' });
    assert.throws(
      () => functionalize((x: Tensor) => x, { remove: 'views' as never }),
      (e: Error) =>
        e.message.startsWith("functionalize(f, remove='mutations'): received invalid argument for remove=views"),
    );
    assert.throws(
      () => functionalize((x: Tensor) => x, { bogus: 1 } as never),
      { message: "functionalize() got an unexpected keyword argument 'bogus'" },
    );
  });

  it('mutating a tensor from outside with a functional tensor is refused; the runtime stays usable', () => {
    const outside = tensor([0, 0, 0]);
    assert.throws(
      () => functionalize((x: Tensor) => outside.add_(x))(tensor([1, 2, 3])),
      {
        message: 'mutating a non-functional tensor with a functional tensor is not allowed. Please ensure that all ' +
          'of your inputs are wrapped inside of a functionalize() call.',
      },
    );
    assert.deepEqual(outside.toArray(), [0, 0, 0]);
    assert.deepEqual((functionalize((x: Tensor) => x.add_(1))(tensor([1])) as Tensor).toArray(), [2]);
  });

  it('backward() inside is refused as functorch refuses it; an input leaf that requires grad cannot be written', () => {
    const w = randn(3, { dtype: float64, requiresGrad: true });
    assert.throws(
      () => functionalize((x: Tensor) => x.mul(w).sum().backward())(randn(3, { dtype: float64 })),
      /^RuntimeError: backward\(\) called inside a functorch transform/,
    );
    assert.equal(w.grad, null);
    assert.throws(
      () => func.grad(functionalize((x: Tensor) => x.add_(1).sin().sum()))(randn(3)),
      { message: 'a leaf Variable that requires grad is being used in an in-place operation.' },
    );
  });

  it('writing through an expanded view is refused like eager', () => {
    const message = 'unsupported operation: more than one element of the written-to tensor refers to a single ' +
      'memory location. Please clone() the tensor before performing the operation.';
    assert.throws(() => functionalize((x: Tensor) => x.expand([2, 3]).add_(1))(randn(3)), { message });
    assert.throws(() => functionalize((x: Tensor) => x.expand([2, 3]).select(0, 0).add_(1))(randn(3)), { message });
  });

  it('a functional tensor that escapes is freed with its call, or refused once stale when kept', () => {
    let escaped: Tensor | undefined;
    functionalize((x: Tensor) => {
      escaped = x.view([-1]);
      return x.mul(1);
    })(randn(2));
    assert.ok(escaped instanceof FunctionalTensor);
    assert.throws(() => escaped!.mul(2), /was disposed/);
    let stale: Tensor | undefined;
    functionalize((x: Tensor) => {
      stale = keep(x.view([-1]));
      x.add_(1);
      return x;
    })(randn(2));
    assert.throws(() => stale!.mul(2), /escaped its functionalize\(\) call/);
  });

  it('plain tensors never hold the Functionalize key (no cost when not in use)', () => {
    const bit = DispatchKeySet.of(DispatchKey.Functionalize).hi;
    assert.equal(randn(3).keySetHi & bit, 0);
    functionalize((x: Tensor) => {
      assert.notEqual(x.keySetHi & bit, 0);
      return x;
    })(randn(3));
  });
});
