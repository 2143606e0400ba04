/**
 * Geometry of the view operators: the sizes, strides and storage offset each one gives, with PyTorch's
 * checks and messages (aten/src/ATen/native/TensorShape.cpp). Pure functions: no tensors are made here.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { DType } from '../tensor/dtype.ts';
import { inferViewShape, numelOf, viewStrides, wrapDim } from '../tensor/shape.ts';
import { storageNbytes } from './view_layout.ts';

// The layout rules of copies moved to view_layout.ts; re-exported for the modules that import them from here.
export {
  copyStrides,
  inferDenseStrides,
  isNonOverlappingAndDense,
  type MemoryFormat,
  memoryFormatOf,
  storageNbytes,
} from './view_layout.ts';

/** Sizes, strides (elements) and storage offset (elements) of a strided tensor. */
export interface Geometry {
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
}

const list = (xs: readonly number[]) => `[${xs.join(', ')}]`;

/**
 * The geometry of `view(size)`: `-1` inferred, strides from PyTorch's `computeStride`.
 *
 * @example
 * ```ts
 * import { viewGeometry } from './view_geometry.ts';
 * viewGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, [-1]).shape; // [6]
 * ```
 */
export function viewGeometry(g: Geometry, size: readonly number[]): Geometry {
  const shape = inferViewShape(size, numelOf(g.shape));
  const strides = computeStride(g.shape, g.strides, shape);
  if (strides === undefined) {
    throw new RuntimeError(
      "view size is not compatible with input tensor's size and stride (at least one dimension spans across two " +
        'contiguous subspaces). Use .reshape(...) instead.',
    );
  }
  return { shape, strides, offset: g.offset };
}

/**
 * PyTorch's `computeStride`: strides viewing `oldShape`/`oldStrides` as `newShape`, or undefined.
 *
 * @example
 * ```ts
 * import { computeStride } from './view_geometry.ts';
 * computeStride([3, 4], [1, 3], [12]); // undefined: a transposed layout cannot be flattened in place
 * ```
 */
export function computeStride(
  oldShape: readonly number[],
  oldStrides: readonly number[],
  newShape: readonly number[],
): number[] | undefined {
  if (oldShape.length === 0) return newShape.map(() => 1);
  // With no elements any stride works: keep the old ones when the shape is unchanged, as NumPy does.
  if (numelOf(oldShape) === 0 && sameList(oldShape, newShape)) return [...oldStrides];
  return viewStrides(oldShape, oldStrides, newShape);
}

/**
 * Whether two int lists are equal.
 *
 * @example
 * ```ts
 * import { sameList } from './view_geometry.ts';
 * sameList([2, 3], [2, 3]); // true
 * ```
 */
export function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * The geometry of `permute(dims)`.
 *
 * @example
 * ```ts
 * import { permuteGeometry } from './view_geometry.ts';
 * permuteGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, [1, 0]).strides; // [1, 3]
 * ```
 */
export function permuteGeometry(g: Geometry, dims: readonly number[]): Geometry {
  const n = g.shape.length;
  if (dims.length !== n) {
    // PyTorch 1.13's wording, "(sparse_coo)" included, although the tensor is dense.
    throw new RuntimeError(
      'permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ' +
        `ordering of dimensions i.e. input.dim() = ${n} is not equal to len(dims) = ${dims.length}`,
    );
  }
  const seen = new Array<boolean>(n).fill(false);
  const shape: number[] = [], strides: number[] = [];
  for (const d of dims) {
    const dim = wrapDim(d, n);
    if (seen[dim]) throw new RuntimeError('permute(): duplicate dims are not allowed.');
    seen[dim] = true;
    shape.push(g.shape[dim]);
    strides.push(g.strides[dim]);
  }
  return { shape, strides, offset: g.offset };
}

/**
 * The geometry of `transpose(dim0, dim1)`.
 *
 * @example
 * ```ts
 * import { transposeGeometry } from './view_geometry.ts';
 * transposeGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, 0, -1).shape; // [3, 2]
 * ```
 */
export function transposeGeometry(g: Geometry, dim0: number, dim1: number): Geometry {
  const n = g.shape.length;
  const a = wrapDim(dim0, n), b = wrapDim(dim1, n);
  const shape = [...g.shape], strides = [...g.strides];
  if (n > 0) {
    [shape[a], shape[b]] = [shape[b], shape[a]];
    [strides[a], strides[b]] = [strides[b], strides[a]];
  }
  return { shape, strides, offset: g.offset };
}

