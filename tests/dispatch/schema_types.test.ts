/**
 * Operator handles typed from their schema strings (Note [Schema types] in core/dispatch/schema_types.ts).
 * The type-level half of this file is checked by `deno check` (part of `npm test`): every `@ts-expect-error` line
 * must be an error and every other line must not. The run-time half calls the same operators.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DispatchKey,
  Library,
  type SchemaCallArgs,
  type SchemaKernelArgs,
  type SchemaReturn,
  type Tensor,
  tensor,
  type TensorValueTypes,
} from '../../mod.ts';
import type { DType } from '../../mod.ts';

/** Compile-time equality: `Equal<A, B>` is `true` only when A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const typeIs = <T extends true>(_proof?: T): void => {};
// The runtime's reading of schema types (what mod.ts's Library uses).
type CallArgs<S extends string> = SchemaCallArgs<S, TensorValueTypes>;
type KernelArgs<S extends string> = SchemaKernelArgs<S, TensorValueTypes>;
type Returns<S extends string> = SchemaReturn<S, TensorValueTypes>;

// ---- what the schema types read -------------------------------------------------------------------------------
typeIs<Equal<CallArgs<'ns::f(Tensor x, float factor=1.0) -> Tensor'>, [Tensor, (number | undefined)?]>>();
typeIs<Equal<KernelArgs<'ns::f(Tensor x, float factor=1.0) -> Tensor'>, [Tensor, number]>>();
typeIs<Equal<Returns<'ns::f(Tensor x, float factor=1.0) -> Tensor'>, Tensor>>();
// Optionals, lists (with defaults holding commas), keyword-only arguments, alias annotations.
typeIs<
  Equal<
    KernelArgs<
      'ns::g.out(Tensor(a!) self, Tensor? w, int[2] dims=[0, 1], *, bool keepdim=False, ScalarType? dtype=None) -> Tensor(a!)'
    >,
    [Tensor, Tensor | null, number[], boolean, DType | number | null]
  >
>();
typeIs<
  Equal<
    CallArgs<'ns::g(Tensor self, Tensor? w, int[2] dims=[0, 1], *, bool keepdim=False) -> Tensor'>,
    [Tensor, Tensor | null, (number | bigint)[]?, boolean?]
  >
>();
typeIs<
  Equal<
    KernelArgs<'ns::h(Tensor[] xs, Tensor?[] ys, Scalar s, str name) -> ()'>,
    [Tensor[], (Tensor | null)[], number | boolean, string]
  >
>();
typeIs<Equal<Returns<'ns::h(Tensor[] xs) -> ()'>, void>>();
typeIs<Equal<Returns<'ns::p(Tensor x) -> (Tensor values, Tensor indices)'>, [Tensor, Tensor]>>();
typeIs<Equal<Returns<'ns::p(Tensor x) -> (Tensor, int)'>, [Tensor, number]>>();
typeIs<Equal<Returns<'ns::p(Tensor(a) self) -> Tensor(a)[]'>, Tensor[]>>();
// A required argument after a defaulted one keeps everything before it required.
typeIs<Equal<CallArgs<'ns::q(Tensor x, int a=1, *, Tensor out) -> Tensor'>, [Tensor, number | bigint, Tensor]>>();
// What these types cannot read stays untyped rather than wrongly typed.
typeIs<Equal<CallArgs<'ns::u(Dimname d) -> Tensor'>, any[]>>();
typeIs<Equal<CallArgs<string>, any[]>>();
// The dispatcher's own reading: tensors are untyped values.
typeIs<Equal<SchemaKernelArgs<'ns::f(Tensor x, int n) -> Tensor'>, [any, number]>>();

describe('operators typed from their schema strings', () => {
  it('types call, redispatch and impl kernels from the schema, and runs them', () => {
    using def = new Library('typedops', 'DEF');
    const scale = def.define('typedops::scale(Tensor x, float factor=2.0) -> Tensor');
    const minmax = def.define('typedops::minmax(Tensor x) -> (Tensor min, Tensor max)');
    using impls = new Library('typedops', 'IMPL');
    // The kernel's parameters come from the schema: x is a Tensor, f a number.
    impls.impl(scale, (_hi, _lo, x, f) => x.mul(f), DispatchKey.CPU);
    impls.impl(minmax, (_hi, _lo, x) => [x.amin(), x.amax()], DispatchKey.CPU);

    // @ts-expect-error a kernel must return what the schema returns
    impls.impl(scale, (_hi, _lo, _x, f) => f, 'Meta');
    // @ts-expect-error a kernel's parameters must be the schema's
    impls.impl(scale, (_hi: number, _lo: number, _x: Tensor, _f: string) => _x, 'Meta');
    // @ts-expect-error a two-return kernel returns a pair
    impls.impl(minmax, (_hi, _lo, x) => x, 'Meta');

    const x = tensor([1.5, -2, 4]);
    const y: Tensor = scale.call(x);
    assert.deepEqual(y.toArray(), [3, -4, 8]);
    assert.deepEqual(scale.call(x, 0.5).toArray(), [0.75, -1, 2]);
    const [lo, hi] = minmax.call(x);
    assert.deepEqual([lo.item(), hi.item()], [-2, 4]);

    // @ts-expect-error factor is a float
    assert.throws(() => scale.call(x, 'two'), /Expected a value of type 'float' for argument 'factor'/);
    // @ts-expect-error x is required
    assert.throws(() => scale.call(), /is missing value for argument 'x'/);
    // @ts-expect-error one argument too many
    assert.throws(() => scale.call(x, 2, 3), /expected at most 2 argument\(s\) but received 3 argument\(s\)/);
  });

  it('keeps a typed handle usable where an untyped one is expected', () => {
    using def = new Library('typedops2', 'DEF');
    const twice = def.define('typedops2::twice(int x) -> int', { impl: (_hi, _lo, x) => 2 * x });
    const untyped: { name: string }[] = [twice];
    assert.equal(untyped[0].name, 'typedops2::twice');
    assert.equal(twice.call(21), 42);
    assert.equal(twice.call(21n), 42); // an int may be a bigint at the call; the kernel sees a number
  });
});
