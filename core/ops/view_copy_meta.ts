/**
 * Meta functions of the operators that move data (`clone`, `copy_`, `_to_copy`, `cat`, `flip`): PyTorch's
 * argument checks and messages, and the result's shape and dtype. The Meta backend runs them alone; CPU
 * kernels run them first.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { broadcastShapes, wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { checkLayout } from './decl_factories.ts';
import { resultTypeOf } from './meta_elementwise.ts';
import type { TensorMeta } from './op_decl.ts';
import { sameList } from './view_geometry.ts';
import { copyStrides, memoryFormatOf } from './view_layout.ts';

const META_COPY_OUT = 'Cannot copy out of meta tensor; no data!';

/**
 * Meta function of `clone`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { cloneMeta } from './view_copy_meta.ts';
 * cloneMeta(tensor([1, 2]), null).shape; // [2]
 * ```
 */
export function cloneMeta(self: Tensor, memoryFormat: unknown): TensorMeta {
  self.assertAlive('clone');
  memoryFormatOf(memoryFormat);
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * Meta function of `copy_`: `src` must broadcast to `self`'s shape; nothing is copied out of a meta
 * tensor into a real one.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { copyMeta } from './view_copy_meta.ts';
 * copyMeta(tensor([[1, 2]]), tensor([3]), false).shape; // [1, 2]
 * ```
 */
export function copyMeta(self: Tensor, src: Tensor, _nonBlocking: boolean): TensorMeta {
  self.assertAlive('copy_');
  src.assertAlive('copy_');
  if (src.device.type === 'meta' && self.device.type !== 'meta') throw new NotImplementedError(META_COPY_OUT);
  const shape = broadcastShapes(self.shape, src.shape);
  if (!sameList(shape, self.shape)) {
    throw new RuntimeError(
      `output with shape [${self.shape.join(', ')}] doesn't match the broadcast shape [${shape.join(', ')}]`,
    );
  }
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * Meta function of `_to_copy`: a copy with a new dtype and/or device.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { toCopyMeta } from './view_copy_meta.ts';
 * import { float64 } from '../tensor/dtype.ts';
 * toCopyMeta(tensor([1]), float64, null, null, null, false, null).dtype; // float64
 * ```
 */
export function toCopyMeta(
  self: Tensor,
  dtype: DType | null,
  layout: number | string | null,
  device: Device | null,
  _pinMemory: boolean | null,
  _nonBlocking: boolean,
  memoryFormat: unknown,
): TensorMeta {
  self.assertAlive('_to_copy');
  checkLayout(layout);
  memoryFormatOf(memoryFormat);
  if (self.device.type === 'meta' && device !== null && device.type !== 'meta') {
    throw new NotImplementedError(META_COPY_OUT);
  }
  return { shape: self.shape, dtype: dtype ?? self.dtype };
}

/**
 * Whether `cat` skips a tensor: PyTorch's legacy rule for 1-d empty tensors (shape `[0]`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { catSkips } from './view_copy_meta.ts';
 * catSkips(tensor([])); // true
 * ```
 */
export function catSkips(t: Tensor): boolean {
  return t.ndim === 1 && t.shape[0] === 0;
}

/**
 * The dim `cat` concatenates along, wrapped against the first tensor it does not skip.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { catDim } from './view_copy_meta.ts';
 * catDim([tensor([]), tensor([[1]])], -1); // 1
 * ```
 */
export function catDim(tensors: readonly Tensor[], dim: number): number {
  for (const t of tensors) if (!catSkips(t)) return wrapDim(dim, t.ndim);
  return dim;
}

/**
 * Meta function of `cat`: same sizes except along `dim`, promoted dtype; `[0]`-shaped tensors skipped.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { catMeta } from './view_copy_meta.ts';
 * catMeta([tensor([[1]]), tensor([[2.5]])], 0); // { shape: [2, 1], dtype: float32 }
 * ```
 */
export function catMeta(tensors: readonly Tensor[], dim: number): TensorMeta {
  tensors.forEach((t, i) => {
    t.assertAlive('cat');
    if (t.ndim === 0) throw new RuntimeError(`zero-dimensional tensor (at position ${i}) cannot be concatenated`);
  });
  const d = catDim(tensors, dim);
  if (tensors.length === 0) throw new RuntimeError('torch.cat(): expected a non-empty list of Tensors');
  const dtype = resultTypeOf(tensors);
  const valid = tensors.findIndex((t) => !catSkips(t));
  if (valid < 0) return { shape: [0], dtype };
  const first = tensors[valid].shape;
  let total = 0;
  tensors.forEach((t, i) => {
    if (catSkips(t)) return;
    if (t.ndim !== first.length) {
      throw new RuntimeError(`Tensors must have same number of dimensions: got ${first.length} and ${t.ndim}`);
    }
    for (let k = 0; k < first.length; k++) {
      if (k !== d && t.shape[k] !== first[k]) {
        throw new RuntimeError(
          `Sizes of tensors must match except in dimension ${d}. Expected size ${first[k]} but got size ` +
            `${t.shape[k]} for tensor number ${i} in the list.`,
        );
      }
    }
    total += t.shape[d];
  });
  const shape = [...first];
  shape[d] = total;
  return { shape, dtype };
}

/**
 * The dims `flip` reverses, wrapped; PyTorch's error for a repeated dim.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { flipDims } from './view_copy_meta.ts';
 * flipDims(tensor([[1, 2]]), [-1]); // [1]
 * ```
 */
export function flipDims(self: Tensor, dims: readonly number[]): number[] {
  const out: number[] = [];
  for (const dim of dims) {
    const d = wrapDim(dim, self.ndim);
    if (out.includes(d)) throw new RuntimeError(`dim ${d} appears multiple times in the list of dims`);
    out.push(d);
  }
  return out;
}

/**
 * Meta function of `flip`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { flipMeta } from './view_copy_meta.ts';
 * flipMeta(tensor([1, 2]), [0]).shape; // [2]
 * ```
 */
export function flipMeta(self: Tensor, dims: readonly number[]): TensorMeta {
  self.assertAlive('flip');
  flipDims(self, dims);
  // PyTorch's empty_like(self, preserve_format).
  return { shape: self.shape, dtype: self.dtype, strides: copyStrides(self.shape, self.stride(), 'preserve') };
}
