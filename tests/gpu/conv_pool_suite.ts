// WebGPU convolution and pooling (gpu/kernels/conv.ts, gpu/kernels/pool.ts) against float64 CPU references:
// seeded random inputs, odd shapes, strides, padding ('same' included), dilation, groups, transposed
// convolutions, unbatched inputs, ceil mode, views read through their strides; gradients through autograd;
// max-pooling indices equal to the CPU's; float16 / bfloat16; PyTorch's errors; a small CNN training step.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gpuSkip } from './_gpu.ts';
import { conv1d, conv2d, convTranspose1d, convTranspose2d } from '../../core/nn/functional.ts';
import {
  adaptiveAvgPool2d,
  avgPool2d,
  crossEntropy,
  manualSeed,
  maxPool2d,
  maxPool2dWithIndices,
  nn,
  optim,
  randn,
  type Tensor,
  tensor,
} from '../../mod.ts';
import { aten } from '../../core/ops/aten_call.ts';
import { randomTensor, rng } from '../ops/_helpers.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });
const f64 = (t: Tensor) => t.to({ dtype: 'float64' });

/**
 * Asserts a WebGPU result against a CPU reference (float64 or float32): same shape, `dtype`, values within
 * `rtol` of the largest reference magnitude (each output is a long sum of products, so its rounding error
 * scales with the terms, not with the possibly cancelled result) plus a small absolute term.
 */
async function near(actual: Tensor, reference: Tensor, what: string, rtol = 2e-6, dtype = 'float32'): Promise<void> {
  assert.equal(actual.device.type, 'webgpu', `${what}: device`);
  assert.deepEqual(actual.shape, reference.shape, `${what}: shape`);
  assert.equal(actual.dtype.name, dtype, `${what}: dtype`);
  const got = (await actual.toArrayAsync()) as number[], want = reference.toArray() as number[];
  const scale = want.reduce((m, v) => (Number.isNaN(v) ? m : Math.max(m, Math.abs(v))), 1);
  for (let i = 0; i < want.length; i++) {
    if (Number.isNaN(want[i])) {
      assert.ok(Number.isNaN(got[i]), `${what}[${i}]: ${got[i]} vs NaN`);
      continue;
    }
    assert.ok(Math.abs(got[i] - want[i]) <= rtol * scale * 8 + 1e-6, `${what}[${i}]: ${got[i]} vs ${want[i]}`);
  }
}

/** A `shape` tensor on the GPU that is a transposed view (last two dims) of a dense one, and its CPU twin. */
function transposedView(shape: number[], next: () => number): { cpu: Tensor; gpu: Tensor } {
  const n = shape.length, swapped = [...shape];
  [swapped[n - 1], swapped[n - 2]] = [swapped[n - 2], swapped[n - 1]];
  const base = randomTensor(swapped, 'float32', next);
  return { cpu: base.transpose(n - 2, n - 1), gpu: gpu(base).transpose(n - 2, n - 1) };
}

/** A `shape` tensor on the GPU viewed from the middle of a wider dim 1 (a storage offset and a larger stride). */
function narrowedView(shape: number[], next: () => number): { cpu: Tensor; gpu: Tensor } {
  const wide = [...shape];
  wide[1] += 3;
  const base = randomTensor(wide, 'float32', next);
  return { cpu: base.narrow(1, 2, shape[1]), gpu: gpu(base).narrow(1, 2, shape[1]) };
}

interface ConvCase {
  x: number[];
  w: number[];
  bias: boolean;
  stride?: number[];
  padding?: number[] | 'same' | 'valid';
  dilation?: number[];
  groups?: number;
}

