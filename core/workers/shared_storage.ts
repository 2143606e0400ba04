/**
 * Tensors that cross agents by descriptor: `share()` turns a CPU tensor into a small plain object, `receive()`
 * turns that object, in any agent attached to the same memory, back into a live `Tensor` over the same bytes.
 *
 * Note [Shared storages]
 * Sharing a storage gives it a header in the control block: a reference count every agent updates with
 * `Atomics`, the version counter, the block's address, size and owner. From then on the sharing agent's own
 * storage object holds one reference, each descriptor in flight holds one, and each storage object another
 * agent made from a descriptor holds one; when a storage object's own references go, it drops its shared one,
 * and the agent that drops the last returns the block to its owner (Note [Per-agent arenas]). So a tensor
 * lives until the last agent disposes of it, in any order. The version counter of every tensor over a shared
 * storage reads and writes the header's word, so an in-place change in one agent is seen by autograd's
 * checks in all. No element is ever copied: views and in-place writes on either side see the same memory.
 *
 * @module
 */
import { Device } from '../tensor/device.ts';
import { dtypeFromScalarType } from '../tensor/dtype.ts';
import { type DeviceAllocator, Storage } from '../tensor/storage.ts';
import { Tensor, type VersionCounter } from '../tensor/tensor.ts';
import { freeCpuBlock } from '../cpu/runtime.ts';
import {
  A_ORPHANS,
  A_RELEASED,
  AGENT_DEAD,
  AGENT_LIVE,
  type ControlBlock,
  H_NBYTES,
  H_NEXT,
  H_OWNER,
  H_PTR_UNIT,
  H_REFS,
  H_STAMP,
  H_STATE,
  H_VERSION,
  STORAGE_LIVE,
  STORAGE_RELEASED,
} from './control_block.ts';
import { freeAgentPages, headerBlock, sharedRuntime } from './shared_runtime.ts';

/** The wire form of a tensor: plain data, posted with `postMessage` and turned back into a tensor by `receive`. */
export interface TensorDescriptor {
  /** Marks the object as a descriptor. */
  readonly kind: 'switchyard.tensor';
  /** The shared storage's header. */
  readonly header: number;
  /** The header's reuse stamp when the descriptor was made (refuses a stale descriptor). */
  readonly stamp: number;
  /** Sizes. */
  readonly shape: readonly number[];
  /** Strides in elements. */
  readonly strides: readonly number[];
  /** Offset in elements. */
  readonly storageOffset: number;
  /** ScalarType code of the dtype. */
  readonly scalarType: number;
  /** Always `'cpu'` (the memory agents share). */
  readonly device: 'cpu';
  /** Whether the tensor was an inference tensor (its keyset has no autograd keys). */
  readonly inference: boolean;
}

// Storage objects of this agent over shared headers (the sharer's own and those made by `receive`).
const headerOfStorage = new WeakMap<Storage, number>();
const sharedCounters = new WeakSet<VersionCounter>();

/** A storage's hold on its shared header: its final `free` drops the reference. */
function sharedReference(cb: ControlBlock, agent: number, header: number): DeviceAllocator {
  return {
    allocate: () => {
      throw new Error('A shared reference allocates nothing');
    },
    free: () => releaseShared(cb, agent, header),
    bytes: (ptr, nbytes) => {
      const { memory } = sharedRuntime();
      return new Uint8Array(memory.buffer, ptr, nbytes);
    },
  };
}

