/**
 * Profiler results as PyTorch prints them: `key_averages()` (events grouped by name, optionally by input
 * shapes), its `table(sort_by=...)` text, and the Chrome trace JSON that Perfetto and `chrome://tracing` open.
 *
 * The table follows PyTorch's `torch.autograd.profiler_util._build_table` for CPU events: a right-aligned Name
 * column as wide as the longest name plus 4 (at most 55), twelve-character numeric columns two spaces apart,
 * times as `1.234us` / `1.234ms` / `1.234s`, memory as `b` / `Kb` / `Mb` / `Gb`, and a closing
 * `Self CPU time total:` line. With device kernel times, the columns PyTorch shows for CUDA follow the CPU ones
 * under the device's name (`Self WebGPU`, `Self WebGPU %`, `WebGPU total`, `WebGPU time avg`), with a closing
 * `Self WebGPU time total:` line.
 *
 * @module
 */
import { hostFileSystem } from '../tensor/host_files.ts';
import { ValueError } from '../dispatch/errors.ts';
import type { ProfilerEvent, ThreadChunkEvent } from './profiler.ts';
import type { DeviceKernelEvent } from './profiler_device.ts';

/** The statistics of one group of events (PyTorch's `FunctionEventAvg`). Times in microseconds. */
export interface FunctionEventAvg {
  /** Operator name (`aten::mm`). */
  readonly key: string;
  /** Number of calls. */
  readonly count: number;
  /** Sum of the calls' self times. */
  readonly selfCpuTimeTotal: number;
  /** Sum of the calls' total times (a call nested in a call of the same name counts twice, as in PyTorch). */
  readonly cpuTimeTotal: number;
  /** `cpuTimeTotal / count`. */
  readonly cpuTime: number;
  /** Sum of the calls' allocated bytes. */
  readonly cpuMemoryUsage: number;
  /** Sum of the calls' self allocated bytes. */
  readonly selfCpuMemoryUsage: number;
  /** The input shapes of the group (set when grouped by input shape), else those of its first call. */
  readonly inputShapes: ReadonlyArray<readonly number[]>;
  /** The agent of the group when grouped by agent, else undefined (the group spans every agent). */
  readonly agent: number | undefined;
  /** Sum of the calls' self device times (PyTorch's `self_device_time_total`); 0 without kernel times. */
  readonly selfDeviceTimeTotal: number;
  /** Sum of the calls' total device times (PyTorch's `device_time_total`). */
  readonly deviceTimeTotal: number;
  /** `deviceTimeTotal / count`. */
  readonly deviceTime: number;
}

/** Options of `keyAverages()`. */
export interface KeyAveragesOptions {
  /** One group per operator name and input shapes (PyTorch's `group_by_input_shape`). */
  readonly groupByInputShape?: boolean;
  /** One group per operator name and agent (default: every agent's calls together). */
  readonly groupByAgent?: boolean;
}

/** Sort keys of {@linkcode EventList.table}, PyTorch's `sort_by` names. */
export type SortBy =
  | 'cpu_time_total'
  | 'self_cpu_time_total'
  | 'cpu_time'
  | 'count'
  | 'cpu_memory_usage'
  | 'self_cpu_memory_usage'
  | 'self_device_time_total'
  | 'device_time_total'
  | 'device_time';

const SORT_FIELDS: Readonly<Record<SortBy, keyof FunctionEventAvg>> = {
  cpu_time_total: 'cpuTimeTotal',
  self_cpu_time_total: 'selfCpuTimeTotal',
  cpu_time: 'cpuTime',
  count: 'count',
  cpu_memory_usage: 'cpuMemoryUsage',
  self_cpu_memory_usage: 'selfCpuMemoryUsage',
  self_device_time_total: 'selfDeviceTimeTotal',
  device_time_total: 'deviceTimeTotal',
  device_time: 'deviceTime',
};

/** Options of {@linkcode EventList.table}. */
export interface TableOptions {
  /** Column to sort by, descending (default: the order groups first appeared, as PyTorch without `sort_by`). */
  readonly sortBy?: SortBy;
  /** At most this many rows (default all; PyTorch's `row_limit`, whose default is 100). */
  readonly rowLimit?: number;
  /** Show the memory columns (default: whether any event allocated). */
  readonly showMemory?: boolean;
  /** Show the Input Shapes column (default: whether the list was grouped by input shape). */
  readonly showInputShapes?: boolean;
}

