/**
 * CPU kernels of the indexing operators. Each runs its operator's checks (shared with the Meta function),
 * checks the index values with `index_find_invalid`, then runs one strided gather or scatter kernel from
 * kernels_as/indexing.ts over the iteration shape (Note [Indexing descriptor] there): no operand is copied
 * except a non-contiguous index. Accumulation is sequential, hence deterministic (Note [Deterministic
 * accumulation]).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { bool } from '../tensor/dtype.ts';
import { contiguousStrides, expandStrides } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import {
  checkGatherScatter,
  checkIndexAdd,
  checkIndexSelect,
  checkMaskedFill,
  type IndexingBackendOpName,
} from '../ops/decl_indexing.ts';
import { checkScalarFits, scalarTensor } from './elementwise.ts';
import { asDtype, castCpu, copyIntoCpu, emptyCpu, planElementwise } from './iterator.ts';
import { contiguousAddress, hostElements, kernels, stridedAddress, writeDescriptor } from './boundary.ts';
import { checkStatus } from './runtime.ts';
import { scalarNumber } from '../tensor/float_scalar.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `index` itself when contiguous, else a contiguous copy (the caller disposes it when it differs). */
function contiguousIndex(index: Tensor): Tensor {
  return index.isContiguous() ? index : castCpu(index, index.dtype);
}

/** Throws `error(value)` for the first index outside `[0, bound)`; `index` must be contiguous. */
function checkIndexValues(index: Tensor, bound: number, error: (value: number) => Error): void {
  const n = index.numel;
  const at = kernels().index_find_invalid(
    index.dtype.scalarType,
    contiguousAddress(index, 'index', n),
    n,
    BigInt(bound),
  );
  if (at === -1) return;
  throw error(Number(hostElements(index, 'index', n)[at]));
}

const outOfRangeInSelf = () => new RangeError('index out of range in self');
const outOfBounds = (dim: number, size: number) => (value: number) =>
  new RuntimeError(`index ${value} is out of bounds for dimension ${dim} with size ${size}`);

/**
 * Writes the descriptor `[ndim, sizes, strides of out, src, index]` (Note [Indexing descriptor] in
 * kernels_as/indexing.ts) to scratch memory and returns its address. Size-1 dims are dropped first: they add
 * nothing to any offset, and so the descriptor of a tensor with hundreds of them still fits.
 */
function describe(op: string, shape: readonly number[], out: number[], src: number[], index: number[]): number {
  const keep = shape.map((s, d) => (s === 1 ? -1 : d)).filter((d) => d >= 0);
  const pick = (xs: readonly number[]) => keep.map((d) => xs[d]);
  return writeDescriptor(op, pick(shape), [pick(out), pick(src), pick(index)]);
}

/** `sizes` with the size along `dim` replaced by `size` (the region a gather or scatter reaches along `dim`). */
const reaching = (sizes: readonly number[], dim: number, size: number) => sizes.map((s, d) => (d === dim ? size : s));

const withZeroAt = (strides: readonly number[], dim: number) => strides.map((s, i) => (i === dim ? 0 : s));
const onlyAt = (rank: number, dim: number, stride: number) =>
  Array.from({ length: rank }, (_, i) => (i === dim ? stride : 0));

/** A contiguous copy of `self` (the output of the out-of-place accumulating ops). */
function cloneCpu(self: Tensor): Tensor {
  const out = emptyCpu(self.shape, self.dtype);
  copyIntoCpu(out, self);
  return out;
}

function gather(
  out: Tensor,
  self: Tensor,
  index: Tensor,
  dim: number,
  shape: readonly number[],
  indexStrides: number[],
): void {
  if (out.numel === 0) return;
  const code = self.dtype.scalarType;
  const selfDimStride = self.ndim === 0 ? 0 : self.stride()[dim];
  // The index values were checked against self's size along `dim` (checkIndexValues), so the kernel reads
  // self within the iteration shape with `dim` widened to that size.
  const selfReach = self.ndim === 0 ? [] : reaching(shape, dim, self.shape[dim]);
  const addresses = [
    stridedAddress(out, 'gather', shape, out.stride()),
    stridedAddress(self, 'gather', selfReach, self.stride()),
    stridedAddress(index, 'gather', shape, indexStrides),
  ];
  const desc = describe('gather', shape, [...out.stride()], withZeroAt(self.stride(), dim), indexStrides);
  const status = kernels().gather_strided(
    code,
    addresses[0],
    addresses[1],
    addresses[2],
    index.dtype.scalarType,
    desc,
    selfDimStride,
  );
  checkStatus(status, 'gather', code);
}

