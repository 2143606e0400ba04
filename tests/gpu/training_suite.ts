import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import { crossEntropy, manualSeed, nn, optim, randn, scope, type Tensor, tensor } from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng } from '../ops/_helpers.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });

describe(
  'WebGPU reductions, products, softmax, losses, indexing and training agree with the CPU',
  { skip: gpuSkip },
  () => {
    it('reductions over dims of strided inputs, full reductions split in passes', async () => {
      const next = rng(5);
      const a = nonContiguousTensor([6, 9, 5], 'float32', next), ga = gpu(a);
      await assertSameAsCpu(a.sum(1), ga.sum(1), 1e-5, 'sum dim');
      await assertSameAsCpu(a.mean([0, 2], true), ga.mean([0, 2], true), 1e-5, 'mean dims');
      await assertSameAsCpu(a.amax(0), ga.amax(0), 0, 'amax');
      await assertSameAsCpu(a.argmin(2), ga.argmin(2), 0, 'argmin');
      const [v, i] = a.max(1), [gv, gi] = ga.max(1);
      await assertSameAsCpu(v, gv, 0, 'max values');
      await assertSameAsCpu(i, gi, 0, 'max indices');
      const big = randomTensor([5000], 'float32', next);
      await assertSameAsCpu(big.sum(), gpu(big).sum(), 1e-4, 'split sum');
      const ints = randomTensor([7, 3], 'int32', next);
      await assertSameAsCpu(ints.sum(0), gpu(ints).sum(0), 0, 'int sum to int64');
      await assertSameAsCpu(ints.gt(0).sum(), gpu(ints).gt(0).sum(), 0, 'bool count');
    });

    it('matmul, bmm, addmm with transposed operands and odd sizes', async () => {
      const next = rng(9);
      const a = randomTensor([37, 19], 'float32', next), b = nonContiguousTensor([19, 23], 'float32', next);
      await assertSameAsCpu(a.mm(b), gpu(a).mm(gpu(b)), 1e-4, 'mm');
      await assertSameAsCpu(a.t().t().mm(b), gpu(a).mm(gpu(b)), 1e-4, 'mm again');
      const x = randomTensor([3, 5, 7], 'float32', next), y = randomTensor([3, 7, 4], 'float32', next);
      await assertSameAsCpu(x.bmm(y), gpu(x).bmm(gpu(y)), 1e-4, 'bmm');
      const bias = randomTensor([23], 'float32', next);
      await assertSameAsCpu(
        bias.addmm(a, b, { beta: 0.5, alpha: 2 }),
        gpu(bias).addmm(gpu(a), gpu(b), { beta: 0.5, alpha: 2 }),
        1e-4,
        'addmm',
      );
      const ia = randomTensor([4, 6], 'int32', next), ib = randomTensor([6, 3], 'int32', next);
      await assertSameAsCpu(ia.mm(ib), gpu(ia).mm(gpu(ib)), 0, 'int mm');
    });

    it('softmax, log_softmax, cross-entropy and their gradients', async () => {
      const next = rng(13);
      const logits = randomTensor([6, 10], 'float32', next), target = tensor([1, 0, 9, 3, 3, 7]);
      await assertSameAsCpu(logits.softmax(0), gpu(logits).softmax(0), 1e-5, 'softmax dim 0');
      await assertSameAsCpu(logits.logSoftmax(1), gpu(logits).logSoftmax(1), 1e-5, 'log_softmax');
      const cpuLeaf = logits.clone().requiresGrad_(), gpuLeaf = gpu(logits).requiresGrad_();
      crossEntropy(cpuLeaf, target).backward();
      const loss = crossEntropy(gpuLeaf, gpu(target));
      loss.backward();
      await assertSameAsCpu(crossEntropy(logits, target), loss.detach(), 1e-5, 'loss');
      await assertSameAsCpu(cpuLeaf.grad!, gpuLeaf.grad!, 1e-5, 'grad');
    });

    it('index_select, gather, scatter_add, index_add, masked_fill; bad indices raise at the next readback', async () => {
      const next = rng(17);
      const a = randomTensor([5, 4], 'float32', next), idx = tensor([4, 0, 2, 2]);
      await assertSameAsCpu(a.indexSelect(0, idx), gpu(a).indexSelect(0, gpu(idx)), 0, 'index_select');
      const g = tensor([[0, 3], [1, 1], [2, 0], [3, 2], [1, 0]]);
      await assertSameAsCpu(a.gather(1, g), gpu(a).gather(1, gpu(g)), 0, 'gather');
      await assertSameAsCpu(
        a.scatterAdd(1, g, a.narrow(1, 0, 2)),
        gpu(a).scatterAdd(1, gpu(g), gpu(a).narrow(1, 0, 2)),
        1e-6,
        'scatter_add',
      );
      await assertSameAsCpu(
        a.indexAdd(0, idx, a.narrow(0, 0, 4)),
        gpu(a).indexAdd(0, gpu(idx), gpu(a).narrow(0, 0, 4)),
        1e-6,
        'index_add',
      );
      await assertSameAsCpu(a.maskedFill(a.gt(0), -1), gpu(a).maskedFill(gpu(a).gt(0), -1), 0, 'masked_fill');
      const bad = gpu(a).indexSelect(0, gpu(tensor([1, 7])));
      await assert.rejects(() => bad.toArrayAsync(), /index out of range in self/);
    });

    it('an MLP trains on webgpu as on the CPU (same seed, same initial weights)', async () => {
      manualSeed(1);
      const x = randn([32, 6]), y = tensor(Array.from({ length: 32 }, (_, i) => i % 3));
      const make = () => {
        manualSeed(2);
        return new nn.Sequential(new nn.Linear(6, 16), new nn.ReLU(), new nn.Linear(16, 3));
      };
      const cpuModel = make(), gpuModel = make().to({ device: 'webgpu' });
      const gx = gpu(x), gy = gpu(y);
      const step = (model: nn.Sequential, opt: optim.Adam, xs: Tensor, ys: Tensor) =>
        scope(() => {
          const loss = crossEntropy(model.forward(xs), ys);
          opt.zeroGrad();
          loss.backward();
          opt.step();
          return loss.detach();
        });
      const co = new optim.Adam(cpuModel.parameters(), { lr: 1e-2 }),
        go = new optim.Adam(gpuModel.parameters(), { lr: 1e-2 });
      let cpuLoss: Tensor | undefined, gpuLoss: Tensor | undefined;
      for (let i = 0; i < 20; i++) {
        cpuLoss?.dispose();
        gpuLoss?.dispose();
        cpuLoss = step(cpuModel, co, x, y);
        gpuLoss = step(gpuModel, go, gx, gy);
      }
      await assertSameAsCpu(cpuLoss!, gpuLoss!, 1e-3, 'loss after 20 Adam steps');
      assert.ok((await gpuLoss!.itemAsync() as number) < 1.0);
    });
  },
);
