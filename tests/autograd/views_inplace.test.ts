// In-place operations on views rebase the base's history (CopySlices), and views see in-place changes of
// their base (regenerated AsStridedBackward0), with PyTorch 1.13's gradients and node names for every view
// operator, chains of views, several in-place ops, and requiresGrad propagation.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grad, gradcheck, manualSeed, memoryStats, randn, scope, type Tensor, tensor, zeros } from '../../mod.ts';
import { SCENARIOS, VIEW_CASES } from './_views_inplace_reference.ts';

const f64 = { dtype: 'float64' as const };
const f32 = { dtype: 'float32' as const };
const values = (t: Tensor | null) => {
  assert.ok(t !== null, 'expected a gradient');
  return t.contiguous().toArray() as number[];
};
function close(actual: number[], expected: readonly number[], tol = 1e-12): void {
  assert.equal(actual.length, expected.length, 'length');
  actual.forEach((a, i) =>
    assert.ok(Math.abs(a - expected[i]) <= tol * (1 + Math.abs(expected[i])), `[${i}]: ${a} vs ${expected[i]}`)
  );
}
const names = (fn: { nextFunctions: Array<[{ name(): string } | null, number]> } | null) =>
  fn?.nextFunctions.map(([n]) => n?.name() ?? null);

// The view operators of VIEW_CASES (the same order and seeds as the PyTorch reference run).
const VIEWS: Array<[string, number[], (x: Tensor) => Tensor]> = [
  ['narrow', [5, 3], (x) => x.narrow(0, 1, 3)],
  ['slice with a step', [7], (x) => x.slice(0, 1, 6, 2)],
  ['select', [4, 3], (x) => x.select(1, 2)],
  ['view', [2, 6], (x) => x.view([3, 4])],
  ['reshape (a view)', [2, 6], (x) => x.reshape([4, 3])],
  ['flatten', [2, 3, 2], (x) => x.flatten()],
  ['unflatten', [12], (x) => x.unflatten(0, [3, 4])],
  ['transpose', [3, 4], (x) => x.transpose(0, 1)],
  ['t', [3, 4], (x) => x.t()],
  ['permute', [2, 3, 4], (x) => x.permute([2, 0, 1])],
  ['expand', [4], (x) => x.expand([1, 4])],
  ['expand_as', [3, 1], (x) => x.expandAs(zeros([1, 3, 1]))],
  ['unsqueeze', [3, 2], (x) => x.unsqueeze(1)],
  ['squeeze', [3, 1, 2], (x) => x.squeeze()],
  ['squeeze(dim)', [3, 1, 2], (x) => x.squeeze(1)],
  ['diagonal', [4, 4], (x) => x.diagonal()],
  ['diagonal with offset and dims', [3, 4, 5], (x) => x.diagonal(1, 2, 0)],
  ['as_strided', [12], (x) => x.asStrided([3, 2], [4, 1], 1)],
  ['a chain of views', [4, 6], (x) => x.view([2, 12]).select(0, 1).narrow(0, 2, 6).view([2, 3]).t()],
];

