/**
 * Types computed from a schema string: `Library.define('myops::scale(Tensor x, float factor=1.0) -> Tensor')` gives
 * a handle whose `call`, `redispatch` and `impl` kernels are typed from the schema itself, so a kernel with the
 * wrong parameters, or a call with the wrong arguments, is a compile error.
 *
 * Note [Schema types]
 * The run-time parser (schema_parser.ts) stays the single source of truth: these types only read what a schema
 * says about values, and any schema they cannot read (a form this file does not know) gives the untyped
 * signature `(...args: any[]) => any` instead of a wrong one. What they read:
 * - the argument list, split at top-level commas (brackets and alias annotations such as `Tensor(a!)` nest);
 * - each argument `Type name` or `Type name=default`, and the `*` that starts the keyword-only ones;
 * - types: `Tensor`, `int`/`SymInt`, `float`, `bool`, `str`, `Scalar`, `ScalarType`, `Device`, `Layout`,
 *   `MemoryFormat`, `Generator`, `Any`, with `?` (also None), `[]` / `[N]` lists, and alias annotations;
 * - returns: one type, `()`, or a parenthesised list, named or not.
 * The values are those the dispatcher passes: an unboxed `call` takes every argument positionally, keyword-only
 * ones included, and the trailing arguments that have defaults may be left out (the call fills them in), so
 * kernels always receive every argument. A call may pass an `int` or a `Scalar` as a `bigint`; kernels see
 * numbers. Kernels of several returns return an array.
 *
 * The dispatcher knows nothing of tensors: `Tensor`, `ScalarType`, `Device` and `Generator` are looked up in a
 * {@linkcode SchemaValueTypes} parameter, `any` for the dispatcher's own `Library` and the runtime's classes for the
 * `Library` that `mod.ts` exports (core/ops/typed_library.ts).
 *
 * @module
 */

/**
 * The TypeScript types that the schema types living above the dispatcher stand for. The dispatcher knows nothing
 * of tensors, so its own `Library` uses {@linkcode UntypedSchemaValues} (any value); `mod.ts` exports a `Library`
 * typed with the runtime's Tensor, DType, Device and Generator.
 *
 * @example
 * ```ts
 * import type { SchemaValueTypes } from './schema_types.ts';
 * interface Boxes extends SchemaValueTypes { Tensor: { value: number } }
 * ```
 */
export interface SchemaValueTypes {
  /** What `Tensor` stands for. */
  readonly Tensor: unknown;
  /** What `ScalarType` stands for (its ScalarType code, a number, is accepted too). */
  readonly ScalarType: unknown;
  /** What `Device` stands for. */
  readonly Device: unknown;
  /** What `Generator` stands for. */
  readonly Generator: unknown;
}

/**
 * Value types of the dispatcher on its own: every tensor-like, dtype, device and generator argument is `any`.
 *
 * @example
 * ```ts
 * import type { SchemaKernelArgs, UntypedSchemaValues } from './schema_types.ts';
 * type A = SchemaKernelArgs<'ns::f(Tensor x, int n) -> Tensor', UntypedSchemaValues>; // [any, number]
 * ```
 */
export interface UntypedSchemaValues extends SchemaValueTypes {
  /** Any value: the dispatcher knows tensors only by their keyset words. */
  readonly Tensor: any;
  /** Any value. */
  readonly ScalarType: any;
  /** Any value. */
  readonly Device: any;
  /** Any value. */
  readonly Generator: any;
}

/** Trims spaces at both ends of a string type. Part of the schema-type machinery (Note [Schema types]). */
export type Trim<S extends string> = S extends ` ${infer R}` ? Trim<R> : S extends `${infer R} ` ? Trim<R> : S;

/** `T` when it is an array type (what a rest parameter needs to see), else `any[]`. */
export type ArrayOr<T> = T extends readonly unknown[] ? T : any[];

/** A tuple without its last element (a depth counter going down). Part of the schema-type machinery (Note [Schema types]). */
export type Pop<D extends unknown[]> = D extends [...infer Rest, unknown] ? Rest : [];

/** Splits at commas outside brackets and parentheses. */
export type SplitTop<
  S extends string,
  Cur extends string = '',
  Depth extends unknown[] = [],
  Out extends string[] = [],
