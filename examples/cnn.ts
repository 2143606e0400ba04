/**
 * Trains a small convolutional network on the UCI handwritten digits (1,797 8×8 images, `examples/data/`):
 * two conv-batchnorm-relu-maxpool blocks and a linear classifier, every operator call going through the
 * dispatcher (the convolutions are im2col + the packed wasm gemm). Prints one line per epoch with the loss,
 * the train and test accuracy and the live tensors and bytes (which stay flat), and exits with status 1 if the
 * final test accuracy is below 98% or memory grew. `--device webgpu` trains on the GPU (the WGSL convolution and
 * pooling kernels, gpu/kernels/): the model and every batch live there, and results are read back with
 * `itemAsync()`.
 *
 * Run: `npm run demo:cnn`, `deno run -A examples/cnn.ts` or `bun examples/cnn.ts`; add `--device webgpu` for the GPU.
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
import { BatchNorm2d, Conv2d, CrossEntropyLoss, Flatten, Linear, MaxPool2d, ReLU, Sequential } from '../core/nn/mod.ts';
import { Adam } from '../core/optim/mod.ts';

const SEED = 0;
const EPOCHS = 15;
const BATCH_SIZE = 32;
const LEARNING_RATE = 3e-3;
const TEST_FRACTION = 0.2;
const REQUIRED_ACCURACY = 0.98;
const SIDE = 8;
const CLASSES = 10;

/** `--device cpu` (the default) or `--device webgpu`. */
function deviceArgument(): 'cpu' | 'webgpu' {
  const at = process.argv.indexOf('--device');
  const value = at < 0 ? 'cpu' : process.argv[at + 1];
  if (value !== 'cpu' && value !== 'webgpu') throw new Error(`--device must be cpu or webgpu, got ${value}`);
  return value;
}
const device = deviceArgument();

/** The samples at `indices` as images `[n, 1, 8, 8]` float32 and labels `[n]` int64 (on `device`). */
function gather(data: Digits, indices: readonly number[]): { x: Tensor; y: Tensor } {
  const rows = new Float32Array(indices.length * FEATURES);
  indices.forEach((index, i) => rows.set(data.pixels.subarray(index * FEATURES, (index + 1) * FEATURES), i * FEATURES));
  return scope(() => ({
    x: tensor(rows, { device }).view([indices.length, 1, SIDE, SIDE]),
    y: tensor(indices.map((index) => data.labels[index]), { device }),
  }));
}

/**
 * The fraction of `x` the model classifies as `y` (evaluation mode: batch norm uses its running statistics; read
 * back asynchronously: `x` may live on the GPU).
 */
async function accuracy(model: Sequential, x: Tensor, y: Tensor): Promise<number> {
  model.eval();
  const correct = noGrad(() => scope(() => argmax(model.call(x), 1).eq(y).sum()));
  model.train();
  try {
    return Number(await correct.itemAsync()) / y.numel;
  } finally {
    correct.dispose();
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

const started = performance.now();
if (device === 'webgpu') console.log(`WebGPU adapter: ${(await initWebGPU()).description}`);
const data = await loadDigits();
const order = permutation(data.labels.length, new Generator(SEED));
const testCount = Math.round(order.length * TEST_FRACTION);
const trainIndices = order.slice(testCount), testIndices = order.slice(0, testCount);
const train = gather(data, trainIndices), test = gather(data, testIndices);

manualSeed(SEED);
const model = new Sequential(
  new Conv2d(1, 16, 3, { padding: 1 }),
  new BatchNorm2d(16),
  new ReLU(),
  new MaxPool2d(2), // 16 x 4 x 4
  new Conv2d(16, 32, 3, { padding: 1 }),
  new BatchNorm2d(32),
  new ReLU(),
  new MaxPool2d(2), // 32 x 2 x 2
  new Flatten(),
  new Linear(32 * 2 * 2, CLASSES),
).to({ device });
const lossFunction = new CrossEntropyLoss();
const optimizer = new Adam(model.parameters(), { lr: LEARNING_RATE });
const shuffler = new Generator(SEED + 1);
console.log(
  `digits: ${trainIndices.length} train / ${testIndices.length} test samples; Adam lr ${LEARNING_RATE}, batch ${BATCH_SIZE}`,
);
console.log(String(model));

const liveAfterEpoch: Array<[number, number]> = [];
let testAccuracy = 0;
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  const epochStart = performance.now();
  const epochOrder = permutation(trainIndices.length, shuffler).map((i) => trainIndices[i]);
  const lossTotal = zeros([], { device });
  for (let start = 0; start < epochOrder.length; start += BATCH_SIZE) {
    const batchIndices = epochOrder.slice(start, start + BATCH_SIZE);
    // A last batch of one sample cannot be batch-normalised (PyTorch refuses it too): it is skipped.
    if (batchIndices.length < 2) continue;
    // Everything a step makes (batch, activations, loss, gradients' temporaries) is freed at its end.
    scope(() => {
      const { x, y } = gather(data, batchIndices);
      const loss = lossFunction.call(model.call(x), y);
      optimizer.zeroGrad();
      loss.backward();
      optimizer.step();
      noGrad(() => lossTotal.add_(loss, { alpha: batchIndices.length }));
    });
  }
  const lossSum = Number(await lossTotal.itemAsync());
  lossTotal.dispose();
  const trainAccuracy = await accuracy(model, train.x, train.y);
  testAccuracy = await accuracy(model, test.x, test.y);
  const stats = memoryStats();
  liveAfterEpoch.push([stats.liveTensors, stats.bytes]);
  const seconds = (performance.now() - epochStart) / 1000;
  console.log(
    `epoch ${String(epoch).padStart(2)}/${EPOCHS}  loss ${(lossSum / epochOrder.length).toFixed(4)}  ` +
      `train acc ${(100 * trainAccuracy).toFixed(1)}%  test acc ${(100 * testAccuracy).toFixed(1)}%  ` +
      `live ${stats.liveTensors} tensors / ${mib(stats.bytes)}  ${seconds.toFixed(2)} s`,
  );
}

const [tensors0, bytes0] = liveAfterEpoch[0];
const flat = liveAfterEpoch.every(([t, b]) => t === tensors0 && b === bytes0);
console.log(
  `final test accuracy ${(100 * testAccuracy).toFixed(1)}% (required ≥ ${100 * REQUIRED_ACCURACY}%) in ${
    ((performance.now() - started) / 1000).toFixed(2)
  } s; memory ${flat ? 'flat' : 'NOT flat'} across epochs (${tensors0} tensors, ${mib(bytes0)})`,
);
optimizer.dispose();
model.dispose();
for (const t of [train.x, train.y, test.x, test.y]) t.dispose();
console.log(`live tensors after disposing the model, optimizer and data: ${memoryStats().liveTensors}`);
if (testAccuracy < REQUIRED_ACCURACY || !flat) process.exit(1);
