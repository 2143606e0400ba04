/**
 * FunctionSchema: an operator's signature in PyTorch's schema language, and the canonical printer.
 *
 * `aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor` names an operator, an
 * overload, typed arguments (defaults, keyword-only marker, alias annotations) and returns. The parser is
 * `schema_parser.ts`; this module holds the data model, the rules for default values and the printer,
 * which follows PyTorch's `operator<<` for FunctionSchema and Argument (`aten/src/ATen/core/function_schema.h`).
 *
 * Note [Printable schemas]
 * Every schema the FunctionSchema constructor accepts (with defaults built by the parser or `defaultValueOf`)
 * prints to text that `parseSchema` reads back into an equal schema: the constructor normalises what text cannot tell apart (repeated alias sets, the write flag
 * of a bare list container) and rejects what text cannot express. Where PyTorch's printer writes text its
 * own parser rejects, or loses information, we print the parseable spelling instead:
 * - `Dimname` prints as `Dimname` (PyTorch parses it as `str` and so prints `str`);
 * - an all-equal int-list default collapses to one number only when the list has the argument's size N
 *   (PyTorch also collapses `int[] x=[1, 1]` to `int[] x=1`, which no parser reads);
 * - a `Device` default is quoted (PyTorch prints it bare) and an aliased optional list element prints as
 *   `Tensor(a)?[]` (PyTorch prints `Tensor?(a)[]`);
 * - characters above U+007E in strings print as themselves (PyTorch pushes each UTF-8 byte through a
 *   signed char and prints garbage) and `\r` is readable (PyTorch prints it but its parser rejects it).
 *
 * @module
 */
import { RuntimeError } from './errors.ts';

/**
 * The base types of the schema language, spelled as in schema text.
 *
 * @example
 * ```ts
 * import { BASE_TYPE_KINDS } from './function_schema.ts';
 * BASE_TYPE_KINDS.includes('SymInt'); // true
 * ```
 */
export const BASE_TYPE_KINDS = [
  'Tensor',
  'int',
  'SymInt',
  'float',
  'bool',
  'str',
  'Scalar',
  'ScalarType',
  'Device',
  'Layout',
  'MemoryFormat',
  'Generator',
  'Dimname',
  'Storage',
  'Any',
] as const;

/**
 * A base type's name (see {@linkcode BASE_TYPE_KINDS}).
 *
 * @example
 * ```ts
 * import type { BaseTypeKind } from './function_schema.ts';
 * const kind: BaseTypeKind = 'Tensor';
 * ```
 */
export type BaseTypeKind = typeof BASE_TYPE_KINDS[number];

/**
 * A schema type: a base type, `T?` (Optional) or `T[]` (List). A list's static size lives on the argument.
 *
 * @example
 * ```ts
 * import type { SchemaType } from './function_schema.ts';
 * const optionalTensors: SchemaType = { kind: 'List', elem: { kind: 'Optional', elem: { kind: 'Tensor' } } };
 * ```
 */
export type SchemaType =
  | { readonly kind: BaseTypeKind }
  | { readonly kind: 'Optional'; readonly elem: SchemaType }
  | { readonly kind: 'List'; readonly elem: SchemaType };

/**
 * An alias annotation, `Tensor(a! -> a|b)`: the sets the value may alias before and after the call, whether
 * the call writes it, and (for a list) the annotation of its elements. `*` is the wildcard set.
 *
 * @example
 * ```ts
 * import type { AliasInfo } from './function_schema.ts';
 * const written: AliasInfo = { beforeSets: ['a'], afterSets: ['a'], isWrite: true, containedTypes: [] };
 * ```
 */
export interface AliasInfo {
  /** Sets the value may alias on entry (`a` in `Tensor(a)`); empty for a list annotated only through its elements. */
  readonly beforeSets: readonly string[];
  /** Sets it may alias on exit (`*` in `Tensor(a -> *)`); the before-sets when no `->` is written. */
  readonly afterSets: readonly string[];
  /** Whether the operator writes the value (`!`). */
  readonly isWrite: boolean;
  /** For a list, the annotation of its elements (`Tensor(a!)[]`); at most one entry. */
  readonly containedTypes: readonly AliasInfo[];
}

