/**
 * autocast on CPU: PyTorch 1.13's result dtypes per op class (checked by hand with `torch.autocast('cpu')`),
 * values against float64 references of the bfloat16-rounded inputs, the cast cache (counted with a dispatch
 * mode), nesting and `enabled: false`, errors, gradients to float32 leaves, and an MLP trained under autocast.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addmm,
  autocast,
  binaryCrossEntropy,
  bmm,
  callOp,
  cat,
  clearAutocastCache,
  crossEntropy,
  Dispatcher,
  DispatchKey,
  type DispatchKwargs,
  DispatchMode,
  float16,
  float32,
  float64,
  getAutocastDtype,
  isAutocastEnabled,
  linear,
  localDispatchKeySet,
  logSoftmax,
  manualSeed,
  mm,
  nllLoss,
  type OperatorHandle,
  prod,
  rand,
  randn,
  relu,
  scope,
  sigmoid,
  softmax,
  stack,
  type Tensor,
  tensor,
  type TorchDispatchClass,
} from '../../mod.ts';
import { bfloat16 } from '../../core/tensor/dtype.ts';
import { conv2d, convTranspose2d } from '../../core/nn/functional.ts';
import { CrossEntropyLoss, Linear, ReLU, Sequential } from '../../core/nn/mod.ts';
import { SGD } from '../../core/optim/mod.ts';

const CPU = { deviceType: 'cpu' } as const;

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

/** Rounds float32 values to bfloat16 (round to nearest even), as float64 numbers. */
function bf16(values: number[]): number[] {
  const f = new Float32Array(values), u = new Uint32Array(f.buffer);
  for (let i = 0; i < u.length; i++) u[i] = ((u[i] + 0x7fff + ((u[i] >>> 16) & 1)) >>> 16) << 16;
  return Array.from(f);
}

function matmulRef(a: number[], b: number[], n: number, k: number, m: number): number[] {
  const out = new Array(n * m).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) for (let p = 0; p < k; p++) out[i * m + j] += a[i * k + p] * b[p * m + j];
  }
  return out;
}

const flat = (t: Tensor) => t.to(float64).reshape([-1]).toArray() as number[];

describe('autocast: result dtypes per op class (PyTorch 1.13 CPU)', () => {
  it('lower-precision ops give bfloat16, float32 ops float32, others keep their dtype', () => {
    manualSeed(1);
    const a = randn([3, 4]), b = randn([4, 5]), x = a.to(bfloat16), t = tensor([0, 1, 2]);
    autocast(CPU, () => {
      assert.equal(mm(a, b).dtype, bfloat16);
      assert.equal(a.matmul(b).dtype, bfloat16);
      assert.equal(bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype, bfloat16);
      assert.equal(addmm(randn([5]), a, b).dtype, bfloat16);
      assert.equal(linear(a, b.t()).dtype, bfloat16);
      // PyTorch casts conv2d to bfloat16; the CPU convolution here is float32/float64 only, so it is not listed
      assert.equal(conv2d(randn([1, 2, 5, 5]), randn([3, 2, 3, 3])).dtype, float32);
      // float32 list: losses, prod, conv_transpose
      assert.equal(nllLoss(x, t).dtype, float32);
      assert.equal(crossEntropy(x, t).dtype, float32);
      assert.equal(binaryCrossEntropy(sigmoid(x), rand([3, 4]).to(bfloat16)).dtype, float32);
      assert.equal(prod(x).dtype, float32);
      assert.equal(convTranspose2d(randn([1, 2, 5, 5]).to(bfloat16), randn([2, 3, 3, 3])).dtype, float32);
      // not listed on CPU (as in PyTorch): keep the input dtype
      assert.equal(softmax(x, -1).dtype, bfloat16);
      assert.equal(logSoftmax(a, -1).dtype, float32);
      assert.equal(relu(x).dtype, bfloat16);
      assert.equal(a.add(1).dtype, float32);
      // promote: float32 wins, float64 and integers are ignored
      assert.equal(cat([a, x]).dtype, float32);
      assert.equal(stack([a, x]).dtype, float32);
      assert.equal(cat([x, tensor([[1, 2, 3, 4]])]).dtype, bfloat16);
      assert.equal(cat([x, a.to(float64)]).dtype, float64);
      // float64 and integer inputs are not cast
      assert.equal(mm(a.to(float64), b.to(float64)).dtype, float64);
      assert.equal(mm(tensor([[1, 2], [3, 4]]), tensor([[1, 0], [0, 1]])).dtype.name, 'int64');
    });
    assert.equal(mm(a, b).dtype, float32);
  });

  it('float16 regions cast to float16', () => {
    manualSeed(2);
    const a = randn([2, 3]), b = randn([3, 2]);
    autocast({ deviceType: 'cpu', dtype: float16 }, () => {
      assert.equal(getAutocastDtype('cpu'), float16);
      assert.equal(mm(a, b).dtype, float16);
      assert.equal(nllLoss(a, tensor([0, 1])).dtype, float32);
    });
  });
});

