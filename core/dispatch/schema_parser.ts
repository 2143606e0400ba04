/**
 * The schema parser: PyTorch's `function_schema_parser.cpp` and `schema_type_parser.cpp` as a lexer and a
 * recursive-descent parser, plus the rules for default values (what text a default may have, what value it
 * denotes and how it prints, after `ivalue.cpp`).
 *
 * Grammar, as PyTorch reads it:
 * ```
 * decl     := name ( '(' args ')' '->' returns )?
 * name     := ident ('::' ident)? ('.' ident)?
 * args     := (arg | '*' | '...') (',' (arg | '*' | '...'))*      (possibly empty)
 * arg      := type ('[' N ']' alias? '?'?)? ident ('=' default)?
 * returns  := '...' | '(' (ret | '...') (',' ...)* ')' | ret
 * type     := base alias? ('[' ']' alias? | '?')*
 * alias    := '(' (ident | '*') ('|' ...)* '!'? ('->' (ident | '*') ('|' ...)*)? ')'
 * ```
 * Departures, each for a schema PyTorch would misread or that Switchyard's types cannot hold: type variables,
 * tuples, `Dict`, `Tensor!` and hex numbers are rejected; defaults are checked against their type (PyTorch
 * accepts `Tensor? x=1`); a second `*` is an error (PyTorch ignores it); newlines are plain whitespace.
 *
 * @module
 */
import {
  type AliasInfo,
  type Argument,
  BASE_TYPE_KINDS,
  type BaseTypeKind,
  type DefaultValue,
  FunctionSchema,
  MAX_LIST_SIZE,
  MAX_TYPE_NESTING,
  OperatorName,
  printType,
  RESERVED_WORDS,
  schemaOrProblem,
  type SchemaType,
} from './function_schema.ts';

/**
 * A schema text that does not parse. `position` is the 0-based offset of the offending token (the text's
 * length at its end), `expected` says what would have been accepted there and `found` what was there.
 *
 * @example
 * ```ts
 * import { parseSchema, SchemaParseError } from './schema_parser.ts';
 * try {
 *   parseSchema('foo(Tensor x x)');
 * } catch (e) {
 *   (e as SchemaParseError).position; // 13
 *   (e as SchemaParseError).message; // "Expected ')' but found 'x' at position 13 in schema 'foo(Tensor x x)'"
 * }
 * ```
 */
export class SchemaParseError extends Error {
  /** The text being parsed. */
  readonly schema: string;
  /** The 0-based offset of the culprit. */
  readonly position: number;
  /** What would have been accepted there, e.g. `')'` or `an argument name`. */
  readonly expected: string;
  /** What was there, quoted, or `end of input`. */
  readonly found: string;

  /** Creates the error; `detail` is the message before ` at position …`. */
  constructor(detail: string, schema: string, position: number, expected: string, found: string) {
    super(`${detail} at position ${position} in schema '${excerpt(schema, position)}'`);
    this.name = 'SchemaParseError';
    this.schema = schema;
    this.position = position;
    this.expected = expected;
    this.found = found;
  }
}

// Long inputs are cut to the 160 characters around the culprit so a message stays readable.
function excerpt(text: string, position: number): string {
  if (text.length <= 160) return text;
  const from = Math.max(0, Math.min(position - 80, text.length - 160));
  return `${from > 0 ? '…' : ''}${text.slice(from, from + 160)}${from + 160 < text.length ? '…' : ''}`;
}

/**
 * Parses a schema: `aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`.
 *
 * @throws {SchemaParseError} on any input that is not a schema (a bare operator name included).
 * @example
 * ```ts
 * import { parseSchema } from './schema_parser.ts';
 * const schema = parseSchema('aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor');
 * schema.arguments[2].defaultValue; // { text: '1', value: 1 }
 * ```
 */
export function parseSchema(text: string): FunctionSchema {
  return new Parser(text).parseDeclaration(false) as FunctionSchema;
}

/**
 * Parses a schema, or an operator name when the text stops before `(`, as PyTorch's `parseSchemaOrName`.
 *
 * @throws {SchemaParseError} when the text is neither.
 * @example
 * ```ts
 * import { parseSchemaOrName } from './schema_parser.ts';
 * String(parseSchemaOrName('aten::add.Tensor')); // 'aten::add.Tensor' (an OperatorName)
 * ```
 */
export function parseSchemaOrName(text: string): FunctionSchema | OperatorName {
  return new Parser(text).parseDeclaration(true);
}

