/**
 * Declarations of `new_empty`, `new_zeros`, `new_ones` and `new_full`: factories that take their dtype and
 * device from `self` unless given (PyTorch 1.13's schemas; Tensor methods only, as in PyTorch).
 *
 * @module
 */
import type { Device } from '../tensor/device.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from './aten_call.ts';
import type { OpDecl } from './op_decl.ts';

const OPTIONS = 'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None';

type Opts = [DType | null, string | null, Device | null, boolean | null];

function like(self: Tensor, [dtype, layout, device, pin]: Opts): Opts {
  return [dtype ?? self.dtype, layout, device ?? self.device, pin];
}

/**
 * Names of the `new_*` factories.
 *
 * @example
 * ```ts
 * import type { ConvenienceCompositeOpName } from './decl_conveniences.ts';
 * const name: ConvenienceCompositeOpName = 'new_zeros';
 * ```
 */
export type ConvenienceCompositeOpName = 'new_empty' | 'new_zeros' | 'new_ones' | 'new_full';

function factory(name: string, doc: string, fill: boolean): OpDecl {
  const schema = fill
    ? `${name}(Tensor self, SymInt[] size, Scalar fill_value, *, ${OPTIONS}) -> Tensor`
    : `${name}(Tensor self, SymInt[] size, *, ${OPTIONS}) -> Tensor`;
  const base = name.slice(4);
  const impl = fill
    ? (self: Tensor, size: number[], value: number | boolean, ...o: Opts) =>
      aten('full').call(size, value, ...like(self, o)) as Tensor
    : base === 'empty'
    ? (self: Tensor, size: number[], ...o: Opts) =>
      aten('empty', 'memory_format').call(size, ...like(self, o), null) as Tensor
    : (self: Tensor, size: number[], ...o: Opts) => aten(base).call(size, ...like(self, o)) as Tensor;
  return { schema, kind: 'composite-implicit', impl, doc, function: false, method: true };
}

/**
 * Declarations of the `new_*` factories.
 *
 * @example
 * ```ts
 * import { CONVENIENCE_OPS } from './decl_conveniences.ts';
 * CONVENIENCE_OPS['new_full'].method; // true
 * ```
 */
export const CONVENIENCE_OPS: { readonly [K in ConvenienceCompositeOpName]: OpDecl } = {
  'new_empty': factory(
    'new_empty',
    "An uninitialised tensor of `size` with this tensor's dtype and device unless given.",
    false,
  ),
  'new_zeros': factory('new_zeros', "Zeros of `size` with this tensor's dtype and device unless given.", false),
  'new_ones': factory('new_ones', "Ones of `size` with this tensor's dtype and device unless given.", false),
  'new_full': factory(
    'new_full',
    "`fill_value` in every element of `size`, this tensor's dtype and device unless given.",
    true,
  ),
};
