// Errors of the elementwise operators, with PyTorch 1.13's wording: dtypes a CPU kernel does not take (also for
// empty tensors), argument checks, in-place shape/cast/overlap rules, integer division by zero, devices, disposed
// tensors. After every error the runtime stays usable and no tensor leaks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  abs,
  add,
  atan2,
  bitwiseAnd,
  bitwiseNot,
  bitwiseOr,
  bitwiseXor,
  ceil,
  clamp,
  cos,
  div,
  empty,
  erf,
  exp,
  expm1,
  floor,
  fmod,
  gelu,
  log,
  log1p,
  memoryStats,
  mul,
  neg,
  NotImplementedError,
  pow,
  relu,
  remainder,
  round,
  rsqrt,
  RuntimeError,
  scope,
  sigmoid,
  silu,
  sin,
  sqrt,
  sub,
  tanh,
  Tensor,
  tensor,
  trunc,
  where,
} from '../../mod.ts';
import { restride, values } from './_helpers.ts';

function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

/** Asserts that `fn` throws `type` with exactly `message`. */
function throwsWith(fn: () => unknown, message: string, type: new (...a: never[]) => Error = RuntimeError): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(
      e instanceof type,
      `expected ${type.name}, got ${(e as Error).constructor.name}: ${(e as Error).message}`,
    );
    assert.equal((e as Error).message, message);
    return true;
  });
}

const SCALAR_TYPE: Record<string, string> = {
  bool: 'Bool',
  uint8: 'Byte',
  int8: 'Char',
  int16: 'Short',
  int32: 'Int',
  int64: 'Long',
  float16: 'Half',
  bfloat16: 'BFloat16',
  float32: 'Float',
  float64: 'Double',
};

function filled(shape: number[], dtype: string): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const flat = tensor(new Array(n).fill(dtype === 'bool' ? true : 1), { dtype: dtype as 'float32' });
  return restride(flat, shape, shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1)), 0);
}

/** A view of `t`'s storage sharing its version counter (`t` stays alive). */
function viewOf(t: Tensor, shape: number[], strides: number[], offset: number): Tensor {
  t.storage.retain();
  return new Tensor({
    storage: t.storage,
    shape,
    strides,
    storageOffset: offset,
    dtype: t.dtype,
    version: t.versionCounter,
  });
}