/**
 * Parses an operator name, `ns::op.overload`.
 *
 * @throws {SchemaParseError} when the text is not a bare operator name.
 * @example
 * ```ts
 * import { parseOperatorName } from './schema_parser.ts';
 * parseOperatorName('aten::add.out').overloadName; // 'out'
 * ```
 */
export function parseOperatorName(text: string): OperatorName {
  const parsed = parseSchemaOrName(text);
  if (parsed instanceof OperatorName) return parsed;
  throw new SchemaParseError(
    'Tried to parse an operator name but function schema was given',
    text,
    text.indexOf('('),
    'end of input',
    "'('",
  );
}

// ---------------------------------------------------------------------------------------------------------
// Default values

/**
 * A constant as written in schema text, before it meets its argument's type.
 *
 * @example
 * ```ts
 * import type { SchemaConstant } from './schema_parser.ts';
 * const oneDot: SchemaConstant = { value: 1, isFloat: true }; // `1.`
 * ```
 */
export interface SchemaConstant {
  /** The constant: a number (a bigint beyond 2^53), a bool, a string, or null for None. */
  readonly value: number | bigint | boolean | string | null;
  /** Whether a number was written as a float (with `.` or an exponent): `Scalar alpha=1.` is a double. */
  readonly isFloat: boolean;
}

const INT_LIKE: ReadonlySet<string> = new Set(['int', 'SymInt', 'ScalarType', 'Layout', 'MemoryFormat']);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MIN_NORMAL = 2.2250738585072014e-308;
const DEVICE =
  /^(cpu|cuda|xpu|mkldnn|opengl|opencl|ideep|hip|ve|fpga|ort|xla|lazy|vulkan|mps|meta|hpu|mtia|privateuseone|webgpu)(:(0|[1-9]\d{0,5}))?$/;
const NONE: DefaultValue = Object.freeze({ text: 'None', value: null });

/**
 * Checks a default against its argument's type and computes its canonical text and value; returns a
 * description of the problem instead when the type does not take it. A single constant for a sized list is
 * repeated N times (`int[2] stride=1`).
 *
 * @example
 * ```ts
 * import { checkDefaultValue } from './schema_parser.ts';
 * checkDefaultValue({ kind: 'float' }, undefined, { value: 1, isFloat: false }); // { text: '1.', value: 1 }
 * checkDefaultValue({ kind: 'bool' }, undefined, { value: 1, isFloat: false }); // 'expected True or False, found 1'
 * ```
 */
export function checkDefaultValue(
  type: SchemaType,
  N: number | undefined,
  raw: SchemaConstant | readonly SchemaConstant[],
): DefaultValue | string {
  if (type.kind === 'Optional') {
    if (!isConstantList(raw) && raw.value === null) return NONE;
    if (type.elem.kind === 'List') return `expected None, found ${describe(raw)}`;
    return checkDefaultValue(type.elem, undefined, raw);
  }
  if (type.kind === 'List') {
    const elem = type.elem;
    if (N !== undefined && !(Number.isInteger(N) && N >= 0 && N <= MAX_LIST_SIZE)) return `invalid list size ${N}`;
    if (elem.kind !== 'float' && elem.kind !== 'bool' && !INT_LIKE.has(elem.kind)) {
      return `list defaults are only supported for int, float and bool lists`;
    }
    if (!isConstantList(raw) && N === undefined) return `expected a list, found ${describe(raw)}`;
    const items = isConstantList(raw) ? raw : new Array<SchemaConstant>(N ?? 0).fill(raw);
    const checked: DefaultValue[] = [];
    for (const item of items) {
      const result = checkScalarDefault(elem.kind as BaseTypeKind, item);
      if (typeof result === 'string') return result;
      checked.push(result);
    }
    const texts = checked.map((c) => c.text);
    const value = Object.freeze(checked.map((c) => c.value as number | bigint | boolean));
    // PyTorch writes `int[2] stride=1` for [1, 1] (only for int, not SymInt or enum lists); we require the
    // size to match so that the text reads back as the same list (Note [Printable schemas]).
    const collapse = elem.kind === 'int' && N !== undefined && N > 1 && texts.length === N &&
      texts.every((t) => t === texts[0]);
    return { text: collapse ? texts[0] : `[${texts.join(', ')}]`, value };
  }
  if (isConstantList(raw)) return `expected a single value, found a list`;
  return checkScalarDefault(type.kind, raw);
}