describe('in-place on a view rewrites the base history (CopySlices)', () => {
  it("the issue's example: x.narrow(0, 0, 1).mul_(10) scales w.grad's first element", () => {
    const w = tensor([1, 2], f32).requiresGrad_();
    const x = w.mul(1);
    const v = x.narrow(0, 0, 1);
    assert.equal(v.gradFn?.name(), 'SliceBackward0');
    v.mul_(10);
    assert.equal(x.gradFn?.name(), 'CopySlices');
    assert.equal(v.gradFn?.name(), 'AsStridedBackward0');
    assert.deepEqual(names(v.gradFn), ['CopySlices']);
    x.sum().backward();
    assert.deepEqual(w.grad?.toArray(), [10, 1]);
  });

  VIEWS.forEach(([name, shape, view], index) => {
    it(`a view made by ${name}: PyTorch's gradients and node names`, () => {
      manualSeed(100 + index);
      const w = randn(shape, f64).requiresGrad_();
      const c = randn(shape, f64);
      const x = w.sin();
      const v = view(x);
      const k = randn(v.shape as number[], f64).requiresGrad_();
      v.mul_(k);
      assert.equal(x.gradFn?.name(), 'CopySlices');
      assert.equal(v.gradFn?.name(), 'AsStridedBackward0');
      assert.deepEqual(names(x.gradFn), ['SinBackward0', 'AccumulateGrad']);
      x.mul(c).sum().backward();
      close(values(w.grad), VIEW_CASES[name].w);
      close(values(k.grad), VIEW_CASES[name].k);
    });
  });

  it('several in-place ops on two overlapping views chain CopySlices nodes', () => {
    const ref = SCENARIOS.several;
    manualSeed(200);
    const w = randn([6], f64).requiresGrad_(), k1 = randn([3], f64).requiresGrad_();
    const k2 = randn([3], f64).requiresGrad_(), c = randn([6], f64);
    const x = w.sin();
    const v = x.narrow(0, 2, 3);
    v.mul_(k1);
    v.add_(k1, { alpha: 2 });
    v.div_(1.5);
    const u = x.narrow(0, 0, 3);
    u.mul_(k2);
    const chain: string[] = [];
    let fn = x.gradFn;
    while (fn !== null && fn.name() === 'CopySlices') {
      chain.push(fn.name());
      fn = fn.nextFunctions[0][0];
    }
    chain.push(fn!.name());
    assert.deepEqual(chain, ref.chain);
    assert.deepEqual([v.gradFn?.name(), u.gradFn?.name()], [ref.v, ref.u]);
    close(x.toArray() as number[], ref.x);
    x.mul(c).sum().backward();
    close(values(w.grad), ref.w);
    close(values(k1.grad), ref.k1);
    close(values(k2.grad), ref.k2);
  });

  it("an in-place change of the base regenerates the view's grad_fn on access", () => {
    const ref = SCENARIOS.base_after_view;
    manualSeed(201);
    const w = randn([5], f64).requiresGrad_(), k = randn([5], f64).requiresGrad_(), c = randn([3], f64);
    const x = w.sin();
    const v = x.narrow(0, 1, 3);
    assert.equal(v.gradFn?.name(), ref.before);
    x.mul_(k);
    assert.equal(v.gradFn?.name(), ref.after);
    assert.deepEqual(names(v.gradFn), [ref.next]);
    v.mul(c).sum().backward();
    close(values(w.grad), ref.w);
    close(values(k.grad), ref.k);
  });

  it('in-place of a value that requires grad into a view makes its base (and its other views) require grad', () => {
    const ref = SCENARIOS.propagation;
    manualSeed(202);
    const w = randn([2], f64).requiresGrad_(), c = randn([4], f64), d = randn([2], f64);
    const x = zeros([4], f64);
    const v = x.narrow(0, 1, 2), v2 = x.narrow(0, 2, 2);
    assert.equal(v2.requiresGrad, ref.v2_rg_before);
    v.add_(w);
    assert.equal(x.requiresGrad, ref.x_rg);
    assert.equal(x.isLeaf, ref.x_leaf);
    assert.equal(x.gradFn?.name(), ref.xfn);
    assert.equal(v2.requiresGrad, ref.v2_rg);
    assert.equal(v2.gradFn?.name(), ref.v2fn);
    x.mul(c).sum().add(v2.mul(d).sum()).backward();
    close(values(w.grad), ref.w);
  });

  it('copy_ into a view, fill_ and zero_ on views', () => {
    const copy = SCENARIOS.copy;
    manualSeed(203);
    const w = randn([2, 3], f64).requiresGrad_(), src = randn([3], f64).requiresGrad_(), c = randn([2, 3], f64);
    const x = w.sin();
    x.select(0, 1).copy_(src);
    assert.deepEqual(names(x.gradFn), copy.next);
    x.mul(x).mul(c).sum().backward();
    close(values(w.grad), copy.w);
    close(values(src.grad), copy.src);

    const filled = SCENARIOS.fill_zero;
    manualSeed(204);
    const w2 = randn([5], f64).requiresGrad_(), c2 = randn([5], f64);
    const x2 = w2.sin();
    x2.narrow(0, 0, 2).fill_(3);
    x2.narrow(0, 3, 2).zero_();
    close(x2.toArray() as number[], filled.x);
    x2.mul(c2).sum().backward();
    close(values(w2.grad), filled.w);
  });

  it('a view of a view modified in place: the root is the base, the outer views regenerate', () => {
    const ref = SCENARIOS.view_of_view;
    manualSeed(205);
    const w = randn([3, 4], f64).requiresGrad_(), k = randn([2, 3], f64).requiresGrad_();
    const c = randn([4, 3], f64), d = randn([2, 3], f64);
    const x = w.sin();
    const a = x.t(), b = a.narrow(0, 1, 2);
    b.mul_(k);
    assert.deepEqual([x.gradFn?.name(), a.gradFn?.name(), b.gradFn?.name()], ref.names);
    a.mul(c).sum().add(b.mul(d).sum()).backward();
    close(values(w.grad), ref.w);
    close(values(k.grad), ref.k);
  });

  it('double backward through CopySlices (createGraph)', () => {
    const ref = SCENARIOS.double;
    manualSeed(206);
    const w = randn([4], f64).requiresGrad_(), k = randn([2], f64).requiresGrad_();
    const x = w.sin();
    x.narrow(0, 1, 2).mul_(k);
    const [gw, gk] = grad([x.mul(x).sum()], [w, k], { createGraph: true });
    close(values(gw), ref.first.gw);
    close(values(gk), ref.first.gk);
    const [hw, hk] = grad([gw!.mul(gw!).sum().add(gk!.sum())], [w, k]);
    close(values(hw), ref.w);
    close(values(hk), ref.k);
  });

  it("retainGrad follows the tensor's own in-place history; tensor hooks stay where they were registered", () => {
    const ref = SCENARIOS.retain;
    const gradOf = (t: Tensor) => t.grad?.toArray();
    const wts = tensor([1, 2, 3], f64);
    const a = tensor([1, 1, 1], f64).requiresGrad_();
    let b = a.mul(2), v = b.narrow(0, 0, 2);
    v.retainGrad();
    v.mul_(3);
    b.mul(wts).sum().backward();
    assert.deepEqual(gradOf(a), ref.a1);
    assert.equal(v.grad, ref.v1); // the view's old grad_fn is not on the path any more
    a.grad = null;
    b = a.mul(2), v = b.narrow(0, 0, 2);
    v.retainGrad();
    b.mul_(3);
    v.mul(wts.narrow(0, 0, 2)).sum().backward();
    assert.deepEqual([gradOf(a), gradOf(v)], [ref.a2, ref.v2]);
    a.grad = null;
    b = a.mul(2);
    b.retainGrad();
    b.narrow(0, 0, 2).mul_(3);
    b.mul(wts).sum().backward();
    assert.deepEqual([gradOf(a), gradOf(b)], [ref.a3, ref.b3]);
    a.grad = null;
    b = a.mul(2);
    b.retainGrad();
    b.mul_(3);
    b.mul(wts).sum().backward();
    assert.deepEqual([gradOf(a), gradOf(b)], [ref.a4, ref.b4]);
    a.grad = null;
    const seen: number[][] = [];
    b = a.mul(2);
    b.registerHook((g) => void seen.push(g.toArray() as number[]));
    b.narrow(0, 0, 2).mul_(3);
    b.mul(wts).sum().backward();
    assert.deepEqual([gradOf(a), seen], [ref.a5, ref.hook5]);
  });

  it('graphs with views and in-place ops free everything once their tensors are disposed', () => {
    const before = memoryStats();
    for (let i = 0; i < 20; i++) {
      const w = randn([64], f32).requiresGrad_();
      // Only the loss leaves the scope: the views, CopySlices and regenerated nodes live through its graph.
      const loss = scope(() => {
        const x = w.sin();
        const v = x.view([8, 8]).t().select(0, 3);
        v.mul_(w.narrow(0, 0, 8));
        x.mul_(2);
        return v.sum();
      });
      loss.backward();
      loss.dispose();
      w.grad!.dispose();
      w.dispose();
    }
    assert.equal(memoryStats().liveTensors, before.liveTensors);
    assert.equal(memoryStats().bytes, before.bytes);
  });
});

