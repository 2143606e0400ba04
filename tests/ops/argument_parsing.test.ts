/**
 * The run-time argument parser of the generated API (PyTorch's PythonArgParser): strict types, varargs int
 * lists, options as keyword arguments, overload choice, and PyTorch 1.13's TypeErrors. Messages marked
 * "PyTorch's text" were checked against PyTorch 1.13; the others differ from it only where this API differs
 * (camelCase option names, no `out=` overloads, one overload where PyTorch has a Dimname twin).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  add,
  arange,
  cat,
  clamp,
  div,
  eq,
  eye,
  full,
  gelu,
  linspace,
  memoryStats,
  mm,
  ones,
  permute,
  pow,
  randint,
  relu,
  scope,
  stack,
  sum,
  type Tensor,
  tensor,
  unsqueeze,
  where,
  zeros,
} from '../../mod.ts';
import { flip, linear } from '../../core/ops/generated_api.js';
import { nonContiguousTensor, rng, values } from './_helpers.ts';

/** The call throws exactly this error class and message. */
function throwsExactly(fn: () => unknown, type: new (...a: never[]) => Error, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(
      e instanceof type,
      `expected ${type.name}, got ${(e as Error)?.constructor?.name}: ${(e as Error).message}`,
    );
    assert.equal((e as Error).message, message);
    return true;
  });
}

/** Runs `fn` in a scope and checks that it leaves no tensor behind. */
function scoped(fn: () => void): () => void {
  return () => {
    const before = memoryStats().liveTensors;
    scope(fn);
    assert.equal(memoryStats().liveTensors, before);
  };
}

// deno-lint-ignore no-explicit-any
const loose = (f: unknown) => f as (...args: any[]) => any;

describe('varargs int lists (allow_varargs_intlist)', () => {
  it(
    'bind n ints as the list where the list is the only positional argument',
    scoped(() => {
      const x = nonContiguousTensor([2, 3], 'float32', rng(1));
      assert.deepEqual(zeros(2, 3).shape, [2, 3]);
      assert.deepEqual(ones(4).shape, [4]);
      assert.deepEqual(loose(zeros)(2, 3, 4, 5, 6).shape, [2, 3, 4, 5, 6]); // beyond the fast path
      assert.deepEqual(zeros(2, 3, { dtype: 'int32' }).dtype.name, 'int32');
      const c = x.contiguous();
      assert.deepEqual(c.view(3, 2).shape, [3, 2]);
      assert.deepEqual(c.view(-1).shape, [6]);
      assert.deepEqual(x.reshape(3, -1).shape, [3, 2]);
      assert.deepEqual(values(x.permute(1, 0)), values(x.t()));
      assert.deepEqual(x.expand(4, 2, 3).shape, [4, 2, 3]);
      assert.deepEqual(values(x.flip(0, 1)), values(x.flip([0, 1])));
      assert.deepEqual(loose(zeros)(2n, 3n).shape, [2, 3]); // bigints are ints
    }),
  );

  it("not where another positional argument exists (PyTorch's text)", () => {
    const x = zeros([2, 2]);
    throwsExactly(() => loose(permute)(x, 1, 0), TypeError, 'permute() takes 2 positional arguments but 3 were given');
    throwsExactly(
      () => loose(flip)(x, 0),
      TypeError,
      "flip(): argument 'dims' (position 2) must be tuple of ints, not int",
    );
    throwsExactly(
      () => loose(full)(2, 1.5),
      TypeError,
      "full(): argument 'size' (position 1) must be tuple of SymInts, not int",
    );
    throwsExactly(
      () => loose(randint)(10, 2),
      TypeError,
      "randint(): argument 'size' (position 2) must be tuple of ints, not int",
    );
    x.dispose();
  });

  it("report the bad element (PyTorch's text)", () => {
    const x = zeros([2, 2]);
    throwsExactly(
      () => loose(zeros)('a'),
      TypeError,
      "zeros(): argument 'size' (position 1) must be tuple of SymInts, not str",
    );
    throwsExactly(
      () => loose(zeros)(2.5),
      TypeError,
      "zeros(): argument 'size' (position 1) must be tuple of SymInts, not float",
    );
    throwsExactly(
      () => zeros([2, 2.5]),
      TypeError,
      "zeros(): argument 'size' must be tuple of SymInts, but found element of type float at pos 2",
    );
    throwsExactly(
      () => zeros(2, 2.5),
      TypeError,
      "zeros(): argument 'size' must be tuple of SymInts, but found element of type float at pos 2",
    );
    throwsExactly(
      () => x.view(4, 1.5),
      TypeError,
      "view(): argument 'size' must be tuple of SymInts, but found element of type float at pos 2",
    );
    throwsExactly(
      () => loose(x.view).call(x, 2, null),
      TypeError,
      "view(): argument 'size' must be tuple of SymInts, but found element of type NoneType at pos 2",
    );
    throwsExactly(
      () => x.permute(0, 1.5),
      TypeError,
      "permute(): argument 'dims' must be tuple of ints, but found element of type float at pos 2",
    );
    throwsExactly(
      () => loose(x.permute).call(x, [0, 'a']),
      TypeError,
      "permute(): argument 'dims' must be tuple of ints, but found element of type str at pos 2",
    );
    throwsExactly(
      () => loose(zeros)(true),
      TypeError,
      "zeros(): argument 'size' (position 1) must be tuple of SymInts, not bool",
    );
    x.dispose();
  });
});

