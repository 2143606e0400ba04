// ModuleList and ModuleDict: registration under PyTorch's names, renumbering, state dicts, errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, randn, tensor } from '../../mod.ts';
import { Linear, Module, ModuleDict, ModuleList, ReLU, Tanh } from '../../core/nn/mod.ts';
import type { Tensor } from '../../mod.ts';

describe('ModuleList', () => {
  it("registers its modules under '0', '1', ... so parameters and state dict keys are PyTorch's", () => {
    const list = new ModuleList([new Linear(2, 3), new ReLU(), new Linear(3, 1, { bias: false })]);
    assert.equal(list.length, 3);
    assert.deepEqual(list.namedParameters().map(([n]) => n), ['0.weight', '0.bias', '2.weight']);
    assert.deepEqual([...list.stateDict().keys()], ['0.weight', '0.bias', '2.weight']);
    assert.ok(list.at(-1) instanceof Linear);
    assert.equal(list.at(1), [...list][1]);
    assert.equal(
      String(list),
      'ModuleList(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n' +
        '  (2): Linear(in_features=3, out_features=1, bias=False)\n)',
    );
    list.dispose();
  });

  it('append, extend, insert, set and pop keep the names contiguous', () => {
    const a = new Tanh(), b = new ReLU(), c = new Tanh(), d = new ReLU();
    const list = new ModuleList([a]);
    list.append(b).extend([c]);
    list.insert(1, d); // a d b c
    assert.deepEqual(list.namedChildren(), [['0', a], ['1', d], ['2', b], ['3', c]]);
    assert.equal(list.pop(0), a); // d b c
    assert.deepEqual(list.namedChildren(), [['0', d], ['1', b], ['2', c]]);
    list.set(-1, a); // d b a
    assert.deepEqual(list.namedChildren(), [['0', d], ['1', b], ['2', a]]);
    list.insert(-100, c); // c d b a
    list.insert(100, c); // c d b a c
    assert.deepEqual([...list], [c, d, b, a, c]);
    assert.equal(list.pop(), c);
    assert.deepEqual(list.slice(1, 3).namedChildren(), [['0', d], ['1', b]]);
  });

  it('its layers train in a model, and a state dict round-trips', () => {
    class Stack extends Module {
      layers = new ModuleList([new Linear(4, 4), new Linear(4, 2)]);
      forward(x: Tensor): Tensor {
        let h = x;
        for (const layer of this.layers) {
          const next = layer.call(h);
          if (h !== x) h.dispose();
          h = next;
        }
        return h;
      }
    }
    manualSeed(0);
    const source = new Stack();
    const target = new Stack();
    assert.deepEqual([...source.stateDict().keys()], [
      'layers.0.weight',
      'layers.0.bias',
      'layers.1.weight',
      'layers.1.bias',
    ]);
    target.loadStateDict(source.stateDict());
    const x = randn([3, 4]);
    const y1 = source.call(x), y2 = target.call(x);
    assert.deepEqual(y1.toArray(), y2.toArray());
    y1.sum().backward();
    assert.ok(source.parameters().every((p) => p.grad !== null));
    source.dispose();
    target.dispose();
  });

  it('errors: out of range, not a module, not an iterable, no forward', () => {
    const list = new ModuleList([new ReLU()]);
    assert.throws(() => list.at(1), /^RangeError: index 1 is out of range$/);
    assert.throws(() => list.at(-2), /index -2 is out of range/);
    assert.throws(() => list.at(0.5), /ModuleList indices must be integers, not float/);
    assert.throws(() => list.append(tensor([1]) as never), /Tensor is not a Module subclass/);
    assert.throws(() => new ModuleList(new ReLU() as never), /ModuleList.extend should be called with an iterable/);
    assert.throws(() => list.call(), /Module \[ModuleList\] is missing the required "forward" function/);
    assert.equal(list.length, 1);
  });
});

describe('ModuleDict', () => {
  it('registers modules under their names, in insertion order', () => {
    const dict = new ModuleDict({ encoder: new Linear(2, 2), act: new ReLU() });
    dict.set('decoder', new Linear(2, 1));
    assert.deepEqual([...dict.keys()], ['encoder', 'act', 'decoder']);
    assert.deepEqual([...dict.stateDict().keys()], [
      'encoder.weight',
      'encoder.bias',
      'decoder.weight',
      'decoder.bias',
    ]);
    assert.ok(dict.get('act') instanceof ReLU);
    assert.equal(dict.length, 3);
    const replaced = new Tanh();
    dict.set('act', replaced);
    assert.deepEqual([...dict.keys()], ['encoder', 'act', 'decoder']);
    assert.equal(dict.namedChildren()[1][1], replaced);
    const popped = dict.pop('encoder');
    assert.ok(popped instanceof Linear);
    assert.deepEqual(dict.namedChildren().map(([n]) => n), ['act', 'decoder']);
    assert.deepEqual([...dict.stateDict().keys()], ['decoder.weight', 'decoder.bias']);
    dict.update(new Map([['x', new ReLU()]])).update([['y', new ReLU()]]);
    assert.deepEqual([...dict].map(([k]) => k), ['act', 'decoder', 'x', 'y']);
    dict.clear();
    assert.equal(dict.length, 0);
    assert.deepEqual(dict.namedChildren(), []);
    popped.dispose();
  });

  it("errors are PyTorch's", () => {
    const dict = new ModuleDict();
    assert.throws(() => dict.get('missing'), /^KeyError: 'missing'$/);
    assert.throws(() => dict.set('a.b', new ReLU()), /module name can't contain "\."/);
    assert.throws(() => dict.set('', new ReLU()), /module name can't be empty string/);
    assert.throws(() => dict.set('train', new ReLU()), /attribute 'train' already exists/);
    assert.throws(() => dict.set('a', 3 as never), /int is not a Module subclass/);
    assert.throws(() => dict.update([['a']] as never), /update sequence element #0 should be a \[key, module\] pair/);
    assert.throws(() => dict.call(), /Module \[ModuleDict\] is missing the required "forward" function/);
    assert.equal(dict.length, 0);
  });
});
