/**
 * Writes a picture of an operator's dispatch: its computed table as a grid (keys × kernel source) and the
 * paths of a call through the keys, as an HTML page (or one SVG), with the Profiler, Python and Tracer fallbacks
 * registered as they are once those features are used.
 *
 * Usage:
 *   deno run -A tools/dispatch_picture.ts aten::add.Tensor [--out add.html]
 *   deno run -A tools/dispatch_picture.ts aten::mm --svg table|path [--device cpu] [--include Profiler] [--inference]
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import {
  Dispatcher,
  dispatchPathSvg,
  dispatchPictureHtml,
  dispatchTableSvg,
  type PathOptions,
  registerOperators,
  registerProfilerFallback,
  registerPythonFallback,
  registerTracerFallback,
} from '../mod.ts';

function usage(message: string): never {
  console.error(
    `${message}\nusage: dispatch_picture.ts <ns::op[.overload]> [--out FILE] [--svg table|path] ` +
      '[--device cpu|meta|webgpu] [--include KEY]... [--inference]',
  );
  process.exit(2);
}

const argv = process.argv.slice(2);
const name = argv.find((a, i) =>
  !a.startsWith('--') && (i === 0 || !argv[i - 1].startsWith('--') || argv[i - 1] === '--inference')
);
if (name === undefined) usage('missing operator name');
let out: string | undefined;
let svg: 'table' | 'path' | undefined;
let device = 'cpu';
const include: string[] = [];
let inference = false;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === name) continue;
  if (a === '--out') out = argv[++i];
  else if (a === '--svg') {
    const v = argv[++i];
    if (v !== 'table' && v !== 'path') usage(`--svg takes table or path, got ${v}`);
    svg = v;
  } else if (a === '--device') device = argv[++i];
  else if (a === '--include') include.push(argv[++i]);
  else if (a === '--inference') inference = true;
  else usage(`unknown argument ${a}`);
}

registerOperators();
// The pictures show the runtime with the feature fallbacks (profiler, dispatch modes, tracer) in place.
registerProfilerFallback();
registerPythonFallback();
registerTracerFallback();
const dot = name.indexOf('.', name.indexOf('::') + 2);
const op = Dispatcher.singleton().findSchema(dot < 0 ? name : name.slice(0, dot), dot < 0 ? '' : name.slice(dot + 1));
if (op === undefined) usage(`unknown operator ${name}`);
const path: PathOptions = { device: device as 'cpu', include, inference };
const content = svg === 'table'
  ? dispatchTableSvg(op)
  : svg === 'path'
  ? dispatchPathSvg(op, path)
  : dispatchPictureHtml(op, include.length > 0 || inference || device !== 'cpu' ? [path] : undefined);
const file = out ?? `${name.replace(/[^A-Za-z0-9_.]/g, '_')}.${svg === undefined ? 'html' : 'svg'}`;
writeFileSync(file, content);
console.log(`wrote ${file}`);
