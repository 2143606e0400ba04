/**
 * Convolution benchmarks: the 3×3 convolution of a ResNet block (batch 32, 64 → 64 channels, 32×32, stride 1,
 * padding 1) in Switchyard (NCHW, im2col + the packed wasm gemm) and, in the same process, in TensorFlow.js's
 * wasm backend (XNNPACK, NHWC, single-threaded as Switchyard): the forward, the input gradient (a transposed
 * convolution: tfjs's `Conv2DBackpropInput`), and forward + backward. tfjs-wasm has no kernel for the weight
 * gradient (`Conv2DBackpropFilter` is not registered for wasm), so its forward + backward row times the forward
 * and the input gradient only: it does less work than Switchyard's row, which also computes the weight gradient.
 * Last, one Adam step of the demo's CNN (examples/cnn.ts: conv-bn-relu-pool ×2, linear; batch 32 of 1×8×8).
 *
 * Run: `deno run -A bench/conv.bench.ts` or `bun bench/conv.bench.ts`.
 *
 * @module
 */
import {
  conv2d,
  convTranspose2d,
  crossEntropy,
  manualSeed,
  noGrad,
  randn,
  scope,
  type Tensor,
  tensor,
} from '../mod.ts';
import { BatchNorm2d, Conv2d, Flatten, Linear, MaxPool2d, ReLU, Sequential } from '../core/nn/mod.ts';
import { Adam } from '../core/optim/mod.ts';
import { bench, do_not_optimize, group, runAndReport, smokeSize, summary } from './_report.ts';
import { setupTfjs, useTfBackend } from './_peers.ts';

const N = smokeSize(32, 2), C = smokeSize(64, 8), HW = smokeSize(32, 9), K = 3;
const SHAPE = `3x3 conv, batch ${N}, ${C}->${C} channels, ${HW}x${HW}, padding 1`;
const FORWARD = `forward, ${SHAPE}`;
const INPUT_GRAD = `input gradient (transposed conv), ${SHAPE}`;
const BOTH = `forward + backward, ${SHAPE}`;
const CNN = 'Adam step, digits CNN (conv-bn-relu-pool x2, linear), batch 32';
const FLOP = 2 * N * C * HW * HW * C * K * K;

/** Seeded uniform [-1, 1) values, so that both libraries see the same data. */
function randomValues(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 2 - 1;
  }
  return out;
}

const xValues = randomValues(N * C * HW * HW, 1), wValues = randomValues(C * C * K * K, 2);
const gValues = randomValues(N * C * HW * HW, 3);

// ---- Switchyard -------------------------------------------------------------------------------------------

const x = tensor(xValues).view([N, C, HW, HW]);
const w = tensor(wValues).view([C, C, K, K]).mul(0.05);
const dy = tensor(gValues).view([N, C, HW, HW]);
const xg = x.detach().requiresGrad_(), wg = w.detach().requiresGrad_();

const forward = () => noGrad(() => conv2d(x, w, null, 1, 1)).dispose();
const inputGradient = () => noGrad(() => convTranspose2d(dy, w, null, 1, 1)).dispose();
const forwardBackward = () =>
  scope(() => {
    conv2d(xg, wg, null, 1, 1).backward(dy);
    for (const t of [xg, wg]) {
      t.grad!.dispose();
      t.grad = null;
    }
  });

// ---- TensorFlow.js (wasm) ---------------------------------------------------------------------------------

const { tf, backends, unavailable, wasmFeatures } = await setupTfjs();
const hasWasm = backends.includes('wasm');
type TfTensor4 = ReturnType<typeof tf.tensor4d>;
let tfjs: { forward: () => void; inputGradient: () => void; both: () => void; dispose: () => void } | null = null;
if (hasWasm) {
  await useTfBackend('wasm');
  // NHWC data and HWIO filters: the same values, transposed.
  const tx = tf.tidy(() => tf.transpose(tf.tensor4d(xValues, [N, C, HW, HW]), [0, 2, 3, 1])) as TfTensor4;
  const tw = tf.tidy(() => tf.mul(tf.transpose(tf.tensor4d(wValues, [C, C, K, K]), [2, 3, 1, 0]), 0.05)) as TfTensor4;
  const tdy = tf.tidy(() => tf.transpose(tf.tensor4d(gValues, [N, C, HW, HW]), [0, 2, 3, 1])) as TfTensor4;
  const run = (f: () => TfTensor4) => {
    const y = f();
    y.dataSync();
    y.dispose();
  };
  const fwd = () => run(() => tf.conv2d(tx, tw, 1, 'same'));
  const back = () => run(() => tf.conv2dTranspose(tdy, tw, [N, HW, HW, C], 1, 'same'));
  tfjs = {
    forward: fwd,
    inputGradient: back,
    both: () => {
      fwd();
      back();
    },
    dispose: () => {
      for (const t of [tx, tw, tdy]) t.dispose();
    },
  };
}

