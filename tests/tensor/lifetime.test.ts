// Tensor lifetime: dispose(), `using`, scope() and keep(), errors after dispose, memoryStats() returning to
// its baseline, the FinalizationRegistry that frees tensors dropped without dispose(), and out-of-memory
// requests that fail cleanly and leave the runtime usable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { empty, keep, memoryStats, rand, scope, type Tensor, tensor, zeros, zerosLike } from '../../mod.ts';
import { restride, values } from '../ops/_helpers.ts';

/** Live tensors, bytes and storages (peak excluded: it only grows). */
function level(): [number, number, number] {
  const s = memoryStats();
  return [s.liveTensors, s.bytes, s.storages];
}

describe('dispose and using', () => {
  it('dispose() frees the storage once, and is idempotent', () => {
    const before = level();
    const t = zeros([10], { dtype: 'float64' });
    assert.deepEqual(level(), [before[0] + 1, before[1] + 80, before[2] + 1]);
    assert.equal(t.isDisposed, false);
    t.dispose();
    t.dispose();
    assert.equal(t.isDisposed, true);
    assert.deepEqual(level(), before);
  });

  it('views keep the storage alive until the last one is disposed', () => {
    const before = level();
    const base = tensor([1, 2, 3, 4], { dtype: 'float32' });
    const view = restride(base, [2], [2], 1); // takes over base's reference and disposes base
    assert.equal(base.isDisposed, true);
    assert.deepEqual(values(view), [2, 4]);
    assert.deepEqual(level(), [before[0] + 1, before[1] + 16, before[2] + 1]);
    view.dispose();
    assert.deepEqual(level(), before);
  });

  it('a `using` declaration disposes at the end of its block, also on throw', () => {
    const before = level();
    let escaped: Tensor | undefined;
    {
      using t = zeros([3]);
      escaped = t;
      assert.equal(t.isDisposed, false);
    }
    assert.equal(escaped.isDisposed, true);
    assert.throws(() => {
      using t = zeros([3]);
      escaped = t;
      throw new Error('boom');
    }, /boom/);
    assert.equal(escaped.isDisposed, true);
    assert.deepEqual(level(), before);
  });

  it('using a disposed tensor throws instead of reading freed memory', () => {
    const t = tensor([1, 2, 3], { dtype: 'float32' });
    t.dispose();
    assert.throws(() => t.toArray(), /^Error: toArray\(\): the tensor was disposed and cannot be used any more$/);
    assert.throws(() => t.tolist(), /the tensor was disposed/);
    assert.throws(() => t.add(1), /add\(\): argument 'self' was disposed/);
    assert.throws(() => t.uniform_(), /uniform_\(\): argument 'self' was disposed/);
    assert.throws(() => t.normal_(), /normal_\(\): argument 'self' was disposed/);
    assert.equal(String(t), 'tensor(<disposed>)');
    assert.deepEqual([...t.shape], [3]); // metadata stays readable
  });
});

describe('scope() and keep()', () => {
  it('frees intermediates and keeps what the function returns', () => {
    const before = level();
    const y = scope(() => {
      const a = zeros([4]);
      const b = a.add(1);
      return b.mul(3);
    });
    assert.deepEqual(values(y), [3, 3, 3, 3]);
    assert.equal(level()[0], before[0] + 1);
    y.dispose();
    assert.deepEqual(level(), before);
  });

  it('keeps tensors returned in arrays and nested plain objects', () => {
    const before = level();
    const out = scope(() => {
      const a = zeros([2]);
      const dropped = a.add(5);
      void dropped;
      return { list: [a, a.add(1)], nested: { deep: [a.add(2)] }, n: 3 };
    });
    assert.equal(level()[0], before[0] + 3);
    assert.deepEqual(values(out.nested.deep[0]), [2, 2]);
    for (const t of [...out.list, ...out.nested.deep]) t.dispose();
    assert.deepEqual(level(), before);
  });

  it('does not touch tensors made outside it', () => {
    const outside = zeros([2]);
    scope(() => outside.add(1)).dispose();
    assert.equal(outside.isDisposed, false);
    outside.dispose();
  });

  it('frees everything it made when the function throws', () => {
    const before = level();
    assert.throws(
      () =>
        scope(() => {
          zeros([100]);
          rand([100]);
          throw new Error('inside');
        }),
      /inside/,
    );
    assert.deepEqual(level(), before);
  });

  it('moves returned tensors to the enclosing scope, which frees them unless it returns them too', () => {
    const before = level();
    let inner: Tensor | undefined;
    const result = scope(() => {
      inner = scope(() => zeros([2]).add(1));
      assert.equal(inner.isDisposed, false);
      return inner.mul(2); // `inner` itself is not returned from the outer scope
    });
    assert.equal(inner!.isDisposed, true);
    assert.deepEqual(values(result), [2, 2]);
    result.dispose();
    assert.deepEqual(level(), before);
  });

  it('keep() exempts a tensor from the innermost scope', () => {
    const before = level();
    let cached: Tensor | undefined;
    scope(() => {
      cached = keep(zeros([3]).add(7));
      zeros([3]);
    });
    assert.deepEqual(values(cached!), [7, 7, 7]);
    cached!.dispose();
    assert.deepEqual(level(), before);
  });
});

