/**
 * Every generated function and Tensor method, called with garbage: wrong types, NaN, fractions, extra
 * arguments, unknown options, forged tensor-like objects and disposed tensors. Each call must either work
 * or throw an Error subclass with a message of ours (never a raw engine TypeError such as "x is not a
 * function"), and must leave no tensor behind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, IValue, memoryStats, registerOperators, Tensor, tensor } from '../../mod.ts';
import * as api from '../../core/ops/generated_api.js';

/** Messages only the JS engine writes: a value reached code that was not meant for it. */
const ENGINE_MESSAGES =
  /is not a function|Cannot read propert|Cannot set propert|undefined is not|null is not|is not iterable|Cannot convert|is not a constructor|Maximum call stack|Invalid array length|Invalid typed array length|Cannot mix BigInt|Do not know how to serialize|can't access property|is not an object|undefined \(evaluating/;

function disposedTensor(): Tensor {
  const t = tensor([1, 2], { dtype: 'float32' });
  t.dispose();
  return t;
}

/** Values no operator argument should take silently, each built fresh (a disposed tensor, a forgery, ...). */
const GARBAGE: ReadonlyArray<[string, () => unknown]> = [
  ['undefined', () => undefined],
  ['null', () => null],
  ['NaN', () => NaN],
  ['Infinity', () => -Infinity],
  ['fraction', () => 2.5],
  ['string', () => 'a'],
  ['empty string', () => ''],
  ['boolean', () => true],
  ['object', () => ({})],
  ['options with an unknown key', () => ({ notAnOption: 1 })],
  ['options with garbage', () => ({ dim: 'a', dtype: 3, alpha: 'x', device: 7, keepdim: 1 })],
  ['empty list', () => []],
  ['list of fractions', () => [1.5]],
  ['list of strings', () => ['a']],
  ['huge bigint', () => 10n ** 30n],
  ['symbol', () => Symbol('s')],
  ['function', () => () => 1],
  ['Map', () => new Map()],
  ['typed array', () => new Float32Array(2)],
  ['forged tensor', () => Object.create(Tensor.prototype)],
  ['keyset look-alike', () => ({ keySetHi: 0xffff, keySetLo: 2, shape: [2], dtype: 'float32' })],
  ['disposed tensor', disposedTensor],
];

/** Frees what a call returned, except the inputs it may return itself (`contiguous`, `to`). */
function disposeResult(r: unknown, keep: readonly Tensor[]): void {
  if (Tensor.isTensor(r)) {
    if (!keep.includes(r)) r.dispose();
  } else if (Array.isArray(r)) {
    for (const t of r) disposeResult(t, keep);
  }
}

/** Calls `fn`; a throw must be an Error of ours. Disposes what it made, except `keep`. */
function probe(what: string, fn: () => unknown, keep: readonly Tensor[]): void {
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    assert.ok(e instanceof Error, `${what}: threw a non-Error ${String(e)}`);
    assert.ok(!ENGINE_MESSAGES.test(e.message), `${what}: raw engine error ${e.name}: ${e.message}`);
    assert.ok(e.message.length > 10, `${what}: unclear message '${e.message}'`);
    return;
  }
  disposeResult(result, keep);
}

const FUNCTIONS = Object.entries(api).filter(([name, f]) =>
  typeof f === 'function' && name !== 'installTensorMethods'
) as Array<[string, (...args: unknown[]) => unknown]>;

const METHODS = Object.getOwnPropertyNames(Tensor.prototype).filter((name) => {
  const f = Object.getOwnPropertyDescriptor(Tensor.prototype, name)?.value;
  return typeof f === 'function' && f.name.startsWith('method_');
});

/** Argument lists around one garbage value: alone, after valid tensors, with extra arguments. */
function argumentLists(x: Tensor, y: Tensor, g: () => unknown): unknown[][] {
  return [
    [g()],
    [x, g()],
    [x, y, g()],
    [x, g(), g()],
    [g(), x],
    [x, 1, g()],
    [x, 0, y, g()],
    [[x, y], g()],
    [x, y, 1, 1, 1, 1, g()],
    ...OPTION_KEYS.map((key) => [x, { [key]: g() }]),
    ...OPTION_KEYS.map((key) => [x, y, { [key]: g() }]),
  ];
}

const OPTION_KEYS = ['dim', 'dtype', 'device', 'alpha', 'keepdim', 'reduction', 'requiresGrad', 'generator', 'copy'];

