/**
 * FakeTensorMode: run a model for shapes, dtypes and memory only, on top of the Meta backend (PyTorch's
 * `torch._subclasses.fake_tensor.FakeTensorMode`).
 *
 * Inside the mode every tensor argument is replaced by a meta tensor with its sizes, strides, offset and
 * dtype (made once per real tensor and cached), factories get `device: 'meta'`, and the call runs on the Meta
 * kernels, so no data is allocated or computed. The mode remembers the device each fake tensor stands for
 * (`deviceOf`), as a FakeTensor's `fake_device`, and counts the bytes the outputs would have taken. Operators
 * that need data (`item()`) raise the Meta backend's error, as PyTorch's FakeTensor raises on data-dependent
 * output.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { withExcludedKeys } from '../dispatch/local_dispatch_key_set.ts';
import { aten } from '../ops/aten_call.ts';
import { registerOperators } from '../ops/registry.ts';
import { Device, type DeviceLike, toDevice } from '../tensor/device.ts';
import { Tensor } from '../tensor/tensor.ts';
import { callOp, type DispatchKwargs, DispatchMode, type TorchDispatchClass } from './dispatch_mode.ts';

function describe(v: unknown): string {
  return v === null ? 'null' : typeof v === 'object' ? (v.constructor?.name ?? 'object') : typeof v;
}

/**
 * A mode that turns every computation into shape, dtype and memory propagation on the Meta backend.
 *
 * @example
 * ```ts
 * import { FakeTensorMode, randn } from '../../mod.ts';
 * const x = randn(1024, 1024);
 * const mode = new FakeTensorMode();
 * const y = mode.run(() => x.mm(x).relu());
 * y.shape; // [1024, 1024]; y.device.type === 'meta', mode.deviceOf(y) is the cpu device
 * mode.allocatedBytes; // 8 MiB: two 1024x1024 float32 outputs, none actually allocated
 * ```
 */
export class FakeTensorMode extends DispatchMode {
  readonly #fakes = new WeakMap<Tensor, Tensor>();
  readonly #devices = new WeakMap<Tensor, Device>();
  readonly #counted = new WeakSet<object>();
  #allocated = 0;
  readonly #bytesByOp = new Map<string, number>();

  /** Bytes the outputs of the calls made in the mode would have allocated (each storage once). */
  get allocatedBytes(): number {
    return this.#allocated;
  }

  /** {@linkcode allocatedBytes} per operator name. */
  bytesByOperator(): Map<string, number> {
    return new Map(this.#bytesByOp);
  }

  /**
   * The meta tensor standing for `t` (PyTorch's `FakeTensorMode.from_tensor`): same sizes, strides, offset and
   * dtype; made once per tensor. A meta tensor stands for itself.
   */
  fromTensor(t: Tensor): Tensor {
    if (!Tensor.isLive(t)) throw new TypeError(`fromTensor(): expected a live Tensor, got ${describe(t)}`);
    if (t.device.type === 'meta') return t;
    let fake = this.#fakes.get(t);
    if (fake === undefined) {
      fake = withExcludedKeys(DispatchKey.Python, () => metaLike(t));
      this.#fakes.set(t, fake);
      this.#devices.set(fake, t.device);
    }
    return fake;
  }

  /** The device a fake tensor stands for (PyTorch's `fake_device`); a tensor's own device otherwise. */
  deviceOf(t: Tensor): Device {
    if (!Tensor.isTensor(t)) throw new TypeError(`deviceOf(): expected a Tensor, got ${describe(t)}`);
    return this.#devices.get(t) ?? t.device;
  }

  /** Runs `op` on Meta with its fake arguments, producing fake results (and converting real inputs). */
  override dispatch(
    op: OperatorHandle,
    _types: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown {
    let device: Device | undefined;
    const seen = new Set<object>();
    const toFake = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(toFake);
      if (!Tensor.isTensor(v)) return v;
      seen.add(v.storage);
      const fake = this.fromTensor(v);
      seen.add(fake.storage);
      device ??= this.deviceOf(fake);
      return fake;
    };
    const fakeArgs = args.map(toFake);
    const fakeKwargs: DispatchKwargs = {};
    for (const [k, v] of Object.entries(kwargs)) fakeKwargs[k] = toFake(v);
    if ('device' in fakeKwargs) {
      device = toDevice((fakeKwargs.device ?? 'cpu') as DeviceLike);
      fakeKwargs.device = Device.meta;
    }
    const result = callOp(op, fakeArgs, fakeKwargs);
    const outputs = Array.isArray(result) ? result : [result];
    let bytes = 0;
    for (const out of outputs) {
      if (!Tensor.isTensor(out)) continue;
      if (!this.#devices.has(out)) this.#devices.set(out, device ?? Device.cpu);
      if (seen.has(out.storage) || this.#counted.has(out.storage)) continue;
      this.#counted.add(out.storage);
      // Meta storages hold no bytes: a fresh output's storage would hold exactly its elements.
      bytes += out.numel * out.dtype.itemSize;
    }
    if (bytes > 0) {
      this.#allocated += bytes;
      const name = op.name;
      this.#bytesByOp.set(name, (this.#bytesByOp.get(name) ?? 0) + bytes);
    }
    return result;
  }
}

function metaLike(t: Tensor): Tensor {
  registerOperators();
  const empty = aten('empty', 'memory_format').call(t.shape, t.dtype, null, Device.meta, null, null) as Tensor;
  if (t.isContiguous() && t.storageOffset === 0) return empty;
  // A view keeps its geometry: strides and offset over a meta storage large enough for them.
  let extent = t.storageOffset + 1;
  for (let d = 0; d < t.ndim; d++) extent += (t.shape[d] - 1) * Math.abs(t.stride(d));
  const base = aten('empty', 'memory_format').call([extent], t.dtype, null, Device.meta, null, null) as Tensor;
  const view = aten('as_strided').call(base, t.shape, t.stride(), t.storageOffset) as Tensor;
  empty.dispose();
  return view;
}
