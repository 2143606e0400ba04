// Learning-rate schedulers against PyTorch 1.13's sequences. torch is not installed on the build machine; the
// expected get_last_lr() values come from this transcription of torch/optim/lr_scheduler.py (1.13), float64 with
// the same operation order, run with /usr/bin/python3:
//   # PyTorch 1.13 lr_scheduler formulas, transcribed (float64, same operation order); prints get_last_lr() after
//   # construction and after each step().
//   import math, json
//   def run(get_lr, base, n):
//       st = {'lr': list(base), 'e': -1, 'count': 0}
//       out = []
//       for _ in range(n + 1):
//           st['count'] += 1; st['e'] += 1
//           st['lr'] = get_lr(st)
//           out.append(list(st['lr']))
//       return out
//   def steplr(step, gamma): return lambda s: s['lr'] if s['e'] == 0 or s['e'] % step != 0 else [l * gamma for l in s['lr']]
//   def multistep(ms, gamma):
//       from collections import Counter; c = Counter(ms)
//       return lambda s: s['lr'] if s['e'] not in c else [l * gamma ** c[s['e']] for l in s['lr']]
//   def explr(gamma): return lambda s: s['lr'] if s['e'] == 0 else [l * gamma for l in s['lr']]
//   def cosine(base, T, eta):
//       def f(s):
//           e = s['e']
//           if e == 0: return s['lr']
//           if s['count'] == 1 and e > 0: return [eta + (b - eta) * (1 + math.cos(e * math.pi / T)) / 2 for b in base]
//           if (e - 1 - T) % (2 * T) == 0: return [l + (b - eta) * (1 - math.cos(math.pi / T)) / 2 for l, b in zip(s['lr'], base)]
//           return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (l - eta) + eta for l in s['lr']]
//       return f
//   def lam(base, fns): return lambda s: [b * fn(s['e']) for b, fn in zip(base, fns)]
//   def onecycle(max_lr, total, pct=0.3, anneal='cos', div=25., fdiv=1e4, three=False, maxm=0.95, basem=0.85):
//       g = {'initial_lr': max_lr / div, 'max_lr': max_lr}; g['min_lr'] = g['initial_lr'] / fdiv
//       g['max_momentum'] = maxm; g['base_momentum'] = basem
//       if three:
//           ph = [dict(end=float(pct * total) - 1, sl='initial_lr', el='max_lr', sm='max_momentum', em='base_momentum'),
//                 dict(end=float(2 * pct * total) - 2, sl='max_lr', el='initial_lr', sm='base_momentum', em='max_momentum'),
//                 dict(end=total - 1, sl='initial_lr', el='min_lr', sm='max_momentum', em='max_momentum')]
//       else:
//           ph = [dict(end=float(pct * total) - 1, sl='initial_lr', el='max_lr', sm='max_momentum', em='base_momentum'),
//                 dict(end=total - 1, sl='max_lr', el='min_lr', sm='base_momentum', em='max_momentum')]
//       def an(a, b, p):
//           if anneal == 'linear': return (b - a) * p + a
//           c = math.cos(math.pi * p) + 1; return b + (a - b) / 2.0 * c
//       lrs, moms = [], []
//       for step in range(total):
//           start = 0
//           for i, p in enumerate(ph):
//               if step <= p['end'] or i == len(ph) - 1:
//                   pc = (step - start) / (p['end'] - start)
//                   lrs.append(an(g[p['sl']], g[p['el']], pc)); moms.append(an(g[p['sm']], g[p['em']], pc)); break
//               start = p['end']
//       return lrs, moms
//   def plateau(lr, metrics, mode='min', factor=0.1, patience=10, threshold=1e-4, threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8):
//       best = math.inf if mode == 'min' else -math.inf; bad = 0; cd = 0; out = []
//       def better(a, best):
//           if mode == 'min' and threshold_mode == 'rel': return a < best * (1. - threshold)
//           if mode == 'min': return a < best - threshold
//           if threshold_mode == 'rel': return a > best * (threshold + 1.)
//           return a > best + threshold
//       for m in metrics:
//           if better(m, best): best = m; bad = 0
//           else: bad += 1
//           if cd > 0: cd -= 1; bad = 0
//           if bad > patience:
//               new = max(lr * factor, min_lr)
//               if lr - new > eps: lr = new
//               cd = cooldown; bad = 0
//           out.append(lr)
//       return out
//   R = {
//    'step': run(steplr(3, 0.5), [0.1], 10),
//    'multistep': run(multistep([2, 5, 5, 8], 0.1), [0.1], 10),
//    'exp': run(explr(0.9), [0.1], 8),
//    'cosine': run(cosine([0.1], 5, 0.001), [0.1], 16),
//    'lambda': run(lam([0.1, 0.02], [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)]), [0.1, 0.02], 5),
//    'onecycle': onecycle(0.1, 10),
//    'onecycle linear three': onecycle(0.2, 12, pct=0.25, anneal='linear', three=True, div=10., fdiv=100.),
//    'plateau': plateau(0.1, [1, 0.9, 0.9, 0.9, 0.9, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85], patience=2, cooldown=1, min_lr=0.0005),
//    'plateau max abs': plateau(1.0, [1, 2, 2.05, 2.05, 3, 3, 3.1], mode='max', threshold_mode='abs', threshold=0.1, patience=1, factor=0.5),
//   }
//   for k, v in R.items(): print(k + '|' + json.dumps(v))
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Tensor, tensor } from '../../mod.ts';
import {
  Adam,
  CosineAnnealingLR,
  ExponentialLR,
  LambdaLR,
  type LRScheduler,
  MultiStepLR,
  OneCycleLR,
  ReduceLROnPlateau,
  SGD,
  StepLR,
} from '../../core/optim/mod.ts';

