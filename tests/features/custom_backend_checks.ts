/**
 * The checks of tests/features/custom_backend.test.ts. Registering a backend changes the process for good (one
 * PrivateUse1 backend per process, kernels at its key), so they run in a process of their own: each check prints
 * `ok <name>` or `not ok <name>: <error>`.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { cpuFallback, liveBlocks, mydev } from '../../examples/custom_backend.ts';
import {
  cat,
  Dispatcher,
  DispatchKey,
  type DType,
  float32,
  float64,
  Generator,
  int64,
  Library,
  parseDispatchKey,
  privateUse1BackendName,
  randn,
  registerBackend,
  renamePrivateUse1Backend,
  Storage,
  type Tensor,
  tensor,
  toDevice,
  zeros,
} from '../../mod.ts';

const gen = new Generator().manualSeed(7);
const rand = (shape: number[], dtype: DType = float32) => randn(shape, { dtype, generator: gen });
const ref = (t: Tensor) => t.to({ device: 'cpu', dtype: float64 }).toArray() as number[];
const close = (actual: number[], expected: number[], tol: number) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) =>
    assert.ok(Math.abs(a - expected[i]) <= tol * (1 + Math.abs(expected[i])), `[${i}] ${a} vs ${expected[i]}`)
  );
};
const table = (name: string, overload?: string) =>
  Dispatcher.singleton().findSchemaOrThrow(name, overload).dumpComputedTable();

const checks: Record<string, () => void | Promise<void>> = {
  'device strings parse and print with the backend name'() {
    assert.equal(privateUse1BackendName(), 'mydev');
    assert.equal(String(toDevice('mydev')), 'mydev:0');
    assert.equal(toDevice('mydev:0'), mydev);
    assert.equal(mydev.type, 'mydev');
    assert.equal(mydev.index, 0);
    assert.throws(() => toDevice('mydev:1'), /mydev device index 1 is out of range: only mydev:0 exists/);
    assert.throws(
      () => toDevice('foo' as never),
      { message: 'Expected one of cpu, meta, webgpu, mydev device type at start of device string: foo' },
    );
  },
  'only one backend, as PyTorch allows one rename'() {
    assert.equal(renamePrivateUse1Backend('mydev'), mydev); // the same name again: nothing happens
    assert.throws(
      () => renamePrivateUse1Backend('other'),
      { message: 'torch.register_privateuse1_backend() has already been set! Current backend: mydev' },
    );
    const hooks = { allocate: () => 1, free: () => {} };
    assert.throws(() => registerBackend('mydev', hooks), /'mydev' is already registered/);
    assert.throws(() => registerBackend('cuda', hooks), {
      message: 'Cannot register privateuse1 backend with in-tree device name: cuda',
    });
    assert.throws(() => registerBackend('Bad-Name', hooks), /lower-case identifier/);
    assert.throws(() => registerBackend('x', { allocate: 1 } as never), /hooks.allocate must be a function/);
    assert.throws(() => registerBackend(3 as never, hooks), /argument 'backend_name' must be str, not number/);
    // still usable
    assert.deepEqual(zeros([2], { device: 'mydev' }).toArray(), [0, 0]);
  },
  'factories go to the backend through BackendSelect'() {
    const z = zeros([2, 3], { device: 'mydev', dtype: float64 });
    assert.equal(String(z.device), 'mydev:0');
    assert.equal(z.dtype, float64);
    assert.deepEqual(z.toArray(), [0, 0, 0, 0, 0, 0]);
    const r = randn([4], { device: 'mydev', generator: new Generator().manualSeed(3) });
    assert.deepEqual(r.toArray(), randn([4], { generator: new Generator().manualSeed(3) }).toArray());
    assert.throws(() => zeros([-1], { device: 'mydev' }), /negative dimension -1/);
  },
  '.to() both ways, views, dtypes'() {
    for (const dtype of [float32, float64, int64]) {
      const x = dtype === int64 ? tensor([[1, -2, 3], [4, 5, -6]], { dtype }) : rand([3, 5], dtype);
      const d = x.to('mydev');
      assert.equal(String(d.device), 'mydev:0');
      assert.equal(d.dtype, dtype);
      assert.deepEqual(d.to('cpu').toArray(), x.toArray());
      const t = x.t(); // a view with transposed strides, both ways
      assert.deepEqual(t.to('mydev').to('cpu').toArray(), t.toArray());
      assert.deepEqual(d.t().to('cpu').toArray(), t.toArray());
    }
    const b = tensor([true, false, true]).to('mydev');
    assert.deepEqual(b.to('cpu').toArray(), [true, false, true]);
    const x = rand([4]);
    assert.deepEqual(x.to({ device: 'mydev', dtype: float64 }).to('cpu').toArray(), x.to({ dtype: float64 }).toArray());
    assert.deepEqual(x.to('mydev').to({ dtype: float64 }).device, mydev);
    // copy_ between devices, broadcasting the source
    const dst = zeros([2, 3], { device: 'mydev' });
    dst.copy_(tensor([1, 2, 3]));
    assert.deepEqual(dst.toArray(), [1, 2, 3, 1, 2, 3]);
    const host = zeros([3]);
    host.copy_(tensor([4, 5, 6]).to('mydev'));
    assert.deepEqual(host.toArray(), [4, 5, 6]);
  },
  async "async reads go through the backend's copy to the CPU"() {
    const x = rand([2, 3]);
    const d = x.to('mydev');
    assert.deepEqual(await d.toArrayAsync(), x.toArray());
    const host = await d.t().cpuAsync();
    assert.equal(host.device.type, 'cpu');
    assert.deepEqual(host.toArray(), x.t().toArray());
  },
  'printing names the device'() {
    assert.equal(String(tensor([1.5, 2]).to('mydev')), "tensor([1.5000, 2.0000], device='mydev:0')");
    assert.equal(String(zeros([2], { device: 'mydev', dtype: int64 })), "tensor([0, 0], device='mydev:0')");
    const x = tensor([1, 2], { dtype: float32, device: 'mydev', requiresGrad: true });
    assert.equal(String(x), "tensor([1., 2.], device='mydev:0', requires_grad=True)");
    assert.equal(String(x.mul(x)), "tensor([1., 4.], device='mydev:0', grad_fn=<MulBackward0>)");
  },
  'JS kernels: add, mul, sum, mm against float64 references'() {
    for (const dtype of [float32, float64]) {
      const tol = dtype === float32 ? 1e-6 : 1e-12;
      const a = rand([3, 1, 5], dtype), b = rand([4, 5], dtype);
      const da = a.to('mydev'), db = b.to('mydev');
      const sum = da.add(db, { alpha: 2.5 });
      assert.deepEqual(sum.shape, [3, 4, 5]);
      assert.equal(sum.device, mydev);
      const ra = ref(a), rb = ref(b);
      const expected: number[] = [];
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 4; j++) for (let k = 0; k < 5; k++) expected.push(ra[i * 5 + k] + 2.5 * rb[j * 5 + k]);
      }
      close(ref(sum), expected, tol);
      close(ref(da.mul(db)), expected.map((_, n) => ra[Math.floor(n / 20) * 5 + (n % 5)] * rb[n % 20]), tol);
      close([ref(db.sum())[0]], [rb.reduce((s, v) => s + v, 0)], tol * 10);
      const m = rand([3, 7], dtype), n = rand([5, 7], dtype); // n.t(): a transposed view
      const prod = m.to('mydev').mm(n.to('mydev').t());
      const rm = ref(m), rn = ref(n);
      const mm: number[] = [];
      for (let i = 0; i < 3; i++) {
        for (let j = 0; j < 5; j++) {
          let s = 0;
          for (let p = 0; p < 7; p++) s += rm[i * 7 + p] * rn[j * 7 + p];
          mm.push(s);
        }
      }
      close(ref(prod), mm, tol * 10);
      assert.throws(() => m.to('mydev').mm(m.to('mydev')), /mat1 and mat2 shapes cannot be multiplied \(3x7 and 3x7\)/);
    }
    // a case the JS kernels leave to the CPU: mixed dtypes promote as on the CPU
    const mixed = tensor([1, 2], { dtype: int64 }).to('mydev').add(tensor([0.5, 0.25]).to('mydev'));
    assert.equal(mixed.dtype, float32);
    assert.deepEqual(mixed.toArray(), [1.5, 2.25]);
  },
  'the boxed fallback runs everything else on the CPU'() {
    const x = rand([2, 3]);
    const d = x.to('mydev');
    const e = d.exp();
    assert.equal(e.device, mydev);
    close(ref(e), ref(x).map(Math.exp), 1e-6);
    const w = d.clone();
    const r = w.mul_(2); // in place: the written argument is copied back, the result is w itself
    assert.equal(r, w);
    close(ref(w), ref(x).map((v) => 2 * v), 1e-6);
    close(ref(d), ref(x), 0); // the source is untouched
    close(ref(d.relu()), ref(x).map((v) => Math.max(v, 0)), 0);
    const joined = cat([d, tensor([[7, 8, 9]]).to('mydev')], 0); // a list argument
    assert.equal(joined.device, mydev);
    assert.deepEqual(joined.shape, [3, 3]);
    close(ref(joined), [...ref(x), 7, 8, 9], 0);
    const [values, indices] = d.max(1); // two results, both moved to the device
    assert.equal(values.device, mydev);
    assert.equal(indices.device, mydev);
    close(ref(values), [0, 1].map((i) => Math.max(...ref(x).slice(i * 3, i * 3 + 3))), 0);
    assert.equal(typeof cpuFallback, 'function');
  },
  'autograd through the custom device'() {
    const x = rand([3, 4], float64).to('mydev').requiresGrad_();
    const w = rand([4, 4], float64).to('mydev');
    const y = x.mm(w).mul(x).sum();
    assert.equal(y.device, mydev);
    y.backward();
    const g = x.grad!;
    assert.equal(g.device, mydev);
    // d/dx sum((x w) * x) = x w + x w^T
    const rx = ref(x), rw = ref(w);
    const expected: number[] = [];
    for (let i = 0; i < 3; i++) {
      for (let k = 0; k < 4; k++) {
        let s = 0;
        for (let j = 0; j < 4; j++) s += rx[i * 4 + j] * (rw[j * 4 + k] + rw[k * 4 + j]);
        expected.push(s);
      }
    }
    close(ref(g), expected, 1e-12);
  },
  'computed dispatch tables name the backend'() {
    const add = table('aten::add', 'Tensor');
    assert.match(add, /^PrivateUse1: mydev kernel add\.Tensor \[kernel\]$/m);
    assert.match(add, /^AutogradPrivateUse1: /m);
    assert.match(table('aten::mm'), /^PrivateUse1: mydev kernel mm \[kernel\]$/m);
    assert.match(table('aten::exp'), /^PrivateUse1: mydev CPU fallback \[backend fallback\]$/m);
  },
  'dispatch key parsers accept the backend name'() {
    assert.equal(parseDispatchKey('mydev'), DispatchKey.PrivateUse1);
    assert.equal(parseDispatchKey('Mydev'), DispatchKey.PrivateUse1);
    assert.equal(parseDispatchKey('AutogradMydev'), DispatchKey.AutogradPrivateUse1);
    assert.equal(parseDispatchKey('Autogradmydev'), DispatchKey.AutogradPrivateUse1);
    assert.equal(parseDispatchKey('SparseMydev'), DispatchKey.SparsePrivateUse1);
    assert.equal(parseDispatchKey('QuantizedMydev'), DispatchKey.QuantizedPrivateUse1);
    assert.equal(parseDispatchKey('mydev_PreAutograd'), DispatchKey.AutogradPrivateUse1);
    // the built-in names keep working and other backends' names stay unknown
    assert.equal(parseDispatchKey('PrivateUse1'), DispatchKey.PrivateUse1);
    assert.equal(parseDispatchKey('AutogradPrivateUse1'), DispatchKey.AutogradPrivateUse1);
    assert.equal(parseDispatchKey('PrivateUse2'), DispatchKey.PrivateUse2);
    assert.throws(() => parseDispatchKey('otherdev'), { message: 'could not parse dispatch key: otherdev' });
    assert.throws(() => parseDispatchKey('MYDEV'), { message: 'could not parse dispatch key: MYDEV' });
    assert.throws(() => parseDispatchKey('mydevAutograd'), /could not parse dispatch key: mydevAutograd/);
    // a library block at the renamed key registers at PrivateUse1, and the dispatch picture takes the name
    const lib = new Library('switchyard_test_mydev', 'DEF');
    const op = lib.define('switchyard_test_mydev::twice(Tensor x) -> Tensor');
    const impl = new Library('switchyard_test_mydev', 'IMPL', 'mydev');
    impl.impl(op, (_hi, _lo, x) => x.add(x), undefined, { debug: 'twice on mydev' });
    const autogradImpl = new Library('switchyard_test_mydev', 'IMPL', 'AutogradMydev');
    autogradImpl.impl(op, (_hi, _lo, x) => x.mul(2), undefined, { debug: 'autograd twice on mydev' });
    assert.match(op.dumpComputedTable(), /^PrivateUse1: twice on mydev \[kernel\]$/m);
    assert.match(op.dumpComputedTable(), /^AutogradPrivateUse1: autograd twice on mydev \[kernel\]$/m);
    assert.deepEqual(
      (op.call(tensor([1, 2, 3], { device: 'mydev' })) as Tensor).to('cpu').toArray(),
      [2, 4, 6],
    );
    assert.throws(
      () => new Library('switchyard_test_mydev', 'IMPL', 'Autograd_mydev'),
      /could not parse dispatch key: Autograd_mydev/,
    );
  },
  'storage hooks allocate and free blocks'() {
    const before = liveBlocks();
    const s = Storage.allocate(mydev, 12);
    assert.equal(liveBlocks(), before + 1);
    assert.equal(s.bytes().byteLength, 12);
    s.release();
    assert.equal(liveBlocks(), before);
    const t = zeros([5], { device: 'mydev' });
    assert.equal(liveBlocks(), before + 1);
    t.dispose();
    assert.equal(liveBlocks(), before);
  },
};

let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  try {
    await check();
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok ${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`.replaceAll('\n', ' | '));
  }
}
console.log(`checks: ${Object.keys(checks).length - failed} passed, ${failed} failed`);
