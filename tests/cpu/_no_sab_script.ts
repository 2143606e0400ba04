// Runs the runtime as a browser page without cross-origin isolation would: no SharedArrayBuffer, and shared wasm
// memories refused. Prints one JSON line with what it computed (tests/cpu/no_shared_memory.test.ts).
const RealMemory = WebAssembly.Memory;
function PageMemory(descriptor: WebAssembly.MemoryDescriptor) {
  if (descriptor.shared) throw new TypeError('WebAssembly.Memory(): shared memory needs cross-origin isolation');
  return new RealMemory(descriptor);
}
PageMemory.prototype = RealMemory.prototype;
(WebAssembly as { Memory: unknown }).Memory = PageMemory;
delete (globalThis as { SharedArrayBuffer?: unknown }).SharedArrayBuffer;

const { crossEntropy, manualSeed, matmul, nn, optim, randn, scope, tensor, zeros } = await import('../../mod.ts');
const { cpuRuntime } = await import('../../core/cpu/runtime.ts');
const { canShareMemory } = await import('../../core/cpu/wasm.ts');

manualSeed(0);
const model = new nn.Sequential(new nn.Linear(8, 16), new nn.ReLU(), new nn.Linear(16, 3));
const opt = new optim.Adam(model.parameters(), { lr: 0.05 });
const x = randn([32, 8]), y = tensor(Array.from({ length: 32 }, (_, i) => i % 3));
const losses: number[] = [];
const before = cpuRuntime().memory.buffer.byteLength;
for (let step = 0; step < 30; step++) {
  // A 64 MiB temporary in the middle of training grows the (non-shared) memory, detaching its old buffer.
  if (step === 10) scope(() => zeros([16 * 1024 * 1024]).sum().item());
  losses.push(scope(() => {
    const loss = crossEntropy(model.forward(x), y);
    opt.zeroGrad();
    loss.backward();
    opt.step();
    return loss.item() as number;
  }));
}
const a = randn([33, 17], { dtype: 'float64' }), b = randn([17, 9], { dtype: 'float64' });
const product = matmul(a, b).toArray() as number[];
const av = a.toArray() as number[], bv = b.toArray() as number[];
let worst = 0;
for (let i = 0; i < 33; i++) {
  for (let j = 0; j < 9; j++) {
    let s = 0;
    for (let k = 0; k < 17; k++) s += av[i * 17 + k] * bv[k * 9 + j];
    worst = Math.max(worst, Math.abs(s - product[i * 9 + j]));
  }
}
console.log(JSON.stringify({
  canShare: canShareMemory(),
  bufferIsShared: typeof SharedArrayBuffer !== 'undefined',
  grew: cpuRuntime().memory.buffer.byteLength > before,
  first: losses[0],
  last: losses[losses.length - 1],
  matmulError: worst,
}));
