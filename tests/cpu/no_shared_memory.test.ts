/**
 * Without SharedArrayBuffer (a browser page without cross-origin isolation) the runtime runs over non-shared memory
 * with one agent (Note [Memory without SharedArrayBuffer] in core/cpu/wasm.ts). A subprocess removes
 * SharedArrayBuffer and refuses shared wasm memories before importing the runtime, trains a model across a memory
 * growth and checks a matmul against a float64 reference.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { fileURLToPath } from 'node:url';
import { createKernelMemory, instantiateKernels } from '../../core/cpu/wasm.ts';

describe('the CPU runtime without SharedArrayBuffer', () => {
  it('trains a model and computes correctly over non-shared memory', () => {
    const path = fileURLToPath(new URL('./_no_sab_script.ts', import.meta.url));
    const result = runScript(path, [], { timeout: 120_000 });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const out = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(out.canShare, false);
    assert.equal(out.bufferIsShared, false);
    assert.equal(out.grew, true, 'the memory should have grown during the run');
    assert.ok(out.last < out.first * 0.8, `loss did not fall: ${out.first} -> ${out.last}`);
    assert.ok(out.matmulError < 1e-12, `matmul error ${out.matmulError}`);
  });

  it('instantiates the kernels over an unshared memory in this process too', () => {
    const memory = createKernelMemory({ initialPages: 4, maximumPages: 64, shared: false });
    assert.ok(!(memory.buffer instanceof SharedArrayBuffer));
    const kernels = instantiateKernels(memory);
    assert.equal(kernels.heapBase() % 64, 0);
  });
});
