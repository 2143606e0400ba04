/**
 * The WebGPU sort engine: a stable sort of every line of a strided tensor along one dim, and what is built on it
 * (`sort.stable`, `mode`, `multinomial` without replacement).
 *
 * Note [GPU sort plan]
 * A line of `n` elements is padded to `P`, the next power of two, and sorted by a bitonic network over
 * (key, position) pairs in a scratch buffer, one dispatch per compare-and-exchange step (`log2(P) *
 * (log2(P) + 1) / 2` of them, every line at once). Keys are order-preserving unsigned words: a float's bits
 * with the sign bit flipped (all bits flipped for negatives), `-0.0` as `+0.0` and every NaN as `0xffffffff`
 * (the largest: NaN sorts last, as PyTorch's comparators put it); an integer's two's complement with the sign bit
 * flipped; an int64 as two such words (high, low). Descending order complements the key words, so NaN comes
 * first there, as in PyTorch. Ties are broken by the position, which makes the unstable network a stable sort
 * (equal elements keep their order, ascending or descending), and padding slots carry the largest key and a
 * position `>= n`, so they sort after every element. The values are then gathered from the input by position,
 * word for word (the dtype's exact bits), and the positions written as int64.
 *
 * @module
 */
import { RuntimeError } from '../../core/dispatch/errors.ts';
import { type DType, int32, int64 } from '../../core/tensor/dtype.ts';
import { contiguousStrides } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import { KernelBindings } from '../boundary.ts';
import { emptyGpu } from '../tensors.ts';
import { gpuItemBytes, kindOf, loadWgsl } from '../wgsl/dtypes.ts';
import { runItems } from './custom.ts';

/**
 * A tensor seen as lines along `dim`: `rows` lines of `n` elements, the other dims (`sizes`) walked with each
 * operand's own strides.
 */
export interface LinePlan {
  readonly rows: number;
  readonly n: number;
  /** Sizes of the dims other than `dim`, in order. */
  readonly sizes: readonly number[];
}

/**
 * The line plan of `shape` along (wrapped) `dim`; a 0-d tensor is one line of one element.
 *
 * @example
 * ```ts
 * import { linePlan } from './sort_engine.ts';
 * linePlan([2, 5, 3], 1); // { rows: 6, n: 5, sizes: [2, 3] }
 * ```
 */
export function linePlan(shape: readonly number[], dim: number): LinePlan {
  if (shape.length === 0) return { rows: 1, n: 1, sizes: [] };
  const sizes = shape.filter((_, d) => d !== dim);
  return { rows: sizes.reduce((a, b) => a * b, 1), n: shape[dim], sizes };
}

/** Strides of `strides` at the dims other than `dim` (empty for a 0-d tensor). */
export function otherStrides(strides: readonly number[], dim: number): number[] {
  return strides.filter((_, d) => d !== dim);
}

/**
 * WGSL computing, from line `row` (a u32), the element offsets `o0, o1, ...` of the line's first element in
 * each of `operands` operands: operand `k` starts at `pi(base + k)`, and the sizes and strides follow at
 * `base + operands` (size, then one stride per operand, per other dim).
 *
 * @example
 * ```ts
 * import { lineWalk } from './sort_engine.ts';
 * lineWalk(1, 2, 4)[0]; // 'var rest = row; var o0 = pi(4u); var o1 = pi(5u);'
 * ```
 */
export function lineWalk(rank: number, operands: number, base: number): string[] {
  const init = Array.from({ length: operands }, (_, k) => `var o${k} = pi(${base + k}u);`).join(' ');
  const lines = [`var rest = row; ${init}`];
  const per = 1 + operands;
  for (let d = rank - 1; d >= 0; d--) {
    const at = base + operands + per * d;
    const adds = Array.from({ length: operands }, (_, k) => `o${k} = o${k} + c * pi(${at + 1 + k}u);`).join(' ');
    lines.push(`{ let s = pw(${at}u); let c = i32(rest % s); rest = rest / s; ${adds} }`);
  }
  return lines;
}

/** Writes the parameters {@linkcode lineWalk} reads. */
export function writeLineWalk(
  q: { words: Uint32Array; ints: Int32Array },
  slot: number,
  base: number,
  offsets: readonly number[],
  sizes: readonly number[],
  strides: readonly (readonly number[])[],
): void {
  const operands = offsets.length, per = 1 + operands;
  offsets.forEach((o, k) => (q.ints[slot + base + k] = o));
  sizes.forEach((s, d) => {
    const at = slot + base + operands + per * d;
    q.words[at] = s;
    for (let k = 0; k < operands; k++) q.ints[at + 1 + k] = strides[k][d];
  });
}

