// Where calls enter the dispatcher without a typed front end (callBoxed, callBoxedForDispatchKey,
// dispatcher.call), arguments are checked against the schema with PyTorch's boxing errors; a value validator
// the tensor layer installs decides what a usable tensor is (the dispatcher itself knows only keyset words).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, DispatchKey, IValue, Library, RuntimeError, type Stack } from '../../core/dispatch/mod.ts';
import { cpu, type FakeTensor } from './_fake_tensor.ts';

function setup() {
  const d = new Dispatcher({ onWarning: () => {} });
  const def = new Library('t', 'DEF', undefined, { dispatcher: d, location: 'b.ts:1' });
  const op = def.define('t::scale.Tensor(Tensor self, int[] dims, *, Scalar factor=1, str? mode=None) -> Tensor');
  const impl = new Library('t', 'IMPL', DispatchKey.CPU, { dispatcher: d });
  const calls: unknown[][] = [];
  impl.impl('scale.Tensor', (_hi: number, _lo: number, ...args: unknown[]) => {
    calls.push(args);
    return args[0];
  });
  return { d, op, calls, dispose: () => [impl, def].forEach((l) => l.dispose()) };
}

const DECLARATION =
  'Declaration: t::scale.Tensor(Tensor self, int[] dims, *, Scalar factor=1, str? mode=None) -> Tensor';
const mismatch = (type: string, name: string, found: string, position: number) => ({
  name: 'RuntimeError',
  message: `t::scale() Expected a value of type '${type}' for argument '${name}' but instead found type '${found}'.\n` +
    `Position: ${position}\n${DECLARATION}`,
});

describe('dispatcher.call checks its arguments against the schema', () => {
  it('passes checked arguments, defaults filled and bigint ints as numbers, to the kernel', () => {
    const { d, op, calls, dispose } = setup();
    const x = cpu();
    assert.equal(d.call(op, x, [1n, 2], 2.5), x);
    assert.deepEqual(calls[0], [x, [1, 2], 2.5, null]);
    dispose();
  });

  it("raises PyTorch's boxing errors for types, arity and missing arguments", () => {
    const { d, op, calls, dispose } = setup();
    const x = cpu();
    // PyTorch names the whole list ('List[int]' ... 'list'); the element is named here.
    assert.throws(() => d.call(op, x, [1.5]), mismatch('int', 'dims[0]', 'float', 1));
    assert.throws(() => d.call(op, 'x', [1]), mismatch('Tensor', 'self', 'str', 0));
    assert.throws(() => d.call(op, x, [1], 'a'), mismatch('number', 'factor', 'str', 2));
    assert.throws(() => d.call(op, x, [1], 1, 3), mismatch('Optional[str]', 'mode', 'int', 3));
    assert.throws(() => d.call(op, x, [2n ** 70n]), { name: 'RuntimeError', message: 'Overflow when unpacking long' });
    assert.throws(() => d.call(op, x), {
      name: 'RuntimeError',
      message: `t::scale() is missing value for argument 'dims'. ${DECLARATION}`,
    });
    assert.throws(() => d.call(op, x, [1], 1, null, 5), {
      name: 'RuntimeError',
      message: `t::scale() expected at most 4 argument(s) but received 5 argument(s). ${DECLARATION}`,
    });
    assert.equal(calls.length, 0);
    dispose();
  });
});

describe('callBoxed checks its stack', () => {
  it('takes IValues of the right types and checks their payloads', () => {
    const { op, calls, dispose } = setup();
    const x = cpu();
    const stack: Stack = [IValue.tensor(x), IValue.list([IValue.int(0)]), new IValue('Scalar', 2), IValue.NONE];
    op.callBoxed(stack);
    assert.deepEqual(calls[0], [x, [0], 2, null]);
    assert.equal(stack.length, 1);
    assert.throws(
      () => op.callBoxed([IValue.tensor(x), IValue.int(0), IValue.int(1), IValue.NONE]),
      mismatch('List[int]', 'dims', 'int', 1),
    );
    assert.throws(
      () => op.callBoxed([new IValue('Tensor', 3), IValue.list([]), IValue.int(1), IValue.NONE]),
      mismatch('Tensor', 'self', 'int', 0),
    );
    assert.throws(() => op.callBoxed([IValue.tensor(x), 3 as unknown as IValue, IValue.int(1), IValue.NONE]), {
      name: 'TypeError',
      message: "callBoxed: stack entry 1 is not an IValue (found type 'int')",
    });
    assert.throws(() => op.callBoxed([IValue.tensor(x)]), {
      name: 'RuntimeError',
      message: `t::scale() is missing value for argument 'dims'. ${DECLARATION}`,
    });
    assert.throws(() => op.callBoxedForDispatchKey(DispatchKey.CPU, [IValue.string('x')]), RuntimeError);
    assert.equal(calls.length, 1);
    dispose();
  });
});

describe('the value validator', () => {
  it('decides which keyset-carrying objects are usable tensors, for this dispatcher only', () => {
    const { d, op, calls, dispose } = setup();
    const good = cpu(), stale: FakeTensor = { ...cpu(), label: 'disposed' };
    d.setValueValidator((kind, value) => kind !== 'Tensor' || (value as FakeTensor).label !== 'disposed');
    assert.throws(() => d.call(op, stale, [0]), mismatch('Tensor', 'self', 'Tensor', 0));
    assert.throws(
      () => op.callBoxed([IValue.tensor(stale), IValue.list([]), IValue.int(1), IValue.NONE]),
      RuntimeError,
    );
    assert.equal(d.call(op, good, [0]), good);
    // With a validator, op.call checks too; callUnchecked does not.
    assert.throws(() => op.call(stale, [0]), mismatch('Tensor', 'self', 'Tensor', 0));
    assert.throws(() => op.call(good, [0.5]), mismatch('int', 'dims[0]', 'float', 1));
    // @ts-expect-error one argument more than the schema has
    assert.throws(() => op.call(good, [0], 1, null, 'extra'), {
      name: 'RuntimeError',
      message: `t::scale() expected at most 4 argument(s) but received 5 argument(s). ${DECLARATION}`,
    });
    assert.equal(op.call(good, [0], 2n ** 40n), good); // converted by the checks: a bigint Scalar
    assert.deepEqual(calls.at(-1), [good, [0], 2 ** 40, null]);
    assert.equal(op.callUnchecked(stale, [0]), stale);
    const other = setup();
    assert.equal(other.d.call(other.op, stale, [0]), stale); // another dispatcher has no validator
    assert.equal(other.op.call(stale, [0.5]), stale);
    d.setValueValidator(undefined);
    assert.equal(d.call(op, stale, [0]), stale);
    assert.equal(op.call(stale, [0.5]), stale); // no validator: the bare stub again
    assert.equal(calls.length, 5);
    other.dispose();
    dispose();
  });
});
