/**
 * Training benchmarks: one SGD step of a 784-256-10 MLP (batch 64, ReLU, cross-entropy) in Switchyard and, in
 * the same process, in TensorFlow.js (cpu and wasm backends); and the cost autograd adds to one recorded
 * operator call (a 1-element `add` of two tensors that require grad, minus the same call under `noGrad`).
 *
 * Run: `deno run -A bench/training.bench.ts` or `bun bench/training.bench.ts`.
 *
 * @module
 */
import { bench, do_not_optimize, group, runAndReport, summary } from './_report.ts';
import type * as tfjs from '@tensorflow/tfjs-core';
import { add, empty, manualSeed, noGrad, scope, tensor } from '../mod.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../core/nn/mod.ts';
import { SGD } from '../core/optim/mod.ts';
import { setupTfjs, type TfBackend, useTfBackend } from './_peers.ts';

const BATCH = 64;
const INPUT = 784;
const HIDDEN = 256;
const CLASSES = 10;
const LR = 0.01;

/** Seeded uniform [0, 1) values, so that both libraries train on the same batch. */
function randomValues(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 4294967296;
  }
  return out;
}

const inputs = randomValues(BATCH * INPUT, 1);
const labels = Array.from(randomValues(BATCH, 2), (u) => Math.floor(u * CLASSES));

const { tf, backends, unavailable, wasmFeatures } = await setupTfjs();

// ---- 1. one training step -----------------------------------------------------------------------------------

const STEP = `SGD step, MLP ${INPUT}-${HIDDEN}-${CLASSES}, batch ${BATCH}`;

/** The Switchyard model, data and a step function. */
function switchyardTraining() {
  manualSeed(0);
  const model = new Sequential(new Linear(INPUT, HIDDEN), new ReLU(), new Linear(HIDDEN, CLASSES));
  const lossFunction = new CrossEntropyLoss();
  const optimizer = new SGD(model.parameters(), { lr: LR });
  const x = empty([BATCH, INPUT], { dtype: 'float32' });
  const bytes = x.storage.bytes();
  new Float32Array(bytes.buffer, bytes.byteOffset, inputs.length).set(inputs);
  const y = tensor(labels);
  const step = (): number =>
    scope(() => {
      const loss = lossFunction.call(model.call(x), y);
      loss.backward();
      optimizer.step();
      optimizer.zeroGrad();
      return loss.item() as number;
    });
  const dispose = () => {
    optimizer.dispose();
    model.dispose();
    x.dispose();
    y.dispose();
  };
  return { step, dispose };
}

// Note [tfjs gradients under Deno]
// `@tensorflow/tfjs-core`'s Node build, which both runtimes load, registers no gradient functions: the
// `@tensorflow/tfjs` bundle does that by importing `tfjs-core/dist/register_all_gradients.js`, an ES module
// whose extensionless relative imports Deno does not resolve. So the three kernels the step differentiates
// get their gradients here, written as tfjs writes them (BatchMatMul, broadcasting Add, Relu), and the loss
// is a `customGrad`, as `tf.losses.softmaxCrossEntropy` is inside (its mean reduction would need RealDiv's).
let tfjsGradientsRegistered = false;
function registerTfjsGradients(): void {
  if (tfjsGradientsRegistered) return;
  tfjsGradientsRegistered = true;
  const unbroadcast = (dy: tfjs.Tensor, shape: readonly number[]) => {
    const axes = tf.backend_util.getReductionAxes(shape as number[], dy.shape);
    return axes.length === 0 ? dy : tf.reshape(tf.sum(dy, axes), shape as number[]);
  };
  tf.registerGradient({
    kernelName: 'BatchMatMul',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, [a, b], attrs) => {
      const { transposeA, transposeB } = attrs as { transposeA: boolean; transposeB: boolean };
      if (transposeA || transposeB) throw new Error('BatchMatMul gradient: transposed operands are not used here');
      return {
        a: () => tf.matMul(dy as tfjs.Tensor, b, false, true),
        b: () => tf.matMul(a, dy as tfjs.Tensor, true, false),
      };
    },
  });
  tf.registerGradient({
    kernelName: 'Add',
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, [a, b]) => ({
      a: () => unbroadcast(dy as tfjs.Tensor, a.shape),
      b: () => unbroadcast(dy as tfjs.Tensor, b.shape),
    }),
  });
  tf.registerGradient({
    kernelName: 'Relu',
    inputsToSave: ['x'],
    gradFunc: (dy, [x]) => ({ x: () => tf.mul(dy as tfjs.Tensor, tf.cast(tf.step(x), 'float32')) }),
  });
}

/** Mean softmax cross-entropy of `logits` against one-hot `labels`, with its gradient (softmax - labels) / N. */
function tfjsCrossEntropy(labels: tfjs.Tensor): (logits: tfjs.Tensor) => tfjs.Scalar {
  // customGrad passes the inputs, then the save function.
  return tf.customGrad((...args: Array<tfjs.Tensor | tfjs.GradSaveFunc>) => {
    const [logits, save] = args as [tfjs.Tensor, tfjs.GradSaveFunc];
    const logProbs = tf.logSoftmax(logits);
    save([logProbs]);
    const value = tf.neg(tf.mean(tf.sum(tf.mul(labels, logProbs), -1))) as tfjs.Scalar;
    return {
      value,
      gradFunc: (dy, [saved]) => tf.mul(dy, tf.div(tf.sub(tf.exp(saved), labels), labels.shape[0])),
    };
  }) as (logits: tfjs.Tensor) => tfjs.Scalar;
}

