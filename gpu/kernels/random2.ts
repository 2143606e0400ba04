/**
 * WebGPU kernels of `randperm` (drawn by the CPU kernel from the CPU generator and uploaded, as Note [GPU random
 * numbers] explains for the other factories), `bernoulli` and `multinomial` (drawn on the GPU with Philox keyed
 * from the CPU generator: Note [GPU Philox] in philox.ts).
 *
 * Probabilities are checked on the device (Note [Device-side errors] in gpu/commands.ts): a `bernoulli`
 * probability outside [0, 1], a negative, infinite or NaN `multinomial` weight or a row summing to zero is
 * reported by the next readback, in PyTorch's words, as its CUDA kernels assert.
 *
 * `multinomial` with replacement: per row, the cumulative distribution (float32) normalised by its sum, the last
 * bucket set to 1, and a binary search for each sample's uniform (PyTorch's method). Without replacement (or one
 * sample): PyTorch's exponential trick, the `num_samples` largest keys `p / q` with `q = -log(1 - u) ~ Exp(1)`,
 * taken from the stable descending GPU sort (a weight of zero has key 0, so it is drawn only after every
 * positive weight, as on the CPU).
 *
 * @module
 */
import { RuntimeError } from '../../core/dispatch/errors.ts';
import { Device } from '../../core/tensor/device.ts';
import { float32 } from '../../core/tensor/dtype.ts';
import type { Generator } from '../../core/tensor/generator.ts';
import { contiguousStrides } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import { bernoulliMeta, multinomialMeta, type Random2BackendOpName } from '../../core/ops/decl_random2.ts';
import { aten } from '../../core/ops/aten_call.ts';
import { KernelBindings } from '../boundary.ts';
import { DeviceError, kernelId } from '../commands.ts';
import { emptyGpu } from '../tensors.ts';
import { kindOf, loadWgsl, storeWgsl } from '../wgsl/dtypes.ts';
import { upload } from './copy.ts';
import { runItems } from './custom.ts';
import { philoxKey, philoxWgsl } from './philox.ts';
import { lineWalk, lineWalkWords, sortGpu, writeLineWalk } from './sort_engine.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

function viaCpu(overload: string, deviceIndex: number): Kernel {
  return ((_hi: number, _lo: number, ...args: unknown[]) => {
    const cpuArgs = [...args];
    cpuArgs[deviceIndex] = Device.cpu;
    const host = aten('randperm', overload).call(...cpuArgs) as Tensor;
    try {
      return upload(host);
    } finally {
      host.dispose();
    }
  }) as Kernel;
}

/** WGSL: `u`, the uniform in [0, 1) of invocation `t` under the key in parameter words `at`, `at + 1`. */
function uniformWgsl(at: number, stream = '0u'): string[] {
  return [...philoxWgsl('t', stream, `pw(${at}u)`, `pw(${at + 1}u)`), 'let u = f32(philox.x >> 8u) * 5.9604645e-8;'];
}

/** `bernoulli(self)` (probabilities `self`) or `bernoulli(self, p)`: 1 where the uniform is below p. */
function bernoulli(self: Tensor, p: number | undefined, g: Generator | null): Tensor {
  const meta = bernoulliMeta(self, p);
  const name = 'bernoulli_webgpu';
  const kind = kindOf(meta.dtype, name);
  if (p === undefined) kindOf(self.dtype, name);
  const out = emptyGpu(meta.shape, meta.dtype);
  try {
    const n = out.numel;
    if (n === 0) return out;
    const [k0, k1] = philoxKey(g);
    const b = new KernelBindings(name);
    const o = b.contiguous(out, n, true);
    const x = p === undefined ? b.strided(self, self.shape, self.stride(), false) : undefined;
    const rank = self.ndim, base = 4, id = kernelId('bernoulli');
    const one = kind === 'f32' ? '1.0' : kind === 'i32' ? '1i' : 'vec2<u32>(1u, 0u)';
    const zero = kind === 'f32' ? '0.0' : kind === 'i32' ? '0i' : 'vec2<u32>(0u, 0u)';
    runItems({
      key: `bernoulli|${self.dtype.name}|${meta.dtype.name}|${p === undefined}|${rank}|${o.slot}${x?.slot ?? '-'}`,
      bindings: b,
      words: base + lineWalkWords(rank, 2),
      items: n,
      body: () => [
        'let row = t;',
        ...lineWalk(rank, 2, base),
        ...uniformWgsl(1),
        ...(x === undefined ? ['let p = pf(3u);'] : [
          `let p = ${loadWgsl(self.dtype, `b${x.slot}`, 'u32(o0)')};`,
          `if (!(p >= 0.0 && p <= 1.0)) { report(${DeviceError.probabilityOutOfRange}u, ${id}u, 0u, 0u); }`,
        ]),
        storeWgsl(meta.dtype, `b${o.slot}`, 'u32(o1)', `select(${zero}, ${one}, u < p)`),
      ],
      params: (q, slot) => {
        q.words[slot + 1] = k0;
        q.words[slot + 2] = k1;
        q.floats[slot + 3] = p ?? 0;
        writeLineWalk(q, slot, base, [x?.offset ?? 0, o.offset], self.shape, [
          self.stride(),
          contiguousStrides(self.shape),
        ]);
      },
    });
    return out;
  } catch (e) {
    out.dispose();
    throw e;
  }
}

