/**
 * Moving tensor data between the CPU and the GPU: uploads are synchronous (the queue copies the bytes at once),
 * readback is asynchronous (WebGPU maps buffers only through a promise). Both convert between the CPU's packed
 * elements and the GPU's words (Note [GPU element layout]).
 *
 * @module
 */
import { Device } from '../core/tensor/device.ts';
import { type DType, float16BitsToNumber, numberToBFloat16Bits, numberToFloat16Bits } from '../core/tensor/dtype.ts';
import { Storage } from '../core/tensor/storage.ts';
import { contiguousHostBytes, Tensor } from '../core/tensor/tensor.ts';
import { transferRange } from './boundary.ts';
import { gpuRuntime } from './runtime.ts';

/** The GPU words of `count` packed CPU elements of `dtype` (a view of the same bytes where they agree). */
function toWords(bytes: Uint8Array, dtype: DType, count: number): ArrayBufferView<ArrayBuffer> {
  const buffer = bytes.buffer as ArrayBuffer, at = bytes.byteOffset;
  switch (dtype.name) {
    case 'float16': {
      const halves = new Uint16Array(buffer, at, count), out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = float16BitsToNumber(halves[i]);
      return out;
    }
    case 'bfloat16': {
      const halves = new Uint16Array(buffer, at, count), out = new Uint32Array(count);
      for (let i = 0; i < count; i++) out[i] = halves[i] << 16;
      return out;
    }
    case 'int16':
      return Int32Array.from(new Int16Array(buffer, at, count));
    case 'int8':
      return Int32Array.from(new Int8Array(buffer, at, count));
    case 'uint8':
    case 'bool':
      return Int32Array.from(new Uint8Array(buffer, at, count));
    default:
      return new Uint8Array(bytes); // same layout: copied, since the CPU memory may move before the queue reads it
  }
}

/** Writes GPU words of `count` elements of `dtype` into packed CPU bytes. */
function fromWords(words: ArrayBuffer, dtype: DType, out: Uint8Array, count: number): void {
  const buffer = out.buffer as ArrayBuffer, at = out.byteOffset;
  switch (dtype.name) {
    case 'float16': {
      const src = new Float32Array(words, 0, count), dst = new Uint16Array(buffer, at, count);
      for (let i = 0; i < count; i++) dst[i] = numberToFloat16Bits(src[i]);
      return;
    }
    case 'bfloat16': {
      const src = new Float32Array(words, 0, count), dst = new Uint16Array(buffer, at, count);
      for (let i = 0; i < count; i++) dst[i] = numberToBFloat16Bits(src[i]);
      return;
    }
    case 'int16':
      new Int16Array(buffer, at, count).set(new Int32Array(words, 0, count));
      return;
    case 'int8':
      new Int8Array(buffer, at, count).set(new Int32Array(words, 0, count));
      return;
    case 'uint8':
    case 'bool':
      new Uint8Array(buffer, at, count).set(new Int32Array(words, 0, count));
      return;
    default:
      out.set(new Uint8Array(words, 0, out.byteLength));
  }
}

/**
 * Writes the elements of a contiguous CPU tensor into the contiguous GPU tensor `dst` of the same dtype and
 * element count.
 *
 * @example
 * ```ts
 * import { uploadInto } from './transfer.ts';
 * // uploadInto(gpuTensor, cpuTensor)
 * ```
 */
export function uploadInto(dst: Tensor, src: Tensor): void {
  const n = src.numel;
  if (n === 0) return;
  const words = toWords(contiguousHostBytes(src), src.dtype, n);
  const { buffer, byteOffset } = transferRange(dst, 'copy_', n);
  gpuRuntime().queue.upload(buffer, byteOffset, words);
}

/**
 * A new CPU tensor holding the elements of the contiguous GPU tensor `src`, once the queue has run.
 *
 * @example
 * ```ts
 * import { download } from './transfer.ts';
 * // const cpu = await download(gpuTensor);
 * ```
 */
export async function download(src: Tensor): Promise<Tensor> {
  const n = src.numel;
  const { buffer, byteOffset, byteLength } = transferRange(src, 'cpuAsync', n);
  const words = await gpuRuntime().queue.read(buffer, byteOffset, byteLength);
  const out = new Tensor({
    storage: Storage.allocate(Device.cpu, n * src.dtype.itemSize),
    shape: src.shape,
    dtype: src.dtype,
  });
  if (n > 0) fromWords(words, src.dtype, contiguousHostBytes(out), n);
  return out;
}
