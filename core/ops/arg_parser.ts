/**
 * The run-time argument parser of the generated API: PyTorch's `PythonArgParser` for JS calls. A call is its
 * positional arguments and, as PyTorch's keyword arguments, a trailing options object; each overload's
 * signature is tried in PyTorch's order, and the first that binds is called. A call no overload binds raises
 * PyTorch's TypeError: the specific one ("argument 'other' (position 2) must be Tensor, not str") when only
 * one signature is plausible for the number of arguments, else "received an invalid combination of
 * arguments". The generated functions handle plain positional calls themselves (the fast path) and come here
 * for everything else.
 *
 * @module
 */
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { parseSchema } from '../dispatch/schema_parser.ts';
import { Tensor } from '../tensor/tensor.ts';
import { buildSignature, type Param, type Signature } from './arg_signature.ts';
import {
  disposedArgument,
  floatArg,
  intArg,
  intListArg,
  intListFailure,
  isFloatArg,
  isIntArg,
  isIntListArg,
  isLiveTensor,
  isScalarArg,
  isTensorListArg,
  type ScalarArg,
  scalarArg,
} from './arg_values.ts';
import {
  deviceArg,
  dtypeArg,
  isDeviceArg,
  isDTypeArg,
  isGeneratorArg,
  isLayoutArg,
  isMemoryFormatArg,
} from './arg_opaque.ts';
import { isOptions, pyTypeName, reductionArg } from './arg_names.ts';
import { formatInvalidArguments } from './arg_errors.ts';

/** One overload of a group, as the generated code lists it (in PyTorch's order). */
export interface OverloadEntry {
  /** The operator (`add.Tensor`). */
  readonly key: string;
  /** The operator schema (without namespace). */
  readonly schema: string;
  /** Bound but not listed in messages (PyTorch's Scalar twins of add/sub/mul/div). */
  readonly hidden?: boolean;
  /** The Python-binding signature, where it differs from the schema (`Tensor.to`). */
  readonly python?: string;
}

/** A generated function or method and its overloads. */
export interface OverloadGroup {
  /** PyTorch's name in messages. */
  readonly name: string;
  /** A Tensor method (`this` is `self`). */
  readonly method: boolean;
  /** Factories take PyTorch's `requiresGrad` keyword. */
  readonly requiresGrad?: boolean;
  /** The overloads, in the order they are tried. */
  readonly overloads: readonly OverloadEntry[];
}

/** A parameter left out, or None where None is allowed (PyTorch treats both as "use the default"). */
const ABSENT = Symbol('absent');

const built = new WeakMap<OverloadGroup, Signature[]>();

function signaturesOf(group: OverloadGroup): Signature[] {
  let sigs = built.get(group);
  if (sigs === undefined) {
    sigs = group.overloads.map((o) =>
      buildSignature(parseSchema(`aten::${o.schema}`), {
        key: o.key,
        method: group.method,
        hidden: o.hidden,
        python: o.python === undefined ? undefined : parseSchema(`aten::${o.python}`),
        requiresGrad: group.requiresGrad,
      })
    );
    built.set(group, sigs);
  }
  return sigs;
}

/** Does `obj` fit `param` (PyTorch's `FunctionParameter::check`)? Disposed tensors throw right away. */
function fits(sig: Signature, param: Param, obj: unknown, argIndex: number): boolean {
  switch (param.kind) {
    case 'Tensor':
      if (isLiveTensor(obj)) return true;
      if (Tensor.isTensor(obj)) throw disposedArgument(sig.name, param.name);
      return false;
    case 'Scalar':
      return isScalarArg(obj);
    case 'int':
      return isIntArg(obj);
    case 'float':
      return isFloatArg(obj);
    case 'bool':
      return typeof obj === 'boolean';
    case 'str':
      return typeof obj === 'string';
    case 'int[]':
      return isIntListArg(obj, param.listSize);
    case 'Tensor[]':
      return isTensorListArg(obj, sig.name, param.name, argIndex);
    case 'ScalarType':
      return isDTypeArg(obj);
    case 'Device':
      return isDeviceArg(obj);
    case 'Generator':
      return isGeneratorArg(obj);
    case 'Layout':
      return isLayoutArg(obj);
    case 'MemoryFormat':
      return isMemoryFormatArg(obj);
    case 'reduction':
      return true; // any value: a bad one is a ValueError when converted, as in torch.nn.functional
  }
}

/** The value the operator receives for a bound argument (PyTorch's `PythonArgs` unpacking). */
function convert(param: Param, obj: unknown): unknown {
  switch (param.kind) {
    case 'Scalar':
      return scalarArg(obj as ScalarArg);
    case 'int':
      return intArg(obj as number);
    case 'float':
      return floatArg(obj as number);
    case 'int[]':
      return intListArg(obj as number[], param.listSize);
    case 'ScalarType':
      return dtypeArg(obj as string);
    case 'Device':
      return deviceArg(obj as string);
    case 'reduction':
      return reductionArg(obj);
    default:
      return obj;
  }
}

