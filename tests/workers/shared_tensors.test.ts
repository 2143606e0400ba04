// Tensors cross agents by descriptor: the same memory on both sides, views and in-place writes seen by both,
// a shared version counter, and the block freed when the last agent lets go.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  type AgentHandle,
  discard,
  manualSeed,
  randn,
  receive,
  share,
  spawnAgent,
  type Tensor,
  tensor,
} from '../../mod.ts';
import { pageCounts } from '../../core/workers/shared_runtime.ts';
import { storageStats } from '../../core/tensor/storage.ts';

const program = new URL('./_program.ts', import.meta.url);

describe('tensors shared between agents', () => {
  let agent: AgentHandle;
  before(async () => {
    agent = await spawnAgent({ program });
  });
  after(() => agent.terminate());

  it('a tensor posted to a worker views the same memory: its in-place write is seen here', async () => {
    manualSeed(3);
    const x = randn([5, 3], { dtype: 'float64' });
    const expected = Array.from(x.toArray() as number[], (v) => v * 2.5);
    const version = await agent.call('scaleInPlace', x, 2.5);
    assert.deepEqual(Array.from(x.toArray() as number[]), expected);
    assert.equal(version, 1);
    assert.equal(x.version, 1, 'the version counter is shared');
    x.mul_(2);
    assert.deepEqual(await agent.call('values', x), expected.map((v) => v * 2));
    x.dispose();
  });

  it('views travel with their geometry, and a write through a view in the worker reaches the base here', async () => {
    const base = tensor(new Float32Array(Array.from({ length: 24 }, (_, i) => i))).view([4, 6]);
    const t = base.transpose(0, 1); // [6, 4], strides [1, 6]
    const v = await agent.call('fillRowsThroughView', t, -1);
    assert.equal(v, 1);
    assert.equal(base.version, 1);
    const got = base.toArray() as number[];
    for (let r = 0; r < 4; r++) {
      for (let c = 0; c < 6; c++) assert.equal(got[r * 6 + c], c === 1 || c === 2 ? -1 : r * 6 + c, `[${r},${c}]`);
    }
    assert.deepEqual(
      await agent.call('values', t.narrow(1, 1, 2)),
      [4, 8, 5, 9, 6, 10, 7, 11, 8, 12, 9, 13].map((
        _,
        i,
      ) => {
        const row = Math.floor(i / 2), col = 1 + (i % 2);
        return row === 1 || row === 2 ? -1 : col * 6 + row;
      }),
    );
    t.dispose();
    base.dispose();
  });

  it('every dtype crosses unchanged', async () => {
    for (const dtype of ['float32', 'float64', 'int32', 'int64', 'int16', 'int8', 'uint8', 'bool'] as const) {
      const x = tensor([1, 0, 3, 1], { dtype });
      const y = await agent.call('double', x) as Tensor;
      assert.equal(y.dtype.name, dtype === 'bool' ? 'int64' : dtype, dtype);
      assert.deepEqual(
        Array.from(y.toArray() as number[], Number),
        dtype === 'bool' ? [2, 0, 2, 2] : [2, 0, 6, 2],
      );
      x.dispose();
      y.dispose();
    }
  });

  it('a tensor made in the worker lives here after the worker let go of it, and is freed when disposed here', async () => {
    const storages = storageStats().storages;
    const y = await agent.call('makeRange', 1000) as Tensor;
    assert.equal(storageStats().storages, storages + 1);
    const total = y.sum();
    assert.equal(total.item(), 999 * 1000 / 2);
    total.dispose();
    y.dispose();
    assert.equal(storageStats().storages, storages);
    // The block went back to the worker's allocator: its next allocation drains it (no leak, no error).
    assert.equal(await agent.call('allocStress', 7, 20) as number > 0, true);
  });

  it('a tensor lives until the last agent disposes of it, in either order', async () => {
    const x = tensor(new Float32Array([1, 2, 3, 4]));
    await agent.call('keepView', x);
    x.dispose(); // the worker still holds a view
    assert.equal(await agent.call('keptSum'), 10);
    await agent.call('dropKept');
    // Now freed: the block was this agent's, released by the worker, so it is reused.
    const before = pageCounts();
    for (let i = 0; i < 50; i++) tensor(new Float32Array(4)).dispose();
    assert.equal(pageCounts().top, before.top);
  });

  it('share/receive works within one agent, discard drops an unreceived descriptor, stale ones are refused', () => {
    const storages = storageStats().storages;
    const x = tensor([1.5, 2.5], { dtype: 'float32' });
    const d = share(x);
    const y = receive(d);
    y.add_(1);
    assert.deepEqual(Array.from(x.toArray() as number[]), [2.5, 3.5]);
    const d2 = share(y);
    discard(d2);
    x.dispose();
    y.dispose();
    assert.equal(storageStats().storages, storages);
    assert.throws(() => receive(d), /stale/);
    assert.throws(() => receive({ kind: 'switchyard.tensor' } as never), /expected a tensor descriptor made by share/);
    assert.throws(() => share({} as never), /share\(\): expected a Tensor/);
  });

  it('the descriptor is plain data: the tensor is not copied however large', () => {
    const big = tensor(new Float32Array(1 << 20));
    const d = share(big);
    assert.ok(JSON.stringify(d).length < 300);
    discard(d);
    big.dispose();
  });
});
