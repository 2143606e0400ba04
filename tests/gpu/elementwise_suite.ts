import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertSameAsCpu, gpuSkip } from './_gpu.ts';
import { memoryStats, NotImplementedError, type Tensor, tensor, where } from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng } from '../ops/_helpers.ts';

const gpu = (t: Tensor) => t.to({ device: 'webgpu' });
const DTYPES = ['float32', 'float16', 'bfloat16', 'int32', 'int64', 'int16', 'int8', 'uint8', 'bool'] as const;
const tolOf = (d: string) => (d === 'float16' ? 2e-3 : d === 'bfloat16' ? 1e-2 : 2e-5);

describe('WebGPU elementwise operators agree with the CPU', { skip: gpuSkip }, () => {
  it('the adapter really computes: 2x + 1 on known values', async () => {
    const x = tensor(new Float32Array([1, 2, 3, 4]), { device: 'webgpu' });
    assert.deepEqual(await x.mul(2).add(1).toArrayAsync(), [3, 5, 7, 9]);
  });

  it('binary ops over every dtype, with broadcasting and strided views', async () => {
    const next = rng(7);
    const ops = ['add', 'sub', 'mul', 'maximum', 'minimum', 'eq', 'lt', 'ge', 'logicalAnd', 'bitwiseXor'] as const;
    for (const dtype of DTYPES) {
      const a = nonContiguousTensor([3, 5], dtype, next), b = randomTensor([1, 5], dtype, next);
      const ga = gpu(a), gb = gpu(b);
      for (const op of ops) {
        let expected: Tensor | undefined, error: Error | undefined;
        try {
          expected = (a as unknown as Record<string, (x: Tensor) => Tensor>)[op](b);
        } catch (e) {
          error = e as Error;
        }
        if (error !== undefined) {
          assert.throws(() => (ga as unknown as Record<string, (x: Tensor) => Tensor>)[op](gb), {
            message: error.message.replace(/_cpu"/, '_webgpu"'),
          });
          continue;
        }
        const actual = (ga as unknown as Record<string, (x: Tensor) => Tensor>)[op](gb);
        await assertSameAsCpu(expected!, actual, tolOf(dtype), `${op} ${dtype}`);
      }
    }
  });

  it('unary float ops on odd shapes, float32/float16/bfloat16', async () => {
    const next = rng(11);
    const ops = ['exp', 'log1p', 'sqrt', 'tanh', 'sigmoid', 'erf', 'relu', 'neg', 'abs', 'floor', 'sign'] as const;
    for (const dtype of ['float32', 'bfloat16']) {
      const a = nonContiguousTensor([7, 3], dtype, next).abs();
      for (const op of ops) {
        const f = (t: Tensor) => (t as unknown as Record<string, () => Tensor>)[op]();
        await assertSameAsCpu(f(a), f(gpu(a)), dtype === 'float32' ? 2e-6 : 1e-2, `${op} ${dtype}`);
      }
    }
  });

  it('casts between dtypes, scalars, where, clamp and division modes', async () => {
    const next = rng(3);
    const a = randomTensor([4, 6], 'float32', next), ga = gpu(a);
    for (const dtype of DTYPES) await assertSameAsCpu(a.to({ dtype }), ga.to({ dtype }), 0, `cast to ${dtype}`);
    await assertSameAsCpu(a.mul(2.5).sub(1, { alpha: 3 }), ga.mul(2.5).sub(1, { alpha: 3 }), 1e-6, 'scalars');
    await assertSameAsCpu(a.clamp(-1, 0.5), ga.clamp(-1, 0.5), 0, 'clamp');
    await assertSameAsCpu(where(a.gt(0), a, -7), where(ga.gt(0), ga, -7), 0, 'where');
    // The same expression with the scalar in another position (masked_fill) must get its own pipeline.
    await assertSameAsCpu(a.maskedFill(a.gt(0), -7), ga.maskedFill(ga.gt(0), -7), 0, 'masked_fill after where');
    const i = randomTensor([4, 6], 'int32', next), gi = gpu(i);
    await assertSameAsCpu(i.div(7, { roundingMode: 'floor' }), gi.div(7, { roundingMode: 'floor' }), 0, 'floor div');
    await assertSameAsCpu(i.remainder(-5), gi.remainder(-5), 0, 'remainder');
    await assertSameAsCpu(i.pow(2), gi.pow(2), 0, 'int pow');
  });

  it("in-place ops write through views and refuse float64 compute with PyTorch's message", async () => {
    const x = gpu(tensor(new Float32Array([1, 2, 3, 4, 5, 6]))).view([2, 3]);
    x.t().add_(1);
    x.select(0, 1).mul_(10);
    assert.deepEqual(await x.toArrayAsync(), [2, 3, 4, 50, 60, 70]);
    const d = gpu(tensor([1.5, 2.5], { dtype: 'float64' }));
    assert.deepEqual(await d.toArrayAsync(), [1.5, 2.5]);
    assert.throws(
      () => d.add(d),
      (e: unknown) =>
        e instanceof NotImplementedError && /"add_webgpu" not implemented for 'Double'/.test((e as Error).message),
    );
  });

  it('sync reads name the async form; errors leak nothing', async () => {
    const before = memoryStats().liveTensors;
    const source = tensor([1, 2, 3]), x = gpu(source);
    source.dispose();
    assert.throws(() => x.toArray(), /toArrayAsync/);
    assert.throws(() => x.to({ device: 'cpu' }), /cpuAsync/);
    assert.match(String(x), /^tensor\(\.\.\., device='webgpu:0', size=\(3,\), dtype=torch\.int64\)$/);
    const cpu = tensor([1, 2, 3]), scalar = tensor(2);
    assert.throws(() => x.add(cpu), {
      message: 'Expected all tensors to be on the same device, but found at least two devices, webgpu:0 and cpu!',
    });
    const sum = x.add(scalar); // a 0-d CPU tensor may join another device's operands
    assert.deepEqual(await sum.toArrayAsync(), [3, 4, 5]);
    for (const t of [x, cpu, scalar, sum]) t.dispose();
    assert.equal(memoryStats().liveTensors, before);
  });
});
