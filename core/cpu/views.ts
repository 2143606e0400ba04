/**
 * CPU kernels of the operators that move data: `clone`, `copy_`, `_to_copy`, `cat` and `flip`. All of them
 * end in `copyIntoCpu` (the wasm `copy_*`/`cast_*` kernels over strided views); the views they copy through
 * are temporaries over existing storage. Views themselves have no CPU kernel: they are composite.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { Storage } from '../tensor/storage.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import type { ViewBackendOpName } from '../ops/decl_views.ts';
import {
  catDim,
  catMeta,
  catSkips,
  cloneMeta,
  copyMeta,
  flipDims,
  flipMeta,
  toCopyMeta,
} from '../ops/view_copy_meta.ts';
import { type Geometry, sameList } from '../ops/view_geometry.ts';
import { copyStrides, isNonOverlappingAndDense, memoryFormatOf, storageNbytes } from '../ops/view_layout.ts';
import { aliasWithGeometry, geometryOf } from '../ops/view_ops.ts';
import { castCpu, copyIntoCpu, emptyCpu, hasInternalOverlap } from './iterator.ts';
import { aten } from '../ops/aten_call.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** A new tensor with the given strides over a fresh block of `device` memory (uninitialised on the CPU). */
function emptyStrided(shape: readonly number[], strides: readonly number[], dtype: DType, device: Device): Tensor {
  const storage = Storage.allocate(device, device.type === 'meta' ? 0 : storageNbytes(shape, strides, dtype.itemSize));
  return new Tensor({ storage, shape, strides, dtype });
}

/**
 * Copies between `other` and a temporary view (geometry `g`) of `viewed`'s storage: from the view when
 * `direction` is 'from', into it when 'into'.
 */
function copyThroughView(viewed: Tensor, g: Geometry, other: Tensor, direction: 'from' | 'into'): void {
  const view = aliasWithGeometry(viewed, g);
  try {
    if (direction === 'from') copyIntoCpu(other, view);
    else copyIntoCpu(view, other);
  } finally {
    view.dispose();
  }
}

function clone(_hi: number, _lo: number, self: Tensor, memoryFormat: unknown): Tensor {
  cloneMeta(self, memoryFormat);
  const strides = copyStrides(self.shape, self.stride(), memoryFormatOf(memoryFormat));
  return filledOrFreed(emptyStrided(self.shape, strides, self.dtype, Device.cpu), (out) => copyIntoCpu(out, self));
}

function toCopy(
  _hi: number,
  _lo: number,
  self: Tensor,
  dtype: DType | null,
  layout: number | string | null,
  device: Device | null,
  pinMemory: boolean | null,
  nonBlocking: boolean,
  memoryFormat: unknown,
): Tensor {
  const meta = toCopyMeta(self, dtype, layout, device, pinMemory, nonBlocking, memoryFormat);
  const target = device ?? self.device;
  const strides = copyStrides(self.shape, self.stride(), memoryFormatOf(memoryFormat));
  if (target.type === 'meta') return emptyStrided(meta.shape, strides, meta.dtype, Device.meta);
  if (target.type !== 'cpu') {
    // Another backend's copy_ takes the data over (the destination's key outranks CPU's in the dispatch).
    const out = aten('empty', 'memory_format').call(meta.shape, meta.dtype, null, target, null, null) as Tensor;
    return filledOrFreed(out, () => aten('copy_').call(out, self, false));
  }
  return filledOrFreed(emptyStrided(meta.shape, strides, meta.dtype, Device.cpu), (out) => copyIntoCpu(out, self));
}

/** How the memory of two tensors overlaps (PyTorch's `get_overlap_status`), plus whether their spans meet. */
function overlapOf(a: Tensor, b: Tensor): 'none' | 'full' | 'partial' | 'unknown' {
  if (a === b) return 'full';
  if (a.numel === 0 || b.numel === 0 || a.storage !== b.storage) return 'none';
  const [aStart, aEnd] = spanOf(a), [bStart, bEnd] = spanOf(b);
  const meet = aStart < bEnd && bStart < aEnd;
  if (!isNonOverlappingAndDense(a.shape, a.stride()) || !isNonOverlappingAndDense(b.shape, b.stride())) {
    return meet ? 'unknown' : 'none';
  }
  if (aStart === bStart && aEnd === bEnd) return sameList(a.stride(), b.stride()) ? 'full' : 'partial';
  return meet ? 'partial' : 'none';
}