describe('strict scalar types', () => {
  const x = zeros([2, 2]);

  it("int: integral numbers and bigints; not floats, NaN, Infinity or booleans (PyTorch's text)", () => {
    for (const [v, type] of [[NaN, 'float'], [Infinity, 'float'], [2.5, 'float'], [true, 'bool'], ['a', 'str']]) {
      throwsExactly(
        () => loose(x.unsqueeze).call(x, v),
        TypeError,
        `unsqueeze(): argument 'dim' (position 1) must be int, not ${type}`,
      );
    }
    throwsExactly(
      () => loose(unsqueeze)(x, 'a'),
      TypeError,
      "unsqueeze(): argument 'dim' (position 2) must be int, not str",
    );
    throwsExactly(
      () => loose(x.unsqueeze).call(x, { dim: 'a' }),
      TypeError,
      "unsqueeze(): argument 'dim' must be int, not str",
    );
    throwsExactly(
      () => loose(x.chunk).call(x, 1.5),
      TypeError,
      "chunk(): argument 'chunks' (position 1) must be int, not float",
    );
    throwsExactly(() => x.argmax(1.5), TypeError, "argmax(): argument 'dim' (position 1) must be int, not float");
    throwsExactly(
      () => linspace(0, 1, 2.5),
      TypeError,
      "linspace(): argument 'steps' (position 3) must be int, not float",
    );
    throwsExactly(() => eye(2.5), TypeError, "eye(): argument 'n' (position 1) must be int, not float");
    const y = x.unsqueeze(1n as unknown as number);
    assert.deepEqual(y.shape, [2, 1, 2]);
    y.dispose();
    throwsExactly(() => x.unsqueeze(2n ** 70n as unknown as number), Error, 'Overflow when unpacking long');
  });

  it("bool: booleans only; float: numbers (and Python's ints and bools); str; Number (PyTorch's text)", () => {
    throwsExactly(
      () => loose(x.sum).call(x, 1, 1),
      TypeError,
      "sum(): argument 'keepdim' (position 2) must be bool, not int",
    );
    throwsExactly(
      () => loose(x.normal_).call(x, 'a'),
      TypeError,
      "normal_(): argument 'mean' (position 1) must be float, not str",
    );
    // PyTorch's text but for the camelCase name (`fill_value` there).
    throwsExactly(
      () => loose(full)([2], 'a'),
      TypeError,
      "full(): argument 'fillValue' (position 2) must be Number, not str",
    );
    throwsExactly(() => loose(arange)('a'), TypeError, "arange(): argument 'end' (position 1) must be Number, not str");
    throwsExactly(() => loose(add)(x, x, { alpha: 'a' }), TypeError, "add(): argument 'alpha' must be Number, not str");
    throwsExactly(
      () => loose(add)(x, x, { alpha: null }),
      TypeError,
      "add(): argument 'alpha' must be Number, not NoneType",
    );
    const u = zeros([3]);
    loose(u.uniform_).call(u, true, 2); // a bool is an int is a float in Python
    assert.ok(values(u).every((v) => v >= 1 && v < 2));
    u.dispose();
  });

  it("Tensor arguments are tensors of this runtime (PyTorch's text)", () => {
    throwsExactly(() => loose(add)(x, 'a'), TypeError, "add(): argument 'other' (position 2) must be Tensor, not str");
    throwsExactly(
      () => loose(x.add).call(x, 'a'),
      TypeError,
      "add(): argument 'other' (position 1) must be Tensor, not str",
    );
    throwsExactly(() => loose(mm)(x, 'a'), TypeError, "mm(): argument 'mat2' (position 2) must be Tensor, not str");
    throwsExactly(
      () => loose(x.matmul).call(x, 3),
      TypeError,
      "matmul(): argument 'other' (position 1) must be Tensor, not int",
    );
    throwsExactly(
      () => loose(linear)(x, 'a'),
      TypeError,
      "linear(): argument 'weight' (position 2) must be Tensor, not str",
    );
    throwsExactly(
      () => loose(x.logicalAnd).call(x, 1),
      TypeError,
      "logical_and(): argument 'other' (position 1) must be Tensor, not int",
    );
    throwsExactly(
      () => loose(cat)(x),
      TypeError,
      "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",
    );
    throwsExactly(() => loose(cat)([x, 3]), TypeError, 'expected Tensor as element 1 in argument 0, but got int');
    throwsExactly(
      () => loose(stack)([x, null]),
      TypeError,
      'expected Tensor as element 1 in argument 0, but got NoneType',
    );
    // A plain object is an options object (the keyword arguments), so a look-alike reads as unknown keywords.
    const look = { keySetHi: x.keySetHi, keySetLo: x.keySetLo, shape: [2, 2] };
    throwsExactly(
      () => loose(add)(x, look),
      TypeError,
      'add() received an invalid combination of arguments - got unrecognized keyword arguments: keySetHi, keySetLo, shape',
    );
    throwsExactly(
      () => loose(add)(x, look, {}),
      TypeError,
      "add(): argument 'other' (position 2) must be Tensor, not dict",
    );
  });
});