/**
 * A default's JavaScript value: ints beyond 2^53 are bigints, None is null, lists are frozen arrays.
 *
 * @example
 * ```ts
 * import type { DefaultValueData } from './function_schema.ts';
 * const values: DefaultValueData[] = [1, 1e-5, 9223372036854775807n, true, 'mean', null, [0, 1]];
 * ```
 */
export type DefaultValueData = number | bigint | boolean | string | null | readonly (number | bigint | boolean)[];

/**
 * A default value: its canonical text (what the printer writes after `=`) and its JavaScript value.
 *
 * @example
 * ```ts
 * import type { DefaultValue } from './function_schema.ts';
 * const eps: DefaultValue = { text: '1.0000000000000001e-05', value: 1e-5 };
 * ```
 */
export interface DefaultValue {
  /** The canonical text, as PyTorch prints the value (`1.`, `"mean"`, `[0, 1]`, `None`). */
  readonly text: string;
  /** The value itself (ScalarType, Layout, MemoryFormat and reduction names are their enum ints). */
  readonly value: DefaultValueData;
}

/**
 * An argument or a return. Returns have no default, are never keyword-only and may be unnamed (`''`).
 *
 * @example
 * ```ts
 * import type { Argument } from './function_schema.ts';
 * const stride: Argument = {
 *   name: 'stride',
 *   type: { kind: 'List', elem: { kind: 'int' } },
 *   N: 2,
 *   defaultValue: { text: '1', value: [1, 1] },
 *   kwargOnly: false,
 * };
 * ```
 */
export interface Argument {
  /** The name; `''` for an unnamed return. */
  readonly name: string;
  /** The type, without alias annotations. */
  readonly type: SchemaType;
  /** The static size of a sized list, `int[2]`. */
  readonly N?: number;
  /** The default, for arguments that have one. */
  readonly defaultValue?: DefaultValue;
  /** Whether the argument follows `*` and so can only be passed by keyword. */
  readonly kwargOnly: boolean;
  /** The alias annotation, if any. */
  readonly aliasInfo?: AliasInfo;
}

/**
 * The wildcard alias set, which may alias anything: `Tensor(a -> *)`.
 *
 * @example
 * ```ts
 * import { WILDCARD_ALIAS_SET } from './function_schema.ts';
 * WILDCARD_ALIAS_SET; // '*'
 * ```
 */
export const WILDCARD_ALIAS_SET = '*';
/**
 * How many wrappers (`?`, `[]`) one type may nest; deeper text is rejected so that hostile input stays cheap
 * and recursion over types stays shallow.
 *
 * @example
 * ```ts
 * import { MAX_TYPE_NESTING } from './function_schema.ts';
 * MAX_TYPE_NESTING; // 32
 * ```
 */
export const MAX_TYPE_NESTING = 32;
/**
 * The largest static list size N; `int[N] x=1` expands to N elements.
 *
 * @example
 * ```ts
 * import { MAX_LIST_SIZE } from './function_schema.ts';
 * MAX_LIST_SIZE; // 65536
 * ```
 */
export const MAX_LIST_SIZE = 65536;

/**
 * Words PyTorch's lexer turns into keyword tokens, so they never name anything in a schema.
 *
 * @example
 * ```ts
 * import { RESERVED_WORDS } from './function_schema.ts';
 * RESERVED_WORDS.has('in'); // true: `foo(Tensor in)` does not parse
 * ```
 */
export const RESERVED_WORDS: ReadonlySet<string> = new Set(
  ('True False None and as assert break class continue def del elif else for global if import in is not or ' +
    'pass raise return while with Ellipsis NoneType').split(' '),
);

/**
 * Whether `text` can name an operator, overload, argument or alias set.
 *
 * @example
 * ```ts
 * import { isIdentifier } from './function_schema.ts';
 * isIdentifier('dim_IntList'); // true
 * isIdentifier('None'); // false
 * ```
 */
export function isIdentifier(text: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(text) && !RESERVED_WORDS.has(text);
}

