// A small network's gradients against backpropagation written out by hand in float64: Linear → ReLU → Linear
// with a mean-squared-error head and with a cross-entropy head. The weights make some hidden units negative,
// so ReLU's mask matters.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStats, noGrad, type Tensor, tensor } from '../../mod.ts';
import { CrossEntropyLoss, Linear, mseLoss, ReLU, Sequential } from '../../core/nn/mod.ts';

type Matrix = number[][];
const X: Matrix = [[1, -2], [0.5, 1.5], [-1, 0.25]];
const W1: Matrix = [[0.5, -0.25], [-1, 0.75], [0.3, 0.2]];
const B1 = [0.1, -0.2, 0.05];

const matmulT = (a: Matrix, b: Matrix): Matrix =>
  a.map((row) => b.map((col) => row.reduce((s, v, k) => s + v * col[k], 0)));
const transpose = (a: Matrix): Matrix => a[0].map((_, j) => a.map((row) => row[j]));
const colSums = (a: Matrix): number[] => a[0].map((_, j) => a.reduce((s, row) => s + row[j], 0));

/** Forward and backward by hand for second layer (w2, b2), given dL/d(output) as a function of the output. */
function reference(w2: Matrix, b2: number[], outputGrad: (out: Matrix) => Matrix) {
  const h = matmulT(X, W1).map((row) => row.map((v, j) => v + B1[j]));
  const a = h.map((row) => row.map((v) => Math.max(v, 0)));
  const out = matmulT(a, w2).map((row) => row.map((v, j) => v + b2[j]));
  const dOut = outputGrad(out);
  const dW2 = matmulT(transpose(dOut), transpose(a));
  const dB2 = colSums(dOut);
  const dA = matmulT(dOut, transpose(w2));
  const dH = dA.map((row, i) => row.map((v, j) => (h[i][j] > 0 ? v : 0)));
  const dW1 = matmulT(transpose(dH), transpose(X));
  const dB1 = colSums(dH);
  const dX = matmulT(dH, transpose(W1));
  return { out, dW1, dB1, dW2, dB2, dX, hasNegative: h.flat().some((v) => v < 0) };
}

function buildNetwork(outFeatures: number, w2: Matrix, b2: number[]) {
  const fc1 = new Linear(2, 3), fc2 = new Linear(3, outFeatures);
  noGrad(() => {
    for (const [param, values] of [[fc1.weight, W1], [fc1.bias!, B1], [fc2.weight, w2], [fc2.bias!, b2]] as const) {
      using source = tensor(values as number[] | number[][], { dtype: 'float32' });
      param.copy_(source);
    }
  });
  return { model: new Sequential(fc1, new ReLU(), fc2), fc1, fc2 };
}

function assertGrad(actual: Tensor | null, expected: number[] | Matrix, what: string): void {
  assert.ok(actual !== null, `${what} has a gradient`);
  const want = expected.flat();
  const got = actual.toArray() as number[];
  assert.equal(got.length, want.length, what);
  got.forEach((g, i) =>
    assert.ok(Math.abs(g - want[i]) <= 1e-5 + 1e-5 * Math.abs(want[i]), `${what}[${i}]: ${g} vs ${want[i]}`)
  );
}

describe('gradients of a two-layer network', () => {
  it('with a mean-squared-error head equal hand-derived backpropagation', () => {
    const target: Matrix = [[1], [-0.5], [2]];
    const w2: Matrix = [[1.5, -0.5, 2]], b2 = [0.3];
    const ref = reference(
      w2,
      b2,
      (out) => out.map((row, i) => row.map((v, j) => (2 * (v - target[i][j])) / out.length)),
    );
    assert.ok(ref.hasNegative);
    const { model, fc1, fc2 } = buildNetwork(1, w2, b2);
    using x = tensor(X, { dtype: 'float32' }).requiresGrad_();
    using y = tensor(target, { dtype: 'float32' });
    using out = model.call(x);
    assertGrad(out, ref.out, 'output');
    using loss = mseLoss(out, y);
    loss.backward();
    assertGrad(fc1.weight.grad, ref.dW1, 'fc1.weight');
    assertGrad(fc1.bias!.grad, ref.dB1, 'fc1.bias');
    assertGrad(fc2.weight.grad, ref.dW2, 'fc2.weight');
    assertGrad(fc2.bias!.grad, ref.dB2, 'fc2.bias');
    assertGrad(x.grad, ref.dX, 'input');
    x.grad?.dispose();
    model.dispose();
  });

  it('with a cross-entropy head equal (softmax - onehot) / N backpropagated by hand', () => {
    const w2: Matrix = [[1.5, -0.5, 2], [-1, 1, 0.5]];
    const b2 = [0.3, -0.1];
    const labels = [1, 0, 1];
    const ref = reference(w2, b2, (out) =>
      out.map((row, i) => {
        const max = Math.max(...row);
        const exps = row.map((v) => Math.exp(v - max));
        const total = exps.reduce((s, v) => s + v, 0);
        return exps.map((e, j) => (e / total - (j === labels[i] ? 1 : 0)) / out.length);
      }));
    const { model, fc1, fc2 } = buildNetwork(2, w2, b2);
    using x = tensor(X, { dtype: 'float32' });
    using target = tensor(labels);
    const before = memoryStats().liveTensors;
    const logits = model.call(x);
    const loss = new CrossEntropyLoss().call(logits, target);
    loss.backward();
    logits.dispose();
    loss.dispose();
    assert.equal(memoryStats().liveTensors, before + 4, 'only the four parameter gradients remain');
    assertGrad(fc1.weight.grad, ref.dW1, 'fc1.weight');
    assertGrad(fc1.bias!.grad, ref.dB1, 'fc1.bias');
    assertGrad(fc2.weight.grad, ref.dW2, 'fc2.weight');
    assertGrad(fc2.bias!.grad, ref.dB2, 'fc2.bias');
    model.dispose();
  });
});
