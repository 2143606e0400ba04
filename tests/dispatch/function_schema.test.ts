import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  type AliasInfo,
  type Argument,
  BASE_TYPE_KINDS,
  type BaseTypeKind,
  type DefaultValue,
  FunctionSchema,
  isIdentifier,
  OperatorName,
  printSchema,
  type SchemaType,
  withNamespace,
} from '../../core/dispatch/function_schema.ts';
import {
  defaultValueOf,
  formatDouble,
  parseOperatorName,
  parseSchema,
  parseSchemaOrName,
  quoteString,
  SchemaParseError,
} from '../../core/dispatch/schema_parser.ts';

// [native_functions.yaml entry, PyTorch's canonical print]; `same` when the print is the entry itself.
const same = Symbol('same');
const NATIVE_FUNCTIONS: [string, string | typeof same][] = [
  ['add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor', same],
  ['add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)', same],
  ['add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)', same],
  ['sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor', same],
  ['max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)', same],
  [
    'conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor',
    same,
  ],
  [
    'conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor',
    'conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor',
  ],
  [
    'batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor',
    same,
  ],
  [
    'native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)',
    same,
  ],
  [
    'layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor',
    'layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor',
  ],
  ['index.Tensor(Tensor self, Tensor?[] indices) -> Tensor', same],
  ['cat(Tensor[] tensors, int dim=0) -> Tensor', same],
  ['split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]', same],
  ['unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]', same],
  ['std.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor', same],
  [
    'randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor',
    'randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor',
  ],
  [
    'empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor',
    same,
  ],
  ['where.self(Tensor condition, Tensor self, Tensor other) -> Tensor', same],
  ['clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor', same],
  [
    'embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor',
    same,
  ],
  ['dropout(Tensor input, float p, bool train) -> Tensor', same],
  [
    'nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor',
    'nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) -> Tensor',
  ],
  ['softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor', same],
  [
    'to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)',
    same,
  ],
  ['as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)', same],
  ['aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)', same],
  ['_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()', same],
  [
    'topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)',
    same,
  ],
  ["gelu(Tensor self, *, str approximate='none') -> Tensor", 'gelu(Tensor self, *, str approximate="none") -> Tensor'],
  [
    'max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor',
    same,
  ],
  [
    'contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)',
    'contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)',
  ],
  [
    'rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor',
    'rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor',
  ],
  ['bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)', same],
  [
    '_backward(Tensor self, Tensor[] inputs, Tensor? gradient=None, bool? retain_graph=None, bool create_graph=False) -> ()',
    same,
  ],
  ['_unpack_dual(Tensor(a) dual, int level) -> (Tensor(a) primal, Tensor tangent)', same],
  ['div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor', same],
  ['leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor', same],
  ['hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor', same],
  [
    '_cudnn_init_dropout_state(float dropout, bool train, int dropout_seed, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False) -> Tensor',
    same,
  ],
  [
    'native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)',
    same,
  ],
  ['rename_(Tensor(a!) self, Dimname[]? names) -> Tensor(a!)', same],
];

