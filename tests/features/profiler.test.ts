// The profiler as a dispatch key: what it records, nesting, self/total time, the table, the Chrome trace, and
// that it leaves no trace in the key sets when off.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DispatchKey,
  formatMemory,
  formatTime,
  inferenceMode,
  linear,
  localDispatchKeySet,
  manualSeed,
  profile,
  profiler,
  type ProfilerEvent,
  randn,
  RuntimeError,
  ValueError,
  zeros,
} from '../../mod.ts';

function includesProfiler(): boolean {
  return localDispatchKeySet().included.has(DispatchKey.Profiler);
}

function childrenOf(events: readonly ProfilerEvent[], id: number): ProfilerEvent[] {
  return events.filter((e) => e.parent === id);
}

describe('profiler', () => {
  it('records each call that reaches the Profiler key with overload, shapes, dtypes, device and key path', () => {
    manualSeed(1);
    const a = randn(5, 3), b = randn(3, 7);
    const p = profile(() => a.mm(b).add(randn(7), { alpha: 2 }));
    const names = p.events().map((e) => `${e.name}${e.overload === '' ? '' : '.' + e.overload}`);
    assert.deepEqual(names, ['aten::mm', 'aten::randn', 'aten::add.Tensor']);
    const [mm, rnd, add] = p.events();
    assert.deepEqual(mm.inputShapes, [[5, 3], [3, 7]]);
    assert.deepEqual(mm.inputDtypes, ['Float', 'Float']);
    assert.equal(mm.device, 'cpu');
    assert.deepEqual(mm.keyPath, ['Profiler', 'CPU']);
    assert.deepEqual(add.inputShapes, [[5, 7], [7], []]);
    assert.equal(add.depth, 0);
    // A factory has no tensor argument: BackendSelect picks the backend below the profiler; its device argument
    // (here the default, None) is the device recorded.
    assert.equal(rnd.device, '');
    assert.equal(profile(() => zeros(2, { device: 'meta' })).events()[0].device, 'meta');
    assert.deepEqual(rnd.keyPath, ['Profiler', 'BackendSelect']);
    // mm's output is 5x7 float32: 140 bytes, credited to mm itself.
    assert.equal(mm.bytesAllocated, 5 * 7 * 4);
    assert.equal(mm.selfBytesAllocated, 5 * 7 * 4);
  });

  it('nests calls made inside a kernel, with self = total - children and parents enclosing children', () => {
    manualSeed(2);
    using _inference = inferenceMode(); // no autograd keys: the composite runs below the profiler
    const x = randn(6, 4), w = randn(3, 4), bias = randn(3);
    const p = profile(() => linear(x, w, bias));
    const events = p.events();
    const top = events.filter((e) => e.depth === 0);
    assert.deepEqual(top.map((e) => e.name), ['aten::linear']);
    const kids = childrenOf(events, top[0].id);
    assert.deepEqual(kids.map((e) => e.name), ['aten::t', 'aten::addmm']);
    for (const k of kids) {
      assert.equal(k.depth, 1);
      assert.ok(k.startUs >= top[0].startUs && k.startUs + k.totalUs <= top[0].startUs + top[0].totalUs + 1e-6);
    }
    const childTotal = kids.reduce((s, k) => s + k.totalUs, 0);
    assert.ok(Math.abs(top[0].selfUs - (top[0].totalUs - childTotal)) < 1e-6);
    // The output storage was made by addmm, so linear itself allocated nothing.
    assert.equal(top[0].bytesAllocated, 6 * 3 * 4);
    assert.equal(top[0].selfBytesAllocated, 0);
    assert.equal(kids[1].selfBytesAllocated, 6 * 3 * 4);
  });

  it('records the backward pass too (the engine calls operators through the dispatcher)', () => {
    manualSeed(3);
    const x = randn(4, 5), w = randn(2, 5, { requiresGrad: true });
    const p = profile(() => x.mm(w.t()).sum().backward());
    const mms = p.events().filter((e) => e.name === 'aten::mm');
    assert.equal(mms.length, 2, 'forward mm and the mm of its backward');
    assert.deepEqual(mms[1].inputShapes.length, 2);
    assert.ok(w.grad !== null && w.grad !== undefined);
  });

  it('adds the Profiler key only while running, and records nothing after stop', () => {
    const a = randn(3, 3);
    assert.equal(includesProfiler(), false);
    const p = profiler();
    assert.equal(includesProfiler(), true);
    assert.equal(p.enabled, true);
    a.relu();
    p.stop();
    assert.equal(includesProfiler(), false);
    a.relu();
    a.neg();
    assert.deepEqual(p.events().map((e) => e.name), ['aten::relu']);
    p.stop(); // idempotent
    {
      using q = profiler();
      a.neg();
      assert.equal(q.events().length, 1);
    }
    assert.equal(includesProfiler(), false, 'using ends it');
  });

  it('refuses a second profiler on the agent and stops when the profiled function throws', () => {
    const p = profiler();
    assert.throws(() => profiler(), (e) => e instanceof RuntimeError && /already enabled/.test(e.message));
    p.stop();
    assert.throws(() => p.start(), /already started/);
    assert.throws(() =>
      profile(() => {
        randn(2, 2).mm(randn(3, 3));
      }), /mat1 and mat2 shapes cannot be multiplied/);
    assert.equal(includesProfiler(), false);
    assert.throws(() => profile(42 as unknown as () => void), TypeError);
    // The runtime stays usable and a new profiler works.
    const q = profile(() => randn(2, 2).relu());
    assert.equal(q.events().length, 2);
  });

  it('profiles an async function until its promise settles', async () => {
    const a = randn(2, 2);
    const p = await profile(async () => {
      a.relu();
      await Promise.resolve();
      a.neg();
    });
    assert.deepEqual(p.events().map((e) => e.name), ['aten::relu', 'aten::neg']);
    assert.equal(includesProfiler(), false);
  });

  it("averages by name or by input shape and prints PyTorch's table", () => {
    const a = randn(4, 4), b = randn(8, 8);
    const p = profile(() => {
      a.mm(a);
      a.mm(a);
      b.mm(b);
      a.relu();
    });
    const avgs = p.keyAverages();
    const mm = avgs.find((e) => e.key === 'aten::mm')!;
    assert.equal(mm.count, 3);
    const mmEvents = p.events().filter((e) => e.name === 'aten::mm');
    assert.ok(Math.abs(mm.cpuTimeTotal - mmEvents.reduce((s, e) => s + e.totalUs, 0)) < 1e-9);
    assert.ok(Math.abs(mm.cpuTime - mm.cpuTimeTotal / 3) < 1e-9);
    assert.equal(mm.cpuMemoryUsage, 2 * 64 + 256);
    const byShape = p.keyAverages({ groupByInputShape: true }).filter((e) => e.key === 'aten::mm');
    assert.deepEqual(byShape.map((e) => [e.count, e.inputShapes]), [[2, [[4, 4], [4, 4]]], [1, [[8, 8], [8, 8]]]]);

    const table = avgs.table({ sortBy: 'cpu_time_total' });
    const lines = table.split('\n');
    assert.match(
      lines[1],
      /^\s+Name\s+Self CPU %\s+Self CPU\s+CPU total %\s+CPU total\s+CPU time avg\s+CPU Mem\s+Self CPU Mem\s+# of Calls\s+$/,
    );
    assert.equal(lines[0], lines[2]);
    assert.match(lines[lines.length - 2], /^Self CPU time total: \d+\.\d{3}(us|ms|s)$/);
    const rows = lines.slice(3, lines.length - 3).map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(rows.map((r) => r[0]).sort(), ['aten::mm', 'aten::relu']);
    const totals = rows.map((r) => r[4]);
    const us = (s: string) => parseFloat(s) * (s.endsWith('ms') ? 1e3 : s.endsWith('us') ? 1 : 1e6);
    assert.ok(us(totals[0]) >= us(totals[1]), 'sorted by CPU total, descending');
    assert.equal(rows.find((r) => r[0] === 'aten::mm')![8], '3');
    const pcts = rows.map((r) => parseFloat(r[1]));
    assert.ok(Math.abs(pcts[0] + pcts[1] - 100) < 0.02, 'self CPU % sums to 100');
    const shaped = p.keyAverages({ groupByInputShape: true }).table({ rowLimit: 1 });
    assert.match(shaped, /Input Shapes/);
    assert.equal(shaped.split('\n').length, 7, 'one row');
    assert.throws(() => avgs.table({ sortBy: 'cuda_time' as never }), ValueError);
    assert.throws(() => avgs.table({ rowLimit: -1 }), ValueError);
  });

  it('formats times and memory as PyTorch does', () => {
    assert.equal(formatTime(13), '13.000us');
    assert.equal(formatTime(1612.4), '1.612ms');
    assert.equal(formatTime(2.5e6), '2.500s');
    assert.equal(formatMemory(12), '12 b');
    assert.equal(formatMemory(2048), '2.00 Kb');
    assert.equal(formatMemory(-3 * 1024 * 1024), '-3.00 Mb');
    assert.equal(formatMemory(5 * 1024 ** 3), '5.00 Gb');
  });

  it('exports a Chrome trace whose nested events lie inside their parents', () => {
    using _inference = inferenceMode();
    const x = randn(3, 4), w = randn(2, 4);
    const p = profile(() => linear(x, w));
    const dir = mkdtempSync(join(tmpdir(), 'sy-prof-'));
    try {
      const path = join(dir, 'trace.json');
      p.exportChromeTrace(path);
      const json = JSON.parse(readFileSync(path, 'utf8'));
      const all = json.traceEvents as Array<Record<string, never>>;
      // Metadata names the process and the main agent's thread; every call is one complete event on that thread.
      assert.deepEqual(all.filter((e) => e.ph === 'M').map((e) => [e.name, e.tid, (e.args as { name: string }).name]), [
        ['process_name', 0, 'Switchyard agents'],
        ['thread_name', 1, 'agent 0 (main)'],
      ]);
      const evs = all.filter((e) => e.ph !== 'M');
      assert.equal(evs.length, p.events().length);
      for (const e of evs) {
        assert.equal(e.ph, 'X');
        assert.equal(e.tid, 1);
        assert.equal(typeof e.ts, 'number');
        assert.ok((e.dur as number) >= 0);
      }
      const lin = evs.find((e) => e.name === 'aten::linear')!;
      const mm = evs.find((e) => e.name === 'aten::matmul' || e.name === 'aten::mm')!;
      assert.ok(
        mm.ts >= lin.ts && (mm.ts as number) + (mm.dur as number) <= (lin.ts as number) + (lin.dur as number) + 0.01,
      );
      assert.deepEqual((lin.args as Record<string, unknown>)['Input Dims'], [[3, 4], [2, 4], []]);
      assert.throws(() => p.exportChromeTrace(''), TypeError);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
