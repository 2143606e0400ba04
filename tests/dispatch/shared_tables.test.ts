// A table store shared by agents (Note [Shared table store]): the kernel-name table and operator directory,
// rows published by either of two dispatchers and read by the other, kernels of the other resolved by name, the
// writers' lock. Two dispatchers in one thread stand for two agents (the Worker
// tests in tests/workers run the same code across threads).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, DispatchKey, KernelFunction, Library } from '../../core/dispatch/mod.ts';
import { SHARED_ROW_CHUNKS, SharedTableRegistry } from '../../core/dispatch/shared_tables.ts';
import { ROWS_PER_CHUNK } from '../../core/dispatch/table_store.ts';
import { cpu, fakeTensor } from './_fake_tensor.ts';

const K = DispatchKey;

/** Two dispatchers with the same library module loaded, the second attached to the first's store. */
function twoAgents(kernels: Record<string, (...args: unknown[]) => unknown> = {}) {
  const load = (d: Dispatcher) => {
    const lib = new Library('sh', 'DEF', undefined, { dispatcher: d, location: 'shared_tables.test.ts:1' });
    lib.define('sh::f(Tensor x) -> int');
    lib.impl('f', () => -1, K.CompositeExplicitAutograd);
    lib.define('sh::g(Tensor x) -> int');
    lib.impl('g', () => 7, K.CPU);
    return lib;
  };
  const main = new Dispatcher({ onWarning: () => {} }), other = new Dispatcher({ onWarning: () => {} });
  load(main);
  // The other agent's registration order differs, so its local kernel ids differ from the main agent's.
  other.registerImpl('sh::unrelated', K.CPU, KernelFunction.fromUnboxed(() => 0), { debug: 'only here' });
  load(other);
  const tables = main.shareTables(0);
  other.attachTables(1, tables);
  const resolve = (name: string) => kernels[name] as ((...args: unknown[]) => unknown) | undefined;
  main.setKernelResolver(resolve);
  other.setKernelResolver(resolve);
  return { main, other };
}