describe('real PyTorch schemas', () => {
  for (const [entry, printed] of NATIVE_FUNCTIONS) {
    const canonical = `aten::${printed === same ? entry : printed}`;
    it(`${entry.slice(0, entry.indexOf('('))} prints canonically and reads back`, () => {
      const schema = parseSchema(`aten::${entry}`);
      assert.equal(printSchema(schema), canonical);
      assert.deepEqual(parseSchema(canonical), schema);
      assert.equal(String(parseSchema(canonical)), canonical);
    });
  }

  it('reads the data model of add.out', () => {
    const schema = parseSchema(
      'aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)',
    );
    assert.equal(schema.name, 'aten::add');
    assert.equal(schema.overloadName, 'out');
    assert.equal(schema.namespace, 'aten');
    assert.equal(schema.fullName, 'aten::add.out');
    assert.deepEqual(schema.arguments.map((a) => [a.name, a.kwargOnly]), [
      ['self', false],
      ['other', false],
      ['alpha', true],
      ['out', true],
    ]);
    assert.deepEqual(schema.arguments[2].defaultValue, { text: '1', value: 1 });
    assert.deepEqual(schema.arguments[3].aliasInfo, {
      beforeSets: ['a'],
      afterSets: ['a'],
      isWrite: true,
      containedTypes: [],
    });
    assert.equal(schema.isMutable, true);
    assert.deepEqual(schema.dispatchArgumentIndices, [0, 1, 3]);
  });

  it('keeps list sizes, list defaults and enum values', () => {
    const conv = parseSchema(`aten::${NATIVE_FUNCTIONS[5][0]}`);
    assert.equal(conv.arguments[3].N, 2);
    assert.deepEqual(conv.arguments[3].defaultValue, { text: '1', value: [1, 1] });
    assert.deepEqual(conv.arguments[3].type, { kind: 'List', elem: { kind: 'int' } });
    const randint = parseSchema(`aten::${NATIVE_FUNCTIONS[15][0]}`);
    assert.deepEqual(randint.arguments[4].defaultValue, { text: '4', value: 4 });
    assert.deepEqual(randint.dispatchArgumentIndices, [3]);
  });

  it('nests the element annotation of Tensor(a!)[] in a written container', () => {
    const foreach = parseSchema('aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()');
    const written = { beforeSets: ['a'], afterSets: ['a'], isWrite: true, containedTypes: [] };
    assert.deepEqual(foreach.arguments[0].aliasInfo, {
      beforeSets: [],
      afterSets: [],
      isWrite: true,
      containedTypes: [written],
    });
    assert.equal(foreach.isMutable, true);
    assert.deepEqual(foreach.returns, []);
  });
});

