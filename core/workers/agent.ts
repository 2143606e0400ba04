/**
 * Workers attached to this runtime, seen from the agent that starts them: `spawnAgent` starts a Worker that
 * joins this agent's memory, allocator pool, dispatch table store, shared kernel slots and operator-library
 * modules, and returns a handle that forwards calls to a program module in it (proxy mode) and retires the
 * worker when it ends.
 *
 * Note [Agent faults]
 * A worker ends through its handle's `terminate()`, which the handle also calls itself when the worker
 * reports an uncaught error, fails to attach, or ends itself: a worker that calls `close()` says so first
 * (agent_serve.ts wraps the worker's `close`), a Bun worker fires `close` and a Node `worker_threads` worker
 * fires `exit`.
 * A worker that ends itself is treated like one that died: calls in flight are rejected at once. Once the worker has really stopped (Note
 * [Stopping is not stopped] in shared_runtime.ts), the handle retires its agent (`retireAgent`): the shared
 * lock is broken if the worker held it (the lock word names its holder), the blocks other agents had
 * released to it are forgotten, and its pages return to the pool, except while blocks of it are still
 * shared with live agents: those pages return with the last of them. A kernel that throws inside a worker
 * rejects its call and nothing else: allocation is per agent and the lock is only held inside short
 * `try/finally` sections.
 *
 * @module
 */
import { isCpuChecked } from '../cpu/runtime.ts';
import { kernelModule } from '../cpu/wasm.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { RemoteProfileEvents } from '../features/profiler.ts';
import { remoteProfileRequest, type RemoteProfileSink } from '../features/profiler_agents.ts';
import { requireAttachable, siblingModuleUrl } from './environment.ts';
import {
  type AgentInit,
  drainReleased,
  markStopping,
  retireAgent,
  sharedRuntime,
  whenStopped,
} from './shared_runtime.ts';
import { decode, discardWire, encode, type HandleMarker } from './wire.ts';

/** Messages from the worker. */
type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'closed' }
  | { readonly type: 'failed'; readonly error: WireError }
  | { readonly type: 'result'; readonly id: number; readonly value: unknown; readonly profile?: RemoteProfileEvents }
  | { readonly type: 'error'; readonly id: number; readonly error: WireError; readonly profile?: RemoteProfileEvents };

/** An error as it crosses agents. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
}

/** Raised in the calling agent for an error thrown in a worker (its name, message and stack are the worker's). */
export class RemoteError extends Error {
  /** The worker's error class name. */
  readonly remoteName: string;
  /** Rebuilds a worker's error. */
  constructor(error: WireError) {
    super(error.message);
    this.name = 'RemoteError';
    this.remoteName = error.name;
    if (error.stack !== undefined) this.stack = `RemoteError (${error.name} in worker): ${error.stack}`;
  }
}

/** Options of {@linkcode spawnAgent}. */
export interface SpawnAgentOptions {
  /** A module (URL or path URL) the worker imports whose exports `call` reaches (proxy mode). */
  readonly program?: string | URL;
  /** A name for the Worker (shown in debuggers). */
  readonly name?: string;
}

let nextCallId = 1;

/**
 * A Worker attached to this runtime. `call(name, ...args)` runs the program module's export `name` there:
 * tensor arguments and results travel as descriptors over the shared memory (no copy), other objects the
 * program returns stay in the worker as {@linkcode RemoteHandle}s. Lifetimes follow `scope()` (Note [Call
 * lifetimes] in agent_serve.ts): argument tensors stay yours and live in the worker for the call (a program
 * that keeps one keeps a view: `keep(x.view(x.shape))`); what the call made and did not return is freed
 * there; returned tensors become yours; objects returned as handles, and everything they hold, stay alive
 * in the worker until the handle is disposed.
 */
export class AgentHandle {
  /** The agent id of the worker. */
  readonly agent: number;
  /** The worker (a web `Worker`, or Node's `worker_threads` one where there is no global `Worker`). */
  readonly worker: AgentWorker;
  readonly #pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: unknown): void; profile?: RemoteProfileSink }
  >();
  #ended: Error | undefined;
  #orphans = 0;
  readonly #onExit: Array<() => void> = [];

