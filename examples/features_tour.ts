/**
 * A tour of the features that are dispatch keys (core/features): the profiler, a dispatch mode, FakeTensorMode,
 * FlopCounterMode, and graph capture of a training step that is then replayed.
 *
 * Run: `deno run -A examples/features_tour.ts` (or `bun examples/features_tour.ts`).
 *
 * @module
 */
import {
  callOp,
  type DispatchKwargs,
  DispatchMode,
  FakeTensorMode,
  FlopCounterMode,
  Graph,
  linear,
  makeFx,
  manualSeed,
  nn,
  noGrad,
  type OperatorHandle,
  profile,
  randn,
  type Tensor,
  type TorchDispatchClass,
} from '../mod.ts';

manualSeed(0);
const x = randn(64, 32), target = randn(64, 8);
const w = randn(8, 32, { requiresGrad: true }), b = randn(8, { requiresGrad: true });

// 1. The profiler: one forward and backward (after a warm-up, so the engine has compiled the kernels' paths).
nn.mseLoss(linear(x, w, b), target).backward();
w.grad = null;
b.grad = null;
const prof = profile(() => nn.mseLoss(linear(x, w, b), target).backward());
console.log(prof.keyAverages().table({ sortBy: 'self_cpu_time_total', rowLimit: 8 }));

// 2. A dispatch mode that counts operator calls; it sees the backward operators too.
class CountingMode extends DispatchMode {
  readonly counts = new Map<string, number>();
  override dispatch(op: OperatorHandle, _types: readonly TorchDispatchClass[], args: unknown[], kw: DispatchKwargs) {
    this.counts.set(op.name, (this.counts.get(op.name) ?? 0) + 1);
    return callOp(op, args, kw);
  }
}
const counting = new CountingMode();
counting.run(() => nn.mseLoss(linear(x, w, b), target).backward());
console.log('operator calls:', Object.fromEntries(counting.counts));

// 3. Shapes and memory of a big model without computing it.
const big = new nn.Sequential(new nn.Linear(32, 2048), new nn.ReLU(), new nn.Linear(2048, 8));
const fake = new FakeTensorMode();
const out = fake.run(() => big.forward(randn(4096, 32)));
console.log(`fake output ${out.shape} on ${fake.deviceOf(out)}, ${(fake.allocatedBytes / 2 ** 20).toFixed(1)} MiB`);

// 4. FLOPs of a training step of that model.
const flops = new FlopCounterMode();
flops.run(() => big.forward(randn(16, 32)).sum().backward());
console.log(flops.getTable());

// 5. Capture a training step (backward included), save it as JSON, replay it.
function step(w: Tensor, b: Tensor, x: Tensor, t: Tensor): Tensor {
  const loss = nn.mseLoss(linear(x, w, b), t);
  loss.backward();
  noGrad(() => {
    w.sub_(w.grad!.mul(0.1));
    b.sub_(b.grad!.mul(0.1));
  });
  w.grad = null;
  b.grad = null;
  return loss;
}
const w0 = w.detach().clone(), b0 = b.detach().clone();
const graph = makeFx(step, { inputNames: ['w', 'b', 'x', 't'] })(
  w0.clone().requiresGrad_(),
  b0.clone().requiresGrad_(),
  x,
  target,
);
graph.eliminateCommonSubexpressions();
graph.eliminateDeadCode();
console.log(graph.print());
const replayed = Graph.fromJSON(JSON.stringify(graph.toJSON()));
const wr = w0.clone(), br = b0.clone();
for (let i = 0; i < 5; i++) console.log(`step ${i}: loss ${(replayed.run([wr, br, x, target]) as Tensor).item()}`);
