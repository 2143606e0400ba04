// Module attribute registration: assigning a Module or Parameter to a property registers it (class fields
// too), in PyTorch's order, with reassignment, deletion, null and PyTorch's errors; register* name checks.
// Expected names, orders and messages are PyTorch 1.13's for the same assignments.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AttributeError, KeyError, ones, optim, type Tensor, tensor, zeros } from '../../mod.ts';
import { Linear, Module, Parameter, ReLU, Sequential } from '../../core/nn/mod.ts';

class Net extends Module {
  fc1: Linear | null = new Linear(4, 8);
  scale: Tensor | null = new Parameter(ones([8]));
  fc2: Linear | null = new Linear(8, 2);
  steps: unknown = 3;
  forward(x: Tensor): Tensor {
    using h = this.fc1!.call(x);
    using scaled = h.mul(this.scale!);
    return this.fc2!.call(scaled);
  }
}

const names = (pairs: Array<[string, unknown]>) => pairs.map(([name]) => name);

describe('assigning to a module property registers Modules and Parameters', () => {
  it('class fields register in assignment order; own parameters come before the children', () => {
    const net = new Net();
    assert.deepEqual(names(net.namedParameters()), ['scale', 'fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']);
    assert.deepEqual([...net.stateDict().keys()], ['scale', 'fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']);
    assert.deepEqual(names(net.namedChildren()), ['fc1', 'fc2']);
    assert.equal(net.parameters().length, 5);
    assert.ok(net.parameters().every((p) => p.requiresGrad && p.isLeaf));
    // A plain value is a plain property.
    assert.equal(net.steps, 3);
    assert.equal(names(net.namedBuffers()).length, 0);
    net.dispose();
  });

  it('the brief example trains: forward, backward and an optimizer over the registered parameters', () => {
    class Small extends Module {
      fc1 = new Linear(4, 8);
      fc2 = new Linear(8, 2);
      forward(x: Tensor): Tensor {
        using h = this.fc1.call(x);
        using r = h.relu();
        return this.fc2.call(r);
      }
    }
    const model = new Small();
    assert.equal(model.parameters().length, 4);
    const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
    using x = ones([3, 4]);
    const before = model.fc2.bias!.toArray();
    using y = model.call(x);
    using loss = y.sum();
    loss.backward();
    opt.step();
    assert.notDeepEqual(model.fc2.bias!.toArray(), before);
    opt.dispose();
    model.dispose();
  });

  it('assignments in the constructor and later register too, and reassignment keeps the position', () => {
    class Built extends Module {
      head: Module | null;
      constructor() {
        super();
        this.registerBuffer('running', zeros([2]));
        this.head = new ReLU();
        this.registerModule('tail', new ReLU());
      }
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    const m = new Built();
    assert.deepEqual(names(m.namedChildren()), ['head', 'tail']);
    const first = m.head;
    m.head = new Linear(1, 1);
    assert.notEqual(m.head, first);
    assert.deepEqual(names(m.namedChildren()), ['head', 'tail']);
    assert.deepEqual([...m.stateDict().keys()], ['running', 'head.weight', 'head.bias']);
    // Assigning a tensor to a buffer name replaces the buffer (the old one is the caller's to dispose).
    const old = m.namedBuffers()[0][1];
    (m as unknown as { running: Tensor }).running = ones([2]);
    assert.deepEqual(m.buffers()[0].toArray(), [1, 1]);
    old.dispose();
    m.dispose();
  });

  it('null unregisters the value but keeps the name; printing shows None', () => {
    const net = new Net();
    const [fc2, scale] = [net.fc2!, net.scale!];
    net.fc2 = null;
    net.scale = null;
    assert.deepEqual(names(net.namedParameters()), ['fc1.weight', 'fc1.bias']);
    assert.deepEqual(names(net.namedChildren()), ['fc1']);
    assert.equal(String(net), 'Net(\n  (fc1): Linear(in_features=4, out_features=8, bias=True)\n  (fc2): None\n)');
    // The names stay registered: a wrong kind of value is still refused.
    assert.throws(() => (net.fc2 = 3 as unknown as Linear), TypeError);
    net.fc2 = fc2;
    assert.deepEqual(names(net.namedChildren()), ['fc1', 'fc2']);
    scale.dispose();
    net.dispose();
  });

  it('delete unregisters', () => {
    const net = new Net();
    const removed = net.fc1!;
    delete (net as { fc1?: unknown }).fc1;
    delete (net as { scale?: unknown }).scale;
    assert.equal('fc1' in net, false);
    assert.deepEqual(names(net.namedParameters()), ['fc2.weight', 'fc2.bias']);
    assert.deepEqual(names(net.namedChildren()), ['fc2']);
    removed.dispose();
    net.dispose();
  });

  it('a Parameter or Module moves a name between kinds, as PyTorch does', () => {
    const m = new Net();
    m.registerBuffer('buf', zeros([1]));
    const p = new Parameter(zeros([1]));
    (m as unknown as { buf: Tensor }).buf = p; // buffer -> parameter
    assert.deepEqual(names(m.namedBuffers()), []);
    assert.deepEqual(names(m.namedParameters({ recurse: false })), ['scale', 'buf']);
    const relu = new ReLU();
    (m as unknown as { steps: unknown }).steps = relu; // plain -> module
    assert.deepEqual(names(m.namedChildren()), ['fc1', 'fc2', 'steps']);
    m.dispose();
  });

  it('Object.defineProperty registers like an assignment; an accessor over a registered name is refused', () => {
    const m = new Net();
    Object.defineProperty(m, 'extra', { value: new ReLU(), writable: true, enumerable: true, configurable: true });
    assert.deepEqual(names(m.namedChildren()), ['fc1', 'fc2', 'extra']);
    assert.throws(
      () => Object.defineProperty(m, 'fc1', { get: () => null, configurable: true }),
      /^TypeError: cannot define an accessor over 'fc1', a registered parameter, buffer or module$/,
    );
    assert.ok(m.fc1 instanceof Linear);
    m.dispose();
  });

  it('Sequential children are readable by index', () => {
    const seq = new Sequential(new Linear(2, 3), new ReLU());
    const indexed = seq as unknown as Record<string, unknown>;
    assert.equal(indexed['0'], seq.at(0));
    assert.equal(indexed['1'], seq.at(1));
    seq.dispose();
  });

  it('a module under two names is listed once by parameters() and twice by stateDict(), as in PyTorch', () => {
    class Tied extends Module {
      a = new Linear(1, 1);
      b = this.a;
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    const t = new Tied();
    assert.deepEqual(names(t.namedParameters()), ['a.weight', 'a.bias']);
    assert.deepEqual([...t.stateDict().keys()], ['a.weight', 'a.bias', 'b.weight', 'b.bias']);
    assert.deepEqual(names(t.namedChildren()), ['a']);
    assert.deepEqual(names(t.namedModules()), ['', 'a']);
    t.dispose();
  });
});

describe("assignment errors are PyTorch's and leave the module unchanged", () => {
  const cases: Array<[string, (net: Net) => void, new (message: string) => Error, string]> = [
    [
      'a plain tensor to a parameter',
      (net) => (net.scale = zeros([8])),
      TypeError,
      "cannot assign 'torch.FloatTensor' as parameter 'scale' (torch.nn.Parameter or None expected)",
    ],
    [
      'an int64 tensor to a parameter',
      (net) => (net.scale = tensor([1])),
      TypeError,
      "cannot assign 'torch.LongTensor' as parameter 'scale' (torch.nn.Parameter or None expected)",
    ],
    [
      'an int to a parameter',
      (net) => (net.scale = 3 as unknown as Tensor),
      TypeError,
      "cannot assign 'int' as parameter 'scale' (torch.nn.Parameter or None expected)",
    ],
    [
      'undefined to a parameter',
      (net) => (net.scale = undefined as unknown as Tensor),
      TypeError,
      "cannot assign 'undefined' as parameter 'scale' (torch.nn.Parameter or None expected)",
    ],
    [
      'a module to a parameter',
      (net) => (net.scale = new ReLU() as unknown as Tensor),
      TypeError,
      "cannot assign 'ReLU' as parameter 'scale' (torch.nn.Parameter or None expected)",
    ],
    [
      'a float to a child module',
      (net) => (net.fc1 = 2.5 as unknown as Linear),
      TypeError,
      "cannot assign 'float' as child module 'fc1' (torch.nn.Module or None expected)",
    ],
    [
      'a tensor to a child module',
      (net) => (net.fc1 = zeros([1]) as unknown as Linear),
      TypeError,
      "cannot assign 'torch.FloatTensor' as child module 'fc1' (torch.nn.Module or None expected)",
    ],
    [
      'a string to a buffer',
      (net) => ((net as unknown as { buf: unknown }).buf = 'x'),
      TypeError,
      "cannot assign 'str' as buffer 'buf' (torch.Tensor or None expected)",
    ],
    [
      'a list to a buffer',
      (net) => ((net as unknown as { buf: unknown }).buf = [1]),
      TypeError,
      "cannot assign 'list' as buffer 'buf' (torch.Tensor or None expected)",
    ],
    [
      'a Parameter over a method',
      (net) => ((net as unknown as { forward: unknown }).forward = new Parameter(zeros([1]))),
      KeyError,
      "attribute 'forward' already exists",
    ],
    [
      'a Parameter under a dotted name',
      (net) => ((net as unknown as Record<string, unknown>)['a.b'] = new Parameter(zeros([1]))),
      KeyError,
      'parameter name can\'t contain "."',
    ],
  ];
  for (const [name, assign, ErrorClass, message] of cases) {
    it(name, () => {
      const net = new Net();
      net.registerBuffer('buf', zeros([1]));
      const state = [...net.stateDict()];
      const props = { ...net };
      assert.throws(() => assign(net), (e: Error) => e.constructor === ErrorClass && e.message === message);
      assert.deepEqual([...net.stateDict()], state);
      assert.deepEqual({ ...net }, props);
      assert.deepEqual(names(net.namedChildren()), ['fc1', 'fc2']);
      for (const p of net.parameters()) assert.equal(p.isDisposed, false);
      net.dispose();
    });
  }
});

describe("registerParameter / registerBuffer / registerModule check names and values as PyTorch's do", () => {
  const cases: Array<[string, (m: Net) => unknown, new (message: string) => Error, string]> = [
    [
      'non-string parameter name',
      (m) => m.registerParameter(3 as unknown as string, null),
      TypeError,
      'parameter name should be a string. Got int',
    ],
    ['dotted parameter name', (m) => m.registerParameter('a.b', null), KeyError, 'parameter name can\'t contain "."'],
    [
      'empty parameter name',
      (m) => m.registerParameter('', null),
      KeyError,
      'parameter name can\'t be empty string ""',
    ],
    [
      'parameter over a method',
      (m) => m.registerParameter('forward', null),
      KeyError,
      "attribute 'forward' already exists",
    ],
    [
      'parameter over a getter',
      (m) => m.registerParameter('training', null),
      KeyError,
      "attribute 'training' already exists",
    ],
    [
      'parameter over a plain attribute',
      (m) => m.registerParameter('steps', null),
      KeyError,
      "attribute 'steps' already exists",
    ],
    ['parameter over a module', (m) => m.registerParameter('fc1', null), KeyError, "attribute 'fc1' already exists"],
    [
      'a non-tensor parameter',
      (m) => m.registerParameter('p', 3 as unknown as Tensor),
      TypeError,
      "cannot assign 'int' object to parameter 'p' (torch.nn.Parameter or None required)",
    ],
    [
      'a non-leaf parameter',
      (m) => m.registerParameter('p', m.scale!.mul(2)),
      TypeError,
      "cannot assign 'torch.FloatTensor' object to parameter 'p' (torch.nn.Parameter or None required)",
    ],
    [
      'non-string buffer name',
      (m) => m.registerBuffer(null as unknown as string, null),
      TypeError,
      'buffer name should be a string. Got NoneType',
    ],
    ['dotted buffer name', (m) => m.registerBuffer('a.b', null), KeyError, 'buffer name can\'t contain "."'],
    ['empty buffer name', (m) => m.registerBuffer('', null), KeyError, 'buffer name can\'t be empty string ""'],
    ['buffer over a parameter', (m) => m.registerBuffer('scale', null), KeyError, "attribute 'scale' already exists"],
    [
      'a non-tensor buffer',
      (m) => m.registerBuffer('b', 3 as unknown as Tensor),
      TypeError,
      "cannot assign 'int' object to buffer 'b' (torch Tensor or None required)",
    ],
    [
      'a non-module module',
      (m) => m.registerModule('x', 3 as unknown as Module),
      TypeError,
      'int is not a Module subclass',
    ],
    [
      'a forged module',
      (m) => m.registerModule('x', Object.create(Linear.prototype)),
      TypeError,
      'Linear is not a Module subclass',
    ],
    [
      'non-string module name',
      (m) => m.registerModule(3 as unknown as string, null),
      TypeError,
      'module name should be a string. Got int',
    ],
    [
      'module over a parameter',
      (m) => m.registerModule('scale', new ReLU()),
      KeyError,
      "attribute 'scale' already exists",
    ],
    ['dotted module name', (m) => m.registerModule('a.b', null), KeyError, 'module name can\'t contain ".", got: a.b'],
    ['empty module name', (m) => m.registerModule('', null), KeyError, 'module name can\'t be empty string ""'],
  ];
  for (const [name, register, ErrorClass, message] of cases) {
    it(name, () => {
      const m = new Net();
      const state = [...m.stateDict()];
      assert.throws(() => register(m), (e: Error) => e.constructor === ErrorClass && e.message === message);
      assert.deepEqual([...m.stateDict()], state);
      m.dispose();
    });
  }

  it('a plain leaf tensor registered as a parameter becomes a Parameter that requires grad', () => {
    const m = new Net();
    const t = m.registerParameter('extra', zeros([2]));
    assert.ok(t instanceof Parameter);
    assert.equal(t.requiresGrad, true);
    assert.equal((m as unknown as { extra: Tensor }).extra, t);
    assert.deepEqual(names(m.namedParameters({ recurse: false })), ['scale', 'extra']);
    m.dispose();
  });

  it("methods called on an object Module's constructor did not make raise PyTorch's AttributeError", () => {
    const forged = Object.create(Linear.prototype) as Linear;
    const cases: Array<[() => unknown, string]> = [
      [() => forged.registerParameter('w', null), 'cannot assign parameter before Module.__init__() call'],
      [() => forged.registerBuffer('b', null), 'cannot assign buffer before Module.__init__() call'],
      [() => forged.registerModule('m', null), 'cannot assign module before Module.__init__() call'],
    ];
    for (const [call, message] of cases) {
      assert.throws(call, (e: Error) => e instanceof AttributeError && e.message === message);
    }
    assert.equal(Module.isModule(forged), false);
    assert.equal(Module.isModule(new ReLU()), true);
  });
});
