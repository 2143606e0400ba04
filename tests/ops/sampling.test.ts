// randperm, bernoulli and multinomial: PyTorch's algorithms on the CPU generator (randperm's swaps; bernoulli's
// per-element uniform, which must agree with rand() for the same seed), argument errors, and statistics of
// multinomial with and without replacement.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as S from '../../mod.ts';
import { Generator, manualSeed, memoryStats, rand, scope, tensor } from '../../mod.ts';
import { values } from './_helpers.ts';

function leakFree(fn: () => void) {
  const before = memoryStats().liveTensors;
  scope(fn);
  assert.equal(memoryStats().liveTensors, before, 'leaked tensors');
}

describe('randperm', () => {
  it("is PyTorch's swap sequence on the generator's draws, a permutation, for every size", () =>
    leakFree(() => {
      for (const n of [0, 1, 2, 7, 100]) {
        manualSeed(123);
        const got = values(S.randperm(n));
        const g = new Generator();
        g.manualSeed(123);
        const want = Array.from({ length: n }, (_, i) => i);
        for (let i = 0; i < n - 1; i++) {
          const z = g.random() % (n - i);
          [want[i], want[z + i]] = [want[z + i], want[i]];
        }
        assert.deepEqual(got, want);
        assert.deepEqual([...got].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
      }
      const g = new Generator();
      g.manualSeed(5);
      const a = S.randperm(10, { generator: g });
      g.manualSeed(5);
      assert.deepEqual(S.randperm(10, { generator: g }).tolist(), a.tolist());
      assert.equal(a.dtype.name, 'int64');
      assert.equal(S.randperm(4, { dtype: 'float32' }).dtype.name, 'float32');
      assert.throws(() => S.randperm(-1), { message: 'n must be non-negative, got-1' });
      assert.throws(() => S.randperm(300, { dtype: 'uint8' }), {
        message: "n is too large for result tensor type: 'Byte'",
      });
    }));
});

describe('bernoulli', () => {
  for (const dtype of ['float32', 'float64'] as const) {
    it(`${dtype} probabilities: u < p with the same uniforms rand() draws`, () =>
      leakFree(() => {
        manualSeed(7);
        const p = rand([5, 9], { dtype });
        manualSeed(99);
        const u = values(rand([5, 9], { dtype }));
        manualSeed(99);
        const b = S.bernoulli(p);
        assert.equal(b.dtype.name, dtype);
        const pv = values(p);
        assert.deepEqual(values(b), u.map((x, i) => (x < pv[i] ? 1 : 0)));
        assert.deepEqual(values(p.bernoulli()).every((v) => v === 0 || v === 1), true);
      }));
  }
  it('edge probabilities, scalar p, errors', () =>
    leakFree(() => {
      assert.deepEqual(S.bernoulli(tensor([0, 1, 0, 1], { dtype: 'float32' })).tolist(), [0, 1, 0, 1]);
      manualSeed(3);
      const s = values(S.bernoulli(S.zeros([4000]), 0.25));
      const mean = s.reduce((a, b) => a + b, 0) / s.length;
      assert.ok(Math.abs(mean - 0.25) < 0.03, `mean ${mean}`);
      assert.throws(() => S.bernoulli(tensor([1.5])), {
        message: 'Expected p_in >= 0 && p_in <= 1 to be true, but got false.',
      });
      assert.throws(() => S.bernoulli(tensor([1])), {
        message: `"bernoulli_tensor_cpu_p_" not implemented for 'Long'`,
      });
      assert.throws(() => S.bernoulli(tensor([0.5]), 2), {
        message: 'bernoulli_ expects p to be in [0, 1], but got p=2',
      });
    }));
});

describe('multinomial', () => {
  it('with replacement: frequencies follow the normalised weights; zero weights never drawn', () =>
    leakFree(() => {
      manualSeed(11);
      const w = tensor([[1, 0, 3], [0, 2, 2]], { dtype: 'float64' });
      const s = S.multinomial(w, 6000, true);
      assert.deepEqual([...s.shape], [2, 6000]);
      const rows = s.tolist() as number[][];
      const freq = rows.map((r) => [0, 1, 2].map((k) => r.filter((x) => x === k).length / r.length));
      assert.equal(freq[0][1], 0);
      assert.equal(freq[1][0], 0);
      assert.ok(Math.abs(freq[0][2] - 0.75) < 0.03, `freq ${freq[0]}`);
      assert.ok(Math.abs(freq[1][1] - 0.5) < 0.03, `freq ${freq[1]}`);
      manualSeed(11);
      assert.deepEqual(S.multinomial(w, 6000, true).tolist(), rows);
    }));
  it('without replacement: distinct categories, all of them when n = categories, first draws by weight', () =>
    leakFree(() => {
      manualSeed(2);
      const w = tensor([0.1, 5, 0, 1, 2], { dtype: 'float32' });
      const all = values(w.multinomial(4));
      assert.equal(new Set(all).size, 4);
      assert.ok(!all.includes(2));
      let firstIsHeaviest = 0;
      for (let i = 0; i < 400; i++) if (values(S.multinomial(w, 1))[0] === 1) firstIsHeaviest++;
      const want = 5 / 8.1;
      assert.ok(Math.abs(firstIsHeaviest / 400 - want) < 0.08, `${firstIsHeaviest}`);
    }));
  it("PyTorch's errors", () =>
    leakFree(() => {
      const w = tensor([0.5, 0.5]);
      assert.throws(() => S.multinomial(w, 3), {
        message: 'cannot sample n_sample > prob_dist.size(-1) samples without replacement',
      });
      assert.throws(() => S.multinomial(w, 0), { message: 'cannot sample n_sample <= 0 samples' });
      assert.throws(() => S.multinomial(tensor([1, 2]), 1), {
        message: 'multinomial only supports floating-point dtypes for input, got: Long',
      });
      assert.throws(() => S.multinomial(tensor([[[0.5]]]), 1), { message: 'prob_dist must be 1 or 2 dim' });
      assert.throws(() => S.multinomial(tensor([0.5, -1]), 1), {
        message: 'probability tensor contains either `inf`, `nan` or element < 0',
      });
      assert.throws(() => S.multinomial(tensor([0, 0], { dtype: 'float32' }), 1), {
        message: 'invalid multinomial distribution (sum of probabilities <= 0)',
      });
    }));
});
