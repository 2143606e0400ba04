/**
 * Derivative formulas, one per differentiable operator overload: the role of PyTorch's `derivatives.yaml`.
 * Each entry names the backward node as PyTorch does and gives each differentiable input's gradient in terms
 * of the output gradient `g` and the saved inputs/output (`s`). The autograd kernel reduces broadcast
 * gradients back to each input's shape and dtype.
 *
 * @module
 */
import type { Derivative, SavedValues } from '../autograd/autograd_kernel.ts';
import type { TensorGeometry } from '../autograd/engine_ops.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import { type DType, int64 } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { OpName } from './declarations.ts';
import { where } from './generated_api.js';
import { asStridedBackward } from './as_strided_backward.ts';
import { SCAN_SORT_DERIVATIVES } from './derivatives_scan_sort.ts';
import { ACTIVATION_DERIVATIVES } from './derivatives_activations.ts';

const t = (s: SavedValues, name: string) => s[name] as Tensor;
const n = (s: SavedValues, name: string) => s[name] as number;

function op(name: string, overload = '') {
  return Dispatcher.singleton().findSchemaOrThrow(`aten::${name}`, overload);
}

const shape = (s: SavedValues, name: string) => s[`${name}_shape`] as readonly number[];

/** Zeros of `full` shape with `like`'s dtype and device. */
const zerosOf = (full: readonly number[], like: Tensor) =>
  op('zeros').call(full, like.dtype, null, like.device, null) as Tensor;

/** `value` where `keep` holds, 0 elsewhere (PyTorch's `at::where(cond, zeros({}), value)` masks in formulas). */
const maskedZero = (keep: Tensor, value: Tensor) => op('where', 'ScalarOther').call(keep, value, 0) as Tensor;

/** All dims of a rank, or `dim` wrapped and sorted. */
function reducedDims(dim: readonly number[] | null | undefined, rank: number): number[] {
  if (dim === null || dim === undefined || dim.length === 0) return Array.from({ length: rank }, (_, i) => i);
  return [...new Set(dim.map((d) => (d < 0 ? d + rank : d)))].sort((a, b) => a - b);
}

/** A reduction's gradient broadcast back over the reduced dims (the inverse of sum's shape change). */
function unreduce(g: Tensor, full: readonly number[], dims: readonly number[], keepdim: boolean): Tensor {
  let out = g;
  if (!keepdim) { for (const d of dims) out = out.unsqueeze(d); }
  return out.expand(full);
}

/** A zero tensor of `full` shape with `g` written into the view `select` picks (select/slice/diagonal). */
function scatterInto(g: Tensor, full: readonly number[], select: (z: Tensor) => Tensor): Tensor {
  const z = op('zeros').call(full, g.dtype, null, g.device, null) as Tensor;
  select(z).copy_(g);
  return z;
}

/** One-hot mask over `dim` of `full` marking `indices` (the positions max.dim/min.dim chose). */
function indexMask(indices: Tensor, full: readonly number[], dim: number, keepdim: boolean): Tensor {
  const idx = keepdim ? indices : indices.unsqueeze(dim);
  const positions = op('arange', '').call(full[dim], int64, null, idx.device, null) as Tensor;
  const view = full.map((_, i) => (i === dim ? full[dim] : 1));
  return positions.view(view).eq(idx);
}

/** max.dim / min.dim: the gradient goes to the position each output picked (value_selected_reduction_backward). */
function valueSelectedBackward(g: Tensor, s: SavedValues): Tensor {
  const full = shape(s, 'self');
  const dim = wrap(n(s, 'dim'), full.length);
  const keepdim = s.keepdim as boolean;
  return unreduce(g, full, [dim], keepdim).mul(indexMask(t(s, 'result1'), full, dim, keepdim));
}

/** The gradient of a list of outputs (split, unbind): the pieces concatenated, zeros where none arrived. */
function joinPieces(
  grads: ReadonlyArray<Tensor | null>,
  pieces: readonly (readonly number[])[],
  dim: number,
  like: Tensor,
): Tensor {
  const parts = pieces.map((p, i) => grads[i] ?? (op('zeros').call(p, like.dtype, null, like.device, null) as Tensor));
  return op('cat').call(parts, dim) as Tensor;
}

/** Where `clamp(x, min, max)` passes `x` through: inside the bounds and not NaN (derivatives.yaml's clamp_backward). */
function clampMask(x: Tensor, min: number | null, max: number | null): Tensor {
  let mask = x.eq(x);
  if (min !== null) mask = mask.logicalAnd(x.ge(min));
  if (max !== null) mask = mask.logicalAnd(x.le(max));
  return mask;
}

// clamp_min and clamp_max, also in place (the autograd kernel saves a clone of self taken before the write).
const CLAMP_MIN: Derivative = {
  name: 'ClampMinBackward0',
  save: ['self'],
  grads: { self: (g, s) => where(t(s, 'self').ge(n(s, 'min')), g, 0) },
};
const CLAMP_MAX: Derivative = {
  name: 'ClampMaxBackward0',
  save: ['self'],
  grads: { self: (g, s) => where(t(s, 'self').le(n(s, 'max')), g, 0) },
};

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const INV_SQRT_2 = Math.SQRT1_2;
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

