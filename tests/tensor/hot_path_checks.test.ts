// The cheaper forms of the checks on every operator call (issue 7's hot path) decide exactly as the full ones:
// isSoundContiguous (the Tensor constructor's check of a contiguous description from offset 0) agrees with
// isSoundGeometry on seeded random and edge-case descriptions, and Tensor.isLive (a private-field read as the
// brand check) still refuses proxies, look-alikes, primitives and disposed tensors, at the API and at the boundary,
// as Storage.isStorage refuses storage look-alikes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { add, float32, float64, int8, memoryStats, Tensor, tensor, zeros } from '../../mod.ts';
import { isSoundContiguous, isSoundGeometry } from '../../core/tensor/tensor.ts';
import { Storage } from '../../core/tensor/storage.ts';
import { Device } from '../../core/tensor/device.ts';
import { contiguousAddress } from '../../core/cpu/boundary.ts';
import { rng } from '../ops/_helpers.ts';

describe('isSoundContiguous', () => {
  it('agrees with isSoundGeometry on 3000 seeded random contiguous descriptions', () => {
    const next = rng(71);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
    const oddSizes = [-1, -0, 0.5, NaN, Infinity, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40, 2 ** 53, 2 ** 53 + 2, 1e300];
    const storages = [0, 1, 3, 4, 8, 24, 64, 100].map((n) => Storage.allocate(Device.cpu, n));
    const dtypes = [float32, float64, int8];
    let accepted = 0, refused = 0;
    try {
      for (let i = 0; i < 3000; i++) {
        const ndim = Math.floor(next() * 5);
        const shape = Array.from({ length: ndim }, () => next() < 0.1 ? pick(oddSizes) : Math.floor(next() * 5));
        const dtype = pick(dtypes), storage = pick(storages);
        const expected = isSoundGeometry(shape, undefined, 0, dtype, storage);
        assert.equal(isSoundContiguous(shape, dtype, storage), expected, `shape [${shape}] ${dtype} ${storage.nbytes}`);
        if (expected) accepted++;
        else refused++;
      }
    } finally {
      storages.forEach((s) => s.release());
    }
    assert.ok(accepted > 300 && refused > 300, `both answers occur (${accepted} accepted, ${refused} refused)`);
  });

  it('agrees on the edges: exact fit, one byte short, overflowing products, empty tensors, meta, forged dtypes', () => {
    const s = Storage.allocate(Device.cpu, 24);
    const meta = Storage.allocate(Device.meta, 0);
    try {
      const cases: Array<[readonly number[], Storage, boolean, unknown]> = [
        [[2, 3], s, true, float32],
        [[6], s, true, float32],
        [[7], s, false, float32],
        [[3], s, true, float64],
        [[], s, true, float64], // a scalar: one element
        [[0, 2 ** 40], s, true, float32], // empty, however large the other size
        [[2 ** 32, 2 ** 32, 0], s, true, float32],
        [new Array(40).fill(2 ** 32 - 1).concat([0]), s, false, float32], // the product overflows before the zero
        [[2 ** 26, 2 ** 26, 2 ** 26], s, false, int8], // above 2^53 elements
        [[2 ** 53], s, false, int8],
        [[-0], s, true, float32],
        [[5], meta, true, float32], // meta storages hold no bytes
        [[5], s, false, { ...float32 }], // a dtype look-alike
        [[1], s, false, null],
      ];
      for (const [shape, storage, sound, dtype] of cases) {
        const d = dtype as typeof float32;
        assert.equal(isSoundGeometry(shape, undefined, 0, d, storage), sound, `full check of [${shape.length} dims]`);
        assert.equal(isSoundContiguous(shape, d, storage), sound, `fast check of [${shape.slice(0, 4)}...]`);
      }
    } finally {
      s.release();
      meta.release();
    }
  });

  it('is what the constructor uses for contiguous descriptions: same PyTorch messages, storage released', () => {
    const before = memoryStats();
    const make = (shape: number[], nbytes = 16) =>
      new Tensor({ storage: Storage.allocate(Device.cpu, nbytes), shape, dtype: float32 });
    assert.throws(
      () => make([5]),
      (e: Error) =>
        e.message ===
          'setStorage: sizes [5], strides [1], storage offset 0, and itemsize 4 requiring a storage size of 20 are ' +
            'out of bounds for storage of size 16',
    );
    assert.throws(
      () => make([2, -1]),
      (e: Error) =>
        e.name === 'RuntimeError' && e.message === 'Trying to create tensor with negative dimension -1: [2, -1]',
    );
    assert.throws(() => make([2 ** 32]), /requiring a storage size of 17179869184 are out of bounds/);
    assert.throws(() => make([2 ** 30, 2 ** 30, 2 ** 30]), /Storage size calculation overflowed/);
    // An explicit offset of 0 takes the same path; another offset takes the full check.
    assert.throws(
      () => new Tensor({ storage: Storage.allocate(Device.cpu, 16), shape: [4], storageOffset: 1, dtype: float32 }),
      /storage offset 1, and itemsize 4 requiring a storage size of 20 are out of bounds/,
    );
    const ok = new Tensor({ storage: Storage.allocate(Device.cpu, 16), shape: [4], storageOffset: 0, dtype: float32 });
    assert.deepEqual(ok.stride(), [1]);
    ok.dispose();
    const after = memoryStats();
    assert.equal(after.storages, before.storages, 'each refused description released its storage');
    assert.equal(after.liveTensors, before.liveTensors);
  });
});

