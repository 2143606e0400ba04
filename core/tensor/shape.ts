/**
 * Shape and stride arithmetic: contiguous strides, broadcasting, dimension wrapping, view strides and
 * `-1` inference, with PyTorch's error messages.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';

/** Product of the sizes (1 for a 0-d shape). */
export function numelOf(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}

/**
 * Row-major strides for a shape, in elements.
 *
 * @example
 * ```ts
 * import { contiguousStrides } from './shape.ts';
 * contiguousStrides([2, 3, 4]); // [12, 4, 1]
 * ```
 */
export function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= Math.max(shape[i], 1);
  }
  return strides;
}

/** Whether sizes and strides describe a row-major dense layout (size-1 dims may have any stride). */
export function isContiguousLayout(shape: readonly number[], strides: readonly number[]): boolean {
  let expected = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    if (shape[i] === 0) return true;
    if (shape[i] !== 1) {
      if (strides[i] !== expected) return false;
      expected *= shape[i];
    }
  }
  return true;
}

/**
 * Wraps a possibly negative dimension index (PyTorch's `maybe_wrap_dim`).
 *
 * @throws {RangeError} `Dimension out of range (expected to be in range of [-2, 1], but got 2)`.
 * @example
 * ```ts
 * import { wrapDim } from './shape.ts';
 * wrapDim(-1, 3); // 2
 * ```
 */
export function wrapDim(dim: number, ndim: number, scalarOk = true): number {
  let n = ndim;
  if (n <= 0) {
    if (!scalarOk) throw new RangeError(`dimension specified as ${dim} but tensor has no dimensions`);
    n = 1; // a 0-d tensor accepts dims -1 and 0
  }
  if (!Number.isInteger(dim) || dim < -n || dim >= n) {
    throw new RangeError(`Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${dim})`);
  }
  return dim < 0 ? dim + n : dim;
}

/**
 * The broadcast shape of two shapes (PyTorch's `infer_size`).
 *
 * @throws {Error} `The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1`.
 * @example
 * ```ts
 * import { broadcastShapes } from './shape.ts';
 * broadcastShapes([3, 1], [4]); // [3, 4]
 * ```
 */
export function broadcastShapes(a: readonly number[], b: readonly number[]): number[] {
  const n = Math.max(a.length, b.length);
  const out = new Array<number>(n);
  for (let i = n - 1; i >= 0; i--) {
    const offset = n - 1 - i;
    const da = a.length - 1 - offset, db = b.length - 1 - offset;
    const sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
    if (sa !== sb && sa !== 1 && sb !== 1) {
      throw new RuntimeError(
        `The size of tensor a (${sa}) must match the size of tensor b (${sb}) at non-singleton dimension ${i}`,
      );
    }
    out[i] = sa === 1 ? sb : sa;
  }
  return out;
}

/** Strides that make a tensor of `shape`/`strides` read as `target` (0 for broadcast dims). */
export function expandStrides(
  shape: readonly number[],
  strides: readonly number[],
  target: readonly number[],
): number[] {
  const out = new Array<number>(target.length).fill(0);
  const offset = target.length - shape.length;
  if (offset < 0) {
    throw new RuntimeError(
      `The expanded size of the tensor (${target.length}) must be greater or equal to the number of dimensions ` +
        `in the tensor (${shape.length})`,
    );
  }
  for (let i = 0; i < shape.length; i++) {
    const size = shape[i], want = target[i + offset];
    if (size === want) out[i + offset] = strides[i];
    else if (size === 1) out[i + offset] = 0;
    else {
      throw new RuntimeError(
        `The expanded size of the tensor (${want}) must match the existing size (${size}) at non-singleton ` +
          `dimension ${i + offset}.  Target sizes: [${target.join(', ')}].  Tensor sizes: [${shape.join(', ')}]`,
      );
    }
  }
  return out;
}

/**
 * Resolves a `-1` in a requested shape (PyTorch's `infer_size` for view/reshape).
 *
 * @throws {Error} `shape '[2, -1]' is invalid for input of size 7`.
 */
export function inferViewShape(shape: readonly number[], numel: number): number[] {
  let inferred = -1;
  let product = 1;
  for (let i = 0; i < shape.length; i++) {
    const s = shape[i];
    if (s === -1) {
      if (inferred >= 0) throw new RuntimeError('only one dimension can be inferred');
      inferred = i;
    } else if (!Number.isInteger(s) || s < 0) {
      throw new RuntimeError(`invalid shape dimension ${s}`);
    } else {
      product *= s;
    }
  }
  const out = [...shape];
  if (inferred >= 0) {
    if (product === 0 || numel % product !== 0) {
      if (product === 0) {
        throw new RuntimeError(
          `cannot reshape tensor of ${numel} elements into shape [${
            shape.join(', ')
          }] because the unspecified dimension size -1 can be any value and is ambiguous`,
        );
      }
      throw new RuntimeError(`shape '[${shape.join(', ')}]' is invalid for input of size ${numel}`);
    }
    out[inferred] = numel / product;
  } else if (product !== numel) {
    throw new RuntimeError(`shape '[${shape.join(', ')}]' is invalid for input of size ${numel}`);
  }
  return out;
}

/**
 * Strides for viewing a strided tensor with a new shape without copying (PyTorch's `computeStride`), or
 * undefined when the layout does not allow it (then `view` fails and `reshape` copies).
 */
export function viewStrides(
  oldShape: readonly number[],
  oldStrides: readonly number[],
  newShape: readonly number[],
): number[] | undefined {
  const numel = numelOf(oldShape);
  if (numel === 0) return contiguousStrides(newShape);
  const newStrides = new Array<number>(newShape.length);
  let viewD = newShape.length - 1;
  // chunkBase is the stride of the last dim of the current contiguous chunk of the old tensor.
  let chunkBase = oldStrides[oldStrides.length - 1] ?? 1;
  let tensorNumel = 1;
  let viewNumel = 1;
  for (let d = oldShape.length - 1; d >= 0; d--) {
    tensorNumel *= oldShape[d];
    if (d === 0 || (oldShape[d - 1] !== 1 && oldStrides[d - 1] !== tensorNumel * chunkBase)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] === 1)) {
        newStrides[viewD] = viewNumel * chunkBase;
        viewNumel *= newShape[viewD];
        viewD--;
      }
      if (viewNumel !== tensorNumel) return undefined;
      if (d > 0) {
        chunkBase = oldStrides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD !== -1) return undefined;
  return newStrides;
}

/**
 * Merges adjacent dimensions that are contiguous in every operand (TensorIterator's coalescing), so kernels
 * loop over as few dimensions as possible. `strides[k]` are operand k's strides; returns the new shape and
 * strides. Size-1 dimensions are dropped.
 */
export function coalesceDims(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    const last = outShape.length - 1;
    // Dimension d merges into the previous kept one when, for every operand, stepping the previous dim
    // once equals stepping d shape[d] times.
    if (last >= 0 && strides.every((s, k) => outStrides[k][last] === s[d] * shape[d])) {
      outShape[last] *= shape[d];
      for (let k = 0; k < strides.length; k++) outStrides[k][last] = strides[k][d];
    } else {
      outShape.push(shape[d]);
      for (let k = 0; k < strides.length; k++) outStrides[k].push(strides[k][d]);
    }
  }
  return { shape: outShape, strides: outStrides };
}