function isConstantList(raw: SchemaConstant | readonly SchemaConstant[]): raw is readonly SchemaConstant[] {
  return Array.isArray(raw);
}

function checkScalarDefault(kind: BaseTypeKind, c: SchemaConstant): DefaultValue | string {
  const v = c.value;
  switch (kind) {
    case 'Tensor':
    case 'Generator':
      return v === null ? NONE : `expected None, found ${describe(c)}`;
    case 'int':
    case 'SymInt':
    case 'ScalarType':
    case 'Layout':
    case 'MemoryFormat':
      return intDefault(c) ?? `expected an integer, found ${describe(c)}`;
    case 'float':
      return floatDefault(c);
    case 'Scalar':
      if (typeof v === 'boolean') return { text: v ? 'True' : 'False', value: v };
      return c.isFloat ? floatDefault(c) : intDefault(c) ?? `expected a number or a bool, found ${describe(c)}`;
    case 'bool':
      return typeof v === 'boolean'
        ? { text: v ? 'True' : 'False', value: v }
        : `expected True or False, found ${describe(c)}`;
    case 'str':
    case 'Dimname':
      return typeof v === 'string' ? { text: quoteString(v), value: v } : `expected a string, found ${describe(c)}`;
    case 'Device':
      return typeof v === 'string' && DEVICE.test(v)
        ? { text: quoteString(v), value: v }
        : `expected a device string such as "cpu" or "cuda:0", found ${describe(c)}`;
    case 'Any':
    case 'Storage':
      return `${kind} arguments cannot have a default value`;
  }
}

function intDefault(c: SchemaConstant): DefaultValue | undefined {
  const v = c.value;
  if (c.isFloat || (typeof v !== 'bigint' && !(typeof v === 'number' && Number.isInteger(v)))) return undefined;
  const big = BigInt(v);
  if (big < INT64_MIN || big > INT64_MAX) return undefined;
  const value = Number.isSafeInteger(Number(big)) ? Number(big) : big;
  return { text: String(big), value };
}

function floatDefault(c: SchemaConstant): DefaultValue | string {
  if (typeof c.value !== 'number' && typeof c.value !== 'bigint') return `expected a number, found ${describe(c)}`;
  const d = Number(c.value);
  // Schema text has no spelling for inf and nan, and PyTorch's stod rejects subnormals (ERANGE).
  if (!Number.isFinite(d) || (d !== 0 && Math.abs(d) < MIN_NORMAL)) return `${describe(c)} is out of range for a float`;
  return { text: formatDouble(d), value: d === 0 ? 0 : d };
}

function describe(raw: SchemaConstant | readonly SchemaConstant[]): string {
  if (isConstantList(raw)) return `[${raw.map(describe).join(', ')}]`;
  const v = raw.value;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return quoteString(v);
  return raw.isFloat && typeof v === 'number' ? formatDouble(v) : String(v);
}

/**
 * A default value from a JavaScript value, checked as the parser checks schema text. Numbers are doubles
 * when they are not integers or when `options.float` is set (which matters for `Scalar`).
 *
 * @throws {TypeError} naming the type when it does not take the value.
 * @example
 * ```ts
 * import { defaultValueOf } from './schema_parser.ts';
 * defaultValueOf({ kind: 'Scalar' }, 1, { float: true }).text; // '1.'
 * defaultValueOf({ kind: 'List', elem: { kind: 'int' } }, [0, 0], { N: 2 }).text; // '0'
 * ```
 */
export function defaultValueOf(
  type: SchemaType,
  value: DefaultValue['value'],
  options: { readonly N?: number; readonly float?: boolean } = {},
): DefaultValue {
  const constant = (v: unknown): SchemaConstant => {
    if (typeof v === 'number') return { value: v, isFloat: options.float ?? !Number.isInteger(v) };
    if (v === null || typeof v === 'bigint' || typeof v === 'boolean' || typeof v === 'string') {
      return { value: v, isFloat: false };
    }
    throw new TypeError(`Cannot use ${String(v)} as a default value for ${printType(type)}`);
  };
  const raw = Array.isArray(value) ? value.map(constant) : constant(value);
  const result = checkDefaultValue(type, options.N, raw);
  if (typeof result === 'string') throw new TypeError(`Invalid default value for ${printType(type)}: ${result}`);
  return result;
}

/**
 * A double as PyTorch's IValue prints it: integral values in int64 range as `1.`, others with 17 significant
 * digits (`%.17g`), so `1e-05` prints `1.0000000000000001e-05`.
 *
 * @example
 * ```ts
 * import { formatDouble } from './schema_parser.ts';
 * formatDouble(2); // '2.'
 * formatDouble(0.1); // '0.10000000000000001'
 * ```
 */
