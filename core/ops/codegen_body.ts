/**
 * The bodies of the generated functions and methods: a fast path for plain positional calls, and the
 * run-time parser for everything else.
 *
 * Note [Fast path]
 * A call with exactly `n` positional arguments and no options object is bound by inline checks: for each
 * overload in PyTorch's order that can take `n` positionals, the checks of arg_values.ts on each argument
 * (`isLiveTensor`, `isScalarArg`, ...) and, when they pass, a direct `op.callUnchecked` (the arguments are
 * checked already) with the converted arguments and the defaults. These are the parser's own checks in the parser's order, so the fast path binds exactly
 * what `callParsed` would; any other call (an options object, varargs, trailing `undefined`, or no overload
 * matching) goes to `callParsed`, which also raises every error.
 *
 * @module
 */
import type { Param, Signature } from './arg_signature.ts';
import type { GenOverload } from './codegen_types.ts';
import { DType } from '../tensor/dtype.ts';

/** The inline check of one argument; `undefined` when every value fits. */
function check(p: Param, v: string, sig: Signature, index: number): string | undefined {
  let c: string | undefined;
  switch (p.kind) {
    case 'Tensor':
      c = `isLiveTensor(${v})`;
      break;
    case 'Scalar':
      c = `isScalarArg(${v})`;
      break;
    case 'int':
      c = `isIntArg(${v})`;
      break;
    case 'float':
      c = `isFloatArg(${v})`;
      break;
    case 'bool':
      c = `typeof ${v} === 'boolean'`;
      break;
    case 'str':
      c = `typeof ${v} === 'string'`;
      break;
    case 'int[]':
      c = `isIntListArg(${v}, ${p.listSize})`;
      break;
    case 'Tensor[]':
      c = `isTensorListArg(${v}, '${sig.name}', '${p.name}', ${index})`;
      break;
    case 'ScalarType':
      c = `isDTypeArg(${v})`;
      break;
    case 'Device':
      c = `isDeviceArg(${v})`;
      break;
    case 'Generator':
      c = `isGeneratorArg(${v})`;
      break;
    case 'Layout':
      c = `isLayoutArg(${v})`;
      break;
    case 'MemoryFormat':
      c = `isMemoryFormatArg(${v})`;
      break;
    case 'reduction':
      // The parser takes any value here and raises a ValueError for a bad one; the fast path takes the strings
      // (never a trailing options object) and leaves the rest to the parser.
      c = `typeof ${v} === 'string'`;
  }
  if (p.allowNone && c !== undefined) return `(${v} == null || ${c})`;
  return c;
}

/** The conversion of one bound argument to what the operator takes. */
function converted(p: Param, v: string): string {
  let e: string;
  switch (p.kind) {
    case 'Scalar':
      e = `scalarArg(${v})`;
      break;
    case 'int':
      e = `intArg(${v})`;
      break;
    case 'float':
      e = `floatArg(${v})`;
      break;
    case 'int[]':
      e = `intListArg(${v}, ${p.listSize})`;
      break;
    case 'ScalarType':
      e = `dtypeArg(${v})`;
      break;
    case 'Device':
      e = `deviceArg(${v})`;
      break;
    case 'reduction':
      e = `reductionArg(${v})`;
      break;
    default:
      e = v;
  }
  // None (null or undefined) means the default, as PyTorch treats None for a parameter that allows it.
  if (!p.allowNone) return e;
  return e === v && p.defaultValue === null ? `(${v} ?? null)` : `(${v} == null ? ${literal(p.defaultValue)} : ${e})`;
}

/** A JS expression for a default value. */
export function literal(value: unknown): string {
  if (value instanceof DType) return `dtypeArg(${value.scalarType})`;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  }
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** Whether `sig` can bind `n` positional arguments (and, `withOptions`, an options object). */
function takes(sig: Signature, n: number, withOptions: boolean): boolean {
  if (n > sig.maxPosArgs && !(sig.varargs && n > 1)) return false;
  const given = sig.varargs && n > 1 ? 1 : n;
  // The fast path with options takes only keyword-only and optional parameters from the options object.
  return sig.params.every((p, i) => i < given || p.optional || (withOptions && p.keywordOnly));
}

/** Module-level constants the fast paths use: the option names each overload takes. */
export interface FastPathConstants {
  /** The name of the module constant that holds `names` (one constant for each distinct list). */
  keys(names: readonly string[]): string;
}

/**
 * The fast-path line of one overload for `n` positionals, and an options object `o` when `options` is set
 * (its keys must all name parameters not given positionally).
 */
