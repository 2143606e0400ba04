// Layers: shapes, parameter counts, PyTorch's initialisation (bit for bit for a seed), and forward values and
// gradients against PyTorch 1.13, from:
//   torch.manual_seed(0); l = nn.Linear(4, 3); e = nn.Embedding(5, 2)
//   ln = nn.LayerNorm(4) with weight [1, 2, 0.5, -1] and bias [0, 0.1, -0.2, 0.3] applied to X below;
//   (ln(x) * G).sum().backward()
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { manualSeed, memoryStats, noGrad, ones, type Tensor, tensor, zeros } from '../../mod.ts';
import { Dropout, Embedding, LayerNorm, Linear, ReLU, Sequential } from '../../core/nn/mod.ts';

function assertClose(actual: Tensor, expected: readonly number[], tol = 1e-6): void {
  const got = actual.toArray() as number[];
  assert.equal(got.length, expected.length);
  got.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol, `element ${i}: ${a} vs ${expected[i]}`));
}

const SEED0_LINEAR_4_3 = {
  weight: [
    -0.003743410110473633,
    0.26822179555892944,
    -0.4115225672721863,
    -0.3679695129394531,
    -0.19257718324661255,
    0.13407868146896362,
    -0.009906589984893799,
    0.39644473791122437,
    -0.04437202215194702,
    0.1323062777519226,
    -0.15110653638839722,
    -0.09828269481658936,
  ],
  bias: [-0.4776742458343506, -0.33114105463027954, -0.20611155033111572],
  embedding: [
    0.6035430431365967,
    0.8109818696975708,
    -0.04508150741457939,
    0.8796946406364441,
    1.0482062101364136,
    -0.04450046643614769,
    -0.7228844165802002,
    2.866340160369873,
    -0.5655086040496826,
    0.16043701767921448,
  ],
};

describe('Linear', () => {
  it("has PyTorch's shapes, parameter count and repr", () => {
    const fc = new Linear(64, 10);
    assert.deepEqual(fc.weight.shape, [10, 64]);
    assert.deepEqual(fc.bias?.shape, [10]);
    assert.equal(fc.parameters().reduce((n, p) => n + p.numel, 0), 650);
    assert.equal(String(fc), 'Linear(in_features=64, out_features=10, bias=True)');
    const noBias = new Linear(3, 2, { bias: false, dtype: 'float64' });
    assert.equal(noBias.bias, null);
    assert.deepEqual(noBias.namedParameters().map(([n]) => n), ['weight']);
    assert.equal(noBias.weight.dtype.name, 'float64');
    fc.dispose();
    noBias.dispose();
  });

  it('initialises from U(-1/sqrt(in), 1/sqrt(in))', () => {
    const fc = new Linear(100, 50);
    const bound = 1 / Math.sqrt(100);
    for (const p of fc.parameters()) {
      const values = p.toArray() as number[];
      assert.ok(values.every((v) => Math.abs(v) <= bound));
    }
    const w = fc.weight.toArray() as number[];
    assert.ok(Math.max(...w) > 0.95 * bound && Math.min(...w) < -0.95 * bound);
    fc.dispose();
  });

  it("draws PyTorch's initial weights for a seed, weight then bias", () => {
    manualSeed(0);
    const fc = new Linear(4, 3);
    const emb = new Embedding(5, 2); // continues the same stream
    assert.deepEqual(fc.weight.toArray(), SEED0_LINEAR_4_3.weight);
    assert.deepEqual(fc.bias!.toArray(), SEED0_LINEAR_4_3.bias);
    assert.deepEqual(emb.weight.toArray(), SEED0_LINEAR_4_3.embedding);
    fc.dispose();
    emb.dispose();
  });

  it('computes x Wᵀ + b over the last dim', () => {
    const fc = new Linear(2, 3);
    noGrad(() => {
      using w = tensor([[1, 2], [3, 4], [5, 6]], { dtype: 'float32' });
      using b = tensor([0.5, -0.5, 1], { dtype: 'float32' });
      fc.weight.copy_(w);
      fc.bias!.copy_(b);
    });
    using x = tensor([[[1, 1]], [[2, -1]]], { dtype: 'float32' });
    using y = fc.call(x);
    assert.deepEqual(y.shape, [2, 1, 3]);
    assert.deepEqual(y.toArray(), [3.5, 6.5, 12, 0.5, 1.5, 5]);
    fc.dispose();
  });
});

describe('Sequential and ReLU', () => {
  it('chains layers, names children by index and prints like PyTorch', () => {
    const mlp = new Sequential(new Linear(64, 128), new ReLU(), new Linear(128, 10));
    assert.equal(mlp.length, 3);
    assert.ok(mlp.at(1) instanceof ReLU);
    assert.deepEqual(mlp.namedParameters().map(([n]) => n), ['0.weight', '0.bias', '2.weight', '2.bias']);
    assert.equal(mlp.parameters().reduce((n, p) => n + p.numel, 0), 64 * 128 + 128 + 128 * 10 + 10);
    assert.equal(
      String(mlp),
      'Sequential(\n  (0): Linear(in_features=64, out_features=128, bias=True)\n  (1): ReLU()\n' +
        '  (2): Linear(in_features=128, out_features=10, bias=True)\n)',
    );
    using x = zeros([5, 64]);
    using y = mlp.call(x);
    assert.deepEqual(y.shape, [5, 10]);
    mlp.dispose();
  });

  it('ReLU clamps negatives', () => {
    using x = tensor([-2, 0, 3], { dtype: 'float32' });
    using y = new ReLU().call(x);
    assert.deepEqual(y.toArray(), [0, 0, 3]);
  });
});

