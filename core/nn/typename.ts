/**
 * `torch.typename` for JavaScript values, as `nn.Module`'s error messages name what was assigned: tensors
 * by their legacy type (`torch.FloatTensor`), modules by their class, other values by the Python type of their
 * counterpart (`int`, `float`, `str`, `list`, `dict`).
 *
 * @module
 */
import { Tensor } from '../tensor/tensor.ts';

/**
 * The type name PyTorch would print for `value` in an error message.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { typename } from './typename.ts';
 * typename(zeros([1])); // 'torch.FloatTensor'
 * typename(3); // 'int'
 * typename(2.5); // 'float'
 * ```
 */
export function typename(value: unknown): string {
  if (Tensor.isTensor(value)) return `torch.${value.dtype.scalarTypeName}Tensor`;
  switch (typeof value) {
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'str';
    case 'undefined':
      return 'undefined';
    case 'symbol':
    case 'function':
      return typeof value;
  }
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) return 'dict';
  const name = (prototype as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? name : 'object';
}
