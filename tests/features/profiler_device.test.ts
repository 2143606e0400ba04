// Device kernel times in the profiler, without a GPU: the arithmetic that puts raw timestamps on the profiler's
// clock (unit tests over recorded query values), the attribution to calls through the DeviceTimer interface (a
// stand-in timer that hands out the records a backend would), the table's device columns, and the path where the
// device cannot be timed (a warning once, a note, no columns, never numbers).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  alignKernelTimes,
  type DeviceKernelRecord,
  type DeviceTimer,
  deviceTimesPerCall,
  DispatchKey,
  Library,
  profile,
  profiler,
  randn,
  registerDeviceTimer,
  type Tensor,
  ValueError,
} from '../../mod.ts';
import { deviceTimer } from '../../core/features/profiler_device.ts';

/** Captures console.warn while `fn` runs. */
async function warnings(fn: () => unknown): Promise<string[]> {
  const seen: string[] = [];
  const original = console.warn;
  console.warn = (...args: unknown[]) => void seen.push(args.map(String).join(' '));
  try {
    await fn();
  } finally {
    console.warn = original;
  }
  return seen;
}

describe('profiler device times', () => {
  it('aligns recorded timestamps: spacing and durations from the device, the offset from the submits', () => {
    // Query values as an adapter wrote them (nanoseconds on a device clock near 1.08e13 ns), two batches.
    const base = 10_792_131_323_510n;
    const records: DeviceKernelRecord[] = [
      { name: 'a', op: 0, submitMs: 12, beginNs: base, endNs: base + 32_021_168n },
      { name: 'b', op: 1, submitMs: 12, beginNs: base + 32_100_000n, endNs: base + 32_100_001n },
      // Second batch submitted at 50 ms, started 40 ms of device time after the first kernel.
      { name: 'c', op: 2, submitMs: 50, beginNs: base + 40_000_000n, endNs: base + 45_000_000n },
    ];
    const { kernels, dropped } = alignKernelTimes(records, 2, 'webgpu:0');
    assert.equal(dropped, 0);
    // Lower bounds on the offset: a: (12-2) ms - 0 = 10000 us; b: 10000 - 32100 us; c: 48000 - 40000 = 8000 us.
    // The largest, 10000 us, puts kernel a at its submit and c 40 ms of device time later, after its own submit.
    assert.deepEqual(kernels.map((k) => [k.name, k.startUs, k.durUs]), [
      ['a', 10_000, 32_021.168],
      ['b', 42_100, 0.001],
      ['c', 50_000, 5_000],
    ]);
    assert.deepEqual(kernels.map((k) => k.id), [0, 1, 2]);
    assert.ok(kernels.every((k) => k.device === 'webgpu:0'));
    // Where the second batch's submit bounds it (the device sat idle in between), that bound wins.
    const late = alignKernelTimes([records[0], { ...records[2], submitMs: 70 }], 2, 'webgpu:0').kernels;
    assert.deepEqual(late.map((k) => k.startUs), [28_000, 68_000]);
  });

  it('drops unwritten and backwards timestamps, and sorts kernels by start', () => {
    const r = (name: string, beginNs: bigint, endNs: bigint): DeviceKernelRecord => ({
      name,
      op: -1,
      submitMs: 1,
      beginNs,
      endNs,
    });
    const { kernels, dropped } = alignKernelTimes(
      [r('late', 5000n, 6000n), r('zero', 0n, 0n), r('back', 9000n, 8000n), r('early', 1000n, 1500n)],
      0,
      'webgpu:0',
    );
    assert.equal(dropped, 2);
    assert.deepEqual(kernels.map((k) => [k.id, k.name, k.startUs, k.durUs]), [[0, 'early', 1000, 0.5], [
      1,
      'late',
      1004,
      1,
    ]]);
    assert.deepEqual(alignKernelTimes([], 0, 'webgpu:0'), { kernels: [], dropped: 0 });
  });

  it('sums device time per call: self from its own kernels, total over its subtree', () => {
    // 0 -> (1 -> 3), 2; 4 at the top.
    const parents = [-1, 0, 0, 1, -1];
    const { self, total } = deviceTimesPerCall(parents, [
      { op: 3, durUs: 5 },
      { op: 1, durUs: 2 },
      { op: 0, durUs: 1 },
      { op: 2, durUs: 7 },
      { op: 3, durUs: 0.25 },
      { op: -1, durUs: 100 }, // outside any call: no one's
    ]);
    assert.deepEqual([...self], [1, 2, 7, 5.25, 0]);
    assert.deepEqual([...total], [15.25, 7.25, 7, 5.25, 0]);
  });

  it('attributes the kernels a timer reports to the calls that issued them, in the table and the trace', async () => {
    // A stand-in for the WebGPU timer: a custom operator's kernel "launches" by asking the timer's owner() which
    // call is recording, as the WebGPU queue does for each dispatch; collect() returns records with those owners.
    const launched: Array<{ op: number; us: number }> = [];
    let owner: () => number = () => -1;
    const timer: DeviceTimer = {
      unavailable: () => undefined,
      start(o) {
        owner = o;
      },
      stop() {},
      collect: () => {
        let at = 1_000_000n;
        return Promise.resolve(launched.map(({ op, us }, i): DeviceKernelRecord => {
          const beginNs = at;
          at += BigInt(us * 1000) + 500n;
          return { name: `kernel${i}`, op, submitMs: performance.now(), beginNs, endNs: beginNs + BigInt(us * 1000) };
        }));
      },
    };
    using _timer = registerDeviceTimer('webgpu', () => timer);
    using def = new Library('proftest', 'DEF');
    const launch = def.define('proftest::launch(Tensor x, int us) -> Tensor');
    const twice = def.define('proftest::twice(Tensor x) -> Tensor');
    using impls = new Library('proftest', 'IMPL');
    impls.impl(launch, (_hi, _lo, x: Tensor, us: number) => {
      launched.push({ op: owner(), us });
      return x.clone();
    }, DispatchKey.CPU);
    impls.impl(twice, (_hi, _lo, x: Tensor) => {
      launched.push({ op: owner(), us: 1 });
      return launch.call(launch.call(x, 3), 4);
    }, DispatchKey.CPU);
    const x = randn(4);
    const p = profiler({ activities: ['cpu', 'webgpu'] });
    launch.call(x, 10);
    twice.call(x);
    await p.synchronize();
    const events = p.events();
    assert.deepEqual(events.map((e) => e.name), [
      'proftest::launch',
      'aten::clone',
      'proftest::twice',
      'proftest::launch',
      'aten::clone',
      'proftest::launch',
      'aten::clone',
    ]);
    const [l0, , tw, l1, , l2] = events;
    assert.deepEqual([l1.parent, l2.parent], [tw.id, tw.id]);
    assert.deepEqual([l0.deviceSelfUs, l0.deviceTotalUs], [10, 10]);
    assert.deepEqual([tw.deviceSelfUs, tw.deviceTotalUs], [1, 8]);
    assert.deepEqual([l1.deviceSelfUs, l2.deviceSelfUs], [3, 4]);
    assert.equal(events.find((e) => e.name === 'aten::clone')!.deviceSelfUs, 0);
    assert.deepEqual(p.kernels().map((k) => k.op), [l0.id, tw.id, l1.id, l2.id]);
    const avgs = p.keyAverages();
    const row = avgs.find((r) => r.key === 'proftest::launch')!;
    assert.deepEqual([row.selfDeviceTimeTotal, row.deviceTimeTotal, row.deviceTime], [17, 17, 17 / 3]);
    assert.equal(avgs.selfDeviceTimeTotal, 18);
    const table = avgs.table({ sortBy: 'self_device_time_total' });
    const lines = table.split('\n');
    assert.match(
      lines[1],
      /CPU time avg\s+Self WebGPU\s+Self WebGPU %\s+WebGPU total\s+WebGPU time avg\s+CPU Mem\s+Self CPU Mem\s+# of Calls/,
    );
    const first = lines[3].trim().split(/\s{2,}/);
    assert.deepEqual([first[0], first[6], first[7], first[8], first[9]], [
      'proftest::launch',
      '17.000us',
      '94.44%',
      '17.000us',
      '5.667us',
    ]);
    assert.match(table, /\nSelf WebGPU time total: 18\.000us\n$/);
    // The trace: a WebGPU process with one kernel per launch, each linked to its call by a flow.
    const trace = p.chromeTrace().traceEvents;
    const flows = trace.filter((e) => e.ph === 's');
    assert.deepEqual(flows.map((f) => f.ts), [l0, tw, l1, l2].map((e) => Math.round(e.startUs * 1000) / 1000));
    assert.deepEqual(trace.filter((e) => e.ph === 'f').map((f) => [f.pid, f.bp]), Array(4).fill([2, 'e']));
  });

  it('without a timeable device: warns once, says so under the table, shows no device numbers', async () => {
    using _timer = registerDeviceTimer('webgpu', () => ({
      unavailable: () => "WebGPU kernel times are not recorded: the adapter (test) has no 'timestamp-query' feature",
      start: () => assert.fail('not started'),
      stop: () => assert.fail('not stopped'),
      collect: () => Promise.reject(new Error('not collected')),
    }));
    let first: Awaited<ReturnType<typeof profile>> | undefined;
    const seen = await warnings(async () => {
      first = await profile(() => Promise.resolve(randn(3).relu()), { activities: ['cpu', 'webgpu'] });
      await profile(() => Promise.resolve(randn(3).relu()), { activities: ['webgpu', 'cpu'] });
    });
    assert.equal(seen.length, 1, 'one warning for two profiles');
    assert.match(seen[0], /profiler\(\): .*no 'timestamp-query' feature/);
    const p = first!;
    assert.match(p.deviceTimesMissing!, /timestamp-query/);
    assert.deepEqual(p.kernels(), []);
    assert.ok(p.events().every((e) => e.deviceSelfUs === undefined && e.deviceTotalUs === undefined));
    const table = p.keyAverages().table();
    assert.doesNotMatch(table.split('\n')[1], /WebGPU/);
    assert.match(table, /\nNote: WebGPU kernel times are not recorded: .*timestamp-query.*\n$/);
    assert.throws(() => p.keyAverages().table({ sortBy: 'device_time_total' }), ValueError);
    assert.ok(p.chromeTrace().traceEvents.every((e) => e.pid === 1));
  });

  it('says which backend is missing, restores replaced timers, and checks the activities', async () => {
    const stand = (reason: string): DeviceTimer => ({
      unavailable: () => reason,
      start() {},
      stop() {},
      collect: () => Promise.resolve([]),
    });
    const missing = () => {
      const p = profiler({ activities: ['cpu', 'webgpu'] });
      p.stop();
      return p.deviceTimesMissing;
    };
    await warnings(() => {
      using _a = registerDeviceTimer('webgpu', () => stand('reason A'));
      {
        using _b = registerDeviceTimer('webgpu', () => stand('reason B'));
        assert.equal(missing(), 'reason B');
      }
      assert.equal(missing(), 'reason A', 'disposing a registration puts back the one it replaced');
    });
    assert.match(String(deviceTimer('npu')), /^no npu backend is loaded \(import the WebGPU backend/);
    assert.throws(
      () => profiler({ activities: ['cuda'] as never }),
      (e) => e instanceof TypeError && /'activities' must be a list of 'cpu', 'webgpu', got \["cuda"\]/.test(e.message),
    );
    assert.throws(() => profiler({ activities: 'cpu' as never }), TypeError);
    assert.throws(() => profiler({ recordShapes: 1 as never }), /'recordShapes' must be a boolean/);
    assert.throws(() => registerDeviceTimer('', () => ({}) as DeviceTimer), TypeError);
    // A CPU-only profile has no device columns and no note.
    const table = profile(() => randn(2).relu()).keyAverages().table();
    assert.doesNotMatch(table, /WebGPU|Note:/);
  });
});
