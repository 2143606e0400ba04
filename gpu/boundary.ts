/**
 * The WebGPU kernel boundary: the one place where tensors become buffer bindings.
 *
 * Note [GPU kernel boundary]
 * The contract of the CPU backend (Note [Kernel boundary] in core/cpu/boundary.ts) holds here too. A shader
 * indexes its buffers with the offsets and strides it is given; WebGPU's robust buffer access keeps it inside
 * the *buffer*, but a view's storage is the whole buffer and a wrong number would read or overwrite other
 * elements of it. So no kernel wrapper looks up a buffer itself: it names, per tensor operand, the region the
 * shader will touch (a count of contiguous elements, or sizes and strides from the tensor's first element), and
 * this module checks, before anything is recorded:
 * - the operand is a tensor made by this runtime (`Tensor.isTensor`, a private-field brand check), not
 *   disposed, over a live storage on the WebGPU device (a CPU tensor here is PyTorch's mixed-device error);
 * - every size, stride and offset fits the kernels' 32-bit parameters;
 * - every element of the region lies inside the storage, counted in GPU elements (Note [GPU element layout]).
 * Operands sharing a buffer share one binding (Note [Kernel bindings] in pipelines.ts).
 * `tests/gpu/boundary_audit.test.ts` checks that no other file of gpu/ reads a storage's address.
 *
 * @module
 */
import { RuntimeError } from '../core/dispatch/errors.ts';
import { Tensor } from '../core/tensor/tensor.ts';
import type { Access } from './pipelines.ts';
import { gpuRuntime } from './runtime.ts';
import { gpuItemBytes } from './wgsl/dtypes.ts';

/** Largest size, stride magnitude or offset a kernel parameter holds. */
export const KERNEL_MAX_INT = 0x7fffffff;

const listText = (xs: readonly number[]) => `[${xs.join(', ')}]`;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Throws unless `t` is a live WebGPU tensor of this runtime; a tensor on another device is PyTorch's
 * mixed-device error.
 *
 * @example
 * ```ts
 * import { checkGpuTensor } from './boundary.ts';
 * // checkGpuTensor(cpuTensor, 'add') throws 'Expected all tensors to be on the same device, ...'
 * ```
 */
export function checkGpuTensor(t: Tensor, op: string): void {
  if (!Tensor.isTensor(t)) {
    throw new TypeError(`${op}: expected a Tensor made by this runtime, got ${describeValue(t)}`);
  }
  if (t.isDisposed || t.storage.isReleased) {
    throw new RuntimeError(
      `${op}: a disposed tensor cannot be used (it was freed by dispose() or at the end of its scope())`,
    );
  }
  if (t.storage.device.type !== 'webgpu') {
    throw new RuntimeError(
      `Expected all tensors to be on the same device, but found at least two devices, webgpu:0 and ${t.device}!`,
    );
  }
}

/** Where a kernel finds one operand: its binding and the element offset of its first element. */
export interface BoundOperand {
  readonly slot: number;
  readonly offset: number;
}

/**
 * The data bindings of one dispatch, built operand by operand through the checks of Note [GPU kernel boundary].
 *
 * @example
 * ```ts
 * import { KernelBindings } from './boundary.ts';
 * // const b = new KernelBindings('add');
 * // const out = b.contiguous(result, n, true), a = b.strided(self, shape, strides, false);
 * ```
 */
export class KernelBindings {
  readonly #op: string;
  /** The distinct buffers, in binding order. */
  readonly buffers: GPUBuffer[] = [];
  /** Their access. */
  readonly access: Access[] = [];

  /** Bindings of a kernel named `op` (for messages). */
  constructor(op: string) {
    this.#op = op;
  }

  #slot(t: Tensor, access: Access): number {
    const entry = gpuRuntime().pool.lookup(t.storage.ptr);
    if (entry === undefined) throw new RuntimeError(`${this.#op}: the tensor's buffer is not live`);
    let slot = this.buffers.indexOf(entry.buffer);
    if (slot < 0) {
      slot = this.buffers.push(entry.buffer) - 1;
      this.access.push(access);
    } else if (access !== 'read') {
      if (this.access[slot] !== 'read' && this.access[slot] !== access) {
        throw new RuntimeError(`${this.#op}: an accumulated tensor cannot share its buffer with another operand`);
      }
      this.access[slot] = access;
    }
    return slot;
  }

  /** Binds `count` contiguous elements from `t`'s first element (`write`: true for read-write, or an Access). */
  contiguous(t: Tensor, count: number, write: boolean | Access): BoundOperand {
    return this.strided(t, count > 0 ? [count] : [0], [1], write);
  }

  /**
   * Binds the region of `sizes` and element `strides` from `t`'s element `first` (counted from its first
   * element), after checking that it lies inside the storage.
   */
  strided(
    t: Tensor,
    sizes: readonly number[],
    strides: readonly number[],
    write: boolean | Access,
    first = 0,
  ): BoundOperand {
    checkGpuTensor(t, this.#op);
    const op = this.#op;
    if (!Number.isSafeInteger(first)) throw new RuntimeError(`${op}: invalid element offset ${String(first)}`);
    let lowest = t.storageOffset + first, highest = lowest, empty = false;
    for (let d = 0; d < sizes.length; d++) {
      const size = sizes[d], stride = strides[d];
      if (!((size >>> 0) === size && size <= KERNEL_MAX_INT)) {
        throw new RuntimeError(`${op}: size ${String(size)} is not a size the WebGPU kernels can take`);
      }
      if (!(Number.isInteger(stride) && Math.abs(stride) <= KERNEL_MAX_INT)) {
        throw new RuntimeError(`${op}: stride ${String(stride)} is not a stride the WebGPU kernels can take`);
      }
      if (size === 0) empty = true;
      const reach = (size - 1) * stride;
      if (reach > 0) highest += reach;
      else lowest += reach;
    }
    const capacity = Math.floor(t.storage.nbytes / gpuItemBytes(t.dtype));
    if (!empty && (lowest < 0 || highest >= capacity || highest > KERNEL_MAX_INT)) {
      throw new RuntimeError(
        `${op}: the region of sizes ${listText(sizes)} and strides ${listText(strides)} from storage offset ` +
          `${t.storageOffset + first} is outside its storage of ${capacity} elements`,
      );
    }
    const access: Access = write === true ? 'read_write' : write === false ? 'read' : write;
    return { slot: this.#slot(t, access), offset: t.storageOffset + first };
  }
}

/**
 * The buffer and byte range of `count` contiguous elements of `t` from its first, checked as
 * {@linkcode KernelBindings.contiguous} checks them: for transfers (uploads and readback).
 *
 * @example
 * ```ts
 * import { transferRange } from './boundary.ts';
 * // const { buffer, byteOffset, byteLength } = transferRange(t, 'cpuAsync', t.numel);
 * ```
 */
export function transferRange(
  t: Tensor,
  op: string,
  count: number,
): { buffer: GPUBuffer; byteOffset: number; byteLength: number } {
  const bindings = new KernelBindings(op);
  bindings.contiguous(t, count, false);
  const item = gpuItemBytes(t.dtype);
  return { buffer: bindings.buffers[0], byteOffset: t.storageOffset * item, byteLength: count * item };
}
