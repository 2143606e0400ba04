/**
 * Acquiring a WebGPU device in each runtime, and refusing adapters that compute nothing.
 *
 * Note [Adapter acquisition]
 * Deno and browsers have `navigator.gpu`. Bun gets it from the optional package `bun-webgpu` (`setupGlobals()`),
 * Node from the optional package `webgpu` (Dawn's binding, `create()`); both are loaded through a non-literal
 * dynamic import so that no type checker or bundler needs them installed. Dawn rejects old Mesa lavapipe drivers
 * but runs on Mesa's GL driver in compatibility mode (`EGL_PLATFORM=surfaceless`), so after the default request
 * a compatibility-mode request is tried. Some setups hand out a *null backend* adapter whose shaders silently
 * write nothing: `isFallbackAdapter` does not tell it apart from a working software adapter (Deno's llvmpipe is
 * a fallback adapter that computes correctly), so every candidate runs one known computation and is refused
 * unless the result comes back right.
 *
 * @module
 */
import { RuntimeError } from '../core/dispatch/errors.ts';
import { readEnv, setEnvDefault } from '../core/dispatch/env.ts';

/** What `gpuInfo()` reports about the adapter in use. */
export interface GpuInfo {
  /** Adapter vendor, as the adapter reports it (so are the three below). */
  readonly vendor: string;
  /** Adapter architecture. */
  readonly architecture: string;
  /** Adapter device name. */
  readonly device: string;
  /** Adapter description. */
  readonly description: string;
  /** Whether the adapter says it is a fallback (software) adapter; `undefined` where it cannot say. */
  readonly isFallbackAdapter: boolean | undefined;
  /** How the device was obtained: `navigator.gpu`, `bun-webgpu`, `webgpu` (Dawn for Node) or `user`. */
  readonly source: 'navigator.gpu' | 'bun-webgpu' | 'webgpu' | 'user';
  /** Whether the adapter was requested in compatibility mode. */
  readonly compatibilityMode: boolean;
  /** The device's optional features (e.g. `shader-f16`). */
  readonly features: readonly string[];
  /** The limits that size kernels and buffers. */
  readonly limits: {
    readonly maxBufferSize: number;
    readonly maxStorageBufferBindingSize: number;
    readonly maxComputeInvocationsPerWorkgroup: number;
    readonly maxComputeWorkgroupsPerDimension: number;
    readonly maxStorageBuffersPerShaderStage: number;
  };
}

/** An acquired device and what is known of its adapter. */
export interface AcquiredDevice {
  readonly device: GPUDevice;
  readonly info: GpuInfo;
}

/** Options of device acquisition. */
export interface AcquireOptions {
  /** Use this device (a browser app's own, for instance) instead of requesting one. */
  readonly device?: GPUDevice;
  /** Passed to `requestAdapter`. */
  readonly powerPreference?: GPUPowerPreference;
}

type Gpu = { requestAdapter(options?: Record<string, unknown>): Promise<GPUAdapter | null> };

// A non-literal specifier: no checker resolves it, and a runtime without the package just fails the import.
const optionalImport = (specifier: string): Promise<Record<string, unknown>> => import(specifier);

/**
 * Sets a variable in the process's C environment. Bun's `process.env` is a JavaScript copy that native code never
 * reads, and Dawn reads `EGL_PLATFORM` with `getenv`, so under Bun on Linux it goes through libc's `setenv`.
 * Best effort: without `bun:ffi` or glibc, the user sets the variable before starting Bun.
 */
async function setNativeEnv(name: string, value: string): Promise<void> {
  try {
    const ffi = await optionalImport('bun:ffi');
    const dlopen = ffi.dlopen as (
      path: string,
      symbols: Record<string, { args: string[]; returns: string }>,
    ) => { symbols: { setenv(n: Uint8Array, v: Uint8Array, overwrite: number): number }; close(): void };
    const libc = dlopen('libc.so.6', { setenv: { args: ['ptr', 'ptr', 'i32'], returns: 'i32' } });
    const cString = (text: string) => new TextEncoder().encode(`${text}\0`);
    libc.symbols.setenv(cString(name), cString(value), 0);
    libc.close();
  } catch {
    // no FFI here: the GL route stays unavailable unless the variable was set at start
  }
}