describe('autocast: values', () => {
  for (const [dtype, bits] of [[bfloat16, 8], [float16, 11]] as const) {
    it(`mm on odd shapes and views equals the float64 product of ${dtype.name}-rounded inputs`, () => {
      manualSeed(3);
      const a = randn([7, 13]), bBase = randn([5, 13]);
      const b = bBase.t(); // a view: [13, 5], non-contiguous
      const out = autocast({ deviceType: 'cpu', dtype }, () => mm(a, b));
      assert.equal(out.dtype, dtype);
      const ra = flat(a.to(dtype)), rb = flat(b.contiguous().to(dtype));
      if (dtype === bfloat16) assert.deepEqual(ra, bf16(flat(a)));
      const ref = matmulRef(ra, rb, 7, 13, 5);
      const got = flat(out);
      const exact = matmulRef(flat(a), flat(b.contiguous()), 7, 13, 5);
      got.forEach((g, i) => {
        assert.ok(Math.abs(g - ref[i]) <= 2 ** -bits * 2 * Math.abs(ref[i]) + 1e-3, `${i}: ${g} vs ${ref[i]}`);
        assert.ok(Math.abs(g - exact[i]) <= 0.05 * (Math.abs(exact[i]) + 1), `${i}: ${g} vs exact ${exact[i]}`);
      });
    });
  }
});

describe('autocast: the cast cache', () => {
  it('casts a float32 leaf requiring grad once per region, other tensors every time', () => {
    manualSeed(4);
    const w = randn([6, 5]).requiresGrad_(), x = randn([3, 5]);
    const counter = new CastCounter();
    {
      using _m = counter.enter();
      {
        using _a = autocast(CPU);
        const y1 = linear(x, w), y2 = linear(x, w);
        assert.equal(y1.dtype, bfloat16);
        assert.equal(y2.dtype, bfloat16);
        assert.equal(counter.count(w), 1);
        assert.equal(counter.count(x), 2);
        autocast(CPU, () => linear(x, w)); // nested region: the outer cache still holds
        assert.equal(counter.count(w), 1);
      }
      autocast(CPU, () => linear(x, w)); // a new outermost region casts again
      assert.equal(counter.count(w), 2);
      autocast({ ...CPU, cacheEnabled: false }, () => {
        linear(x, w);
        linear(x, w);
      });
      assert.equal(counter.count(w), 4);
      const wv = w.detach().requiresGrad_().view([30]).view([6, 5]); // a non-leaf: never cached
      autocast(CPU, () => {
        linear(x, wv);
        linear(x, wv);
      });
      assert.equal(counter.count(wv), 2);
      clearAutocastCache();
    }
  });
});