/**
 * An operator name with its overload: `aten::add.Tensor`.
 *
 * @example
 * ```ts
 * import { OperatorName } from './function_schema.ts';
 * const op = new OperatorName('aten::add', 'Tensor');
 * op.namespace; // 'aten'
 * String(op); // 'aten::add.Tensor'
 * ```
 */
export class OperatorName {
  /** The qualified name, `ns::op` (or `op` before a namespace is set). */
  readonly name: string;
  /** The overload name, `''` for the default overload. */
  readonly overloadName: string;

  /** Creates a name; `overloadName` defaults to the default overload. */
  constructor(name: string, overloadName = '') {
    this.name = name;
    this.overloadName = overloadName;
  }

  /** The namespace before `::`, `''` when there is none. */
  get namespace(): string {
    return namespaceOf(this.name);
  }

  /** `ns::op.overload`, or `ns::op` for the default overload. */
  toString(): string {
    return this.overloadName === '' ? this.name : `${this.name}.${this.overloadName}`;
  }
}

/**
 * What `new FunctionSchema` takes; the flags and the overload name are optional.
 *
 * @example
 * ```ts
 * import type { FunctionSchemaInit } from './function_schema.ts';
 * const init: FunctionSchemaInit = { name: 'prim::Print', arguments: [], returns: [], isVararg: true };
 * ```
 */
export interface FunctionSchemaInit {
  /** The operator name, `ns::op` or `op`. */
  readonly name: string;
  /** The overload name; `''` (the default) for none. */
  readonly overloadName?: string;
  /** The arguments, positional ones first. */
  readonly arguments: readonly Argument[];
  /** The returns. */
  readonly returns: readonly Argument[];
  /** Whether the argument list ends in `...`. */
  readonly isVararg?: boolean;
  /** Whether the returns end in `...`. */
  readonly isVarret?: boolean;
}

/**
 * Why `new FunctionSchema(init)` rejects `init`: the list and index of the culprit (index -1 with `'name'`).
 *
 * @example
 * ```ts
 * import type { SchemaProblem } from './function_schema.ts';
 * const p: SchemaProblem = { list: 'arguments', index: 1, message: 'Duplicate argument name x' };
 * ```
 */
export interface SchemaProblem {
  /** Where the culprit is. */
  readonly list: 'name' | 'arguments' | 'returns';
  /** Its index in that list. */
  readonly index: number;
  /** What is wrong, naming the culprit. */
  readonly message: string;
}

/**
 * An operator schema. Immutable; the constructor validates (see Note [Printable schemas]) and precomputes
 * what the dispatcher reads on every call.
 *
 * @example
 * ```ts
 * import { FunctionSchema } from './function_schema.ts';
 * const schema = new FunctionSchema({
 *   name: 'aten::relu',
 *   arguments: [{ name: 'self', type: { kind: 'Tensor' }, kwargOnly: false }],
 *   returns: [{ name: '', type: { kind: 'Tensor' }, kwargOnly: false }],
 * });
 * String(schema); // 'aten::relu(Tensor self) -> Tensor'
 * schema.dispatchArgumentIndices; // [0]
 * ```
 */
export class FunctionSchema {
  /** The qualified operator name, `ns::op`. */
  readonly name: string;
  /** The overload name, `''` for the default overload. */
  readonly overloadName: string;
  /** The arguments, normalised and frozen. */
  readonly arguments: readonly Argument[];
  /** The returns, normalised and frozen. */
  readonly returns: readonly Argument[];
  /** Whether the schema takes any number of further arguments (`...` in the argument list). */
  readonly isVararg: boolean;
  /** Whether the schema returns any number of further values (`...` in the returns). */
  readonly isVarret: boolean;
  #dispatchArgumentIndices: readonly number[];
  #isMutable: boolean;

