/**
 * Devices: where a tensor's data lives, and the dispatch backend bit each device contributes.
 *
 * @module
 */
import { BackendComponent } from '../dispatch/dispatch_key.ts';

/**
 * The device types Switchyard knows: its own, plus the name a third-party backend gave the PrivateUse1 backend
 * (`registerBackend`, core/features/backends.ts).
 */
// deno-lint-ignore ban-types
export type DeviceType = 'cpu' | 'meta' | 'webgpu' | (string & {});

// The PrivateUse1 backend's name and device, once a third-party backend renamed it (PyTorch's
// `rename_privateuse1_backend`): set at most once.
let privateUse1Name: string | undefined;
let privateUse1Device: Device | undefined;

/**
 * A device (PyTorch's `torch.device`): a type and, for multi-device types, an index.
 *
 * @example
 * ```ts
 * import { Device } from './device.ts';
 * Device.cpu.toString(); // 'cpu'
 * ```
 */
export class Device {
  /** `cpu`, `meta`, `webgpu` or the registered PrivateUse1 backend's name. */
  readonly type: DeviceType;
  /** Device index for WebGPU and PrivateUse1 devices; undefined for cpu and meta. */
  readonly index: number | undefined;
  /** The backend component whose bit this device's tensors carry. */
  readonly backend: BackendComponent;

  private constructor(type: DeviceType, index: number | undefined, backend: BackendComponent) {
    this.type = type;
    this.index = index;
    this.backend = backend;
    Object.freeze(this);
  }

  /** The CPU. */
  static readonly cpu: Device = new Device('cpu', undefined, BackendComponent.CPUBit);
  /** The meta device: tensors with shapes and dtypes but no data. */
  static readonly meta: Device = new Device('meta', undefined, BackendComponent.MetaBit);
  /** The WebGPU device (index 0, as PyTorch's tensors report `cuda:0`). */
  static readonly webgpu: Device = new Device('webgpu', 0, BackendComponent.WebGPUBit);

  /**
   * Names the PrivateUse1 backend and makes its device (index 0); core/features/backends.ts calls this once.
   * Internal: use `registerBackend` or `renamePrivateUse1Backend`.
   */
  static nameBackend(name: string): Device {
    if (privateUse1Device === undefined) {
      privateUse1Name = name;
      privateUse1Device = new Device(name, 0, BackendComponent.PrivateUse1Bit);
    } else if (name !== privateUse1Name) {
      throw new Error(`torch.register_privateuse1_backend() has already been set! Current backend: ${privateUse1Name}`);
    }
    return privateUse1Device;
  }

  /** PyTorch's string form, e.g. `cpu` or `webgpu:1`. */
  toString(): string {
    return this.index === undefined ? this.type : `${this.type}:${this.index}`;
  }
  /** Same type and index. */
  equals(other: Device): boolean {
    return this.type === other.type && this.index === other.index;
  }
}

/** A device or its name. */
export type DeviceLike = Device | DeviceType | `webgpu:${number}`;

/**
 * The name of the PrivateUse1 backend: the registered one, or `privateuseone` (PyTorch's default) before any.
 *
 * @example
 * ```ts
 * import { privateUse1BackendName } from './device.ts';
 * privateUse1BackendName(); // 'privateuseone' until a backend registers
 * ```
 */
export function privateUse1BackendName(): string {
  return privateUse1Name ?? 'privateuseone';
}

/**
 * Whether a third-party backend has named the PrivateUse1 backend.
 *
 * @example
 * ```ts
 * import { isPrivateUse1BackendNamed } from './device.ts';
 * isPrivateUse1BackendNamed(); // false until a backend registers
 * ```
 */
export function isPrivateUse1BackendNamed(): boolean {
  return privateUse1Name !== undefined;
}

/**
 * Resolves a device name.
 *
 * @throws {Error} PyTorch's `Expected one of cpu, ... device type at start of device string: <s>` for an
 * unknown device.
 * @example
 * ```ts
 * import { toDevice } from './device.ts';
 * toDevice('meta').type; // 'meta'
 * ```
 */
export function toDevice(like: DeviceLike | undefined | null): Device {
  if (like === undefined || like === null) return Device.cpu;
  if (like instanceof Device) return like;
  if (like === 'cpu') return Device.cpu;
  if (like === 'meta') return Device.meta;
  if (like === 'webgpu' || like === 'webgpu:0') return Device.webgpu;
  if (typeof like === 'string' && /^webgpu:\d+$/.test(like)) {
    throw new RangeError(`WebGPU device index ${like.slice(7)} is out of range: only webgpu:0 exists`);
  }
  if (privateUse1Name !== undefined && typeof like === 'string') {
    if (like === privateUse1Name || like === `${privateUse1Name}:0`) return privateUse1Device!;
    if (like.startsWith(`${privateUse1Name}:`) && /^\d+$/.test(like.slice(privateUse1Name.length + 1))) {
      throw new RangeError(
        `${privateUse1Name} device index ${like.slice(privateUse1Name.length + 1)} is out of range: only ` +
          `${privateUse1Name}:0 exists`,
      );
    }
  }
  const known = privateUse1Name === undefined ? 'cpu, meta, webgpu' : `cpu, meta, webgpu, ${privateUse1Name}`;
  throw new Error(`Expected one of ${known} device type at start of device string: ${String(like)}`);
}
