/**
 * The kernels this agent has defined under stable names (`defineKernel` in shared_ops.ts): how an agent
 * finds its own function for a kernel another agent published in a shared dispatch table or slot.
 *
 * @module
 */
import type { UnboxedKernel } from '../dispatch/kernel_function.ts';

/** Stable name -> this agent's function. */
export const kernelsByName: Map<string, UnboxedKernel> = new Map();

/**
 * This agent's function for a stable kernel name, or undefined.
 *
 * @example
 * ```ts
 * import { definedKernel } from './defined_kernels.ts';
 * definedKernel('no.such.kernel'); // undefined
 * ```
 */
export function definedKernel(name: string): UnboxedKernel | undefined {
  return kernelsByName.get(name);
}
