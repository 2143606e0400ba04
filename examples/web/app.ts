/**
 * The browser example (`examples/web/`, served by `serve.ts`): trains the digits MLP in the page with a live loss
 * and accuracy plot, shows the computed dispatch table of `aten::add.Tensor`, and uses WebGPU when the page is opened
 * with `?device=webgpu` and the browser has it. It works with and without cross-origin isolation (without it there is
 * no SharedArrayBuffer and the runtime runs on one agent over non-shared memory). Its outcome is also left in
 * `globalThis.switchyardDemo` for tests/web/browser.test.ts.
 *
 * @module
 */
import {
  argmax,
  Dispatcher,
  Generator,
  initWebGPU,
  manualSeed,
  memoryStats,
  nn,
  noGrad,
  optim,
  registerOperators,
  scope,
  type Tensor,
  tensor,
  zeros,
} from '../../mod.ts';

const FEATURES = 64, CLASSES = 10, EPOCHS = 20, BATCH = 32, SEED = 0;

interface DemoState {
  done: boolean;
  error?: string;
  device: string;
  crossOriginIsolated: boolean;
  sharedMemory: boolean;
  losses: number[];
  accuracies: number[];
  testAccuracy: number;
  liveTensors: number[];
}

const state: DemoState = {
  done: false,
  device: 'cpu',
  crossOriginIsolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
  sharedMemory: typeof SharedArrayBuffer === 'function',
  losses: [],
  accuracies: [],
  testAccuracy: 0,
  liveTensors: [],
};
(globalThis as { switchyardDemo?: DemoState }).switchyardDemo = state;

// The few DOM types this page uses, declared here: the project type-checks without the DOM library.
interface Canvas2D {
  fillStyle: string;
  strokeStyle: string;
  lineWidth: number;
  fillRect(x: number, y: number, w: number, h: number): void;
  strokeRect(x: number, y: number, w: number, h: number): void;
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  stroke(): void;
  fillText(text: string, x: number, y: number): void;
}
interface PageElement {
  textContent: string | null;
  innerHTML: string;
  width: number;
  height: number;
  getContext(kind: '2d'): Canvas2D | null;
}
const page = globalThis as unknown as {
  document: { getElementById(id: string): PageElement | null };
  location: { href: string; search: string };
};
const $ = (id: string): PageElement => page.document.getElementById(id)!;

/** The digits (1,797 8×8 images, pixels scaled to [0, 1]) from the gzipped CSV next to the examples. */
async function loadDigits(): Promise<{ pixels: Float32Array; labels: number[] }> {
  const response = await fetch(new URL('../data/digits.csv.gz', page.location.href));
  const text = await new Response(response.body!.pipeThrough(new DecompressionStream('gzip'))).text();
  const lines = text.trim().split('\n');
  const pixels = new Float32Array(lines.length * FEATURES);
  const labels = lines.map((line, i) => {
    const values = line.split(',').map(Number);
    for (let j = 0; j < FEATURES; j++) pixels[i * FEATURES + j] = values[j] / 16;
    return values[FEATURES];
  });
  return { pixels, labels };
}

function permutation(n: number, generator: Generator): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = generator.random() % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** Loss (falling, left axis) and test accuracy (rising, 0–100%) per epoch. */
function plot(): void {
  const canvas = $('plot');
  const g = canvas.getContext('2d')!;
  const w = canvas.width, h = canvas.height, pad = 30;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, w, h);
  g.strokeStyle = '#999';
  g.strokeRect(pad, 10, w - 2 * pad, h - pad - 10);
  const x = (i: number) => pad + (i / Math.max(1, EPOCHS - 1)) * (w - 2 * pad);
  const y = (v: number) => 10 + (1 - v) * (h - pad - 10);
  const maxLoss = Math.max(...state.losses, 1e-9);
  const line = (values: number[], scale: number, color: string) => {
    g.strokeStyle = color;
    g.lineWidth = 3;
    g.beginPath();
    values.forEach((v, i) => (i === 0 ? g.moveTo(x(i), y(v / scale)) : g.lineTo(x(i), y(v / scale))));
    g.stroke();
  };
  line(state.losses, maxLoss, '#d93025');
  line(state.accuracies, 1, '#1a73e8');
  g.fillStyle = '#222';
  g.fillText('loss (red), test accuracy (blue) per epoch', pad + 6, 24);
}

