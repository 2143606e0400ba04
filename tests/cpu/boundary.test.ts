// The CPU kernel boundary (core/cpu/boundary.ts): disposed and forged tensors, regions outside their storage and
// oversized descriptors are refused before a kernel runs, neighbouring tensors stay intact, tensor descriptions
// are checked when made, and operations over many dimensions compute.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cat,
  float32,
  gather,
  indexSelect,
  memoryStats,
  scope,
  softmax,
  Tensor,
  tensor,
  where,
  zeros,
} from '../../mod.ts';
import { contiguousAddress, hostElements, stridedAddress, writeDescriptor } from '../../core/cpu/boundary.ts';
import { Storage } from '../../core/tensor/storage.ts';
import { Device } from '../../core/tensor/device.ts';
import { randomTensor, rng, values } from '../ops/_helpers.ts';

/** Tensors whose values must survive whatever the test does to other tensors. */
function canaries(next: () => number): { check(): void; dispose(): void } {
  const ts = [
    randomTensor([7], 'float32', next),
    randomTensor([3, 5], 'float64', next),
    randomTensor([9], 'int32', next),
  ];
  const saved = ts.map((t) => values(t));
  return {
    check: () => ts.forEach((t, i) => assert.deepEqual(values(t), saved[i], `canary ${i} changed`)),
    dispose: () => ts.forEach((t) => t.dispose()),
  };
}

const live = () => memoryStats().liveTensors;

describe('the kernel boundary refuses disposed tensors', () => {
  it('in in-place kernels, out-of-place kernels and copies, writing nothing anywhere', () => {
    const next = rng(11);
    const before = live();
    const guard = canaries(next);
    const ops: Array<[string, (t: Tensor) => unknown]> = [
      ['fill_', (t) => t.fill_(3)],
      ['zero_', (t) => t.zero_()],
      ['add_', (t) => t.add_(1)],
      ['mul_', (t) => t.mul_(tensor(new Float32Array([2])))],
      ['exp', (t) => t.exp()],
      ['neg', (t) => t.neg()],
      ['add', (t) => t.add(t)],
      ['sum', (t) => t.sum()],
      ['softmax', (t) => softmax(t, 0)],
      ['clone', (t) => t.clone()],
      ['copy_ (destination)', (t) => t.copy_(zeros([4]))],
      ['copy_ (source)', (t) => zeros([4]).copy_(t)],
      ['index_select', (t) => indexSelect(t, 0, tensor([0, 1]))],
      ['gather', (t) => gather(t, 0, tensor([0, 1]))],
      ['cat', (t) => cat([t, t])],
      ['where', (t) => where(t.gt(0), t, 0)],
      ['clamp_', (t) => t.clamp_(0, 1)],
      ['uniform_', (t) => t.uniform_()],
      ['view', (t) => t.view([2, 2])],
    ];
    for (const [name, op] of ops) {
      const t = randomTensor([4], 'float32', next);
      t.dispose();
      // Whatever reuses the freed block must not be written through the disposed tensor.
      const reuse = randomTensor([4], 'float32', next);
      const reused = values(reuse);
      scope(() => assert.throws(() => op(t), /disposed/, name)); // scope: frees the operands made for the call
      assert.deepEqual(values(reuse), reused, `${name} wrote through a disposed tensor`);
      reuse.dispose();
      guard.check();
    }
    guard.dispose();
    assert.equal(live(), before);
  });

  it('checks each address it hands out: brand, liveness, device', () => {
    const t = tensor(new Float32Array([1, 2, 3]));
    assert.equal(contiguousAddress(t, 'demo', 3), t.storage.ptr);
    const lookalike = Object.create(Tensor.prototype) as Tensor;
    Object.assign(lookalike, { keySetHi: t.keySetHi, keySetLo: t.keySetLo, shape: [3] });
    assert.throws(
      () => contiguousAddress(lookalike, 'demo', 3),
      (e: Error) =>
        e instanceof TypeError && /demo: expected a Tensor made by this runtime, got an object/.test(e.message),
    );
    assert.throws(() => contiguousAddress({} as Tensor, 'demo', 1), TypeError);
    assert.throws(() => contiguousAddress(null as unknown as Tensor, 'demo', 1), /got null/);
    const meta = zeros([3], { device: 'meta' });
    assert.throws(() => contiguousAddress(meta, 'demo', 3), /expected a CPU tensor, but got one on meta/);
    meta.dispose();
    t.dispose();
    assert.throws(() => contiguousAddress(t, 'demo', 3), /demo: a disposed tensor cannot be used/);
  });
});

