/**
 * The checked unboxed entry point. Once the layer that defines tensors has given its dispatcher a value
 * validator (`Dispatcher#setValueValidator`), `op.call(...)` checks its arguments against the schema before
 * dispatching: a few inline `typeof` tests and validator calls, generated per schema like the call stub
 * itself (Note [Generated call stubs]). Arguments that fail them go through `checkArguments`, which raises
 * PyTorch's boxing error or, for values it converts (a bigint int), returns the converted arguments.
 * Dispatchers without a validator (tests, tools) keep the bare stub.
 *
 * @module
 */
import { type CallStub, canGenerateCode } from './call_stub.ts';
import { checkArguments } from './boxed_checks.ts';
import type { FunctionSchema, SchemaType } from './function_schema.ts';
import type { ValueValidator } from './ivalue.ts';

/**
 * The inline test that `v` fits `type` (PyTorch's unboxed types, as the kernels take them). `undefined` (a
 * left-out argument) fails it: `checkArguments` then fills in the default, or None.
 */
function test(type: SchemaType, v: string): string {
  let t: string;
  switch (type.kind) {
    case 'Optional':
      return `(${v} === null || ${test(type.elem, v)})`;
    case 'Tensor':
      t = `VT(${v})`;
      break;
    case 'List':
      t = type.elem.kind === 'int' || type.elem.kind === 'SymInt'
        ? `LI(${v})`
        : type.elem.kind === 'Tensor'
        ? `LT(${v})`
        : `Array.isArray(${v})`;
      break;
    case 'int':
    case 'SymInt':
      t = `Number.isInteger(${v})`;
      break;
    case 'float':
      t = `(typeof ${v} === 'number' || ${v} instanceof Number)`;
      break;
    case 'bool':
      t = `typeof ${v} === 'boolean'`;
      break;
    case 'str':
      t = `typeof ${v} === 'string'`;
      break;
    case 'Scalar':
      t = `(typeof ${v} === 'number' || typeof ${v} === 'boolean' || ${v} instanceof Number)`;
      break;
    case 'Any':
      return `${v} !== undefined`;
    default:
      t = `VO(${JSON.stringify(type.kind)}, ${v})`;
  }
  return t;
}

/**
 * Wraps an operator's unboxed stub with the schema checks.
 *
 * @example
 * ```ts
 * // dispatcher: handle.call = checkedCall(stub, schema, validator);
 * ```
 */
export function checkedCall(stub: CallStub, schema: FunctionSchema, validator: ValueValidator): CallStub {
  if (!canGenerateCode()) {
    // Note [Stubs without code generation]: every call takes the full check.
    return (...args: unknown[]) => stub(...checkArguments(schema, args, validator));
  }
  const n = schema.arguments.length;
  const params = Array.from({ length: n }, (_, i) => `a${i}`);
  const tests = schema.arguments.map((arg, i) => test(arg.type, `a${i}`));
  const isTensor = (v: unknown) => validator('Tensor', v);
  const helpers = {
    S: stub,
    VT: isTensor,
    VO: validator,
    LT: (v: unknown) => Array.isArray(v) && v.every(isTensor),
    LI: (v: unknown) => Array.isArray(v) && v.every((x) => Number.isInteger(x)),
    F: (args: unknown[]) => checkArguments(schema, args, validator),
  };
  const body = `return function call(${params.join(', ')}) {\n` +
    `if (arguments.length <= ${n} && ${tests.join(' && ') || 'true'}) return S(${params.join(', ')});\n` +
    `return S(...F(Array.prototype.slice.call(arguments)));\n};`;
  return new Function(...Object.keys(helpers), body)(...Object.values(helpers)) as CallStub;
}
