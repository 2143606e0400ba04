import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runScript } from '../_same_runtime.ts';
import {
  applyDelta,
  createKernelMemory,
  decodeBase64,
  instantiateKernels,
  KERNEL_MAX_PAGES,
  kernelFlavor,
  kernelModule,
} from '../../core/cpu/wasm.ts';
import { BinaryOp, ClampFlags, KernelStatus, UnaryOp } from '../../core/cpu/exports_elementwise.ts';
import { KERNELS_SOURCE_HASH, KERNELS_WASM_RELAXED_BASE64 } from '../../core/cpu/kernels_wasm.js';

/** The snake-case global name of a camelCase opcode key (`divFloor` -> `DIV_FLOOR`). */
const globalName = (key: string) => key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase();

describe('kernel loader', () => {
  it("creates a shared memory within the module's limits and rejects bad sizes", () => {
    const m = createKernelMemory({ initialPages: 2, maximumPages: 64 });
    assert.ok(m.buffer instanceof SharedArrayBuffer);
    assert.equal(m.buffer.byteLength, 2 * 65536);
    assert.throws(() => createKernelMemory({ maximumPages: KERNEL_MAX_PAGES + 1 }), RangeError);
    assert.throws(() => createKernelMemory({ initialPages: 0 }), RangeError);
    assert.throws(() => createKernelMemory({ initialPages: 8, maximumPages: 4 }), RangeError);
    assert.throws(() => createKernelMemory({ initialPages: 1.5 }), RangeError);
  });

  it('accepts the default 4 GiB maximum', () => {
    const m = createKernelMemory();
    const k = instantiateKernels(m);
    assert.equal(k.itemSize(6), 4);
  });

  it('picks the relaxed build exactly when the engine validates relaxed SIMD', () => {
    const flavor = kernelFlavor();
    assert.ok(flavor === 'relaxed-simd' || flavor === 'simd');
    const k = instantiateKernels(createKernelMemory({ maximumPages: 16 }));
    assert.equal(k.relaxedSimdBuild(), flavor === 'relaxed-simd' ? 1 : 0);
    const plain = instantiateKernels(createKernelMemory({ maximumPages: 16 }), { flavor: 'simd' });
    assert.equal(plain.relaxedSimdBuild(), 0);
    if (flavor === 'simd') {
      assert.throws(() => kernelModule('relaxed-simd'), /relaxed SIMD/);
    }
  });

  it('falls back to the plain build, rebuilt from its delta, where the engine rejects relaxed SIMD', () => {
    const path = fileURLToPath(new URL('./_no_relaxed_script.ts', import.meta.url));
    const result = runScript(path, [], { timeout: 120_000 });
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const out = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(out.flavor, 'simd');
    assert.equal(out.relaxedSimdBuild, 0);
    assert.equal(out.rejected, 1, 'the relaxed build is tried once, as the probe');
    assert.equal(out.dtype, 'float32');
    assert.equal(out.elements, 37 * 29);
    assert.ok(Number.isFinite(out.worst) && out.worst < 1e-4, `matmul error ${out.worst}`);
    assert.match(out.forcedRelaxed, /does not support relaxed SIMD/);
  });

  it('compiles each build once and imports only env.memory', () => {
    assert.equal(kernelModule('simd'), kernelModule('simd'));
    const imports = WebAssembly.Module.imports(kernelModule('simd'));
    assert.deepEqual(imports.map((i) => `${i.module}.${i.name}:${i.kind}`), ['env.memory:memory']);
  });

  it('reports a 64-byte aligned heap base inside the initial memory', () => {
    const memory = createKernelMemory({ initialPages: 1, maximumPages: 16 });
    const k = instantiateKernels(memory);
    const base = k.heapBase();
    assert.equal(base % 64, 0);
    assert.ok(base > 0 && base < 65536, `heapBase ${base}`);
  });

  it('mirrors the opcode numbers of the wasm module', () => {
    const k = instantiateKernels(createKernelMemory({ maximumPages: 16 })) as unknown as Record<string, unknown>;
    const value = (name: string) => (k[name] as WebAssembly.Global).value as number;
    for (const [key, op] of Object.entries(UnaryOp)) assert.equal(value(`UNARY_${globalName(key)}`), op, key);
    for (const [key, op] of Object.entries(BinaryOp)) assert.equal(value(`BINARY_${globalName(key)}`), op, key);
    assert.equal(value('UNARY_OP_COUNT'), Object.keys(UnaryOp).length);
    assert.equal(value('BINARY_OP_COUNT'), Object.keys(BinaryOp).length);
    assert.equal(value('CLAMP_HAS_MIN'), ClampFlags.min);
    assert.equal(value('CLAMP_HAS_MAX'), ClampFlags.max);
    assert.equal(value('STATUS_OK'), KernelStatus.ok);
    assert.equal(value('STATUS_UNSUPPORTED'), KernelStatus.unsupported);
    assert.equal(value('STATUS_BAD_ARGUMENT'), KernelStatus.badArgument);
  });

  it('lets two instances (as two workers would) share one memory, including after it grows', () => {
    const memory = createKernelMemory({ initialPages: 1, maximumPages: 64 });
    const a = instantiateKernels(memory);
    const b = instantiateKernels(memory, { module: kernelModule() });
    const base = a.heapBase();
    memory.grow(2);
    const far = 2 * 65536 + 128; // only exists after the grow
    assert.equal(a.fill_contig(6, far, 1.5, 4), KernelStatus.ok);
    assert.equal(b.binary_scalar_contig(BinaryOp.mul, 6, base, far, 2, 4, 1), KernelStatus.ok);
    assert.deepEqual([...new Float32Array(memory.buffer as unknown as ArrayBuffer, base, 4)], [3, 3, 3, 3]);
  });

  it('rebuilds bytes from a delta: literals, forward and backward copies', () => {
    const source = new Uint8Array([10, 11, 12, 13, 14, 15, 16, 17]);
    // 9 bytes: copy 3 from 4 (zigzag 8), literal 99, copy 2 from 1 (offset -6: zigzag 11), copy 3 from 3 (zigzag 0)
    const delta = new Uint8Array([9, 7, 8, 2, 99, 5, 11, 7, 0]);
    assert.deepEqual([...applyDelta(source, delta)], [14, 15, 16, 99, 11, 12, 13, 14, 15]);
    assert.deepEqual([...applyDelta(source, new Uint8Array([0]))], []);
    // Lengths past 127 take two LEB128 bytes.
    const long = applyDelta(new Uint8Array(200).map((_, i) => i), new Uint8Array([200, 1, 145, 3, 0]));
    assert.deepEqual([...long], Array.from({ length: 200 }, (_, i) => i));
  });

  it('rejects a malformed delta with a clear error', () => {
    const source = new Uint8Array([1, 2, 3, 4]);
    assert.throws(() => applyDelta(source, new Uint8Array([4, 9, 2])), /copies outside the source/);
    assert.throws(() => applyDelta(source, new Uint8Array([4, 7, 1])), /copies outside the source/);
    assert.throws(() => applyDelta(source, new Uint8Array([2, 7, 0])), /writes past the output length/);
    assert.throws(() => applyDelta(source, new Uint8Array([4, 4, 1])), /truncated literal/);
    assert.throws(() => applyDelta(source, new Uint8Array([4, 5, 0])), /output shorter than declared/);
    assert.throws(() => applyDelta(source, new Uint8Array([0x80])), /truncated number/);
  });

  it('the plain build, rebuilt from its delta, is a different valid module of the same exports', () => {
    const plain = WebAssembly.Module.exports(kernelModule('simd')).map((e) => `${e.name}:${e.kind}`).sort();
    assert.ok(plain.length > 100);
    if (kernelFlavor() === 'relaxed-simd') {
      const relaxed = WebAssembly.Module.exports(kernelModule('relaxed-simd')).map((e) => `${e.name}:${e.kind}`);
      assert.deepEqual(plain, relaxed.sort());
    }
  });

  it('decodes base64 to the wasm magic number', () => {
    assert.deepEqual([...decodeBase64('AGFzbQEAAAA=')], [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
    assert.deepEqual([...decodeBase64(KERNELS_WASM_RELAXED_BASE64).subarray(0, 4)], [0, 0x61, 0x73, 0x6d]);
    assert.match(KERNELS_SOURCE_HASH, /^[0-9a-f]{64}$/);
  });
});
