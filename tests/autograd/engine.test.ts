// Autograd as a dispatch key: recording, the engine, grad modes, version counters, hooks, custom functions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  backward,
  defineFunction,
  DispatchKey,
  enableGrad,
  grad,
  inferenceMode,
  isGradEnabled,
  localDispatchKeySet,
  manualSeed,
  memoryStats,
  mul,
  noGrad,
  randn,
  scope,
  type Tensor,
  tensor,
} from '../../mod.ts';

const f32 = { dtype: 'float32' as const };
const vals = (t: Tensor | null) => (t === null ? null : (t.toArray() as number[]));
const close = (a: number[] | null, b: number[], tol = 1e-5) => {
  assert.ok(a !== null);
  assert.equal(a.length, b.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]) <= tol * (1 + Math.abs(b[i])), `${i}: ${x} vs ${b[i]}`));
};

describe('recording', () => {
  it('outputs of recorded ops get a grad_fn named as in PyTorch; leaves have none', () => {
    const x = tensor([1, 2, 3], f32).requiresGrad_();
    const y = x.mul(2).exp().sum();
    assert.equal(x.isLeaf, true);
    assert.equal(x.gradFn, null);
    assert.equal(y.gradFn?.name(), 'SumBackward1');
    assert.equal(y.requiresGrad, true);
    assert.match(String(y), /grad_fn=<SumBackward1>/);
    assert.match(String(x), /requires_grad=True/);
  });

  it('inputs that need no grad record nothing and keep the fast path', () => {
    const a = tensor([1, 2], f32), b = tensor([3, 4], f32);
    const c = add(a, b);
    assert.equal(c.requiresGrad, false);
    assert.equal(c.gradFn, null);
  });

  it('only floating point tensors can require grad', () => {
    assert.throws(
      () => tensor([1, 2]).requiresGrad_(),
      /^RuntimeError: only Tensors of floating point dtype can require gradients$/,
    );
  });
});