describe('arity and options', () => {
  const x = zeros([2, 2]);

  it("extra, missing and unknown arguments (PyTorch's text)", () => {
    throwsExactly(() => loose(add)(x, x, x), TypeError, 'add() takes 2 positional arguments but 3 were given');
    throwsExactly(() => loose(relu)(x, 1), TypeError, 'relu() takes 1 positional argument but 2 were given');
    throwsExactly(() => loose(relu)(), TypeError, 'relu() missing 1 required positional arguments: "input"');
    throwsExactly(
      () => loose(x.unsqueeze).call(x),
      TypeError,
      'unsqueeze() missing 1 required positional arguments: "dim"',
    );
    throwsExactly(
      () => loose(x.unsqueeze).call(x, 1, 2),
      TypeError,
      'unsqueeze() takes 1 positional argument but 2 were given',
    );
    throwsExactly(
      () => loose(x.contiguous).call(x, 3),
      TypeError,
      'contiguous() takes 0 positional arguments but 1 was given',
    );
    throwsExactly(
      () => loose(x.normal_).call(x, 0, 1, x),
      TypeError,
      'normal_() takes from 0 to 2 positional arguments but 3 were given',
    );
    throwsExactly(() => loose(add)(x, x, { beta: 2 }), TypeError, "add() got an unexpected keyword argument 'beta'");
    throwsExactly(() => loose(add)(x, x, { other: x }), TypeError, "add() got multiple values for argument 'other'");
    throwsExactly(
      () => loose(x.add).call(x),
      TypeError,
      'add() received an invalid combination of arguments - got (), but expected (Tensor other, *, Number alpha)',
    );
  });

  it('methods without parameters refuse any argument', () => {
    throwsExactly(() => loose(x.relu).call(x, 1), TypeError, 'Tensor.relu() takes no arguments (1 given)');
    throwsExactly(() => loose(x.t).call(x, {}), TypeError, 'Tensor.t() takes no arguments (1 given)');
  });

  it(
    'options are keyword arguments: any parameter by name, undefined values and trailing undefineds ignored',
    scoped(() => {
      const y = tensor([[1, 2], [3, 4]], { dtype: 'float32' });
      assert.deepEqual(values(add(y, y, { alpha: 2 })), [3, 6, 9, 12]);
      assert.deepEqual(values(loose(add)(y, y, { alpha: undefined })), [2, 4, 6, 8]);
      assert.deepEqual(values(loose(add)(y, y, undefined)), [2, 4, 6, 8]);
      assert.deepEqual(values(sum(y, { dim: 1, keepdim: true })), [3, 7]);
      assert.deepEqual(values(loose(sum)(y, [1], { keepdim: true })), [3, 7]);
      assert.deepEqual(loose(y.view).call(y, { size: [4] }).shape, [4]);
      assert.deepEqual(values(div(y, y, { roundingMode: null })), [1, 1, 1, 1]);
      assert.deepEqual(values(clamp(y, null, 2)), [1, 2, 2, 2]);
    }),
  );

  it('the invalid combination lists each signature once, with what was given', () => {
    throwsExactly(
      () => loose(x.eq).call(x, 'a'),
      TypeError,
      // PyTorch's text.
      'eq() received an invalid combination of arguments - got (str), but expected one of:\n' +
        ' * (Tensor other)\n' +
        "      didn't match because some of the arguments have invalid types: (!str!)\n" +
        ' * (Number other)\n' +
        "      didn't match because some of the arguments have invalid types: (!str!)\n",
    );
    throwsExactly(
      () => loose(x.div).call(x, x, x),
      TypeError,
      'div() received an invalid combination of arguments - got (Tensor, Tensor), but expected one of:\n' +
        ' * (Tensor other)\n * (Tensor other, *, str roundingMode)\n * (Number other, *, str roundingMode)\n',
    );
    throwsExactly(
      () => loose(eq)(x, 'a'),
      TypeError,
      'eq() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n' +
        ' * (Tensor input, Tensor other)\n' +
        "      didn't match because some of the arguments have invalid types: (Tensor, !str!)\n" +
        ' * (Tensor input, Number other)\n' +
        "      didn't match because some of the arguments have invalid types: (Tensor, !str!)\n",
    );
    throwsExactly(
      () => loose(eye)(2, 2.5),
      TypeError,
      'eye() received an invalid combination of arguments - got (int, float), but expected one of:\n' +
        ' * (int n, *, torch.dtype dtype, torch.layout layout, torch.device device, bool pinMemory, bool requiresGrad)\n' +
        ' * (int n, int m, *, torch.dtype dtype, torch.layout layout, torch.device device, bool pinMemory, ' +
        'bool requiresGrad)\n',
    );
    throwsExactly(
      () => loose(x.sum).call(x, { dim: [0], dtipe: 1 }),
      TypeError,
      "sum() got an unexpected keyword argument 'dtipe'",
    );
    throwsExactly(
      () => loose(x.to).call(x, { foo: 1 }),
      TypeError,
      'to() received an invalid combination of arguments - got (foo=int, ), but expected one of:\n' +
        ' * (torch.device device, torch.dtype dtype, bool nonBlocking, bool copy, *, torch.memory_format memoryFormat)\n' +
        ' * (torch.dtype dtype, bool nonBlocking, bool copy, *, torch.memory_format memoryFormat)\n' +
        ' * (Tensor other, bool nonBlocking, bool copy, *, torch.memory_format memoryFormat)\n',
    );
  });
});