/** A call split as PyTorch sees it: positional arguments and keyword arguments. */
export interface SplitCall {
  /** The positional arguments. */
  readonly args: unknown[];
  /** The options object, if any. */
  readonly kwargs: Record<string, unknown> | undefined;
  /** The keyword names given (keys of the options object whose value is not `undefined`). */
  readonly keys: string[];
}

/**
 * Splits JS arguments: trailing `undefined`s are dropped (JS's "not given"), and a trailing options object
 * holds the keyword arguments.
 *
 * @example
 * ```ts
 * import { splitCall } from './arg_parser.ts';
 * splitCall([1, { alpha: 2 }]).keys; // ['alpha']
 * ```
 */
export function splitCall(all: ArrayLike<unknown>): SplitCall {
  let n = all.length;
  while (n > 0 && all[n - 1] === undefined) n--;
  let kwargs: Record<string, unknown> | undefined;
  if (n > 0 && isOptions(all[n - 1])) kwargs = all[--n] as Record<string, unknown>;
  const args = Array.prototype.slice.call(all, 0, n) as unknown[];
  const keys = kwargs === undefined ? [] : Object.keys(kwargs).filter((k) => kwargs![k] !== undefined);
  return { args, kwargs, keys };
}

/** PyTorch's `extra_args`. */
function extraArgs(sig: Signature, nargs: number): TypeError {
  if (sig.minArgs !== sig.maxPosArgs) {
    return new TypeError(
      `${sig.name}() takes from ${sig.minArgs} to ${sig.maxPosArgs} positional arguments but ${nargs} were given`,
    );
  }
  const s = sig.maxPosArgs === 1 ? '' : 's';
  return new TypeError(
    `${sig.name}() takes ${sig.maxPosArgs} positional argument${s} but ${nargs} ${nargs === 1 ? 'was' : 'were'} given`,
  );
}

/** PyTorch's `missing_args` (including its reversed plural: "1 required positional arguments"). */
function missingArgs(sig: Signature, from: number): TypeError {
  const names = sig.params.slice(from).filter((p) => !p.optional).map((p) => `"${p.name}"`);
  const s = names.length === 1 ? 's' : '';
  return new TypeError(`${sig.name}() missing ${names.length} required positional argument${s}: ${names.join(', ')}`);
}

/** PyTorch's `extra_kwargs`. */
function extraKwargs(sig: Signature, call: SplitCall): TypeError {
  for (const key of call.keys) {
    const index = sig.params.findIndex((p) => p.name === key);
    if (index < 0) return new TypeError(`${sig.name}() got an unexpected keyword argument '${key}'`);
    if (index < call.args.length) return new TypeError(`${sig.name}() got multiple values for argument '${key}'`);
  }
  return new TypeError('invalid keyword arguments');
}

function typeError(sig: Signature, param: Param, obj: unknown, position: number | undefined): TypeError {
  const where = position === undefined ? '' : ` (position ${position})`;
  return new TypeError(
    `${sig.name}(): argument '${param.name}'${where} must be ${param.typeName}, not ${pyTypeName(obj)}`,
  );
}

/**
 * PyTorch's `FunctionSignature::parse`: binds `call` to `sig`, writing the raw objects into `dst` (by
 * parameter). Returns false when it does not bind, or throws PyTorch's specific TypeError when `raise`.
 */
function parseInto(sig: Signature, call: SplitCall, dst: unknown[], raise: boolean): boolean {
  const { args, kwargs } = call;
  const nargs = args.length;
  if (nargs > sig.maxPosArgs && !sig.varargs) {
    if (raise) throw extraArgs(sig, nargs);
    return false;
  }
  let argPos = 0, usedKwargs = 0;
  for (let i = 0; i < sig.params.length; i++) {
    const param = sig.params[i];
    let obj: unknown;
    let isKwd = false;
    if (argPos < nargs) {
      if (param.keywordOnly) {
        if (raise) throw extraArgs(sig, nargs);
        return false;
      }
      obj = args[argPos];
    } else if (kwargs !== undefined) {
      obj = Object.hasOwn(kwargs, param.name) ? kwargs[param.name] : undefined;
      isKwd = true;
    }
    const given = isKwd ? obj !== undefined : argPos < nargs;
    if ((!given && param.optional) || (given && (obj === null || obj === undefined) && param.allowNone)) {
      dst[i] = ABSENT;
    } else if (!given) {
      if (raise) throw missingArgs(sig, i);
      return false;
    } else if (fits(sig, param, obj, i)) {
      dst[i] = obj;
    } else if (sig.varargs && argPos === 0 && !isKwd && param.kind === 'int[]' && intListFailure(args) === -1) {
      dst[i] = args; // view(2, 3) binds as view([2, 3])
      argPos = nargs;
      continue;
    } else if (raise) {
      if (isKwd) throw typeError(sig, param, obj, undefined);
      const failed = param.kind === 'int[]' ? intListFailure(Array.isArray(obj) ? obj : sig.varargs ? args : obj) : 0;
      if (failed > 0) {
        const list = (Array.isArray(obj) ? obj : args) as unknown[];
        throw new TypeError(
          `${sig.name}(): argument '${param.name}' must be ${param.typeName}, but found element of type ` +
            `${pyTypeName(list[failed])} at pos ${failed + 1}`,
        );
      }
      throw typeError(sig, param, obj, argPos + 1);
    } else {
      return false;
    }
    if (!isKwd) argPos++;
    else if (given) usedKwargs++;
  }
  if (usedKwargs < call.keys.length) {
    if (raise) throw extraKwargs(sig, call);
    return false;
  }
  return true;
}

