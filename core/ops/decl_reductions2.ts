/**
 * Declarations of the reductions beyond `decl_reductions.ts`: `all`/`any`, `var`/`std` and their `_mean`
 * variants, `logsumexp`, `linalg_vector_norm`/`norm` (decompositions in `reduction_composites.ts`). PyTorch
 * 1.13's schemas.
 *
 * @module
 */
import type { OpDecl, OpImpl } from './op_decl.ts';
import { all, any, logsumexp, norm, std, stdMean, variance, varMean, vectorNorm } from './reduction_composites.ts';

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { method: true, ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/**
 * Names of the composite reductions.
 *
 * @example
 * ```ts
 * import type { Reduction2CompositeOpName } from './decl_reductions2.ts';
 * const name: Reduction2CompositeOpName = 'logsumexp';
 * ```
 */
export type Reduction2CompositeOpName =
  | 'all'
  | 'all.dim'
  | 'any'
  | 'any.dim'
  | 'var.correction'
  | 'var.dim'
  | 'var'
  | 'std.correction'
  | 'std.dim'
  | 'std'
  | 'var_mean.correction'
  | 'std_mean.correction'
  | 'logsumexp'
  | 'linalg_vector_norm'
  | 'norm.Scalar'
  | 'norm.ScalarOpt_dim';

/**
 * Declarations of the composite reductions.
 *
 * @example
 * ```ts
 * import { REDUCTION2_OPS } from './decl_reductions2.ts';
 * REDUCTION2_OPS['var.correction'].function; // 'variance' (`var` is a reserved word)
 * ```
 */
export const REDUCTION2_OPS: { readonly [K in Reduction2CompositeOpName]: OpDecl } = {
  'all': composite('all(Tensor self) -> Tensor', (self) => all(self), 'Whether every element is non-zero.'),
  'all.dim': composite(
    'all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor',
    all,
    'Whether every element along `dim` is non-zero (uint8 result for uint8 input, else bool).',
  ),
  'any': composite('any(Tensor self) -> Tensor', (self) => any(self), 'Whether some element is non-zero.'),
  'any.dim': composite(
    'any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor',
    any,
    'Whether some element along `dim` is non-zero (uint8 result for uint8 input, else bool).',
  ),
  'var.correction': composite(
    'var.correction(Tensor self, int[1]? dim=None, *, int? correction=None, bool keepdim=False) -> Tensor',
    variance,
    'Variance over `dim` (every dim when null): `sum((x - mean)^2) / (N - correction)`, correction 1 by default.',
    { function: 'variance', method: 'var' },
  ),
  'var.dim': composite(
    'var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor',
    (self, dim, unbiased, keepdim) => variance(self, dim, unbiased ? 1 : 0, keepdim),
    "Variance over `dim` with Bessel's correction when `unbiased` (the older spelling of `correction`).",
    { function: 'variance', method: 'var' },
  ),
  'var': composite(
    'var(Tensor self, bool unbiased=True) -> Tensor',
    (self, unbiased) => variance(self, null, unbiased ? 1 : 0, false),
    "Variance of every element, with Bessel's correction when `unbiased`.",
    { function: 'variance', method: 'var' },
  ),
  'std.dim': composite(
    'std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor',
    (self, dim, unbiased, keepdim) => std(self, dim, unbiased ? 1 : 0, keepdim),
    "Standard deviation over `dim` with Bessel's correction when `unbiased`.",
  ),
  'std': composite(
    'std(Tensor self, bool unbiased=True) -> Tensor',
    (self, unbiased) => std(self, null, unbiased ? 1 : 0, false),
    "Standard deviation of every element, with Bessel's correction when `unbiased`.",
  ),
  'std.correction': composite(
    'std.correction(Tensor self, int[1]? dim=None, *, int? correction=None, bool keepdim=False) -> Tensor',
    std,
    'Standard deviation over `dim` (every dim when null), the square root of `var`.',
  ),
  'var_mean.correction': composite(
    'var_mean.correction(Tensor self, int[1]? dim=None, *, int? correction=None, bool keepdim=False) -> ' +
      '(Tensor, Tensor)',
    varMean,
    'Variance and mean over `dim`.',
    { method: false },
  ),
  'std_mean.correction': composite(
    'std_mean.correction(Tensor self, int[1]? dim=None, *, int? correction=None, bool keepdim=False) -> ' +
      '(Tensor, Tensor)',
    stdMean,
    'Standard deviation and mean over `dim`.',
    { method: false },
  ),
  'logsumexp': composite(
    'logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor',
    logsumexp,
    '`log(sum(exp(x)))` over `dim`, computed stably.',
  ),
  'linalg_vector_norm': composite(
    'linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> ' +
      'Tensor',
    vectorNorm,
    'Vector `ord`-norm over `dim` (every dim when null): `sum(|x|^ord)^(1/ord)`, max / min `|x|` for inf / -inf.',
    { method: false },
  ),
  'norm.Scalar': composite(
    'norm.Scalar(Tensor self, Scalar p=2) -> Tensor',
    (self, p) => norm(self, p, null, false),
    'The `p`-norm of all elements (2 by default); with `dim`, over those dims.',
  ),
  'norm.ScalarOpt_dim': composite(
    'norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor',
    norm,
    'The `p`-norm over `dim`.',
  ),
};
