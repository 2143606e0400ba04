/**
 * WebGPU benchmarks: Switchyard's WebGPU backend beside TensorFlow.js's WebGPU backend
 * (`@tensorflow/tfjs-backend-webgpu`, loaded when installed) in the same process, on the same adapter:
 * elementwise `add` of 16M float32, `sum` of 16M, matmul 1024 and 2048, one SGD step of a 784-256-10 MLP, and the
 * latency of a tiny op with and without reading its result back. Every timed iteration ends when the GPU has
 * finished (a readback or `synchronizeWebGPU()`), so the figures are GPU time plus submission, not encoding
 * alone. On a software adapter (llvmpipe) the absolute figures measure a CPU emulation: compare the ratios.
 *
 * Run: `deno run -A bench/webgpu.bench.ts` (Bun: with `bun-webgpu` installed).
 *
 * @module
 */
import { bench, do_not_optimize, group, runAndReport, smokeSize, summary } from './_report.ts';
import { logAdapter, onGpu, tfjsWebgpu, tfTimed, timed } from './_webgpu.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../core/nn/mod.ts';
import { SGD } from '../core/optim/mod.ts';
import { initWebGPU, manualSeed, rand, randint, scope } from '../mod.ts';

const ELEMENTS = smokeSize(16 * 2 ** 20, 4096);
const BATCH = 64, INPUT = 784, HIDDEN = 256, CLASSES = 10;

// Without an adapter (Bun without bun-webgpu) the suite reports why and registers nothing.
const unavailable = await initWebGPU().then(() => undefined, (e: Error) => e.message);
if (unavailable === undefined) await benchmarks();
else console.log(`webgpu benchmarks skipped: ${unavailable}`);

async function benchmarks(): Promise<void> {
  const info = logAdapter();
  const peer = await tfjsWebgpu();

  manualSeed(0);
  const a16 = onGpu(rand([ELEMENTS])), b16 = onGpu(rand([ELEMENTS]));
  const n1 = smokeSize(1024, 33), n2 = smokeSize(2048, 65);
  const m1 = onGpu(rand([n1, n1])), m1b = onGpu(rand([n1, n1]));
  const m2 = onGpu(rand([n2, n2])), m2b = onGpu(rand([n2, n2]));
  const tiny = onGpu(rand([1])), tinyB = onGpu(rand([1]));

  manualSeed(1);
  const model = new Sequential(new Linear(INPUT, HIDDEN), new ReLU(), new Linear(HIDDEN, CLASSES)).to({
    device: 'webgpu',
  });
  const lossFunction = new CrossEntropyLoss();
  const optimizer = new SGD(model.parameters(), { lr: 0.01 });
  const x = onGpu(rand([BATCH, INPUT])), y = onGpu(randint(CLASSES, [BATCH]));

  group('elementwise and reduction, 16M float32', () => {
    summary(() => {
      bench('switchyard-webgpu add 16M', () => timed(() => a16.add(b16)));
      bench('switchyard-webgpu sum 16M', () => timed(() => a16.sum()));
      if ('tf' in peer) {
        const { tf } = peer;
        const ta = tf.randomUniform([ELEMENTS]), tb = tf.randomUniform([ELEMENTS]);
        bench('tfjs-webgpu add 16M', () => tfTimed(tf, () => tf.add(ta, tb)));
        bench('tfjs-webgpu sum 16M', () => tfTimed(tf, () => tf.sum(ta)));
      }
    });
  });

  group('matmul float32', () => {
    summary(() => {
      bench('switchyard-webgpu matmul 1024', () => timed(() => m1.mm(m1b)));
      bench('switchyard-webgpu matmul 2048', () => timed(() => m2.mm(m2b)));
      if ('tf' in peer) {
        const { tf } = peer;
        const t1 = tf.randomUniform([n1, n1]), t2 = tf.randomUniform([n2, n2]);
        bench('tfjs-webgpu matmul 1024', () => tfTimed(tf, () => tf.matMul(t1, t1)));
        bench('tfjs-webgpu matmul 2048', () => tfTimed(tf, () => tf.matMul(t2, t2)));
      }
    });
  });

  group('training and latency', () => {
    bench(`switchyard-webgpu SGD step, MLP ${INPUT}-${HIDDEN}-${CLASSES}, batch ${BATCH}`, () =>
      timed(() => {
        const loss = lossFunction.call(model.call(x), y);
        loss.backward();
        optimizer.step();
        optimizer.zeroGrad();
      }));
    bench('switchyard-webgpu tiny add, no readback (encode only)', () => {
      scope(() => void do_not_optimize(tiny.add(tinyB)));
    });
    bench('switchyard-webgpu tiny add + readback', async () => {
      const r = tiny.add(tinyB);
      do_not_optimize(await r.itemAsync());
      r.dispose();
    });
    if ('tf' in peer) {
      const { tf } = peer;
      const ta = tf.randomUniform([1]), tb = tf.randomUniform([1]);
      bench('tfjs-webgpu tiny add, no readback', () => {
        tf.tidy(() => do_not_optimize(tf.add(ta, tb)));
      });
      bench('tfjs-webgpu tiny add + readback', async () => {
        const r = tf.add(ta, tb);
        do_not_optimize(await r.data());
        r.dispose();
      });
    }
  });

  await runAndReport('webgpu', (f) => {
    const p50 = (name: string) => f.get(name)?.p50_ns;
    const ratio = (ours: string, theirs: string) => {
      const a = p50(ours), b = p50(theirs);
      return a === undefined || b === undefined ? null : Number((b / a).toFixed(2));
    };
    const gbps = (name: string, bytes: number) => {
      const t = p50(name);
      return t === undefined ? null : Number((bytes / t).toFixed(2));
    };
    const gflops = (name: string, n: number) => {
      const t = p50(name);
      return t === undefined ? null : Number(((2 * n ** 3) / t).toFixed(2));
    };
    return {
      adapter: info.description || info.device,
      fallbackAdapter: info.isFallbackAdapter ?? null,
      tfjsWebgpu: 'tf' in peer ? 'measured' : peer.missing,
      'add 16M GB/s': gbps('switchyard-webgpu add 16M', 3 * 4 * ELEMENTS),
      'sum 16M GB/s': gbps('switchyard-webgpu sum 16M', 4 * ELEMENTS),
      'matmul 1024 GFLOP/s': gflops('switchyard-webgpu matmul 1024', 1024),
      'matmul 2048 GFLOP/s': gflops('switchyard-webgpu matmul 2048', 2048),
      'speed-up over tfjs-webgpu (their time / ours)': {
        'add 16M': ratio('switchyard-webgpu add 16M', 'tfjs-webgpu add 16M'),
        'sum 16M': ratio('switchyard-webgpu sum 16M', 'tfjs-webgpu sum 16M'),
        'matmul 1024': ratio('switchyard-webgpu matmul 1024', 'tfjs-webgpu matmul 1024'),
        'matmul 2048': ratio('switchyard-webgpu matmul 2048', 'tfjs-webgpu matmul 2048'),
        'tiny add + readback': ratio('switchyard-webgpu tiny add + readback', 'tfjs-webgpu tiny add + readback'),
      },
    };
  });

  optimizer.dispose();
  model.dispose();
  for (const t of [a16, b16, m1, m1b, m2, m2b, tiny, tinyB, x, y]) t.dispose();
}
