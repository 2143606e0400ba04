/**
 * The CPU kernel boundary: the one place where tensors become addresses that WebAssembly kernels read and write.
 *
 * Note [Kernel boundary]
 * A wasm kernel trusts every address, count, stride and descriptor it is given: wasm only stops accesses that
 * leave the whole shared memory, so a wrong number silently reads or overwrites another tensor. So no kernel
 * wrapper computes an address itself. It names, for each tensor operand, the region the kernel will touch
 * (a count of contiguous elements, or sizes and strides from the tensor's first element), and this module
 * checks, before anything is written:
 * - the operand is a tensor made by this runtime (a brand check on a private field, not duck typing) that was
 *   not disposed, over a live CPU storage (Storage objects come only from `Storage.allocate`, so their address
 *   and size are the allocator's);
 * - every size, stride and count is an integer that fits the kernels' 32-bit arguments;
 * - every element of the region lies inside the storage.
 * Descriptors (sizes and strides for the strided kernels) are written to the scratch block only after they are
 * known to fit it, and workspaces come from the allocator for the duration of one call. Host reads and writes
 * from JavaScript go through typed arrays bounded to the same checked region.
 *
 * Index values (gather, index_select, nll_loss targets, embedding) are data, not geometry: the wrappers check
 * them against the indexed size before the kernel runs (`index_find_invalid`), or the kernel checks them itself.
 *
 * In checked mode (`configureCpu({ checked: true })` or `SWITCHYARD_CHECKED=1`) every block also carries guard
 * bytes that are verified after every kernel call (core/cpu/guarded_allocator.ts), so a kernel that writes
 * outside what it was given fails loudly, naming itself.
 *
 * `tests/cpu/boundary_audit.test.ts` checks that no other file of the CPU backend reads a storage address or
 * calls a kernel export directly.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { Device } from '../tensor/device.ts';
import { type DTypeArray, typedArrayFor } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import type { KernelExports } from './kernel_exports.ts';
import { cpuRuntime } from './runtime.ts';

/** Most dimensions a strided kernel descriptor holds (`MAX_DIMS` in kernels_as/common.ts). */
export const KERNEL_MAX_DIMS = 64;
/** Largest element count, size or stride magnitude a kernel takes (they are i32 arguments). */
export const KERNEL_MAX_INT = 0x7fffffff;

const listText = (xs: readonly number[]) => `[${xs.join(', ')}]`;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `an object (${name})` : 'an object';
}

/** Throws unless `t` is a live CPU tensor of this runtime; `op` names the kernel in the message. */
/** In checked mode, tells the guards which block the coming kernel call is given (Note [Guard bytes]). */
function noteBlock(t: Tensor): void {
  const guards = cpuRuntime().guards;
  if (guards !== undefined) guards.touch(t.storage.ptr);
}

function checkUsable(t: Tensor, op: string): void {
  if (Tensor.isLive(t)) {
    const storage = t.storage;
    if (!storage.isReleased && storage.device === Device.cpu) return;
  }
  refuseOperand(t, op);
}

/** The error for an operand {@linkcode checkUsable} refused (kept apart so that the check stays small). */
function refuseOperand(t: Tensor, op: string): never {
  if (!Tensor.isTensor(t)) {
    throw new TypeError(`${op}: expected a Tensor made by this runtime, got ${describeValue(t)}`);
  }
  if (t.isDisposed || t.storage.isReleased) {
    throw new RuntimeError(
      `${op}: a disposed tensor cannot be used (it was freed by dispose() or at the end of its scope())`,
    );
  }
  throw new RuntimeError(`${op}: expected a CPU tensor, but got one on ${t.storage.device}`);
}

function outOfStorage(t: Tensor, op: string, region: string): never {
  throw new RuntimeError(
    `${op}: the region of ${region} from storage offset ${t.storageOffset} (itemsize ${t.dtype.itemSize}) is ` +
      `outside its storage of ${t.storage.nbytes} bytes`,
  );
}

