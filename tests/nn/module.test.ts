// Module: registration, names and order as PyTorch gives them, modes, gradients, state dicts, repr, disposal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, noGrad, randn, scope, type Tensor, tensor, zeros } from '../../mod.ts';
import { Linear, Module, ReLU, Sequential } from '../../core/nn/mod.ts';

/** A layer with literal parameters (no random init), so these tests need no random operator. */
class Affine extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  readonly runningMean: Tensor;
  constructor(weight: number[], bias: number[] | null) {
    super();
    this.weight = this.registerParameter('weight', tensor(weight, { dtype: 'float32' }));
    this.bias = this.registerParameter('bias', bias === null ? null : tensor(bias, { dtype: 'float32' }));
    this.runningMean = this.registerBuffer('running_mean', tensor([0], { dtype: 'float32' }));
  }
  forward(x: Tensor): Tensor {
    using scaled = x.mul(this.weight);
    return this.bias === null ? scaled.mul(1) : scaled.add(this.bias);
  }
  override extraRepr(): string {
    return `features=${this.weight.numel}`;
  }
}

class Pair extends Module {
  readonly first = this.registerModule('first', new Affine([1, 2], [0.5, 0.5]));
  readonly second = this.registerModule('second', new Affine([3, 4], null));
  forward(x: Tensor): Tensor {
    using h = this.first.call(x);
    return this.second.call(h);
  }
}