describe('gradcheck of in-place-on-view functions (float64 finite differences)', () => {
  const r = (shape: number[]) => randn(shape, f64).requiresGrad_();
  const CASES: Array<[string, (...x: Tensor[]) => Tensor, () => Tensor[]]> = [
    ['mul_ on a narrow view', (a, b) => {
      const x = a.mul(1);
      x.narrow(0, 1, 2).mul_(b);
      return x;
    }, () => [r([4]), r([2])]],
    ['several in-place ops on a view of a view', (a, b) => {
      const x = a.sin();
      x.t().select(0, 1).mul_(b).add_(b);
      return x.mul(x);
    }, () => [r([3, 2]), r([3])]],
    ['the base changed in place after a view was taken', (a, b) => {
      const x = a.mul(1);
      const v = x.narrow(1, 0, 2);
      x.mul_(b);
      return v.exp();
    }, () => [r([2, 3]), r([2, 3])]],
    ['as_strided with overlapping output', (a) => a.asStrided([3, 3], [1, 1], 0).sin(), () => [r([5])]],
    ['as_strided of an expanded (overlapping) input', (a) => {
      return a.unsqueeze(0).expand([3, 4]).asStrided([2, 2], [1, 1], 1).cos();
    }, () => [r([4])]],
    ['in-place on an as_strided view', (a, b) => {
      const x = a.mul(1);
      x.asStrided([2, 2], [3, 1], 1).mul_(b);
      return x;
    }, () => [r([6]), r([2, 2])]],
    ['copy_ into a select view', (a, b) => {
      const x = a.mul(1);
      x.select(0, 0).copy_(b);
      return x.mul(x);
    }, () => [r([2, 3]), r([3])]],
    ['in-place into a view of a base that does not require grad', (b) => {
      const x = zeros([4], f64);
      x.narrow(0, 1, 2).add_(b.mul(b));
      return x.exp();
    }, () => [r([2])]],
    ['in-place into a view of a transposed (non-contiguous) base', (k) => {
      // detach() makes a base that is not itself a differentiable view, laid out column-major here.
      const base = tensor([[1, 2, 3], [4, 5, 6]], f64).t().detach();
      base.narrow(0, 1, 2).mul_(k);
      return base.mul(base);
    }, () => [r([2, 2])]],
    ['diagonal and permuted views, two in-place ops', (a, b) => {
      const x = a.mul(1);
      x.diagonal().mul_(b);
      x.permute([1, 0]).narrow(0, 0, 1).div_(b.narrow(0, 0, 1).add(3));
      return x;
    }, () => [r([3, 3]), r([3])]],
  ];
  CASES.forEach(([name, fn, make], i) => {
    it(name, () => {
      manualSeed(300 + i);
      const inputs = make();
      assert.equal(gradcheck(fn, inputs), true);
    });
  });
});