// The errors of contiguousAddress, kept out of it so that its bytecode stays small enough for V8 to inline it into
// every kernel wrapper (message building is most of a function's bytecode).
function refuseCount(op: string, count: number): never {
  throw new RuntimeError(`${op}: ${String(count)} elements is not a count the CPU kernels can take`);
}
function outOfDenseStorage(t: Tensor, op: string, count: number): never {
  outOfStorage(t, op, `${count} contiguous elements`);
}

/**
 * The byte address of `t`'s first element, after checking that `count` contiguous elements from there lie in
 * its storage. For kernels that read or write a dense block (contiguous operands, dense reduction inputs).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { contiguousAddress } from './boundary.ts';
 * const t = tensor([1, 2, 3]);
 * contiguousAddress(t, 'demo', 3) % 8; // 0: int64 data, 64-byte aligned block
 * ```
 */
export function contiguousAddress(t: Tensor, op: string, count: number): number {
  // The checks of checkUsable and noteBlock, inlined with each getter read once: this runs for every operand of every
  // contiguous kernel call, and V8 does not fold repeated private-field getter reads.
  if (!Tensor.isLive(t)) refuseOperand(t, op);
  const storage = t.storage;
  if (storage.isReleased || storage.device !== Device.cpu) refuseOperand(t, op);
  const item = t.dtype.itemSize, offset = t.storageOffset, ptr = storage.ptr;
  if (!((count >>> 0) === count && count <= KERNEL_MAX_INT)) refuseCount(op, count);
  if (count > 0 && (offset + count) * item > storage.nbytes) outOfDenseStorage(t, op, count);
  const guards = cpuRuntime().guards;
  if (guards !== undefined) guards.touch(ptr);
  return ptr + offset * item;
}

/**
 * The byte address of `t`'s element `first` (counted in elements from its first element; default 0), after
 * checking that the region of `sizes` and (element) `strides` from there lies in its storage and that every
 * size and stride fits the kernels' 32-bit arguments.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { stridedAddress } from './boundary.ts';
 * const t = tensor([[1, 2], [3, 4]]);
 * stridedAddress(t, 'demo', [2, 2], [1, 2]); // the transposed region: also inside
 * ```
 */
export function stridedAddress(
  t: Tensor,
  op: string,
  sizes: readonly number[],
  strides: readonly number[],
  first = 0,
): number {
  checkUsable(t, op);
  if (!Number.isSafeInteger(first)) throw new RuntimeError(`${op}: invalid element offset ${String(first)}`);
  const n = sizes.length;
  let lowest = t.storageOffset + first, highest = lowest, empty = false;
  for (let d = 0; d < n; d++) {
    const size = sizes[d], stride = strides[d];
    if (!((size >>> 0) === size && size <= KERNEL_MAX_INT)) {
      throw new RuntimeError(`${op}: size ${String(size)} is not a size the CPU kernels can take`);
    }
    if (!(Number.isInteger(stride) && stride >= -KERNEL_MAX_INT && stride <= KERNEL_MAX_INT)) {
      throw new RuntimeError(`${op}: stride ${String(stride)} is not a stride the CPU kernels can take`);
    }
    if (size === 0) empty = true;
    const reach = (size - 1) * stride;
    if (reach > 0) highest += reach;
    else lowest += reach;
  }
  const item = t.dtype.itemSize;
  if (!empty && (lowest < 0 || (highest + 1) * item > t.storage.nbytes)) {
    outOfStorage(t, op, `sizes ${listText(sizes)} and strides ${listText(strides)}`);
  }
  noteBlock(t);
  return t.storage.ptr + (t.storageOffset + first) * item;
}

/**
 * A typed array over exactly `count` contiguous elements from `t`'s first element (checked as
 * {@linkcode contiguousAddress} checks them), for JavaScript that reads or fills tensor data. Valid until the
 * memory grows: use it before allocating again.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { hostElements } from './boundary.ts';
 * const t = tensor(new Float32Array([1, 2]));
 * (hostElements(t, 'demo', 2) as Float32Array)[1]; // 2
 * ```
 */
export function hostElements(t: Tensor, op: string, count: number): DTypeArray {
  const address = contiguousAddress(t, op, count);
  return typedArrayFor(t.dtype, cpuRuntime().memory.buffer, address, count);
}