describe('Module', () => {
  it('names parameters with dots, in registration order, and skips null ones', () => {
    const model = new Pair();
    assert.deepEqual(model.namedParameters().map(([n]) => n), ['first.weight', 'first.bias', 'second.weight']);
    assert.equal(model.parameters().length, 3);
    assert.deepEqual(model.parameters({ recurse: false }), []);
    assert.deepEqual(model.namedBuffers().map(([n]) => n), ['first.running_mean', 'second.running_mean']);
    assert.deepEqual(model.namedChildren().map(([n]) => n), ['first', 'second']);
    assert.deepEqual(model.namedModules().map(([n]) => n), ['', 'first', 'second']);
    assert.ok(model.parameters().every((p) => p.requiresGrad && p.isLeaf));
    model.dispose();
  });

  it('lists a shared module and its parameters once', () => {
    class Tied extends Module {
      readonly a = this.registerModule('a', new Affine([1], [0]));
      readonly b = this.registerModule('b', this.a);
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    const model = new Tied();
    assert.deepEqual(model.namedParameters().map(([n]) => n), ['a.weight', 'a.bias']);
    assert.equal(model.modules().length, 2);
    model.dispose();
  });

  it('rejects duplicate and malformed names', () => {
    const m = new Affine([1], [1]);
    assert.throws(() => m.registerBuffer('bias', null), /attribute 'bias' already exists/);
    assert.throws(() => m.registerModule('a.b', new Affine([1], null)), /module name can't contain "."/);
    assert.throws(() => m.registerParameter('', null), /parameter name can't be empty string/);
    // Registering a parameter name again replaces it, as PyTorch's register_parameter does.
    const weight = m.weight;
    assert.equal(m.registerParameter('weight', null), null);
    assert.deepEqual(m.namedParameters().map(([n]) => n), ['bias']);
    weight.dispose();
    m.dispose();
  });

  it('forward runs through call()', () => {
    const model = new Pair();
    const y = model.call(tensor([1, 1], { dtype: 'float32' }));
    assert.deepEqual(y.toArray(), [4.5, 10]);
    y.dispose();
    model.dispose();
  });

  it('train() and eval() set the mode of every descendant', () => {
    const model = new Pair();
    assert.equal(model.training, true);
    assert.equal(model.eval(), model);
    assert.deepEqual(model.modules().map((m) => m.training), [false, false, false]);
    model.train();
    assert.deepEqual(model.modules().map((m) => m.training), [true, true, true]);
    model.first.train(false);
    assert.deepEqual(model.modules().map((m) => m.training), [true, false, true]);
    model.dispose();
  });

  it('apply() visits children before the parent', () => {
    const model = new Pair();
    const seen: string[] = [];
    model.apply((m) => seen.push(m === model ? 'root' : m === model.first ? 'first' : 'second'));
    assert.deepEqual(seen, ['first', 'second', 'root']);
    model.dispose();
  });

  it('zeroGrad drops and disposes gradients by default, or zeroes them in place', () => {
    const model = new Pair();
    const [w] = model.parameters();
    const g = tensor([5, 6], { dtype: 'float32' });
    w.grad = g;
    model.zeroGrad({ setToNone: false });
    assert.equal(w.grad, g);
    assert.deepEqual(g.toArray(), [0, 0]);
    model.zeroGrad();
    assert.equal(w.grad, null);
    assert.equal(g.isDisposed, true);
    model.dispose();
  });

  it('stateDict() and loadStateDict() round-trip parameters and buffers', () => {
    const source = new Pair();
    const target = new Pair();
    using w = tensor([7, 8], { dtype: 'float32' });
    noGrad(() => source.first.weight.copy_(w));
    const state = source.stateDict();
    assert.deepEqual([...state.keys()], [
      'first.weight',
      'first.bias',
      'first.running_mean',
      'second.weight',
      'second.running_mean',
    ]);
    const result = target.loadStateDict(state);
    assert.deepEqual(result, { missingKeys: [], unexpectedKeys: [] });
    assert.deepEqual(target.first.weight.toArray(), [7, 8]);
    assert.equal(target.first.weight.isLeaf, true);
    source.dispose();
    target.dispose();
  });

  it('loadStateDict() reports missing, unexpected and mis-shaped entries as PyTorch does', () => {
    const model = new Affine([1, 2], [0, 0]);
    using bad = tensor([1, 2, 3], { dtype: 'float32' });
    using extra = tensor([1], { dtype: 'float32' });
    assert.throws(
      () => model.loadStateDict({ weight: bad, foo: extra }),
      (e: Error) => {
        assert.equal(
          e.message,
          'Error(s) in loading state_dict for Affine:\n' +
            '\tMissing key(s) in state_dict: "bias", "running_mean". \n' +
            '\tUnexpected key(s) in state_dict: "foo". \n' +
            '\tsize mismatch for weight: copying a param with shape torch.Size([3]) from checkpoint, ' +
            'the shape in current model is torch.Size([2]).',
        );
        return true;
      },
    );
    using w = tensor([4, 5], { dtype: 'float32' });
    const result = model.loadStateDict({ weight: w, foo: extra }, { strict: false });
    assert.deepEqual(result, { missingKeys: ['bias', 'running_mean'], unexpectedKeys: ['foo'] });
    assert.deepEqual(model.weight.toArray(), [4, 5]);
    model.dispose();
  });

  it("toString() prints PyTorch's module repr", () => {
    const model = new Pair();
    assert.equal(String(model), 'Pair(\n  (first): Affine(features=2)\n  (second): Affine(features=2)\n)');
    model.dispose();
  });

  it('scope() keeps a module it returns: its parameters, their gradients and its buffers', () => {
    const before = memoryStats().liveTensors;
    const model = scope(() => {
      const m = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
      m.registerBuffer('steps', zeros([1]));
      const loss = m.call(randn([5, 3])).sum();
      loss.backward(); // the activations and the loss are freed; the gradients stay with the parameters
      return m;
    });
    assert.equal(model.parameters().length, 4);
    assert.ok(model.parameters().every((p) => !p.isDisposed && p.grad !== null && !p.grad.isDisposed));
    assert.equal(model.buffers()[0].isDisposed, false);
    assert.equal(memoryStats().liveTensors, before + 4 + 4 + 1);
    model.dispose();
    assert.equal(memoryStats().liveTensors, before);
  });

  it('dispose() frees parameters, their gradients and buffers', () => {
    const before = memoryStats().liveTensors;
    const model = new Pair();
    model.first.weight.grad = tensor([1, 1], { dtype: 'float32' });
    assert.equal(memoryStats().liveTensors, before + 6);
    model.dispose();
    assert.equal(memoryStats().liveTensors, before);
    assert.ok(model.parameters().every((p) => p.isDisposed));
    model.dispose(); // idempotent
  });
});
