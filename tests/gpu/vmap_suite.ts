import { describe, it } from 'node:test';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import { crossEntropy, dot, func, manualSeed, randn, type Tensor, tensor, vmap } from '../../mod.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });

describe('vmap and per-sample gradients on WebGPU tensors agree with the CPU', { skip: gpuSkip }, () => {
  it('batching rules run on the physical webgpu tensors', async () => {
    manualSeed(30);
    const x = randn([5, 3, 4]), y = randn([5, 4]);
    const f = (a: Tensor, b: Tensor) => a.matmul(b).relu().softmax(0).add(dot(b, b));
    const out = vmap(f)(gpu(x), gpu(y));
    await assertSameAsCpu(vmap(f)(x, y), out, 1e-5, 'vmap');
  });
  it('vmap(grad(loss)) gives the CPU per-sample gradients', async () => {
    manualSeed(31);
    const w = randn([3, 4]), xs = randn([6, 4]), ys = tensor([0, 1, 2, 0, 1, 2]);
    const loss = (p: Tensor, a: Tensor, t: Tensor) => crossEntropy(p.matmul(a).unsqueeze(0), t.unsqueeze(0));
    const per = vmap(func.grad(loss), { inDims: [null, 0, 0] });
    await assertSameAsCpu(per(w, xs, ys), per(gpu(w), gpu(xs), gpu(ys)), 1e-4, 'per-sample grads');
  });
});
