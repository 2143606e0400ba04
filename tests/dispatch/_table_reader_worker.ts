// Worker for table_store.test.ts, attached to the store's SharedArrayBuffers like any agent that dispatches with
// the same tables (Note [Table store layout]). Two jobs:
// - `read`: read one row with the seqlock protocol, as fast as possible, while the main thread rewrites it,
//   and report every consistent read that matches neither of the two patterns the main thread alternates;
// - `hold`: act as a writer that stays mid-write (odd generation, half the new pattern written) for a while, so
//   the main thread's `readRow` can be seen to wait for the write to finish.
import { ROW_GENERATION, ROW_WORDS, ROWS_PER_CHUNK } from '../../core/dispatch/table_store.ts';

/** What the test sends. */
export interface WorkerJob {
  readonly mode: 'read' | 'hold';
  readonly buffers: SharedArrayBuffer[];
  /**
   * Int32 control words: `read` mode: [0] stop flag set by the main thread, [1] consistent reads so far;
   * `hold` mode: [0] set to 1 once the generation is odd, [1] set to 1 once the write is finished.
   */
  readonly control: SharedArrayBuffer;
  readonly row: number;
  /** The row's words after the generation word, for each pattern (`hold` writes `patterns[1]`). */
  readonly patterns: readonly (readonly number[])[];
  /** `hold` mode: how long the write stays open, in milliseconds. */
  readonly holdMs?: number;
}

/** What the `read` job reports when stopped. */
export interface ReaderReport {
  readonly type: 'done';
  readonly reads: number;
  /** Reads retried because a write was in progress or finished under the reader. */
  readonly retries: number;
  /** Consistent reads that match neither pattern (must be 0). */
  readonly torn: number;
  /** Consistent reads matching each pattern. */
  readonly seen: number[];
  /** Accepted reads whose generation was lower than an earlier accepted one (must be 0). */
  readonly badGenerations: number;
  /** The first torn row, for the failure message. */
  readonly example?: number[];
}

const ctx = globalThis as unknown as {
  onmessage: ((e: MessageEvent<WorkerJob>) => void) | null;
  postMessage(message: unknown): void;
};

ctx.onmessage = (e) => {
  const job = e.data;
  const words = new Int32Array(job.buffers[Math.floor(job.row / ROWS_PER_CHUNK)]);
  const base = (job.row % ROWS_PER_CHUNK) * ROW_WORDS;
  const ctl = new Int32Array(job.control);
  if (job.mode === 'hold') hold(words, base, ctl, job);
  else read(words, base, ctl, job.patterns);
};

function hold(words: Int32Array, base: number, ctl: Int32Array, job: WorkerJob): void {
  const next = job.patterns[1];
  const half = Math.floor(next.length / 2);
  Atomics.add(words, base + ROW_GENERATION, 1);
  for (let i = 0; i < half; i++) words[base + 1 + i] = next[i];
  Atomics.store(ctl, 0, 1);
  Atomics.notify(ctl, 0);
  Atomics.wait(ctl, 1, 0, job.holdMs ?? 50); // nobody wakes this: it is a sleep
  for (let i = half; i < next.length; i++) words[base + 1 + i] = next[i];
  Atomics.add(words, base + ROW_GENERATION, 1);
  Atomics.store(ctl, 1, 1);
  ctx.postMessage({ type: 'held' });
}

function read(words: Int32Array, base: number, ctl: Int32Array, patterns: WorkerJob['patterns']): void {
  const copy = new Array<number>(ROW_WORDS - 1);
  let reads = 0, retries = 0, torn = 0, badGenerations = 0, lastGeneration = -1;
  const seen = patterns.map(() => 0);
  let example: number[] | undefined;
  ctx.postMessage({ type: 'ready' });
  while (Atomics.load(ctl, 0) === 0) {
    // Seqlock read: an even generation before, the same generation after.
    const before = Atomics.load(words, base + ROW_GENERATION);
    if ((before & 1) !== 0) {
      retries++;
      continue;
    }
    for (let i = 1; i < ROW_WORDS; i++) copy[i - 1] = words[base + i];
    if (Atomics.load(words, base + ROW_GENERATION) !== before) {
      retries++;
      continue;
    }
    if (before < lastGeneration) badGenerations++;
    lastGeneration = before;
    const match = patterns.findIndex((p) => p.every((w, i) => w === copy[i]));
    if (match < 0) {
      torn++;
      example ??= [...copy];
    } else {
      seen[match]++;
    }
    reads++;
    Atomics.add(ctl, 1, 1);
  }
  const report: ReaderReport = { type: 'done', reads, retries, torn, seen, badGenerations, example };
  ctx.postMessage(report);
}
