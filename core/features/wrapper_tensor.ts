/**
 * WrapperTensor: the base of tensor subclasses that intercept their own operators (PyTorch's
 * `torch.Tensor._make_wrapper_subclass` plus a `__torch_dispatch__` classmethod).
 *
 * A wrapper tensor has the sizes, strides, dtype and device it presents, but no data of its own (its storage is
 * an empty meta storage): its keyset is that of a tensor on the presented device plus the `Python` key, so
 * every operator on it reaches the Python-key fallback, which calls the subclass's static `torchDispatch`.
 * There the subclass unwraps its arguments, calls the operator on the inner tensors and wraps the results.
 *
 * @module
 */
import { type Device, type DeviceLike, toDevice } from '../tensor/device.ts';
import { type DType, type DTypeLike, toDType } from '../tensor/dtype.ts';
import { Storage } from '../tensor/storage.ts';
import { Tensor, tensorKeySet, type VersionCounter } from '../tensor/tensor.ts';
import { ALIAS_FOR_AUTOGRAD } from '../autograd/saved_variable.ts';
import { Device as DeviceClass } from '../tensor/device.ts';
import { enablePythonKey } from './dispatch_mode.ts';

/** What a wrapper presents: sizes, strides, dtype, device. */
export interface WrapperGeometry {
  /** Sizes. */
  readonly shape: readonly number[];
  /** Strides (default: contiguous). */
  readonly strides?: readonly number[];
  /** dtype. */
  readonly dtype: DType | DTypeLike;
  /** Device. */
  readonly device: Device | DeviceLike;
}

/**
 * A tensor without data whose operators go to its class's static `torchDispatch`.
 *
 * @example
 * ```ts
 * import { callOp, NotImplemented, randn, Tensor, WrapperTensor } from '../../mod.ts';
 * class Negated extends WrapperTensor {
 *   constructor(readonly inner: Tensor) { super(inner); }
 *   static torchDispatch(op, _types, args, kwargs) {
 *     const unwrap = (a) => (a instanceof Negated ? a.inner.neg() : a);
 *     return callOp(op, args.map(unwrap), kwargs);
 *   }
 * }
 * new Negated(randn(3)).add(1); // computes (-inner) + 1 on the inner tensor
 * ```
 */
export abstract class WrapperTensor extends Tensor {
  readonly #device: Device;

  /**
   * A wrapper presenting `like`'s geometry (a tensor, or sizes, strides, dtype and device); `version` shares a
   * version counter (an alias's, see {@linkcode aliasForAutograd}).
   */
  constructor(like: Tensor | WrapperGeometry, options: { version?: VersionCounter } = {}) {
    if (like === null || typeof like !== 'object') {
      throw new TypeError(
        `WrapperTensor(): expected a Tensor or a geometry object, got ${like === null ? 'null' : typeof like}`,
      );
    }
    const shape = Tensor.isTensor(like) ? like.shape : like.shape;
    const strides = Tensor.isTensor(like) ? like.stride() : like.strides;
    const dtype = Tensor.isTensor(like) ? like.dtype : toDType(like.dtype);
    const device = Tensor.isTensor(like) ? like.device : toDevice(like.device);
    super({ storage: Storage.allocate(DeviceClass.meta, 0), shape, strides, dtype, version: options.version });
    this.#device = device;
    const ks = tensorKeySet(device, false);
    this.keySetHi = ks.hi;
    this.keySetLo = ks.lo;
    enablePythonKey(this);
  }

  /** The device the wrapper presents. */
  override get device(): Device {
    return this.#device;
  }

  /**
   * A new wrapper of the same class over the same contents, sharing this one's version counter: what autograd
   * saves for backward and what `detach()` returns (PyTorch's alias of a subclass keeps the subclass). A
   * subclass that can be saved for backward overrides it; the default refuses with a clear error.
   */
  aliasForAutograd(): Tensor {
    throw new TypeError(
      `${this.constructor.name} must override aliasForAutograd() to be saved for backward or detached ` +
        '(return a new wrapper of the same contents, passing { version: this.versionCounter })',
    );
  }

  /** The hook autograd's `aliasOf` calls. */
  [ALIAS_FOR_AUTOGRAD](): Tensor {
    return this.aliasForAutograd();
  }
}