/** What a scatter accumulates: `src` and `index` from element `srcFirst` / `indexFirst` of each. */
interface ScatterOperands {
  readonly src: Tensor;
  readonly index: Tensor;
  readonly srcFirst: number;
  readonly indexFirst: number;
}

const operands = (src: Tensor, index: Tensor, srcFirst = 0, indexFirst = 0): ScatterOperands => ({
  src,
  index,
  srcFirst,
  indexFirst,
});

function scatterAdd(
  out: Tensor,
  from: ScatterOperands,
  dim: number,
  shape: readonly number[],
  strides: { src: number[]; index: number[] },
  alpha: number,
  skip: number,
): void {
  if (shape.some((s) => s === 0)) return;
  const code = out.dtype.scalarType;
  const outDimStride = out.ndim === 0 ? 0 : out.stride()[dim];
  const outStrides = out.ndim === 0 ? shape.map(() => 0) : withZeroAt(out.stride(), dim);
  // The index values were checked against out's size along `dim`: the kernel writes out within the iteration
  // shape with `dim` widened to that size.
  const outReach = out.ndim === 0 ? [] : reaching(shape, dim, out.shape[dim]);
  const addresses = [
    stridedAddress(out, 'scatter_add', outReach, out.ndim === 0 ? [] : out.stride()),
    stridedAddress(from.src, 'scatter_add', shape, strides.src, from.srcFirst),
    stridedAddress(from.index, 'scatter_add', shape, strides.index, from.indexFirst),
  ];
  const desc = describe('scatter_add', shape, outStrides, strides.src, strides.index);
  const status = kernels().scatter_add_strided(
    code,
    addresses[0],
    addresses[1],
    addresses[2],
    from.index.dtype.scalarType,
    desc,
    outDimStride,
    alpha,
    BigInt(skip),
  );
  checkStatus(status, 'scatter_add', code);
}

/** Runs `body` with a contiguous `index`, disposing a copy afterwards and `out` if `body` throws. */
function withIndex<T extends Tensor>(out: T, index: Tensor, body: (idx: Tensor) => void): T {
  let idx: Tensor | undefined;
  try {
    idx = contiguousIndex(index);
    body(idx);
  } catch (e) {
    out.dispose();
    throw e;
  } finally {
    if (idx !== undefined && idx !== index) idx.dispose();
  }
  return out;
}