describe('backward', () => {
  it('matches a hand-derived gradient of a small two-layer network', () => {
    manualSeed(3);
    const x = randn([4, 3]), w1 = randn([3, 5]).requiresGrad_(), w2 = randn([5, 2]).requiresGrad_();
    const h = x.mm(w1).relu();
    const loss = h.mm(w2).pow(2).sum();
    loss.backward();
    // d/dw2 = h^T (2 h w2); d/dw1 = x^T ((2 h w2 w2^T) * (h > 0))
    const out = h.mm(w2);
    const gOut = out.mul(2);
    close(vals(w2.grad), h.t().mm(gOut).toArray() as number[], 1e-4);
    close(vals(w1.grad), x.t().mm(gOut.mm(w2.t()).mul(h.gt(0))).toArray() as number[], 1e-4);
  });

  it('accumulates into .grad over several backward calls', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    x.mul(3).sum().backward();
    x.mul(x).sum().backward();
    close(vals(x.grad), [3 + 2, 3 + 4]);
  });

  it('a non-scalar output needs an explicit gradient', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    assert.throws(() => x.mul(2).backward(), /grad can be implicitly created only for scalar outputs/);
    x.mul(2).backward(tensor([1, 10], f32));
    close(vals(x.grad), [2, 20]);
  });

  it('frees the graph unless retainGraph, with PyTorch message on reuse', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const y = x.exp().sum();
    y.backward(null, { retainGraph: true });
    y.backward();
    close(vals(x.grad), [2 * Math.E, 2 * Math.exp(2)]);
    assert.throws(() => y.backward(), /Trying to backward through the graph a second time/);
  });

  it('grad() returns gradients without touching .grad; allowUnused', () => {
    const x = tensor([1, 2], f32).requiresGrad_(), z = tensor([5], f32).requiresGrad_();
    const [gx] = grad([x.pow(3).sum()], [x]);
    close(vals(gx), [3, 12]);
    assert.equal(x.grad, null);
    assert.throws(() => grad([x.sum()], [x, z]), /appears to not have been used in the graph/);
    const [, gz] = grad([x.sum()], [x, z], { allowUnused: true });
    assert.equal(gz, null);
  });

  it('createGraph gives higher-order gradients', () => {
    const x = tensor([2], f32).requiresGrad_();
    const [g] = grad([x.pow(3)], [x], { createGraph: true });
    close(vals(g), [12]);
    const [g2] = grad([g!], [x]);
    close(vals(g2), [12]); // d2/dx2 x^3 = 6x
  });

  it('tensor hooks see and may replace gradients; retainGrad keeps a non-leaf grad', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const seen: number[][] = [];
    x.registerHook((g) => {
      seen.push(g.toArray() as number[]);
      return g.mul(10);
    });
    const y = x.mul(2);
    y.retainGrad();
    y.sum().backward();
    assert.deepEqual(seen, [[2, 2]]);
    close(vals(x.grad), [20, 20]);
    close(vals(y.grad), [1, 1]);
  });

  it("a hook's replacement must be a tensor of the same size and dtype (PyTorch's checks)", () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const cases: Array<[(g: Tensor) => unknown, RegExp | object]> = [
      [() => 3, { name: 'TypeError', message: "expected Variable, but hook returned 'number'" }],
      [function grow() {
        return tensor([1, 2, 3], f32);
      }, { name: 'RuntimeError', message: "hook 'grow' has changed the size of value" }],
      [function widen(g: Tensor) {
        return g.to({ dtype: 'float64' });
      }, {
        name: 'RuntimeError',
        message: "hook 'widen' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)",
      }],
    ];
    for (const [hook, error] of cases) {
      const y = x.mul(2);
      const handle = y.registerHook(hook as (g: Tensor) => Tensor);
      const loss = y.sum();
      const live = memoryStats().liveTensors;
      assert.throws(() => loss.backward(), error);
      assert.equal(memoryStats().liveTensors, live, 'the failed run freed what it made');
      handle.remove();
    }
    x.mul(2).registerHook(() => null); // null keeps the gradient
  });

  it('a backward run nested in a hook may share nodes with the running one', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const y = x.mul(3);
    const z = y.mul(y);
    let inner: number[] = [];
    z.registerHook(() => {
      // y's node and x's accumulator are waiting in the outer run; the inner run counts them apart.
      const [g] = enableGrad(() => grad([y.sum()], [x], { retainGraph: true }));
      inner = g!.toArray() as number[];
    });
    z.sum().backward();
    assert.deepEqual(inner, [3, 3]);
    close(vals(x.grad), [18, 36]); // d(sum 9x²)/dx
  });

  it('hostile input: clear errors, nothing leaked', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const live = memoryStats().liveTensors;
    const untyped = x as unknown as Record<string, (...a: unknown[]) => unknown>;
    assert.throws(() => untyped.requiresGrad_('yes'), { name: 'TypeError' });
    assert.throws(() => untyped.registerHook(5), { name: 'TypeError' });
    assert.throws(() => ((x as unknown as { grad: unknown }).grad = 5), {
      name: 'TypeError',
      message: 'assigned grad expected to be a Tensor or None',
    });
    const total = x.sum(), ones = tensor([1, 1], f32), plain = tensor([1, 2], f32);
    assert.throws(() => grad([total], [{ shape: [2] } as unknown as Tensor]), { name: 'TypeError' });
    assert.throws(() => backward([{} as Tensor]), { name: 'TypeError' });
    const y = x.mul(2);
    y.dispose();
    assert.throws(() => y.backward(ones), /backward\(\): the tensor was disposed/);
    assert.throws(() => plain.backward(), {
      name: 'RuntimeError',
      message: 'element 0 of tensors does not require grad and does not have a grad_fn',
    });
    for (const t of [total, ones, plain]) t.dispose();
    assert.equal(memoryStats().liveTensors, live);
  });

  it('detach cuts the graph but shares data', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const d = x.mul(2).detach();
    assert.equal(d.requiresGrad, false);
    assert.equal(d.gradFn, null);
    assert.deepEqual(d.toArray(), [2, 4]);
  });
});