/**
 * Formats microseconds as PyTorch's `_format_time`.
 *
 * @example
 * ```ts
 * import { formatTime } from './profiler_report.ts';
 * formatTime(1612); // '1.612ms'
 * ```
 */
export function formatTime(us: number): string {
  if (us >= 1e6) return `${(us / 1e6).toFixed(3)}s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(3)}ms`;
  return `${us.toFixed(3)}us`;
}

/**
 * Formats bytes as PyTorch's `_format_memory`.
 *
 * @example
 * ```ts
 * import { formatMemory } from './profiler_report.ts';
 * formatMemory(2048); // '2.00 Kb'
 * ```
 */
export function formatMemory(bytes: number): string {
  const KB = 1024, MB = KB * 1024, GB = MB * 1024;
  const a = Math.abs(bytes);
  if (a >= GB) return `${(bytes / GB).toFixed(2)} Gb`;
  if (a >= MB) return `${(bytes / MB).toFixed(2)} Mb`;
  if (a >= KB) return `${(bytes / KB).toFixed(2)} Kb`;
  return `${bytes} b`;
}

function shapesKey(shapes: ReadonlyArray<readonly number[]>): string {
  return `[${shapes.map((s) => `[${s.join(', ')}]`).join(', ')}]`;
}

/**
 * Groups of events with their statistics (PyTorch's `EventList` of `FunctionEventAvg`), made by
 * `Profiler.keyAverages()`.
 *
 * @example
 * ```ts
 * import { profile, randn } from '../../mod.ts';
 * const a = randn(16, 16);
 * const avgs = profile(() => a.mm(a)).keyAverages();
 * avgs.find((e) => e.key === 'aten::mm')?.count; // 1
 * ```
 */
export class EventList extends Array<FunctionEventAvg> {
  /** `map`, `filter` and `slice` give plain arrays. */
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  /** Whether the groups are split by input shapes. */
  groupedByInputShape = false;

  /** The self time of every event (the `Self CPU time total` line). */
  selfCpuTimeTotal = 0;

  /** Whether the groups are split by agent (an `Agent` column). */
  groupedByAgent = false;

  /** The device whose kernel times the groups hold (`WebGPU`), or undefined: no device columns. */
  deviceName: string | undefined;

  /** Why device times are missing or incomplete (printed under the table), or undefined. */
  deviceNote: string | undefined;

  /** The self device time of every event (the `Self WebGPU time total` line). */
  selfDeviceTimeTotal = 0;

