/**
 * The README's benchmark tables, written from `bench/results/*.json` so that they cannot drift from the measured
 * figures. Each table sits between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` in README.md; the prose
 * around them is written by hand and names no figure that is not in a table.
 *
 * A results file keeps its suite's last runs per runtime (`history`, see bench/_report.ts); a cell gives the range
 * of its figure over those runs (one value when they agree to three digits), and a ratio to a peer is computed
 * within each run before taking the range, so that peer and baseline always come from the same run.
 *
 * Run: `deno run -A bench/figures.ts` rewrites the tables; `--check` exits with 1 when README.md differs (a test in
 * `npm test` does the same check).
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { keptRuns, type RunRecord } from './_report.ts';

const here = new URL('./', import.meta.url);
const readmeUrl = new URL('../README.md', import.meta.url);

type Runtime = 'deno' | 'bun';

/** The kept runs of `suite` under `runtime` (oldest first), or none when it was never run there. */
function runsOf(suite: string, runtime: Runtime): RunRecord[] {
  return keptRuns(new URL(`results/${suite}-${runtime}.json`, here));
}

/** bench/results/pytorch.json (written by hand with bench/pytorch/baseline.py), if present. */
function pytorchResults(): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(new URL('results/pytorch.json', here), 'utf8'));
  } catch {
    return undefined;
  }
}

/** "one thread / all threads" of a PyTorch figure at a dotted path, formatted; `–` without results. */
function pytorchCell(path: string, format: Format = {}, scale = 1): string {
  const results = pytorchResults();
  const read = (threads: string) => {
    let v: unknown = results?.[threads];
    for (const key of path.split('.')) v = (v as Record<string, unknown> | undefined)?.[key];
    return typeof v === 'number' ? v * scale : undefined;
  };
  const one = read('one_thread'), all = read('all_threads');
  if (one === undefined || all === undefined) return '–';
  const show = (v: number) => cell([{ date: '', cpu: null, p50_ns: {}, derived: { v } }], derived('v'), format);
  return `${show(one)} / ${show(all)}`;
}

/** A figure read from one run: undefined when that run lacks it. */
type Read = (run: RunRecord) => number | undefined;

