/**
 * The CPU backend's runtime state: one shared `WebAssembly.Memory`, the kernel instance over it, the
 * allocator that hands out tensor storage, and a scratch area for iteration descriptors. Created on first
 * use; `configureCpu` sets its limits before that.
 *
 * @module
 */
import { Allocator } from './allocator.ts';
import type { KernelExports } from './kernel_exports.ts';
import { createKernelMemory, instantiateKernels, KERNEL_MAX_PAGES } from './wasm.ts';
import { registerDeviceAllocator } from '../tensor/storage.ts';
import { NotImplementedError } from '../dispatch/errors.ts';
import { dtypeFromScalarType } from '../tensor/dtype.ts';

/** What the CPU kernels run on. */
export interface CpuRuntime {
  readonly memory: WebAssembly.Memory;
  readonly kernels: KernelExports;
  readonly allocator: Allocator;
  /** Byte offset of a 4 KiB scratch area for descriptors (shapes, strides). */
  readonly scratch: number;
}

/** Limits of the CPU memory. */
export interface CpuOptions {
  /** Most bytes tensors may occupy (default 4 GiB minus the kernels' static data). */
  readonly maximumBytes?: number;
}

const SCRATCH_BYTES = 4096;
let options: CpuOptions = {};
let runtime: CpuRuntime | undefined;

/**
 * Sets the CPU memory limit; call before the first CPU tensor is made.
 *
 * @example
 * ```ts
 * import { configureCpu } from './runtime.ts';
 * configureCpu({ maximumBytes: 1 << 30 });
 * ```
 */
export function configureCpu(next: CpuOptions): void {
  if (runtime !== undefined) throw new Error('configureCpu() must be called before the first CPU tensor is created');
  options = next;
}

/**
 * The CPU runtime, created on first use.
 *
 * @example
 * ```ts
 * import { cpuRuntime } from './runtime.ts';
 * cpuRuntime().kernels.heapBase() % 64; // 0
 * ```
 */
export function cpuRuntime(): CpuRuntime {
  if (runtime !== undefined) return runtime;
  const maxBytes = options.maximumBytes ?? KERNEL_MAX_PAGES * 65536;
  const maximumPages = Math.min(KERNEL_MAX_PAGES, Math.ceil(maxBytes / 65536) + 64);
  const memory = createKernelMemory({ initialPages: 256, maximumPages });
  const kernels = instantiateKernels(memory);
  const base = kernels.heapBase();
  const allocator = new Allocator({ memory, base, maximumBytes: Math.min(maximumPages * 65536, base + maxBytes) });
  const scratch = allocator.alloc(SCRATCH_BYTES);
  runtime = { memory, kernels, allocator, scratch };
  return runtime;
}

/** Registers the CPU and Meta allocators with the storage layer (idempotent). */
export function registerCpuAllocators(): void {
  registerDeviceAllocator('cpu', {
    allocate: (nbytes) => cpuRuntime().allocator.alloc(nbytes),
    free: (ptr) => cpuRuntime().allocator.free(ptr),
    bytes: (ptr, nbytes) => new Uint8Array(cpuRuntime().memory.buffer, ptr, nbytes),
  });
  registerDeviceAllocator('meta', {
    allocate: () => 0,
    free: () => {},
    bytes: () => {
      throw new Error('Cannot access the data of a meta tensor: it has none');
    },
  });
}

/**
 * Raises PyTorch's error for a kernel status: `"add" not implemented for 'Bool'`.
 *
 * @example
 * ```ts
 * import { checkStatus } from './runtime.ts';
 * checkStatus(0, 'add', 6); // ok: no throw
 * ```
 */
export function checkStatus(status: number, opName: string, dtypeCode: number): void {
  if (status === 0) return;
  if (status === 1) {
    throw new NotImplementedError(`"${opName}" not implemented for '${dtypeFromScalarType(dtypeCode).scalarTypeName}'`);
  }
  throw new Error(`${opName}: kernel rejected its arguments (status ${status})`);
}
