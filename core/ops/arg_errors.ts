/**
 * PyTorch's "received an invalid combination of arguments" message (torch/csrc/utils/invalid_arguments.cpp),
 * reproduced with its rules: the given argument types, each listed signature once, and under a signature
 * whose argument count matches the call, why it did not match.
 *
 * Note [Invalid-combination quirks]
 * PyTorch re-parses each printed signature by splitting it at ", ", so the `*` marking keyword-only
 * parameters counts as an argument, and `()` counts as one empty argument; it matches a value against a
 * printed type by Python type name only (`float` also takes `int`; `Number` and `tuple of ints` take
 * nothing). Those rules decide when the "didn't match because" lines appear and which types are marked
 * `!type!`; they are kept so that the messages read exactly as PyTorch's.
 *
 * @module
 */
import type { Signature } from './arg_signature.ts';
import type { SplitCall } from './arg_parser.ts';
import { pyTypeName } from './arg_names.ts';

interface OptionArgument {
  readonly name: string;
  readonly type: string;
}

/** The arguments PyTorch's `_parseOption` reads back from a printed signature. */
function optionArguments(sig: Signature): OptionArgument[] {
  const out: OptionArgument[] = [];
  let keywordSeen = false;
  for (const p of sig.params) {
    if (p.keywordOnly && !keywordSeen) {
      out.push({ name: '*', type: '*' });
      keywordSeen = true;
    }
    out.push({ name: p.name, type: p.typeName });
  }
  return out.length === 0 ? [{ name: '', type: '' }] : out;
}

/** PyTorch's `is_matching` of a printed type name against a value. */
function isMatching(type: string, value: unknown): boolean {
  const name = pyTypeName(value);
  return name === type || (type === 'float' && name === 'int');
}

/** A value's type as `_formattedArgDesc` prints it (`list of [int, float]`). */
function describeDeep(value: unknown): string {
  if (!Array.isArray(value)) return pyTypeName(value);
  return `list of [${value.map((v) => pyTypeName(v)).join(', ')}]`;
}

function argDesc(call: SplitCall): string {
  let out = '(';
  for (const a of call.args) out += `${pyTypeName(a)}, `;
  for (const k of call.keys) out += `${k}=${pyTypeName(call.kwargs![k])}, `;
  if (call.args.length > 0) out = out.slice(0, -2);
  return `${out})`;
}

function formattedArgDesc(option: OptionArgument[], call: SplitCall): string {
  const n = call.args.length + call.keys.length;
  let out = '(';
  for (let i = 0; i < n; i++) {
    const isKwarg = i >= call.args.length;
    const key = isKwarg
      ? (call.keys.includes(option[i]?.name ?? '') ? option[i].name : call.keys[i - call.args.length])
      : '';
    const value = isKwarg ? call.kwargs![key] : call.args[i];
    const matching = i < option.length && isMatching(option[i].type, value);
    const text = `${isKwarg ? `${key}=` : ''}${describeDeep(value)}`;
    out += `${matching ? text : `!${text}!`}, `;
  }
  if (call.args.length > 0) out = out.slice(0, -2);
  return `${out})`;
}

function argcountMatch(option: OptionArgument[], call: SplitCall): boolean {
  return call.args.length + call.keys.length === option.length;
}

function unmatchedKwargs(option: OptionArgument[], call: SplitCall): string[] {
  const start = Math.max(0, option.length - call.keys.length);
  const names = new Set(option.slice(start).map((o) => o.name));
  return call.keys.filter((k) => !names.has(k));
}

/**
 * PyTorch's `format_invalid_args` for a call no listed signature binds.
 *
 * @example
 * ```ts
 * // arg_parser.ts: new TypeError(formatInvalidArguments('add', signatures, call))
 * ```
 */
export function formatInvalidArguments(name: string, sigs: readonly Signature[], call: SplitCall): string {
  let msg = `${name}() received an invalid combination of arguments - `;
  if (sigs.length === 1) {
    const option = optionArguments(sigs[0]);
    const unmatched = call.keys.length > 0 ? unmatchedKwargs(option, call) : [];
    if (unmatched.length > 0) return `${msg}got unrecognized keyword arguments: ${unmatched.join(', ')}`;
    const got = argcountMatch(option, call) ? formattedArgDesc(option, call) : argDesc(call);
    return `${msg}got ${got}, but expected ${sigs[0].text}`;
  }
  msg += `got ${argDesc(call)}, but expected one of:\n`;
  for (const sig of sigs) {
    const option = optionArguments(sig);
    msg += ` * ${sig.text}\n`;
    if (!argcountMatch(option, call)) continue;
    const unmatched = call.keys.length > 0 ? unmatchedKwargs(option, call) : [];
    msg += unmatched.length > 0
      ? `      didn't match because some of the keywords were incorrect: ${unmatched.join(', ')}\n`
      : `      didn't match because some of the arguments have invalid types: ${formattedArgDesc(option, call)}\n`;
  }
  return msg;
}