function geluBackward(g: Tensor, x: Tensor, approximate: string): Tensor {
  if (approximate === 'tanh') {
    // d/dx 0.5 x (1 + tanh(k (x + 0.044715 x^3)))
    const x3 = x.mul(x).mul(x);
    const inner = x.add(x3.mul(0.044715)).mul(SQRT_2_OVER_PI);
    const th = inner.tanh();
    const dInner = x.mul(x).mul(3 * 0.044715).add(1).mul(SQRT_2_OVER_PI);
    const left = th.add(1).mul(0.5);
    const right = x.mul(0.5).mul(th.mul(th).neg().add(1)).mul(dInner);
    return g.mul(left.add(right));
  }
  // Φ(x) + x φ(x)
  const cdf = x.mul(INV_SQRT_2).erf().add(1).mul(0.5);
  const pdf = x.mul(x).mul(-0.5).exp().mul(INV_SQRT_2PI);
  return g.mul(cdf.add(x.mul(pdf)));
}

const wrap = (d: number, rank: number) => (d < 0 ? d + Math.max(rank, 1) : d);

/** Derivatives of the differentiable operators, keyed like the operator table. */
export const DERIVATIVES: { readonly [K in OpName]?: Derivative } = {
  ...SCAN_SORT_DERIVATIVES,
  ...ACTIVATION_DERIVATIVES,
  // bernoulli's samples do not depend smoothly on the probabilities: a zero gradient, as derivatives.yaml says.
  'bernoulli': { name: 'BernoulliBackward0', grads: { self: (g) => g.mul(0) } },
  'bernoulli.p': { name: 'BernoulliBackward1', grads: { self: (g) => g.mul(0) } },
  'add.Tensor': {
    name: 'AddBackward0',
    grads: { self: (g) => g, other: (g, s) => (n(s, 'alpha') === 1 ? g : g.mul(n(s, 'alpha'))) },
  },
  'add.Scalar': { name: 'AddBackward1', grads: { self: (g) => g } },
  'add_.Tensor': {
    name: 'AddBackward0',
    grads: { self: (g) => g, other: (g, s) => (n(s, 'alpha') === 1 ? g : g.mul(n(s, 'alpha'))) },
  },
  'add_.Scalar': { name: 'AddBackward1', grads: { self: (g) => g } },
  'sub.Tensor': { name: 'SubBackward0', grads: { self: (g) => g, other: (g, s) => g.mul(-n(s, 'alpha')) } },
  'sub.Scalar': { name: 'SubBackward1', grads: { self: (g) => g } },
  'rsub.Tensor': {
    name: 'RsubBackward0',
    grads: { self: (g, s) => g.mul(-n(s, 'alpha')), other: (g) => g },
  },
  'rsub.Scalar': { name: 'RsubBackward1', grads: { self: (g, s) => g.mul(-n(s, 'alpha')) } },
  'sub_.Tensor': { name: 'SubBackward0', grads: { self: (g) => g, other: (g, s) => g.mul(-n(s, 'alpha')) } },
  'sub_.Scalar': { name: 'SubBackward1', grads: { self: (g) => g } },
  'mul.Tensor': {
    name: 'MulBackward0',
    save: ['self', 'other'],
    grads: { self: (g, s) => g.mul(t(s, 'other')), other: (g, s) => g.mul(t(s, 'self')) },
  },
  'mul.Scalar': { name: 'MulBackward1', grads: { self: (g, s) => g.mul(n(s, 'other')) } },
  'mul_.Tensor': {
    name: 'MulBackward0',
    save: ['self', 'other'],
    grads: { self: (g, s) => g.mul(t(s, 'other')), other: (g, s) => g.mul(t(s, 'self')) },
  },
  'mul_.Scalar': { name: 'MulBackward1', grads: { self: (g, s) => g.mul(n(s, 'other')) } },
  'div.Tensor': {
    name: 'DivBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => g.div(t(s, 'other')),
      other: (g, s) => g.neg().mul(t(s, 'self')).div(t(s, 'other').mul(t(s, 'other'))),
    },
  },
  'div.Scalar': { name: 'DivBackward1', grads: { self: (g, s) => g.div(n(s, 'other')) } },
  'div_.Tensor': {
    name: 'DivBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => g.div(t(s, 'other')),
      other: (g, s) => g.neg().mul(t(s, 'self')).div(t(s, 'other').mul(t(s, 'other'))),
    },
  },
  'div_.Scalar': { name: 'DivBackward1', grads: { self: (g, s) => g.div(n(s, 'other')) } },
  // pow's gradients with PyTorch's masks (FunctionsManual.cpp pow_backward*): a zero exponent has gradient 0 for
  // self (not grad * 0, which is NaN for a NaN or infinite grad), and d(a^b)/db is taken as 0 at a = 0, b >= 0.
  'pow.Tensor_Scalar': {
    name: 'PowBackward0',
    save: ['self'],
    grads: {
      self: (g, s) => {
        const e = n(s, 'exponent'), x = t(s, 'self');
        return e === 0 ? zerosOf(x.shape, x) : g.mul(x.pow(e - 1).mul(e));
      },
    },
  },
  'pow.Tensor_Tensor': {
    name: 'PowBackward1',
    save: ['self', 'exponent', 'result'],
    grads: {
      self: (g, s) => {
        const x = t(s, 'self'), e = t(s, 'exponent');
        return maskedZero(e.ne(0), g.mul(e.mul(x.pow(e.sub(1)))));
      },
      exponent: (g, s) => {
        const x = t(s, 'self'), e = t(s, 'exponent');
        const keep = x.eq(0).logicalAnd(e.ge(0)).logicalNot();
        return g.mul(maskedZero(keep, t(s, 'result').mul(x.log())));
      },
    },
  },
  'neg': { name: 'NegBackward0', grads: { self: (g) => g.neg() } },
  'abs': { name: 'AbsBackward0', save: ['self'], grads: { self: (g, s) => g.mul(t(s, 'self').sign()) } },
  'exp': { name: 'ExpBackward0', save: ['result'], grads: { self: (g, s) => g.mul(t(s, 'result')) } },
  'log': { name: 'LogBackward0', save: ['self'], grads: { self: (g, s) => g.div(t(s, 'self')) } },
  'log1p': { name: 'Log1PBackward0', save: ['self'], grads: { self: (g, s) => g.div(t(s, 'self').add(1)) } },
  'expm1': { name: 'Expm1Backward0', save: ['result'], grads: { self: (g, s) => g.mul(t(s, 'result').add(1)) } },
  'sqrt': { name: 'SqrtBackward0', save: ['result'], grads: { self: (g, s) => g.div(t(s, 'result').mul(2)) } },
  'rsqrt': {
    name: 'RsqrtBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').pow(3).mul(-0.5)) },
  },
  'sin': { name: 'SinBackward0', save: ['self'], grads: { self: (g, s) => g.mul(t(s, 'self').cos()) } },
  'cos': { name: 'CosBackward0', save: ['self'], grads: { self: (g, s) => g.mul(t(s, 'self').sin().neg()) } },
  'tanh': {
    name: 'TanhBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').mul(t(s, 'result')).neg().add(1)) },
  },
  'sigmoid': {
    name: 'SigmoidBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').mul(t(s, 'result').neg().add(1))) },
  },
  'erf': {
    name: 'ErfBackward0',
    save: ['self'],
    grads: { self: (g, s) => g.mul(t(s, 'self').mul(t(s, 'self')).neg().exp().mul(2 / Math.sqrt(Math.PI))) },
  },
  'reciprocal': {
    name: 'ReciprocalBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').mul(t(s, 'result')).neg()) },
  },
  'relu': {
    name: 'ReluBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').gt(0)) },
  },
  'gelu': {
    name: 'GeluBackward0',
    save: ['self'],
    grads: { self: (g, s) => geluBackward(g, t(s, 'self'), s.approximate as string) },
  },
  'silu': {
    name: 'SiluBackward0',
    save: ['self'],
    grads: {
      self: (g, s) => {
        const x = t(s, 'self');
        const sig = x.sigmoid();
        return g.mul(sig.mul(x.mul(sig.neg().add(1)).add(1)));
      },
    },
  },
  'floor': { name: 'FloorBackward0', grads: { self: (g) => g.mul(0) } },
  'ceil': { name: 'CeilBackward0', grads: { self: (g) => g.mul(0) } },
  'round': { name: 'RoundBackward0', grads: { self: (g) => g.mul(0) } },
  'trunc': { name: 'TruncBackward0', grads: { self: (g) => g.mul(0) } },
  'sign': { name: 'SignBackward0', grads: { self: (g) => g.mul(0) } },
  'clamp': {
    name: 'ClampBackward1',
    save: ['self'],
    grads: {
      self: (g, s) => where(clampMask(t(s, 'self'), s.min as number | null, s.max as number | null), g, 0),
    },
  },
  // clamp_ saves a clone of `self` taken before the write (the autograd kernel clones in-place inputs it saves).
  'clamp_': {
    name: 'ClampBackward1',
    save: ['self'],
    grads: { self: (g, s) => where(clampMask(t(s, 'self'), s.min as number | null, s.max as number | null), g, 0) },
  },
  'clamp_min': CLAMP_MIN,
  'clamp_max': CLAMP_MAX,
  'clamp_min_': CLAMP_MIN,
  'clamp_max_': CLAMP_MAX,
  'where.self': {
    name: 'WhereBackward0',
    save: ['condition'],
    grads: {
      self: (g, s) => g.mul(t(s, 'condition')),
      other: (g, s) => g.mul(t(s, 'condition').logicalNot()),
    },
  },
  'minimum': {
    name: 'MinimumBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => g.mul(splitWeight(t(s, 'self'), t(s, 'other'), 'lt')),
      other: (g, s) => g.mul(splitWeight(t(s, 'other'), t(s, 'self'), 'lt')),
    },
  },
  'maximum': {
    name: 'MaximumBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => g.mul(splitWeight(t(s, 'self'), t(s, 'other'), 'gt')),
      other: (g, s) => g.mul(splitWeight(t(s, 'other'), t(s, 'self'), 'gt')),
    },
  },

  'div.Tensor_mode': {
    name: 'DivBackward2',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => (s.rounding_mode === null ? g.div(t(s, 'other')) : g.mul(0)),
      other: (g, s) =>
        s.rounding_mode === null ? g.neg().mul(t(s, 'self')).div(t(s, 'other').mul(t(s, 'other'))) : g.mul(0),
    },
  },
  'div.Scalar_mode': {
    name: 'DivBackward3',
    grads: { self: (g, s) => (s.rounding_mode === null ? g.div(n(s, 'other')) : g.mul(0)) },
  },
  'remainder.Tensor': {
    name: 'RemainderBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g) => g,
      other: (g, s) => g.mul(t(s, 'self').div(t(s, 'other'), { roundingMode: 'floor' })).neg(),
    },
  },
  'remainder.Scalar': { name: 'RemainderBackward1', grads: { self: (g) => g } },
  'fmod.Tensor': {
    name: 'FmodBackward0',
    save: ['self', 'other'],
    grads: {
      self: (g) => g,
      other: (g, s) => g.mul(t(s, 'self').div(t(s, 'other'), { roundingMode: 'trunc' })).neg(),
    },
  },
  'fmod.Scalar': { name: 'FmodBackward1', grads: { self: (g) => g } },
  'pow.Scalar': {
    name: 'PowBackward2',
    save: ['exponent', 'result'],
    grads: {
      exponent: (g, s) => {
        const base = n(s, 'self'), grad = t(s, 'result').mul(Math.log(base));
        return g.mul(base === 0 ? maskedZero(t(s, 'exponent').ge(0).logicalNot(), grad) : grad);
      },
    },
  },
  'atan2': {
    name: 'Atan2Backward0',
    save: ['self', 'other'],
    grads: {
      self: (g, s) => g.mul(t(s, 'other')).div(t(s, 'self').mul(t(s, 'self')).add(t(s, 'other').mul(t(s, 'other')))),
      other: (g, s) =>
        g.mul(t(s, 'self')).neg().div(t(s, 'self').mul(t(s, 'self')).add(t(s, 'other').mul(t(s, 'other')))),
    },
  },
  'neg_': { name: 'NegBackward0', grads: { self: (g) => g.neg() } },
  'exp_': { name: 'ExpBackward0', save: ['result'], grads: { self: (g, s) => g.mul(t(s, 'result')) } },
  'tanh_': {
    name: 'TanhBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').mul(t(s, 'result')).neg().add(1)) },
  },
  'sigmoid_': {
    name: 'SigmoidBackward0',
    save: ['result'],
    grads: { self: (g, s) => g.mul(t(s, 'result').mul(t(s, 'result').neg().add(1))) },
  },
  'relu_': { name: 'ReluBackward0', save: ['result'], grads: { self: (g, s) => g.mul(t(s, 'result').gt(0)) } },
  'where.ScalarOther': {
    name: 'WhereBackward1',
    save: ['condition'],
    grads: { self: (g, s) => g.mul(t(s, 'condition')) },
  },
  'clamp.Tensor': {
    name: 'ClampBackward0',
    save: ['self', 'min', 'max'],
    grads: {
      self: (g, s) => {
        const x = t(s, 'self');
        let mask = x.eq(x);
        if (s.min instanceof Object) mask = mask.logicalAnd(x.ge(t(s, 'min')));
        if (s.max instanceof Object) mask = mask.logicalAnd(x.le(t(s, 'max')));
        return g.mul(mask);
      },
      min: (g, s) => g.mul(t(s, 'self').lt(t(s, 'min'))),
      max: (g, s) => g.mul(t(s, 'self').gt(t(s, 'max'))),
    },
  },

  'index_select': {
    name: 'IndexSelectBackward0',
    save: ['self_shape', 'index'],
    grads: { self: (g, s) => zerosOf(shape(s, 'self'), g).indexAdd(n(s, 'dim'), t(s, 'index'), g) },
  },
  'index_add': {
    name: 'IndexAddBackward0',
    save: ['index', 'source_shape'],
    grads: {
      self: (g) => g,
      source: (g, s) => {
        const picked = g.indexSelect(n(s, 'dim'), t(s, 'index')).reshape(shape(s, 'source'));
        return n(s, 'alpha') === 1 ? picked : picked.mul(n(s, 'alpha'));
      },
    },
  },
  'embedding': {
    name: 'EmbeddingBackward0',
    save: ['weight_shape', 'indices'],
    grads: {
      weight: (g, s) =>
        op('embedding_dense_backward').call(
          g,
          t(s, 'indices'),
          shape(s, 'weight')[0],
          s.padding_idx,
          s.scale_grad_by_freq,
        ) as Tensor,
    },
  },
  'embedding_dense_backward': {
    name: 'EmbeddingDenseBackwardBackward0',
    save: ['indices'],
    grads: {
      grad_output: (g, s) => {
        const rows = op('embedding').call(g, t(s, 'indices'), -1, false, false) as Tensor;
        const padding = n(s, 'padding_idx');
        return padding < 0 ? rows : rows.maskedFill(t(s, 'indices').eq(padding).unsqueeze(-1), 0);
      },
    },
  },
  'gather': {
    name: 'GatherBackward0',
    save: ['self_shape', 'index'],
    grads: { self: (g, s) => zerosOf(shape(s, 'self'), g).scatterAdd(n(s, 'dim'), t(s, 'index'), g) },
  },
  'scatter_add': {
    name: 'ScatterAddBackward0',
    save: ['index'],
    grads: { self: (g) => g, src: (g, s) => g.gather(n(s, 'dim'), t(s, 'index')) },
  },
  'masked_fill.Scalar': {
    name: 'MaskedFillBackward0',
    save: ['mask'],
    grads: { self: (g, s) => g.maskedFill(t(s, 'mask'), 0) },
  },
  'masked_fill_.Scalar': {
    name: 'MaskedFillBackward0',
    save: ['mask'],
    grads: { self: (g, s) => g.maskedFill(t(s, 'mask'), 0) },
  },

  'sqrt_': { name: 'SqrtBackward0', save: ['result'], grads: { self: (g, s) => g.div(t(s, 'result').mul(2)) } },
  // Filling and sampling in place: the new values do not depend on the old ones (zeros_like(grad)).
  'zero_': { name: 'ZeroBackward0', grads: { self: (g) => g.mul(0) } },
  'fill_.Scalar': { name: 'FillBackward0', grads: { self: (g) => g.mul(0) } },
  'uniform_': { name: 'UniformBackward0', grads: { self: (g) => g.mul(0) } },
  'normal_': { name: 'NormalBackward0', grads: { self: (g) => g.mul(0) } },

  // Views and copies.
  'view': { name: 'ViewBackward0', grads: { self: (g, s) => g.reshape(shape(s, 'self')) } },
  '_unsafe_view': { name: 'UnsafeViewBackward0', grads: { self: (g, s) => g.reshape(shape(s, 'self')) } },
  'permute': {
    name: 'PermuteBackward0',
    grads: {
      self: (g, s) => {
        const dims = s.dims as readonly number[];
        const inverse = new Array<number>(dims.length);
        dims.forEach((d, i) => (inverse[wrap(d, dims.length)] = i));
        return g.permute(inverse);
      },
    },
  },
  'transpose.int': {
    name: 'TransposeBackward0',
    grads: { self: (g, s) => g.transpose(n(s, 'dim0'), n(s, 'dim1')) },
  },
  't': { name: 'TBackward0', grads: { self: (g) => g.t() } },
  'squeeze': { name: 'SqueezeBackward0', grads: { self: (g, s) => g.reshape(shape(s, 'self')) } },
  'squeeze.dim': { name: 'SqueezeBackward1', grads: { self: (g, s) => g.reshape(shape(s, 'self')) } },
  'unsqueeze': { name: 'UnsqueezeBackward0', grads: { self: (g, s) => g.squeeze(n(s, 'dim')) } },
  // expand's gradient is the broadcast reduction the node applies to every input.
  'expand': { name: 'ExpandBackward0', grads: { self: (g) => g } },
  'select.int': {
    name: 'SelectBackward0',
    grads: { self: (g, s) => scatterInto(g, shape(s, 'self'), (z) => z.select(n(s, 'dim'), n(s, 'index'))) },
  },
  'slice.Tensor': {
    name: 'SliceBackward0',
    grads: {
      self: (g, s) =>
        scatterInto(
          g,
          shape(s, 'self'),
          (z) => op('slice', 'Tensor').call(z, s.dim, s.start ?? null, s.end ?? null, s.step ?? 1) as Tensor,
        ),
    },
  },
  'diagonal': {
    name: 'DiagonalBackward0',
    grads: {
      self: (g, s) => scatterInto(g, shape(s, 'self'), (z) => z.diagonal(n(s, 'offset'), n(s, 'dim1'), n(s, 'dim2'))),
    },
  },
  'as_strided': {
    name: 'AsStridedBackward0',
    geometry: ['self'],
    grads: {
      self: (g, s) => {
        const input = s.self_geometry as TensorGeometry;
        const offset = (s.storage_offset as number | null) ?? input.offset;
        return asStridedBackward(g, input, s.size as number[], s.stride as number[], offset);
      },
    },
  },
  'split.Tensor': {
    name: 'SplitBackward0',
    grads: {
      self: (g, s, grads) => {
        const full = shape(s, 'self');
        const dim = wrap(n(s, 'dim'), full.length);
        const size = n(s, 'split_size');
        const pieces = grads.map((_, i) => full.map((x, d) => (d === dim ? Math.min(size, full[dim] - i * size) : x)));
        return joinPieces(grads, pieces, dim, g);
      },
    },
  },
  'split_with_sizes': {
    name: 'SplitWithSizesBackward0',
    grads: {
      self: (g, s, grads) => {
        const full = shape(s, 'self');
        const dim = wrap(n(s, 'dim'), full.length);
        const sizes = s.split_sizes as readonly number[];
        return joinPieces(grads, sizes.map((k) => full.map((x, d) => (d === dim ? k : x))), dim, g);
      },
    },
  },
  'unbind.int': {
    name: 'UnbindBackward0',
    grads: {
      self: (g, s, grads) => {
        const full = shape(s, 'self');
        const dim = wrap(n(s, 'dim'), full.length);
        const piece = full.map((x, d) => (d === dim ? 1 : x));
        return joinPieces(grads.map((x) => x?.unsqueeze(dim) ?? null), grads.map(() => piece), dim, g);
      },
    },
  },
  'clone': { name: 'CloneBackward0', grads: { self: (g) => g } },
  // The node casts each gradient back to its input's dtype.
  '_to_copy': { name: 'ToCopyBackward0', grads: { self: (g) => g } },
  'copy_': { name: 'CopyBackwards', grads: { self: (g) => g.mul(0), src: (g) => g } },
  'cat': {
    name: 'CatBackward0',
    grads: {
      tensors: (g, s) => {
        const shapes = s.tensors as ReadonlyArray<readonly number[]>;
        const dim = wrap(n(s, 'dim'), g.ndim);
        let offset = 0;
        return shapes.map((sh) => {
          // Legacy cat skips 1-d empty tensors: their gradient is empty too.
          if (sh.length === 1 && sh[0] === 0 && g.ndim !== 1) return g.narrow(0, 0, 0).reshape([0]);
          const piece = g.narrow(dim, offset, sh[dim]);
          offset += sh[dim];
          return piece;
        });
      },
    },
  },
  'flip': { name: 'FlipBackward0', grads: { self: (g, s) => g.flip(s.dims as number[]) } },

  // Reductions.
  'sum.dim_IntList': {
    name: 'SumBackward1',
    grads: {
      self: (g, s) => {
        const full = shape(s, 'self');
        return unreduce(g, full, reducedDims(s.dim as number[] | null, full.length), s.keepdim as boolean);
      },
    },
  },
  'sum': { name: 'SumBackward0', grads: { self: (g, s) => g.expand(shape(s, 'self')) } },
  'mean.dim': {
    name: 'MeanBackward1',
    grads: {
      self: (g, s) => {
        const full = shape(s, 'self');
        const dims = reducedDims(s.dim as number[] | null, full.length);
        const count = dims.reduce((acc, d) => acc * full[d], 1);
        return unreduce(g, full, dims, s.keepdim as boolean).div(count);
      },
    },
  },
  'mean': {
    name: 'MeanBackward0',
    grads: { self: (g, s) => g.expand(shape(s, 'self')).div(shape(s, 'self').reduce((a, b) => a * b, 1)) },
  },
  'prod': {
    name: 'ProdBackward0',
    save: ['self', 'result'],
    grads: { self: (g, s) => prodBackward(g, t(s, 'self'), t(s, 'result'), null, false) },
  },
  'prod.dim_int': {
    name: 'ProdBackward1',
    save: ['self', 'result'],
    grads: {
      self: (g, s) => prodBackward(g, t(s, 'self'), t(s, 'result'), n(s, 'dim'), s.keepdim as boolean),
    },
  },
  'max': { name: 'MaxBackward1', save: ['self', 'result'], grads: { self: (g, s) => evenlySplit(g, s) } },
  'min': { name: 'MinBackward1', save: ['self', 'result'], grads: { self: (g, s) => evenlySplit(g, s) } },
  'amax': { name: 'AmaxBackward0', save: ['self', 'result'], grads: { self: (g, s) => splitAmongExtremes(g, s) } },
  'amin': { name: 'AminBackward0', save: ['self', 'result'], grads: { self: (g, s) => splitAmongExtremes(g, s) } },
  'max.dim': {
    name: 'MaxBackward0',
    save: ['result1'],
    grads: { self: (g, s) => valueSelectedBackward(g, s) },
  },
  'min.dim': {
    name: 'MinBackward0',
    save: ['result1'],
    grads: { self: (g, s) => valueSelectedBackward(g, s) },
  },

  // Linear algebra.
  'mm': {
    name: 'MmBackward0',
    save: ['self', 'mat2'],
    grads: { self: (g, s) => g.mm(t(s, 'mat2').t()), mat2: (g, s) => t(s, 'self').t().mm(g) },
  },
  'bmm': {
    name: 'BmmBackward0',
    save: ['self', 'mat2'],
    grads: {
      self: (g, s) => g.bmm(t(s, 'mat2').transpose(1, 2)),
      mat2: (g, s) => t(s, 'self').transpose(1, 2).bmm(g),
    },
  },
  'addmm': {
    name: 'AddmmBackward0',
    save: ['mat1', 'mat2'],
    grads: {
      self: (g, s) => (n(s, 'beta') === 1 ? g : g.mul(n(s, 'beta'))),
      mat1: (g, s) => scaled(g.mm(t(s, 'mat2').t()), n(s, 'alpha')),
      mat2: (g, s) => scaled(t(s, 'mat1').t().mm(g), n(s, 'alpha')),
    },
  },
  'dot': {
    name: 'DotBackward0',
    save: ['self', 'tensor'],
    grads: { self: (g, s) => g.mul(t(s, 'tensor')), tensor: (g, s) => g.mul(t(s, 'self')) },
  },
  'mv': {
    name: 'MvBackward0',
    save: ['self', 'vec'],
    grads: {
      self: (g, s) => g.unsqueeze(1).mul(t(s, 'vec').unsqueeze(0)),
      vec: (g, s) => t(s, 'self').t().mv(g),
    },
  },

  // NN kernels.
  '_softmax': {
    name: 'SoftmaxBackward0',
    save: ['result'],
    grads: {
      self: (g, s) => op('_softmax_backward_data').call(g, t(s, 'result'), s.dim, t(s, 'result').dtype) as Tensor,
    },
  },
  '_log_softmax': {
    name: 'LogSoftmaxBackward0',
    save: ['result'],
    grads: {
      self: (g, s) => op('_log_softmax_backward_data').call(g, t(s, 'result'), s.dim, t(s, 'result').dtype) as Tensor,
    },
  },
  'nll_loss_forward': {
    name: 'NllLossBackward0',
    save: ['self', 'target', 'weight', 'result1'],
    outputs: [0],
    grads: {
      self: (g, s) =>
        op('nll_loss_backward').call(
          g,
          t(s, 'self'),
          t(s, 'target'),
          s.weight ?? null,
          s.reduction,
          s.ignore_index,
          t(s, 'result1'),
        ) as Tensor,
    },
  },

  // Convolution and pooling (decl_conv.ts).
  'convolution': {
    name: 'ConvolutionBackward0',
    save: ['input', 'weight'],
    grads: {
      input: (g, s) => convolutionGradient(g, s, 0),
      weight: (g, s) => convolutionGradient(g, s, 1),
      bias: (g) => op('sum', 'dim_IntList').call(g, [0, ...range(2, g.ndim)], false, null) as Tensor,
    },
  },
  'max_pool2d_with_indices': {
    name: 'MaxPool2DWithIndicesBackward0',
    save: ['self', 'result1'],
    outputs: [0],
    grads: {
      self: (g, s) =>
        op('max_pool2d_with_indices_backward').call(
          g,
          t(s, 'self'),
          s.kernel_size,
          s.stride,
          s.padding,
          s.dilation,
          s.ceil_mode,
          t(s, 'result1'),
        ) as Tensor,
    },
  },
  'avg_pool2d': {
    name: 'AvgPool2DBackward0',
    save: ['self'],
    grads: {
      self: (g, s) =>
        op('avg_pool2d_backward').call(
          g,
          t(s, 'self'),
          s.kernel_size,
          s.stride,
          s.padding,
          s.ceil_mode,
          s.count_include_pad,
          s.divisor_override ?? null,
        ) as Tensor,
    },
  },
  'native_batch_norm': {
    name: 'NativeBatchNormBackward0',
    save: ['input', 'weight', 'running_mean', 'running_var', 'result1', 'result2'],
    outputs: [0],
    grads: {
      input: (g, s) => batchNormGradient(g, s, 0),
      weight: (g, s) => batchNormGradient(g, s, 1),
      bias: (g, s) => batchNormGradient(g, s, 2),
    },
  },
  '_adaptive_avg_pool2d': {
    name: 'AdaptiveAvgPool2DBackward0',
    save: ['self'],
    grads: { self: (g, s) => op('_adaptive_avg_pool2d_backward').call(g, t(s, 'self')) as Tensor },
  },
};