async function navigatorGpu(): Promise<{ gpu: Gpu; source: GpuInfo['source'] } | undefined> {
  const nav = (globalThis as { navigator?: { gpu?: Gpu } }).navigator;
  if (nav?.gpu !== undefined) return { gpu: nav.gpu, source: 'navigator.gpu' };
  const host = globalThis as {
    Bun?: unknown;
    process?: { platform?: string };
  };
  // Dawn's GL route needs a surfaceless EGL display: harmless where another backend is used. Under Deno without the
  // env permission nothing is touched (and nothing prompts).
  const wasSet = readEnv('EGL_PLATFORM') !== undefined;
  if (setEnvDefault('EGL_PLATFORM', 'surfaceless') && !wasSet) {
    if (host.Bun !== undefined && host.process?.platform === 'linux') await setNativeEnv('EGL_PLATFORM', 'surfaceless');
  }
  if (host.Bun !== undefined) {
    try {
      const bunWebgpu = await optionalImport('bun-webgpu');
      await (bunWebgpu.setupGlobals as () => Promise<void>)();
      const gpu = (globalThis as { navigator?: { gpu?: Gpu } }).navigator?.gpu;
      return gpu === undefined ? undefined : { gpu, source: 'bun-webgpu' };
    } catch {
      return undefined;
    }
  }
  try {
    const dawn = await optionalImport('webgpu');
    Object.assign(globalThis, dawn.globals as object);
    const create = dawn.create as (flags: string[]) => Gpu;
    return { gpu: create([]), source: 'webgpu' };
  } catch {
    return undefined;
  }
}

// y = 2x + 1 over 4 values: a null backend leaves the output zero.
const SELF_TEST_WGSL = `@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  data[id.x] = data[id.x] * 2.0 + 1.0;
}`;

/** Runs the self-test computation; true when the device computed `2x + 1` correctly. */
async function computesCorrectly(device: GPUDevice): Promise<boolean> {
  const input = new Float32Array([1, 2, 3, 4]);
  const data = device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const read = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    device.queue.writeBuffer(data, 0, input);
    const pipeline = device.createComputePipeline({
      layout: 'auto',
      compute: { module: device.createShaderModule({ code: SELF_TEST_WGSL }), entryPoint: 'main' },
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: data } }],
      }),
    );
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(data, 0, read, 0, 16);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const out = new Float32Array(read.getMappedRange().slice(0));
    read.unmap();
    return out[0] === 3 && out[1] === 5 && out[2] === 7 && out[3] === 9;
  } catch {
    return false;
  } finally {
    data.destroy();
    read.destroy();
  }
}

function describeAdapter(
  adapter: GPUAdapter | undefined,
  device: GPUDevice,
  source: GpuInfo['source'],
  compatibilityMode: boolean,
): GpuInfo {
  const info = (adapter?.info ?? (device as { adapterInfo?: GPUAdapterInfo }).adapterInfo) as
    | Partial<GPUAdapterInfo & { isFallbackAdapter: boolean }>
    | undefined;
  let isFallbackAdapter: boolean | undefined;
  try {
    isFallbackAdapter = info?.isFallbackAdapter ?? (adapter as { isFallbackAdapter?: boolean })?.isFallbackAdapter;
  } catch {
    isFallbackAdapter = undefined; // bun-webgpu throws "Not implemented"
  }
  const l = device.limits;
  return Object.freeze({
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    description: info?.description ?? '',
    isFallbackAdapter,
    source,
    compatibilityMode,
    features: Object.freeze([...device.features].map(String).sort()),
    limits: Object.freeze({
      maxBufferSize: l.maxBufferSize,
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    }),
  });
}

