/**
 * FlopCounterMode: counts the floating-point operations of every call, per operator (PyTorch's
 * `torch.utils.flop_counter.FlopCounterMode`).
 *
 * The formulas are PyTorch's: a matrix product of `[m, k] x [k, n]` is `2mkn` FLOPs (one multiply and one add
 * per term), `addmm` counts its product only, `bmm`/`baddbmm` multiply that by the batch. Switchyard also
 * counts the products PyTorch decomposes before its mode sees them but that can reach a mode here (`linear`,
 * `matmul`, `mv`, `dot`: a call with inference tensors reaches the mode before its composite kernel runs).
 * Like PyTorch, elementwise operators count nothing by default; `countElementwise: true` counts one FLOP per
 * output element for them. Backward operators are counted too, so a training step of a linear layer counts
 * three products.
 *
 * @module
 */
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Tensor } from '../tensor/tensor.ts';
import { callOp, type DispatchKwargs, DispatchMode, type TorchDispatchClass } from './dispatch_mode.ts';

/** A FLOP formula: the call's positional and keyword arguments and its result give the FLOPs. */
export type FlopFormula = (args: readonly unknown[], kwargs: DispatchKwargs, result: unknown) => number;

function shapeOf(v: unknown, what: string): readonly number[] {
  if (!Tensor.isTensor(v)) throw new TypeError(`FlopCounterMode: ${what} is not a tensor`);
  return v.shape;
}

function prod(xs: readonly number[]): number {
  let p = 1;
  for (const x of xs) p *= x;
  return p;
}

/**
 * FLOPs of `a @ b` for 2-d shapes (PyTorch's `mm_flop`).
 *
 * @example
 * ```ts
 * import { mmFlop } from './flop_counter.ts';
 * mmFlop([8, 16], [16, 4]); // 1024
 * ```
 */
export function mmFlop(a: readonly number[], b: readonly number[]): number {
  return 2 * a[0] * a[1] * b[1];
}

/**
 * FLOPs of a batched product `[b, m, k] x [b, k, n]` (PyTorch's `bmm_flop`).
 *
 * @example
 * ```ts
 * import { bmmFlop } from './flop_counter.ts';
 * bmmFlop([3, 8, 16], [3, 16, 4]); // 3072
 * ```
 */
export function bmmFlop(a: readonly number[], b: readonly number[]): number {
  return 2 * a[0] * a[1] * a[2] * b[2];
}

/** FLOPs of `matmul` with any ranks: the product's output elements times `2k`. */
function matmulFlop(args: readonly unknown[], _kw: DispatchKwargs, result: unknown): number {
  const a = shapeOf(args[0], 'matmul self');
  return 2 * a[a.length - 1] * prod(shapeOf(result, 'matmul result'));
}

const ELEMENTWISE = new Set([
  'abs',
  'add',
  'add_',
  'atan2',
  'ceil',
  'clamp',
  'clamp_',
  'clamp_max',
  'clamp_min',
  'cos',
  'div',
  'div_',
  'elu',
  'erf',
  'exp',
  'exp_',
  'expm1',
  'floor',
  'fmod',
  'gelu',
  'hardtanh',
  'leaky_relu',
  'log',
  'log1p',
  'log_sigmoid',
  'maximum',
  'minimum',
  'mish',
  'mul',
  'mul_',
  'neg',
  'neg_',
  'pow',
  'reciprocal',
  'relu',
  'relu_',
  'remainder',
  'round',
  'rsqrt',
  'rsub',
  'sigmoid',
  'sigmoid_',
  'sign',
  'silu',
  'sin',
  'softplus',
  'sqrt',
  'sqrt_',
  'sub',
  'sub_',
  'tanh',
  'tanh_',
  'trunc',
  'where',
]);

/**
 * The FLOP formulas by operator name without overload (`aten::mm`), PyTorch's `flop_registry` plus the
 * products listed in the module note.
 *
 * @example
 * ```ts
 * import { FLOP_FORMULAS, randn } from '../../mod.ts';
 * FLOP_FORMULAS['aten::mm']([randn(2, 3), randn(3, 4)], {}, undefined); // 48
 * ```
 */
export const FLOP_FORMULAS: Readonly<Record<string, FlopFormula>> = {
  'aten::mm': (args) => mmFlop(shapeOf(args[0], 'mm self'), shapeOf(args[1], 'mm mat2')),
  'aten::addmm': (args) => mmFlop(shapeOf(args[1], 'addmm mat1'), shapeOf(args[2], 'addmm mat2')),
  'aten::bmm': (args) => bmmFlop(shapeOf(args[0], 'bmm self'), shapeOf(args[1], 'bmm mat2')),
  'aten::baddbmm': (args) => bmmFlop(shapeOf(args[1], 'baddbmm batch1'), shapeOf(args[2], 'baddbmm batch2')),
  'aten::mv': (args) => 2 * prod(shapeOf(args[0], 'mv self')),
  'aten::dot': (args) => 2 * prod(shapeOf(args[0], 'dot self')),
  'aten::matmul': matmulFlop,
  'aten::linear': (args, _kw, result) => {
    const w = shapeOf(args[1], 'linear weight');
    return 2 * w[w.length - 1] * prod(shapeOf(result, 'linear result'));
  },
};