// The dtypes PyTorch 1.13's CPU kernels refuse, with the kernel name of the message (checked with the installed
// torch: e.g. torch.exp(torch.ones(2, dtype=torch.half)) raises `"exp_vml_cpu" not implemented for 'Half'`).
const FLOATS = ['float16', 'bfloat16', 'float32', 'float64'];
const UNSUPPORTED: ReadonlyArray<[string, (t: Tensor) => unknown, string, readonly string[]]> = [
  ['abs', abs, 'abs_cpu', ['bool']],
  ['exp', exp, 'exp_vml_cpu', ['float16']],
  ['exp_', (t) => t.exp_(), 'exp_vml_cpu', ['float16']],
  ['log', log, 'log_vml_cpu', ['float16']],
  ['log1p', log1p, 'log1p_vml_cpu', ['float16']],
  ['expm1', expm1, 'expm1_vml_cpu', ['float16']],
  ['sqrt', sqrt, 'sqrt_vml_cpu', ['float16']],
  ['rsqrt', rsqrt, 'rsqrt_cpu', ['float16']],
  ['sin', sin, 'sin_vml_cpu', ['float16']],
  ['cos', cos, 'cos_vml_cpu', ['float16']],
  ['tanh', tanh, 'tanh_vml_cpu', ['float16']],
  ['tanh_', (t) => t.tanh_(), 'tanh_vml_cpu', ['float16']],
  ['sigmoid', sigmoid, 'sigmoid_cpu', ['float16']],
  ['sigmoid_', (t) => t.sigmoid_(), 'sigmoid_cpu', ['float16']],
  ['erf', erf, 'erf_vml_cpu', ['float16']],
  ['relu', relu, 'clamp_min_cpu', ['float16']],
  ['relu_', (t) => t.relu_(), 'clamp_min_cpu', ['float16']],
  ['gelu', (t) => gelu(t), 'GeluKernelImpl', ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16']],
  [
    'gelu tanh',
    (t) => gelu(t, { approximate: 'tanh' }),
    'GeluKernelImpl',
    ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16'],
  ],
  ['silu', silu, 'silu_cpu', ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16']],
  ['floor', floor, 'floor_vml_cpu', ['bool', 'float16']],
  ['ceil', ceil, 'ceil_vml_cpu', ['bool', 'float16']],
  ['round', round, 'round_vml_cpu', ['bool', 'float16']],
  ['trunc', trunc, 'trunc_vml_cpu', ['bool', 'float16']],
  ['bitwise_not', bitwiseNot, 'bitwise_not_cpu', FLOATS],
  ['bitwise_and', (t) => bitwiseAnd(t, t), 'bitwise_and_cpu', FLOATS],
  ['bitwise_or', (t) => bitwiseOr(t, t), 'bitwise_or_cpu', FLOATS],
  ['bitwise_xor', (t) => bitwiseXor(t, t), 'bitwise_xor_cpu', FLOATS],
  ['atan2', (t) => atan2(t, t), 'atan2_cpu', ['float16']],
  ['remainder', (t) => remainder(t, t), 'remainder_cpu', ['bool']],
  ['fmod', (t) => fmod(t, t), 'fmod_cpu', ['bool']],
  ['fmod scalar', (t) => fmod(t, true), 'fmod_cpu', ['bool']],
  ['div trunc', (t) => div(t, t, { roundingMode: 'trunc' }), 'div_trunc_cpu', ['bool']],
  ['div floor', (t) => div(t, t, { roundingMode: 'floor' }), 'div_floor_cpu', ['bool']],
  ['pow', (t) => pow(t, t), 'pow', ['bool']],
  ['pow bool scalar', (t) => pow(t, true), 'pow', ['bool']],
  ['pow.Scalar', (t) => pow(true, t), 'pow', ['bool']],
  ['clamp', (t) => clamp(t, -1, 1), 'clamp_scalar_cpu', ['float16']],
  ['clamp min', (t) => clamp(t, -1), 'clamp_min_cpu', ['float16']],
  ['clamp max', (t) => clamp(t, null, 1), 'clamp_max_scalar_cpu', ['float16']],
  ['clamp bool bounds', (t) => clamp(t, false, true), 'clamp_scalar_cpu', ['bool']],
  ['clamp tensors', (t) => clamp(t, t, t), 'clamp_cpu', ['bool', 'float16']],
];

describe('dtypes a CPU kernel does not take', () => {
  it(
    "raise PyTorch's \"<kernel>\" not implemented for '<Type>', also for empty tensors",
    scoped(() => {
      for (const [, fn, kernel, dtypes] of UNSUPPORTED) {
        for (const dtype of dtypes) {
          for (const shape of [[2, 3], [0, 4], []]) {
            throwsWith(
              () => fn(filled(shape, dtype)),
              `"${kernel}" not implemented for '${SCALAR_TYPE[dtype]}'`,
              NotImplementedError,
            );
          }
        }
      }
    }),
  );

  it(
    'promoted operands are checked in the compute dtype: int & float scalar is a Float bitwise op',
    scoped(() => {
      throwsWith(
        () => bitwiseAnd(tensor([1, 2], { dtype: 'int32' }), tensor(2.5)),
        `"bitwise_and_cpu" not implemented for 'Float'`,
        NotImplementedError,
      );
      // Integer inputs of float math are promoted first, so they work; bool tensors of silu do not.
      assert.equal(exp(tensor([1], { dtype: 'int8' })).dtype.name, 'float32');
      assert.equal(sin(tensor([true])).dtype.name, 'float32');
    }),
  );
});

describe('argument checks', () => {
  it(
    'bool subtraction, negation and relu, with their messages',
    scoped(() => {
      const b = tensor([true, false]);
      throwsWith(
        () => sub(b, b),
        'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` ' +
          'operator instead.',
      );
      const one = 'Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert ' +
        'a mask, use the `~` or `logical_not()` operator instead.';
      throwsWith(() => sub(tensor([1.5]), b), one);
      throwsWith(() => sub(b, 1), one);
      throwsWith(() => sub(tensor([1.5]), true), one);
      throwsWith(
        () => b.sub_(b),
        'Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` ' +
          'operator instead.',
      );
      const negation = 'Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert ' +
        'a mask, use the `~` or `logical_not()` operator instead.';
      throwsWith(() => neg(b), negation);
      throwsWith(() => b.neg_(), negation);
      throwsWith(() => relu(b), 'Boolean inputs not supported for relu');
      throwsWith(() => b.relu_(), 'Boolean inputs not supported for relu');
    }),
  );

  it(
    'alpha: bool alphas only for bool results, no fractional alpha for integral results',
    scoped(() => {
      const i = tensor([1, 2]), f = tensor([1.5]), b = tensor([true]);
      throwsWith(() => add(i, i, { alpha: true }), 'Boolean alpha only supported for Boolean results.');
      throwsWith(() => add(f, f, { alpha: true }), 'Boolean alpha only supported for Boolean results.');
      const integral = 'For integral input tensors, argument alpha must not be a floating point number.';
      throwsWith(() => sub(i, i, { alpha: 0.5 }), integral);
      throwsWith(() => add(b, b, { alpha: 0.5 }), integral);
      throwsWith(() => i.add_(1, { alpha: 0.5 }), integral);
      assert.deepEqual(values(add(i, 2.5, { alpha: 0.5 })), [2.25, 3.25]); // a float result takes a float alpha
    }),
  );

  it(
    'rounding mode, gelu approximation, negative integer powers, clamp bounds, where condition, broadcasting',
    scoped(() => {
      const f = tensor([1.5, 2]), i = tensor([2, 3]);
      throwsWith(
        () => div(f, f, { roundingMode: 'round' }),
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'",
      );
      throwsWith(() => gelu(f, { approximate: 'fast' }), 'approximate argument must be either none or tanh.');
      throwsWith(() => pow(i, -1), 'Integers to negative integer powers are not allowed.');
      throwsWith(() => pow(tensor([true]), -3), 'Integers to negative integer powers are not allowed.');
      assert.deepEqual(values(pow(i, tensor(-1))), [0, 0]); // a tensor exponent is not checked
      throwsWith(() => clamp(f), "torch.clamp: At least one of 'min' or 'max' must not be None");
      throwsWith(() => clamp(f, null, null), "torch.clamp: At least one of 'min' or 'max' must not be None");
      throwsWith(
        () => clamp(tensor([1, 2], { dtype: 'int8' }), 0, 1000),
        'value cannot be converted to type int8_t without overflow',
      );
      throwsWith(
        () => clamp(tensor([1], { dtype: 'int32' }), -3e9),
        'value cannot be converted to type int without overflow',
      );
      throwsWith(
        () => where(tensor([1, 0]), f, f),
        'where expected condition to be a boolean tensor, but got a tensor with dtype Long',
      );
      throwsWith(
        () => add(filled([2, 3], 'float32'), filled([4], 'float32')),
        'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1',
      );
      throwsWith(
        () => where(filled([2], 'bool'), filled([3], 'float32'), filled([2], 'float32')),
        'The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0',
      );
    }),
  );
});

describe('in-place rules', () => {
  it(
    "the result must keep self's shape and be castable to self's dtype",
    scoped(() => {
      throwsWith(
        () => filled([3], 'float32').add_(filled([2, 3], 'float32')),
        "output with shape [3] doesn't match the broadcast shape [2, 3]",
      );
      throwsWith(
        () => tensor(1.5).add_(filled([1], 'float32')),
        "output with shape [] doesn't match the broadcast shape [1]",
      );
      throwsWith(() => tensor([1, 2]).add_(2.5), "result type Float can't be cast to the desired output type Long");
      throwsWith(
        () => tensor([1, 2]).mul_(tensor([1.5])),
        "result type Float can't be cast to the desired output type Long",
      );
      throwsWith(
        () => tensor([1, 2], { dtype: 'uint8' }).div_(tensor([1, 2], { dtype: 'uint8' })),
        "result type Float can't be cast to the desired output type Byte",
      );
      throwsWith(
        () => tensor([1, 2], { dtype: 'int16' }).exp_(),
        "result type Float can't be cast to the desired output type Short",
      );
      throwsWith(() => tensor([true]).sigmoid_(), "result type Float can't be cast to the desired output type Bool");
      throwsWith(
        () => tensor([true]).add_(tensor([1])),
        "result type Long can't be cast to the desired output type Bool",
      );
      const x = tensor([1, 2]);
      throwsWith(() => x.add_(2.5), "result type Float can't be cast to the desired output type Long");
      assert.equal(x.version, 0, 'a failed in-place op does not bump the version');
      assert.deepEqual(values(x), [1, 2]);
    }),
  );

  it(
    'writing an expanded tensor, or a tensor that partly overlaps an input, is refused',
    scoped(() => {
      const internal = 'unsupported operation: more than one element of the written-to tensor refers to a single ' +
        'memory location. Please clone() the tensor before performing the operation.';
      const e = restride(filled([3], 'float32'), [2, 3], [0, 1], 0);
      throwsWith(() => e.add_(1), internal);
      throwsWith(() => e.neg_(), internal);
      throwsWith(() => e.exp_(), internal);
      const partial = 'unsupported operation: some elements of the input tensor and the written-to tensor refer to a ' +
        'single memory location. Please clone() the tensor before performing the operation.';
      const base = tensor([0, 1, 2, 3, 4, 5], { dtype: 'float32' });
      throwsWith(() => viewOf(base, [5], [1], 1).add_(viewOf(base, [5], [1], 0)), partial);
      const square = tensor([1, 2, 3, 4], { dtype: 'float32' });
      throwsWith(() => viewOf(square, [2, 2], [2, 1], 0).add_(viewOf(square, [2, 2], [1, 2], 0)), partial);
      assert.deepEqual(values(base), [0, 1, 2, 3, 4, 5], 'nothing was written');
      square.mul_(square);
      assert.deepEqual(values(square), [1, 4, 9, 16], 'full overlap is fine');
    }),
  );
});

describe('integer division by zero', () => {
  it(
    'raises ZeroDivisionError for tensor and scalar divisors (also non-contiguous, broadcast or wrapped to 0)',
    scoped(() => {
      const a = tensor([7, -7, 3], { dtype: 'int32' });
      const zeroLast = tensor([2, 3, 0], { dtype: 'int32' });
      for (
        const fn of [
          (b: Tensor | number) => remainder(a, b),
          (b: Tensor | number) => fmod(a, b),
          (b: Tensor | number) => div(a, b, { roundingMode: 'trunc' }),
          (b: Tensor | number) => div(a, b, { roundingMode: 'floor' }),
        ]
      ) {
        throwsWith(() => fn(zeroLast), 'ZeroDivisionError');
        throwsWith(() => fn(0), 'ZeroDivisionError');
        throwsWith(() => fn(restride(tensor([0, 9, 2, 9, 5], { dtype: 'int32' }), [3], [2], 0)), 'ZeroDivisionError');
        throwsWith(() => fn(tensor(0, { dtype: 'int64' })), 'ZeroDivisionError');
      }
      throwsWith(() => remainder(tensor([100], { dtype: 'int8' }), 256), 'ZeroDivisionError'); // 256 is 0 in int8
      throwsWith(() => a.remainder(tensor([1, 0, 1], { dtype: 'uint8' })), 'ZeroDivisionError');
      // Floats divide by zero quietly; an empty result never divides; true division of integers is a float op.
      assert.deepEqual(values(remainder(tensor([1.5]), 0)).map(Number.isNaN), [true]);
      assert.deepEqual([...remainder(filled([0, 3], 'int32'), tensor([0, 1, 2], { dtype: 'int32' })).shape], [0, 3]);
      assert.deepEqual(values(div(a, 0)), [Infinity, -Infinity, Infinity]);
      assert.deepEqual(values(remainder(a, tensor([2, 3, 4], { dtype: 'int32' }))), [1, 2, 3], 'still usable');
    }),
  );
});

describe('devices and lifetime', () => {
  it(
    "mixing CPU and Meta tensors raises TensorIterator's message; a 0-d CPU tensor may join a Meta one",
    scoped(() => {
      const cpu = filled([2], 'float32'), meta = empty([2], { device: 'meta' });
      const msg = 'Expected all tensors to be on the same device, but found at least two devices, meta and cpu!';
      throwsWith(() => add(meta, cpu), msg);
      throwsWith(() => add(cpu, meta), msg);
      throwsWith(() => mul(empty([], { device: 'meta' }), cpu), msg);
      throwsWith(() => cpu.add_(meta), msg);
      throwsWith(() => tensor(1.5).add_(empty([], { device: 'meta' })), msg);
      throwsWith(() => clamp(meta, tensor(0), tensor(1)), msg); // clamp takes no CPU scalars
      throwsWith(
        () => where(filled([2], 'bool'), meta, meta),
        'Tensor on device meta is not on the expected device cpu!',
      );
      throwsWith(
        () => where(empty([2], { device: 'meta', dtype: 'bool' }), cpu, 1),
        'Tensor on device cpu is not on the expected device meta!',
      );
      const r = add(meta, tensor(2));
      assert.equal(r.device.type, 'meta');
      assert.deepEqual([...r.shape], [2]);
      assert.equal(meta.add_(tensor(1)).device.type, 'meta');
    }),
  );

  it(
    'failing calls free every temporary they made (casts, outputs, zero checks)',
    () => {
      const i8 = tensor([1, 2, 3], { dtype: 'int8' }),
        i64 = tensor([1, 0, 2]),
        f16 = tensor([1, 2], { dtype: 'float16' });
      const t = restride(tensor([1, 2, 3, 4], { dtype: 'int16' }), [2], [2], 0), meta = empty([3], { device: 'meta' });
      const f = tensor([1.5, 2, 3]), z = tensor([0, 1], { dtype: 'int32' }), cond = tensor([true, false, true]);
      const calls: Array<() => unknown> = [
        () => remainder(i8, i64), // casts i8 to int64 and allocates the output before finding the zero
        () => div(t, z, { roundingMode: 'floor' }),
        () => fmod(i8, 0),
        () => exp(f16),
        () => i8.add_(f),
        () => add(i64, meta),
        () => clamp(i8, 0, 1000),
        () => where(cond, meta, f),
        () => viewOf(i64, [2], [1], 1).add_(viewOf(i64, [2], [1], 0)),
      ];
      for (const call of calls) {
        const base = memoryStats().liveTensors;
        assert.throws(call);
        // The views made by the last call are inputs: they are the only tensors allowed to outlive it.
        const views = call === calls[calls.length - 1] ? 2 : 0;
        assert.equal(memoryStats().liveTensors, base + views, `leaked by ${call}`);
      }
      for (const x of [i8, i64, f16, t, meta, f, z, cond]) x.dispose();
    },
  );

  it(
    'a disposed tensor is refused by name, and errors leave the runtime usable',
    scoped(() => {
      const x = tensor([1, 2]);
      x.dispose();
      throwsWith(() => add(tensor([1, 2]), x), "add(): argument 'other' was disposed and cannot be used any more");
      throwsWith(() => exp(x), "exp(): argument 'input' was disposed and cannot be used any more");
      for (let k = 0; k < 50; k++) {
        assert.throws(() => tensor([1, 2]).add_(2.5));
        assert.throws(() => exp(filled([3], 'float16')));
      }
      assert.deepEqual(values(add(tensor([1, 2]), tensor([3, 4]))), [4, 6]);
    }),
  );
});
