// A custom function's backward is validated as PyTorch 1.13 validates a Python Function's: the number of
// gradients, None for non-tensor inputs, tensors or None, shapes (a broadcast gradient is summed down),
// dtypes (cast to the input's), devices; a gradient for an input that needs none is ignored.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defineFunction, memoryStats, ones, RuntimeError, scope, type Tensor, tensor } from '../../mod.ts';

const f32 = { dtype: 'float32' as const };

type Backward = (g: Tensor) => unknown;

/** `a * b * k` whose backward returns `backward(g)`; runs backward and returns [a.grad, b.grad]. */
function run(backward: Backward, a: Tensor, b: Tensor): Array<number[] | null> {
  const fn = defineFunction({
    name: 'MyFnBackward',
    forward: (_ctx, x: Tensor, y: Tensor, k: number) => x.mul(y).mul(k),
    backward: (_ctx, g) => backward(g) as Array<Tensor | null>,
  });
  a.grad = null;
  b.grad = null;
  fn(a, b, 3).sum().backward();
  return [a, b].map((t) => (t.grad === null ? null : t.grad.toArray() as number[]));
}

const leaf = (values: number[], dtype: 'float32' | 'float64' = 'float32') => tensor(values, { dtype }).requiresGrad_();

function rejects(backward: Backward, message: string, b = leaf([1, 1])): void {
  const live = memoryStats().liveTensors;
  assert.throws(() => scope(() => run(backward, leaf([1, 1]), b)), (e: unknown) => {
    assert.ok(e instanceof RuntimeError, `RuntimeError expected, got ${e}`);
    assert.equal(e.message, message);
    return true;
  });
  assert.equal(memoryStats().liveTensors, live, 'nothing leaked');
}

describe('custom function backward validation', () => {
  it('the number of gradients: one per forward argument; extra trailing nulls are dropped', () => {
    const count = (n: number) =>
      `function MyFnBackward returned an incorrect number of gradients (expected 3, got ${n})`;
    rejects((g) => [g], count(1));
    rejects((g) => [g, g], count(2));
    rejects((g) => g, count(1)); // a single tensor is a one-element tuple
    rejects(() => null, count(1));
    rejects(() => undefined, count(1));
    assert.deepEqual(run((g) => [g, g, null, null], leaf([1, 1]), leaf([1, 1])), [[1, 1], [1, 1]]);
    assert.deepEqual(run((g) => [g, g, undefined], leaf([1, 1]), leaf([1, 1])), [[1, 1], [1, 1]]);
  });

  it('non-tensor inputs take None; gradients are tensors or None', () => {
    rejects(
      (g) => [g, g, g],
      'function MyFnBackward returned a gradient different than None at position 3, but the corresponding forward ' +
        'input was not a Variable',
    );
    rejects(
      (g) => [g, g, 0],
      'function MyFnBackward returned a gradient different than None at position 3, but the corresponding forward input was not a Variable',
    );
    rejects((g) => [3, g, null], 'expected Variable or None (got number)');
    rejects((g) => ['x', g, null], 'expected Variable or None (got string)');
    rejects((g) => [[g], g, null], 'expected Variable or None (got list)');
    rejects((g) => [{ shape: [2] }, g, null], 'expected Variable or None (got object)');
    assert.deepEqual(run((g) => [null, g, null], leaf([1, 1]), leaf([1, 1])), [null, [1, 1]]);
  });

  it("shapes: the input's, or one it broadcasts to (summed down); anything else is refused", () => {
    const invalid = (got: string) =>
      `Function MyFnBackward returned an invalid gradient at index 0 - got ${got} but expected shape compatible with [2]`;
    rejects((g) => [ones([3]), g, null], invalid('[3]'));
    rejects((g) => [ones([1]), g, null], invalid('[1]'));
    rejects((g) => [tensor(5, f32), g, null], invalid('[]'));
    assert.deepEqual(run((g) => [ones([2, 2]), g, null], leaf([1, 1]), leaf([1, 1]))[0], [2, 2]);
    assert.deepEqual(run((g) => [ones([1, 2]), g, null], leaf([1, 1]), leaf([1, 1]))[0], [1, 1]);
    assert.deepEqual(run((g) => [ones([3, 1, 2]), g, null], leaf([1, 1]), leaf([1, 1]))[0], [3, 3]);
  });

  it("dtypes are cast to the input's; devices must match", () => {
    for (const dtype of ['float64', 'int64', 'bool'] as const) {
      const a = leaf([1, 1]);
      run((g) => [ones([2], { dtype }), g, null], a, leaf([1, 1]));
      assert.equal(a.grad?.dtype.name, 'float32');
      assert.deepEqual(a.grad?.toArray(), [1, 1]);
    }
    const a64 = leaf([1, 1], 'float64'), b32 = leaf([1, 1]);
    run((g) => [g, g, null], a64, b32);
    assert.deepEqual([a64.grad?.dtype.name, b32.grad?.dtype.name], ['float64', 'float32']);
    rejects(
      (g) => [ones([2], { device: 'meta' }), g, null],
      'Function MyFnBackward returned an invalid gradient at index 0 - expected device cpu but got meta',
    );
    rejects(
      (g) => [ones([], { device: 'meta' }), g, null],
      'Function MyFnBackward returned an invalid gradient at index 0 - got [] but expected shape compatible with [2]',
    );
  });

  it('a gradient for a tensor input that needs none is ignored, unchecked (but must still be a tensor or None)', () => {
    const plain = tensor([1, 1], f32);
    assert.deepEqual(run((g) => [g, ones([7]), null], leaf([1, 1]), plain), [[1, 1], null]);
    assert.equal(plain.grad, null);
    rejects((g) => [g, 'str', null], 'expected Variable or None (got string)', plain);
  });

  it('defineFunction checks its definition, forward returns a tensor, integer outputs get no history', () => {
    assert.throws(() => defineFunction(null as never), TypeError);
    assert.throws(() => defineFunction({ forward: 1, backward: () => [] } as never), TypeError);
    assert.throws(() => defineFunction({ name: 3, forward: () => ones([1]), backward: () => [] } as never), TypeError);
    const bad = defineFunction({ forward: (_ctx, _x: Tensor) => 42 as unknown as Tensor, backward: () => [null] });
    assert.throws(() => bad(leaf([1])), {
      name: 'TypeError',
      message: 'CustomFunctionBackward: forward must return a Tensor, got number',
    });
    const argmax = defineFunction({ forward: (_ctx, x: Tensor) => x.argmax(), backward: () => [null] });
    const idx = argmax(leaf([1, 3, 2]));
    assert.equal(idx.gradFn, null);
    assert.equal(idx.requiresGrad, false);
  });

  it('saved tensors are freed with the graph; nothing is saved when no input needs a gradient', () => {
    const square = defineFunction({
      name: 'SquareBackward',
      forward(ctx, x: Tensor) {
        ctx.saveForBackward(x);
        return x.mul(x);
      },
      backward(ctx, g) {
        const [x] = ctx.savedTensors;
        return [g.mul(x).mul(2)];
      },
    });
    const x = leaf([1, 2, 3]), plain = tensor([1, 2], f32);
    const live = memoryStats();
    for (let i = 0; i < 50; i++) {
      const y = x.mul(1);
      square(y).dispose();
      y.dispose();
    }
    for (let i = 0; i < 50; i++) square(plain).dispose();
    assert.equal(memoryStats().liveTensors, live.liveTensors);
    assert.equal(memoryStats().bytes, live.bytes);
    square(x).sum().backward();
    assert.deepEqual(x.grad?.toArray(), [2, 4, 6]);
  });
});