/** One gradient of `native_batch_norm` (0: input, 1: weight, 2: bias); the others are freed. */
function batchNormGradient(g: Tensor, s: SavedValues, which: 0 | 1 | 2): Tensor {
  const grads = op('native_batch_norm_backward').call(
    g,
    t(s, 'input'),
    (s.weight as Tensor | undefined) ?? null,
    (s.running_mean as Tensor | undefined) ?? null,
    (s.running_var as Tensor | undefined) ?? null,
    t(s, 'result1'),
    t(s, 'result2'),
    s.training,
    s.eps,
    [which === 0, which === 1, which === 2],
  ) as Tensor[];
  grads.forEach((x, i) => {
    if (i !== which) x.dispose();
  });
  return grads[which];
}

const range = (from: number, to: number) => Array.from({ length: Math.max(to - from, 0) }, (_, i) => from + i);

/** One gradient of `convolution` (0: input, 1: weight) from `convolution_backward`; the others are freed. */
function convolutionGradient(g: Tensor, s: SavedValues, which: 0 | 1): Tensor {
  const mask = [which === 0, which === 1, false];
  const grads = op('convolution_backward').call(
    g,
    t(s, 'input'),
    t(s, 'weight'),
    null,
    s.stride,
    s.padding,
    s.dilation,
    s.transposed,
    s.output_padding,
    s.groups,
    mask,
  ) as Tensor[];
  grads.forEach((x, i) => {
    if (i !== which) x.dispose();
  });
  return grads[which];
}

