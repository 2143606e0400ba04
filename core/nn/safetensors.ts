/**
 * The safetensors format (Hugging Face's `safetensors`, https://github.com/huggingface/safetensors): named
 * tensors in one byte buffer, so weights move between PyTorch and Switchyard.
 *
 * Note [Safetensors layout]
 * A file is: 8 bytes, the header length N as a little-endian u64; N bytes of UTF-8 JSON (padded with spaces),
 * `{"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}`;
 * then the data: each tensor's elements in row-major order, little-endian, at `[begin, end)` of the bytes that
 * follow the header. The tensors tile the data exactly (no gaps, no overlaps), as the reference implementation
 * requires. Reading checks all of that before it copies a byte, so a malformed or hostile file gives a
 * `SafetensorError` that says what is wrong, never a read outside the buffer. Writing orders the tensors by
 * element size, largest first, then by name (as the reference writer does), so every tensor is aligned to
 * its element size when the file is mapped.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { pyTypeName } from '../ops/arg_names.ts';
import { empty } from '../ops/generated_api.js';
import { type DeviceLike, toDevice } from '../tensor/device.ts';
import type { DTypeName } from '../tensor/dtype.ts';
import { contiguousHostBytes, Tensor } from '../tensor/tensor.ts';
import { type HostFileSystem, hostFileSystem } from '../tensor/host_files.ts';

/** The safetensors dtypes Switchyard reads and writes. */
export type SafetensorsDType = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

const TO_DTYPE: { readonly [K in SafetensorsDType]: DTypeName } = {
  F64: 'float64',
  F32: 'float32',
  F16: 'float16',
  BF16: 'bfloat16',
  I64: 'int64',
  I32: 'int32',
  I16: 'int16',
  I8: 'int8',
  U8: 'uint8',
  BOOL: 'bool',
};

const FROM_DTYPE: { readonly [K in DTypeName]: SafetensorsDType } = {
  float64: 'F64',
  float32: 'F32',
  float16: 'F16',
  bfloat16: 'BF16',
  int64: 'I64',
  int32: 'I32',
  int16: 'I16',
  int8: 'I8',
  uint8: 'U8',
  bool: 'BOOL',
};

// Valid safetensors dtypes that Switchyard has no dtype for.
const FOREIGN_DTYPES = new Set(['U16', 'U32', 'U64', 'F8_E4M3', 'F8_E5M2', 'F8_E8M0', 'F4', 'F6_E2M3', 'F6_E3M2']);

const ITEM_SIZE: { readonly [K in SafetensorsDType]: number } = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** The reference implementation's limit on the header (100 MB). */
const MAX_HEADER_BYTES = 100_000_000;
const METADATA_KEY = '__metadata__';

/**
 * A malformed safetensors buffer or an unsavable tensor (Python's `safetensors_rust.SafetensorError`).
 *
 * @example
 * ```ts
 * import { load, SafetensorError } from './safetensors.ts';
 * try {
 *   load(new Uint8Array(4));
 * } catch (e) {
 *   e instanceof SafetensorError; // true
 * }
 * ```
 */
export class SafetensorError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorError';
  }
}

/** Named tensors: a Map (its order) or a plain object. */
export type NamedTensors = ReadonlyMap<string, Tensor> | Readonly<Record<string, Tensor>>;

/** Metadata of a file: string keys and string values. */
export type SafetensorsMetadata = Readonly<Record<string, string>>;

function entriesOf(what: string, tensors: unknown): Array<[string, Tensor]> {
  let entries: Array<[unknown, unknown]>;
  if (tensors instanceof Map) entries = [...tensors];
  else if (typeof tensors === 'object' && tensors !== null && !Tensor.isTensor(tensors)) {
    entries = Object.entries(tensors);
  } else {
    throw new TypeError(`${what}: expected a Map or an object of tensors by name, got ${pyTypeName(tensors)}`);
  }
  for (const [name, t] of entries) {
    if (typeof name !== 'string') throw new TypeError(`${what}: tensor names must be str, got ${pyTypeName(name)}`);
    if (name === METADATA_KEY) throw new SafetensorError(`${what}: '${METADATA_KEY}' is reserved for metadata`);
    if (!Tensor.isTensor(t)) throw new TypeError(`${what}: '${name}' must be a Tensor, not ${pyTypeName(t)}`);
    t.assertAlive(what);
    if (t.device.type === 'meta') throw new SafetensorError(`${what}: '${name}' is a meta tensor and has no data`);
  }
  return entries as Array<[string, Tensor]>;
}

