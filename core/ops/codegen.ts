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
import type { FunctionSchema } from '../dispatch/function_schema.ts';
import { parseSchema } from '../dispatch/schema_parser.ts';
import { buildSignature, sortSignatures } from './arg_signature.ts';
import { type GenOverload, signaturesOf, unionSignature } from './codegen_types.ts';
import { functionBody } from './codegen_body.ts';

interface Overload {
  readonly key: string;
  readonly decl: OpDecl;
  readonly schema: FunctionSchema;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function baseName(schema: FunctionSchema): string {
  return schema.name.slice(schema.name.indexOf('::') + 2);
}

// PyTorch's bindings list these Scalar overloads under their Tensor twins (a number binds to `Tensor other`
// there), so they are bound but hidden from messages (gen_python_functions.py's SKIP list).
const HIDDEN_SCALAR_TWINS = new Set(['add', 'add_', 'sub', 'sub_', 'mul', 'mul_', 'div', 'div_']);

/** A generated overload with what its run-time spec records. */
interface Binding extends GenOverload {
  readonly declSchema: string;
  readonly python: string | undefined;
}

/** The overloads of a group with their Python-binding signatures, in PyTorch's order. */
function bindings(group: readonly Overload[], method: boolean): Binding[] {
  // Factories take PyTorch's Python-only `requires_grad` keyword.
  const requiresGrad = !method &&
    group.every((o) => o.decl.kind === 'factory' || baseName(o.schema).split('.')[0].endsWith('_like'));
  const out = group.map((o) => {
    const name = baseName(o.schema).split('.')[0];
    const hidden = HIDDEN_SCALAR_TWINS.has(name) && o.key.endsWith('.Scalar');
    const python = o.decl.python === undefined ? undefined : parseSchema(`aten::${o.decl.python}`);
    const sig = buildSignature(o.schema, { key: o.key, method, hidden, python, requiresGrad });
    const binding: Binding = {
      key: o.key,
      doc: o.decl.doc,
      schema: o.schema,
      sig,
      python: o.decl.python,
      declSchema: o.decl.schema,
    };
    return binding;
  });
  const sorted = sortSignatures(out.map((o) => o.sig));
  return sorted.map((sig) => out.find((o) => o.sig === sig)!);
}

/** The run-time description of a group that `callParsed` binds with. */
function specOf(group: readonly Binding[], method: boolean): string {
  const overloads = group.map((o) => {
    const fields = [`key: ${JSON.stringify(o.key)}`, `schema: ${JSON.stringify(o.declSchema)}`];
    if (o.sig.hidden) fields.push('hidden: true');
    if (o.python !== undefined) fields.push(`python: ${JSON.stringify(o.python)}`);
    return `{ ${fields.join(', ')} }`;
  });
  const requiresGrad = group[0].sig.params.some((p) => p.schemaIndex < 0) ? ', requiresGrad: true' : '';
  return `{ name: ${JSON.stringify(group[0].sig.name)}, method: ${method}${requiresGrad}, overloads: [${
    overloads.join(', ')
  }] }`;
}

interface Generated {
  /** TypeScript overload signatures (without `export function` / trailing `;`) and their one-line docs. */
  readonly signatures: Array<{ sig: string; doc: string }>;
  /** The run-time spec constant. */
  readonly spec: string;
  /** The implementation: a function named `name`. */
  readonly impl: string;
}

/** One function or method for an overload group: TS overload signatures, its spec and its implementation. */
function generateFunction(fnName: string, overloads: Overload[], self: 'function' | 'method'): Generated {
  const method = self === 'method';
  const group = bindings(overloads, method);
  const signatures = group.flatMap((o) => signaturesOf(fnName, o, method).map((sig) => ({ sig, doc: o.doc })));
  if (group.length > 1) {
    signatures.push({ sig: unionSignature(fnName, group, method), doc: `${group[0].doc} (any overload)` });
  }
  const specName = `${method ? 'M' : 'F'}_${fnName}`;
  const specLine = `const ${specName}: OverloadGroup = ${specOf(group, method)};\n`;
  const constants = { lines: [] as string[] };
  const { body, arity } = functionBody(group, specName, method ? 'this' : undefined, constants);
  // As many parameters as the widest TS signature, so that the implementation is compatible with all of them.
  const width = Math.max(arity, ...group.map((o) => o.sig.maxPosArgs + 1));
  const params = Array.from({ length: width }, (_, i) => (i < arity ? `p${i}?: any` : `_p${i}?: any`));
  // A rest parameter keeps the implementation compatible with the varargs signatures (`zeros(2, 3, options)`).
  if (group.some((o) => o.sig.varargs)) params.push('..._rest: any[]');
  const head = method ? `function ${fnName}(this: Tensor, ` : `function ${fnName}(`;
  const impl = `${head}${params.join(', ')}): any {\n  ${body.split('\n').join('\n  ')}\n}\n`;
  const spec = specLine + constants.lines.map((l) => `${l}\n`).join('');
  return { signatures, spec, impl };
}

/** A short usage example for the generated JSDoc. */
function exampleFor(name: string, schema: FunctionSchema, self: 'function' | 'method'): string {
  const args = schema.arguments.filter((a) => !a.kwargOnly).filter((a) => a.defaultValue === undefined).map((a) => {
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
    const { signatures, spec, impl } = generateFunction(name, group, 'function');
    const primary = group[0];
    const schemas = group.map((o) => ` * - \`${o.schema}\``).join('\n');
    const example = exampleFor(name, primary.schema, 'function');
    body += spec;
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
    const { signatures, spec, impl } = generateFunction(name, group, 'method');
    for (const { sig, doc } of signatures) body += `  /** ${doc} */\n  ${sig};\n`;
    impls.push(spec + impl.replace(/^function (\w+)/, 'function method_$1'));
  }
  body += '}\n\n';
  body += '// The method implementations (typed by TensorMethods above).\n';
  body += impls.join('\n');
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
    [['type DTypeLike'], '../tensor/dtype.ts'],
    [['type DeviceLike'], '../tensor/device.ts'],
    [['type Generator'], '../tensor/generator.ts'],
    [['type Scalar'], '../tensor/float_scalar.ts'],
    [
      [
        'floatArg',
        'intArg',
        'intListArg',
        'isFloatArg',
        'isIntArg',
        'isIntListArg',
        'isLiveTensor',
        'isScalarArg',
        'isTensorListArg',
        'scalarArg',
      ],
      './arg_values.ts',
    ],
    [
      ['deviceArg', 'dtypeArg', 'isDeviceArg', 'isDTypeArg', 'isGeneratorArg', 'isLayoutArg', 'isMemoryFormatArg'],
      './arg_opaque.ts',
    ],
    [['isOptions', 'optionsWithin', 'reductionArg'], './arg_names.ts'],
    [['callParsed', 'type OverloadGroup', 'requireGrad'], './arg_parser.ts'],
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
