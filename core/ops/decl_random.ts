/**
 * Declarations of the random operators: the factories `rand`, `randn`, `randint` (with their `.generator`
 * overloads, as in PyTorch 1.13), the in-place samplers `uniform_` and `normal_`, and the `*_like`
 * composites. The Meta functions do PyTorch's argument checks, with its messages.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../dispatch/errors.ts';
import type { Device } from '../tensor/device.ts';
import { type DType, getDefaultDtype, int64 } from '../tensor/dtype.ts';
import type { Generator } from '../tensor/generator.ts';
import { filledOrFreed } from '../tensor/lifetime.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from './aten_call.ts';
import {
  checkLayout,
  checkSize,
  dtypeLimits,
  FACTORY_LIKE_OPS,
  type FactoryCompositeOpName,
  formatCppDouble,
  likeTensor,
  TYPE_META_NAMES,
} from './decl_factories.ts';
import type { MetaFn, OpDecl, TensorMeta } from './op_decl.ts';

const TENSOR_OPTIONS = 'ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None';

/** Raises PyTorch's `"name" not implemented for 'Long'` unless `dtype` is a floating type. */
function requireFloating(dtype: DType, name: string): void {
  if (!dtype.isFloatingPoint) throw new NotImplementedError(`"${name}" not implemented for '${dtype.scalarTypeName}'`);
}

function checkBounds(value: number, name: string, dtype: DType): void {
  const [lo, hi] = dtypeLimits(dtype);
  if (!(value >= lo && value <= hi)) {
    throw new RuntimeError(`${name} is out of bounds for ${TYPE_META_NAMES[dtype.name]}`);
  }
}

/**
 * `uniform_`'s checks (PyTorch's `check_uniform_bounds`): a floating dtype, `from` and `to` within its range,
 * `from <= to` and `to - from` representable.
 *
 * @example
 * ```ts
 * import { checkUniformBounds } from './decl_random.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * checkUniformBounds(float32, 0, 1); // ok
 * ```
 */
export function checkUniformBounds(dtype: DType, from: number, to: number): void {
  requireFloating(dtype, 'check_uniform_bounds');
  checkBounds(from, 'from', dtype);
  checkBounds(to, 'to', dtype);
  if (!(from <= to)) {
    throw new RuntimeError(
      `uniform_ expects to return a [from, to) range, but found from=${formatCppDouble(from)} > to=${
        formatCppDouble(to)
      }`,
    );
  }
  if (!(to - from <= dtypeLimits(dtype)[1])) {
    throw new RuntimeError(
      `uniform_ expects to-from <= std::numeric_limits<${dtype.scalarTypeName}>::max(), but found to=${
        formatCppDouble(to)
      } and from=${formatCppDouble(from)} which result in to-from to exceed the limit`,
    );
  }
}

/**
 * `normal_`'s checks: a floating dtype and `std >= 0`.
 *
 * @example
 * ```ts
 * import { checkNormalArgs } from './decl_random.ts';
 * import { float32 } from '../tensor/dtype.ts';
 * checkNormalArgs(float32, 1); // ok
 * ```
 */
export function checkNormalArgs(dtype: DType, std: number): void {
  if (!(std >= 0)) throw new RuntimeError(`normal expects std >= 0.0, but found std ${formatCppDouble(std)}`);
  requireFloating(dtype, 'normal_kernel_cpu');
}

/**
 * `random_(from, to)`'s checks (PyTorch's `random_from_to_impl`): `from < to`, both moved onto values the
 * dtype represents exactly for floating types, and `from`, `to - 1` within the dtype's range. Returns the
 * (possibly adjusted) bounds.
 *
 * @example
 * ```ts
 * import { checkRandomRange } from './decl_random.ts';
 * import { int64 } from '../tensor/dtype.ts';
 * checkRandomRange(int64, 0, 10); // [0, 10]
 * ```
 */
export function checkRandomRange(dtype: DType, from: number, to: number): [number, number] {
  if (!(from < to)) {
    throw new RuntimeError(`random_ expects 'from' to be less than 'to', but got from=${from} >= to=${to}`);
  }
  if (dtype.isFloatingPoint) {
    const digits = dtype.name === 'float16' ? 11 : dtype.name === 'bfloat16' ? 8 : dtype.name === 'float32' ? 24 : 53;
    from = adjustToRepresentable(from, digits, +1);
    to = adjustToRepresentable(to, digits, -1);
    if (!(from < to)) {
      throw new RuntimeError(
        `random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=${from} >= to=${to}`,
      );
    }
  }
  checkBounds(from, 'from', dtype);
  checkBounds(to - 1, 'to - 1', dtype);
  return [from, to];
}

