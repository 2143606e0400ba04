// Profiling across agents (Note [Profiling across agents]): operator calls an attached worker runs for a request
// sent while this agent profiles come back into this agent's profile with the worker's agent id, nested as they
// ran; none when no one profiles; the worker's keysets hold no Profiler key then.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentOf,
  createProxy,
  manualSeed,
  ones,
  profile,
  profiler,
  type ProfilerEvent,
  randn,
  RemoteError,
  setNumThreads,
} from '../../mod.ts';
import { whenThreadsReady } from '../../core/workers/pool.ts';
import type * as Program from './_profiled_program.ts';

const program = new URL('./_profiled_program.ts', import.meta.url);

function byAgent(events: readonly ProfilerEvent[], agent: number): ProfilerEvent[] {
  return events.filter((e) => e.agent === agent);
}

describe('profiling across agents', () => {
  it("records a worker's calls with its agent id, nested as they ran, inside the profiled region", async () => {
    manualSeed(11);
    const remote = await createProxy<typeof Program>(program);
    try {
      const id = await remote.agentId();
      assert.ok(id > 0, `a worker's agent id (${id}) is not the main agent's`);
      const x = randn(6, 4), w = randn(3, 4), b = randn(3);
      const before = performance.now();
      const prof = await profile(async () => {
        x.relu().dispose(); // a call on this agent
        const y = await remote.linearInference(x, w, b);
        assert.deepEqual(y.shape, [6, 3]);
        y.dispose();
      });
      const elapsedUs = (performance.now() - before) * 1000;
      const events = prof.events();
      assert.deepEqual(byAgent(events, 0).map((e) => e.name), ['aten::relu']);
      const theirs = byAgent(events, id);
      const top = theirs.filter((e) => e.depth === 0);
      assert.deepEqual(top.map((e) => e.name), ['aten::linear']);
      const kids = theirs.filter((e) => e.parent === top[0].id);
      assert.deepEqual(kids.map((e) => e.name), ['aten::t', 'aten::addmm']);
      assert.deepEqual(top[0].inputShapes, [[6, 4], [3, 4], [3]]);
      assert.equal(kids[1].selfBytesAllocated, 6 * 3 * 4);
      for (const k of kids) {
        assert.equal(k.depth, 1);
        assert.ok(k.startUs >= top[0].startUs && k.startUs + k.totalUs <= top[0].startUs + top[0].totalUs + 1e-6);
      }
      // Ids are this profile's: unique, parents resolve.
      assert.equal(new Set(events.map((e) => e.id)).size, events.length);
      // On this agent's clock: after the profile started, before it ended (1 ms slack for the two clocks' origins).
      for (const e of theirs) {
        assert.ok(e.startUs > -1000 && e.startUs + e.totalUs < elapsedUs + 1000, `${e.name} at ${e.startUs} us`);
      }
      // The table aggregates every agent, or one row per agent on request.
      const all = prof.keyAverages();
      assert.deepEqual(all.map((r) => r.key), ['aten::relu', 'aten::linear', 'aten::t', 'aten::addmm']);
      assert.equal(all[0].agent, undefined);
      const perAgent = prof.keyAverages({ groupByAgent: true });
      assert.deepEqual(perAgent.map((r) => [r.key, r.agent]), [
        ['aten::relu', 0],
        ['aten::linear', id],
        ['aten::t', id],
        ['aten::addmm', id],
      ]);
      const table = perAgent.table();
      assert.match(table.split('\n')[1], /^\s+Name\s+Agent\s+Self CPU %/);
      assert.match(table, new RegExp(`aten::addmm\\s+${id}\\s`));
      // The Chrome trace puts each agent on its own named thread.
      const trace = prof.chromeTrace().traceEvents;
      const linearEvent = trace.find((e) => e.ph === 'X' && e.name === 'aten::linear')!;
      assert.equal(linearEvent.tid, id + 1);
      assert.equal(trace.find((e) => e.ph === 'X' && e.name === 'aten::relu')!.tid, 1);
      const names = trace.filter((e) => e.name === 'thread_name').map((e) => [e.tid, e.args!.name]);
      assert.deepEqual(names, [[1, 'agent 0 (main)'], [id + 1, `agent ${id}`]]);
      for (const t of [x, w, b]) t.dispose();
    } finally {
      await remote[agentOf].terminate();
    }
  });

  it('records nothing in a worker while no one profiles, and leaves its keysets alone', async () => {
    const remote = await createProxy<typeof Program>(program);
    try {
      const x = randn(3, 2);
      assert.equal(await remote.includesProfiler(), false);
      // The worker's own profiler works outside profiled requests.
      assert.deepEqual(await remote.ownProfile(x), ['aten::sigmoid']);
      // A profiler started and stopped here before a request: the request is not recorded anywhere.
      const p = profiler();
      p.stop();
      (await remote.linearInference(x, randn(2, 2), randn(2))).dispose();
      assert.deepEqual(p.events(), []);
      assert.equal(await remote.includesProfiler(), false);
      const q = await profile(async () => {
        assert.equal(await remote.includesProfiler(), true, 'included while a profiled request runs there');
      });
      assert.equal(q.events().length, 0);
      assert.equal(await remote.includesProfiler(), false, 'and removed when it ends');
      x.dispose();
    } finally {
      await remote[agentOf].terminate();
    }
  });

  it('brings the events back with an error, and splits overlapping requests without losing or doubling any', async () => {
    const remote = await createProxy<typeof Program>(program);
    try {
      const id = await remote.agentId();
      const x = randn(5);
      const prof = await profile(async () => {
        await assert.rejects(remote.reluThenFail(x), (e) => e instanceof RemoteError && /on purpose/.test(e.message));
        const [a, b] = await Promise.all([remote.negPauseAbs(x, 30), remote.negPauseAbs(x, 5)]);
        a.dispose();
        b.dispose();
      });
      const theirs = byAgent(prof.events(), id);
      const count = (name: string) => theirs.filter((e) => e.name === name).length;
      assert.deepEqual([count('aten::relu'), count('aten::neg'), count('aten::abs')], [1, 2, 2]);
      assert.ok(theirs.every((e) => e.depth === 0 && e.parent === -1));
      // A request sent after the profile stopped records nothing.
      (await remote.negPauseAbs(x, 0)).dispose();
      assert.equal(byAgent(prof.events(), id).length, theirs.length);
      x.dispose();
    } finally {
      await remote[agentOf].terminate();
    }
  });

  it("records the intra-op pool's chunks of a split kernel with their thread, inside the call", async () => {
    setNumThreads(2);
    try {
      const x = ones([1 << 20]);
      x.add(1).dispose(); // starts the pool
      await whenThreadsReady();
      const prof = profile(() => x.add(1).dispose());
      const add = prof.events().find((e) => e.name === 'aten::add')!;
      const chunks = prof.threadChunks();
      assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
      assert.deepEqual(chunks.map((c) => c.chunk).sort((a, b) => a - b), chunks.map((_, i) => i));
      for (const c of chunks) {
        assert.equal(c.op, add.id);
        assert.equal(c.agent, 0);
        assert.ok(c.thread === 0 || c.thread === 1, `thread ${c.thread}`);
        assert.ok(c.durUs >= 0);
        // The caller's chunks are on its clock (5 us for rounding); a worker's on its own (1 ms slack).
        const slack = c.thread === 0 ? 5 : 1000;
        assert.ok(c.startUs >= add.startUs - slack && c.startUs + c.durUs <= add.startUs + add.totalUs + slack);
      }
      assert.equal(chunks[0].kernel, 'binary_scalar_contig'); // add(Tensor, 1) runs the tensor-scalar kernel
      const trace = prof.chromeTrace().traceEvents.filter((e) => e.cat === 'thread_chunk');
      assert.equal(trace.length, chunks.length);
      for (const e of trace) assert.ok(e.tid === 1 || e.tid === 1001);
      // Not profiling: the pool records nothing for anyone.
      const before = prof.threadChunks().length;
      x.add(1).dispose();
      assert.equal(prof.threadChunks().length, before);
      x.dispose();
    } finally {
      setNumThreads(1);
    }
  });
});
