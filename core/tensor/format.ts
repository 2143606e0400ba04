/**
 * Tensor printing, character for character as PyTorch 1.13's `repr(tensor)` (torch/_tensor_str.py):
 * the `_Formatter` choice of integer, fixed or scientific notation and its column width, summaries
 * with `...` above `threshold` elements, wrapping at `linewidth`, and the `dtype=`, `device=`,
 * `size=`, `requires_grad=` and `grad_fn=` suffixes.
 *
 * Numbers are printed exactly as Python's `format()` prints a double (correctly rounded, ties to
 * even), not with `toFixed`, which rounds ties away from zero (`0.03125` is `0.0312` in PyTorch).
 *
 * @example
 * ```ts
 * import { float32 } from './dtype.ts';
 * import { formatTensor } from './format.ts';
 * const data = [1, 2.5, -3];
 * console.log(formatTensor({ shape: [3], dtype: float32, device: 'cpu', get: (i) => data[i] }));
 * // tensor([ 1.0000,  2.5000, -3.0000])
 * ```
 *
 * @module
 */
import { bool, type DType, getDefaultDtype, int64 } from './dtype.ts';
import { getPrintOptions, type PrintOptions, resolvePrintOptions } from './print_options.ts';

/** What {@linkcode formatTensor} needs to know about a tensor; no tensor class required. */
export interface FormatSource {
  /** Sizes; `[]` for a 0-dim tensor. */
  readonly shape: readonly number[];
  /** Element type; decides the notation and the `dtype=` suffix. */
  readonly dtype: DType;
  /** `cpu`, `meta`, `webgpu:0`, ... Anything but `cpu` is printed as a `device=` suffix. */
  readonly device: string;
  /** The values cannot be read synchronously (a webgpu tensor): printed as `...` with its size, as meta's are. */
  readonly elided?: boolean;
  /** The element at a row-major flat index; float16/bfloat16 as their numeric values, not bits. */
  get(flatIndex: number): number | bigint | boolean;
  /** Prints `requires_grad=True` when there is no `gradFnName`. */
  readonly requiresGrad?: boolean;
  /** The grad_fn's name, e.g. `AddBackward0`; printed in preference to `requires_grad=True`. */
  readonly gradFnName?: string;
}

/**
 * PyTorch's `repr()` of a tensor.
 *
 * @example
 * ```ts
 * import { bool, int64 } from './dtype.ts';
 * import { formatTensor } from './format.ts';
 * console.log(formatTensor({ shape: [2], dtype: bool, device: 'cpu', get: (i) => i === 0 })); // tensor([ True, False])
 * console.log(formatTensor({ shape: [2, 3], dtype: int64, device: 'meta', get: () => 0 }));
 * // tensor(..., device='meta', size=(2, 3), dtype=torch.int64)
 * ```
 */
export function formatTensor(view: FormatSource, options?: Partial<PrintOptions>): string {
  const opts = options === undefined ? getPrintOptions() : resolvePrintOptions(options);
  const prefix = 'tensor(';
  const indent = prefix.length;
  const suffixes: string[] = [];
  const { shape, dtype } = view;
  const deviceType = view.device.split(':')[0];
  if (deviceType !== 'cpu') suffixes.push(`device='${view.device}'`);
  const numel = shape.reduce((a, b) => a * b, 1);
  const defaultDtype = getDefaultDtype();
  let body: string;
  if (deviceType === 'meta' || view.elided === true) {
    suffixes.push(`size=${pythonTuple(shape)}`);
    if (dtype !== defaultDtype) suffixes.push(`dtype=${dtype}`);
    body = '...';
  } else if (numel === 0) {
    // Like NumPy, the shape is printed unless it is (0,); an empty tensor has no values to tell
    // its dtype by, so anything but the default dtype is named.
    if (shape.length !== 1) suffixes.push(`size=${pythonTuple(shape)}`);
    if (dtype !== defaultDtype) suffixes.push(`dtype=${dtype}`);
    body = '[]';
  } else {
    if (dtype !== defaultDtype && dtype !== int64 && dtype !== bool) suffixes.push(`dtype=${dtype}`);
    body = new Printer(view, opts).tensor(indent);
  }
  if (view.gradFnName !== undefined) suffixes.push(`grad_fn=<${view.gradFnName}>`);
  else if (view.requiresGrad) suffixes.push('requires_grad=True');
  return addSuffixes(prefix + body, suffixes, indent, opts.linewidth);
}

function range(start: number, end: number): number[] {
  return Array.from({ length: end - start }, (_, i) => start + i);
}

