/**
 * Python-binding signatures of operator overloads (PyTorch's `FunctionSignature`): the parameters a call of
 * the public API binds, in PyTorch's order and with its printed types, built from an operator schema. The
 * code generator uses them to order overloads and write the fast paths; the run-time parser (arg_parser.ts)
 * binds calls with them.
 *
 * @module
 */
import type { Argument, FunctionSchema, SchemaType } from '../dispatch/function_schema.ts';
import { printType } from '../dispatch/function_schema.ts';
import { dtypeArg } from './arg_opaque.ts';

/** What a parameter accepts (one check and one conversion each, in arg_values.ts). */
export type ParamKind =
  | 'Tensor'
  | 'Scalar'
  | 'int'
  | 'float'
  | 'bool'
  | 'str'
  | 'int[]'
  | 'Tensor[]'
  | 'ScalarType'
  | 'Device'
  | 'Generator'
  | 'Layout'
  | 'MemoryFormat'
  /** A loss's `int reduction`, taken as `'none' | 'mean' | 'sum'` (as `torch.nn.functional` takes it). */
  | 'reduction';

/** One parameter of a signature. */
export interface Param {
  /** The name as the JS API spells it (camelCase): the options key, and the name messages print. */
  readonly name: string;
  /** What it accepts. */
  readonly kind: ParamKind;
  /** PyTorch's printed type (`Tensor`, `Number`, `tuple of ints`, `torch.dtype`, ...). */
  readonly typeName: string;
  /** The schema's type text (`Scalar?`, `int[1]`), which orders overloads as torchgen orders them. */
  readonly schemaType: string;
  /** The schema's default text (`1`, `None`), part of the text overloads are sorted by. */
  readonly defaultText: string | undefined;
  /** `int[N]`: a single int stands for the list when N > 0. */
  readonly listSize: number;
  /** After PyTorch's `*`: options object only. */
  readonly keywordOnly: boolean;
  /** May be left out (it has a default, or is an optional positional). */
  readonly optional: boolean;
  /** Accepts None (`null` / `undefined`). */
  readonly allowNone: boolean;
  /** What the operator receives when the parameter is left out. */
  readonly defaultValue: unknown;
  /** Position in the operator's schema arguments; -1 for `requiresGrad`, which PyTorch applies after the call. */
  readonly schemaIndex: number;
}

/** How one overload is bound. */
export interface Signature {
  /** The operator (`add.Tensor`). */
  readonly key: string;
  /** PyTorch's name in messages (`add`, `index_select`). */
  readonly name: string;
  /** The parameters a call binds (`self` excluded for methods). */
  readonly params: readonly Param[];
  /** How many parameters must be given. */
  readonly minArgs: number;
  /** How many parameters there are. */
  readonly maxArgs: number;
  /** How many may be given positionally. */
  readonly maxPosArgs: number;
  /** Bound but neither listed nor counted in messages (PyTorch's Scalar twins of add/sub/mul/div). */
  readonly hidden: boolean;
  /** PyTorch's allow_varargs_intlist: the only positional parameter is an int list (`view(2, 3)`). */
  readonly varargs: boolean;
  /** Number of schema arguments the operator takes. */
  readonly schemaLength: number;
  /** Schema arguments the public signature leaves out (a Python-binding signature), with their values. */
  readonly fixed: ReadonlyArray<readonly [index: number, value: unknown]>;
  /** PyTorch's printed form, `(Tensor input, Tensor other, *, Number alpha)`. */
  readonly text: string;
}

