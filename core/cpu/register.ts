/**
 * Registers the CPU backend: its allocators, and a kernel at the CPU key for every backend operator. The
 * kernel table is typed over every backend operator name, so a declared operator without a CPU kernel is a
 * compile error.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { Library } from '../dispatch/library.ts';
import type { BackendOpName, CpuOnlyOpName } from '../ops/declarations.ts';
import { CPU_ACTIVATION_KERNELS } from './activations.ts';
import { CPU_CONV_KERNELS } from './conv.ts';
import { CPU_ELEMENTWISE_KERNELS } from './elementwise.ts';
import { CPU_FACTORY_KERNELS } from './factories.ts';
import { CPU_INDEXING_KERNELS } from './indexing.ts';
import { CPU_LINALG_KERNELS } from './linalg.ts';
import { CPU_NN_KERNELS } from './nn.ts';
import { CPU_RANDOM_KERNELS } from './random.ts';
import { CPU_REDUCTION_KERNELS } from './reductions.ts';
import { CPU_SCAN_SORT_KERNELS } from './scan_sort.ts';
import { CPU_SELECTION_KERNELS } from './selection.ts';
import { CPU_RANDOM2_KERNELS } from './random2.ts';
import { CPU_VIEW_KERNELS } from './views.ts';
import { registerCpuAllocators } from './runtime.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** Every CPU kernel, keyed by operator name. */
export const CPU_KERNELS: { readonly [K in BackendOpName | CpuOnlyOpName]: Kernel } = {
  ...CPU_ELEMENTWISE_KERNELS,
  ...CPU_FACTORY_KERNELS,
  ...CPU_VIEW_KERNELS,
  ...CPU_REDUCTION_KERNELS,
  ...CPU_LINALG_KERNELS,
  ...CPU_NN_KERNELS,
  ...CPU_RANDOM_KERNELS,
  ...CPU_INDEXING_KERNELS,
  ...CPU_SCAN_SORT_KERNELS,
  ...CPU_SELECTION_KERNELS,
  ...CPU_RANDOM2_KERNELS,
  ...CPU_CONV_KERNELS,
  ...CPU_ACTIVATION_KERNELS,
};

let library: Library | undefined;
const CPU_KEY: readonly DispatchKey[] = Object.freeze([DispatchKey.CPU]);

/**
 * Registers the CPU backend with the default dispatcher (idempotent).
 *
 * @example
 * ```ts
 * import { registerCpuBackend } from './register.ts';
 * registerCpuBackend();
 * ```
 */
export function registerCpuBackend(dispatcher: Dispatcher = Dispatcher.singleton()): void {
  if (library !== undefined) return;
  registerCpuAllocators();
  const lib = new Library('aten', 'IMPL', DispatchKey.CPU, { dispatcher, location: 'core/cpu/register.ts' });
  library = lib;
  for (const [name, kernel] of Object.entries(CPU_KERNELS)) {
    const register = () => {
      lib.impl(name, kernel as (hi: number, lo: number, ...args: unknown[]) => unknown, undefined, {
        debug: `cpu kernel ${name}`,
      });
    };
    // A defined operator gets its CPU kernel as it is first needed, with its other kernels (Note [Deferred
    // registrations] in core/dispatch/dispatcher.ts); one not defined yet gets it now.
    const op = dispatcher.findOp(`aten::${name}`);
    if (op !== undefined) dispatcher.deferOperatorRegistrations(op, register, CPU_KEY);
    else register();
  }
}