  /**
   * Validates and normalises `init`.
   *
   * @throws {RuntimeError} naming the culprit when the schema breaks a rule PyTorch enforces or cannot be printed.
   */
  constructor(init: FunctionSchemaInit) {
    // Prepared just now by schemaOrProblem for this very object: not again.
    const prepared = checked?.init === init ? checked.prepared : prepareSchema(init);
    checked = undefined;
    if ('message' in prepared) throw new RuntimeError(`${prepared.message} in schema of ${init.name}`);
    this.name = init.name;
    this.overloadName = init.overloadName ?? '';
    this.arguments = prepared.arguments;
    this.returns = prepared.returns;
    this.isVararg = init.isVararg ?? false;
    this.isVarret = init.isVarret ?? false;
    this.#dispatchArgumentIndices = Object.freeze(
      this.arguments.flatMap((arg, i) => (isDispatchType(arg.type) ? [i] : [])),
    );
    this.#isMutable = this.arguments.some((arg) => arg.aliasInfo?.isWrite === true);
  }

  /** The namespace, `''` when the name has none. */
  get namespace(): string {
    return namespaceOf(this.name);
  }
  /** `ns::op.overload`, or `ns::op` for the default overload. */
  get fullName(): string {
    return this.overloadName === '' ? this.name : `${this.name}.${this.overloadName}`;
  }
  /** The operator name as an {@linkcode OperatorName}. */
  get operatorName(): OperatorName {
    return new OperatorName(this.name, this.overloadName);
  }
  /** Whether some argument is written to (`Tensor(a!)`). */
  get isMutable(): boolean {
    return this.#isMutable;
  }
  /**
   * Indices of the arguments the dispatcher extracts keys from: Tensor, Tensor?, Tensor[], Tensor?[] (as
   * PyTorch's DispatchKeyExtractor) and Generator, Generator? (as its unboxed extractor).
   */
  get dispatchArgumentIndices(): readonly number[] {
    return this.#dispatchArgumentIndices;
  }
  /** The index of the argument called `name`, if any. */
  argumentIndexWithName(name: string): number | undefined {
    const i = this.arguments.findIndex((arg) => arg.name === name);
    return i < 0 ? undefined : i;
  }
  /** The canonical text (see {@linkcode printSchema}). */
  toString(): string {
    return printSchema(this);
  }
}

/**
 * The first reason `new FunctionSchema(init)` would reject `init`, or undefined. The parser uses it to
 * report the culprit's position.
 *
 * @example
 * ```ts
 * import { findSchemaProblem } from './function_schema.ts';
 * const int = { kind: 'int' } as const;
 * findSchemaProblem({
 *   name: 'f',
 *   arguments: [
 *     { name: 'a', type: int, defaultValue: { text: '1', value: 1 }, kwargOnly: false },
 *     { name: 'b', type: int, kwargOnly: false },
 *   ],
 *   returns: [],
 * })?.index; // 1: a non-default positional argument follows a default one
 * ```
 */
export function findSchemaProblem(init: FunctionSchemaInit): SchemaProblem | undefined {
  const prepared = prepareSchema(init);
  return 'message' in prepared ? prepared : undefined;
}

type Prepared = { arguments: readonly Argument[]; returns: readonly Argument[] };

// The preparation schemaOrProblem made, handed to the constructor it calls next (and only to that call).
let checked: { readonly init: FunctionSchemaInit; readonly prepared: Prepared } | undefined;

/**
 * `new FunctionSchema(init)`, or the problem {@linkcode findSchemaProblem} would report, validating `init` once
 * (the parser's way: it reports a problem at its position in the text).
 *
 * @example
 * ```ts
 * import { FunctionSchema, schemaOrProblem } from './function_schema.ts';
 * const made = schemaOrProblem({ name: 'f', arguments: [], returns: [] });
 * made instanceof FunctionSchema; // true
 * ```
 */
export function schemaOrProblem(init: FunctionSchemaInit): FunctionSchema | SchemaProblem {
  const prepared = prepareSchema(init);
  if ('message' in prepared) return prepared;
  checked = { init, prepared };
  return new FunctionSchema(init);
}