/** How to build a signature: see {@linkcode buildSignature}. */
export interface SignatureOptions {
  /** The operator (`add.Tensor`). */
  readonly key: string;
  /** A Tensor method: the schema's first argument is `this`, not a parameter. */
  readonly method: boolean;
  /** See {@linkcode Signature.hidden}. */
  readonly hidden?: boolean;
  /** The Python-binding signature when it differs from the schema (matched to the schema by name). */
  readonly python?: FunctionSchema;
  /** Adds PyTorch's Python-only `requires_grad` keyword (factories). */
  readonly requiresGrad?: boolean;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function kindOf(arg: Argument, inner: SchemaType): ParamKind {
  switch (inner.kind) {
    case 'Tensor':
    case 'Scalar':
    case 'float':
    case 'bool':
    case 'str':
    case 'ScalarType':
    case 'Device':
    case 'Generator':
    case 'Layout':
    case 'MemoryFormat':
      return inner.kind;
    case 'int':
    case 'SymInt':
      return arg.name === 'reduction' ? 'reduction' : 'int';
    case 'List':
      if (inner.elem.kind === 'Tensor') return 'Tensor[]';
      if (inner.elem.kind === 'int' || inner.elem.kind === 'SymInt') return 'int[]';
  }
  throw new Error(`No public argument parsing for schema type ${printType(arg.type)} of '${arg.name}'`);
}

const TYPE_NAMES: { readonly [K in ParamKind]: string } = {
  'Tensor': 'Tensor',
  'Scalar': 'Number',
  'int': 'int',
  'float': 'float',
  'bool': 'bool',
  'str': 'str',
  'int[]': 'tuple of ints',
  'Tensor[]': 'tuple of Tensors',
  'ScalarType': 'torch.dtype',
  'Device': 'torch.device',
  'Generator': 'torch.Generator',
  'Layout': 'torch.layout',
  'MemoryFormat': 'torch.memory_format',
  'reduction': 'str',
};

/** PyTorch 1.13 prints SymInt parameters by their own name. */
function typeNameOf(kind: ParamKind, inner: SchemaType): string {
  if (inner.kind === 'SymInt') return 'SymInt';
  if (inner.kind === 'List' && inner.elem.kind === 'SymInt') return 'tuple of SymInts';
  return TYPE_NAMES[kind];
}

/** The value an operator receives for a left-out parameter. */
function defaultFor(arg: Argument, kind: ParamKind): unknown {
  const d = arg.defaultValue?.value;
  if (d === undefined || d === null) return null;
  if (kind === 'ScalarType') return dtypeArg(d as number);
  if (typeof d === 'bigint') return Number(d);
  return d;
}

function toParam(arg: Argument, schemaIndex: number, keywordOnly: boolean, name: string): Param {
  const optionalType = arg.type.kind === 'Optional';
  const inner = optionalType ? (arg.type as { elem: SchemaType }).elem : arg.type;
  const kind = kindOf(arg, inner);
  const hasDefault = arg.defaultValue !== undefined;
  const schemaType = printType(arg.type);
  return {
    name,
    kind,
    typeName: typeNameOf(kind, inner),
    schemaType: arg.N !== undefined ? schemaType.replace('[]', `[${arg.N}]`) : schemaType,
    defaultText: arg.defaultValue?.text,
    listSize: arg.N ?? 0,
    keywordOnly,
    // A keyword-only optional without a default (`str? rounding_mode`) must be given: it selects its overload.
    optional: hasDefault || (optionalType && !keywordOnly),
    allowNone: optionalType || arg.defaultValue?.value === null,
    defaultValue: defaultFor(arg, kind),
    schemaIndex,
  };
}

const REQUIRES_GRAD: Param = {
  name: 'requiresGrad',
  kind: 'bool',
  typeName: 'bool',
  schemaType: 'bool',
  defaultText: 'False',
  listSize: 0,
  keywordOnly: true,
  optional: true,
  allowNone: false,
  defaultValue: false,
  schemaIndex: -1,
};

/**
 * The signature of one overload as the public API binds it. Functions name a Tensor `self` `input`, as
 * PyTorch's bindings do; methods bind `self` to `this`.
 *
 * @example
 * ```ts
 * import { parseSchema } from '../dispatch/schema_parser.ts';
 * import { buildSignature } from './arg_signature.ts';
 * const s = parseSchema('aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor');
 * buildSignature(s, { key: 'add.Tensor', method: false }).text; // '(Tensor input, Tensor other, *, Number alpha)'
 * ```
 */
export function buildSignature(schema: FunctionSchema, options: SignatureOptions): Signature {
  const source = options.python ?? schema;
  const byName = new Map(schema.arguments.map((a, i) => [a.name, i]));
  const params: Param[] = [];
  source.arguments.forEach((arg, i) => {
    if (options.method && i === 0) return;
    const index = byName.get(arg.name);
    if (index === undefined) throw new Error(`${options.key}: no schema argument '${arg.name}'`);
    const name = !options.method && i === 0 && arg.name === 'self' && arg.type.kind === 'Tensor'
      ? 'input'
      : camel(arg.name);
    params.push(toParam(arg, index, arg.kwargOnly, name));
  });
  if (options.requiresGrad) params.push(REQUIRES_GRAD);
  const bound = new Set(params.map((p) => p.schemaIndex));
  if (options.method) bound.add(0);
  const fixed = schema.arguments.flatMap((arg, i) =>
    bound.has(i) ? [] : [[i, defaultFor(arg, kindOf(arg, innerOf(arg.type)))] as const]
  );
  const positional = params.filter((p) => !p.keywordOnly);
  return {
    key: options.key,
    name: source.name.slice(source.name.indexOf('::') + 2).split('.')[0],
    params,
    minArgs: params.filter((p) => !p.optional).length,
    maxArgs: params.length,
    maxPosArgs: positional.length,
    hidden: options.hidden ?? false,
    varargs: positional.length === 1 && positional[0].kind === 'int[]',
    schemaLength: schema.arguments.length,
    fixed,
    text: signatureText(params),
  };
}

function innerOf(t: SchemaType): SchemaType {
  return t.kind === 'Optional' ? t.elem : t;
}

/** PyTorch's `FunctionSignature::toString`. */
function signatureText(params: readonly Param[]): string {
  const parts: string[] = [];
  let keywordSeen = false;
  for (const p of params) {
    if (p.keywordOnly && !keywordSeen) {
      parts.push('*');
      keywordSeen = true;
    }
    parts.push(`${p.typeName} ${p.name}`);
  }
  return `(${parts.join(', ')})`;
}

/** torchgen's `is_arg_smaller`: which of two types at one position PyTorch tries later. */
function isArgSmaller(t1: string, t2: string): boolean {
  return (t1 === 'Scalar' && t2 === 'Tensor') || (t1 === 'Scalar?' && t2 === 'Tensor?') ||
    (t1 === 'int[]' && (t2 === 'int' || t2 === 'int?')) || (t1 === 'Tensor[]' && t2.includes('[]')) ||
    (t1 === 'SymInt[]' && t2 === 'int[]') || ((t1 === 'SymInt' || t1 === 'int') && t2 === 'Tensor');
}

function isSmaller(s1: Signature, s2: Signature): boolean {
  if (s1.params.length !== s2.params.length) return false;
  let equal = true;
  for (let i = 0; i < s1.params.length; i++) {
    const a = s1.params[i].schemaType, b = s2.params[i].schemaType;
    if (a !== b) equal = false;
    if (a !== b && !isArgSmaller(a, b)) return false;
  }
  return !equal;
}

/** torchgen's `signature_str`, which orders overloads before the partial order refines it. */
function sortKey(s: Signature): string {
  const parts: string[] = [];
  let keywordSeen = false;
  for (const p of s.params) {
    if (p.keywordOnly && !keywordSeen) {
      parts.push('*');
      keywordSeen = true;
    }
    parts.push(`${p.schemaType} ${p.name}${p.defaultText === undefined ? '' : `=${p.defaultText}`}`);
  }
  return `${s.name}(${parts.join(', ')})`;
}

/**
 * Overloads in the order PyTorch's bindings try them (torchgen's `sort_overloads`): by signature text, then
 * Tensor before Scalar, int before int[], Tensor[] last, where two signatures differ only so.
 *
 * @example
 * ```ts
 * // codegen: const ordered = sortSignatures(group.map(...));
 * ```
 */
export function sortSignatures<T extends Signature>(signatures: readonly T[]): T[] {
  const sorted = [...signatures].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  const largerThan = new Map<number, Set<number>>();
  sorted.forEach((s1, i) => {
    sorted.forEach((s2, j) => {
      if (isSmaller(s1, s2)) {
        const set = largerThan.get(i) ?? new Set<number>();
        set.add(j);
        largerThan.set(i, set);
      }
    });
  });
  if (largerThan.size === 0) return sorted;
  const ids = sorted.map((_, i) => i).filter((i) => !largerThan.has(i));
  for (let k = 0; k < ids.length; k++) {
    const i = ids[k];
    for (const j of [...largerThan.keys()].sort((a, b) => a - b)) {
      const larger = largerThan.get(j)!;
      larger.delete(i);
      if (larger.size === 0) {
        largerThan.delete(j);
        ids.push(j);
      }
    }
  }
  return ids.map((i) => sorted[i]);
}
