/**
 * Declarations of the indexing operators: gathers along a dimension (`index_select`, `embedding`, `gather`),
 * their accumulating inverses (`index_add`, `scatter_add`, `embedding_dense_backward`) and `masked_fill`.
 * PyTorch 1.13's schemas; the Meta functions below hold PyTorch's argument checks, which the CPU kernels
 * (`core/cpu/indexing.ts`) share. Index values are checked by the kernels, as they need the data.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { int32, int64 } from '../tensor/dtype.ts';
import { broadcastShapes, wrapDim } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';

function backend(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'backend', meta, doc };
}

const method: Partial<OpDecl> = { method: true };
const shapeText = (shape: readonly number[]) => `[${shape.join(', ')}]`;

/**
 * `index_select`'s checks; returns the wrapped dim. Throws PyTorch's errors (IndexError as `RangeError`).
 *
 * @example
 * ```ts
 * import { checkIndexSelect } from './decl_indexing.ts';
 * import { tensor } from './creation.ts';
 * checkIndexSelect(tensor([[1, 2]]), -1, tensor([0])); // 1
 * ```
 */
export function checkIndexSelect(self: Tensor, dim: number, index: Tensor): number {
  self.assertAlive('index_select');
  index.assertAlive('index_select');
  if (index.dtype !== int64 && index.dtype !== int32) {
    throw new RuntimeError('index_select(): Expected dtype int32 or int64 for index');
  }
  if (index.ndim > 1) throw new RangeError('index_select(): Index is supposed to be a vector');
  return wrapDim(dim, self.ndim);
}

function indexSelectMeta(self: Tensor, dim: number, index: Tensor): TensorMeta {
  const d = checkIndexSelect(self, dim, index);
  if (self.ndim === 0) return { shape: [], dtype: self.dtype };
  return { shape: self.shape.map((s, i) => (i === d ? index.numel : s)), dtype: self.dtype };
}

/**
 * `embedding`'s checks: a 2-d weight and int32/int64 indices.
 *
 * @example
 * ```ts
 * import { checkEmbedding } from './decl_indexing.ts';
 * import { tensor } from './creation.ts';
 * checkEmbedding(tensor([[1, 2]]), tensor([0])); // no throw
 * ```
 */
export function checkEmbedding(weight: Tensor, indices: Tensor): void {
  weight.assertAlive('embedding');
  indices.assertAlive('embedding');
  if (weight.ndim !== 2) throw new RuntimeError("'weight' must be 2-D");
  checkIndicesDtype(indices, 'embedding');
}

function checkIndicesDtype(indices: Tensor, op: string): void {
  if (indices.dtype !== int64 && indices.dtype !== int32) {
    throw new RuntimeError(
      `Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got ` +
        `torch.${indices.dtype.scalarTypeName}Tensor instead (while checking arguments for ${op})`,
    );
  }
}

function embeddingMeta(weight: Tensor, indices: Tensor): TensorMeta {
  checkEmbedding(weight, indices);
  return { shape: [...indices.shape, weight.shape[1]], dtype: weight.dtype };
}

function embeddingDenseBackwardMeta(grad: Tensor, indices: Tensor, numWeights: number): TensorMeta {
  checkIndicesDtype(indices, 'embedding_backward');
  const dim = grad.shape[grad.ndim - 1] ?? 1;
  return { shape: [numWeights, dim], dtype: grad.dtype };
}

/**
 * `index_add`'s checks; returns the wrapped dim.
 *
 * @example
 * ```ts
 * import { checkIndexAdd } from './decl_indexing.ts';
 * import { tensor, zeros } from '../../mod.ts';
 * checkIndexAdd(zeros([3, 2]), 0, tensor([1]), zeros([1, 2])); // 0
 * ```
 */
