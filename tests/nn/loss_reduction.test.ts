/**
 * Every loss takes `reduction: 'none' | 'mean' | 'sum'`, in its functional and its module form, with
 * PyTorch's ValueError for anything else; loss options and arguments are checked. References: PyTorch 1.13
 * in float64 (cross_entropy with class weights and label smoothing 0.1, nll_loss with ignore_index 0).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crossEntropy, logSoftmax, memoryStats, nllLoss, scope, tensor, ValueError } from '../../mod.ts';
import { CrossEntropyLoss, MSELoss, mseLoss, NLLLoss } from '../../core/nn/mod.ts';

const X = [[1.5, -0.5, 2.0], [0.25, 1.0, -1.0], [2.0, 0.0, 0.5], [-1.5, 0.5, 1.0]];
const CE: Record<string, number[]> = {
  none: [0.7076408737829063, 0.6857232459665783, 4.3705151151058645, 0.6076408737829062],
  mean: [1.4158933574751678],
  sum: [6.371520108638254],
};
const NLL: Record<string, number[]> = {
  none: [0.5239090561799078, 0, 4.612711424458293, 0.5239090561799078],
  mean: [1.4151323842045271],
  sum: [5.6605295368181086],
};
const MSE: Record<string, number[]> = {
  none: [9, 1, 1, 3.0625, 1, 2.25, 3.0625, 1, 2.25, 9, 1, 1],
  mean: [2.8854166666666665],
  sum: [34.625],
};

function close(actual: number[], expected: number[], what: string): void {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= 1e-12 * Math.max(1, Math.abs(expected[i])), what));
}

function scoped(fn: () => void): () => void {
  return () => {
    const before = memoryStats().liveTensors;
    scope(fn);
    assert.equal(memoryStats().liveTensors, before);
  };
}

const invalid = (v: string) => ({ name: 'ValueError', message: `${v} is not a valid value for reduction` });

describe('reduction strings', () => {
  it(
    'every loss, functional and module, for each reduction',
    scoped(() => {
      const x = tensor(X, { dtype: 'float64' }), y = tensor([2, 0, 1, 2]);
      const w = tensor([0.5, 2, 1], { dtype: 'float64' });
      const logp = logSoftmax(x, 1), flipped = x.flip([0]);
      for (const reduction of ['none', 'mean', 'sum'] as const) {
        const read = (t: { toArray(): unknown[] }) => t.toArray() as number[];
        close(read(crossEntropy(x, y, w, reduction, -100, 0.1)), CE[reduction], `crossEntropy ${reduction}`);
        close(read(crossEntropy(x, y, w, { reduction, labelSmoothing: 0.1 })), CE[reduction], 'crossEntropy options');
        close(
          read(new CrossEntropyLoss({ weight: w, reduction, labelSmoothing: 0.1 }).call(x, y)),
          CE[reduction],
          `CrossEntropyLoss ${reduction}`,
        );
        close(read(nllLoss(logp, y, w, { reduction, ignoreIndex: 0 })), NLL[reduction], `nllLoss ${reduction}`);
        close(
          read(new NLLLoss({ weight: w, reduction, ignoreIndex: 0 }).call(logp, y)),
          NLL[reduction],
          `NLLLoss ${reduction}`,
        );
        close(read(mseLoss(x, flipped, { reduction })), MSE[reduction], `mseLoss ${reduction}`);
        close(read(new MSELoss({ reduction }).call(x, flipped)), MSE[reduction], `MSELoss ${reduction}`);
      }
    }),
  );

  it(
    "anything else is PyTorch's ValueError, in both forms, and leaves nothing behind",
    scoped(() => {
      const x = tensor(X, { dtype: 'float32' }), y = tensor([2, 0, 1, 2]);
      const bad = <T>(v: T) => v as unknown as 'mean';
      assert.throws(() => crossEntropy(x, y, null, bad('xyz')), invalid('xyz'));
      assert.throws(() => crossEntropy(x, y, { reduction: bad(null) }), invalid('None'));
      assert.throws(() => crossEntropy(x, y, { reduction: bad(1) }), invalid('1'));
      assert.throws(() => nllLoss(x, y, null, bad('avg')), invalid('avg'));
      assert.throws(() => new CrossEntropyLoss({ reduction: bad('xyz') }).call(x, y), invalid('xyz'));
      assert.throws(() => new NLLLoss({ reduction: bad('Sum') }).call(x, y), invalid('Sum'));
      assert.throws(() => mseLoss(x, x, { reduction: bad('xyz') }), invalid('xyz'));
      assert.throws(() => new MSELoss({ reduction: bad(true) }).call(x, x), invalid('True'));
      assert.ok(new ValueError('x') instanceof Error);
    }),
  );
});

describe('loss options and arguments are checked', () => {
  it('unknown options and wrong types are TypeErrors naming them', () => {
    const opts = (o: unknown) => o as Record<string, never>;
    assert.throws(() => new CrossEntropyLoss(opts({ reductoin: 'sum' })), {
      name: 'TypeError',
      message: "CrossEntropyLoss() got an unexpected keyword argument 'reductoin'",
    });
    assert.throws(() => new NLLLoss(opts({ ignoreIndex: 1.5 })), {
      name: 'TypeError',
      message: "NLLLoss(): argument 'ignoreIndex' must be int, not float",
    });
    assert.throws(() => new CrossEntropyLoss(opts({ weight: [1, 2] })), {
      name: 'TypeError',
      message: "CrossEntropyLoss(): argument 'weight' must be Tensor, not list",
    });
    assert.throws(() => new CrossEntropyLoss(opts({ labelSmoothing: '0.1' })), {
      name: 'TypeError',
      message: "CrossEntropyLoss(): argument 'labelSmoothing' must be float, not str",
    });
    assert.throws(() => new MSELoss(opts('sum')), {
      name: 'TypeError',
      message: 'MSELoss() takes 0 positional arguments but 1 was given',
    });
  });

  it(
    'loss inputs must be live tensors',
    scoped(() => {
      const x = tensor([1.5, 2], { dtype: 'float32' }), gone = tensor([1.5, 2], { dtype: 'float32' });
      gone.dispose();
      const input = (v: unknown) => v as typeof x;
      assert.throws(() => mseLoss(input('a'), x), {
        name: 'TypeError',
        message: "mse_loss(): argument 'input' (position 1) must be Tensor, not str",
      });
      assert.throws(() => mseLoss(x, gone), {
        name: 'RuntimeError',
        message: "mse_loss(): argument 'target' was disposed and cannot be used any more",
      });
      assert.throws(() => new MSELoss().call(x, input(null)), {
        name: 'TypeError',
        message: "mse_loss(): argument 'target' (position 2) must be Tensor, not NoneType",
      });
      assert.throws(() => crossEntropy(input(3), x), {
        name: 'TypeError',
        message: "cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not int",
      });
    }),
  );
});