/**
 * PyTorch's `update_from` (`direction` +1) / `update_to` (-1): when `from + 1` (`to - 1`) rounds past
 * `from` (`to`) in a type with `digits` mantissa bits, move the bound to a value the type holds.
 */
function adjustToRepresentable(bound: number, digits: number, direction: 1 | -1): number {
  const neighbour = bound + direction;
  const rounded = roundToDigits(neighbour, digits);
  if (direction > 0 ? rounded >= bound : rounded < bound) return bound;
  let magnitude = Math.abs(neighbour), n = 0;
  while ((magnitude = Math.floor(magnitude / 2)) > 0) n++;
  return rounded + direction * 2 ** (n - digits + 1);
}

/** `x` rounded to the nearest value with `digits` significant bits (ties to even), truncated to an integer. */
function roundToDigits(x: number, digits: number): number {
  if (x === 0 || Math.abs(x) < 2 ** digits) return x;
  const scale = 2 ** (Math.floor(Math.log2(Math.abs(x))) - digits + 1);
  const q = x / scale, r = Math.round(q);
  const even = Math.abs(q - Math.trunc(q)) === 0.5 ? 2 * Math.round(q / 2) : r;
  return Math.trunc(even * scale);
}

const randomFactoryMeta = (
  size: readonly number[],
  dtype: DType | null,
  layout: number | string | null,
  check: (d: DType) => void,
): TensorMeta => {
  checkLayout(layout);
  const d = dtype ?? getDefaultDtype();
  checkSize(size);
  check(d);
  return { shape: size, dtype: d };
};

const randMeta = (size: readonly number[], dtype: DType | null, layout: string | null) =>
  randomFactoryMeta(size, dtype, layout, (d) => checkUniformBounds(d, 0, 1));
const randnMeta = (size: readonly number[], dtype: DType | null, layout: string | null) =>
  randomFactoryMeta(size, dtype, layout, (d) => checkNormalArgs(d, 1));

/**
 * Meta function of `randint.low`: checks the range against the dtype (int64 unless given).
 *
 * @example
 * ```ts
 * import { randintMeta } from './decl_random.ts';
 * randintMeta(0, 10, [3], null, null).dtype.name; // 'int64'
 * ```
 */
export function randintMeta(
  low: number,
  high: number,
  size: readonly number[],
  dtype: DType | null,
  layout: number | string | null,
): TensorMeta {
  checkLayout(layout);
  const d = dtype ?? int64;
  checkSize(size);
  checkRandomRange(d, low, high);
  return { shape: size, dtype: d };
}

const inPlaceMeta = (self: Tensor): TensorMeta => ({ shape: self.shape, dtype: self.dtype });

type FactoryRest = [DType | null, string | null, Device | null, boolean | null];

function factory(schema: string, meta: MetaFn, doc: string, extra: Partial<OpDecl> = {}): OpDecl {
  return { ...extra, schema, kind: 'factory', meta, doc };
}

/** Names of the random operators that every backend implements. */
export type RandomBackendOpName =
  | 'rand'
  | 'rand.generator'
  | 'randn'
  | 'randn.generator'
  | 'randint'
  | 'randint.generator'
  | 'randint.low'
  | 'randint.low_generator'
  | 'uniform_'
  | 'normal_';

/**
 * Names of the random operators implemented once for all backends. The `*_like` factory composites are
 * registered here too: the operator table has no slot for factory composites yet (declarations.ts).
 */
export type RandomCompositeOpName =
  | 'rand_like'
  | 'randn_like'
  | 'randint_like'
  | 'randint_like.low_dtype'
  | FactoryCompositeOpName;

type LikeRest = [DType | null, string | null, Device | null, boolean | null, unknown];

const sampleLike = (
  self: Tensor,
  [dtype, layout, device, , format]: LikeRest,
  opName: string,
  fill: (t: Tensor) => void,
) => {
  const empty = (size: readonly number[], d: DType, dev: Device) =>
    aten('empty', 'memory_format').call(size, d, null, dev, null, null) as Tensor;
  return filledOrFreed(likeTensor(self, dtype, layout, device, format, empty, opName), fill);
};

const randintLike = (self: Tensor, low: number, high: number, [dtype, layout, device, , format]: LikeRest) =>
  likeTensor(
    self,
    dtype,
    layout,
    device,
    format,
    (size, d, dev) => aten('randint', 'low').call(low, high, size, d, null, dev, null) as Tensor,
    'randint_like',
  );

const like = (schema: string, impl: OpDecl['impl'], doc: string): OpDecl => ({
  schema,
  kind: 'composite-explicit',
  impl,
  doc,
});

const methodOnly: Partial<OpDecl> = { function: false, method: true };

