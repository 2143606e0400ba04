/**
 * Trains a multilayer perceptron on the UCI handwritten digits (1,797 8×8 images, `examples/data/`) with
 * every operator call going through the dispatcher: forward, loss, backward and optimizer step. Prints one
 * line per epoch and the final test accuracy, and exits with status 1 if that is below 95%.
 *
 * Run: `deno run -A examples/digits.ts` or `bun examples/digits.ts`; add `--device webgpu` to train on the GPU
 * (`npm start -- --device webgpu`): the model and every batch live there, and results are read back with
 * `await ...itemAsync()` once per epoch.
 *
 * @module
 */
import process from 'node:process';
import { type Digits, FEATURES, loadDigits, permutation } from './data/digits.ts';
import {
  argmax,
  Generator,
  initWebGPU,
  manualSeed,
  memoryStats,
  noGrad,
  scope,
  type Tensor,
  tensor,
  zeros,
} from '../mod.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../core/nn/mod.ts';
import { Adam } from '../core/optim/mod.ts';

const SEED = 0;
const EPOCHS = 20;
const BATCH_SIZE = 32;
const LEARNING_RATE = 3e-3;
const TEST_FRACTION = 0.2;
const REQUIRED_ACCURACY = 0.95;
const CLASSES = 10;

/** `--device cpu` (the default) or `--device webgpu`. */
function deviceArgument(): 'cpu' | 'webgpu' {
  const at = process.argv.indexOf('--device');
  const value = at < 0 ? 'cpu' : process.argv[at + 1];
  if (value !== 'cpu' && value !== 'webgpu') throw new Error(`--device must be cpu or webgpu, got ${value}`);
  return value;
}
const device = deviceArgument();

/** The samples at `indices` as tensors: inputs `[n, 64]` float32 and labels `[n]` int64. */
function gather(data: Digits, indices: readonly number[]): { x: Tensor; y: Tensor } {
  const rows = new Float32Array(indices.length * FEATURES);
  indices.forEach((index, i) => rows.set(data.pixels.subarray(index * FEATURES, (index + 1) * FEATURES), i * FEATURES));
  return scope(() => ({
    x: tensor(rows, { device }).view([indices.length, FEATURES]),
    y: tensor(indices.map((index) => data.labels[index]), { device }),
  }));
}

/** The fraction of `x` the model classifies as `y` (read back asynchronously: `x` may live on the GPU). */
async function accuracy(model: Sequential, x: Tensor, y: Tensor): Promise<number> {
  const correct = noGrad(() => scope(() => argmax(model.call(x), 1).eq(y).sum()));
  try {
    return (await correct.itemAsync() as number) / y.numel;
  } finally {
    correct.dispose();
  }
}

const started = performance.now();
if (device === 'webgpu') console.log(`WebGPU adapter: ${(await initWebGPU()).description}`);
const data = await loadDigits();
const order = permutation(data.labels.length, new Generator(SEED));
const testCount = Math.round(order.length * TEST_FRACTION);
const trainIndices = order.slice(testCount), testIndices = order.slice(0, testCount);
const train = gather(data, trainIndices), test = gather(data, testIndices);

manualSeed(SEED);
const model = new Sequential(new Linear(FEATURES, 128), new ReLU(), new Linear(128, CLASSES)).to({ device });
const lossFunction = new CrossEntropyLoss();
const optimizer = new Adam(model.parameters(), { lr: LEARNING_RATE });
const shuffler = new Generator(SEED + 1);
console.log(
  `digits: ${trainIndices.length} train / ${testIndices.length} test samples; ` +
    `MLP ${FEATURES}-128-${CLASSES}, Adam lr ${LEARNING_RATE}, batch ${BATCH_SIZE}, device ${device}`,
);

const liveAfterEpoch: number[] = [];
let testAccuracy = 0;
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  const epochStart = performance.now();
  const epochOrder = permutation(trainIndices.length, shuffler).map((i) => trainIndices[i]);
  // The loss is summed on the device and read back once per epoch.
  const lossTotal = zeros([], { device });
  for (let start = 0; start < epochOrder.length; start += BATCH_SIZE) {
    const batchIndices = epochOrder.slice(start, start + BATCH_SIZE);
    // Everything a step makes (batch, activations, loss, gradients' temporaries) is freed at its end.
    scope(() => {
      const { x, y } = gather(data, batchIndices);
      const loss = lossFunction.call(model.call(x), y);
      loss.backward();
      optimizer.step();
      optimizer.zeroGrad();
      noGrad(() => lossTotal.add_(loss, { alpha: batchIndices.length }));
    });
  }
  const lossSum = await lossTotal.itemAsync() as number;
  lossTotal.dispose();
  const trainAccuracy = await accuracy(model, train.x, train.y);
  testAccuracy = await accuracy(model, test.x, test.y);
  liveAfterEpoch.push(memoryStats().liveTensors);
  const seconds = (performance.now() - epochStart) / 1000;
  console.log(
    `epoch ${String(epoch).padStart(2)}/${EPOCHS}  loss ${(lossSum / epochOrder.length).toFixed(4)}  ` +
      `train acc ${(100 * trainAccuracy).toFixed(1)}%  test acc ${(100 * testAccuracy).toFixed(1)}%  ${
        seconds.toFixed(2)
      } s`,
  );
}

const flat = liveAfterEpoch.every((n) => n === liveAfterEpoch[0]);
console.log(
  `final test accuracy ${(100 * testAccuracy).toFixed(1)}% (required ≥ ${100 * REQUIRED_ACCURACY}%) in ${
    ((performance.now() - started) / 1000).toFixed(2)
  } s`,
);
console.log(
  `live tensors: ${memoryStats().liveTensors} (${flat ? 'the same after every epoch' : 'changed across epochs'}: ` +
    `${model.parameters().length} parameters, ${2 * optimizer.state.size} Adam moments, 4 dataset tensors)`,
);
optimizer.dispose();
model.dispose();
for (const t of [train.x, train.y, test.x, test.y]) t.dispose();
console.log(`live tensors after disposing the model, optimizer and data: ${memoryStats().liveTensors}`);
if (testAccuracy < REQUIRED_ACCURACY || !flat) process.exit(1);
