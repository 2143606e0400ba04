// The SharedArrayBuffer table store: row layout, the seqlock generation word, row reuse, chunking, and a Worker
// reading rows concurrently with the owner's writes (Note [Table store layout]).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Dispatcher,
  DispatchKey,
  dispatchTableIndexForKey,
  keyHi,
  Library,
  NUM_BACKENDS,
  NUM_RUNTIME_ENTRIES,
} from '../../core/dispatch/mod.ts';
import {
  ROW_ENTRIES,
  ROW_GENERATION,
  ROW_NFT_HI,
  ROW_NFT_LO,
  ROW_PER_BACKEND,
  ROW_PER_BACKEND_FLAG,
  ROW_WORDS,
  type RowData,
  type RowRef,
  ROWS_PER_CHUNK,
  TableStore,
} from '../../core/dispatch/table_store.ts';
import type { ReaderReport, WorkerJob } from './_table_reader_worker.ts';

const K = DispatchKey;

/** A row whose every word is derived from `seed`, with per-backend masks that differ from each other. */
function pattern(seed: number, requiresPerBackend = true): RowData {
  return {
    ids: Int32Array.from({ length: NUM_RUNTIME_ENTRIES }, (_, i) => seed * 1000 + i + 1),
    nonFallthrough: [seed * 7 + 1, seed * 7 + 2],
    perBackend: Array.from({ length: NUM_BACKENDS }, (_, b) => [seed * 100 + 2 * b, seed * 100 + 2 * b + 1] as const),
    requiresPerBackend,
  };
}

/** The row's words after its generation word. */
function rawWords(ref: RowRef): number[] {
  return [...ref.words.subarray(ref.base + 1, ref.base + ROW_WORDS)];
}

function generation(ref: RowRef): number {
  return Atomics.load(ref.words, ref.base + ROW_GENERATION);
}

function plain(data: RowData) {
  return {
    ids: [...data.ids],
    nonFallthrough: [...data.nonFallthrough],
    perBackend: data.perBackend.map((p) => [...p]),
    requiresPerBackend: data.requiresPerBackend,
  };
}

