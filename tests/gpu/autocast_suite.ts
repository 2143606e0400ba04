// autocast on WebGPU tensors (AutocastWebGPU, PyTorch 1.13's CUDA op lists): result dtypes per op class, values
// against float64 references of the float16-rounded inputs, gradients through a region, nesting and
// `enabled: false`, the cast cache, the banned op. float16 on WebGPU is the backend's emulated layout (one f32 word
// rounded to float16 on store), so this runs on adapters without `shader-f16` (Deno's software adapter here).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gpuSkip } from './_gpu.ts';
import {
  addmm,
  atan2,
  autocast,
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  bmm,
  callOp,
  cat,
  conv2d,
  cosineSimilarity,
  crossEntropy,
  type DispatchKwargs,
  DispatchMode,
  dot,
  einsum,
  exp,
  float16,
  float32,
  float64,
  getAutocastDtype,
  isAutocastEnabled,
  klDiv,
  l1Loss,
  linear,
  log,
  logSoftmax,
  logsumexp,
  manualSeed,
  mm,
  mv,
  nllLoss,
  type OperatorHandle,
  pow,
  prod,
  rand,
  randn,
  relu,
  rsqrt,
  scatterAdd,
  softmax,
  softplus,
  sum,
  type Tensor,
  tensor,
  type TorchDispatchClass,
} from '../../mod.ts';
import { bfloat16 } from '../../core/tensor/dtype.ts';

const GPU = { deviceType: 'webgpu' } as const;
const gpu = (t: Tensor) => t.to({ device: 'webgpu' });
/** Values of a tensor (any device) as float64 numbers. */
const values = async (t: Tensor) => (await t.cpuAsync()).to(float64).reshape([-1]).toArray() as number[];
/** CPU values rounded to float16, as float64 numbers. */
const f16 = (t: Tensor) => t.to(float16).to(float64);

/** Asserts |actual - expected| <= rel * |expected| + abs elementwise. */
function assertClose(actual: number[], expected: number[], rel: number, abs: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  actual.forEach((a, i) =>
    assert.ok(Math.abs(a - expected[i]) <= rel * Math.abs(expected[i]) + abs, `${what}[${i}]: ${a} vs ${expected[i]}`)
  );
}

/** Counts `_to_copy` calls per source tensor (the casts autocast makes). */
class CastCounter extends DispatchMode {
  readonly sources: Tensor[] = [];
  override dispatch(op: OperatorHandle, _t: readonly TorchDispatchClass[], args: unknown[], kw: DispatchKwargs) {
    if (op.name === 'aten::_to_copy') this.sources.push(args[0] as Tensor);
    return callOp(op, args, kw);
  }
  count(t: Tensor): number {
    return this.sources.filter((s) => s === t).length;
  }
}

