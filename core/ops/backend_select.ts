/**
 * BackendSelect kernels for factory operators: they have no tensor arguments to dispatch on, so the
 * BackendSelect key (always in the include set) runs this kernel, which reads the `device` argument and
 * redispatches with that device's backend key, as PyTorch's generated BackendSelect kernels do.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { Device } from '../tensor/device.ts';

const BELOW = DispatchKeySet.fullAfter(DispatchKey.BackendSelect);

/**
 * The BackendSelect kernel of a factory operator whose schema has a `Device? device` argument.
 *
 * @example
 * ```ts
 * // registry.ts: impl.impl(name, backendSelectKernel(op), DispatchKey.BackendSelect);
 * ```
 */
export function backendSelectKernel(op: OperatorHandle) {
  const index = op.schema!.arguments.findIndex((a) => a.name === 'device');
  if (index < 0) throw new Error(`Factory ${op.name} has no device argument`);
  return (hi: number, lo: number, ...args: unknown[]): unknown => {
    const device = (args[index] as Device | null | undefined) ?? Device.cpu;
    const backend = DispatchKeySet.of(DispatchKey.StartOfDenseBackends + device.backend);
    return op.redispatch((hi & BELOW.hi) | backend.hi, (lo & BELOW.lo) | backend.lo, ...args);
  };
}
