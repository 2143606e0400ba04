// Dispatch modes at the Python key (PyTorch's TorchDispatchMode): the mode stack, what a handler sees and runs
// under, and tensor subclasses that intercept their own operators.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AUTOGRAD_DISPATCH_KEYSET,
  callOp,
  currentDispatchMode,
  Dispatcher,
  DispatchKey,
  type DispatchKwargs,
  DispatchMode,
  dispatchModeStack,
  localDispatchKeySet,
  manualSeed,
  NotImplemented,
  type OperatorHandle,
  popMode,
  pushMode,
  randn,
  registerOperators,
  RuntimeError,
  tensor,
  type TorchDispatchClass,
  WrapperTensor,
  zeros,
} from '../../mod.ts';
import { log as loggingLog, LoggingTensor } from '../../examples/logging_tensor.ts';

type Handler = (
  op: OperatorHandle,
  types: readonly TorchDispatchClass[],
  args: unknown[],
  kw: DispatchKwargs,
) => unknown;

class RecordingMode extends DispatchMode {
  readonly seen: string[] = [];
  readonly tag: string;
  readonly shared: string[] | undefined;
  readonly onCall: Handler | undefined;
  constructor(tag: string, shared?: string[], onCall?: Handler) {
    super();
    this.tag = tag;
    this.shared = shared;
    this.onCall = onCall;
  }
  override dispatch(op: OperatorHandle, types: readonly TorchDispatchClass[], args: unknown[], kw: DispatchKwargs) {
    this.seen.push(op.name);
    this.shared?.push(`${this.tag}:${op.name}`);
    return this.onCall !== undefined ? this.onCall(op, types, args, kw) : callOp(op, args, kw);
  }
}

function pythonIncluded(): boolean {
  return localDispatchKeySet().included.has(DispatchKey.Python);
}

function close(a: number[], b: number[]): void {
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-5, `${a[i]} vs ${b[i]} at ${i}`);
}

describe('dispatch modes', () => {
  it('give the handler positional args and keyword-only kwargs, and use what it returns', () => {
    const a = tensor([1, 2, 3], { dtype: 'float32' }), b = tensor([10, 20, 30], { dtype: 'float32' });
    let captured: [unknown[], DispatchKwargs] | undefined;
    const mode = new RecordingMode('m', undefined, (op, _t, args, kw) => {
      if (op.name === 'aten::add.Tensor') captured = [args, kw];
      return callOp(op, args, kw);
    });
    const y = mode.run(() => a.add(b, { alpha: 2 }));
    assert.deepEqual(y.toArray(), [21, 42, 63]);
    assert.equal(captured![0][0], a);
    assert.equal(captured![0][1], b);
    assert.deepEqual(captured![1], { alpha: 2 });
    // A handler may replace the computation.
    const zeroRelu = new RecordingMode(
      'z',
      undefined,
      (op, _t, args, kw) => op.name === 'aten::relu' ? zeros(3) : callOp(op, args, kw),
    );
    assert.deepEqual(zeroRelu.run(() => a.relu()).toArray(), [0, 0, 0]);
    registerOperators();
    const addOp = Dispatcher.singleton().findSchemaOrThrow('aten::add', 'Tensor');
    assert.throws(() => callOp(addOp, [a, b], { beta: 1 }), {
      name: 'TypeError',
      message: "aten::add.Tensor() got an unexpected keyword argument 'beta'",
    });
  });

  it('run nested modes innermost first, each handler with its own mode popped', () => {
    const order: string[] = [];
    const stacks: string[][] = [];
    const outer = new RecordingMode('outer', order);
    const inner = new RecordingMode('inner', order, (op, _t, args, kw) => {
      stacks.push(dispatchModeStack().map((m) => (m as RecordingMode).tag));
      assert.equal(currentDispatchMode(), outer);
      return callOp(op, args, kw);
    });
    const x = randn(2, 2);
    {
      using _o = outer.enter();
      using _i = inner.enter();
      assert.deepEqual(dispatchModeStack(), [outer, inner]);
      x.neg();
    }
    assert.deepEqual(order, ['inner:aten::neg', 'outer:aten::neg']);
    assert.deepEqual(stacks, [['outer']]);
    assert.deepEqual(dispatchModeStack(), []);
    assert.equal(pythonIncluded(), false);
  });

  it('see the operators below autograd, the backward ones included', () => {
    manualSeed(4);
    const x = randn(3, 4), w = randn(2, 4, { requiresGrad: true });
    const mode = new RecordingMode('m');
    mode.run(() => x.mm(w.t()).sum().backward());
    assert.deepEqual(mode.seen.filter((n) => n === 'aten::mm').length, 2, 'forward and backward mm');
    assert.ok(mode.seen.includes('aten::t'));
    assert.ok(w.grad !== null && w.grad !== undefined);
    // The gradient is the one computed outside the mode.
    const w2 = w.detach().requiresGrad_();
    x.mm(w2.t()).sum().backward();
    close(w.grad!.toArray() as number[], w2.grad!.toArray() as number[]);
  });

  it('run handlers with the keys above Python excluded and restore the key sets exactly, also on errors', () => {
    const before = localDispatchKeySet();
    const inside: Array<[boolean, boolean]> = [];
    const probe = (op: OperatorHandle, _t: readonly TorchDispatchClass[], args: unknown[], kw: DispatchKwargs) => {
      const { included, excluded } = localDispatchKeySet();
      inside.push([included.has(DispatchKey.Python), excluded.hasAll(AUTOGRAD_DISPATCH_KEYSET.and(excluded))]);
      assert.ok(excluded.has(DispatchKey.AutogradFunctionality) && excluded.has(DispatchKey.Profiler));
      assert.ok(!excluded.has(DispatchKey.Dense) && !excluded.has(DispatchKey.BackendSelect));
      return callOp(op, args, kw);
    };
    const outer = new RecordingMode('o', undefined, probe);
    const inner = new RecordingMode('i', undefined, probe);
    outer.run(() => inner.run(() => randn(2).neg()));
    // Inner handler: the outer mode is still below, so Python stays included; outer handler: stack empty.
    assert.deepEqual(inside.map((x) => x[0]), [true, false, true, false]);
    const thrower = new RecordingMode('t', undefined, () => {
      throw new RangeError('boom');
    });
    assert.throws(() => thrower.run(() => randn(2)), RangeError);
    const after = localDispatchKeySet();
    assert.equal(String(after.included), String(before.included));
    assert.equal(String(after.excluded), String(before.excluded));
    assert.deepEqual(dispatchModeStack(), []);
    assert.deepEqual(randn(3).shape, [3], 'the runtime stays usable');
  });

  it('refuse to exit a mode that is not innermost, and check their arguments', () => {
    const a = new RecordingMode('a'), b = new RecordingMode('b');
    a.enter();
    b.enter();
    assert.throws(() => a.exit(), (e) => e instanceof RuntimeError && /not the innermost/.test(e.message));
    b.exit();
    a.exit();
    a.exit(); // not entered any more: no-op
    assert.throws(() => popMode(), /empty mode stack/);
    assert.throws(() => pushMode({} as DispatchMode), TypeError);
    assert.throws(() => a.run(3 as unknown as () => void), TypeError);
    assert.equal(pythonIncluded(), false);
    // A mode with the default dispatch is transparent.
    const plain = new (class extends DispatchMode {})();
    assert.deepEqual(plain.run(() => tensor([1, -2]).relu()).toArray(), [1, 0]);
  });
});