  /**
   * The table PyTorch's `key_averages().table()` prints.
   *
   * @example
   * ```ts
   * import { profile, randn } from '../../mod.ts';
   * const a = randn(16, 16);
   * console.log(profile(() => a.mm(a)).keyAverages().table({ sortBy: 'self_cpu_time_total', rowLimit: 5 }));
   * ```
   */
  table(options: TableOptions = {}): string {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`table(): argument 'options' must be an object, not ${typeof options}`);
    }
    const { sortBy, rowLimit } = options;
    if (sortBy !== undefined && !(sortBy in SORT_FIELDS)) {
      throw new ValueError(
        `table(): sort_by must be one of ${Object.keys(SORT_FIELDS).join(', ')}, got '${String(sortBy)}'`,
      );
    }
    if (rowLimit !== undefined && (!Number.isInteger(rowLimit) || rowLimit < 0)) {
      throw new ValueError(`table(): row_limit must be a non-negative integer, got ${String(rowLimit)}`);
    }
    const device = this.deviceName;
    if (sortBy !== undefined && sortBy.includes('device') && device === undefined) {
      throw new ValueError(
        `table(): cannot sort by ${sortBy}: no device kernel times were recorded` +
          (this.deviceNote === undefined ? '' : ` (${this.deviceNote})`),
      );
    }
    let rows: FunctionEventAvg[] = [...this];
    if (sortBy !== undefined) {
      const field = SORT_FIELDS[sortBy];
      rows = rows.map((r, i) => [r, i] as const)
        .sort((x, y) => (y[0][field] as number) - (x[0][field] as number) || x[1] - y[1])
        .map((x) => x[0]);
    }
    if (rowLimit !== undefined) rows = rows.slice(0, rowLimit);
    const showMemory = options.showMemory ?? this.some((e) => e.cpuMemoryUsage !== 0);
    const showShapes = options.showInputShapes ?? this.groupedByInputShape;

    const nameWidth = Math.min(55, Math.max(4, ...this.map((e) => e.key.length)) + 4);
    const headers: Array<[string, number]> = [['Name', nameWidth]];
    if (this.groupedByAgent) headers.push(['Agent', 8]);
    for (const h of ['Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg']) headers.push([h, 12]);
    if (device !== undefined) {
      for (const h of [`Self ${device}`, `Self ${device} %`, `${device} total`, `${device} time avg`]) {
        headers.push([h, Math.max(12, h.length)]);
      }
    }
    if (showMemory) headers.push(['CPU Mem', 12], ['Self CPU Mem', 12]);
    headers.push(['# of Calls', 12]);
    const shapeWidth = Math.min(80, Math.max(12, ...rows.map((r) => shapesKey(r.inputShapes).length)) + 4);
    if (showShapes) headers.push(['Input Shapes', shapeWidth]);

    const separator = headers.map(([, w]) => '-'.repeat(w)).join('  ') + '  ';
    const line = (cells: string[]) =>
      cells.map((c, i) => {
        const w = headers[i][1];
        const text = c.length > w ? c.slice(0, w - 3) + '...' : c;
        return text.padStart(w);
      }).join('  ') + '  ';
    const total = this.selfCpuTimeTotal;
    const pct = (us: number, of = total) => `${of === 0 ? '0.00' : ((100 * us) / of).toFixed(2)}%`;
    const deviceTotal = this.selfDeviceTimeTotal;
    const out = [separator, line(headers.map(([h]) => h)), separator];
    for (const r of rows) {
      const cells = [r.key];
      if (this.groupedByAgent) cells.push(String(r.agent));
      cells.push(
        pct(r.selfCpuTimeTotal),
        formatTime(r.selfCpuTimeTotal),
        pct(r.cpuTimeTotal),
        formatTime(r.cpuTimeTotal),
        formatTime(r.cpuTime),
      );
      if (device !== undefined) {
        cells.push(
          formatTime(r.selfDeviceTimeTotal),
          pct(r.selfDeviceTimeTotal, deviceTotal),
          formatTime(r.deviceTimeTotal),
          formatTime(r.deviceTime),
        );
      }
      if (showMemory) cells.push(formatMemory(r.cpuMemoryUsage), formatMemory(r.selfCpuMemoryUsage));
      cells.push(String(r.count));
      if (showShapes) cells.push(shapesKey(r.inputShapes));
      out.push(line(cells));
    }
    out.push(separator, `Self CPU time total: ${formatTime(total)}`);
    if (device !== undefined) out.push(`Self ${device} time total: ${formatTime(deviceTotal)}`);
    if (this.deviceNote !== undefined) out.push(`Note: ${this.deviceNote}`);
    out.push('');
    return out.join('\n');
  }
}

/**
 * Groups events by name (and input shapes, and agent) with their sums, in order of first appearance. The
 * second argument is the options, or (older form) whether to group by input shape.
 *
 * @example
 * ```ts
 * import { keyAverages } from './profiler_report.ts';
 * keyAverages([], { groupByAgent: true }).length; // 0
 * ```
 */
