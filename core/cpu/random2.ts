/**
 * CPU kernels of `randperm`, `bernoulli` and `multinomial`, drawing from the CPU generator.
 *
 * Note [Sampling kernels]
 * - `randperm(n)`: PyTorch's `randperm_cpu`: `r[i] = i`, then for `i < n - 1` swap `r[i]` with
 *   `r[i + random() % (n - i)]`: the same permutation as PyTorch for the same seed.
 * - `bernoulli(p)` with a tensor of probabilities: PyTorch's serial kernel, one uniform per element in
 *   row-major order (float probabilities: a 24-bit float uniform; double: a 53-bit double uniform), `u < p`:
 *   PyTorch's values for the same seed.
 * - `bernoulli(x, p)` with a scalar `p`: PyTorch's default (non-MKL) kernel, a 53-bit uniform per element and
 *   `u < p`. PyTorch builds with MKL (the x86 wheels) use MKL's Bernoulli stream here, which no other
 *   implementation reproduces: same distribution, other values.
 * - `multinomial` with replacement: PyTorch's kernel: per row, the cumulative distribution in the input's
 *   precision (float for float16/bfloat16/float32) normalised by its sum, the last bucket set to 1, and a binary
 *   search for each 53-bit uniform. Without replacement (or one sample): PyTorch's exponential trick,
 *   `topk(p / q)` with `q ~ Exp(1)` drawn as `-log(1 - u)` from 53-bit uniforms (PyTorch's default kernel;
 *   MKL builds draw `q` from MKL: same distribution, other values).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { type DType, float64, int64 } from '../tensor/dtype.ts';
import { defaultCpuGenerator, type Generator } from '../tensor/generator.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { bernoulliMeta, multinomialMeta, type Random2BackendOpName, randpermMeta } from '../ops/decl_random2.ts';
import { hostElements } from './boundary.ts';
import { storeValues } from './factories.ts';
import { castCpu, emptyCpu } from './iterator.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

const TWO_POW_M24 = 2 ** -24;
const TWO_POW_M53 = 2 ** -53;

function randperm(n: number, g: Generator | null, dtype: DType | null, layout: string | null): Tensor {
  const meta = randpermMeta(n, dtype, layout);
  const gen = g ?? defaultCpuGenerator();
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) r[i] = i;
  for (let i = 0; i < n - 1; i++) {
    const z = gen.random() % (n - i);
    const sav = r[i];
    r[i] = r[z + i];
    r[z + i] = sav;
  }
  const out = emptyCpu(meta.shape, meta.dtype);
  storeValues(out, r);
  return out;
}

/** `self`'s values as float64 in row-major order (a converted contiguous copy, read through the boundary). */
function readValues(self: Tensor, op: string): Float64Array {
  const copy = castCpu(self, float64);
  try {
    return Float64Array.from(self.numel === 0 ? [] : (hostElements(copy, op, self.numel) as Float64Array));
  } finally {
    copy.dispose();
  }
}

function bernoulliTensor(self: Tensor, g: Generator | null): Tensor {
  const meta = bernoulliMeta(self);
  const gen = g ?? defaultCpuGenerator();
  const p = readValues(self, 'bernoulli');
  for (let i = 0; i < p.length; i++) {
    if (!(p[i] >= 0 && p[i] <= 1)) throw new RuntimeError('Expected p_in >= 0 && p_in <= 1 to be true, but got false.');
  }
  const out = new Float64Array(p.length);
  const double = self.dtype === float64;
  for (let i = 0; i < p.length; i++) {
    const u = double ? gen.random53() * TWO_POW_M53 : (gen.random() & 0xffffff) * TWO_POW_M24;
    out[i] = u < p[i] ? 1 : 0;
  }
  const result = emptyCpu(meta.shape, meta.dtype);
  storeValues(result, out);
  return result;
}

function bernoulliScalar(self: Tensor, p: number, g: Generator | null): Tensor {
  const meta = bernoulliMeta(self, p);
  const gen = g ?? defaultCpuGenerator();
  const out = new Float64Array(self.numel);
  for (let i = 0; i < out.length; i++) out[i] = gen.random53() * TWO_POW_M53 < p ? 1 : 0;
  const result = emptyCpu(meta.shape, meta.dtype);
  storeValues(result, out);
  return result;
}

