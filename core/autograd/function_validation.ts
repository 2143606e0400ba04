/**
 * The checks PyTorch applies to what a custom function's backward returns: `PyNode::apply`'s (how many
 * gradients, None for non-tensor inputs, tensors or None) and the engine's `validate_outputs` (a gradient's
 * shape must be the input's or broadcast from it, and is then summed down; its dtype is cast to the input's;
 * its device must be the input's). A gradient for an input that needs none is ignored unchecked.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { engineOps } from './engine_ops.ts';
import type { Edge } from './node.ts';

/** What the validation needs of a tensor input (null for a non-tensor argument). */
export interface InputMetadata {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device: Device;
}

/**
 * The metadata of each forward argument.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { inputMetadata } from './function_validation.ts';
 * inputMetadata([tensor([1, 2]), 3])[1]; // null
 * ```
 */
export function inputMetadata(args: readonly unknown[]): Array<InputMetadata | null> {
  return args.map((a) => (Tensor.isTensor(a) ? { shape: a.shape, dtype: a.dtype, device: a.device } : null));
}

const isNone = (v: unknown) => v === null || v === undefined;

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'list';
  return typeof v;
}

/** Whether `shape` broadcasts to `target` (PyTorch's `is_expandable_to`). */
function expandableTo(shape: readonly number[], target: readonly number[]): boolean {
  if (shape.length > target.length) return false;
  for (let i = 1; i <= shape.length; i++) {
    const size = shape[shape.length - i];
    if (size !== 1 && size !== target[target.length - i]) return false;
  }
  return true;
}

const sameShape = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Checks and conforms the gradients a custom backward returned: one per forward argument, aligned with the
 * node's `edges`; null where no gradient flows.
 *
 * @example
 * ```ts
 * // CustomNode.apply: return validateCustomGradients('MyFnBackward', backward(ctx, g), inputs, this.nextEdges);
 * ```
 */
export function validateCustomGradients(
  name: string,
  returned: unknown,
  inputs: ReadonlyArray<InputMetadata | null>,
  edges: ReadonlyArray<Edge | null>,
): Array<Tensor | null> {
  // A single value counts as a one-element tuple, as Python's ensure_tuple makes it.
  let list: readonly unknown[] = Array.isArray(returned) ? returned : [returned];
  const expected = inputs.length;
  if (list.length > expected && list.slice(expected).every(isNone)) list = list.slice(0, expected);
  if (list.length !== expected) {
    throw new RuntimeError(
      `function ${name} returned an incorrect number of gradients (expected ${expected}, got ${list.length})`,
    );
  }
  const grads: Array<Tensor | null> = [];
  for (let i = 0; i < expected; i++) {
    const g = list[i];
    if (inputs[i] === null) {
      if (!isNone(g)) {
        throw new RuntimeError(
          `function ${name} returned a gradient different than None at position ${i + 1}, but the corresponding ` +
            'forward input was not a Variable',
        );
      }
      grads.push(null);
    } else if (isNone(g)) {
      grads.push(null);
    } else if (!Tensor.isTensor(g)) {
      throw new RuntimeError(`expected Variable or None (got ${describe(g)})`);
    } else {
      grads.push(g);
    }
  }
  for (let i = 0; i < expected; i++) {
    const g = grads[i];
    if (edges[i] === null || g === null) {
      grads[i] = null;
      continue;
    }
    g.assertAlive(`${name} gradient ${i}`);
    const input = inputs[i]!;
    grads[i] = conform(name, i, g, input);
  }
  return grads;
}

function conform(name: string, index: number, g: Tensor, input: InputMetadata): Tensor {
  const ops = engineOps();
  let out = g;
  if (!sameShape(g.shape, input.shape)) {
    if (!expandableTo(input.shape, g.shape)) {
      throw new RuntimeError(
        `Function ${name} returned an invalid gradient at index ${index} - got [${g.shape.join(', ')}] but ` +
          `expected shape compatible with [${input.shape.join(', ')}]`,
      );
    }
    out = ops.sumTo(out, input.shape);
  }
  const onDevice = out.device.equals(input.device);
  if (!onDevice && out.ndim !== 0) {
    throw new RuntimeError(
      `Function ${name} returned an invalid gradient at index ${index} - expected device ${input.device} but got ` +
        `${out.device}`,
    );
  }
  if (out.dtype !== input.dtype || !onDevice) out = ops.convert(out, input.dtype, input.device);
  return out;
}
