/**
 * Automatic mixed precision (PyTorch's `torch.autocast`) at the AutocastCPU and AutocastWebGPU keys.
 *
 * An autocast region takes its device's autocast key out of this agent's exclude set (PyTorch excludes the
 * autocast keys by default), so the operators below reach kernels that cast their floating-point arguments and
 * redispatch with the key excluded. The state (enabled, dtype, cache flag per device, the nesting count and the
 * cast cache) is module state, so every agent (worker) has its own, as PyTorch's is thread-local.
 *
 * CPU (`deviceType: 'cpu'`, default dtype bfloat16): PyTorch 1.13's CPU lists restricted to the operators this
 * runtime has:
 * - lower precision (the region's dtype): `mm`, `bmm`, `addmm`, `matmul`, `linear` (PyTorch also lists
 *   `conv1d`/`conv2d`, left out here because this runtime's CPU convolution takes float32 and float64 only, so
 *   casting would turn a working float32 convolution into an error);
 * - float32: `conv_transpose1d/2d`, `prod`, the losses (`nll_loss`, `cross_entropy_loss`, `l1_loss`,
 *   `smooth_l1_loss`, `huber_loss`, `kl_div`, `binary_cross_entropy(_with_logits)`);
 * - promote (widest floating input): `cat`, `stack`.
 * As on PyTorch's CPU, `softmax`, `log_softmax` and `layer_norm` are not on the float32 list (they keep their
 * input's dtype).
 *
 * WebGPU (`deviceType: 'webgpu'`, default dtype float16): PyTorch 1.13's CUDA lists (the lists of its GPU
 * autocast, checked with `torch._C._dispatch_dump`) restricted to the operators here:
 * - lower precision: the convolutions (`convolution`, `conv1d`, `conv2d`, `conv_transpose1d/2d`), `addmm`,
 *   `matmul`, `einsum`, `mm`, `mv`, `linear`, `bmm`;
 * - float32: `exp`, `expm1`, `log`, `log1p`, `reciprocal`, `rsqrt`, `pow`, `softplus`, `cosine_similarity`,
 *   `logsumexp`, the losses (`nll_loss`, `nll_loss_nd`, `cross_entropy_loss`, `kl_div`, `l1_loss`, `smooth_l1_loss`, `huber_loss`,
 *   `binary_cross_entropy_with_logits`) and `norm` (PyTorch appends `dtype=float32` to `norm`; there is no
 *   `norm.ScalarOpt_dtype` here, so its input is cast to float32, which gives the same float32 result);
 * - float32 through the op's own `dtype` argument (PyTorch's `fp32_set_opt_dtype`: when the first argument is
 *   eligible and no dtype is given, `dtype=float32`; inputs are not cast): `sum`, `prod`, `softmax`,
 *   `log_softmax`, `cumsum`, `cumprod`;
 * - promote: `atan2`, `dot`, `scatter_add`;
 * - banned: `binary_cross_entropy` raises PyTorch's "unsafe to autocast" error (use the `_with_logits` form).
 * Two composites are listed because they do not reach the listed ops here: PyTorch's `nll_loss_nd` calls
 * `nll_loss`, and its `cross_entropy_loss` calls `log_softmax` with the input's dtype and then `nll_loss_nd`, so
 * on its GPU the loss is float32 (from float16 log-probabilities). This runtime's composites call the NLL kernels
 * directly, so `nll_loss_nd` and `cross_entropy_loss` are float32 ops themselves: the same float32 result, with
 * the log-probabilities computed in float32 as well.
 *
 * WebGPU float16 is the backend's emulated layout (Note [GPU element layout] in gpu/wgsl/dtypes.ts): every element
 * is one f32 word rounded to float16 on every store, so it needs no `shader-f16` adapter feature (the software
 * adapter has none) and products accumulate in f32 and round once, like CUDA's fp16 GEMMs accumulating in fp32.
 *
 * Every other operator runs unchanged (a fallthrough). Only floating-point tensors of the region's device other
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
export type AutocastDeviceType = 'cpu' | 'webgpu';

/** Options of {@linkcode autocast}, as `torch.autocast(device_type, dtype, enabled, cache_enabled)`. */
export interface AutocastOptions {
  /** The device whose operators are autocast: `'cpu'` or `'webgpu'`. */
  deviceType: AutocastDeviceType;
  /** The lower-precision dtype: `bfloat16` or `float16` (default bfloat16 on CPU, float16 on WebGPU). */
  dtype?: DType;
  /** `false` disables autocast inside the region (default true). */
  enabled?: boolean;
  /** Whether casts of float32 leaves requiring grad are cached for the region (default true). */
  cacheEnabled?: boolean;
}

