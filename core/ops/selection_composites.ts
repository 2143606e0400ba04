/**
 * Selection and shape operators written as decompositions, following PyTorch 1.13's definitions
 * (TensorShape.cpp, TensorFactories.cpp, Onehot.cpp, PadNd.cpp): `masked_select` and `where(condition)` over
 * `nonzero`, `repeat`/`tile`/`repeat_interleave` over `expand` + `reshape` (or `index_select`), `tril`/`triu` as a
 * `where` with an index mask, `roll` as `narrow` + `cat`, `movedim` as `permute`, `outer`, `pad` (constant by
 * `cat`, reflect and replicate by `index_select`), `one_hot`. Autograd differentiates through the parts.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { bool, int64 } from '../tensor/dtype.ts';
import { broadcastShapes, wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;

function arange(n: number, like: Tensor): Tensor {
  return aten('arange').call(n, int64, null, like.device, null) as Tensor;
}

/**
 * `masked_select(self, mask)`: the elements of `self` where the (broadcast) bool `mask` is true, as a 1-d tensor
 * in row-major order.
 *
 * @example
 * ```ts
 * import { maskedSelect, tensor } from '../../mod.ts';
 * maskedSelect(tensor([[1, 2], [3, 4]]), tensor([true, false])).tolist(); // [1, 3]
 * ```
 */
export function maskedSelect(self: Tensor, mask: Tensor): Tensor {
  if (mask.dtype !== bool) throw new RuntimeError('masked_select: expected BoolTensor for mask');
  using temps = new Temporaries();
  const shape = broadcastShapes(self.shape, mask.shape);
  const flat = temps.track(temps.track(self.expand(shape)).reshape([-1]));
  const flatMask = temps.track(temps.track(mask.expand(shape)).reshape([-1]));
  const positions = temps.track(temps.track(aten('nonzero').call(flatMask) as Tensor).reshape([-1]));
  return flat.indexSelect(0, positions);
}

/**
 * `where(condition)`: `nonzero(condition)` as one index tensor per dimension (`nonzero(as_tuple=True)`).
 *
 * @example
 * ```ts
 * import { tensor, where } from '../../mod.ts';
 * where(tensor([[0, 1], [1, 0]])).map((t) => t.tolist()); // [[0, 1], [1, 0]]
 * ```
 */
export function whereCondition(condition: Tensor): Tensor[] {
  using temps = new Temporaries();
  const nz = temps.track(aten('nonzero').call(condition) as Tensor);
  if (condition.ndim === 0) return [temps.track(nz.reshape([-1])).clone()];
  return Array.from({ length: condition.ndim }, (_, d) => temps.track(nz.select(1, d)).clone());
}

/**
 * `repeat(self, repeats)`: `self` tiled `repeats[i]` times along each dim (leading repeats add dims).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * tensor([1, 2]).repeat([2, 2]).tolist(); // [[1, 2, 1, 2], [1, 2, 1, 2]]
 * ```
 */
export function repeat(self: Tensor, repeats: readonly number[]): Tensor {
  if (repeats.length < self.ndim) {
    throw new RuntimeError(
      'Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor',
    );
  }
  for (const r of repeats) {
    if (r < 0) throw new RuntimeError(`Trying to create tensor with negative dimension ${r}: ${list(repeats)}`);
  }
  using temps = new Temporaries();
  const lead = repeats.length - self.ndim;
  const sizes = [...new Array<number>(lead).fill(1), ...self.shape];
  // [s0, s1, ...] viewed as [1, s0, 1, s1, ...], expanded to [r0, s0, r1, s1, ...], then merged pairwise.
  const interleaved = sizes.flatMap((s) => [1, s]);
  const expanded = sizes.flatMap((s, i) => [repeats[i], s]);
  const viewed = temps.track(self.reshape(interleaved), self);
  const big = temps.track(viewed.expand(expanded));
  return big.reshape(sizes.map((s, i) => s * repeats[i]));
}