describe('dtype, device and str arguments', () => {
  it(
    'accept DTypes and dtype names, devices and device strings; refuse the rest',
    scoped(() => {
      assert.equal(loose(zeros)([1], { dtype: 'long' }).dtype.name, 'int64');
      assert.equal(zeros([1], { device: 'meta' }).device.type, 'meta');
      throwsExactly(
        () => loose(ones)(2, { dtype: 3 }),
        TypeError,
        "ones(): argument 'dtype' must be torch.dtype, not int",
      );
      throwsExactly(
        () => loose(ones)(2, { dtype: 'floaty' }),
        TypeError,
        "ones(): argument 'dtype' must be torch.dtype, not str",
      );
      throwsExactly(
        () => loose(ones)(2, { device: 'foo' }),
        Error,
        'Expected one of cpu, meta, webgpu device type at start of device string: foo',
      );
      throwsExactly(
        () => loose(ones)(2, { device: 3 }),
        TypeError,
        "ones(): argument 'device' must be torch.device, not int",
      );
      throwsExactly(
        () => div(zeros([1]), zeros([1]), { roundingMode: 'foo' }),
        Error,
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'foo'",
      );
      throwsExactly(
        () => gelu(zeros([1]), { approximate: 'foo' }),
        Error,
        'approximate argument must be either none or tanh.',
      );
      throwsExactly(
        () => loose(div)(zeros([1]), zeros([1]), { roundingMode: 3 }),
        TypeError,
        'div() received an invalid combination of arguments - got (Tensor, Tensor, roundingMode=int), but expected ' +
          'one of:\n * (Tensor input, Tensor other)\n * (Tensor input, Tensor other, *, str roundingMode)\n' +
          ' * (Tensor input, Number other, *, str roundingMode)\n',
      );
    }),
  );
});