/**
 * The bytes of `t`'s whole storage block, after checking `t`'s own region (its sizes and strides) lies inside
 * it: for JavaScript that writes a strided tensor element by element with offsets computed from its layout.
 * Typed arrays made over these bytes cannot reach another block.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { hostBlock } from './boundary.ts';
 * hostBlock(tensor([1, 2]), 'demo').byteLength; // 16
 * ```
 */
export function hostBlock(t: Tensor, op: string): Uint8Array {
  stridedAddress(t, op, t.shape, t.stride());
  return t.storage.bytes();
}

/**
 * Writes a strided-kernel descriptor `[ndim, sizes..., strides of operand 0..., strides of operand 1...]` (Note
 * [Strided descriptor] in kernels_as/strided.ts) to the scratch block, or to `target` (a workspace block from
 * {@linkcode withWorkspace}: split kernels give each thread its own), and returns its address. Refuses, before
 * writing, a descriptor with more than {@linkcode KERNEL_MAX_DIMS} dims or values that do not fit i32 words.
 *
 * @example
 * ```ts
 * import { writeDescriptor } from './boundary.ts';
 * writeDescriptor('demo', [2, 3], [[3, 1], [0, 1]]); // the scratch address
 * ```
 */
export function writeDescriptor(
  op: string,
  sizes: readonly number[],
  strides: ReadonlyArray<readonly number[]>,
  target?: { readonly address: number; readonly bytes: number },
): number {
  const ndim = sizes.length;
  if (ndim > KERNEL_MAX_DIMS) {
    throw new RuntimeError(
      `${op}: the CPU kernels iterate over at most ${KERNEL_MAX_DIMS} dimensions that cannot be merged, got ${ndim}`,
    );
  }
  const words = 1 + ndim * (1 + strides.length);
  const rt = cpuRuntime();
  const address = target?.address ?? rt.scratch;
  if (words * 4 > (target?.bytes ?? rt.scratchBytes)) {
    throw new RuntimeError(`${op}: a kernel descriptor of ${words} words does not fit the scratch block`);
  }
  const out = new Int32Array(rt.memory.buffer, address, words);
  out[0] = ndim;
  for (let d = 0; d < ndim; d++) {
    const size = sizes[d];
    if (!((size >>> 0) === size && size <= KERNEL_MAX_INT)) {
      throw new RuntimeError(`${op}: size ${String(size)} is not a size the CPU kernels can take`);
    }
    out[1 + d] = size;
  }
  for (let k = 0; k < strides.length; k++) {
    const operand = strides[k];
    if (operand.length !== ndim) throw new RuntimeError(`${op}: descriptor operand ${k} has the wrong rank`);
    for (let d = 0; d < ndim; d++) {
      const stride = operand[d];
      if (!(Number.isInteger(stride) && stride >= -KERNEL_MAX_INT && stride <= KERNEL_MAX_INT)) {
        throw new RuntimeError(`${op}: stride ${String(stride)} is not a stride the CPU kernels can take`);
      }
      out[1 + ndim * (1 + k) + d] = stride;
    }
  }
  return address;
}

/**
 * Runs `fn` with a workspace block of `nbytes` from the allocator, given back afterwards (also on throw).
 *
 * @example
 * ```ts
 * import { withWorkspace } from './boundary.ts';
 * withWorkspace('demo', 1024, (address) => address % 64); // 0
 * ```
 */
export function withWorkspace<T>(op: string, nbytes: number, fn: (address: number) => T): T {
  if (!Number.isSafeInteger(nbytes) || nbytes < 0) {
    throw new RuntimeError(`${op}: invalid workspace size ${String(nbytes)}`);
  }
  const allocator = cpuRuntime().allocator;
  const address = allocator.alloc(nbytes);
  try {
    return fn(address);
  } finally {
    allocator.free(address);
  }
}

/**
 * The kernel exports. Every call through them must take its addresses from this module; in checked mode each
 * export verifies the guard bytes of every block after it returns.
 *
 * @example
 * ```ts
 * import { kernels } from './boundary.ts';
 * kernels().heapBase() % 64; // 0
 * ```
 */
export function kernels(): KernelExports {
  return cpuRuntime().kernels;
}