// Both libraries compute the same convolution: compare a few outputs before timing.
if (tfjs !== null) {
  const ours = noGrad(() => conv2d(x, w, null, 1, 1));
  const theirs = tf.tidy(() =>
    tf.transpose(
      tf.conv2d(
        tf.transpose(tf.tensor4d(xValues, [N, C, HW, HW]), [0, 2, 3, 1]) as TfTensor4,
        tf.mul(tf.transpose(tf.tensor4d(wValues, [C, C, K, K]), [2, 3, 1, 0]), 0.05) as TfTensor4,
        1,
        'same',
      ),
      [0, 3, 1, 2],
    )
  );
  const a = ours.toArray() as number[], b = theirs.dataSync();
  for (let i = 0; i < a.length; i += 4099) {
    if (Math.abs(a[i] - b[i]) > 1e-3 * (1 + Math.abs(b[i]))) {
      throw new Error(`conv2d differs from tfjs at ${i}: ${a[i]} vs ${b[i]}`);
    }
  }
  ours.dispose();
  theirs.dispose();
}

// ---- the CNN step -------------------------------------------------------------------------------------------

manualSeed(0);
const model = new Sequential(
  new Conv2d(1, 16, 3, { padding: 1 }),
  new BatchNorm2d(16),
  new ReLU(),
  new MaxPool2d(2),
  new Conv2d(16, 32, 3, { padding: 1 }),
  new BatchNorm2d(32),
  new ReLU(),
  new MaxPool2d(2),
  new Flatten(),
  new Linear(128, 10),
);
const optimizer = new Adam(model.parameters(), { lr: 3e-3 });
const images: Tensor = randn([32, 1, 8, 8]);
const labels: Tensor = tensor(Array.from({ length: 32 }, (_, i) => i % 10));
const cnnStep = () =>
  scope(() => {
    const loss = crossEntropy(model.call(images), labels);
    optimizer.zeroGrad();
    loss.backward();
    optimizer.step();
  });

// ---- run -----------------------------------------------------------------------------------------------------

const sections: Array<[string, () => void, (() => void) | undefined]> = [
  [FORWARD, forward, tfjs?.forward],
  [INPUT_GRAD, inputGradient, tfjs?.inputGradient],
  [BOTH, forwardBackward, tfjs?.both],
];
for (const [name, ours, theirs] of sections) {
  await summary(() =>
    group(name, () => {
      bench(`switchyard ${name}`, () => do_not_optimize(ours())).baseline();
      if (theirs !== undefined) {
        bench(`tfjs-wasm ${name}${name === BOTH ? ' (no weight gradient)' : ''}`, async function* () {
          await useTfBackend('wasm');
          yield () => do_not_optimize(theirs());
        });
      }
    })
  );
}
await summary(() => group(CNN, () => void bench(`switchyard ${CNN}`, () => do_not_optimize(cnnStep()))));

await runAndReport('conv', (figures) => {
  const p50 = (name: string) => figures.get(name)?.p50_ns;
  const ms = (ns: number | undefined) => (ns === undefined ? null : Number((ns / 1e6).toFixed(2)));
  const row = (name: string, peer: string) => {
    const ours = p50(`switchyard ${name}`), theirs = p50(`tfjs-wasm ${peer}`);
    return {
      switchyard_p50_ms: ms(ours),
      tfjs_wasm_p50_ms: ms(theirs),
      speedup_vs_tfjs_wasm: ours === undefined || theirs === undefined ? null : Number((theirs / ours).toFixed(2)),
    };
  };
  const fwd = p50(`switchyard ${FORWARD}`);
  return {
    tfjs: { backends, unavailable, wasm_binary: wasmFeatures },
    forward: row(FORWARD, FORWARD),
    forward_gflops: fwd === undefined ? null : Number((FLOP / fwd).toFixed(1)),
    input_gradient: row(INPUT_GRAD, INPUT_GRAD),
    forward_backward: row(BOTH, `${BOTH} (no weight gradient)`),
    cnn_step_p50_ms: ms(p50(`switchyard ${CNN}`)),
  };
});

tfjs?.dispose();
optimizer.dispose();
model.dispose();
for (const t of [x, w, dy, xg, wg, images, labels]) t.dispose();
