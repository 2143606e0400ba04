/**
 * WebGPU kernels of the scans (`cumsum`, `cumprod`), of `sort.stable` and of `mode` (Note [GPU sort plan] in
 * sort_engine.ts).
 *
 * Note [GPU scan plan]
 * The input is first converted to the result dtype (as the CPU kernel and PyTorch do: `cumsum` of int32 is an
 * int64 scan), then every line along `dim` is scanned in chunks of `CHUNK` elements, read through the input's
 * strides: a first pass reduces each chunk to its sum or product, a second scans the chunk totals of each line
 * (exclusively, in place), and a third rescans each chunk from its carried-in total, so long lines have as many
 * invocations as chunks. Lines no longer than a chunk take only the third pass. Floats accumulate in float32
 * (float16 and bfloat16 round on each store; PyTorch's CUDA `acc_type` is float too, while the CPU kernel
 * accumulates in double, so float results agree with the CPU's to float32 rounding), int64 in emulated 64-bit
 * words, the narrower integers in i32 wrapped to their width on store (the CPU's wrapped int64 accumulation,
 * modulo the width, is the same number).
 *
 * @module
 */
import type { DType } from '../../core/tensor/dtype.ts';
import { float32, int32, int64 } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { contiguousStrides, wrapDim } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { ScanSortBackendOpName } from '../../core/ops/decl_scan_sort.ts';
import { modeMeta, scanMeta, sortMeta } from '../../core/ops/meta_scan_sort.ts';
import { KernelBindings } from '../boundary.ts';
import { emptyGpu } from '../tensors.ts';
import { type Kind, kindOf, loadWgsl, storeWgsl, wgslType } from '../wgsl/dtypes.ts';
import { copyInto } from './copy.ts';
import { runItems } from './custom.ts';
import { linePlan, lineWalk, lineWalkWords, modeGpu, otherStrides, sortGpu, writeLineWalk } from './sort_engine.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** Elements per chunk of a scanned line (Note [GPU scan plan]). */
const CHUNK = 256;

type ScanOp = 'sum' | 'prod';

function combine(op: ScanOp, kind: Kind, a: string, b: string): string {
  if (kind === 'i64') return op === 'sum' ? `i64_add(${a}, ${b})` : `i64_mul(${a}, ${b})`;
  return op === 'sum' ? `${a} + ${b}` : `${a} * ${b}`;
}

function identity(op: ScanOp, kind: Kind): string {
  const one = op === 'prod';
  if (kind === 'f32') return one ? '1.0' : '0.0';
  if (kind === 'i32') return one ? '1i' : '0i';
  return one ? 'vec2<u32>(1u, 0u)' : 'vec2<u32>(0u, 0u)';
}

/** The dtype chunk totals are kept in: float32 for every float, else the result's. */
function totalDtype(kind: Kind): DType {
  return kind === 'f32' ? float32 : kind === 'i64' ? int64 : int32;
}

