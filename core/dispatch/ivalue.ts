/**
 * IValue: the tagged value of the boxed calling convention, and the stack boxed kernels work on.
 *
 * A boxed kernel sees an operator's arguments as a `Stack` of IValues: it pops its arguments and pushes
 * its returns. Each IValue carries a tag from the schema type it was boxed as and the original JavaScript
 * payload, so unboxing returns the very object that was boxed (a tensor stays the same tensor).
 *
 * @module
 */
import { RuntimeError } from './errors.ts';
import type { Argument, SchemaType } from './function_schema.ts';

/** The tag of an IValue: one per schema type, plus None, GenericList and Tuple. */
export type IValueTag =
  | 'None'
  | 'Tensor'
  | 'Int'
  | 'SymInt'
  | 'Double'
  | 'Bool'
  | 'String'
  | 'Scalar'
  | 'ScalarType'
  | 'Layout'
  | 'MemoryFormat'
  | 'Device'
  | 'Generator'
  | 'Dimname'
  | 'Storage'
  | 'GenericList'
  | 'Tuple'
  | 'Any';

/** An object the dispatcher extracts dispatch keys from: anything carrying the two keyset words. */
export interface DispatchKeySource {
  /** Functionality bits of the object's keyset. */
  readonly keySetHi: number;
  /** Backend bits of the object's keyset. */
  readonly keySetLo: number;
}

/**
 * Whether `v` carries keyset words (is tensor-like for the dispatcher).
 *
 * @example
 * ```ts
 * import { isDispatchKeySource } from './ivalue.ts';
 * isDispatchKeySource({ keySetHi: 1, keySetLo: 1 }); // true
 * ```
 */
export function isDispatchKeySource(v: unknown): v is DispatchKeySource {
  return typeof v === 'object' && v !== null && typeof (v as DispatchKeySource).keySetHi === 'number' &&
    typeof (v as DispatchKeySource).keySetLo === 'number';
}

/**
 * A boxed value.
 *
 * @example
 * ```ts
 * import { IValue } from './ivalue.ts';
 * const v = IValue.int(3);
 * v.tag; // 'Int'
 * v.toInt(); // 3
 * ```
 */
export class IValue {
  /** What the payload is. */
  readonly tag: IValueTag;
  /** The JavaScript value (a list's payload is an array of IValues). */
  readonly payload: unknown;

  /** A raw IValue; prefer the typed constructors or {@linkcode IValue.fromSchema}. */
  constructor(tag: IValueTag, payload: unknown) {
    this.tag = tag;
    this.payload = payload;
  }

  /** None. */
  static readonly NONE: IValue = new IValue('None', null);
  /** An int. */
  static int(v: number): IValue {
    return new IValue('Int', v);
  }
  /** A float (PyTorch's Double). */
  static double(v: number): IValue {
    return new IValue('Double', v);
  }
  /** A bool. */
  static bool(v: boolean): IValue {
    return new IValue('Bool', v);
  }
  /** A string. */
  static string(v: string): IValue {
    return new IValue('String', v);
  }
  /** A tensor (anything carrying keyset words). */
  static tensor(v: DispatchKeySource): IValue {
    return new IValue('Tensor', v);
  }
  /** A list of IValues. */
  static list(items: IValue[]): IValue {
    return new IValue('GenericList', items);
  }