describe('the kernel boundary refuses regions outside the storage', () => {
  it('for contiguous counts, strided regions and element offsets', () => {
    const t = tensor(new Float32Array([1, 2, 3, 4, 5, 6]));
    assert.doesNotThrow(() => contiguousAddress(t, 'demo', 6));
    assert.throws(() => contiguousAddress(t, 'demo', 7), /demo: the region of 7 contiguous elements/);
    assert.throws(() => contiguousAddress(t, 'demo', 1.5), /not a count the CPU kernels can take/);
    assert.throws(() => contiguousAddress(t, 'demo', -1), /not a count/);
    assert.throws(() => contiguousAddress(t, 'demo', 2 ** 31), /not a count/);
    assert.doesNotThrow(() => stridedAddress(t, 'demo', [2, 3], [1, 2])); // a transposed region
    assert.throws(() => stridedAddress(t, 'demo', [2, 3], [3, 2]), /sizes \[2, 3\] and strides \[3, 2\]/);
    assert.throws(() => stridedAddress(t, 'demo', [2], [-1]), /outside its storage/);
    assert.throws(() => stridedAddress(t, 'demo', [2], [NaN]), /stride NaN/);
    assert.throws(() => stridedAddress(t, 'demo', [2.5], [1]), /size 2.5/);
    assert.equal(stridedAddress(t, 'demo', [2], [1], 4), t.storage.ptr + 16);
    assert.throws(() => stridedAddress(t, 'demo', [2], [1], 5), /outside its storage/);
    assert.doesNotThrow(() => stridedAddress(t, 'demo', [0, 3], [100, 100])); // empty: nothing is touched
    assert.deepEqual([...(hostElements(t, 'demo', 2) as Float32Array)], [1, 2]);
    assert.throws(() => hostElements(t, 'demo', 100), /outside its storage/);
    t.dispose();
  });

  it('so a tensor whose shape array was tampered with cannot reach past its block', () => {
    const next = rng(12);
    const guard = canaries(next);
    const t = randomTensor([4], 'float32', next);
    (t.shape as number[])[0] = 1000;
    assert.throws(() => t.fill_(1), /fill_: the region of 1000 contiguous elements/);
    assert.throws(() => t.exp_(), /outside its storage/);
    (t.shape as number[])[0] = 4;
    guard.check();
    t.dispose();
    guard.dispose();
  });

  it('refuses descriptors beyond 64 dims before writing them', () => {
    assert.throws(
      () => writeDescriptor('demo', new Array(65).fill(2), [new Array(65).fill(1)]),
      /at most 64 dimensions that cannot be merged, got 65/,
    );
    assert.throws(() => writeDescriptor('demo', [2], [[2 ** 40]]), /stride 1099511627776/);
    assert.throws(() => writeDescriptor('demo', [2, 2], [[1]]), /wrong rank/);
  });
});

