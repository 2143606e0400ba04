/**
 * Devices: where a tensor's data lives, and the dispatch backend bit each device contributes.
 *
 * @module
 */
import { BackendComponent } from '../dispatch/dispatch_key.ts';

/** The device types Switchyard knows. */
export type DeviceType = 'cpu' | 'meta' | 'webgpu';

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
  /** `cpu`, `meta` or `webgpu`. */
  readonly type: DeviceType;
  /** Device index for WebGPU adapters; undefined for cpu and meta. */
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
  throw new Error(`Expected one of cpu, meta, webgpu device type at start of device string: ${String(like)}`);
}
