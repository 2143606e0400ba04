// Proxy mode: the model and its training loop run in a worker attached to this runtime; this agent holds a
// handle, sends tensors (descriptors over the shared memory, never copies) and stays responsive.
// Run: deno run -A examples/workers/main.ts   or   bun examples/workers/main.ts
import { agentOf, createProxy, randn, type RemoteHandle, type Tensor, tensor } from '../../mod.ts';
import type * as Program from './program.ts';

const trainer = await createProxy<typeof Program>(new URL('./program.ts', import.meta.url));
const model = await trainer.init(0) as unknown as RemoteHandle;
const x = randn([256, 4]);
const y = tensor(Array.from({ length: 256 }, (_, i) => (i * 7) % 3));
let ticks = 0;
const timer = setInterval(() => ticks++, 1); // this agent keeps running while the worker trains
const loss = await trainer.train(x, y, 200);
clearInterval(timer);
const logits = await model.call('forward', x) as Tensor; // a live tensor, viewing the shared memory
console.log(`loss ${loss.toFixed(4)}, logits ${logits.shape}, ${ticks} timer ticks here meanwhile`);
logits.dispose();
await model.dispose();
await trainer[agentOf].terminate();