function fastCall(
  o: GenOverload,
  n: number,
  self: 'this' | undefined,
  options: FastPathConstants | undefined,
): { readonly conds: readonly string[]; readonly call: string } {
  const sig = o.sig;
  const conds: string[] = [];
  const values = new Array<string>(sig.schemaLength);
  if (self !== undefined) values[0] = self;
  for (const [index, value] of sig.fixed) values[index] = literal(value);
  if (sig.varargs && n > 1) {
    // view(2, 3): every positional is an int of the one int list.
    const ps = Array.from({ length: n }, (_, i) => `p${i}`);
    conds.push(...ps.map((p) => `isIntArg(${p})`));
    values[sig.params[0].schemaIndex] = `[${ps.map((p) => `intArg(${p})`).join(', ')}]`;
  }
  const given = sig.varargs && n > 1 ? 1 : n;
  if (options !== undefined) {
    const names = sig.params.slice(given).map((p) => p.name);
    conds.push(`optionsWithin(o, ${options.keys(names)})`);
  }
  let requiresGrad = false;
  sig.params.forEach((p, i) => {
    if (i < given && values[p.schemaIndex] !== undefined) return;
    if (i >= given) {
      if (options === undefined) {
        if (p.schemaIndex >= 0) values[p.schemaIndex] = literal(p.defaultValue);
        return;
      }
      // From the options object: undefined is "not given", null is None.
      const v = `o.${p.name}`;
      const ok = check(p, v, sig, i);
      if (!p.optional) conds.push(`${v} !== undefined && ${ok ?? 'true'}`);
      // A check that lets None through lets undefined through.
      else if (ok !== undefined) conds.push(p.allowNone ? ok : `(${v} === undefined || ${ok})`);
      if (p.schemaIndex < 0) {
        requiresGrad = true;
        return;
      }
      const value = converted(p, v);
      if (!p.optional || p.allowNone) values[p.schemaIndex] = value;
      // Checked already, a value given is never null here: `??` is "not given".
      else if (value === v) values[p.schemaIndex] = `${v} ?? ${literal(p.defaultValue)}`;
      else values[p.schemaIndex] = `(${v} === undefined ? ${literal(p.defaultValue)} : ${value})`;
      return;
    }
    const v = `p${i}`;
    // A varargs list given as one value: a list, or one int standing for a one-element list.
    const c = sig.varargs && i === 0
      ? `(Array.isArray(${v}) ? isIntListArg(${v}, 0) : isIntArg(${v}))`
      : check(p, v, sig, i);
    if (c !== undefined) conds.push(c);
    values[p.schemaIndex] = sig.varargs && i === 0 ? `intListArg(${v}, 0)` : converted(p, v);
  });
  let call = `ops()[${JSON.stringify(o.key)}].callUnchecked(${values.join(', ')})`;
  if (requiresGrad) call = `requireGradIf(o, ${call})`;
  return { conds, call };
}

/**
 * The body of a generated function (`self` undefined) or method (`self` 'this'): the fast paths by number of
 * positional arguments, without and with a trailing options object (Note [Fast path]), then `callParsed` with
 * the overload group in the module variable `spec.name`, which `spec.init` assigns on first use. `constants`
 * names the module-level constants the body refers to.
 */
export function functionBody(
  group: readonly GenOverload[],
  spec: { readonly name: string; readonly init: string },
  self: 'this' | undefined,
  constants: FastPathConstants,
): { body: string; arity: number } {
  // Varargs int lists get fast paths up to four ints (`zeros(2, 3, 4, 5)`); longer ones are parsed.
  const maxPos = Math.max(...group.map((o) => (o.sig.varargs ? 4 : o.sig.maxPosArgs)));
  const lines: string[] = [];
  let arity = 0;
  const alive = self === undefined ? '' : ' && isLiveTensor(this)';
  // Methods without parameters take no options object either (METH_NOARGS in PyTorch: the parser refuses it).
  const takesOptions = group.some((o) => o.sig.params.length > 0);
  for (const withOptions of takesOptions ? [false, true] : [false]) {
    for (let n = 0; n <= maxPos; n++) {
      const calls: string[] = [];
      const tried: Array<readonly string[]> = [];
      for (const o of group) {
        if (!takes(o.sig, n, withOptions)) continue;
        const { conds, call } = fastCall(o, n, self, withOptions ? constants : undefined);
        // Left out when its checks begin with all the checks of an earlier line: it is never reached (the checks
        // are evaluated in order, and the earlier line's checks passing would have returned).
        if (tried.some((t) => t.every((c, i) => conds[i] === c))) continue;
        tried.push(conds);
        if (conds.length === 0) {
          calls.push(`return ${call};`);
          break; // binds unconditionally: later overloads are never reached
        }
        calls.push(`if (${conds.join(' && ')}) return ${call};`);
      }
      if (calls.length === 0) continue;
      const count = withOptions ? n + 1 : n;
      arity = Math.max(arity, count);
      lines.push(
        withOptions
          ? `if (n === ${count}${alive} && isOptions(p${n})) {\n  const o = p${n};`
          : `if (n === ${count}${alive}) {`,
        ...calls.map((c) => `  ${c}`),
        '}',
      );
    }
  }
  const fastPaths = lines.length;
  lines.push(`${spec.name} ??= ${spec.init};`);
  lines.push(`return callParsed(${spec.name}, ops(), ${self ?? 'undefined'}, arguments);`);
  if (fastPaths > 0) lines.unshift('const n = arguments.length;');
  return { body: lines.join('\n'), arity };
}