/**
 * Declarations of the random operators. Each `.generator` overload comes before its plain twin, so that the
 * generated function binds a call with a `generator` option to it (PyTorch's kernels take a null generator as
 * the default one, so either overload serves a call without one).
 *
 * @example
 * ```ts
 * import { RANDOM_OPS } from './decl_random.ts';
 * RANDOM_OPS.normal_.kind; // 'backend'
 * ```
 */
export const RANDOM_OPS: { readonly [K in RandomBackendOpName | RandomCompositeOpName]: OpDecl } = {
  'rand.generator': factory(
    `rand.generator(int[] size, *, Generator? generator, ${TENSOR_OPTIONS}) -> Tensor`,
    (size: readonly number[], _g: Generator | null, ...rest: FactoryRest) => randMeta(size, rest[0], rest[1]),
    'Samples from the uniform distribution on [0, 1), as PyTorch does for the same seed.',
  ),
  'rand': factory(
    `rand(int[] size, *, ${TENSOR_OPTIONS}) -> Tensor`,
    randMeta,
    'Samples from the uniform distribution on [0, 1), as PyTorch does for the same seed.',
  ),
  'randn.generator': factory(
    `randn.generator(int[] size, *, Generator? generator, ${TENSOR_OPTIONS}) -> Tensor`,
    (size: readonly number[], _g: Generator | null, ...rest: FactoryRest) => randnMeta(size, rest[0], rest[1]),
    'Samples from the standard normal distribution, as PyTorch does for the same seed.',
  ),
  'randn': factory(
    `randn(int[] size, *, ${TENSOR_OPTIONS}) -> Tensor`,
    randnMeta,
    'Samples from the standard normal distribution, as PyTorch does for the same seed.',
  ),
  'randint.generator': factory(
    `randint.generator(int high, int[] size, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor`,
    (high: number, size: readonly number[], _g: Generator | null, ...rest: FactoryRest) =>
      randintMeta(0, high, size, rest[0], rest[1]),
    'Integers drawn uniformly from [0, high).',
  ),
  'randint': factory(
    `randint(int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor`,
    (high: number, size: readonly number[], ...rest: FactoryRest) => randintMeta(0, high, size, rest[0], rest[1]),
    'Integers drawn uniformly from [0, high).',
  ),
  'randint.low_generator': factory(
    `randint.low_generator(int low, int high, int[] size, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor`,
    (low: number, high: number, size: readonly number[], _g: Generator | null, ...rest: FactoryRest) =>
      randintMeta(low, high, size, rest[0], rest[1]),
    'Integers drawn uniformly from [low, high).',
  ),
  'randint.low': factory(
    `randint.low(int low, int high, int[] size, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor`,
    randintMeta,
    'Integers drawn uniformly from [low, high).',
  ),
  'uniform_': {
    schema: 'uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)',
    kind: 'backend',
    meta: (self: Tensor, from: number, to: number) => {
      checkUniformBounds(self.dtype, from, to);
      return inPlaceMeta(self);
    },
    doc: 'Fills `self` with samples from the uniform distribution on [from, to), as PyTorch does.',
    ...methodOnly,
  },
  'normal_': {
    schema: 'normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> Tensor(a!)',
    kind: 'backend',
    meta: (self: Tensor, _mean: number, std: number) => {
      checkNormalArgs(self.dtype, std);
      return inPlaceMeta(self);
    },
    doc: 'Fills `self` with samples from the normal distribution N(mean, std²), as PyTorch does.',
    ...methodOnly,
  },
  ...FACTORY_LIKE_OPS,
  'rand_like': like(
    `rand_like(Tensor self, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    (self: Tensor, ...rest: LikeRest) =>
      sampleLike(self, rest, 'rand_like', (t) => aten('uniform_').call(t, 0, 1, null)),
    "Uniform samples on [0, 1) with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'randn_like': like(
    `randn_like(Tensor self, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    (self: Tensor, ...rest: LikeRest) =>
      sampleLike(self, rest, 'randn_like', (t) => aten('normal_').call(t, 0, 1, null)),
    "Standard normal samples with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'randint_like': like(
    `randint_like(Tensor self, int high, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    (self: Tensor, high: number, ...rest: LikeRest) => randintLike(self, 0, high, rest),
    "Integers from [0, high) with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
  'randint_like.low_dtype': like(
    `randint_like.low_dtype(Tensor self, int low, int high, *, ${TENSOR_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor`,
    (self: Tensor, low: number, high: number, ...rest: LikeRest) => randintLike(self, low, high, rest),
    "Integers from [low, high) with `self`'s shape (and its dtype, device and dim order unless given).",
  ),
};