/** The operator's argument list from a bound signature: conversions, then defaults. */
function operatorArgs(sig: Signature, self: unknown, bound: unknown[]): unknown[] {
  const out = new Array<unknown>(sig.schemaLength);
  if (self !== undefined) out[0] = self;
  for (const [index, value] of sig.fixed) out[index] = value;
  for (let i = 0; i < sig.params.length; i++) {
    const param = sig.params[i];
    if (param.schemaIndex < 0) continue;
    const obj = bound[i];
    out[param.schemaIndex] = obj === ABSENT ? param.defaultValue : convert(param, obj);
  }
  return out;
}

/** PyTorch's `print_error`: the specific error of the one plausible signature, else the combined one. */
function noMatch(sigs: readonly Signature[], call: SplitCall): TypeError {
  const nargs = call.args.length + call.keys.length;
  const plausible = sigs.filter((s) => !s.hidden && nargs >= s.minArgs && nargs <= s.maxArgs);
  if (plausible.length === 1) parseInto(plausible[0], call, [], true);
  const listed = sigs.filter((s) => !s.hidden);
  return new TypeError(formatInvalidArguments(listed[0]?.name ?? sigs[0].name, listed, call));
}

function checkSelf(group: OverloadGroup, self: unknown): void {
  if (isLiveTensor(self)) return;
  if (Tensor.isTensor(self)) throw disposedArgument(group.name, 'self');
  throw new TypeError(
    `descriptor '${group.name}' for 'Tensor' objects doesn't apply to a '${pyTypeName(self)}' object`,
  );
}

/**
 * Binds a call of a generated function (`self` undefined) or method and calls the chosen operator: the slow
 * path of the generated API (options objects, varargs int lists, bigints, and every error).
 *
 * @example
 * ```ts
 * // generated: return callParsed(ADD, ops(), undefined, arguments);
 * ```
 */
export function callParsed(
  group: OverloadGroup,
  handles: { readonly [key: string]: OperatorHandle },
  self: unknown,
  all: ArrayLike<unknown>,
): unknown {
  if (group.method) checkSelf(group, self);
  const call = splitCall(all);
  const sigs = signaturesOf(group);
  if (sigs.every((s) => s.params.length === 0) && all.length > 0 && (call.args.length > 0 || call.kwargs)) {
    // A method without parameters is METH_NOARGS in Python, whose error is CPython's own.
    throw new TypeError(`Tensor.${group.name}() takes no arguments (${all.length} given)`);
  }
  const bound: unknown[] = [];
  let sig: Signature | undefined;
  if (sigs.length === 1) {
    parseInto(sigs[0], call, bound, true);
    sig = sigs[0];
  } else {
    sig = sigs.find((s) => parseInto(s, call, bound, false));
    if (sig === undefined) throw noMatch(sigs, call);
  }
  const args = operatorArgs(sig, group.method ? self : undefined, bound);
  const requiresGrad = group.requiresGrad === true && bound[sig.params.length - 1] === true;
  const result = handles[sig.key].callUnchecked(...args);
  return requiresGrad ? requireGrad(result as Tensor) : result;
}

/**
 * Applies a factory's `requiresGrad: true` (PyTorch sets it after the call): only floating-point results
 * may require gradients; otherwise the result is freed and PyTorch's RuntimeError raised.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { requireGrad } from './arg_parser.ts';
 * requireGrad(zeros([2])).requiresGrad; // true
 * ```
 */
export function requireGrad(t: Tensor): Tensor {
  if (!t.dtype.isFloatingPoint) {
    t.dispose();
    throw new RuntimeError('Only Tensors of floating point and complex dtype can require gradients');
  }
  return t.requiresGrad_(true);
}