describe('grad modes', () => {
  it('noGrad records nothing (guard and callback), enableGrad re-enables, both restore on throw', () => {
    const x = tensor([1], f32).requiresGrad_();
    assert.equal(noGrad(() => x.mul(2)).requiresGrad, false);
    {
      using _g = noGrad();
      assert.equal(isGradEnabled(), false);
      assert.equal(enableGrad(() => x.mul(2)).requiresGrad, true);
    }
    assert.throws(() =>
      noGrad(() => {
        throw new Error('boom');
      }), /boom/);
    assert.equal(isGradEnabled(), true);
    // PyTorch's no_grad leaves the dispatch key sets alone.
    const before = localDispatchKeySet().excluded.hi;
    noGrad(() => assert.equal(localDispatchKeySet().excluded.hi, before));
  });

  it('inferenceMode excludes the autograd keys and makes inference tensors', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const y = inferenceMode(() => {
      assert.ok(localDispatchKeySet().excluded.has(DispatchKey.AutogradFunctionality));
      assert.ok(!localDispatchKeySet().included.has(DispatchKey.ADInplaceOrView));
      return x.mul(2);
    });
    assert.equal(y.requiresGrad, false);
    assert.equal(y.isInference, true);
    assert.equal(x.mul(2).isInference, false);
    assert.ok(!localDispatchKeySet().excluded.has(DispatchKey.AutogradFunctionality));
  });
});

describe('in-place and version counters', () => {
  it('in-place on a leaf that requires grad is an error; fine under noGrad', () => {
    const w = tensor([1, 2], f32).requiresGrad_();
    assert.throws(() => w.add_(1), /a leaf Variable that requires grad is being used in an in-place operation/);
    noGrad(() => w.add_(1));
    assert.deepEqual(w.toArray(), [2, 3]);
    assert.equal(w.version, 1);
  });

  it('modifying a tensor saved for backward fails at backward with PyTorch message', () => {
    const x = tensor([1, 2], f32).requiresGrad_();
    const y = x.mul(1);
    const z = y.exp(); // saves its result
    const w = y.mul(y); // saves y
    y.add_(1);
    assert.throws(
      () => w.sum().backward(),
      /one of the variables needed for gradient computation has been modified by an inplace operation: \[torch.FloatTensor \[2\]\] is at version 1; expected version 0 instead/,
    );
    z.mul_(2);
    assert.throws(() => z.sum().backward(), /which is output 0 of MulBackward0, is at version 1|is at version/);
  });

  it('in-place ops on non-leaves are differentiable (the original self is what the formula sees)', () => {
    const x = tensor([1, 2], f32).requiresGrad_(), z = tensor([4, 5], f32).requiresGrad_();
    const y = x.mul(3);
    y.mul_(z);
    y.sum().backward();
    close(vals(x.grad), [12, 15]);
    close(vals(z.grad), [3, 6]);
    assert.equal(y.gradFn?.name(), 'MulBackward0');
  });

  it("in-place clamps see the values before the write and name their nodes as PyTorch's", () => {
    const x = tensor([-2, 0.5, 3, NaN], f32).requiresGrad_();
    const a = x.mul(2).clamp_(-1, 2), b = x.mul(1).clampMin_(0.4), c = x.clampMax(1);
    assert.deepEqual([a.gradFn?.name(), b.gradFn?.name(), c.gradFn?.name()], [
      'ClampBackward1',
      'ClampMinBackward0',
      'ClampMaxBackward0',
    ]);
    a.add(b).add(c).sum().backward();
    // 2x is in [-1, 2] only at 0.5; x >= 0.4 at 0.5 and 3; x <= 1 at -2 and 0.5; NaN passes no gradient.
    close(vals(x.grad), [1, 2 + 1 + 1, 1, 0]);
  });
});

describe('custom functions and memory', () => {
  it('defineFunction joins a hand-written backward into the graph', () => {
    const cube = defineFunction({
      name: 'CubeBackward',
      forward(ctx, x: Tensor) {
        ctx.saveForBackward(x);
        return x.mul(x).mul(x);
      },
      backward(ctx, g) {
        const [x] = ctx.savedTensors;
        return [g.mul(x).mul(x).mul(3)];
      },
    });
    const x = tensor([1, -2], f32).requiresGrad_();
    const y = cube(x);
    assert.equal(y.gradFn?.name(), 'CubeBackward');
    mul(y, 2).sum().backward();
    close(vals(x.grad), [6, 24]);
  });

  it('repeated steps leave live tensors at their baseline', () => {
    const w = tensor([0.5, -0.5], f32).requiresGrad_();
    const x = tensor([1, 2], f32);
    const base = memoryStats().liveTensors;
    for (let i = 0; i < 200; i++) {
      scope(() => {
        const loss = w.mul(x).sum().pow(2);
        loss.backward();
        noGrad(() => w.sub_(w.grad!.mul(0.01)));
        w.grad!.dispose();
        w.grad = null;
      });
    }
    assert.equal(memoryStats().liveTensors, base);
  });
});