/**
 * `tile(self, dims)`: `repeat` with `dims` padded by leading ones to `self`'s rank.
 *
 * @example
 * ```ts
 * import { tensor, tile } from '../../mod.ts';
 * tile(tensor([[1, 2]]), [2]).tolist(); // [[1, 2, 1, 2]]
 * ```
 */
export function tile(self: Tensor, dims: readonly number[]): Tensor {
  const padded = dims.length < self.ndim ? [...new Array<number>(self.ndim - dims.length).fill(1), ...dims] : dims;
  return repeat(self, padded);
}

/**
 * `repeat_interleave(self, repeats, dim)` with an int `repeats`: each element repeated `repeats` times along
 * `dim` (of the flattened input when `dim` is null).
 *
 * @example
 * ```ts
 * import { repeatInterleave, tensor } from '../../mod.ts';
 * repeatInterleave(tensor([1, 2]), 2).tolist(); // [1, 1, 2, 2]
 * ```
 */
export function repeatInterleaveInt(
  self: Tensor,
  repeats: number,
  dim: number | null,
  _outputSize: number | null,
): Tensor {
  if (repeats < 0) throw new RuntimeError('repeats can not be negative');
  using temps = new Temporaries();
  const x = dim === null ? temps.track(self.reshape([-1]), self) : self;
  const d = dim === null ? 0 : wrapDim(dim, x.ndim);
  if (x.ndim === 0) return repeatInterleaveInt(temps.track(x.reshape([1])), repeats, 0, null);
  const unsq = temps.track(x.unsqueeze(d + 1));
  const shape = [...unsq.shape];
  shape[d + 1] = repeats;
  const big = temps.track(unsq.expand(shape));
  const out = [...x.shape];
  out[d] *= repeats;
  return big.reshape(out);
}

/** The positions `repeat_interleave(repeats)` makes: `i` repeated `repeats[i]` times. */
function repeatPositions(repeats: Tensor, temps: Temporaries): Tensor {
  if (repeats.ndim > 1) throw new RuntimeError('repeat_interleave only accept 1D vector as repeat');
  if (repeats.dtype !== int64 && repeats.dtype.name !== 'int32') {
    throw new RuntimeError('repeats has to be Long or Int tensor');
  }
  const counts = (repeats.ndim === 0 ? [repeats.item()] : repeats.toArray()).map(Number);
  if (counts.some((c) => c < 0)) throw new RuntimeError('repeats can not be negative');
  const pieces = counts.map((c, i) =>
    temps.track(aten('full').call([c], i, int64, null, repeats.device, null) as Tensor)
  );
  if (pieces.length === 0) return temps.track(arange(0, repeats));
  return temps.track(aten('cat').call(pieces, 0) as Tensor);
}

/**
 * `repeat_interleave(repeats)`: the index `i` repeated `repeats[i]` times.
 *
 * @example
 * ```ts
 * import { repeatInterleave, tensor } from '../../mod.ts';
 * repeatInterleave(tensor([2, 0, 1])).tolist(); // [0, 0, 2]
 * ```
 */
export function repeatInterleaveIndex(repeats: Tensor, _outputSize: number | null): Tensor {
  using temps = new Temporaries();
  return temps.keep(repeatPositions(repeats, temps));
}

/**
 * `repeat_interleave(self, repeats, dim)` with a tensor `repeats`: element `i` along `dim` repeated
 * `repeats[i]` times (a one-element `repeats` applies to every element).
 *
 * @example
 * ```ts
 * import { repeatInterleave, tensor } from '../../mod.ts';
 * repeatInterleave(tensor([1, 2]), tensor([1, 3])).tolist(); // [1, 2, 2, 2]
 * ```
 */