/** A device with the adapter's largest buffer and workgroup limits, or its defaults where it refuses them. */
async function requestDevice(adapter: GPUAdapter): Promise<GPUDevice> {
  // The profiler times kernels with timestamp queries where the adapter has them (core/features/profiler_device.ts).
  const requiredFeatures: GPUFeatureName[] = adapter.features.has('timestamp-query') ? ['timestamp-query'] : [];
  try {
    return await requestLargestLimits(adapter, requiredFeatures);
  } catch {
    try {
      return await adapter.requestDevice({ requiredFeatures }); // bun-webgpu reports limits it then refuses
    } catch {
      return await adapter.requestDevice();
    }
  }
}

async function requestLargestLimits(adapter: GPUAdapter, requiredFeatures: GPUFeatureName[]): Promise<GPUDevice> {
  const a = adapter.limits;
  return await adapter.requestDevice({
    requiredFeatures,
    requiredLimits: {
      maxBufferSize: a.maxBufferSize,
      maxStorageBufferBindingSize: a.maxStorageBufferBindingSize,
      maxStorageBuffersPerShaderStage: a.maxStorageBuffersPerShaderStage,
      maxComputeInvocationsPerWorkgroup: a.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: a.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupStorageSize: a.maxComputeWorkgroupStorageSize,
    },
  });
}

/**
 * Finds a device that computes correctly (Note [Adapter acquisition]).
 *
 * @throws {RuntimeError} naming what was tried when no adapter is usable.
 * @example
 * ```ts
 * import { acquireDevice } from './device.ts';
 * const { info } = await acquireDevice();
 * info.description; // e.g. 'llvmpipe (LLVM 15.0.6, 256 bits)'
 * ```
 */
export async function acquireDevice(options: AcquireOptions = {}): Promise<AcquiredDevice> {
  if (options.device !== undefined) {
    if (!(await computesCorrectly(options.device))) {
      throw new RuntimeError('WebGPU: the device given to initWebGPU() failed the self-test (a null backend?)');
    }
    return { device: options.device, info: describeAdapter(undefined, options.device, 'user', false) };
  }
  const found = await navigatorGpu();
  if (found === undefined) {
    throw new RuntimeError(
      'WebGPU is not available in this runtime: Deno and browsers provide navigator.gpu; under Bun install ' +
        "'bun-webgpu', under Node install 'webgpu'",
    );
  }
  const tried: string[] = [];
  const requests: Array<{ compat: boolean; options: Record<string, unknown> }> = [
    { compat: false, options: { powerPreference: options.powerPreference } },
    { compat: true, options: { featureLevel: 'compatibility', backendType: 'OpenGLES' } },
  ];
  for (const request of requests) {
    let adapter: GPUAdapter | null = null;
    try {
      adapter = await found.gpu.requestAdapter(request.options);
    } catch (e) {
      tried.push(`${request.compat ? 'compatibility' : 'default'} adapter request failed (${String(e)})`);
      continue;
    }
    if (adapter === null) {
      tried.push(`no ${request.compat ? 'compatibility' : 'default'} adapter`);
      continue;
    }
    let device: GPUDevice;
    try {
      device = await requestDevice(adapter);
    } catch (e) {
      tried.push(`requestDevice failed (${String(e)})`);
      continue;
    }
    if (await computesCorrectly(device)) {
      return { device, info: describeAdapter(adapter, device, found.source, request.compat) };
    }
    const name = adapter.info?.description || adapter.info?.device || 'unnamed';
    tried.push(`adapter '${name}' failed the self-test (a null backend computes nothing)`);
    device.destroy();
  }
  throw new RuntimeError(`WebGPU: no usable adapter through ${found.source}: ${tried.join('; ')}`);
}
