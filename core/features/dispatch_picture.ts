/**
 * Pictures of dispatch: an SVG grid of an operator's computed table (runtime keys × where each slot's kernel
 * comes from) and an SVG of a call's path through the keys. `tools/dispatch_picture.ts` writes them as one
 * HTML page.
 *
 * Note [Which path a picture shows]
 * The path starts from the keyset a call computes (the tensor's keys, plus the agent's include set, minus its
 * exclude set) and visits its keys from the highest down. A fallthrough slot is skipped; a kernel that wraps
 * the call (an autograd kernel, a feature fallback at Profiler, Python or Tracer) hands it to the keys below
 * itself, as the real ones do with `redispatch`; the path ends at the first kernel that computes: a backend
 * kernel, a composite (a CompositeImplicitAutograd kernel decomposes there), or a missing slot (an error).
 *
 * @module
 */
import {
  allRuntimeKeys,
  DispatchKey,
  dispatchKeyName,
  parseDispatchKey,
  toFunctionalityKey,
} from '../dispatch/dispatch_key.ts';
import { DispatchKeySet, keyHi } from '../dispatch/dispatch_key_set.ts';
import { localKeys } from '../dispatch/local_dispatch_key_set.ts';
import type { ComputedTableRow, OperatorHandle } from '../dispatch/operator_handle.ts';
import { type DeviceLike, toDevice } from '../tensor/device.ts';
import { tensorKeySet } from '../tensor/tensor.ts';
import { keyPathOf } from './profiler.ts';

const SOURCES = [
  'kernel',
  'default backend kernel',
  'math kernel',
  'autograd kernel',
  'backend fallback',
  'fallthrough',
  'ambiguous autogradother',
  'missing',
] as const;

type Column = (typeof SOURCES)[number];

const COLORS: Readonly<Record<Column, string>> = {
  'kernel': '#4e79a7',
  'default backend kernel': '#76b7b2',
  'math kernel': '#f28e2b',
  'autograd kernel': '#e15759',
  'backend fallback': '#59a14f',
  'fallthrough': '#bab0ac',
  'ambiguous autogradother': '#b07aa1',
  'missing': '#ffffff',
};

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function columnOf(row: ComputedTableRow | undefined): Column {
  if (row === undefined) return 'missing';
  return row.fallthrough ? 'fallthrough' : row.source;
}

function rowsByKey(op: OperatorHandle): Map<string, ComputedTableRow> {
  return new Map(op.computedTable().map((r) => [r.key, r]));
}

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${x}" y="${y}" ${attrs}>${escapeXml(s)}</text>`;
}

/**
 * The computed dispatch table of an operator as an SVG grid: one row per runtime key, one column per kernel
 * source (PyTorch's provenance tags, with fallthrough apart), the kernel's name at the right; hovering a cell
 * shows the kernel's debug string.
 *
 * @example
 * ```ts
 * import { Dispatcher, dispatchTableSvg, registerOperators } from '../../mod.ts';
 * registerOperators();
 * const svg = dispatchTableSvg(Dispatcher.singleton().findSchemaOrThrow('aten::add', 'Tensor'));
 * svg.startsWith('<svg'); // true
 * ```
 */
