// Type promotion through the elementwise operators: the result dtype of tensor/tensor, tensor/0-d tensor,
// 0-d/0-d and tensor/wrapped-scalar operands for every dtype pair (tables printed by PyTorch 1.13), the values
// computed in the promoted dtype, the op-specific rules (true division and float math give the default dtype,
// comparisons give bool), the default dtype, and how wrapped scalars are converted (wrapping, float16/bfloat16
// rounding before the arithmetic).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  div,
  type DType,
  eq,
  exp,
  type float32,
  getDefaultDtype,
  gt,
  maximum,
  memoryStats,
  mul,
  ones,
  pow,
  remainder,
  scope,
  setDefaultDtype,
  sqrt,
  sub,
  type Tensor,
  tensor,
  where,
} from '../../mod.ts';
import { ALL_DTYPES, restride, values } from './_helpers.ts';

function scoped(body: () => void): () => void {
  return () => {
    const base = memoryStats().liveTensors;
    scope(body);
    assert.equal(memoryStats().liveTensors, base, 'leaked tensors');
  };
}

type Name = DType['name'];
const D = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16', 'float32', 'float64'] as const;
const SHORT: Record<string, Name> = {
  b1: 'bool',
  u1: 'uint8',
  i1: 'int8',
  i2: 'int16',
  i4: 'int32',
  i8: 'int64',
  f2: 'float16',
  bf: 'bfloat16',
  f4: 'float32',
  f8: 'float64',
};
const table = (rows: string[]) => rows.map((r) => r.trim().split(/\s+/).map((c) => SHORT[c]));

// torch.add(torch.ones(2, dtype=a), torch.ones(2, dtype=b)).dtype in PyTorch 1.13 (row a, column b in D order).
// deno-fmt-ignore
const TENSOR_TENSOR = table([
  'b1 u1 i1 i2 i4 i8 f2 bf f4 f8',
  'u1 u1 i2 i2 i4 i8 f2 bf f4 f8',
  'i1 i2 i1 i2 i4 i8 f2 bf f4 f8',
  'i2 i2 i2 i2 i4 i8 f2 bf f4 f8',
  'i4 i4 i4 i4 i4 i8 f2 bf f4 f8',
  'i8 i8 i8 i8 i8 i8 f2 bf f4 f8',
  'f2 f2 f2 f2 f2 f2 f2 f4 f4 f8',
  'bf bf bf bf bf bf f4 bf f4 f8',
  'f4 f4 f4 f4 f4 f4 f4 f4 f4 f8',
  'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8',
]);
// torch.add(torch.ones(2, dtype=a), torch.ones((), dtype=b)).dtype: a 0-d operand only counts when it is of a
// higher category (bool < integral < floating).
// deno-fmt-ignore
const TENSOR_ZERO_DIM = table([
  'b1 u1 i1 i2 i4 i8 f2 bf f4 f8',
  'u1 u1 u1 u1 u1 u1 f2 bf f4 f8',
  'i1 i1 i1 i1 i1 i1 f2 bf f4 f8',
  'i2 i2 i2 i2 i2 i2 f2 bf f4 f8',
  'i4 i4 i4 i4 i4 i4 f2 bf f4 f8',
  'i8 i8 i8 i8 i8 i8 f2 bf f4 f8',
  'f2 f2 f2 f2 f2 f2 f2 f2 f2 f2',
  'bf bf bf bf bf bf bf bf bf bf',
  'f4 f4 f4 f4 f4 f4 f4 f4 f4 f4',
  'f8 f8 f8 f8 f8 f8 f8 f8 f8 f8',
]);
// torch.add(torch.ones(2, dtype=a), s).dtype for s = 2, 2.5, True (the same for a 0-d tensor a).
// deno-fmt-ignore
const TENSOR_SCALAR = table([
  'i8 f4 b1',
  'u1 f4 u1',
  'i1 f4 i1',
  'i2 f4 i2',
  'i4 f4 i4',
  'i8 f4 i8',
  'f2 f2 f2',
  'bf bf bf',
  'f4 f4 f4',
  'f8 f8 f8',
]);

const isFloat = (d: string) => d.startsWith('float') || d === 'bfloat16';
const filled = (shape: number[], dtype: string, v = 1): Tensor => {
  const n = shape.reduce((a, b) => a * b, 1);
  const flat = tensor(new Array(n).fill(dtype === 'bool' ? v !== 0 : v), { dtype: dtype as Name });
  return restride(flat, shape, shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1)), 0);
};