const EXPECTED = {
  'step': [[0.1], [0.1], [0.1], [0.05], [0.05], [0.05], [0.025], [0.025], [0.025], [0.0125], [0.0125]],
  'multistep': [
    [0.1],
    [0.1],
    [0.010000000000000002],
    [0.010000000000000002],
    [0.010000000000000002],
    [0.00010000000000000005],
    [0.00010000000000000005],
    [0.00010000000000000005],
    [1.0000000000000006e-05],
    [1.0000000000000006e-05],
    [1.0000000000000006e-05],
  ],
  'exp': [
    [0.1],
    [0.09000000000000001],
    [0.08100000000000002],
    [0.07290000000000002],
    [0.06561000000000002],
    [0.05904900000000002],
    [0.05314410000000002],
    [0.04782969000000002],
    [0.043046721000000024],
  ],
  'cosine': [
    [0.1],
    [0.0905463412215599],
    [0.06579634122155989],
    [0.035203658778440096],
    [0.010453658778440105],
    [0.001],
    [0.010453658778440102],
    [0.03520365877844012],
    [0.06579634122155993],
    [0.09054634122155995],
    [0.10000000000000005],
    [0.09054634122155998],
    [0.06579634122155995],
    [0.03520365877844014],
    [0.010453658778440116],
    [0.001],
    [0.010453658778440102],
  ],
  'lambda': [[0.1, 0.02], [0.095, 0.01], [0.09025, 0.006666666666666666], [0.0857375, 0.005], [0.081450625, 0.004], [
    0.07737809374999999,
    0.003333333333333333,
  ]],
  'onecycle': [[
    0.0040000000000000036,
    0.052000000000000005,
    0.1,
    0.09504846320134738,
    0.0811745653949763,
    0.06112620219362893,
    0.03887419780637107,
    0.0188258346050237,
    0.004951936798652629,
    4e-07,
  ], [
    0.95,
    0.8999999999999999,
    0.85,
    0.854951556604879,
    0.8688255099070633,
    0.8888739533021842,
    0.9111260466978157,
    0.9311744900929366,
    0.945048443395121,
    0.95,
  ]],
  'onecycle linear three': [[
    0.02,
    0.11000000000000001,
    0.2,
    0.11,
    0.01999999999999999,
    0.017171428571428574,
    0.014342857142857143,
    0.011514285714285715,
    0.008685714285714286,
    0.005857142857142856,
    0.003028571428571429,
    0.0001999999999999988,
  ], [0.95, 0.8999999999999999, 0.85, 0.8999999999999999, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]],
  'plateau': [
    0.1,
    0.1,
    0.1,
    0.1,
    0.010000000000000002,
    0.010000000000000002,
    0.010000000000000002,
    0.010000000000000002,
    0.0010000000000000002,
    0.0010000000000000002,
    0.0010000000000000002,
    0.0010000000000000002,
  ],
  'plateau max abs': [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25],
} as const;

