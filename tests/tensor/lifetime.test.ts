// Tensor lifetime: dispose(), `using`, scope() and keep(), errors after dispose, memoryStats() returning to
// its baseline, the FinalizationRegistry that frees tensors dropped without dispose(), and out-of-memory
// requests that fail cleanly and leave the runtime usable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  empty,
  heldTensors,
  keep,
  linear,
  matmul,
  memoryStats,
  OutOfMemoryError,
  rand,
  randn,
  scope,
  type Tensor,
  tensor,
  zeros,
  zerosLike,
} from '../../mod.ts';
import { restride, values } from '../ops/_helpers.ts';

/** Live tensors, bytes and storages (peak excluded: it only grows). */
function level(): [number, number, number] {
  const s = memoryStats();
  return [s.liveTensors, s.bytes, s.storages];
}

const g = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
const collect = g.Bun !== undefined ? () => g.Bun!.gc(true) : g.gc;

/**
 * `level()` once the finalizers have freed what earlier tests dropped without dispose() (Bun runs every file in
 * one process), so that counts compared across awaits, when finalizers may run, are this test's own.
 */
async function settledLevel(): Promise<[number, number, number]> {
  let last = level(), stableRounds = 0;
  for (let round = 0; round < 40 && collect !== undefined && stableRounds < 2; round++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const now = level();
    stableRounds = String(now) === String(last) ? stableRounds + 1 : 0;
    last = now;
  }
  return last;
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

describe('scope() keeps what the result holds', () => {
  it('tensors in Maps (keys and values), Sets, class instances and symbol-keyed properties', () => {
    const before = level();
    const tag = Symbol('tag');
    class Holder {
      readonly list: Tensor[];
      readonly [tag]: Tensor;
      constructor(list: Tensor[], tagged: Tensor) {
        this.list = list;
        this[tag] = tagged;
      }
    }
    const out = scope(() => {
      const t = () => zeros([2]).add(1); // the zeros are intermediates
      return {
        map: new Map<unknown, unknown>([[t(), 'key'], ['value', t()], ['nested', new Map([['deep', [t()]]])]]),
        set: new Set([t(), 42]),
        holder: new Holder([t(), t()], t()),
      };
    });
    const kept = [
      ...[...out.map.keys()].filter((k): k is Tensor => typeof k !== 'string'),
      out.map.get('value') as Tensor,
      ((out.map.get('nested') as Map<string, Tensor[]>).get('deep') as Tensor[])[0],
      ...[...out.set].filter((v): v is Tensor => typeof v !== 'number'),
      ...out.holder.list,
      out.holder[tag],
    ];
    assert.equal(kept.length, 7);
    assert.ok(kept.every((t) => !t.isDisposed));
    assert.deepEqual(level()[0], before[0] + 7);
    for (const t of kept) t.dispose();
    assert.deepEqual(level(), before);
  });

  it('survives cycles, and visits a shared tensor once', () => {
    const before = level();
    const out = scope(() => {
      const shared = zeros([3]);
      const a: Record<string, unknown> = { shared };
      const b = { a, shared, self: null as unknown };
      a.b = b;
      b.self = b;
      return b;
    });
    assert.equal(out.shared.isDisposed, false);
    assert.equal(level()[0], before[0] + 1);
    out.shared.dispose();
    assert.deepEqual(level(), before);
  });

  it("keeps a kept tensor's gradient, and what an object lists through [heldTensors]()", () => {
    const before = level();
    class Private {
      #t: Tensor;
      constructor(t: Tensor) {
        this.#t = t;
      }
      get tensor(): Tensor {
        return this.#t;
      }
      [heldTensors]() {
        return [this.#t];
      }
    }
    const out = scope(() => {
      const w = zeros([2]).requiresGrad_();
      w.grad = zeros([2]).add(3);
      return { w, hidden: new Private(zeros([4])) };
    });
    assert.deepEqual(values(out.w.grad!), [3, 3]);
    assert.equal(out.hidden.tensor.isDisposed, false);
    out.w.grad!.dispose();
    out.w.dispose();
    out.hidden.tensor.dispose();
    assert.deepEqual(level(), before);
  });

  it('does not call getters, nor look into closures, #private fields or nesting past 32 levels', () => {
    const before = level();
    let getterCalls = 0;
    const out = scope(() => {
      const behindGetter = zeros([1]);
      const inClosure = zeros([1]);
      let deep: unknown = zeros([1]);
      for (let i = 0; i < 40; i++) deep = [deep];
      return {
        get lazy() {
          getterCalls++;
          return behindGetter;
        },
        read: () => inClosure,
        deep,
        shallow: [[[zeros([1])]]],
      };
    });
    assert.equal(getterCalls, 0);
    assert.equal(out.read().isDisposed, true);
    assert.equal(out.lazy.isDisposed, true);
    let deep = out.deep as unknown[];
    for (let i = 0; i < 39; i++) deep = deep[0] as unknown[];
    assert.equal((deep[0] as Tensor).isDisposed, true);
    assert.equal(out.shallow[0][0][0].isDisposed, false);
    out.shallow[0][0][0].dispose();
    assert.deepEqual(level(), before);
  });

  it('rejects a non-function, and keep() rejects values that cannot hold tensors', () => {
    for (const bad of [undefined, null, 3, 'fn', {}]) {
      assert.throws(
        () => scope(bad as () => void),
        (e: Error) => e instanceof TypeError && /^scope\(\): expected a function, got /.test(e.message),
      );
    }
    for (const bad of [undefined, null, 3, 'x']) {
      assert.throws(
        () => keep(bad),
        (e: Error) =>
          e instanceof TypeError && /^keep\(\): expected a Tensor or an object holding tensors, got /.test(e.message),
      );
    }
  });

  it('keep() exempts every tensor a container holds, and their gradients, from every enclosing scope', () => {
    const before = level();
    let kept: { a: Tensor; b: Tensor[] } | undefined;
    scope(() => {
      scope(() => {
        const b = zeros([2]).requiresGrad_();
        b.grad = zeros([2]).add(1);
        kept = keep({ a: zeros([1]).add(1), b: [b] });
      });
    });
    assert.equal(kept!.a.isDisposed, false);
    assert.equal(kept!.b[0].isDisposed, false);
    assert.deepEqual(values(kept!.b[0].grad!), [1, 1]);
    kept!.a.dispose();
    kept!.b[0].grad!.dispose();
    kept!.b[0].dispose();
    assert.deepEqual(level(), before);
  });

  it('fails, freeing what it made, when searching the result or reading its `then` throws', async () => {
    const before = await settledLevel();
    assert.throws(
      () =>
        scope(() => {
          zeros([2]);
          return new Proxy({ t: zeros([1]) }, {
            ownKeys() {
              throw new Error('hostile result');
            },
          });
        }),
      /^Error: hostile result$/,
    );
    assert.throws(
      () =>
        scope(() => {
          zeros([2]);
          return {
            get then() {
              throw new Error('hostile then');
            },
          };
        }),
      /^Error: hostile then$/,
    );
    // Nothing is left attributed to the failed scopes: a later task's tensors are its own.
    const after = await new Promise<Tensor>((resolve) => setTimeout(() => resolve(zeros([1])), 0));
    assert.equal(after.isDisposed, false);
    after.dispose();
    assert.deepEqual(level(), before);
  });
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('async scope()', () => {
  it('frees what the function made before and after its awaits once it settles, and keeps the result', async () => {
    const before = await settledLevel();
    let early: Tensor | undefined, late: Tensor | undefined;
    const pending = scope(async () => {
      early = zeros([2]).add(1);
      await tick();
      late = early.mul(3);
      await tick();
      return { sum: late.add(early) };
    });
    assert.ok(pending instanceof Promise);
    const out = await pending;
    assert.equal(early!.isDisposed, true);
    assert.equal(late!.isDisposed, true);
    assert.deepEqual(values(out.sum), [4, 4]);
    out.sum.dispose();
    assert.deepEqual(level(), before);
  });

  it('frees everything it made when the promise rejects, and passes the rejection on', async () => {
    const before = await settledLevel();
    let made: Tensor | undefined;
    await assert.rejects(
      scope(async () => {
        made = zeros([2]);
        await tick();
        rand([5]);
        throw new RangeError('async failure');
      }),
      /^RangeError: async failure$/,
    );
    assert.equal(made!.isDisposed, true);
    assert.deepEqual(level(), before);
  });

  it('never frees tensors that other tasks make while it awaits', async () => {
    const before = await settledLevel();
    let resume: () => void = () => {};
    const gate = new Promise<void>((resolve) => (resume = resolve));
    const scoped = scope(async () => {
      zeros([1]);
      await gate;
      return zeros([1]).add(2);
    });
    // Another task runs while the scope is suspended: outside any scope, in a sync scope, and in a timer.
    const outside = zeros([3]);
    const fromSyncScope = scope(() => zeros([3]).add(1));
    const fromTimer = await new Promise<Tensor>((resolve) => setTimeout(() => resolve(zeros([3])), 0));
    resume();
    const result = await scoped;
    for (const t of [outside, fromSyncScope, fromTimer, result]) assert.equal(t.isDisposed, false);
    for (const t of [outside, fromSyncScope, fromTimer, result]) t.dispose();
    assert.deepEqual(level(), before);
  });

  it('overlapping async scopes each free only their own tensors', async () => {
    const before = await settledLevel();
    const made: Tensor[][] = [[], []];
    const work = (k: 0 | 1, delays: number[]) =>
      scope(async () => {
        for (const ms of delays) {
          made[k].push(zeros([1]).add(k));
          await new Promise((resolve) => setTimeout(resolve, ms));
        }
        return made[k][made[k].length - 1];
      });
    const [a, b] = await Promise.all([work(0, [3, 1, 4]), work(1, [1, 5, 1, 2])]);
    assert.deepEqual([values(a), values(b)], [[0], [1]]);
    assert.deepEqual(made.map((list) => list.filter((t) => !t.isDisposed).length), [1, 1]);
    a.dispose();
    b.dispose();
    assert.deepEqual(level(), before);
  });

  it('nests with sync and async scopes in any mix; results move outwards', async () => {
    const before = await settledLevel();
    let innerSync: Tensor | undefined, innerAsync: Tensor | undefined;
    const out = await scope(async () => {
      innerSync = scope(() => zeros([2]).add(1)); // kept by the sync scope, owned by the async one
      await tick();
      innerAsync = await scope(async () => {
        await tick();
        return zeros([2]).add(2);
      });
      const fromNestedSync = scope(() => scope(() => innerAsync!.add(innerSync!)));
      await tick();
      return fromNestedSync;
    });
    assert.equal(innerSync!.isDisposed, true);
    assert.equal(innerAsync!.isDisposed, true);
    assert.deepEqual(values(out), [3, 3]);
    out.dispose();
    assert.deepEqual(level(), before);
  });

  it('an async scope inside a sync scope returns its promise; the tensors it keeps outlive both', async () => {
    const before = await settledLevel();
    const promise = scope(() =>
      scope(async () => {
        await tick();
        return zeros([2]).add(5);
      })
    );
    const out = await promise;
    assert.deepEqual(values(out), [5, 5]);
    out.dispose();
    assert.deepEqual(level(), before);
  });

  it('also follows promises from a plain function that calls async code', async () => {
    const before = await settledLevel();
    const helper = async () => {
      const a = zeros([2]);
      await tick();
      return a.add(1);
    };
    const out = await scope(() => helper());
    assert.deepEqual(values(out), [1, 1]);
    out.dispose();
    assert.deepEqual(level(), before);
  });

  it('keep() works inside async scopes', async () => {
    const before = await settledLevel();
    let cached: Tensor | undefined;
    await scope(async () => {
      await tick();
      cached = keep(zeros([2]).add(7));
      zeros([1]);
    });
    assert.deepEqual(values(cached!), [7, 7]);
    cached!.dispose();
    assert.deepEqual(level(), before);
  });

  it('gives what a task it did not await makes after it settled to the enclosing scope', async () => {
    const before = await settledLevel();
    let straggler: Tensor | undefined;
    let finished: Promise<void> | undefined;
    await scope(async () => {
      await scope(async () => {
        finished = (async () => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          straggler = zeros([1]); // made after the inner scope settled
        })();
        await tick();
      });
      assert.equal(straggler, undefined);
      await finished;
      assert.equal(straggler!.isDisposed, false); // owned by the outer scope now
    });
    assert.equal(straggler!.isDisposed, true);
    assert.deepEqual(level(), before);
  });
});

describe('views and their bases', () => {
  it('the storage goes when both the view and its base are disposed, in either order', () => {
    const before = level();
    for (const viewFirst of [true, false]) {
      const base = zeros([4, 6]);
      const view = base.t();
      const storage = base.storage;
      (viewFirst ? view : base).dispose();
      assert.equal(storage.isReleased, false);
      (viewFirst ? base : view).dispose();
      assert.equal(storage.isReleased, true);
      assert.deepEqual(level(), before);
    }
  });

  it('a disposed view forgets its base', () => {
    const base = zeros([3]);
    const view = base.view([1, 3]);
    assert.equal(view.base, base);
    view.dispose();
    assert.equal(view.base, undefined);
    base.dispose();
  });

  it('operators that view their inputs internally (t() in linear, views in matmul) leave nothing behind', () => {
    const x = randn([5, 3]), w = randn([4, 3]), b = randn([4]), v = randn([3]), m = randn([3, 5]);
    const batch = randn([2, 5, 3]), strided = randn([6, 4]).slice(0, null, null, 2); // a non-contiguous [3, 4]
    const before = level();
    const outputs = [
      linear(x, w, b),
      linear(batch, w),
      linear(strided.t(), x),
      matmul(x, v),
      matmul(v, m),
      matmul(batch, m),
      matmul(strided, strided.t()),
      x.reshape([15]), // a view of x
      strided.reshape([12]), // a copy: strided cannot be viewed flat
    ];
    assert.equal(level()[0], before[0] + outputs.length + 2); // plus this test's two strided.t() views
    for (const t of outputs) t.dispose();
    assert.equal(level()[0], before[0] + 2);
    assert.deepEqual(level().slice(1), before.slice(1));
    for (const t of [x, w, b, v, m, batch, strided]) t.dispose();
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
  const skip = collect === undefined ? 'no gc(): run Deno with --v8-flags=--expose-gc' : false;
  async function collectUntil(done: () => boolean): Promise<void> {
    for (let round = 0; round < 50 && !done(); round++) {
      collect!();
      await new Promise((resolve) => setTimeout(resolve, 5)); // finalizers run in later tasks
    }
  }

  it('frees a base that was dropped while its disposed view is still referenced', { skip }, async () => {
    const views: Tensor[] = [];
    // The base is made and dropped in a separate frame; its view is disposed but kept in `views`.
    const make = () => {
      const base = zeros([64, 64]);
      const view = base.t();
      view.dispose();
      views.push(view);
      return base.storage;
    };
    const storage = make();
    await collectUntil(() => storage.isReleased);
    assert.equal(storage.isReleased, true);
    assert.equal(views[0].isDisposed, true);
  });

  it('frees the storage once a view and its base are both dropped', { skip }, async () => {
    const make = () => {
      const base = zeros([64, 64]);
      const view = base.t().reshape([4096]); // a view of a view records the same base
      void view;
      return base.storage;
    };
    const storage = make();
    await collectUntil(() => storage.isReleased);
    assert.equal(storage.isReleased, true);
  });

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
  it('says how much live tensors hold and how to free memory, as an OutOfMemoryError (a RangeError)', () => {
    const held = [zeros([1000, 1000]), zeros([10])];
    const view = held[0].t();
    const stats = memoryStats();
    const error = (() => {
      try {
        empty([2 ** 31], { dtype: 'float32' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected an out-of-memory error');
    })();
    assert.ok(error instanceof OutOfMemoryError && error instanceof RangeError);
    assert.equal(error.name, 'OutOfMemoryError');
    const mib = (stats.bytes / 2 ** 20).toFixed(2);
    assert.match(
      error.message,
      new RegExp(
        `^CPU out of memory: tried to allocate 8\\.00 GiB \\(8589934592 bytes\\); ${mib} MiB is held by ` +
          `${stats.liveTensors} live tensors \\(${stats.storages} storages\\); allocator: .* in use, limit .*\\. ` +
          'Free the tensors you no longer need with dispose\\(\\) \\(or a `using` declaration\\), or run the work ' +
          'inside scope\\(\\), which frees every tensor it made except what it returns$',
      ),
    );
    assert.ok(error.cause instanceof RangeError);
    view.dispose();
    for (const t of held) t.dispose();
  });

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