export function keyAverages(events: readonly ProfilerEvent[], options: KeyAveragesOptions | boolean = {}): EventList {
  const { groupByInputShape = false, groupByAgent = false } = typeof options === 'boolean'
    ? { groupByInputShape: options }
    : options;
  const groups = new Map<string, { key: string; agent: number | undefined; events: ProfilerEvent[] }>();
  for (const e of events) {
    let id = groupByInputShape ? `${e.name}\u0000${shapesKey(e.inputShapes)}` : e.name;
    if (groupByAgent) id += `\u0000${e.agent}`;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, g = { key: e.name, agent: groupByAgent ? e.agent : undefined, events: [] });
    g.events.push(e);
  }
  const list = new EventList();
  list.groupedByInputShape = groupByInputShape;
  list.groupedByAgent = groupByAgent;
  for (const { key, agent, events: es } of groups.values()) {
    let self = 0, total = 0, mem = 0, selfMem = 0, deviceSelf = 0, deviceTotal = 0;
    for (const e of es) {
      self += e.selfUs;
      total += e.totalUs;
      mem += e.bytesAllocated;
      selfMem += e.selfBytesAllocated;
      deviceSelf += e.deviceSelfUs ?? 0;
      deviceTotal += e.deviceTotalUs ?? 0;
    }
    list.push({
      key,
      count: es.length,
      selfCpuTimeTotal: self,
      cpuTimeTotal: total,
      cpuTime: total / es.length,
      cpuMemoryUsage: mem,
      selfCpuMemoryUsage: selfMem,
      inputShapes: es[0].inputShapes,
      agent,
      selfDeviceTimeTotal: deviceSelf,
      deviceTimeTotal: deviceTotal,
      deviceTime: deviceTotal / es.length,
    });
  }
  list.selfCpuTimeTotal = events.reduce((s, e) => s + e.selfUs, 0);
  list.selfDeviceTimeTotal = events.reduce((s, e) => s + (e.deviceSelfUs ?? 0), 0);
  return list;
}

/**
 * One event of the Chrome trace format: a complete event (`X`: an operator call, a kernel), a metadata event
 * (`M`: process and thread names) or the start / end of a flow (`s` / `f`: from a call to the kernel it issued).
 */
export interface ChromeTraceEvent {
  /** Phase. */
  readonly ph: 'X' | 'M' | 's' | 'f';
  /**
   * Category: `cpu_op` for calls, `kernel` for device kernels, `ac2g` for their links (as PyTorch's Kineto),
   * `thread_chunk` for the intra-op pool's chunks of a split CPU kernel.
   */
  readonly cat?: 'cpu_op' | 'kernel' | 'ac2g' | 'thread_chunk';
  /** The operator's or kernel's name; `process_name` / `thread_name` for metadata. */
  readonly name: string;
  /** Process id: 1 for the agents, 2 for the WebGPU device. */
  readonly pid: number;
  /**
   * Thread id: agent id + 1 (1 is the main agent); 1000 + k for the intra-op pool's worker thread k; 1 on the
   * device (its queue).
   */
  readonly tid: number;
  /** Start, in microseconds (absent on metadata). */
  readonly ts?: number;
  /** Duration, in microseconds (complete events). */
  readonly dur?: number;
  /** Flow id (flow events). */
  readonly id?: number;
  /** Flow end binding: `e`, the enclosing slice (flow ends). */
  readonly bp?: 'e';
  /** Shapes, dtypes, device and the other recorded details; the name of a process or thread. */
  readonly args?: Readonly<Record<string, unknown>>;
}

/** A Chrome trace object. */
export interface ChromeTrace {
  /** The events. */
  readonly traceEvents: ChromeTraceEvent[];
  /** How viewers show times. */
  readonly displayTimeUnit: 'ms';
}

const CPU_PID = 1, DEVICE_PID = 2, POOL_TID = 1000;
const round3 = (us: number) => Math.round(us * 1000) / 1000;

/**
 * The Chrome trace object (`{traceEvents: [...]}`, times in microseconds) of recorded events: one thread per
 * agent (`tid` = agent id + 1, named), complete `X` events with PyTorch's `Input Dims` / `Input type` args plus
 * the key path; with kernels, a WebGPU process whose kernels are linked to their calls by flow events.
 *
 * @example
 * ```ts
 * import { chromeTrace } from './profiler_report.ts';
 * chromeTrace([]).traceEvents.length; // 1: the process name
 * ```
 */