describe('autocast: state, nesting, disable, errors', () => {
  it('regions nest and restore the outer state and the AutocastCPU exclusion', () => {
    manualSeed(5);
    const a = randn([2, 2]);
    const excluded = () => localDispatchKeySet().excluded.has(DispatchKey.AutocastCPU);
    assert.equal(isAutocastEnabled('cpu'), false);
    assert.equal(getAutocastDtype('cpu'), bfloat16);
    assert.equal(excluded(), true);
    autocast(CPU, () => {
      assert.equal(isAutocastEnabled('cpu'), true);
      assert.equal(excluded(), false);
      autocast({ ...CPU, enabled: false }, () => {
        assert.equal(isAutocastEnabled('cpu'), false);
        assert.equal(excluded(), true);
        assert.equal(mm(a, a).dtype, float32);
      });
      autocast({ ...CPU, dtype: float16 }, () => assert.equal(mm(a, a).dtype, float16));
      assert.equal(getAutocastDtype('cpu'), bfloat16);
      assert.equal(mm(a, a).dtype, bfloat16);
    });
    assert.equal(isAutocastEnabled('cpu'), false);
    assert.equal(excluded(), true);
    assert.throws(() =>
      autocast(CPU, () => {
        throw new Error('boom');
      }), /boom/);
    assert.equal(isAutocastEnabled('cpu'), false);
    assert.equal(excluded(), true);
    const g = autocast(CPU);
    g[Symbol.dispose]();
    g[Symbol.dispose](); // idempotent
    assert.equal(isAutocastEnabled('cpu'), false);
  });

  it('refuses bad arguments in PyTorch words and stays usable', () => {
    assert.throws(
      () => autocast({ deviceType: 'cpu', dtype: float64 }),
      /AutocastCPU only support Bfloat16 and Float16/,
    );
    assert.throws(() => autocast({ deviceType: 'cuda' } as never), /expected deviceType 'cpu'/);
    assert.throws(() => autocast(undefined as never), /expected an options object/);
    assert.throws(() => autocast({ deviceType: 'cpu', enabled: 1 } as never), /enabled to be a boolean/);
    assert.throws(() => isAutocastEnabled('cuda' as never), /isAutocastEnabled: expected deviceType 'cpu' or 'webgpu'/);
    assert.throws(() => getAutocastDtype('meta' as never), /getAutocastDtype: expected deviceType 'cpu' or 'webgpu'/);
    assert.throws(
      () => autocast({ deviceType: 'webgpu', dtype: float32 }),
      {
        message:
          'Currently, AutocastWebGPU only support Float16 and Bfloat16 as the autocast_gpu_dtype, but got torch.float32',
      },
    );
    assert.throws(() => autocast({ deviceType: 'webgpu', dtype: 'float16' } as never), /expected dtype to be a DType/);
    assert.equal(isAutocastEnabled('webgpu'), false);
    assert.equal(isAutocastEnabled('cpu'), false);
    assert.equal(autocast(CPU, () => mm(randn([2, 2]), randn([2, 2])).dtype), bfloat16);
  });
});

describe('autocast: WebGPU state without a device (the kernels are tested in tests/gpu/autocast_suite.ts)', () => {
  const GPU = { deviceType: 'webgpu' } as const;
  const excluded = (k: number) => localDispatchKeySet().excluded.has(k);

  it('a webgpu region has its own state, float16 by default, and leaves CPU tensors alone', () => {
    manualSeed(11);
    const a = randn([3, 4]), b = randn([4, 2]);
    assert.equal(getAutocastDtype('webgpu'), float16);
    assert.equal(excluded(DispatchKey.AutocastWebGPU), true);
    autocast(GPU, () => {
      assert.equal(isAutocastEnabled('webgpu'), true);
      assert.equal(isAutocastEnabled('cpu'), false);
      assert.equal(excluded(DispatchKey.AutocastWebGPU), false);
      assert.equal(excluded(DispatchKey.AutocastCPU), true);
      // CPU tensors do not carry AutocastWebGPU: CPU results are unchanged
      assert.equal(mm(a, b).dtype, float32);
      assert.equal(softmax(a.to(bfloat16), -1).dtype, bfloat16);
      autocast(CPU, () => {
        assert.equal(mm(a, b).dtype, bfloat16);
        assert.equal(isAutocastEnabled('webgpu'), true);
      });
      autocast({ ...GPU, dtype: bfloat16 }, () => assert.equal(getAutocastDtype('webgpu'), bfloat16));
      autocast({ ...GPU, enabled: false }, () => {
        assert.equal(isAutocastEnabled('webgpu'), false);
        assert.equal(excluded(DispatchKey.AutocastWebGPU), true);
      });
      assert.equal(getAutocastDtype('webgpu'), float16);
      assert.equal(excluded(DispatchKey.AutocastWebGPU), false);
    });
    assert.equal(isAutocastEnabled('webgpu'), false);
    assert.equal(excluded(DispatchKey.AutocastWebGPU), true);
    {
      using _ = autocast({ ...GPU, dtype: bfloat16 });
      assert.equal(getAutocastDtype('webgpu'), bfloat16);
    }
    assert.equal(getAutocastDtype('webgpu'), float16);
  });

  it('the computed tables carry the CUDA lists at AutocastWebGPU', () => {
    autocast(GPU, () => {});
    const table = (name: string, overload?: string) =>
      Dispatcher.singleton().findSchemaOrThrow(name, overload).dumpComputedTable();
    assert.match(
      table('aten::mm'),
      /^AutocastWebGPU: autocast WebGPU \(lower_precision_fp\) for aten::mm \[kernel\]$/m,
    );
    assert.match(table('aten::mm'), /^AutocastCPU: autocast CPU \(lower_precision_fp\) for aten::mm \[kernel\]$/m);
    assert.match(table('aten::exp'), /^AutocastWebGPU: autocast WebGPU \(fp32\) for aten::exp \[kernel\]$/m);
    assert.match(table('aten::exp'), /^AutocastCPU: fallthrough/m);
    assert.match(table('aten::sum'), /^AutocastWebGPU: autocast WebGPU \(fp32_set_opt_dtype\) for aten::sum/m);
    assert.match(table('aten::dot'), /^AutocastWebGPU: autocast WebGPU \(promote\) for aten::dot/m);
    assert.match(table('aten::binary_cross_entropy'), /^AutocastWebGPU: autocast WebGPU \(banned\)/m);
    assert.match(table('aten::cat'), /^AutocastWebGPU: fallthrough/m); // promote on CPU only, as in PyTorch 1.13
  });
});