/** Parameter words of a {@linkcode lineWalk} block. */
export function lineWalkWords(rank: number, operands: number): number {
  return operands + (1 + operands) * rank;
}

/** Words one element takes in a GPU buffer. */
function itemWords(dtype: DType): number {
  return gpuItemBytes(dtype) / 4;
}

/** A sorted scratch buffer: `rows` lines of `P` (key words, position) records of `W` words. */
export interface SortedLines {
  readonly scratch: Tensor;
  readonly plan: LinePlan;
  readonly P: number;
  /** Words per record: the key words and the position. */
  readonly W: number;
}

/** WGSL: whether the record at word index `a` of buffer `buf` is before the one at `b` (words compared in order). */
function lessWgsl(buf: string, W: number, a: string, b: string): string {
  let expr = `${buf}[${a} + ${W - 1}u] < ${buf}[${b} + ${W - 1}u]`;
  for (let w = W - 2; w >= 0; w--) {
    const x = `${buf}[${a} + ${w}u]`, y = `${buf}[${b} + ${w}u]`;
    expr = `(${x} < ${y} || (${x} == ${y} && (${expr})))`;
  }
  return expr;
}

/**
 * Sorts every line of `self` along `dim` (wrapped) into a scratch buffer of (key, position) records
 * (Note [GPU sort plan]); the caller disposes `scratch`. `op` names the kernel in messages (`sort_webgpu`).
 *
 * @example
 * ```ts
 * import { sortLines } from './sort_engine.ts';
 * // const s = sortLines(x, 1, false, 'sort'); ...; s.scratch.dispose();
 * ```
 */
export function sortLines(self: Tensor, dim: number, descending: boolean, op: string): SortedLines {
  const name = `${op}_webgpu`;
  const kind = kindOf(self.dtype, name);
  const plan = linePlan(self.shape, dim);
  const { rows, n } = plan;
  let P = 1;
  while (P < n) P *= 2;
  const keyWords = kind === 'i64' ? 2 : 1;
  const W = keyWords + 1;
  const total = rows * P * W;
  if (total > 0x7fffffff) throw new RuntimeError(`${op}: the tensor is too large for the WebGPU sort`);
  const scratch = emptyGpu([Math.max(total, 1)], int32);
  try {
    if (rows * n === 0) return { scratch, plan, P, W };
    const rank = plan.sizes.length;
    const inStrides = self.ndim === 0 ? [] : otherStrides(self.stride(), dim);
    const dimStride = self.ndim === 0 ? 0 : self.stride()[dim];
    // Load: key and position of every slot (padding: the largest key, position >= n).
    {
      const b = new KernelBindings(name);
      const s = b.contiguous(scratch, total, true);
      const x = b.strided(self, self.shape, self.stride(), false);
      const encode = kind === 'f32'
        ? [
          `let v = ${loadWgsl(self.dtype, `b${x.slot}`, 'u32(o0 + i32(p) * pi(3u))')};`,
          'var k0 = bitcast<u32>(v);',
          'if (v == 0.0) { k0 = 0u; }',
          'k0 = select(k0 ^ 0x80000000u, ~k0, (k0 & 0x80000000u) != 0u);',
          'if (is_nan(v)) { k0 = 0xffffffffu; }',
        ]
        : kind === 'i32'
        ? [`let k0 = bitcast<u32>(${loadWgsl(self.dtype, `b${x.slot}`, 'u32(o0 + i32(p) * pi(3u))')}) ^ 0x80000000u;`]
        : [
          `let v = ${loadWgsl(self.dtype, `b${x.slot}`, 'u32(o0 + i32(p) * pi(3u))')};`,
          'let k0 = v.y ^ 0x80000000u; let k1 = v.x;',
        ];
      const flip = descending ? '~' : '';
      const words = 4 + lineWalkWords(rank, 1);
      runItems({
        key: `sortload|${self.dtype.name}|${descending}|${rank}|${s.slot}${x.slot}`,
        bindings: b,
        words,
        items: rows * P,
        body: () => [
          'let row = t / pw(1u); let p = t % pw(1u); let e = t * ' + `${W}u;`,
          `if (p < pw(2u)) {`,
          ...lineWalk(rank, 1, 4).map((l) => `  ${l}`),
          ...encode.map((l) => `  ${l}`),
          ...Array.from({ length: keyWords }, (_, w) => `  b${s.slot}[e + ${w}u] = ${flip}k${w};`),
          `  b${s.slot}[e + ${keyWords}u] = p;`,
          '} else {',
          ...Array.from({ length: keyWords }, (_, w) => `  b${s.slot}[e + ${w}u] = 0xffffffffu;`),
          `  b${s.slot}[e + ${keyWords}u] = p;`,
          '}',
        ],
        params: (q, slot) => {
          q.words[slot + 1] = P;
          q.words[slot + 2] = n;
          q.ints[slot + 3] = dimStride;
          writeLineWalk(q, slot, 4, [x.offset], plan.sizes, [inStrides]);
        },
      });
    }
    // The bitonic network: for each block size k, distances j = k/2 .. 1.
    for (let k = 2; k <= P; k *= 2) {
      for (let j = k / 2; j >= 1; j /= 2) {
        const b = new KernelBindings(name);
        const s = b.contiguous(scratch, total, true);
        const buf = `b${s.slot}`;
        runItems({
          key: `sortstep|${W}|${s.slot}`,
          bindings: b,
          words: 4,
          items: rows * (P / 2),
          body: () => [
            'let half = pw(1u); let j = pw(2u); let k = pw(3u);',
            'let row = t / half; let i = t % half;',
            'let lo = (i / j) * 2u * j + (i % j); let hi = lo + j;',
            `let a = (row * 2u * half + lo) * ${W}u; let c = (row * 2u * half + hi) * ${W}u;`,
            `if ((${lessWgsl(buf, W, 'c', 'a')}) == ((lo & k) == 0u)) {`,
            ...Array.from(
              { length: W },
              (_, w) =>
                `  { let x = ${buf}[a + ${w}u]; ${buf}[a + ${w}u] = ${buf}[c + ${w}u]; ${buf}[c + ${w}u] = x; }`,
            ),
            '}',
          ],
          params: (q, slot) => {
            q.words[slot + 1] = P / 2;
            q.words[slot + 2] = j;
            q.words[slot + 3] = k;
          },
        });
      }
    }
    return { scratch, plan, P, W };
  } catch (e) {
    scratch.dispose();
    throw e;
  }
}

