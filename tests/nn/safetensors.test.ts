// safetensors: files from a tiny independent writer load with the right values for every dtype; what save()
// writes parses with an independent reader; round trips (views, files, a model's state dict); malformed
// headers give clear errors without reading out of bounds and leave no tensor behind.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arange, manualSeed, memoryStats, randn, safetensors, tensor } from '../../mod.ts';
import { Linear, ReLU, Sequential } from '../../core/nn/mod.ts';

const { load, loadFile, readMetadata, save, saveFile, SafetensorError } = safetensors;

type Writer = (view: DataView, at: number, value: number | bigint | boolean) => void;
const WRITERS: Record<string, [number, Writer]> = {
  F64: [8, (v, at, x) => v.setFloat64(at, x as number, true)],
  F32: [4, (v, at, x) => v.setFloat32(at, x as number, true)],
  F16: [2, (v, at, x) => v.setUint16(at, x as number, true)], // raw bits
  BF16: [2, (v, at, x) => v.setUint16(at, x as number, true)], // raw bits
  I64: [8, (v, at, x) => v.setBigInt64(at, BigInt(x as number | bigint), true)],
  I32: [4, (v, at, x) => v.setInt32(at, x as number, true)],
  I16: [2, (v, at, x) => v.setInt16(at, x as number, true)],
  I8: [1, (v, at, x) => v.setInt8(at, x as number)],
  U8: [1, (v, at, x) => v.setUint8(at, x as number)],
  BOOL: [1, (v, at, x) => v.setUint8(at, x ? 1 : 0)],
};

interface Spec {
  dtype: string;
  shape: number[];
  values: Array<number | bigint | boolean>;
}

/**
 * An independent writer of the format: header JSON in the given key order (padded with spaces to `pad`), data
 * laid out in `dataOrder`, values written with DataView in little-endian.
 */
function writeSafetensors(
  tensors: Record<string, Spec>,
  options: { metadata?: Record<string, string>; dataOrder?: string[]; pad?: number } = {},
): Uint8Array {
  const order = options.dataOrder ?? Object.keys(tensors);
  const offsets: Record<string, [number, number]> = {};
  let size = 0;
  for (const name of order) {
    const { dtype, values } = tensors[name];
    offsets[name] = [size, size + WRITERS[dtype][0] * values.length];
    size += WRITERS[dtype][0] * values.length;
  }
  const header: Record<string, unknown> = {};
  if (options.metadata) header.__metadata__ = options.metadata;
  for (const [name, { dtype, shape }] of Object.entries(tensors)) {
    header[name] = { dtype, shape, data_offsets: offsets[name] };
  }
  let json = JSON.stringify(header);
  while (json.length % (options.pad ?? 1) !== 0) json += ' ';
  const text = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + text.length + size);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  for (const name of order) {
    const { dtype, values } = tensors[name];
    const [item, write] = WRITERS[dtype];
    values.forEach((x, i) => write(view, 8 + text.length + offsets[name][0] + i * item, x));
  }
  return out;
}

const BIG = 2n ** 62n + 12345n;
const FILE: Record<string, Spec> = {
  'encoder.weight': { dtype: 'F32', shape: [2, 3], values: [0.5, -1.25, 3, 1e-3, -7, 65504] },
  'encoder.bias': { dtype: 'F64', shape: [3], values: [Math.PI, -Math.E, 1e300] },
  'steps': { dtype: 'I64', shape: [], values: [BIG] },
  'ids': { dtype: 'I32', shape: [2, 2], values: [-2147483648, 2147483647, 0, 7] },
  'short': { dtype: 'I16', shape: [2], values: [-32768, 32767] },
  'tiny': { dtype: 'I8', shape: [3], values: [-128, 127, 0] },
  'pixels': { dtype: 'U8', shape: [1, 3], values: [0, 200, 255] },
  'mask': { dtype: 'BOOL', shape: [4], values: [true, false, false, true] },
  'half': { dtype: 'F16', shape: [2], values: [0x3e00, 0xc000] }, // 1.5, -2
  'brain': { dtype: 'BF16', shape: [2], values: [0x3fc0, 0xc000] }, // 1.5, -2
  'empty': { dtype: 'F32', shape: [0, 4], values: [] },
};