describe('autocast: autograd', () => {
  it('gradients reach float32 leaves as float32, close to the float64 gradients', () => {
    manualSeed(6);
    const x = randn([4, 7]), w = randn([3, 7]).requiresGrad_(), bias = randn([3]).requiresGrad_();
    const t = tensor([0, 2, 1, 2]);
    const loss = autocast(CPU, () => {
      const out = linear(x, w, bias);
      assert.equal(out.dtype, bfloat16);
      return crossEntropy(out, t);
    });
    assert.equal(loss.dtype, float32);
    loss.backward();
    assert.equal(w.grad!.dtype, float32);
    assert.equal(bias.grad!.dtype, float32);
    const w64 = w.detach().to(float64).requiresGrad_(), b64 = bias.detach().to(float64).requiresGrad_();
    crossEntropy(linear(x.to(float64), w64, b64), t).backward();
    const close = (a: number[], b: number[]) =>
      a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= 0.03 * (Math.abs(b[i]) + 0.1), `${v} vs ${b[i]}`));
    close(flat(w.grad!), flat(w64.grad!));
    close(flat(bias.grad!), flat(b64.grad!));
    close([loss.item() as number], [crossEntropy(linear(x.to(float64), w64, b64), t).item() as number]);
  });

  it('a seeded MLP trained under autocast follows float32 training', () => {
    const X = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 1.0], [-2.0, 0.75, 0.5, -1.0], [0.1, 0.2, 0.3, 0.4]];
    const Y = [2, 0, 1, 1];
    const train = (amp: boolean) => {
      manualSeed(0);
      const model = new Sequential(new Linear(4, 8), new ReLU(), new Linear(8, 3));
      const optimizer = new SGD(model.parameters(), { lr: 0.1, momentum: 0.9 });
      const lossFunction = new CrossEntropyLoss();
      const x = tensor(X, { dtype: 'float32' }), y = tensor(Y);
      const losses: number[] = [];
      for (let step = 0; step < 8; step++) {
        losses.push(scope(() => {
          const loss = autocast({ ...CPU, enabled: amp }, () => lossFunction.call(model.call(x), y));
          assert.equal(loss.dtype, float32);
          loss.backward();
          for (const p of model.parameters()) assert.equal(p.grad!.dtype, float32);
          optimizer.step();
          optimizer.zeroGrad();
          return loss.item() as number;
        }));
      }
      optimizer.dispose();
      model.dispose();
      return losses;
    };
    const full = train(false), amp = train(true);
    assert.ok(full[7] < full[0] - 0.1, `float32 training learns: ${full}`);
    amp.forEach((l, i) => assert.ok(Math.abs(l - full[i]) <= 0.02 * full[i], `step ${i}: ${l} vs ${full[i]}`));
    assert.notDeepEqual(amp, full); // the autocast run really ran in bfloat16
  });
});