const CONV2D_CASES: ConvCase[] = [
  { x: [2, 3, 9, 7], w: [5, 3, 3, 3], bias: true },
  { x: [3, 4, 11, 10], w: [6, 2, 3, 2], bias: true, stride: [2, 3], padding: [1, 1], dilation: [2, 1], groups: 2 },
  { x: [1, 6, 8, 8], w: [6, 1, 3, 3], bias: false, padding: [1, 1], groups: 6 }, // depthwise
  { x: [2, 5, 13, 9], w: [40, 5, 1, 1], bias: true }, // 1x1, several row and column tiles
  { x: [2, 3, 9, 8], w: [4, 3, 4, 2], bias: true, padding: 'same', dilation: [1, 2] }, // asymmetric 'same'
  { x: [1, 2, 6, 5], w: [3, 2, 3, 3], bias: false, padding: 'valid', stride: [1, 2] },
];

describe('WebGPU convolution and pooling agree with the CPU', { skip: gpuSkip }, () => {
  it('conv2d: strides, padding (numbers and same/valid), dilation, groups, bias, odd shapes', async () => {
    const next = rng(0xc0de);
    for (const [i, c] of CONV2D_CASES.entries()) {
      const x = randomTensor(c.x, 'float32', next), w = randomTensor(c.w, 'float32', next);
      const b = c.bias ? randomTensor([c.w[0]], 'float32', next) : null;
      const options = {
        stride: c.stride ?? 1,
        padding: c.padding ?? 0,
        dilation: c.dilation ?? 1,
        groups: c.groups ?? 1,
      };
      const reference = conv2d(f64(x), f64(w), b === null ? null : f64(b), options);
      await near(conv2d(gpu(x), gpu(w), b === null ? null : gpu(b), options), reference, `conv2d case ${i}`);
    }
  });

  it('conv2d reads views through their strides (transposed, offset) and unbatched inputs', async () => {
    const next = rng(0xbeef);
    const x = transposedView([2, 4, 7, 9], next), w = narrowedView([6, 4, 3, 3], next);
    const b = randomTensor([12], 'float32', next);
    const bias = { cpu: b.narrow(0, 3, 6), gpu: gpu(b).narrow(0, 3, 6) };
    assert.equal(x.gpu.isContiguous(), false);
    assert.equal(w.gpu.isContiguous(), false);
    const options = { stride: [2, 1], padding: [1, 0] };
    await near(
      conv2d(x.gpu, w.gpu, bias.gpu, options),
      conv2d(f64(x.cpu), f64(w.cpu), f64(bias.cpu), options),
      'conv2d of views',
    );
    const single = randomTensor([3, 6, 5], 'float32', next), ws = randomTensor([2, 3, 2, 2], 'float32', next);
    await near(
      conv2d(gpu(single), gpu(ws), null, { padding: 1 }),
      conv2d(f64(single), f64(ws), null, { padding: 1 }),
      'unbatched',
    );
  });

  it('conv1d (padding same with an even kernel, groups, views) and unbatched', async () => {
    const next = rng(0x1d);
    const x = randomTensor([3, 4, 17], 'float32', next), w = randomTensor([6, 2, 4], 'float32', next);
    const b = randomTensor([6], 'float32', next);
    for (
      const options of [{ padding: 'same' as const, dilation: 2, groups: 2 }, { stride: 3, padding: 2, groups: 1 }]
    ) {
      const ww = options.groups === 1 ? randomTensor([5, 4, 3], 'float32', next) : w;
      const bb = options.groups === 1 ? randomTensor([5], 'float32', next) : b;
      await near(conv1d(gpu(x), gpu(ww), gpu(bb), options), conv1d(f64(x), f64(ww), f64(bb), options), 'conv1d');
    }
    const v = transposedView([2, 3, 19], next); // read with a last stride of 3
    assert.equal(v.gpu.isContiguous(), false);
    const wv = randomTensor([2, 3, 2], 'float32', next);
    await near(conv1d(v.gpu, gpu(wv)), conv1d(f64(v.cpu), f64(wv)), 'conv1d of a view');
    const single = randomTensor([4, 9], 'float32', next), w1 = randomTensor([3, 4, 3], 'float32', next);
    await near(
      conv1d(gpu(single), gpu(w1), null, { padding: 1 }),
      conv1d(f64(single), f64(w1), null, { padding: 1 }),
      'unbatched 1d',
    );
  });

  it('convTranspose2d and convTranspose1d: stride, padding, output padding, dilation, groups, bias', async () => {
    const next = rng(0x7a);
    const x = randomTensor([2, 4, 5, 6], 'float32', next), w = randomTensor([4, 3, 3, 2], 'float32', next);
    const b = randomTensor([6], 'float32', next);
    const options = { stride: [2, 3], padding: [1, 0], outputPadding: [1, 2], groups: 2, dilation: [1, 2] };
    await near(
      convTranspose2d(gpu(x), gpu(w), gpu(b), options),
      convTranspose2d(f64(x), f64(w), f64(b), options),
      'convTranspose2d',
    );
    const x1 = randomTensor([3, 2, 7], 'float32', next), w1 = randomTensor([2, 5, 3], 'float32', next);
    const o1 = { stride: 2, padding: 1, outputPadding: 1 };
    await near(convTranspose1d(gpu(x1), gpu(w1), null, o1), convTranspose1d(f64(x1), f64(w1), null, o1), 'convT1d');
    const single = randomTensor([4, 3, 3], 'float32', next);
    await near(
      convTranspose2d(gpu(single), gpu(w), gpu(b), { groups: 2 }),
      convTranspose2d(f64(single), f64(w), f64(b), { groups: 2 }),
      'unbatched convT2d',
    );
  });

  it('convolution gradients through autograd equal the float64 CPU gradients', async () => {
    const next = rng(0x9ad);
    const cases: Array<{ transposed: boolean; x: number[]; w: number[]; options: Record<string, unknown> }> = [
      {
        transposed: false,
        x: [2, 4, 9, 8],
        w: [6, 2, 3, 3],
        options: { stride: [2, 1], padding: [1, 2], dilation: [1, 2], groups: 2 },
      },
      { transposed: false, x: [3, 3, 7, 7], w: [5, 3, 2, 3], options: { padding: 'same' } },
      {
        transposed: true,
        x: [2, 4, 5, 4],
        w: [4, 3, 3, 3],
        options: { stride: 2, padding: 1, outputPadding: 1, groups: 2 },
      },
      { transposed: false, x: [2, 3, 11], w: [4, 3, 3], options: { stride: 2, padding: 1 } },
      // A long weight-gradient reduction (2 * 24 * 20 = 960 pixels) over few output tiles: split in slices.
      { transposed: false, x: [2, 3, 24, 20], w: [4, 3, 3, 3], options: { padding: 1 } },
      { transposed: true, x: [2, 4, 30, 20], w: [4, 2, 2, 2], options: { stride: 1, groups: 2 } },
    ];
    for (const [i, c] of cases.entries()) {
      const x = randomTensor(c.x, 'float32', next), w = randomTensor(c.w, 'float32', next);
      const outChannels = c.transposed ? c.w[1] * ((c.options.groups as number) ?? 1) : c.w[0];
      const b = randomTensor([outChannels], 'float32', next);
      const op = (xx: Tensor, ww: Tensor, bb: Tensor) =>
        c.x.length === 3
          ? conv1d(xx, ww, bb, c.options)
          : c.transposed
          ? convTranspose2d(xx, ww, bb, c.options)
          : conv2d(xx, ww, bb, c.options);
      const leaves = (t: (u: Tensor) => Tensor) => [t(x), t(w), t(b)].map((u) => u.requiresGrad_());
      const [cx, cw, cb] = leaves(f64), [gx, gw, gb] = leaves(gpu);
      const yc = op(cx, cw, cb), yg = op(gx, gw, gb);
      const r = randomTensor([...yc.shape], 'float32', next);
      yc.mul(f64(r)).sum().backward();
      yg.mul(gpu(r)).sum().backward();
      await near(yg.detach(), yc.detach(), `case ${i} output`);
      await near(gx.grad!, cx.grad!, `case ${i} input grad`);
      await near(gw.grad!, cw.grad!, `case ${i} weight grad`);
      await near(gb.grad!, cb.grad!, `case ${i} bias grad`);
    }
  });

  it('an empty batch gives empty results and zero weight and bias gradients', async () => {
    const x = randn([0, 3, 6, 5]), w = randn([4, 3, 3, 3]), b = randn([4]);
    const gx = gpu(x).requiresGrad_(), gw = gpu(w).requiresGrad_(), gb = gpu(b).requiresGrad_();
    const y = conv2d(gx, gw, gb, { padding: 1 });
    assert.deepEqual(y.shape, [0, 4, 6, 5]);
    y.sum().backward();
    assert.deepEqual(gx.grad!.shape, [0, 3, 6, 5]);
    assert.deepEqual(await gw.grad!.toArrayAsync(), new Array(4 * 27).fill(0));
    assert.deepEqual(await gb.grad!.toArrayAsync(), [0, 0, 0, 0]);
    const [v, i] = maxPool2dWithIndices(gpu(x), [2]);
    assert.deepEqual([v.shape, i.shape], [[0, 3, 3, 2], [0, 3, 3, 2]]);
    assert.deepEqual(avgPool2d(gpu(x), 2).shape, [0, 3, 3, 2]);
    assert.deepEqual(adaptiveAvgPool2d(gpu(x), [2, 2]).shape, [0, 3, 2, 2]);
  });

  it('maxPool2d: values and indices equal the CPU (padding, dilation, ceil mode, NaN, views, unbatched)', async () => {
    const next = rng(0x3a);
    const x = randomTensor([2, 3, 9, 11], 'float32', next);
    const settings = [
      { kernel: [3], options: { stride: 2, padding: 1, ceilMode: true } },
      { kernel: [2, 3], options: { stride: [1, 2], dilation: [2, 1] } },
      { kernel: [3], options: { stride: 2, padding: 1, dilation: 2, ceilMode: true } },
    ];
    for (const [i, s] of settings.entries()) {
      const [v, idx] = maxPool2dWithIndices(x, s.kernel, s.options);
      const [gv, gidx] = maxPool2dWithIndices(gpu(x), s.kernel, s.options);
      await near(gv, v, `max values ${i}`, 0);
      assert.deepEqual(await gidx.toArrayAsync(), idx.toArray(), `max indices ${i}`);
      assert.equal(gidx.dtype.name, 'int64');
    }
    // NaN wins (the first NaN of the window), ties keep the first maximum.
    const special = tensor([[[1, 5, 5, 0], [Number.NaN, 2, 5, Number.NaN], [3, 3, 1, 1], [3, 0, -1, 7]]]);
    const [sv, si] = maxPool2dWithIndices(special, [2]), [gsv, gsi] = maxPool2dWithIndices(gpu(special), [2]);
    await near(gsv, sv, 'NaN values', 0);
    assert.deepEqual(await gsi.toArrayAsync(), si.toArray());
    const view = transposedView([2, 3, 8, 7], next);
    await near(
      maxPool2d(view.gpu, 3, { stride: 2, padding: 1 }),
      maxPool2d(view.cpu, 3, { stride: 2, padding: 1 }),
      'view',
      0,
    );
  });

  it('avgPool2d (count_include_pad, divisor_override, ceil mode) and adaptiveAvgPool2d', async () => {
    const next = rng(0xa5);
    const x = randomTensor([2, 3, 10, 7], 'float32', next);
    const settings = [
      { stride: 2, padding: 1, ceilMode: true },
      { stride: 2, padding: 1, ceilMode: true, countIncludePad: false },
      { stride: [1, 2], padding: [0, 1], divisorOverride: 5 },
    ];
    for (const [i, options] of settings.entries()) {
      await near(avgPool2d(gpu(x), [3, 2], options), avgPool2d(f64(x), [3, 2], options), `avg ${i}`);
    }
    for (const size of [[3, 4], [1, 1], [10, 7], [4, 5]]) {
      await near(adaptiveAvgPool2d(gpu(x), size), adaptiveAvgPool2d(f64(x), size), `adaptive ${size}`);
    }
    const view = narrowedView([2, 3, 6, 5], next);
    await near(avgPool2d(view.gpu, 2), avgPool2d(f64(view.cpu), 2), 'avg of a view');
    await near(adaptiveAvgPool2d(view.gpu, [4, 3]), adaptiveAvgPool2d(f64(view.cpu), [4, 3]), 'adaptive of a view');
    const single = randomTensor([3, 7, 5], 'float32', next);
    await near(avgPool2d(gpu(single), 2, { padding: 1 }), avgPool2d(f64(single), 2, { padding: 1 }), 'unbatched avg');
  });

  it('pooling gradients through autograd equal the CPU gradients', async () => {
    const next = rng(0x9f);
    const x = randomTensor([2, 3, 9, 8], 'float32', next);
    const ops: Array<[string, (t: Tensor) => Tensor]> = [
      ['max overlapping', (t) => maxPool2d(t, 3, { stride: 2, padding: 1, ceilMode: true })],
      ['max dilated', (t) => maxPool2d(t, [2, 3], { stride: 1, dilation: [2, 1] })],
      ['avg', (t) => avgPool2d(t, 3, { stride: 2, padding: 1, ceilMode: true, countIncludePad: false })],
      ['avg divisor', (t) => avgPool2d(t, [2, 3], { stride: [1, 2], divisorOverride: 4 })],
      ['adaptive', (t) => adaptiveAvgPool2d(t, [4, 3])],
      ['adaptive up', (t) => adaptiveAvgPool2d(t, [11, 5])],
    ];
    for (const [what, op] of ops) {
      const cx = f64(x).requiresGrad_(), gx = gpu(x).requiresGrad_();
      const yc = op(cx), r = randomTensor([...yc.shape], 'float32', next);
      yc.mul(f64(r)).sum().backward();
      op(gx).mul(gpu(r)).sum().backward();
      await near(gx.grad!, cx.grad!, `${what} grad`);
    }
  });

  it('float16 and bfloat16 compute in float32 and round on store', async () => {
    const next = rng(0xf16);
    for (const [dtype, rtol] of [['float16', 2e-3], ['bfloat16', 1e-2]] as const) {
      const x = randomTensor([2, 3, 7, 6], dtype, next), w = randomTensor([4, 3, 3, 3], dtype, next);
      const wide = (t: Tensor) => t.to({ dtype: 'float64' });
      await near(
        conv2d(gpu(x), gpu(w), null, { padding: 1 }),
        conv2d(wide(x), wide(w), null, { padding: 1 }),
        dtype,
        rtol,
        dtype,
      );
      const [v, i] = maxPool2dWithIndices(gpu(x), [2]), [rv, ri] = maxPool2dWithIndices(wide(x), [2]);
      await near(v, rv, `${dtype} max`, 0, dtype);
      assert.deepEqual(await i.toArrayAsync(), ri.toArray());
      await near(avgPool2d(gpu(x), 2), avgPool2d(wide(x), 2), `${dtype} avg`, rtol, dtype);
    }
  });

  it("refuses float64 and integers with PyTorch's message, and raises the Meta functions' errors", async () => {
    const x = randn([1, 2, 5, 5]), w = randn([3, 2, 3, 3]);
    assert.throws(() => conv2d(gpu(f64(x)), gpu(f64(w))), /"slow_conv2d_webgpu" not implemented for 'Double'/);
    const ints = gpu(tensor([[[1, 2], [3, 4]]], { dtype: 'int32' }));
    assert.throws(() => maxPool2d(ints, 2), /"max_pool2d_with_indices_webgpu" not implemented for 'Int'/);
    assert.throws(() => avgPool2d(ints, 2), /"avg_pool2d_webgpu" not implemented for 'Int'/);
    assert.throws(() => adaptiveAvgPool2d(ints, 1), /"adaptive_avg_pool2d_webgpu" not implemented for 'Int'/);
    const bad = randn([3, 4, 3, 3]);
    const cpuError = (() => {
      try {
        conv2d(x, bad);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    assert.match(cpuError, /expected input\[1, 2, 5, 5\] to have 4 channels/);
    assert.throws(() => conv2d(gpu(x), gpu(bad)), (e: Error) => e.message === cpuError);
    assert.throws(() => conv2d(gpu(x), w), /Expected all tensors to be on the same device/);
    assert.throws(() => maxPool2d(gpu(x), 2, { padding: 2 }), /pad should be at most half of kernel size/);
    assert.throws(
      () => conv2d(gpu(x), gpu(w), null, { stride: 2, padding: 'same' }),
      /padding='same' is not supported/,
    );
    // The runtime stays usable.
    await near(conv2d(gpu(x), gpu(w)), conv2d(f64(x), f64(w)), 'after errors');
  });

  it('an out-of-range max index is a device-side error reported at the next readback', async () => {
    const x = randn([1, 2, 4, 4]), grad = randn([1, 2, 2, 2]);
    const indices = tensor([[[[0, 3], [8, 99]], [[1, 2], [-1, 10]]]], { dtype: 'int64' });
    const gradIn = aten('max_pool2d_with_indices_backward').call(
      gpu(grad),
      gpu(x),
      [2],
      [2],
      [0],
      [1],
      false,
      gpu(indices),
    ) as Tensor;
    await assert.rejects(
      gradIn.toArrayAsync(),
      /index (99|-1) is out of bounds \(raised on the WebGPU device by max_pool2d_with_indices_backward/,
    );
    // Cleared after the report: the next computation reads back normally.
    await near(maxPool2d(gpu(x), 2), maxPool2d(x, 2), 'after the device error', 0);
  });

  it('a small CNN (conv-bn-relu-pool x 2, adaptive pool, linear): one training step equals the CPU one', async () => {
    const build = () => {
      manualSeed(21);
      return new nn.Sequential(
        new nn.Conv2d(1, 4, 3, { padding: 1 }),
        new nn.BatchNorm2d(4),
        new nn.ReLU(),
        new nn.MaxPool2d(2),
        new nn.Conv2d(4, 6, 3, { padding: 'same', groups: 2 }),
        new nn.ReLU(),
        new nn.AvgPool2d(2, { ceilMode: true }),
        new nn.AdaptiveAvgPool2d([2, 2]),
        new nn.Flatten(),
        new nn.Linear(24, 3),
      );
    };
    // Moved with to(): the batch norm's running statistics follow their buffers to the GPU.
    const cpuModel = build(), gpuModel = build().to({ device: 'webgpu' });
    const next = rng(0xc77);
    const x = randomTensor([5, 1, 10, 10], 'float32', next), y = tensor([0, 2, 1, 1, 0]);
    const step = (model: nn.Sequential, xx: Tensor, yy: Tensor) => {
      const opt = new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
      opt.zeroGrad();
      const loss = crossEntropy(model.call(xx), yy);
      loss.backward();
      opt.step();
      return loss;
    };
    const cl = step(cpuModel, x, y), gl = step(gpuModel, gpu(x), gpu(y));
    await near(gl.detach(), cl.detach(), 'loss', 1e-5);
    const cp = cpuModel.parameters(), gp = gpuModel.parameters();
    assert.equal(cp.length, gp.length);
    for (let i = 0; i < cp.length; i++) {
      await near(gp[i].grad!, cp[i].grad!, `grad of parameter ${i}`, 1e-5);
      await near(gp[i].detach(), cp[i].detach(), `parameter ${i} after the step`, 1e-5);
    }
    const cb = cpuModel.buffers(), gb = gpuModel.buffers();
    assert.equal(gb.length, 3);
    await near(gb[0], cb[0], 'running mean', 1e-5);
    await near(gb[1], cb[1], 'running var', 1e-5);
    assert.deepEqual(await gb[2].toArrayAsync(), [1]);
  });
});
