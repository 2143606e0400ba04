/**
 * Profiler results as PyTorch prints them: `key_averages()` (events grouped by name, optionally by input
 * shapes), its `table(sort_by=...)` text, and the Chrome trace JSON that Perfetto and `chrome://tracing` open.
 *
 * The table follows PyTorch's `torch.autograd.profiler_util._build_table` for CPU events: a right-aligned Name
 * column as wide as the longest name plus 4 (at most 55), twelve-character numeric columns two spaces apart,
 * times as `1.234us` / `1.234ms` / `1.234s`, memory as `b` / `Kb` / `Mb` / `Gb`, and a closing
 * `Self CPU time total:` line.
 *
 * @module
 */
import { hostFileSystem } from '../tensor/host_files.ts';
import { ValueError } from '../dispatch/errors.ts';
import type { ProfilerEvent } from './profiler.ts';

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
}

/** Sort keys of {@linkcode EventList.table}, PyTorch's `sort_by` names. */
export type SortBy =
  | 'cpu_time_total'
  | 'self_cpu_time_total'
  | 'cpu_time'
  | 'count'
  | 'cpu_memory_usage'
  | 'self_cpu_memory_usage';

const SORT_FIELDS: Readonly<Record<SortBy, keyof FunctionEventAvg>> = {
  cpu_time_total: 'cpuTimeTotal',
  self_cpu_time_total: 'selfCpuTimeTotal',
  cpu_time: 'cpuTime',
  count: 'count',
  cpu_memory_usage: 'cpuMemoryUsage',
  self_cpu_memory_usage: 'selfCpuMemoryUsage',
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
    for (const h of ['Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg']) headers.push([h, 12]);
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
    const pct = (us: number) => `${total === 0 ? '0.00' : ((100 * us) / total).toFixed(2)}%`;
    const out = [separator, line(headers.map(([h]) => h)), separator];
    for (const r of rows) {
      const cells = [
        r.key,
        pct(r.selfCpuTimeTotal),
        formatTime(r.selfCpuTimeTotal),
        pct(r.cpuTimeTotal),
        formatTime(r.cpuTimeTotal),
        formatTime(r.cpuTime),
      ];
      if (showMemory) cells.push(formatMemory(r.cpuMemoryUsage), formatMemory(r.selfCpuMemoryUsage));
      cells.push(String(r.count));
      if (showShapes) cells.push(shapesKey(r.inputShapes));
      out.push(line(cells));
    }
    out.push(separator, `Self CPU time total: ${formatTime(total)}`, '');
    return out.join('\n');
  }
}

/**
 * Groups events by name (and input shapes) with their sums, in order of first appearance.
 *
 * @example
 * ```ts
 * import { keyAverages } from './profiler_report.ts';
 * keyAverages([]).length; // 0
 * ```
 */
export function keyAverages(events: readonly ProfilerEvent[], groupByInputShape = false): EventList {
  const groups = new Map<string, { key: string; events: ProfilerEvent[] }>();
  for (const e of events) {
    const id = groupByInputShape ? `${e.name}\u0000${shapesKey(e.inputShapes)}` : e.name;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, g = { key: e.name, events: [] });
    g.events.push(e);
  }
  const list = new EventList();
  list.groupedByInputShape = groupByInputShape;
  for (const { key, events: es } of groups.values()) {
    let self = 0, total = 0, mem = 0, selfMem = 0;
    for (const e of es) {
      self += e.selfUs;
      total += e.totalUs;
      mem += e.bytesAllocated;
      selfMem += e.selfBytesAllocated;
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
    });
  }
  list.selfCpuTimeTotal = events.reduce((s, e) => s + e.selfUs, 0);
  return list;
}

/** One complete event of the Chrome trace format. */
export interface ChromeTraceEvent {
  /** Phase: a complete event. */
  readonly ph: 'X';
  /** Category. */
  readonly cat: 'cpu_op';
  /** The operator's name. */
  readonly name: string;
  /** Process id. */
  readonly pid: number;
  /** Thread (agent) id. */
  readonly tid: number;
  /** Start, in microseconds. */
  readonly ts: number;
  /** Duration, in microseconds. */
  readonly dur: number;
  /** Shapes, dtypes, device and the other recorded details. */
  readonly args: Readonly<Record<string, unknown>>;
}

/**
 * The Chrome trace object (`{traceEvents: [...]}`, complete `X` events in microseconds) of recorded events, with
 * PyTorch's `Input Dims` / `Input type` args plus the key path.
 *
 * @example
 * ```ts
 * import { chromeTrace } from './profiler_report.ts';
 * chromeTrace([]).traceEvents.length; // 0
 * ```
 */
export function chromeTrace(
  events: readonly ProfilerEvent[],
): { traceEvents: ChromeTraceEvent[]; displayTimeUnit: 'ms' } {
  return {
    traceEvents: events.map((e) => ({
      ph: 'X',
      cat: 'cpu_op',
      name: e.overload === '' ? e.name : `${e.name}.${e.overload}`,
      pid: 1,
      tid: 1,
      ts: Math.round(e.startUs * 1000) / 1000,
      dur: Math.round(e.totalUs * 1000) / 1000,
      args: {
        'Input Dims': e.inputShapes,
        'Input type': e.inputDtypes,
        'Device': e.device,
        'Dispatch keys': e.keyPath.join(' -> '),
        'Bytes allocated': e.bytesAllocated,
      },
    })),
    displayTimeUnit: 'ms',
  };
}

/**
 * Writes the Chrome trace of recorded events to `path` (JSON).
 *
 * @example
 * ```ts
 * import { writeChromeTrace } from './profiler_report.ts';
 * writeChromeTrace([], Deno.makeTempFileSync({ suffix: '.json' }));
 * ```
 */
export function writeChromeTrace(events: readonly ProfilerEvent[], path: string): void {
  if (typeof path !== 'string' || path === '') {
    throw new TypeError(`exportChromeTrace(): argument 'path' must be a non-empty string, not ${typeof path}`);
  }
  hostFileSystem('exportChromeTrace()').writeFileSync(path, JSON.stringify(chromeTrace(events)));
}