  /** @internal Made by {@linkcode spawnAgent}. */
  constructor(agent: number, worker: AgentWorker) {
    this.agent = agent;
    this.worker = worker;
  }

  /** Whether the worker has ended (terminated, crashed or closed). */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** Blocks of the worker still shared with live agents when it was retired (0 while it runs). */
  get orphans(): number {
    return this.#orphans;
  }

  /**
   * Runs the program's export `name` with `args` in the worker and resolves to its result (an async
   * export is awaited there).
   *
   * @example
   * ```ts ignore
   * const agent = await spawnAgent({ program: new URL('./train.ts', import.meta.url) });
   * const loss = await agent.call('trainEpoch', x, y); // a scalar tensor, viewing the shared memory
   * ```
   */
  call(name: string, ...args: unknown[]): Promise<unknown> {
    if (typeof name !== 'string' || name === '') {
      return Promise.reject(new TypeError(`call(): expected the name of a program export, got ${String(name)}`));
    }
    return this.request({ type: 'call', name, target: -1 }, args);
  }

  /** @internal Sends a request whose arguments are encoded here. */
  request(message: Record<string, unknown>, args: unknown[]): Promise<unknown> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    drainReleased();
    const tensors: Tensor[] = [];
    let wireArgs: unknown;
    try {
      wireArgs = encode(args, { marker: (v) => (v instanceof RemoteHandle ? v.marker(this) : undefined) }, tensors);
    } catch (e) {
      return Promise.reject(e);
    }
    const id = nextCallId++;
    // Note [Profiling across agents] (core/features/profiler_agents.ts): a `profile` field while this agent profiles.
    const profiling = remoteProfileRequest();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, profile: profiling?.sink });
      try {
        this.worker.postMessage({
          ...message,
          id,
          args: wireArgs,
          ...(profiling === undefined ? {} : { profile: profiling.request }),
        });
      } catch (e) {
        this.#pending.delete(id);
        discardWire(wireArgs);
        reject(e);
      }
    });
  }

  /** @internal */
  settle(message: FromWorker): void {
    if (message.type !== 'result' && message.type !== 'error') return;
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    if (message.profile !== undefined) pending.profile?.(this.agent, message.profile);
    if (message.type === 'error') return pending.reject(new RemoteError(message.error));
    try {
      pending.resolve(decode(message.value, (m) => new RemoteHandle(this, m.id)));
    } catch (e) {
      pending.reject(e);
    }
  }

  /**
   * Ends the worker (even in the middle of a kernel): calls in flight reject at once, and the returned
   * promise resolves when its agent is retired (Note [Agent faults]), which waits until the worker has
   * really stopped (Note [Stopping is not stopped] in shared_runtime.ts). Idempotent.
   *
   * @example
   * ```ts ignore
   * const agent = await spawnAgent();
   * await agent.terminate();
   * ```
   */
  terminate(reason = 'The worker was terminated'): Promise<void> {
    if (this.#retired !== undefined) return this.#retired;
    this.worker.terminate();
    const error = new Error(reason);
    this.#ended = error;
    markStopping(this.agent);
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
    this.#retired = whenStopped(this.agent).then(() => {
      this.#orphans = retireAgent(this.agent);
      for (const f of this.#onExit) f();
    });
    return this.#retired;
  }

  #retired: Promise<void> | undefined;

  /** @internal */
  onExit(f: () => void): void {
    this.#onExit.push(f);
  }

  /** Terminates the worker (`using agent = await spawnAgent()`; retirement finishes in the background). */
  [Symbol.dispose](): void {
    void this.terminate();
  }

  /** Terminates the worker and waits for its retirement (`await using agent = await spawnAgent()`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.terminate();
  }
}

/**
 * An object living in a worker (what a program export returned that is not a tensor or plain data, e.g. a
 * model): its methods are called remotely, and `dispose()` lets the worker forget it.
 */
export class RemoteHandle {
  readonly #agent: AgentHandle;
  readonly #id: number;
  #disposed = false;

  /** @internal */
  constructor(agent: AgentHandle, id: number) {
    this.#agent = agent;
    this.#id = id;
  }

