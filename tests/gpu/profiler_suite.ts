// The profiler with WebGPU activity on a real adapter: each kernel's compute pass is timed with timestamp queries,
// put on the profiler's clock and attributed to the operator call that issued it (table columns, Chrome trace
// track and flows). Where the adapter lacks 'timestamp-query' the suite checks the no-feature path instead.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gpuSkip } from './_gpu.ts';
import { gpuInfo, manualSeed, profile, profiler, randn, RuntimeError } from '../../mod.ts';

describe('profiler with WebGPU kernel times', { skip: gpuSkip }, () => {
  it('times each kernel on the device, within the profiled region, attributed to its call', async () => {
    manualSeed(21);
    const a = randn(33, 17).to({ device: 'webgpu' }), b = randn(17, 9).to({ device: 'webgpu' });
    await a.toArrayAsync(); // uploads and earlier work are done: only the profiled kernels are timed
    if (!gpuInfo().features.includes('timestamp-query')) {
      const p = profiler({ activities: ['cpu', 'webgpu'] });
      a.mm(b).relu().dispose();
      await p.synchronize();
      assert.match(p.deviceTimesMissing!, /timestamp-query/);
      const table = p.keyAverages().table();
      assert.doesNotMatch(table, /Self WebGPU/);
      assert.match(table, /\nNote: WebGPU kernel times are not recorded: .*'timestamp-query'/);
      assert.deepEqual(p.kernels(), []);
      return;
    }
    const t0 = performance.now();
    const p = profiler({ activities: ['cpu', 'webgpu'] });
    const y = a.mm(b).relu().add(1);
    const s = y.sum();
    p.stop();
    assert.throws(() => p.keyAverages(), (e) => e instanceof RuntimeError && /synchronize/.test(e.message));
    await p.synchronize();
    const regionUs = (performance.now() - t0) * 1000;
    const events = p.events(), kernels = p.kernels();
    const byId = new Map(events.map((e) => [e.id, e]));
    assert.ok(kernels.length >= 4, `${kernels.length} kernels for mm, relu, add, sum`);
    let lastStart = -Infinity, lastOp = -1;
    for (const k of kernels) {
      assert.ok(k.startUs >= 0 && k.durUs >= 0, `${k.name}: ${k.startUs} + ${k.durUs} us`);
      assert.ok(k.startUs + k.durUs <= regionUs, `${k.name} ends inside the profiled region`);
      assert.ok(k.startUs >= lastStart, 'kernels in start order');
      const op = byId.get(k.op)!;
      assert.equal(op.device, 'webgpu:0', `${k.name} issued by ${op.name}`);
      assert.ok(k.op >= lastOp, 'the queue runs kernels in the order their calls issued them');
      // A kernel cannot start before its call began issuing it (the alignment errs early, never before the submit).
      assert.ok(k.startUs >= op.startUs, `${k.name} starts after ${op.name} began`);
      lastStart = k.startUs;
      lastOp = k.op;
    }
    const names = (id: number) => kernels.filter((k) => k.op === id);
    for (const name of ['aten::mm', 'aten::relu', 'aten::add', 'aten::sum']) {
      const e = events.find((x) => x.name === name)!;
      const own = names(e.id).reduce((t, k) => t + k.durUs, 0);
      assert.ok(names(e.id).length >= 1, `${name} issued a kernel`);
      assert.ok(Math.abs(e.deviceSelfUs! - own) < 1e-9, `${name} self device time is its kernels'`);
      assert.ok(e.deviceTotalUs! >= e.deviceSelfUs!);
    }
    const table = p.keyAverages().table({ sortBy: 'device_time_total' });
    const lines = table.split('\n');
    assert.match(lines[1], /Self CPU %.*CPU time avg\s+Self WebGPU\s+Self WebGPU %\s+WebGPU total\s+WebGPU time avg/);
    assert.match(table, /Self WebGPU time total: \d+\.\d{3}(us|ms|s)\n/);
    const trace = p.chromeTrace().traceEvents;
    const gpuEvents = trace.filter((e) => e.ph === 'X' && e.pid === 2);
    assert.equal(gpuEvents.length, kernels.length);
    const starts = trace.filter((e) => e.ph === 's'), ends = trace.filter((e) => e.ph === 'f');
    assert.equal(starts.length, kernels.length);
    assert.deepEqual(starts.map((e) => e.id), ends.map((e) => e.id));
    for (const f of starts) {
      const k = kernels[f.id! - 1], op = byId.get(k.op)!;
      assert.equal(f.ts, Math.round(op.startUs * 1000) / 1000, 'the flow leaves the issuing call');
    }
    assert.ok(trace.some((e) => e.ph === 'M' && e.pid === 2 && /WebGPU/.test(String(e.args?.name))));
    for (const t of [a, b, y, s]) t.dispose();
  });

  it('profile() of an async function resolves with the kernel times read back; CPU-only records none', async () => {
    const a = randn(8, 8).to({ device: 'webgpu' });
    await a.toArrayAsync();
    const p = await profile(() => Promise.resolve(a.exp().dispose()), { activities: ['cpu', 'webgpu'] });
    if (gpuInfo().features.includes('timestamp-query')) {
      assert.ok(p.kernels().length >= 1);
      assert.equal(p.deviceTimesMissing, undefined);
    }
    const cpuOnly = await profile(() => Promise.resolve(a.exp().dispose()));
    assert.deepEqual(cpuOnly.kernels(), []);
    assert.equal(cpuOnly.events()[0].deviceSelfUs, undefined);
    assert.doesNotMatch(cpuOnly.keyAverages().table(), /WebGPU/);
    a.dispose();
  });
});
