/**
 * Third-party backends at run time: PyTorch's `rename_privateuse1_backend` / `register_privateuse1_backend`.
 *
 * A backend written outside Switchyard names the PrivateUse1 backend component once (`registerBackend('mydev',
 * hooks)`); from then on `device: 'mydev'`, `.to('mydev')`, printing (`device='mydev:0'`) and device errors use
 * that name, its tensors carry the PrivateUse1 and AutogradPrivateUse1 keys, and `Storage.allocate` on its device
 * goes to the hooks it supplied. Its kernels are registered with the ordinary `Library` at
 * `DispatchKey.PrivateUse1` (per operator, or a boxed fallback for all of them). As in PyTorch since 2.1, the
 * dispatch keys keep their printed names (`PrivateUse1`, `AutogradPrivateUse1`), while the parsers also accept
 * them spelled with the backend's name (`parseDispatchKey('mydev')`); the kernels' debug names in the computed
 * tables say which backend they belong to. See examples/custom_backend.ts.
 *
 * @module
 */
import { Device, isPrivateUse1BackendNamed, privateUse1BackendName } from '../tensor/device.ts';
import { registerDeviceAllocator } from '../tensor/storage.ts';
import { registerAsyncToCpu } from '../tensor/host_transfer.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { setPrivateUse1KeyName } from '../dispatch/dispatch_key.ts';

export { privateUse1BackendName };

/** What a third-party backend provides to hold tensor data on its device (its storage hooks). */
export interface BackendHooks {
  /** Allocates `nbytes` of device memory; returns the block's address (any safe integer the backend chooses). */
  allocate(nbytes: number): number;
  /** Frees a block returned by `allocate`. */
  free(ptr: number): void;
  /**
   * The block's bytes as host memory: a live view for a host-visible device (copies to and from the CPU read
   * and write through it). Optional: a device without host-visible memory leaves it out and moves data in its
   * own `copy_` / `_to_copy` kernels.
   */
  bytes?(ptr: number, nbytes: number): Uint8Array;
}

// Device names PyTorch and Switchyard reserve (PyTorch's in-tree list plus Switchyard's own devices).
const IN_TREE = new Set(['cpu', 'cuda', 'hip', 'mps', 'xpu', 'mtia', 'meta', 'webgpu', 'privateuseone']);
let registered = false;

function checkName(fn: string, name: unknown): string {
  if (typeof name !== 'string') {
    throw new TypeError(`${fn}(): argument 'backend_name' must be str, not ${name === null ? 'None' : typeof name}`);
  }
  if (IN_TREE.has(name)) {
    throw new RuntimeError(`Cannot register privateuse1 backend with in-tree device name: ${name}`);
  }
  if (!/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new RuntimeError(
      `${fn}(): a backend name is a lower-case identifier (letters, digits, '_'), got '${name}'`,
    );
  }
  return name;
}

/**
 * Names the PrivateUse1 backend (PyTorch's `torch.utils.rename_privateuse1_backend`): afterwards the device
 * string `name` (and `name:0`) means the PrivateUse1 device. Allowed once; calling it again with the same name
 * does nothing, with another name throws PyTorch's error. The dispatch key parsers (`parseDispatchKey`,
 * `new Library(ns, 'IMPL', key)`, the dispatch pictures) then accept the key names spelled with the backend's name
 * (`'mydev'`, `'AutogradMydev'`), as PyTorch's `parseDispatchKey` does after the rename.
 *
 * @throws {RuntimeError} `torch.register_privateuse1_backend() has already been set! Current backend: <name>`,
 * or `Cannot register privateuse1 backend with in-tree device name: cpu`.
 * @example
 * ```ts
 * import { renamePrivateUse1Backend, toDevice } from '../../mod.ts';
 * renamePrivateUse1Backend('mydev');
 * toDevice('mydev').toString(); // 'mydev:0'
 * ```
 */
