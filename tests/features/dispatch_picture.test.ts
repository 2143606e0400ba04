// Pictures of dispatch: the table grid marks each key's kernel source, and the path of a call follows the keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runScript } from '../_same_runtime.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allRuntimeKeys,
  Dispatcher,
  dispatchPath,
  dispatchPathSvg,
  dispatchPictureHtml,
  dispatchTableSvg,
  type OperatorHandle,
  registerOperators,
  registerProfilerFallback,
  RuntimeError,
} from '../../mod.ts';

function op(name: string, overload = ''): OperatorHandle {
  registerOperators();
  return Dispatcher.singleton().findSchemaOrThrow(name, overload);
}

const steps = (o: OperatorHandle, opts = {}) => dispatchPath(o, opts).map((s) => `${s.key}:${s.action}`);

describe('dispatch pictures', () => {
  it('follow a call through autograd, fallthrough keys and the backend', () => {
    const add = op('aten::add', 'Tensor');
    assert.deepEqual(steps(add), [
      'AutogradCPU:redispatch',
      'ADInplaceOrView:skip',
      'BackendSelect:skip',
      'CPU:compute',
    ]);
    assert.deepEqual(steps(add, { device: 'meta' }).at(-1), 'Meta:compute');
    assert.deepEqual(steps(op('aten::t')).slice(0, 2), ['AutogradCPU:redispatch', 'ADInplaceOrView:redispatch']);
    // A composite decomposes at the autograd key; with inference tensors, at the backend key.
    assert.deepEqual(steps(op('aten::linear')), ['AutogradCPU:decompose']);
    assert.deepEqual(steps(op('aten::linear'), { inference: true }).at(-1), 'CPU:decompose');
    // A factory reaches its backend through BackendSelect.
    assert.deepEqual(steps(op('aten::randn'), { device: 'meta' }), [
      'ADInplaceOrView:skip',
      'BackendSelect:redispatch',
      'Meta:compute',
    ]);
    registerProfilerFallback();
    assert.deepEqual(steps(add, { include: ['Profiler'] }).slice(0, 2), [
      'AutogradCPU:redispatch',
      'Profiler:redispatch',
    ]);
    assert.throws(() => dispatchPath(add, { include: ['NoSuchKey'] }), RuntimeError);
  });

  it('draw the table grid with one row per runtime key and the source of each kernel marked', () => {
    const add = op('aten::add', 'Tensor');
    const svg = dispatchTableSvg(add);
    assert.ok(svg.startsWith('<svg') && svg.endsWith('</svg>'));
    const keyRows = allRuntimeKeys().length - 1; // Undefined has no kernel for add
    assert.equal((svg.match(/<title>/g) ?? []).length, keyRows * 8, 'eight source columns per key');
    assert.match(svg, /<title>CPU: cpu kernel add.Tensor<\/title>/);
    assert.match(svg, /<title>AutogradCPU: backend kernel from core\/ops\/declarations.ts<\/title>/);
    const filled = (svg.match(/fill="#(?!ffffff|f4f4f4)[0-9a-f]{6}" stroke="#999"/g) ?? []).length;
    assert.equal(filled, add.computedTable().length, 'one coloured cell per valid slot');
    const path = dispatchPathSvg(add);
    assert.equal((path.match(/<rect /g) ?? []).length, 4);
    assert.match(path, /AutogradCPU {2}\[autograd kernel\] {2}redispatch/);
    const html = dispatchPictureHtml(op('aten::relu'));
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /aten::relu\(Tensor self\) -&gt; Tensor/);
    assert.equal((html.match(/<svg /g) ?? []).length, 5, 'the table and four paths');
  });

  it('are written by the CLI, which names a bad operator and exits non-zero', () => {
    const tool = new URL('../../tools/dispatch_picture.ts', import.meta.url).pathname;
    const run = (...args: string[]) => runScript(tool, args);
    const dir = mkdtempSync(join(tmpdir(), 'sy-picture-'));
    try {
      const svg = join(dir, 'mm.svg');
      const ok = run('aten::mm', '--svg', 'path', '--include', 'Profiler', '--out', svg);
      assert.equal(ok.status, 0, ok.stderr);
      const text = readFileSync(svg, 'utf8');
      assert.match(text, /^<svg/);
      assert.match(text, /Profiler {2}\[backend fallback\] {2}redispatch/);
      const bad = run('aten::no_such_op', '--out', join(dir, 'x.html'));
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /unknown operator aten::no_such_op/);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
