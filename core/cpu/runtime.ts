/**
 * The CPU backend's runtime state: one shared `WebAssembly.Memory`, the kernel instance over it, the
 * allocator that hands out tensor storage, and a scratch area for iteration descriptors. Created on first
 * use; `configureCpu` sets its limits before that.
 *
 * @module
 */
import { Allocator, type RangeSource } from './allocator.ts';
import { type BlockAllocator, GuardedAllocator, guardKernels } from './guarded_allocator.ts';
import { readEnv } from '../dispatch/env.ts';
import type { KernelExports } from './kernel_exports.ts';
import { createKernelMemory, instantiateKernels, KERNEL_MAX_PAGES } from './wasm.ts';
import { registerDeviceAllocator } from '../tensor/storage.ts';
import { NotImplementedError } from '../dispatch/errors.ts';
import { dtypeFromScalarType } from '../tensor/dtype.ts';

/** What the CPU kernels run on. */
export interface CpuRuntime {
  readonly memory: WebAssembly.Memory;
  readonly kernels: KernelExports;
  readonly allocator: BlockAllocator;
  /** Byte offset of a scratch area for kernel descriptors (shapes, strides). */
  readonly scratch: number;
  /** Size of the scratch area in bytes. */
  readonly scratchBytes: number;
  /** The guarded allocator in checked mode (Note [Guard bytes]); undefined otherwise. */
  readonly guards: GuardedAllocator | undefined;
  /** The plain allocator under the guards: this agent's arena (core/workers gives it a shared page pool). */
  readonly arena: Allocator;
}

/** How a Worker's runtime joins another agent's memory (core/workers/agent.ts). */
export interface AttachedCpuOptions {
  /** The shared memory of the agent it attaches to. */
  readonly memory: WebAssembly.Memory;
  /** The compiled kernel module, posted by that agent (saves compiling it again). */
  readonly module?: WebAssembly.Module;
  /** Checked mode, as the other agent runs. */
  readonly checked: boolean;
  /** Where this agent's allocator takes its ranges. */
  readonly source: RangeSource;
}

/** Limits of the CPU memory. */
export interface CpuOptions {
  /** Most bytes tensors may occupy (default 4 GiB minus the kernels' static data). */
  readonly maximumBytes?: number;
  /**
   * Checked mode: guard bytes around every block, verified after every kernel call (slow; for tests and
   * fuzzing). Default: on when the environment variable `SWITCHYARD_CHECKED` is `1`.
   */
  readonly checked?: boolean;
}

/** The environment variable that turns checked mode on by default. */
export const CHECKED_ENV_VAR = 'SWITCHYARD_CHECKED';

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
  // Small enough to inline into every kernel call; the set-up lives in its own function.
  return runtime ?? createRuntime();
}

function createRuntime(): CpuRuntime {
  const maxBytes = options.maximumBytes ?? KERNEL_MAX_PAGES * 65536;
  const maximumPages = Math.min(KERNEL_MAX_PAGES, Math.ceil(maxBytes / 65536) + 64);
  const memory = createKernelMemory({ initialPages: 256, maximumPages });
  const raw = instantiateKernels(memory);
  const base = raw.heapBase();
  const plain = new Allocator({ memory, base, maximumBytes: Math.min(maximumPages * 65536, base + maxBytes) });
  return finishRuntime(memory, raw, plain, options.checked ?? readEnv(CHECKED_ENV_VAR) === '1');
}

function finishRuntime(memory: WebAssembly.Memory, raw: KernelExports, plain: Allocator, checked: boolean): CpuRuntime {
  const guards = checked ? new GuardedAllocator(plain, memory) : undefined;
  const allocator = guards ?? plain;
  const kernels = guards === undefined ? raw : guardKernels(raw, guards);
  // Each agent has its own scratch block: descriptors written by one never race with another's.
  const scratch = allocator.alloc(SCRATCH_BYTES);
  runtime = { memory, kernels, allocator, scratch, scratchBytes: SCRATCH_BYTES, guards, arena: plain };
  return runtime;
}

/**
 * Makes this agent's CPU runtime one more instance of the kernels over another agent's shared memory, with an
 * allocator that takes its ranges from `source` (core/workers/agent.ts calls it in a Worker; must come before
 * the first CPU tensor). Instantiating rewrites the module's data segments with the bytes already there
 * (read-only constants); the kernels keep no other state in memory, and their mutable globals are per instance.
 *
 * @example
 * ```ts ignore
 * import { attachCpuRuntime } from './runtime.ts';
 * attachCpuRuntime({ memory, module, checked: false, source: pagePool });
 * ```
 */
export function attachCpuRuntime(attached: AttachedCpuOptions): CpuRuntime {
  if (runtime !== undefined) {
    throw new Error('attachCpuRuntime() must be called before the first CPU tensor is created');
  }
  const { memory, source } = attached;
  const raw = instantiateKernels(memory, attached.module === undefined ? {} : { module: attached.module });
  const base = raw.heapBase();
  const plain = new Allocator({ memory, base, maximumBytes: base });
  plain.useRangeSource(source);
  return finishRuntime(memory, raw, plain, attached.checked);
}

/**
 * A block of the CPU memory outside any tensor, never freed (core/workers keeps its shared control block
 * there). Counted by the allocator, not by `memoryStats`.
 */
export function reserveCpuBlock(nbytes: number): number {
  return cpuRuntime().allocator.alloc(nbytes);
}

/** Frees a block of this agent's allocator (core/workers, for a block another agent released). */
export function freeCpuBlock(ptr: number): void {
  cpuRuntime().allocator.free(ptr);
}

/** Whether this agent's CPU runtime exists yet. */
export function hasCpuRuntime(): boolean {
  return runtime !== undefined;
}

/**
 * In checked mode, throws if any guard byte of any live CPU block was overwritten (all of them are checked);
 * otherwise does nothing.
 *
 * @example
 * ```ts
 * import { verifyCpuGuards } from './runtime.ts';
 * verifyCpuGuards('after my test');
 * ```
 */
export function verifyCpuGuards(where: string): void {
  runtime?.guards?.verify(where, true);
}

/** Whether the CPU runtime runs in checked mode (creating it if needed). */
export function isCpuChecked(): boolean {
  return cpuRuntime().guards !== undefined;
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
