/**
 * Generates the typed functional API and the Tensor methods from the operator declarations, the way
 * PyTorch's torchgen generates its Python bindings from native_functions.yaml.
 *
 * Run `npm run gen:ops` after changing `core/ops/declarations*`; `--check` fails when the committed output is
 * stale (the test suite runs it).
 *
 * Note [Overload groups]
 * Declarations that share a function name (`add.Tensor`, `add.Scalar`) become one function. Its positional
 * parameters are the first overload's positional arguments, with types widened to every overload's type at
 * that position; keyword-only arguments (and arguments only some overloads take positionally) go into one
 * trailing options object, camelCased. At run time the first overload whose tensor/scalar pattern matches the
 * actual arguments is called, with each of its arguments taken by name and defaults filled from its schema.
 *
 * @module
 */
import { OPS } from './declarations.ts';
import type { OpDecl } from './op_decl.ts';
import type { Argument, FunctionSchema, SchemaType } from '../dispatch/function_schema.ts';
import { parseSchema } from '../dispatch/schema_parser.ts';

interface Overload {
  readonly key: string;
  readonly decl: OpDecl;
  readonly schema: FunctionSchema;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function baseName(schema: FunctionSchema): string {
  return schema.name.slice(schema.name.indexOf('::') + 2);
}

function tsType(t: SchemaType, forReturn = false): string {
  switch (t.kind) {
    case 'Optional':
      return `${tsType(t.elem, forReturn)} | null`;
    case 'List':
      if (t.elem.kind === 'int' || t.elem.kind === 'SymInt') {
        return forReturn ? 'number[]' : 'number | readonly number[]';
      }
      return forReturn ? `${wrap(tsType(t.elem, true))}[]` : `readonly ${wrap(tsType(t.elem))}[]`;
    case 'Tensor':
      return 'Tensor';
    case 'int':
    case 'SymInt':
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'str':
      return 'string';
    case 'Scalar':
      return 'number | boolean';
    case 'ScalarType':
      return 'DTypeLike';
    case 'Device':
      return 'DeviceLike';
    case 'Generator':
      return 'Generator';
    case 'Layout':
      return "'strided'";
    case 'MemoryFormat':
      return "'contiguous_format' | 'preserve_format'";
    default:
      return 'unknown';
  }
}

const wrap = (s: string) => (s.includes('|') ? `(${s})` : s);

function returnType(schema: FunctionSchema): string {
  const r = schema.returns;
  if (r.length === 0) return 'void';
  if (r.length === 1) return tsType(r[0].type, true);
  return `[${r.map((x) => tsType(x.type, true)).join(', ')}]`;
}

/** A runtime test that `v` fits type `t` (used to pick an overload); undefined when it always fits. */
function predicate(v: string, t: SchemaType): string | undefined {
  switch (t.kind) {
    case 'Tensor':
      return `${v} instanceof Tensor`;
    case 'Scalar':
      return `(typeof ${v} === 'number' || typeof ${v} === 'boolean')`;
    case 'ScalarType':
      return `isDTypeLike(${v})`;
    case 'Device':
      return `isDeviceLike(${v})`;
    case 'List':
      // PyTorch accepts one int where an int list is expected (`sum(x, 1)`).
      return t.elem.kind === 'int' || t.elem.kind === 'SymInt'
        ? `(typeof ${v} === 'number' || Array.isArray(${v}))`
        : `Array.isArray(${v})`;
    case 'Optional': {
      const inner = predicate(v, t.elem);
      return inner === undefined ? undefined : `(${v} == null || ${inner})`;
    }
    default:
      return undefined;
  }
}

/** Code converting a public value to what kernels receive (canonical DType/Device, int lists as arrays). */
function normalize(v: string, t: SchemaType): string {
  const inner = t.kind === 'Optional' ? t.elem : t;
  const nullable = t.kind === 'Optional';
  if (inner.kind === 'ScalarType') return nullable ? `optionalDType(${v})` : `toDType(${v})`;
  if (inner.kind === 'Device') return nullable ? `optionalDevice(${v})` : `toDevice(${v})`;
  if (inner.kind === 'List' && (inner.elem.kind === 'int' || inner.elem.kind === 'SymInt')) {
    return nullable ? `optionalIntList(${v})` : `intList(${v})`;
  }
  return v;
}

function defaultLiteral(arg: Argument): string {
  const d = arg.defaultValue!;
  const value = d.value;
  if (value === null) return 'null';
  if (typeof value === 'bigint') return `${value}`;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  }
  if (arg.type.kind === 'ScalarType' || (arg.type.kind === 'Optional' && arg.type.elem.kind === 'ScalarType')) {
    return JSON.stringify(value);
  }
  return JSON.stringify(value);
}

