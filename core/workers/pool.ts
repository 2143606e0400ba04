/**
 * The intra-op thread pool: workers that run shares of one large CPU kernel over the shared kernel memory,
 * and the `setNumThreads` / `getNumThreads` settings that size it.
 *
 * Note [Pool job protocol]
 * One `SharedArrayBuffer` (core/workers/pool_layout.ts) holds a PENDING counter and, per worker, a slot:
 * a generation word, a ready flag, the job (an index into the kernel module's function exports), its argument
 * count, the returned status and the length of an error text, plus f64 argument and byte error areas. A job is
 * one call of a kernel export per participant, with its own arguments (each participant gets its own rows,
 * elements or workspace). The caller writes every worker's job and arguments, sets PENDING to the number of
 * workers it uses, then bumps each one's generation word and notifies it; `Atomics` operations order the plain
 * writes before them. It runs its own share (and that of any worker not ready yet) on the calling agent, then
 * polls PENDING briefly and blocks in `Atomics.wait` until it is 0; the last worker to finish notifies. Each
 * worker waits on its own generation word, so a worker left out of a job is not woken, and it reads its
 * generation before it reports ready (else a job posted in between would be missed: TOOLCHAIN Q2).
 *
 * How the work is split depends only on the thread count, never on which workers happen to be ready, so a
 * reduction's partial sums, and so its result, are the same on every run with that count.
 *
 * Faults: a kernel that throws in a worker (a wasm trap) is caught there and reported as a status with its
 * message; a worker that dies cannot report, so the caller waits at most `timeoutMs`. Either way the caller
 * throws a {@linkcode ThreadPoolError} and the pool is shut down and rebuilt on next use. The calling agent
 * blocks in `Atomics.wait`, which browsers forbid on their main thread: there the pool is unavailable and
 * everything runs on one thread.
 *
 * @module
 */
import {
  controlLayout,
  ERROR_BYTES,
  functionExports,
  HEADER_WORDS,
  JOB_STOP,
  MAX_ARGS,
  PENDING,
  SLOT_ERROR_LENGTH,
  SLOT_GEN,
  SLOT_JOB,
  SLOT_NARGS,
  SLOT_READY,
  SLOT_STATUS,
  SLOT_WORDS,
  STATUS_FAULT,
} from './pool_layout.ts';

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
  /** Polls of a word before blocking on it (workers between jobs, the caller for its workers); default 20 000. */
  readonly spin?: number;
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

/**
 * How this runtime starts a worker, or undefined when it cannot. Node's `worker_threads` (which Deno and Bun
 * provide) is preferred: its workers can be unref'd, so an idle pool does not keep a script alive (Deno's web
 * `Worker` does); browsers get the web `Worker`.
 */
