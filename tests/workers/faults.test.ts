// Faults: a kernel that throws in a worker, a worker killed in the middle of an operation or while it holds the
// shared lock, and an environment without SharedArrayBuffer. The runtime stays usable for every other agent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, NotAttachableError, RemoteError, share, spawnAgent, type Tensor, tensor } from '../../mod.ts';
import { pageCounts, sharedRuntime } from '../../core/workers/shared_runtime.ts';

const program = new URL('./_program.ts', import.meta.url);

async function until(flag: Int32Array, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Atomics.load(flag, 0) === 0) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function sumOf(t: Tensor): number {
  const s = t.sum();
  const v = s.item() as number;
  s.dispose();
  return v;
}

describe('faults in attached workers', () => {
  it('a kernel that throws in a worker rejects that call only; the worker and this agent go on', async () => {
    await using agent = await spawnAgent({ program });
    await assert.rejects(agent.call('kernelThrows'), (e: unknown) => {
      assert.ok(e instanceof RemoteError);
      assert.equal(e.remoteName, 'RangeError');
      assert.match(e.message, /explode: the kernel failed on purpose/);
      return true;
    });
    await assert.rejects(agent.call('noSuchExport'), /The program has no function 'noSuchExport'/);
    const y = await agent.call('double', tensor([1, 2, 3])) as Tensor;
    assert.equal(sumOf(y), 12);
    y.dispose();
    assert.equal(sharedRuntime().cb.lockHolder(), -1);
  });

  it('a worker killed while it holds the shared lock: terminating it breaks the lock, all else goes on', async () => {
    const agent = await spawnAgent({ program });
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const call = agent.call('holdLockForever', flag);
    await until(flag, 'the worker to take the lock');
    const { cb } = sharedRuntime();
    assert.equal(cb.lockHolder(), agent.agent);
    const rejected = assert.rejects(call, /terminated/);
    await agent.terminate();
    await rejected;
    assert.equal(cb.lockHolder(), -1);
    assert.equal(pageCounts().byAgent.get(agent.agent), undefined, 'its pages went back to the pool');
    // Sharing (which takes the lock) works again, from here and from a new worker.
    const x = tensor(new Float32Array([1, 2, 3]));
    await using other = await spawnAgent({ program });
    const y = await other.call('double', x) as Tensor;
    assert.equal(sumOf(y), 12);
    x.dispose();
    y.dispose();
  });

  it('a worker killed while it publishes a dispatch table row: its lock is broken and the row is readable', async () => {
    const agent = await spawnAgent({ program });
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const call = agent.call('holdTableRowForever', flag);
    await until(flag, 'the worker to open its row write');
    const store = Dispatcher.singleton().tableStore;
    assert.equal(store.registry!.lockHolder(), agent.agent);
    const { words, base } = store.ref(store.registry!.rowOf('aten::add.Tensor'));
    assert.equal(Atomics.load(words, base) % 2, 1, 'the row is mid-write: a call would wait');
    const rejected = assert.rejects(call, /terminated/);
    await agent.terminate();
    await rejected;
    assert.equal(store.registry!.lockHolder(), -1);
    assert.equal(Atomics.load(words, base) % 2, 0, 'the row was closed');
    const a = tensor([1, 2]), b = a.add(a);
    assert.equal(sumOf(b), 6, 'aten::add dispatches again');
    a.dispose();
    b.dispose();
  });

  it('a worker killed in the middle of allocating and computing leaks no page, and its shared tensors outlive it', async () => {
    const agent = await spawnAgent({ program });
    const made = await agent.call('makeRange', 500000) as Tensor; // a block of the worker, now ours
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const call = agent.call('churnForever', flag);
    await until(flag, 'the worker to be busy');
    await new Promise((r) => setTimeout(r, 20));
    assert.ok((pageCounts().byAgent.get(agent.agent) ?? 0) > 0);
    const rejected = assert.rejects(call);
    await agent.terminate();
    await rejected;
    assert.equal(agent.orphans, 1, 'one of its blocks is still shared');
    const values = made.toArray() as number[];
    assert.equal(values.length, 500000);
    assert.ok(values.every((v, i) => v === i), 'the orphan still reads back');
    assert.ok((pageCounts().byAgent.get(agent.agent) ?? 0) > 0, 'its pages wait for the orphan');
    made.dispose();
    assert.equal(pageCounts().byAgent.get(agent.agent), undefined, 'then all of them go back');
    assert.equal(sharedRuntime().cb.lockHolder(), -1);
    // Freed pages are reused: a new worker takes some of them instead of only growing the pool.
    const free = pageCounts().free;
    assert.ok(free > 0);
    await using next = await spawnAgent({ program });
    await next.call('allocStress', 21, 60);
    assert.ok(pageCounts().free < free, 'the pool reused the dead worker pages');
  });

  it('a worker that closes itself is noticed and retired like a dead one: lock broken, pages back', async () => {
    const agent = await spawnAgent({ program });
    const before = pageCounts().free;
    await assert.rejects(agent.call('closeSelf'), /agent \d+ (closed itself|exited)/);
    assert.equal(agent.ended, true);
    await agent.terminate(); // the retirement already under way
    assert.equal(sharedRuntime().cb.lockHolder(), -1, 'the lock it held was broken');
    assert.equal(pageCounts().byAgent.get(agent.agent), undefined, 'its pages went back to the pool');
    assert.ok(pageCounts().free >= before);
    await assert.rejects(agent.call('double', tensor([1])), /closed itself|exited/);
    // The runtime goes on: a new worker shares (which takes the lock) and computes.
    const x = tensor(new Float32Array([1, 2, 3]));
    await using other = await spawnAgent({ program });
    const y = await other.call('double', x) as Tensor;
    assert.equal(sumOf(y), 12);
    x.dispose();
    y.dispose();
  });

  it('without SharedArrayBuffer, attaching fails with an error naming the requirement; one agent works on', async () => {
    const g = globalThis as { SharedArrayBuffer?: unknown };
    const saved = g.SharedArrayBuffer;
    g.SharedArrayBuffer = undefined;
    try {
      await assert.rejects(spawnAgent({ program }), (e: unknown) => {
        assert.ok(e instanceof NotAttachableError);
        assert.match(e.message, /need SharedArrayBuffer/);
        assert.match(e.message, /Cross-Origin-Opener-Policy: same-origin/);
        return true;
      });
      const a = tensor([1, 2]), b = a.add(a);
      assert.deepEqual(Array.from(b.toArray() as number[], Number), [2, 4]);
      a.dispose();
      b.dispose();
    } finally {
      g.SharedArrayBuffer = saved;
    }
    const t = tensor([1]);
    share(t); // works again
    t.dispose();
  });
});