/** Operators that are not differentiable (integer or boolean results, sampling, index outputs). */
export const NOT_DIFFERENTIABLE: ReadonlySet<string> = new Set([
  'eq.Tensor',
  'eq.Scalar',
  'ne.Tensor',
  'ne.Scalar',
  'lt.Tensor',
  'lt.Scalar',
  'le.Tensor',
  'le.Scalar',
  'gt.Tensor',
  'gt.Scalar',
  'ge.Tensor',
  'ge.Scalar',
  'logical_and',
  'logical_or',
  'logical_xor',
  'logical_not',
  'bitwise_and.Tensor',
  'bitwise_or.Tensor',
  'bitwise_xor.Tensor',
  'bitwise_not',
  'isnan',
  'nonzero',
  'multinomial',
  'argmax',
  'argmin',
  '_softmax_backward_data',
  '_log_softmax_backward_data',
  'nll_loss_backward',
  'convolution_backward',
  'max_pool2d_with_indices_backward',
  'avg_pool2d_backward',
  '_adaptive_avg_pool2d_backward',
  'native_batch_norm_backward',
  // Factories shaped like an input: their values do not depend on it.
  'empty_like',
  'zeros_like',
  'ones_like',
  'full_like',
  'rand_like',
  'randn_like',
  'randint_like',
  'randint_like.low_dtype',
]);