> = S extends `${infer C}${infer Rest}` ? C extends ',' ? Depth extends [] ? SplitTop<Rest, '', [], [...Out, Trim<Cur>]>
    : SplitTop<Rest, `${Cur}${C}`, Depth, Out>
  : C extends '[' | '(' ? SplitTop<Rest, `${Cur}${C}`, [...Depth, 0], Out>
  : C extends ']' | ')' ? SplitTop<Rest, `${Cur}${C}`, Pop<Depth>, Out>
  : SplitTop<Rest, `${Cur}${C}`, Depth, Out>
  : Trim<Cur> extends '' ? Out
  : [...Out, Trim<Cur>];

/** `[arguments text, text after the closing parenthesis]` of `S`, which starts just after the opening one. */
export type TakeParens<S extends string, Cur extends string = '', Depth extends unknown[] = []> = S extends
  `${infer C}${infer Rest}`
  ? C extends ')' ? Depth extends [] ? [Cur, Rest] : TakeParens<Rest, `${Cur}${C}`, Pop<Depth>>
  : C extends '(' ? TakeParens<Rest, `${Cur}${C}`, [...Depth, 0]>
  : TakeParens<Rest, `${Cur}${C}`, Depth>
  : never;

/** Drops alias annotations: `Tensor(a!)` is `Tensor`, `Tensor(a)[]` is `Tensor[]`. */
export type NoAlias<T> = T extends `${infer B}(${string})${infer After}` ? `${B}${After}` : T;

/** The TypeScript type of a base schema type (`never` for one not known here). Part of the schema-type machinery (Note [Schema types]). */
export type BaseType<T, Call extends boolean, V extends SchemaValueTypes> = T extends 'Tensor' ? V['Tensor']
  : T extends 'int' | 'SymInt' ? Call extends true ? number | bigint : number
  : T extends 'float' ? number
  : T extends 'bool' ? boolean
  : T extends 'str' ? string
  : T extends 'Scalar' ? Call extends true ? number | boolean | bigint : number | boolean
  : T extends 'ScalarType' ? V['ScalarType'] | number
  : T extends 'Layout' | 'MemoryFormat' ? number
  : T extends 'Device' ? V['Device']
  : T extends 'Generator' ? V['Generator']
  : T extends 'Any' ? unknown
  : never;

/** The TypeScript type of a schema type (`never` for one not known here). */
export type ArgType<T, Call extends boolean, V extends SchemaValueTypes> = NoAlias<T> extends `${infer E}[]`
  ? ArgType<E, Call, V>[]
  : NoAlias<T> extends `${infer E}[${number}]` ? ArgType<E, Call, V>[]
  : NoAlias<T> extends `${infer E}?` ? ArgType<E, Call, V> | null
  : BaseType<NoAlias<T>, Call, V>;

/** One argument's `[type text, has a default]`; `*` is not an argument. */
export type ParseArg<A extends string> = A extends `${infer Decl}=${string}` ? [ArgTypeText<Trim<Decl>>, true]
  : [ArgTypeText<A>, false];
/** The type part of an argument declaration (`Tensor(a!) self` gives `Tensor(a!)`). Part of the schema-type machinery (Note [Schema types]). */
export type ArgTypeText<D> = D extends `${infer T} ${string}` ? T : D;

/** `[type text, has a default]` for each argument of a list, the `*` separator dropped. Part of the schema-type machinery (Note [Schema types]). */
export type ParsedArgs<L extends string[], Out extends [string, boolean][] = []> = L extends
  [infer H extends string, ...infer R extends string[]] ? H extends '*' ? ParsedArgs<R, Out>
  : ParsedArgs<R, [...Out, ParseArg<H>]>
  : Out;

/** Every argument, required (what kernels receive). */
export type AllArgs<P extends [string, boolean][], Call extends boolean, V extends SchemaValueTypes> = {
  [I in keyof P]: ArgType<P[I][0], Call, V>;
};

/** The arguments of a call: the trailing ones with defaults may be left out. */
export type CallArgsOf<P extends [string, boolean][], V extends SchemaValueTypes> = P extends
  [...infer Init extends [string, boolean][], infer Last]
  ? Last extends [infer T extends string, true] ? [...CallArgsOf<Init, V>, ArgType<T, true, V>?] : AllArgs<P, true, V>
  : [];

