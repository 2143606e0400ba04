/**
 * Seeing inside the dispatcher: cross-cutting features that are dispatch keys with fallbacks.
 *
 * - the profiler (the `Profiler` key): `profile(fn)` / `using p = profiler()`, `keyAverages().table()`,
 *   `exportChromeTrace(path)`; WebGPU kernel times with `activities: ['cpu', 'webgpu']`; calls of attached agents
 *   and the intra-op pool's chunks.
 *
 * @example
 * ```ts
 * import { profile, randn } from '../../mod.ts';
 * const a = randn(32, 32);
 * console.log(profile(() => a.mm(a).relu()).keyAverages().table({ sortBy: 'cpu_time_total' }));
 * ```
 *
 * @module
 */
export {
  keyPathOf,
  profile,
  Profiler,
  profiler,
  type ProfilerEvent,
  type ProfilerOptions,
  registerProfilerFallback,
  type ThreadChunkEvent,
} from './profiler.ts';
export {
  alignKernelTimes,
  type DeviceKernelEvent,
  type DeviceKernelRecord,
  type DeviceTimer,
  deviceTimesPerCall,
  type ProfilerActivity,
  registerDeviceTimer,
} from './profiler_device.ts';
export {
  type ChromeTrace,
  chromeTrace,
  type ChromeTraceEvent,
  EventList,
  formatMemory,
  formatTime,
  type FunctionEventAvg,
  keyAverages,
  type KeyAveragesOptions,
  type SortBy,
  type TableOptions,
  writeChromeTrace,
} from './profiler_report.ts';
export {
  callOp,
  currentDispatchMode,
  type DispatchKwargs,
  DispatchMode,
  dispatchModeStack,
  enablePythonKey,
  NotImplemented,
  popMode,
  pushMode,
  registerPythonFallback,
  type TorchDispatchClass,
} from './dispatch_mode.ts';
export { type WrapperGeometry, WrapperTensor } from './wrapper_tensor.ts';
export { FakeTensorMode } from './fake_tensor.ts';
export {
  bmmFlop,
  FLOP_FORMULAS,
  FlopCounterMode,
  type FlopCounterOptions,
  type FlopFormula,
  formatFlops,
  mmFlop,
} from './flop_counter.ts';
export { splitArguments } from './dispatch_mode.ts';
export {
  Graph,
  type GraphJSON,
  type GraphNode,
  isMutating,
  isNondeterministic,
  metaOf,
  type NodeMeta,
  type NodeOp,
  type RunOptions,
  type TensorMeta,
  ValueRef,
} from './graph.ts';
export { makeFx, registerTracerFallback, trace, type TraceOptions } from './tracer.ts';
export {
  dispatchPath,
  dispatchPathSvg,
  dispatchPictureHtml,
  dispatchTableSvg,
  type PathOptions,
  type PathStep,
} from './dispatch_picture.ts';