function checkMetadata(what: string, metadata: unknown): SafetensorsMetadata | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new TypeError(`${what}: metadata must be an object of strings, not ${pyTypeName(metadata)}`);
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') {
      throw new TypeError(`${what}: metadata values must be str, but '${key}' is ${pyTypeName(value)}`);
    }
  }
  return metadata as SafetensorsMetadata;
}

/** `t` as a contiguous CPU tensor: `t` itself when it is one, else a copy the caller disposes. */
function denseOnCpu(t: Tensor): Tensor {
  return noGrad(() => {
    const onCpu = t.device.type === 'cpu' ? t : t.cpu();
    if (onCpu.isContiguous()) return onCpu;
    const dense = onCpu.contiguous();
    if (onCpu !== t) onCpu.dispose();
    return dense;
  });
}

/**
 * Serialises named tensors (any dtype of {@linkcode SafetensorsDType}, any device, views included) and
 * optional string metadata into safetensors bytes (Note [Safetensors layout]).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { load, save } from './safetensors.ts';
 * const bytes = save({ weight: tensor([[1, 2]], { dtype: 'float32' }) }, { format: 'pt' });
 * load(bytes).get('weight')!.tolist(); // [[1, 2]]
 * ```
 */
export function save(tensors: NamedTensors, metadata?: SafetensorsMetadata): Uint8Array {
  const what = 'safetensors.save()';
  const entries = entriesOf(what, tensors);
  const meta = checkMetadata(what, metadata);
  const names = new Set<string>();
  for (const [name] of entries) {
    if (names.has(name)) throw new SafetensorError(`${what}: tensor name '${name}' appears twice`);
    names.add(name);
  }
  entries.sort(([a, ta], [b, tb]) => tb.dtype.itemSize - ta.dtype.itemSize || (a < b ? -1 : a > b ? 1 : 0));
  const header: Record<string, unknown> = {};
  if (meta !== undefined) header[METADATA_KEY] = meta;
  let offset = 0;
  for (const [name, t] of entries) {
    const size = t.numel * t.dtype.itemSize;
    header[name] = { dtype: FROM_DTYPE[t.dtype.name], shape: [...t.shape], data_offsets: [offset, offset + size] };
    offset += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLength);
  // Each tensor's bytes go straight into the output; only views and non-CPU tensors are copied first.
  let at = 8 + headerLength;
  for (const [, t] of entries) {
    const dense = denseOnCpu(t);
    try {
      const bytes = contiguousHostBytes(dense);
      out.set(bytes, at);
      at += bytes.length;
    } finally {
      if (dense !== t) dense.dispose();
    }
  }
  return out;
}

/**
 * {@linkcode save} for tensors on any device: GPU tensors are read back first (WebGPU has no synchronous
 * readback, so the synchronous `save` raises for them, naming `cpuAsync`).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { load, saveAsync } from './safetensors.ts';
 * const bytes = await saveAsync({ w: tensor([1, 2], { dtype: 'float32' }) }); // a webgpu tensor works too
 * load(bytes).get('w')!.toArray(); // [1, 2]
 * ```
 */
export async function saveAsync(tensors: NamedTensors, metadata?: SafetensorsMetadata): Promise<Uint8Array> {
  const entries = entriesOf('safetensors.saveAsync()', tensors);
  checkMetadata('safetensors.saveAsync()', metadata);
  const onCpu = new Map<string, Tensor>();
  const copies: Tensor[] = [];
  try {
    for (const [name, t] of entries) {
      const copy = await t.cpuAsync();
      if (copy !== t) copies.push(copy);
      onCpu.set(name, copy);
    }
    return save(onCpu, metadata);
  } finally {
    for (const copy of copies) copy.dispose();
  }
}

interface TensorEntry {
  name: string;
  dtype: SafetensorsDType;
  shape: number[];
  begin: number;
  end: number;
}

interface ParsedHeader {
  metadata: SafetensorsMetadata | null;
  tensors: TensorEntry[];
  dataStart: number;
}

