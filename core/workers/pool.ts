/**
 * The intra-op thread pool: workers that run shares of one large CPU kernel over the shared kernel memory,
 * and the `setNumThreads` / `getNumThreads` settings that size it.
 *
 * Note [Pool job protocol]
 * One `SharedArrayBuffer` (core/workers/pool_layout.ts) holds the current job: a sequence number, the kernel (an
 * index into the kernel module's function exports), the number of chunks and each chunk's arguments (f64
 * slots: every chunk gets its own rows, elements or workspace), a claim word, a done counter and per-chunk
 * statuses. The caller writes the job, then publishes it by storing the claim word `(seq << 11) | chunks` and
 * the sequence number, and wakes the workers; `Atomics` operations order the plain writes before them. Every
 * participant, the caller included, then claims chunks by compare-exchange on the claim word (highest first)
 * until none is left; the caller finally polls the done counter briefly and blocks in `Atomics.wait` until every
 * chunk is done (the worker finishing the last one notifies). Since a claim names the job's sequence number, a
 * worker that wakes after the job was finished by others claims nothing, and a claimed chunk pins the job (the
 * caller rewrites nothing until every chunk is done). So work is shared as it comes: a worker that sleeps (waking
 * costs 10-300 us on this VM) leaves its chunks to the caller instead of delaying it, and a split kernel is never
 * much slower than one thread. While jobs come within `spinMicros` of each other (split kernels in a run), a
 * worker polls for the next one before it sleeps. Workers read the sequence number before they report ready, so
 * a job posted in between is not missed (TOOLCHAIN Q2).
 *
 * How the work is cut into chunks depends only on the thread count, never on who runs which chunk, so a
 * reduction's partial sums, and so its result, are the same on every run with that count.
 *
 * Faults: a kernel that throws in a worker (a wasm trap) is caught there and reported with its message; a
 * worker that dies holding a chunk cannot report, so the caller waits at most `timeoutMs`. Either way the caller
 * throws a {@linkcode ThreadPoolError} and the pool is shut down and rebuilt on next use. The calling agent
 * blocks in `Atomics.wait`, which browsers forbid on their main thread: there the pool is unavailable (a clear
 * error from `setNumThreads`) and everything runs on one thread.
 *
 * @module
 */
import {
  ARGS_AT,
  CHUNKS,
  CLAIM,
  claimChunk,
  claimWord,
  CONTROL_BYTES,
  CONTROL_WORDS,
  DONE,
  ERROR_AT,
  ERROR_BYTES,
  ERROR_LENGTH,
  FAULT_WORKER,
  FAULTED,
  functionExports,
  JOB,
  JOB_STOP,
  MAX_ARGS,
  MAX_CHUNKS,
  MAX_WORKERS,
  NARGS,
  READY,
  SEQ,
  STATUSES,
  TIMED,
  TIMES_AT,
} from './pool_layout.ts';
import { siblingModuleUrl } from './environment.ts';

/**
 * A worker of the pool failed (its kernel threw or it stopped responding). The pool has been shut down and is
 * rebuilt on the next split kernel.
 *
 * @example
 * ```ts
 * import { ThreadPoolError } from './pool.ts';
 * new ThreadPoolError('demo').name; // 'ThreadPoolError'
 * ```
 */
export class ThreadPoolError extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = 'ThreadPoolError';
  }
}

/** One chunk of a split kernel as a profiler sees it: wall-clock milliseconds (`timeOrigin + now()`). */
export interface PoolChunkTime {
  /** The chunk's index in its job. */
  readonly chunk: number;
  /** Who ran it: 0 the calling agent, k the pool's worker k. */
  readonly thread: number;
  /** When the chunk started. */
  readonly startMs: number;
  /** When it ended. */
  readonly endMs: number;
}

/** Receives the chunk times of each job while a profiler records (core/features/profiler.ts). */
export type PoolChunkTimer = (kernel: string, chunks: readonly PoolChunkTime[]) => void;

let chunkTimer: PoolChunkTimer | undefined;

/**
 * Sets (or clears) what receives the chunk times of every job of every pool on this agent; returns the previous
 * one. While none is set, a job writes one word more than before and its participants read it once.
 *
 * @example
 * ```ts
 * import { setPoolChunkTimer } from './pool.ts';
 * const previous = setPoolChunkTimer((kernel, chunks) => console.log(kernel, chunks.length));
 * setPoolChunkTimer(previous);
 * ```
 */