/** Drops one reference to a shared header; the last one returns the block to its owner. */
function releaseShared(cb: ControlBlock, agent: number, header: number): void {
  const w = cb.words, at = cb.headerAt(header);
  if (Atomics.sub(w, at + H_REFS, 1) !== 1) return;
  const ownFree = cb.locked(agent, () => {
    const owner = w[at + H_OWNER];
    if (owner === agent) {
      const { ptr } = headerBlock(cb, header);
      cb.dropHeader(header);
      return ptr;
    }
    const oat = cb.agentAt(owner);
    const state = w[oat];
    if (state === AGENT_LIVE) {
      Atomics.store(w, at + H_STATE, STORAGE_RELEASED);
      w[at + H_NEXT] = w[oat + A_RELEASED];
      Atomics.store(w, oat + A_RELEASED, header + 1);
    } else if (state === AGENT_DEAD) {
      // An orphan of a retired agent: the bytes need no freeing (its allocator is gone), its pages are
      // given back with the last orphan.
      cb.dropHeader(header);
      if (--w[oat + A_ORPHANS] === 0) freeAgentPages(cb, owner);
    }
    return -1;
  });
  if (ownFree >= 0) freeCpuBlock(ownFree);
}

/** Makes the version counter of a shared storage's tensors read and write the header's word. */
function shareVersionCounter(counter: VersionCounter, words: Int32Array, index: number): VersionCounter {
  if (sharedCounters.has(counter)) return counter;
  Atomics.store(words, index, counter.version);
  Object.defineProperty(counter, 'version', {
    get: () => Atomics.load(words, index),
    set: (v: number) => Atomics.store(words, index, v),
    enumerable: true,
    configurable: false,
  });
  sharedCounters.add(counter);
  return counter;
}

/**
 * A descriptor of `t` for another agent attached to this runtime: post it (`worker.postMessage(share(t))`)
 * and call {@linkcode receive} there. Each descriptor holds a reference to the storage until it is received
 * (or {@linkcode discard}ed), so the sender may dispose of `t` at once. The data is never copied. Only CPU
 * tensors can be shared; the first call on the main agent starts sharing (Note [Per-agent arenas]).
 *
 * @example
 * ```ts ignore
 * import { share, tensor } from '../../mod.ts';
 * const t = tensor([1, 2, 3]);
 * worker.postMessage({ x: share(t) }); // the worker calls receive(e.data.x)
 * ```
 */
export function share(t: Tensor): TensorDescriptor {
  if (!Tensor.isTensor(t)) throw new TypeError(`share(): expected a Tensor, got ${describe(t)}`);
  t.assertAlive('share()');
  if (t.device.type !== 'cpu') {
    throw new TypeError(`share(): only CPU tensors can be shared between agents, got a tensor on ${t.device}`);
  }
  const { cb, agent } = sharedRuntime();
  const w = cb.words;
  const storage = t.storage;
  let header = headerOfStorage.get(storage);
  if (header === undefined) {
    header = cb.locked(agent, () => {
      const h = cb.claimHeader(), at = cb.headerAt(h);
      w[at + H_PTR_UNIT] = storage.ptr / 64;
      w[at + H_NBYTES] = storage.nbytes;
      w[at + H_OWNER] = agent;
      w[at + H_VERSION] = 0;
      Atomics.store(w, at + H_REFS, 1); // the storage object's own
      Atomics.store(w, at + H_STATE, STORAGE_LIVE);
      return h;
    });
    Storage.redirectFree(storage, sharedReference(cb, agent, header));
    headerOfStorage.set(storage, header);
  }
  const at = cb.headerAt(header);
  if (!t.isInference) shareVersionCounter(t.versionCounter, w, at + H_VERSION);
  Atomics.add(w, at + H_REFS, 1); // the descriptor's
  return {
    kind: 'switchyard.tensor',
    header,
    stamp: w[at + H_STAMP],
    shape: t.shape.slice(),
    strides: t.stride().slice(),
    storageOffset: t.storageOffset,
    scalarType: t.dtype.scalarType,
    device: 'cpu',
    inference: t.isInference,
  };
}

/**
 * The live tensor a descriptor made by {@linkcode share} (in this agent or another one attached to the same
 * runtime) describes: it views the same memory, shares the version counter, and takes over the descriptor's
 * reference: receive each descriptor once.
 *
 * @example
 * ```ts ignore
 * import { receive } from '../../mod.ts';
 * self.onmessage = (e) => {
 *   const x = receive(e.data.x);
 *   x.mul_(2); // the sender sees the change
 *   x.dispose();
 * };
 * ```
 */