/** A value at a dotted path of a run's derived figures. */
const derived = (path: string): Read => (run) => {
  let v: unknown = run.derived;
  for (const key of path.split('.')) v = (v as Record<string, unknown> | undefined)?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/** The p50 of a benchmark, in nanoseconds. */
const p50 = (name: string): Read => (run) => run.p50_ns[name];

/** `a / b` within one run. */
const ratio = (a: Read, b: Read): Read => (run) => {
  const x = a(run), y = b(run);
  return x === undefined || y === undefined || y === 0 ? undefined : x / y;
};

const digits3 = (x: number): string => {
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(2);
};

/** The unit that suits a time in nanoseconds, and its size in nanoseconds. */
function timeUnit(ns: number): [number, string] {
  if (ns >= 1e9) return [1e9, 's'];
  if (ns >= 1e6) return [1e6, 'ms'];
  if (ns >= 1e3) return [1e3, 'µs'];
  return [1, 'ns'];
}

/** How one cell shows its values: a time (nanoseconds, shown in a suiting unit), or a number with a unit or suffix. */
interface Format {
  readonly unit?: string;
  readonly time?: boolean;
  readonly suffix?: string;
}

/** The range of `read` over `runs`, formatted; `–` when no run has it. */
function cell(runs: readonly RunRecord[], read: Read, format: Format = {}): string {
  const values = runs.map(read).filter((v): v is number => v !== undefined);
  if (values.length === 0) return '–';
  const lo = Math.min(...values), hi = Math.max(...values);
  if (format.time === true) {
    const [size, unit] = timeUnit(lo);
    const a = digits3(lo / size), b = digits3(hi / size);
    return `${a === b ? a : `${a}–${b}`} ${unit}`;
  }
  const text = digits3(lo) === digits3(hi) ? digits3(lo) : `${digits3(lo)}–${digits3(hi)}`;
  return `${text}${format.unit === undefined ? '' : ` ${format.unit}`}${format.suffix ?? ''}`;
}

/** A markdown table, columns padded as `deno fmt` pads them. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const width = (s: string) => [...s].length;
  const widths = header.map((h, i) => Math.max(3, width(h), ...rows.map((r) => width(r[i]))));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c + ' '.repeat(widths[i] - width(c))).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** "runs: Deno 2 (2026-11-27), Bun 1 (2026-11-21)": which runs a table draws on. */
function provenance(suite: string): string {
  const part = (runtime: Runtime, label: string) => {
    const runs = runsOf(suite, runtime);
    if (runs.length === 0) return `${label}: no run`;
    const days = [...new Set(runs.map((r) => r.date.slice(0, 10)))];
    return `${label}: ${runs.length} run${runs.length === 1 ? '' : 's'} (${days.join(', ')})`;
  };
  return `Ranges over the kept runs of \`bench/results/${suite}-*.json\`; ${part('deno', 'Deno')}, ${
    part('bun', 'Bun')
  }.`;
}

/** Where the PyTorch column comes from. */
function pytorchProvenance(): string {
  const r = pytorchResults();
  if (r === undefined) return 'No PyTorch baseline in bench/results/pytorch.json.';
  const load = Array.isArray(r.load_average) ? ` at load average ${Number(r.load_average[0]).toFixed(1)}` : '';
  const blas = typeof r.blas === 'string' ? r.blas.split('/').pop() : 'an unknown BLAS';
  return `PyTorch ${r.torch} with ${blas}: \`bench/pytorch/baseline.py\`, run by hand on ${
    String(r.date).slice(0, 10)
  }${load}.`;
}

function dispatchTable(): string {
  const d = runsOf('dispatch', 'deno'), b = runsOf('dispatch', 'bun');
  const rows: [string, Read, Format, string][] = [
    ['unboxed dispatch, 2 tensor-like args, no-op kernel', p50('op.call (dispatch)'), { time: true }, '≤ 15 ns'],
    ['same kernel called directly through a variable', p50('direct call through a variable'), { time: true }, ''],
    [
      'dispatch / direct call (same run)',
      ratio(p50('op.call (dispatch)'), p50('direct call through a variable')),
      { suffix: '×' },
      '≤ 2×',
    ],
    [
      'boxed fallback round trip (Tracer fallback → redispatchBoxed → CPU kernel)',
      p50('boxed fallback round trip (Tracer -> redispatchBoxed -> CPU)'),
      { time: true },
      '≤ 150 ns',
    ],
    [
      'register + deregister one kernel with 1,000 operators defined',
      p50('register + deregister one kernel, 1,000 ops defined'),
      { time: true },
      '≤ 50 µs',
    ],
  ];
  return table(
    ['benchmark', 'Deno', 'Bun', 'target'],
    rows.map(([label, read, format, target]) => [label, cell(d, read, format), cell(b, read, format), target]),
  );
}

function tensorOpsTable(): string {
  const d = runsOf('tensor_ops', 'deno'), b = runsOf('tensor_ops', 'bun');
  const add1 = derived('add_1_element_p50_ns.switchyard');
  const both = (read: Read, format: Format): [string, string] => [cell(d, read, format), cell(b, read, format)];
  const peers = (cpu: Read, wasm: Read, format: Format) => `${cell(d, cpu, format)} / ${cell(d, wasm, format)}`;
  const gbps = (what: string, lib: string) => derived(`${what}.gbps.${lib}`);
  const gflops = (what: string, lib: string) => derived(`matmul.${what}.${lib}.gflops`);
  const rows: string[][] = [
    [
      '`add` of two 1-element float32 tensors, with allocation and disposal',
      ...both(add1, { time: true }),
      peers(derived('add_1_element_p50_ns.tfjs-cpu'), derived('add_1_element_p50_ns.tfjs-wasm'), { time: true }),
      pytorchCell('add_1_element_ns', { time: true }),
    ],
    [
      'TensorFlow.js time / ours for that `add` (cpu / wasm, same run)',
      ...both(ratio(derived('add_1_element_p50_ns.tfjs-wasm'), add1), { suffix: '× (wasm)' }),
      peers(
        ratio(derived('add_1_element_p50_ns.tfjs-cpu'), add1),
        ratio(derived('add_1_element_p50_ns.tfjs-wasm'), add1),
        { suffix: '×' },
      ),
      '–',
    ],
    [
      'all validation of that `add` (arguments, output geometry, boundary), share',
      ...both(derived('add_1_element_p50_ns.validation_share'), {}),
      'target ≤ 0.1',
      '–',
    ],
    [
      '`add` of 16M float32 (GB/s)',
      ...both(gbps('add_16M', 'switchyard'), {}),
      peers(gbps('add_16M', 'tfjs-cpu'), gbps('add_16M', 'tfjs-wasm'), {}),
      `${pytorchCell('add_16M_gbps')} (\`out=\`: ${pytorchCell('add_16M_out_gbps')})`,
    ],
    [
      '`add` 16M, ratio to a 64 MB `TypedArray.set` copy (same run)',
      ...both(derived('add_16M.switchyard_over_copy'), {}),
      '–',
      '–',
    ],
    [
      '`sum` of 16M float32 (GB/s)',
      ...both(gbps('sum_16M', 'switchyard'), {}),
      peers(gbps('sum_16M', 'tfjs-cpu'), gbps('sum_16M', 'tfjs-wasm'), {}),
      pytorchCell('sum_16M_gbps'),
    ],
    ['`sum` 16M, ratio to copy (same run)', ...both(derived('sum_16M.switchyard_over_copy'), {}), '–', '–'],
  ];
  for (const n of [256, 1024]) {
    const plain = `matmul ${n}x${n}`, transposed = `matmul ${n}x${n}, a transposed`;
    rows.push([
      `float32 matmul ${n} (GFLOP/s)`,
      ...both(gflops(plain, 'switchyard'), {}),
      peers(gflops(plain, 'tfjs-cpu'), gflops(plain, 'tfjs-wasm'), {}),
      pytorchCell(`matmul_gflops.${n}.plain`),
    ]);
    rows.push([
      `float32 matmul ${n}, first operand a transposed view (GFLOP/s)`,
      ...both(gflops(transposed, 'switchyard'), {}),
      peers(gflops(transposed, 'tfjs-cpu'), gflops(transposed, 'tfjs-wasm'), {}),
      pytorchCell(`matmul_gflops.${n}.a_transposed`),
    ]);
    const viaTranspose = `${transposed}, tfjs transpose then matMul`;
    rows.push([
      `float32 matmul ${n}, TensorFlow.js with an explicit \`transpose\` then \`matMul\` (GFLOP/s)`,
      '–',
      '–',
      peers(gflops(viaTranspose, 'tfjs-cpu'), gflops(viaTranspose, 'tfjs-wasm'), {}),
      '–',
    ]);
  }
  return table(['benchmark', 'Deno', 'Bun', 'TensorFlow.js cpu / wasm (Deno)', 'PyTorch 1.13 (1 / 2 threads)'], rows);
}

function trainingTable(): string {
  const d = runsOf('training', 'deno'), b = runsOf('training', 'bun');
  const step = (lib: string): Read => (run) => {
    const ms = derived(`step_p50_ms.${lib}`)(run);
    return ms === undefined ? undefined : ms * 1e6;
  };
  const overhead = derived('autograd_overhead_p50_ns');
  return table(['benchmark', 'Deno', 'Bun', 'peers (same runs: Deno / Bun)', 'PyTorch 1.13 (1 / 2 threads)'], [
    [
      'SGD step, MLP 784-256-10, batch 64, ReLU, cross-entropy',
      cell(d, step('switchyard'), { time: true }),
      cell(b, step('switchyard'), { time: true }),
      `tfjs-wasm ${cell(d, step('tfjs-wasm'), { time: true })} / ${cell(b, step('tfjs-wasm'), { time: true })}`,
      pytorchCell('sgd_step_ms', { time: true }, 1e6),
    ],
    [
      'tfjs-wasm time / ours for that step',
      cell(d, ratio(step('tfjs-wasm'), step('switchyard')), { suffix: '×' }),
      cell(b, ratio(step('tfjs-wasm'), step('switchyard')), { suffix: '×' }),
      `tfjs-cpu ${cell(d, step('tfjs-cpu'), { time: true })} / ${cell(b, step('tfjs-cpu'), { time: true })}`,
      '–',
    ],
    [
      'autograd overhead of one recorded op on 1-element tensors',
      cell(d, overhead, { time: true }),
      cell(b, overhead, { time: true }),
      'target ≤ 1 µs',
      pytorchCell('autograd_overhead_ns', { time: true }),
    ],
  ]);
}

function autogradEngineTable(): string {
  const d = runsOf('autograd_engine', 'deno'), b = runsOf('autograd_engine', 'bun');
  const graphs: [string, string][] = [
    ['chain', 'chain: `y = y.mul(1.0001)` n times'],
    ['wide', 'wide: `cat` of n 1-element products, summed (n ready)'],
    ['chain (engine only)', 'chain of pass-through nodes (the engine alone)'],
    ['wide (engine only)', 'one node with n pass-through inputs (the engine alone)'],
  ];
  const per = (runs: RunRecord[], graph: string) =>
    ['1000', '10000', '100000'].map((n) => cell(runs, derived(`ns_per_node_p50.${graph}.${n}`), { time: true }))
      .join(' / ');
  return table(
    ['graph', 'Deno (1k / 10k / 100k nodes)', 'Bun (1k / 10k / 100k nodes)'],
    graphs.map(([key, label]) => [label, per(d, key), per(b, key)]),
  );
}

function startupTable(): string {
  const d = runsOf('startup', 'deno'), b = runsOf('startup', 'bun');
  const ms = (path: string): Read => (run) => {
    const v = derived(path)(run);
    return v === undefined ? undefined : v * 1e6;
  };
  const row = (label: string, path: string, target = ''): string[] => [
    label,
    cell(d, ms(path), { time: true }),
    cell(b, ms(path), { time: true }),
    target,
  ];
  return table(['fresh process', 'Deno', 'Bun', 'target'], [
    row('an empty script', 'empty_script_ms'),
    row('import `mod.ts` (the sources)', 'import_only_ms'),
    row('import `mod.ts`, one `add`, print it', 'import_and_first_add_ms'),
    row(
      'the difference: what importing the sources costs',
      'startup_cost_ms',
      `≤ 40 ms: ${targetStatus([['Deno', d], ['Bun', b]], 'startup_cost_ms')}`,
    ),
    row('the installed package (its `bun` and `deno` bundles), one `add`', 'package_import_and_first_add_ms'),
    row(
      'the difference: what importing the package costs',
      'package_startup_cost_ms',
      `≤ 40 ms: ${targetStatus([['Deno', d], ['Bun', b]], 'package_startup_cost_ms')}`,
    ),
  ]);
}

function vmapTable(): string {
  const d = runsOf('vmap', 'deno'), b = runsOf('vmap', 'bun');
  const cases: [string, string][] = [
    ['elementwise [256]', '`mul, add, relu, mul` on `[256]`'],
    ['tanh [256]', '`tanh, mul` on `[256]`'],
    ['matmul [16x16]', '`[16, 16]` matmul, relu, sum'],
    ['per-sample grad MLP', 'per-sample gradients, small MLP'],
  ];
  const times = (runs: RunRecord[], c: string) =>
    `${cell(runs, p50(`${c}: vmap x64`), { time: true })} / ${cell(runs, p50(`${c}: loop x64`), { time: true })}`;
  return table(
    ['case (per sample)', 'Deno: loop ÷ vmap', 'Bun: loop ÷ vmap', 'Deno: vmap / loop', 'Bun: vmap / loop'],
    cases.map(([c, label]) => [
      label,
      cell(d, derived(`loop_over_vmap_p50.${c}`), { suffix: '×' }),
      cell(b, derived(`loop_over_vmap_p50.${c}`), { suffix: '×' }),
      times(d, c),
      times(b, c),
    ]),
  );
}

/** Whether every kept run of each runtime costs at most the target: `met`, `not met`, or which runtime meets it. */
function targetStatus(runtimes: ReadonlyArray<readonly [string, readonly RunRecord[]]>, path: string): string {
  const meets = runtimes.map(([name, runs]) => {
    const costs = runs.map(derived(path)).filter((v): v is number => v !== undefined);
    return [name, costs.length > 0 && costs.every((c) => c <= 40)] as const;
  });
  if (meets.every(([, ok]) => ok)) return 'met';
  if (meets.every(([, ok]) => !ok)) return 'not met';
  return meets.map(([name, ok]) => `${ok ? 'met' : 'not met'} (${name})`).join(', ');
}

/** Wraps a paragraph at 120 columns as `deno fmt` wraps markdown prose (inline code spans kept whole). */
function wrap(text: string): string {
  const words = text.match(/(?:`[^`]*`|[^\s`])+/g) ?? [];
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line !== '' && [...line].length + 1 + [...word].length > 120) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