describe('hostile input to every generated function and method', () => {
  it(`finds the functions and methods (${FUNCTIONS.length} functions, ${METHODS.length} methods)`, () => {
    assert.ok(FUNCTIONS.length > 100);
    assert.ok(METHODS.length > 100);
    assert.ok(METHODS.includes('add') && METHODS.includes('to') && METHODS.includes('view'));
  });

  it('every function throws a clear Error for garbage and leaks nothing', () => {
    const x = tensor([[1.5, -2, 3], [4, 0.5, -1]], { dtype: 'float32' });
    const y = tensor([[0, 1, 2], [1, 0, 2]]);
    const before = memoryStats().liveTensors;
    for (const [name, fn] of FUNCTIONS) {
      for (const [label, g] of GARBAGE) {
        for (const args of argumentLists(x, y, g)) {
          probe(`${name}(${label}) with ${args.length} args`, () => fn(...args), [x, y]);
        }
      }
      assert.equal(memoryStats().liveTensors, before, `${name} left tensors behind`);
    }
    assert.ok(!x.isDisposed && !y.isDisposed);
    x.dispose();
    y.dispose();
  });

  it('every method throws a clear Error for garbage arguments, a disposed or a forged `this`, and leaks nothing', () => {
    const x = tensor([[1.5, -2, 3], [4, 0.5, -1]], { dtype: 'float32' });
    const y = tensor([[0, 1, 2], [1, 0, 2]]);
    const before = memoryStats().liveTensors;
    for (const name of METHODS) {
      const method = (Tensor.prototype as unknown as Record<string, (...a: unknown[]) => unknown>)[name];
      for (const [label, g] of GARBAGE) {
        for (const args of argumentLists(x, y, g)) {
          // In-place methods may succeed on x: work on a copy.
          const self = x.clone();
          probe(`x.${name}(${label}) with ${args.length} args`, () => method.apply(self, args), [x, y, self]);
          self.dispose();
        }
        probe(`Tensor.prototype.${name} on ${label}`, () => method.call(g(), x, 1), [x, y]);
      }
      assert.equal(memoryStats().liveTensors, before, `${name} left tensors behind`);
    }
    x.dispose();
    y.dispose();
  });

  it('every operator refuses garbage through op.call, the boxed API and dispatcher.call, and leaks nothing', () => {
    const x = tensor([[1.5, -2, 3], [4, 0.5, -1]], { dtype: 'float32' });
    const before = memoryStats().liveTensors;
    const dispatcher = Dispatcher.singleton();
    for (const [name, op] of Object.entries(registerOperators())) {
      const n = op.schema!.arguments.length;
      for (const [label, g] of GARBAGE) {
        for (let at = 0; at < n; at++) {
          const args: unknown[] = op.schema!.arguments.map((_, i) => (i === at ? g() : x));
          probe(`dispatcher.call(${name}) with ${label} at ${at}`, () => dispatcher.call(op, ...args), [x]);
          probe(`${name}.call with ${label} at ${at}`, () => op.call(...args), [x]);
          const stack = args.map((a) => new IValue('Tensor', a));
          probe(`${name}.callBoxed with ${label} at ${at}`, () => {
            op.callBoxed(stack);
            return stack.map((v) => (v instanceof IValue ? v.toJS() : v));
          }, [x]);
        }
        probe(`${name}.callBoxed with a raw ${label}`, () => op.callBoxed([g()] as IValue[]), [x]);
      }
      assert.equal(memoryStats().liveTensors, before, `${name} left tensors behind`);
    }
    x.dispose();
  });

  it('names the disposed argument', () => {
    const x = tensor([1.5, 2], { dtype: 'float32' });
    const d = disposedTensor();
    assert.throws(() => api.add(x, d), {
      name: 'RuntimeError',
      message: "add(): argument 'other' was disposed and cannot be used any more",
    });
    assert.throws(() => d.add(x), {
      name: 'RuntimeError',
      message: "add(): argument 'self' was disposed and cannot be used any more",
    });
    assert.throws(() => api.cat([x, d]), {
      name: 'RuntimeError',
      message: "cat(): argument 'tensors[1]' was disposed and cannot be used any more",
    });
    assert.throws(() => api.add(x, Object.create(Tensor.prototype)), {
      name: 'TypeError',
      message: "add(): argument 'other' (position 2) must be Tensor, not forged Tensor",
    });
    x.dispose();
  });
});