export function formatDouble(d: number): string {
  if (Number.isNaN(d)) return 'nan';
  if (!Number.isFinite(d)) return d > 0 ? 'inf' : '-inf';
  // int64_t(d) == d in C++: -0 prints `0.` and 2^63 (out of int64 range) falls through to %.17g.
  if (Number.isInteger(d) && d >= -(2 ** 63) && d < 2 ** 63) return `${BigInt(d)}.`;
  return formatG17(d);
}

// printf's %.17g from the exact binary value, rounding half to even as glibc does.
function formatG17(d: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(d));
  const biased = (view.getUint32(0) >>> 20) & 0x7ff;
  let mantissa = (BigInt(view.getUint32(0) & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (biased !== 0) mantissa |= 1n << 52n;
  const exp2 = (biased === 0 ? 1 : biased) - 1075;
  // |d| = digits × 10^scale exactly: m·2^e is an integer for e >= 0, and m·5^-e / 10^-e otherwise.
  const digits = (exp2 >= 0 ? mantissa << BigInt(exp2) : mantissa * 5n ** BigInt(-exp2)).toString();
  const scale = Math.min(exp2, 0);
  let kept = digits.slice(0, 17).padEnd(17, '0');
  let exp10 = digits.length - 1 + scale;
  const rest = digits.slice(17);
  if (
    rest !== '' && (rest[0] > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(kept[16]) % 2 === 1)))
  ) {
    kept = (BigInt(kept) + 1n).toString();
    if (kept.length > 17) {
      kept = kept.slice(0, 17);
      exp10++;
    }
  }
  let text: string;
  if (exp10 < -4 || exp10 >= 17) {
    const mant = `${kept[0]}.${kept.slice(1)}`.replace(/\.?0+$/, '');
    text = `${mant}e${exp10 < 0 ? '-' : '+'}${String(Math.abs(exp10)).padStart(2, '0')}`;
  } else if (exp10 >= 0) {
    const frac = kept.slice(exp10 + 1).replace(/0+$/, '');
    text = kept.slice(0, exp10 + 1) + (frac === '' ? '' : `.${frac}`);
  } else {
    text = `0.${'0'.repeat(-exp10 - 1)}${kept}`.replace(/0+$/, '');
  }
  return d < 0 ? `-${text}` : text;
}

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\\', '\\\\'],
  ["'", "\\'"],
  ['"', '\\"'],
  ['\x07', '\\a'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\v', '\\v'],
]);

/**
 * A string default as PyTorch's `printQuotedString` writes it: double quotes, C escapes, other control
 * characters as 3-digit octal.
 *
 * @example
 * ```ts
 * import { quoteString } from './schema_parser.ts';
 * quoteString("it's\n"); // '"it\\'s\\n"'
 * ```
 */
export function quoteString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    out += ESCAPES.get(ch) ?? (code < 0x20 || code === 0x7f ? `\\${code.toString(8).padStart(3, '0')}` : ch);
  }
  return `${out}"`;
}

// ---------------------------------------------------------------------------------------------------------
// Lexer

const PUNCTUATION = '()[],:.?!|=*-';
type TokenKind =
  | 'ident'
  | 'keyword'
  | 'number'
  | 'string'
  | 'eof'
  | 'error'
  | '->'
  | '...'
  | typeof PUNCTUATION[number];

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly error?: SchemaParseError;
}