describe('overloads bind as PyTorch binds them', () => {
  it(
    'the fast paths (plain positional calls, and with an options object) bind exactly as the parser does',
    scoped(() => {
      const next = rng(7);
      const x = nonContiguousTensor([2, 3], 'float32', next), i = tensor([[1, -2, 3], [4, 5, -6]]);
      const cond = x.gt(0), c = x.contiguous();
      // A trailing `undefined` changes the argument count, so the same call takes the parser instead.
      const calls: Array<[string, (...extra: unknown[]) => Tensor]> = [
        ['add(x, i)', (...e) => loose(add)(x, i, ...e)],
        ['add(i, 2)', (...e) => loose(add)(i, 2, ...e)],
        ['add(i, 2, 3)', (...e) => loose(add)(i, 2, 3, ...e)],
        ['add(x, i, { alpha: 2 })', (...e) => loose(add)(x, i, { alpha: 2 }, ...e)],
        ['add(x, i, { alpha: undefined })', (...e) => loose(add)(x, i, { alpha: undefined }, ...e)],
        ['sum(x, 1)', (...e) => loose(sum)(x, 1, ...e)],
        ['sum(x, [0, 1], true)', (...e) => loose(sum)(x, [0, 1], true, ...e)],
        ['sum(x, { dim: 1, keepdim: true })', (...e) => loose(sum)(x, { dim: 1, keepdim: true }, ...e)],
        ['sum(i, 1, { dtype })', (...e) => loose(sum)(i, 1, { dtype: 'float64' }, ...e)],
        ['pow(2, i)', (...e) => loose(pow)(2, i, ...e)],
        ['pow(i, 2)', (...e) => loose(pow)(i, 2, ...e)],
        ['where(cond, x, 0)', (...e) => loose(where)(cond, x, 0, ...e)],
        ['clamp(i, -1, 2)', (...e) => loose(clamp)(i, -1, 2, ...e)],
        ['clamp(x, null, x)', (...e) => loose(clamp)(x, null, x, ...e)],
        ['clamp(x, { max: 0.5 })', (...e) => loose(clamp)(x, { max: 0.5 }, ...e)],
        ['div(i, 2, { roundingMode })', (...e) => loose(div)(i, 2, { roundingMode: 'floor' }, ...e)],
        ['div(i, x, { roundingMode: null })', (...e) => loose(div)(i, x, { roundingMode: null }, ...e)],
        ['arange(5)', (...e) => loose(arange)(5, ...e)],
        ['arange(1, 5)', (...e) => loose(arange)(1, 5, ...e)],
        ['arange(1, 6, 2)', (...e) => loose(arange)(1, 6, 2, ...e)],
        ['arange(1, 5, { dtype })', (...e) => loose(arange)(1, 5, { dtype: 'float64' }, ...e)],
        ['eye(2, 3)', (...e) => loose(eye)(2, 3, ...e)],
        ['zeros(2, 3)', (...e) => loose(zeros)(2, 3, ...e)],
        ['zeros(2, 3, { dtype })', (...e) => loose(zeros)(2, 3, { dtype: 'int32' }, ...e)],
        ['zeros([2], { requiresGrad })', (...e) => loose(zeros)([2], { requiresGrad: true }, ...e)],
        ['full([2], 2n, { dtype })', (...e) => loose(full)([2], 2n, { dtype: 'int64' }, ...e)],
        ['x.view(6)', (...e) => loose(c.view).call(c, 6, ...e)],
        ['x.to(float64)', (...e) => loose(x.to).call(x, 'float64', ...e)],
        ['x.to({ dtype, copy })', (...e) => loose(x.to).call(x, { dtype: 'float32', copy: true }, ...e)],
        ['x.split(1)', (...e) => loose(cat)(loose(x.split).call(x, 1, ...e))],
        ['x.split([1, 2], 1)', (...e) => loose(cat)(loose(x.split).call(x, [1, 2], 1, ...e), 1)],
      ];
      for (const [what, call] of calls) {
        const fast = call(), parsed = call(undefined);
        assert.deepEqual(
          [fast.dtype.name, [...fast.shape], fast.requiresGrad],
          [parsed.dtype.name, [...parsed.shape], parsed.requiresGrad],
          what,
        );
        assert.deepEqual(values(fast), values(parsed), what);
      }
    }),
  );

  it(
    'in PyTorch order: Tensor before Scalar, int before int[] (split(2) is split.Tensor)',
    scoped(() => {
      const x = arange(6, { dtype: 'float32' });
      assert.deepEqual(x.split(4).map((t) => t.shape[0]), [4, 2]);
      assert.deepEqual(x.split([1, 5]).map((t) => t.shape[0]), [1, 5]);
      const z = zeros([2]);
      // clamp with a tensor bound binds clamp.Tensor; with numbers, clamp.
      assert.deepEqual(values(clamp(tensor([-1, 5], { dtype: 'float32' }), z, null)), [0, 5]);
      assert.deepEqual(values(clamp(tensor([-1, 5]), 0, 3)), [0, 3]);
    }),
  );
});

