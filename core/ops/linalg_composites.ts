/**
 * The linear-algebra decompositions, as PyTorch 1.13 writes them (aten/src/ATen/native/LinearAlgebra.cpp,
 * Linear.cpp): `matmul` picks `dot`, `mv`, `mm`, a folded `mm`/`mv` or a broadcast `bmm` from the operands'
 * dims, and `linear` is `addmm` (or `matmul` plus the bias). Following PyTorch's dispatch rules also gives
 * PyTorch's error messages, which come from whichever product runs.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { broadcastShapes, numelOf } from '../tensor/shape.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten, Temporaries } from './aten_call.ts';

/** `_unsafe_view`: the reshaped result of a product, not a view in autograd's eyes (PyTorch's choice). */
const unsafeView = (t: Tensor, size: readonly number[]): Tensor => aten('_unsafe_view').call(t, size) as Tensor;

/**
 * PyTorch's `should_fold`: a batched operand times a vector or matrix is one `mm`/`mv` over the batch folded
 * into the rows, unless the operand is a batch of transposed matrices (folding would copy; `bmm` reads it as is).
 */
function shouldFold(t1: Tensor, dim2: number): boolean {
  const dim1 = t1.ndim;
  if (dim1 < 3 || (dim2 !== 1 && dim2 !== 2)) return false;
  const sizes = t1.shape, strides = t1.stride();
  return !(dim1 === 3 && dim2 === 2 && strides[2] !== 1 && strides[0] === sizes[1] * sizes[2]);
}

/**
 * `matmul(self, other)`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { matmul } from './linalg_composites.ts';
 * matmul(tensor([[1, 2]]), tensor([3, 4])).tolist(); // [11]
 * ```
 */
export function matmul(tensor1: Tensor, tensor2: Tensor): Tensor {
  const dim1 = tensor1.ndim, dim2 = tensor2.ndim;
  if (dim1 === 0 || dim2 === 0) {
    throw new RuntimeError(`both arguments to matmul need to be at least 1D, but they are ${dim1}D and ${dim2}D`);
  }
  if (dim1 === 1 && dim2 === 1) return tensor1.dot(tensor2);
  if (dim1 === 2 && dim2 === 1) return tensor1.mv(tensor2);
  using temps = new Temporaries();
  if (dim1 === 1 && dim2 === 2) {
    const row = temps.track(tensor1.unsqueeze(0));
    const product = temps.track(row.mm(tensor2));
    return unsafeView(product, [product.shape[1]]);
  }
  if (dim1 === 2 && dim2 === 2) return tensor1.mm(tensor2);
  if (shouldFold(tensor1, dim2) || shouldFold(tensor2, dim1)) {
    // Invariant: t1 has >= 3 dims, t2 is a vector or a matrix, and t1 @ t2 is the (maybe transposed) result.
    const transpose = dim2 > dim1;
    const t1 = transpose ? temps.track(tensor2.transpose(-2, -1)) : tensor1;
    const t2 = !transpose ? tensor2 : dim1 === 2 ? temps.track(tensor1.t()) : tensor1;
    const sizes1 = t1.shape;
    const outputShape = sizes1.slice(0, -1);
    const folded = temps.track(t1.reshape([numelOf(outputShape), sizes1[sizes1.length - 1]]), t1);
    if (t2.ndim === 1) return unsafeView(temps.track(folded.mv(t2)), outputShape);
    outputShape.push(t2.shape[1]);
    const output = unsafeView(temps.track(folded.mm(t2)), outputShape);
    if (!transpose) return output;
    temps.track(output);
    const transposed = temps.track(output.transpose(-2, -1));
    return temps.keep(transposed.contiguous());
  }
  // Batched: b1 x n x m1 times b2 x m2 x p, the batch dims broadcast (m1 and m2 are checked by bmm).
  const n = dim1 > 1 ? tensor1.shape[dim1 - 2] : 1;
  const m1 = tensor1.shape[dim1 - 1];
  const m2 = dim2 > 1 ? tensor2.shape[dim2 - 2] : tensor2.shape[0];
  const p = dim2 > 1 ? tensor2.shape[dim2 - 1] : 1;
  const batchShape = broadcastShapes(
    tensor1.shape.slice(0, Math.max(dim1 - 2, 0)),
    tensor2.shape.slice(0, Math.max(dim2 - 2, 0)),
  );
  const batch = numelOf(batchShape);
  const e1 = temps.track(tensor1.expand([...batchShape, n, m1]), tensor1);
  const b1 = temps.track(e1.reshape([batch, n, m1]), e1, tensor1);
  const e2 = temps.track(tensor2.expand([...batchShape, m2, p]), tensor2);
  const b2 = temps.track(e2.reshape([batch, m2, p]), e2, tensor2);
  const outputShape = [...batchShape];
  if (dim1 > 1) outputShape.push(n);
  if (dim2 > 1) outputShape.push(p);
  return unsafeView(temps.track(b1.bmm(b2)), outputShape);
}

/**
 * `linear(input, weight, bias)`: `input @ weight.T + bias`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { linear } from './linalg_composites.ts';
 * linear(tensor([[1.5, 2]]), tensor([[3.5, 4]]), tensor([0.5])).tolist(); // [[13.75]]
 * ```
 */
export function linear(input: Tensor, weight: Tensor, bias: Tensor | null): Tensor {
  using temps = new Temporaries();
  const weightT = temps.track(weight.t(), weight);
  if (input.ndim === 2 && bias !== null) return bias.addmm(input, weightT);
  if (bias !== null && input.ndim === 3 && input.isContiguous()) {
    // PyTorch's fused path for contiguous 3-d input: one addmm over the flattened batch.
    const [b, s, k] = input.shape;
    const flat = temps.track(input.view([b * s, k]));
    const result = temps.track(bias.addmm(flat, weightT));
    return unsafeView(result, [b, s, result.shape[1]]);
  }
  const output = input.matmul(weightT);
  if (bias === null) return output;
  try {
    return output.add_(bias);
  } catch (e) {
    output.dispose();
    throw e;
  }
}
