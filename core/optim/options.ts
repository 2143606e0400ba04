/**
 * Run-time checks of optimizer arguments: the learning rate given positionally or in the options object,
 * option names and types, and PyTorch's ValueError messages for values out of range.
 *
 * Note [Positional learning rate]
 * PyTorch's optimizers take `lr` as their second positional argument (`SGD(params, 0.1, momentum=0.9)`).
 * Here `new SGD(params, 0.1)`, `new SGD(params, { lr: 0.1, momentum: 0.9 })` and
 * `new SGD(params, 0.1, { momentum: 0.9 })` are the same; giving `lr` both ways is Python's
 * "got multiple values for argument 'lr'" TypeError.
 *
 * @module
 */
import { ValueError } from '../dispatch/errors.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';

/** What an option holds: a float, a bool, or a pair of floats (`betas`). */
export type OptionKind = 'float' | 'bool' | 'pair';

/** An optimizer's options and their kinds. */
export type OptionKinds<O> = { readonly [K in keyof O]-?: OptionKind };

function fits(kind: OptionKind, value: unknown): boolean {
  switch (kind) {
    case 'float':
      return typeof value === 'number';
    case 'bool':
      return typeof value === 'boolean';
    case 'pair':
      return Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'number');
  }
}

const TYPE_NAMES: { readonly [K in OptionKind]: string } = {
  float: 'float',
  bool: 'bool',
  pair: 'tuple of two floats',
};

/**
 * Checks the option names and types of an optimizer's options (or of a parameter group's overrides):
 * an unknown name or a value of the wrong type is a TypeError naming it.
 *
 * @example
 * ```ts
 * import { checkOptionTypes } from './options.ts';
 * checkOptionTypes('SGD', { lr: 'float' }, { lr: 0.1 });
 * ```
 */
export function checkOptionTypes<O>(
  name: string,
  kinds: OptionKinds<O>,
  options: Record<string, unknown>,
  allowOtherKeys = false,
): void {
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Object.hasOwn(kinds, key)) {
      if (allowOtherKeys) continue;
      throw new TypeError(`${name}() got an unexpected keyword argument '${key}'`);
    }
    const kind = (kinds as Record<string, OptionKind>)[key];
    if (!fits(kind, value)) {
      throw new TypeError(`${name}(): argument '${key}' must be ${TYPE_NAMES[kind]}, not ${pyTypeName(value)}`);
    }
  }
}

/**
 * The options of an optimizer constructor called as `(params, lr?, options?)` or `(params, options?)`
 * (Note [Positional learning rate]), type-checked.
 *
 * @example
 * ```ts
 * import { constructorOptions } from './options.ts';
 * constructorOptions('SGD', { lr: 'float', momentum: 'float' }, [0.1, { momentum: 0.9 }]); // { lr: 0.1, momentum: 0.9 }
 * ```
 */
export function constructorOptions<O>(name: string, kinds: OptionKinds<O>, args: readonly unknown[]): Partial<O> {
  let n = args.length;
  while (n > 0 && args[n - 1] === undefined) n--;
  const [lrOrOptions, rest] = args;
  let options: Record<string, unknown> = {};
  if (n === 1 && isOptions(lrOrOptions)) {
    options = { ...lrOrOptions };
  } else if (n >= 1) {
    if (n > 2 || (n === 2 && !isOptions(rest))) {
      throw new TypeError(`${name}() takes from 1 to 2 positional arguments but ${n + 1} were given`);
    }
    if (typeof lrOrOptions !== 'number') {
      throw new TypeError(`${name}(): argument 'lr' (position 2) must be float, not ${pyTypeName(lrOrOptions)}`);
    }
    options = { ...(rest as Record<string, unknown> | undefined) };
    if (options.lr !== undefined) throw new TypeError(`${name}() got multiple values for argument 'lr'`);
    options.lr = lrOrOptions;
  }
  checkOptionTypes(name, kinds, options);
  for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
  return options as Partial<O>;
}

/**
 * PyTorch's ValueError for a hyperparameter out of range (`Invalid learning rate: -1`).
 *
 * @example
 * ```ts
 * import { invalidValue } from './options.ts';
 * invalidValue('learning rate', -1).message; // 'Invalid learning rate: -1'
 * ```
 */
export function invalidValue(what: string, value: number): ValueError {
  return new ValueError(`Invalid ${what}: ${formatNumber(value)}`);
}

/** A number as Python prints a float (`nan`, `inf`). */
function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return String(v);
}