const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const SPACE = /(?:[ \t\n\r\v\f]|#[^\n]*)*/y;

/** The match of a sticky expression at `at`, if any. */
function sticky(re: RegExp, text: string, at: number): string | undefined {
  re.lastIndex = at;
  return re.exec(text)?.[0];
}

// Lexes the whole text up front; a lexical error becomes the last token, so it is reported only when the
// parser reaches it (as PyTorch's lazy lexer would).
function lex(text: string): Token[] {
  const tokens: Token[] = [];
  const fail = (start: number, detail: string, expected: string, found: string): Token[] => {
    tokens.push({
      kind: 'error',
      text: found,
      start,
      error: new SchemaParseError(detail, text, start, expected, found),
    });
    return tokens;
  };
  let i = 0;
  for (;;) {
    SPACE.lastIndex = i;
    SPACE.test(text);
    i = SPACE.lastIndex;
    if (i >= text.length) {
      tokens.push({ kind: 'eof', text: '', start: text.length });
      return tokens;
    }
    const c = text[i];
    const start = i;
    // Only a digit, or a `.` before one, can start a number, and only a letter or `_` a word: the other tokens
    // (punctuation, half of them) need no regular expression.
    const code = text.charCodeAt(i);
    const digit = (at: number) => {
      const d = text.charCodeAt(at);
      return d >= 48 && d <= 57;
    };
    const number = digit(i) || (code === 46 && digit(i + 1)) ? sticky(NUMBER, text, i) : undefined;
    const word = number === undefined && (code === 95 || ((code | 32) >= 97 && (code | 32) <= 122))
      ? sticky(IDENT, text, i)
      : undefined;
    if (number !== undefined) {
      tokens.push({ kind: 'number', text: number, start });
    } else if (word !== undefined) {
      tokens.push({ kind: RESERVED_WORDS.has(word) ? 'keyword' : 'ident', text: word, start });
    } else if (c === '"' || c === "'") {
      const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      let j = i + quote.length;
      while (j < text.length && !text.startsWith(quote, j)) {
        if (text[j] === '\n' && quote.length === 1) break;
        j += text[j] === '\\' ? 2 : 1;
      }
      if (j >= text.length || !text.startsWith(quote, j)) {
        return fail(
          start,
          'Unterminated string literal',
          `a closing ${quote}`,
          j < text.length ? 'end of line' : 'end of input',
        );
      }
      tokens.push({ kind: 'string', text: text.slice(start, j + quote.length), start });
    } else if (text.startsWith('->', i) || text.startsWith('...', i)) {
      tokens.push({ kind: c === '-' ? '->' : '...', text: c === '-' ? '->' : '...', start });
    } else if (PUNCTUATION.includes(c)) {
      tokens.push({ kind: c as TokenKind, text: c, start });
    } else {
      return fail(start, `Expected a valid token but found '${c}'`, 'a valid token', `'${c}'`);
    }
    i = start + tokens[tokens.length - 1].text.length;
  }
}

// Python-style escapes as PyTorch's parseStringLiteral reads them, plus `\r`, which PyTorch prints.
function decodeString(token: Token): string | { readonly offset: number; readonly detail: string } {
  const quoteLength = token.text.startsWith(token.text[0].repeat(3)) && token.text.length >= 6 ? 3 : 1;
  const body = token.text.slice(quoteLength, token.text.length - quoteLength);
  const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
  let out = '';
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== '\\') {
      out += body[i];
      continue;
    }
    const next = body[i + 1];
    const offset = token.start + quoteLength + i;
    if (next === '\\' || next === "'" || next === '"' || next === '\n') out += next;
    else if (Object.hasOwn(simple, next)) out += simple[next];
    else if (next === 'x') return { offset, detail: 'Unsupported hex specifier' };
    else if (next === 'u' || next === 'U') return { offset, detail: 'Unsupported unicode specifier' };
    else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4)) && parseInt(body.slice(i + 1, i + 4), 8) < 256) {
      out += String.fromCharCode(parseInt(body.slice(i + 1, i + 4), 8));
      i += 2;
    } else return { offset, detail: 'Ill-formed octal specifier' };
    i++;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Parser

const ENUM_DEFAULTS: ReadonlyMap<string, number> = new Map([
  // at::kFloat, at::kLong, at::kStrided, at::Reduction::Mean, c10::MemoryFormat::Contiguous
  ['float', 6],
  ['long', 4],
  ['strided', 0],
  ['Mean', 1],
  ['contiguous_format', 0],
]);

const PYTORCH_ONLY_TYPES: ReadonlySet<string> = new Set(
  ('complex QScheme Quantizer ConstQuantizerPtr DeviceIndex Stream Capsule AnyClassType AnyEnumType NoneType ' +
    'None Future RRef Await Dict Union __torch__').split(' '),
);

interface TypeAndAlias {
  type: SchemaType;
  alias: AliasInfo | undefined;
  depth: number;
}