/**
 * How an autocast kernel casts its arguments (PyTorch's `CastPolicy`): `fp32_set_opt_dtype` passes
 * `dtype=float32` to ops with a dtype argument instead of casting, `banned` refuses the op.
 */
export type CastPolicy = 'lower_precision_fp' | 'fp32' | 'fp32_set_opt_dtype' | 'promote' | 'banned';

/** PyTorch 1.13's AutocastCPU op lists, restricted to the operators declared here. */
export const AUTOCAST_CPU_OPS: Readonly<Partial<Record<CastPolicy, readonly string[]>>> = {
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

/**
 * PyTorch 1.13's AutocastCUDA op lists (its GPU autocast), restricted to the operators declared here.
 *
 * @example
 * ```ts
 * import { AUTOCAST_WEBGPU_OPS } from '../../mod.ts';
 * AUTOCAST_WEBGPU_OPS.fp32_set_opt_dtype?.includes('softmax.int'); // true
 * ```
 */
export const AUTOCAST_WEBGPU_OPS: Readonly<Partial<Record<CastPolicy, readonly string[]>>> = {
  lower_precision_fp: [
    'convolution',
    'conv1d',
    'conv2d',
    'conv_transpose1d',
    'conv_transpose2d.input',
    'addmm',
    'matmul',
    'einsum',
    'mm',
    'mv',
    'linear',
    'bmm',
  ],
  fp32: [
    'exp',
    'expm1',
    'log',
    'log1p',
    'reciprocal',
    'rsqrt',
    'pow.Tensor_Scalar',
    'pow.Tensor_Tensor',
    'pow.Scalar',
    'softplus',
    'cosine_similarity',
    'nll_loss',
    'nll_loss_nd',
    'cross_entropy_loss',
    'kl_div',
    'l1_loss',
    'smooth_l1_loss',
    'huber_loss',
    'binary_cross_entropy_with_logits',
    'logsumexp',
    'norm.Scalar',
    'norm.ScalarOpt_dim',
  ],
  fp32_set_opt_dtype: [
    'prod',
    'prod.dim_int',
    'softmax.int',
    'log_softmax.int',
    'cumprod',
    'cumsum',
    'sum',
    'sum.dim_IntList',
  ],
  promote: ['atan2', 'dot', 'scatter_add'],
  banned: ['binary_cross_entropy'],
};

interface DeviceState {
  enabled: boolean;
  dtype: DType;
  cacheEnabled: boolean;
}

interface AutocastDevice {
  readonly key: DispatchKey;
  readonly keySet: DispatchKeySet;
  readonly name: string;
  readonly state: DeviceState;
}

const DEVICES: Readonly<Record<AutocastDeviceType, AutocastDevice>> = {
  cpu: {
    key: DispatchKey.AutocastCPU,
    keySet: DispatchKeySet.of(DispatchKey.AutocastCPU),
    name: 'CPU',
    state: { enabled: false, dtype: bfloat16, cacheEnabled: true },
  },
  webgpu: {
    key: DispatchKey.AutocastWebGPU,
    keySet: DispatchKeySet.of(DispatchKey.AutocastWebGPU),
    name: 'WebGPU',
    state: { enabled: false, dtype: float16, cacheEnabled: true },
  },
};
const DEFAULT_DTYPE: Readonly<Record<AutocastDeviceType, DType>> = { cpu: bfloat16, webgpu: float16 };

// One nesting count and one cast cache for all devices, as PyTorch's `autocast_increment_nesting` and cache are.
let nesting = 0;
/** Casts of float32 leaves requiring grad, per target dtype; cleared when the outermost region ends. */
const castCache = new Map<DType, WeakMap<Tensor, Tensor>>();

function checkDeviceType(deviceType: unknown, fn: string): AutocastDeviceType {
  if (deviceType !== 'cpu' && deviceType !== 'webgpu') {
    throw new RuntimeError(
      `${fn}: expected deviceType 'cpu' or 'webgpu' (the autocast devices here), but got ${String(deviceType)}`,
    );
  }
  return deviceType;
}

/**
 * Whether autocast is enabled for a device type (PyTorch's `torch.is_autocast_cpu_enabled()` /
 * `torch.is_autocast_enabled()` for its GPU).
 *
 * @example
 * ```ts
 * import { autocast, isAutocastEnabled } from '../../mod.ts';
 * isAutocastEnabled('cpu'); // false
 * autocast({ deviceType: 'cpu' }, () => isAutocastEnabled('cpu')); // true
 * autocast({ deviceType: 'webgpu' }, () => isAutocastEnabled('cpu')); // false: each device has its own state
 * ```
 */
export function isAutocastEnabled(deviceType: AutocastDeviceType): boolean {
  return DEVICES[checkDeviceType(deviceType, 'isAutocastEnabled')].state.enabled;
}

/**
 * The lower-precision dtype of a device type's autocast (PyTorch's `torch.get_autocast_cpu_dtype()` /
 * `torch.get_autocast_gpu_dtype()`): `bfloat16` on CPU and `float16` on WebGPU unless a region set another.
 *
 * @example
 * ```ts
 * import { getAutocastDtype } from '../../mod.ts';
 * `${getAutocastDtype('cpu')}`; // 'torch.bfloat16'
 * `${getAutocastDtype('webgpu')}`; // 'torch.float16'
 * ```
 */
export function getAutocastDtype(deviceType: AutocastDeviceType): DType {
  return DEVICES[checkDeviceType(deviceType, 'getAutocastDtype')].state.dtype;
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
  readonly #device: AutocastDevice;
  readonly #prev: DeviceState;
  readonly #prevExcludedHi: number;
  readonly #prevExcludedLo: number;
  #active = true;

  /** Enters a region with checked options (use {@linkcode autocast}). */
  constructor(deviceType: AutocastDeviceType, state: DeviceState) {
    const device = DEVICES[checkDeviceType(deviceType, 'AutocastGuard')];
    this.#device = device;
    this.#prev = { ...device.state };
    this.#prevExcludedHi = localKeys.excludedHi & device.keySet.hi;
    this.#prevExcludedLo = localKeys.excludedLo & device.keySet.lo;
    Object.assign(device.state, state);
    setExcluded(device.keySet, !state.enabled);
    nesting++;
  }

  /** Leaves the region: the outer state comes back; the outermost region clears the cast cache. */
  [Symbol.dispose](): void {
    if (!this.#active) return;
    this.#active = false;
    const { keySet, state } = this.#device;
    Object.assign(state, this.#prev);
    localKeys.excludedHi = (localKeys.excludedHi & ~keySet.hi) | this.#prevExcludedHi;
    localKeys.excludedLo = (localKeys.excludedLo & ~keySet.lo) | this.#prevExcludedLo;
    if (--nesting === 0) castCache.clear();
  }
}

function setExcluded(keySet: DispatchKeySet, excluded: boolean): void {
  if (excluded) {
    localKeys.excludedHi |= keySet.hi;
    localKeys.excludedLo |= keySet.lo;
  } else {
    localKeys.excludedHi &= ~keySet.hi;
    localKeys.excludedLo &= ~keySet.lo;
  }
}

function checkOptions(options: unknown): [AutocastDeviceType, DeviceState] {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError("autocast(): expected an options object such as { deviceType: 'cpu' }");
  }
  const o = options as Partial<AutocastOptions>;
  const deviceType = checkDeviceType(o.deviceType, 'autocast()');
  const dtype = o.dtype ?? DEFAULT_DTYPE[deviceType];
  if (!(dtype instanceof DType)) throw new TypeError(`autocast(): expected dtype to be a DType, but got ${dtype}`);
  if (dtype !== bfloat16 && dtype !== float16) {
    throw new RuntimeError(
      deviceType === 'cpu'
        ? `Currently, AutocastCPU only support Bfloat16 and Float16 as the autocast_cpu_dtype, but got ${dtype}`
        : `Currently, AutocastWebGPU only support Float16 and Bfloat16 as the autocast_gpu_dtype, but got ${dtype}`,
    );
  }
  for (const flag of ['enabled', 'cacheEnabled'] as const) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean') {
      throw new TypeError(`autocast(): expected ${flag} to be a boolean, but got ${String(o[flag])}`);
    }
  }
  registerAutocast();
  return [deviceType, { enabled: o.enabled ?? true, dtype, cacheEnabled: o.cacheEnabled ?? true }];
}

