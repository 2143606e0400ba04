/**
 * Optimizer arguments: `lr` positionally or in the options, every option's name, type and range checked
 * with PyTorch 1.13's messages and error classes, and the parameter list checked.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, ValueError, zeros } from '../../mod.ts';
import { Adam, AdamW, SGD } from '../../core/optim/mod.ts';

// deno-lint-ignore no-explicit-any
const anyArgs = (v: unknown) => v as any;

function param() {
  return zeros([3], { requiresGrad: true });
}

const valueError = (message: string) => ({ name: 'ValueError', message });
const typeError = (message: string) => ({ name: 'TypeError', message });

describe('the learning rate', () => {
  it('may be positional, as in PyTorch, or an option; both at once is an error', () => {
    const p = param();
    assert.equal(new SGD([p], 0.1).paramGroups[0].lr, 0.1);
    const sgd = new SGD([p], 0.1, { momentum: 0.9, nesterov: true });
    assert.deepEqual([sgd.paramGroups[0].lr, sgd.paramGroups[0].momentum, sgd.paramGroups[0].nesterov], [
      0.1,
      0.9,
      true,
    ]);
    assert.equal(new SGD([p], { lr: 0.2, momentum: 0.9 }).paramGroups[0].lr, 0.2);
    assert.equal(new Adam([p], 0.01).paramGroups[0].lr, 0.01);
    assert.equal(new Adam([p]).paramGroups[0].lr, 1e-3);
    const adamw = new AdamW([p], 0.01, { betas: [0.8, 0.9] });
    assert.deepEqual([adamw.paramGroups[0].lr, adamw.paramGroups[0].weightDecay], [0.01, 1e-2]);
    assert.throws(
      () => new SGD([p], 0.1, anyArgs({ lr: 0.2 })),
      typeError("SGD() got multiple values for argument 'lr'"),
    );
    assert.throws(
      () => new SGD([p], anyArgs('0.1')),
      typeError("SGD(): argument 'lr' (position 2) must be float, not str"),
    );
    assert.throws(
      () => new SGD([p], 0.1, anyArgs(0.9)),
      typeError('SGD() takes from 1 to 2 positional arguments but 3 were given'),
    );
    assert.throws(
      () => new SGD([p], anyArgs({})),
      valueError("parameter group didn't specify a value of required optimization parameter lr"),
    );
    p.dispose();
  });
});

describe("PyTorch's ValueErrors for values out of range", () => {
  it('SGD', () => {
    const p = param();
    assert.throws(() => new SGD([p], -1), valueError('Invalid learning rate: -1'));
    assert.throws(() => new SGD([p], { lr: 0.1, momentum: -0.5 }), valueError('Invalid momentum value: -0.5'));
    assert.throws(() => new SGD([p], { lr: 0.1, weightDecay: -1 }), valueError('Invalid weight_decay value: -1'));
    assert.throws(
      () => new SGD([p], { lr: 0.1, nesterov: true }),
      valueError('Nesterov momentum requires a momentum and zero dampening'),
    );
    assert.throws(
      () => new SGD([p], { lr: 0.1, momentum: 0.9, dampening: 0.1, nesterov: true }),
      valueError('Nesterov momentum requires a momentum and zero dampening'),
    );
    // PyTorch 1.13's SGD compares with `<`: NaN and a negative dampening pass.
    assert.ok(Number.isNaN(new SGD([p], NaN).paramGroups[0].lr));
    assert.equal(new SGD([p], { lr: 0.1, dampening: -1 }).paramGroups[0].dampening, -1);
    p.dispose();
  });

  it('Adam and AdamW', () => {
    const p = param();
    for (const Opt of [Adam, AdamW]) {
      assert.throws(() => new Opt([p], { lr: -0.1 }), valueError('Invalid learning rate: -0.1'));
      assert.throws(() => new Opt([p], NaN), valueError('Invalid learning rate: nan'));
      assert.throws(() => new Opt([p], { eps: -1 }), valueError('Invalid epsilon value: -1'));
      assert.throws(() => new Opt([p], { betas: [1, 0.999] }), valueError('Invalid beta parameter at index 0: 1'));
      assert.throws(() => new Opt([p], { betas: [0.9, -0.1] }), valueError('Invalid beta parameter at index 1: -0.1'));
      assert.throws(() => new Opt([p], { weightDecay: -1 }), valueError('Invalid weight_decay value: -1'));
      assert.throws(() => new Opt([p], { weightDecay: -Infinity }), valueError('Invalid weight_decay value: -inf'));
    }
    p.dispose();
  });

  it('in parameter groups too', () => {
    const p = param(), q = param();
    assert.throws(
      () => new SGD([{ params: [p] }, { params: [q], lr: -1 }], 0.1),
      valueError('Invalid learning rate: -1'),
    );
    const sgd = new SGD([{ params: [p] }, { params: q, lr: 0.5 }], 0.1);
    assert.deepEqual(sgd.paramGroups.map((g) => g.lr), [0.1, 0.5]);
    p.dispose();
    q.dispose();
  });
});

describe('option names and types', () => {
  it('unknown options and non-numbers are TypeErrors naming them', () => {
    const p = param();
    assert.throws(
      () => new SGD([p], anyArgs({ lr: 0.1, momentun: 0.9 })),
      typeError("SGD() got an unexpected keyword argument 'momentun'"),
    );
    assert.throws(() => new SGD([p], anyArgs({ lr: '0.1' })), typeError("SGD(): argument 'lr' must be float, not str"));
    assert.throws(
      () => new SGD([p], 0.1, anyArgs({ nesterov: 1 })),
      typeError("SGD(): argument 'nesterov' must be bool, not int"),
    );
    assert.throws(
      () => new Adam([p], anyArgs({ betas: 0.9 })),
      typeError("Adam(): argument 'betas' must be tuple of two floats, not float"),
    );
    assert.throws(
      () => new Adam([p], anyArgs({ betas: [0.9] })),
      typeError("Adam(): argument 'betas' must be tuple of two floats, not list"),
    );
    assert.throws(
      () => new AdamW([p], anyArgs({ amsgrad: 'yes' })),
      typeError("AdamW(): argument 'amsgrad' must be bool, not str"),
    );
    assert.throws(
      () => new SGD(anyArgs([{ params: [p], momentum: '0.9' }]), 0.1),
      typeError("SGD(): argument 'momentum' must be float, not str"),
    );
    p.dispose();
  });
});

describe('the parameters', () => {
  it('are an iterable of leaf tensors or groups, as PyTorch requires', () => {
    const before = memoryStats().liveTensors;
    const p = param();
    assert.throws(() => new SGD([], 0.1), valueError('optimizer got an empty parameter list'));
    assert.throws(
      () => new SGD(anyArgs(p), 0.1),
      typeError('params argument given to the optimizer should be an iterable of Tensors or dicts, but got Tensor'),
    );
    assert.throws(
      () => new SGD(anyArgs(3), 0.1),
      typeError('params argument given to the optimizer should be an iterable of Tensors or dicts, but got int'),
    );
    assert.throws(
      () => new SGD(anyArgs([1]), 0.1),
      typeError('optimizer can only optimize Tensors, but one of the params is int'),
    );
    assert.throws(
      () => new SGD(anyArgs([Object.create(p)]), 0.1),
      typeError('optimizer can only optimize Tensors, but one of the params is forged Tensor'),
    );
    const nonLeaf = p.mul(2);
    assert.throws(() => new SGD([nonLeaf], 0.1), valueError("can't optimize a non-leaf Tensor"));
    nonLeaf.dispose();
    const q = param();
    assert.throws(
      () => new SGD([{ params: [p] }, { params: [p, q] }], 0.1),
      valueError('some parameters appear in more than one parameter group'),
    );
    assert.throws(() => new SGD(anyArgs([{ lr: 1 }]), 0.1), typeError("parameter group didn't specify its 'params'"));
    const gone = param();
    gone.dispose();
    assert.throws(() => new SGD([gone], 0.1), {
      name: 'RuntimeError',
      message: 'SGD(): a parameter was disposed and cannot be used any more',
    });
    p.dispose();
    q.dispose();
    assert.equal(memoryStats().liveTensors, before);
    assert.ok(new ValueError('x') instanceof Error);
  });
});

describe('step and zeroGrad', () => {
  it('refuse garbage with clear errors', () => {
    const p = param();
    const sgd = new SGD([p], 0.1);
    assert.throws(() => sgd.step(anyArgs('x')), typeError("'str' object is not callable"));
    assert.equal(sgd.step(anyArgs(null)), undefined); // None: no closure
    assert.throws(
      () => sgd.zeroGrad(anyArgs(3)),
      typeError("zeroGrad(): argument 'options' must be an options object, not int"),
    );
    assert.throws(
      () => sgd.zeroGrad(anyArgs({ setToNone: 1 })),
      typeError("zeroGrad(): argument 'setToNone' must be bool, not int"),
    );
    assert.throws(
      () => sgd.zeroGrad(anyArgs({ set_to_none: true })),
      typeError("zeroGrad() got an unexpected keyword argument 'set_to_none'"),
    );
    assert.throws(() => sgd.addParamGroup(anyArgs(3)), typeError('param group must be a dict'));
    sgd.dispose();
    p.dispose();
  });
});
