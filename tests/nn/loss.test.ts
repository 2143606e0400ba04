// Loss modules against PyTorch 1.13 (torch.nn.functional.cross_entropy / nll_loss / mse_loss on the literals
// below, float32), with every reduction, class weights, label smoothing, ignore_index, and gradients.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logSoftmax, memoryStats, noGrad, type Tensor, tensor } from '../../mod.ts';
import { CrossEntropyLoss, MSELoss, mseLoss, NLLLoss } from '../../core/nn/mod.ts';

function assertClose(actual: Tensor, expected: readonly number[], tol = 1e-6): void {
  const got = actual.toArray() as number[];
  assert.equal(got.length, expected.length);
  got.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol, `element ${i}: ${a} vs ${expected[i]}`));
}

const LOGITS = [[2, 0.5, -1], [0.1, 1, 0.3], [-0.4, 0.2, 0.9]];
const TARGET = [0, 2, 1];

describe('CrossEntropyLoss', () => {
  it('matches PyTorch for each reduction', () => {
    using logits = tensor(LOGITS, { dtype: 'float32' });
    using target = tensor(TARGET);
    const cases: Array<['none' | 'mean' | 'sum', number[]]> = [
      ['none', [0.24131132662296295, 1.343513011932373, 1.2704806327819824]],
      ['mean', [0.9517683386802673]],
      ['sum', [2.8553049564361572]],
    ];
    for (const [reduction, expected] of cases) {
      using loss = new CrossEntropyLoss({ reduction }).call(logits, target);
      assertClose(loss, expected);
    }
  });

  it('matches PyTorch with class weights, label smoothing and ignore_index', () => {
    using logits = tensor(LOGITS, { dtype: 'float32' });
    using target = tensor(TARGET);
    const weighted = new CrossEntropyLoss({ weight: tensor([1, 2, 0.5], { dtype: 'float32' }) });
    using a = weighted.call(logits, target);
    assertClose(a, [0.9868654608726501]);
    weighted.dispose(); // the weight is the module's buffer
    using b = new CrossEntropyLoss({ labelSmoothing: 0.1 }).call(logits, target);
    assertClose(b, [0.9951016306877136]);
    using ignoring = tensor([0, -100, 1]);
    using c = new CrossEntropyLoss().call(logits, ignoring);
    assertClose(c, [0.7558959722518921]);
  });

  it("gives PyTorch's gradient of the logits", () => {
    using logits = tensor(LOGITS, { dtype: 'float32' }).requiresGrad_();
    using target = tensor(TARGET);
    using loss = new CrossEntropyLoss().call(logits, target);
    loss.backward();
    assertClose(logits.grad!, [
      -0.07146766036748886,
      0.058430131524801254,
      0.013037524186074734,
      0.07120976597070694,
      0.17514775693416595,
      -0.2463575303554535,
      0.05134987458586693,
      -0.23976777493953705,
      0.18841789662837982,
    ]);
    logits.grad?.dispose();
  });
});

describe('NLLLoss', () => {
  it('on log-probabilities equals cross-entropy on logits', () => {
    using logits = tensor(LOGITS, { dtype: 'float32' });
    using target = tensor(TARGET);
    using logProbs = logSoftmax(logits, 1);
    using mean = new NLLLoss().call(logProbs, target);
    assertClose(mean, [0.9517683386802673]);
    using sum = new NLLLoss({ reduction: 'sum' }).call(logProbs, target);
    assertClose(sum, [2.8553049564361572]);
  });
});

describe('MSELoss', () => {
  it('matches PyTorch for each reduction, with its gradient', () => {
    using a = tensor([1, 2, 3.5], { dtype: 'float32' }).requiresGrad_();
    using b = tensor([0.5, 2.5, 1], { dtype: 'float32' });
    noGrad(() => {
      using none = new MSELoss({ reduction: 'none' }).call(a, b);
      assertClose(none, [0.25, 0.25, 6.25]);
      using sum = new MSELoss({ reduction: 'sum' }).call(a, b);
      assertClose(sum, [6.75]);
    });
    const before = memoryStats().liveTensors;
    const loss = mseLoss(a, b);
    assertClose(loss, [2.25]);
    loss.backward();
    loss.dispose();
    assert.equal(memoryStats().liveTensors, before + 1, 'only the gradient is left');
    assertClose(a.grad!, [0.3333333432674408, -0.3333333432674408, 1.6666667461395264]);
    a.grad?.dispose();
    assert.throws(() => mseLoss(a, b, { reduction: 'avg' as 'mean' }), /avg is not a valid value for reduction/);
  });
});