export function dispatchTableSvg(op: OperatorHandle): string {
  const rows = rowsByKey(op);
  const keys = allRuntimeKeys().filter((k) => k !== DispatchKey.Undefined || rows.has('Undefined'));
  const keyW = 170, cellW = 28, cellH = 18, top = 150, left = 10;
  const nameX = left + keyW + SOURCES.length * cellW + 10;
  const width = nameX + 420, height = top + keys.length * cellH + 20;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="12">`,
    text(left, 18, `${op.name}: computed dispatch table`, 'font-size="15" font-weight="bold"'),
  ];
  SOURCES.forEach((s, i) => {
    const x = left + keyW + i * cellW + cellW / 2;
    out.push(`<text transform="translate(${x + 4},${top - 6}) rotate(-60)">${escapeXml(s)}</text>`);
  });
  keys.forEach((k, r) => {
    const name = dispatchKeyName(k);
    const row = rows.get(name);
    const col = columnOf(row);
    const y = top + r * cellH;
    if (r % 2 === 0) {
      out.push(`<rect x="${left}" y="${y}" width="${width - 2 * left}" height="${cellH}" fill="#f4f4f4"/>`);
    }
    out.push(text(left + 4, y + 13, name));
    SOURCES.forEach((s, i) => {
      const x = left + keyW + i * cellW;
      const fill = s === col ? COLORS[s] : 'none';
      out.push(
        `<rect x="${x + 3}" y="${y + 2}" width="${cellW - 6}" height="${cellH - 4}" fill="${fill}" stroke="#999">` +
          `<title>${escapeXml(`${name}: ${s === col ? (row?.kernel ?? 'missing') : ''}`)}</title></rect>`,
      );
    });
    out.push(text(nameX, y + 13, row === undefined ? '' : row.kernel, 'fill="#333"'));
  });
  out.push('</svg>');
  return out.join('\n');
}

/** Options of {@linkcode dispatchPath} and {@linkcode dispatchPathSvg}. */
export interface PathOptions {
  /** Device of the tensor arguments (default cpu). */
  readonly device?: DeviceLike;
  /** Tensors made in inference mode (no autograd keys; default false). */
  readonly inference?: boolean;
  /** Keys added to the include set for the call (e.g. `['Profiler']`, `['Python']`); names or keys. */
  readonly include?: ReadonlyArray<DispatchKey | string>;
  /** Keys added to the exclude set for the call. */
  readonly exclude?: ReadonlyArray<DispatchKey | string>;
}

/** One step of a call's path. */
export interface PathStep {
  /** Runtime key name. */
  readonly key: string;
  /** The kernel's debug string (`missing` for a missing slot). */
  readonly kernel: string;
  /** Where the kernel comes from, `fallthrough` for a skipped slot. */
  readonly source: string;
  /** What happens there: skipped, wraps and redispatches below, computes, decomposes, or raises. */
  readonly action: 'skip' | 'redispatch' | 'compute' | 'decompose' | 'error';
}

const WRAPPING_FUNCTIONALITIES = new Set<DispatchKey>([
  DispatchKey.AutogradFunctionality,
  DispatchKey.AutogradOther,
  DispatchKey.ADInplaceOrView,
  DispatchKey.Profiler,
  DispatchKey.Tracer,
  DispatchKey.Python,
  DispatchKey.BackendSelect,
  DispatchKey.AutocastCPU,
  DispatchKey.AutocastWebGPU,
  DispatchKey.Functionalize,
  DispatchKey.Batched,
  DispatchKey.VmapMode,
]);

function toKey(k: DispatchKey | string): DispatchKey {
  return typeof k === 'string' ? parseDispatchKey(k) : k;
}

/**
 * The path of a call of `op` with tensors on a device through the keys (see Note [Which path a picture shows]).
 *
 * @example
 * ```ts
 * import { Dispatcher, dispatchPath, registerOperators } from '../../mod.ts';
 * registerOperators();
 * const add = Dispatcher.singleton().findSchemaOrThrow('aten::add', 'Tensor');
 * dispatchPath(add).map((s) => s.key); // ['AutogradCPU', 'ADInplaceOrView', 'BackendSelect', 'CPU']
 * ```
 */
export function dispatchPath(op: OperatorHandle, options: PathOptions = {}): PathStep[] {
  if (options === null || typeof options !== 'object') throw new TypeError('dispatchPath(): options must be an object');
  const device = toDevice(options.device ?? 'cpu');
  const deviceKeys = tensorKeySet(device, options.inference ?? false);
  // A factory has no tensor argument: its keyset is the include set until BackendSelect adds the device's.
  const factory = op.schema !== undefined && op.schema.dispatchArgumentIndices.length === 0;
  const tensorKeys = factory ? new DispatchKeySet(0, 0) : deviceKeys;
  let ks = new DispatchKeySet(tensorKeys.hi | localKeys.includedHi, tensorKeys.lo | localKeys.includedLo);
  for (const k of options.include ?? []) ks = ks.add(toKey(k));
  let excluded = new DispatchKeySet(localKeys.excludedHi, 0);
  for (const k of options.exclude ?? []) excluded = excluded.add(toKey(k));
  ks = ks.sub(excluded);
  const rows = rowsByKey(op);
  const steps: PathStep[] = [];
  let pending = keyPathOf(ks).slice();
  while (pending.length > 0) {
    const key = pending.shift()!;
    const row = rows.get(key);
    if (row === undefined) {
      steps.push({ key, kernel: 'missing', source: 'missing', action: 'error' });
      break;
    }
    if (row.fallthrough) {
      steps.push({ key, kernel: row.kernel, source: 'fallthrough', action: 'skip' });
      continue;
    }
    const functionality = toFunctionalityKey(parseDispatchKey(key));
    const action: PathStep['action'] = row.source === 'math kernel'
      ? 'decompose'
      : row.source === 'ambiguous autogradother'
      ? 'error'
      : WRAPPING_FUNCTIONALITIES.has(functionality)
      ? 'redispatch'
      : 'compute';
    steps.push({ key, kernel: row.kernel, source: row.source, action });
    if (action !== 'redispatch') break;
    if (functionality === DispatchKey.BackendSelect) {
      // BackendSelect redispatches to the backend of the call's device argument.
      const below = ks.or(new DispatchKeySet(deviceKeys.hi & keyHi(DispatchKey.Dense), deviceKeys.lo));
      pending = keyPathOf(below).filter((k) => toFunctionalityKey(parseDispatchKey(k)) < DispatchKey.BackendSelect);
    }
  }
  return steps;
}

/**
 * A call's path through the keys as an SVG: one box per key visited, from the highest down, coloured by the
 * kernel's source, skipped (fallthrough) keys dashed.
 *
 * @example
 * ```ts
 * import { Dispatcher, dispatchPathSvg, registerOperators } from '../../mod.ts';
 * registerOperators();
 * const mm = Dispatcher.singleton().findSchemaOrThrow('aten::mm');
 * dispatchPathSvg(mm, { include: ['Profiler'] }); // AutogradCPU -> ... -> Profiler -> CPU
 * ```
 */
export function dispatchPathSvg(op: OperatorHandle, options: PathOptions = {}): string {
  const steps = dispatchPath(op, options);
  const boxW = 560, boxH = 34, gap = 16, left = 10, top = 40;
  const height = top + steps.length * (boxH + gap) + 10;
  const label = [
    `device ${String(toDevice(options.device ?? 'cpu'))}`,
    options.inference ? 'inference tensors' : '',
    (options.include ?? []).length > 0
      ? `include ${(options.include ?? []).map((k) => dispatchKeyName(toKey(k))).join(', ')}`
      : '',
  ].filter((s) => s !== '').join('; ');
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${
      boxW + 2 * left + 40
    }" height="${height}" font-family="monospace" font-size="12">`,
    '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="4" refY="4" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
    text(left, 18, `${op.name}: path of a call (${label})`, 'font-size="14" font-weight="bold"'),
  ];
  steps.forEach((s, i) => {
    const y = top + i * (boxH + gap);
    const column = (s.source === 'fallthrough' ? 'fallthrough' : s.source) as Column;
    const fill = COLORS[column] ?? '#ffffff';
    const dash = s.action === 'skip' ? ' stroke-dasharray="4 3" fill-opacity="0.35"' : '';
    out.push(
      `<rect x="${left}" y="${y}" width="${boxW}" height="${boxH}" rx="5" fill="${fill}" stroke="#333"${dash}/>`,
    );
    out.push(text(left + 8, y + 14, `${s.key}  [${s.source}]  ${s.action}`, 'font-weight="bold"'));
    out.push(text(left + 8, y + 28, s.kernel.length > 70 ? s.kernel.slice(0, 67) + '...' : s.kernel));
    if (i + 1 < steps.length) {
      out.push(
        `<line x1="${left + 40}" y1="${y + boxH}" x2="${left + 40}" y2="${
          y + boxH + gap - 2
        }" stroke="#555" marker-end="url(#arrow)"/>`,
      );
    }
  });
  out.push('</svg>');
  return out.join('\n');
}

