// The default random generator is one stream shared by every agent, as PyTorch's threads share theirs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type AgentHandle, Generator, initialSeed, manualSeed, rand, randn, spawnAgent } from '../../mod.ts';

const program = new URL('./_program.ts', import.meta.url);

function values(t: { toArray(): unknown; dispose(): void }): number[] {
  const out = Array.from(t.toArray() as number[], Number);
  t.dispose();
  return out;
}

describe('the default generator shared by agents', () => {
  let agent: AgentHandle;
  before(async () => {
    agent = await spawnAgent({ program });
  });
  after(() => agent.terminate());

  it('draws in a worker and here continue one stream', async () => {
    manualSeed(0);
    const there = await agent.call('randValues', 5) as number[];
    const here = values(rand([5]));
    const normal = values(randn([20])); // a Box-Muller draw, also from the shared stream
    const g = new Generator(0);
    assert.deepEqual(there, values(rand([5], { generator: g })));
    assert.deepEqual(here, values(rand([5], { generator: g })));
    assert.deepEqual(normal, values(randn([20], { generator: g })));
    // PyTorch's first values after torch.manual_seed(0): torch.rand(5)
    assert.ok(Math.abs(there[0] - 0.49625658988952637) < 1e-7);
  });

  it('seeding in a worker seeds the stream for every agent', async () => {
    await agent.call('seed', 1234);
    assert.equal(initialSeed(), 1234n);
    const here = values(rand([3]));
    assert.deepEqual(here, values(rand([3], { generator: new Generator(1234) })));
  });
});