describe('safetensors.load reads files of an independent writer', () => {
  it('every dtype, with the values, shapes and dtypes written; metadata; data in another order than the header', () => {
    const bytes = writeSafetensors(FILE, {
      metadata: { format: 'pt', note: 'ünïcode ✓' },
      dataOrder: Object.keys(FILE).reverse(),
      pad: 8,
    });
    const tensors = load(bytes);
    assert.deepEqual([...tensors.keys()].sort(), Object.keys(FILE).sort());
    const dtypes: Record<string, string> = {
      F32: 'float32',
      F64: 'float64',
      I64: 'int64',
      I32: 'int32',
      I16: 'int16',
      I8: 'int8',
      U8: 'uint8',
      BOOL: 'bool',
      F16: 'float16',
      BF16: 'bfloat16',
    };
    for (const [name, spec] of Object.entries(FILE)) {
      const t = tensors.get(name)!;
      assert.deepEqual(t.shape, spec.shape, name);
      assert.equal(t.dtype.name, dtypes[spec.dtype], name);
      assert.equal(t.device.type, 'cpu');
      if (spec.dtype === 'F16' || spec.dtype === 'BF16') assert.deepEqual(t.toArray(), [1.5, -2]);
      else if (spec.dtype === 'F32') assert.deepEqual(t.toArray(), spec.values.map((v) => Math.fround(v as number)));
      else if (spec.dtype === 'I64') {
        const raw = t.storage.bytes();
        assert.equal(new DataView(raw.buffer, raw.byteOffset).getBigInt64(t.storageOffset * 8, true), BIG);
      } else assert.deepEqual(t.toArray(), spec.values);
    }
    assert.deepEqual(readMetadata(bytes), { format: 'pt', note: 'ünïcode ✓' });
    assert.equal(readMetadata(writeSafetensors({ x: FILE.short })), null);
    for (const t of tensors.values()) t.dispose();
  });

  it('loadFile reads a file, and a bool byte other than 0/1 reads as true', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-st-'));
    try {
      const bytes = writeSafetensors({ mask: { dtype: 'BOOL', shape: [3], values: [false, true, true] } });
      bytes.set([0, 2, 255], bytes.length - 3);
      const path = join(dir, 'mask.safetensors');
      writeFileSync(path, bytes);
      const tensors = loadFile(path);
      const mask = tensors.get('mask')!;
      assert.deepEqual(mask.toArray(), [false, true, true]);
      assert.deepEqual(
        mask.storage.bytes().subarray(mask.storageOffset, mask.storageOffset + 3),
        new Uint8Array([0, 1, 1]),
      );
      mask.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** An independent reader of what save() writes: header fields and little-endian values. */
function readHeader(bytes: Uint8Array): { n: number; header: Record<string, any> } {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return { n, header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) };
}

describe('safetensors.save', () => {
  it('writes the layout of the format: u64 length, padded JSON header, aligned little-endian data', () => {
    const a = tensor([[1.5, -2], [3, 4]], { dtype: 'float32' });
    const b = tensor([1, -1, 2 ** 40], { dtype: 'int64' });
    const c = tensor([true, false, true], { dtype: 'bool' });
    const d = tensor([0.1], { dtype: 'float64' });
    const bytes = save({ zeta: a, beta: b, mask: c, alpha: d }, { format: 'pt' });
    const { n, header } = readHeader(bytes);
    assert.equal(n % 8, 0);
    assert.match(new TextDecoder().decode(bytes.subarray(8, 8 + n)), /^\{.*\} *$/);
    assert.deepEqual(Object.keys(header), ['__metadata__', 'alpha', 'beta', 'zeta', 'mask']);
    assert.deepEqual(header.__metadata__, { format: 'pt' });
    assert.deepEqual(header.alpha, { dtype: 'F64', shape: [1], data_offsets: [0, 8] });
    assert.deepEqual(header.beta, { dtype: 'I64', shape: [3], data_offsets: [8, 32] });
    assert.deepEqual(header.zeta, { dtype: 'F32', shape: [2, 2], data_offsets: [32, 48] });
    assert.deepEqual(header.mask, { dtype: 'BOOL', shape: [3], data_offsets: [48, 51] });
    assert.equal(bytes.length, 8 + n + 51);
    const data = new DataView(bytes.buffer, bytes.byteOffset + 8 + n);
    assert.equal(data.getFloat64(0, true), 0.1);
    assert.equal(data.getBigInt64(24, true), 2n ** 40n);
    assert.deepEqual([0, 1, 2, 3].map((i) => data.getFloat32(32 + 4 * i, true)), [1.5, -2, 3, 4]);
    assert.deepEqual([48, 49, 50].map((i) => data.getUint8(i)), [1, 0, 1]);
    for (const t of [a, b, c, d]) t.dispose();
  });

  it('round-trips every dtype, views (transposed, sliced, expanded) and 0-d tensors, leaving inputs alone', () => {
    manualSeed(4);
    const base = randn([3, 5], { dtype: 'float64' });
    const sources = new Map([
      ['transposed', base.t()],
      ['sliced', base.narrow(1, 1, 3)],
      ['expanded', tensor([1, 2], { dtype: 'int32' }).unsqueeze(0).expand([3, 2])],
      ['scalar', tensor(7, { dtype: 'int16' })],
      ['half', tensor([0.5, -65504, 1e-3], { dtype: 'float16' })],
      ['bf16', tensor([0.5, -3e38, 1e-3], { dtype: 'bfloat16' })],
      ['int8', tensor([-128, 5], { dtype: 'int8' })],
      ['uint8', tensor([255, 5], { dtype: 'uint8' })],
      ['float32', arange(0, 6, { dtype: 'float32' }).view([2, 3])],
      ['big', tensor([2 ** 53, -(2 ** 53)], { dtype: 'int64' })],
    ]);
    const live = memoryStats().liveTensors;
    const bytes = save(sources);
    assert.equal(memoryStats().liveTensors, live);
    const loaded = load(bytes);
    for (const [name, t] of sources) {
      const back = loaded.get(name)!;
      assert.deepEqual(back.shape, t.shape, name);
      assert.equal(back.dtype, t.dtype, name);
      assert.deepEqual(back.toArray(), t.toArray(), name);
      assert.ok(back.isContiguous());
      back.dispose();
    }
    assert.equal(memoryStats().liveTensors, live);
    for (const t of sources.values()) t.dispose();
    base.dispose();
  });

  it('saveAsync and saveFileAsync give the bytes save() gives (CPU tensors here; GPU ones are read back first)', async () => {
    const a = tensor([[1, 2], [3, 4]], { dtype: 'float32' });
    const view = a.t();
    const expected = save({ a, view }, { format: 'pt' });
    const live = memoryStats().liveTensors;
    assert.deepEqual(await safetensors.saveAsync({ a, view }, { format: 'pt' }), expected);
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-st-'));
    try {
      const path = join(dir, 'a.safetensors');
      await safetensors.saveFileAsync(new Map([['a', a], ['view', view]]), path, { format: 'pt' });
      assert.deepEqual(new Uint8Array(readFileSync(path)), expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(memoryStats().liveTensors, live);
    await assert.rejects(() => safetensors.saveAsync({ a: 3 } as never), /'a' must be a Tensor, not int/);
    a.dispose();
  });

  it('load({ device }) puts the tensors there (meta here: shapes and dtypes, no data), and checks the device', () => {
    const bytes = writeSafetensors({ w: FILE['encoder.weight'], m: FILE.mask });
    const live = memoryStats().liveTensors;
    const onMeta = load(bytes, { device: 'meta' });
    assert.equal(onMeta.get('w')!.device.type, 'meta');
    assert.deepEqual(onMeta.get('w')!.shape, [2, 3]);
    assert.equal(onMeta.get('m')!.dtype.name, 'bool');
    for (const t of onMeta.values()) t.dispose();
    const onCpu = load(bytes, { device: 'cpu' });
    assert.deepEqual(onCpu.get('m')!.toArray(), [true, false, false, true]);
    for (const t of onCpu.values()) t.dispose();
    assert.equal(memoryStats().liveTensors, live);
    assert.throws(() => load(bytes, { device: 'cuda' as never }), /Expected one of cpu, meta, webgpu device type/);
    assert.throws(() => load(bytes, { dtype: 'float32' } as never), /unexpected keyword argument 'dtype'/);
    assert.throws(() => loadFile('/nonexistent/x.safetensors', { device: 'tpu' as never }), /Expected one of cpu/);
    assert.equal(memoryStats().liveTensors, live);
  });

  it('checks its arguments', () => {
    const t = tensor([1]);
    assert.throws(() => save(t as never), /expected a Map or an object of tensors by name, got Tensor/);
    assert.throws(() => save({ a: 1 } as never), /'a' must be a Tensor, not int/);
    assert.throws(() => save({ __metadata__: t }), /'__metadata__' is reserved/);
    assert.throws(() => save({ a: t }, { n: 1 } as never), /metadata values must be str, but 'n' is int/);
    assert.throws(() => load('abc' as never), /expected a Uint8Array or an ArrayBuffer, got str/);
    assert.throws(() => saveFile({ a: t }, 5 as never), /argument 'path' must be str, not int/);
    const dead = tensor([1]);
    dead.dispose();
    assert.throws(() => save({ a: dead }), /disposed/);
    t.dispose();
  });
});

describe('safetensors: a model state dict goes to a file and back', () => {
  it("keys are PyTorch's; loadStateDict restores the weights exactly", () => {
    manualSeed(9);
    const source = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-st-'));
    try {
      const path = join(dir, 'model.safetensors');
      saveFile(source.stateDict(), path, { format: 'pt' });
      const { header } = readHeader(new Uint8Array(readFileSync(path)));
      assert.deepEqual(Object.keys(header).sort(), ['0.bias', '0.weight', '2.bias', '2.weight', '__metadata__']);
      manualSeed(10);
      const target = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
      const weights = loadFile(path);
      target.loadStateDict(weights);
      for (const t of weights.values()) t.dispose();
      for (const [key, t] of source.stateDict()) assert.deepEqual(target.stateDict().get(key)!.toArray(), t.toArray());
      target.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    source.dispose();
  });
});

describe('safetensors: malformed buffers give clear errors and leave nothing behind', () => {
  const good = () => writeSafetensors({ a: { dtype: 'F32', shape: [2], values: [1, 2] }, b: FILE.tiny });
  function withHeader(json: string, data = new Uint8Array(0), declared?: bigint): Uint8Array {
    const text = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + text.length + data.length);
    new DataView(out.buffer).setBigUint64(0, declared ?? BigInt(text.length), true);
    out.set(text, 8);
    out.set(data, 8 + text.length);
    return out;
  }
  const cases: Array<[string, () => Uint8Array, RegExp]> = [
    ['fewer than 8 bytes', () => new Uint8Array(5), /HeaderTooSmall: the buffer has 5 bytes/],
    [
      'a header length beyond the file',
      () => good().subarray(0, 40),
      /InvalidHeaderLength: the header length \d+ goes beyond/,
    ],
    ['a header length of 2^63', () => withHeader('{}', new Uint8Array(0), 2n ** 63n), /InvalidHeaderLength/],
    [
      'a header that is not UTF-8',
      () => withHeader('{}').fill(0xff, 8, 9),
      /InvalidHeader: the header is not valid UTF-8/,
    ],
    ['a header not starting with {', () => withHeader(' {}'), /InvalidHeaderStart/],
    ['a header that is not JSON', () => withHeader('{"a": '), /InvalidHeaderDeserialization/],
    [
      'an unknown dtype',
      () => withHeader('{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', new Uint8Array(4)),
      /unknown dtype 'F33'/,
    ],
    [
      'a dtype Switchyard lacks',
      () => withHeader('{"a":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}}', new Uint8Array(2)),
      /dtype U16, which Switchyard lacks/,
    ],
    [
      'offsets beyond the data',
      () => withHeader('{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', new Uint8Array(8)),
      /InvalidOffset: tensor 'a' has data_offsets \[0, 16\] beyond the 8 bytes/,
    ],
    [
      'overlapping offsets',
      () =>
        withHeader(
          '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}',
          new Uint8Array(12),
        ),
      /InvalidOffset: tensor 'b' overlaps the tensor before it/,
    ],
    [
      'a gap between tensors',
      () =>
        withHeader(
          '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}',
          new Uint8Array(12),
        ),
      /InvalidOffset: tensor 'b' starts at 8, leaving a gap after byte 4/,
    ],
    [
      'offsets that do not fit the shape',
      () => withHeader('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', new Uint8Array(8)),
      /TensorInvalidInfo: tensor 'a' of dtype F32 and shape \[3\] needs 12 bytes, but its data_offsets \[0, 8\] span 8/,
    ],
    [
      'trailing bytes after the tensors',
      () => withHeader('{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}', new Uint8Array(3)),
      /MetadataIncompleteBuffer: the tensors cover 1 bytes but the data has 3/,
    ],
    [
      'reversed offsets',
      () => withHeader('{"a":{"dtype":"I8","shape":[0],"data_offsets":[1,0]}}', new Uint8Array(1)),
      /data_offsets \[begin, end\] with begin <= end/,
    ],
    [
      'a negative dim',
      () => withHeader('{"a":{"dtype":"I8","shape":[-1],"data_offsets":[0,0]}}'),
      /needs a shape of non-negative integers/,
    ],
    [
      'an overflowing shape',
      () => withHeader('{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}'),
      /ValidationOverflow/,
    ],
    [
      'a metadata value that is not a string',
      () => withHeader('{"__metadata__":{"n":1}}'),
      /metadata value 'n' is not a string/,
    ],
    ['a header that is an array', () => withHeader('[1]'), /InvalidHeaderStart/],
  ];
  for (const [name, make, expected] of cases) {
    it(name, () => {
      const bytes = make();
      const live = memoryStats().liveTensors;
      assert.throws(() => load(bytes), (e: Error) => e instanceof SafetensorError && expected.test(e.message));
      assert.equal(memoryStats().liveTensors, live);
    });
  }

  it('the runtime stays usable: a good buffer loads after the bad ones', () => {
    const tensors = load(good());
    assert.deepEqual(tensors.get('a')!.toArray(), [1, 2]);
    for (const t of tensors.values()) t.dispose();
  });
});
