/**
 * WebGPU kernels of the indexing operators: one gather kernel (index_select, gather) and one scatter kernel
 * (index_add, scatter_add, embedding's backward) over an iteration shape whose index operand is read through
 * strides, plus masked_fill as an elementwise `where`. Scatters accumulate with atomic compare-and-swap loops
 * (int64 with a carried pair of atomic adds), so, as with PyTorch's CUDA `atomicAdd`, the order of float
 * additions, and so the last bits of a sum, may vary between runs. An index out of range is a device-side error
 * (Note [Device-side errors] in gpu/commands.ts): the element is skipped and the next readback raises.
 *
 * @module
 */
import { NotImplementedError } from '../../core/dispatch/errors.ts';
import { bool } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { contiguousStrides, expandStrides } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import {
  checkGatherScatter,
  checkIndexAdd,
  checkIndexSelect,
  checkMaskedFill,
  type IndexingBackendOpName,
} from '../../core/ops/decl_indexing.ts';
import { KernelBindings } from '../boundary.ts';
import { DeviceError, kernelId } from '../commands.ts';
import { emptyGpu } from '../tensors.ts';
import { kindOf, loadWgsl, storeWgsl, wgslType, wordWgsl } from '../wgsl/dtypes.ts';
import { copyInto } from './copy.ts';
import { runItems } from './custom.ts';
import { fill, whereInto } from './elementwise.ts';
import { checkScalarFits, scalarNumber, scalarOperand } from './scalars.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** How one gather or scatter walks its iteration shape. */
interface IndexPlan {
  readonly shape: readonly number[];
  /** Strides of the written tensor (gather: the output; scatter: the target, 0 along `dim`). */
  readonly outStrides: readonly number[];
  /** Strides of the read tensor (gather: self, 0 along `dim`; scatter: the source). */
  readonly srcStrides: readonly number[];
  readonly indexStrides: readonly number[];
  /** Stride along `dim` of the indexed tensor, and its size there (the bound of the index values). */
  readonly dimStride: number;
  readonly dimSize: number;
}

const withZeroAt = (strides: readonly number[], dim: number) => strides.map((s, i) => (i === dim ? 0 : s));
const onlyAt = (rank: number, dim: number, stride: number) =>
  Array.from({ length: rank }, (_, i) => (i === dim ? stride : 0));

/** WGSL walking item `t` over the shape: offsets `oo`, `os`, `oi` of the written, read and index operands. */
function walk(rank: number): string[] {
  const lines = ['var rest = t; var oo = pi(2u); var os = pi(3u); var oi = pi(4u);'];
  for (let d = rank - 1; d >= 0; d--) {
    const at = 7 + 4 * d;
    lines.push(
      `{ let s = pw(${at}u); let c = i32(rest % s); rest = rest / s; ` +
        `oo = oo + c * pi(${at + 1}u); os = os + c * pi(${at + 2}u); oi = oi + c * pi(${at + 3}u); }`,
    );
  }
  return lines;
}

/** WGSL of the index value at `oi` as i32 `ix`, with `valid` false (and a report) when outside [0, size). */
function indexWgsl(index: Tensor, slot: number, code: number, kernel: number): string[] {
  const raw = loadWgsl(index.dtype, `b${slot}`, 'u32(oi)');
  const value = index.dtype.name === 'int64' ? raw : `i64_from_i32(${raw})`;
  return [
    `let iv = ${value};`,
    'let valid = !i64_lt(iv, vec2<u32>(0u)) && i64_lt(iv, i64_from_i32(pi(6u)));',
    `if (!valid) { report(${code}u, ${kernel}u, iv.x, iv.y); }`,
    'let ix = select(0i, bitcast<i32>(iv.x), valid);',
  ];
}

