/**
 * Activation modules (`torch.nn`): `Tanh`, `Sigmoid`, `GELU`, `SiLU`, `Softmax`, `LogSoftmax`, `Identity`.
 * Each wraps one operator; none has parameters, and none depends on `train()`/`eval()`.
 *
 * @module
 */
import { pyTypeName } from '../ops/arg_names.ts';
import { checkGeluApproximate } from '../ops/meta_elementwise.ts';
import { gelu, logSoftmax, sigmoid, silu, softmax, tanh } from '../ops/generated_api.js';
import type { Tensor } from '../tensor/tensor.ts';
import { Module } from './module.ts';

/**
 * `tanh(x)` elementwise.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { Tanh } from './activations.ts';
 * new Tanh().call(tensor([0, 1], { dtype: 'float32' })); // tensor([0.0000, 0.7616])
 * ```
 */
export class Tanh extends Module {
  /** Applies tanh. */
  forward(input: Tensor): Tensor {
    return tanh(input);
  }
}

/**
 * `1 / (1 + exp(-x))` elementwise.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { Sigmoid } from './activations.ts';
 * new Sigmoid().call(tensor([0], { dtype: 'float32' })); // tensor([0.5000])
 * ```
 */
export class Sigmoid extends Module {
  /** Applies the logistic sigmoid. */
  forward(input: Tensor): Tensor {
    return sigmoid(input);
  }
}

/** Options of {@linkcode GELU}. */
export interface GELUOptions {
  /** `'none'` (default): `x·Φ(x)` exactly; `'tanh'`: the tanh approximation. */
  approximate?: 'none' | 'tanh';
}

/**
 * The Gaussian error linear unit, `x·Φ(x)` (or its tanh approximation).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { GELU } from './activations.ts';
 * new GELU({ approximate: 'tanh' }).call(tensor([1], { dtype: 'float32' })); // tensor([0.8412])
 * ```
 */
export class GELU extends Module {
  /** `'none'` or `'tanh'`. */
  readonly approximate: 'none' | 'tanh';

  /** A GELU, exact unless `approximate: 'tanh'`. */
  constructor(options: GELUOptions = {}) {
    super();
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`GELU(): expected an options object, got ${pyTypeName(options)}`);
    }
    const approximate = options.approximate ?? 'none';
    if (typeof approximate !== 'string') {
      throw new TypeError(`GELU(): argument 'approximate' must be str, not ${pyTypeName(approximate)}`);
    }
    checkGeluApproximate(approximate);
    this.approximate = approximate;
  }

  /** Applies gelu. */
  forward(input: Tensor): Tensor {
    return gelu(input, { approximate: this.approximate });
  }

  /** `approximate='none'`. */
  override extraRepr(): string {
    return `approximate='${this.approximate}'`;
  }
}

/**
 * `x·sigmoid(x)` elementwise (the swish).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SiLU } from './activations.ts';
 * new SiLU().call(tensor([1], { dtype: 'float32' })); // tensor([0.7311])
 * ```
 */
export class SiLU extends Module {
  /** Applies silu. */
  forward(input: Tensor): Tensor {
    return silu(input);
  }
}

/** PyTorch's `_get_softmax_dim`: the dim used when none is given (deprecated there, with this warning). */
function implicitDim(name: string, ndim: number): number {
  const dim = ndim === 0 || ndim === 1 || ndim === 3 ? 0 : 1;
  console.warn(
    `Implicit dimension choice for ${name} has been deprecated. Change the call to include dim=X as an argument.`,
  );
  return dim;
}

function checkDim(name: string, dim: unknown): number | null {
  if (dim === undefined || dim === null) return null;
  if (typeof dim !== 'number' || !Number.isInteger(dim)) {
    throw new TypeError(`${name}(): argument 'dim' must be int, not ${pyTypeName(dim)}`);
  }
  return dim;
}

/**
 * Softmax along `dim`: `exp(x) / sum(exp(x))`, entries in [0, 1] summing to 1.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { Softmax } from './activations.ts';
 * new Softmax(-1).call(tensor([[1, 1]], { dtype: 'float32' })); // tensor([[0.5000, 0.5000]])
 * ```
 */
export class Softmax extends Module {
  /** The dim normalised over; null picks PyTorch's legacy implicit dim (with its deprecation warning). */
  readonly dim: number | null;

  /** Softmax over `dim`. */
  constructor(dim?: number | null) {
    super();
    this.dim = checkDim('Softmax', dim);
  }

  /** Applies softmax. */
  forward(input: Tensor): Tensor {
    return softmax(input, this.dim ?? implicitDim('softmax', input.ndim));
  }

  /** `dim=1`. */
  override extraRepr(): string {
    return `dim=${this.dim ?? 'None'}`;
  }
}

/**
 * `log(softmax(x))` along `dim`, computed stably.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { LogSoftmax } from './activations.ts';
 * new LogSoftmax(1).call(tensor([[0, 0]], { dtype: 'float32' })); // tensor([[-0.6931, -0.6931]])
 * ```
 */
export class LogSoftmax extends Module {
  /** The dim normalised over; null picks PyTorch's legacy implicit dim (with its deprecation warning). */
  readonly dim: number | null;

  /** Log-softmax over `dim`. */
  constructor(dim?: number | null) {
    super();
    this.dim = checkDim('LogSoftmax', dim);
  }

  /** Applies log-softmax. */
  forward(input: Tensor): Tensor {
    return logSoftmax(input, this.dim ?? implicitDim('log_softmax', input.ndim));
  }

  /** `dim=1`. */
  override extraRepr(): string {
    return `dim=${this.dim ?? 'None'}`;
  }
}

/**
 * Returns its input (a placeholder layer; arguments to the constructor are ignored, as in PyTorch).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { Identity } from './activations.ts';
 * const x = tensor([1, 2]);
 * new Identity().call(x) === x; // true
 * ```
 */
export class Identity extends Module {
  /** An identity; `args` are accepted and ignored. */
  constructor(..._args: unknown[]) {
    super();
  }

  /** Returns `input` itself. */
  forward(input: Tensor): Tensor {
    return input;
  }
}