describe('Dropout', () => {
  it('in training zeroes about p of the elements and scales the rest by 1/(1-p)', () => {
    const drop = new Dropout(0.25);
    using x = ones([100, 100]);
    using y = drop.call(x);
    const values = y.toArray() as number[];
    const zerosCount = values.filter((v) => v === 0).length;
    assert.ok(values.every((v) => v === 0 || Math.abs(v - 1 / 0.75) < 1e-6));
    assert.ok(Math.abs(zerosCount / values.length - 0.25) < 0.03, `zeroed ${zerosCount}`);
    assert.equal(String(drop), 'Dropout(p=0.25, inplace=False)');
  });

  it('is the identity in evaluation mode and for p = 0; p = 1 zeroes everything', () => {
    using x = ones([3]);
    assert.equal(new Dropout(0.5).eval().call(x), x);
    assert.equal(new Dropout(0).call(x), x);
    using y = new Dropout(1).call(x);
    assert.deepEqual(y.toArray(), [0, 0, 0]);
    assert.throws(() => new Dropout(1.5), /dropout probability has to be between 0 and 1, but got 1.5/);
  });

  it('leaves no temporaries behind', () => {
    const drop = new Dropout(0.5);
    using x = ones([10]);
    const before = memoryStats().liveTensors;
    const y = drop.call(x);
    assert.equal(memoryStats().liveTensors, before + 1);
    y.dispose();
  });
});

describe('LayerNorm', () => {
  const X = [[1, 2, 4, -1], [0.5, 0.5, 0.5, 3]];
  const G = [[1, -1, 2, 0.5], [0.3, 0.2, -0.7, 1]];

  it('starts as weight 1, bias 0, and prints like PyTorch', () => {
    const norm = new LayerNorm(4);
    assert.deepEqual(norm.weight!.toArray(), [1, 1, 1, 1]);
    assert.deepEqual(norm.bias!.toArray(), [0, 0, 0, 0]);
    assert.equal(String(norm), 'LayerNorm((4,), eps=1e-05, elementwise_affine=True)');
    const plain = new LayerNorm([2, 3], { elementwiseAffine: false });
    assert.deepEqual(plain.parameters(), []);
    using x = zeros([4, 3]);
    assert.throws(() => plain.call(x), /Given normalized_shape=\[2, 3\], expected input with shape \[\*, 2, 3\]/);
    norm.dispose();
  });

  it('normalises the last dims as PyTorch does', () => {
    const norm = new LayerNorm(4);
    noGrad(() => {
      using w = tensor([1, 2, 0.5, -1], { dtype: 'float32' });
      using b = tensor([0, 0.1, -0.2, 0.3], { dtype: 'float32' });
      norm.weight!.copy_(w);
      norm.bias!.copy_(b);
    });
    using x = tensor(X, { dtype: 'float32' }).requiresGrad_();
    using y = norm.call(x);
    assertClose(y, [
      -0.27734965085983276,
      0.654699444770813,
      0.493374228477478,
      1.6867482662200928,
      -0.5773477554321289,
      -1.0546954870224,
      -0.4886738657951355,
      -1.4320435523986816,
    ]);
    using g = tensor(G, { dtype: 'float32' });
    using weighted = y.mul(g);
    using loss = weighted.sum();
    loss.backward();
    assertClose(x.grad!, [
      0.6720394492149353,
      -1.0880639553070068,
      0.38402336835861206,
      0.032001182436943054,
      0.1693575382232666,
      0.26173317432403564,
      -0.43108421564102173,
      -6.496906280517578e-06,
    ], 2e-5);
    assertClose(norm.weight!.grad!, [-0.4505539834499359, -0.39281925559043884, 3.177640199661255, 1.0386693477630615]);
    assertClose(norm.bias!.grad!, [1.3, -0.8, 1.3, 1.5]);
    x.grad?.dispose();
    norm.dispose();
  });
});

describe('Embedding', () => {
  it('looks up rows for indices of any shape, and sums gradients per index', () => {
    const emb = new Embedding(4, 3);
    noGrad(() => {
      using w = tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], { dtype: 'float32' });
      emb.weight.copy_(w);
    });
    using indices = tensor([[1, 3], [1, 0]]);
    using y = emb.call(indices);
    assert.deepEqual(y.shape, [2, 2, 3]);
    assert.deepEqual(y.toArray(), [3, 4, 5, 9, 10, 11, 3, 4, 5, 0, 1, 2]);
    using loss = y.sum();
    loss.backward();
    assert.deepEqual(emb.weight.grad!.toArray(), [1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 1, 1]);
    assert.equal(String(emb), 'Embedding(4, 3)');
    using bad = tensor([4]);
    assert.throws(() => emb.call(bad), /index out of range in self/);
    emb.dispose();
  });
});