/**
 * `sort.stable` on WebGPU: contiguous values (the input's exact elements) and int64 positions, sorted along
 * `dim` (Note [GPU sort plan]).
 *
 * @example
 * ```ts
 * import { sortGpu } from './sort_engine.ts';
 * // const [values, indices] = sortGpu(x, -1 wrapped, true);
 * ```
 */
export function sortGpu(self: Tensor, dim: number, descending: boolean): [Tensor, Tensor] {
  const values = emptyGpu(self.shape, self.dtype);
  const indices = emptyGpu(self.shape, int64);
  try {
    if (self.numel === 0) return [values, indices];
    const sorted = sortLines(self, dim, descending, 'sort');
    try {
      const { plan, P, W } = sorted;
      const rank = plan.sizes.length;
      const outStrides = self.ndim === 0 ? [] : otherStrides(contiguousStrides(self.shape), dim);
      const inStrides = self.ndim === 0 ? [] : otherStrides(self.stride(), dim);
      const outDim = self.ndim === 0 ? 0 : contiguousStrides(self.shape)[dim];
      const inDim = self.ndim === 0 ? 0 : self.stride()[dim];
      const b = new KernelBindings('sort_webgpu');
      const s = b.contiguous(sorted.scratch, plan.rows * P * W, false);
      const x = b.strided(self, self.shape, self.stride(), false);
      const v = b.contiguous(values, self.numel, true);
      const ix = b.contiguous(indices, self.numel, true);
      const words = itemWords(self.dtype);
      const base = 6;
      runItems({
        key: `sortstore|${words}|${W}|${rank}|${s.slot}${x.slot}${v.slot}${ix.slot}`,
        bindings: b,
        words: base + lineWalkWords(rank, 2),
        items: plan.rows * plan.n,
        body: () => [
          'let row = t / pw(1u); let j = t % pw(1u);',
          ...lineWalk(rank, 2, base),
          `let p = b${s.slot}[(row * pw(2u) + j) * ${W}u + ${W - 1}u];`,
          'let src = u32(o0 + i32(p) * pi(3u)); let dst = u32(o1 + i32(j) * pi(4u));',
          ...Array.from(
            { length: words },
            (_, w) =>
              words === 1
                ? `b${v.slot}[dst] = b${x.slot}[src];`
                : `b${v.slot}[2u * dst + ${w}u] = b${x.slot}[2u * src + ${w}u];`,
          ),
          `b${ix.slot}[2u * dst] = p; b${ix.slot}[2u * dst + 1u] = 0u;`,
        ],
        params: (q, slot) => {
          q.words[slot + 1] = plan.n;
          q.words[slot + 2] = P;
          q.ints[slot + 3] = inDim;
          q.ints[slot + 4] = outDim;
          q.ints[slot + 5] = 0;
          writeLineWalk(q, slot, base, [x.offset, v.offset], plan.sizes, [inStrides, outStrides]);
        },
      });
    } finally {
      sorted.scratch.dispose();
    }
    return [values, indices];
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw e;
  }
}

