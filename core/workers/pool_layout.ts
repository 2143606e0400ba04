/**
 * The control block shared by a {@linkcode ThreadPool} and its workers (Note [Pool job protocol] in pool.ts).
 * Imported by both sides, so it holds only numbers.
 *
 * @module
 */

/** Int32 words before the first worker slot. */
export const HEADER_WORDS = 16;
/** Word 0: how many workers of the current job have not finished yet. */
export const PENDING = 0;

/** Int32 words per worker slot. */
export const SLOT_WORDS = 16;
/** Slot word: bumped by the caller to hand the worker a job; the worker waits on it. */
export const SLOT_GEN = 0;
/** Slot word: 0 while starting, 1 when the worker waits for jobs, -1 when it failed to start. */
export const SLOT_READY = 1;
/** Slot word: the job (an index into the module's function exports, or one of the `JOB_*` codes). */
export const SLOT_JOB = 2;
/** Slot word: how many arguments (f64 slots) the job takes. */
export const SLOT_NARGS = 3;
/** Slot word: the kernel's status, or {@linkcode STATUS_FAULT} when it threw. */
export const SLOT_STATUS = 4;
/** Slot word: bytes of UTF-8 error text in the worker's error area. */
export const SLOT_ERROR_LENGTH = 5;

/** Most arguments a job passes to a kernel export (`bmm` takes 20). */
export const MAX_ARGS = 24;
/** Bytes of error text a worker can report. */
export const ERROR_BYTES = 512;

/** Job code: leave the loop (the pool is shutting down). */
export const JOB_STOP = -1;
/** Job code for tests: throw inside the job (a kernel fault the worker reports). */
export const JOB_TEST_THROW = -2;
/** Job code for tests: throw outside the job's error handling, so the worker dies mid-job. */
export const JOB_TEST_DIE = -3;

/** The status a slot reports when its kernel threw (kernels return statuses >= 0). */
export const STATUS_FAULT = -1;

/** Bytes of the shared control block for `workers` workers, and where each part starts. */
export function controlLayout(workers: number): { bytes: number; argsAt: number; errorsAt: number } {
  const words = HEADER_WORDS + workers * SLOT_WORDS;
  const argsAt = Math.ceil((words * 4) / 8) * 8;
  const errorsAt = argsAt + workers * MAX_ARGS * 8;
  return { bytes: errorsAt + workers * ERROR_BYTES, argsAt, errorsAt };
}

/**
 * The function exports of the kernel module, in the order jobs number them. Both sides derive it from the
 * module itself, so they agree without sending names.
 */
export function functionExports(module: WebAssembly.Module): string[] {
  return WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name).sort();
}
