/**
 * Counter-based random numbers for the WebGPU sampling kernels (`bernoulli`, `multinomial`).
 *
 * Note [GPU Philox]
 * The factories (`rand`, `randn`, ...) draw on the host so that a seed gives the same values on both devices
 * (Note [GPU random numbers] in random.ts). The sampling operators read their probabilities, which live on the
 * GPU and cannot be read back synchronously, so they draw on the GPU instead, with Philox4x32-10 (Salmon et al.,
 * "Parallel random numbers: as easy as 1, 2, 3", SC 2011; PyTorch's CUDA generator): invocation `t` encrypts the
 * counter `(t, 0, stream, 0)` under a 64-bit key and uses the first output word. The key is two draws of the CPU
 * generator in use (the default one, or the `generator` argument), taken when the operator is called, so each
 * call advances that generator by two draws, consecutive calls are independent, and `manualSeed(s)` reproduces
 * the values on WebGPU exactly (they differ from the CPU kernels', as PyTorch's CUDA samples differ from its CPU
 * ones). A uniform is the word's top 24 bits times 2^-24, in [0, 1).
 *
 * @module
 */
import { defaultCpuGenerator, type Generator } from '../../core/tensor/generator.ts';

/**
 * Draws a Philox key (two 32-bit words) from `g` (the default CPU generator when null), advancing it by two draws.
 *
 * @example
 * ```ts
 * import { philoxKey } from './philox.ts';
 * import { Generator } from '../../core/tensor/generator.ts';
 * philoxKey(new Generator(42)).length; // 2
 * ```
 */
export function philoxKey(g: Generator | null): [number, number] {
  const gen = g ?? defaultCpuGenerator();
  return gen.use(() => [gen.random(), gen.random()]);
}

/** `hi` of the 64-bit product of u32 expressions `a` and `b`, in WGSL statements declaring `${name}`. */
function mulhi(name: string, a: string, b: string): string[] {
  return [
    `let ${name}_al = (${a}) & 0xffffu; let ${name}_ah = (${a}) >> 16u;`,
    `let ${name}_bl = (${b}) & 0xffffu; let ${name}_bh = (${b}) >> 16u;`,
    `let ${name}_lh = ${name}_al * ${name}_bh; let ${name}_hl = ${name}_ah * ${name}_bl;`,
    `let ${name}_mid = ((${name}_al * ${name}_bl) >> 16u) + (${name}_lh & 0xffffu) + (${name}_hl & 0xffffu);`,
    `let ${name} = ${name}_ah * ${name}_bh + (${name}_lh >> 16u) + (${name}_hl >> 16u) + (${name}_mid >> 16u);`,
  ];
}

/**
 * WGSL statements declaring `philox: vec4<u32>`, Philox4x32-10 of the counter `(ctr, 0, stream, 0)` under the key
 * `(k0, k1)` (u32 expressions).
 *
 * @example
 * ```ts
 * import { philoxWgsl } from './philox.ts';
 * philoxWgsl('t', '0u', 'pw(1u)', 'pw(2u)').at(-1); // 'let philox = vec4<u32>(c0, c1, c2, c3);'
 * ```
 */
export function philoxWgsl(ctr: string, stream: string, k0: string, k1: string): string[] {
  return [
    `var c0 = ${ctr}; var c1 = 0u; var c2 = ${stream}; var c3 = 0u; var key0 = ${k0}; var key1 = ${k1};`,
    'for (var round = 0u; round < 10u; round = round + 1u) {',
    ...mulhi('h0', '0xD2511F53u', 'c0').map((l) => `  ${l}`),
    ...mulhi('h1', '0xCD9E8D57u', 'c2').map((l) => `  ${l}`),
    '  let l0 = 0xD2511F53u * c0; let l1 = 0xCD9E8D57u * c2;',
    '  c0 = h1 ^ c1 ^ key0; c1 = l1; c2 = h0 ^ c3 ^ key1; c3 = l0;',
    '  key0 = key0 + 0x9E3779B9u; key1 = key1 + 0xBB67AE85u;',
    '}',
    'let philox = vec4<u32>(c0, c1, c2, c3);',
  ];
}

/**
 * Philox4x32-10 on the host (the reference of the WGSL above, for tests): the four output words of `counter`
 * under `key`.
 *
 * @example
 * ```ts
 * import { philox4x32 } from './philox.ts';
 * philox4x32([0, 0, 0, 0], [0, 0])[0].toString(16); // '6627e8d5' (Random123's known answer)
 * ```
 */
export function philox4x32(counter: readonly number[], key: readonly number[]): number[] {
  let [c0, c1, c2, c3] = counter.map((x) => x >>> 0);
  let [k0, k1] = key.map((x) => x >>> 0);
  const mul = (a: number, b: number) => {
    const p = BigInt(a) * BigInt(b);
    return [Number(p >> 32n), Number(p & 0xffffffffn)];
  };
  for (let r = 0; r < 10; r++) {
    const [h0, l0] = mul(0xD2511F53, c0), [h1, l1] = mul(0xCD9E8D57, c2);
    [c0, c1, c2, c3] = [(h1 ^ c1 ^ k0) >>> 0, l1, (h0 ^ c3 ^ k1) >>> 0, l0];
    k0 = (k0 + 0x9E3779B9) >>> 0;
    k1 = (k1 + 0xBB67AE85) >>> 0;
  }
  return [c0, c1, c2, c3];
}