describe('tensor subclasses with torchDispatch', () => {
  it('LoggingTensor logs its operators and computes on the inner tensors', () => {
    manualSeed(5);
    loggingLog.length = 0;
    const xi = randn(2, 3), wi = randn(3, 4);
    const x = new LoggingTensor(xi), w = new LoggingTensor(wi);
    const y = x.mm(w).relu().add(1, { alpha: 3 }) as unknown;
    assert.ok(y instanceof LoggingTensor);
    assert.deepEqual(y.shape, [2, 4]);
    assert.equal(String(y.device), 'cpu');
    const expected = xi.mm(wi).relu().add(1, { alpha: 3 });
    close((y as LoggingTensor).inner.toArray() as number[], expected.toArray() as number[]);
    assert.deepEqual(loggingLog, [
      'aten::mm(LoggingTensor[2, 3], LoggingTensor[3, 4])',
      'aten::relu(LoggingTensor[2, 4])',
      'aten::add.Scalar(LoggingTensor[2, 4], 1, 3)', // alpha is positional in add.Scalar's schema
    ]);
  });

  it('LoggingTensor works under autograd: saved wrappers stay wrappers and the backward is logged', () => {
    manualSeed(8);
    loggingLog.length = 0;
    const xi = randn(2, 3), wi = randn(3, 4);
    const x = new LoggingTensor(xi).requiresGrad_();
    const w = new LoggingTensor(wi);
    x.mm(w).sum().backward();
    assert.deepEqual(loggingLog, [
      'aten::mm(LoggingTensor[2, 3], LoggingTensor[3, 4])',
      'aten::sum.dim_IntList(LoggingTensor[2, 4], None, false)',
      'aten::t(LoggingTensor[3, 4])', // backward of mm reads the saved weight
      'aten::mm(Tensor[2, 4], LoggingTensor[4, 3])',
    ]);
    assert.ok(x.grad instanceof LoggingTensor);
    const xe = xi.clone().requiresGrad_();
    xe.mm(wi).sum().backward();
    close((x.grad as LoggingTensor).inner.toArray() as number[], xe.grad!.toArray() as number[]);
    const d = x.detach();
    assert.ok(d instanceof LoggingTensor && d.inner === xi && !d.requiresGrad);
    class NoAlias extends WrapperTensor {
      static torchDispatch(op: OperatorHandle, _t: readonly TorchDispatchClass[], args: unknown[], kw: DispatchKwargs) {
        return callOp(op, args.map((a) => (a instanceof NoAlias ? randn(2) : a)), kw);
      }
    }
    assert.throws(() => new NoAlias(randn(2)).detach(), /NoAlias must override aliasForAutograd\(\)/);
  });

  it('a mode sees subclass calls first, with the subclass in types', () => {
    loggingLog.length = 0;
    let types: readonly TorchDispatchClass[] = [];
    const mode = new RecordingMode('m', undefined, (op, t, args, kw) => {
      types = t;
      return callOp(op, args, kw);
    });
    const x = new LoggingTensor(randn(2));
    mode.run(() => x.neg());
    assert.deepEqual(types, [LoggingTensor]);
    assert.deepEqual(loggingLog, ['aten::neg(LoggingTensor[2])'], 'then the subclass handles it');
  });

  it("raises PyTorch's error when every subclass returns NotImplemented", () => {
    class Refuses extends WrapperTensor {
      static torchDispatch(): unknown {
        return NotImplemented;
      }
    }
    const r = new Refuses(randn(2));
    assert.throws(
      () => r.neg(),
      (e) => e instanceof TypeError && /Multiple dispatch failed for 'aten::neg'/.test(e.message),
    );
    assert.deepEqual(randn(2).neg().shape, [2]);
  });
});
