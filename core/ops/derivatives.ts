/**
 * Derivative formulas, one per differentiable operator overload: the role of PyTorch's `derivatives.yaml`.
 * Each entry names the backward node as PyTorch does and gives each differentiable input's gradient in terms
 * of the output gradient `g` and the saved inputs/output (`s`). The autograd kernel reduces broadcast
 * gradients back to each input's shape and dtype.
 *
 * @module
 */
import type { Derivative, SavedValues } from '../autograd/autograd_kernel.ts';
import { Dispatcher } from '../dispatch/dispatcher.ts';
import type { DType } from '../tensor/dtype.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { OpName } from './declarations.ts';

const t = (s: SavedValues, name: string) => s[name] as Tensor;
const n = (s: SavedValues, name: string) => s[name] as number;

function op(name: string, overload = '') {
  return Dispatcher.singleton().findSchemaOrThrow(`aten::${name}`, overload);
}

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

/** Derivatives of the differentiable operators, keyed like the operator table. */
export const DERIVATIVES: { readonly [K in OpName]?: Derivative } = {
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
  'pow.Tensor_Scalar': {
    name: 'PowBackward0',
    save: ['self'],
    grads: {
      self: (g, s) => {
        const e = n(s, 'exponent');
        return e === 0 ? g.mul(0) : g.mul(t(s, 'self').pow(e - 1).mul(e));
      },
    },
  },
  'pow.Tensor_Tensor': {
    name: 'PowBackward1',
    save: ['self', 'exponent', 'result'],
    grads: {
      self: (g, s) => g.mul(t(s, 'exponent')).mul(t(s, 'self').pow(t(s, 'exponent').sub(1))),
      // d/de x^e = x^e log x, taken as 0 where x == 0 and e >= 0 (PyTorch's masking).
      exponent: (g, s) => {
        const x = t(s, 'self');
        const grad = g.mul(t(s, 'result')).mul(x.log());
        const keep = x.eq(0).logicalAnd(t(s, 'exponent').ge(0)).logicalNot();
        return op('where', 'ScalarOther').call(keep, grad, 0) as Tensor;
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
      self: (g, s) => {
        const x = t(s, 'self');
        let mask = x.eq(x); // true except NaN
        if (s.min !== null) mask = mask.logicalAnd(x.ge(s.min as number));
        if (s.max !== null) mask = mask.logicalAnd(x.le(s.max as number));
        return g.mul(mask);
      },
    },
  },
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
};

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
