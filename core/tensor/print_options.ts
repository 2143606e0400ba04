/**
 * `torch.set_printoptions`: the options tensor printing (format.ts) follows, their profiles, and their checks.
 *
 * @module
 */

/** `torch.set_printoptions`'s options. */
export interface PrintOptions {
  /** Digits after the decimal point (default 4). */
  precision: number;
  /** Element count above which the tensor is summarized (default 1000; `Infinity` = never). */
  threshold: number;
  /** Items shown at each end of a summarized dimension (default 3). */
  edgeitems: number;
  /** Characters per line for wrapping (default 80). */
  linewidth: number;
  /** Force scientific notation on (`true`) or off (`false`); `undefined` lets the formatter choose. */
  sciMode: boolean | undefined;
}

/** The option profiles of `torch.set_printoptions(profile=...)`. */
export type PrintProfile = 'default' | 'short' | 'full';

const PROFILES: { readonly [K in PrintProfile]: Omit<PrintOptions, 'sciMode'> } = {
  default: { precision: 4, threshold: 1000, edgeitems: 3, linewidth: 80 },
  short: { precision: 2, threshold: 1000, edgeitems: 2, linewidth: 80 },
  full: { precision: 4, threshold: Infinity, edgeitems: 3, linewidth: 80 },
};

let current: Readonly<PrintOptions> = Object.freeze({ ...PROFILES.default, sciMode: undefined });

/**
 * The current print options.
 *
 * @example
 * ```ts
 * import { getPrintOptions } from './print_options.ts';
 * console.log(getPrintOptions().precision); // 4
 * ```
 */
export function getPrintOptions(): Readonly<PrintOptions> {
  return current;
}

/** What {@linkcode setPrintOptions} takes: any of the options, and a profile applied before them. */
export type PrintOptionsInit = Partial<PrintOptions> & { profile?: PrintProfile };

const OPTION_NAMES: ReadonlySet<string> = new Set(['precision', 'threshold', 'edgeitems', 'linewidth', 'sciMode']);

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) {
    return String(value);
  }
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

// A value of the right type out of its range (a negative count, an unknown profile name) is a RangeError.
function invalid(key: string, value: unknown, expected: string, rightType: boolean): never {
  const message = `Invalid print option ${key}=${describe(value)}: expected ${expected}`;
  throw rightType ? new RangeError(message) : new TypeError(message);
}

/**
 * The options after applying `init` to `base` (a profile first, then the options; `sciMode` back to
 * `undefined` unless given, as `torch.set_printoptions` does), or PyTorch-style errors: a `TypeError` for an
 * unknown option or a value of the wrong type, a `RangeError` for a number out of range.
 */
function applyPrintOptions(base: Readonly<PrintOptions>, init: unknown, resetSciMode: boolean): PrintOptions {
  if (init === undefined) init = {};
  if (typeof init !== 'object' || init === null || Array.isArray(init)) {
    throw new TypeError(`setPrintOptions(): expected an options object, got ${describe(init)}`);
  }
  const given = init as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'profile' && !OPTION_NAMES.has(key)) {
      throw new TypeError(`setPrintOptions() got an unexpected keyword argument '${key}'`);
    }
  }
  const next: PrintOptions = { ...base };
  const profile = given.profile;
  if (profile !== undefined) {
    if (typeof profile !== 'string' || !Object.hasOwn(PROFILES, profile)) {
      invalid('profile', profile, "'default', 'short' or 'full'", typeof profile === 'string');
    }
    Object.assign(next, PROFILES[profile as PrintProfile]);
  }
  for (const key of ['precision', 'edgeitems', 'linewidth'] as const) {
    const value = given[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      invalid(key, value, 'a non-negative integer', typeof value === 'number');
    }
    next[key] = value;
  }
  const threshold = given.threshold;
  if (threshold !== undefined) {
    if (
      typeof threshold !== 'number' || !(Number.isSafeInteger(threshold) || threshold === Infinity) || threshold < 0
    ) {
      invalid('threshold', threshold, 'a non-negative integer or Infinity', typeof threshold === 'number');
    }
    next.threshold = threshold;
  }
  const sciMode = given.sciMode;
  if (sciMode !== undefined && typeof sciMode !== 'boolean') {
    invalid('sciMode', sciMode, 'true, false or undefined', false);
  }
  if (resetSciMode || sciMode !== undefined) next.sciMode = sciMode as boolean | undefined;
  return next;
}

/**
 * The current options with `options` applied (`sciMode` kept unless given), checked as
 * {@linkcode setPrintOptions} checks them, without changing the current options: what `formatTensor` uses
 * for its per-call options.
 *
 * @example
 * ```ts
 * import { resolvePrintOptions } from './print_options.ts';
 * resolvePrintOptions({ precision: 2 }).precision; // 2
 * ```
 */
export function resolvePrintOptions(options: Partial<PrintOptions>): PrintOptions {
  return applyPrintOptions(current, options, false);
}

/**
 * Sets print options as `torch.set_printoptions` does: a `profile` first, then the given options. As in
 * PyTorch, `sciMode` is reset to `undefined` (automatic) unless it is passed. Unlike PyTorch, which accepts
 * anything and fails when printing, the options are checked here: an unknown option or a value of the wrong
 * type is a `TypeError`, a negative or fractional count or an unknown profile a `RangeError`, and the options
 * stay as they were.
 *
 * @example
 * ```ts
 * import { setPrintOptions } from './print_options.ts';
 * setPrintOptions({ precision: 2 });
 * setPrintOptions({ profile: 'default' });
 * ```
 */
export function setPrintOptions(options?: PrintOptionsInit): void {
  current = Object.freeze(applyPrintOptions(current, options, true));
}