/**
 * `mode` on WebGPU along `dim` (wrapped): the most frequent value of each line (the smallest among the most
 * frequent; every NaN counts as one value, the largest) and the last position holding it. The lines are sorted
 * (Note [GPU sort plan]), equal values are equal keys, and one invocation per line walks its runs: the first
 * longest run is the smallest most frequent value, and its last record, the sort being stable, the last position.
 *
 * @example
 * ```ts
 * import { modeGpu } from './sort_engine.ts';
 * // const [values, indices] = modeGpu(x, 1, false);
 * ```
 */
export function modeGpu(self: Tensor, dim: number, keepdim: boolean): [Tensor, Tensor] {
  const keptShape = self.ndim === 0 ? [] : self.shape.map((s, d) => (d === dim ? 1 : s));
  const outShape = keepdim ? keptShape : keptShape.filter((_, d) => d !== dim);
  const values = emptyGpu(outShape, self.dtype);
  const indices = emptyGpu(outShape, int64);
  try {
    if (self.numel === 0) return [values, indices];
    const sorted = sortLines(self, dim, false, 'mode');
    try {
      const { plan, P, W } = sorted;
      const rank = plan.sizes.length;
      const outStrides = self.ndim === 0 ? [] : otherStrides(contiguousStrides(keptShape), dim);
      const inStrides = self.ndim === 0 ? [] : otherStrides(self.stride(), dim);
      const inDim = self.ndim === 0 ? 0 : self.stride()[dim];
      const b = new KernelBindings('mode_webgpu');
      const s = b.contiguous(sorted.scratch, plan.rows * P * W, false);
      const x = b.strided(self, self.shape, self.stride(), false);
      const v = b.contiguous(values, plan.rows, true);
      const ix = b.contiguous(indices, plan.rows, true);
      const words = itemWords(self.dtype);
      const base = 4;
      const sameKey = Array.from({ length: W - 1 }, (_, w) => `b${s.slot}[a + ${w}u] == b${s.slot}[c + ${w}u]`)
        .join(' && ');
      runItems({
        key: `mode|${words}|${W}|${rank}|${s.slot}${x.slot}${v.slot}${ix.slot}`,
        bindings: b,
        words: base + lineWalkWords(rank, 2),
        items: plan.rows,
        body: () => [
          'let row = t; let n = pw(1u); let first = row * pw(2u) * ' + `${W}u;`,
          ...lineWalk(rank, 2, base),
          'var best = 0u; var bestCount = 0u; var start = 0u;',
          'for (var j = 1u; j <= n; j = j + 1u) {',
          `  let c = first + j * ${W}u; let a = c - ${W}u;`,
          `  if (j == n || !(${sameKey})) {`,
          '    if (j - start > bestCount) { bestCount = j - start; best = j - 1u; }',
          '    start = j;',
          '  }',
          '}',
          `let p = b${s.slot}[first + best * ${W}u + ${W - 1}u];`,
          'let src = u32(o0 + i32(p) * pi(3u)); let dst = u32(o1);',
          ...Array.from(
            { length: words },
            (_, w) =>
              words === 1
                ? `b${v.slot}[dst] = b${x.slot}[src];`
                : `b${v.slot}[2u * dst + ${w}u] = b${x.slot}[2u * src + ${w}u];`,
          ),
          `b${ix.slot}[2u * dst] = p; b${ix.slot}[2u * dst + 1u] = 0u;`,
        ],
        params: (q, slot) => {
          q.words[slot + 1] = plan.n;
          q.words[slot + 2] = P;
          q.ints[slot + 3] = inDim;
          writeLineWalk(q, slot, base, [x.offset, v.offset], plan.sizes, [inStrides, outStrides]);
        },
      });
    } finally {
      sorted.scratch.dispose();
    }
    return [values, indices];
  } catch (e) {
    values.dispose();
    indices.dispose();
    throw e;
  }
}