export function setPoolChunkTimer(timer: PoolChunkTimer | undefined): PoolChunkTimer | undefined {
  const previous = chunkTimer;
  chunkTimer = timer;
  return previous;
}

/** The kernel functions the calling agent runs its own share with, by export name. */
export type LocalKernels = Readonly<Record<string, unknown>>;

/** Options of a {@linkcode ThreadPool}. */
export interface ThreadPoolOptions {
  /** The shared memory the kernels run in. */
  readonly memory: WebAssembly.Memory;
  /** The compiled kernel module (posted to each worker, which instantiates it over `memory`). */
  readonly module: WebAssembly.Module;
  /** Threads, the calling agent included (so `threads - 1` workers). */
  readonly threads: number;
  /** Longest wait for the workers' shares of one job before they are presumed dead; default 120 000 ms. */
  readonly timeoutMs?: number;
  /** Microseconds a worker polls for the next job after one ends before it sleeps; default 300. */
  readonly spinMicros?: number;
}

interface WorkerHandle {
  terminate(): unknown;
}

type SpawnWorker = (url: URL, onFault: () => void) => WorkerHandle & { postMessage(message: unknown): void };

interface NodeWorker {
  postMessage(message: unknown): void;
  terminate(): unknown;
  unref(): void;
  on(event: 'error' | 'exit', listener: () => void): void;
}

let workerScript: URL | undefined;
/**
 * The worker script: a file next to this module (or a URL, when the package is imported from one). Found when a
 * pool first starts workers, not at import (in Bun's bundle the module's URL comes from `node:url`).
 */
const workerUrl = (): URL => workerScript ??= siblingModuleUrl('pool_worker', import.meta.url);

/** How this runtime starts a pool worker, and whether an idle one lets the process exit. */
interface Spawner {
  readonly spawn: SpawnWorker;
  /** False for Deno's web `Worker`, which keeps the process alive until it is terminated. */
  readonly unref: boolean;
}

/**
 * How this runtime starts a worker, or undefined when it cannot. Node's `worker_threads` (which Deno and Bun
 * provide) is preferred for a file URL: its workers can be unref'd, so an idle pool does not keep a script
 * alive; otherwise (browsers, a package imported by URL) the web `Worker`.
 */
function workerSpawner(): Spawner | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const threads = process?.getBuiltinModule?.('node:worker_threads') as
    | { Worker: new (url: URL) => NodeWorker }
    | undefined;
  if (threads?.Worker !== undefined && workerUrl().protocol === 'file:') {
    const spawn: SpawnWorker = (url, onFault) => {
      const worker = new threads.Worker(url);
      worker.unref();
      worker.on('error', onFault);
      worker.on('exit', onFault);
      return worker;
    };
    return { spawn, unref: true };
  }
  const WebWorker = (globalThis as { Worker?: new (url: URL, options: { type: 'module' }) => Worker }).Worker;
  if (WebWorker === undefined) return undefined;
  const spawn: SpawnWorker = (url, onFault) => {
    const worker = new WebWorker(url, { type: 'module' });
    worker.onerror = (event) => {
      event.preventDefault();
      onFault();
    };
    return worker;
  };
  return { spawn, unref: (globalThis as { Deno?: unknown }).Deno === undefined };
}

/**
 * Why this agent cannot run a pool (no shared memory, no workers, or `Atomics.wait` forbidden here, as on a
 * browser's main thread), or undefined when it can.
 *
 * @example
 * ```ts
 * import { threadPoolUnsupportedReason } from './pool.ts';
 * threadPoolUnsupportedReason(); // undefined in Deno and Bun
 * ```
 */
export function threadPoolUnsupportedReason(): string | undefined {
  if (typeof SharedArrayBuffer !== 'function') {
    return 'SharedArrayBuffer is not available (a browser page needs cross-origin isolation)';
  }
  if (workerSpawner() === undefined) return 'this runtime has no Worker';
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
  } catch {
    return 'Atomics.wait is not allowed on this thread (a browser main thread); use threads from a Worker';
  }
  return undefined;
}

/**
 * Workers that run chunks of kernel calls over one shared memory (Note [Pool job protocol]). Most code uses
 * the process-wide pool through {@linkcode setNumThreads}; tests make their own.
 *
 * @example
 * ```ts
 * import { ThreadPool } from './pool.ts';
 * import { createKernelMemory, kernelModule } from '../cpu/wasm.ts';
 * const pool = new ThreadPool({ memory: createKernelMemory(), module: kernelModule(), threads: 2 });
 * await pool.whenReady();
 * pool.close();
 * ```
 */
