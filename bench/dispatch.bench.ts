/**
 * Dispatcher benchmarks: unboxed dispatch against a direct call, redispatch, a boxed fallback round trip,
 * registering a kernel while 1,000 operators are defined, and dispatch from a table store shared with other
 * agents (its call stubs read the row under the seqlock: Note [Validated call stubs]).
 *
 * Run: `deno run -A bench/dispatch.bench.ts` or `bun bench/dispatch.bench.ts`.
 *
 * @module
 */
import { bench, do_not_optimize, group, runAndReport, summary } from './_report.ts';
import {
  AFTER_AUTOGRAD_KEYSET,
  Dispatcher,
  DispatchKey,
  DispatchKeySet,
  getAutocastRelatedKeySetFromBackend,
  getAutogradRelatedKeySetFromBackend,
  KernelFunction,
} from '../mod.ts';
// The dispatcher's own Library: its schema types are untyped values, as these keyset-only stand-ins need.
import { Library } from '../core/dispatch/mod.ts';

const K = DispatchKey;
const d = new Dispatcher({ trace: false });
const def = new Library('bench', 'DEF', undefined, { dispatcher: d, location: 'bench' });
const lib = new Library('bench', 'IMPL', undefined, { dispatcher: d, location: 'bench' });

function tensorLike(backend: number, extra: number[] = []) {
  const b = DispatchKeySet.of(backend);
  let ks = b.or(getAutogradRelatedKeySetFromBackend(b.highestBackendKey()))
    .or(getAutocastRelatedKeySetFromBackend(b.highestBackendKey()));
  for (const k of extra) ks = ks.add(k);
  return { keySetHi: ks.hi, keySetLo: ks.lo };
}
const a = tensorLike(K.CPU), b = tensorLike(K.CPU);

// A no-op kernel: returns its first argument so nothing is allocated.
const noop = (_hi: number, _lo: number, x: unknown, _y: unknown) => x;

const add = def.define('add(Tensor self, Tensor other) -> Tensor');
lib.impl('add', noop, K.CPU);

// Autograd-style kernel that redispatches below itself.
const mul = def.define('mul(Tensor self, Tensor other) -> Tensor');
lib.impl(
  'mul',
  (hi: number, lo: number, x: unknown, y: unknown) => mul.redispatch(hi & AFTER_AUTOGRAD_KEYSET.hi, lo, x, y),
  K.AutogradCPU,
);
lib.impl('mul', noop, K.CPU);

// A boxed fallback at Tracer (included for tensors carrying the Tracer key) that redispatches boxed.
const sub = def.define('sub(Tensor self, Tensor other) -> Tensor');
lib.impl('sub', noop, K.CPU);
const tracerLib = new Library('_', 'IMPL', K.Tracer, { dispatcher: d, location: 'bench' });
const afterTracer = DispatchKeySet.fullAfter(K.Tracer);
tracerLib.fallback((op, ks, stack) => op.redispatchBoxed(ks.and(afterTracer), stack));
const traced = tensorLike(K.CPU, [K.Tracer]);

// The same operator in a dispatcher whose table store is shared with other agents (validated call stubs).
const sharedD = new Dispatcher({ trace: false });
const sharedDef = new Library('bench', 'DEF', undefined, { dispatcher: sharedD, location: 'bench' });
const sharedAdd = sharedDef.define('add(Tensor self, Tensor other) -> Tensor');
new Library('bench', 'IMPL', undefined, { dispatcher: sharedD, location: 'bench' }).impl('add', noop, K.CPU);
sharedD.shareTables(0);

// 1,000 operators defined, each with a CPU kernel.
const many = new Dispatcher();
const manyDef = new Library('many', 'DEF', undefined, { dispatcher: many, location: 'bench' });
const manyImpl = new Library('many', 'IMPL', K.CPU, { dispatcher: many, location: 'bench' });
const identity = (_hi: number, _lo: number, x: unknown) => x;
for (let i = 0; i < 1000; i++) {
  manyDef.define(`op${i}(Tensor x) -> Tensor`);
  manyImpl.impl(`op${i}`, identity);
}
// Operators materialize on first use (Note [Operators materialize on first use] in core/dispatch/dispatcher.ts):
// materialize them all, so the registration below measures the update of live rows, as a running program sees it,
// and no benchmark's first iteration pays for a materialization (mitata sizes its batches from the first ones).
many.materializeAll();
d.materializeAll();
const autogradKernel = KernelFunction.fromUnboxed(identity);
let next = 0;

// Arguments rotate through four tensor-like objects so that neither loop can hoist its loads out of the
// measurement (with fixed arguments the engines compile the dispatch of a no-op kernel away).
const pool = [a, b, tensorLike(K.CPU), tensorLike(K.CPU)];
let i = 0;
let direct: typeof noop = noop;
if (pool.length < 0) direct = (_h, _l, _x, y) => y; // keep `direct` a variable the compiler cannot constant-fold

// The boxed round trip runs first: measured after the unboxed benchmarks, the shared adapter and boxing
// code has seen other kernels and operators, and its figure then reflects that polymorphism (~2-3x).
bench('boxed fallback round trip (Tracer -> redispatchBoxed -> CPU)', () => do_not_optimize(sub.call(traced, b)));

summary(() => {
  group('unboxed dispatch, 2 tensor-like args, no-op kernel', () => {
    bench('direct call through a variable', () => {
      const x = pool[i++ & 3];
      return do_not_optimize(direct(x.keySetHi, x.keySetLo, x, pool[i & 3]));
    });
    bench('op.call (dispatch)', () => do_not_optimize(add.call(pool[i++ & 3], pool[i & 3])));
    bench('op.call, table store shared with other agents', () => {
      return do_not_optimize(sharedAdd.call(pool[i++ & 3], pool[i & 3]));
    });
  });
});
bench('op.call with an AutogradCPU kernel that redispatches', () => do_not_optimize(mul.call(a, b)));
const cpuOnly = DispatchKeySet.of(K.CPU);
bench('op.redispatch (CPU keyset)', () => do_not_optimize(add.redispatch(cpuOnly.hi, cpuOnly.lo, a, b)));
bench('register + deregister one kernel, 1,000 ops defined', () => {
  const handle = many.registerImpl(`many::op${next++ % 1000}`, K.AutogradCPU, autogradKernel, { debug: 'bench' });
  handle.dispose();
});

await runAndReport('dispatch', (f) => {
  const call = f.get('op.call (dispatch)')!.p50_ns;
  const directCall = f.get('direct call through a variable')!.p50_ns;
  return {
    dispatch_p50_ns: call,
    direct_p50_ns: directCall,
    dispatch_over_direct: Number((call / directCall).toFixed(2)),
    shared_dispatch_p50_ns: f.get('op.call, table store shared with other agents')!.p50_ns,
    boxed_round_trip_p50_ns: f.get('boxed fallback round trip (Tracer -> redispatchBoxed -> CPU)')!.p50_ns,
    register_deregister_p50_us: f.get('register + deregister one kernel, 1,000 ops defined')!.p50_ns / 1000,
  };
});