/** Every generated block, by marker name. */
export function generatedBlocks(): Record<string, string> {
  return {
    dispatch: `${dispatchTable()}\n\n${wrap(provenance('dispatch'))}`,
    tensor_ops: `${tensorOpsTable()}\n\n${wrap(`${provenance('tensor_ops')} ${pytorchProvenance()}`)}`,
    training: `${trainingTable()}\n\n${wrap(`${provenance('training')} ${pytorchProvenance()}`)}`,
    autograd_engine: `${autogradEngineTable()}\n\n${wrap(provenance('autograd_engine'))}`,
    startup: `${startupTable()}\n\n${wrap(provenance('startup'))}`,
    vmap: `${vmapTable()}\n\n${wrap(provenance('vmap'))}`,
  };
}

/** `readme` with every marked block replaced by its generated text; throws on a missing marker. */
export function withGeneratedBlocks(readme: string): string {
  let out = readme;
  for (const [name, body] of Object.entries(generatedBlocks())) {
    const open = `<!-- figures:${name} -->`, close = `<!-- /figures:${name} -->`;
    const start = out.indexOf(open), end = out.indexOf(close);
    if (start < 0 || end < start) throw new Error(`README.md has no ${open} ... ${close} block`);
    out = `${out.slice(0, start + open.length)}\n\n${body}\n\n${out.slice(end)}`;
  }
  return out;
}

if (import.meta.main) {
  const readme = readFileSync(readmeUrl, 'utf8');
  const fresh = withGeneratedBlocks(readme);
  if (process.argv.includes('--check')) {
    if (fresh !== readme) {
      console.error('README.md figures differ from bench/results: run `npm run bench:figures`');
      process.exitCode = 1;
    }
  } else if (fresh !== readme) {
    writeFileSync(readmeUrl, fresh);
    console.log('README.md figures rewritten from bench/results');
  }
}
