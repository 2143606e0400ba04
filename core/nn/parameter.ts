/**
 * `nn.Parameter`: a tensor marked as a module parameter, so that assigning it to a module property registers
 * it (PyTorch's `Module.__setattr__`).
 *
 * Note [Parameters mark tensors]
 * PyTorch's `Parameter(data)` is a new tensor object sharing `data`'s storage. Here the memory of a tensor is
 * freed explicitly, and a second object over the same storage would be one more thing to dispose, so
 * `new Parameter(t)` marks `t` itself (a leaf; `requiresGrad` set as asked) and returns it. `t instanceof
 * Parameter` checks the mark, which cannot be forged.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import { Tensor } from '../tensor/tensor.ts';
import { typename } from './typename.ts';

const marked = new WeakSet<Tensor>();

/**
 * Whether `value` is a tensor marked as a parameter (`new Parameter(t)`, or registered with
 * `registerParameter`).
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { isParameter, Parameter } from './parameter.ts';
 * isParameter(new Parameter(zeros([2]))); // true
 * isParameter(zeros([2])); // false
 * ```
 */
export function isParameter(value: unknown): value is Parameter {
  return Tensor.isTensor(value) && marked.has(value);
}

/**
 * PyTorch's `nn.Parameter`: marks the leaf tensor `data` as a parameter and returns it (not a copy, see
 * Note [Parameters mark tensors]). Assigning a parameter to a property of a module registers it under that
 * name.
 *
 * @example
 * ```ts
 * import { type Tensor, zeros } from '../../mod.ts';
 * import { Module, Parameter } from './mod.ts';
 * class Scale extends Module {
 *   scale = new Parameter(zeros([3]));
 *   forward(x: Tensor): Tensor {
 *     return x.mul(this.scale);
 *   }
 * }
 * new Scale().namedParameters().map(([name]) => name); // ['scale']
 * ```
 */
export class Parameter {
  /** Marks `data` (a leaf tensor) as a parameter that requires grad unless `requiresGrad` is false. */
  constructor(data: Tensor, requiresGrad = true) {
    if (!Tensor.isTensor(data)) {
      throw new TypeError(`Parameter(): argument 'data' must be Tensor, not ${typename(data)}`);
    }
    if (typeof requiresGrad !== 'boolean') {
      throw new TypeError(`Parameter(): argument 'requiresGrad' must be bool, not ${typename(requiresGrad)}`);
    }
    data.assertAlive('Parameter()');
    if (!data.isLeaf) {
      throw new RuntimeError(
        'Parameter(): expected a leaf tensor, got one with a grad_fn; pass data.detach() (a Parameter marks ' +
          'the tensor it is given, it does not copy it)',
      );
    }
    if (requiresGrad && !data.dtype.isFloatingPoint) {
      throw new RuntimeError('Only Tensors of floating point and complex dtype can require gradients');
    }
    data.requiresGrad_(requiresGrad);
    marked.add(data);
    return data as Parameter;
  }

  /** `value instanceof Parameter`: whether `value` is a tensor marked as a parameter. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return isParameter(value);
  }
}

/** A parameter is a tensor (the class above only marks tensors; see Note [Parameters mark tensors]). */
export interface Parameter extends Tensor {}
