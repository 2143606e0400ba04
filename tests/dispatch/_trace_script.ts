// Subprocess for trace_env.test.ts: a dispatcher configured only by the environment (no `trace` option), so
// SWITCHYARD_SHOW_DISPATCH_TRACE decides whether calls print `[call] op=[...], key=[...]` lines to stderr.
import { AFTER_AUTOGRAD_KEYSET, Dispatcher, DispatchKey, IValue, Library } from '../../core/dispatch/mod.ts';
import { cpu } from './_fake_tensor.ts';

const d = new Dispatcher();
using def = new Library('trace', 'DEF', undefined, { dispatcher: d });
const inner = def.define('inner(Tensor x) -> str');
const outer = def.define('outer(Tensor x) -> str');
const zeros = def.define('zeros(int[] size) -> str');
using impl = new Library('trace', 'IMPL', undefined, { dispatcher: d });
impl.impl('inner', () => 'inner', DispatchKey.CPU);
// outer: AutogradCPU redispatches below autograd; its CPU kernel calls another operator.
impl.impl(
  'outer',
  (hi: number, lo: number, x: unknown) => outer.redispatch(hi & AFTER_AUTOGRAD_KEYSET.hi, lo, x),
  DispatchKey.AutogradCPU,
);
impl.impl('outer', (_hi: number, _lo: number, x: unknown) => `outer(${inner.call(x)})`, DispatchKey.CPU);
impl.impl(
  'zeros',
  (_hi: number, _lo: number, size: number[]) => `zeros(${size})`,
  DispatchKey.CompositeExplicitAutograd,
);

const unboxed = outer.call(cpu());
const stack = [IValue.tensor(cpu())];
outer.callBoxed(stack);
const factory = zeros.call([2, 3]);
console.log(JSON.stringify({ traceEnabled: d.traceEnabled, results: [unboxed, stack[0].toJS(), factory] }));
