// nn.Parameter: marks a leaf tensor (no copy), sets requiresGrad, and cannot be forged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, RuntimeError, Tensor, tensor, zeros } from '../../mod.ts';
import { isParameter, Parameter } from '../../core/nn/mod.ts';

describe('Parameter', () => {
  it('marks the tensor it is given and makes it require grad (or not)', () => {
    const before = memoryStats().liveTensors;
    const t = zeros([2, 3]);
    const p = new Parameter(t);
    assert.equal(p, t);
    assert.equal(memoryStats().liveTensors, before + 1); // no second tensor to dispose
    assert.ok(p instanceof Parameter && p instanceof Tensor && isParameter(p));
    assert.equal(p.requiresGrad, true);
    const frozen = new Parameter(zeros([1]), false);
    assert.equal(frozen.requiresGrad, false);
    assert.ok(isParameter(frozen));
    p.dispose();
    frozen.dispose();
  });

  it('is not forgeable: plain tensors and look-alikes are not parameters', () => {
    using plain = zeros([1]);
    assert.equal(plain instanceof Parameter, false);
    assert.equal(isParameter(Object.create(Tensor.prototype)), false);
    assert.equal(isParameter({ shape: [1] }), false);
  });

  it("rejects what PyTorch rejects, and non-leaf tensors, in PyTorch's words", () => {
    using leaf = zeros([2]).requiresGrad_();
    using nonLeaf = leaf.mul(2);
    using ints = tensor([1, 2]);
    const cases: Array<[() => unknown, new (message: string) => Error, string]> = [
      [
        () => new Parameter([1, 2] as unknown as Tensor),
        TypeError,
        "Parameter(): argument 'data' must be Tensor, not list",
      ],
      [
        () => new Parameter(leaf, 1 as unknown as boolean),
        TypeError,
        "Parameter(): argument 'requiresGrad' must be bool, not int",
      ],
      [
        () => new Parameter(ints),
        RuntimeError,
        'Only Tensors of floating point and complex dtype can require gradients',
      ],
      [
        () => new Parameter(nonLeaf),
        RuntimeError,
        'Parameter(): expected a leaf tensor, got one with a grad_fn; pass data.detach() (a Parameter marks the ' +
        'tensor it is given, it does not copy it)',
      ],
    ];
    for (const [make, ErrorClass, message] of cases) {
      assert.throws(make, (e: Error) => e.constructor === ErrorClass && e.message === message, message);
    }
    assert.equal(isParameter(ints), false);
    assert.equal(isParameter(nonLeaf), false);
  });

  it('refuses a disposed tensor', () => {
    const t = zeros([1]);
    t.dispose();
    assert.throws(
      () => new Parameter(t),
      /^Error: Parameter\(\): the tensor was disposed and cannot be used any more$/,
    );
  });
});
