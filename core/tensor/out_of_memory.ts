/**
 * The out-of-memory error: what was asked for, how much live tensors hold, what the allocator says (its use
 * and limit), and how to free memory, as PyTorch's CUDA out-of-memory message gives the numbers.
 *
 * @module
 */
import { OutOfMemoryError } from '../dispatch/errors.ts';
import type { Device } from './device.ts';
// A cycle (storage.ts -> this file -> lifetime.ts -> storage.ts) that only runs when an error is built.
import { memoryStats } from './lifetime.ts';

/**
 * PyTorch's `format_size` (c10/cuda/CUDACachingAllocator.cpp): bytes, KiB, MiB or GiB with two decimals.
 *
 * @example
 * ```ts
 * import { formatSize } from './out_of_memory.ts';
 * formatSize(1536); // '1.50 KiB'
 * ```
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(2)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(2)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

// The CPU allocator's message repeats the request before its own figures ("...; 1.00 GiB in use, limit 4.00
// GiB"): only those figures are quoted.
const ALLOCATOR_PREFIX = /^Out of memory: tried to allocate [^;]*; /;

/**
 * The error for a failed allocation of `nbytes` on `device`; `cause` is the allocator's own error.
 *
 * @example
 * ```ts
 * import { Device } from './device.ts';
 * import { outOfMemoryError } from './out_of_memory.ts';
 * const e = outOfMemoryError(Device.cpu, 2 ** 33, new RangeError('Out of memory: ...; 0 bytes in use, limit 4.00 GiB'));
 * e.message; // 'CPU out of memory: tried to allocate 8.00 GiB (8589934592 bytes); 0 bytes is held by 0 live ...'
 * ```
 */
export function outOfMemoryError(device: Device, nbytes: number, cause: Error): OutOfMemoryError {
  const { liveTensors, bytes, storages } = memoryStats();
  const held = `${formatSize(bytes)} is held by ${liveTensors} live ${liveTensors === 1 ? 'tensor' : 'tensors'} ` +
    `(${storages} ${storages === 1 ? 'storage' : 'storages'})`;
  const allocator = cause.message.replace(ALLOCATOR_PREFIX, '');
  return new OutOfMemoryError(
    `${device.type === 'webgpu' ? 'WebGPU' : device.type.toUpperCase()} out of memory: tried to allocate ` +
      `${formatSize(nbytes)} (${nbytes} bytes); ` +
      `${held}; allocator: ${allocator}. Free the tensors you no longer need with dispose() (or a \`using\` ` +
      'declaration), or run the work inside scope(), which frees every tensor it made except what it returns',
    { cause },
  );
}