/** The computed dispatch table of aten::add.Tensor as an HTML table (key, kernel, why). */
function showTable(): void {
  registerOperators(); // operators register on first use; the table is read before any runs
  const op = Dispatcher.singleton().findOp('aten::add', 'Tensor')!;
  const rows = op.computedTable().map((row) => {
    const kind = row.fallthrough
      ? 'fallthrough'
      : row.source === 'missing'
      ? 'missing'
      : row.source.includes('fallback')
      ? 'fallback'
      : 'kernel';
    const cell = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
    return `<tr><th>${cell(row.key)}</th><td class="${kind}">${cell(row.kernel)}</td><td>${cell(row.source)}</td></tr>`;
  });
  $('table').innerHTML = `<table><tr><th>key</th><th>kernel</th><th>source</th></tr>${rows.join('')}</table>`;
}

async function main(): Promise<void> {
  const wantGpu = new URLSearchParams(page.location.search).get('device') === 'webgpu';
  if (wantGpu && 'gpu' in navigator) {
    await initWebGPU();
    state.device = 'webgpu';
  }
  const device = state.device as 'cpu' | 'webgpu';
  $('environment').textContent = `device ${device}; cross-origin isolated: ${state.crossOriginIsolated}; ` +
    `SharedArrayBuffer: ${state.sharedMemory ? 'yes (Workers possible)' : 'no (one agent, non-shared memory)'}`;
  showTable();
  const data = await loadDigits();
  const order = permutation(data.labels.length, new Generator(SEED));
  const testCount = Math.round(order.length * 0.2);
  const trainIndices = order.slice(testCount), testIndices = order.slice(0, testCount);
  const gather = (indices: readonly number[]) => {
    const rows = new Float32Array(indices.length * FEATURES);
    indices.forEach((index, i) =>
      rows.set(data.pixels.subarray(index * FEATURES, (index + 1) * FEATURES), i * FEATURES)
    );
    return scope(() => ({
      x: tensor(rows, { device }).view([indices.length, FEATURES]),
      y: tensor(indices.map((index) => data.labels[index]), { device }),
    }));
  };
  const test = gather(testIndices);
  manualSeed(SEED);
  const model = new nn.Sequential(new nn.Linear(FEATURES, 128), new nn.ReLU(), new nn.Linear(128, CLASSES));
  model.to({ device });
  const lossFunction = new nn.CrossEntropyLoss();
  const optimizer = new optim.Adam(model.parameters(), { lr: 0.01 });
  const shuffler = new Generator(SEED + 1);
  for (let epoch = 1; epoch <= EPOCHS; epoch++) {
    const epochOrder = permutation(trainIndices.length, shuffler).map((i) => trainIndices[i]);
    const lossTotal = zeros([], { device });
    for (let start = 0; start < epochOrder.length; start += BATCH) {
      const batch = epochOrder.slice(start, start + BATCH);
      scope(() => {
        const { x, y } = gather(batch);
        const loss = lossFunction.call(model.call(x), y);
        loss.backward();
        optimizer.step();
        optimizer.zeroGrad();
        noGrad(() => lossTotal.add_(loss, { alpha: batch.length }));
      });
    }
    const correct: Tensor = noGrad(() => scope(() => argmax(model.call(test.x), 1).eq(test.y).sum()));
    state.losses.push((await lossTotal.itemAsync() as number) / epochOrder.length);
    state.accuracies.push((await correct.itemAsync() as number) / testIndices.length);
    lossTotal.dispose();
    correct.dispose();
    state.liveTensors.push(memoryStats().liveTensors);
    $('status').textContent = `epoch ${epoch}/${EPOCHS}: loss ${state.losses.at(-1)!.toFixed(4)}, ` +
      `test accuracy ${(100 * state.accuracies.at(-1)!).toFixed(1)}%, live tensors ${state.liveTensors.at(-1)}`;
    plot();
    await new Promise((resolve) => setTimeout(resolve, 0)); // let the page paint
  }
  state.testAccuracy = state.accuracies.at(-1)!;
  optimizer.dispose();
  model.dispose();
  test.x.dispose();
  test.y.dispose();
}

main().then(
  () => (state.done = true),
  (error) => {
    state.error = String(error?.stack ?? error);
    state.done = true;
    $('status').textContent = `failed: ${state.error}`;
  },
);
