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
      return `Array.isArray(${v})`;
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

function generateFunction(fnName: string, group: Overload[], self: 'function' | 'method'): string {
  const primary = group[0].schema;
  const positional = positionalArgs(primary);
  // Positional parameters: the primary overload's, in the method form without `self`.
  const params = self === 'method' ? positional.slice(1) : positional;
  const paramNames = new Set(params.map((a) => a.name));
  const optionArgs = new Map<string, Argument[]>();
  for (const o of group) {
    for (const a of o.schema.arguments) {
      if (paramNames.has(a.name) || (self === 'method' && a === o.schema.arguments[0])) continue;
      const list = optionArgs.get(a.name) ?? [];
      list.push(a);
      optionArgs.set(a.name, list);
    }
  }
  const sig: string[] = [];
  params.forEach((a, i) => {
    const types = new Set<string>();
    for (const o of group) {
      const pa = positionalArgs(o.schema)[self === 'method' ? i + 1 : i];
      if (pa !== undefined) types.add(tsType(pa.type));
    }
    const optional = group.some((o) => {
      const pa = positionalArgs(o.schema)[self === 'method' ? i + 1 : i];
      return pa === undefined || pa.defaultValue !== undefined;
    });
    sig.push(`${camel(a.name)}${optional ? '?' : ''}: ${[...types].join(' | ')}`);
  });
  if (optionArgs.size > 0) {
    const fields = [...optionArgs.entries()].map(([name, args]) =>
      `${camel(name)}?: ${[...new Set(args.map((a) => tsType(a.type)))].join(' | ')}`
    );
    sig.push(`options?: { ${fields.join('; ')} }`);
  }
  const ret = returnType(primary);
  const valueOf = (name: string) => {
    if (self === 'method' && name === primary.arguments[0].name) return 'this';
    return paramNames.has(name) ? camel(name) : `options?.${camel(name)}`;
  };
  // Overloads that need an option to be present (`div.Tensor_mode` needs `rounding_mode`) are tried first.
  const requiredOptions = (o: Overload) =>
    o.schema.arguments.filter((a) =>
      !paramNames.has(a.name) && a.defaultValue === undefined && !(self === 'method' && a === o.schema.arguments[0])
    );
  const ordered = [...group].sort((x, y) => requiredOptions(y).length - requiredOptions(x).length);
  const positionPredicates = (o: Overload) =>
    positionalArgs(o.schema).map((
      a,
      i,
    ) => (self === 'method' && i === 0 ? undefined : predicate(valueOf(a.name), a.type)));
  const calls: string[] = [];
  for (let g = 0; g < ordered.length; g++) {
    const o = ordered[g];
    const conds: string[] = requiredOptions(o).map((a) => `${valueOf(a.name)} !== undefined`);
    positionPredicates(o).forEach((p, i) => {
      // Test a position only where the overloads disagree about its type.
      if (p !== undefined && ordered.some((other) => positionPredicates(other)[i] !== p)) conds.push(p);
    });
    const args = o.schema.arguments.map((a) => {
      let v = valueOf(a.name);
      if (a.defaultValue !== undefined) v = `(${v} ?? ${defaultLiteral(a)})`;
      else if (a.type.kind === 'Optional') v = `(${v} ?? null)`;
      return normalize(v, a.type);
    });
    const call = `return ops[${JSON.stringify(o.key)}].call(${args.join(', ')}) as ${ret};`;
    const last = g === ordered.length - 1;
    calls.push(conds.length > 0 && !last ? `if (${conds.join(' && ')}) ${call}` : call);
    if (conds.length === 0 && !last) break;
  }
  const doc = group[0].decl.doc;
  const schemas = group.map((o) => ` * - \`${o.schema}\``).join('\n');
  const example = exampleFor(fnName, primary, self);
  const head = self === 'method'
    ? `${fnName}(this: Tensor, ${sig.join(', ')}): ${ret}`
    : `export function ${fnName}(${sig.join(', ')}): ${ret}`;
  return `/**\n * ${doc}\n *\n * Schemas:\n${schemas}\n *\n * @example\n * \`\`\`ts\n${example}\n * \`\`\`\n */\n${
    self === 'method' ? '  ' : ''
  }${head.replace('(this: Tensor, )', '(this: Tensor)')} {\n  ${calls.join('\n  ')}\n}\n`;
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
  let body = 'const ops = registerOperators();\n\n';
  for (const [name, group] of fns) body += generateFunction(name, group, 'function') + '\n';
  body +=
    '/** Methods every Tensor has, generated from the operator declarations. */\nexport interface TensorMethods {\n';
  for (const [name, group] of methods) {
    const text = generateFunction(name, group, 'method');
    const sigLine = text.split('\n').find((l) => l.startsWith(`  ${name}(`))!;
    const doc = group[0].decl.doc;
    body += `  /** ${doc} */\n${sigLine.replace(/ \{$/, ';')}\n`;
  }
  body += '}\n\n';
  body +=
    '/**\n * Installs the generated methods on Tensor.prototype (idempotent).\n *\n * @example\n * ```ts\n * installTensorMethods();\n * ```\n */\nexport function installTensorMethods(): void {\n';
  body += '  const methods: TensorMethods & ThisType<Tensor> = {\n';
  for (const [name, group] of methods) {
    body += generateFunction(name, group, 'method').split('\n').map((l) => (l === '' ? l : `  ${l}`)).join('\n')
      .replace(/\n {2}\}\n$/, '\n  },\n');
  }
  body += '  };\n  Object.assign(Tensor.prototype, methods);\n}\n';
  const uses = (name: string) => new RegExp(`\\b${name}\\b`).test(body);
  const pick = (names: string[]) => names.filter((n) => uses(n.replace(/^type /, '')));
  let out = '// @generated by core/ops/codegen.ts from core/ops/declarations.ts; do not edit\n';
  out +=
    '/**\n * The typed functional API and Tensor methods, generated from the operator declarations.\n *\n * @module\n */\n';
  out += "import { Tensor } from '../tensor/tensor.ts';\n";
  const imports: Array<[string[], string]> = [
    [['type DTypeLike', 'toDType'], '../tensor/dtype.ts'],
    [['type DeviceLike', 'toDevice'], '../tensor/device.ts'],
    [['type Generator'], '../tensor/generator.ts'],
    [['intList', 'isDeviceLike', 'isDTypeLike', 'optionalDevice', 'optionalDType', 'optionalIntList'], './arguments.ts'],
  ];
  for (const [names, from] of imports) {
    const used = pick(names);
    if (used.length === 0) continue;
    const typeOnly = used.every((n) => n.startsWith('type '));
    out += typeOnly
      ? `import type { ${used.map((n) => n.slice(5)).join(', ')} } from '${from}';\n`
      : `import { ${used.join(', ')} } from '${from}';\n`;
  }
  out += "import { registerOperators } from './registry.ts';\n\n";
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