/** The return type of a returns text (never for one not known here). Part of the schema-type machinery (Note [Schema types]). */
export type ReturnType1<R, V extends SchemaValueTypes> = R extends string ? ReturnTypeOf<R, V> : never;
/** The return type of a returns text: one type, `void` for `()`, a tuple for several. Part of the schema-type machinery (Note [Schema types]). */
export type ReturnTypeOf<R extends string, V extends SchemaValueTypes> = Trim<R> extends '()' ? void
  : Trim<R> extends `(${infer Inner})` ? ReturnList<SplitTop<Inner>, V>
  : ArgType<Trim<R>, false, V>;

/** The types of a parenthesised list of returns, named (`Tensor values`) or not. */
export type ReturnList<L extends string[], V extends SchemaValueTypes, Out extends unknown[] = []> = L extends
  [infer H extends string, ...infer Rest extends string[]]
  ? ReturnList<Rest, V, [...Out, ArgType<ArgTypeText<H>, false, V>]>
  : Out;

/** `[argument list, returns text]` of a schema, or never when it is not one. */
export type Parts<S extends string> = S extends `${string}(${infer Rest}`
  ? TakeParens<Rest> extends [infer Args extends string, infer After extends string]
    ? Trim<After> extends `->${infer Ret}` ? [Args, Ret] : never
  : never
  : never;

/** Whether a tuple holds `never` (a schema type these types cannot read). Part of the schema-type machinery (Note [Schema types]). */
export type HasNever<T extends readonly unknown[]> = true extends
  { [I in keyof T]: [T[I]] extends [never] ? true : false }[number] ? true
  : false;

/** The parsed arguments of `S`, or never when a type is not one of those listed in Note [Schema types]. */
export type KnownArgs<S extends string> = ParsedArgs<SplitTop<Parts<S>[0]>> extends infer P extends [string, boolean][]
  ? HasNever<AllArgs<P, false, UntypedSchemaValues>> extends true ? never : P
  : never;

/**
 * The argument tuple of an unboxed `call` to the operator of schema `S` (`any[]` for a schema these types cannot
 * read; Note [Schema types]).
 *
 * @example
 * ```ts
 * import type { SchemaCallArgs } from './schema_types.ts';
 * type A = SchemaCallArgs<'myops::scale(Tensor x, float factor=1.0) -> Tensor'>; // [any, (number | undefined)?]
 * ```
 */
export type SchemaCallArgs<S extends string, V extends SchemaValueTypes = UntypedSchemaValues> = ArrayOr<
  [KnownArgs<S>] extends [never] ? any[] : CallArgsOf<KnownArgs<S>, V>
>;

/**
 * The arguments an unboxed kernel of schema `S` receives after the two keyset words: every argument.
 *
 * @example
 * ```ts
 * import type { SchemaKernelArgs } from './schema_types.ts';
 * type A = SchemaKernelArgs<'myops::scale(Tensor x, float factor=1.0) -> Tensor'>; // [any, number]
 * ```
 */
export type SchemaKernelArgs<S extends string, V extends SchemaValueTypes = UntypedSchemaValues> = ArrayOr<
  [KnownArgs<S>] extends [never] ? any[] : AllArgs<KnownArgs<S>, false, V>
>;

/**
 * What an operator of schema `S` returns: one value, `void` for `()`, a tuple for several.
 *
 * @example
 * ```ts
 * import type { SchemaReturn } from './schema_types.ts';
 * type R = SchemaReturn<'myops::pair(Tensor x) -> (Tensor a, Tensor b)'>; // [any, any]
 * ```
 */
export type SchemaReturn<S extends string, V extends SchemaValueTypes = UntypedSchemaValues> = [Parts<S>] extends
  [never] ? any
  : HasNever<[ReturnType1<Parts<S>[1], V>]> extends true ? any
  : ReturnType1<Parts<S>[1], V>;

/**
 * An unboxed kernel's type for schema `S`: the two keyset words, then every argument.
 *
 * @example
 * ```ts
 * import type { SchemaKernel } from './schema_types.ts';
 * const k: SchemaKernel<'myops::twice(int x) -> int'> = (_hi, _lo, x) => 2 * x;
 * ```
 */
export type SchemaKernel<S extends string, V extends SchemaValueTypes = UntypedSchemaValues> = (
  ksHi: number,
  ksLo: number,
  ...args: SchemaKernelArgs<S, V>
) => SchemaReturn<S, V>;
