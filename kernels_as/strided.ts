// The strided N-d iteration descriptor shared by every `*_strided` kernel.
//
// Note [Strided descriptor]: at byte offset `desc` lie i32 words
//   [ndim, size_0 .. size_{ndim-1}, strides of operand 0 (ndim words), strides of operand 1, ...]
// with operands in the kernel's argument order (out first), sizes and strides in ELEMENTS, the innermost
// dimension last, and broadcast operands given stride 0. The TypeScript side coalesces dimensions first (as
// TensorIterator does), so ndim is small; ndim 0 means a single element.
//
// Iteration walks "rows" along the innermost dimension: the outer dimensions except the second-innermost are
// decomposed by div/mod once per block, the second-innermost runs as a plain loop, and each row is handed to a
// row kernel with byte strides. So the div/mod cost is paid once per (size_{ndim-2} * size_{ndim-1}) elements.
//
// The row offsets travel in module globals: wasm globals belong to one instance, and every worker that shares
// the memory has its own instance, so they are per-thread scratch, unlike anything stored in memory.

import { MAX_DIMS } from './common';

/** Element offset of the current block in operands 0..3, set by `blockOffsets`. */
export let blockOff0: isize = 0;
export let blockOff1: isize = 0;
export let blockOff2: isize = 0;
export let blockOff3: isize = 0;

/** Number of dimensions, or -1 when the descriptor is malformed (ndim outside 0..MAX_DIMS or a negative size). */
export function descNdim(desc: usize): i32 {
  const ndim = load<i32>(desc);
  if (ndim < 0 || ndim > MAX_DIMS) return -1;
  for (let d = 0; d < ndim; d++) {
    if (load<i32>(desc + 4 + (<usize>d << 2)) < 0) return -1;
  }
  return ndim;
}

/** Size of dimension `d` (caller guarantees 0 <= d < ndim). */
// @ts-ignore: decorator
@inline
export function descSize(desc: usize, d: i32): i32 {
  return load<i32>(desc + 4 + (<usize>d << 2));
}

/** Stride (elements) of operand `k` along dimension `d`. */
// @ts-ignore: decorator
@inline
export function descStride(desc: usize, ndim: i32, k: i32, d: i32): isize {
  return <isize>load<i32>(desc + 4 + (<usize>(ndim + k * ndim + d) << 2));
}

/** Length of a row: the innermost size, or 1 for ndim 0. */
// @ts-ignore: decorator
@inline
export function innerSize(desc: usize, ndim: i32): i32 {
  return ndim == 0 ? 1 : descSize(desc, ndim - 1);
}

/** Stride of operand k along the innermost dimension (0 for ndim 0). */
// @ts-ignore: decorator
@inline
export function innerStride(desc: usize, ndim: i32, k: i32): isize {
  return ndim == 0 ? 0 : descStride(desc, ndim, k, ndim - 1);
}

/** Rows per block: the second-innermost size, or 1 when ndim < 2. */
// @ts-ignore: decorator
@inline
export function midSize(desc: usize, ndim: i32): i32 {
  return ndim < 2 ? 1 : descSize(desc, ndim - 2);
}

/** Stride of operand k along the second-innermost dimension (0 when ndim < 2). */
// @ts-ignore: decorator
@inline
export function midStride(desc: usize, ndim: i32, k: i32): isize {
  return ndim < 2 ? 0 : descStride(desc, ndim, k, ndim - 2);
}

/** Number of blocks: the product of the sizes outside the two innermost dimensions (0 if any size is 0). */
export function blockCount(desc: usize, ndim: i32): i32 {
  let count: i32 = 1;
  for (let d = 0; d < ndim; d++) {
    const size = descSize(desc, d);
    if (size == 0) return 0;
    if (d < ndim - 2) count *= size;
  }
  return count;
}

/** Sets blockOff0..3 to the element offsets of block `block` for the first `nops` operands. */
export function blockOffsets(desc: usize, ndim: i32, nops: i32, block: i32): void {
  let o0: isize = 0, o1: isize = 0, o2: isize = 0, o3: isize = 0;
  let rest = block;
  for (let d = ndim - 3; d >= 0; d--) {
    const size = descSize(desc, d);
    const idx = <isize>(rest % size);
    rest /= size;
    o0 += idx * descStride(desc, ndim, 0, d);
    if (nops > 1) o1 += idx * descStride(desc, ndim, 1, d);
    if (nops > 2) o2 += idx * descStride(desc, ndim, 2, d);
    if (nops > 3) o3 += idx * descStride(desc, ndim, 3, d);
  }
  blockOff0 = o0;
  blockOff1 = o1;
  blockOff2 = o2;
  blockOff3 = o3;
}
