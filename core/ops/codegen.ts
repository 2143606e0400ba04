/**
 * Generates the typed functional API and the Tensor methods from the operator declarations, the way
 * PyTorch's torchgen generates its Python bindings from native_functions.yaml.
 *
 * Run `npm run gen:ops` after changing `core/ops/declarations*`; `--check` fails when the committed output is
 * stale (the test suite runs it). Both outputs are formatted with `deno fmt` here.
 *
 * Note [Generated API as JS]
 * The output is two files: `generated_api.js`, the implementation in plain ES2022 (no types, no overload
 * signatures, no JSDoc), and `generated_api.d.ts`, every export with its overloads and JSDoc. The .js starts with
 * `// @ts-self-types="./generated_api.d.ts"`, so `deno check`, `deno doc` and JSR take its types from the .d.ts,
 * and tsc finds the .d.ts beside the .js an import names (`import ... from './generated_api.js'`, the only way
 * to import it). Why not one .ts file: the API is ~650 functions and methods with fast paths, and a .ts module
 * costs every start. Deno loads each .ts module from its emit cache, and the emit carries an inline source map
 * with the whole source: the 0.8 MB of generated_api.ts became 2.2 MB of JS read and compiled on every start.
 * Bun transpiles TS as it loads it. As .js the module is 0.48 MB loaded as it is (the 0.2 MB .d.ts is read by
 * type checkers only). Measured on the shared 2-core development machine (2026-11-27), spawns of import + first
 * `add` interleaved with the .ts version, medians of 21, six rounds: Deno 16-30 ms less per start (median 21 ms),
 * Bun 0-15 ms less (median 4 ms); the 1-element `add` is unchanged (the same fast-path code). `npm run build`
 * copies both files to dist/ (scripts/build.mjs), since tsc compiles only the TS.
 *
 * Note [Compact generated JS]
 * What the generated JS leaves out or shares, none of it on a fast path: the overload group of a function (what
 * `callParsed` binds with) is made by `overloadGroup()` on its first parsed call, not at evaluation, and names an
 * overload by its schema alone; the option-name lists of the options fast paths are shared constants (`K0`, ...);
 * a factory's `requiresGrad` option goes through `requireGradIf()`; a fast-path line whose checks begin with all
 * the checks of an earlier line (never reached) is left out.
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

/** The arguments of `overloadGroup(...)` in the generated JS: the run-time description `callParsed` binds with. */
function specOf(group: readonly Binding[], method: boolean): string {
  const overloads = group.map((o) => {
    // The operator key is the schema's name; overloadGroup() takes it from there.
    if (o.declSchema.slice(0, o.declSchema.indexOf('(')) !== o.key) {
      throw new Error(`codegen: ${o.key}: the schema must be named by its key (${o.declSchema})`);
    }
    if (!o.sig.hidden && o.python === undefined) return JSON.stringify(o.declSchema);
    const fields = [`schema: ${JSON.stringify(o.declSchema)}`];
    if (o.sig.hidden) fields.push('hidden: true');
    if (o.python !== undefined) fields.push(`python: ${JSON.stringify(o.python)}`);
    return `{ ${fields.join(', ')} }`;
  });
  const requiresGrad = group[0].sig.params.some((p) => p.schemaIndex < 0) ? ', true' : '';
  return `overloadGroup(${JSON.stringify(group[0].sig.name)}, ${method}, [${overloads.join(', ')}]${requiresGrad})`;
}