function indexSelect(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor): Tensor {
  const d = checkIndexSelect(self, dim, index);
  const shape = self.ndim === 0 ? [] : self.shape.map((s, i) => (i === d ? index.numel : s));
  const out = emptyCpu(shape, self.dtype);
  return withIndex(out, index, (idx) => {
    checkIndexValues(idx, self.ndim === 0 ? 1 : self.shape[d], outOfRangeInSelf);
    gather(out, self, idx, d, shape, onlyAt(shape.length, d, 1));
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
  const out = cloneCpu(self);
  return withIndex(out, index, (idx) => {
    checkIndexValues(idx, self.ndim === 0 ? 1 : self.shape[d], outOfRangeInSelf);
    const shape = self.ndim === 0 ? [] : self.shape.map((s, i) => (i === d ? index.numel : s));
    const strides = { src: expandStrides(source.shape, source.stride(), shape), index: onlyAt(shape.length, d, 1) };
    scatterAdd(out, operands(source, idx), d, shape, strides, alphaFor(alpha, self), -1);
  });
}

/** A Scalar `alpha` as the kernel takes it: integral dtypes truncate it, as C++'s conversion does. */
function alphaFor(alpha: number | boolean, t: Tensor): number {
  const a = scalarNumber(alpha);
  return t.dtype.isFloatingPoint ? a : Math.trunc(a);
}

function gatherKernel(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor, _sparse: boolean): Tensor {
  const d = checkGatherScatter('gather', self, dim, index, null);
  const out = emptyCpu(index.shape, self.dtype);
  return withIndex(out, index, (idx) => {
    const size = self.ndim === 0 ? 1 : self.shape[d];
    checkIndexValues(idx, size, outOfBounds(d, size));
    gather(out, self, idx, d, index.shape, contiguousStrides(index.shape));
  });
}

function scatterAddKernel(_hi: number, _lo: number, self: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  const d = checkGatherScatter('scatter', self, dim, index, src);
  const out = cloneCpu(self);
  return withIndex(out, index, (idx) => {
    const size = self.ndim === 0 ? 1 : self.shape[d];
    checkIndexValues(idx, size, outOfBounds(d, size));
    const strides = { src: [...src.stride()], index: contiguousStrides(index.shape) };
    if (src.ndim === 0) strides.src = index.shape.map(() => 0);
    scatterAdd(out, operands(src, idx), d, index.shape, strides, 1, -1);
  });
}

/** Count of each index value (for `scale_grad_by_freq`); `index` must be contiguous. */
function indexCounts(index: Tensor): { values: number[]; counts: Map<number, number> } {
  const values = Array.from(hostElements(index, 'embedding_backward', index.numel), Number);
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return { values, counts };
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
  const dim = grad.shape[grad.ndim - 1] ?? 1;
  const out = emptyCpu([numWeights, dim], grad.dtype);
  const code = grad.dtype.scalarType;
  const count = out.numel;
  checkStatus(kernels().fill_contig(code, contiguousAddress(out, 'fill_', count), 0, count), 'fill_', code);
  const skip = paddingIdx >= 0 ? paddingIdx : -1;
  const rows = grad.isContiguous() ? grad : castCpu(grad, grad.dtype);
  try {
    return withIndex(out, indices, (idx) => {
      checkIndexValues(idx, numWeights, outOfRangeInSelf);
      const n = idx.numel;
      if (!scaleGradByFreq) {
        scatterAdd(out, operands(rows, idx), 0, [n, dim], { src: [dim, 1], index: [1, 0] }, 1, skip);
        return;
      }
      // PyTorch scales each row by 1 / (count of its index): one accumulation per row, in row order.
      const { values, counts } = indexCounts(idx);
      for (let i = 0; i < n; i++) {
        const from = operands(rows, idx, i * dim, i);
        scatterAdd(out, from, 0, [1, dim], { src: [0, 1], index: [0, 0] }, 1 / counts.get(values[i])!, skip);
      }
    });
  } finally {
    if (rows !== grad) rows.dispose();
  }
}

function maskedFill(self: Tensor, mask: Tensor, value: number | boolean, inPlace: boolean): Tensor {
  const shape = checkMaskedFill(self, mask, inPlace);
  const v = scalarNumber(value);
  checkScalarFits(v, self.dtype);
  const out = inPlace ? self : emptyCpu(shape, self.dtype);
  let m: Tensor | undefined, fill: Tensor | undefined;
  try {
    if (!inPlace) copyIntoCpu(out, self);
    m = asDtype(mask, bool);
    fill = scalarTensor(v, self.dtype);
    const plan = planElementwise('masked_fill', shape, [out, m, fill, out]);
    if (plan.numel > 0) {
      const k = kernels(), code = self.dtype.scalarType;
      const [o, pm, pf, pa] = plan.ptrs;
      const status = plan.contiguous
        ? k.where_contig(code, o, pm, pf, pa, plan.numel)
        : k.where_strided(code, o, pm, pf, pa, plan.desc);
      checkStatus(status, 'masked_fill', code);
    }
  } catch (e) {
    if (!inPlace) out.dispose();
    throw e;
  } finally {
    if (m !== undefined && m !== mask) m.dispose();
    fill?.dispose();
  }
  return out;
}

/**
 * CPU kernels of the indexing operators, keyed like the declarations (`register.ts` registers them).
 *
 * @example
 * ```ts
 * import { CPU_INDEXING_KERNELS } from './indexing.ts';
 * typeof CPU_INDEXING_KERNELS['index_select']; // 'function'
 * ```
 */
export const CPU_INDEXING_KERNELS: { readonly [K in IndexingBackendOpName]: Kernel } = {
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