/** The same model and step in TensorFlow.js on the active backend. */
function tfjsTraining() {
  registerTfjsGradients();
  const bound1 = 1 / Math.sqrt(INPUT), bound2 = 1 / Math.sqrt(HIDDEN);
  const w1 = tf.variable(tf.randomUniform([INPUT, HIDDEN], -bound1, bound1, 'float32', 1));
  const b1 = tf.variable(tf.randomUniform([HIDDEN], -bound1, bound1, 'float32', 2));
  const w2 = tf.variable(tf.randomUniform([HIDDEN, CLASSES], -bound2, bound2, 'float32', 3));
  const b2 = tf.variable(tf.randomUniform([CLASSES], -bound2, bound2, 'float32', 4));
  const x = tf.tensor2d(inputs, [BATCH, INPUT]);
  const y = tf.oneHot(tf.tensor1d(labels, 'int32'), CLASSES);
  const crossEntropy = tfjsCrossEntropy(y);
  const optimizer = tf.train.sgd(LR);
  const forwardLoss = (): tfjs.Scalar => {
    const hidden = tf.relu(tf.add(tf.matMul(x, w1), b1));
    return crossEntropy(tf.add(tf.matMul(hidden, w2), b2));
  };
  const step = (): number =>
    tf.tidy(() => {
      const loss = optimizer.minimize(forwardLoss, true)!;
      return loss.dataSync()[0];
    });
  const dispose = () => {
    for (const t of [w1, b1, w2, b2, x, y]) t.dispose();
    optimizer.dispose();
  };
  return { step, dispose };
}

/** The loss falls over a few steps in each library: the benchmark times a step that trains. */
function checkTrains(name: string, step: () => number): void {
  const first = step();
  let last = first;
  for (let i = 0; i < 5; i++) last = step();
  if (!(Number.isFinite(first) && last < first)) {
    throw new Error(`Benchmark check of ${name} failed: loss ${first} → ${last} over 5 steps`);
  }
}

const switchyard = switchyardTraining();
checkTrains(`switchyard ${STEP}`, switchyard.step);
const tfjsTrainings = new Map<TfBackend, ReturnType<typeof tfjsTraining>>();
for (const backend of backends) {
  await useTfBackend(backend);
  const training = tfjsTraining();
  checkTrains(`tfjs-${backend} ${STEP}`, training.step);
  tfjsTrainings.set(backend, training);
}

await summary(() =>
  group(STEP, () => {
    bench(`switchyard ${STEP}`, () => do_not_optimize(switchyard.step())).baseline();
    for (const [backend, training] of tfjsTrainings) {
      bench(`tfjs-${backend} ${STEP}`, async function* () {
        await useTfBackend(backend);
        yield () => do_not_optimize(training.step());
      });
    }
  })
);

// ---- 2. autograd's cost on one recorded call -----------------------------------------------------------------

const RECORDED = 'add, 1 element, inputs require grad (recorded)';
const UNRECORDED = 'add, 1 element, inputs require grad, under noGrad';
const PLAIN = 'add, 1 element, inputs do not require grad';
const a = tensor([1.5], { dtype: 'float32' }).requiresGrad_();
const b = tensor([2.25], { dtype: 'float32' }).requiresGrad_();
const c = tensor([1.5], { dtype: 'float32' }), d = tensor([2.25], { dtype: 'float32' });

await summary(() =>
  group('autograd overhead of one operator call (result disposed, no backward)', () => {
    bench(RECORDED, () => add(a, b).dispose()).baseline();
    bench(UNRECORDED, function* () {
      using _noGrad = noGrad();
      yield () => add(a, b).dispose();
    });
    bench(PLAIN, () => add(c, d).dispose());
  })
);

// ---- report ------------------------------------------------------------------------------------------------

await runAndReport('training', (figures) => {
  const p50 = (name: string) => figures.get(name)?.p50_ns;
  const ms = (name: string) => {
    const ns = p50(name);
    return ns === undefined ? null : Number((ns / 1e6).toFixed(3));
  };
  const recorded = p50(RECORDED), unrecorded = p50(UNRECORDED);
  return {
    tfjs: { backends, unavailable, wasm_binary: wasmFeatures },
    step_p50_ms: Object.fromEntries(
      ['switchyard', ...backends.map((backend) => `tfjs-${backend}`)].map((who) => [who, ms(`${who} ${STEP}`)]),
    ),
    autograd_overhead_p50_ns: recorded === undefined || unrecorded === undefined
      ? null
      : Number((recorded - unrecorded).toFixed(1)),
    add_1_element_p50_ns: { recorded, under_no_grad: unrecorded, no_grad_inputs: p50(PLAIN) },
  };
});

switchyard.dispose();
for (const training of tfjsTrainings.values()) training.dispose();
for (const t of [a, b, c, d]) t.dispose();