describe('Tensor.to overloads', () => {
  it(
    "takes a dtype (object or name), a device, another tensor, or device and dtype, with PyTorch's aliasing",
    scoped(() => {
      const x = nonContiguousTensor([2, 3], 'float32', rng(3));
      const d = x.to('float64');
      assert.equal(d.dtype.name, 'float64');
      assert.deepEqual(values(d), values(x));
      assert.equal(x.to('float32'), x);
      assert.equal(x.to(x.dtype), x);
      assert.equal(x.to('cpu'), x);
      assert.equal(x.to(), x);
      assert.notEqual(x.to('float32', { copy: true }), x);
      assert.notEqual(x.to('float32', false, true), x);
      const m = x.to('meta');
      assert.deepEqual([m.device.type, m.dtype.name, [...m.shape]], ['meta', 'float32', [2, 3]]);
      const other = zeros([1], { dtype: 'int32' });
      const o = x.to(other);
      assert.deepEqual([o.dtype.name, o.device.type], ['int32', 'cpu']);
      assert.deepEqual(values(o), values(x).map((v) => Math.trunc(v) + 0));
      assert.equal(x.to(zeros([1])), x);
      const both = x.to('meta', 'float16');
      assert.deepEqual([both.device.type, both.dtype.name], ['meta', 'float16']);
      const kw = x.to({ dtype: 'int64', nonBlocking: true });
      assert.equal(kw.dtype.name, 'int64');
      throwsExactly(
        () => x.to('foo' as 'cpu'),
        Error,
        'Expected one of cpu, meta, webgpu device type at start of device string: foo',
      );
    }),
  );
});