function positionalArgs(s: FunctionSchema): Argument[] {
  return s.arguments.filter((a) => !a.kwargOnly);
}

interface Generated {
  /** TypeScript overload signatures (without `export function` / trailing `;`) and their one-line docs. */
  readonly signatures: Array<{ sig: string; doc: string }>;
  /** The implementation: a function named `name` with untyped fixed parameters. */
  readonly impl: string;
}

/** Arguments of an overload as the public API takes them: positionals (minus `self` for methods), options. */
function apiArgs(o: Overload, self: 'function' | 'method') {
  const positional = positionalArgs(o.schema).slice(self === 'method' ? 1 : 0);
  const required = positional.filter((a) => a.defaultValue === undefined && a.type.kind !== 'Optional').length;
  const options = o.schema.arguments.filter((a) =>
    (a.kwargOnly || (!positional.includes(a) && a.defaultValue !== undefined)) &&
    !(self === 'method' && a === o.schema.arguments[0])
  ).concat(positional.filter((a) => a.defaultValue !== undefined || a.type.kind === 'Optional'));
  return { positional, required, options: [...new Set(options)] };
}

/**
 * TypeScript signatures of one overload: the required positionals, then for each prefix of the optional
 * positionals one signature whose options object holds the keyword-only arguments and the optional
 * positionals not given positionally (`sum(x, 1, true)` and `sum(x, 1, { keepdim: true })` both type-check).
 */
function signaturesOf(name: string, o: Overload, self: 'function' | 'method'): string[] {
  const { positional, required } = apiArgs(o, self);
  const kwargOnly = o.schema.arguments.filter((a) => a.kwargOnly);
  const isRequiredKwarg = (a: Argument) => a.kwargOnly && a.defaultValue === undefined && a.type.kind !== 'Optional';
  const out: string[] = [];
  for (let given = required; given <= positional.length; given++) {
    const params = positional.slice(0, given).map((a) => `${camel(a.name)}: ${tsType(a.type)}`);
    const fieldsArgs = [...positional.slice(given), ...kwargOnly];
    if (fieldsArgs.length > 0) {
      const anyRequired = fieldsArgs.some(isRequiredKwarg);
      const fields = fieldsArgs.map((a) => `${camel(a.name)}${isRequiredKwarg(a) ? '' : '?'}: ${tsType(a.type)}`);
      params.push(`options${anyRequired ? '' : '?'}: { ${fields.join('; ')} }`);
    }
    const all = self === 'method' ? ['this: Tensor', ...params] : params;
    out.push(`${name}(${all.join(', ')}): ${returnType(o.schema)}`);
  }
  return out;
}

/** Keyword-only arguments without a default: an overload taking one is chosen only when it is given. */
function selectingKwargs(o: Overload): Argument[] {
  return o.schema.arguments.filter((a) => a.kwargOnly && a.defaultValue === undefined);
}

/**
 * A last overload accepting what any overload accepts, position by position, so that callers holding a
 * union (`Tensor | number`) type-check; the run-time binding still picks the exact overload.
 */