function prepareSchema(init: FunctionSchemaInit): SchemaProblem | Prepared {
  const nameProblem = checkOperatorName(init.name, init.overloadName ?? '');
  if (nameProblem !== undefined) return { list: 'name', index: -1, message: nameProblem };
  const lists = { arguments: [] as Argument[], returns: [] as Argument[] };
  for (const list of ['arguments', 'returns'] as const) {
    for (const [index, arg] of init[list].entries()) {
      const prepared = prepareArgument(arg, list === 'returns');
      if (typeof prepared === 'string') return { list, index, message: prepared };
      lists[list].push(prepared);
    }
  }
  const seen = new Set<string>();
  let seenKwarg = false;
  let seenDefault = false;
  for (const [index, arg] of lists.arguments.entries()) {
    const fail = (message: string): SchemaProblem => ({ list: 'arguments', index, message });
    if (seen.has(arg.name)) return fail(`Duplicate argument name ${arg.name}`);
    seen.add(arg.name);
    if (seenKwarg && !arg.kwargOnly) return fail(`Positional argument ${arg.name} follows a keyword-only argument`);
    seenKwarg ||= arg.kwargOnly;
    if (arg.defaultValue !== undefined) {
      if (init.isVararg) return fail(`Schemas with vararg (...) can't have default value args (${arg.name})`);
      seenDefault = true;
    } else if (seenDefault && !arg.kwargOnly && arg.type.kind !== 'List') {
      // PyTorch's FunctionSchema::checkSchema; lists are exempt because old serialized schemas had them.
      return fail(`Non-default positional argument follows default argument. Parameter ${arg.name}`);
    }
  }
  return { arguments: Object.freeze(lists.arguments), returns: Object.freeze(lists.returns) };
}

function checkOperatorName(name: string, overloadName: string): string | undefined {
  const parts = name.split('::');
  if (parts.length > 2 || !parts.every(isIdentifier)) return `Invalid operator name '${name}'`;
  if (overloadName !== '' && !isIdentifier(overloadName)) return `Invalid overload name '${overloadName}'`;
  // `default` names the overload packet's default attribute in Python; dunders would shadow attributes.
  if (overloadName === 'default' || overloadName.startsWith('__')) {
    return `Overload name '${overloadName}' is not legal for aten operators`;
  }
  return undefined;
}

function prepareArgument(arg: Argument, isReturn: boolean): Argument | string {
  const what = isReturn ? 'Return' : 'Argument';
  if (isReturn ? arg.name !== '' && !isIdentifier(arg.name) : !isIdentifier(arg.name)) {
    return `${what} name '${arg.name}' is not an identifier`;
  }
  const typeProblem = checkType(arg.type, 0);
  if (typeProblem !== undefined) return `${what} ${arg.name}: ${typeProblem}`;
  if (arg.N !== undefined) {
    const list = arg.type.kind === 'Optional' ? arg.type.elem : arg.type;
    if (list.kind !== 'List') return `${what} ${arg.name} has a list size but type ${printType(arg.type)}`;
    if (!Number.isInteger(arg.N) || arg.N < 0 || arg.N > MAX_LIST_SIZE) {
      return `${what} ${arg.name} has list size ${arg.N}, expected an integer in [0, ${MAX_LIST_SIZE}]`;
    }
  }
  if (isReturn && (arg.defaultValue !== undefined || arg.kwargOnly)) {
    return `Return ${arg.name} cannot have a default value or be keyword-only`;
  }
  const alias = normalizeAliasInfo(arg.aliasInfo);
  if (typeof alias === 'string') return `${what} ${arg.name}: ${alias}`;
  if (alias !== undefined && !aliasFitsType(arg.type, alias)) {
    return `${what} ${arg.name}: alias annotation does not fit type ${printType(arg.type)}`;
  }
  return Object.freeze({
    name: arg.name,
    type: arg.type,
    kwargOnly: arg.kwargOnly === true,
    ...(arg.N === undefined ? {} : { N: arg.N }),
    ...(arg.defaultValue === undefined ? {} : { defaultValue: arg.defaultValue }),
    ...(alias === undefined ? {} : { aliasInfo: alias }),
  });
}

function checkType(type: SchemaType, depth: number): string | undefined {
  if (depth > MAX_TYPE_NESTING) return `type nests deeper than ${MAX_TYPE_NESTING} levels`;
  if (type.kind === 'Optional' || type.kind === 'List') return checkType(type.elem, depth + 1);
  return (BASE_TYPE_KINDS as readonly string[]).includes(type.kind) ? undefined : `unknown type ${type.kind}`;
}

