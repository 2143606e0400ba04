// The computed dispatch table follows PyTorch 1.13's precedence (reference/SEMANTICS.md §3.1, §8).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  fallthroughKernel,
  Library,
  NotImplementedError,
} from '../../core/dispatch/mod.ts';
import { cpu, fakeTensor, meta } from './_fake_tensor.ts';

const K = DispatchKey;

/** Defines test::foo(Tensor x) -> Tensor and registers a labelled kernel per key; returns the table. */
function setup(keys: number[], options: { fallbacks?: number[] } = {}) {
  const d = new Dispatcher({ onWarning: () => {} });
  const def = new Library('test', 'DEF', undefined, { dispatcher: d, location: 'test.ts:1' });
  const op = def.define('foo(Tensor x) -> Tensor');
  const impl = new Library('test', 'IMPL', undefined, { dispatcher: d, location: 'test.ts:2' });
  for (const k of keys) {
    impl.impl('foo', (_hi: number, _lo: number, _x: unknown) => `k${k}`, k, { debug: `fn_${keyLabel(k)}` });
  }
  const fb = new Library('_', 'IMPL', undefined, { dispatcher: d });
  for (const k of options.fallbacks ?? []) {
    new Library('_', 'IMPL', k, { dispatcher: d, location: 'fb.ts:1' }).fallback(() => {}, { debug: 'fb' });
  }
  void fb;
  const table = new Map(
    op.computedTable().map((r) => [r.key, `${r.fallthrough ? 'fallthrough ' : ''}${r.kernel} [${r.source}]`]),
  );
  d.checkInvariants();
  return { d, op, table };
}

function keyLabel(k: number): string {
  return {
    [K.CompositeImplicitAutograd]: 'CIA',
    [K.CompositeExplicitAutograd]: 'CEA',
    [K.CompositeExplicitAutogradNonFunctional]: 'CEANF',
    [K.Autograd]: 'Autograd',
  }[k] ?? String(k);
}

const FRAMEWORK = 'fallthrough registered in switchyard framework [backend fallback]';

describe('computed dispatch table', () => {
  it('a direct kernel beats every alias; a backend kernel turns its autograd key away from CIA', () => {
    const { table } = setup([K.CPU, K.CompositeImplicitAutograd]);
    assert.equal(table.get('CPU'), `fn_${K.CPU} [kernel]`);
    assert.equal(table.get('AutogradCPU'), FRAMEWORK);
    assert.equal(table.get('AutogradWebGPU'), 'fn_CIA [math kernel]');
    assert.equal(table.get('AutogradMeta'), 'fn_CIA [math kernel]');
    assert.equal(table.get('Meta'), 'fn_CIA [math kernel]');
    assert.equal(table.get('Undefined'), 'fn_CIA [math kernel]');
    assert.equal(table.get('BackendSelect'), 'fallthrough registered in switchyard framework [backend fallback]');
    assert.equal(table.get('Tracer'), undefined, 'CIA does not cover Tracer, and it has no fallback');
  });

  it('CIA takes precedence over the Autograd alias where no backend kernel exists', () => {
    const { table } = setup([K.CPU, K.Autograd, K.CompositeImplicitAutograd]);
    assert.equal(table.get('AutogradCPU'), 'fn_Autograd [autograd kernel]');
    assert.equal(table.get('AutogradWebGPU'), 'fn_CIA [math kernel]');
    assert.equal(table.get('Undefined'), 'fn_CIA [math kernel]', 'Undefined never gets an Autograd kernel');
  });

  it('a CEA kernel disables CIA at every autograd key', () => {
    const { table } = setup([K.CompositeImplicitAutograd, K.CompositeExplicitAutograd]);
    assert.equal(table.get('CPU'), 'fn_CEA [default backend kernel]');
    assert.equal(table.get('Undefined'), 'fn_CEA [default backend kernel]');
    assert.equal(table.get('AutogradCPU'), FRAMEWORK);
    assert.equal(table.get('AutogradOther'), FRAMEWORK);
    assert.equal(table.get('AutogradMeta'), undefined, 'AutogradMeta has no framework fallback: missing');
  });

  it('the stored table is order independent: CIA then CEA equals CEA then CIA (unlike PyTorch 1.13)', () => {
    for (
      const order of [[K.CompositeImplicitAutograd, K.CompositeExplicitAutograd], [
        K.CompositeExplicitAutograd,
        K.CompositeImplicitAutograd,
      ]]
    ) {
      const { op, d } = setup(order);
      d.checkInvariants();
      assert.equal(op.call(cpu()), `k${K.CompositeExplicitAutograd}`);
    }
  });

  it('CEANonFunctional does not block CIA at autograd keys and does not cover Sparse', () => {
    const { table } = setup([K.CompositeExplicitAutogradNonFunctional, K.CompositeImplicitAutograd]);
    assert.equal(table.get('CPU'), 'fn_CEANF [default backend kernel]');
    assert.equal(table.get('AutogradCPU'), 'fn_CIA [math kernel]');
    assert.equal(table.get('SparseCPU'), 'fn_CIA [math kernel]');
    assert.equal(table.get('Undefined'), 'fn_CEANF [default backend kernel]');
  });

  it('CIA beside a kernel at an AutogradOther backend is ambiguous at AutogradOther', () => {
    const { table, op } = setup([K.CompositeImplicitAutograd, K.QuantizedCPU]);
    assert.equal(table.get('AutogradOther'), 'ambiguous_autogradother [ambiguous autogradother]');
    assert.equal(table.get('QuantizedCPU'), `fn_${K.QuantizedCPU} [kernel]`);
    // A QuantizedCPU tensor dispatches at AutogradCPU (its autograd key, not AutogradOther). AutogradCPU only
    // defers to a Dense CPU kernel, so it takes the CIA decomposition, exactly as PyTorch 1.13 does.
    assert.equal(op.call(fakeTensor(K.QuantizedCPU)), `k${K.CompositeImplicitAutograd}`);
    assert.equal(
      op.redispatch(DispatchKeySet.of(K.QuantizedCPU).hi, DispatchKeySet.of(K.QuantizedCPU).lo, null),
      `k${K.QuantizedCPU}`,
    );
  });

  it('a PrivateUse1 kernel leaves AutogradPrivateUse1 missing', () => {
    const { table } = setup([K.PrivateUse1, K.CompositeImplicitAutograd]);
    assert.equal(table.get('AutogradPrivateUse1'), undefined);
    assert.equal(table.get('AutogradPrivateUse2'), 'fn_CIA [math kernel]');
  });

  it('backend fallbacks fill slots no registration covers', () => {
    const { table } = setup([K.CPU], { fallbacks: [K.Tracer, K.AutogradMeta] });
    assert.equal(table.get('Tracer'), 'fb [backend fallback]');
    assert.equal(table.get('AutogradMeta'), 'fb [backend fallback]');
    assert.equal(table.get('Meta'), undefined);
  });

  it('dumpComputedTable prints PyTorch format, Undefined first, missing slots omitted', () => {
    const { op } = setup([K.CPU, K.CompositeImplicitAutograd]);
    const lines = op.dumpComputedTable().split('\n');
    assert.equal(lines[0], 'Undefined: fn_CIA [math kernel]');
    assert.equal(lines[1], `CPU: fn_${K.CPU} [kernel]`);
    assert.ok(lines.includes('AutogradCPU: fallthrough registered in switchyard framework [backend fallback]'));
    assert.ok(!lines.some((l) => l.startsWith('Tracer')));
  });

  it('dump prints registrations per key with [alias] and (inactive)', () => {
    const d = new Dispatcher({ onWarning: () => {} });
    using lib = new Library('test', 'FRAGMENT', undefined, { dispatcher: d, location: 'x.ts:7' });
    const op = lib.define('foo(Tensor x) -> Tensor');
    lib.impl('foo', (_h: number, _l: number, x: unknown) => x, K.CPU, { debug: 'first' });
    lib.impl('foo', (_h: number, _l: number, x: unknown) => x, K.CPU, {
      debug: 'second',
      schema: '(Tensor _0) -> Tensor _0',
    });
    lib.impl('foo', fallthroughKernel, K.Autograd, { debug: 'ft' });
    assert.equal(
      op.dump(),
      'name: test::foo\n' +
        'schema: test::foo(Tensor x) -> Tensor\n' +
        'debug: registered at x.ts:7\n' +
        'alias analysis kind: FROM_SCHEMA\n' +
        'CPU: second :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n' +
        'CPU (inactive): first :: (none) [ boxed unboxed ]\n' +
        'Autograd[alias]: ft :: (none) [ fallthrough boxed ]\n',
    );
  });
});