export function receive(descriptor: TensorDescriptor): Tensor {
  checkDescriptor(descriptor);
  const { cb, agent } = sharedRuntime();
  const w = cb.words, header = descriptor.header, at = cb.headerAt(header);
  const { ptr, nbytes } = headerBlock(cb, header);
  if (
    w[at + H_STAMP] !== descriptor.stamp || Atomics.load(w, at + H_STATE) !== STORAGE_LIVE ||
    Atomics.load(w, at + H_REFS) < 1
  ) {
    throw new Error('receive(): the descriptor is stale: its tensor was already received, discarded or freed');
  }
  if (ptr < 64 || ptr + nbytes > sharedRuntime().memory.buffer.byteLength) {
    throw new RangeError(`receive(): shared storage ${header} lies outside the memory (corrupt control block)`);
  }
  const storage = Storage.adoptShared(Device.cpu, ptr, nbytes, sharedReference(cb, agent, header));
  headerOfStorage.set(storage, header);
  const version: VersionCounter = { version: 0 };
  if (!descriptor.inference) shareVersionCounter(version, w, at + H_VERSION);
  // The Tensor constructor checks that the geometry lies inside the storage (and releases it if not).
  return new Tensor({
    storage,
    shape: descriptor.shape,
    strides: descriptor.strides,
    storageOffset: descriptor.storageOffset,
    dtype: dtypeFromScalarType(descriptor.scalarType),
    version: descriptor.inference ? undefined : version,
    inference: descriptor.inference,
  });
}

/**
 * Drops the reference a descriptor holds without making a tensor of it (a message that will never be
 * received).
 *
 * @example
 * ```ts ignore
 * import { discard, share, tensor } from '../../mod.ts';
 * discard(share(tensor([1])));
 * ```
 */
export function discard(descriptor: TensorDescriptor): void {
  checkDescriptor(descriptor);
  const { cb, agent } = sharedRuntime();
  const at = cb.headerAt(descriptor.header);
  if (cb.words[at + H_STAMP] !== descriptor.stamp || Atomics.load(cb.words, at + H_STATE) !== STORAGE_LIVE) {
    throw new Error('discard(): the descriptor is stale: its tensor was already received, discarded or freed');
  }
  releaseShared(cb, agent, descriptor.header);
}

/**
 * Whether `value` looks like a {@linkcode TensorDescriptor} (its fields are checked by `receive`).
 *
 * @example
 * ```ts
 * import { isTensorDescriptor } from './shared_storage.ts';
 * isTensorDescriptor({ kind: 'switchyard.tensor' }); // true
 * ```
 */
export function isTensorDescriptor(value: unknown): value is TensorDescriptor {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'switchyard.tensor';
}

function checkDescriptor(d: TensorDescriptor): void {
  const intArray = (v: unknown) => Array.isArray(v) && v.every((x) => Number.isSafeInteger(x)) && v.length <= 64;
  if (
    !isTensorDescriptor(d) || !Number.isInteger(d.header) || d.header < 0 || !Number.isInteger(d.stamp) ||
    !intArray(d.shape) || !intArray(d.strides) || d.shape.length !== d.strides.length ||
    !Number.isSafeInteger(d.storageOffset) || !Number.isInteger(d.scalarType) || d.device !== 'cpu' ||
    typeof d.inference !== 'boolean'
  ) {
    throw new TypeError(`receive(): expected a tensor descriptor made by share(), got ${describe(d)}`);
  }
  const { cb } = sharedRuntime();
  if (d.header >= cb.headerTop()) throw new TypeError(`receive(): no shared storage ${d.header}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  try {
    return JSON.stringify(v).slice(0, 80);
  } catch {
    return 'an object';
  }
}
