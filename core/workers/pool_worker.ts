/**
 * The body of one intra-op pool worker (Note [Pool job protocol] in pool.ts): it instantiates the kernel module
 * over the shared memory it is sent, then runs kernel calls handed to it through the control block until told
 * to stop. It imports nothing of the runtime: it only calls kernel exports with the numbers it is given.
 *
 * @module
 */
import {
  controlLayout,
  ERROR_BYTES,
  functionExports,
  HEADER_WORDS,
  JOB_STOP,
  JOB_TEST_DIE,
  JOB_TEST_THROW,
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

/** What the pool posts once to a new worker. */
interface PoolWorkerInit {
  readonly memory: WebAssembly.Memory;
  readonly module: WebAssembly.Module;
  readonly control: SharedArrayBuffer;
  readonly workers: number;
  readonly index: number;
  /** Polls of the generation word before blocking in `Atomics.wait`. */
  readonly spin: number;
}

type KernelFunction = (...args: number[]) => number;

function serve(init: PoolWorkerInit): void {
  const { control, index, workers, spin } = init;
  const layout = controlLayout(workers);
  const words = new Int32Array(control, 0, HEADER_WORDS + workers * SLOT_WORDS);
  const args = new Float64Array(control, layout.argsAt + index * MAX_ARGS * 8, MAX_ARGS);
  const errorBytes = new Uint8Array(control, layout.errorsAt + index * ERROR_BYTES, ERROR_BYTES);
  const slot = HEADER_WORDS + index * SLOT_WORDS;
  // Read the generation before announcing readiness: a job posted in between then still counts as new.
  let seen = Atomics.load(words, slot + SLOT_GEN);
  let table: KernelFunction[];
  try {
    const instance = new WebAssembly.Instance(init.module, { env: { memory: init.memory } });
    const exports = instance.exports as Record<string, KernelFunction>;
    table = functionExports(init.module).map((name) => exports[name]);
  } catch (e) {
    report(words, slot, errorBytes, e);
    Atomics.store(words, slot + SLOT_READY, -1);
    return;
  }
  Atomics.store(words, slot + SLOT_READY, 1);
  const call: number[] = [];
  for (;;) {
    let polls = spin;
    while (Atomics.load(words, slot + SLOT_GEN) === seen) {
      if (polls > 0) polls--;
      else Atomics.wait(words, slot + SLOT_GEN, seen);
    }
    seen = Atomics.load(words, slot + SLOT_GEN);
    const job = words[slot + SLOT_JOB];
    if (job === JOB_STOP) return;
    if (job === JOB_TEST_DIE) {
      // Leaves without finishing the job, as a worker killed mid-job would.
      const process = (globalThis as { process?: { exit?: (code: number) => never } }).process;
      if (process?.exit !== undefined) process.exit(1);
      (globalThis as unknown as { close(): void }).close();
      return;
    }
    let status: number;
    try {
      if (job === JOB_TEST_THROW) throw new Error('test fault inside the job');
      const n = words[slot + SLOT_NARGS];
      call.length = n;
      for (let i = 0; i < n; i++) call[i] = args[i];
      status = table[job](...call);
    } catch (e) {
      report(words, slot, errorBytes, e);
      status = STATUS_FAULT;
    }
    words[slot + SLOT_STATUS] = status;
    if (Atomics.sub(words, PENDING, 1) === 1) Atomics.notify(words, PENDING);
  }
}

function report(words: Int32Array, slot: number, errorBytes: Uint8Array, e: unknown): void {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  const { written } = new TextEncoder().encodeInto(text, errorBytes);
  words[slot + SLOT_ERROR_LENGTH] = written;
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