export function repeatInterleaveTensor(
  self: Tensor,
  repeats: Tensor,
  dim: number | null,
  outputSize: number | null,
): Tensor {
  using temps = new Temporaries();
  const x = dim === null ? temps.track(self.reshape([-1]), self) : self;
  const d = dim === null ? 0 : wrapDim(dim, x.ndim);
  if (repeats.numel === 1 && repeats.ndim <= 1) {
    return repeatInterleaveInt(x, Number(repeats.reshape([]).item()), d, outputSize);
  }
  const n = x.ndim === 0 ? 1 : x.shape[d];
  if (repeats.ndim !== 1 || repeats.shape[0] !== n) {
    throw new RuntimeError('repeats must have the same size as input along dim');
  }
  const index = repeatPositions(repeats, temps);
  return x.indexSelect(d, index);
}

/** `where(mask, self, 0)` with `mask` the lower (`tril`) or upper (`triu`) triangle shifted by `diagonal`. */
function triangle(op: 'tril' | 'triu', self: Tensor, diagonal: number): Tensor {
  if (self.ndim < 2) throw new RuntimeError(`${op}: input tensor must have at least 2 dimensions`);
  using temps = new Temporaries();
  const rows = self.shape[self.ndim - 2], cols = self.shape[self.ndim - 1];
  const r = temps.track(temps.track(arange(rows, self)).unsqueeze(1));
  const c = temps.track(temps.track(arange(cols, self)).unsqueeze(0));
  const shifted = temps.track(r.add(diagonal));
  // tril keeps j <= i + diagonal; triu keeps j >= i + diagonal.
  const keep = temps.track(op === 'tril' ? c.le(shifted) : c.ge(shifted));
  const zeros = temps.track(aten('zeros_like').call(self, null, null, null, null, null) as Tensor);
  return aten('where', 'self').call(keep, self, zeros) as Tensor;
}

/**
 * `tril(self, diagonal)`: the lower triangle of the last two dims (`j <= i + diagonal`), zeros elsewhere.
 *
 * @example
 * ```ts
 * import { tensor, tril } from '../../mod.ts';
 * tril(tensor([[1, 2], [3, 4]])).tolist(); // [[1, 0], [3, 4]]
 * ```
 */
export function tril(self: Tensor, diagonal: number): Tensor {
  return triangle('tril', self, diagonal);
}

/**
 * `triu(self, diagonal)`: the upper triangle of the last two dims (`j >= i + diagonal`), zeros elsewhere.
 *
 * @example
 * ```ts
 * import { tensor, triu } from '../../mod.ts';
 * triu(tensor([[1, 2], [3, 4]])).tolist(); // [[1, 2], [0, 4]]
 * ```
 */
export function triu(self: Tensor, diagonal: number): Tensor {
  return triangle('triu', self, diagonal);
}

function rollOne(x: Tensor, shift: number, d: number, temps: Temporaries): Tensor {
  const n = x.shape[d];
  if (n === 0) return x;
  const s = ((shift % n) + n) % n;
  if (s === 0) return x;
  const tail = temps.track(x.narrow(d, n - s, s));
  const head = temps.track(x.narrow(d, 0, n - s));
  return temps.track(aten('cat').call([tail, head], d) as Tensor);
}

/**
 * `roll(self, shifts, dims)`: elements shifted cyclically by `shifts[i]` along `dims[i]` (the flattened tensor,
 * reshaped back, when `dims` is empty).
 *
 * @example
 * ```ts
 * import { roll, tensor } from '../../mod.ts';
 * roll(tensor([1, 2, 3, 4]), 1).tolist(); // [4, 1, 2, 3]
 * ```
 */
export function roll(self: Tensor, shifts: readonly number[], dims: readonly number[]): Tensor {
  if (shifts.length === 0) throw new RuntimeError('`shifts` required');
  using temps = new Temporaries();
  if (dims.length === 0 && shifts.length === 1) {
    const flat = temps.track(self.reshape([-1]), self);
    const rolled = rollOne(flat, shifts[0], 0, temps);
    return temps.track(rolled.reshape(self.shape)).clone();
  }
  if (shifts.length !== dims.length) {
    throw new RuntimeError(`shifts and dimensions must align. shifts: ${shifts.length}, dims:${dims.length}`);
  }
  let x = self;
  for (let i = 0; i < dims.length; i++) x = rollOne(x, shifts[i], wrapDim(dims[i], self.ndim), temps);
  return x === self ? self.clone() : temps.keep(x);
}