/**
 * Runs `fn` in an autocast region (PyTorch's `with torch.autocast(device_type, dtype=...)`), or, without `fn`,
 * returns a guard for `using`. Regions nest: an inner region (also `enabled: false`) restores the outer state on
 * exit; CPU and WebGPU regions are independent (one can be inside the other).
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
 * // on WebGPU tensors (after `await initWebGPU()`): float16 products, float32 softmax and losses
 * autocast({ deviceType: 'webgpu' }, () => a.matmul(b)); // CPU tensors: unchanged, float32
 * ```
 */
export function autocast(options: AutocastOptions): AutocastGuard;
/** Runs `fn` in an autocast region and returns its result; the state is restored also when `fn` throws. */
export function autocast<T>(options: AutocastOptions, fn: () => T): T;
export function autocast<T>(options: AutocastOptions, fn?: () => T): AutocastGuard | T {
  const [deviceType, state] = checkOptions(options);
  if (fn !== undefined && typeof fn !== 'function') {
    throw new TypeError(`autocast(): expected fn to be a function, but got ${typeof fn}`);
  }
  const guard = new AutocastGuard(deviceType, state);
  if (fn === undefined) return guard;
  try {
    return fn();
  } finally {
    guard[Symbol.dispose]();
  }
}

/** PyTorch's `is_eligible`: a defined floating-point tensor of the device that is not float64. */
function isEligible(t: unknown, deviceType: AutocastDeviceType): t is Tensor {
  return t instanceof Tensor && t.device.type === deviceType && t.dtype.isFloatingPoint && t.dtype !== float64;
}

