/**
 * Declarations of the selection and shape operators: `nonzero` (a backend kernel: its output shape depends on
 * the data), and the decompositions of `selection_composites.ts` (`masked_select`, `where(condition)`,
 * `repeat`, `tile`, `repeat_interleave`, `tril`, `triu`, `roll`, `movedim`, `outer`, `pad`, `one_hot`).
 * PyTorch 1.13's schemas.
 *
 * @module
 */
import { NotImplementedError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { einsum } from './einsum.ts';
import { unique2, uniqueDim } from './unique.ts';
import type { OpDecl, OpImpl, TensorMeta } from './op_decl.ts';
import {
  maskedSelect,
  movedim,
  oneHot,
  outer,
  pad,
  repeat,
  repeatInterleaveIndex,
  repeatInterleaveInt,
  repeatInterleaveTensor,
  roll,
  tile,
  tril,
  triu,
  whereCondition,
} from './selection_composites.ts';

function composite(schema: string, impl: OpImpl, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { method: true, ...extra, schema, kind: 'composite-implicit', impl, doc };
}

/**
 * `nonzero`'s Meta function: refuses, as PyTorch's does, because the output's shape depends on the values.
 *
 * @example
 * ```ts
 * import { nonzeroMeta } from './decl_selection.ts';
 * // nonzeroMeta(metaTensor) throws NotImplementedError
 * ```
 */
export function nonzeroMeta(self: Tensor): TensorMeta {
  self.assertAlive('nonzero');
  throw new NotImplementedError(
    "aten::nonzero: the output shape depends on the tensor's values, so it cannot run on the 'meta' device",
  );
}

/**
 * Names of the selection operators with backend kernels.
 *
 * @example
 * ```ts
 * import type { SelectionBackendOpName } from './decl_selection.ts';
 * const name: SelectionBackendOpName = 'nonzero';
 * ```
 */
export type SelectionBackendOpName = 'nonzero';
/**
 * Names of the selection and shape decompositions.
 *
 * @example
 * ```ts
 * import type { SelectionCompositeOpName } from './decl_selection.ts';
 * const name: SelectionCompositeOpName = 'roll';
 * ```
 */
export type SelectionCompositeOpName =
  | 'masked_select'
  | 'where'
  | 'repeat'
  | 'tile'
  | 'repeat_interleave.Tensor'
  | 'repeat_interleave.self_Tensor'
  | 'repeat_interleave.self_int'
  | 'tril'
  | 'triu'
  | 'roll'
  | 'movedim.intlist'
  | 'movedim.int'
  | 'outer'
  | 'pad'
  | 'one_hot'
  | 'einsum'
  | '_unique2'
  | 'unique_dim';

/**
 * Declarations of the selection and shape operators.
 *
 * @example
 * ```ts
 * import { SELECTION_OPS } from './decl_selection.ts';
 * SELECTION_OPS['nonzero'].kind; // 'backend'
 * ```
 */
export const SELECTION_OPS: { readonly [K in SelectionBackendOpName | SelectionCompositeOpName]: OpDecl } = {
  'nonzero': {
    schema: 'nonzero(Tensor self) -> Tensor',
    kind: 'backend',
    meta: nonzeroMeta,
    method: true,
    doc: 'The indices of the non-zero elements, one row `[i0, i1, ...]` per element in row-major order (int64).',
  },
  'masked_select': composite(
    'masked_select(Tensor self, Tensor mask) -> Tensor',
    maskedSelect,
    'The elements where the (broadcast) bool `mask` is true, as a 1-d tensor.',
  ),
  'where': composite(
    'where(Tensor condition) -> Tensor[]',
    whereCondition,
    'Chooses `self` where `condition` is true, else `other`; with only `condition`, the indices of its non-zero elements per dim.',
    { method: false },
  ),
  'repeat': composite(
    'repeat(Tensor self, SymInt[] repeats) -> Tensor',
    repeat,
    'The tensor tiled `repeats[i]` times along each dim (extra leading repeats add dims).',
    { function: false },
  ),
  'tile': composite('tile(Tensor self, int[] dims) -> Tensor', tile, '`repeat` with `dims` padded by leading ones.'),
  'repeat_interleave.Tensor': composite(
    'repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor',
    repeatInterleaveIndex,
    'Each element repeated along `dim` (`repeats` times, or `repeats[i]` times); with only `repeats`, `i` repeated `repeats[i]` times.',
    { method: false },
  ),
  'repeat_interleave.self_Tensor': composite(
    'repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor',
    repeatInterleaveTensor,
    'Element `i` along `dim` repeated `repeats[i]` times (the flattened input when `dim` is null).',
  ),
  'repeat_interleave.self_int': composite(
    'repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, int? output_size=None) -> Tensor',
    repeatInterleaveInt,
    'Each element repeated `repeats` times along `dim` (the flattened input when `dim` is null).',
  ),
  'tril': composite(
    'tril(Tensor self, int diagonal=0) -> Tensor',
    tril,
    'The lower triangle of the last two dims (`j <= i + diagonal`), zeros elsewhere.',
  ),
  'triu': composite(
    'triu(Tensor self, int diagonal=0) -> Tensor',
    triu,
    'The upper triangle of the last two dims (`j >= i + diagonal`), zeros elsewhere.',
  ),
  'roll': composite(
    'roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor',
    roll,
    'Elements shifted cyclically by `shifts` along `dims` (the flattened tensor when `dims` is empty).',
  ),
  'movedim.intlist': composite(
    'movedim.intlist(Tensor self, int[] source, int[] destination) -> Tensor',
    movedim,
    'A view with the dims `source` moved to the positions `destination`.',
  ),
  'movedim.int': composite(
    'movedim.int(Tensor self, int source, int destination) -> Tensor',
    movedim,
    'A view with dim `source` moved to position `destination`.',
  ),
  'outer': composite(
    'outer(Tensor self, Tensor vec2) -> Tensor',
    outer,
    'Outer product of two vectors: `self[i] * vec2[j]`.',
  ),
  'pad': composite(
    'pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor',
    pad,
    'Pads the last dims by (left, right) pairs from the last dim backwards: constant, reflect or replicate.',
    { method: false },
  ),
  'one_hot': composite(
    'one_hot(Tensor self, int num_classes=-1) -> Tensor',
    oneHot,
    'One-hot int64 vectors of the class indices along a new last dim.',
    { method: false },
  ),
  'einsum': composite(
    'einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor',
    einsum,
    'Einstein summation: the product of the operands summed over the labels missing from the output.',
    { method: false },
  ),
  '_unique2': composite(
    '_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> ' +
      '(Tensor, Tensor, Tensor)',
    unique2,
    'The sorted unique values, the inverse indices and the counts (empty when not asked for); see `unique`.',
    { function: false, method: false },
  ),
  'unique_dim': composite(
    'unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> ' +
      '(Tensor, Tensor, Tensor)',
    uniqueDim,
    'The unique slices along `dim` (sorted), the inverse indices and the counts; see `unique`.',
    { function: false, method: false },
  ),
};