export function checkIndexAdd(self: Tensor, dim: number, index: Tensor, source: Tensor): number {
  for (const t of [self, index, source]) t.assertAlive('index_add');
  const d = wrapDim(dim, self.ndim);
  if (index.ndim > 1) {
    throw new RangeError(
      `index_add_(): Index is supposed to be a vector, but got dim: ${index.ndim} with type: ` +
        `${index.dtype.scalarTypeName} and size: ${shapeText(index.shape)}`,
    );
  }
  if (index.dtype !== int64 && index.dtype !== int32) {
    throw new RuntimeError(`index_add_(): Expected dtype int32/int64 for index but got: ${index.dtype.scalarTypeName}`);
  }
  if (self.dtype !== source.dtype) {
    throw new RuntimeError(
      `index_add_(): self (${self.dtype.scalarTypeName}) and source (${source.dtype.scalarTypeName}) must have the ` +
        'same scalar type',
    );
  }
  const count = source.ndim === 0 ? 1 : source.shape[d] ?? 1;
  if (index.numel !== count) {
    throw new RuntimeError(
      `index_add_(): Number of indices (${index.numel}) should be equal to source.size(dim): (${count}), for dim: ${d}`,
    );
  }
  // The rows of `source` must match `self` outside `dim` (PyTorch's slice-wise add broadcasts-checks them).
  if (source.ndim > 0 && self.ndim > 0) {
    const selfSlice = self.shape.filter((_, i) => i !== d);
    const sourceSlice = source.shape.filter((_, i) => i !== d);
    const shape = broadcastShapes(selfSlice, sourceSlice);
    if (shape.length !== selfSlice.length || shape.some((s, i) => s !== selfSlice[i])) {
      throw new RuntimeError(
        `output with shape ${shapeText(selfSlice)} doesn't match the broadcast shape ${shapeText(shape)}`,
      );
    }
  }
  return d;
}

