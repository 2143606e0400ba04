/**
 * CPU kernels of the matrix products. Every product is one call of the wasm gemm (kernels_as/matmul.ts), which
 * takes each operand with its own strides and packs it, so transposed and strided operands are never copied
 * here. The packing workspace is taken from the allocator for the call and given back after it.
 *
 * @module
 */
import { bool, type DType } from '../tensor/dtype.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { LinalgBackendOpName } from '../ops/decl_linalg.ts';
import { addmmMeta, bmmShapes, checkSameScalarType, dotMeta, mmShapes, mvShapes } from '../ops/meta_linalg.ts';
import { KernelStatus } from './exports_elementwise.ts';
import { copyIntoCpu, emptyCpu } from './iterator.ts';
import { kernels, stridedAddress, withWorkspace } from './boundary.ts';
import { checkStatus } from './runtime.ts';
import { splitBmm, splitGemm, splitsBmm, splitsMatmul } from './parallel.ts';
import { scalarNumber } from '../tensor/float_scalar.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** One operand of a product: a tensor read (or written) as a rows x cols matrix with element strides. */
interface Operand {
  readonly t: Tensor;
  readonly rowStride: number;
  readonly colStride: number;
}

const matrix = (t: Tensor, rowStride = t.stride(0), colStride = t.stride(1)): Operand => ({ t, rowStride, colStride });

/** The operand's checked address for a rows x cols region (Note [Kernel boundary] in boundary.ts). */
const address = (name: string, m: Operand, rows: number, cols: number) =>
  stridedAddress(m.t, name, [rows, cols], [m.rowStride, m.colStride]);

const scalarValue = scalarNumber;

/** PyTorch's unsupported-dtype error, raised before the dtype comparison as PyTorch's kernels do. */
function checkSupported(name: string, dtype: DType): void {
  if (dtype === bool) checkStatus(KernelStatus.unsupported, name, dtype.scalarType);
}

/** Runs `fn` with a gemm workspace for an M x N x K product of `dtype`. */
function withGemmWorkspace<T>(name: string, dtype: DType, M: number, N: number, K: number, fn: (work: number) => T): T {
  return withWorkspace(name, kernels().gemm_workspace_bytes(dtype.scalarType, M, N, K), fn);
}

/** `C = alpha * A @ B + beta * C` for M x K times K x N (beta = 0 never reads C). */
function gemm(
  name: string,
  dtype: DType,
  M: number,
  N: number,
  K: number,
  alpha: number,
  a: Operand,
  b: Operand,
  beta: number,
  c: Operand,
): void {
  if (M === 0 || N === 0) return;
  const k = kernels();
  const code = dtype.scalarType;
  // alpha = 0 or K = 0 never reads A or B; beta = 0 never reads C (BLAS rules), but checking them costs nothing.
  const pa = address(name, a, M, K), pb = address(name, b, K, N), pc = address(name, c, M, N);
  if (splitsMatmul(M, N, K)) {
    const kernel = dtype.name === 'float32' ? 'gemm_f32' : dtype.name === 'float64' ? 'gemm_f64' : 'gemm_generic';
    const operand = (m: Operand, address: number) => ({ address, rowStride: m.rowStride, colStride: m.colStride });
    const status = splitGemm(
      kernel,
      code,
      dtype.itemSize,
      M,
      N,
      K,
      alpha,
      operand(a, pa),
      operand(b, pb),
      beta,
      operand(c, pc),
    );
    checkStatus(status, name, code);
    return;
  }
  const status = withGemmWorkspace(name, dtype, M, N, K, (work) => {
    const args = [M, N, K, alpha, pa, a.rowStride, a.colStride, pb, b.rowStride, b.colStride, beta] as const;
    if (dtype.name === 'float32') return k.gemm_f32(...args, pc, c.rowStride, c.colStride, work);
    if (dtype.name === 'float64') return k.gemm_f64(...args, pc, c.rowStride, c.colStride, work);
    return k.gemm_generic(code, ...args, pc, c.rowStride, c.colStride, work);
  });
  checkStatus(status, name, code);
}

/** Allocates the result, runs `fill` on it, and frees it if `fill` throws. */
function produce(shape: readonly number[], dtype: DType, fill: (out: Tensor) => void): Tensor {
  return filledOrFreed(emptyCpu(shape, dtype), fill);
}