/** Per row: checks the weights and writes the normalised cumulative distribution into `cdf` (`[rows * k]`). */
function cumulative(self: Tensor, cdf: Tensor, rows: number, k: number): void {
  const b = new KernelBindings('multinomial_webgpu');
  const x = b.strided(self, self.shape, self.stride(), false);
  const c = b.contiguous(cdf, rows * k, true);
  const rowStride = self.ndim === 2 ? self.stride()[0] : 0, colStride = self.stride()[self.ndim - 1];
  const id = kernelId('multinomial');
  runItems({
    key: `mncdf|${self.dtype.name}|${x.slot}${c.slot}`,
    bindings: b,
    words: 5,
    items: rows,
    body: () => [
      'let k = pw(1u); let first = pi(2u) + i32(t) * pi(3u);',
      'var sum = 0.0;',
      'for (var j = 0u; j < k; j = j + 1u) {',
      `  let v = ${loadWgsl(self.dtype, `b${x.slot}`, 'u32(first + i32(j) * pi(4u))')};`,
      `  if (!(v >= 0.0) || (bitcast<u32>(v) & 0x7fffffffu) == 0x7f800000u) { report(${DeviceError.invalidProbability}u, ${id}u, 0u, 0u); }`,
      '  sum = sum + v;',
      `  b${c.slot}[t * k + j] = bitcast<u32>(sum);`,
      '}',
      `if (!(sum > 0.0)) { report(${DeviceError.zeroProbabilitySum}u, ${id}u, 0u, 0u); }`,
      'for (var j = 0u; j + 1u < k; j = j + 1u) {',
      `  b${c.slot}[t * k + j] = bitcast<u32>(bitcast<f32>(b${c.slot}[t * k + j]) / sum);`,
      '}',
      `b${c.slot}[t * k + k - 1u] = bitcast<u32>(1.0);`,
    ],
    params: (q, slot) => {
      q.words[slot + 1] = k;
      q.ints[slot + 2] = x.offset;
      q.ints[slot + 3] = rowStride;
      q.ints[slot + 4] = colStride;
    },
  });
}

