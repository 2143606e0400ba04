/**
 * The body of one intra-op pool worker (Note [Pool job protocol] in pool.ts): it instantiates the kernel module
 * over the shared memory it is sent, then claims and runs chunks of the jobs posted in the control block until
 * told to stop. It imports nothing of the runtime: it only calls kernel exports with the numbers it is given.
 *
 * @module
 */
import {
  ARGS_AT,
  CHUNKS,
  claimChunk,
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
  JOB_TEST_DIE,
  JOB_TEST_THROW,
  MAX_ARGS,
  MAX_CHUNKS,
  NARGS,
  READY,
  SEQ,
  STATUS_FAULT,
  STATUSES,
  TIMED,
  TIMES_AT,
} from './pool_layout.ts';

/** What the pool posts once to a new worker. */
interface PoolWorkerInit {
  readonly memory: WebAssembly.Memory;
  readonly module: WebAssembly.Module;
  readonly control: SharedArrayBuffer;
  /** This worker's number, from 1 (the calling agent is 0). */
  readonly index: number;
  /** Microseconds to poll for the next job after one ends, before blocking in `Atomics.wait`. */
  readonly spinMicros: number;
}

type KernelFunction = (...args: number[]) => number;

function serve(init: PoolWorkerInit): void {
  const { control, index, spinMicros } = init;
  const words = new Int32Array(control, 0, CONTROL_WORDS);
  const args = new Float64Array(control, ARGS_AT, MAX_CHUNKS * MAX_ARGS);
  const errorBytes = new Uint8Array(control, ERROR_AT, ERROR_BYTES);
  const times = new Float64Array(control, TIMES_AT, MAX_CHUNKS * 3);
  // Read the sequence before announcing readiness: a job posted in between then still counts as new.
  let seen = Atomics.load(words, SEQ);
  let table: KernelFunction[];
  try {
    const instance = new WebAssembly.Instance(init.module, { env: { memory: init.memory } });
    const exports = instance.exports as Record<string, KernelFunction>;
    table = functionExports(init.module).map((name) => exports[name]);
  } catch (e) {
    report(words, errorBytes, index, e);
    Atomics.store(words, READY + index - 1, -1);
    Atomics.notify(words, READY + index - 1);
    return;
  }
  Atomics.store(words, READY + index - 1, 1);
  Atomics.notify(words, READY + index - 1);
  const call: number[] = [];
  // Poll for the next job before sleeping only while jobs come within the polling window of each other (split
  // kernels in a run): otherwise polling burns a core that a busy machine's other threads, the caller's among
  // them, need.
  let poll = true;
  const windowMs = spinMicros / 1000;
  for (;;) {
    if (Atomics.load(words, SEQ) === seen) {
      const start = performance.now();
      if (poll) {
        let polls = 0;
        while (Atomics.load(words, SEQ) === seen && ((++polls & 255) !== 0 || performance.now() - start <= windowMs));
      }
      while (Atomics.load(words, SEQ) === seen) Atomics.wait(words, SEQ, seen);
      poll = performance.now() - start <= windowMs;
    }
    seen = Atomics.load(words, SEQ);
    const job = words[JOB];
    if (job === JOB_STOP) {
      // Tell the pool this thread runs no more wasm, so the process may tear it down.
      Atomics.store(words, READY + index - 1, 2);
      Atomics.notify(words, READY + index - 1);
      return;
    }
    const timed = words[TIMED] !== 0; // a profiler records chunk times (written before the job was published)
    for (let chunk = claimChunk(words, seen); chunk >= 0; chunk = claimChunk(words, seen)) {
      // A claimed chunk pins the job: the caller rewrites nothing until every chunk is done.
      const fn = words[JOB];
      if (fn === JOB_TEST_DIE) {
        const process = (globalThis as { process?: { exit?: (code: number) => never } }).process;
        if (process?.exit !== undefined) process.exit(1);
        (globalThis as unknown as { close(): void }).close();
        return;
      }
      let status: number;
      if (timed) times[chunk * 3] = performance.timeOrigin + performance.now();
      try {
        if (fn === JOB_TEST_THROW) throw new Error('test fault inside the job');
        const n = words[NARGS], at = chunk * MAX_ARGS;
        call.length = n;
        for (let i = 0; i < n; i++) call[i] = args[at + i];
        status = table[fn](...call);
      } catch (e) {
        report(words, errorBytes, index, e);
        status = STATUS_FAULT;
      }
      if (timed) {
        times[chunk * 3 + 1] = performance.timeOrigin + performance.now();
        times[chunk * 3 + 2] = index;
      }
      words[STATUSES + chunk] = status;
      if (Atomics.add(words, DONE, 1) + 1 === words[CHUNKS]) Atomics.notify(words, DONE);
    }
  }
}

/** Writes the error text, if no other fault of this job wrote one first. */
function report(words: Int32Array, errorBytes: Uint8Array, index: number, e: unknown): void {
  if (Atomics.compareExchange(words, FAULTED, 0, 1) !== 0) return;
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const { written } = new TextEncoder().encodeInto(text, errorBytes);
  words[FAULT_WORKER] = index;
  Atomics.store(words, ERROR_LENGTH, written);
}

interface NodeWorkerThreads {
  readonly parentPort: { once(event: 'message', listener: (value: PoolWorkerInit) => void): void } | null;
}

const nodeThreads = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
  ?.getBuiltinModule?.('node:worker_threads') as NodeWorkerThreads | undefined;
if (nodeThreads?.parentPort) {
  nodeThreads.parentPort.once('message', serve);
} else {
  (globalThis as unknown as { onmessage: ((e: MessageEvent<PoolWorkerInit>) => void) | null }).onmessage = (e) => {
    (globalThis as unknown as { onmessage: unknown }).onmessage = null;
    serve(e.data);
  };
}