function setParams(q: { words: Uint32Array; ints: Int32Array }, slot: number, p: IndexPlan, offsets: number[]) {
  q.ints[slot + 2] = offsets[0];
  q.ints[slot + 3] = offsets[1];
  q.ints[slot + 4] = offsets[2];
  q.ints[slot + 5] = p.dimStride;
  q.ints[slot + 6] = p.dimSize;
  p.shape.forEach((s, d) => {
    q.words[slot + 7 + 4 * d] = s;
    q.ints[slot + 8 + 4 * d] = p.outStrides[d];
    q.ints[slot + 9 + 4 * d] = p.srcStrides[d];
    q.ints[slot + 10 + 4 * d] = p.indexStrides[d];
  });
}

/** `out[...] = self[..., index[...], ...]` over the plan's shape (index values checked on the device). */
function gather(name: string, code: number, out: Tensor, self: Tensor, index: Tensor, dim: number, p: IndexPlan) {
  const b = new KernelBindings(name);
  const reach = self.ndim === 0 ? [] : p.shape.map((s, d) => (d === dim ? self.shape[dim] : s));
  const po = b.strided(out, p.shape, p.outStrides, true);
  const ps = b.strided(self, reach, self.ndim === 0 ? [] : self.stride(), false);
  const pi = b.strided(index, p.shape, p.indexStrides, false);
  const id = kernelId(name);
  runItems({
    key: `gather|${name}|${self.dtype.name}|${index.dtype.name}|${p.shape.length}|${po.slot}${ps.slot}${pi.slot}`,
    bindings: b,
    words: 7 + 4 * p.shape.length,
    items: p.shape.reduce((x, y) => x * y, 1),
    body: () => [
      ...walk(p.shape.length),
      ...indexWgsl(index, pi.slot, code, id),
      `let v = ${loadWgsl(self.dtype, `b${ps.slot}`, 'u32(os + ix * pi(5u))')};`,
      storeWgsl(self.dtype, `b${po.slot}`, 'u32(oo)', 'v'),
    ],
    params: (q, slot) => setParams(q, slot, p, [po.offset, ps.offset, pi.offset]),
  });
}

/** `out[..., index[...], ...] += alpha * src[...]` over the plan's shape, atomically; `skip` an index to ignore. */
function scatterAdd(
  name: string,
  code: number,
  out: Tensor,
  src: Tensor,
  index: Tensor,
  dim: number,
  p: IndexPlan,
  alpha: number,
  skip: number,
) {
  const b = new KernelBindings(name);
  const reach = out.ndim === 0 ? [] : p.shape.map((s, d) => (d === dim ? out.shape[dim] : s));
  const po = b.strided(out, reach, out.ndim === 0 ? [] : out.stride(), 'atomic');
  const ps = b.strided(src, p.shape, p.srcStrides, false);
  const pi = b.strided(index, p.shape, p.indexStrides, false);
  const kind = kindOf(out.dtype, name);
  const ty = wgslType(kind);
  const a = scalarOperand(alpha, out.dtype, name);
  const alphaWgsl = kind === 'f32'
    ? 'bitcast<f32>(pw(1u))'
    : kind === 'i32'
    ? 'bitcast<i32>(pw(1u))'
    : 'i64_from_i32(pi(1u))';
  const scaled = kind === 'i64' ? `i64_mul(${alphaWgsl}, v)` : `${alphaWgsl} * v`;
  const value = loadWgsl(src.dtype, `b${ps.slot}`, 'u32(os)');
  const target = 'u32(oo + ix * pi(5u))';
  const accumulate = kind === 'i64'
    ? [
      `let lo = atomicAdd(&b${po.slot}[2u * ${target}], add.x);`,
      `atomicAdd(&b${po.slot}[2u * ${target} + 1u], add.y + select(0u, 1u, lo + add.x < lo));`,
    ]
    : [
      'loop {',
      `  let old = atomicLoad(&b${po.slot}[${target}]);`,
      `  let sum = ${kind === 'f32' ? 'bitcast<f32>(old)' : 'bitcast<i32>(old)'} + add;`,
      `  if (atomicCompareExchangeWeak(&b${po.slot}[${target}], old, ${
        wordWgsl(out.dtype, 'sum')
      }).exchanged) { break; }`,
      '}',
    ];
  const id = kernelId(name);
  runItems({
    key: `scatter|${name}|${out.dtype.name}|${index.dtype.name}|${p.shape.length}|${skip >= 0}|` +
      `${po.slot}${ps.slot}${pi.slot}`,
    bindings: b,
    words: 8 + 4 * p.shape.length,
    items: p.shape.reduce((x, y) => x * y, 1),
    body: () => [
      ...walk(p.shape.length),
      ...indexWgsl(index, pi.slot, code, id),
      `if (valid${skip >= 0 ? ' && ix != bitcast<i32>(pw(' + (7 + 4 * p.shape.length) + 'u))' : ''}) {`,
      `  let v: ${ty} = ${value};`,
      `  let add: ${ty} = ${scaled};`,
      ...accumulate.map((l) => `  ${l}`),
      '}',
    ],
    params: (q, slot) => {
      setParams(q, slot, p, [po.offset, ps.offset, pi.offset]);
      if (kind === 'f32') q.floats[slot + 1] = Number(a.scalar);
      else q.ints[slot + 1] = Number(a.scalar);
      q.ints[slot + 7 + 4 * p.shape.length] = skip;
    },
  });
}