describe('table store rows', () => {
  it('lay out generation, flag, masks, per-backend masks and one kernel id per slot', () => {
    assert.equal(ROW_GENERATION, 0);
    assert.equal(ROW_ENTRIES, ROW_PER_BACKEND + 2 * NUM_BACKENDS);
    assert.equal(ROW_WORDS, ROW_ENTRIES + NUM_RUNTIME_ENTRIES);
    const store = new TableStore();
    store.allocateRow();
    const ref = store.allocateRow();
    assert.equal(ref.row, 1);
    assert.equal(ref.base, ROW_WORDS);
    const data = pattern(3);
    store.writeRow(ref, data);
    const w = (offset: number) => ref.words[ref.base + offset];
    assert.equal(w(ROW_PER_BACKEND_FLAG), 1);
    assert.equal(w(ROW_NFT_HI), data.nonFallthrough[0]);
    assert.equal(w(ROW_NFT_LO), data.nonFallthrough[1]);
    for (let b = 0; b < NUM_BACKENDS; b++) {
      assert.equal(w(ROW_PER_BACKEND + 2 * b), data.perBackend[b][0]);
      assert.equal(w(ROW_PER_BACKEND + 2 * b + 1), data.perBackend[b][1]);
    }
    for (let slot = 0; slot < NUM_RUNTIME_ENTRIES; slot++) assert.equal(w(ROW_ENTRIES + slot), data.ids[slot]);
    assert.deepEqual(rawWords(store.ref(0)), new Array(ROW_WORDS - 1).fill(0), 'the neighbouring row is untouched');
    // Without per-backend masks every backend gets the operator-wide mask.
    store.writeRow(ref, { ...data, perBackend: [], requiresPerBackend: false });
    assert.equal(w(ROW_PER_BACKEND_FLAG), 0);
    for (let b = 0; b < NUM_BACKENDS; b++) {
      assert.deepEqual([w(ROW_PER_BACKEND + 2 * b), w(ROW_PER_BACKEND + 2 * b + 1)], [...data.nonFallthrough]);
    }
  });

  it('readRow returns exactly what writeRow wrote', () => {
    const store = new TableStore();
    const refs = [store.allocateRow(), store.allocateRow(), store.allocateRow()];
    const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    const pair = fc.tuple(int32, int32);
    const rowArb = fc.record({
      ids: fc.array(fc.nat(5000), { minLength: NUM_RUNTIME_ENTRIES, maxLength: NUM_RUNTIME_ENTRIES })
        .map((a) => Int32Array.from(a)),
      nonFallthrough: pair,
      perBackend: fc.array(pair, { minLength: NUM_BACKENDS, maxLength: NUM_BACKENDS }),
      requiresPerBackend: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.nat(refs.length - 1), rowArb, (i, data) => {
        const others = refs.filter((_, j) => j !== i).map((r) => rawWords(r));
        const before = generation(refs[i]);
        store.writeRow(refs[i], data);
        assert.deepEqual(plain(store.readRow(refs[i].row)), plain(data));
        assert.equal(generation(refs[i]), before + 2, 'a write advances the generation by 2');
        assert.equal(generation(refs[i]) % 2, 0, 'and leaves it even');
        assert.deepEqual(refs.filter((_, j) => j !== i).map((r) => rawWords(r)), others, 'other rows untouched');
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('a freed row is reused before a new one, zeroed, and its generation keeps counting up', () => {
    const store = new TableStore();
    const a = store.allocateRow();
    const b = store.allocateRow();
    store.writeRow(a, pattern(1));
    store.writeRow(b, pattern(2));
    store.writeRow(b, pattern(3));
    assert.equal(generation(b), 4);
    store.freeRow(b.row);
    assert.equal(generation(b), 6, 'freeing writes the row (readers see it change)');
    const c = store.allocateRow();
    assert.equal(c.row, b.row);
    assert.equal(store.rowCount, 2, 'no new row was made');
    assert.deepEqual(rawWords(c), new Array(ROW_WORDS - 1).fill(0));
    assert.equal(generation(c), 6, 'the generation never goes back, so a reader cannot mistake old for new');
    assert.deepEqual([...store.readRow(c.row).ids], new Array(NUM_RUNTIME_ENTRIES).fill(0));
    assert.deepEqual(plain(store.readRow(a.row)), plain(pattern(1)));
    const d = store.allocateRow();
    assert.equal(d.row, 2);
  });

  it('more than ROWS_PER_CHUNK rows spill into new SharedArrayBuffers and leave earlier rows in place', () => {
    const store = new TableStore();
    const first = Array.from({ length: ROWS_PER_CHUNK }, () => store.allocateRow());
    first.forEach((ref, i) => store.writeRow(ref, pattern(i % 50, i % 2 === 0)));
    assert.equal(store.buffers.length, 1);
    const firstChunk = store.buffers[0];
    const more = Array.from({ length: ROWS_PER_CHUNK + 44 }, () => store.allocateRow());
    assert.equal(store.rowCount, 2 * ROWS_PER_CHUNK + 44);
    assert.equal(store.buffers.length, 3);
    assert.equal(store.buffers[0], firstChunk, 'the first chunk is not reallocated');
    for (const buffer of store.buffers) {
      assert.ok(buffer instanceof SharedArrayBuffer);
      assert.equal(buffer.byteLength, ROWS_PER_CHUNK * ROW_WORDS * 4);
    }
    assert.equal(more[0].row, ROWS_PER_CHUNK);
    assert.equal(more[0].base, 0);
    assert.equal(more[0].words.buffer, store.buffers[1]);
    assert.equal(more.at(-1)!.words.buffer, store.buffers[2]);
    assert.equal(first[5].words, store.ref(5).words, 'a row keeps its chunk view');
    more.forEach((ref, i) => store.writeRow(ref, pattern(99 - (i % 40))));
    first.forEach((ref, i) => {
      assert.deepEqual(plain(store.readRow(ref.row)), plain(pattern(i % 50, i % 2 === 0)), `row ${ref.row}`);
    });
    more.forEach((ref, i) => assert.deepEqual(plain(store.readRow(ref.row)), plain(pattern(99 - (i % 40)))));
  });
});

describe("the dispatcher's rows", () => {
  it('hold the kernel id of every computed slot and the fallthrough masks', () => {
    const d = new Dispatcher();
    using def = new Library('t', 'DEF', undefined, { dispatcher: d });
    const op = def.define('f(Tensor x) -> Tensor');
    using impl = new Library('t', 'IMPL', K.CPU, { dispatcher: d });
    impl.impl('f', (_h: number, _l: number, x: unknown) => x, undefined, { debug: 'cpu kernel' });
    assert.equal(d.tableStore.rowCount, 1);
    const row = d.tableStore.readRow(0);
    const names = [...row.ids].map((id) => d.kernelName(id));
    const table = new Map(op.computedTable().map((r) => [r.key, r.kernel]));
    assert.equal(names[dispatchTableIndexForKey(K.CPU)], 'cpu kernel');
    assert.equal(names[dispatchTableIndexForKey(K.AutogradCPU)], 'registered in switchyard framework');
    assert.equal(row.ids[dispatchTableIndexForKey(K.Meta)], 0, 'a missing slot holds kernel id 0');
    assert.equal(names.filter((n) => n !== 'missing').length, table.size);
    // BackendSelect, ADInplaceOrView, AutogradOther, Autocast* and VmapMode fall through for every backend;
    // AutogradCPU and AutogradWebGPU only for their backends, so the row needs per-backend masks.
    assert.equal(row.nonFallthrough[0] & keyHi(K.BackendSelect), 0);
    assert.notEqual(row.nonFallthrough[0] & keyHi(K.CPU), 0);
    assert.equal(row.requiresPerBackend, true);
    const autograd = keyHi(K.AutogradCPU);
    assert.deepEqual(row.perBackend.map(([hi]) => (hi & autograd) !== 0), [false, false, true, true, true, true]);
  });
});

function nextMessage<T>(worker: Worker, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.removeEventListener('message', onMessage);
      reject(new Error(`the worker sent no '${type}' message within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (e: MessageEvent) => {
      if (e.data?.type !== type) return;
      clearTimeout(timer);
      worker.removeEventListener('message', onMessage);
      resolve(e.data as T);
    };
    worker.addEventListener('message', onMessage);
  });
}

/** A row in the second chunk holding pattern A, and the raw words of patterns A and B. */
function sharedRow() {
  const store = new TableStore();
  for (let i = 0; i < ROWS_PER_CHUNK; i++) store.allocateRow();
  const ref = store.allocateRow();
  const a = pattern(1, true), b = pattern(2, false);
  store.writeRow(ref, b);
  const patternB = rawWords(ref);
  store.writeRow(ref, a);
  const patternA = rawWords(ref);
  assert.ok(patternA.every((w, i) => w !== patternB[i]), 'every word differs, so any mix is detectable');
  return { store, ref, a, b, patternA, patternB };
}

function startWorker(): Worker {
  return new Worker(new URL('./_table_reader_worker.ts', import.meta.url), { type: 'module' });
}

describe('a Worker attached to the store', () => {
  it('never observes a torn row while the owner rewrites it', async () => {
    const WRITES = 20000;
    const { store, ref, a, b, patternA, patternB } = sharedRow();
    const control = new Int32Array(new SharedArrayBuffer(8));
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    const worker = startWorker();
    try {
      const ready = nextMessage(worker, 'ready', 5000);
      const job: WorkerJob = {
        mode: 'read',
        buffers: store.buffers,
        control: control.buffer as SharedArrayBuffer,
        row: ref.row,
        patterns: [patternA, patternB],
      };
      worker.postMessage(job);
      await ready;
      const deadline = Date.now() + 2000;
      // Twice per 1000 writes, wait until the worker has completed reads of the row as it stands (once A, once
      // B), so both patterns are seen whatever the scheduling; in between, reads and writes race freely.
      const waitForReads = (n: number) => {
        const target = Atomics.load(control, 1) + n;
        while (Atomics.load(control, 1) < target) {
          if (Date.now() > deadline) throw new Error('the worker stopped reading');
          Atomics.wait(sleeper, 0, 0, 1);
        }
      };
      waitForReads(1);
      const generationBefore = generation(ref);
      for (let i = 0; i < WRITES; i++) {
        store.writeRow(ref, i % 2 === 0 ? b : a);
        if (i % 1000 === 500 || i % 1000 === 999) waitForReads(2);
      }
      Atomics.store(control, 0, 1);
      const report = await nextMessage<ReaderReport>(worker, 'done', 5000);
      assert.equal(report.torn, 0, `torn row: ${JSON.stringify(report.example)}`);
      assert.equal(report.badGenerations, 0);
      assert.ok(report.seen[0] > 0 && report.seen[1] > 0, `seen: ${report.seen}`);
      assert.equal(report.seen[0] + report.seen[1], report.reads);
      assert.equal(generation(ref), generationBefore + 2 * WRITES);
    } finally {
      worker.terminate();
    }
  });

  it('readRow waits for a write in progress in another agent and returns the finished row', async () => {
    const { store, ref, b, patternA, patternB } = sharedRow();
    const control = new Int32Array(new SharedArrayBuffer(8));
    const worker = startWorker();
    try {
      const held = nextMessage(worker, 'held', 5000);
      const job: WorkerJob = {
        mode: 'hold',
        buffers: store.buffers,
        control: control.buffer as SharedArrayBuffer,
        row: ref.row,
        patterns: [patternA, patternB],
        holdMs: 50,
      };
      worker.postMessage(job);
      assert.equal(Atomics.wait(control, 0, 0, 5000) === 'timed-out', false, 'the worker opened its write');
      assert.equal(generation(ref) % 2, 1, 'mid-write: odd generation');
      const started = Date.now();
      const row = store.readRow(ref.row); // spins until the worker's write is complete
      assert.equal(Atomics.load(control, 1), 1, 'readRow returned only after the write finished');
      assert.ok(Date.now() - started >= 20, `waited ${Date.now() - started} ms`);
      assert.deepEqual(plain(row), plain(b));
      assert.equal(generation(ref) % 2, 0);
      await held;
    } finally {
      worker.terminate();
    }
  });
});