describe('printing follows PyTorch', () => {
  const reprint = (text: string) => printSchema(parseSchema(text));

  it('prints integral doubles with a trailing dot and others with 17 digits', () => {
    assert.equal(
      reprint('f(float a=1, float b=-0.0, Scalar c=2, Scalar d=2.0, float e=1e16) -> ()'),
      'f(float a=1., float b=0., Scalar c=2, Scalar d=2., float e=10000000000000000.) -> ()',
    );
    const cases: [number, string][] = [
      [1e-5, '1.0000000000000001e-05'],
      [0.1, '0.10000000000000001'],
      [2 ** -25, '2.9802322387695312e-08'], // a tie at the 17th digit: rounds to even like glibc
      [1e20, '1e+20'],
      [2 ** 63, '9.2233720368547758e+18'],
      [-(2 ** 63), '-9223372036854775808.'],
      [5e-324, '4.9406564584124654e-324'],
      [1e-4, '0.0001'],
      [1e-7, '9.9999999999999995e-08'],
      [1.5e300, '1.5000000000000001e+300'],
      [-2.5, '-2.5'],
      [Infinity, 'inf'],
      [NaN, 'nan'],
    ];
    for (const [value, text] of cases) assert.equal(formatDouble(value), text, String(value));
  });

  it('quotes strings with double quotes, C escapes and octal', () => {
    assert.equal(quoteString('a\tb\'"\\\x01\x7f\r'), '"a\\tb\\\'\\"\\\\\\001\\177\\r"');
    const schema = parseSchema('f(str s=\'a\\tb\\\'\\101\\001\', str t="""x\'y""") -> ()');
    assert.equal(schema.arguments[0].defaultValue?.value, "a\tb'A\x01");
    assert.equal(schema.arguments[1].defaultValue?.value, "x'y");
    assert.equal(printSchema(schema), 'f(str s="a\\tb\\\'A\\001", str t="x\\\'y") -> ()');
  });

  it('collapses an all-equal int list to one value only when it has the list size', () => {
    assert.equal(
      reprint('f(int[3] a=[2, 2, 2], int[2] b=[1, 2], int[1] c=[5], int[2] d=[7, 7, 7]) -> ()'),
      'f(int[3] a=2, int[2] b=[1, 2], int[1] c=[5], int[2] d=[7, 7, 7]) -> ()',
    );
    assert.equal(
      reprint('f(float[2] a=1, bool[2] b=True, ScalarType[2] c=[long, 4]) -> ()'),
      'f(float[2] a=[1., 1.], bool[2] b=[True, True], ScalarType[2] c=[4, 4]) -> ()',
    );
  });

  it('parenthesises returns unless there is exactly one', () => {
    assert.equal(reprint('f() -> (Tensor)'), 'f() -> Tensor');
    assert.equal(reprint('f() -> (Tensor out)'), 'f() -> Tensor out');
    assert.equal(reprint('f() -> Tensor out'), 'f() -> Tensor out');
    assert.equal(reprint('f() -> ()'), 'f() -> ()');
    assert.equal(reprint('f() -> ...'), 'f() -> ...');
    assert.equal(reprint('f() -> (...)'), 'f() -> ...');
    assert.equal(reprint('f() -> (Tensor, ...)'), 'f() -> (Tensor, ...)');
    assert.equal(reprint('prim::Print(...) -> ()'), 'prim::Print(...) -> ()');
    assert.equal(reprint('aten::format(str self, ...) -> str'), 'aten::format(str self, ...) -> str');
  });

  it('prints alias annotations as Type(alias)? and drops repeated or implied sets', () => {
    assert.equal(
      reprint('f(Tensor(a)? x, Tensor(a|a|b -> b|a) y, Tensor(a! -> *) z, Tensor(*|*) w) -> ()'),
      'f(Tensor(a)? x, Tensor(a|b) y, Tensor(a! -> *) z, Tensor(*) w) -> ()',
    );
    assert.equal(
      reprint('f(Tensor(a)[](b) x, Tensor[](c)? y, Tensor(a)[2](b)? z, Tensor(a)?[] w) -> ()'),
      'f(Tensor(a)[](b) x, Tensor[](c)? y, Tensor(a)[2](b)? z, Tensor(a)?[] w) -> ()',
    );
    assert.equal(reprint('f(int?[2] a, int[][3]? b, Tensor?? c) -> ()'), 'f(int?[2] a, int[][3]? b, Tensor?? c) -> ()');
  });

  it('keeps Dimname and quotes Device defaults where PyTorch prints text its parser rejects', () => {
    // PyTorch parses Dimname as str and prints `str dim`; Device defaults it prints bare (`cpu`).
    assert.equal(
      reprint('squeeze.dimname(Tensor(a) self, Dimname dim) -> Tensor(a)'),
      'squeeze.dimname(Tensor(a) self, Dimname dim) -> Tensor(a)',
    );
    assert.equal(reprint("f(Device d='cuda:1', Device? e=None) -> ()"), 'f(Device d="cuda:1", Device? e=None) -> ()');
  });

  it('reads comments, newlines and spaced-out tokens', () => {
    assert.equal(
      reprint('aten : : f . g ( Tensor ( a ! ) x , # note\n int y = - 1 ) -> ( )'),
      'aten::f.g(Tensor(a!) x, int y=-1) -> ()',
    );
  });
});