function workerSpawner(): SpawnWorker | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const threads = process?.getBuiltinModule?.('node:worker_threads') as
    | { Worker: new (url: URL) => NodeWorker }
    | undefined;
  if (threads?.Worker !== undefined) {
    return (url, onFault) => {
      const worker = new threads.Worker(url);
      worker.unref();
      worker.on('error', onFault);
      worker.on('exit', onFault);
      return worker;
    };
  }
  const WebWorker = (globalThis as { Worker?: new (url: URL, options: { type: 'module' }) => Worker }).Worker;
  if (WebWorker === undefined) return undefined;
  return (url, onFault) => {
    const worker = new WebWorker(url, { type: 'module' });
    worker.onerror = (event) => {
      event.preventDefault();
      onFault();
    };
    return worker;
  };
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
 * Workers that run shares of kernel calls over one shared memory (Note [Pool job protocol]). Most code uses
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
  readonly #args: Float64Array[];
  readonly #errors: Uint8Array[];
  readonly #workers: WorkerHandle[] = [];
  readonly #exportIndex: Map<string, number>;
  readonly #timeoutMs: number;
  readonly #spin: number;
  #closed = false;
  #faulted = false;
  #workerTasks = 0;
  /** A worker handle per task slot used by the current job (reused, so a job allocates nothing of its own). */
  readonly #used: number[] = [];

  /** Starts `threads - 1` workers (they get ready asynchronously; jobs meanwhile run their shares here). */
  constructor(options: ThreadPoolOptions) {
    const { threads } = options;
    if (!Number.isInteger(threads) || threads < 1) {
      throw new RangeError(`ThreadPool: threads must be a positive integer, got ${String(threads)}`);
    }
    const reason = threadPoolUnsupportedReason();
    if (reason !== undefined && threads > 1) throw new ThreadPoolError(`Cannot start worker threads: ${reason}`);
    this.threads = threads;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    this.#spin = options.spin ?? 20_000;
    const workers = threads - 1;
    const layout = controlLayout(workers);
    const control = new SharedArrayBuffer(layout.bytes);
    this.#words = new Int32Array(control, 0, HEADER_WORDS + workers * SLOT_WORDS);
    this.#args = [];
    this.#errors = [];
    for (let w = 0; w < workers; w++) {
      this.#args.push(new Float64Array(control, layout.argsAt + w * MAX_ARGS * 8, MAX_ARGS));
      this.#errors.push(new Uint8Array(control, layout.errorsAt + w * ERROR_BYTES, ERROR_BYTES));
    }
    this.#exportIndex = new Map(functionExports(options.module).map((name, i) => [name, i]));
    if (workers === 0) return;
    const spawn = workerSpawner()!;
    const url = new URL('./pool_worker.ts', import.meta.url);
    try {
      for (let w = 0; w < workers; w++) {
        const worker = spawn(url, () => {
          if (!this.#closed) this.#faulted = true;
        });
        this.#workers.push(worker);
        worker.postMessage({
          memory: options.memory,
          module: options.module,
          control,
          workers,
          index: w,
          spin: this.#spin,
        });
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

  /** Tasks handed to workers so far (the others ran on the calling agent). */
  get workerTasks(): number {
    return this.#workerTasks;
  }

  /** Workers that have instantiated the kernels and wait for jobs. */
  get readyWorkers(): number {
    let n = 0;
    for (let w = 0; w < this.#workers.length; w++) if (Atomics.load(this.#words, this.#slot(w) + SLOT_READY) === 1) n++;
    return n;
  }

  /**
   * Resolves when every worker is ready; rejects if one failed to start or none is ready after `timeoutMs`.
   *
   * @example
   * ```ts
   * import { setNumThreads, whenThreadsReady } from './pool.ts';
   * setNumThreads(2);
   * await whenThreadsReady();
   * ```
   */
  async whenReady(timeoutMs = 30_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      let ready = 0;
      for (let w = 0; w < this.#workers.length; w++) {
        const state = Atomics.load(this.#words, this.#slot(w) + SLOT_READY);
        if (state === -1) throw new ThreadPoolError(`Worker ${w + 1} failed to start: ${this.#errorText(w)}`);
        if (state === 1) ready++;
      }
      if (ready === this.#workers.length) return;
      if (this.#closed) throw new ThreadPoolError('The thread pool was closed before its workers were ready');
      if (performance.now() > deadline) throw new ThreadPoolError(`Worker threads not ready after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /**
   * Calls kernel export `name` once per task, task `i` with arguments `tasks[i]` (numbers; i32, f32 and f64
   * parameters), task 0 on the calling agent through `local`, the others on workers, and returns when all are
   * done: the first nonzero status in task order, or 0. At most {@linkcode threads} tasks.
   *
   * @example
   * ```ts
   * import { ThreadPool } from './pool.ts';
   * import { createKernelMemory, instantiateKernels, kernelModule } from '../cpu/wasm.ts';
   * const memory = createKernelMemory(), module = kernelModule();
   * const pool = new ThreadPool({ memory, module, threads: 2 });
   * const local = instantiateKernels(memory, { module }) as unknown as Record<string, unknown>;
   * // fill 2 x 64 float32 (dtype code 6) at byte 1 << 16 with 1.5, one half per thread
   * pool.run('fill_contig', [[6, 1 << 16, 1.5, 64], [6, (1 << 16) + 256, 1.5, 64]], local); // 0
   * pool.close();
   * ```
   */
  run(name: string, tasks: ReadonlyArray<readonly number[]>, local: LocalKernels): number {
    if (this.#closed) throw new ThreadPoolError('The thread pool is closed');
    const job = this.#exportIndex.get(name);
    const fn = local[name];
    if (job === undefined || typeof fn !== 'function') {
      throw new ThreadPoolError(`ThreadPool.run: the kernel module has no function '${name}'`);
    }
    if (tasks.length > this.threads) {
      throw new ThreadPoolError(`ThreadPool.run: ${tasks.length} tasks for ${this.threads} threads`);
    }
    return this.runJob(job, tasks, (args) => (fn as (...a: number[]) => number)(...args));
  }

  /**
   * {@linkcode run} with a raw job code (for tests: the `JOB_TEST_*` codes of pool_layout.ts) and the function
   * the calling agent runs its tasks with.
   */
  runJob(job: number, tasks: ReadonlyArray<readonly number[]>, runLocal: (args: readonly number[]) => number): number {
    if (this.#closed) throw new ThreadPoolError('The thread pool is closed');
    if (this.#faulted) this.#fail('a worker thread stopped (it threw outside a job or exited)');
    const words = this.#words, used = this.#used;
    used.length = 0;
    for (let t = 1; t < tasks.length; t++) {
      const w = t - 1, slot = this.#slot(w);
      if (Atomics.load(words, slot + SLOT_READY) !== 1) continue;
      const args = tasks[t];
      if (args.length > MAX_ARGS) throw new ThreadPoolError(`ThreadPool.run: more than ${MAX_ARGS} arguments`);
      const area = this.#args[w];
      for (let i = 0; i < args.length; i++) area[i] = args[i];
      words[slot + SLOT_JOB] = job;
      words[slot + SLOT_NARGS] = args.length;
      words[slot + SLOT_STATUS] = 0;
      words[slot + SLOT_ERROR_LENGTH] = 0;
      used.push(t);
    }
    this.#workerTasks += used.length;
    Atomics.store(words, PENDING, used.length);
    for (const t of used) {
      const slot = this.#slot(t - 1);
      Atomics.add(words, slot + SLOT_GEN, 1);
      Atomics.notify(words, slot + SLOT_GEN, 1);
    }
    let status = 0, localError: unknown, failed = false;
    try {
      for (let t = 0, u = 0; t < tasks.length; t++) {
        if (t > 0 && used[u] === t) {
          u++;
          continue;
        }
        const s = runLocal(tasks[t]);
        if (s !== 0 && status === 0) status = s;
      }
    } catch (e) {
      localError = e;
      failed = true;
    }
    // The workers may still write memory the caller is about to free: wait for them even after a local error.
    if (!this.#join()) {
      this.#fail(`worker threads did not finish a job within ${this.#timeoutMs} ms (presumed dead)`);
    }
    for (const t of used) {
      const slot = this.#slot(t - 1);
      const s = words[slot + SLOT_STATUS];
      if (s === STATUS_FAULT) this.#fail(`worker ${t} failed in a kernel: ${this.#errorText(t - 1)}`);
    }
    if (failed) throw localError;
    if (status === 0) {
      for (const t of used) {
        const s = words[this.#slot(t - 1) + SLOT_STATUS];
        if (s !== 0) return s;
      }
    }
    return status;
  }

  /** Stops the workers (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (let w = 0; w < this.#workers.length; w++) {
      const slot = this.#slot(w);
      this.#words[slot + SLOT_JOB] = JOB_STOP;
      Atomics.add(this.#words, slot + SLOT_GEN, 1);
      Atomics.notify(this.#words, slot + SLOT_GEN);
    }
    for (const worker of this.#workers) {
      try {
        worker.terminate();
      } catch {
        // Already gone.
      }
    }
  }

  #slot(w: number): number {
    return HEADER_WORDS + w * SLOT_WORDS;
  }

  #errorText(w: number): string {
    const n = Math.min(Atomics.load(this.#words, this.#slot(w) + SLOT_ERROR_LENGTH), ERROR_BYTES);
    // TextDecoder refuses views of shared memory: copy first.
    return new TextDecoder().decode(this.#errors[w].slice(0, n)) || 'no message';
  }

  /** Waits until PENDING is 0; false after the timeout. */
  #join(): boolean {
    const words = this.#words;
    for (let i = this.#spin; i > 0; i--) if (Atomics.load(words, PENDING) === 0) return true;
    const deadline = performance.now() + this.#timeoutMs;
    for (;;) {
      const pending = Atomics.load(words, PENDING);
      if (pending === 0) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(words, PENDING, pending, Math.min(left, 1000));
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
let sharedPool: ThreadPool | undefined;
let sharedTimeoutMs: number | undefined;

function defaultThreads(): number {
  if (threadPoolUnsupportedReason() !== undefined) return 1;
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
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 256) {
    throw new RangeError(
      `setNumThreads: expected a positive integer number of threads (at most 256), got ${String(n)}`,
    );
  }
  if (n > 1) {
    const reason = threadPoolUnsupportedReason();
    if (reason !== undefined) throw new ThreadPoolError(`setNumThreads(${n}): cannot start worker threads: ${reason}`);
  }
  requestedThreads = n;
  if (sharedPool !== undefined && sharedPool.threads !== n) {
    sharedPool.close();
    sharedPool = undefined;
  }
}

/**
 * The number of threads large CPU kernels are split across: what {@linkcode setNumThreads} set, else the
 * cores the runtime reports (`navigator.hardwareConcurrency`), or 1 where worker threads cannot run.
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
  if (sharedPool === undefined || sharedPool.closed) {
    sharedPool = new ThreadPool({ memory, module, threads, timeoutMs: sharedTimeoutMs });
  }
  return sharedPool;
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