/** Options of {@linkcode FlopCounterMode}. */
export interface FlopCounterOptions {
  /** Extra or replacing formulas by operator name without overload (PyTorch's `custom_mapping`). */
  readonly customMapping?: Readonly<Record<string, FlopFormula>>;
  /** Count one FLOP per output element of elementwise operators (default false, as PyTorch). */
  readonly countElementwise?: boolean;
  /** Print {@linkcode FlopCounterMode.getTable} when the mode is exited (PyTorch's `display`; default false). */
  readonly display?: boolean;
}

function baseName(op: OperatorHandle): string {
  const overload = op.overloadName;
  return overload === '' ? op.name : op.name.slice(0, op.name.length - overload.length - 1);
}

/**
 * Formats a count with PyTorch's `get_suffix_str` suffixes (`1.049M`).
 *
 * @example
 * ```ts
 * import { formatFlops } from './flop_counter.ts';
 * formatFlops(1048576); // '1.049M'
 * ```
 */
export function formatFlops(n: number): string {
  const suffixes = ['', 'K', 'M', 'B', 'T'];
  let i = 0;
  while (i < suffixes.length - 1 && n >= 1000 ** (i + 1)) i++;
  return i === 0 ? String(n) : `${(n / 1000 ** i).toFixed(3)}${suffixes[i]}`;
}

/**
 * Counts FLOPs per operator while active.
 *
 * @example
 * ```ts
 * import { FlopCounterMode, randn } from '../../mod.ts';
 * const a = randn(8, 16), b = randn(16, 4);
 * const counter = new FlopCounterMode();
 * counter.run(() => a.mm(b));
 * counter.getTotalFlops(); // 1024
 * console.log(counter.getTable());
 * ```
 */
export class FlopCounterMode extends DispatchMode {
  readonly #formulas: Record<string, FlopFormula>;
  readonly #elementwise: boolean;
  readonly #display: boolean;
  readonly #counts = new Map<string, number>();

  /** A counter with PyTorch's formulas plus `customMapping`. */
  constructor(options: FlopCounterOptions = {}) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`FlopCounterMode(): argument 'options' must be an object, not ${typeof options}`);
    }
    for (const [name, f] of Object.entries(options.customMapping ?? {})) {
      if (typeof f !== 'function') {
        throw new TypeError(`FlopCounterMode(): custom formula for ${name} is not a function`);
      }
    }
    this.#formulas = { ...FLOP_FORMULAS, ...options.customMapping };
    this.#elementwise = options.countElementwise ?? false;
    this.#display = options.display ?? false;
  }

  /** Counts the FLOPs of `op` (PyTorch's formulas), then runs it. */
  override dispatch(
    op: OperatorHandle,
    _types: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown {
    const result = callOp(op, args, kwargs);
    const name = baseName(op);
    const formula = this.#formulas[name];
    let flops = 0;
    if (formula !== undefined) flops = formula(args, kwargs, result);
    else if (this.#elementwise && ELEMENTWISE.has(name.slice(name.indexOf('::') + 2)) && Tensor.isTensor(result)) {
      flops = result.numel;
    }
    if (formula !== undefined || flops > 0) this.#counts.set(name, (this.#counts.get(name) ?? 0) + flops);
    return result;
  }

  /** Leaves the mode and, when asked to, prints the per-operator table. */
  override exit(): void {
    super.exit();
    if (this.#display) console.log(this.getTable());
  }

  /** The FLOPs counted so far. */
  getTotalFlops(): number {
    let total = 0;
    for (const n of this.#counts.values()) total += n;
    return total;
  }

  /** FLOPs per operator under the `Global` module, as PyTorch's `get_flop_counts()` without module hooks. */
  getFlopCounts(): Record<string, Record<string, number>> {
    return { Global: Object.fromEntries(this.#counts) };
  }

  /** PyTorch's `get_table()`: a Module / FLOP / % Total table. */
  getTable(): string {
    const total = this.getTotalFlops();
    const pct = (n: number) => `${total === 0 ? '0.00' : ((100 * n) / total).toFixed(2)}%`;
    const rows: string[][] = [['Global', formatFlops(total), pct(total)]];
    const ops = [...this.#counts].sort((a, b) => b[1] - a[1]);
    for (const [name, n] of ops) rows.push([` - ${name}`, formatFlops(n), pct(n)]);
    const header = ['Module', 'FLOP', '% Total'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
  }

  /** Clears the counts. */
  reset(): void {
    this.#counts.clear();
  }
}