function aliasFitsType(type: SchemaType, alias: AliasInfo | undefined): boolean {
  if (alias === undefined) return true;
  if (type.kind === 'Optional') return aliasFitsType(type.elem, alias);
  if (type.kind === 'List') {
    return alias.containedTypes.length <= 1 && aliasFitsType(type.elem, alias.containedTypes[0]);
  }
  return alias.containedTypes.length === 0;
}

function uniqueSets(sets: readonly string[]): string[] {
  const unique = [...new Set(sets)];
  // The wildcard goes last: PyTorch's parser stops reading names after `*`, so `(*|a)` does not parse.
  return unique.includes(WILDCARD_ALIAS_SET)
    ? [...unique.filter((s) => s !== WILDCARD_ALIAS_SET), WILDCARD_ALIAS_SET]
    : unique;
}

function normalizeAliasInfo(info: AliasInfo | undefined): AliasInfo | undefined | string {
  if (info === undefined) return undefined;
  const contained: AliasInfo[] = [];
  for (const inner of info.containedTypes) {
    const normalized = normalizeAliasInfo(inner);
    if (typeof normalized === 'string') return normalized;
    if (normalized !== undefined) contained.push(normalized);
  }
  const before = uniqueSets(info.beforeSets);
  const after = uniqueSets(info.afterSets);
  const bad = [...before, ...after].find((s) => s !== WILDCARD_ALIAS_SET && !isIdentifier(s));
  if (bad !== undefined) return `alias set '${bad}' is not an identifier`;
  if (before.length === 0) {
    if (after.length > 0) return 'an alias annotation with after-sets needs before-sets';
    // A bare container (`Tensor(a!)[]`) has no text of its own; the parser copies its element's write flag.
    if (contained.length === 0) return undefined;
    return Object.freeze({ beforeSets: [], afterSets: [], isWrite: contained[0].isWrite, containedTypes: contained });
  }
  if (after.length === 0) return 'an alias annotation with before-sets needs after-sets';
  const sameSets = after.length === before.length && after.every((s) => before.includes(s));
  return Object.freeze({
    beforeSets: Object.freeze(before),
    afterSets: Object.freeze(sameSets ? before : after),
    isWrite: info.isWrite,
    containedTypes: Object.freeze(contained),
  });
}

function isDispatchType(type: SchemaType): boolean {
  const inner = type.kind === 'Optional' ? type.elem : type;
  if (inner.kind === 'Tensor' || inner.kind === 'Generator') return true;
  if (type.kind !== 'List') return false;
  const elem = type.elem.kind === 'Optional' ? type.elem.elem : type.elem;
  return elem.kind === 'Tensor';
}

function namespaceOf(name: string): string {
  const i = name.indexOf('::');
  return i < 0 ? '' : name.slice(0, i);
}

/**
 * A copy of `schema` in namespace `ns` (what a library's `define` does to `foo(Tensor x) -> Tensor`).
 *
 * @throws {RuntimeError} when the schema names a different namespace.
 * @example
 * ```ts
 * import { withNamespace } from './function_schema.ts';
 * import { parseSchema } from './schema_parser.ts';
 * withNamespace(parseSchema('foo(Tensor x) -> Tensor'), 'myns').fullName; // 'myns::foo'
 * ```
 */
export function withNamespace(schema: FunctionSchema, ns: string): FunctionSchema {
  if (!isIdentifier(ns)) throw new RuntimeError(`Invalid namespace '${ns}' for operator ${schema.fullName}`);
  const current = schema.namespace;
  if (current === ns) return schema;
  if (current !== '') {
    throw new RuntimeError(
      `Explicitly provided namespace (${current}) in schema string does not match namespace of enclosing ` +
        `library (${ns}): ${schema.fullName}`,
    );
  }
  return new FunctionSchema({ ...schema, name: `${ns}::${schema.name}` });
}

/**
 * A type's text without alias annotations or list size: `Tensor?[]`.
 *
 * @example
 * ```ts
 * import { printType } from './function_schema.ts';
 * printType({ kind: 'Optional', elem: { kind: 'List', elem: { kind: 'int' } } }); // 'int[]?'
 * ```
 */
