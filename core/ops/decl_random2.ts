/**
 * Declarations of `randperm`, `bernoulli` and `multinomial` (PyTorch 1.13's schemas). The CPU kernels
 * (core/cpu/random2.ts) draw from the generator the way PyTorch's CPU kernels do: Note [Sampling kernels].
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import { type DType, int64 } from '../tensor/dtype.ts';
import type { Generator } from '../tensor/generator.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { checkLayout } from './decl_factories.ts';
import type { OpDecl, TensorMeta } from './op_decl.ts';

const TENSOR_OPTIONS = 'ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None';

/**
 * Meta function of `randperm`: `[n]` of `dtype` (int64 by default).
 *
 * @example
 * ```ts
 * import { randpermMeta } from './decl_random2.ts';
 * randpermMeta(3, null, null).shape; // [3]
 * ```
 */
export function randpermMeta(n: number, dtype: DType | null, layout: string | null): TensorMeta {
  if (!Number.isInteger(n) || n < 0) throw new RuntimeError(`n must be non-negative, got${n}`);
  checkLayout(layout);
  const d = dtype ?? int64;
  // The largest n whose values 0..n-1 the dtype holds exactly.
  const limits: Record<string, number> = {
    uint8: 256,
    int8: 128,
    int16: 32768,
    int32: 2 ** 31,
    float16: 2049,
    bfloat16: 257,
    float32: 2 ** 24 + 1,
  };
  if (d.name === 'bool') throw new RuntimeError(`"randperm" not implemented for 'Bool'`);
  if (limits[d.name] !== undefined && n > limits[d.name]) {
    throw new RuntimeError(`n is too large for result tensor type: '${d.scalarTypeName}'`);
  }
  return { shape: [n], dtype: d };
}

/**
 * Meta function of `bernoulli` (`self` holds the probabilities) and `bernoulli.p`: like `self`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { bernoulliMeta } from './decl_random2.ts';
 * bernoulliMeta(tensor([0.5])).dtype.name; // 'float32'
 * ```
 */
export function bernoulliMeta(self: Tensor, p?: number): TensorMeta {
  self.assertAlive('bernoulli');
  if (p !== undefined && !(p >= 0 && p <= 1)) {
    throw new RuntimeError(`bernoulli_ expects p to be in [0, 1], but got p=${p}`);
  }
  if (p === undefined && !self.dtype.isFloatingPoint) {
    throw new RuntimeError(`"bernoulli_tensor_cpu_p_" not implemented for '${self.dtype.scalarTypeName}'`);
  }
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * Meta function of `multinomial`: PyTorch's argument checks, int64 `[rows, num_samples]` or `[num_samples]`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { multinomialMeta } from './decl_random2.ts';
 * multinomialMeta(tensor([0.5, 0.5]), 3, true).shape; // [3]
 * ```
 */
export function multinomialMeta(self: Tensor, numSamples: number, replacement: boolean): TensorMeta {
  self.assertAlive('multinomial');
  if (!self.dtype.isFloatingPoint) {
    throw new RuntimeError(
      `multinomial only supports floating-point dtypes for input, got: ${self.dtype.scalarTypeName}`,
    );
  }
  if (numSamples <= 0) throw new RuntimeError('cannot sample n_sample <= 0 samples');
  if (self.ndim !== 1 && self.ndim !== 2) throw new RuntimeError('prob_dist must be 1 or 2 dim');
  const categories = self.shape[self.ndim - 1];
  if (!replacement && numSamples > categories) {
    throw new RuntimeError('cannot sample n_sample > prob_dist.size(-1) samples without replacement');
  }
  return { shape: self.ndim === 1 ? [numSamples] : [self.shape[0], numSamples], dtype: int64 };
}

type FactoryRest = [DType | null, string | null, Device | null, boolean | null];

/**
 * Names of the sampling operators with backend kernels.
 *
 * @example
 * ```ts
 * import type { Random2BackendOpName } from './decl_random2.ts';
 * const name: Random2BackendOpName = 'randperm';
 * ```
 */
export type Random2BackendOpName =
  | 'randperm.generator'
  | 'randperm'
  | 'bernoulli'
  | 'bernoulli.p'
  | 'multinomial';

/**
 * Declarations of the sampling operators.
 *
 * @example
 * ```ts
 * import { RANDOM2_OPS } from './decl_random2.ts';
 * RANDOM2_OPS['randperm'].kind; // 'factory'
 * ```
 */
export const RANDOM2_OPS: { readonly [K in Random2BackendOpName]: OpDecl } = {
  'randperm.generator': {
    schema: `randperm.generator(SymInt n, *, Generator? generator, ${TENSOR_OPTIONS}) -> Tensor`,
    kind: 'factory',
    meta: (n: number, _g: Generator | null, ...rest: FactoryRest) => randpermMeta(n, rest[0], rest[1]),
    doc: 'A random permutation of 0..n-1, the one PyTorch draws for the same seed.',
  },
  'randperm': {
    schema: `randperm(SymInt n, *, ${TENSOR_OPTIONS}) -> Tensor`,
    kind: 'factory',
    meta: (n: number, ...rest: FactoryRest) => randpermMeta(n, rest[0], rest[1]),
    doc: 'A random permutation of 0..n-1, the one PyTorch draws for the same seed.',
  },
  'bernoulli': {
    schema: 'bernoulli(Tensor self, *, Generator? generator=None) -> Tensor',
    kind: 'backend',
    meta: (self: Tensor) => bernoulliMeta(self),
    method: true,
    doc: "Samples 1 with probability `self` (or `p`), else 0, in `self`'s dtype.",
  },
  'bernoulli.p': {
    schema: 'bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor',
    kind: 'backend',
    meta: (self: Tensor, p: number) => bernoulliMeta(self, p),
    method: true,
    doc: 'Samples 1 with probability `p`, else 0, shaped and typed like `self`.',
  },
  'multinomial': {
    schema: 'multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor',
    kind: 'backend',
    meta: (self: Tensor, n: number, replacement: boolean) => multinomialMeta(self, n, replacement),
    method: true,
    doc: 'Category indices sampled from the rows of `self` (unnormalised probabilities), with or without replacement.',
  },
};