/**
 * `movedim(self, source, destination)`: the dims `source` moved to positions `destination`, the others keeping
 * their order.
 *
 * @example
 * ```ts
 * import { movedim, zeros } from '../../mod.ts';
 * movedim(zeros([2, 3, 4]), 0, -1).shape; // [3, 4, 2]
 * ```
 */
export function movedim(
  self: Tensor,
  source: readonly number[] | number,
  destination: readonly number[] | number,
): Tensor {
  const src = typeof source === 'number' ? [source] : source;
  const dst = typeof destination === 'number' ? [destination] : destination;
  if (src.length !== dst.length) {
    throw new RuntimeError(
      `movedim: Invalid source or destination dims: source (${list(src)} dims) should contain the same number of ` +
        `dims as destination (${list(dst)} dims)`,
    );
  }
  const n = self.ndim;
  const ws = src.map((d) => wrapDim(d, n)), wd = dst.map((d) => wrapDim(d, n));
  const dup = (xs: number[]) => xs.some((x, i) => xs.indexOf(x) !== i);
  if (dup(ws)) throw new RuntimeError(`movedim: repeated dim in \`source\` (${list(src)})`);
  if (dup(wd)) throw new RuntimeError(`movedim: repeated dim in \`destination\` (${list(dst)})`);
  const order = new Array<number>(n).fill(-1);
  ws.forEach((s, i) => (order[wd[i]] = s));
  const rest = Array.from({ length: n }, (_, i) => i).filter((i) => !ws.includes(i));
  let k = 0;
  for (let i = 0; i < n; i++) if (order[i] === -1) order[i] = rest[k++];
  return self.permute(order);
}

/**
 * `outer(self, vec2)`: the outer product of two vectors, `self[i] * vec2[j]`.
 *
 * @example
 * ```ts
 * import { outer, tensor } from '../../mod.ts';
 * outer(tensor([1, 2]), tensor([3, 4])).tolist(); // [[3, 4], [6, 8]]
 * ```
 */
export function outer(self: Tensor, vec2: Tensor): Tensor {
  if (self.ndim !== 1) throw new RuntimeError(`outer: Expected 1-D argument self, but got ${self.ndim}-D`);
  if (vec2.ndim !== 1) throw new RuntimeError(`outer: Expected 1-D argument vec2, but got ${vec2.ndim}-D`);
  using temps = new Temporaries();
  return temps.track(self.unsqueeze(1)).mul(vec2);
}

/** Index along a dim of size `n` for output positions `-left .. n + right - 1`, reflected or clamped. */
function padIndex(
  n: number,
  left: number,
  right: number,
  mode: 'reflect' | 'replicate',
  like: Tensor,
  temps: Temporaries,
): Tensor {
  const pos = temps.track(temps.track(arange(n + left + right, like)).sub(left));
  if (mode === 'replicate') return temps.track(aten('clamp').call(pos, 0, n - 1) as Tensor);
  // reflect without repeating the edge: i -> |i|, then (n - 1) - |(n - 1) - |i||
  const a = temps.track(pos.abs());
  const b = temps.track(temps.track(aten('rsub', 'Scalar').call(a, n - 1, 1) as Tensor).abs());
  return temps.track(aten('rsub', 'Scalar').call(b, n - 1, 1) as Tensor);
}

/**
 * `pad(self, pad, mode, value)`: pads the last `pad.length / 2` dims, `pad` listing (left, right) pairs from the
 * last dim backwards; `mode` 'constant' (with `value`, default 0; negative pads crop), 'reflect' or 'replicate'.
 *
 * @example
 * ```ts
 * import { pad, tensor } from '../../mod.ts';
 * pad(tensor([1, 2]), [1, 2], { value: 9 }).tolist(); // [9, 1, 2, 9, 9]
 * ```
 */
