// Dispatch shared by agents: an operator library loaded by every agent, registrations in one agent seen by
// all at once (never a torn or stale slot), and per-agent state that stays per agent.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  type AgentHandle,
  Dispatcher,
  DispatchKey,
  excludeKeys,
  isGradEnabled,
  loadOperatorLibrary,
  localKeys,
  noGrad,
  registerShared,
  registrationGeneration,
  spawnAgent,
  tensor,
} from '../../mod.ts';
import { computedIds, probeLoop } from './_program.ts';

const program = new URL('./_program.ts', import.meta.url);
const oplib = new URL('./_oplib.ts', import.meta.url);

describe('dispatch shared by agents', () => {
  let early: AgentHandle, late: AgentHandle;
  let base: Disposable & { dispose(): void };
  before(async () => {
    early = await spawnAgent({ program }); // started before the library is loaded
    await loadOperatorLibrary(oplib);
    base = registerShared('wtest::probe', DispatchKey.CPU, 'wtest.base');
    late = await spawnAgent({ program }); // loads it when it attaches
  });
  after(async () => {
    await Promise.all([early.terminate(), late.terminate()]);
    base.dispose();
  });

  it('an operator library loaded here is loaded by running and new agents', async () => {
    assert.ok(Dispatcher.singleton().findSchema('wtest::probe') !== undefined);
    assert.equal(await early.call('hasOperator', 'wtest::probe'), true);
    assert.equal(await late.call('hasOperator', 'wtest::probe'), true);
    assert.equal(await late.call('hasOperator', 'wtest::nonexistent'), false);
  });

  it('a registration in any agent is seen by every agent at once, and its removal too', async () => {
    const op = Dispatcher.singleton().findSchemaOrThrow('wtest::probe');
    const x = tensor([1], { dtype: 'float32' });
    const g0 = registrationGeneration();
    assert.equal(op.call(x), -1);
    const reg = registerShared('wtest::probe', DispatchKey.CPU, 'wtest.k2');
    assert.ok(registrationGeneration() > g0);
    assert.equal(op.call(x), 2);
    const epochs = new Int32Array(new SharedArrayBuffer(8));
    const seen = await early.call('probeLoop', epochs, 20) as { hits: number; calls: number };
    assert.equal(seen.hits, seen.calls, 'the worker ran k2 on every call');
    const inner = registerShared('wtest::probe', DispatchKey.CPU, 'wtest.k3');
    assert.equal(op.call(x), 3);
    reg.dispose(); // removing the one below leaves k3 in force
    assert.equal(op.call(x), 3);
    inner.dispose();
    assert.equal(op.call(x), -1);
    const after = await late.call('probeLoop', epochs, 20) as { hits: number };
    assert.equal(after.hits, 0, 'the worker sees the removal');
    x.dispose();
  });

  it('kernel ids and rows mean the same in every agent (one shared kernel-name table and table store)', async () => {
    const registry = Dispatcher.singleton().tableStore.registry!;
    const here = { id: registry.kernelId('wtest.base2'), row: registry.rowOf('aten::add.Tensor') };
    assert.ok(here.row >= 0, 'aten::add.Tensor has a shared row');
    const ops = ['aten::add.Tensor', 'aten::mul.Tensor', 'aten::sum', 'wtest::probe', 'wtest::probe2'];
    const mine = computedIds(ops, DispatchKey.CPU);
    assert.ok(mine.every((id) => id > 0));
    for (const agent of [early, late]) {
      assert.deepEqual(await agent.call('sharedIds', 'wtest.base2', 'aten::add.Tensor'), here);
      // The CPU kernels as each worker computes them from its own registrations, with the ids it mapped them
      // to when it attached, are the same ids as here (and as the published rows hold).
      assert.deepEqual(await agent.call('computedIds', ops, DispatchKey.CPU), mine);
      assert.deepEqual(await agent.call('unsharedRows'), [], 'every operator dispatches from its shared row');
    }
  });

  it('a kernel registered through the dispatcher in a worker is published to every agent, and its removal', async () => {
    const op = Dispatcher.singleton().findSchemaOrThrow('wtest::probe2');
    const x = tensor([1], { dtype: 'float32' });
    assert.equal(op.call(x), -1);
    const generation = Dispatcher.singleton().tableStore.registry!.generation;
    await early.call('registerUnloadable', false);
    assert.ok(Dispatcher.singleton().tableStore.registry!.generation > generation, 'a row was published');
    await assert.rejects(late.call('callProbe2'), /Kernel 'wtest\.only_in_worker' .* is not loadable in this agent/);
    // This agent never registered or defined wtest.only_in_worker: the call names it and how to make it loadable.
    assert.throws(
      () => op.call(x),
      /Kernel 'wtest\.only_in_worker' \(kernel id \d+\), which another agent published in the dispatch table of wtest::probe2, is not loadable in this agent: register it in an operator library every agent loads \(loadOperatorLibrary\), or define it here under that name with defineKernel\(\)/,
    );
    assert.equal(await early.call('callProbe2'), 42, 'the registering worker runs its kernel');
    await early.call('registerUnloadable', true);
    assert.equal(op.call(x), -1, 'the removal is seen here at the next call');
    assert.equal(await late.call('callProbe2'), -1);
    Dispatcher.singleton().checkInvariants(); // the published row equals this agent's computation again
    x.dispose();
  });

  it('a call waits while another agent has the row mid-write, then runs the kernel of the finished row', async () => {
    const op = Dispatcher.singleton().findSchemaOrThrow('wtest::probe2');
    const x = tensor([1], { dtype: 'float32' });
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const published = early.call('publishSlowly', flag, 100);
    const deadline = Date.now() + 10_000;
    while (Atomics.load(flag, 0) === 0 && Date.now() < deadline) Atomics.wait(flag, 0, 0, 5);
    assert.equal(Atomics.load(flag, 0), 1, 'the worker opened its write');
    const started = performance.now();
    const ran = op.call(x);
    const waited = performance.now() - started;
    assert.equal(Atomics.load(flag, 1), 1, 'the call returned only after the write was complete');
    assert.equal(ran, 3, 'and ran the kernel of the finished row');
    assert.ok(waited >= 20, `waited ${waited.toFixed(1)} ms`);
    await published;
    await early.call('dropSlowPublication');
    assert.equal(op.call(x), -1);
    x.dispose();
  });

  it('stress: one agent registers and deregisters through the shared table store while two others dispatch', async () => {
    const epochs = new Int32Array(new SharedArrayBuffer(16));
    const registrar = early.call('registerImplLoop', epochs);
    while (Atomics.load(epochs, 2) === 0) await new Promise((r) => setTimeout(r, 1));
    const workerProbe = late.call('probeLoop', epochs, 300, 'wtest::probe2');
    const mainProbe = probeLoop(epochs, 300, 'wtest::probe2');
    const remote = await workerProbe as { calls: number; hits: number; violations: string[] };
    Atomics.store(epochs, 1, 1);
    const rounds = await registrar as number;
    assert.ok(rounds > 10, `${rounds} registration rounds`);
    for (const r of [mainProbe, remote]) {
      assert.deepEqual(r.violations, [], 'every call ran a kernel registered while it ran');
      assert.ok(r.calls > 1000);
    }
    assert.ok(mainProbe.hits > 0 && remote.hits > 0, 'both readers ran published kernels');
    const x = tensor([1], { dtype: 'float32' });
    assert.equal(Dispatcher.singleton().findSchemaOrThrow('wtest::probe2').call(x), -1, 'back to the base kernel');
    x.dispose();
    Dispatcher.singleton().checkInvariants();
  });

  it('stress: one agent registers and deregisters in a shared kernel slot while two others dispatch', async () => {
    const epochs = new Int32Array(new SharedArrayBuffer(16));
    const registrar = early.call('registerLoop', epochs);
    while (Atomics.load(epochs, 2) === 0) await new Promise((r) => setTimeout(r, 1));
    const workerProbe = late.call('probeLoop', epochs, 300);
    const mainProbe = probeLoop(epochs, 300);
    const remote = await workerProbe as { calls: number; hits: number; violations: string[] };
    Atomics.store(epochs, 1, 1);
    const rounds = await registrar as number;
    assert.ok(rounds > 10, `${rounds} registration rounds`);
    for (const r of [mainProbe, remote]) {
      assert.deepEqual(r.violations, [], 'every call ran a kernel registered while it ran');
      assert.ok(r.calls > 1000);
    }
    assert.ok(mainProbe.hits + remote.hits > 0, 'some calls ran a registered kernel');
    // The slot is back to its base.
    const x = tensor([1], { dtype: 'float32' });
    assert.equal(Dispatcher.singleton().findSchemaOrThrow('wtest::probe').call(x), -1);
    x.dispose();
  });

  it('a kernel name not defined in the dispatching agent gives a clear error', () => {
    const reg = registerShared('wtest::probe', DispatchKey.CPU, 'wtest.undefined_here');
    const x = tensor([1], { dtype: 'float32' });
    try {
      assert.throws(
        () => Dispatcher.singleton().findSchemaOrThrow('wtest::probe').call(x),
        /Kernel 'wtest.undefined_here' registered for wtest::probe at CPU by another agent is not defined/,
      );
    } finally {
      reg.dispose();
      x.dispose();
    }
    assert.throws(() => registerShared('probe', DispatchKey.CPU, 'wtest.k1'), /qualified operator name/);
  });

  it('grad mode and include/exclude sets stay per agent', async () => {
    const defaultExcluded = localKeys.excludedHi;
    using _g = excludeKeys([DispatchKey.Profiler]);
    assert.notEqual(localKeys.excludedHi, defaultExcluded);
    const remote = await noGrad(() => {
      assert.equal(isGradEnabled(), false);
      return early.call('agentState');
    }) as { gradEnabled: boolean; excludedHi: number };
    assert.equal(remote.gradEnabled, true);
    assert.equal(remote.excludedHi, defaultExcluded);
  });
});
