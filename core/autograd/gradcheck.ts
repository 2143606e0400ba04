/**
 * `gradcheck`: compares the gradients autograd computes with central finite differences, in float64, as
 * `torch.autograd.gradcheck` does (same default tolerances).
 *
 * @module
 */
import { scope } from '../tensor/lifetime.ts';
import { contiguousHostBytes, Tensor } from '../tensor/tensor.ts';
import { noGrad } from './grad_mode.ts';
import { grad } from './tensor_autograd.ts';

/** Options of {@linkcode gradcheck}. */
export interface GradcheckOptions {
  /** Finite-difference step (default 1e-6). */
  eps?: number;
  /** Absolute tolerance (default 1e-5). */
  atol?: number;
  /** Relative tolerance (default 1e-3). */
  rtol?: number;
  /** Throw on a mismatch (default true); otherwise return false. */
  raiseException?: boolean;
}

function float64Data(t: Tensor): Float64Array {
  if (t.dtype.name !== 'float64') throw new Error('gradcheck expects float64 inputs for accuracy');
  if (!t.isContiguous()) throw new Error('gradcheck expects contiguous inputs');
  const bytes = contiguousHostBytes(t);
  return new Float64Array(bytes.buffer, bytes.byteOffset, t.numel);
}

/**
 * Checks `fn`'s analytical gradients against finite differences for every input that requires grad.
 * `fn` must return one tensor; inputs must be contiguous float64 tensors.
 *
 * @example
 * ```ts
 * import { gradcheck, tensor } from '../../mod.ts';
 * const x = tensor([0.3, -1.2], { dtype: 'float64' }).requiresGrad_();
 * gradcheck((a) => a.exp().mul(a), [x]); // true
 * ```
 */
export function gradcheck(
  fn: (...inputs: Tensor[]) => Tensor,
  inputs: readonly Tensor[],
  options: GradcheckOptions = {},
): boolean {
  if (typeof fn !== 'function') throw new TypeError('gradcheck(): func must be a function');
  if (!Array.isArray(inputs) || !inputs.every((t) => Tensor.isTensor(t))) {
    throw new TypeError('gradcheck(): inputs must be an array of Tensors');
  }
  const eps = options.eps ?? 1e-6, atol = options.atol ?? 1e-5, rtol = options.rtol ?? 1e-3;
  const raise = options.raiseException ?? true;
  return scope(() => {
    const output = fn(...inputs);
    const outValues = () => noGrad(() => fn(...inputs).toArray() as number[]);
    const m = output.numel;
    const wrt = inputs.filter((t) => t.requiresGrad);
    // Analytical Jacobian, one output element at a time.
    const analytical: number[][][] = wrt.map((t) =>
      Array.from({ length: m }, () => new Array<number>(t.numel).fill(0))
    );
    for (let j = 0; j < m; j++) {
      // Row-major like `output.toArray()`, whatever layout the output has.
      const onehot = output.detach().mul(0).contiguous();
      float64View(onehot)[j] = 1;
      const grads = grad([output], wrt, { gradOutputs: [onehot], retainGraph: true, allowUnused: true });
      grads.forEach((g, i) => {
        if (g === null) return;
        const values = g.contiguous().toArray() as number[];
        for (let k = 0; k < values.length; k++) analytical[i][j][k] = values[k];
      });
    }
    // Numerical Jacobian by central differences.
    for (let i = 0; i < wrt.length; i++) {
      const data = float64Data(wrt[i]);
      for (let k = 0; k < data.length; k++) {
        const original = data[k];
        data[k] = original + eps;
        const plus = outValues();
        data[k] = original - eps;
        const minus = outValues();
        data[k] = original;
        for (let j = 0; j < m; j++) {
          const numerical = (plus[j] - minus[j]) / (2 * eps);
          const a = analytical[i][j][k];
          if (Math.abs(a - numerical) > atol + rtol * Math.abs(numerical)) {
            if (!raise) return false;
            throw new Error(
              `Jacobian mismatch for output 0 with respect to input ${inputs.indexOf(wrt[i])},\n` +
                `numerical:${numerical}\nanalytical:${a}\n(at output element ${j}, input element ${k})`,
            );
          }
        }
      }
    }
    return true;
  });
}

function float64View(t: Tensor): Float64Array {
  return float64Data(t);
}