  /**
   * Boxes a JavaScript value as the given schema type, checking that it fits: ints are integral numbers (or
   * bigints within int64), floats numbers, Scalars numbers, booleans, bigints or `Number` objects (float
   * scalars); tensors and the opaque types (ScalarType, Device, ...) must pass the layer above's validator
   * (`Dispatcher#setValueValidator`).
   *
   * @throws {RuntimeError} `Expected a value of type 'int' for argument 'n' but instead found type 'float'.`
   */
  static fromSchema(
    type: SchemaType,
    value: unknown,
    what: string | (() => string) = 'value',
    validator?: ValueValidator,
  ): IValue {
    switch (type.kind) {
      case 'Optional':
        if (value === null || value === undefined) return IValue.NONE;
        try {
          return IValue.fromSchema(type.elem, value, what, validator);
        } catch (e) {
          // PyTorch names the optional type (`Optional[str]`) when the value is of neither.
          if (type.elem.kind !== 'List' && e instanceof RuntimeError && e.message.startsWith('Expected')) {
            throw typeMismatch(what, type, value);
          }
          throw e;
        }
      case 'List': {
        if (!Array.isArray(value)) throw typeMismatch(what, type, value);
        return IValue.list(
          value.map((item, i) => IValue.fromSchema(type.elem, item, () => `${nameOf(what)}[${i}]`, validator)),
        );
      }
      case 'Tensor':
        if (!isDispatchKeySource(value) || validator?.('Tensor', value) === false) {
          throw typeMismatch(what, type, value);
        }
        return new IValue('Tensor', value);
      case 'int':
      case 'SymInt':
        return new IValue(type.kind === 'int' ? 'Int' : 'SymInt', intPayload(type, value, what));
      case 'float':
        if (typeof value !== 'number' && !(value instanceof Number)) throw typeMismatch(what, type, value);
        return new IValue('Double', Number(value));
      case 'bool':
        if (typeof value !== 'boolean') throw typeMismatch(what, type, value);
        return new IValue('Bool', value);
      case 'str':
        if (typeof value !== 'string') throw typeMismatch(what, type, value);
        return new IValue('String', value);
      case 'Scalar':
        if (typeof value === 'bigint') return new IValue('Scalar', Number(intPayload(type, value, what)));
        if (typeof value !== 'number' && typeof value !== 'boolean' && !(value instanceof Number)) {
          throw typeMismatch(what, type, value);
        }
        return new IValue('Scalar', value);
      case 'Any':
        return IValue.infer(value);
      default:
        // ScalarType, Layout, MemoryFormat, Device, Generator, Dimname, Storage: their representation belongs
        // to the layers above the dispatcher, which check them through the validator.
        if (value === undefined || value === null || validator?.(type.kind, value) === false) {
          throw typeMismatch(what, type, value);
        }
        return new IValue(type.kind, value);
    }
  }

  /** Boxes a value whose schema type is unknown (an operator registered without a schema). */
  static infer(value: unknown): IValue {
    if (value === null || value === undefined) return IValue.NONE;
    if (isDispatchKeySource(value)) return new IValue('Tensor', value);
    if (Array.isArray(value)) return IValue.list(value.map((v) => IValue.infer(v)));
    switch (typeof value) {
      case 'number':
        return Number.isInteger(value) ? IValue.int(value) : IValue.double(value);
      case 'boolean':
        return IValue.bool(value);
      case 'string':
        return IValue.string(value);
      default:
        return new IValue('Any', value);
    }
  }

  /** Whether this is None. */
  isNone(): boolean {
    return this.tag === 'None';
  }
  /** Whether this is a tensor. */
  isTensor(): boolean {
    return this.tag === 'Tensor';
  }
  /** Whether this is a list. */
  isList(): boolean {
    return this.tag === 'GenericList';
  }
  /** The tensor payload; throws when this is not a tensor. */
  toTensor<T extends DispatchKeySource = DispatchKeySource>(): T {
    if (this.tag !== 'Tensor') throw new TypeError(`Expected Tensor but got ${this.tag}`);
    return this.payload as T;
  }
  /** The int payload; throws when this is not an int. */
  toInt(): number {
    if (this.tag !== 'Int' && this.tag !== 'SymInt') throw new TypeError(`Expected Int but got ${this.tag}`);
    return this.payload as number;
  }
  /** The list items; throws when this is not a list. */
  toList(): IValue[] {
    if (this.tag !== 'GenericList') throw new TypeError(`Expected GenericList but got ${this.tag}`);
    return this.payload as IValue[];
  }

  /** The JavaScript value this IValue boxes, recursively unboxing lists. */
  toJS(): unknown {
    if (this.tag === 'None') return null;
    if (this.tag === 'GenericList' || this.tag === 'Tuple') return (this.payload as IValue[]).map((v) => v.toJS());
    return this.payload;
  }

  /** A short description, e.g. `Int(3)`. */
  toString(): string {
    if (this.tag === 'None') return 'None';
    if (this.tag === 'GenericList') return `[${(this.payload as IValue[]).join(', ')}]`;
    if (this.tag === 'Tensor') return 'Tensor';
    return `${this.tag}(${String(this.payload)})`;
  }
}