/**
 * The geometry of `t()`: transposes a 2-d tensor, leaves 0-d and 1-d ones as they are.
 *
 * @example
 * ```ts
 * import { tGeometry } from './view_geometry.ts';
 * tGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }).shape; // [3, 2]
 * ```
 */
export function tGeometry(g: Geometry): Geometry {
  const n = g.shape.length;
  if (n > 2) throw new RuntimeError(`t() expects a tensor with <= 2 dimensions, but self is ${n}D`);
  return transposeGeometry(g, 0, n < 2 ? 0 : 1);
}

/**
 * The geometry of `squeeze()` (every size-1 dim) or `squeeze(dim)` (that dim, if its size is 1).
 *
 * @example
 * ```ts
 * import { squeezeGeometry } from './view_geometry.ts';
 * squeezeGeometry({ shape: [1, 3], strides: [3, 1], offset: 0 }).shape; // [3]
 * ```
 */
export function squeezeGeometry(g: Geometry, dim?: number): Geometry {
  const n = g.shape.length;
  const only = dim === undefined ? -1 : wrapDim(dim, n);
  const shape: number[] = [], strides: number[] = [];
  for (let d = 0; d < n; d++) {
    if (g.shape[d] === 1 && (only < 0 || d === only)) continue;
    shape.push(g.shape[d]);
    strides.push(g.strides[d]);
  }
  return { shape, strides, offset: g.offset };
}

/**
 * The geometry of `unsqueeze(dim)`: a size-1 dim whose stride keeps the tensor contiguous if it was.
 *
 * @example
 * ```ts
 * import { unsqueezeGeometry } from './view_geometry.ts';
 * unsqueezeGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, 1).strides; // [3, 3, 1]
 * ```
 */
export function unsqueezeGeometry(g: Geometry, dim: number): Geometry {
  const n = g.shape.length;
  const d = wrapDim(dim, n + 1);
  const stride = d >= n ? 1 : g.shape[d] * g.strides[d];
  const shape = [...g.shape], strides = [...g.strides];
  shape.splice(d, 0, 1);
  strides.splice(d, 0, stride);
  return { shape, strides, offset: g.offset };
}

/**
 * PyTorch's legacy type string of a tensor in messages (`torch.FloatTensor`, `CPUBoolType`, `MetaFloatType`).
 *
 * @example
 * ```ts
 * import { legacyTypeString } from './view_geometry.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * legacyTypeString(float32, 'cpu'); // 'torch.FloatTensor'
 * ```
 */
export function legacyTypeString(dtype: DType, device: string): string {
  if (device !== 'cpu') return `${device[0].toUpperCase()}${device.slice(1)}${dtype.scalarTypeName}Type`;
  // The legacy `torch.*Tensor` names exist only for the dtypes that predate bool and bfloat16.
  if (dtype.name === 'bool' || dtype.name === 'bfloat16') return `CPU${dtype.scalarTypeName}Type`;
  return `torch.${dtype.scalarTypeName}Tensor`;
}

/**
 * The geometry of `expand(size)` (PyTorch's `inferExpandGeometry`); `-1` keeps a size.
 *
 * @example
 * ```ts
 * import { expandGeometry } from './view_geometry.ts';
 * expandGeometry({ shape: [3, 1], strides: [1, 1], offset: 0 }, [2, -1, 4], 'torch.FloatTensor').strides; // [0, 1, 0]
 * ```
 */
export function expandGeometry(g: Geometry, size: readonly number[], typeString: string): Geometry {
  const n = size.length, tensorDims = g.shape.length;
  if (n < tensorDims) {
    throw new RuntimeError(
      `expand(${typeString}{${list(g.shape)}}, size=${list(size)}): the number of sizes provided (${n}) must be ` +
        `greater or equal to the number of dimensions in the tensor (${tensorDims})`,
    );
  }
  const shape = new Array<number>(n), strides = new Array<number>(n);
  for (let i = n - 1; i >= 0; i--) {
    const dim = tensorDims - n + i;
    let s = dim >= 0 ? g.shape[dim] : 1;
    // A new leading dim continues the layout outward (PyTorch reads 0 past the innermost dim).
    let stride = dim >= 0 ? g.strides[dim] : i + 1 < n ? shape[i + 1] * strides[i + 1] : 0;
    let target = size[i];
    if (target === -1) {
      if (dim < 0) {
        throw new RuntimeError(
          `The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ${i}`,
        );
      }
      target = s;
    }
    if (s !== target) {
      if (s !== 1) {
        throw new RuntimeError(
          `The expanded size of the tensor (${target}) must match the existing size (${s}) at non-singleton ` +
            `dimension ${i}.  Target sizes: ${list(size)}.  Tensor sizes: ${list(g.shape)}`,
        );
      }
      s = target;
      stride = 0;
    }
    if (!Number.isInteger(s) || s < 0) {
      throw new RuntimeError(`Trying to create tensor with negative dimension ${s}: ${list(size)}`);
    }
    shape[i] = s;
    strides[i] = stride;
  }
  return { shape, strides, offset: g.offset };
}

