/**
 * Library: the registration API, mirroring PyTorch's `TORCH_LIBRARY` / `TORCH_LIBRARY_IMPL` /
 * `TORCH_LIBRARY_FRAGMENT` blocks and `torch.library.Library`.
 *
 * @module
 */
import { DispatchKey, dispatchKeyName, parseDispatchKey } from './dispatch_key.ts';
import { runtimeKeysOf } from './dispatch_key_set.ts';
import { Dispatcher, type RegistrationHandle } from './dispatcher.ts';
import { RuntimeError } from './errors.ts';
import { type FunctionSchema, RESERVED_WORDS, withNamespace } from './function_schema.ts';
import { type BoxedKernel, KernelFunction, type UnboxedKernel } from './kernel_function.ts';
import { OperatorHandle } from './operator_handle.ts';
import type { SchemaKernel, SchemaValueTypes, UntypedSchemaValues } from './schema_types.ts';
import { parseSchema, parseSchemaOrName } from './schema_parser.ts';

/** The three kinds of registration block. */
export type LibraryKind = 'DEF' | 'IMPL' | 'FRAGMENT';

/** A kernel as `impl` accepts it: a plain unboxed function, or a {@linkcode KernelFunction}. */
export type KernelLike = UnboxedKernel | KernelFunction;

/** Options of the {@linkcode Library} constructor. */
export interface LibraryOptions {
  /** The dispatcher to register with (default: {@linkcode Dispatcher.singleton}). */
  readonly dispatcher?: Dispatcher;
  /** Where the block is, as `file:line` (default: the caller's location from the stack). */
  readonly location?: string;
}

/** Options of {@linkcode Library.impl}. */
export interface ImplKernelOptions {
  /** Debug string in dumps (default `registered at <library location>`). */
  readonly debug?: string;
  /** The kernel's own schema (`(Tensor x) -> Tensor`), checked against the operator's def. */
  readonly schema?: string;
  /** The kernel's stable name across agents (see `ImplOptions.kernelName` in dispatcher.ts). */
  readonly kernelName?: string;
}

/** Options of {@linkcode Library.defineDeferred}. */
export interface DefineDeferredOptions {
  /**
   * The schema's number of arguments, when the caller has counted them already ({@linkcode splitArguments}); it must
   * be right (kernels are checked against it without parsing). Default: counted here.
   */
  readonly argumentCount?: number;
}

/** Options of {@linkcode Library.define}. */
export interface DefineOptions<S extends string = string, V extends SchemaValueTypes = UntypedSchemaValues> {
  /**
   * Alias analysis kind printed by dumps: FROM_SCHEMA (default; `''` means it too), CONSERVATIVE or PURE_FUNCTION;
   * anything else raises PyTorch's `Invalid alias_analysis type ...`.
   */
  readonly aliasAnalysis?: 'FROM_SCHEMA' | 'CONSERVATIVE' | 'PURE_FUNCTION' | '';
  /** A catch-all kernel registered with the def, as PyTorch's `m.def(schema, fn)`, typed from the schema. */
  readonly impl?: SchemaKernel<S, V> | KernelFunction;
}

const KIND_NAMES: Readonly<Record<LibraryKind, string>> = {
  DEF: 'TORCH_LIBRARY',
  IMPL: 'TORCH_LIBRARY_IMPL',
  FRAGMENT: 'TORCH_LIBRARY_FRAGMENT',
};

/** The fallthrough kernel, for `impl` and `fallback` (PyTorch's `torch.library.fallthrough_kernel`). */
export const fallthroughKernel: KernelFunction = KernelFunction.fallthrough();

/**
 * Marks a function as a boxed kernel `(op, ks, stack)` for `impl`.
 *
 * @example
 * ```ts
 * import { boxed } from './library.ts';
 * const k = boxed((_op, _ks, stack) => { stack.length = stack.length; });
 * ```
 */
export function boxed(fn: BoxedKernel): KernelFunction {
  return KernelFunction.fromBoxed(fn);
}

function toKernelFunction(fn: KernelLike): KernelFunction {
  if (fn instanceof KernelFunction) return fn;
  if (typeof fn !== 'function') {
    throw new TypeError(`expected a kernel (a function or a KernelFunction), got ${fn === null ? 'null' : typeof fn}`);
  }
  return KernelFunction.fromUnboxed(fn);
}

