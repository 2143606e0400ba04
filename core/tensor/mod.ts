/**
 * Tensors: dtypes and promotion, devices, storage, the Tensor class, printing, lifetime and generators.
 *
 * @module
 */
export * from './dtype.ts';
export * from './promotion.ts';
export { FloatScalar, floatScalar, isFloatScalar, type Scalar } from './float_scalar.ts';
export { Device, type DeviceLike, type DeviceType, toDevice } from './device.ts';
export { type AutogradMeta, isTensor, Tensor, type TensorInit, type VersionCounter } from './tensor.ts';
export { keep, type MemoryStats, memoryStats, scope, ScopeFrame, scopeSlot, type Tracked } from './lifetime.ts';
export { Storage } from './storage.ts';
export { heldTensors, type HoldsTensors } from './held_tensors.ts';
export {
  getPrintOptions,
  type PrintOptions,
  type PrintOptionsInit,
  type PrintProfile,
  setPrintOptions,
} from './print_options.ts';
export {
  DEFAULT_SEED,
  defaultCpuGenerator,
  Generator,
  type GeneratorSync,
  getRngState,
  initialSeed,
  manualSeed,
  RNG_STATE_BYTES,
  setRngState,
} from './generator.ts';
export { broadcastShapes } from './shape.ts';
