/**
 * WebGPU kernels of the operators that move data: `clone`, `copy_` (also between the CPU and the GPU),
 * `_to_copy`, `cat` and `flip`. All of them end in `copyInto`, the elementwise engine's copy with dtype
 * conversion over strided views.
 *
 * @module
 */
import { RuntimeError } from '../../core/dispatch/errors.ts';
import type { Device } from '../../core/tensor/device.ts';
import type { DType } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { ViewBackendOpName } from '../../core/ops/decl_views.ts';
import {
  catDim,
  catMeta,
  catSkips,
  cloneMeta,
  copyMeta,
  flipDims,
  flipMeta,
  toCopyMeta,
} from '../../core/ops/view_copy_meta.ts';
import { sameList } from '../../core/ops/view_geometry.ts';
import { copyStrides, memoryFormatOf } from '../../core/ops/view_layout.ts';
import { aliasWithGeometry, geometryOf } from '../../core/ops/view_ops.ts';
import { hasInternalOverlap } from '../../core/ops/meta_elementwise.ts';
import { aten } from '../../core/ops/aten_call.ts';
import { emptyGpu } from '../tensors.ts';
import { uploadInto } from '../transfer.ts';
import { kindOf } from '../wgsl/dtypes.ts';
import { runElementwise } from './elementwise_engine.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/**
 * The error for reading a WebGPU tensor into host memory synchronously, naming the asynchronous form.
 *
 * @example
 * ```ts
 * import { syncReadbackError } from './copy.ts';
 * syncReadbackError('cpu()').message.includes('cpuAsync'); // true
 * ```
 */
export function syncReadbackError(what: string): RuntimeError {
  return new RuntimeError(
    `${what}: a webgpu tensor cannot be copied to the CPU synchronously (WebGPU has no blocking readback); ` +
      'use await t.cpuAsync() (or toArrayAsync(), itemAsync())',
  );
}

/**
 * Copies `src` (a GPU tensor) into `dst` with broadcasting and dtype conversion (`dst.copy_(src)` on the GPU);
 * float64 moves only into float64.
 *
 * @example
 * ```ts
 * import { copyInto } from './copy.ts';
 * // copyInto(gpuInt32, gpuFloat32) truncates as C++ does
 * ```
 */
export function copyInto(dst: Tensor, src: Tensor): void {
  if (dst.dtype === src.dtype && dst.dtype.name === 'float64') {
    runElementwise({
      name: 'copy_',
      out: dst,
      inputs: [src],
      inputKinds: ['i64'],
      expr: 'v0',
      exprKind: 'i64',
      raw: true,
    });
    return;
  }
  if (dst.dtype.name === 'float64') kindOf(dst.dtype, 'copy_'); // refuses it
  const kind = kindOf(src.dtype, 'copy_');
  runElementwise({ name: 'copy_', out: dst, inputs: [src], inputKinds: [kind], expr: 'v0', exprKind: kind });
}

/**
 * A contiguous GPU copy of a CPU tensor, in `dtype` (converted on the CPU first).
 *
 * @example
 * ```ts
 * import { upload } from './copy.ts';
 * // const g = upload(tensor([1, 2]));
 * ```
 */
export function upload(src: Tensor, dtype: DType = src.dtype): Tensor {
  const converted = src.dtype === dtype ? src : (aten('to', 'dtype').call(src, dtype, false, false, null) as Tensor);
  const dense = converted.contiguous();
  try {
    return filledOrFreed(emptyGpu(src.shape, dtype), (out) => uploadInto(out, dense));
  } finally {
    if (dense !== converted) dense.dispose();
    if (converted !== src) converted.dispose();
  }
}

/**
 * `t` on the GPU: itself, or an uploaded copy of a CPU tensor (the 0-d CPU operands PyTorch lets join another
 * device's operators). The caller disposes a copy.
 *
 * @example
 * ```ts
 * import { onGpu } from './copy.ts';
 * // const g = onGpu(tensor(2)); ... if (g !== t) g.dispose();
 * ```
 */
export function onGpu(t: Tensor): Tensor {
  return t.device.type === 'cpu' ? upload(t) : t;
}

