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
import { registerOperators } from './ops/registry.ts';
import { installTensorMethods } from './ops/generated_api.js';
import { installTensorConveniences } from './ops/tensor_conveniences.ts';
import { Dispatcher } from './dispatch/dispatcher.ts';
import { validatesBoxedValue } from './ops/arg_opaque.ts';

/**
 * Registers the operators and the CPU backend, installs the Tensor methods, and lets the dispatcher's boxing check
 * tensors and the other values only this layer knows (idempotent).
 */
export function initRuntime(): void {
  Dispatcher.singleton().setValueValidator(validatesBoxedValue);
  // The operators' definitions, then their CPU kernels: defined at import, so lookups by name find them; their
  // schemas parse, their kernels register and their rows materialize on first use (Note [Operators materialize on
  // first use], Note [Deferred registrations]).
  registerOperators();
  registerCpuBackend();
  installTensorMethods();
  installAutogradMethods();
  installTensorConveniences();
}

initRuntime();
