/**
 * vmap against a JavaScript loop: 64 samples of a small function (elementwise, matmul, per-sample gradients of
 * a small MLP), as one vmapped call vs 64 calls and a `stack`; and what the Batched/VmapMode keys cost a call
 * when vmap is not in use (ordinary tensors carry neither key, so a tiny `add` takes the same table slot).
 *
 * Run: `deno run -A bench/vmap.bench.ts` or `bun bench/vmap.bench.ts`.
 *
 * @module
 */
import { add, func, localDispatchKeySet, manualSeed, randn, scope, stack, type Tensor, tensor, vmap } from '../mod.ts';
import { BATCHED_HI } from '../core/features/vmap_batched.ts';
import { DispatchKey, DispatchKeySet } from '../mod.ts';
import { bench, do_not_optimize, group, runAndReport } from './_report.ts';

const N = 64;
manualSeed(0);
const xs = randn([N, 256]);
const ms = randn([N, 16, 16]), w = randn([16, 16]);
const w1 = randn([32, 16]), w2 = randn([4, 32]), feats = randn([N, 16]);
const labels = tensor(Array.from({ length: N }, (_, i) => i % 4));

const elementwise = (x: Tensor) => x.mul(2).add(1).relu().mul(x);
// tanh's kernel is scalar (about 14 ns an element here), so this one measures the kernel more than dispatch.
const transcendental = (x: Tensor) => x.tanh().mul(x);
const matmul = (x: Tensor, v: Tensor) => x.matmul(v).relu().sum(0);
const loss = (p: Tensor[], x: Tensor, y: Tensor) =>
  p[1].matmul(p[0].matmul(x).tanh()).logSoftmax(0).gather(0, y.unsqueeze(0)).neg().sum();

const vElementwise = vmap(elementwise);
const vTranscendental = vmap(transcendental);
const vMatmul = vmap(matmul, { inDims: [0, null] });
const vGrad = vmap(func.grad(loss), { inDims: [null, 0, 0] });
const gradOne = func.grad(loss);

const cases: Record<string, { vmap: () => unknown; loop: () => unknown }> = {
  'elementwise [256]': {
    vmap: () => vElementwise(xs),
    loop: () => stack(Array.from({ length: N }, (_, i) => elementwise(xs.select(0, i)))),
  },
  'tanh [256]': {
    vmap: () => vTranscendental(xs),
    loop: () => stack(Array.from({ length: N }, (_, i) => transcendental(xs.select(0, i)))),
  },
  'matmul [16x16]': {
    vmap: () => vMatmul(ms, w),
    loop: () => stack(Array.from({ length: N }, (_, i) => matmul(ms.select(0, i), w))),
  },
  'per-sample grad MLP': {
    vmap: () => vGrad([w1, w2], feats, labels),
    loop: () => Array.from({ length: N }, (_, i) => gradOne([w1, w2], feats.select(0, i), labels.select(0, i))),
  },
};

for (const [name, c] of Object.entries(cases)) {
  group(name, () => {
    bench(`${name}: vmap x${N}`, () => scope(() => do_not_optimize(c.vmap())));
    bench(`${name}: loop x${N}`, () => scope(() => do_not_optimize(c.loop())));
  });
}

const a = tensor([1.5]), b = tensor([2.5]);
group('keys when vmap is not in use', () => {
  bench('add 1 element (vmap registered)', () => {
    const y = add(a, b);
    do_not_optimize(y);
    y.dispose();
  });
});

await runAndReport('vmap', (figures) => {
  const rows: Array<Record<string, string | number>> = [];
  const ratios: Record<string, number> = {};
  for (const name of Object.keys(cases)) {
    const v = figures.get(`${name}: vmap x${N}`)?.p50_ns, l = figures.get(`${name}: loop x${N}`)?.p50_ns;
    if (v === undefined || l === undefined) continue;
    ratios[name] = Number((l / v).toFixed(2));
    rows.push({
      case: name,
      'vmap p50 (us)': Number((v / 1e3).toFixed(1)),
      'loop p50 (us)': Number((l / 1e3).toFixed(1)),
      'loop / vmap': ratios[name],
    });
  }
  console.table(rows);
  const local = localDispatchKeySet();
  const keysets = {
    ordinary_tensor_has_batched_key: (a.keySetHi & BATCHED_HI) !== 0,
    vmap_mode_included_outside_vmap: (local.included.hi & DispatchKeySet.of(DispatchKey.VmapMode).hi) !== 0,
  };
  console.log(keysets);
  return {
    loop_over_vmap_p50: ratios,
    table: rows,
    keysets,
    add_1_element_p50_ns: figures.get('add 1 element (vmap registered)')?.p50_ns,
  };
});