function unionSignature(name: string, group: Overload[], self: 'function' | 'method'): string {
  const all = group.map((o) => apiArgs(o, self));
  const width = Math.max(...all.map((a) => a.positional.length));
  const params: string[] = [];
  const usedNames = new Set<string>();
  for (let i = 0; i < width; i++) {
    const types = new Set<string>();
    let optional = false;
    let pname = '';
    for (const a of all) {
      const arg = a.positional[i];
      if (arg === undefined || i >= a.required) optional = true;
      if (arg !== undefined) {
        types.add(tsType(arg.type));
        pname ||= camel(arg.name);
      }
    }
    // Overloads may name a position differently (`arange(end)` / `arange(start, end)`).
    if (usedNames.has(pname)) pname = `arg${i}`;
    usedNames.add(pname);
    params.push(
      `${pname}${optional ? '?' : ''}: ${[...new Set([...types].flatMap((t) => t.split(' | ')))].join(' | ')}`,
    );
  }
  const fields = new Map<string, Set<string>>();
  for (const a of all) {
    for (const arg of a.options) {
      const set = fields.get(camel(arg.name)) ?? new Set<string>();
      set.add(tsType(arg.type));
      fields.set(camel(arg.name), set);
    }
  }
  if (fields.size > 0) {
    params.push(`options?: { ${[...fields].map(([f, t]) => `${f}?: ${[...t].join(' | ')}`).join('; ')} }`);
  }
  const ret = [...new Set(group.map((o) => returnType(o.schema)))].join(' | ');
  return `${name}(${self === 'method' ? ['this: Tensor', ...params].join(', ') : params.join(', ')}): ${ret}`;
}

/**
 * One function for an overload group: TS overload signatures, and an implementation that binds the call to
 * the first overload whose positional count and argument kinds match (Note [Overload groups]).
 */
function generateFunction(fnName: string, group: Overload[], self: 'function' | 'method'): Generated {
  const signatures = group.flatMap((o) => signaturesOf(fnName, o, self).map((sig) => ({ sig, doc: o.decl.doc })));
  if (group.length > 1) {
    signatures.push({ sig: unionSignature(fnName, group, self), doc: `${group[0].decl.doc} (any overload)` });
  }
  const maxPositional = Math.max(...group.map((o) => apiArgs(o, self).positional.length));
  const params = Array.from({ length: maxPositional + 1 }, (_, i) => `p${i}`);
  const lines: string[] = [];
  // n = number of positional arguments given; o = the options object that follows them, if any.
  const count = params.map((p, i) => `${p} === undefined || isOptions(${p}) ? ${i}`).join(' : ') +
    ` : ${params.length}`;
  lines.push(`const n: number = ${count};`);
  lines.push(`const o = (${params.map((p, i) => `n === ${i} ? ${p}`).join(' : ')} : undefined) as any;`);
  const weight = (o: Overload) => apiArgs(o, self).required + selectingKwargs(o).length;
  const ordered = [...group].sort((x, y) => weight(y) - weight(x));
  // Where another overload takes a single int, an int list must really be a list (`split(x, 2)` vs
  // `split(x, [1, 2])`); elsewhere one int may stand for a list, as PyTorch allows.
  const scalarIntAt = (i: number) =>
    group.some((o) => ['int', 'SymInt'].includes(apiArgs(o, self).positional[i]?.type.kind ?? ''));
  const predicatesAt = (o: Overload) =>
    apiArgs(o, self).positional.map((a, i) =>
      a.type.kind === 'List' && scalarIntAt(i) ? `Array.isArray(p${i})` : predicate(`p${i}`, a.type)
    );
  for (let g = 0; g < ordered.length; g++) {
    const o = ordered[g];
    const { positional, required } = apiArgs(o, self);
    const conds: string[] = [];
    if (group.length > 1) {
      conds.push(
        required === positional.length ? `n === ${required}` : `n >= ${required} && n <= ${positional.length}`,
      );
      predicatesAt(o).forEach((p, i) => {
        if (p === undefined) return;
        if (!ordered.some((other) => predicatesAt(other)[i] !== p)) return; // same kind in every overload
        conds.push(i < required ? p : `(n <= ${i} || ${p})`);
      });
      // A keyword-only argument without a default (even an optional one, `str? rounding_mode`) selects its
      // overload only when given.
      for (const a of selectingKwargs(o)) conds.push(`o?.${camel(a.name)} !== undefined`);
    }
    const args = o.schema.arguments.map((a) => {
      if (self === 'method' && a === o.schema.arguments[0]) return 'this';
      const i = positional.indexOf(a);
      let v: string;
      if (i >= 0 && i < required) v = `p${i}`;
      else if (i >= 0) v = `(n > ${i} ? p${i} : o?.${camel(a.name)})`;
      else v = `o?.${camel(a.name)}`;
      if (a.defaultValue !== undefined) v = `(${v} ?? ${defaultLiteral(a)})`;
      else if (a.type.kind === 'Optional') v = `(${v} ?? null)`;
      return normalize(v, a.type);
    });
    const call = `return ops()[${JSON.stringify(o.key)}].call(${args.join(', ')});`;
    lines.push(conds.length > 0 ? `if (${conds.join(' && ')}) ${call}` : call);
  }
  if (group.length > 1) {
    const expected = group.map((o) => `  * (${o.schema.arguments.map((a) => a.name).join(', ')})`).join('\\n');
    lines.push(`throw invalidArguments('${fnName}', '${expected}');`);
  }
  // Drop the positional count and options lookup where no overload needs them (e.g. `relu(self)`).
  const rest = lines.slice(2).join('\n');
  const usesOptions = /\bo\?\./.test(rest);
  if (!usesOptions) lines.splice(1, 1);
  if (!usesOptions && !/\bn\b/.test(rest)) lines.splice(0, 1);
  const used = params.filter((p) => new RegExp(`\\b${p}\\b`).test(lines.join('\n')));
  const head = self === 'method' ? `function ${fnName}(this: Tensor, ` : `function ${fnName}(`;
  const declared = usesOptions ? params : params.slice(0, Math.max(0, ...used.map((p) => Number(p.slice(1)) + 1)));
  const impl = `${head}${declared.map((p) => `${p}?: any`).join(', ')}): any {\n  ${lines.join('\n  ')}\n}\n`;
  return { signatures, impl };
}

