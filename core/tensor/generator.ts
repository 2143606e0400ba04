/**
 * Generator: PyTorch's CPU random number generator, a 32-bit Mersenne Twister (mt19937) seeded the way
 * `torch.manual_seed` seeds it, so that the same seed gives the same raw stream as PyTorch.
 *
 * @module
 */

const N = 624;
const M = 397;
/** PyTorch's default CPU seed (`default_rng_seed_val`). */
export const DEFAULT_SEED = 67280421310721n;

/**
 * A seeded random stream (`torch.Generator`).
 *
 * @example
 * ```ts
 * import { Generator } from './generator.ts';
 * const g = new Generator().manualSeed(42);
 * g.random(); // a uint32, the same as PyTorch's first draw after torch.manual_seed(42)
 * ```
 */
export class Generator {
  readonly #state = new Uint32Array(N);
  #index = N;
  #seed: bigint = DEFAULT_SEED;
  /** A cached second normal sample, as PyTorch's `next_double_normal_sample`. */
  nextDoubleNormal: number | undefined;
  /** A cached float normal sample (`next_float_normal_sample`). */
  nextFloatNormal: number | undefined;

  /** A generator seeded with PyTorch's default seed. */
  constructor(seed: number | bigint = DEFAULT_SEED) {
    this.manualSeed(seed);
  }

  /** Reseeds (`manual_seed`); returns this generator. */
  manualSeed(seed: number | bigint): this {
    const s = BigInt.asUintN(64, BigInt(seed));
    this.#seed = s;
    // mt19937 takes the low 32 bits of the seed.
    this.#state[0] = Number(s & 0xffffffffn);
    for (let i = 1; i < N; i++) {
      const prev = this.#state[i - 1] ^ (this.#state[i - 1] >>> 30);
      this.#state[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.#index = N;
    this.nextDoubleNormal = undefined;
    this.nextFloatNormal = undefined;
    return this;
  }

  /** The seed last set (`initial_seed`). */
  initialSeed(): bigint {
    return this.#seed;
  }

  /** The next uint32 of the stream (PyTorch's `random()`). */
  random(): number {
    if (this.#index >= N) this.#twist();
    let y = this.#state[this.#index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** 53 random bits as a number in [0, 2^53) from two draws, as PyTorch's `random64() & (2^53 - 1)`. */
  random53(): number {
    const hi = this.random(), lo = this.random();
    // make64BitsFrom32Bits(hi, lo) = hi << 32 | lo; keep the low 53 bits.
    return (hi & 0x1fffff) * 4294967296 + lo;
  }

  #twist(): void {
    const s = this.#state;
    for (let i = 0; i < N; i++) {
      const y = (s[i] & 0x80000000) | (s[(i + 1) % N] & 0x7fffffff);
      let v = s[(i + M) % N] ^ (y >>> 1);
      if ((y & 1) !== 0) v ^= 0x9908b0df;
      s[i] = v >>> 0;
    }
    this.#index = 0;
  }
}

let defaultGenerator: Generator | undefined;

/**
 * The default CPU generator (`torch.default_generator`).
 *
 * @example
 * ```ts
 * import { defaultCpuGenerator } from './generator.ts';
 * defaultCpuGenerator().manualSeed(0);
 * ```
 */
export function defaultCpuGenerator(): Generator {
  return defaultGenerator ??= new Generator();
}

/**
 * Seeds the default generator (`torch.manual_seed`).
 *
 * @example
 * ```ts
 * import { manualSeed } from './generator.ts';
 * manualSeed(0);
 * ```
 */
export function manualSeed(seed: number | bigint): Generator {
  return defaultCpuGenerator().manualSeed(seed);
}