export function chromeTrace(
  events: readonly ProfilerEvent[],
  kernels: readonly DeviceKernelEvent[] = [],
  chunks: readonly ThreadChunkEvent[] = [],
): ChromeTrace {
  const out: ChromeTraceEvent[] = [
    { ph: 'M', name: 'process_name', pid: CPU_PID, tid: 0, args: { name: 'Switchyard agents' } },
  ];
  const agents = [...new Set(events.map((e) => e.agent))].sort((a, b) => a - b);
  for (const a of agents) {
    out.push({
      ph: 'M',
      name: 'thread_name',
      pid: CPU_PID,
      tid: a + 1,
      args: { name: a === 0 ? 'agent 0 (main)' : `agent ${a}` },
    });
  }
  const byId = new Map<number, ProfilerEvent>();
  for (const e of events) {
    byId.set(e.id, e);
    const args: Record<string, unknown> = {
      'Input Dims': e.inputShapes,
      'Input type': e.inputDtypes,
      'Device': e.device,
      'Dispatch keys': e.keyPath.join(' -> '),
      'Bytes allocated': e.bytesAllocated,
      'Agent': e.agent,
    };
    if (e.deviceTotalUs !== undefined) args['Device time total (us)'] = round3(e.deviceTotalUs);
    out.push({
      ph: 'X',
      cat: 'cpu_op',
      name: e.overload === '' ? e.name : `${e.name}.${e.overload}`,
      pid: CPU_PID,
      tid: e.agent + 1,
      ts: round3(e.startUs),
      dur: round3(e.totalUs),
      args,
    });
  }
  const poolThreads = [...new Set(chunks.filter((c) => c.thread > 0).map((c) => c.thread))].sort((a, b) => a - b);
  for (const k of poolThreads) {
    out.push({ ph: 'M', name: 'thread_name', pid: CPU_PID, tid: POOL_TID + k, args: { name: `intra-op thread ${k}` } });
  }
  for (const c of chunks) {
    out.push({
      ph: 'X',
      cat: 'thread_chunk',
      name: c.kernel,
      pid: CPU_PID,
      // The calling agent's own chunks nest inside the call on its thread.
      tid: c.thread === 0 ? c.agent + 1 : POOL_TID + c.thread,
      ts: round3(c.startUs),
      dur: round3(c.durUs),
      args: { 'Chunk': c.chunk, 'Call id': c.op, 'Issued by': byId.get(c.op)?.name ?? '' },
    });
  }
  if (kernels.length > 0) {
    out.push(
      { ph: 'M', name: 'process_name', pid: DEVICE_PID, tid: 0, args: { name: `WebGPU ${kernels[0].device}` } },
      { ph: 'M', name: 'thread_name', pid: DEVICE_PID, tid: 1, args: { name: 'queue' } },
    );
  }
  for (const k of kernels) {
    const op = byId.get(k.op);
    out.push({
      ph: 'X',
      cat: 'kernel',
      name: k.name,
      pid: DEVICE_PID,
      tid: 1,
      ts: round3(k.startUs),
      dur: round3(k.durUs),
      args: { 'Device': k.device, 'Issued by': op === undefined ? '' : op.name, 'Call id': k.op },
    });
    if (op === undefined) continue;
    // PyTorch's Kineto links a launch to its kernel the same way: a flow from the call's slice to the kernel's.
    const flow = { name: 'ac2g', cat: 'ac2g', id: k.id + 1 } as const;
    out.push(
      { ph: 's', ...flow, pid: CPU_PID, tid: op.agent + 1, ts: round3(op.startUs) },
      { ph: 'f', bp: 'e', ...flow, pid: DEVICE_PID, tid: 1, ts: round3(k.startUs) },
    );
  }
  return { traceEvents: out, displayTimeUnit: 'ms' };
}

/**
 * Writes the Chrome trace of recorded events (and kernels) to `path` (JSON).
 *
 * @example
 * ```ts
 * import { writeChromeTrace } from './profiler_report.ts';
 * writeChromeTrace([], Deno.makeTempFileSync({ suffix: '.json' }));
 * ```
 */
export function writeChromeTrace(
  events: readonly ProfilerEvent[],
  path: string,
  kernels: readonly DeviceKernelEvent[] = [],
  chunks: readonly ThreadChunkEvent[] = [],
): void {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError(`exportChromeTrace(): argument 'path' must be a non-empty string, not ${typeof path}`);
  }
  hostFileSystem('exportChromeTrace()').writeFileSync(path, JSON.stringify(chromeTrace(events, kernels, chunks)));
}
