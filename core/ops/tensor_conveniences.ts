/**
 * Tensor conveniences that PyTorch defines in Python or as properties: `.T`, `.mT`, the dtype shorthands
 * (`.float()`, `.double()`, `.half()`, `.bfloat16()`, `.long()`, `.int()`, `.short()`, `.char()`, `.byte()`,
 * `.bool()`), `unique` and `newTensor`.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { DeviceLike } from '../tensor/device.ts';
import { type DType, type DTypeLike, toDType } from '../tensor/dtype.ts';
import { Tensor } from '../tensor/tensor.ts';
import { tensor, type TensorData } from './creation.ts';
import { unique } from './unique.ts';

/**
 * The methods and properties {@linkcode installTensorConveniences} adds to every Tensor.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * tensor([[1, 2]]).T.shape; // [2, 1]
 * ```
 */
export interface ConvenienceTensorMethods {
  /** The tensor with its dims reversed (the transpose of a matrix), as a view. */
  readonly T: Tensor;
  /** The last two dims swapped (a batch of transposed matrices), as a view. */
  readonly mT: Tensor;
  /** `this.to('float32')`. */
  float(): Tensor;
  /** `this.to('float64')`. */
  double(): Tensor;
  /** `this.to('float16')`. */
  half(): Tensor;
  /** `this.to('bfloat16')`. */
  bfloat16(): Tensor;
  /** `this.to('int64')`. */
  long(): Tensor;
  /** `this.to('int32')`. */
  int(): Tensor;
  /** `this.to('int16')`. */
  short(): Tensor;
  /** `this.to('int8')`. */
  char(): Tensor;
  /** `this.to('uint8')`. */
  byte(): Tensor;
  /** `this.to('bool')`. */
  bool(): Tensor;
  /** `unique(this, options)`: the sorted unique values (or slices along `dim`), with inverse / counts if asked. */
  unique(
    options?: { sorted?: boolean; returnInverse?: boolean; returnCounts?: boolean; dim?: number | null },
  ): Tensor | Tensor[];
  /** A new tensor holding `data`, with this tensor's dtype and device unless given (never shares memory). */
  newTensor(data: TensorData, options?: { dtype?: DTypeLike; device?: DeviceLike; requiresGrad?: boolean }): Tensor;
}

const SHORTHANDS: ReadonlyArray<[keyof ConvenienceTensorMethods, string]> = [
  ['float', 'float32'],
  ['double', 'float64'],
  ['half', 'float16'],
  ['bfloat16', 'bfloat16'],
  ['long', 'int64'],
  ['int', 'int32'],
  ['short', 'int16'],
  ['char', 'int8'],
  ['byte', 'uint8'],
  ['bool', 'bool'],
];

let installed = false;

/**
 * Installs the conveniences on `Tensor.prototype` (idempotent).
 *
 * @example
 * ```ts
 * import { installTensorConveniences } from './tensor_conveniences.ts';
 * installTensorConveniences();
 * ```
 */
export function installTensorConveniences(): void {
  if (installed) return;
  installed = true;
  Object.defineProperties(Tensor.prototype, {
    T: {
      get(this: Tensor): Tensor {
        this.assertAlive('T');
        return this.permute(Array.from({ length: this.ndim }, (_, i) => this.ndim - 1 - i));
      },
      configurable: true,
    },
    mT: {
      get(this: Tensor): Tensor {
        this.assertAlive('mT');
        if (this.ndim < 2) {
          throw new RuntimeError(
            `tensor.mT is only supported on matrices or batches of matrices. Got ${this.ndim}-D tensor.`,
          );
        }
        return this.transpose(-2, -1);
      },
      configurable: true,
    },
  });
  const proto = Tensor.prototype as unknown as Record<string, unknown>;
  for (const [name, dtypeName] of SHORTHANDS) {
    const dtype: DType = toDType(dtypeName as DTypeLike);
    proto[name] = function (this: Tensor): Tensor {
      if (arguments.length > 0) throw new TypeError(`${name}() takes no arguments (memory_format is not supported)`);
      return this.to(dtype);
    };
  }
  proto.unique = function (
    this: Tensor,
    options?: { sorted?: boolean; returnInverse?: boolean; returnCounts?: boolean; dim?: number | null },
  ): Tensor | Tensor[] {
    return unique(this, options ?? {});
  };
  proto.newTensor = function (
    this: Tensor,
    data: TensorData,
    options: { dtype?: DTypeLike; device?: DeviceLike; requiresGrad?: boolean } = {},
  ): Tensor {
    this.assertAlive('new_tensor');
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('new_tensor(): options must be an object { dtype?, device?, requiresGrad? }');
    }
    return tensor(data, {
      dtype: options.dtype ?? this.dtype,
      device: options.device ?? this.device,
      requiresGrad: options.requiresGrad ?? false,
    });
  };
}