describe('FunctionSchema', () => {
  const tensor = { kind: 'Tensor' } as const;
  const arg = (name: string, type: SchemaType, extra: Partial<Argument> = {}): Argument => ({
    name,
    type,
    kwargOnly: false,
    ...extra,
  });

  it('extracts dispatch keys from tensors, tensor lists and generators only', () => {
    const schema = parseSchema(
      'f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, Generator? e, Tensor[]? f, int g, Scalar h, Generator i) -> ()',
    );
    assert.deepEqual(schema.dispatchArgumentIndices, [0, 1, 2, 3, 4, 8]);
    assert.equal(schema.isMutable, false);
    assert.equal(schema.argumentIndexWithName('d'), 3);
    assert.equal(schema.argumentIndexWithName('z'), undefined);
  });

  it('puts a schema in a namespace, refusing a different one', () => {
    const schema = parseSchema('foo.bar(Tensor x) -> Tensor');
    assert.equal(schema.namespace, '');
    const namespaced = withNamespace(schema, 'myns');
    assert.equal(namespaced.fullName, 'myns::foo.bar');
    assert.equal(String(namespaced), 'myns::foo.bar(Tensor x) -> Tensor');
    assert.equal(withNamespace(namespaced, 'myns'), namespaced);
    assert.throws(() => withNamespace(namespaced, 'other'), /namespace \(myns\).*\(other\)/);
    assert.throws(() => withNamespace(schema, 'not ok'), /Invalid namespace 'not ok'/);
  });

  it('tells operator names from schemas', () => {
    const name = parseSchemaOrName('aten::add.Tensor');
    assert.ok(name instanceof OperatorName);
    assert.deepEqual([name.name, name.overloadName, name.namespace, String(name)], [
      'aten::add',
      'Tensor',
      'aten',
      'aten::add.Tensor',
    ]);
    assert.ok(parseSchemaOrName('aten::add.Tensor(Tensor a) -> Tensor') instanceof FunctionSchema);
    assert.equal(String(parseOperatorName('relu')), 'relu');
    assert.throws(() => parseOperatorName('relu(Tensor a) -> Tensor'), SchemaParseError);
    assert.throws(() => parseSchema('aten::relu'), /only the operator name was given/);
  });

  it('normalises what text cannot tell apart', () => {
    const contained = { beforeSets: ['a'], afterSets: ['a'], isWrite: true, containedTypes: [] };
    const schema = new FunctionSchema({
      name: 'f',
      arguments: [
        arg('x', { kind: 'List', elem: tensor }, {
          aliasInfo: { beforeSets: [], afterSets: [], isWrite: false, containedTypes: [contained] },
        }),
        arg('y', tensor, {
          aliasInfo: { beforeSets: ['*', 'b', 'b'], afterSets: ['b', '*'], isWrite: false, containedTypes: [] },
        }),
        arg('z', tensor, { aliasInfo: { beforeSets: [], afterSets: [], isWrite: true, containedTypes: [] } }),
      ],
      returns: [],
    });
    assert.equal(schema.arguments[0].aliasInfo?.isWrite, true);
    assert.deepEqual(schema.arguments[1].aliasInfo?.beforeSets, ['b', '*']);
    assert.equal('aliasInfo' in schema.arguments[2], false);
    assert.equal(String(schema), 'f(Tensor(a!)[] x, Tensor(b|*) y, Tensor z) -> ()');
    assert.deepEqual(parseSchema(String(schema)), schema);
  });

  it('rejects schemas PyTorch rejects or text cannot express, naming the culprit', () => {
    const make = (args: Argument[], extra: { isVararg?: boolean; overloadName?: string } = {}) => () =>
      new FunctionSchema({ name: 'ns::f', arguments: args, returns: [], ...extra });
    const one = defaultValueOf({ kind: 'int' }, 1);
    const int = { kind: 'int' } as const;
    assert.throws(make([arg('a', int, { defaultValue: one }), arg('b', int)]), /Non-default positional .* Parameter b/);
    assert.throws(make([arg('a', int, { defaultValue: one })], { isVararg: true }), /vararg/);
    assert.throws(make([arg('a', int), arg('a', tensor)]), /Duplicate argument name a/);
    assert.throws(make([arg('a', int, { kwargOnly: true }), arg('b', int)]), /Positional argument b follows/);
    assert.throws(make([arg('in', int)]), /Argument name 'in'/);
    assert.throws(make([arg('a', int, { N: 2 })]), /list size but type int/);
    assert.throws(make([], { overloadName: '__x' }), /Overload name '__x'/);
    const contained = { beforeSets: ['a'], afterSets: ['a'], isWrite: false, containedTypes: [] };
    const aliasInfo: AliasInfo = { ...contained, containedTypes: [contained] };
    assert.throws(make([arg('a', tensor, { aliasInfo })]), /does not fit type Tensor/);
    // Allowed: list and keyword-only arguments without defaults after a default (PyTorch's checkSchema).
    const list = { kind: 'List', elem: int } as const;
    make([arg('a', int, { defaultValue: one }), arg('b', list), arg('c', int, { kwargOnly: true })])();
  });

  it('builds default values from JavaScript values', () => {
    assert.deepEqual(defaultValueOf({ kind: 'Scalar' }, 1), { text: '1', value: 1 });
    assert.deepEqual(defaultValueOf({ kind: 'Scalar' }, 1, { float: true }), { text: '1.', value: 1 });
    assert.deepEqual(defaultValueOf({ kind: 'float' }, -0), { text: '0.', value: 0 });
    assert.deepEqual(defaultValueOf({ kind: 'int' }, 2n ** 60n), { text: '1152921504606846976', value: 2n ** 60n });
    assert.deepEqual(defaultValueOf({ kind: 'List', elem: { kind: 'int' } }, 3, { N: 2 }), {
      text: '3',
      value: [3, 3],
    });
    assert.deepEqual(defaultValueOf({ kind: 'Optional', elem: { kind: 'str' } }, 'mean'), {
      text: '"mean"',
      value: 'mean',
    });
    assert.throws(() => defaultValueOf({ kind: 'float' }, Infinity), /out of range/);
    assert.throws(() => defaultValueOf({ kind: 'bool' }, 1), /Invalid default value for bool: expected True or False/);
    assert.throws(() => defaultValueOf({ kind: 'List', elem: { kind: 'int' } }, 3), /expected a list/);
  });
});