/**
 * The geometry of `slice(dim, start, end, step)`: start and end clamped to the dim as PyTorch does.
 *
 * @example
 * ```ts
 * import { sliceGeometry } from './view_geometry.ts';
 * sliceGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, 1, -2, 100, 1).offset; // 1
 * ```
 */
export function sliceGeometry(
  g: Geometry,
  dim: number,
  start: number | null,
  end: number | null,
  step: number,
): Geometry {
  const n = g.shape.length;
  if (n === 0) throw new RangeError('slice() cannot be applied to a 0-dim tensor.');
  const d = wrapDim(dim, n);
  if (!(step > 0)) throw new RuntimeError('slice step must be positive');
  const size = g.shape[d];
  let lo = start ?? 0, hi = end ?? Infinity;
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = lo < 0 ? 0 : Math.min(lo, size);
  hi = hi < lo ? lo : Math.min(hi, size);
  const shape = [...g.shape], strides = [...g.strides];
  shape[d] = Math.ceil((hi - lo) / step);
  strides[d] *= step;
  return { shape, strides, offset: g.offset + lo * g.strides[d] };
}

/**
 * Checks `narrow(dim, start, length)` as PyTorch does and returns the wrapped start (`start == size` is valid
 * for length 0, but is not an index to wrap).
 *
 * @example
 * ```ts
 * import { narrowStart } from './view_geometry.ts';
 * narrowStart([2, 3], 1, -1, 1); // 2
 * ```
 */
export function narrowStart(shape: readonly number[], dim: number, start: number, length: number): number {
  if (shape.length === 0) throw new RuntimeError('narrow() cannot be applied to a 0-dim tensor.');
  const size = shape[wrapDim(dim, shape.length)];
  const s = start === size ? start : wrapDim(start, size);
  if (!(length >= 0 && s <= size - length)) {
    throw new RuntimeError(`start (${s}) + length (${length}) exceeds dimension size (${size}).`);
  }
  return s;
}

/**
 * The geometry of `select(dim, index)`.
 *
 * @example
 * ```ts
 * import { selectGeometry } from './view_geometry.ts';
 * selectGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, 0, -1).offset; // 3
 * ```
 */
export function selectGeometry(g: Geometry, dim: number, index: number): Geometry {
  const n = g.shape.length;
  if (n === 0) throw new RangeError('select() cannot be applied to a 0-dim tensor.');
  const d = wrapDim(dim, n);
  const size = g.shape[d];
  if (!Number.isInteger(index) || index < -size || index >= size) {
    throw new RangeError(`select(): index ${index} out of range for tensor of size ${list(g.shape)} at dimension ${d}`);
  }
  const i = index < 0 ? index + size : index;
  const shape = [...g.shape], strides = [...g.strides];
  shape.splice(d, 1);
  strides.splice(d, 1);
  return { shape, strides, offset: g.offset + i * g.strides[d] };
}

/**
 * The geometry of `diagonal(offset, dim1, dim2)`: the diagonal becomes the last dim.
 *
 * @example
 * ```ts
 * import { diagonalGeometry } from './view_geometry.ts';
 * diagonalGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, 1, 0, 1).shape; // [2]
 * ```
 */
export function diagonalGeometry(g: Geometry, offset: number, dim1: number, dim2: number): Geometry {
  const n = g.shape.length;
  const a = wrapDim(dim1, n), b = wrapDim(dim2, n);
  if (a === b) throw new RuntimeError(`diagonal dimensions cannot be identical ${dim1}, ${dim2}`);
  const diag = offset >= 0
    ? Math.max(Math.min(g.shape[a], g.shape[b] - offset), 0)
    : Math.max(Math.min(g.shape[a] + offset, g.shape[b]), 0);
  let start = g.offset;
  if (diag > 0) start += offset >= 0 ? offset * g.strides[b] : -offset * g.strides[a];
  const shape = g.shape.filter((_, d) => d !== a && d !== b);
  const strides = g.strides.filter((_, d) => d !== a && d !== b);
  shape.push(diag);
  strides.push(g.strides[a] + g.strides[b]);
  return { shape, strides, offset: start };
}