/** Byte range [start, end) a tensor's elements occupy in its storage. */
function spanOf(t: Tensor): [number, number] {
  let lo = t.storageOffset, hi = t.storageOffset;
  const strides = t.stride();
  t.shape.forEach((s, d) => {
    if (strides[d] > 0) hi += strides[d] * (s - 1);
    else lo += strides[d] * (s - 1);
  });
  return [lo * t.dtype.itemSize, (hi + 1) * t.dtype.itemSize];
}

function copy(_hi: number, _lo: number, self: Tensor, src: Tensor, nonBlocking: boolean): Tensor {
  copyMeta(self, src, nonBlocking);
  if (self === src || self.numel === 0) return self;
  const sameData = self.storage === src.storage && self.storageOffset === src.storageOffset &&
    self.dtype === src.dtype && sameList(self.shape, src.shape) && sameList(self.stride(), src.stride());
  if (sameData) return self;
  if (hasInternalOverlap(self)) {
    throw new RuntimeError(
      'unsupported operation: more than one element of the written-to tensor refers to a single memory location. ' +
        'Please clone() the tensor before performing the operation.',
    );
  }
  const overlap = overlapOf(self, src);
  if (overlap === 'partial') {
    throw new RuntimeError(
      'unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory ' +
        'location. Please clone() the tensor before performing the operation.',
    );
  }
  if (overlap === 'unknown') {
    // PyTorch gives up on proving these safe and copies element by element, reading what it may already have
    // written; the wasm kernels assume no overlap, so read from a copy instead.
    const tmp = castCpu(src, src.dtype);
    try {
      copyIntoCpu(self, tmp);
    } finally {
      tmp.dispose();
    }
    return self;
  }
  copyIntoCpu(self, src);
  return self;
}

function cat(_hi: number, _lo: number, tensors: readonly Tensor[], dim: number): Tensor {
  const meta = catMeta(tensors, dim);
  const d = catDim(tensors, dim);
  return filledOrFreed(emptyCpu(meta.shape, meta.dtype), (out) => {
    const g = geometryOf(out);
    let start = 0;
    for (const t of tensors) {
      if (catSkips(t) || t.shape[d] === 0) continue;
      const shape = [...g.shape];
      shape[d] = t.shape[d];
      copyThroughView(out, { shape, strides: g.strides, offset: start * g.strides[d] }, t, 'into');
      start += t.shape[d];
    }
  });
}

function flip(_hi: number, _lo: number, self: Tensor, dims: readonly number[]): Tensor {
  flipMeta(self, dims);
  const strides = [...self.stride()];
  let offset = self.storageOffset;
  for (const d of flipDims(self, dims)) {
    if (self.ndim === 0 || self.shape[d] === 0) continue;
    offset += strides[d] * (self.shape[d] - 1);
    strides[d] = -strides[d];
  }
  // PyTorch's empty_like(self, preserve_format): the result keeps self's dim order.
  const out = emptyStrided(self.shape, copyStrides(self.shape, self.stride(), 'preserve'), self.dtype, Device.cpu);
  // A view walking `self` backwards along the flipped dims: the strided copy takes negative strides.
  return filledOrFreed(out, () => copyThroughView(self, { shape: self.shape, strides, offset }, out, 'from'));
}

/**
 * CPU kernels of the view and copy operators (views themselves are composite and have none).
 *
 * @example
 * ```ts
 * import { CPU_VIEW_KERNELS } from './views.ts';
 * Object.keys(CPU_VIEW_KERNELS); // ['clone', 'copy_', '_to_copy', 'cat', 'flip']
 * ```
 */
export const CPU_VIEW_KERNELS: { readonly [K in ViewBackendOpName]: Kernel } = {
  'clone': clone as Kernel,
  'copy_': copy as Kernel,
  '_to_copy': toCopy as Kernel,
  'cat': cat as Kernel,
  'flip': flip as Kernel,
};
