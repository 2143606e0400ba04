/**
 * Reductions written as decompositions: `all`/`any`, `var`/`std` (with `correction`), `var_mean`/`std_mean`,
 * `logsumexp`, `linalg_vector_norm`/`norm`. PyTorch 1.13 computes `var` with Welford's one-pass update in its
 * own kernel; the two-pass form here (`sum((x - mean)^2) / (N - correction)`) is as accurate in float64 and
 * differentiates through its parts, and `logsumexp` is PyTorch's own composite (ReduceOps.cpp).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { type DType, getDefaultDtype } from '../tensor/dtype.ts';
import { wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries, toDtype } from './aten_call.ts';

/** Wrapped, sorted, distinct dims (every dim when `dim` is null or empty); PyTorch's errors for bad dims. */
export function reductionDims(dim: readonly number[] | number | null, ndim: number): number[] {
  const ds = dim === null ? [] : typeof dim === 'number' ? [dim] : dim;
  if (ds.length === 0) return Array.from({ length: ndim }, (_, i) => i);
  const out: number[] = [];
  for (const d of ds) {
    const w = wrapDim(d, ndim);
    if (out.includes(w)) throw new RuntimeError(`dim ${w} appears multiple times in the list of dims`);
    out.push(w);
  }
  return ndim === 0 ? [] : out.sort((a, b) => a - b);
}

function allAny(op: 'all' | 'any', self: Tensor, dim: number | null, keepdim: boolean): Tensor {
  using temps = new Temporaries();
  const dims = dim === null ? reductionDims(null, self.ndim) : reductionDims(dim, self.ndim);
  const nonzero = temps.track(self.ne(0));
  const counted = op === 'all' ? temps.track(nonzero.logicalNot()) : nonzero;
  const count = temps.track(counted.sum(dims, dim === null ? false : keepdim));
  const result = op === 'all' ? count.eq(0) : count.gt(0);
  // PyTorch keeps uint8 for uint8 inputs (a legacy of the byte masks), bool otherwise.
  if (self.dtype.name !== 'uint8') return result;
  temps.track(result);
  return toDtype(result, self.dtype);
}

/**
 * `all(x)` / `all(x, dim, keepdim)`: whether every element (along `dim`) is non-zero.
 *
 * @example
 * ```ts
 * import { all, tensor } from '../../mod.ts';
 * all(tensor([[1, 0], [2, 3]]), 1).tolist(); // [false, true]
 * ```
 */
export function all(self: Tensor, dim: number | null = null, keepdim = false): Tensor {
  return allAny('all', self, dim, keepdim);
}

/**
 * `any(x)` / `any(x, dim, keepdim)`: whether some element (along `dim`) is non-zero (NaN counts as non-zero).
 *
 * @example
 * ```ts
 * import { any, tensor } from '../../mod.ts';
 * any(tensor([[1, 0], [0, 0]]), 1).tolist(); // [true, false]
 * ```
 */
export function any(self: Tensor, dim: number | null = null, keepdim = false): Tensor {
  return allAny('any', self, dim, keepdim);
}

/** `[var, mean]` over `dims` with `correction` (the mean keeps the dims when `keepdim`). */
function varAndMean(
  op: string,
  self: Tensor,
  dim: readonly number[] | null,
  correction: number | null,
  keepdim: boolean,
): [Tensor, Tensor] {
  if (!self.dtype.isFloatingPoint) {
    const who = op === 'var' || op === 'std' ? 'std and var' : op;
    throw new RuntimeError(`${who} only support floating point and complex dtypes`);
  }
  const dims = reductionDims(dim, self.ndim);
  const c = correction ?? 1;
  using temps = new Temporaries();
  const mean = temps.track(self.mean(dims, true));
  const centred = temps.track(self.sub(mean));
  const sq = temps.track(centred.mul(centred));
  const total = temps.track(sq.sum(dims, keepdim));
  const n = dims.reduce((acc, d) => acc * self.shape[d], 1);
  // PyTorch divides by max(N - correction, 0): 0/0 gives NaN, x/0 gives inf.
  const variance = total.div(Math.max(n - c, 0));
  const outMean = keepdim ? temps.keep(mean) : mean.reshape(self.shape.filter((_, i) => !dims.includes(i)));
  return [variance, outMean];
}

/**
 * `var(x, dim, correction, keepdim)`: `sum((x - mean)^2) / max(N - correction, 0)` over `dim` (every dim when
 * null); `correction` defaults to 1 (Bessel's correction).
 *
 * @example
 * ```ts
 * import { tensor, var_ } from '../../mod.ts';
 * var_(tensor([1, 2, 3, 4])).item(); // 1.6666...
 * ```
 */
export function variance(
  self: Tensor,
  dim: readonly number[] | null,
  correction: number | null,
  keepdim: boolean,
): Tensor {
  const [v, m] = varAndMean('var', self, dim, correction, keepdim);
  m.dispose();
  return v;
}

/**
 * `std(x, dim, correction, keepdim)`: the square root of {@linkcode variance}.
 *
 * @example
 * ```ts
 * import { std, tensor } from '../../mod.ts';
 * std(tensor([1, 3])).item(); // 1.4142...
 * ```
 */
export function std(self: Tensor, dim: readonly number[] | null, correction: number | null, keepdim: boolean): Tensor {
  using temps = new Temporaries();
  const [v, m] = varAndMean('std', self, dim, correction, keepdim);
  temps.track(v);
  m.dispose();
  return v.sqrt();
}

/**
 * `var_mean(x, dim, correction, keepdim)`: the variance and the mean.
 *
 * @example
 * ```ts
 * import { tensor, varMean } from '../../mod.ts';
 * varMean(tensor([1, 3])).map((t) => t.item()); // [2, 2]
 * ```
 */