describe('Tensor.isLive', () => {
  it('accepts a live tensor and refuses disposed ones, proxies, look-alikes and primitives', () => {
    const t = tensor([1, 2]);
    const lookalike = Object.create(Tensor.prototype);
    Object.assign(lookalike, { shape: [2], keySetHi: t.keySetHi, keySetLo: t.keySetLo });
    const refused: unknown[] = [
      new Proxy(t, {}),
      new Proxy(t, { get: (target, key) => Reflect.get(target, key, target) }),
      lookalike,
      { ...t },
      Object.create(t),
      null,
      undefined,
      0,
      'tensor',
      Symbol('t'),
      () => t,
    ];
    assert.equal(Tensor.isLive(t), true);
    for (const v of refused) {
      assert.equal(Tensor.isLive(v), false, String(typeof v));
      assert.equal(Tensor.isTensor(v), false, String(typeof v));
    }
    t.dispose();
    assert.equal(Tensor.isLive(t), false);
    assert.equal(Tensor.isTensor(t), true);
  });

  it('and Storage.isStorage, the same kind of brand check, refuses proxies, look-alikes and primitives', () => {
    const s = Storage.allocate(Device.cpu, 8);
    assert.equal(Storage.isStorage(s), true);
    for (const v of [new Proxy(s, {}), Object.create(Storage.prototype), { ...s }, Object.create(s), null, 8, 'x']) {
      assert.equal(Storage.isStorage(v), false, String(typeof v));
    }
    assert.throws(
      () => new Tensor({ storage: new Proxy(s, {}), shape: [2], dtype: float32 }),
      (e: Error) => e instanceof TypeError && e.message === 'A Tensor needs a Storage made by Storage.allocate()',
    );
    s.release();
    assert.equal(Storage.isStorage(s), true, 'a released storage is still a storage (the constructor refuses it)');
  });

  it('so add and the kernel boundary refuse a proxy of a live tensor, writing nothing', () => {
    const a = tensor(new Float32Array([1, 2])), b = zeros([2]);
    const proxy = new Proxy(a, {}) as Tensor;
    assert.throws(
      () => add(a, proxy),
      (e: Error) =>
        e instanceof TypeError && /^add\(\): argument 'other' \(position 2\) must be Tensor/.test(e.message),
    );
    assert.throws(
      () => contiguousAddress(proxy, 'add_cpu', 2),
      (e: Error) => e instanceof TypeError && /add_cpu: expected a Tensor made by this runtime/.test(e.message),
    );
    assert.throws(() => b.add_(proxy), TypeError);
    assert.deepEqual(b.tolist(), [0, 0]);
    assert.deepEqual(add(a, b).tolist(), [1, 2]);
    a.dispose();
    b.dispose();
  });
});