describe('requiresGrad on factories', () => {
  it(
    'makes leaves that require grad, for floating dtypes only',
    scoped(() => {
      for (
        const t of [
          zeros([2], { requiresGrad: true }),
          ones(2, 3, { requiresGrad: true }),
          full([2], 1.5, { requiresGrad: true }),
          arange(3, { dtype: 'float64', requiresGrad: true }),
          eye(2, { requiresGrad: true }),
          linspace(0, 1, 3, { requiresGrad: true }),
          tensor([1.5, 2], { requiresGrad: true }),
        ]
      ) {
        assert.ok(t.requiresGrad && t.isLeaf, String(t));
      }
      assert.equal(zeros([2]).requiresGrad, false);
      const before = memoryStats().liveTensors;
      throwsExactly(
        () => zeros([2], { dtype: 'int64', requiresGrad: true }),
        Error,
        'Only Tensors of floating point and complex dtype can require gradients',
      );
      throwsExactly(
        () => tensor([1, 2], { requiresGrad: true }),
        Error,
        'Only Tensors of floating point and complex dtype can require gradients',
      );
      throwsExactly(
        () => arange(3, { requiresGrad: true }),
        Error,
        'Only Tensors of floating point and complex dtype can require gradients',
      );
      assert.equal(memoryStats().liveTensors, before);
      throwsExactly(
        () => loose(zeros)([2], { requiresGrad: 1 }),
        TypeError,
        "zeros(): argument 'requiresGrad' must be bool, not int",
      );
    }),
  );
});

describe("tensor()'s arguments", () => {
  it("are checked as PyTorch's torch.tensor binding checks them", () => {
    throwsExactly(
      () => loose(tensor)([1], 'float32'),
      TypeError,
      'tensor() takes 1 positional argument but 2 were given',
    );
    throwsExactly(() => loose(tensor)([1], { foo: 1 }), TypeError, "tensor() got an unexpected keyword argument 'foo'");
    throwsExactly(
      () => loose(tensor)([1], { dtype: 3 }),
      TypeError,
      "tensor(): argument 'dtype' must be torch.dtype, not int",
    );
    throwsExactly(
      () => loose(tensor)([1], { requiresGrad: 1 }),
      TypeError,
      "tensor(): argument 'requiresGrad' must be bool, not int",
    );
    throwsExactly(() => loose(tensor)(), TypeError, 'tensor() missing 1 required positional arguments: "data"');
    throwsExactly(() => loose(tensor)({}), Error, 'Could not infer dtype of dict');
    throwsExactly(() => loose(tensor)([1, 'a']), TypeError, "new(): invalid data type 'str'");
  });
});
