import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import {
  arange,
  cat,
  empty,
  eye,
  full,
  gpuMemoryStats,
  linspace,
  manualSeed,
  memoryStats,
  OutOfMemoryError,
  rand,
  randint,
  randn,
  type Tensor,
  tensor,
  zeros,
} from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng } from '../ops/_helpers.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });
const device = 'webgpu' as const;

describe('WebGPU factories, random numbers, copies and memory', { skip: gpuSkip }, () => {
  it('fills, arange, linspace and eye agree with the CPU', async () => {
    await assertSameAsCpu(full([3, 2], 2.5), full([3, 2], 2.5, { device }), 0, 'full');
    await assertSameAsCpu(zeros([4], { dtype: 'int64' }), zeros([4], { dtype: 'int64', device }), 0, 'zeros int64');
    await assertSameAsCpu(arange(2, 40, 3), arange(2, 40, 3, { device }), 0, 'arange int64');
    await assertSameAsCpu(arange(-1, 2, 0.25), arange(-1, 2, 0.25, { device }), 1e-7, 'arange float');
    await assertSameAsCpu(linspace(-2, 5, 11), linspace(-2, 5, 11, { device }), 1e-6, 'linspace');
    await assertSameAsCpu(eye(3, 5), eye(3, 5, { device }), 0, 'eye');
  });

  it("random numbers equal the CPU generator's for the same seed", async () => {
    manualSeed(42);
    const cpu = [rand([5, 3]), randn([17]), randint(3, 9, [6])];
    manualSeed(42);
    const webgpu = [rand([5, 3], { device }), randn([17], { device }), randint(3, 9, [6], { device })];
    for (let i = 0; i < cpu.length; i++) await assertSameAsCpu(cpu[i], webgpu[i], 0, `random ${i}`);
    const leaf = zeros([4, 4], { device });
    manualSeed(3);
    leaf.uniform_(-2, 2);
    manualSeed(3);
    await assertSameAsCpu(zeros([4, 4]).uniform_(-2, 2), leaf, 0, 'uniform_');
  });

  it("clone, cat, flip, copy_ between devices and int64 arithmetic keep PyTorch's values", async () => {
    const next = rng(21);
    const a = nonContiguousTensor([3, 4], 'float32', next), b = randomTensor([2, 4], 'float32', next);
    await assertSameAsCpu(a.clone(), gpu(a).clone(), 0, 'clone of a transposed view');
    await assertSameAsCpu(cat([a, b]), cat([gpu(a), gpu(b)]), 0, 'cat');
    await assertSameAsCpu(a.flip([0, 1]), gpu(a).flip([0, 1]), 0, 'flip');
    const target = zeros([3, 4], { device });
    target.copy_(a); // CPU to GPU through strides
    await assertSameAsCpu(a, target, 0, 'copy_ from the CPU');
    const big = tensor([2 ** 40 + 3, -(2 ** 35), 7], { dtype: 'int64' });
    const g = gpu(big);
    await assertSameAsCpu(big.mul(3).sub(big), g.mul(3).sub(g), 0, 'int64 arithmetic beyond 32 bits');
    await assertSameAsCpu(big.lt(8), g.lt(8), 0, 'int64 comparison');
    await assertSameAsCpu(big.to({ dtype: 'float32' }), g.to({ dtype: 'float32' }), 0, 'int64 to float32');
  });

  it('freed buffers are reused, and too large a tensor is an OutOfMemoryError that leaks nothing', () => {
    const before = memoryStats().liveTensors;
    for (let i = 0; i < 5; i++) zeros([1000, 10], { device }).dispose();
    const reserved = gpuMemoryStats().reservedBytes;
    for (let i = 0; i < 20; i++) zeros([1000, 10], { device }).dispose();
    assert.equal(gpuMemoryStats().reservedBytes, reserved);
    assert.throws(() => empty([64 * 2 ** 20], { device }), (e: unknown) => {
      assert.ok(e instanceof OutOfMemoryError);
      assert.match((e as Error).message, /^WebGPU out of memory: tried to allocate 256\.00 MiB/);
      return true;
    });
    assert.equal(memoryStats().liveTensors, before);
  });
});