class Parser {
  readonly #text: string;
  readonly #tokens: Token[];
  #index = 0;
  #lastEnd = 0;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = lex(text);
  }

  parseDeclaration(allowName: boolean): FunctionSchema | OperatorName {
    const { name, overloadName } = this.#parseName();
    if (this.#peek().kind !== '(') {
      if (!allowName && this.#peek().kind === 'eof') {
        throw this.#fail(this.#peek(), 'Tried to parse a function schema but only the operator name was given', "'('");
      }
      if (!allowName) throw this.#expected("'('");
      this.#expectEnd();
      return new OperatorName(name, overloadName);
    }
    const args: Argument[] = [];
    const argRanges: [number, number][] = [];
    let kwargOnly = false;
    let isVararg = false;
    this.#next();
    if (this.#peek().kind !== ')') {
      do {
        const token = this.#peek();
        if (isVararg) throw this.#fail(token, '... must be the last element of the argument list', "')'");
        if (this.#nextIf('*')) {
          if (kwargOnly) throw this.#fail(token, "Duplicate keyword-only marker '*'", 'an argument');
          kwargOnly = true;
        } else if (this.#nextIf('...')) {
          isVararg = true;
        } else {
          args.push(this.#parseArgument(false, kwargOnly));
          argRanges.push([token.start, this.#lastEnd]);
        }
      } while (this.#nextIf(','));
    }
    this.#expect(')');
    this.#expect('->');
    const { returns, returnRanges, isVarret } = this.#parseReturns();
    this.#expectEnd();
    const init = { name, overloadName, arguments: args, returns, isVararg, isVarret };
    const made = schemaOrProblem(init);
    if (!(made instanceof FunctionSchema)) {
      const problem = made;
      const [start, end] = problem.list === 'arguments'
        ? argRanges[problem.index]
        : problem.list === 'returns'
        ? returnRanges[problem.index]
        : [0, this.#text.indexOf('(')];
      const found = `'${this.#text.slice(start, end)}'`;
      throw new SchemaParseError(problem.message, this.#text, start, 'a valid schema', found);
    }
    return made;
  }

  #parseName(): { name: string; overloadName: string } {
    let name = this.#expectIdent('an operator name').text;
    if (this.#nextIf(':')) {
      this.#expect(':');
      name += `::${this.#expectIdent('an operator name').text}`;
    }
    let overloadName = '';
    if (this.#nextIf('.')) {
      const token = this.#expectIdent('an overload name');
      overloadName = token.text;
      // `default` is the overload packet's attribute for the nameless overload; dunders would shadow Python's.
      if (overloadName === 'default' || overloadName.startsWith('__')) {
        throw this.#fail(token, `Overload name '${overloadName}' is not legal for aten operators`, 'an overload name');
      }
    }
    return { name, overloadName };
  }

  #parseReturns(): { returns: Argument[]; returnRanges: [number, number][]; isVarret: boolean } {
    const returns: Argument[] = [];
    const returnRanges: [number, number][] = [];
    let isVarret = false;
    if (this.#nextIf('...')) return { returns, returnRanges, isVarret: true };
    if (this.#peek().kind !== '(') {
      const start = this.#peek().start;
      returns.push(this.#parseArgument(true, false));
      returnRanges.push([start, this.#lastEnd]);
      return { returns, returnRanges, isVarret };
    }
    this.#next();
    if (this.#peek().kind !== ')') {
      do {
        const token = this.#peek();
        if (isVarret) throw this.#fail(token, '... must be the last element of the return list', "')'");
        if (this.#nextIf('...')) {
          isVarret = true;
        } else {
          returns.push(this.#parseArgument(true, false));
          returnRanges.push([token.start, this.#lastEnd]);
        }
      } while (this.#nextIf(','));
    }
    this.#expect(')');
    return { returns, returnRanges, isVarret };
  }

  #parseArgument(isReturn: boolean, kwargOnly: boolean): Argument {
    let { type, alias, depth } = this.#parseType();
    let N: number | undefined;
    if (this.#peek().kind === '[') {
      // A sized list, `int[2]`, exists only at the argument level (PyTorch's parser says the same).
      const open = this.#next();
      const size = this.#peek();
      if (size.kind !== 'number' || !/^\d+$/.test(size.text)) throw this.#expected('a list size');
      N = Number(size.text);
      if (N > MAX_LIST_SIZE) throw this.#fail(size, `List size ${size.text} exceeds ${MAX_LIST_SIZE}`, 'a list size');
      this.#next();
      this.#expect(']');
      ({ type, alias, depth } = this.#wrapList({ type, alias, depth }, open));
      const question = this.#peek();
      if (this.#nextIf('?')) ({ type, depth } = this.#wrap('Optional', type, depth, question));
    }
    const name = isReturn
      ? this.#peek().kind === 'ident' ? this.#next().text : ''
      : this.#expectIdent('an argument name').text;
    let defaultValue: DefaultValue | undefined;
    if (!isReturn && this.#nextIf('=')) defaultValue = this.#parseDefault(type, N, name);
    return {
      name,
      type,
      kwargOnly: !isReturn && kwargOnly,
      ...(N === undefined ? {} : { N }),
      ...(defaultValue === undefined ? {} : { defaultValue }),
      ...(alias === undefined ? {} : { aliasInfo: alias }),
    };
  }

  #parseType(): TypeAndAlias {
    const token = this.#peek();
    if (token.kind === '(') throw this.#fail(token, 'Tuple types are not supported', 'a type');
    if (token.kind !== 'ident' && !(token.kind === 'keyword' && token.text === 'None')) throw this.#expected('a type');
    const kind = token.text;
    if (!(BASE_TYPE_KINDS as readonly string[]).includes(kind)) throw this.#unknownType(token);
    this.#next();
    let current: TypeAndAlias = { type: { kind: kind as BaseTypeKind }, alias: this.#parseAliasAnnotation(), depth: 0 };
    for (;;) {
      const next = this.#peek();
      if (next.kind === '[' && this.#peek(1).kind === ']') {
        this.#next();
        this.#next();
        current = this.#wrapList(current, next);
      } else if (this.#nextIf('?')) {
        current = { ...this.#wrap('Optional', current.type, current.depth, next), alias: current.alias };
      } else {
        return current;
      }
    }
  }

  #unknownType(token: Token): SchemaParseError {
    const name = token.text;
    const hint = name === 'double'
      ? ': use `float` (a C++ double) in schemas'
      : name === 'int64_t'
      ? ': use `int` or `SymInt` in schemas'
      : PYTORCH_ONLY_TYPES.has(name)
      ? ' (a PyTorch type Switchyard does not support)'
      : /^[a-z]/.test(name)
      ? ' (type variables are not supported)'
      : `; valid types are ${BASE_TYPE_KINDS.join(', ')}`;
    return this.#fail(token, `Unknown type '${name}'${hint}`, 'a type');
  }

  // `at` is the `?` or `[` doing the wrapping, so a too-deep type is reported where it overflows.
  #wrap(kind: 'Optional' | 'List', elem: SchemaType, depth: number, at: Token): { type: SchemaType; depth: number } {
    if (depth + 1 > MAX_TYPE_NESTING) {
      throw this.#fail(at, `Type nests deeper than ${MAX_TYPE_NESTING} levels`, 'an argument name');
    }
    return { type: { kind, elem }, depth: depth + 1 };
  }

  // `T[]` after its element's annotation: a list annotated only through its elements still gets an
  // (empty) annotation of its own that holds theirs, with their write flag, as PyTorch's parser builds it.
  #wrapList(elem: TypeAndAlias, at: Token): TypeAndAlias {
    const { type, depth } = this.#wrap('List', elem.type, elem.depth, at);
    const own = this.#parseAliasAnnotation();
    if (elem.alias === undefined) return { type, alias: own, depth };
    const container = own ?? { beforeSets: [], afterSets: [], isWrite: elem.alias.isWrite, containedTypes: [] };
    return { type, alias: { ...container, containedTypes: [...container.containedTypes, elem.alias] }, depth };
  }

  #parseAliasAnnotation(): AliasInfo | undefined {
    if (this.#peek().kind === '!') {
      throw this.#fail(
        this.#peek(),
        "The 'Tensor!' shorthand is not supported; name the alias set, as in Tensor(a!)",
        "'('",
      );
    }
    if (!this.#nextIf('(')) return undefined;
    const readSets = (): string[] => {
      const sets: string[] = [];
      do {
        // As PyTorch: after a wildcard nothing more is read, so `(*|a)` fails at `a`.
        if (this.#nextIf('*')) sets.push('*');
        else if (!sets.includes('*')) sets.push(this.#expectIdent('an alias set name').text);
      } while (this.#nextIf('|'));
      return [...new Set(sets)];
    };
    const beforeSets = readSets();
    const isWrite = this.#nextIf('!');
    let afterSets = beforeSets;
    if (this.#nextIf('->')) {
      const after = readSets();
      const same = after.length === beforeSets.length && after.every((s) => beforeSets.includes(s));
      afterSets = same ? beforeSets : after;
    }
    this.#expect(')');
    return { beforeSets, afterSets, isWrite, containedTypes: [] };
  }

  #parseDefault(type: SchemaType, N: number | undefined, name: string): DefaultValue {
    const start = this.#peek().start;
    let raw: SchemaConstant | SchemaConstant[];
    let base = type;
    while (base.kind === 'Optional' || base.kind === 'List') base = base.elem;
    const enumNames = INT_LIKE.has(base.kind);
    if (type.kind === 'List' && this.#peek().kind === 'ident') {
      throw this.#expected('a list default value');
    } else if (type.kind === 'List' && (N === undefined || this.#peek().kind === '[')) {
      this.#expect('[');
      raw = [];
      if (this.#peek().kind !== ']') {
        do raw.push(this.#parseConstant(enumNames)); while (this.#nextIf(','));
      }
      this.#expect(']');
    } else {
      raw = this.#parseConstant(enumNames);
    }
    const result = checkDefaultValue(type, N, raw);
    if (typeof result === 'string') {
      const typeText = printType(type);
      throw new SchemaParseError(
        `Invalid default value for argument '${name}' of type ${typeText}: ${result}`,
        this.#text,
        start,
        `a default value of type ${typeText}`,
        this.#sourceFrom(start),
      );
    }
    return result;
  }

  #parseConstant(enumNames: boolean): SchemaConstant {
    const token = this.#peek();
    if (token.kind === 'keyword' && ['True', 'False', 'None'].includes(token.text)) {
      this.#next();
      return { value: token.text === 'None' ? null : token.text === 'True', isFloat: false };
    }
    if (token.kind === 'string') {
      const decoded = decodeString(token);
      if (typeof decoded !== 'string') {
        throw new SchemaParseError(decoded.detail, this.#text, decoded.offset, 'a valid escape', token.text);
      }
      this.#next();
      return { value: decoded, isFloat: false };
    }
    if (token.kind === 'ident') {
      const value = ENUM_DEFAULTS.get(token.text);
      if (value === undefined || !enumNames) {
        throw this.#fail(token, `Invalid numeric default value '${token.text}'`, 'a default value');
      }
      this.#next();
      return { value, isFloat: false };
    }
    const negative = this.#nextIf('-');
    const number = this.#peek();
    if (number.kind !== 'number') throw this.#expected(negative ? 'a number' : 'a default value');
    this.#next();
    const text = `${negative ? '-' : ''}${number.text}`;
    if (/[.eE]/.test(number.text)) {
      const value = Number(text);
      if (!Number.isFinite(value) || (value === 0 && /[1-9]/.test(number.text.split(/[eE]/)[0]))) {
        throw this.#fail(number, `Number ${text} is out of range for a double`, 'a number');
      }
      return { value, isFloat: true };
    }
    const big = BigInt(text);
    if (big < INT64_MIN || big > INT64_MAX) {
      throw this.#fail(number, `Integer ${text} is out of range for int64`, 'a number');
    }
    return { value: Number.isSafeInteger(Number(big)) ? Number(big) : big, isFloat: false };
  }

  #peek(offset = 0): Token {
    const token = this.#tokens[Math.min(this.#index + offset, this.#tokens.length - 1)];
    if (token.error !== undefined) throw token.error;
    return token;
  }
  #next(): Token {
    const token = this.#peek();
    if (token.kind !== 'eof') this.#index++;
    this.#lastEnd = token.start + token.text.length;
    return token;
  }
  #nextIf(kind: TokenKind): boolean {
    if (this.#peek().kind !== kind) return false;
    this.#next();
    return true;
  }
  #expect(kind: TokenKind): Token {
    if (this.#peek().kind !== kind) throw this.#expected(`'${kind}'`);
    return this.#next();
  }
  #expectIdent(what: string): Token {
    if (this.#peek().kind !== 'ident') throw this.#expected(what);
    return this.#next();
  }
  #expectEnd(): void {
    if (this.#peek().kind !== 'eof') throw this.#expected('end of input');
  }
  #expected(what: string): SchemaParseError {
    const token = this.#peek();
    const found = describeToken(token);
    return new SchemaParseError(`Expected ${what} but found ${found}`, this.#text, token.start, what, found);
  }
  #fail(token: Token, detail: string, expected: string): SchemaParseError {
    return new SchemaParseError(detail, this.#text, token.start, expected, describeToken(token));
  }
  #sourceFrom(position: number): string {
    return `'${this.#text.slice(position, Math.max(position, this.#lastEnd))}'`;
  }
}

function describeToken(token: Token): string {
  if (token.kind === 'eof') return 'end of input';
  return token.kind === 'string' ? token.text : `'${token.text}'`;
}
