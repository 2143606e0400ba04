/**
 * Makes the runtime usable: registers the operators' CPU kernels and installs the generated and autograd
 * Tensor methods. Importing this module does it once (every step is idempotent); `mod.ts`, `core/nn` and
 * `core/optim` import it, so each package entry point works on its own.
 *
 * @example
 * ```ts
 * import { initRuntime } from './init.ts';
 * initRuntime(); // already done on import; calling again is harmless
 * ```
 *
 * @module
 */
import { installAutogradMethods } from './autograd/tensor_autograd.ts';
import { registerCpuBackend } from './cpu/register.ts';
import { installTensorMethods } from './ops/generated_api.ts';

/** Registers the CPU backend and installs the Tensor methods (idempotent). */
export function initRuntime(): void {
  registerCpuBackend();
  installTensorMethods();
  installAutogradMethods();
}

initRuntime();
