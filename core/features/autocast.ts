/**
 * Automatic mixed precision (PyTorch's `torch.autocast`) at the AutocastCPU key.
 *
 * An autocast region takes AutocastCPU out of this agent's exclude set (PyTorch excludes the autocast keys by
 * default), so the operators below reach kernels that cast their floating-point arguments and redispatch with
 * the key excluded. The op lists are PyTorch 1.13's CPU lists restricted to the operators this runtime has:
 *
 * - lower precision (the region's dtype): `mm`, `bmm`, `addmm`, `matmul`, `linear` (PyTorch also lists
 *   `conv1d`/`conv2d`, left out here because this runtime's CPU convolution takes float32 and float64 only, so
 *   casting would turn a working float32 convolution into an error);
 * - float32: `conv_transpose1d/2d`, `prod`, the losses (`nll_loss`, `cross_entropy_loss`, `l1_loss`,
 *   `smooth_l1_loss`, `huber_loss`, `kl_div`, `binary_cross_entropy(_with_logits)`);
 * - promote (widest floating input): `cat`, `stack`.
 *
 * Every other operator runs unchanged (a fallthrough). As on PyTorch's CPU, `softmax`, `log_softmax` and
 * `layer_norm` are not on the float32 list (they keep their input's dtype). Only CPU floating-point tensors other
 * than float64 are cast; float32 leaves that require grad are cast once per outermost region (the cast cache).
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { localKeys, withExcludedKeys } from '../dispatch/local_dispatch_key_set.ts';
import { Library } from '../dispatch/library.ts';
import type { OperatorHandle } from '../dispatch/operator_handle.ts';
import { bfloat16, DType, float16, float32, float64 } from '../tensor/dtype.ts';
import { isInferenceModeEnabled, Tensor } from '../tensor/tensor.ts';
import { toDtype } from '../ops/aten_call.ts';
import { registerOperators } from '../ops/registry.ts';

/** The device types autocast knows (PyTorch's `device_type` argument). */
export type AutocastDeviceType = 'cpu';

/** Options of {@linkcode autocast}, as `torch.autocast(device_type, dtype, enabled, cache_enabled)`. */
export interface AutocastOptions {
  /** The device whose operators are autocast: `'cpu'`. */
  deviceType: AutocastDeviceType;
  /** The lower-precision dtype: `bfloat16` (default on CPU) or `float16`. */
  dtype?: DType;
  /** `false` disables autocast inside the region (default true). */
  enabled?: boolean;
  /** Whether casts of float32 leaves requiring grad are cached for the region (default true). */
  cacheEnabled?: boolean;
}

/** How an autocast kernel casts its arguments (PyTorch's `CastPolicy`). */
export type CastPolicy = 'lower_precision_fp' | 'fp32' | 'promote';

/** PyTorch 1.13's AutocastCPU op lists, restricted to the operators declared here. */
export const AUTOCAST_CPU_OPS: Readonly<Record<CastPolicy, readonly string[]>> = {
  lower_precision_fp: [
    'mm',
    'bmm',
    'addmm',
    'matmul',
    'linear',
  ],
  fp32: [
    'conv_transpose1d',
    'conv_transpose2d.input',
    'prod',
    'prod.dim_int',
    'nll_loss',
    'nll_loss_nd',
    'cross_entropy_loss',
    'binary_cross_entropy',
    'binary_cross_entropy_with_logits',
    'l1_loss',
    'smooth_l1_loss',
    'huber_loss',
    'kl_div',
  ],
  promote: ['cat', 'stack'],
};

interface DeviceState {
  enabled: boolean;
  dtype: DType;
  cacheEnabled: boolean;
}

const cpuState: DeviceState = { enabled: false, dtype: bfloat16, cacheEnabled: true };
const CPU_KEY = DispatchKeySet.of(DispatchKey.AutocastCPU);
let nesting = 0;
/** Casts of float32 leaves requiring grad, per target dtype; cleared when the outermost region ends. */
const castCache = new Map<DType, WeakMap<Tensor, Tensor>>();

function checkDeviceType(deviceType: unknown, fn: string): AutocastDeviceType {
  if (deviceType !== 'cpu') {
    throw new RuntimeError(
      `${fn}: expected deviceType 'cpu' (the only autocast device here), but got ${String(deviceType)}`,
    );
  }
  return deviceType;
}