function pythonTuple(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

// _add_suffixes. `lastLineLength` overcounts by 2 as PyTorch's does (len - rfind('\n') + 1).
function addSuffixes(text: string, suffixes: string[], indent: number, linewidth: number): string {
  let out = text;
  let lastLineLength = text.length - text.lastIndexOf('\n') + 1;
  for (const suffix of suffixes) {
    if (lastLineLength + suffix.length + 2 > linewidth) {
      out += ',\n' + ' '.repeat(indent) + suffix;
      lastLineLength = indent + suffix.length;
    } else {
      out += ', ' + suffix;
      lastLineLength += suffix.length + 2;
    }
  }
  return out + ')';
}

/** Walks the tensor as _tensor_str_with_formatter does, over the elements a summary keeps. */
class Printer {
  readonly #view: FormatSource;
  readonly #opts: PrintOptions;
  readonly #strides: number[];
  readonly #summarize: boolean;
  readonly #floating: boolean;
  readonly #round: (x: number) => number;
  #intMode = true;
  #sciMode = false;
  #maxWidth = 1;

  constructor(view: FormatSource, opts: PrintOptions) {
    this.#view = view;
    this.#opts = opts;
    const shape = view.shape;
    this.#strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
    this.#summarize = shape.reduce((a, b) => a * b, 1) > opts.threshold;
    this.#floating = view.dtype.isFloatingPoint;
    // PyTorch formats half and bfloat16 after .float(); all three are exact in float32.
    this.#round = view.dtype.itemSize <= 4 ? Math.fround : (x) => x;
    this.#measure();
  }

  /** _Formatter.__init__ over the displayed elements (get_summarized_data). */
  #measure(): void {
    const indices: number[] = [];
    this.#visit(0, 0, (flat) => indices.push(flat));
    const { precision } = this.#opts;
    if (!this.#floating) {
      for (const flat of indices) this.#widen(this.#plain(this.#view.get(flat)).length);
      return;
    }
    const values = indices.map((flat) => this.#number(flat)).filter((v) => Number.isFinite(v) && v !== 0);
    if (values.length === 0) return; // PyTorch returns before applying a forced sci_mode here
    let min = Infinity, max = 0;
    for (const v of values) {
      min = Math.min(min, Math.abs(v));
      max = Math.max(max, Math.abs(v));
      if (v !== Math.ceil(v)) this.#intMode = false;
    }
    this.#sciMode = max / min > 1000 || max > 1e8 || (!this.#intMode && min < 1e-4);
    for (const v of values) {
      if (this.#sciMode) this.#widen(formatExponential(v, precision).length);
      else if (this.#intMode) this.#widen(formatFixed(v, 0).length + 1);
      else this.#widen(formatFixed(v, precision).length);
    }
    if (this.#opts.sciMode !== undefined) this.#sciMode = this.#opts.sciMode;
  }

  #widen(width: number): void {
    if (width > this.#maxWidth) this.#maxWidth = width;
  }

  #number(flat: number): number {
    return this.#round(Number(this.#view.get(flat)));
  }

  #plain(value: number | bigint | boolean): string {
    if (this.#view.dtype === bool) return value ? 'True' : 'False';
    return typeof value === 'number' && Number.isInteger(value) ? BigInt(value).toString() : String(value);
  }

  /** _Formatter.format */
  #format(flat: number): string {
    let text: string;
    if (!this.#floating) {
      text = this.#plain(this.#view.get(flat));
    } else {
      const value = this.#number(flat);
      const { precision } = this.#opts;
      if (this.#sciMode) text = formatExponential(value, precision);
      else if (this.#intMode) text = formatFixed(value, 0) + (Number.isFinite(value) ? '.' : '');
      else text = formatFixed(value, precision);
    }
    return text.padStart(this.#maxWidth);
  }

  /** Calls `visit` with each displayed element's flat index, in order. */
  #visit(dim: number, offset: number, visit: (flat: number) => void): void {
    const shape = this.#view.shape;
    if (dim === shape.length) return visit(offset);
    for (const i of this.#kept(dim)) if (i >= 0) this.#visit(dim + 1, offset + i * this.#strides[dim], visit);
  }

  /** The indices kept along `dim`; -1 marks the `...`. */
  #kept(dim: number): number[] {
    const size = this.#view.shape[dim];
    const edge = this.#opts.edgeitems;
    if (!this.#summarize || size <= 2 * edge) return range(0, size);
    // Python's self[-0:] is the whole dimension: with edgeitems=0 a 1-d summary keeps everything.
    const tail = edge > 0 ? range(size - edge, size) : dim === this.#view.shape.length - 1 ? range(0, size) : [];
    return [...range(0, edge), -1, ...tail];
  }

  tensor(indent: number): string {
    return this.#view.shape.length === 0 ? this.#format(0) : this.#nested(0, 0, indent);
  }

  #nested(dim: number, offset: number, indent: number): string {
    const shape = this.#view.shape;
    const stride = this.#strides[dim];
    const kept = this.#kept(dim);
    if (dim === shape.length - 1) {
      // _vector_str: whole elements per line, each element with its ", ".
      const perLine = Math.max(1, Math.floor((this.#opts.linewidth - indent) / (this.#maxWidth + 2)));
      const data = kept.map((i) => (i < 0 ? ' ...' : this.#format(offset + i * stride)));
      const lines: string[] = [];
      for (let i = 0; i < data.length; i += perLine) lines.push(data.slice(i, i + perLine).join(', '));
      return '[' + lines.join(',\n' + ' '.repeat(indent + 1)) + ']';
    }
    const slices = kept.map((i) => (i < 0 ? '...' : this.#nested(dim + 1, offset + i * stride, indent + 1)));
    const separator = ',' + '\n'.repeat(shape.length - dim - 1) + ' '.repeat(indent + 1);
    return '[' + slices.join(separator) + ']';
  }
}

// ---------------------------------------------------------------------------------------------
// Python's '{:.Nf}' and '{:.Ne}' for doubles: exact decimal expansion, round half to even.

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
const POW10: bigint[] = [1n];

function pow10(n: number): bigint {
  for (let i = POW10.length; i <= n; i++) POW10.push(POW10[i - 1] * 10n);
  return POW10[n];
}

/** |x| = mantissa * 2^exponent with an integer mantissa; x finite. */
function decompose(x: number): { negative: boolean; mantissa: bigint; exponent: number } {
  f64[0] = x;
  const hi = f64Words[HI], lo = f64Words[1 - HI];
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased !== 0) mantissa |= 1n << 52n;
  return { negative: hi >>> 31 === 1, mantissa, exponent: biased === 0 ? -1074 : biased - 1075 };
}

/** round(numerator / denominator) with ties to even; both positive. */
function divideRoundingHalfEven(numerator: bigint, denominator: bigint): bigint {
  let q = numerator / denominator;
  const twice = 2n * (numerator - q * denominator);
  if (twice > denominator || (twice === denominator && (q & 1n) === 1n)) q += 1n;
  return q;
}

function nonFinite(x: number): string | undefined {
  if (x !== x) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  return undefined;
}

/**
 * Python's `'{:.<digits>f}'.format(x)`: the exact value rounded half to even, `nan`, `inf`, `-inf`,
 * and a kept sign for negative values that round to zero (`-0.0000`).
 *
 * @example
 * ```ts
 * import { formatFixed } from './format.ts';
 * console.log(formatFixed(0.03125, 4), formatFixed(2.5, 0), formatFixed(-0, 0)); // 0.0312 2 -0
 * ```
 */
export function formatFixed(x: number, digits: number): string {
  const special = nonFinite(x);
  if (special !== undefined) return special;
  const { negative, mantissa, exponent } = decompose(x);
  const scaled = exponent >= 0
    ? (mantissa << BigInt(exponent)) * pow10(digits)
    : divideRoundingHalfEven(mantissa * pow10(digits), 1n << BigInt(-exponent));
  const text = scaled.toString().padStart(digits + 1, '0');
  const body = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return negative ? '-' + body : body;
}

/**
 * Python's `'{:.<digits>e}'.format(x)`: `1.2346e-05`, with at least two exponent digits.
 *
 * @example
 * ```ts
 * import { formatExponential } from './format.ts';
 * console.log(formatExponential(12345.678, 4), formatExponential(0, 2)); // 1.2346e+04 0.00e+00
 * ```
 */
export function formatExponential(x: number, digits: number): string {
  const special = nonFinite(x);
  if (special !== undefined) return special;
  const { negative, mantissa, exponent } = decompose(x);
  let decimalExponent = 0;
  let significand = 0n;
  if (mantissa !== 0n) {
    const numerator = exponent >= 0 ? mantissa << BigInt(exponent) : mantissa;
    const denominator = exponent >= 0 ? 1n : 1n << BigInt(-exponent);
    // 10^k <= numerator/denominator, decided exactly; the log10 estimate may be one off.
    const atLeast = (k: number) => k >= 0 ? numerator >= denominator * pow10(k) : numerator * pow10(-k) >= denominator;
    decimalExponent = Math.floor(Math.log10(Math.abs(x)));
    while (!atLeast(decimalExponent)) decimalExponent--;
    while (atLeast(decimalExponent + 1)) decimalExponent++;
    const shift = digits - decimalExponent;
    significand = shift >= 0
      ? divideRoundingHalfEven(numerator * pow10(shift), denominator)
      : divideRoundingHalfEven(numerator, denominator * pow10(-shift));
    if (significand === pow10(digits + 1)) {
      significand = pow10(digits);
      decimalExponent++;
    }
  }
  const text = significand.toString().padStart(digits + 1, '0');
  const body = digits === 0 ? text : `${text[0]}.${text.slice(1)}`;
  const exponentText = String(Math.abs(decimalExponent)).padStart(2, '0');
  return `${negative ? '-' : ''}${body}e${decimalExponent < 0 ? '-' : '+'}${exponentText}`;
}
