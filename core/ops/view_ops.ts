/**
 * Implementations of the view operators and of the layout/copy decompositions. Views
 * (`composite-explicit`) make a tensor over the same storage with new sizes, strides and offset, sharing
 * the version counter and recording `base`; they run unchanged on every backend, Meta included.
 * Decompositions (`composite-implicit`: `reshape`, `contiguous`, `to`, `stack`, ...) call other operators
 * through the dispatcher, so that every key (autograd, tracing) sees the operators they decompose into.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { inferViewShape, isContiguousLayout, numelOf, wrapDim } from '../tensor/shape.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten } from './aten_call.ts';
import {
  asStridedGeometry,
  computeStride,
  diagonalGeometry,
  expandGeometry,
  type Geometry,
  legacyTypeString,
  narrowStart,
  permuteGeometry,
  selectGeometry,
  sliceGeometry,
  splitLengths,
  splitWithSizesGeometry,
  squeezeGeometry,
  tGeometry,
  transposeGeometry,
  unsqueezeGeometry,
  viewGeometry,
} from './view_geometry.ts';
import { memoryFormatOf } from './view_layout.ts';

/**
 * The geometry of a tensor.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { geometryOf } from './view_ops.ts';
 * geometryOf(tensor([[1, 2], [3, 4]])).strides; // [2, 1]
 * ```
 */
export function geometryOf(t: Tensor): Geometry {
  return { shape: t.shape, strides: t.stride(), offset: t.storageOffset };
}

/**
 * A view of `self` with the given geometry: same storage (one more reference), same version counter, and
 * `base` set to the tensor that owns the data (views of views record the original).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { aliasWithGeometry } from './view_ops.ts';
 * const x = tensor([1, 2, 3, 4]);
 * const v = aliasWithGeometry(x, { shape: [2], strides: [2], offset: 1 }); // [2, 4]
 * ```
 */
export function aliasWithGeometry(self: Tensor, g: Geometry, op = 'view'): Tensor {
  self.assertAlive(op);
  self.storage.retain();
  return new Tensor({
    storage: self.storage,
    shape: g.shape,
    strides: g.strides,
    storageOffset: g.offset,
    dtype: self.dtype,
    version: self.versionCounter,
    base: self.base ?? self,
    inference: self.isInference,
  });
}

/** The geometry of `self`, which must not be disposed (`op` names the operator in the message). */
function live(self: Tensor, op: string): Geometry {
  self.assertAlive(op);
  return geometryOf(self);
}

/**
 * Implementations of the view operators (registered at CompositeExplicitAutograd).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { VIEW_IMPLS } from './view_ops.ts';
 * VIEW_IMPLS.permute(tensor([[1, 2], [3, 4]]), [1, 0]).stride(); // [1, 2]
 * ```
 */