/** The alias analysis kinds a def may name (c10's AliasAnalysisKind, as `parseAliasAnalysisKind` reads them). */
const ALIAS_ANALYSIS_KINDS: readonly string[] = ['FROM_SCHEMA', 'CONSERVATIVE', 'PURE_FUNCTION', ''];

function toKey(key: DispatchKey | string | undefined): DispatchKey | undefined {
  const k = typeof key === 'string' ? (key === '' ? undefined : parseDispatchKey(key)) : key;
  return k === DispatchKey.Undefined ? undefined : k;
}

function callerLocation(): string {
  const stack = new Error().stack?.split('\n') ?? [];
  for (const line of stack.slice(1)) {
    if (line.includes('library.ts')) continue;
    const m = /((?:file:\/\/|https?:\/\/|\/)[^\s()]+?):(\d+):\d+\)?\s*$/.exec(line);
    if (m !== null) return `${m[1]}:${m[2]}`;
  }
  return '<unknown>:0';
}

/**
 * A block of registrations for one namespace. Everything it registers is deregistered by `dispose()`
 * (or at the end of a `using` scope).
 *
 * - `DEF`: the one block that defines a namespace's operators (a second DEF for a namespace is an error);
 * - `FRAGMENT`: more definitions for a namespace;
 * - `IMPL`: kernels for existing operators, optionally all at one dispatch key; the namespace `_` holds
 *   backend fallbacks.
 *
 * @example
 * ```ts
 * import { Dispatcher, DispatchKey, Library } from '../../mod.ts';
 * const d = new Dispatcher();
 * using def = new Library('myops', 'DEF', undefined, { dispatcher: d });
 * const op = def.define('myops::scale(Tensor x, float s) -> Tensor');
 * using cpu = new Library('myops', 'IMPL', DispatchKey.CPU, { dispatcher: d });
 * cpu.impl('scale', (_hi: number, _lo: number, x: unknown, _s: number) => x);
 * ```
 */
export class Library<V extends SchemaValueTypes = UntypedSchemaValues> implements Disposable {
  /** The namespace (`_` for a fallback block). */
  readonly ns: string;
  /** The block kind. */
  readonly kind: LibraryKind;
  /** The block's dispatch key, if any. */
  readonly dispatchKey: DispatchKey | undefined;
  /** Where the block was created (`file:line`). */
  readonly location: string;
  /** The dispatcher it registers with. */
  readonly dispatcher: Dispatcher;
  readonly #handles: RegistrationHandle[] = [];

  /** Opens a block; a DEF block claims the namespace. */
  constructor(ns: string, kind: LibraryKind, dispatchKey?: DispatchKey | string, options: LibraryOptions = {}) {
    if (!(kind in KIND_NAMES)) throw new RuntimeError(`Unsupported kind: ${kind}`);
    this.ns = ns;
    this.kind = kind;
    this.dispatchKey = toKey(dispatchKey);
    this.location = options.location ?? callerLocation();
    this.dispatcher = options.dispatcher ?? Dispatcher.singleton();
    if (kind !== 'IMPL') {
      if (ns === '_') {
        const k = KIND_NAMES[kind];
        throw new RuntimeError(
          `${k}: cannot define ${k} with the wildcard namespace _ (every ${k} defines operators for a distinct ` +
            `namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  ${this.#context()}`,
        );
      }
      if (this.dispatchKey !== undefined) {
        throw new RuntimeError(`${KIND_NAMES[kind]} blocks take no dispatch key.  ${this.#context()}`);
      }
    }
    if (kind === 'DEF') this.#handles.push(this.dispatcher.registerLibrary(ns, `registered at ${this.location}`));
  }