/**
 * Whether autocast is enabled for a device type (PyTorch's `torch.is_autocast_cpu_enabled()`).
 *
 * @example
 * ```ts
 * import { autocast, isAutocastEnabled } from '../../mod.ts';
 * isAutocastEnabled('cpu'); // false
 * autocast({ deviceType: 'cpu' }, () => isAutocastEnabled('cpu')); // true
 * ```
 */
export function isAutocastEnabled(deviceType: AutocastDeviceType): boolean {
  checkDeviceType(deviceType, 'isAutocastEnabled');
  return cpuState.enabled;
}

/**
 * The lower-precision dtype of a device type's autocast (PyTorch's `torch.get_autocast_cpu_dtype()`):
 * `bfloat16` unless a region set another.
 *
 * @example
 * ```ts
 * import { getAutocastDtype } from '../../mod.ts';
 * `${getAutocastDtype('cpu')}`; // 'torch.bfloat16'
 * ```
 */
export function getAutocastDtype(deviceType: AutocastDeviceType): DType {
  checkDeviceType(deviceType, 'getAutocastDtype');
  return cpuState.dtype;
}

/**
 * Drops the cached casts (PyTorch's `torch.clear_autocast_cache()`); the outermost region does it on exit.
 *
 * @example
 * ```ts
 * import { clearAutocastCache } from '../../mod.ts';
 * clearAutocastCache();
 * ```
 */
export function clearAutocastCache(): void {
  castCache.clear();
}

/** An active autocast region; disposing it restores the state it found (also the dispatch key exclusion). */
export class AutocastGuard implements Disposable {
  readonly #prev: DeviceState;
  readonly #prevExcludedHi: number;
  readonly #prevExcludedLo: number;
  #active = true;

  /** Enters a region with checked options (use {@linkcode autocast}). */
  constructor(state: DeviceState) {
    this.#prev = { ...cpuState };
    this.#prevExcludedHi = localKeys.excludedHi & CPU_KEY.hi;
    this.#prevExcludedLo = localKeys.excludedLo & CPU_KEY.lo;
    Object.assign(cpuState, state);
    setExcluded(!state.enabled);
    nesting++;
  }

  /** Leaves the region: the outer state comes back; the outermost region clears the cast cache. */
  [Symbol.dispose](): void {
    if (!this.#active) return;
    this.#active = false;
    Object.assign(cpuState, this.#prev);
    localKeys.excludedHi = (localKeys.excludedHi & ~CPU_KEY.hi) | this.#prevExcludedHi;
    localKeys.excludedLo = (localKeys.excludedLo & ~CPU_KEY.lo) | this.#prevExcludedLo;
    if (--nesting === 0) castCache.clear();
  }
}

function setExcluded(excluded: boolean): void {
  if (excluded) {
    localKeys.excludedHi |= CPU_KEY.hi;
    localKeys.excludedLo |= CPU_KEY.lo;
  } else {
    localKeys.excludedHi &= ~CPU_KEY.hi;
    localKeys.excludedLo &= ~CPU_KEY.lo;
  }
}

function checkOptions(options: unknown): DeviceState {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError("autocast(): expected an options object such as { deviceType: 'cpu' }");
  }
  const o = options as Partial<AutocastOptions>;
  checkDeviceType(o.deviceType, 'autocast()');
  const dtype = o.dtype ?? bfloat16;
  if (!(dtype instanceof DType)) throw new TypeError(`autocast(): expected dtype to be a DType, but got ${dtype}`);
  if (dtype !== bfloat16 && dtype !== float16) {
    throw new RuntimeError(
      `Currently, AutocastCPU only support Bfloat16 and Float16 as the autocast_cpu_dtype, but got ${dtype}`,
    );
  }
  for (const flag of ['enabled', 'cacheEnabled'] as const) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean') {
      throw new TypeError(`autocast(): expected ${flag} to be a boolean, but got ${String(o[flag])}`);
    }
  }
  registerAutocast();
  return { enabled: o.enabled ?? true, dtype, cacheEnabled: o.cacheEnabled ?? true };
}