export function varMean(
  self: Tensor,
  dim: readonly number[] | null,
  correction: number | null,
  keepdim: boolean,
): [Tensor, Tensor] {
  return varAndMean('var_mean', self, dim, correction, keepdim);
}

/**
 * `std_mean(x, dim, correction, keepdim)`: the standard deviation and the mean.
 *
 * @example
 * ```ts
 * import { stdMean, tensor } from '../../mod.ts';
 * stdMean(tensor([1, 3])).map((t) => t.item()); // [1.4142..., 2]
 * ```
 */
export function stdMean(
  self: Tensor,
  dim: readonly number[] | null,
  correction: number | null,
  keepdim: boolean,
): [Tensor, Tensor] {
  const [v, m] = varAndMean('std_mean', self, dim, correction, keepdim);
  using temps = new Temporaries();
  temps.track(v);
  return [v.sqrt(), m];
}

/**
 * `logsumexp(x, dim, keepdim)`: `log(sum(exp(x)))` over `dim`, computed as `m + log(sum(exp(x - m)))` with `m`
 * the (finite) maximum; integer inputs are computed in the default float dtype.
 *
 * @example
 * ```ts
 * import { logsumexp, tensor } from '../../mod.ts';
 * logsumexp(tensor([0, 0]), 0).item(); // ln 2
 * ```
 */
export function logsumexp(self: Tensor, dim: readonly number[], keepdim: boolean): Tensor {
  using temps = new Temporaries();
  const x = self.dtype.isFloatingPoint ? self : temps.track(toDtype(self, getDefaultDtype()), self);
  const dims = reductionDims(dim, x.ndim);
  if (x.numel === 0) {
    const e = temps.track(x.exp());
    return temps.track(e.sum(dims, keepdim)).log();
  }
  const maxes = temps.track(aten('amax').call(x, dims, true) as Tensor);
  // An infinite maximum is replaced by 0 (so that inf - inf does not make NaN), as PyTorch does.
  const isInf = temps.track(temps.track(maxes.abs()).eq(Infinity));
  const m = temps.track(aten('where', 'ScalarSelf').call(isInf, 0, maxes) as Tensor).detach();
  temps.track(m);
  const shifted = temps.track(x.sub(m));
  const sum = temps.track(temps.track(shifted.exp()).sum(dims, keepdim));
  const logged = temps.track(sum.log());
  const mOut = keepdim ? m : temps.track(m.reshape(x.shape.filter((_, i) => !dims.includes(i))));
  return logged.add(mOut);
}

/**
 * `linalg_vector_norm(x, ord, dim, keepdim, dtype)`: `sum(|x|^ord)^(1/ord)` over `dim` (every dim when null);
 * `ord` inf / -inf take the largest / smallest `|x|`, `ord` 0 counts the non-zero elements.
 *
 * @example
 * ```ts
 * import { linalgVectorNorm, tensor } from '../../mod.ts';
 * linalgVectorNorm(tensor([3, 4])).item(); // 5
 * ```
 */
export function vectorNorm(
  self: Tensor,
  ord: number,
  dim: readonly number[] | null,
  keepdim: boolean,
  dtype: DType | null,
): Tensor {
  if (!self.dtype.isFloatingPoint) {
    throw new RuntimeError(
      `linalg.vector_norm: Expected a floating point or complex tensor as input. Got ${self.dtype.scalarTypeName}`,
    );
  }
  if (dtype !== null && !dtype.isFloatingPoint) {
    throw new RuntimeError(
      `linalg.vector_norm: dtype should be floating point or complex, but got ${dtype.scalarTypeName}`,
    );
  }
  using temps = new Temporaries();
  const x = dtype === null ? self : temps.track(toDtype(self, dtype), self);
  const dims = reductionDims(dim, x.ndim);
  if (x.numel === 0 && (ord < 0 || ord === Infinity)) {
    const empty = dims.filter((d) => x.shape[d] === 0);
    if (empty.length > 0 || x.ndim === 0) {
      throw new RuntimeError(
        `linalg.vector_norm cannot compute the ${ord === Infinity ? 'inf' : ord} norm on an empty tensor ` +
          'because the operation does not have an identity',
      );
    }
  }
  const a = temps.track(x.abs());
  if (ord === Infinity) return aten('amax').call(a, dims, keepdim) as Tensor;
  if (ord === -Infinity) return aten('amin').call(a, dims, keepdim) as Tensor;
  if (ord === 0) {
    const nz = temps.track(temps.track(x.ne(0)).sum(dims, keepdim));
    return toDtype(nz, x.dtype);
  }
  if (ord === 1) return a.sum(dims, keepdim);
  if (ord === 2) {
    const sq = temps.track(x.mul(x));
    return temps.track(sq.sum(dims, keepdim)).sqrt();
  }
  const powered = temps.track(a.pow(ord));
  return temps.track(powered.sum(dims, keepdim)).pow(1 / ord);
}

/**
 * `norm(x, p, dim, keepdim)`: the vector `p`-norm ({@linkcode vectorNorm}), the Frobenius norm for `p` 'fro'.
 *
 * @example
 * ```ts
 * import { norm, tensor } from '../../mod.ts';
 * norm(tensor([3, 4])).item(); // 5
 * ```
 */
export function norm(self: Tensor, p: number | null, dim: readonly number[] | null, keepdim: boolean): Tensor {
  if (!self.dtype.isFloatingPoint) {
    throw new RuntimeError(
      `norm(): input dtype should be either floating point or complex. Got ${self.dtype.scalarTypeName} instead.`,
    );
  }
  return vectorNorm(self, p ?? 2, dim, keepdim, null);
}