function mm(_hi: number, _lo: number, self: Tensor, mat2: Tensor): Tensor {
  const shape = mmShapes(self, mat2);
  checkSupported('addmm_impl_cpu_', self.dtype);
  checkSameScalarType(self.dtype, mat2.dtype);
  const [M, K] = self.shape;
  return produce(shape, self.dtype, (out) => {
    gemm('addmm_impl_cpu_', self.dtype, M, shape[1], K, 1, matrix(self), matrix(mat2), 0, matrix(out));
  });
}

function addmm(
  _hi: number,
  _lo: number,
  self: Tensor,
  mat1: Tensor,
  mat2: Tensor,
  beta: number | boolean,
  alpha: number | boolean,
): Tensor {
  const m = addmmMeta(self, mat1, mat2);
  checkSupported('addmm_impl_cpu_', m.dtype);
  const b = scalarValue(beta);
  return produce(m.shape, m.dtype, (out) => {
    if (b !== 0) copyIntoCpu(out, self);
    const [M, N] = m.shape;
    gemm(
      'addmm_impl_cpu_',
      m.dtype,
      M,
      N,
      mat1.shape[1],
      scalarValue(alpha),
      matrix(mat1),
      matrix(mat2),
      b,
      matrix(out),
    );
  });
}

function bmm(_hi: number, _lo: number, self: Tensor, mat2: Tensor): Tensor {
  const shape = bmmShapes(self, mat2);
  checkSupported('bmm', self.dtype);
  checkSameScalarType(self.dtype, mat2.dtype);
  const [batch, M, N] = shape, K = self.shape[2];
  return produce(shape, self.dtype, (out) => {
    if (batch * M * N === 0) return;
    const k = kernels();
    const code = self.dtype.scalarType;
    const [sAb, sAm, sAk] = self.stride(), [sBb, sBk, sBn] = mat2.stride(), [sCb, sCm, sCn] = out.stride();
    const pa = stridedAddress(self, 'bmm', [batch, M, K], [sAb, sAm, sAk]);
    const pb = stridedAddress(mat2, 'bmm', [batch, K, N], [sBb, sBk, sBn]);
    const pc = stridedAddress(out, 'bmm', [batch, M, N], [sCb, sCm, sCn]);
    if (splitsBmm(batch, M, N, K)) {
      const status = splitBmm(
        code,
        self.dtype.itemSize,
        batch,
        M,
        N,
        K,
        { address: pa, rowStride: sAm, colStride: sAk },
        { address: pb, rowStride: sBk, colStride: sBn },
        { address: pc, rowStride: sCm, colStride: sCn },
        [sAb, sBb, sCb],
      );
      checkStatus(status, 'bmm', code);
      return;
    }
    const status = withGemmWorkspace(
      'bmm',
      self.dtype,
      M,
      N,
      K,
      (work) => k.bmm(code, batch, M, N, K, 1, pa, sAb, sAm, sAk, pb, sBb, sBk, sBn, 0, pc, sCb, sCm, sCn, work),
    );
    checkStatus(status, 'bmm', code);
  });
}

function dot(_hi: number, _lo: number, self: Tensor, tensor: Tensor): Tensor {
  const m = dotMeta(self, tensor);
  checkSupported('dot', self.dtype);
  const K = self.shape[0];
  return produce(m.shape, m.dtype, (out) => {
    // A 1 x K row times a K x 1 column; the strides of the size-1 dims are never used.
    const row = matrix(self, 1, self.stride(0)), column = matrix(tensor, tensor.stride(0), 1);
    gemm('dot', m.dtype, 1, 1, K, 1, row, column, 0, matrix(out, 1, 1));
  });
}

function mv(_hi: number, _lo: number, self: Tensor, vec: Tensor): Tensor {
  const shape = mvShapes(self, vec);
  checkSupported('addmv_impl_cpu', self.dtype);
  checkSameScalarType(self.dtype, vec.dtype);
  const [M, K] = self.shape;
  return produce(shape, self.dtype, (out) => {
    gemm('addmv_impl_cpu', self.dtype, M, 1, K, 1, matrix(self), matrix(vec, vec.stride(0), 1), 0, matrix(out, 1, 1));
  });
}

/**
 * CPU kernels of the matrix products.
 *
 * @example
 * ```ts
 * import { CPU_LINALG_KERNELS } from './linalg.ts';
 * typeof CPU_LINALG_KERNELS['mm']; // 'function'
 * ```
 */
export const CPU_LINALG_KERNELS: { readonly [K in LinalgBackendOpName]: Kernel } = {
  'mm': mm as Kernel,
  'bmm': bmm as Kernel,
  'addmm': addmm as Kernel,
  'dot': dot as Kernel,
  'mv': mv as Kernel,
};