describe('tensor descriptions are checked when made', () => {
  const storageOf = (nbytes: number) => Storage.allocate(Device.cpu, nbytes);

  it("with PyTorch's setStorage message for a view past the storage, releasing the storage reference", () => {
    const before = memoryStats();
    assert.throws(
      () => new Tensor({ storage: storageOf(16), shape: [5], dtype: float32 }),
      (e: Error) =>
        e.message ===
          'setStorage: sizes [5], strides [1], storage offset 0, and itemsize 4 requiring a storage size of 20 are ' +
            'out of bounds for storage of size 16',
    );
    assert.throws(
      () => new Tensor({ storage: storageOf(16), shape: [2], strides: [2], storageOffset: 2, dtype: float32 }),
      /storage offset 2, and itemsize 4 requiring a storage size of 20 are out of bounds for storage of size 16/,
    );
    assert.throws(
      () => new Tensor({ storage: storageOf(16), shape: [2], strides: [-3], storageOffset: 1, dtype: float32 }),
      /out of bounds/,
    );
    const after = memoryStats();
    assert.equal(after.bytes, before.bytes);
    assert.equal(after.storages, before.storages);
  });

  it('refusing non-integer, negative and oversized sizes, strides and offsets, and foreign dtypes', () => {
    const cases: Array<[string, () => unknown, RegExp]> = [
      [
        'NaN size',
        () => new Tensor({ storage: storageOf(64), shape: [NaN], dtype: float32 }),
        /sizes must be integers/,
      ],
      ['fractional size', () => new Tensor({ storage: storageOf(64), shape: [1.5], dtype: float32 }), /integers/],
      [
        'negative size',
        () => new Tensor({ storage: storageOf(64), shape: [2, -1], dtype: float32 }),
        /: Trying to create tensor with negative dimension -1: \[2, -1\]$/,
      ],
      [
        'NaN offset',
        () => new Tensor({ storage: storageOf(64), shape: [1], storageOffset: NaN, dtype: float32 }),
        /storage offset must be a non-negative integer, got NaN/,
      ],
      [
        'fractional stride',
        () => new Tensor({ storage: storageOf(64), shape: [2], strides: [0.5], dtype: float32 }),
        /strides must be integers/,
      ],
      [
        'stride count',
        () => new Tensor({ storage: storageOf(64), shape: [2], strides: [1, 1], dtype: float32 }),
        /1 sizes but 2 strides/,
      ],
      [
        'overflowing sizes',
        () => new Tensor({ storage: storageOf(64), shape: [2 ** 30, 2 ** 30, 2 ** 30], dtype: float32 }),
        /Storage size calculation overflowed/,
      ],
      [
        'a dtype look-alike',
        () => new Tensor({ storage: storageOf(64), shape: [1], dtype: { ...float32 } as typeof float32 }),
        /one of the runtime's dtypes/,
      ],
      [
        'a storage look-alike',
        () => new Tensor({ storage: { ptr: 0, nbytes: 1 << 30 } as unknown as Storage, shape: [4], dtype: float32 }),
        /needs a Storage made by Storage.allocate/,
      ],
    ];
    const before = memoryStats();
    for (const [name, make, message] of cases) assert.throws(make, message, name);
    const after = memoryStats();
    assert.equal(after.storages, before.storages, 'each refused description released its storage');
    assert.equal(after.liveTensors, before.liveTensors);
  });

  it('and a storage is made only by Storage.allocate, with a fixed address and size', () => {
    const s = storageOf(32);
    const StorageClass = Storage as unknown as new (...args: unknown[]) => Storage;
    assert.throws(() => new StorageClass(Symbol('forged'), Device.cpu, 0, 1 << 30, {}), /Storage.allocate\(\) only/);
    assert.throws(() => {
      (s as unknown as { ptr: number }).ptr = 0;
    }, TypeError);
    assert.throws(() => {
      (s as unknown as { nbytes: number }).nbytes = 1 << 30;
    }, TypeError);
    assert.equal(s.nbytes, 32);
    assert.throws(() => Storage.allocate(Device.cpu, 1.5), /non-negative integer number of bytes, got 1.5/);
    assert.throws(() => Storage.allocate(Device.cpu, -8), RangeError);
    assert.equal(Storage.isStorage(s), true);
    assert.equal(Storage.isStorage({ ...s }), false);
    s.release();
    assert.throws(() => new Tensor({ storage: s, shape: [1], dtype: float32 }), /storage that was already freed/);
  });

  it('and a tensor cannot be pointed at another storage, offset or dtype afterwards', () => {
    const t = tensor(new Float32Array([1, 2]));
    for (const field of ['storage', 'storageOffset', 'dtype']) {
      assert.throws(() => {
        (t as unknown as Record<string, unknown>)[field] = 0;
      }, TypeError);
    }
    assert.deepEqual(values(t), [1, 2]);
    t.dispose();
  });
});

