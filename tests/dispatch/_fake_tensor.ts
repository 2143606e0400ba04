// Tensor-like objects for dispatcher tests: only the keyset words matter to the dispatcher.
import {
  BackendComponent,
  DispatchKey,
  DispatchKeySet,
  getAutocastRelatedKeySetFromBackend,
  getAutogradRelatedKeySetFromBackend,
  toBackendComponent,
} from '../../core/dispatch/mod.ts';

export interface FakeTensor {
  readonly keySetHi: number;
  readonly keySetLo: number;
  readonly label: string;
}

/**
 * A tensor-like value with PyTorch's keyset for a tensor whose backend key is `key` (CPU, Meta, SparseCPU,
 * QuantizedCPU, ...): the backend key, {ADInplaceOrView, Autograd<backend>}, and the backend's autocast key.
 * `inference: true` drops the autograd keys, as for a tensor made under inference mode.
 */
export function fakeTensor(
  key: number,
  options: { inference?: boolean; extra?: number[]; label?: string } = {},
): FakeTensor {
  const b = toBackendComponent(key);
  let ks = DispatchKeySet.of(key);
  if (!options.inference) ks = ks.or(getAutogradRelatedKeySetFromBackend(b));
  ks = ks.or(getAutocastRelatedKeySetFromBackend(b));
  for (const k of options.extra ?? []) ks = ks.add(k);
  return { keySetHi: ks.hi, keySetLo: ks.lo, label: options.label ?? 't' };
}

export const cpu = (): FakeTensor => fakeTensor(DispatchKey.CPU);
export const meta = (): FakeTensor => fakeTensor(DispatchKey.Meta);
export const webgpu = (): FakeTensor => fakeTensor(DispatchKey.WebGPU);
export { BackendComponent };