/** Equal up to a couple of float64 ulps (libm's cos may round differently from V8's/JSC's). */
function assertClose(actual: readonly number[], expected: readonly number[], what: string): void {
  assert.equal(actual.length, expected.length, what);
  // A few ulps: the closed forms call Math.cos/Math.pow, which V8 (Node 24) rounds differently from glibc (Python).
  actual.forEach((a, i) => {
    if (Math.abs(a - expected[i]) > 2e-15 * Math.abs(expected[i]) + 1e-18) {
      assert.fail(`${what}[${i}]: got ${a}, expected ${expected[i]}`);
    }
  });
}

function param(): Tensor {
  return tensor([1], { dtype: 'float32' }).requiresGrad_();
}

/** getLastLr() after construction, then after each of `n` steps. */
function sequence(scheduler: LRScheduler, n: number): number[][] {
  const out = [scheduler.getLastLr()];
  for (let i = 0; i < n; i++) {
    scheduler.step();
    out.push(scheduler.getLastLr());
  }
  return out;
}

describe('epoch schedulers follow PyTorch 1.13', () => {
  const cases: Array<[string, () => LRScheduler, number, keyof typeof EXPECTED]> = [
    ['StepLR(step_size=3, gamma=0.5)', () => new StepLR(new SGD([param()], 0.1), 3, { gamma: 0.5 }), 10, 'step'],
    [
      'MultiStepLR([2, 5, 5, 8]) with a repeated milestone',
      () => new MultiStepLR(new SGD([param()], 0.1), [2, 5, 5, 8]),
      10,
      'multistep',
    ],
    ['ExponentialLR(0.9)', () => new ExponentialLR(new SGD([param()], 0.1), 0.9), 8, 'exp'],
    [
      'CosineAnnealingLR(T_max=5, eta_min=1e-3), past T_max and back',
      () => new CosineAnnealingLR(new SGD([param()], 0.1), 5, { etaMin: 0.001 }),
      16,
      'cosine',
    ],
    [
      'LambdaLR with one function per group',
      () =>
        new LambdaLR(new SGD([{ params: [param()] }, { params: [param()], lr: 0.02 }], 0.1), [
          (e) => 0.95 ** e,
          (e) => 1 / (e + 1),
        ]),
      5,
      'lambda',
    ],
  ];
  for (const [name, make, n, key] of cases) {
    it(name, () => {
      const scheduler = make();
      const got = sequence(scheduler, n);
      const expected = EXPECTED[key] as unknown as number[][];
      got.forEach((lrs, i) => assertClose(lrs, expected[i], `${name} epoch ${i}`));
      assert.equal(scheduler.lastEpoch, n);
      assert.deepEqual(scheduler.optimizer.paramGroups.map((g) => g.lr), got[n]);
    });
  }

  it('the optimizer steps with the scheduled rate, and two schedulers on one optimizer chain', () => {
    const p = tensor([0], { dtype: 'float64' }).requiresGrad_();
    p.grad = tensor([1], { dtype: 'float64' });
    const sgd = new SGD([p], 0.1);
    const exp = new ExponentialLR(sgd, 0.9);
    const step = new StepLR(sgd, 2, { gamma: 0.5 });
    let expected = 0;
    for (let epoch = 0; epoch < 6; epoch++) {
      const lr = 0.1 * 0.9 ** epoch * 0.5 ** Math.floor(epoch / 2);
      assertClose([sgd.paramGroups[0].lr], [lr], `lr at epoch ${epoch}`);
      sgd.step();
      expected -= sgd.paramGroups[0].lr;
      assert.equal(p.item(), expected);
      exp.step();
      step.step();
    }
    assert.deepEqual(step.getLastLr(), sgd.paramGroups.map((g) => g.lr));
    p.grad.dispose();
    p.dispose();
  });

  it('step(epoch) jumps with the closed form', () => {
    const step = new StepLR(new SGD([param()], 0.1), 3, { gamma: 0.5 });
    step.step(7);
    assert.deepEqual(step.getLastLr(), [0.1 * 0.5 ** 2]);
    const multi = new MultiStepLR(new SGD([param()], 0.1), [2, 5, 5]);
    multi.step(6);
    assert.deepEqual(multi.getLastLr(), [0.1 * 0.1 ** 3]);
    const exp = new ExponentialLR(new SGD([param()], 0.1), 0.9);
    exp.step(4);
    assert.deepEqual(exp.getLastLr(), [0.1 * 0.9 ** 4]);
    const cos = new CosineAnnealingLR(new SGD([param()], 0.1), 10);
    cos.step(5);
    assertClose(cos.getLastLr(), [0.1 * (1 + Math.cos(Math.PI / 2)) / 2], 'cosine closed form');
  });

  it('a second scheduler resumes from lastEpoch and initialLr, and a state dict restores it', () => {
    const optimizer = new SGD([param()], 0.1);
    const first = new StepLR(optimizer, 2, { gamma: 0.5 });
    for (let i = 0; i < 5; i++) first.step();
    const state = first.stateDict();
    assert.deepEqual(state, {
      base_lrs: [0.1],
      last_epoch: 5,
      step_size: 2,
      gamma: 0.5,
      _step_count: 6,
      _last_lr: [0.025],
    });
    assert.equal((optimizer.paramGroups[0] as unknown as { initialLr: number }).initialLr, 0.1);
    const resumed = new StepLR(optimizer, 2, { gamma: 0.5, lastEpoch: 5 });
    // Its initial step took epoch 6 (and halved lr) as PyTorch's does; restoring the optimizer's lr and the
    // scheduler's state undoes that.
    assert.equal(resumed.lastEpoch, 6);
    assert.deepEqual(resumed.getLastLr(), [0.0125]);
    optimizer.paramGroups[0].lr = 0.025;
    resumed.loadStateDict(state);
    resumed.step();
    assert.deepEqual(resumed.getLastLr(), [0.0125]);
    assert.deepEqual(resumed.stateDict(), { ...state, last_epoch: 6, _step_count: 7, _last_lr: [0.0125] });
    assert.throws(() => resumed.loadStateDict({ stepSize: 3 }), /unexpected key 'stepSize'/);
    // PyTorch's own keys load too.
    resumed.loadStateDict({ ...state, verbose: false, _get_lr_called_within_step: false });
    assert.equal(resumed.lastEpoch, 5);
  });

  it('MultiStepLR and LambdaLR state dicts have PyTorch structure', () => {
    const multi = new MultiStepLR(new SGD([param()], 0.1), [3, 1, 3]);
    assert.deepEqual(multi.stateDict().milestones, { 1: 1, 3: 2 });
    const lambda = new LambdaLR(new SGD([param()], 0.1), (e) => 1 / (e + 1));
    lambda.step();
    const state = lambda.stateDict();
    assert.deepEqual(state.lr_lambdas, [null]);
    const other = new LambdaLR(new SGD([param()], 0.1), (e) => 1 / (e + 1));
    other.loadStateDict(state);
    other.step();
    assert.deepEqual(other.getLastLr(), [0.1 / 3]);
  });

  it("rejects bad arguments with PyTorch's errors", () => {
    const sgd = new SGD([param()], 0.1);
    assert.throws(() => new StepLR({} as never, 2), /^TypeError: dict is not an Optimizer$/);
    assert.throws(
      () => new StepLR(new SGD([param()], 0.1), 2, { lastEpoch: 3 }),
      /KeyError: param 'initial_lr' is not specified in param_groups\[0\] when resuming an optimizer/,
    );
    assert.throws(() => new StepLR(sgd, 0), /step_size must be a positive integer, got 0/);
    assert.throws(() => new StepLR(sgd, 1.5), /argument 'stepSize' must be int, not float/);
    assert.throws(() => new StepLR(sgd, 2, { gama: 0.1 } as never), /unexpected keyword argument 'gama'/);
    assert.throws(() => new ExponentialLR(sgd, '0.9' as never), /argument 'gamma' must be float, not str/);
    assert.throws(() => new LambdaLR(sgd, [(e) => e, (e) => e]), /Expected 1 lr_lambdas, but got 2/);
    assert.throws(() => new LambdaLR(sgd, 3 as never), /lr_lambda should be a function, but got int/);
    assert.throws(() => new MultiStepLR(sgd, [1.5]), /argument 'milestones' must be int/);
    assert.throws(() => new CosineAnnealingLR(sgd, 0), /T_max must be positive/);
  });
});