export function pad(self: Tensor, padding: readonly number[], mode: string, value: number | null): Tensor {
  if (padding.length % 2 !== 0) throw new RuntimeError('Padding length must be divisible by 2');
  const dims = padding.length / 2;
  if (dims > self.ndim) throw new RuntimeError('Padding length too large');
  using temps = new Temporaries();
  if (mode === 'constant') {
    let x = self;
    for (let i = 0; i < dims; i++) {
      const d = self.ndim - 1 - i;
      let left = padding[2 * i], right = padding[2 * i + 1];
      // Negative padding crops.
      if (left < 0 || right < 0) {
        const start = Math.max(-left, 0), end = x.shape[d] - Math.max(-right, 0);
        if (end - start < 0) {
          throw new RuntimeError(
            `The input size ${x.shape[d]}, plus negative padding ${left} and ${right} resulted in a negative ` +
              `output size, which is invalid. Check dimension ${d} of your input.`,
          );
        }
        x = temps.track(x.narrow(d, start, end - start));
        left = Math.max(left, 0);
        right = Math.max(right, 0);
      }
      if (left === 0 && right === 0) continue;
      const parts: Tensor[] = [];
      const sideShape = (w: number) => x.shape.map((s, j) => (j === d ? w : s));
      const fill = (w: number) =>
        temps.track(aten('full').call(sideShape(w), value ?? 0, x.dtype, null, x.device, null) as Tensor);
      if (left > 0) parts.push(fill(left));
      parts.push(x);
      if (right > 0) parts.push(fill(right));
      x = temps.track(aten('cat').call(parts, d) as Tensor);
    }
    return x === self ? self.clone() : temps.keep(x);
  }
  if (mode !== 'reflect' && mode !== 'replicate') {
    throw new RuntimeError(`Unrecognised padding mode ${mode}`);
  }
  if (value !== null && value !== 0) {
    throw new RuntimeError(`Padding mode "${mode}" doesn't take in value argument`);
  }
  if (dims > 3 || self.ndim < dims + 1 || self.ndim > dims + 2) {
    throw new RuntimeError(
      `Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now`,
    );
  }
  let x = self;
  for (let i = 0; i < dims; i++) {
    const d = self.ndim - 1 - i, n = x.shape[d];
    const left = padding[2 * i], right = padding[2 * i + 1];
    if (mode === 'reflect' && (left >= n || right >= n)) {
      throw new RuntimeError(
        `Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ` +
          `(${left}, ${right}) at dimension ${d} of input ${list(self.shape)}`,
      );
    }
    if (mode === 'replicate' && n === 0) {
      throw new RuntimeError(`replication_pad: input dimension ${d} is empty`);
    }
    x = temps.track(x.indexSelect(d, padIndex(n, left, right, mode, x, temps)));
  }
  return x === self ? self.clone() : temps.keep(x);
}

/**
 * `one_hot(self, num_classes)`: int64 one-hot vectors along a new last dim (`num_classes` -1: the largest index
 * plus one).
 *
 * @example
 * ```ts
 * import { oneHot, tensor } from '../../mod.ts';
 * oneHot(tensor([0, 2])).tolist(); // [[1, 0, 0], [0, 0, 1]]
 * ```
 */
export function oneHot(self: Tensor, numClasses: number): Tensor {
  if (self.dtype !== int64) throw new RuntimeError('one_hot is only applicable to index tensor.');
  using temps = new Temporaries();
  if (self.numel === 0) {
    if (numClasses <= 0) throw new RuntimeError('Can not infer total number of classes from empty tensor.');
  } else {
    const lo = Number(temps.track(self.min()).item());
    if (lo < 0) throw new RuntimeError('Class values must be non-negative.');
    const hi = Number(temps.track(self.max()).item());
    if (numClasses === -1) numClasses = hi + 1;
    else if (hi >= numClasses) throw new RuntimeError('Class values must be smaller than num_classes.');
  }
  const classes = temps.track(arange(numClasses, self));
  const hit = temps.track(temps.track(self.unsqueeze(-1)).eq(classes));
  return aten('to', 'dtype').call(hit, int64, false, false, null) as Tensor;
}
