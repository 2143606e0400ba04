// The allocator under concurrent allocation and free from several agents (per-agent arenas over a shared page
// pool), blocks freed by another agent than their owner, and memory growth seen by every agent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type AgentHandle, full, spawnAgent, type Tensor } from '../../mod.ts';
import { pageCounts, sharedRuntime } from '../../core/workers/shared_runtime.ts';
import { allocStress } from './_program.ts';

const program = new URL('./_program.ts', import.meta.url);

describe('the allocator shared by several agents', () => {
  let agents: AgentHandle[];
  before(async () => {
    agents = await Promise.all([spawnAgent({ program }), spawnAgent({ program })]);
  });
  after(() => Promise.all(agents.map((a) => a.terminate())));

  it('three agents allocating and freeing at once never get overlapping blocks', async () => {
    const remote = agents.map((a, i) => a.call('allocStress', 11 + i, 400));
    const here = allocStress(5, 400); // the main agent too, while the workers run
    const counts = await Promise.all(remote);
    assert.ok(here > 50);
    for (const c of counts) assert.ok((c as number) > 50);
    // Pages were handed to each agent, and none is owned by two (the owner map holds one owner per page).
    const pages = pageCounts();
    for (const a of agents) assert.ok((pages.byAgent.get(a.agent) ?? 0) > 0, `agent ${a.agent} got pages`);
  });

  it('blocks made by workers and freed here return to their owners, which reuse them', async () => {
    const before = pageCounts().byAgent.get(agents[0].agent) ?? 0;
    for (let round = 0; round < 5; round++) {
      const made = await Promise.all(Array.from({ length: 6 }, () => agents[0].call('makeRange', 300000)));
      for (const t of made as Tensor[]) t.dispose();
    }
    await agents[0].call('allocStress', 3, 10); // drains the released blocks
    const { cb } = sharedRuntime();
    assert.equal(cb.words[cb.agentAt(agents[0].agent) + 1], 0, 'nothing left on its released list');
    // 6 live blocks of 1.2 MB at a time: their pages are reused round after round, not taken anew.
    const grown = (pageCounts().byAgent.get(agents[0].agent) ?? 0) - before;
    assert.ok(grown <= 6 * 20, `the worker took ${grown} more pages`);
  });

  it('a worker growing the shared memory is seen here: its tensor reads back in full', async () => {
    const { memory } = sharedRuntime();
    const bytesBefore = memory.buffer.byteLength;
    const big = await agents[1].call('bigTensor', 64 << 20) as Tensor;
    assert.ok(memory.buffer.byteLength >= Math.max(bytesBefore, 64 << 20), 'the memory grew for it');
    const total = big.sum();
    assert.equal(total.item(), 3 * (16 << 20));
    total.dispose();
    // The main agent's next allocation lands past what the worker took, inside the grown memory.
    const mine = full([1 << 20], 2, { dtype: 'float32' });
    const s = mine.sum();
    assert.equal(s.item(), 2 * (1 << 20));
    s.dispose();
    mine.dispose();
    big.dispose();
  });
});