function multinomial(self: Tensor, numSamples: number, replacement: boolean, g: Generator | null): Tensor {
  const meta = multinomialMeta(self, numSamples, replacement);
  const gen = g ?? defaultCpuGenerator();
  const p = readValues(self, 'multinomial');
  const k = self.shape[self.ndim - 1], rows = self.ndim === 1 ? 1 : self.shape[0];
  const out = new Float64Array(rows * numSamples);
  if (!replacement || numSamples === 1) {
    for (let i = 0; i < p.length; i++) {
      if (!(p[i] >= 0 && p[i] < Infinity)) {
        throw new RuntimeError('probability tensor contains either `inf`, `nan` or element < 0');
      }
    }
    for (let r = 0; r < rows; r++) {
      let sum = 0;
      for (let j = 0; j < k; j++) sum += p[r * k + j];
      if (sum === 0) throw new RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)');
    }
    // q ~ Exp(1) for every element first (row-major), then p / q per row, the largest first.
    const q = new Float64Array(p.length);
    for (let i = 0; i < q.length; i++) q[i] = -Math.log1p(-(gen.random53() * TWO_POW_M53));
    const round = self.dtype === float64 ? (x: number) => x : Math.fround;
    for (let r = 0; r < rows; r++) {
      const keys = Array.from({ length: k }, (_, j) => round(p[r * k + j] / q[r * k + j]));
      const order = keys.map((_, j) => j).sort((a, b) => keys[b] - keys[a] || a - b);
      for (let s = 0; s < numSamples; s++) out[r * numSamples + s] = order[s];
    }
  } else {
    const round = self.dtype === float64 ? (x: number) => x : Math.fround;
    const cum = new Float64Array(k);
    for (let r = 0; r < rows; r++) {
      let sum = 0;
      for (let j = 0; j < k; j++) {
        const v = p[r * k + j];
        if (!(v >= 0) || v === Infinity) {
          throw new RuntimeError('invalid multinomial distribution (encountering probability entry < 0)');
        }
        sum = round(sum + v);
        cum[j] = sum;
      }
      if (!(sum > 0)) throw new RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)');
      for (let j = 0; j < k; j++) cum[j] = round(cum[j] / sum);
      cum[k - 1] = 1;
      for (let s = 0; s < numSamples; s++) {
        const u = gen.random53() * TWO_POW_M53;
        let left = 0, right = k;
        while (right - left > 0) {
          const mid = left + ((right - left) >> 1);
          if (cum[mid] < u) left = mid + 1;
          else right = mid;
        }
        out[r * numSamples + s] = left;
      }
    }
  }
  const result = emptyCpu(meta.shape, int64);
  storeValues(result, out);
  return result;
}

type Rest = [DType | null, string | null, unknown, unknown];

/**
 * The CPU kernels of the sampling operators (Note [Sampling kernels]).
 *
 * @example
 * ```ts
 * import { CPU_RANDOM2_KERNELS } from './random2.ts';
 * typeof CPU_RANDOM2_KERNELS.randperm; // 'function'
 * ```
 */
export const CPU_RANDOM2_KERNELS: { readonly [K in Random2BackendOpName]: Kernel } = {
  'randperm.generator':
    ((_hi: number, _lo: number, n: number, g: Generator | null, ...[dtype, layout]: Rest) =>
      randperm(n, g, dtype, layout)) as Kernel,
  'randperm':
    ((_hi: number, _lo: number, n: number, ...[dtype, layout]: Rest) => randperm(n, null, dtype, layout)) as Kernel,
  'bernoulli': ((_hi: number, _lo: number, self: Tensor, g: Generator | null) => bernoulliTensor(self, g)) as Kernel,
  'bernoulli.p':
    ((_hi: number, _lo: number, self: Tensor, p: number, g: Generator | null) => bernoulliScalar(self, p, g)) as Kernel,
  'multinomial':
    ((_hi: number, _lo: number, self: Tensor, n: number, replacement: boolean, g: Generator | null) =>
      multinomial(self, n, replacement, g)) as Kernel,
};