export function printType(type: SchemaType): string {
  return typeText(type, undefined, undefined);
}

/**
 * An alias annotation's text, as PyTorch prints AliasInfo: `(a)`, `(a!)`, `(a|b -> *)`. The after-sets are
 * printed only when they differ from the before-sets.
 *
 * @example
 * ```ts
 * import { printAliasInfo } from './function_schema.ts';
 * printAliasInfo({ beforeSets: ['a'], afterSets: ['*'], isWrite: false, containedTypes: [] }); // '(a -> *)'
 * ```
 */
export function printAliasInfo(info: AliasInfo): string {
  const sameSets = info.afterSets.length === info.beforeSets.length &&
    info.afterSets.every((s) => info.beforeSets.includes(s));
  const after = sameSets ? '' : ` -> ${info.afterSets.join('|')}`;
  return `(${info.beforeSets.join('|')}${info.isWrite ? '!' : ''}${after})`;
}

// PyTorch writes `Type(alias)?`: the annotation sits between the type and the `?`, because its parser reads
// the annotation right after the base type. Containers annotate after `[]`, their elements before it.
function typeText(type: SchemaType, alias: AliasInfo | undefined, N: number | undefined): string {
  switch (type.kind) {
    case 'Optional':
      return `${typeText(type.elem, alias, N)}?`;
    case 'List':
      return `${typeText(type.elem, alias?.containedTypes[0], undefined)}[${N ?? ''}]${ownAliasText(alias)}`;
    default:
      return `${type.kind}${ownAliasText(alias)}`;
  }
}

function ownAliasText(alias: AliasInfo | undefined): string {
  return alias !== undefined && alias.beforeSets.length > 0 ? printAliasInfo(alias) : '';
}

/**
 * An argument's text, `Type(alias)? name=default`, as PyTorch's `operator<<(ostream&, const Argument&)`.
 *
 * @example
 * ```ts
 * import { printArgument } from './function_schema.ts';
 * printArgument({ name: 'out', type: { kind: 'Tensor' }, kwargOnly: true,
 *   aliasInfo: { beforeSets: ['a'], afterSets: ['a'], isWrite: true, containedTypes: [] } }); // 'Tensor(a!) out'
 * ```
 */
export function printArgument(arg: Argument): string {
  const name = arg.name === '' ? '' : ` ${arg.name}`;
  const value = arg.defaultValue === undefined ? '' : `=${arg.defaultValue.text}`;
  return `${typeText(arg.type, arg.aliasInfo, arg.N)}${name}${value}`;
}

/**
 * The canonical text of a schema, as PyTorch's `operator<<(ostream&, const FunctionSchema&)`: `*, ` before
 * the first keyword-only argument, and returns in parentheses unless there is exactly one (and no `...`)
 * whose text does not itself start with `(`; no returns print as `()`.
 *
 * @example
 * ```ts
 * import { printSchema } from './function_schema.ts';
 * import { parseSchema } from './schema_parser.ts';
 * printSchema(parseSchema('aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)'));
 * // 'aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)'
 * printSchema(parseSchema('aten::layer_norm.x(Tensor input, float eps=1e-05) -> (Tensor)'));
 * // 'aten::layer_norm.x(Tensor input, float eps=1.0000000000000001e-05) -> Tensor'
 * ```
 */
export function printSchema(schema: FunctionSchema): string {
  const args: string[] = [];
  let seenKwargOnly = false;
  for (const arg of schema.arguments) {
    if (arg.kwargOnly && !seenKwargOnly) args.push('*');
    seenKwargOnly ||= arg.kwargOnly;
    args.push(printArgument(arg));
  }
  if (schema.isVararg) args.push('...');
  const returns = schema.returns.map(printArgument);
  if (schema.isVarret) returns.push('...');
  // A lone return starting with `(` (a tuple type) would read back as a return list, so it keeps its parens.
  const bare = schema.returns.length === 1 && !schema.isVarret && !returns[0].startsWith('(') ||
    schema.returns.length === 0 && schema.isVarret;
  const returnText = bare ? returns[0] : `(${returns.join(', ')})`;
  return `${schema.fullName}(${args.join(', ')}) -> ${returnText}`;
}