/**
 * prod's gradient without dividing by zero: for each slice, result / x where the slice has no zero; at a
 * slice's only zero, the product of the other elements; zero everywhere else (PyTorch's prod_backward).
 */
function prodBackward(g: Tensor, self: Tensor, result: Tensor, dim: number | null, keepdim: boolean): Tensor {
  const dims = dim === null ? reducedDims(null, self.ndim) : [wrap(dim, self.ndim)];
  const kd = dim === null ? false : keepdim;
  const isZero = self.eq(0);
  const zeroCount = isZero.sum(dims, true);
  const safe = where(isZero.logicalNot(), self, 1);
  const nonzeroProduct = dim === null ? safe.prod() : safe.prod(dims[0], true);
  const noZeros = unreduce(result, self.shape, dims, kd).div(safe);
  const atOnlyZero = isZero.logicalAnd(zeroCount.eq(1)).mul(nonzeroProduct);
  return unreduce(g, self.shape, dims, kd).mul(where(zeroCount.eq(0), noZeros, atOnlyZero));
}

function scaled(x: Tensor, k: number): Tensor {
  return k === 1 ? x : x.mul(k);
}

/** max()/min() of all elements: the gradient is shared equally among the elements equal to the result. */
function evenlySplit(g: Tensor, s: SavedValues): Tensor {
  const mask = t(s, 'self').eq(t(s, 'result'));
  return g.div(mask.sum()).mul(mask);
}