/**
 * An HTML page with an operator's table grid, its `dumpComputedTable()` text and the paths of a call on each
 * backend (and with the Profiler key on).
 *
 * @example
 * ```ts
 * import { Dispatcher, dispatchPictureHtml, registerOperators } from '../../mod.ts';
 * registerOperators();
 * const html = dispatchPictureHtml(Dispatcher.singleton().findSchemaOrThrow('aten::relu'));
 * ```
 */
export function dispatchPictureHtml(op: OperatorHandle, paths: readonly PathOptions[] = defaultPaths()): string {
  const legend = SOURCES.map((s) =>
    `<span style="display:inline-block;margin-right:12px"><span style="display:inline-block;width:12px;height:12px;` +
    `background:${COLORS[s]};border:1px solid #999"></span> ${escapeXml(s)}</span>`
  ).join('');
  return [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${escapeXml(op.name)} dispatch</title></head>`,
    '<body style="font-family:sans-serif">',
    `<h1>${escapeXml(op.name)}</h1>`,
    `<p><code>${escapeXml(String(op.schema ?? op.name))}</code></p>`,
    `<p>${legend}</p>`,
    dispatchTableSvg(op),
    '<h2>Paths of a call</h2>',
    ...paths.map((p) => `<div>${dispatchPathSvg(op, p)}</div>`),
    '<h2>dumpComputedTable()</h2>',
    `<pre>${escapeXml(op.dumpComputedTable())}</pre>`,
    '</body></html>',
    '',
  ].join('\n');
}

function defaultPaths(): PathOptions[] {
  return [{ device: 'cpu' }, { device: 'cpu', include: ['Profiler'] }, { device: 'meta' }, {
    device: 'cpu',
    inference: true,
  }];
}