function indexAddMeta(self: Tensor, dim: number, index: Tensor, source: Tensor): TensorMeta {
  checkIndexAdd(self, dim, index, source);
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * `gather`'s and `scatter_add`'s checks (PyTorch's `gather_shape_check` / `scatter_shape_check`); returns the
 * wrapped dim. `src` is given for scatter.
 *
 * @example
 * ```ts
 * import { checkGatherScatter } from './decl_indexing.ts';
 * import { tensor, zeros } from '../../mod.ts';
 * checkGatherScatter('gather', zeros([3, 2]), 1, tensor([[0], [1], [0]]), null); // 1
 * ```
 */
export function checkGatherScatter(
  op: 'gather' | 'scatter',
  self: Tensor,
  dim: number,
  index: Tensor,
  src: Tensor | null,
): number {
  for (const t of [self, index, src]) t?.assertAlive(op);
  const d = wrapDim(dim, self.ndim);
  if (index.dtype !== int64) throw new RuntimeError(`${op}(): Expected dtype int64 for index`);
  if (src !== null && src.dtype !== self.dtype) {
    throw new RuntimeError('scatter(): Expected self.dtype to be equal to src.dtype');
  }
  const rank = (t: Tensor) => Math.max(t.ndim, 1);
  const size = (t: Tensor, i: number) => (t.ndim === 0 ? 1 : t.shape[i]);
  if (src === null) {
    if (rank(index) !== rank(self)) {
      throw new RuntimeError('Index tensor must have the same number of dimensions as input tensor');
    }
    for (let i = 0; i < rank(self); i++) {
      if (i !== d && size(index, i) > size(self, i)) {
        throw new RuntimeError(
          `Size does not match at dimension ${i} expected index ${shapeText(index.shape)} to be smaller than self ` +
            `${shapeText(self.shape)} apart from dimension ${d}`,
        );
      }
    }
    return d;
  }
  if (index.numel === 0) return d;
  if (rank(index) !== rank(self)) {
    throw new RuntimeError('Index tensor must have the same number of dimensions as self tensor');
  }
  if (rank(index) !== rank(src)) {
    throw new RuntimeError('Index tensor must have the same number of dimensions as src tensor');
  }
  for (let i = 0; i < rank(self); i++) {
    if ((i !== d && size(index, i) > size(self, i)) || size(index, i) > size(src, i)) {
      throw new RuntimeError(
        `Expected index ${shapeText(index.shape)} to be smaller than self ${shapeText(self.shape)} apart from ` +
          `dimension ${d} and to be smaller size than src ${shapeText(src.shape)}`,
      );
    }
  }
  return d;
}

function gatherMeta(self: Tensor, dim: number, index: Tensor): TensorMeta {
  checkGatherScatter('gather', self, dim, index, null);
  return { shape: index.shape, dtype: self.dtype };
}

function scatterAddMeta(self: Tensor, dim: number, index: Tensor, src: Tensor): TensorMeta {
  checkGatherScatter('scatter', self, dim, index, src);
  return { shape: self.shape, dtype: self.dtype };
}

/**
 * `masked_fill`'s checks; returns the result shape (`self` broadcast with `mask`; `self`'s own for in-place).
 *
 * @example
 * ```ts
 * import { checkMaskedFill } from './decl_indexing.ts';
 * import { tensor, zeros } from '../../mod.ts';
 * checkMaskedFill(zeros([2, 3]), tensor([true, false, true]), false); // [2, 3]
 * ```
 */
export function checkMaskedFill(self: Tensor, mask: Tensor, inPlace: boolean): readonly number[] {
  self.assertAlive('masked_fill');
  mask.assertAlive('masked_fill');
  if (!mask.device.equals(self.device)) {
    throw new RuntimeError(
      `expected mask and self to be on the same device, but got mask on ${mask.device} and self on ${self.device}`,
    );
  }
  const shape = broadcastShapes(self.shape, mask.shape);
  if (inPlace && (shape.length !== self.ndim || shape.some((s, i) => s !== self.shape[i]))) {
    throw new RuntimeError(
      `output with shape ${shapeText(self.shape)} doesn't match the broadcast shape ${shapeText(shape)}`,
    );
  }
  return inPlace ? self.shape : shape;
}

/**
 * Names of the indexing operators that every backend implements.
 *
 * @example
 * ```ts
 * import type { IndexingBackendOpName } from './decl_indexing.ts';
 * const name: IndexingBackendOpName = 'index_select';
 * ```
 */
export type IndexingBackendOpName =
  | 'index_select'
  | 'index_add'
  | 'embedding_dense_backward'
  | 'gather'
  | 'scatter_add'
  | 'masked_fill.Scalar'
  | 'masked_fill_.Scalar';

/**
 * Names of the indexing operators implemented once for all backends.
 *
 * @example
 * ```ts
 * import type { IndexingCompositeOpName } from './decl_indexing.ts';
 * const name: IndexingCompositeOpName = 'embedding';
 * ```
 */
export type IndexingCompositeOpName = 'embedding';

function embedding(weight: Tensor, indices: Tensor): Tensor {
  checkEmbedding(weight, indices);
  const d = Dispatcher.singleton();
  const flat = d.findSchemaOrThrow('aten::reshape', '').call(indices, [-1]) as Tensor;
  try {
    const rows = d.findSchemaOrThrow('aten::index_select', '').call(weight, 0, flat) as Tensor;
    if (indices.ndim === 1) return rows;
    try {
      return d.findSchemaOrThrow('aten::reshape', '').call(rows, [...indices.shape, weight.shape[1]]) as Tensor;
    } finally {
      rows.dispose();
    }
  } finally {
    if (flat !== indices) flat.dispose();
  }
}

/**
 * Declarations of the indexing operators.
 *
 * @example
 * ```ts
 * import { INDEXING_OPS } from './decl_indexing.ts';
 * INDEXING_OPS['index_select'].schema; // 'index_select(Tensor self, int dim, Tensor index) -> Tensor'
 * ```
 */
export const INDEXING_OPS: { readonly [K in IndexingBackendOpName | IndexingCompositeOpName]: OpDecl } = {
  'index_select': backend(
    'index_select(Tensor self, int dim, Tensor index) -> Tensor',
    indexSelectMeta,
    'The entries of `self` at `index` (int32 or int64, 1-d) along `dim`.',
    method,
  ),
  'index_add': backend(
    'index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor',
    indexAddMeta,
    'A copy of `self` with `alpha * source` added at `index` along `dim` (duplicates accumulate in order).',
    method,
  ),
  'embedding': {
    schema:
      'embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor',
    kind: 'composite-explicit',
    impl: embedding,
    meta: embeddingMeta,
    doc: 'Rows of `weight` at `indices` (any shape): the lookup of `nn.Embedding`.',
  },
  'embedding_dense_backward': backend(
    'embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor',
    embeddingDenseBackwardMeta,
    "`embedding`'s weight gradient: rows of `grad_output` summed per index, except `padding_idx`.",
    { function: false },
  ),
  'gather': backend(
    'gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor',
    gatherMeta,
    '`out[i][j] = self[index[i][j]][j]` (for dim 0): picks along `dim` at int64 `index`.',
    method,
  ),
  'scatter_add': backend(
    'scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor',
    scatterAddMeta,
    'A copy of `self` with `src` added at `index` along `dim` (the inverse of `gather`).',
    method,
  ),
  'masked_fill.Scalar': backend(
    'masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor',
    (self: Tensor, mask: Tensor) => ({ shape: checkMaskedFill(self, mask, false), dtype: self.dtype }),
    '`self` with `value` where `mask` is true.',
    method,
  ),
  'masked_fill_.Scalar': backend(
    'masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)',
    (self: Tensor, mask: Tensor) => ({ shape: checkMaskedFill(self, mask, true), dtype: self.dtype }),
    'In-place `masked_fill`.',
    { function: false, method: true },
  ),
};
