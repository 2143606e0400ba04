/**
 * The UCI handwritten digits (1,797 8×8 images, `digits.csv.gz` beside this file) for the examples that train on them
 * (digits.ts, cnn.ts), and the seeded permutation they split and shuffle with.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import type { Generator } from '../../mod.ts';

/** Pixels per image (8 × 8). */
export const FEATURES = 64;

/** Pixels scaled to [0, 1] (row-major, `FEATURES` per sample) and labels. */
export interface Digits {
  /** `FEATURES` values per sample, in [0, 1]. */
  readonly pixels: Float32Array;
  /** The digit of each sample. */
  readonly labels: number[];
}

/**
 * Reads and decompresses the data set.
 *
 * @example
 * ```ts
 * import { loadDigits } from './digits.ts';
 * (await loadDigits()).labels.length; // 1797
 * ```
 */
export async function loadDigits(): Promise<Digits> {
  const compressed = readFileSync(new URL('./digits.csv.gz', import.meta.url));
  const stream = new Blob([compressed]).stream().pipeThrough(new DecompressionStream('gzip'));
  const lines = (await new Response(stream).text()).trim().split('\n');
  const pixels = new Float32Array(lines.length * FEATURES);
  const labels = lines.map((line, i) => {
    const values = line.split(',').map(Number);
    if (values.length !== FEATURES + 1) throw new Error(`digits.csv line ${i + 1}: expected ${FEATURES + 1} values`);
    for (let j = 0; j < FEATURES; j++) pixels[i * FEATURES + j] = values[j] / 16;
    return values[FEATURES];
  });
  return { pixels, labels };
}

/**
 * A seeded Fisher-Yates permutation of 0..n-1.
 *
 * @example
 * ```ts
 * import { Generator } from '../../mod.ts';
 * import { permutation } from './digits.ts';
 * permutation(5, new Generator(0)).length; // 5
 * ```
 */
export function permutation(n: number, generator: Generator): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = generator.random() % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}
