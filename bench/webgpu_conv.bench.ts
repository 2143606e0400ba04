/**
 * WebGPU convolution and pooling benchmarks: the 3×3 convolution of a ResNet-like block (batch 8, 32 → 32 channels,
 * 32×32, padding 1) forward and forward + backward, beside a WebGPU matmul of the same gemm shape
 * (`[OC, C·9] @ [C·9, N·H·W]`, the work an im2col convolution hands to the gemm) in the same run, and beside
 * TensorFlow.js's WebGPU backend (`@tensorflow/tfjs-backend-webgpu`, loaded when installed) on the same adapter;
 * max pooling 2×2 forward and forward + backward. Every timed iteration ends when the GPU has finished. On a
 * software adapter (llvmpipe) the absolute figures measure a CPU emulation: compare the ratios.
 *
 * Run: `deno run -A bench/webgpu_conv.bench.ts` (Bun: with `bun-webgpu` installed).
 *
 * @module
 */
import { bench, group, runAndReport, smokeSize, summary } from './_report.ts';
import { logAdapter, onGpu, tfjsWebgpu, tfTimed, timed } from './_webgpu.ts';
import { conv2d, maxPool2d } from '../core/nn/functional.ts';
import { initWebGPU, manualSeed, randn } from '../mod.ts';

const N = smokeSize(8, 1), C = smokeSize(32, 4), SIDE = smokeSize(32, 8);

const unavailable = await initWebGPU().then(() => undefined, (e: Error) => e.message);
if (unavailable === undefined) await benchmarks();
else console.log(`webgpu_conv benchmarks skipped: ${unavailable}`);

async function benchmarks(): Promise<void> {
  const info = logAdapter();
  const peer = await tfjsWebgpu();

  manualSeed(0);
  const x = onGpu(randn([N, C, SIDE, SIDE])), w = onGpu(randn([C, C, 3, 3])), b = onGpu(randn([C]));
  const xg = onGpu(randn([N, C, SIDE, SIDE])).requiresGrad_();
  const wg = onGpu(randn([C, C, 3, 3])).requiresGrad_(), bg = onGpu(randn([C])).requiresGrad_();
  // The gemm an im2col convolution runs: [OC, C * 9] @ [C * 9, N * H * W].
  const gemmA = onGpu(randn([C, C * 9])), gemmB = onGpu(randn([C * 9, N * SIDE * SIDE]));

  const shape = `${N}x${C}x${SIDE}x${SIDE}`;
  group(`conv2d 3x3, ${shape}`, () => {
    summary(() => {
      bench('switchyard-webgpu conv2d forward', () => timed(() => conv2d(x, w, b, { padding: 1 })));
      bench('switchyard-webgpu matmul of the same gemm', () => timed(() => gemmA.mm(gemmB)));
      bench('switchyard-webgpu conv2d forward + backward', () =>
        timed(() => {
          conv2d(xg, wg, bg, { padding: 1 }).sum().backward();
          for (const t of [xg, wg, bg]) {
            t.grad?.dispose();
            t.grad = null;
          }
        }));
      if ('tf' in peer) {
        const { tf } = peer;
        const tx = tf.randomNormal([N, SIDE, SIDE, C]) as import('@tensorflow/tfjs-core').Tensor4D;
        const tw = tf.randomNormal([3, 3, C, C]) as import('@tensorflow/tfjs-core').Tensor4D;
        bench('tfjs-webgpu conv2d forward', () => tfTimed(tf, () => tf.conv2d(tx, tw, 1, 'same')));
      }
    });
  });

  group(`maxPool2d 2x2, ${shape}`, () => {
    bench('switchyard-webgpu maxPool2d forward', () => timed(() => maxPool2d(x, 2)));
    bench('switchyard-webgpu maxPool2d forward + backward', () =>
      timed(() => {
        maxPool2d(xg, 2).sum().backward();
        xg.grad?.dispose();
        xg.grad = null;
      }));
    if ('tf' in peer) {
      const { tf } = peer;
      const tx = tf.randomNormal([N, SIDE, SIDE, C]) as import('@tensorflow/tfjs-core').Tensor4D;
      bench('tfjs-webgpu maxPool2d forward', () => tfTimed(tf, () => tf.maxPool(tx, 2, 2, 'valid')));
    }
  });

  await runAndReport('webgpu_conv', (f) => {
    const p50 = (name: string) => f.get(name)?.p50_ns;
    const ratio = (ours: string, theirs: string) => {
      const a = p50(ours), c = p50(theirs);
      return a === undefined || c === undefined ? null : Number((c / a).toFixed(2));
    };
    const flops = 2 * N * C * C * 9 * SIDE * SIDE;
    const gflops = (name: string) => {
      const t = p50(name);
      return t === undefined ? null : Number((flops / t).toFixed(2));
    };
    return {
      adapter: info.description || info.device,
      fallbackAdapter: info.isFallbackAdapter ?? null,
      tfjsWebgpu: 'tf' in peer ? 'measured' : peer.missing,
      'conv2d forward GFLOP/s': gflops('switchyard-webgpu conv2d forward'),
      'same-shape matmul GFLOP/s': gflops('switchyard-webgpu matmul of the same gemm'),
      'conv2d forward time / matmul time': ratio(
        'switchyard-webgpu matmul of the same gemm',
        'switchyard-webgpu conv2d forward',
      ),
      'speed-up over tfjs-webgpu (their time / ours)': {
        'conv2d forward': ratio('switchyard-webgpu conv2d forward', 'tfjs-webgpu conv2d forward'),
        'maxPool2d forward': ratio('switchyard-webgpu maxPool2d forward', 'tfjs-webgpu maxPool2d forward'),
      },
    };
  });

  for (const t of [x, w, b, xg, wg, bg, gemmA, gemmB]) t.dispose();
}