function headerError(detail: string): SafetensorError {
  return new SafetensorError(`Error while deserializing header: ${detail}`);
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Reads and checks the header of `bytes` (Note [Safetensors layout]); reads no tensor data. */
function parseHeader(bytes: Uint8Array): ParsedHeader {
  if (bytes.length < 8) {
    throw headerError(`HeaderTooSmall: the buffer has ${bytes.length} bytes, fewer than the 8 of the header length`);
  }
  const declared = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (declared > BigInt(bytes.length - 8)) {
    throw headerError(
      `InvalidHeaderLength: the header length ${declared} goes beyond the buffer (${bytes.length - 8} bytes after ` +
        'the length)',
    );
  }
  const n = Number(declared);
  if (n > MAX_HEADER_BYTES) throw headerError(`HeaderTooLarge: ${n} bytes (the limit is ${MAX_HEADER_BYTES})`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n));
  } catch {
    throw headerError('InvalidHeader: the header is not valid UTF-8');
  }
  if (!text.startsWith('{')) throw headerError("InvalidHeaderStart: the header does not start with '{'");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw headerError(`InvalidHeaderDeserialization: ${(e as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw headerError('InvalidHeaderDeserialization: the header is not a JSON object');
  }
  let metadata: SafetensorsMetadata | null = null;
  const tensors: TensorEntry[] = [];
  for (const [name, info] of Object.entries(json)) {
    if (name === METADATA_KEY) {
      if (typeof info !== 'object' || info === null || Array.isArray(info)) {
        throw headerError(`InvalidHeaderDeserialization: '${METADATA_KEY}' must be an object of strings`);
      }
      for (const [key, value] of Object.entries(info)) {
        if (typeof value !== 'string') {
          throw headerError(`InvalidHeaderDeserialization: metadata value '${key}' is not a string`);
        }
      }
      metadata = info as SafetensorsMetadata;
      continue;
    }
    tensors.push(tensorEntry(name, info));
  }
  const dataLength = bytes.length - 8 - n;
  const byOffset = [...tensors].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = 0;
  for (const t of byOffset) {
    if (t.end > dataLength) {
      throw headerError(
        `InvalidOffset: tensor '${t.name}' has data_offsets [${t.begin}, ${t.end}] beyond the ${dataLength} bytes ` +
          'of data',
      );
    }
    if (t.begin < expected) {
      throw headerError(`InvalidOffset: tensor '${t.name}' overlaps the tensor before it (it starts at ${t.begin})`);
    }
    if (t.begin > expected) {
      throw headerError(
        `InvalidOffset: tensor '${t.name}' starts at ${t.begin}, leaving a gap after byte ${expected} of the data`,
      );
    }
    expected = t.end;
  }
  if (expected !== dataLength) {
    throw headerError(
      `MetadataIncompleteBuffer: the tensors cover ${expected} bytes but the data has ${dataLength} bytes`,
    );
  }
  return { metadata, tensors, dataStart: 8 + n };
}

function tensorEntry(name: string, info: unknown): TensorEntry {
  const where = `tensor '${name}'`;
  if (typeof info !== 'object' || info === null || Array.isArray(info)) {
    throw headerError(`InvalidHeaderDeserialization: ${where} is not an object`);
  }
  const { dtype, shape, data_offsets: offsets } = info as Record<string, unknown>;
  if (typeof dtype !== 'string') throw headerError(`InvalidHeaderDeserialization: ${where} has no dtype string`);
  if (!Object.hasOwn(TO_DTYPE, dtype)) {
    if (FOREIGN_DTYPES.has(dtype)) throw new SafetensorError(`${where} has dtype ${dtype}, which Switchyard lacks`);
    throw headerError(
      `InvalidHeaderDeserialization: ${where} has the unknown dtype '${dtype}' (expected one of ${
        Object.keys(TO_DTYPE).join(', ')
      })`,
    );
  }
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw headerError(`InvalidHeaderDeserialization: ${where} needs a shape of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount) || offsets[0] > offsets[1]) {
    throw headerError(`InvalidHeaderDeserialization: ${where} needs data_offsets [begin, end] with begin <= end`);
  }
  const itemSize = ITEM_SIZE[dtype as SafetensorsDType];
  let numel = 1;
  for (const s of shape as number[]) {
    numel *= s;
    if (!Number.isSafeInteger(numel * itemSize)) throw headerError(`ValidationOverflow: ${where}'s shape is too large`);
  }
  const [begin, end] = offsets as number[];
  if (end - begin !== numel * itemSize) {
    throw headerError(
      `TensorInvalidInfo: ${where} of dtype ${dtype} and shape [${(shape as number[]).join(', ')}] needs ${
        numel * itemSize
      } bytes, but its data_offsets [${begin}, ${end}] span ${end - begin}`,
    );
  }
  return { name, dtype: dtype as SafetensorsDType, shape: shape as number[], begin, end };
}

/** Options of {@linkcode load} and {@linkcode loadFile}. */
export interface LoadOptions {
  /** Where the tensors go (default cpu; uploads to WebGPU are synchronous). */
  device?: DeviceLike;
}

function checkLoadOptions(what: string, options: unknown): DeviceLike | undefined {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${what}: expected an options object, got ${pyTypeName(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'device') throw new TypeError(`${what} got an unexpected keyword argument '${key}'`);
  }
  const device = (options as LoadOptions).device;
  return device === undefined ? undefined : toDevice(device);
}

function asBytes(what: string, data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new TypeError(`${what}: expected a Uint8Array or an ArrayBuffer, got ${pyTypeName(data)}`);
}

