/**
 * The TypeScript side of the generated API: overload signatures and JSDoc types from the Python-binding
 * signatures (arg_signature.ts). Positional parameters stay positional; keyword-only ones, and optional
 * positionals not given positionally, go into a trailing options object.
 *
 * @module
 */
import type { FunctionSchema, SchemaType } from '../dispatch/function_schema.ts';
import type { Param, ParamKind, Signature } from './arg_signature.ts';

/** One overload of a generated group, as the generator sees it. */
export interface GenOverload {
  /** The operator (`add.Tensor`). */
  readonly key: string;
  /** Its one-line description. */
  readonly doc: string;
  /** The operator's schema (its returns give the TS return type). */
  readonly schema: FunctionSchema;
  /** How calls bind it. */
  readonly sig: Signature;
}

const KIND_TYPES: { readonly [K in ParamKind]: string } = {
  'Tensor': 'Tensor',
  'Scalar': 'Scalar',
  'int': 'number',
  'float': 'number',
  'bool': 'boolean',
  'str': 'string',
  'int[]': 'readonly number[]',
  'Tensor[]': 'readonly Tensor[]',
  'ScalarType': 'DTypeLike',
  'Device': 'DeviceLike',
  'Generator': 'Generator',
  'Layout': "'strided'",
  'MemoryFormat': "'contiguous_format' | 'preserve_format'",
  'reduction': "'none' | 'mean' | 'sum'",
};

/** The TS type of a parameter. */
export function paramType(p: Param): string {
  let t = KIND_TYPES[p.kind];
  if (p.kind === 'int[]' && p.listSize > 0) t = `number | ${t}`;
  return p.allowNone ? `${t} | null` : t;
}

function returnTypeOf(t: SchemaType): string {
  switch (t.kind) {
    case 'Tensor':
      return 'Tensor';
    case 'List':
      return `${returnTypeOf(t.elem)}[]`;
    case 'int':
    case 'SymInt':
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    default:
      return 'unknown';
  }
}

/** The TS return type of a schema. */
export function returnType(schema: FunctionSchema): string {
  const r = schema.returns;
  if (r.length === 0) return 'void';
  if (r.length === 1) return returnTypeOf(r[0].type);
  return `[${r.map((x) => returnTypeOf(x.type)).join(', ')}]`;
}

const isRequiredKwarg = (p: Param) => p.keywordOnly && !p.optional;

/**
 * The TS signatures of one overload: for each number of optional positionals given, one signature whose
 * options object holds the rest (`sum(x, 1, true)` and `sum(x, 1, { keepdim: true })` both type-check);
 * varargs int lists also get a rest-parameter form (`zeros(2, 3)`).
 */
export function signaturesOf(name: string, o: GenOverload, method: boolean): string[] {
  const positional = o.sig.params.filter((p) => !p.keywordOnly);
  const keywords = o.sig.params.filter((p) => p.keywordOnly);
  const required = positional.filter((p) => !p.optional).length;
  const ret = returnType(o.schema);
  const head = method ? ['this: Tensor'] : [];
  const out: string[] = [];
  const optionsOf = (rest: readonly Param[]) => {
    const fields = rest.map((p) => `${p.name}${isRequiredKwarg(p) ? '' : '?'}: ${paramType(p)}`);
    return `options${rest.some(isRequiredKwarg) ? '' : '?'}: { ${fields.join('; ')} }`;
  };
  for (let given = required; given <= positional.length; given++) {
    const params = positional.slice(0, given).map((p) => `${p.name}: ${paramType(p)}`);
    const rest = [...positional.slice(given), ...keywords];
    if (rest.length > 0) params.push(optionsOf(rest));
    out.push(`${name}(${[...head, ...params].join(', ')}): ${ret}`);
  }
  if (o.sig.varargs) {
    const list = positional[0].name;
    out.push(`${name}(${[...head, `...${list}: number[]`].join(', ')}): ${ret}`);
    if (keywords.length > 0) {
      const opts = optionsOf(keywords).replace(/^options\??: /, '');
      out.push(`${name}(${[...head, `...args: [...${list}: number[], options: ${opts}]`].join(', ')}): ${ret}`);
    }
  }
  return out;
}

/**
 * A last signature accepting what any overload accepts, position by position, so that callers holding a
 * union (`Tensor | number`) type-check; the run-time parser still picks the exact overload.
 */
export function unionSignature(name: string, group: readonly GenOverload[], method: boolean): string {
  const sigs = group.map((o) => o.sig);
  const positionals = sigs.map((s) => s.params.filter((p) => !p.keywordOnly));
  const width = Math.max(...positionals.map((p) => p.length));
  const params: string[] = [];
  const usedNames = new Set<string>();
  for (let i = 0; i < width; i++) {
    const types = new Set<string>();
    let optional = false;
    let pname = '';
    for (const pos of positionals) {
      const p = pos[i];
      if (p === undefined || p.optional) optional = true;
      if (p !== undefined) {
        for (const t of paramType(p).split(' | ')) types.add(t);
        pname ||= p.name;
      }
    }
    // Overloads may name a position differently (`arange(end)` / `arange(start, end)`).
    if (usedNames.has(pname)) pname = `arg${i}`;
    usedNames.add(pname);
    params.push(`${pname}${optional ? '?' : ''}: ${[...types].join(' | ')}`);
  }
  const fields = new Map<string, Set<string>>();
  for (const sig of sigs) {
    for (const p of sig.params) {
      if (!p.keywordOnly && !p.optional) continue;
      const set = fields.get(p.name) ?? new Set<string>();
      for (const t of paramType(p).split(' | ')) set.add(t);
      fields.set(p.name, set);
    }
  }
  if (fields.size > 0) {
    params.push(`options?: { ${[...fields].map(([f, t]) => `${f}?: ${[...t].join(' | ')}`).join('; ')} }`);
  }
  const ret = [...new Set(group.map((o) => returnType(o.schema)))].join(' | ');
  return `${name}(${(method ? ['this: Tensor', ...params] : params).join(', ')}): ${ret}`;
}