const cloneGpu = (self: Tensor) => filledOrFreed(emptyGpu(self.shape, self.dtype), (out) => copyInto(out, self));

function indexSelect(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor): Tensor {
  const d = checkIndexSelect(self, dim, index);
  const shape = self.ndim === 0 ? [] : self.shape.map((s, i) => (i === d ? index.numel : s));
  return filledOrFreed(emptyGpu(shape, self.dtype), (out) => {
    const indexStride = index.ndim === 0 ? 0 : index.stride(0);
    gather('index_select', DeviceError.indexOutOfRange, out, self, index, d, {
      shape,
      outStrides: contiguousStrides(shape),
      srcStrides: self.ndim === 0 ? [] : withZeroAt(self.stride(), d),
      indexStrides: onlyAt(shape.length, d, indexStride),
      dimStride: self.ndim === 0 ? 0 : self.stride(d),
      dimSize: self.ndim === 0 ? 1 : self.shape[d],
    });
  });
}

function gatherKernel(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor, _sparse: boolean): Tensor {
  const d = checkGatherScatter('gather', self, dim, index, null);
  return filledOrFreed(emptyGpu(index.shape, self.dtype), (out) => {
    gather('gather', DeviceError.indexOutOfBounds, out, self, index, d, {
      shape: index.shape,
      outStrides: contiguousStrides(index.shape),
      srcStrides: self.ndim === 0 ? index.shape.map(() => 0) : withZeroAt(self.stride(), d),
      indexStrides: index.stride(),
      dimStride: self.ndim === 0 ? 0 : self.stride(d),
      dimSize: self.ndim === 0 ? 1 : self.shape[d],
    });
  });
}

function indexAdd(
  _hi: number,
  _lo: number,
  self: Tensor,
  dim: number,
  index: Tensor,
  source: Tensor,
  alpha: number | boolean,
): Tensor {
  const d = checkIndexAdd(self, dim, index, source);
  return filledOrFreed(cloneGpu(self), (out) => {
    const shape = self.ndim === 0 ? [] : self.shape.map((s, i) => (i === d ? index.numel : s));
    const src = source.dtype === self.dtype ? source : cloneAs(source, self);
    try {
      scatterAdd(
        'index_add',
        DeviceError.indexOutOfRange,
        out,
        src,
        index,
        d,
        {
          shape,
          outStrides: self.ndim === 0 ? [] : withZeroAt(out.stride(), d),
          srcStrides: expandStrides(src.shape, src.stride(), shape),
          indexStrides: onlyAt(shape.length, d, index.ndim === 0 ? 0 : index.stride(0)),
          dimStride: self.ndim === 0 ? 0 : out.stride(d),
          dimSize: self.ndim === 0 ? 1 : self.shape[d],
        },
        self.dtype.isFloatingPoint ? scalarNumber(alpha) : Math.trunc(scalarNumber(alpha)),
        -1,
      );
    } finally {
      if (src !== source) src.dispose();
    }
  });
}

