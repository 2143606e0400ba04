/**
 * How values travel between agents in calls (core/workers/agent.ts): tensors as descriptors over the shared
 * memory (never their elements), objects the caller cannot use remotely as handles, everything else by
 * structured clone.
 *
 * @module
 */
import { Tensor } from '../tensor/tensor.ts';
import { discard, isTensorDescriptor, receive, share, type TensorDescriptor } from './shared_storage.ts';

/** A reference to an object that lives in another agent. */
export interface HandleMarker {
  readonly kind: 'switchyard.handle';
  readonly id: number;
}

function isHandleMarker(v: unknown): v is HandleMarker {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'switchyard.handle';
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** What the sending side does with values it cannot clone. */
export interface EncodeHooks {
  /** A handle marker for an object that stays here (the worker's handle table), or undefined to clone it. */
  keep?(value: object): HandleMarker | undefined;
  /** The marker of a handle object the caller holds (main side), or undefined when `value` is not one. */
  marker?(value: object): HandleMarker | undefined;
}

/**
 * The wire form of a value: tensors become descriptors (`share`), arrays and plain objects are encoded
 * element by element, handles become markers. `tensors` collects the tensors encoded.
 */
export function encode(value: unknown, hooks: EncodeHooks, tensors: Tensor[] = []): unknown {
  if (typeof value !== 'object' && typeof value !== 'function') return value;
  if (value === null) return value;
  if (Tensor.isTensor(value)) {
    tensors.push(value);
    return share(value);
  }
  const marker = hooks.marker?.(value);
  if (marker !== undefined) return marker;
  if (Array.isArray(value)) return value.map((v) => encode(v, hooks, tensors));
  if (typeof value === 'object' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = encode(v, hooks, tensors);
    return out;
  }
  if (ArrayBuffer.isView(value) || value instanceof Map || value instanceof Set || value instanceof Date) return value;
  const kept = hooks.keep?.(value);
  if (kept !== undefined) return kept;
  throw new TypeError(
    `Cannot pass a ${typeof value === 'function' ? 'function' : (value.constructor?.name ?? 'object')} ` +
      'to another agent: only tensors, plain data and handles travel',
  );
}

/**
 * The value a wire form stands for: descriptors become live tensors (`receive`), markers become what
 * `handle` makes of them. `tensors` collects the tensors received.
 */
export function decode(value: unknown, handle: (marker: HandleMarker) => unknown, tensors: Tensor[] = []): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (isTensorDescriptor(value)) {
    const t = receive(value);
    tensors.push(t);
    return t;
  }
  if (isHandleMarker(value)) return handle(value);
  if (Array.isArray(value)) return value.map((v) => decode(v, handle, tensors));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = decode(v, handle, tensors);
    return out;
  }
  return value;
}

/** Drops the references of the descriptors inside a wire form that will never be decoded. */
export function discardWire(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (isTensorDescriptor(value)) {
    try {
      discard(value as TensorDescriptor);
    } catch {
      // Already received or freed: nothing to drop.
    }
    return;
  }
  if (Array.isArray(value)) value.forEach(discardWire);
  else if (isPlainObject(value)) Object.values(value).forEach(discardWire);
}