function multinomial(self: Tensor, numSamples: number, replacement: boolean, g: Generator | null): Tensor {
  const meta = multinomialMeta(self, numSamples, replacement);
  const name = 'multinomial_webgpu';
  kindOf(self.dtype, name);
  const k = self.shape[self.ndim - 1], rows = self.ndim === 1 ? 1 : self.shape[0];
  const out = emptyGpu(meta.shape, meta.dtype);
  try {
    if (rows === 0) return out;
    if (k === 0) throw new RuntimeError('invalid multinomial distribution (sum of probabilities <= 0)');
    const [k0, k1] = philoxKey(g);
    const cdf = emptyGpu([rows * k], float32);
    try {
      cumulative(self, cdf, rows, k);
      if (replacement && numSamples > 1) {
        const b = new KernelBindings(name);
        const c = b.contiguous(cdf, rows * k, false);
        const o = b.contiguous(out, rows * numSamples, true);
        runItems({
          key: `mnrep|${c.slot}${o.slot}`,
          bindings: b,
          words: 5,
          items: rows * numSamples,
          body: () => [
            'let k = pw(1u); let row = t / pw(4u);',
            ...uniformWgsl(2),
            'var left = 0u; var right = k;',
            'while (right > left) {',
            '  let mid = left + ((right - left) >> 1u);',
            `  if (bitcast<f32>(b${c.slot}[row * k + mid]) < u) { left = mid + 1u; } else { right = mid; }`,
            '}',
            `b${o.slot}[2u * t] = left; b${o.slot}[2u * t + 1u] = 0u;`,
          ],
          params: (q, slot) => {
            q.words[slot + 1] = k;
            q.words[slot + 2] = k0;
            q.words[slot + 3] = k1;
            q.words[slot + 4] = numSamples;
          },
        });
        return out;
      }
      // Without replacement: keys p / q, q ~ Exp(1), sorted descending.
      const keys = emptyGpu([rows, k], float32);
      try {
        const b = new KernelBindings(name);
        const x = b.strided(self, self.shape, self.stride(), false);
        const kk = b.contiguous(keys, rows * k, true);
        const rowStride = self.ndim === 2 ? self.stride()[0] : 0, colStride = self.stride()[self.ndim - 1];
        runItems({
          key: `mnkeys|${self.dtype.name}|${x.slot}${kk.slot}`,
          bindings: b,
          words: 7,
          items: rows * k,
          body: () => [
            'let k = pw(1u); let row = t / k; let j = t % k;',
            `let v = ${loadWgsl(self.dtype, `b${x.slot}`, 'u32(pi(5u) + i32(row) * pi(6u) + i32(j) * pi(4u))')};`,
            ...uniformWgsl(2),
            'let q = -log(1.0 - u);',
            `b${kk.slot}[t] = bitcast<u32>(select(v / q, 0.0, v == 0.0));`,
          ],
          params: (q, slot) => {
            q.words[slot + 1] = k;
            q.words[slot + 2] = k0;
            q.words[slot + 3] = k1;
            q.ints[slot + 4] = colStride;
            q.ints[slot + 5] = x.offset;
            q.ints[slot + 6] = rowStride;
          },
        });
        const [values, order] = sortGpu(keys, 1, true);
        values.dispose();
        try {
          const picked = order.narrow(1, 0, numSamples);
          try {
            const b2 = new KernelBindings(name);
            const src = b2.strided(picked, picked.shape, picked.stride(), false);
            const o = b2.contiguous(out, rows * numSamples, true);
            runItems({
              key: `mnpick|${src.slot}${o.slot}`,
              bindings: b2,
              words: 4,
              items: rows * numSamples,
              body: () => [
                'let row = t / pw(1u); let s = t % pw(1u);',
                `let e = u32(pi(2u) + i32(row) * pi(3u)) + s;`,
                `b${o.slot}[2u * t] = b${src.slot}[2u * e]; b${o.slot}[2u * t + 1u] = b${src.slot}[2u * e + 1u];`,
              ],
              params: (q, slot) => {
                q.words[slot + 1] = numSamples;
                q.ints[slot + 2] = src.offset;
                q.ints[slot + 3] = picked.stride()[0];
              },
            });
          } finally {
            picked.dispose();
          }
        } finally {
          order.dispose();
        }
      } finally {
        keys.dispose();
      }
      return out;
    } finally {
      cdf.dispose();
    }
  } catch (e) {
    out.dispose();
    throw e;
  }
}

/**
 * The WebGPU entries of the sampling operators.
 *
 * @example
 * ```ts
 * import { GPU_RANDOM2_KERNELS } from './random2.ts';
 * typeof GPU_RANDOM2_KERNELS.randperm; // 'function'
 * ```
 */
export const GPU_RANDOM2_KERNELS: { readonly [K in Random2BackendOpName]: Kernel } = {
  'randperm.generator': viaCpu('generator', 4),
  'randperm': viaCpu('', 3),
  'bernoulli':
    ((_hi: number, _lo: number, self: Tensor, g: Generator | null) => bernoulli(self, undefined, g)) as Kernel,
  'bernoulli.p':
    ((_hi: number, _lo: number, self: Tensor, p: number, g: Generator | null) => bernoulli(self, p, g)) as Kernel,
  'multinomial':
    ((_hi: number, _lo: number, self: Tensor, n: number, replacement: boolean, g: Generator | null) =>
      multinomial(self, n, replacement, g)) as Kernel,
};