export function renamePrivateUse1Backend(name: string): Device {
  const checked = checkName('renamePrivateUse1Backend', name);
  if (isPrivateUse1BackendNamed() && privateUse1BackendName() !== checked) {
    throw new RuntimeError(
      `torch.register_privateuse1_backend() has already been set! Current backend: ${privateUse1BackendName()}`,
    );
  }
  const device = Device.nameBackend(checked);
  setPrivateUse1KeyName(checked);
  return device;
}

/**
 * Registers a third-party backend on the PrivateUse1 backend component: names it (see
 * {@linkcode renamePrivateUse1Backend}) and installs its storage hooks. Returns its device. Register its kernels
 * with `new Library('aten', 'IMPL', DispatchKey.PrivateUse1)` (and a boxed fallback with
 * `new Library('_', 'IMPL', DispatchKey.PrivateUse1).fallback(...)`). One backend per process.
 *
 * @throws {RuntimeError} when a backend is already registered, or for a bad name or hooks.
 * @example
 * ```ts
 * import { registerBackend } from '../../mod.ts';
 * const blocks = new Map<number, Uint8Array>();
 * let next = 1;
 * const device = registerBackend('mydev', {
 *   allocate: (n) => (blocks.set(next, new Uint8Array(n)), next++),
 *   free: (p) => void blocks.delete(p),
 *   bytes: (p) => blocks.get(p)!,
 * });
 * String(device); // 'mydev:0'
 * ```
 */
export function registerBackend(name: string, hooks: BackendHooks): Device {
  checkName('registerBackend', name);
  if (typeof hooks !== 'object' || hooks === null) {
    throw new TypeError(`registerBackend(): expected the backend's hooks object, got ${String(hooks)}`);
  }
  for (const key of ['allocate', 'free'] as const) {
    if (typeof hooks[key] !== 'function') {
      throw new TypeError(`registerBackend(): hooks.${key} must be a function, got ${typeof hooks[key]}`);
    }
  }
  if (hooks.bytes !== undefined && typeof hooks.bytes !== 'function') {
    throw new TypeError(`registerBackend(): hooks.bytes must be a function when given, got ${typeof hooks.bytes}`);
  }
  if (registered) {
    throw new RuntimeError(
      `registerBackend(): the PrivateUse1 backend '${privateUse1BackendName()}' is already registered; ` +
        'only one third-party backend can be registered',
    );
  }
  const device = renamePrivateUse1Backend(name);
  const { allocate, free, bytes } = hooks;
  registerDeviceAllocator(name, {
    hostVisible: bytes !== undefined,
    allocate(nbytes: number): number {
      const ptr = allocate.call(hooks, nbytes);
      if (!Number.isSafeInteger(ptr)) {
        throw new RuntimeError(`${name} allocator: allocate(${nbytes}) must return an integer address, got ${ptr}`);
      }
      return ptr;
    },
    free: (ptr: number) => free.call(hooks, ptr),
    bytes(ptr: number, nbytes: number): Uint8Array {
      if (bytes === undefined) {
        throw new RuntimeError(`${name} device memory is not host-visible: copy the tensor with .to('cpu') first`);
      }
      const view = bytes.call(hooks, ptr, nbytes);
      if (!(view instanceof Uint8Array) || view.byteLength < nbytes) {
        throw new RuntimeError(`${name} allocator: bytes(ptr, ${nbytes}) must return a Uint8Array of ${nbytes} bytes`);
      }
      return view.byteLength === nbytes ? view : view.subarray(0, nbytes);
    },
  });
  // `await t.cpuAsync()` / `toArrayAsync()`: the backend's own `_to_copy` to the CPU (synchronous here).
  registerAsyncToCpu(name, (t: Tensor) => {
    try {
      const toCopy = Dispatcher.singleton().findSchemaOrThrow('aten::_to_copy');
      return Promise.resolve(toCopy.call(t, null, null, Device.cpu, null, false, null) as Tensor);
    } catch (e) {
      return Promise.reject(e);
    }
  });
  registered = true;
  return device;
}
