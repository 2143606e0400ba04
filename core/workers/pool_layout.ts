/**
 * The control block shared by a {@linkcode ThreadPool} and its workers (Note [Pool job protocol] in pool.ts).
 * Imported by both sides, so it holds only numbers.
 *
 * @module
 */

/** Word: the job sequence number (24 bits, wrapping); workers wait on it for a new job. */
export const SEQ = 0;
/** Word: `(seq << CLAIM_SHIFT) | chunks not yet claimed`; a participant claims the top chunk by compare-exchange. */
export const CLAIM = 1;
/** Word: chunks of the current job finished (run or faulted). */
export const DONE = 2;
/** Word: chunks of the current job. */
export const CHUNKS = 3;
/** Word: the job: an index into the module's function exports, or one of the `JOB_*` codes. */
export const JOB = 4;
/** Word: arguments (f64 slots) per chunk. */
export const NARGS = 5;
/** Word: 0, or 1 once a chunk faulted (the first fault writes the error text). */
export const FAULTED = 6;
/** Word: bytes of UTF-8 error text. */
export const ERROR_LENGTH = 7;
/** Word: the worker (1-based) whose fault the error text describes. */
export const FAULT_WORKER = 8;
/** Word: 1 while a profiler records chunk times (each participant writes its chunks' times at `TIMES_AT`). */
export const TIMED = 9;
/** Words from here: one ready flag per worker (0 starting, 1 ready, 2 stopped, -1 failed to start). */
export const READY = 16;
/** Most workers a pool runs. */
export const MAX_WORKERS = 255;
/** Words from here: the status of each chunk (a kernel status, or {@linkcode STATUS_FAULT}). */
export const STATUSES = READY + MAX_WORKERS + 1;
/** Most chunks one job has. */
export const MAX_CHUNKS = 1024;
/** Bits of the claim word that count chunks (the rest hold the low bits of the job sequence). */
export const CLAIM_SHIFT = 11;
/** Int32 words of the control block. */
export const CONTROL_WORDS = STATUSES + MAX_CHUNKS;

/** Most arguments a job passes to a kernel export per chunk (`bmm` takes 20). */
export const MAX_ARGS = 24;
/** Bytes of error text. */
export const ERROR_BYTES = 512;
/** Byte offset of the f64 argument area: `MAX_ARGS` slots per chunk. */
export const ARGS_AT = CONTROL_WORDS * 4;
/** Byte offset of the error text. */
export const ERROR_AT = ARGS_AT + MAX_CHUNKS * MAX_ARGS * 8;
/** Byte offset of the chunk times: per chunk, start and end (wall-clock ms) and who ran it (0 the caller). */
export const TIMES_AT = ERROR_AT + ERROR_BYTES;
/** Bytes of the whole shared block. */
export const CONTROL_BYTES = TIMES_AT + MAX_CHUNKS * 3 * 8;

/** Job code: leave the loop (the pool is shutting down). */
export const JOB_STOP = -1;
/** Job code for tests: a chunk that throws (a kernel fault the worker reports). */
export const JOB_TEST_THROW = -2;
/** Job code for tests: the worker exits without finishing its chunk, as a killed worker would. */
export const JOB_TEST_DIE = -3;

/** The status of a chunk whose kernel threw (kernels return statuses >= 0). */
export const STATUS_FAULT = -1;

/** The claim word of job `seq` with `chunks` chunks unclaimed. */
export function claimWord(seq: number, chunks: number): number {
  return ((seq << CLAIM_SHIFT) | chunks) | 0;
}

/**
 * Claims the top unclaimed chunk of job `seq`: its index, or -1 when none is left or `seq` is no longer the
 * current job (a worker that woke late for a finished job claims nothing).
 */
export function claimChunk(words: Int32Array, seq: number): number {
  const mine = claimWord(seq, 0) >>> CLAIM_SHIFT;
  for (;;) {
    const v = Atomics.load(words, CLAIM);
    const left = v & ((1 << CLAIM_SHIFT) - 1);
    if (v >>> CLAIM_SHIFT !== mine || left === 0) return -1;
    if (Atomics.compareExchange(words, CLAIM, v, v - 1) === v) return left - 1;
  }
}

/**
 * The function exports of the kernel module, in the order jobs number them. Both sides derive it from the
 * module itself, so they agree without sending names.
 */
export function functionExports(module: WebAssembly.Module): string[] {
  return WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name).sort();
}