/**
 * Runs `fn` in an autocast region (PyTorch's `with torch.autocast('cpu', dtype=...)`), or, without `fn`, returns
 * a guard for `using`. Regions nest: an inner region (also `enabled: false`) restores the outer state on exit.
 *
 * @example
 * ```ts
 * import { autocast, float16, randn } from '../../mod.ts';
 * const a = randn([3, 4]), b = randn([4, 5]);
 * const c = autocast({ deviceType: 'cpu' }, () => a.matmul(b)); // bfloat16
 * {
 *   using _ = autocast({ deviceType: 'cpu', dtype: float16 });
 *   a.matmul(b); // float16
 * }
 * ```
 */
export function autocast(options: AutocastOptions): AutocastGuard;
/** Runs `fn` in an autocast region and returns its result; the state is restored also when `fn` throws. */
export function autocast<T>(options: AutocastOptions, fn: () => T): T;
export function autocast<T>(options: AutocastOptions, fn?: () => T): AutocastGuard | T {
  const state = checkOptions(options);
  if (fn !== undefined && typeof fn !== 'function') {
    throw new TypeError(`autocast(): expected fn to be a function, but got ${typeof fn}`);
  }
  const guard = new AutocastGuard(state);
  if (fn === undefined) return guard;
  try {
    return fn();
  } finally {
    guard[Symbol.dispose]();
  }
}

/** PyTorch's `is_eligible` on CPU: a defined CPU floating-point tensor that is not float64. */
function isEligible(t: unknown): t is Tensor {
  return t instanceof Tensor && t.device.type === 'cpu' && t.dtype.isFloatingPoint && t.dtype !== float64;
}

/** PyTorch's `cached_cast`: float32 leaves requiring grad cast to the lower precision are cached. */
function cachedCast(to: DType, arg: unknown): unknown {
  if (Array.isArray(arg)) return arg.map((a) => cachedCast(to, a));
  if (!isEligible(arg) || arg.dtype === to) return arg;
  const ag = arg.autograd as { requiresGrad?: boolean; gradFn?: unknown } | undefined;
  const canCache = cpuState.cacheEnabled && to === cpuState.dtype && arg.dtype === float32 &&
    ag?.requiresGrad === true && (ag.gradFn === null || ag.gradFn === undefined) && arg.base === undefined &&
    !isInferenceModeEnabled();
  if (!canCache) return toDtype(arg, to);
  let byTensor = castCache.get(to);
  if (byTensor === undefined) castCache.set(to, byTensor = new WeakMap());
  let cast = byTensor.get(arg);
  if (cast === undefined) byTensor.set(arg, cast = toDtype(arg, to));
  return cast;
}

/** PyTorch's `promote_type`: float32 wins over the lower precision; float64 and non-floating are ignored. */
function widest(args: readonly unknown[]): DType {
  let current = cpuState.dtype;
  const visit = (a: unknown) => {
    if (Array.isArray(a)) return a.forEach(visit);
    if (isEligible(a) && a.dtype !== current) current = float32;
  };
  args.forEach(visit);
  return current;
}

function autocastKernel(op: OperatorHandle, policy: CastPolicy) {
  return (_hi: number, _lo: number, ...args: unknown[]) =>
    withExcludedKeys([DispatchKey.AutocastCPU], () => {
      const to = policy === 'fp32' ? float32 : policy === 'promote' ? widest(args) : cpuState.dtype;
      return op.call(...args.map((a) => cachedCast(to, a)));
    });
}

let library: Library | undefined;

/**
 * Registers the AutocastCPU kernels (idempotent; the first region does it).
 *
 * @example
 * ```ts
 * import { registerAutocast } from '../../mod.ts';
 * registerAutocast();
 * ```
 */
export function registerAutocast(): void {
  if (library !== undefined) return;
  const ops = registerOperators() as Record<string, OperatorHandle>;
  const lib = new Library('aten', 'IMPL', DispatchKey.AutocastCPU, { location: 'core/features/autocast.ts' });
  for (const [policy, names] of Object.entries(AUTOCAST_CPU_OPS) as [CastPolicy, readonly string[]][]) {
    for (const name of names) {
      if (ops[name] === undefined) continue;
      lib.impl(name, autocastKernel(ops[name], policy), undefined, { debug: `autocast (${policy}) for aten::${name}` });
    }
  }
  library = lib;
}