/** Distinct lists of option names, each a module constant of the generated JS (`K0`, `K1`, ...). */
class KeyLists {
  readonly #names = new Map<string, string>();
  keys(names: readonly string[]): string {
    const text = JSON.stringify(names);
    let name = this.#names.get(text);
    if (name === undefined) this.#names.set(text, name = `K${this.#names.size}`);
    return name;
  }
  /** The constants' declarations. */
  declarations(): string {
    return [...this.#names].map(([text, name]) => `const ${name} = ${text};\n`).join('');
  }
}

interface Generated {
  /** TypeScript overload signatures (without `export function` / trailing `;`) and their one-line docs. */
  readonly signatures: Array<{ sig: string; doc: string }>;
  /** The module variable that holds the overload group once made. */
  readonly specName: string;
  /** The JS implementation: its parameter list and body (without braces). */
  readonly params: string;
  readonly body: string;
}

/** One function or method for an overload group: TS overload signatures and its JS implementation. */
function generateFunction(
  fnName: string,
  overloads: Overload[],
  self: 'function' | 'method',
  keys: KeyLists,
): Generated {
  const method = self === 'method';
  const group = bindings(overloads, method);
  const signatures = group.flatMap((o) => signaturesOf(fnName, o, method).map((sig) => ({ sig, doc: o.doc })));
  if (group.length > 1) {
    signatures.push({ sig: unionSignature(fnName, group, method), doc: `${group[0].doc} (any overload)` });
  }
  const specName = `${method ? 'M' : 'F'}_${fnName}`;
  const { body, arity } = functionBody(
    group,
    { name: specName, init: specOf(group, method) },
    method ? 'this' : undefined,
    keys,
  );
  const params = Array.from({ length: arity }, (_, i) => `p${i}`).join(', ');
  return { signatures, specName, params, body: `  ${body.split('\n').join('\n  ')}\n` };
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

const HEADER = '// @generated by core/ops/codegen.ts from core/ops/declarations.ts; do not edit\n';

/** The generated API: `js` is `core/ops/generated_api.js`, `dts` is `core/ops/generated_api.d.ts`. */
export function generateApi(): { js: string; dts: string } {
  const fns = groups('function');
  const methods = groups('method');
  const keys = new KeyLists();
  let dts = '';
  let js = '';
  for (const [name, group] of fns) {
    const { signatures, specName, params, body } = generateFunction(name, group, 'function', keys);
    const primary = group[0];
    const schemas = group.map((o) => ` * - \`${o.schema}\``).join('\n');
    const example = exampleFor(name, primary.schema, 'function');
    dts +=
      `/**\n * ${primary.decl.doc}\n *\n * Schemas:\n${schemas}\n *\n * @example\n * \`\`\`ts\n${example}\n * \`\`\`\n */\n`;
    dts += signatures.map(({ sig, doc }, i) => (i === 0 ? '' : `/** ${doc} */\n`) + `export function ${sig};\n`)
      .join('');
    dts += '\n';
    js += `let ${specName};\nexport function ${name}(${params}) {\n${body}}\n\n`;
  }
  dts +=
    '/** Methods every Tensor has, generated from the operator declarations. */\nexport interface TensorMethods {\n';
  js += '// The Tensor methods (typed by TensorMethods in generated_api.d.ts).\n';
  for (const [name, group] of methods) {
    const { signatures, specName, params, body } = generateFunction(name, group, 'method', keys);
    for (const { sig, doc } of signatures) dts += `  /** ${doc} */\n  ${sig};\n`;
    js += `let ${specName};\nfunction method_${name}(${params}) {\n${body}}\n\n`;
  }
  dts += '}\n\n';
  dts += '/**\n * Installs the generated methods on Tensor.prototype (idempotent).\n *\n * @example\n * ```ts\n' +
    ' * installTensorMethods();\n * ```\n */\nexport function installTensorMethods(): void;\n';
  js += 'export function installTensorMethods() {\n  Object.assign(Tensor.prototype, {\n';
  js += [...methods.keys()].map((n) => `    ${n}: method_${n},\n`).join('') + '  });\n}\n';
  const uses = (text: string, name: string) => new RegExp(`\\b${name}\\b`).test(text);
  const importLines = (text: string, list: ReadonlyArray<readonly [readonly string[], string]>, type: boolean) =>
    list.map(([names, from]) => {
      const used = names.filter((n) => uses(text, n));
      if (used.length === 0) return '';
      return `import ${type ? 'type ' : ''}{ ${used.join(', ')} } from '${from}';\n`;
    }).join('');

  let outDts = HEADER;
  outDts += '/**\n * The typed functional API and Tensor methods, generated from the operator declarations.\n' +
    ' *\n * @module\n */\n';
  outDts += importLines(dts, [
    [['Tensor'], '../tensor/tensor.ts'],
    [['DTypeLike'], '../tensor/dtype.ts'],
    [['DeviceLike'], '../tensor/device.ts'],
    [['Generator'], '../tensor/generator.ts'],
    [['Scalar'], '../tensor/float_scalar.ts'],
  ], true);
  outDts += '\n' + dts;

  let outJs = '// @ts-self-types="./generated_api.d.ts"\n' + HEADER;
  outJs +=
    '// The implementation of the functional API and the Tensor methods; their types and documentation are in\n' +
    '// generated_api.d.ts (Note [Generated API as JS] in core/ops/codegen.ts says why the API is JS).\n';
  const helpers = HELPERS + keys.declarations() + '\n';
  outJs += importLines(helpers + js, [
    [['Tensor'], '../tensor/tensor.ts'],
    [[
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
    ], './arg_values.ts'],
    [
      ['deviceArg', 'dtypeArg', 'isDeviceArg', 'isDTypeArg', 'isGeneratorArg', 'isLayoutArg', 'isMemoryFormatArg'],
      './arg_opaque.ts',
    ],
    [['isOptions', 'optionsWithin', 'reductionArg'], './arg_names.ts'],
    [['callParsed', 'requireGrad'], './arg_parser.ts'],
    [['registerOperators'], './registry.ts'],
  ], false);
  outJs += helpers + js;
  return { js: outJs, dts: outDts };
}

/** The helpers at the top of the generated JS. */
const HELPERS = `
// The operator handles, registered on first use (not at evaluation: this module sits in import cycles with the
// registry, whose derivative formulas call the API).
let handles;
const ops = () => handles ??= registerOperators();

/**
 * The overload group callParsed (arg_parser.ts) binds a call with, made on a function's first call that no fast path
 * takes. An overload is given by its schema (the operator key is the schema's name), or by an object with its
 * schema when it is hidden from messages or its Python binding differs.
 */
function overloadGroup(name, method, overloads, requiresGrad = false) {
  const group = {
    name,
    method,
    overloads: overloads.map((o) => {
      const entry = typeof o === 'string' ? { schema: o } : o;
      return { key: entry.schema.slice(0, entry.schema.indexOf('(')), ...entry };
    }),
  };
  if (requiresGrad) group.requiresGrad = true;
  return group;
}

// PyTorch's \`requires_grad=True\` keyword of the factories: applied to the result.
const requireGradIf = (o, t) => o.requiresGrad === true ? requireGrad(t) : t;

// The option names each fast path with an options object accepts.
`;

if (import.meta.main) {
  const { js, dts } = generateApi();
  const fs = await import('node:fs');
  const { spawnSync } = await import('node:child_process');
  const deno = new URL('../../node_modules/.bin/deno', import.meta.url).pathname;
  const check = Deno.args.includes('--check');
  const stale: string[] = [];
  for (const [file, text] of [['generated_api.js', js], ['generated_api.d.ts', dts]]) {
    const target = new URL(`./${file}`, import.meta.url).pathname;
    // Formatted as `deno fmt` formats the repository (a temporary name with the same extension).
    const tmp = target.replace(/(\.d)?\.[jt]s$/, (ext) => `.tmp${ext}`);
    fs.writeFileSync(tmp, text);
    spawnSync(deno, ['fmt', '--quiet', tmp], { stdio: 'inherit' });
    const formatted = fs.readFileSync(tmp, 'utf8');
    fs.rmSync(tmp);
    if (!check) fs.writeFileSync(target, formatted);
    else if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== formatted) stale.push(`core/ops/${file}`);
  }
  if (stale.length > 0) {
    console.error(`${stale.join(' and ')} ${stale.length > 1 ? 'are' : 'is'} stale: run \`npm run gen:ops\``);
    Deno.exit(1);
  }
}