export const VIEW_IMPLS = {
  view: (self: Tensor, size: readonly number[]) => aliasWithGeometry(self, viewGeometry(live(self, 'view'), size)),
  /**
   * `_unsafe_view`: a tensor over the same storage that autograd does not treat as a view (`reshape`
   * returns its copy this way): no `base`, its own version counter.
   */
  unsafeView(self: Tensor, size: readonly number[]): Tensor {
    const g = viewGeometry(live(self, '_unsafe_view'), size);
    self.storage.retain();
    return new Tensor({
      storage: self.storage,
      shape: g.shape,
      strides: g.strides,
      storageOffset: g.offset,
      dtype: self.dtype,
      inference: self.isInference,
    });
  },
  permute: (self: Tensor, dims: readonly number[]) =>
    aliasWithGeometry(self, permuteGeometry(live(self, 'permute'), dims)),
  transpose: (self: Tensor, dim0: number, dim1: number) =>
    aliasWithGeometry(self, transposeGeometry(live(self, 'transpose'), dim0, dim1)),
  t: (self: Tensor) => aliasWithGeometry(self, tGeometry(live(self, 't'))),
  squeeze: (self: Tensor) => aliasWithGeometry(self, squeezeGeometry(live(self, 'squeeze'))),
  squeezeDim: (self: Tensor, dim: number) => aliasWithGeometry(self, squeezeGeometry(live(self, 'squeeze'), dim)),
  unsqueeze: (self: Tensor, dim: number) => aliasWithGeometry(self, unsqueezeGeometry(live(self, 'unsqueeze'), dim)),
  expand: (self: Tensor, size: readonly number[], _implicit: boolean) =>
    aliasWithGeometry(
      self,
      expandGeometry(live(self, 'expand'), size, legacyTypeString(self.dtype, self.device.type)),
    ),
  select: (self: Tensor, dim: number, index: number) =>
    aliasWithGeometry(self, selectGeometry(live(self, 'select'), dim, index)),
  slice: (self: Tensor, dim: number, start: number | null, end: number | null, step: number) =>
    aliasWithGeometry(self, sliceGeometry(live(self, 'slice'), dim, start, end, step)),
  asStrided(self: Tensor, size: readonly number[], stride: readonly number[], offset: number | null): Tensor {
    const bytes = self.device.type === 'meta' ? undefined : self.storage.nbytes;
    const g = asStridedGeometry(live(self, 'as_strided'), size, stride, offset, self.dtype.itemSize, bytes);
    return aliasWithGeometry(self, g);
  },
  diagonal: (self: Tensor, offset: number, dim1: number, dim2: number) =>
    aliasWithGeometry(self, diagonalGeometry(live(self, 'diagonal'), offset, dim1, dim2)),
  split(self: Tensor, splitSize: number, dim: number): Tensor[] {
    self.assertAlive('split');
    if (self.ndim === 0) throw new RuntimeError('split expects at least a 1-dimensional tensor');
    const d = wrapDim(dim, self.ndim);
    return VIEW_IMPLS.splitWithSizes(self, splitLengths(self.shape[d], splitSize), d);
  },
  splitWithSizes(self: Tensor, sizes: readonly number[], dim: number): Tensor[] {
    self.assertAlive('split_with_sizes');
    return splitWithSizesGeometry(geometryOf(self), sizes, dim).map((g) => aliasWithGeometry(self, g));
  },
  unbind(self: Tensor, dim: number): Tensor[] {
    self.assertAlive('unbind');
    if (self.ndim === 0) throw new RangeError('Dimension specified as 0 but tensor has no dimensions');
    const d = wrapDim(dim, self.ndim);
    const g = geometryOf(self);
    return Array.from({ length: self.shape[d] }, (_, i) => aliasWithGeometry(self, selectGeometry(g, d, i)));
  },
};

/** Calls `aten::name` (`name` may carry an overload: `slice.Tensor`) through the dispatcher. */
function call<T = Tensor>(name: string, ...args: unknown[]): T {
  const dot = name.indexOf('.');
  const op = dot < 0 ? aten(name) : aten(name.slice(0, dot), name.slice(dot + 1));
  return op.call(...args) as T;
}

/** Whether `to` can return `self` itself (PyTorch's `to_will_alias`). */
function toWillAlias(self: Tensor, dtype: DType | null, device: Device | null, copy: boolean): boolean {
  // Every strided tensor suggests the contiguous format (no channels-last here), so both memory formats alias.
  return (dtype === null || dtype === self.dtype) && (device === null || device.equals(self.device)) && !copy;
}

/**
 * Implementations of the decompositions (registered at CompositeImplicitAutograd).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { DECOMPOSITION_IMPLS } from './view_ops.ts';
 * DECOMPOSITION_IMPLS.reshape(tensor([[1, 2], [3, 4]]).t(), [4]).isContiguous(); // true: a copy
 * ```
 */