describe('result dtypes of binary operators', () => {
  it(
    'tensor with tensor follows the promotion table (add, mul, maximum), with values computed in it',
    scoped(() => {
      D.forEach((a, i) =>
        D.forEach((b, j) => {
          const x = tensor(a === 'bool' ? [true, false] : [3, 1], { dtype: a });
          const y = tensor(b === 'bool' ? [true, true] : [2, 5], { dtype: b });
          for (const [name, fn] of [['add', add], ['mul', mul], ['maximum', maximum]] as const) {
            const r = fn(x, y);
            assert.equal(r.dtype.name, TENSOR_TENSOR[i][j], `${name}(${a}, ${b})`);
          }
          if (a !== 'bool' && b !== 'bool') assert.deepEqual(values(add(x, y)), [5, 6], `add(${a}, ${b}) values`);
        })
      );
    }),
  );

  it(
    'a 0-d tensor only promotes a dimensioned one to a higher category; two 0-d tensors promote normally',
    scoped(() => {
      D.forEach((a, i) =>
        D.forEach((b, j) => {
          assert.equal(add(filled([2], a), filled([], b)).dtype.name, TENSOR_ZERO_DIM[i][j], `[${a}] + 0-d ${b}`);
          assert.equal(add(filled([], b), filled([2], a)).dtype.name, TENSOR_ZERO_DIM[i][j], `0-d ${b} + [${a}]`);
          assert.equal(add(filled([], a), filled([], b)).dtype.name, TENSOR_TENSOR[i][j], `0-d ${a} + 0-d ${b}`);
        })
      );
    }),
  );

  it(
    'wrapped scalars: integers keep the tensor dtype, floats give the default dtype for integral tensors',
    scoped(() => {
      D.forEach((a, i) => {
        [2, 2.5, true].forEach((s, k) => {
          assert.equal(add(filled([2], a), s).dtype.name, TENSOR_SCALAR[i][k], `[${a}] + ${s}`);
          assert.equal(add(filled([], a), s).dtype.name, TENSOR_SCALAR[i][k], `0-d ${a} + ${s}`);
        });
      });
    }),
  );

  it(
    'the cases the issue names: int + 2.5, int8 + 1000, uint8 + int8, float16 + float64 0-d, bool + bool',
    scoped(() => {
      const i = add(tensor([1, 2], { dtype: 'int32' }), 2.5);
      assert.equal(i.dtype.name, 'float32');
      assert.deepEqual(values(i), [3.5, 4.5]);
      // torch.tensor([1, 2], dtype=torch.int8) + 1000 -> tensor([-23, -22], dtype=torch.int8): 1000 wraps to -24.
      const w = add(tensor([1, 2], { dtype: 'int8' }), 1000);
      assert.equal(w.dtype.name, 'int8');
      assert.deepEqual(values(w), [-23, -22]);
      const u = add(tensor([200], { dtype: 'uint8' }), tensor([-100], { dtype: 'int8' }));
      assert.equal(u.dtype.name, 'int16');
      assert.deepEqual(values(u), [100]);
      // torch.tensor([100], dtype=torch.int8) + torch.tensor(200, dtype=torch.uint8) -> tensor([44], int8)
      assert.deepEqual(values(add(tensor([100], { dtype: 'int8' }), tensor(200, { dtype: 'uint8' }))), [44]);
      const h = add(tensor([1], { dtype: 'float16' }), tensor(2, { dtype: 'float64' }));
      assert.equal(h.dtype.name, 'float16');
      assert.deepEqual(values(h), [3]);
      const b = add(tensor([true, false, false]), tensor([true, true, false]));
      assert.equal(b.dtype.name, 'bool');
      assert.deepEqual(values(b), [1, 1, 0]);
      assert.deepEqual(values(mul(tensor([true, false]), 2)), [2, 0]);
      assert.equal(mul(tensor([true, false]), 2).dtype.name, 'int64');
      // int32 tensor / 0-d float64 tensor -> float64 (a 0-d float outranks an integral dimensioned tensor).
      const q = div(tensor([3], { dtype: 'int32' }), tensor(2, { dtype: 'float64' }));
      assert.equal(q.dtype.name, 'float64');
      assert.deepEqual(values(q), [1.5]);
    }),
  );
});