describe('a table store shared by agents', () => {
  it('kernel names get global ids that every agent agrees on; the directory gives each operator one row', () => {
    const reg = SharedTableRegistry.create(0, 1, 3, ['missing', 'a', 'b']);
    const view = SharedTableRegistry.open(reg.buffer, 1);
    assert.equal(view.kernelId('b'), 2);
    assert.equal(view.kernelId('c'), 3, 'a new name is appended');
    assert.equal(reg.kernelId('c'), 3, 'and seen by the other agent');
    assert.equal(reg.kernelName(3), 'c');
    assert.deepEqual(view.rowFor('ns::op', 1), { row: 1, created: true });
    assert.deepEqual(reg.rowFor('ns::op'), { row: 1, created: false });
    assert.deepEqual(reg.rowFor('ns::new'), { row: 3, created: true }, 'rows after sharing continue the count');
    assert.equal(view.rowOf('ns::new'), 3);
    assert.equal(view.rowOf('ns::none'), -1);
    assert.equal(reg.sharedChunk(1).length, reg.sharedChunk(SHARED_ROW_CHUNKS).length);
    assert.throws(() => reg.sharedChunk(0), /not in the registry/);
  });

  it('the writers lock names its holder and can be broken for a dead agent', () => {
    const reg = SharedTableRegistry.create(0, 0, 0, ['missing']);
    const dead = SharedTableRegistry.open(reg.buffer, 5);
    dead.locked(() => {
      assert.equal(reg.lockHolder(), 5);
      assert.equal(reg.breakLockOf(4), false);
      assert.equal(reg.breakLockOf(5), true);
    });
    assert.equal(reg.lockHolder(), -1);
    assert.equal(reg.locked(() => 1), 1);
  });

  it('every operator of the attached agent dispatches from the shared row, with the same kernel ids', () => {
    const { main, other } = twoAgents();
    const x = cpu();
    assert.equal(other.findSchemaOrThrow('sh::f').call(x), -1);
    assert.equal(other.findSchemaOrThrow('sh::g').call(x), 7);
    main.checkInvariants();
    other.checkInvariants(); // its own computation, with its remapped ids, equals the rows the main agent wrote
    assert.equal(main.tableStore.rowCount, other.tableStore.rowCount);
  });

  it('a registration in either agent is published to the other at its next call, and so is its removal', () => {
    const { main, other } = twoAgents({ 'sh.k2': () => 2 });
    const x = cpu();
    const fMain = main.findSchemaOrThrow('sh::f').call, fOther = other.findSchemaOrThrow('sh::f').call;
    const generation = main.tableStore.registry!.generation;
    const reg = other.registerImpl('sh::f', K.CPU, KernelFunction.fromUnboxed(() => 2), { kernelName: 'sh.k2' });
    assert.ok(main.tableStore.registry!.generation > generation);
    assert.equal(fOther(x), 2);
    assert.equal(fMain(x), 2, 'the main agent runs its own function for sh.k2, found by name');
    reg.dispose();
    assert.equal(fMain(x), -1);
    const back = main.registerImpl('sh::f', K.CPU, KernelFunction.fromUnboxed(() => 2), { kernelName: 'sh.k2' });
    assert.equal(fOther(x), 2, 'and the other way round');
    back.dispose();
    assert.equal(fOther(x), -1);
  });

  it("an agent's change leaves what another agent alone registered in the row, fallbacks included", () => {
    const { main, other } = twoAgents({ 'sh.k2': () => 2 });
    const x = fakeTensor(K.CPU, { inference: true, extra: [K.Python] }); // no autograd keys: Python is highest
    // Registrations only the main agent has: a Python-key fallback (for every operator) and an
    // AutogradCPU kernel of sh::g.
    using _fb = main.registerFallback(K.Python, KernelFunction.fromUnboxed(() => 'python'), 'main only');
    using _ag = main.registerImpl('sh::g', K.AutogradCPU, KernelFunction.fromUnboxed(() => 'autograd'), {
      kernelName: 'sh.autograd',
    });
    const g = main.findSchemaOrThrow('sh::g');
    assert.equal(g.call(x), 'python');
    assert.equal(g.call(cpu()), 'autograd');
    // The other agent registers and deregisters its own CPU kernel of sh::g: it publishes only the slots its
    // own computation of the row changed, so the main agent's fallback and autograd kernel stay.
    const reg = other.registerImpl('sh::g', K.CPU, KernelFunction.fromUnboxed(() => 2), { kernelName: 'sh.k2' });
    assert.equal(g.call(x), 'python');
    assert.equal(g.call(cpu()), 'autograd');
    reg.dispose();
    assert.equal(g.call(cpu()), 'autograd');
    main.checkInvariants(); // the row is exactly the main agent's own computation again
  });

  it('a published kernel the reading agent cannot resolve raises an error naming it and how to load it', () => {
    const { main, other } = twoAgents();
    using _reg = other.registerImpl('sh::g', K.CPU, KernelFunction.fromUnboxed(() => 9), {
      kernelName: 'sh.nowhere',
    });
    assert.throws(
      () => main.findSchemaOrThrow('sh::g').call(cpu()),
      /Kernel 'sh\.nowhere' \(kernel id \d+\), which another agent published in the dispatch table of sh::g, is not loadable in this agent: register it in an operator library every agent loads \(loadOperatorLibrary\), or define it here under that name with defineKernel\(\)/,
    );
    assert.equal(other.findSchemaOrThrow('sh::g').call(cpu()), 9);
  });

  it('operators new to both agents get rows after the first chunks; the other agent takes the same rows', () => {
    const { main, other } = twoAgents({ 'sh.h': () => 5 });
    const a = new Library('late', 'DEF', undefined, { dispatcher: other, location: 'x' });
    for (let i = 0; i < ROWS_PER_CHUNK + 10; i++) a.define(`late::h${i}(Tensor x) -> int`);
    const last = `h${ROWS_PER_CHUNK + 9}`;
    a.impl(last, () => 5, K.CPU, { kernelName: 'sh.h' });
    const row = other.tableStore.registry!.rowOf(`late::${last}`);
    assert.ok(row >= main.tableStore.registry!.initialChunks * ROWS_PER_CHUNK, `row ${row} is in a shared chunk`);
    // The main agent loads the same definition, as a module another agent loaded first is loaded (quietly:
    // syncOperatorLibraries): it takes that row, does not rewrite it from its half-made registrations, and
    // finds the kernel the other agent published there.
    const b = new Library('late', 'DEF', undefined, { dispatcher: main, location: 'x' });
    main.tableStore.quiet = true;
    b.define(`late::${last}(Tensor x) -> int`);
    main.tableStore.quiet = false;
    assert.equal(main.findSchemaOrThrow(`late::${last}`).call(cpu()), 5);
    assert.equal(main.tableStore.registry!.rowOf(`late::${last}`), row);
    a.dispose();
    b.dispose();
  });
});
