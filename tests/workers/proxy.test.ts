// Proxy mode: a whole program (model, training loop) runs in a worker; this agent holds handles, forwards
// calls, gets tensors back over the shared memory, and stays responsive meanwhile.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentOf, createProxy, memoryStats, RemoteHandle, type Tensor, tensor } from '../../mod.ts';
import type * as Program from './_program.ts';

const program = new URL('./_program.ts', import.meta.url);

describe('proxy mode', () => {
  it('trains a model living in a worker while this agent keeps running, and reads its outputs here', async () => {
    const remote = await createProxy<typeof Program>(program);
    try {
      const model = await remote.makeModel(0) as unknown as RemoteHandle;
      assert.ok(model instanceof RemoteHandle);
      const { x, y } = await remote.data(48) as unknown as { x: Tensor; y: Tensor };
      assert.deepEqual(x.shape, [48, 4]);
      const first = await remote.train(x, y, 1);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      const last = await remote.train(x, y, 150);
      clearInterval(timer);
      assert.ok(ticks > 3, `this agent ran ${ticks} timer callbacks while the worker trained`);
      const [l0, l1] = [first.item() as number, last.item() as number];
      assert.ok(l1 < l0 * 0.8, `the loss fell from ${l0} to ${l1}`);
      // A method of the remote model, with a tensor made here; the output is a live tensor over the same memory.
      const out = await model.call('forward', x) as Tensor;
      assert.deepEqual(out.shape, [48, 3]);
      const probe = tensor(new Float32Array([0, 0, 0, 0])).view([1, 4]);
      const one = await model.call('forward', probe) as Tensor;
      const row = out.narrow(0, 0, 1);
      assert.equal(one.shape[1], 3);
      assert.ok(Number.isFinite(one.sum().item() as number));
      await model.dispose();
      await assert.rejects(model.call('forward', x), /disposed/);
      for (const t of [x, y, first, last, out, probe, one, row]) t.dispose();
    } finally {
      await remote[agentOf].terminate();
    }
  });

  it('errors cross back with their message, and argument checks happen before anything is sent', async () => {
    const remote = await createProxy<typeof Program>(program);
    try {
      await assert.rejects(remote.kernelThrows(), /explode: the kernel failed on purpose/);
      await assert.rejects(
        remote[agentOf].call('double', () => 1),
        /Cannot pass a function to another agent/,
      );
      await assert.rejects(remote[agentOf].call(''), /expected the name of a program export/);
      const live = memoryStats().liveTensors;
      const y = await remote.double(tensor([1, 2]));
      assert.deepEqual(Array.from(y.toArray() as number[], Number), [2, 4]);
      y.dispose();
      assert.ok(memoryStats().liveTensors <= live + 1);
    } finally {
      await remote[agentOf].terminate();
    }
    await assert.rejects(remote.double(tensor([1])), /terminated/);
    await assert.rejects(createProxy(42 as never), /expected the program module's URL/);
  });
});
