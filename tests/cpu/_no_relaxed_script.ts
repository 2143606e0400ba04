// Runs the runtime as an engine without relaxed SIMD would (Node 20, Firefox, Safari): `new WebAssembly.Module`
// rejects the relaxed kernel build with a CompileError, as such an engine's validation does. Prints one JSON line
// with what the runtime picked and computed (tests/cpu/wasm_loader.test.ts).
import { KERNELS_WASM_RELAXED_BASE64 } from '../../core/cpu/kernels_wasm.js';

const relaxed = Uint8Array.from(atob(KERNELS_WASM_RELAXED_BASE64), (c) => c.charCodeAt(0));
/** The relaxed build, in its shared form or with its memory import marked unshared (one byte apart). */
function isRelaxedBuild(bytes: Uint8Array): boolean {
  if (bytes.length !== relaxed.length) return false;
  let differing = 0;
  for (let i = 0; i < bytes.length && differing < 2; i++) if (bytes[i] !== relaxed[i]) differing++;
  return differing < 2;
}
let rejected = 0;
const RealModule = WebAssembly.Module;
class EngineWithoutRelaxedSimd extends RealModule {
  constructor(bytes: BufferSource) {
    if (ArrayBuffer.isView(bytes) && isRelaxedBuild(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))) {
      rejected++;
      throw new WebAssembly.CompileError('WebAssembly.Module(): invalid simd opcode 0xfd105 (simulated)');
    }
    super(bytes);
  }
}
(WebAssembly as { Module: unknown }).Module = EngineWithoutRelaxedSimd;

const { matmul, tensor } = await import('../../mod.ts');
const { createKernelMemory, instantiateKernels, kernelFlavor, kernelModule } = await import('../../core/cpu/wasm.ts');

// A 37 x 53 @ 53 x 29 matmul (the gemm's multiply-adds: mul + add in the plain build) against a float64 reference.
const [m, k, n] = [37, 53, 29];
let seed = 7;
const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
const a = Array.from({ length: m * k }, next), b = Array.from({ length: k * n }, next);
const product = matmul(tensor(a).view([m, k]), tensor(b).view([k, n]));
const got = product.toArray() as number[];
let worst = 0;
for (let i = 0; i < m; i++) {
  for (let j = 0; j < n; j++) {
    let ref = 0;
    for (let p = 0; p < k; p++) ref += Math.fround(a[i * k + p]) * Math.fround(b[p * n + j]);
    worst = Math.max(worst, Math.abs(got[i * n + j] - ref));
  }
}
let forcedRelaxed = '';
try {
  kernelModule('relaxed-simd');
} catch (e) {
  forcedRelaxed = (e as Error).message;
}
const kernels = instantiateKernels(createKernelMemory({ maximumPages: 16 }));
console.log(JSON.stringify({
  flavor: kernelFlavor(),
  dtype: product.dtype.name,
  elements: got.length,
  relaxedSimdBuild: kernels.relaxedSimdBuild(),
  rejected,
  worst,
  forcedRelaxed,
}));