function clone(_hi: number, _lo: number, self: Tensor, memoryFormat: unknown): Tensor {
  cloneMeta(self, memoryFormat);
  const strides = copyStrides(self.shape, self.stride(), memoryFormatOf(memoryFormat));
  return filledOrFreed(emptyGpu(self.shape, self.dtype, strides), (out) => copyInto(out, self));
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
  if (target.type !== 'webgpu') throw syncReadbackError(`to('${target}')`);
  const strides = copyStrides(self.shape, self.stride(), memoryFormatOf(memoryFormat));
  return filledOrFreed(emptyGpu(meta.shape, meta.dtype, strides), (out) => copyInto(out, self));
}

function copy(_hi: number, _lo: number, self: Tensor, src: Tensor, nonBlocking: boolean): Tensor {
  copyMeta(self, src, nonBlocking);
  if (self.device.type !== 'webgpu') throw syncReadbackError('copy_');
  if (self === src || self.numel === 0) return self;
  if (hasInternalOverlap(self)) {
    throw new RuntimeError(
      'unsupported operation: more than one element of the written-to tensor refers to a single memory location. ' +
        'Please clone() the tensor before performing the operation.',
    );
  }
  if (src.device.type === 'cpu') {
    const direct = src.dtype === self.dtype && sameList(src.shape, self.shape) && self.isContiguous();
    if (direct) {
      const dense = src.contiguous();
      try {
        uploadInto(self, dense);
      } finally {
        if (dense !== src) dense.dispose();
      }
      return self;
    }
    const staged = upload(src, src.dtype.name === 'float64' ? self.dtype : src.dtype);
    try {
      copyInto(self, staged);
    } finally {
      staged.dispose();
    }
    return self;
  }
  const sameData = self.storage === src.storage && self.storageOffset === src.storageOffset &&
    self.dtype === src.dtype && sameList(self.shape, src.shape) && sameList(self.stride(), src.stride());
  if (sameData) return self;
  if (self.storage === src.storage) {
    // The regions may overlap: read from a copy, since invocations run in no particular order.
    const tmp = filledOrFreed(emptyGpu(src.shape, src.dtype), (t) => copyInto(t, src));
    try {
      copyInto(self, tmp);
    } finally {
      tmp.dispose();
    }
    return self;
  }
  copyInto(self, src);
  return self;
}

function cat(_hi: number, _lo: number, tensors: readonly Tensor[], dim: number): Tensor {
  const meta = catMeta(tensors, dim);
  const d = catDim(tensors, dim);
  return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => {
    const g = geometryOf(out);
    let start = 0;
    for (const t of tensors) {
      if (catSkips(t) || t.shape[d] === 0) continue;
      const shape = [...g.shape];
      shape[d] = t.shape[d];
      const slice = aliasWithGeometry(out, { shape, strides: g.strides, offset: start * g.strides[d] }, 'cat');
      try {
        const src = onGpu(t);
        try {
          copyInto(slice, src);
        } finally {
          if (src !== t) src.dispose();
        }
      } finally {
        slice.dispose();
      }
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
  const out = emptyGpu(self.shape, self.dtype, copyStrides(self.shape, self.stride(), 'preserve'));
  return filledOrFreed(out, () => {
    const view = aliasWithGeometry(self, { shape: self.shape, strides, offset }, 'flip');
    try {
      copyInto(out, view);
    } finally {
      view.dispose();
    }
  });
}

/**
 * WebGPU kernels of the copy operators.
 *
 * @example
 * ```ts
 * import { GPU_VIEW_KERNELS } from './copy.ts';
 * Object.keys(GPU_VIEW_KERNELS); // ['clone', 'copy_', '_to_copy', 'cat', 'flip']
 * ```
 */
export const GPU_VIEW_KERNELS: { readonly [K in ViewBackendOpName]: Kernel } = {
  'clone': clone as Kernel,
  'copy_': copy as Kernel,
  '_to_copy': toCopy as Kernel,
  'cat': cat as Kernel,
  'flip': flip as Kernel,
};