describe('autocast on WebGPU tensors (AutocastWebGPU, PyTorch 1.13 CUDA lists)', { skip: gpuSkip }, () => {
  it('result dtypes per op class', () => {
    manualSeed(40);
    const a = gpu(randn([3, 4])), b = gpu(randn([4, 5])), v = gpu(randn([4]));
    const h = gpu(randn([3, 4]).to(float16)), t = gpu(tensor([0, 1, 2]));
    autocast(GPU, () => {
      // lower precision
      assert.equal(mm(a, b).dtype, float16);
      assert.equal(a.matmul(b).dtype, float16);
      assert.equal(bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype, float16);
      assert.equal(addmm(gpu(randn([5])), a, b).dtype, float16);
      assert.equal(linear(a, b.t()).dtype, float16);
      assert.equal(mv(a, v).dtype, float16);
      assert.equal(einsum('ij,jk->ik', [a, b]).dtype, float16);
      // (the convolutions are on the list too; this backend has no WebGPU convolution kernel yet)
      // float32 (cast)
      assert.equal(exp(h).dtype, float32);
      assert.equal(log(h.abs()).dtype, float32);
      assert.equal(rsqrt(h.abs()).dtype, float32);
      assert.equal(pow(h, 2).dtype, float32);
      assert.equal(softplus(h).dtype, float32);
      assert.equal(logsumexp(h, [1]).dtype, float32);
      assert.equal(h.norm().dtype, float32);
      assert.equal(cosineSimilarity(h, h).dtype, float32);
      assert.equal(nllLoss(h, t).dtype, float32);
      assert.equal(l1Loss(h, h.neg()).dtype, float32);
      assert.equal(klDiv(h, h.abs()).dtype, float32);
      assert.equal(binaryCrossEntropyWithLogits(h, gpu(rand([3, 4])).to(float16)).dtype, float32);
      // float32 through the op's dtype argument; an explicit dtype is kept, integers are not touched
      assert.equal(sum(h).dtype, float32);
      assert.equal(sum(h, [1]).dtype, float32);
      assert.equal(prod(h).dtype, float32);
      assert.equal(softmax(h, -1).dtype, float32);
      assert.equal(logSoftmax(h, -1).dtype, float32);
      assert.equal(softmax(h, -1, { dtype: float16 }).dtype, float16);
      assert.equal(sum(h, { dtype: float16 }).dtype, float16);
      assert.equal(sum(t).dtype.name, 'int64');
      // cross_entropy_loss is float32 (listed itself: see core/features/autocast.ts)
      assert.equal(crossEntropy(h, t).dtype, float32);
      // promote: float32 wins over float16
      assert.equal(dot(h.reshape([-1]), a.reshape([-1])).dtype, float32);
      assert.equal(dot(h.reshape([-1]), h.reshape([-1])).dtype, float16);
      assert.equal(atan2(h, a).dtype, float32);
      assert.equal(scatterAdd(h, 1, gpu(tensor([[0, 1], [1, 2], [3, 0]])), a.narrow(1, 0, 2)).dtype, float32);
      // not listed: keeps the input dtype
      assert.equal(relu(h).dtype, float16);
      assert.equal(a.add(1).dtype, float32);
      assert.equal(cat([h, h]).dtype, float16);
      // float64 and integer inputs are not cast; CPU tensors are not either
      assert.equal(mm(gpu(tensor([[1, 2], [3, 4]])), gpu(tensor([[1, 0], [0, 1]]))).dtype.name, 'int64');
      assert.equal(mm(randn([2, 3]), randn([3, 2])).dtype, float32);
    });
    assert.equal(mm(a, b).dtype, float32);
    assert.equal(sum(h).dtype, float16);
  });

  it('binary_cross_entropy is banned, with PyTorch message, and the runtime stays usable', () => {
    manualSeed(41);
    const p = gpu(rand([4])), y = gpu(rand([4]));
    assert.throws(
      () => autocast(GPU, () => binaryCrossEntropy(p, y)),
      /binary_cross_entropy and torch\.nn\.BCELoss are unsafe to autocast[\s\S]*binary_cross_entropy_with_logits/,
    );
    assert.equal(isAutocastEnabled('webgpu'), false);
    assert.equal(binaryCrossEntropy(p, y).dtype, float32);
  });

  for (const dtype of [float16, bfloat16]) {
    it(`${dtype.name} mm on odd shapes and views equals the float64 product of rounded inputs`, async () => {
      manualSeed(42);
      const a = randn([7, 13]), bBase = randn([5, 13]);
      const out = autocast({ ...GPU, dtype }, () => mm(gpu(a), gpu(bBase).t()));
      assert.equal(out.dtype, dtype);
      assert.equal(out.device.type, 'webgpu');
      const rounded = mm(a.to(dtype).to(float64), bBase.to(dtype).to(float64).t());
      const exact = mm(a.to(float64), bBase.to(float64).t());
      const got = await values(out);
      // f32 accumulation of exactly representable products, one rounding to the dtype at the end
      const eps = dtype === float16 ? 2 ** -11 : 2 ** -8;
      assertClose(got, await values(rounded), 2 * eps, 1e-6, 'vs rounded inputs');
      assertClose(got, await values(exact), 16 * eps, 0.02, 'vs exact');
    });
  }

  it('conv2d runs in float16 (lower-precision list) and equals the float64 convolution of rounded inputs', async () => {
    manualSeed(44);
    const x = randn([2, 3, 9, 7]), w = randn([4, 3, 3, 3]), b = randn([4]);
    const out = autocast(GPU, () => conv2d(gpu(x), gpu(w), gpu(b), { stride: 2, padding: 1 }));
    assert.equal(out.dtype, float16);
    assert.deepEqual(out.shape, [2, 4, 5, 4]);
    const rounded = conv2d(f16(x), f16(w), f16(b), { stride: 2, padding: 1 });
    // 27 products summed in float32, one rounding to float16 at the end
    assertClose(await values(out), await values(rounded), 2 * 2 ** -11, 1e-3, 'conv2d vs rounded inputs');
  });

  it('float32 ops compute from the float16 input in float32 (softmax, logsumexp, exp, a loss)', async () => {
    manualSeed(43);
    const x = randn([5, 9]).mul(3), t = tensor([0, 8, 3, 3, 1]);
    const h = gpu(x.to(float16));
    const [sm, lse, ex, ce] = autocast(GPU, () => [softmax(h, 1), logsumexp(h, [1]), exp(h), crossEntropy(h, gpu(t))]);
    const x64 = f16(x);
    const tight = 1e-5;
    assertClose(await values(sm), await values(softmax(x64, 1)), tight, 1e-7, 'softmax');
    assertClose(await values(lse), await values(logsumexp(x64, [1])), tight, 1e-6, 'logsumexp');
    assertClose(await values(ex), await values(exp(x64)), tight, 1e-7, 'exp');
    assertClose(await values(ce), await values(crossEntropy(x64, t)), tight, 1e-6, 'cross entropy');
  });

  it('gradients flow through a region to float32 leaves, close to float64 gradients', async () => {
    manualSeed(44);
    const x = randn([6, 7]), w = randn([4, 7]).mul(0.5), bias = randn([4]), t = tensor([0, 3, 1, 2, 2, 1]);
    const wg = gpu(w).requiresGrad_(), bg = gpu(bias).requiresGrad_();
    const loss = autocast(GPU, () => {
      const out = linear(gpu(x), wg, bg);
      assert.equal(out.dtype, float16);
      return crossEntropy(relu(out).mul(2), gpu(t));
    });
    assert.equal(loss.dtype, float32);
    loss.backward();
    assert.equal(wg.grad!.dtype, float32);
    assert.equal(bg.grad!.dtype, float32);
    assert.equal(wg.grad!.device.type, 'webgpu');
    const w64 = w.to(float64).requiresGrad_(), b64 = bias.to(float64).requiresGrad_();
    const loss64 = crossEntropy(relu(linear(x.to(float64), w64, b64)).mul(2), t);
    loss64.backward();
    assertClose(await values(loss), [loss64.item() as number], 0.01, 0.01, 'loss');
    assertClose(await values(wg.grad!), await values(w64.grad!), 0.02, 0.01, 'dW');
    assertClose(await values(bg.grad!), await values(b64.grad!), 0.02, 0.01, 'db');
  });

  it('float16 flows into the kernels that take bfloat16 (relu, clamp, gelu, floor), rounded like the CPU', async () => {
    manualSeed(47);
    const x = randn([5, 7]).mul(4), h = gpu(x.to(float16));
    const x32 = x.to(float16).to(float32); // the float16 values, computed in float32 and rounded once, as on CUDA
    // exact but for gelu, whose GPU erf differs from the CPU's in the last float32 bits: one float16 ulp (also subnormal)
    const ops: [string, (t: Tensor) => Tensor, number][] = [
      ['relu', (t) => relu(t), 0],
      ['clamp', (t) => t.clamp(-1.5, 2.25), 0],
      ['gelu', (t) => t.gelu(), 2 ** -10],
      ['floor', (t) => t.floor(), 0],
      ['round', (t) => t.round(), 0],
    ];
    for (const [name, f, rel] of ops) {
      const out = f(h);
      assert.equal(out.dtype, float16, name);
      assertClose(await values(out), await values(f(x32).to(float16)), rel, rel === 0 ? 0 : 2 ** -24, name);
    }
    assert.throws(() => h.bitwiseAnd(h), /"bitwise_and_webgpu" not implemented for 'Half'/);
  });

  it('nesting and enabled: false restore the outer state; CPU and WebGPU regions are independent', () => {
    manualSeed(45);
    const a = gpu(randn([2, 3])), b = gpu(randn([3, 2])), c = randn([2, 2]);
    autocast(GPU, () => {
      assert.equal(mm(a, b).dtype, float16);
      autocast({ ...GPU, enabled: false }, () => assert.equal(mm(a, b).dtype, float32));
      autocast({ ...GPU, dtype: bfloat16 }, () => {
        assert.equal(getAutocastDtype('webgpu'), bfloat16);
        assert.equal(mm(a, b).dtype, bfloat16);
      });
      autocast({ deviceType: 'cpu' }, () => {
        assert.equal(mm(c, c).dtype, bfloat16);
        assert.equal(mm(a, b).dtype, float16);
      });
      assert.equal(mm(c, c).dtype, float32);
      assert.equal(mm(a, b).dtype, float16);
    });
    {
      using _ = autocast(GPU);
      assert.equal(mm(a, b).dtype, float16);
    }
    assert.equal(mm(a, b).dtype, float32);
  });

  it('the cast cache: a float32 leaf requiring grad is cast once per outermost region', () => {
    manualSeed(46);
    const w = gpu(randn([5, 4])).requiresGrad_(), x = gpu(randn([3, 4])), plain = gpu(randn([5, 4]));
    const counter = new CastCounter();
    {
      using _mode = counter.enter();
      autocast(GPU, () => {
        linear(x, w);
        linear(x, w);
        autocast(GPU, () => linear(x, w)); // inner region: same cache
        linear(x, plain);
        linear(x, plain);
      });
      autocast({ ...GPU, cacheEnabled: false }, () => {
        linear(x, w);
        linear(x, w);
      });
      autocast(GPU, () => linear(x, w)); // a new outermost region casts again
    }
    assert.equal(counter.count(w), 1 + 2 + 1);
    assert.equal(counter.count(x), 3 + 2 + 2 + 1);
    assert.equal(counter.count(plain), 2);
  });
});