function cloneAs(t: Tensor, like: Tensor): Tensor {
  return filledOrFreed(emptyGpu(t.shape, like.dtype), (out) => copyInto(out, t));
}

function scatterAddKernel(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  const d = checkGatherScatter('scatter', self, dim, index, src);
  return filledOrFreed(cloneGpu(self), (out) => {
    scatterAdd(
      'scatter_add',
      DeviceError.indexOutOfBounds,
      out,
      src,
      index,
      d,
      {
        shape: index.shape,
        outStrides: self.ndim === 0 ? index.shape.map(() => 0) : withZeroAt(out.stride(), d),
        srcStrides: src.ndim === 0 ? index.shape.map(() => 0) : src.stride(),
        indexStrides: index.stride(),
        dimStride: self.ndim === 0 ? 0 : out.stride(d),
        dimSize: self.ndim === 0 ? 1 : self.shape[d],
      },
      1,
      -1,
    );
  });
}

function embeddingDenseBackward(
  _hi: number,
  _lo: number,
  grad: Tensor,
  indices: Tensor,
  numWeights: number,
  paddingIdx: number,
  scaleGradByFreq: boolean,
): Tensor {
  if (scaleGradByFreq) {
    throw new NotImplementedError(
      'embedding_dense_backward: scale_grad_by_freq=True is not implemented on webgpu (it needs per-index counts); ' +
        'train with scale_grad_by_freq=False or on the CPU',
    );
  }
  const dim = grad.shape[grad.ndim - 1] ?? 1;
  const n = indices.numel;
  return filledOrFreed(emptyGpu([numWeights, dim], grad.dtype), (out) => {
    fill(out, 0);
    const rows = grad.isContiguous() ? grad : cloneGpu(grad);
    const flat = indices.isContiguous() ? indices : cloneGpu(indices);
    try {
      scatterAdd(
        'embedding_backward',
        DeviceError.indexOutOfRange,
        out,
        rows,
        flat,
        0,
        {
          shape: [n, dim],
          outStrides: [0, 1],
          srcStrides: [dim, 1],
          indexStrides: [1, 0],
          dimStride: dim,
          dimSize: numWeights,
        },
        1,
        paddingIdx >= 0 ? paddingIdx : -1,
      );
    } finally {
      if (rows !== grad) rows.dispose();
      if (flat !== indices) flat.dispose();
    }
  });
}

function maskedFill(self: Tensor, mask: Tensor, value: number | boolean, inPlace: boolean): Tensor {
  const shape = checkMaskedFill(self, mask, inPlace);
  const v = scalarNumber(value);
  checkScalarFits(v, self.dtype);
  if (mask.dtype !== bool) kindOf(mask.dtype, 'masked_fill');
  if (inPlace) {
    whereInto(self, mask, v, self);
    return self;
  }
  return filledOrFreed(emptyGpu(shape, self.dtype), (out) => whereInto(out, mask, v, self));
}

/**
 * WebGPU kernels of the indexing operators.
 *
 * @example
 * ```ts
 * import { GPU_INDEXING_KERNELS } from './indexing.ts';
 * typeof GPU_INDEXING_KERNELS['index_select']; // 'function'
 * ```
 */
export const GPU_INDEXING_KERNELS: { readonly [K in IndexingBackendOpName]: Kernel } = {
  'index_select': indexSelect as Kernel,
  'index_add': indexAdd as Kernel,
  'embedding_dense_backward': embeddingDenseBackward as Kernel,
  'gather': gatherKernel as Kernel,
  'scatter_add': scatterAddKernel as Kernel,
  'masked_fill.Scalar':
    ((_hi: number, _lo: number, self: Tensor, mask: Tensor, value: number | boolean) =>
      maskedFill(self, mask, value, false)) as Kernel,
  'masked_fill_.Scalar':
    ((_hi: number, _lo: number, self: Tensor, mask: Tensor, value: number | boolean) =>
      maskedFill(self, mask, value, true)) as Kernel,
};
