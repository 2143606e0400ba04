/**
 * `npm start`: a tour of the dispatcher. Defines a custom operator, registers kernels at several keys and a
 * boxed Profiler fallback, prints the computed dispatch table, then calls the operator with the dispatch
 * trace on.
 *
 * @module
 */
import {
  AFTER_AUTOGRAD_KEYSET,
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  getAutocastRelatedKeySetFromBackend,
  getAutogradRelatedKeySetFromBackend,
  includeKeys,
} from '../mod.ts';
// The dispatcher's own Library: its schema types are untyped values, as these keyset-only stand-ins need.
import { Library } from '../core/dispatch/mod.ts';

// The dispatcher only needs the keyset words of its arguments; a real tensor carries more.
class Box {
  readonly keySetHi: number;
  readonly keySetLo: number;
  readonly value: number;
  constructor(value: number, backend: number) {
    this.value = value;
    const b = DispatchKeySet.of(backend);
    const ks = b.or(getAutogradRelatedKeySetFromBackend(b.highestBackendKey()))
      .or(getAutocastRelatedKeySetFromBackend(b.highestBackendKey()));
    this.keySetHi = ks.hi;
    this.keySetLo = ks.lo;
  }
}

const lines: string[] = [];
const d = new Dispatcher({ trace: false, traceSink: (line) => lines.push(line) });

using def = new Library('demo', 'DEF', undefined, { dispatcher: d });
const scale = def.define('demo::scale(Tensor x, float factor) -> Tensor');

using impls = new Library('demo', 'IMPL', undefined, { dispatcher: d });
impls.impl('scale', (_hi: number, _lo: number, x: Box, f: number) => new Box(x.value * f, DispatchKey.CPU), 'CPU');
impls.impl('scale', (hi: number, lo: number, x: Box, f: number) => {
  // An autograd kernel would record a graph node here, then hand the call to the keys below it.
  return scale.redispatch(hi & AFTER_AUTOGRAD_KEYSET.hi, lo, x, f);
}, 'Autograd');
impls.impl('scale', (_hi: number, _lo: number, x: Box, _f: number) => x, 'CompositeImplicitAutograd');

using profiler = new Library('_', 'IMPL', DispatchKey.Profiler, { dispatcher: d });
const timings: string[] = [];
profiler.fallback((op, ks, stack) => {
  const start = performance.now();
  op.redispatchBoxed(ks.and(DispatchKeySet.fullAfter(DispatchKey.Profiler)), stack);
  timings.push(`${op.name} took ${(performance.now() - start).toFixed(3)} ms`);
});

console.log('Registrations (PyTorch _dispatch_dump):\n');
console.log(scale.dump());
console.log('Computed dispatch table (PyTorch _dispatch_dump_table; Quantized, Sparse and PrivateUse rows omitted):\n');
console.log(
  scale.dumpComputedTable().split('\n').filter((line) => !/^(Quantized|Sparse|\w*PrivateUse)/.test(line)).join('\n'),
);

d.traceEnabled = true;
const y = (() => {
  using _profile = includeKeys(DispatchKey.Profiler);
  return scale.call(new Box(21, DispatchKey.CPU), 2) as Box;
})();
const z = scale.call(new Box(5, DispatchKey.Meta), 3) as Box;
d.traceEnabled = false;

console.log('Dispatch trace of scale(cpu, 2) under the profiler, then scale(meta, 3):\n');
console.log(lines.join('\n'));
console.log(`\nresults: cpu ${y.value}, meta ${z.value} (Meta has no kernel: the composite kernel ran)`);
console.log(`profiler: ${timings.join('; ')}`);
