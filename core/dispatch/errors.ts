/**
 * Error classes with PyTorch's names, so callers can tell a missing kernel from a registration mistake.
 *
 * @module
 */

/**
 * PyTorch's `RuntimeError` (what `TORCH_CHECK` raises): registration mistakes, bad arguments.
 *
 * @example
 * ```ts
 * import { RuntimeError } from './errors.ts';
 * try {
 *   throw new RuntimeError('Tried to register an operator twice');
 * } catch (e) {
 *   e instanceof RuntimeError; // true
 * }
 * ```
 */
export class RuntimeError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RuntimeError';
  }
}

/**
 * Python's `KeyError`, which PyTorch raises for bad names: `parameter name can't contain "."`,
 * `attribute 'weight' already exists`.
 *
 * @example
 * ```ts
 * import { KeyError } from './errors.ts';
 * new KeyError("attribute 'weight' already exists").name; // 'KeyError'
 * ```
 */
export class KeyError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KeyError';
  }
}

/**
 * Python's `AttributeError`: `cannot assign module before Module.__init__() call`.
 *
 * @example
 * ```ts
 * import { AttributeError } from './errors.ts';
 * new AttributeError('cannot assign module before Module.__init__() call').name; // 'AttributeError'
 * ```
 */
export class AttributeError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AttributeError';
  }
}

/**
 * A device ran out of memory for a new tensor (PyTorch's `torch.cuda.OutOfMemoryError`). A `RangeError`, as
 * the allocator's own error is; the runtime stays usable after it.
 *
 * @example
 * ```ts
 * import { OutOfMemoryError } from './errors.ts';
 * new OutOfMemoryError('CPU out of memory') instanceof RangeError; // true
 * ```
 */
export class OutOfMemoryError extends RangeError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OutOfMemoryError';
  }
}

/**
 * PyTorch's `NotImplementedError` (what `TORCH_CHECK_NOT_IMPLEMENTED` raises): no kernel for the keys an
 * operator was called with, or a dtype a kernel does not handle.
 *
 * @example
 * ```ts
 * import { NotImplementedError, RuntimeError } from './errors.ts';
 * new NotImplementedError('x') instanceof RuntimeError; // true
 * ```
 */
export class NotImplementedError extends RuntimeError {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NotImplementedError';
  }
}

/**
 * PyTorch's (Python's) `ValueError`: an argument of the right type with a value the function rejects
 * (`Invalid learning rate: -1`, `xyz is not a valid value for reduction`).
 *
 * @example
 * ```ts
 * import { ValueError } from './errors.ts';
 * new ValueError('Invalid learning rate: -1').name; // 'ValueError'
 * ```
 */
export class ValueError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ValueError';
  }
}