/** amax/amin: the gradient is shared equally among the extremes of each reduced slice. */
function splitAmongExtremes(g: Tensor, s: SavedValues): Tensor {
  const self = t(s, 'self');
  const dims = reducedDims(s.dim as number[], self.ndim);
  const keepdim = s.keepdim as boolean;
  const result = unreduce(t(s, 'result'), self.shape, dims, keepdim);
  const mask = self.eq(result);
  const count = mask.sum(dims, true);
  return unreduce(g, self.shape, dims, keepdim).div(count).mul(mask);
}

/** 1 where `a` wins the comparison, 0.5 where the two are equal (PyTorch splits the gradient), else 0. */
function splitWeight(a: Tensor, b: Tensor, cmp: 'lt' | 'gt'): Tensor {
  const wins = cmp === 'lt' ? a.lt(b) : a.gt(b);
  return a.eq(b).mul(0.5).add(wins);
}

/**
 * Reduces a gradient to an input's shape (summing broadcast dimensions) and dtype.
 *
 * @example
 * ```ts
 * // reduceGradient(g /* [3, 4] *\/, [4], float32) sums over dim 0
 * ```
 */
export function reduceGradient(g: Tensor, shape: readonly number[], dtype: DType | undefined): Tensor {
  let out = g;
  if (!sameShape(g.shape, shape)) {
    const lead = g.ndim - shape.length;
    const dims: number[] = [];
    for (let i = 0; i < g.ndim; i++) {
      if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) dims.push(i);
    }
    out = op('sum', 'dim_IntList').call(out, dims, true, null) as Tensor;
    out = op('reshape').call(out, shape) as Tensor;
  }
  if (dtype !== undefined && out.dtype !== dtype) {
    out = op('_to_copy').call(out, dtype, null, null, null, false, null) as Tensor;
  }
  return out;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
