/**
 * Shape and dtype rules of the matrix products (`mm`, `bmm`, `addmm`, `dot`, `mv`), with PyTorch's checks and
 * messages. PyTorch checks shapes in its Meta functions and dtypes in its CPU kernels, after the dtype
 * switch; so the checks come in two parts: {@linkcode mmShapes} and friends (shapes, run first), and
 * {@linkcode checkSameScalarType} (run by the Meta functions here, and by the CPU kernels after their
 * unsupported-dtype check, which keeps PyTorch's order of errors).
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { checkSameDevice } from './meta_elementwise.ts';
import type { TensorMeta } from './op_decl.ts';

/**
 * PyTorch's `expected scalar type Float but found Double` (a kernel reading `other` as `self`'s type).
 *
 * @example
 * ```ts
 * import { float32 } from '../tensor/dtype.ts';
 * import { checkSameScalarType } from './meta_linalg.ts';
 * checkSameScalarType(float32, float32); // no throw
 * ```
 */
export function checkSameScalarType(expected: DType, found: DType): void {
  if (expected !== found) {
    throw new RuntimeError(`expected scalar type ${expected.scalarTypeName} but found ${found.scalarTypeName}`);
  }
}

/**
 * `mm`'s shape checks; returns the result shape.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { mmShapes } from './meta_linalg.ts';
 * mmShapes(tensor([[1, 2]]), tensor([[3], [4]])); // [1, 1]
 * ```
 */
export function mmShapes(self: Tensor, mat2: Tensor): number[] {
  checkSameDevice('mm', [self, mat2]);
  if (self.ndim !== 2) throw new RuntimeError('self must be a matrix');
  if (mat2.ndim !== 2) throw new RuntimeError('mat2 must be a matrix');
  checkMultipliable(self, mat2);
  return [self.shape[0], mat2.shape[1]];
}

function checkMultipliable(mat1: Tensor, mat2: Tensor): void {
  if (mat1.shape[1] !== mat2.shape[0]) {
    throw new RuntimeError(
      `mat1 and mat2 shapes cannot be multiplied (${mat1.shape[0]}x${mat1.shape[1]} and ` +
        `${mat2.shape[0]}x${mat2.shape[1]})`,
    );
  }
}

/**
 * Meta of `mm`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { mmMeta } from './meta_linalg.ts';
 * mmMeta(tensor([[1.5, 2]]), tensor([[3.5], [4]])).dtype.name; // 'float32'
 * ```
 */
export function mmMeta(self: Tensor, mat2: Tensor): TensorMeta {
  const shape = mmShapes(self, mat2);
  checkSameScalarType(self.dtype, mat2.dtype);
  return { shape, dtype: self.dtype };
}

/**
 * `bmm`'s shape checks; returns the result shape.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { bmmShapes } from './meta_linalg.ts';
 * bmmShapes(tensor([[[1, 2]]]), tensor([[[3], [4]]])); // [1, 1, 1]
 * ```
 */
export function bmmShapes(self: Tensor, mat2: Tensor): number[] {
  checkSameDevice('bmm', [self, mat2]);
  if (self.ndim !== 3) throw new RuntimeError('batch1 must be a 3D tensor');
  if (mat2.ndim !== 3) throw new RuntimeError('batch2 must be a 3D tensor');
  const [b, n, m] = self.shape;
  if (mat2.shape[0] !== b || mat2.shape[1] !== m) {
    throw new RuntimeError(
      `Expected size for first two dimensions of batch2 tensor to be: [${b}, ${m}] but got: ` +
        `[${mat2.shape[0]}, ${mat2.shape[1]}].`,
    );
  }
  return [b, n, mat2.shape[2]];
}

/**
 * Meta of `bmm`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { bmmMeta } from './meta_linalg.ts';
 * bmmMeta(tensor([[[1, 2]]]), tensor([[[3], [4]]])).shape; // [1, 1, 1]
 * ```
 */
export function bmmMeta(self: Tensor, mat2: Tensor): TensorMeta {
  const shape = bmmShapes(self, mat2);
  checkSameScalarType(self.dtype, mat2.dtype);
  return { shape, dtype: self.dtype };
}

/**
 * Meta of `addmm` (PyTorch checks its dtypes in the Meta function, before the shapes).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { addmmMeta } from './meta_linalg.ts';
 * addmmMeta(tensor([0, 0]), tensor([[1, 2]]), tensor([[3, 4], [5, 6]])).shape; // [1, 2]
 * ```
 */
