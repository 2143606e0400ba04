// The activations and pointwise losses with CPU kernels of their own (leaky_relu, elu, softplus, hardtanh, mish,
// log_sigmoid; smooth_l1_loss, huber_loss, binary_cross_entropy) on WebGPU, where their former decompositions run
// as the default backend kernel: values and gradients against the CPU kernels, on seeded inputs with views.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import * as S from '../../mod.ts';
import { type Tensor, tensor } from '../../mod.ts';
import { nonContiguousTensor, rng } from '../ops/_helpers.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });

const FNS: [string, (x: Tensor) => Tensor][] = [
  ['leakyRelu', (x) => S.leakyRelu(x, 0.07)],
  ['elu', (x) => S.elu(x, 1.3, { scale: 0.7, inputScale: 1.5 })],
  ['softplus', (x) => S.softplus(x, { beta: 1.5, threshold: 4 })],
  ['hardtanh', (x) => S.hardtanh(x, -0.4, 0.9)],
  ['mish', (x) => S.mish(x)],
  ['logSigmoid', (x) => S.logSigmoid(x)],
];

describe('WebGPU activations agree with the CPU kernels', { skip: gpuSkip }, () => {
  it('values on strided views and wide ranges, float32 and bfloat16', async () => {
    const next = rng(0xac71);
    for (const dtype of ['float32', 'bfloat16'] as const) {
      const a = nonContiguousTensor([5, 7], dtype, next).mul(6);
      const extremes = tensor([-60, -25, -0.5, 0, 0.5, 25, 60], { dtype });
      for (const [name, fn] of FNS) {
        const tol = dtype === 'float32' ? 1e-5 : 1e-2;
        await assertSameAsCpu(fn(a), fn(gpu(a)), tol, `${name} ${dtype}`);
        await assertSameAsCpu(fn(extremes), fn(gpu(extremes)), tol, `${name} ${dtype} extremes`);
      }
    }
  });

  it('gradients through the default backend kernel equal the CPU derivative formulas (float32)', async () => {
    const next = rng(0xac72);
    const base = nonContiguousTensor([4, 6], 'float32', next).mul(3);
    for (const [name, fn] of FNS) {
      const x = base.detach().requiresGrad_();
      const g = gpu(base).detach().requiresGrad_();
      fn(x).sum().backward();
      fn(g).sum().backward();
      assert.equal(g.grad!.device.type, 'webgpu');
      await assertSameAsCpu(x.grad!, g.grad!, 1e-5, `${name} grad`);
    }
  });

  it('smooth_l1_loss, huber_loss, binary_cross_entropy: values and gradients against the CPU kernels', async () => {
    const next = rng(0xac73);
    const a = nonContiguousTensor([4, 5], 'float32', next).mul(3);
    const b = nonContiguousTensor([4, 5], 'float32', next).mul(3);
    const p = nonContiguousTensor([4, 5], 'float32', next).sigmoid();
    const q = nonContiguousTensor([4, 5], 'float32', next).sigmoid();
    const LOSSES: [string, (x: Tensor, y: Tensor) => Tensor, Tensor, Tensor][] = [
      ['smoothL1Loss', (x, y) => S.smoothL1Loss(x, y, { beta: 0.6 }), a, b],
      ['huberLoss', (x, y) => S.huberLoss(x, y, { delta: 1.3, reduction: 'sum' }), a, b],
      ['binaryCrossEntropy', (x, y) => S.binaryCrossEntropy(x, y), p, q],
    ];
    for (const [name, fn, x0, y0] of LOSSES) {
      const x = x0.detach().requiresGrad_(), gx = gpu(x0).detach().requiresGrad_();
      const y = y0.detach().requiresGrad_(), gy = gpu(y0).detach().requiresGrad_();
      const cpu = fn(x, y), dev = fn(gx, gy);
      await assertSameAsCpu(cpu, dev, 1e-5, name);
      cpu.backward();
      dev.backward();
      await assertSameAsCpu(x.grad!, gx.grad!, 1e-5, `${name} grad self`);
      await assertSameAsCpu(y.grad!, gy.grad!, 1e-5, `${name} grad target`);
    }
  });

  it("PyTorch's dtype errors from the decompositions", () => {
    assert.throws(() => S.leakyRelu(gpu(tensor([1, 2]))), { message: `"leaky_relu_cpu" not implemented for 'Long'` });
  });
});
