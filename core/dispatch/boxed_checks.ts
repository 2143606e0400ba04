/**
 * Schema checks where calls enter the dispatcher without a typed front end: a boxed call's stack
 * (`op.callBoxed`, `op.callBoxedForDispatchKey`) and `dispatcher.call(op, ...args)`. Errors read as PyTorch's
 * for `torch.ops.aten.add.Tensor(x, 'a')`: `aten::add() Expected a value of type 'Tensor' for argument 'other'
 * but instead found type 'str'.` with the position and the declaration.
 *
 * `op.call(...)` checks its arguments with inline tests (checked_call.ts) and comes here only for the ones that
 * fail them.
 *
 * @module
 */
import { RuntimeError } from './errors.ts';
import type { FunctionSchema } from './function_schema.ts';
import { describeValue, IValue, type Stack, type ValueValidator } from './ivalue.ts';

/** `aten::add` for `aten::add.Tensor`: the name PyTorch's boxing errors print. */
function baseName(schema: FunctionSchema): string {
  const dot = schema.name.indexOf('.', schema.name.indexOf('::') + 2);
  return dot < 0 ? schema.name : schema.name.slice(0, dot);
}

/**
 * A type error raised while boxing argument `index`, with PyTorch's header, position and declaration (other
 * errors pass through).
 *
 * @example
 * ```ts
 * // dispatcher: catch (e) { throw boxingError(schema, i, e); }
 * ```
 */
export function boxingError(schema: FunctionSchema, index: number, e: unknown): unknown {
  if (!(e instanceof RuntimeError) || !e.message.startsWith('Expected a value')) return e;
  return new RuntimeError(`${baseName(schema)}() ${e.message}\nPosition: ${index}\nDeclaration: ${schema}`);
}

function boxArgument(schema: FunctionSchema, index: number, value: unknown, validator?: ValueValidator): IValue {
  const arg = schema.arguments[index];
  if (value === undefined && arg.defaultValue !== undefined) value = arg.defaultValue.value;
  if (value === undefined && arg.type.kind !== 'Optional') {
    throw new RuntimeError(
      `${baseName(schema)}() is missing value for argument '${arg.name}'. Declaration: ${schema}`,
    );
  }
  try {
    return IValue.fromSchema(arg.type, value, arg.name, validator);
  } catch (e) {
    throw boxingError(schema, index, e);
  }
}

/**
 * Checks the arguments of `dispatcher.call(op, ...args)` against the schema: their number, each one's type
 * (defaults fill the missing trailing ones), and returns them as the kernels take them (bigint ints as numbers).
 *
 * @example
 * ```ts
 * import { parseSchema } from './schema_parser.ts';
 * import { checkArguments } from './boxed_checks.ts';
 * checkArguments(parseSchema('t::f(int n, int m=2) -> int'), [1]); // [1, 2]
 * ```
 */
export function checkArguments(
  schema: FunctionSchema,
  args: readonly unknown[],
  validator?: ValueValidator,
): unknown[] {
  const n = schema.arguments.length;
  if (args.length > n) {
    throw new RuntimeError(
      `${baseName(schema)}() expected at most ${n} argument(s) but received ${args.length} argument(s). ` +
        `Declaration: ${schema}`,
    );
  }
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) out[i] = boxArgument(schema, i, args[i], validator).toJS();
  return out;
}

/**
 * Checks a boxed call's stack against the schema: the schema's arguments must be IValues on top of the
 * stack, each of its argument's type; they are replaced by their checked form.
 *
 * @example
 * ```ts
 * import { parseSchema } from './schema_parser.ts';
 * import { IValue } from './ivalue.ts';
 * import { checkStack } from './boxed_checks.ts';
 * checkStack(parseSchema('t::f(int n) -> int'), [IValue.int(1)]);
 * ```
 */
export function checkStack(schema: FunctionSchema | undefined, stack: Stack, validator?: ValueValidator): void {
  if (!Array.isArray(stack)) {
    throw new TypeError(`callBoxed: the stack must be an array of IValues, not ${describeValue(stack)}`);
  }
  const n = schema === undefined ? stack.length : schema.arguments.length;
  const first = stack.length - n;
  if (schema !== undefined && first < 0) {
    const missing = schema.arguments[stack.length];
    throw new RuntimeError(
      `${baseName(schema)}() is missing value for argument '${missing.name}'. Declaration: ${schema}`,
    );
  }
  for (let i = 0; i < n; i++) {
    const v = stack[first + i];
    if (!(v instanceof IValue)) {
      throw new TypeError(`callBoxed: stack entry ${first + i} is not an IValue (found type '${describeValue(v)}')`);
    }
    if (schema !== undefined) stack[first + i] = boxArgument(schema, i, v.toJS(), validator);
  }
}