/** Scans `input` (already of the result dtype) along `dim` into the contiguous `out` (Note [GPU scan plan]). */
function scanInto(op: ScanOp, name: string, out: Tensor, input: Tensor, dim: number): void {
  const kernel = `${name}_webgpu`;
  const kind = kindOf(out.dtype, kernel);
  const plan = linePlan(input.shape, dim);
  const { rows, n } = plan;
  const rank = plan.sizes.length;
  const inStrides = input.ndim === 0 ? [] : otherStrides(input.stride(), dim);
  const outStrides = input.ndim === 0 ? [] : otherStrides(contiguousStrides(input.shape), dim);
  const inDim = input.ndim === 0 ? 0 : input.stride()[dim];
  const outDim = input.ndim === 0 ? 0 : contiguousStrides(input.shape)[dim];
  const chunks = Math.ceil(n / CHUNK);
  const type = wgslType(kind);
  const tdtype = totalDtype(kind);
  const totals = chunks > 1 ? emptyGpu([rows * chunks], tdtype) : undefined;
  try {
    const base = 6;
    const words = base + lineWalkWords(rank, 2);
    const params = (x: number, o: number) => (q: { words: Uint32Array; ints: Int32Array }, slot: number) => {
      q.words[slot + 1] = n;
      q.words[slot + 2] = chunks;
      q.ints[slot + 3] = inDim;
      q.ints[slot + 4] = outDim;
      q.words[slot + 5] = CHUNK;
      writeLineWalk(q, slot, base, [x, o], plan.sizes, [inStrides, outStrides]);
    };
    if (totals !== undefined) {
      // Pass 1: the total of each chunk.
      const b = new KernelBindings(kernel);
      const x = b.strided(input, input.shape, input.stride(), false);
      const tt = b.contiguous(totals, rows * chunks, true);
      runItems({
        key: `scan1|${op}|${input.dtype.name}|${rank}|${x.slot}${tt.slot}`,
        bindings: b,
        words,
        items: rows * chunks,
        body: () => [
          'let row = t / pw(2u); let c = t % pw(2u);',
          ...lineWalk(rank, 2, base),
          'let start = c * pw(5u); let end = min(start + pw(5u), pw(1u));',
          `var acc: ${type} = ${identity(op, kind)};`,
          'for (var j = start; j < end; j = j + 1u) {',
          `  let v = ${loadWgsl(input.dtype, `b${x.slot}`, 'u32(o0 + i32(j) * pi(3u))')};`,
          `  acc = ${combine(op, kind, 'acc', 'v')};`,
          '}',
          storeWgsl(tdtype, `b${tt.slot}`, 't', 'acc'),
        ],
        params: params(x.offset, 0),
      });
      // Pass 2: exclusive scan of each line's chunk totals, in place.
      const b2 = new KernelBindings(kernel);
      const t2 = b2.contiguous(totals, rows * chunks, true);
      runItems({
        key: `scan2|${op}|${tdtype.name}|${t2.slot}`,
        bindings: b2,
        words: 2,
        items: rows,
        body: () => [
          'let first = t * pw(1u);',
          `var acc: ${type} = ${identity(op, kind)};`,
          'for (var c = 0u; c < pw(1u); c = c + 1u) {',
          `  let v = ${loadWgsl(tdtype, `b${t2.slot}`, 'first + c')};`,
          `  ${storeWgsl(tdtype, `b${t2.slot}`, 'first + c', 'acc')}`,
          `  acc = ${combine(op, kind, 'acc', 'v')};`,
          '}',
        ],
        params: (q, slot) => (q.words[slot + 1] = chunks),
      });
    }
    // Pass 3: each chunk scanned from its carried-in total.
    const b = new KernelBindings(kernel);
    const x = b.strided(input, input.shape, input.stride(), false);
    const o = b.contiguous(out, out.numel, true);
    const tt = totals === undefined ? undefined : b.contiguous(totals, rows * chunks, false);
    runItems({
      key: `scan3|${op}|${input.dtype.name}|${rank}|${x.slot}${o.slot}${tt?.slot ?? '-'}`,
      bindings: b,
      words,
      items: rows * chunks,
      body: () => [
        'let row = t / pw(2u); let c = t % pw(2u);',
        ...lineWalk(rank, 2, base),
        'let start = c * pw(5u); let end = min(start + pw(5u), pw(1u));',
        tt === undefined
          ? `var acc: ${type} = ${identity(op, kind)};`
          : `var acc: ${type} = ${loadWgsl(tdtype, `b${tt.slot}`, 't')};`,
        'for (var j = start; j < end; j = j + 1u) {',
        `  let v = ${loadWgsl(input.dtype, `b${x.slot}`, 'u32(o0 + i32(j) * pi(3u))')};`,
        `  acc = ${combine(op, kind, 'acc', 'v')};`,
        `  ${storeWgsl(out.dtype, `b${o.slot}`, 'u32(o1 + i32(j) * pi(4u))', 'acc')}`,
        '}',
      ],
      params: params(x.offset, o.offset),
    });
  } finally {
    totals?.dispose();
  }
}

function scan(op: ScanOp, name: string): Kernel {
  return ((_hi: number, _lo: number, self: Tensor, dim: number, dtype: DType | null) => {
    const meta = scanMeta(self, dim, dtype);
    kindOf(meta.dtype, `${name}_webgpu`);
    kindOf(self.dtype, `${name}_webgpu`);
    return filledOrFreed(emptyGpu(meta.shape, meta.dtype), (out) => {
      if (out.numel === 0) return;
      const d = self.ndim === 0 ? 0 : wrapDim(dim, self.ndim);
      if (self.dtype === meta.dtype) {
        scanInto(op, name, out, self, d);
        return;
      }
      const converted = filledOrFreed(emptyGpu(self.shape, meta.dtype), (c) => copyInto(c, self));
      try {
        scanInto(op, name, out, converted, d);
      } finally {
        converted.dispose();
      }
    });
  }) as Kernel;
}

function sortStable(
  _hi: number,
  _lo: number,
  self: Tensor,
  stable: boolean | null,
  dim: number,
  descending: boolean,
): [Tensor, Tensor] {
  sortMeta(self, stable, dim);
  kindOf(self.dtype, 'sort_webgpu');
  return sortGpu(self, self.ndim === 0 ? 0 : wrapDim(dim, self.ndim), descending);
}

/**
 * The WebGPU kernels of the scans and of `sort.stable`.
 *
 * @example
 * ```ts
 * import { GPU_SCAN_SORT_KERNELS } from './scan_sort.ts';
 * typeof GPU_SCAN_SORT_KERNELS.cumsum; // 'function'
 * ```
 */
export const GPU_SCAN_SORT_KERNELS: { readonly [K in ScanSortBackendOpName]: Kernel } = {
  'cumsum': scan('sum', 'cumsum'),
  'cumprod': scan('prod', 'cumprod'),
  'sort.stable': sortStable as Kernel,
  'mode': ((_hi: number, _lo: number, self: Tensor, dim: number, keepdim: boolean) => {
    modeMeta(self, dim, keepdim);
    kindOf(self.dtype, 'mode_webgpu');
    return modeGpu(self, self.ndim === 0 ? 0 : wrapDim(dim, self.ndim), keepdim);
  }) as Kernel,
};
