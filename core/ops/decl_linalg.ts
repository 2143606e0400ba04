/**
 * Declarations of the linear-algebra operators: the products with kernels (`mm`, `bmm`, `addmm`, `dot`,
 * `mv`) and the decompositions over them (`matmul`, `linear`). PyTorch 1.13's schemas; the Meta functions are
 * in `meta_linalg.ts`, the decompositions in `linalg_composites.ts`.
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { linear, matmul } from './linalg_composites.ts';
import { addmmMeta, bmmMeta, dotMeta, mmMeta, mvMeta } from './meta_linalg.ts';
import type { MetaFn, OpDecl, OpImpl } from './op_decl.ts';

function backend(schema: string, meta: MetaFn, doc: string): OpDecl {
  return { schema, kind: 'backend', meta, doc, method: true };
}

function composite(schema: string, impl: OpImpl, doc: string, method: boolean): OpDecl {
  return { schema, kind: 'composite-implicit', impl, doc, method };
}

/**
 * Names of the linear-algebra operators that every backend implements.
 *
 * @example
 * ```ts
 * import type { LinalgBackendOpName } from './decl_linalg.ts';
 * const name: LinalgBackendOpName = 'mm';
 * ```
 */
export type LinalgBackendOpName = 'mm' | 'bmm' | 'addmm' | 'dot' | 'mv';
/**
 * Names of the linear-algebra operators implemented once for all backends.
 *
 * @example
 * ```ts
 * import type { LinalgCompositeOpName } from './decl_linalg.ts';
 * const name: LinalgCompositeOpName = 'matmul';
 * ```
 */
export type LinalgCompositeOpName = 'matmul' | 'linear';

/**
 * Declarations of the linear-algebra operators.
 *
 * @example
 * ```ts
 * import { LINALG_OPS } from './decl_linalg.ts';
 * LINALG_OPS['dot'].kind; // 'backend'
 * ```
 */
export const LINALG_OPS: { readonly [K in LinalgBackendOpName | LinalgCompositeOpName]: OpDecl } = {
  'mm': backend(
    'mm(Tensor self, Tensor mat2) -> Tensor',
    (self: Tensor, mat2: Tensor) => mmMeta(self, mat2),
    'Matrix product of two 2-d tensors.',
  ),
  'bmm': backend(
    'bmm(Tensor self, Tensor mat2) -> Tensor',
    (self: Tensor, mat2: Tensor) => bmmMeta(self, mat2),
    'Batched matrix product of two 3-d tensors with the same batch size.',
  ),
  'addmm': backend(
    'addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor',
    (self: Tensor, mat1: Tensor, mat2: Tensor) => addmmMeta(self, mat1, mat2),
    '`beta * self + alpha * (mat1 @ mat2)`, with `self` broadcast to the product (not read when beta is 0).',
  ),
  'dot': backend(
    'dot(Tensor self, Tensor tensor) -> Tensor',
    (self: Tensor, tensor: Tensor) => dotMeta(self, tensor),
    'Inner product of two 1-d tensors of the same size and dtype.',
  ),
  'mv': backend(
    'mv(Tensor self, Tensor vec) -> Tensor',
    (self: Tensor, vec: Tensor) => mvMeta(self, vec),
    'Product of a matrix and a vector.',
  ),
  'matmul': composite(
    'matmul(Tensor self, Tensor other) -> Tensor',
    matmul,
    'Matrix product with NumPy semantics: dot, matrix-vector, matrix-matrix, or batched with broadcast batch dims.',
    true,
  ),
  'linear': composite(
    'linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor',
    linear,
    '`input @ weight.T + bias`, the affine map of a fully connected layer.',
    false,
  ),
};
