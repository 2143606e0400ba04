// Shared set-up of the WebGPU suites: the device (or the visible reason it is missing) and a CPU/GPU comparison.
import assert from 'node:assert/strict';
import { initWebGPU, type Tensor } from '../../mod.ts';

/** Why the WebGPU suites skip, or undefined when a device is there. */
export let gpuSkip: string | undefined;
try {
  await initWebGPU();
} catch (e) {
  gpuSkip = `no WebGPU adapter in this runtime: ${(e as Error).message}`;
}
if (gpuSkip !== undefined) console.log(`[tests/gpu] skipped: ${gpuSkip}`);

/** Asserts the GPU result equals the CPU one: same shape and dtype, values within `tol` (relative + absolute). */
export async function assertSameAsCpu(cpu: Tensor, gpu: Tensor, tol = 1e-5, what = ''): Promise<void> {
  assert.equal(gpu.device.type, 'webgpu', `${what}: result not on webgpu`);
  assert.deepEqual(gpu.shape, cpu.shape, `${what}: shape`);
  assert.equal(gpu.dtype, cpu.dtype, `${what}: dtype`);
  const expected = cpu.toArray(), actual = await gpu.toArrayAsync();
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i], a = actual[i];
    if (typeof e === 'boolean' || typeof a === 'boolean' || !Number.isFinite(e as number)) {
      assert.ok(
        Object.is(a, e) || (Number.isNaN(a as number) && Number.isNaN(e as number)),
        `${what}[${i}]: ${a} vs ${e}`,
      );
      continue;
    }
    const diff = Math.abs((a as number) - (e as number));
    assert.ok(diff <= tol * (1 + Math.abs(e as number)), `${what}[${i}]: ${a} vs ${e}`);
  }
}