describe('operator-specific result types', () => {
  it(
    'true division and float math give the default dtype for integral and bool inputs; rounding modes do not',
    scoped(() => {
      for (const d of ALL_DTYPES) {
        const want = isFloat(d) ? d : 'float32';
        assert.equal(div(filled([2], d), filled([2], d)).dtype.name, want, `div ${d}`);
        if (d !== 'float16') assert.equal(sqrt(filled([2], d)).dtype.name, want, `sqrt ${d}`);
        if (d !== 'bool') {
          assert.equal(div(filled([2], d), filled([2], d), { roundingMode: 'floor' }).dtype.name, d, `floor ${d}`);
        }
        assert.equal(eq(filled([2], d), 1).dtype.name, 'bool');
        assert.equal(gt(filled([2], d), filled([2], 'float64')).dtype.name, 'bool');
      }
      assert.equal(pow(tensor([2, 3]), 0.5).dtype.name, 'float32');
      assert.equal(pow(tensor([2, 3]), 2).dtype.name, 'int64');
      assert.equal(pow(2.5, tensor([1], { dtype: 'int16' })).dtype.name, 'float32');
      assert.equal(pow(2, tensor([1], { dtype: 'int16' })).dtype.name, 'int16');
      assert.equal(remainder(tensor([5], { dtype: 'uint8' }), 2.5).dtype.name, 'float32');
    }),
  );

  it(
    'the default dtype decides what integral inputs and float scalars become',
    scoped(() => {
      const before = getDefaultDtype();
      setDefaultDtype('float64');
      try {
        const i = tensor([1, 2], { dtype: 'int32' });
        assert.equal(add(i, 2.5).dtype.name, 'float64');
        assert.equal(div(i, i).dtype.name, 'float64');
        assert.equal(exp(i).dtype.name, 'float64');
        assert.equal(add(tensor([1], { dtype: 'float16' }), 2.5).dtype.name, 'float16');
        assert.deepEqual(values(div(i, 3)), [1 / 3, 2 / 3]);
      } finally {
        setDefaultDtype(before as typeof float32);
      }
    }),
  );

  it(
    'comparisons compute in the promoted dtype: int64 16777217 equals float32 16777216, scalars convert',
    scoped(() => {
      // torch.tensor([16777217]) == torch.tensor([16777216.]) -> True (both become float32)
      assert.deepEqual(values(eq(tensor([16777217]), tensor([16777216], { dtype: 'float32' }))), [1]);
      assert.deepEqual(values(eq(tensor([16777217]), 16777216.5)), [1]);
      assert.deepEqual(values(gt(tensor([300], { dtype: 'int16' }), tensor([44], { dtype: 'uint8' }))), [1]);
      // int8 100 > 1000 is True: the scalar converts to the int8 compute dtype first (1000 -> -24).
      assert.deepEqual(values(gt(tensor([100], { dtype: 'int8' }), 1000)), [1]);
    }),
  );

  it(
    'where promotes self and other like add; a 0-d or scalar other does not widen a dimensioned self',
    scoped(() => {
      const c = tensor([true, false]);
      assert.equal(where(c, tensor([1, 2], { dtype: 'int32' }), 2.5).dtype.name, 'float32');
      assert.equal(where(c, tensor([1, 2], { dtype: 'int32' }), 2).dtype.name, 'int32');
      assert.equal(where(c, tensor([1, 2], { dtype: 'int8' }), tensor(7)).dtype.name, 'int8');
      assert.equal(where(c, tensor([1, 2], { dtype: 'int8' }), tensor([7, 8])).dtype.name, 'int64');
      assert.equal(where(c, tensor([1, 2], { dtype: 'float16' }), tensor([7, 8])).dtype.name, 'float16');
      assert.deepEqual(values(where(c, tensor([1, 2], { dtype: 'uint8' }), -1)), [1, 255]);
    }),
  );
});

describe('scalar conversion in reduced precision', () => {
  it(
    'float16 and bfloat16 round a float scalar to the dtype before the arithmetic, as PyTorch does',
    scoped(() => {
      // torch.tensor([1.], dtype=torch.half) + (2**-11 + 2**-23) -> 1.0: the scalar rounds to 2**-11 first and
      // 1 + 2**-11 is a tie that rounds to even. Rounding only the sum would give 1.0009765625.
      const s = 2 ** -11 + 2 ** -23;
      assert.deepEqual(values(add(tensor([1], { dtype: 'float16' }), s)), [1]);
      assert.deepEqual(values(sub(tensor([1], { dtype: 'float16' }), -s)), [1]);
      const bs = 2 ** -8 + 2 ** -20;
      assert.deepEqual(values(add(tensor([1], { dtype: 'bfloat16' }), bs)), [1]);
      // torch.tensor([1.], dtype=torch.half) * (1 + 2**-10 + 2**-22) -> 1.0009765625
      assert.deepEqual(values(mul(tensor([1], { dtype: 'float16' }), 1 + 2 ** -10 + 2 ** -22)), [1.0009765625]);
      // float32 tensors see the scalar as a float32 (float(0.1)), float64 tensors see the double.
      assert.deepEqual(values(add(tensor([0], { dtype: 'float32' }), 0.1)), [Math.fround(0.1)]);
      assert.deepEqual(values(add(tensor([0], { dtype: 'float64' }), 0.1)), [0.1]);
      // An integral tensor with a float scalar computes in float32: 16777217 + 0.5 rounds in float32.
      assert.deepEqual(values(add(tensor([16777217], { dtype: 'int32' }), 0.5)), [16777216]);
    }),
  );

  it(
    'float16 and bfloat16 arithmetic rounds once from the float32 result',
    scoped(() => {
      // 2049 is not a float16; float16 2048 + 1 ties to 2048, and + 3 gives 2052 (ties to even).
      assert.deepEqual(values(add(tensor([2048, 2048], { dtype: 'float16' }), tensor([1, 3], { dtype: 'float16' }))), [
        2048,
        2052,
      ]);
      const a = ones([3], { dtype: 'bfloat16' });
      const r = div(a, tensor([3, 7, 9], { dtype: 'bfloat16' }));
      assert.deepEqual(values(r), [0.333984375, 0.142578125, 0.111328125]);
    }),
  );
});