/** A short usage example for the generated JSDoc. */
function exampleFor(name: string, schema: FunctionSchema, self: 'function' | 'method'): string {
  const args = positionalArgs(schema).filter((a) => a.defaultValue === undefined).map((a) => {
    const t = a.type.kind === 'Optional' ? a.type.elem : a.type;
    if (t.kind === 'Tensor') return a.name === 'condition' ? 'x.gt(0)' : 'x';
    if (t.kind === 'List') return t.elem.kind === 'Tensor' ? '[x, x]' : '[2, 3]';
    if (t.kind === 'bool') return 'true';
    if (t.kind === 'str') return "'none'";
    return '2';
  });
  const lines = [" * import { tensor } from '@switchyard/switchyard';", ' * const x = tensor([[1.5, -2], [3, 4]]);'];
  if (self === 'method') lines.push(` * const y = x.${name}(${args.slice(1).join(', ')});`);
  else lines.push(` * const y = ${name}(${args.join(', ')});`);
  return lines.join('\n');
}

function groups(kind: 'function' | 'method'): Map<string, Overload[]> {
  const out = new Map<string, Overload[]>();
  for (const [key, decl] of Object.entries(OPS) as Array<[string, OpDecl]>) {
    const schema = parseSchema(`aten::${decl.schema}`);
    let name: string | undefined;
    if (kind === 'function') {
      if (decl.function === false) continue;
      name = decl.function ?? camel(baseName(schema));
    } else {
      // A method flag on any overload of a function makes every overload of that function a method.
      const fnName = decl.function === false ? undefined : (decl.function ?? camel(baseName(schema)));
      const groupHasMethod = Object.values(OPS as Record<string, OpDecl>).some((d) => {
        if (d.method === undefined || d.method === false || d.function === false) return false;
        return (d.function ?? camel(baseName(parseSchema(`aten::${d.schema}`)))) === fnName;
      });
      if (decl.method !== undefined && decl.method !== false) {
        name = decl.method === true ? (fnName ?? camel(baseName(schema))) : decl.method;
      } else if (groupHasMethod && fnName !== undefined) {
        name = fnName;
      } else {
        continue;
      }
    }
    if (kind === 'method' && schema.arguments[0]?.type.kind !== 'Tensor') continue;
    const list = out.get(name) ?? [];
    list.push({ key, decl, schema });
    out.set(name, list);
  }
  return out;
}