  #context(): string {
    return `(Error occurred while processing ${KIND_NAMES[this.kind]} block at ${this.location})`;
  }

  /**
   * Defines an operator from its schema; returns its handle. All or nothing: when the def or its `impl` is
   * refused, nothing stays registered.
   */
  define<const S extends string>(schemaText: S, options: DefineOptions<S, V> = {}): OperatorHandle<S, V> {
    if (typeof schemaText !== 'string') {
      throw new TypeError(`define(): argument 'schema' must be str, not ${typeof schemaText}`);
    }
    const aliasAnalysis = options.aliasAnalysis ?? 'FROM_SCHEMA';
    if (!ALIAS_ANALYSIS_KINDS.includes(aliasAnalysis)) {
      throw new RuntimeError(`Invalid alias_analysis type ${String(options.aliasAnalysis)}`);
    }
    const kernel = options.impl === undefined ? undefined : toKernelFunction(options.impl);
    let schema: FunctionSchema = parseSchema(schemaText);
    if (this.kind === 'IMPL') {
      throw new RuntimeError(
        `def("${schema.fullName}"): Cannot define an operator inside of a ${KIND_NAMES[this.kind]} block.  ` +
          `All def()s should be placed in the (unique) TORCH_LIBRARY block for their namespace.  ${this.#context()}`,
      );
    }
    if (schema.namespace === '') {
      schema = withNamespace(schema, this.ns);
    } else if (schema.namespace !== this.ns) {
      throw new RuntimeError(
        `Explicitly provided namespace (${schema.namespace}) in schema string does not match namespace of ` +
          `enclosing ${KIND_NAMES[this.kind]} block (${this.ns}).  Move this definition to the (unique) ` +
          'TORCH_LIBRARY block corresponding to this namespace (and consider deleting the namespace from your ' +
          `schema string.)  ${this.#context()}`,
      );
    }
    const def = this.dispatcher.registerDef(schema, `registered at ${this.location}`, aliasAnalysis || 'FROM_SCHEMA');
    if (kernel !== undefined) {
      let impl: RegistrationHandle;
      try {
        impl = this.dispatcher.registerImpl(schema.fullName, this.dispatchKey, kernel, {
          debug: `registered at ${this.location}`,
        });
      } catch (e) {
        def.dispose();
        throw e;
      }
      this.#handles.push(def, impl);
    } else {
      this.#handles.push(def);
    }
    return this.dispatcher.findOp(schema.fullName)! as unknown as OperatorHandle<S, V>;
  }

  /**
   * Defines an operator whose schema is parsed when first needed (its first call or inspection, see Note
   * [Operators materialize on first use] in dispatcher.ts) instead of now: the library registers its own ~290
   * operators this way at import. Only the operator name (the text before `(`) is read here, so a malformed
   * declaration throws where its schema is first read; use {@linkcode define} for schemas that may be wrong.
   *
   * @example
   * ```ts
   * import { Dispatcher, Library } from '../../mod.ts';
   * using lib = new Library('lazyex', 'DEF', undefined, { dispatcher: new Dispatcher() });
   * const op = lib.defineDeferred('lazyex::twice(int x) -> int');
   * op.schema!.arguments[0].name; // 'x' (parsed on this first read)
   * ```
   */
  defineDeferred(schemaText: string, options: DefineDeferredOptions = {}): OperatorHandle<string, V> {
    if (typeof schemaText !== 'string') {
      throw new TypeError(`defineDeferred(): argument 'schema' must be str, not ${typeof schemaText}`);
    }
    const known = options.argumentCount;
    if (known !== undefined && !(Number.isInteger(known) && known >= 0)) {
      throw new TypeError(`defineDeferred(): argumentCount must be a non-negative integer, got ${String(known)}`);
    }
    const paren = schemaText.indexOf('(');
    const name = (paren < 0 ? schemaText : schemaText.slice(0, paren)).trim();
    if (this.kind === 'IMPL') {
      throw new RuntimeError(
        `def("${name}"): Cannot define an operator inside of a ${KIND_NAMES[this.kind]} block.  ` +
          `All def()s should be placed in the (unique) TORCH_LIBRARY block for their namespace.  ${this.#context()}`,
      );
    }
    const ns = namespaceOf(name);
    if (ns !== '' && ns !== this.ns) {
      throw new RuntimeError(
        `Explicitly provided namespace (${ns}) in schema string does not match namespace of ` +
          `enclosing ${KIND_NAMES[this.kind]} block (${this.ns}).  Move this definition to the (unique) ` +
          'TORCH_LIBRARY block corresponding to this namespace (and consider deleting the namespace from your ' +
          `schema string.)  ${this.#context()}`,
      );
    }
    const full = ns === '' ? `${this.ns}::${name}` : name;
    const parse = () => {
      const schema = parseSchema(schemaText);
      return schema.namespace === '' ? withNamespace(schema, this.ns) : schema;
    };
    // Counted when a kernel's check first needs it (an operator whose kernels are registered lazily never may).
    const argumentCount = known ?? (() => countArguments(schemaText));
    this.#handles.push(
      this.dispatcher.registerDeferredDef(full, parse, `registered at ${this.location}`, { argumentCount }),
    );
    return this.dispatcher.findOp(full)! as unknown as OperatorHandle<string, V>;
  }

  /**
   * Registers a kernel for operator `name` (`op`, `op.overload` or `ns::op.overload`) at `dispatchKey`
   * (a runtime or alias key, or its name); without a key, the block's key; without either, the catch-all.
   */
  impl<S extends string>(
    op: OperatorHandle<S, V>,
    fn: NoInfer<SchemaKernel<S, V>> | KernelFunction,
    dispatchKey?: DispatchKey | string,
    options?: ImplKernelOptions,
  ): this;
  /** Registers a kernel for the operator called `name`; the kernel is untyped (any arguments). */
  impl(name: string, fn: KernelLike, dispatchKey?: DispatchKey | string, options?: ImplKernelOptions): this;
  impl(
    nameOrOp: string | OperatorHandle<string, V>,
    fn: KernelLike,
    dispatchKey?: DispatchKey | string,
    options: ImplKernelOptions = {},
  ): this {
    const name = nameOrOp instanceof OperatorHandle ? nameOrOp.name : nameOrOp;
    let ns: string, full: string;
    if (isPlainOperatorName(name)) {
      ns = '';
      full = name;
    } else {
      const parsed = parseSchemaOrName(name);
      ns = 'arguments' in parsed ? parsed.namespace : namespaceOf(parsed.name);
      full = 'arguments' in parsed ? parsed.fullName : parsed.toString();
    }
    if (ns === '') {
      ns = this.ns;
      full = `${this.ns}::${full}`;
    } else if (ns !== this.ns) {
      const block = KIND_NAMES[this.kind];
      throw new RuntimeError(
        implPrelude(name) +
          `Explicitly provided namespace (${ns}) in operator name does not match namespace of enclosing ${block} ` +
          `block (${this.ns}).  Move this definition to the ${block} block corresponding to this namespace (and ` +
          `consider deleting the namespace from your schema string.)  ${this.#context()}`,
      );
    }
    const explicit = toKey(dispatchKey);
    if (explicit !== undefined && this.dispatchKey !== undefined && explicit !== this.dispatchKey) {
      throw new RuntimeError(
        implPrelude(name) +
          `Explicitly provided dispatch key (${dispatchKeyName(explicit)}) is inconsistent with the dispatch ` +
          `key of the enclosing ${KIND_NAMES[this.kind]} block (${dispatchKeyName(this.dispatchKey)}).  Please ` +
          `declare a separate ${KIND_NAMES[this.kind]} block for this dispatch key and move your impl() there.  ` +
          this.#context(),
      );
    }
    const key = explicit ?? this.dispatchKey;
    const inferredSchema = options.schema === undefined ? undefined : parseSchema(`${full}${options.schema}`);
    this.#handles.push(
      this.dispatcher.registerImpl(full, key, toKernelFunction(fn), {
        debug: options.debug ?? `registered at ${this.location}`,
        inferredSchema,
        kernelName: options.kernelName,
      }),
    );
    return this;
  }

  /**
   * Registers a backend fallback for the block's dispatch key, for every operator. Only in an IMPL block of
   * namespace `_`; an alias key registers one fallback per runtime key it stands for.
   */
  fallback(fn: BoxedKernel | KernelFunction, options: { debug?: string } = {}): this {
    if (this.kind !== 'IMPL') {
      throw new RuntimeError(
        `fallback(...): Cannot define an operator inside of a ${KIND_NAMES[this.kind]} block.  Did you mean to ` +
          `call this function inside a TORCH_LIBRARY_IMPL block?  ${this.#context()}`,
      );
    }
    if (this.dispatchKey === undefined) {
      throw new RuntimeError(`fallback(...): a fallback needs the block's dispatch key.  ${this.#context()}`);
    }
    if (this.ns !== '_') {
      throw new RuntimeError(
        `fallback(...): Fallback functions which apply to only a single namespace (you specified ${this.ns}) are ` +
          'not supported.  If you intended to apply this fallback function globally, please define a separate ' +
          `block:\n\n    TORCH_LIBRARY_IMPL(_, ${dispatchKeyName(this.dispatchKey)}, m) { m.fallback(...); }\n\n` +
          this.#context(),
      );
    }
    const kernel = fn instanceof KernelFunction ? fn : KernelFunction.fromBoxed(fn);
    const debug = options.debug ?? `registered at ${this.location}`;
    // An alias key registers one fallback per runtime key. Unlike PyTorch's loop, a failure part-way undoes
    // the ones already made, so a throwing call leaves dispatch unchanged.
    const made: RegistrationHandle[] = [];
    try {
      for (const k of runtimeKeysOf(this.dispatchKey)) made.push(this.dispatcher.registerFallback(k, kernel, debug));
    } catch (e) {
      for (const h of made.reverse()) h.dispose();
      throw e;
    }
    this.#handles.push(...made);
    return this;
  }

  /** Deregisters everything this block registered, newest first. */
  dispose(): void {
    while (this.#handles.length > 0) this.#handles.pop()!.dispose();
  }

  /** Same as {@linkcode dispose}. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * The arguments of a schema text, split without parsing: the top-level items between the first `(` and its `)`,
 * trimmed, less the `*` and `...` markers. Quoted defaults and nested `(...)`/`[...]` groups (alias annotations, list
 * sizes and defaults) are skipped. Undefined when the text has no closed argument list, a backslash, a triple quote or
 * an unclosed quote (escapes this does not follow); the arguments are then left to the parser. Native string and
 * regular-expression work only: it runs for every declaration at import, in code not yet compiled.
 *
 * @example
 * ```ts
 * import { splitArguments } from './library.ts';
 * splitArguments('add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)');
 * // ['Tensor(a!) self', 'Tensor other', 'Scalar alpha=1']
 * ```
 */
export function splitArguments(schemaText: string): string[] | undefined {
  const open = schemaText.indexOf('(');
  if (open < 0 || schemaText.includes('\\') || schemaText.includes("'''") || schemaText.includes('"""')) {
    return undefined;
  }
  const text = schemaText.slice(open + 1);
  // Same-length masks keep the offsets: quoted strings first, then nested groups, innermost first, until the first
  // `)` left closes the argument list and the `,` left separate its arguments.
  const blank = (m: string) => ' '.repeat(m.length);
  let masked = text.replace(/"[^"]*"|'[^']*'/g, blank);
  if (masked.includes('"') || masked.includes("'")) return undefined;
  for (let before = ''; before !== masked;) {
    before = masked;
    masked = masked.replace(/\([^()]*\)|\[[^[\]]*\]/g, blank);
  }
  const close = masked.indexOf(')');
  if (close < 0) return undefined;
  const items: string[] = [];
  let start = 0;
  for (let at = masked.indexOf(','); at >= 0 && at < close; at = masked.indexOf(',', at + 1)) {
    items.push(text.slice(start, at).trim());
    start = at + 1;
  }
  items.push(text.slice(start, close).trim());
  return items.filter((item) => item !== '' && item !== '*' && item !== '...');
}

/**
 * The number of arguments of a schema text, counted without parsing ({@linkcode splitArguments}); undefined when that
 * leaves the text to the parser.
 *
 * @example
 * ```ts
 * import { countArguments } from './library.ts';
 * countArguments('add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor'); // 3
 * ```
 */
export function countArguments(schemaText: string): number | undefined {
  return splitArguments(schemaText)?.length;
}

const PLAIN_NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?$/;

/**
 * Whether `name` is `op` or `op.overload` without a namespace, as `parseSchemaOrName` would accept it (no reserved
 * word, no illegal overload name): then it is its own canonical text and needs no parse (the common case of
 * `impl('add.Tensor', ...)`, 1500 times at import).
 */
function isPlainOperatorName(name: string): boolean {
  let plain = plainNames.get(name);
  if (plain === undefined) {
    const m = PLAIN_NAME.exec(name);
    const overload = m?.[2];
    plain = m !== null && !RESERVED_WORDS.has(m[1]) &&
      (overload === undefined ||
        (!RESERVED_WORDS.has(overload) && overload !== 'default' && !overload.startsWith('__')));
    plainNames.set(name, plain);
  }
  return plain;
}

// An operator gets about five impl() calls at import (its kernels for Meta, CPU, Autograd, Batched...).
const plainNames = new Map<string, boolean>();

/** The start of `impl`'s errors (built only for an error: impl runs ~1500 times at import). */
function implPrelude(name: string): string {
  return `impl("${name}", ...): `;
}

function namespaceOf(name: string): string {
  const i = name.indexOf('::');
  return i < 0 ? '' : name.slice(0, i);
}