describe('OneCycleLR follows PyTorch 1.13', () => {
  it('cos annealing of lr and of SGD momentum, per step', () => {
    const optimizer = new SGD([param()], 0.5, { momentum: 0.9 });
    const scheduler = new OneCycleLR(optimizer, 0.1, { totalSteps: 10 });
    const [lrs, momenta] = EXPECTED.onecycle as unknown as number[][];
    for (let i = 0; i < 10; i++) {
      if (i > 0) scheduler.step();
      assertClose(scheduler.getLastLr(), [lrs[i]], `lr at ${i}`);
      assertClose([optimizer.paramGroups[0].momentum], [momenta[i]], `momentum at ${i}`);
    }
    const state = scheduler.stateDict();
    assert.deepEqual(state.schedule_phases, [
      {
        end_step: 2,
        start_lr: 'initial_lr',
        end_lr: 'max_lr',
        start_momentum: 'max_momentum',
        end_momentum: 'base_momentum',
      },
      {
        end_step: 9,
        start_lr: 'max_lr',
        end_lr: 'min_lr',
        start_momentum: 'base_momentum',
        end_momentum: 'max_momentum',
      },
    ]);
    assert.equal(state.total_steps, 10);
    assert.deepEqual(optimizer.stateDict().param_groups[0].max_lr, 0.1);
    const resumed = new OneCycleLR(optimizer, 0.1, { totalSteps: 10, lastEpoch: 9 });
    resumed.loadStateDict(state);
    assert.deepEqual(resumed.stateDict(), state);
    assert.throws(() => {
      scheduler.step();
      scheduler.step();
    }, /Tried to step 11 times. The specified number of total steps is 10/);
  });

  it("three phases, linear annealing, epochs × stepsPerEpoch, and Adam's beta1 as the momentum", () => {
    const optimizer = new Adam([param()], { betas: [0.9, 0.99] });
    const scheduler = new OneCycleLR(optimizer, 0.2, {
      epochs: 3,
      stepsPerEpoch: 4,
      pctStart: 0.25,
      annealStrategy: 'linear',
      threePhase: true,
      divFactor: 10,
      finalDivFactor: 100,
    });
    const [lrs, momenta] = EXPECTED['onecycle linear three'] as unknown as number[][];
    for (let i = 0; i < 12; i++) {
      if (i > 0) scheduler.step();
      assertClose(scheduler.getLastLr(), [lrs[i]], `lr at ${i}`);
      assertClose([optimizer.paramGroups[0].betas[0]], [momenta[i]], `beta1 at ${i}`);
      assert.equal(optimizer.paramGroups[0].betas[1], 0.99);
    }
  });

  it("rejects bad arguments with PyTorch's messages", () => {
    const sgd = () => new SGD([param()], 0.1, { momentum: 0.9 });
    assert.throws(
      () => new OneCycleLR(sgd(), 0.1),
      /You must define either total_steps OR \(epochs AND steps_per_epoch\)/,
    );
    assert.throws(
      () => new OneCycleLR(sgd(), 0.1, { totalSteps: 0 }),
      /Expected positive integer total_steps, but got 0/,
    );
    assert.throws(
      () => new OneCycleLR(sgd(), 0.1, { epochs: 2 }),
      /Expected positive integer steps_per_epoch, but got None/,
    );
    assert.throws(
      () => new OneCycleLR(sgd(), 0.1, { totalSteps: 5, pctStart: 1.5 }),
      /Expected float between 0 and 1 pct_start, but got 1.5/,
    );
    assert.throws(
      () => new OneCycleLR(sgd(), 0.1, { totalSteps: 5, annealStrategy: 'exp' as never }),
      /anneal_strategy must by one of 'cos' or 'linear', instead got exp/,
    );
    assert.throws(() => new OneCycleLR(sgd(), [0.1, 0.2], { totalSteps: 5 }), /expected 1 values for max_lr, got 2/);
  });
});