describe('runtime dispatch uses exactly one slot', () => {
  it('a meta tensor with only a Meta kernel fails at AutogradMeta, in PyTorch words', () => {
    const { op } = setup([K.Meta]);
    assert.throws(() => op.call(meta()), (e: unknown) => {
      assert.ok(e instanceof NotImplementedError);
      assert.match(e.message, /^Could not run 'test::foo' with arguments from the 'AutogradMeta' backend\. /);
      assert.match(
        e.message,
        /'test::foo' is only available for these backends: \[Meta, BackendSelect, ADInplaceOrView, AutogradOther, AutogradCPU, AutogradWebGPU, AutocastCPU, AutocastWebGPU, VmapMode\]\./,
      );
      assert.match(e.message, /\n\nMeta: fn_23 \[kernel\]\n/);
      return true;
    });
  });

  it('a global fallthrough at CPU drops a CPU call into the Undefined slot', () => {
    const d = new Dispatcher();
    using def = new Library('test', 'DEF', undefined, { dispatcher: d });
    const op = def.define('foo(Tensor x) -> Tensor');
    using fb = new Library('_', 'IMPL', K.CPU, { dispatcher: d });
    fb.fallback(fallthroughKernel);
    assert.throws(
      () => op.call(cpu()),
      /There were no tensor arguments to this function \(e\.g\., you passed an empty list of Tensors\), but no fallback function is registered for schema test::foo\./,
    );
    using cia = new Library('test', 'IMPL', K.CompositeImplicitAutograd, { dispatcher: d });
    cia.impl('foo', () => 'composite');
    assert.equal(op.call(cpu()), 'composite');
  });

  it('inference tensors skip autograd; an exclude guard does too', () => {
    const d = new Dispatcher();
    using def = new Library('test', 'DEF', undefined, { dispatcher: d });
    const op = def.define('foo(Tensor x) -> Tensor');
    using lib = new Library('test', 'IMPL', undefined, { dispatcher: d });
    lib.impl('foo', () => 'autograd', K.AutogradCPU).impl('foo', () => 'cpu', K.CPU);
    assert.equal(op.call(cpu()), 'autograd');
    assert.equal(op.call(fakeTensor(K.CPU, { inference: true })), 'cpu');
  });
});
