/**
 * Generator: PyTorch's CPU random number generator (`CPUGeneratorImpl`), a 32-bit Mersenne Twister
 * (mt19937) seeded the way `torch.manual_seed` seeds it, so that the same seed gives the same raw stream as
 * PyTorch, plus the cached second Box-Muller sample PyTorch keeps between calls. `getState()` gives the bytes
 * of `torch.get_rng_state()`, so states can move between PyTorch and Switchyard.
 *
 * @module
 */

import { crSinCos } from '../cpu/correctly_rounded.ts';
const N = 624;
const M = 397;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const MATRIX_A = 0x9908b0df;
/**
 * PyTorch's default CPU seed (`default_rng_seed_val`).
 *
 * @example
 * ```ts
 * import { DEFAULT_SEED, Generator } from './generator.ts';
 * new Generator().initialSeed() === DEFAULT_SEED; // true
 * ```
 */
export const DEFAULT_SEED = 67280421310721n;
/**
 * Bytes of PyTorch's `CPUGeneratorImplState` (what `torch.get_rng_state()` returns).
 *
 * @example
 * ```ts
 * import { Generator, RNG_STATE_BYTES } from './generator.ts';
 * new Generator().getState().length === RNG_STATE_BYTES; // true
 * ```
 */
export const RNG_STATE_BYTES = 5056;
const LEGACY_STATE_BYTES = 5048;

/**
 * A seed as PyTorch's `manual_seed` takes it: an integer in [-2^63, 2^64), negative values wrapping to their
 * two's complement; numbers are truncated first, as Python's `int(seed)` does.
 */
function toSeed(seed: number | bigint): bigint {
  let s: bigint;
  if (typeof seed === 'bigint') s = seed;
  else if (Number.isFinite(seed)) s = BigInt(Math.trunc(seed));
  else throw new TypeError(`manual_seed expected an integer seed, got ${seed}`);
  if (s < -(2n ** 63n) || s >= 2n ** 64n) throw new RangeError('Overflow when unpacking long');
  return BigInt.asUintN(64, s);
}

/**
 * A seeded random stream (`torch.Generator` on the CPU). Its draws are PyTorch's bit for bit: `random()` is
 * `CPUGeneratorImpl::random()`, `random64()` its `random64()`.
 *
 * @example
 * ```ts
 * import { Generator } from './generator.ts';
 * const g = new Generator().manualSeed(42);
 * g.random(); // 1608637542, as PyTorch's first draw after torch.manual_seed(42)
 * ```
 */
export class Generator {
  readonly #state = new Uint32Array(N);
  #sync: GeneratorSync | undefined;
  // PyTorch's mt19937 bookkeeping (`left_`, `next_`), kept as is so that states round-trip with PyTorch.
  #left = 1;
  #next = 0;
  #seed: bigint = DEFAULT_SEED;
  /** The cached second sample of the double Box-Muller transform (`next_double_normal_sample`). */
  nextDoubleNormal: number | undefined;
  /** The cached second sample of the float Box-Muller transform (`next_float_normal_sample`). */
  nextFloatNormal: number | undefined;

  /** A generator seeded with `seed` (PyTorch's default seed when omitted). */
  constructor(seed: number | bigint = DEFAULT_SEED) {
    this.manualSeed(seed);
  }

  /**
   * Runs `fn` with exclusive use of this generator's stream: the random kernels draw inside it. A generator
   * shared by several agents (the default one, once agents share the runtime: core/workers) takes its lock
   * and brings its state up to date around `fn`, as PyTorch's kernels hold the generator's mutex.
   */
  use<T>(fn: () => T): T {
    return this.#sync === undefined ? fn() : this.#sync.use(this, fn);
  }

  /** Makes this generator's stream shared through `sync` (core/workers/shared_generator.ts). */
  shareWith(sync: GeneratorSync): void {
    this.#sync = sync;
  }

  /** The device whose streams this generator drives. */
  get device(): 'cpu' {
    return 'cpu';
  }

  /** Reseeds (`manual_seed`) and forgets cached normal samples; returns this generator. */
  manualSeed(seed: number | bigint): this {
    const s = toSeed(seed);
    this.#seed = s;
    const state = this.#state;
    // mt19937 takes the low 32 bits of the seed.
    state[0] = Number(s & 0xffffffffn);
    for (let i = 1; i < N; i++) {
      const prev = state[i - 1] ^ (state[i - 1] >>> 30);
      state[i] = Math.imul(1812433253, prev) + i;
    }
    this.#left = 1;
    this.#next = 0;
    this.nextDoubleNormal = undefined;
    this.nextFloatNormal = undefined;
    return this;
  }

  /** Seeds from a non-deterministic source (`Generator.seed()`); returns the new seed. */
  seed(): bigint {
    const words = crypto.getRandomValues(new Uint32Array(2));
    const s = (BigInt(words[0]) << 32n) | BigInt(words[1]);
    this.manualSeed(s);
    return s;
  }

  /** The seed last set (`initial_seed`), as an unsigned 64-bit integer. */
  initialSeed(): bigint {
    return this.#seed;
  }