// [schema, position, message fragment]
const ERRORS: [string, number, RegExp][] = [
  ['foo(Tensor x x)', 13, /^Expected '\)' but found 'x' at position 13 in schema 'foo\(Tensor x x\)'$/],
  ['foo(Tensor x', 12, /Expected '\)' but found end of input/],
  ['foo(Tensr x) -> Tensor', 4, /Unknown type 'Tensr'; valid types are Tensor, int/],
  ['foo(double x) -> ()', 4, /use `float`/],
  ['foo(t x) -> t', 4, /type variables are not supported/],
  ['foo(Dict(str, Tensor) x) -> ()', 4, /PyTorch type Switchyard does not support/],
  ['foo(Tensor x) Tensor', 14, /Expected '->' but found 'Tensor'/],
  ['foo(Tensor x) -> Tensor y z', 26, /Expected end of input but found 'z'/],
  ['foo(Tensor in) -> ()', 11, /Expected an argument name but found 'in'/],
  ['foo(int a=1, int b) -> ()', 13, /Non-default positional argument follows default argument\. Parameter b/],
  ['foo(Tensor a, *, Tensor b, *, Tensor c) -> ()', 27, /Duplicate keyword-only marker/],
  ['foo(..., Tensor a) -> ()', 9, /\.\.\. must be the last element of the argument list/],
  ['foo(Tensor a, ...) -> (Tensor, ..., Tensor)', 36, /\.\.\. must be the last element of the return list/],
  ['foo(int a=1, ...) -> ()', 4, /vararg/],
  ['foo.default(Tensor a) -> ()', 4, /Overload name 'default'/],
  ['foo(Tensor a, Tensor a) -> ()', 14, /Duplicate argument name a/],
  ['foo(Tensor(*|a) x) -> ()', 13, /Expected '\)' but found 'a'/],
  ['foo(Tensor! x) -> ()', 10, /shorthand is not supported/],
  ['foo(Tensor() x) -> ()', 11, /Expected an alias set name but found '\)'/],
  ['foo(int[x] a) -> ()', 8, /Expected a list size/],
  ['foo(int[] a=1) -> ()', 12, /Expected '\[' but found '1'/],
  ['foo(int[2] a=long) -> ()', 13, /Expected a list default value but found 'long'/],
  ['foo(int?[] a=[1]) -> ()', 13, /list defaults are only supported/],
  ['foo(int a=1.5) -> ()', 10, /expected an integer, found 1.5/],
  ['foo(float a=long) -> ()', 12, /Invalid numeric default value 'long'/],
  ['foo(int a=9223372036854775808) -> ()', 10, /out of range for int64/],
  ['foo(float a=1e999) -> ()', 12, /out of range/],
  ['foo(float a=1e-320) -> ()', 12, /out of range for a float/],
  ['foo(float a=inf) -> ()', 12, /Invalid numeric default value 'inf'/],
  ['foo(Tensor? a=1) -> ()', 14, /expected None, found 1/],
  ['foo(Device d="gpu") -> ()', 13, /expected a device string/],
  ["foo(str s='\\x41') -> ()", 11, /Unsupported hex specifier/],
  ["foo(str s='\\9') -> ()", 11, /Ill-formed octal specifier/],
  ["foo(str s='abc) -> ()", 10, /Unterminated string literal/],
  ['foo(Tensor x) -> Tensor $', 24, /Expected a valid token but found '\$'/],
  [`foo(Tensor${'?'.repeat(40)} x) -> ()`, 42, /Type nests deeper than 32 levels/],
  ['foo(int[99999999] x) -> ()', 8, /List size 99999999 exceeds/],
  ['', 0, /Expected an operator name but found end of input/],
];