/**
 * Reads safetensors bytes into new tensors by name (on the CPU unless `device` says otherwise), in the
 * header's order, checking the whole header first (Note [Safetensors layout]).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { load, save } from './safetensors.ts';
 * const restored = load(save({ bias: tensor([0.5], { dtype: 'float64' }) }));
 * restored.get('bias')!.dtype.name; // 'float64'
 * ```
 */
export function load(data: Uint8Array | ArrayBuffer, options: LoadOptions = {}): Map<string, Tensor> {
  const what = 'safetensors.load()';
  const bytes = asBytes(what, data);
  const device = checkLoadOptions(what, options);
  const { tensors, dataStart } = parseHeader(bytes);
  const out = new Map<string, Tensor>();
  try {
    for (const entry of tensors) {
      const t = empty(entry.shape, { dtype: TO_DTYPE[entry.dtype] });
      out.set(entry.name, t);
      const target = contiguousHostBytes(t);
      target.set(bytes.subarray(dataStart + entry.begin, dataStart + entry.end));
      // A bool byte is 0 or 1 in Switchyard's kernels; PyTorch reads any non-zero byte as true.
      if (entry.dtype === 'BOOL') { for (let i = 0; i < target.length; i++) target[i] = target[i] === 0 ? 0 : 1; }
      if (device !== undefined) {
        const moved = t.to({ device });
        if (moved !== t) {
          out.set(entry.name, moved);
          t.dispose();
        }
      }
    }
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  }
  return out;
}

/**
 * The `__metadata__` of safetensors bytes (null when there is none), after checking the header.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { readMetadata, save } from './safetensors.ts';
 * readMetadata(save({ x: tensor([1]) }, { format: 'pt' })); // { format: 'pt' }
 * ```
 */
export function readMetadata(data: Uint8Array | ArrayBuffer): SafetensorsMetadata | null {
  return parseHeader(asBytes('safetensors.readMetadata()', data)).metadata;
}

// Looked up when a file is read or written, so that the module also loads where there is no file system.
function fileSystem(what: string): HostFileSystem {
  try {
    return hostFileSystem(what);
  } catch (e) {
    throw new Error(`${(e as Error).message}; use save()/load() with bytes instead`);
  }
}

function checkPath(what: string, path: unknown): string {
  if (typeof path !== 'string') throw new TypeError(`${what}: argument 'path' must be str, not ${pyTypeName(path)}`);
  return path;
}

/**
 * Writes named tensors (and optional metadata) to a safetensors file at `path` (Deno, Bun, Node).
 *
 * @example
 * ```ts
 * import { nn } from '../../mod.ts';
 * import { loadFile, saveFile } from './safetensors.ts';
 * const model = new nn.Linear(4, 2);
 * saveFile(model.stateDict(), '/tmp/model.safetensors', { format: 'pt' });
 * model.loadStateDict(loadFile('/tmp/model.safetensors'));
 * ```
 */
export function saveFile(tensors: NamedTensors, path: string, metadata?: SafetensorsMetadata): void {
  const what = 'safetensors.saveFile()';
  checkPath(what, path);
  const bytes = save(tensors, metadata);
  fileSystem(what).writeFileSync(path, bytes);
}

/**
 * {@linkcode saveFile} for tensors on any device (GPU tensors are read back first; see {@linkcode saveAsync}).
 *
 * @example
 * ```ts
 * import { nn } from '../../mod.ts';
 * import { saveFileAsync } from './safetensors.ts';
 * const model = new nn.Linear(4, 2); // or a model moved to { device: 'webgpu' }
 * await saveFileAsync(model.stateDict(), '/tmp/linear.safetensors');
 * ```
 */
export async function saveFileAsync(
  tensors: NamedTensors,
  path: string,
  metadata?: SafetensorsMetadata,
): Promise<void> {
  const what = 'safetensors.saveFileAsync()';
  checkPath(what, path);
  const bytes = await saveAsync(tensors, metadata);
  fileSystem(what).writeFileSync(path, bytes);
}

/**
 * Reads a safetensors file into new tensors by name, on the CPU unless `device` says otherwise (Deno, Bun,
 * Node).
 *
 * @example
 * ```ts
 * import { loadFile } from './safetensors.ts';
 * // const weights = loadFile('model.safetensors'); // Map { 'fc.weight' => Tensor, ... }
 * ```
 */
export function loadFile(path: string, options: LoadOptions = {}): Map<string, Tensor> {
  const what = 'safetensors.loadFile()';
  checkPath(what, path);
  checkLoadOptions(what, options);
  return load(fileSystem(what).readFileSync(path), options);
}

export { loadModel, saveModel } from './state_dict.ts';