  /** @internal The wire marker, only towards the agent that holds the object. */
  marker(agent: AgentHandle): HandleMarker {
    if (agent !== this.#agent) {
      throw new TypeError('A RemoteHandle can only be passed back to the worker that holds it');
    }
    if (this.#disposed) throw new Error('The RemoteHandle was disposed');
    return { kind: 'switchyard.handle', id: this.#id };
  }

  /**
   * Calls method `name` of the remote object with `args`.
   *
   * @example
   * ```ts ignore
   * const model = await agent.call('makeModel') as RemoteHandle;
   * const y = await model.call('forward', x);
   * ```
   */
  call(name: string, ...args: unknown[]): Promise<unknown> {
    if (this.#disposed) return Promise.reject(new Error('The RemoteHandle was disposed'));
    return this.#agent.request({ type: 'call', name, target: this.#id }, args);
  }

  /** Reads property `name` of the remote object. */
  get(name: string): Promise<unknown> {
    if (this.#disposed) return Promise.reject(new Error('The RemoteHandle was disposed'));
    return this.#agent.request({ type: 'get', name, target: this.#id }, []);
  }

  /** Lets the worker forget the object (its tensors are freed by the program's own rules). */
  async dispose(): Promise<void> {
    if (this.#disposed || this.#agent.ended) return;
    this.#disposed = true;
    await this.#agent.request({ type: 'release', target: this.#id }, []);
  }
}

const live = new Set<AgentHandle>();

/**
 * Starts a Worker attached to this runtime (the main agent's memory, page pool, dispatch table store and
 * kernel-name table (Note [Shared table store] in core/dispatch/shared_tables.ts), shared kernel slots and the
 * operator-library modules loaded with `loadOperatorLibrary`) and resolves when it is ready. With
 * `program`, the worker also imports that module, whose exports `call` reaches: the proxy mode, where a
 * whole program runs in the worker and this agent stays responsive. Throws a `NotAttachableError` where
 * memory cannot be shared (no `SharedArrayBuffer`).
 *
 * @example
 * ```ts ignore
 * import { spawnAgent, tensor } from './mod.ts';
 * using agent = await spawnAgent({ program: new URL('./my_program.ts', import.meta.url) });
 * const y = await agent.call('double', tensor([1, 2])); // tensor([2, 4]), over the same memory
 * ```
 */
export async function spawnAgent(options: SpawnAgentOptions = {}): Promise<AgentHandle> {
  requireAttachable('start a Worker attached to the runtime');
  if (typeof options !== 'object' || options === null) throw new TypeError('spawnAgent(): options must be an object');
  const program = options.program === undefined ? undefined : String(options.program);
  const { cb, agent: self, memory, tables } = sharedRuntime();
  const agent = cb.locked(self, () => cb.claimAgent());
  // The handle exists once the worker does; a worker that fails before that is retired by the catch below.
  const made: { handle?: AgentHandle } = {};
  let events!: WorkerEvents;
  const ready = new Promise<void>((resolve, reject) => {
    const end = (reason: string) => {
      void made.handle?.terminate(reason);
      reject(new Error(reason));
    };
    events = {
      message: (m: FromWorker) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'failed') {
          const error = new RemoteError(m.error);
          void made.handle?.terminate(error.message);
          reject(error);
        } else if (m.type === 'closed') end(`The worker of agent ${agent} closed itself`);
        else made.handle?.settle(m);
      },
      error: (message) => end(`The worker of agent ${agent} failed: ${message}`),
      exit: () => end(`The worker of agent ${agent} exited`),
    };
  });
  ready.catch(() => {}); // observed below; a worker that ends later must not raise an unhandled rejection
  let worker: AgentWorker;
  try {
    worker = startWorker(siblingModuleUrl('agent_entry', import.meta.url), options.name, events);
  } catch (e) {
    retireAgent(agent);
    throw e;
  }
  const started = made.handle = new AgentHandle(agent, worker);
  live.add(started);
  started.onExit(() => live.delete(started));
  const init: AgentInit = {
    memory,
    module: kernelModule(),
    controlBase: cb.base,
    agent,
    checked: isCpuChecked(),
    tables,
  };
  worker.postMessage({ type: 'attach', init, modules: cb.modules(), program });
  await ready;
  return started;
}

/** What an {@linkcode AgentHandle} needs of its worker: the part web and Node workers have in common. */
export interface AgentWorker {
  /** Sends a message (structured clone; shared memory is shared). */
  postMessage(message: unknown): void;
  /** Stops the worker. */
  terminate(): unknown;
}

/** What the worker reports to its handle. */
interface WorkerEvents {
  message(m: FromWorker): void;
  error(message: string): void;
  exit(): void;
}

interface NodeWorker extends AgentWorker {
  on(event: 'message', listener: (value: FromWorker) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'exit', listener: () => void): void;
}

/**
 * Starts the agent worker: a web `Worker` where the runtime has one (Deno, Bun, browsers), else Node's
 * `worker_threads` (looked up through `process.getBuiltinModule`, never imported, so that this module still
 * loads in a browser). Node reports a worker that ends itself with `exit`; a web worker that calls `close()`
 * posts `closed` first (Note [Agent faults]).
 */
function startWorker(url: URL, name: string | undefined, on: WorkerEvents): AgentWorker {
  const WebWorker = (globalThis as { Worker?: new (url: string, options: WorkerOptions) => Worker }).Worker;
  if (WebWorker !== undefined) {
    const worker = new WebWorker(url.href, { type: 'module', ...(name === undefined ? {} : { name }) });
    worker.onmessage = (e: MessageEvent<FromWorker>) => on.message(e.data);
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault?.(); // Deno ends the whole process on an unhandled worker error otherwise
      on.error(e.message);
    };
    // Bun fires `close` when a worker ends, however it ends (Deno does not: there the worker posts `closed`).
    worker.addEventListener('close', () => on.exit());
    return worker;
  }
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const threads = process?.getBuiltinModule?.('node:worker_threads') as
    | { Worker: new (url: URL, options: { name?: string }) => NodeWorker }
    | undefined;
  if (threads === undefined) throw new Error('spawnAgent(): this runtime has neither Worker nor worker_threads');
  const worker = new threads.Worker(url, name === undefined ? {} : { name });
  worker.on('message', (m) => on.message(m));
  worker.on('error', (e) => on.error(e?.message ?? String(e)));
  worker.on('exit', () => on.exit());
  return worker;
}

/**
 * The workers started by this agent that have not ended.
 *
 * @example
 * ```ts
 * import { liveAgents } from './agent.ts';
 * liveAgents().length; // 0 before any spawnAgent()
 * ```
 */
export function liveAgents(): AgentHandle[] {
  return [...live].filter((a) => !a.ended);
}

/**
 * A proxy for a program module run in a worker (ONNX Runtime Web's proxy mode): `await proxy.fn(...args)`
 * forwards to the module's export `fn`. `proxy[agentOf]` is the underlying {@linkcode AgentHandle}.
 *
 * @example
 * ```ts ignore
 * import { createProxy, agentOf } from './mod.ts';
 * const trainer = await createProxy<typeof import('./train.ts')>(new URL('./train.ts', import.meta.url));
 * const loss = await trainer.trainEpoch(x, y);
 * trainer[agentOf].terminate();
 * ```
 */
export async function createProxy<T = Record<string, (...args: never[]) => unknown>>(
  program: string | URL,
): Promise<Remote<T> & { readonly [agentOf]: AgentHandle }> {
  if (typeof program !== 'string' && !(program instanceof URL)) {
    throw new TypeError(`createProxy(): expected the program module's URL, got ${typeof program}`);
  }
  const agent = await spawnAgent({ program });
  return new Proxy({} as Remote<T> & { readonly [agentOf]: AgentHandle }, {
    get: (_target, prop) => {
      if (prop === agentOf) return agent;
      if (typeof prop !== 'string' || prop === 'then') return undefined;
      return (...args: unknown[]) => agent.call(prop, ...args);
    },
  });
}

/** The key under which a {@linkcode createProxy} proxy keeps its {@linkcode AgentHandle}. */
export const agentOf: unique symbol = Symbol('switchyard.agentOf');

/** The exports of a program module as seen through a proxy: every function becomes async. */
export type Remote<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};