export function addmmMeta(self: Tensor, mat1: Tensor, mat2: Tensor): TensorMeta {
  checkSameDevice('addmm', [self, mat1, mat2]);
  if (self.dtype !== mat2.dtype) throw new RuntimeError('self and mat2 must have the same dtype');
  if (mat1.dtype !== mat2.dtype) throw new RuntimeError('mat1 and mat2 must have the same dtype');
  if (mat1.ndim !== 2) throw new RuntimeError(`mat1 must be a matrix, got ${mat1.ndim}-D tensor`);
  if (mat2.ndim !== 2) throw new RuntimeError(`mat2 must be a matrix, got ${mat2.ndim}-D tensor`);
  checkMultipliable(mat1, mat2);
  const shape = [mat1.shape[0], mat2.shape[1]];
  checkExpandable('addmm', self, shape);
  return { shape, dtype: mat1.dtype };
}

/**
 * PyTorch's `expand_size` checks of `self` against the result shape of addmm (and the like).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { checkExpandable } from './meta_linalg.ts';
 * checkExpandable('addmm', tensor([1, 2]), [3, 2]); // ok: [2] broadcasts to [3, 2]
 * ```
 */
export function checkExpandable(_op: string, self: Tensor, shape: readonly number[]): void {
  if (self.ndim > shape.length) {
    throw new RuntimeError(
      `expand(torch.${self.dtype.scalarTypeName}Tensor{[${self.shape.join(', ')}]}, size=[${shape.join(', ')}]): ` +
        `the number of sizes provided (${shape.length}) must be greater or equal to the number of dimensions in ` +
        `the tensor (${self.ndim})`,
    );
  }
  const offset = shape.length - self.ndim;
  // PyTorch's inferExpandGeometry walks the dims from the last one.
  for (let i = self.ndim - 1; i >= 0; i--) {
    const size = self.shape[i], want = shape[i + offset];
    if (size !== want && size !== 1) {
      throw new RuntimeError(
        `The expanded size of the tensor (${want}) must match the existing size (${size}) at non-singleton ` +
          `dimension ${i + offset}.  Target sizes: [${shape.join(', ')}].  Tensor sizes: [${self.shape.join(', ')}]`,
      );
    }
  }
}

/**
 * `dot`'s checks (PyTorch's `dot_check`: dims, dtypes, then sizes).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { dotMeta } from './meta_linalg.ts';
 * dotMeta(tensor([1, 2]), tensor([3, 4])).shape; // []
 * ```
 */
export function dotMeta(self: Tensor, tensor: Tensor): TensorMeta {
  checkSameDevice('dot', [self, tensor]);
  if (self.ndim !== 1 || tensor.ndim !== 1) {
    throw new RuntimeError(`1D tensors expected, but got ${self.ndim}D and ${tensor.ndim}D tensors`);
  }
  if (self.dtype !== tensor.dtype) {
    throw new RuntimeError(
      `dot : expected both vectors to have same dtype, but found ${self.dtype.scalarTypeName} and ` +
        `${tensor.dtype.scalarTypeName}`,
    );
  }
  const a = self.shape[0], b = tensor.shape[0];
  if (a !== b) {
    throw new RuntimeError(
      `inconsistent tensor size, expected tensor [${a}] and src [${b}] to have the same number of elements, but ` +
        `got ${a} and ${b} elements respectively`,
    );
  }
  return { shape: [], dtype: self.dtype };
}

/**
 * `mv`'s shape checks (PyTorch's `addmv` messages); returns the result shape.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { mvShapes } from './meta_linalg.ts';
 * mvShapes(tensor([[1, 2], [3, 4], [5, 6]]), tensor([1, 1])); // [3]
 * ```
 */
export function mvShapes(self: Tensor, vec: Tensor): number[] {
  checkSameDevice('mv', [self, vec]);
  if (self.ndim !== 2 || vec.ndim !== 1) {
    throw new RuntimeError(`vector + matrix @ vector expected, got 1, ${self.ndim}, ${vec.ndim}`);
  }
  const [n, m] = self.shape;
  if (m !== vec.shape[0]) throw new RuntimeError(`size mismatch, got ${n}, ${n}x${m},${vec.shape[0]}`);
  return [n];
}

/**
 * Meta of `mv`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { mvMeta } from './meta_linalg.ts';
 * mvMeta(tensor([[1, 2]]), tensor([1, 1])).shape; // [1]
 * ```
 */
export function mvMeta(self: Tensor, vec: Tensor): TensorMeta {
  const shape = mvShapes(self, vec);
  checkSameScalarType(self.dtype, vec.dtype);
  return { shape, dtype: self.dtype };
}