/** The boxed calling convention's stack: arguments are pushed in order, returns replace them. */
export type Stack = IValue[];

/**
 * Checks values of a kind the dispatcher cannot judge itself (a `Tensor`, a `ScalarType`, a `Device`, ...);
 * returns whether the value is one. The dispatcher knows tensors only as objects with keyset words, so the
 * layer that defines tensors gives its dispatcher one (`Dispatcher#setValueValidator`).
 */
export type ValueValidator = (kind: string, value: unknown) => boolean;

const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n;

/** An int argument's payload: an integral number, or a bigint within int64 (as a number). */
function intPayload(type: SchemaType, value: unknown, what: string | (() => string)): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value !== 'bigint') throw typeMismatch(what, type, value);
  if (value < INT64_MIN || value > INT64_MAX) throw new RuntimeError('Overflow when unpacking long');
  return Number(value);
}

/** A JS value's type as Python names it (what PyTorch's boxing errors print). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (isDispatchKeySource(value)) return 'Tensor';
  if (value instanceof IValue) return 'IValue';
  switch (typeof value) {
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'str';
    case 'object': {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
      return name === undefined || name === 'Object' ? 'dict' : name;
    }
    default:
      return typeof value;
  }
}

/** A schema type as TorchScript prints it in PyTorch's boxing errors (`Optional[List[int]]`, `number`). */
export function typeName(type: SchemaType): string {
  switch (type.kind) {
    case 'Optional':
      return `Optional[${typeName(type.elem)}]`;
    case 'List':
      return `List[${typeName(type.elem)}]`;
    case 'Scalar':
      return 'number';
    case 'SymInt':
    case 'ScalarType':
    case 'Layout':
    case 'MemoryFormat':
      return 'int';
    default:
      return type.kind;
  }
}

// Argument names are only needed in error messages, so callers on the boxing path pass them lazily.
function nameOf(what: string | (() => string)): string {
  return typeof what === 'string' ? what : what();
}

function typeMismatch(what: string | (() => string), type: SchemaType, value: unknown): RuntimeError {
  return new RuntimeError(
    `Expected a value of type '${typeName(type)}' for argument '${nameOf(what)}' but instead found type '${
      describeValue(value)
    }'.`,
  );
}

/**
 * Boxes positional arguments onto a stack using the schema's argument types (or inference without one).
 *
 * @example
 * ```ts
 * import { boxArguments } from './ivalue.ts';
 * boxArguments(undefined, [1, 'x']).map(String); // ['Int(1)', 'String(x)']
 * ```
 */
export function boxArguments(args: readonly Argument[] | undefined, values: readonly unknown[]): Stack {
  return boxArgumentsInPlace(args, [...values]);
}

/**
 * Like {@linkcode boxArguments}, but boxes into `values` itself (an array the caller owns and gives up):
 * the unboxed-to-boxed path builds its argument array anyway, so it becomes the stack.
 *
 * @example
 * ```ts
 * import { boxArgumentsInPlace } from './ivalue.ts';
 * boxArgumentsInPlace(undefined, [1, 'x']).map(String); // ['Int(1)', 'String(x)']
 * ```
 */
export function boxArgumentsInPlace(
  args: readonly Argument[] | undefined,
  values: unknown[],
  validator?: ValueValidator,
): Stack {
  const n = args === undefined ? values.length : args.length;
  const stack = values as Stack;
  if (stack.length !== n) stack.length = n; // missing trailing arguments take their defaults
  if (args === undefined) {
    for (let i = 0; i < n; i++) stack[i] = IValue.infer(values[i]);
    return stack;
  }
  for (let i = 0; i < n; i++) {
    const arg = args[i];
    let v = values[i];
    if (v === undefined && arg.defaultValue !== undefined) v = arg.defaultValue.value;
    // A tensor argument is the common case of a boxed fallback: skip the generic type switch.
    stack[i] = arg.type.kind === 'Tensor' && isDispatchKeySource(v) && validator?.('Tensor', v) !== false
      ? new IValue('Tensor', v)
      : IValue.fromSchema(arg.type, v, arg.name, validator);
  }
  return stack;
}