/** The text of `core/ops/generated_api.ts`. */
export function generateApi(): string {
  const fns = groups('function');
  const methods = groups('method');
  // Operators are registered on first use, not when this module is evaluated: it sits in import cycles with
  // the registry (derivative formulas call the API), and a registration at evaluation time would depend on
  // which module an importer happens to load first.
  let body = 'let handles: OpHandles | undefined;\nconst ops = (): OpHandles => handles ??= registerOperators();\n\n';
  for (const [name, group] of fns) {
    const { signatures, impl } = generateFunction(name, group, 'function');
    const primary = group[0];
    const schemas = group.map((o) => ` * - \`${o.schema}\``).join('\n');
    const example = exampleFor(name, primary.schema, 'function');
    body +=
      `/**\n * ${primary.decl.doc}\n *\n * Schemas:\n${schemas}\n *\n * @example\n * \`\`\`ts\n${example}\n * \`\`\`\n */\n`;
    body += signatures.map(({ sig, doc }, i) => (i === 0 ? '' : `/** ${doc} */\n`) + `export function ${sig};\n`)
      .join('');
    body += `export ${impl}\n`;
  }
  body +=
    '/** Methods every Tensor has, generated from the operator declarations. */\nexport interface TensorMethods {\n';
  const impls: string[] = [];
  for (const [name, group] of methods) {
    const { signatures, impl } = generateFunction(name, group, 'method');
    for (const { sig, doc } of signatures) body += `  /** ${doc} */\n  ${sig};\n`;
    impls.push(impl);
  }
  body += '}\n\n';
  body += '// The method implementations (typed by TensorMethods above).\n';
  body += impls.map((impl) => impl.replace(/^function (\w+)/, 'function method_$1')).join('\n');
  body +=
    '\n/**\n * Installs the generated methods on Tensor.prototype (idempotent).\n *\n * @example\n * ```ts\n * installTensorMethods();\n * ```\n */\nexport function installTensorMethods(): void {\n';
  body += `  Object.assign(Tensor.prototype, {\n${
    [...methods.keys()].map((n) => `    ${n}: method_${n},`).join('\n')
  }\n  });\n}\n`;
  const uses = (name: string) => new RegExp(`\\b${name}\\b`).test(body);
  const pick = (names: string[]) => names.filter((n) => uses(n.replace(/^type /, '')));
  let out = '// @generated by core/ops/codegen.ts from core/ops/declarations.ts; do not edit\n';
  out +=
    '/**\n * The typed functional API and Tensor methods, generated from the operator declarations.\n *\n * @module\n */\n';
  out += '// deno-lint-ignore-file no-explicit-any\n';
  out += "import { Tensor } from '../tensor/tensor.ts';\n";
  const imports: Array<[string[], string]> = [
    [['type DTypeLike', 'toDType'], '../tensor/dtype.ts'],
    [['type DeviceLike', 'toDevice'], '../tensor/device.ts'],
    [['type Generator'], '../tensor/generator.ts'],
    [
      [
        'intList',
        'invalidArguments',
        'isDeviceLike',
        'isDTypeLike',
        'isOptions',
        'optionalDevice',
        'optionalDType',
        'optionalIntList',
      ],
      './arguments.ts',
    ],
  ];
  for (const [names, from] of imports) {
    const used = pick(names);
    if (used.length === 0) continue;
    const typeOnly = used.every((n) => n.startsWith('type '));
    out += typeOnly
      ? `import type { ${used.map((n) => n.slice(5)).join(', ')} } from '${from}';\n`
      : `import { ${used.join(', ')} } from '${from}';\n`;
  }
  out += "import { type OpHandles, registerOperators } from './registry.ts';\n\n";
  out += body;
  return out;
}

if (import.meta.main) {
  const target = new URL('./generated_api.ts', import.meta.url);
  const text = generateApi();
  const fs = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const tmp = `${target.pathname}.tmp.ts`;
  fs.writeFileSync(tmp, text);
  const deno = new URL('../../node_modules/.bin/deno', import.meta.url).pathname;
  spawnSync(deno, ['fmt', '--quiet', tmp], { stdio: 'inherit' });
  const formatted = fs.readFileSync(tmp, 'utf8');
  fs.rmSync(tmp);
  if (Deno.args.includes('--check')) {
    const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
    if (current !== formatted) {
      console.error('core/ops/generated_api.ts is stale: run `npm run gen:ops`');
      Deno.exit(1);
    }
  } else {
    fs.writeFileSync(target, formatted);
  }
}