  /** The next uint32 of the stream (`CPUGeneratorImpl::random()`). */
  random(): number {
    if (--this.#left === 0) this.#nextState();
    let y = this.#state[this.#next++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random64()`: two draws joined as `first << 32 | second`, as an unsigned bigint. */
  random64(): bigint {
    const hi = this.random(), lo = this.random();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** The low 53 bits of `random64()` as a number in [0, 2^53): what a double uniform sample uses. */
  random53(): number {
    const hi = this.random(), lo = this.random();
    return (hi & 0x1fffff) * 4294967296 + lo;
  }

  /**
   * The state as the bytes of PyTorch's `CPUGeneratorImplState` (`torch.get_rng_state()`), little-endian:
   * seed, left, seeded, next, the 624 state words widened to 64 bits, the cached double normal sample in
   * `normal_y`, and the cached float normal sample.
   */
  getState(): Uint8Array {
    const bytes = new Uint8Array(RNG_STATE_BYTES);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, this.#seed, true);
    view.setInt32(8, this.#left, true);
    view.setInt32(12, 1, true);
    view.setBigUint64(16, BigInt(this.#next), true);
    for (let i = 0; i < N; i++) view.setUint32(24 + 8 * i, this.#state[i], true);
    const normalAt = 24 + 8 * N; // normal_x, normal_y, normal_rho, normal_is_valid
    if (this.nextDoubleNormal !== undefined) {
      view.setFloat64(normalAt + 8, this.nextDoubleNormal, true);
      view.setInt32(normalAt + 24, 1, true);
    }
    if (this.nextFloatNormal !== undefined) {
      view.setFloat32(LEGACY_STATE_BYTES, this.nextFloatNormal, true);
      bytes[LEGACY_STATE_BYTES + 4] = 1;
    }
    return bytes;
  }

  /** Restores a state from {@linkcode getState} or `torch.get_rng_state()` (also the legacy 5048-byte form). */
  setState(state: ArrayLike<number>): this {
    const n = state.length;
    if (n !== RNG_STATE_BYTES && n !== LEGACY_STATE_BYTES) {
      throw new Error(
        `Expected either a CPUGeneratorImplStateLegacy of size ${LEGACY_STATE_BYTES} or a CPUGeneratorImplState ` +
          `of size ${RNG_STATE_BYTES} but found the input RNG state size to be ${n}`,
      );
    }
    const bytes = Uint8Array.from(state);
    const view = new DataView(bytes.buffer);
    const left = view.getInt32(8, true), seeded = view.getInt32(12, true);
    const next = view.getBigUint64(16, true) & 0xffffffffn;
    if (seeded === 0 || left <= 0 || left > N || next > BigInt(N)) throw new Error('Invalid mt19937 state');
    const normalAt = 24 + 8 * N;
    let double: number | undefined;
    let float: number | undefined;
    if (view.getInt32(normalAt + 24, true) !== 0) {
      if (n === RNG_STATE_BYTES) double = view.getFloat64(normalAt + 8, true);
      else {
        // The legacy state kept the uniform sample and the radius; PyTorch rebuilds the sine sample.
        const sinCos = new Float64Array(2);
        crSinCos(2 * Math.PI * view.getFloat64(normalAt, true), sinCos);
        double = view.getFloat64(normalAt + 16, true) * sinCos[0];
      }
    }
    if (n === RNG_STATE_BYTES && bytes[LEGACY_STATE_BYTES + 4] !== 0) {
      float = view.getFloat32(LEGACY_STATE_BYTES, true);
    }
    this.#seed = view.getBigUint64(0, true);
    for (let i = 0; i < N; i++) this.#state[i] = view.getUint32(24 + 8 * i, true);
    this.#left = left;
    this.#next = Number(next);
    this.nextDoubleNormal = double;
    this.nextFloatNormal = float;
    return this;
  }

  /** A generator with the same state: both produce the same stream from here on. */
  clone(): Generator {
    return new Generator().setState(this.getState());
  }

  // Regenerates the 624 state words (`mt19937::next_state`).
  #nextState(): void {
    const s = this.#state;
    this.#left = N;
    this.#next = 0;
    let i = 0;
    for (; i < N - M; i++) s[i] = s[i + M] ^ twist(s[i], s[i + 1]);
    for (; i < N - 1; i++) s[i] = s[i + M - N] ^ twist(s[i], s[i + 1]);
    s[N - 1] = s[M - 1] ^ twist(s[N - 1], s[0]);
  }
}

function twist(u: number, v: number): number {
  const y = (u & UPPER_MASK) | (v & LOWER_MASK);
  return (y >>> 1) ^ ((v & 1) !== 0 ? MATRIX_A : 0);
}

/** How a generator shared by several agents is used (core/workers/shared_generator.ts). */
export interface GeneratorSync {
  /** Runs `fn` under the shared generator's lock with its state current. */
  use<T>(generator: Generator, fn: () => T): T;
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
 * Seeds the default generator (`torch.manual_seed`); returns it.
 *
 * @example
 * ```ts
 * import { manualSeed } from './generator.ts';
 * manualSeed(0);
 * ```
 */
export function manualSeed(seed: number | bigint): Generator {
  const g = defaultCpuGenerator();
  return g.use(() => g.manualSeed(seed));
}

/**
 * The default generator's seed (`torch.initial_seed`).
 *
 * @example
 * ```ts
 * import { initialSeed, manualSeed } from './generator.ts';
 * manualSeed(7);
 * initialSeed(); // 7n
 * ```
 */
export function initialSeed(): bigint {
  const g = defaultCpuGenerator();
  return g.use(() => g.initialSeed());
}

/**
 * The default generator's state bytes (`torch.get_rng_state`).
 *
 * @example
 * ```ts
 * import { getRngState, setRngState } from './generator.ts';
 * const saved = getRngState();
 * setRngState(saved);
 * ```
 */
export function getRngState(): Uint8Array {
  const g = defaultCpuGenerator();
  return g.use(() => g.getState());
}

/**
 * Restores the default generator's state (`torch.set_rng_state`).
 *
 * @example
 * ```ts
 * import { getRngState, setRngState } from './generator.ts';
 * setRngState(getRngState());
 * ```
 */
export function setRngState(state: ArrayLike<number>): void {
  const g = defaultCpuGenerator();
  g.use(() => g.setState(state));
}