describe('ReduceLROnPlateau follows PyTorch 1.13', () => {
  it('min mode, relative threshold, patience, cooldown and min_lr', () => {
    const optimizer = new SGD([param()], 0.1);
    const scheduler = new ReduceLROnPlateau(optimizer, { patience: 2, cooldown: 1, minLr: 0.0005 });
    const metrics = [1, 0.9, 0.9, 0.9, 0.9, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85];
    const got = metrics.map((m, i) => {
      scheduler.step(i % 2 === 0 ? m : tensor([m], { dtype: 'float64' }));
      return scheduler.getLastLr()[0];
    });
    assertClose(got, EXPECTED.plateau as unknown as number[], 'plateau');
    assert.equal(scheduler.lastEpoch, 12);
  });

  it('max mode with an absolute threshold; a state dict restores the counters', () => {
    const optimizer = new SGD([param()], 1);
    const options = { mode: 'max', thresholdMode: 'abs', threshold: 0.1, patience: 1, factor: 0.5 } as const;
    const scheduler = new ReduceLROnPlateau(optimizer, options);
    const got = [1, 2, 2.05, 2.05, 3, 3].map((m) => {
      scheduler.step(m);
      return scheduler.getLastLr()[0];
    });
    const state = scheduler.stateDict();
    assert.equal(state.num_bad_epochs, 1);
    assert.equal(state.best, 3);
    const copy = new ReduceLROnPlateau(optimizer, options);
    copy.loadStateDict(state);
    copy.step(3.1);
    got.push(copy.getLastLr()[0]);
    assertClose(got, EXPECTED['plateau max abs'] as unknown as number[], 'plateau max abs');
  });

  it('a state dict survives JSON (infinities become null)', () => {
    const scheduler = new ReduceLROnPlateau(new SGD([param()], 0.1), { mode: 'max', patience: 0 });
    const json = JSON.parse(JSON.stringify(scheduler.stateDict()));
    assert.equal(json.best, null);
    const copy = new ReduceLROnPlateau(new SGD([param()], 0.1), { mode: 'max', patience: 0 });
    copy.loadStateDict(json);
    assert.equal(copy.best, -Infinity);
    assert.equal(copy.modeWorse, -Infinity);
    copy.step(-5);
    assert.equal(copy.best, -5);
    assert.deepEqual(copy.getLastLr(), [0.1]);
  });

  it("rejects bad arguments with PyTorch's messages", () => {
    const sgd = new SGD([param()], 0.1);
    assert.throws(() => new ReduceLROnPlateau(sgd, { factor: 1 }), /Factor should be < 1.0./);
    assert.throws(() => new ReduceLROnPlateau(sgd, { mode: 'mid' as never }), /mode mid is unknown!/);
    assert.throws(() => new ReduceLROnPlateau(sgd, { thresholdMode: 'x' as never }), /threshold mode x is unknown!/);
    assert.throws(() => new ReduceLROnPlateau(sgd, { minLr: [0, 0] }), /expected 1 min_lrs, got 2/);
    assert.throws(() => new ReduceLROnPlateau(null as never), /NoneType is not an Optimizer/);
    const scheduler = new ReduceLROnPlateau(sgd);
    assert.throws(() => scheduler.step('0.5' as never), /argument 'metrics' must be a number/);
  });
});
