/**
 * Grad modes: `noGrad` / `enableGrad` (PyTorch's thread-local GradMode, per agent here) and `inferenceMode`
 * (which works through the per-agent dispatch key sets, as PyTorch's `InferenceMode` guard does).
 *
 * Note [Inference mode and ADInplaceOrView]
 * Inference mode excludes the autograd keys (autograd kernels do not even run) and removes ADInplaceOrView
 * from the *included* set, but it does not exclude ADInplaceOrView: a normal tensor carries that key itself,
 * so an in-place change of a normal tensor inside inference mode still bumps its version counter, and a
 * tensor saved for backward before is still reported as modified. Tensors made inside inference mode are
 * inference tensors: they carry neither key, so in-place changes of them inside inference mode cost nothing,
 * and outside it the included ADInplaceOrView key reaches them and refuses the change.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { AUTOGRAD_DISPATCH_KEYSET, DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { excludeKeys, localKeys } from '../dispatch/local_dispatch_key_set.ts';
import { adjustInferenceMode } from '../tensor/tensor.ts';

/** The per-agent grad mode, read directly by the generated autograd kernels (see autograd_kernel.ts). */
export const gradMode: { enabled: boolean } = { enabled: true };

/**
 * Whether autograd records operations (false inside `noGrad`).
 *
 * @example
 * ```ts
 * import { isGradEnabled, noGrad } from './grad_mode.ts';
 * noGrad(() => isGradEnabled()); // false
 * ```
 */
export function isGradEnabled(): boolean {
  return gradMode.enabled;
}

/** A scope that sets the grad mode and restores the previous one when disposed. */
export class GradModeGuard implements Disposable {
  readonly #previous: boolean;
  #active = true;
  /** Sets grad mode to `enabled`. */
  constructor(enabled: boolean) {
    this.#previous = gradMode.enabled;
    gradMode.enabled = enabled;
  }
  /** Restores the previous mode; idempotent. */
  [Symbol.dispose](): void {
    if (!this.#active) return;
    this.#active = false;
    gradMode.enabled = this.#previous;
  }
}

/**
 * Disables gradient recording: as a guard (`using _ = noGrad()`) or around a callback (`noGrad(() => ...)`).
 *
 * @example
 * ```ts
 * import { noGrad } from './grad_mode.ts';
 * {
 *   using _g = noGrad();
 *   // optimizer updates here are not recorded
 * }
 * ```
 */
export function noGrad(): GradModeGuard;
/** Runs `fn` with gradient recording off and returns its result. */
export function noGrad<T>(fn: () => T): T;
export function noGrad<T>(fn?: () => T): GradModeGuard | T {
  return withMode(false, fn);
}

/**
 * Re-enables gradient recording inside a `noGrad` region, as a guard or around a callback.
 *
 * @example
 * ```ts
 * import { enableGrad, isGradEnabled, noGrad } from './grad_mode.ts';
 * noGrad(() => enableGrad(() => isGradEnabled())); // true
 * ```
 */
export function enableGrad(): GradModeGuard;
/** Runs `fn` with gradient recording on and returns its result. */
export function enableGrad<T>(fn: () => T): T;
export function enableGrad<T>(fn?: () => T): GradModeGuard | T {
  return withMode(true, fn);
}

function withMode<T>(enabled: boolean, fn?: () => T): GradModeGuard | T {
  const guard = new GradModeGuard(enabled);
  if (fn === undefined) return guard;
  try {
    return fn();
  } finally {
    guard[Symbol.dispose]();
  }
}

const AD_INPLACE_OR_VIEW_HI = DispatchKeySet.of(DispatchKey.ADInplaceOrView).hi;

/** A scope of inference mode; restores everything when disposed. */
export class InferenceModeGuard implements Disposable {
  readonly #keys: Disposable;
  readonly #grad: GradModeGuard;
  readonly #includedHi: number;
  #active = true;
  /** Enters inference mode: included −= ADInplaceOrView, excluded += the autograd keys (PyTorch's guard). */
  constructor() {
    this.#includedHi = localKeys.includedHi;
    localKeys.includedHi &= ~AD_INPLACE_OR_VIEW_HI;
    this.#keys = excludeKeys(AUTOGRAD_DISPATCH_KEYSET);
    this.#grad = new GradModeGuard(false);
    adjustInferenceMode(1);
  }
  /** Leaves inference mode; idempotent. */
  [Symbol.dispose](): void {
    if (!this.#active) return;
    this.#active = false;
    adjustInferenceMode(-1);
    this.#grad[Symbol.dispose]();
    this.#keys[Symbol.dispose]();
    localKeys.includedHi = this.#includedHi;
  }
}

/**
 * Inference mode (`torch.inference_mode`): no recording, and tensors created inside are inference tensors
 * (no version counter, no autograd); normal tensors changed in place inside still count their versions.
 * As a guard or around a callback.
 *
 * @example
 * ```ts
 * import { inferenceMode } from './grad_mode.ts';
 * const y = inferenceMode(() => 42);
 * ```
 */
export function inferenceMode(): InferenceModeGuard;
/** Runs `fn` in inference mode and returns its result. */
export function inferenceMode<T>(fn: () => T): T;
export function inferenceMode<T>(fn?: () => T): InferenceModeGuard | T {
  const guard = new InferenceModeGuard();
  if (fn === undefined) return guard;
  try {
    return fn();
  } finally {
    guard[Symbol.dispose]();
  }
}
