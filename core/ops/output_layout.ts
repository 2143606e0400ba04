/**
 * The layout TensorIterator gives a new elementwise output (PyTorch's `compute_fast_setup_type`,
 * `reorder_dimensions` and `allocate_or_resize_outputs`): the output follows its inputs' memory order, so
 * `exp(x.t())` and `x.t() + y` are transposed like `x.t()`, while inputs that are all contiguous give a
 * contiguous output.
 *
 * Note [Elementwise output layout]
 * - Fast setup: inputs of the output's shape that are all contiguous give a contiguous output; inputs that are
 *   all non-overlapping and dense with the same strides (and no scalar operand) give those strides.
 * - Otherwise the dims are ordered from fastest to slowest moving by the stable insertion sort of
 *   `reorder_dimensions`: two dims are compared operand by operand (in argument order), skipping an operand
 *   that broadcasts either dim (stride 0), and the first operand whose strides differ decides; equal strides put
 *   the smaller dim first; no decision keeps their order. The output is dense in that order (sizes multiplied
 *   in, 0 and 1 included, as `compatible_stride` does), and plain contiguous when the order is the row-major one.
 *
 * @module
 */
import { contiguousStrides, isContiguousLayout } from '../tensor/shape.ts';
import { Tensor } from '../tensor/tensor.ts';
import { isNonOverlappingAndDense } from './view_layout.ts';

/** What the rule needs of an input tensor. */
export interface LayoutOperand {
  readonly shape: readonly number[];
  stride(): readonly number[];
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The strides of a new output of `shape` computed from `inputs` (tensors, in argument order), or undefined
 * for a contiguous output (Note [Elementwise output layout]). `hasScalar`: a Python-number operand takes part
 * (it disables the fast setup, as a 0-dim operand does in PyTorch).
 *
 * @example
 * ```ts
 * import { elementwiseOutputStrides } from './output_layout.ts';
 * import { randn } from '../../mod.ts';
 * elementwiseOutputStrides([4, 3], [randn([3, 4]).t()], false); // [1, 4]
 * ```
 */
export function elementwiseOutputStrides(
  shape: readonly number[],
  inputs: readonly LayoutOperand[],
  hasScalar: boolean,
): number[] | undefined {
  const nd = shape.length;
  if (nd <= 1 || inputs.length === 0) return undefined;
  // The fast setups (hot path: no arrays made when every input is contiguous at the output's shape).
  let sameShape = !hasScalar;
  for (const t of inputs) if (!sameList(t.shape, shape)) sameShape = false;
  if (sameShape) {
    let contiguous = true;
    for (const t of inputs) if (!isContiguousLayout(t.shape, t.stride())) contiguous = false;
    if (contiguous) return undefined;
    const first = inputs[0].stride();
    let dense = true;
    for (const t of inputs) {
      if (!isNonOverlappingAndDense(t.shape, t.stride()) || !sameList(t.stride(), first)) dense = false;
    }
    if (dense) return [...first];
  }
  // Strides of each input at the output's shape: 0 where it broadcasts.
  const strides = inputs.map((t) => {
    const lead = nd - t.shape.length, own = t.stride();
    return shape.map((size, d) => (d < lead || (t.shape[d - lead] === 1 && size !== 1) ? 0 : own[d - lead]));
  });
  const shouldSwap = (dim0: number, dim1: number): number => {
    for (const s of strides) {
      const s0 = s[dim0], s1 = s[dim1];
      if (s0 === 0 || s1 === 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[dim0] > shape[dim1]) return 1;
    }
    return 0;
  };
  // perm[0] is the fastest-moving dim; start from the row-major order and insertion-sort.
  const perm = shape.map((_, i) => nd - 1 - i);
  for (let i = 1; i < nd; i++) {
    let dim1 = i;
    for (let dim0 = i - 1; dim0 >= 0; dim0--) {
      const c = shouldSwap(perm[dim0], perm[dim1]);
      if (c > 0) {
        [perm[dim0], perm[dim1]] = [perm[dim1], perm[dim0]];
        dim1 = dim0;
      } else if (c < 0) break;
    }
  }
  if (perm.every((d, i) => d === nd - 1 - i)) return undefined;
  const out = new Array<number>(nd);
  let next = 1;
  for (const d of perm) {
    out[d] = next;
    next *= shape[d];
  }
  return sameList(out, contiguousStrides(shape)) ? undefined : out;
}

/**
 * {@linkcode elementwiseOutputStrides} for an operator's operands (up to three) as it receives them: tensors, and
 * numbers or booleans (Python scalars); null or undefined operands (absent optional bounds) do not take part.
 *
 * @example
 * ```ts
 * import { outputStridesOf } from './output_layout.ts';
 * import { randn } from '../../mod.ts';
 * outputStridesOf([4, 3], randn([3, 4]).t(), 2); // [1, 4]
 * ```
 */
export function outputStridesOf(
  shape: readonly number[],
  a: unknown,
  b?: unknown,
  c?: unknown,
): number[] | undefined {
  // Hot path: a 0-d or 1-d output is always contiguous, and fixed parameters make no arrays.
  if (shape.length <= 1) return undefined;
  const inputs: Tensor[] = [];
  let hasScalar = false;
  for (const x of [a, b, c]) {
    if (x instanceof Tensor) inputs.push(x);
    else if (x !== null && x !== undefined) hasScalar = true;
  }
  return elementwiseOutputStrides(shape, inputs, hasScalar);
}