export class ThreadPool {
  /** Threads, the calling agent included. */
  readonly threads: number;
  readonly #words: Int32Array;
  readonly #args: Float64Array;
  readonly #errorBytes: Uint8Array;
  readonly #times: Float64Array;
  readonly #workers: WorkerHandle[] = [];
  readonly #exportIndex: Map<string, number>;
  readonly #exportNames: string[];
  readonly #timeoutMs: number;
  #seq = 0;
  #closed = false;
  #faulted = false;
  #workerChunks = 0;

  /** Starts `threads - 1` workers (they get ready asynchronously; jobs meanwhile run on the calling agent). */
  constructor(options: ThreadPoolOptions) {
    const { threads } = options;
    if (!Number.isInteger(threads) || threads < 1 || threads > MAX_WORKERS + 1) {
      throw new RangeError(`ThreadPool: threads must be an integer in [1, ${MAX_WORKERS + 1}], got ${String(threads)}`);
    }
    const reason = threadPoolUnsupportedReason();
    if (reason !== undefined && threads > 1) throw new ThreadPoolError(`Cannot start worker threads: ${reason}`);
    this.threads = threads;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    this.#words = new Int32Array(control, 0, CONTROL_WORDS);
    this.#args = new Float64Array(control, ARGS_AT, MAX_CHUNKS * MAX_ARGS);
    this.#errorBytes = new Uint8Array(control, ERROR_AT, ERROR_BYTES);
    this.#times = new Float64Array(control, TIMES_AT, MAX_CHUNKS * 3);
    this.#exportNames = functionExports(options.module);
    this.#exportIndex = new Map(this.#exportNames.map((name, i) => [name, i]));
    if (threads === 1) return;
    const { spawn } = workerSpawner()!;
    const url = workerUrl();
    try {
      for (let index = 1; index < threads; index++) {
        const worker = spawn(url, () => {
          if (!this.#closed) this.#faulted = true;
        });
        this.#workers.push(worker);
        const spinMicros = options.spinMicros ?? 300;
        worker.postMessage({ memory: options.memory, module: options.module, control, index, spinMicros });
      }
    } catch (e) {
      this.close();
      throw new ThreadPoolError(`Cannot start worker threads: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Whether the pool was shut down (by {@linkcode close} or after a fault). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Whether a worker reported an error or exited outside a job (seen when the event loop ran). */
  get faulted(): boolean {
    return this.#faulted;
  }

  /** Chunks run by workers so far (the others ran on the calling agent). */
  get workerChunks(): number {
    return this.#workerChunks;
  }

  /** Workers that have instantiated the kernels and wait for jobs. */
  get readyWorkers(): number {
    let n = 0;
    for (let w = 0; w < this.#workers.length; w++) if (Atomics.load(this.#words, READY + w) === 1) n++;
    return n;
  }

  /**
   * Resolves when every worker is ready; rejects if one failed to start or after `timeoutMs`.
   *
   * @example
   * ```ts
   * import { ThreadPool } from './pool.ts';
   * import { createKernelMemory, kernelModule } from '../cpu/wasm.ts';
   * const pool = new ThreadPool({ memory: createKernelMemory(), module: kernelModule(), threads: 2 });
   * await pool.whenReady();
   * pool.close();
   * ```
   */
  async whenReady(timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!this.#checkReady(timeoutMs, deadline)) await new Promise((resolve) => setTimeout(resolve, 2));
  }

  /**
   * Blocks (in `Atomics.wait`) until every worker is ready; throws if one failed to start or after `timeoutMs`.
   * Workers start on their own threads, so this needs no event-loop turn (benchmark set-up uses it).
   *
   * @example
   * ```ts
   * import { ThreadPool } from './pool.ts';
   * import { createKernelMemory, kernelModule } from '../cpu/wasm.ts';
   * const pool = new ThreadPool({ memory: createKernelMemory(), module: kernelModule(), threads: 2 });
   * pool.waitReady();
   * pool.close();
   * ```
   */
  waitReady(timeoutMs = 30_000): void {
    const deadline = performance.now() + timeoutMs;
    for (let w = 0; w < this.#workers.length; w++) {
      for (;;) {
        const state = Atomics.load(this.#words, READY + w);
        if (state !== 0) break;
        const left = deadline - performance.now();
        if (left <= 0) break;
        Atomics.wait(this.#words, READY + w, 0, left);
      }
    }
    this.#checkReady(timeoutMs, deadline);
  }

  /** Whether every worker is ready; throws for one that failed to start, or after the deadline. */
  #checkReady(timeoutMs: number, deadline: number): boolean {
    let ready = 0;
    for (let w = 0; w < this.#workers.length; w++) {
      const state = Atomics.load(this.#words, READY + w);
      if (state === -1) throw new ThreadPoolError(`Worker ${w + 1} failed to start: ${this.#errorText()}`);
      if (state === 1) ready++;
    }
    if (ready === this.#workers.length) return true;
    if (this.#closed) throw new ThreadPoolError('The thread pool was closed before its workers were ready');
    if (performance.now() >= deadline) throw new ThreadPoolError(`Worker threads not ready after ${timeoutMs} ms`);
    return false;
  }

  /**
   * Calls kernel export `name` once per chunk, chunk `i` with arguments `chunks[i]` (numbers for its i32, f32
   * and f64 parameters), shared between the calling agent (through `local`, its own instance) and the workers,
   * and returns when all are done: the first nonzero status in chunk order, or 0.
   *
   * @example
   * ```ts
   * import { ThreadPool } from './pool.ts';
   * import { createKernelMemory, instantiateKernels, kernelModule } from '../cpu/wasm.ts';
   * const memory = createKernelMemory(), module = kernelModule();
   * const pool = new ThreadPool({ memory, module, threads: 2 });
   * const local = instantiateKernels(memory, { module }) as unknown as Record<string, unknown>;
   * // fill 2 x 64 float32 (dtype code 6) at byte 1 << 16 with 1.5, one chunk each
   * pool.run('fill_contig', [[6, 1 << 16, 1.5, 64], [6, (1 << 16) + 256, 1.5, 64]], local); // 0
   * pool.close();
   * ```
   */
  run(name: string, chunks: ReadonlyArray<readonly number[]>, local: LocalKernels): number {
    const job = this.#exportIndex.get(name);
    const fn = local[name];
    if (job === undefined || typeof fn !== 'function') {
      throw new ThreadPoolError(`ThreadPool.run: the kernel module has no function '${name}'`);
    }
    return this.runJob(job, chunks, (args) => (fn as (...a: number[]) => number)(...args));
  }

  /**
   * {@linkcode run} with a raw job code (tests use the `JOB_TEST_*` codes of pool_layout.ts) and the function
   * the calling agent runs its chunks with.
   */
  runJob(job: number, chunks: ReadonlyArray<readonly number[]>, runLocal: (args: readonly number[]) => number): number {
    if (this.#closed) throw new ThreadPoolError('The thread pool is closed');
    if (this.#faulted) this.#fail('a worker thread stopped (it threw outside a job or exited)');
    const n = chunks.length;
    if (n > MAX_CHUNKS) throw new ThreadPoolError(`ThreadPool.run: ${n} chunks, at most ${MAX_CHUNKS}`);
    if (n === 0) return 0;
    const words = this.#words, args = this.#args;
    const nargs = chunks[0].length;
    if (nargs > MAX_ARGS) throw new ThreadPoolError(`ThreadPool.run: more than ${MAX_ARGS} arguments`);
    for (let c = 0; c < n; c++) {
      const chunk = chunks[c];
      if (chunk.length !== nargs) throw new ThreadPoolError('ThreadPool.run: chunks take different argument counts');
      for (let i = 0; i < nargs; i++) args[c * MAX_ARGS + i] = chunk[i];
      words[STATUSES + c] = 0;
    }
    words[JOB] = job;
    words[NARGS] = nargs;
    words[CHUNKS] = n;
    words[FAULTED] = 0;
    words[ERROR_LENGTH] = 0;
    const timer = chunkTimer, times = this.#times;
    words[TIMED] = timer === undefined ? 0 : 1;
    Atomics.store(words, DONE, 0);
    const seq = this.#seq = (this.#seq + 1) & 0x1fffff;
    Atomics.store(words, CLAIM, claimWord(seq, n));
    Atomics.store(words, SEQ, seq);
    if (n > 1) Atomics.notify(words, SEQ, n - 1);
    let local = 0, localError: unknown, failed = false;
    for (let c = claimChunk(words, seq); c >= 0; c = claimChunk(words, seq)) {
      if (!failed) {
        if (timer !== undefined) times[c * 3] = performance.timeOrigin + performance.now();
        try {
          words[STATUSES + c] = runLocal(chunks[c]);
        } catch (e) {
          localError = e;
          failed = true;
        }
        if (timer !== undefined) {
          times[c * 3 + 1] = performance.timeOrigin + performance.now();
          times[c * 3 + 2] = 0;
        }
      }
      local++;
    }
    // Workers may still write memory the caller is about to free: wait for them even after a local error.
    if (local > 0) Atomics.add(words, DONE, local);
    if (!this.#join(n)) {
      this.#fail(`worker threads did not finish a job within ${this.#timeoutMs} ms (presumed dead)`);
    }
    this.#workerChunks += n - local;
    if (Atomics.load(words, FAULTED) !== 0) {
      this.#fail(`worker ${words[FAULT_WORKER]} failed in a kernel: ${this.#errorText()}`);
    }
    if (failed) throw localError;
    if (timer !== undefined) {
      const chunkTimes: PoolChunkTime[] = [];
      for (let c = 0; c < n; c++) {
        chunkTimes.push({ chunk: c, thread: times[c * 3 + 2], startMs: times[c * 3], endMs: times[c * 3 + 1] });
      }
      timer(this.#exportNames[job] ?? `job ${job}`, chunkTimes);
    }
    for (let c = 0; c < n; c++) {
      const s = words[STATUSES + c];
      if (s !== 0) return s;
    }
    return 0;
  }

  /** Stops the workers (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const words = this.#words;
    words[JOB] = JOB_STOP;
    words[CHUNKS] = 0;
    Atomics.store(words, CLAIM, 0);
    Atomics.store(words, SEQ, this.#seq = (this.#seq + 1) & 0x1fffff);
    Atomics.notify(words, SEQ);
    // Let ready workers leave their loop before they are terminated (briefly: a dead one never answers). One full
    // test run ended in a heap-corruption abort in Deno's teardown while pool workers were still blocked in
    // Atomics.wait; stopping them first (here and at exit) is the safe order.
    const deadline = performance.now() + 50;
    for (let w = 0; w < this.#workers.length; w++) {
      while (Atomics.load(words, READY + w) === 1) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        Atomics.wait(words, READY + w, 1, left);
      }
    }
    for (const worker of this.#workers) {
      try {
        worker.terminate();
      } catch {
        // Already gone.
      }
    }
  }

  #errorText(): string {
    const n = Math.min(Atomics.load(this.#words, ERROR_LENGTH), ERROR_BYTES);
    // TextDecoder refuses views of shared memory: copy first.
    return new TextDecoder().decode(this.#errorBytes.slice(0, n)) || 'no message';
  }

  /** Waits until `n` chunks are done; false after the timeout. */
  #join(n: number): boolean {
    const words = this.#words;
    // Poll first: the workers' last chunks usually end within microseconds of the caller's.
    for (let i = 0; i < 4096; i++) if (Atomics.load(words, DONE) === n) return true;
    const deadline = performance.now() + this.#timeoutMs;
    for (;;) {
      const done = Atomics.load(words, DONE);
      if (done === n) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(words, DONE, done, Math.min(left, 1000));
    }
  }

  #fail(why: string): never {
    this.close();
    if (sharedPool === this) sharedPool = undefined;
    throw new ThreadPoolError(`Intra-op thread pool: ${why}; the pool was shut down and is rebuilt on next use`);
  }
}

// ---- the process-wide pool -------------------------------------------------------------------------------------

let requestedThreads: number | undefined;
/** Whether the count came from setNumThreads (else from the cores: a pool that cannot start then means 1). */
let explicitThreads = false;
let sharedPool: ThreadPool | undefined;
let sharedTimeoutMs: number | undefined;

function defaultThreads(): number {
  // Workers that would keep the process alive (Deno's web Worker, used when the package is imported by URL) are
  // started only on request.
  if (threadPoolUnsupportedReason() !== undefined || !workerSpawner()!.unref) return 1;
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return Number.isInteger(cores) && cores! >= 1 ? Math.min(cores!, 64) : 1;
}

/**
 * Sets how many threads (the calling agent included) large CPU kernels are split across: matrix products,
 * elementwise ops, casts and copies, reductions and softmax above a size where splitting pays. `1` runs
 * everything on the calling agent and stops the workers. Results do not depend on the count, except that a
 * full reduction adds its per-thread partial results (in a fixed order, so it is deterministic for a count).
 * Throws where workers cannot run (no `SharedArrayBuffer`, no `Worker`, or a browser main thread, which may
 * not block in `Atomics.wait`: start threads from a Worker there).
 *
 * @example
 * ```ts
 * import { getNumThreads, setNumThreads } from '../../mod.ts';
 * setNumThreads(2);
 * getNumThreads(); // 2
 * setNumThreads(1);
 * ```
 */
export function setNumThreads(n: number): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_WORKERS + 1) {
    throw new RangeError(
      `setNumThreads: expected a positive integer number of threads (at most ${MAX_WORKERS + 1}), got ${String(n)}`,
    );
  }
  if (n > 1) {
    const reason = threadPoolUnsupportedReason();
    if (reason !== undefined) throw new ThreadPoolError(`setNumThreads(${n}): cannot start worker threads: ${reason}`);
  }
  requestedThreads = n;
  explicitThreads = true;
  if (sharedPool !== undefined && sharedPool.threads !== n) {
    sharedPool.close();
    sharedPool = undefined;
  }
}

/**
 * The number of threads large CPU kernels are split across: what {@linkcode setNumThreads} set, else the
 * cores the runtime reports (`navigator.hardwareConcurrency`), or 1 where worker threads cannot run (or did not
 * start). Deno running the package from a URL also defaults to 1: its workers there are web Workers, which keep
 * the process alive until `setNumThreads(1)` stops them, so they start only when asked for.
 *
 * @example
 * ```ts
 * import { getNumThreads } from '../../mod.ts';
 * getNumThreads() >= 1; // true
 * ```
 */
export function getNumThreads(): number {
  return requestedThreads ??= defaultThreads();
}

/**
 * The process-wide pool for {@linkcode getNumThreads} threads over `memory`, started on first use (after a
 * fault, a new one), or undefined for one thread. `module` is the kernel module the calling agent runs.
 *
 * @example
 * ```ts
 * import { intraOpPool } from './pool.ts';
 * import { createKernelMemory, kernelModule } from '../cpu/wasm.ts';
 * intraOpPool(createKernelMemory(), kernelModule())?.threads; // getNumThreads(), when more than 1
 * ```
 */
export function intraOpPool(memory: WebAssembly.Memory, module: WebAssembly.Module): ThreadPool | undefined {
  const threads = getNumThreads();
  if (threads === 1) return undefined;
  try {
    if (sharedPool === undefined || sharedPool.closed) {
      sharedPool = new ThreadPool({ memory, module, threads, timeoutMs: sharedTimeoutMs });
      closeAtExit();
    }
    // Workers that all died before any was ready failed to start (their script did not load, say).
    if (sharedPool.faulted && sharedPool.readyWorkers === 0) {
      throw new ThreadPoolError('the worker threads failed to start');
    }
  } catch (e) {
    sharedPool?.close();
    sharedPool = undefined;
    if (explicitThreads) throw e;
    // Threads nobody asked for: run on one thread rather than fail the op.
    requestedThreads = 1;
    return undefined;
  }
  return sharedPool;
}

let exitHookInstalled = false;

/** Stops the process-wide pool's workers when the process exits (once), so none is torn down mid-wait. */
function closeAtExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const close = () => sharedPool?.close();
  const process = (globalThis as { process?: { on?: (event: 'exit', listener: () => void) => unknown } }).process;
  if (typeof process?.on === 'function') process.on('exit', close);
  const target = globalThis as { addEventListener?: (type: 'unload', listener: () => void) => void };
  if (typeof target.addEventListener === 'function') target.addEventListener('unload', close);
}

/** The process-wide pool if one is running (for tests and benchmarks), without starting one. */
export function currentIntraOpPool(): ThreadPool | undefined {
  return sharedPool;
}

/**
 * Resolves when the process-wide pool's workers are ready (at once when none is running). Jobs never wait for
 * workers, they run the shares of workers not ready yet themselves; benchmarks and tests call this first.
 *
 * @example
 * ```ts
 * import { whenThreadsReady } from './pool.ts';
 * await whenThreadsReady();
 * ```
 */
export async function whenThreadsReady(): Promise<void> {
  await sharedPool?.whenReady();
}

/** Sets the process-wide pool's job timeout (tests of dead workers); `undefined` restores the default. */
export function setThreadJobTimeout(ms: number | undefined): void {
  sharedTimeoutMs = ms;
  if (sharedPool !== undefined) {
    sharedPool.close();
    sharedPool = undefined;
  }
}