describe('parse errors', () => {
  for (const [text, position, message] of ERRORS) {
    it(`reports ${JSON.stringify(text.slice(0, 40))} at ${position}`, () => {
      assert.throws(() => parseSchema(text), (e: unknown) => {
        assert.ok(e instanceof SchemaParseError, String(e));
        assert.equal(e.name, 'SchemaParseError');
        assert.equal(e.position, position, e.message);
        assert.match(e.message, message);
        assert.match(e.message, new RegExp(` at position ${position} in schema '`));
        assert.ok(e.expected.length > 0 && e.found.length > 0);
        return true;
      });
    });
  }

  it('names what it expected and what it found', () => {
    const error = (() => {
      try {
        parseSchema('f(Tensor x) -> Tensor(a');
      } catch (e) {
        return e as SchemaParseError;
      }
    })();
    assert.deepEqual([error?.position, error?.expected, error?.found], [23, "')'", 'end of input']);
  });

  it('survives deep nesting and long inputs', () => {
    for (
      const text of [
        '('.repeat(100_000),
        `f(Tensor${'[]'.repeat(50_000)} x) -> ()`,
        `f(${'Tensor x, '.repeat(5_000)}) -> ()`,
      ]
    ) {
      assert.throws(() => parseSchema(text), SchemaParseError);
    }
    assert.equal(parseSchema(`f(Tensor(${'a|'.repeat(5_000)}b) x) -> ()`).arguments[0].aliasInfo?.beforeSets.length, 2);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Property tests: an arbitrary for the data model, built so every generated schema is valid.

interface Typed {
  type: SchemaType;
  alias?: AliasInfo;
}
type Value = { value: DefaultValue['value']; float?: boolean };

const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,5}$/).filter(isIdentifier);
const aliasSets = fc.shuffledSubarray(['a', 'b', 'c', '*'], { minLength: 1 });
// Mostly absent, so that generated schemas stay close to real ones.
const rarely = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const ownAlias = rarely(
  fc.record({ beforeSets: aliasSets, afterSets: fc.option(aliasSets), isWrite: fc.boolean() })
    .map(({ beforeSets, afterSets, isWrite }): AliasInfo => ({
      beforeSets,
      afterSets: afterSets ?? beforeSets,
      isWrite,
      containedTypes: [],
    })),
);

function wrapList(inner: Typed, own: AliasInfo | undefined): Typed {
  const type: SchemaType = { kind: 'List', elem: inner.type };
  if (inner.alias === undefined) return { type, alias: own };
  const container = own ?? { beforeSets: [], afterSets: [], isWrite: false, containedTypes: [] };
  return { type, alias: { ...container, containedTypes: [inner.alias] } };
}

const baseTyped = fc.record({ kind: fc.constantFrom(...BASE_TYPE_KINDS), alias: ownAlias })
  .map(({ kind, alias }): Typed => ({ type: { kind }, alias }));
const typed: fc.Arbitrary<Typed> = fc.letrec<{ t: Typed }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small', maxDepth: 3, withCrossShrink: true },
    baseTyped,
    tie('t').map((inner): Typed => ({ type: { kind: 'Optional', elem: inner.type }, alias: inner.alias })),
    fc.tuple(tie('t'), ownAlias).map(([inner, own]) => wrapList(inner, own)),
  ),
})).t;