describe('memoryStats()', () => {
  it('tracks live tensors, bytes, storages and the peak', () => {
    const before = memoryStats();
    const a = empty([1000], { dtype: 'float32' });
    const b = empty([10, 10], { dtype: 'int64' });
    const during = memoryStats();
    assert.equal(during.liveTensors, before.liveTensors + 2);
    assert.equal(during.bytes, before.bytes + 4000 + 800);
    assert.equal(during.storages, before.storages + 2);
    assert.ok(during.peakBytes >= during.bytes);
    a.dispose();
    b.dispose();
    const after = memoryStats();
    assert.deepEqual([after.liveTensors, after.bytes, after.storages], [
      before.liveTensors,
      before.bytes,
      before.storages,
    ]);
    assert.ok(after.peakBytes >= during.bytes);
  });

  it('stays flat over a long loop of operations', () => {
    const before = level();
    for (let i = 0; i < 200; i++) {
      scope(() => {
        rand([64]).mul(2).add(1);
      });
      scope(() => rand([64]).mul(2)).dispose();
    }
    assert.deepEqual(level(), before);
  });

  it('does not count meta tensors as bytes', () => {
    const before = level();
    const m = zeros([1 << 20], { device: 'meta' });
    assert.equal(level()[1], before[1]);
    m.dispose();
    assert.deepEqual(level(), before);
  });
});

describe('the FinalizationRegistry safety net', () => {
  const g = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
  const collect = g.Bun !== undefined ? () => g.Bun!.gc(true) : g.gc;

  it('releases tensors that were dropped without dispose()', {
    skip: collect === undefined ? 'no gc(): run Deno with --v8-flags=--expose-gc' : false,
  }, async () => {
    const before = level();
    // Allocate in a separate function so that no reference to the tensors survives on this frame; keep their
    // storages to watch them being released (other test files' garbage may be collected too).
    const drop = () => Array.from({ length: 20 }, () => zeros([256]).storage);
    const storages = drop();
    assert.equal(level()[0], before[0] + 20);
    assert.ok(storages.every((s) => !s.isReleased));
    for (let round = 0; round < 50 && !storages.every((s) => s.isReleased); round++) {
      collect!();
      await new Promise((resolve) => setTimeout(resolve, 5)); // finalizers run in later tasks
    }
    assert.ok(storages.every((s) => s.isReleased));
    assert.ok(level()[0] <= before[0] && level()[1] <= before[1]);
  });
});

describe('out of memory', () => {
  it('throws a RangeError naming the request and leaves the runtime usable', () => {
    const before = level();
    assert.throws(
      () => empty([2 ** 31], { dtype: 'float32' }),
      (e: Error) =>
        e instanceof RangeError && /8\.00 GiB \(8589934592 bytes\)/.test(e.message) && /limit/.test(e.message),
    );
    assert.throws(() => zeros([2 ** 30, 4], { dtype: 'float64' }), RangeError);
    assert.throws(() => rand([2 ** 31]), RangeError);
    const huge = zeros([2 ** 31], { device: 'meta' });
    assert.throws(() => zerosLike(huge, { device: 'cpu' }), RangeError);
    huge.dispose();
    assert.deepEqual(level(), before);
    // Still allocates and computes afterwards.
    const t = scope(() => zeros([1000]).add(2).mul(3));
    assert.deepEqual(values(t).slice(0, 3), [6, 6, 6]);
    t.dispose();
    assert.deepEqual(level(), before);
  });
});