export const DECOMPOSITION_IMPLS = {
  reshape(self: Tensor, shape: readonly number[]): Tensor {
    self.assertAlive('reshape');
    const inferred = inferViewShape(shape, numelOf(self.shape));
    if (computeStride(self.shape, self.stride(), inferred) !== undefined) return call('view', self, inferred);
    const copy = call('clone', self, 'contiguous_format');
    try {
      return call('_unsafe_view', copy, inferred);
    } finally {
      copy.dispose();
    }
  },
  flatten(self: Tensor, startDim: number, endDim: number): Tensor {
    self.assertAlive('flatten');
    const start = wrapDim(startDim, self.ndim), end = wrapDim(endDim, self.ndim);
    if (start > end) throw new RuntimeError('flatten() has invalid args: start_dim cannot come after end_dim');
    if (self.ndim === 0) return call('reshape', self, [1]);
    if (start === end) return self;
    const middle = numelOf(self.shape.slice(start, end + 1));
    return call('reshape', self, [...self.shape.slice(0, start), middle, ...self.shape.slice(end + 1)]);
  },
  unflatten(self: Tensor, dim: number, sizes: readonly number[]): Tensor {
    self.assertAlive('unflatten');
    const d = wrapDim(dim, self.ndim);
    if (sizes.length === 0) throw new RuntimeError('unflatten: sizes must be non-empty');
    let inferred: number[];
    try {
      inferred = inferViewShape(sizes, self.shape[d]);
    } catch {
      throw new RuntimeError(
        `unflatten: Provided sizes [${sizes.join(', ')}] don't multiply up to the size of dim ${d} ` +
          `(${self.shape[d]}) in the input tensor`,
      );
    }
    return call('view', self, [...self.shape.slice(0, d), ...inferred, ...self.shape.slice(d + 1)]);
  },
  expandAs: (self: Tensor, other: Tensor) => call('expand', self, other.shape, false),
  narrow(self: Tensor, dim: number, start: number, length: number): Tensor {
    self.assertAlive('narrow');
    const s = narrowStart(self.shape, dim, start, length);
    return call('slice.Tensor', self, dim, s, s + length, 1);
  },
  contiguous(self: Tensor, memoryFormat: unknown): Tensor {
    self.assertAlive('contiguous');
    if (memoryFormatOf(memoryFormat, 'contiguous') === 'preserve') {
      throw new RuntimeError('preserve memory format is unsupported by the contiguous operator');
    }
    return isContiguousLayout(self.shape, self.stride()) ? self : call('clone', self, 'contiguous_format');
  },
  toDtype(self: Tensor, dtype: DType, nonBlocking: boolean, copy: boolean, memoryFormat: unknown): Tensor {
    self.assertAlive('to');
    memoryFormatOf(memoryFormat);
    if (toWillAlias(self, dtype, null, copy)) return self;
    return call('_to_copy', self, dtype, null, null, null, nonBlocking, memoryFormat);
  },
  toDtypeLayout(
    self: Tensor,
    dtype: DType | null,
    layout: unknown,
    device: Device | null,
    pinMemory: boolean | null,
    nonBlocking: boolean,
    copy: boolean,
    memoryFormat: unknown,
  ): Tensor {
    self.assertAlive('to');
    memoryFormatOf(memoryFormat);
    if (toWillAlias(self, dtype, device, copy) && (layout === null || layout === 0 || layout === 'strided')) {
      return self;
    }
    return call('_to_copy', self, dtype, layout, device, pinMemory, nonBlocking, memoryFormat);
  },
  toOther(self: Tensor, other: Tensor, nonBlocking: boolean, copy: boolean, memoryFormat: unknown): Tensor {
    self.assertAlive('to');
    other.assertAlive('to');
    memoryFormatOf(memoryFormat);
    if (toWillAlias(self, other.dtype, other.device, copy)) return self;
    return call('_to_copy', self, other.dtype, null, other.device, null, nonBlocking, memoryFormat);
  },
  stack(tensors: readonly Tensor[], dim: number): Tensor {
    if (tensors.length === 0) throw new RuntimeError('stack expects a non-empty TensorList');
    const first = tensors[0].shape;
    const d = wrapDim(dim, first.length + 1);
    tensors.forEach((t, i) => {
      t.assertAlive('stack');
      if (t.shape.length !== first.length || t.shape.some((s, k) => s !== first[k])) {
        throw new RuntimeError(
          `stack expects each tensor to be equal size, but got [${first.join(', ')}] at entry 0 and ` +
            `[${t.shape.join(', ')}] at entry ${i}`,
        );
      }
    });
    const inputs: Tensor[] = [];
    try {
      for (const t of tensors) inputs.push(call('unsqueeze', t, d));
      return call('cat', inputs, dim);
    } finally {
      for (const t of inputs) t.dispose();
    }
  },
  chunk(self: Tensor, chunks: number, dim: number): Tensor[] {
    self.assertAlive('chunk');
    if (self.ndim === 0) throw new RuntimeError('chunk expects at least a 1-dimensional tensor');
    if (!(chunks > 0)) throw new RuntimeError(`chunk expects \`chunks\` to be greater than 0, got: ${chunks}`);
    const size = self.shape[wrapDim(dim, self.ndim)];
    const splitSize = Math.ceil(size / chunks);
    // split() would make one chunk of a size-0 dim; PyTorch keeps the number of chunks there.
    if (splitSize === 0 && size === 0) return call<Tensor[]>('split_with_sizes', self, new Array(chunks).fill(0), dim);
    return call<Tensor[]>('split.Tensor', self, splitSize, dim);
  },
  splitSizes: (self: Tensor, sizes: readonly number[], dim: number) =>
    call<Tensor[]>('split_with_sizes', self, sizes, dim),
};