const int64 = fc.oneof(fc.integer(), fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n));
const normalDouble = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) =>
  d === 0 || Math.abs(d) >= 2.2250738585072014e-308
);
const INT_LIKE: readonly string[] = ['int', 'SymInt', 'ScalarType', 'Layout', 'MemoryFormat'];

// Built once: arbitraries are costly to construct, and these are drawn from for every argument.
const plain = (arb: fc.Arbitrary<DefaultValue['value']>) => arb.map((value): Value => ({ value }));
const SCALAR_VALUES: { readonly [K in BaseTypeKind]: fc.Arbitrary<Value> | undefined } = {
  Tensor: fc.constant({ value: null }),
  Generator: fc.constant({ value: null }),
  int: plain(int64),
  SymInt: plain(int64),
  ScalarType: plain(int64),
  Layout: plain(int64),
  MemoryFormat: plain(int64),
  float: plain(normalDouble),
  Scalar: fc.oneof(plain(int64), normalDouble.map((value) => ({ value, float: true })), plain(fc.boolean())),
  bool: plain(fc.boolean()),
  str: plain(fc.oneof(fc.string(), fc.string({ unit: 'binary' }))),
  Dimname: plain(fc.string()),
  Device: plain(fc.constantFrom('cpu', 'cuda', 'cuda:0', 'meta', 'mps:3')),
  Any: undefined,
  Storage: undefined,
};
const NONE_VALUE = fc.constant({ value: null });

function defaultValues(type: SchemaType, N: number | undefined): fc.Arbitrary<Value> | undefined {
  if (type.kind === 'Optional') {
    const inner = type.elem.kind === 'List' ? undefined : defaultValues(type.elem, undefined);
    return inner === undefined ? NONE_VALUE : fc.oneof(NONE_VALUE, inner);
  }
  if (type.kind === 'List') {
    const elem = type.elem;
    if (elem.kind !== 'float' && elem.kind !== 'bool' && !INT_LIKE.includes(elem.kind)) return undefined;
    const items = SCALAR_VALUES[elem.kind as BaseTypeKind]!;
    const lists = fc.array(items, { maxLength: 4 });
    const repeated = items.map((item) => Array.from({ length: N ?? 2 }, () => item));
    return fc.oneof(lists, { weight: 2, arbitrary: repeated }).map((list) => ({
      value: list.map((item) => item.value as number),
    }));
  }
  return SCALAR_VALUES[type.kind];
}

const argument = fc.record({
  typed,
  sized: rarely(fc.record({ N: fc.constantFrom(0, 1, 2, 2, 3), optional: fc.boolean(), own: ownAlias })),
  seed: fc.integer(),
}).chain(({ typed: base, sized, seed }) => {
  let { type, alias } = sized === undefined ? base : wrapList(base, sized.own);
  if (sized?.optional) type = { kind: 'Optional', elem: type };
  const N = sized?.N;
  const values = defaultValues(type, N);
  const value = values === undefined ? fc.constant(undefined) : fc.option(values, { nil: undefined, freq: 2 });
  return fc.tuple(identifier, value).map(([name, value]) => ({
    name,
    type,
    kwargOnly: false,
    seed,
    ...(N === undefined ? {} : { N }),
    ...(alias === undefined ? {} : { aliasInfo: alias }),
    ...(value === undefined ? {} : { defaultValue: defaultValueOf(type, value.value, { N, float: value.float }) }),
  }));
});