/** PyTorch's `cached_cast`: float32 leaves requiring grad cast to the lower precision are cached. */
function cachedCast(to: DType, arg: unknown, device: AutocastDeviceType): unknown {
  if (Array.isArray(arg)) return arg.map((a) => cachedCast(to, a, device));
  if (!isEligible(arg, device) || arg.dtype === to) return arg;
  const state = DEVICES[device].state;
  const ag = arg.autograd as { requiresGrad?: boolean; gradFn?: unknown } | undefined;
  const canCache = state.cacheEnabled && to === state.dtype && arg.dtype === float32 &&
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
function widest(args: readonly unknown[], device: AutocastDeviceType): DType {
  let current = DEVICES[device].state.dtype;
  const visit = (a: unknown) => {
    if (Array.isArray(a)) return a.forEach(visit);
    if (isEligible(a, device) && a.dtype !== current) current = float32;
  };
  args.forEach(visit);
  return current;
}

/** PyTorch's message for `binary_cross_entropy` in a GPU autocast region. */
const BCE_UNSAFE = 'torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n' +
  'Many models use a sigmoid layer right before the binary cross entropy layer.\n' +
  'In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n' +
  'or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n' +
  'safe to autocast.';

function autocastKernel(op: OperatorHandle, policy: CastPolicy, deviceType: AutocastDeviceType) {
  const { key, state } = DEVICES[deviceType];
  if (policy === 'banned') {
    return () => {
      throw new RuntimeError(BCE_UNSAFE);
    };
  }
  if (policy === 'fp32_set_opt_dtype') {
    const at = op.schema?.arguments.findIndex((a) => a.name === 'dtype') ?? -1;
    if (at < 0) throw new Error(`autocast: ${op.name} has no dtype argument for fp32_set_opt_dtype`);
    return (_hi: number, _lo: number, ...args: unknown[]) =>
      withExcludedKeys([key], () => {
        if (!isEligible(args[0], deviceType) || (args[at] !== undefined && args[at] !== null)) return op.call(...args);
        const withDtype = args.slice();
        while (withDtype.length < at) withDtype.push(undefined);
        withDtype[at] = float32;
        return op.call(...withDtype);
      });
  }
  return (_hi: number, _lo: number, ...args: unknown[]) =>
    withExcludedKeys([key], () => {
      const to = policy === 'fp32' ? float32 : policy === 'promote' ? widest(args, deviceType) : state.dtype;
      return op.call(...args.map((a) => cachedCast(to, a, deviceType)));
    });
}

let library: Library[] | undefined;

/**
 * Registers the AutocastCPU and AutocastWebGPU kernels (idempotent; the first region does it).
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
  const libs: Library[] = [];
  const lists = [['cpu', AUTOCAST_CPU_OPS], ['webgpu', AUTOCAST_WEBGPU_OPS]] as const;
  for (const [deviceType, table] of lists) {
    const { key, name: deviceName } = DEVICES[deviceType];
    const lib = new Library('aten', 'IMPL', key, { location: 'core/features/autocast.ts' });
    for (const [policy, names] of Object.entries(table) as [CastPolicy, readonly string[]][]) {
      for (const name of names) {
        if (ops[name] === undefined) continue;
        lib.impl(name, autocastKernel(ops[name], policy, deviceType), undefined, {
          debug: `autocast ${deviceName} (${policy}) for aten::${name}`,
        });
      }
    }
    libs.push(lib);
  }
  library = libs;
}