/**
 * The geometry of `as_strided(size, stride, storage_offset)`, checked against the storage's size in bytes
 * (`storageBytes` undefined skips that check: meta storages hold no bytes here).
 *
 * @example
 * ```ts
 * import { asStridedGeometry } from './view_geometry.ts';
 * asStridedGeometry({ shape: [6], strides: [1], offset: 0 }, [2, 2], [1, 2], 1, 4, 24).offset; // 1
 * ```
 */
export function asStridedGeometry(
  g: Geometry,
  size: readonly number[],
  stride: readonly number[],
  storageOffset: number | null,
  itemSize: number,
  storageBytes: number | undefined,
): Geometry {
  const offset = storageOffset ?? g.offset;
  if (size.length !== stride.length) throw new RuntimeError('mismatch in length of strides and shape');
  if (stride.some((s) => s < 0)) {
    throw new RuntimeError(
      `as_strided: Negative strides are not supported at the moment, got strides: ${list(stride)}`,
    );
  }
  if (size.some((s) => s < 0)) {
    throw new RuntimeError(
      `Storage size calculation overflowed with sizes=${list(size)} and strides=${list(stride)}`,
    );
  }
  const needed = storageNbytes(size, stride, itemSize);
  if (storageBytes !== undefined && needed !== 0 && needed + offset * itemSize > storageBytes) {
    throw new RuntimeError(
      `setStorage: sizes ${list(size)}, strides ${list(stride)}, storage offset ${offset}, and itemsize ${itemSize} ` +
        `requiring a storage size of ${
          needed + offset * itemSize
        } are out of bounds for storage of size ${storageBytes}`,
    );
  }
  if (offset < 0) throw new RuntimeError(`Tensor: invalid storage offset ${offset}`);
  return { shape: [...size], strides: [...stride], offset };
}

/**
 * The geometries of `split_with_sizes(sizes, dim)`.
 *
 * @example
 * ```ts
 * import { splitWithSizesGeometry } from './view_geometry.ts';
 * splitWithSizesGeometry({ shape: [2, 3], strides: [3, 1], offset: 0 }, [1, 2], 1).map((g) => g.offset); // [0, 1]
 * ```
 */
export function splitWithSizesGeometry(g: Geometry, sizes: readonly number[], dim: number): Geometry[] {
  if (g.shape.length === 0) throw new RuntimeError('split expects at least a 1-dimensional tensor');
  const d = wrapDim(dim, g.shape.length);
  const out: Geometry[] = [];
  let start = 0;
  for (const length of sizes) {
    if (length < 0) {
      throw new RuntimeError(
        `split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=${list(sizes)}`,
      );
    }
    // A slice, not a narrow: sizes that overrun the dim reach the sum check below, as in PyTorch.
    out.push(sliceGeometry(g, d, start, start + length, 1));
    start += length;
  }
  if (start !== g.shape[d]) {
    throw new RuntimeError(
      `split_with_sizes expects split_sizes to sum exactly to ${
        g.shape[d]
      } (input tensor's size at dimension ${dim}), ` +
        `but got split_sizes=${list(sizes)}`,
    );
  }
  return out;
}

/**
 * The chunk lengths `split(split_size, dim)` makes along a dim of `size` elements.
 *
 * @example
 * ```ts
 * import { splitLengths } from './view_geometry.ts';
 * splitLengths(7, 3); // [3, 3, 1]
 * ```
 */
export function splitLengths(size: number, splitSize: number): number[] {
  if (splitSize < 0) {
    throw new RuntimeError(`split expects split_size be non-negative, but got split_size=${splitSize}`);
  }
  if (splitSize === 0 && size !== 0) {
    throw new RuntimeError(`split_size can only be 0 if dimension size is 0, but got dimension size of ${size}`);
  }
  const count = splitSize === 0 ? 1 : Math.max(Math.ceil(size / splitSize), 1);
  const lengths = new Array<number>(count).fill(splitSize);
  lengths[count - 1] = splitSize - (splitSize * count - size);
  return lengths;
}