describe('operations over many dimensions compute', () => {
  it('with hundreds of size-1 dims: elementwise, reductions, softmax, gather, index_select, cat', () => {
    const next = rng(13);
    const before = live();
    scope(() => {
      const ones = new Array<number>(300).fill(1);
      const x = randomTensor([1, ...ones, 3], 'float32', next);
      const xs = values(x);
      const y = randomTensor([2, ...ones, 1], 'float32', next);
      const ys = values(y);
      const sum = x.add(y);
      assert.equal(sum.ndim, 302);
      assert.deepEqual(values(sum), [0, 1].flatMap((i) => xs.map((v) => Math.fround(v + ys[i]))));
      assert.deepEqual(values(x.exp()).map((v) => v.toFixed(4)), xs.map((v) => Math.exp(v).toFixed(4)));
      assert.ok(Math.abs((x.sum().item() as number) - xs.reduce((a, b) => a + b)) < 1e-5);
      const z = xs.map(Math.exp), total = z.reduce((a, b) => a + b);
      values(softmax(x, -1)).forEach((v, i) => assert.ok(Math.abs(v - z[i] / total) < 1e-6));
      const index = zeros([1, ...ones, 2], { dtype: 'int64' }).add(tensor([2, 0]));
      assert.deepEqual(values(gather(x, -1, index)), [xs[2], xs[0]]);
      assert.deepEqual(values(indexSelect(x, -1, tensor([1, 1]))), [xs[1], xs[1]]);
      assert.deepEqual(values(cat([x, x], -1)), [...xs, ...xs]);
    });
    assert.equal(live(), before);
  });

  it('with 18 dims that cannot be merged (a reversed permutation): unary, binary, copy, reduction', () => {
    const next = rng(14);
    const shape = new Array<number>(18).fill(2);
    const x = randomTensor(shape, 'float32', next);
    const xs = values(x);
    const reversed = [...shape.keys()].reverse();
    const p = x.permute(reversed); // no two adjacent dims merge: every stride differs by a factor of 2 the wrong way
    const e = p.exp().permute(reversed).contiguous();
    values(e).forEach((v, i) => assert.ok(Math.abs(v - Math.exp(xs[i])) <= 1e-6 * Math.exp(xs[i]), `exp ${i}`));
    const twice = p.add(p).permute(reversed).contiguous();
    assert.deepEqual(values(twice), xs.map((v) => Math.fround(2 * v)));
    const copy = zeros(shape).permute(reversed);
    copy.copy_(p);
    assert.deepEqual(values(copy.permute(reversed).contiguous()), xs);
    const colSum = p.sum(0); // reduces x's last dim
    const expected: number[] = [];
    for (let i = 0; i < xs.length; i += 2) expected.push(xs[i] + xs[i + 1]);
    const got = values(colSum.permute([...Array(17).keys()].reverse()).contiguous());
    got.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-5, `sum ${i}`));
    for (const t of [x, p, e, twice, copy, colSum]) t.dispose();
  });

  it('reduces and broadcasts over 17 non-mergeable dims against a float64 reference', () => {
    const next = rng(15);
    const a = randomTensor(new Array<number>(17).fill(2), 'float64', next).transpose(0, 16);
    const b = randomTensor([2, 1, 2], 'float64', next);
    const r = a.mul(b).sum([0, 2]);
    // Reference: walk every index of a (as viewed) and accumulate.
    const av = values(a), bv = values(b);
    const out = new Float64Array(2 ** 15);
    for (let i = 0; i < av.length; i++) {
      const idx = [...i.toString(2).padStart(17, '0')].map(Number);
      const prod = av[i] * bv[idx[14] * 2 + idx[16]];
      let o = 0;
      for (let d = 0; d < 17; d++) if (d !== 0 && d !== 2) o = o * 2 + idx[d];
      out[o] += prod;
    }
    values(r).forEach((v, i) => assert.ok(Math.abs(v - out[i]) < 1e-12, `element ${i}`));
    for (const t of [a, b, r]) t.dispose();
  });
});