const schemaArbitrary: fc.Arbitrary<FunctionSchema> = fc.record({
  ns: fc.option(identifier),
  name: identifier,
  overloadName: fc.option(identifier.filter((s) => s !== 'default' && !s.startsWith('__'))),
  args: fc.array(argument, { maxLength: 6 }),
  kwargStart: fc.nat(7),
  returns: fc.array(fc.tuple(argument, fc.boolean()), { maxLength: 3 }),
  isVararg: fc.boolean(),
  isVarret: fc.boolean(),
}).map(({ ns, name, overloadName, args, kwargStart, returns, isVararg, isVarret }) => {
  // Make the arguments valid: unique names, keyword-only from some index on, and no default-less positional
  // non-list argument after a default (PyTorch's checkSchema), which we fix by starting the keywords there.
  let seenDefault = false;
  for (const [i, arg] of args.entries()) {
    if (i >= kwargStart) break;
    if (arg.defaultValue !== undefined) seenDefault = true;
    else if (seenDefault && arg.type.kind !== 'List') kwargStart = i;
  }
  const prepared: Argument[] = args.map(({ seed: _, ...arg }, i) => ({
    ...arg,
    name: `${arg.name}${i}`,
    kwargOnly: i >= kwargStart,
  }));
  const hasDefault = prepared.some((arg) => arg.defaultValue !== undefined);
  return new FunctionSchema({
    name: ns === null ? name : `${ns}::${name}`,
    overloadName: overloadName ?? '',
    arguments: prepared,
    returns: returns.map(([{ seed: _, defaultValue: __, ...ret }, named]) => ({ ...ret, name: named ? ret.name : '' })),
    isVararg: isVararg && !hasDefault,
    isVarret,
  });
});

const SCHEMA_PIECES = [
  '(',
  ')',
  '[',
  ']',
  ',',
  '*',
  '?',
  '!',
  '|',
  '-',
  '->',
  '.',
  ':',
  '::',
  '=',
  '"',
  "'",
  '\\',
  ' ',
  'a',
  '1',
  '1.5e',
  'None',
  'True',
  '...',
  'Tensor',
  'int',
  '[2]',
  '(a!)',
  '#',
  '\n',
];
const mutation = fc.record({ at: fc.nat(), length: fc.nat(6), insert: fc.constantFrom(...SCHEMA_PIECES) });

function parseOrSchemaError(text: string): FunctionSchema | undefined {
  try {
    return parseSchema(text);
  } catch (e) {
    if (!(e instanceof SchemaParseError)) throw e;
    return undefined;
  }
}

describe('properties', () => {
  it('parse(print(s)) deep-equals s', () => {
    fc.assert(
      fc.property(schemaArbitrary, (schema) => {
        assert.deepStrictEqual(parseSchema(printSchema(schema)), schema);
      }),
      { numRuns: 1000 },
    );
  });

  it('print(parse(print(s))) equals print(s)', () => {
    fc.assert(
      fc.property(schemaArbitrary, (schema) => {
        const text = printSchema(schema);
        assert.equal(printSchema(parseSchema(text)), text);
      }),
      { numRuns: 500 },
    );
  });

  it('arbitrary strings only ever raise SchemaParseError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[a-z:.(]+[ -~]*$/)),
        (text) => {
          parseOrSchemaError(text);
          try {
            parseSchemaOrName(text);
          } catch (e) {
            assert.ok(e instanceof SchemaParseError, String(e));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('mutated schemas only ever raise SchemaParseError, and what parses prints back to itself', () => {
    const real = NATIVE_FUNCTIONS.map(([entry]) => `aten::${entry}`);
    const texts = fc.oneof(schemaArbitrary.map(printSchema), fc.constantFrom(...real));
    fc.assert(
      fc.property(texts, fc.array(mutation, { minLength: 1, maxLength: 3 }), (original, edits) => {
        let text = original;
        for (const { at, length, insert } of edits) {
          const i = at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + length);
        }
        const parsed = parseOrSchemaError(text);
        if (parsed !== undefined) assert.deepStrictEqual(parseSchema(printSchema(parsed)), parsed);
      }),
      { numRuns: 1500 },
    );
  });
});
