/**
 * The worker side of an attached agent: joins the runtime, loads the operator-library modules and the
 * program, and answers calls (core/workers/agent.ts is the other side).
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { keep, scope as tensorScope } from '../tensor/lifetime.ts';
import { attachSharedRuntime, drainReleased } from './shared_runtime.ts';
import { decode, encode, type HandleMarker } from './wire.ts';
import type { WireError } from './agent.ts';
import { syncOperatorLibraries } from './shared_ops.ts';
import { beginRemoteProfile } from '../features/profiler_agents.ts';

/** The global scope of a worker, as far as this module needs it. */
export interface WorkerScope {
  onmessage: ((e: MessageEvent) => unknown) | null;
  postMessage(message: unknown): void;
}

interface NodeParentPort {
  on(event: 'message', listener: (data: unknown) => void): void;
  postMessage(message: unknown): void;
}

/**
 * Serves an attached agent in the worker this code runs in: a web Worker's global scope, or under Node (a
 * `worker_threads` worker, no `self`) its parent port standing in for it. What a worker entry module calls once the
 * runtime is imported.
 *
 * @example
 * ```ts ignore
 * import '../../mod.ts';
 * import { serveThisWorker } from './agent_serve.ts';
 * serveThisWorker();
 * ```
 */
export function serveThisWorker(): void {
  const web = (globalThis as unknown as { self?: WorkerScope }).self;
  if (web !== undefined) return serveAgent(web);
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const port = (process?.getBuiltinModule?.('node:worker_threads') as { parentPort: NodeParentPort | null })
    .parentPort!;
  let listener: ((e: MessageEvent) => unknown) | null = null;
  port.on('message', (data) => listener?.({ data } as MessageEvent));
  serveAgent({
    get onmessage() {
      return listener;
    },
    set onmessage(f) {
      listener = f;
    },
    postMessage: (message) => port.postMessage(message),
  });
}

function wireError(e: unknown): WireError {
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { name: 'Error', message: String(e) };
}

/**
 * Serves an attached agent in this worker: the first message attaches it, the others are calls.
 *
 * @example
 * ```ts ignore
 * import { serveAgent } from './agent_serve.ts';
 * serveAgent(self as unknown as WorkerScope);
 * ```
 */
export function serveAgent(host: WorkerScope): void {
  let program: Record<string, unknown> = {};
  const handles = new Map<number, object>();
  let nextHandle = 1;
  const lookup = (id: number): object => {
    const found = handles.get(id);
    if (found === undefined) throw new Error(`The worker holds no object for handle ${id} (it was disposed)`);
    return found;
  };
  // A program that ends its own worker with `close()` (Note [Agent faults] in agent.ts): say so first, so that
  // the agent that started it retires it at once instead of waiting for answers that never come.
  const g = globalThis as { close?: () => void };
  if (typeof g.close === 'function') {
    const close = g.close.bind(globalThis);
    g.close = () => {
      host.postMessage({ type: 'closed' });
      close();
    };
  }
  host.onmessage = async (e: MessageEvent) => {
    const m = e.data;
    if (m.type === 'attach') {
      try {
        attachSharedRuntime(m.init);
        await syncOperatorLibraries();
        if (m.program !== undefined) program = await import(m.program);
        host.postMessage({ type: 'ready' });
      } catch (err) {
        host.postMessage({ type: 'failed', error: wireError(err) });
      }
      return;
    }
    drainReleased();
    const received: Tensor[] = [];
    // Note [Profiling across agents] (core/features/profiler_agents.ts): recorded when the request says so.
    const profiled = beginRemoteProfile(m.profile);
    try {
      // Operator libraries another agent loaded since the last call (one read when there are none).
      await syncOperatorLibraries();
      const args = decode(m.args, (marker: HandleMarker) => lookup(marker.id), received) as unknown[];
      const target = (m.target < 0 ? program : lookup(m.target)) as Record<string, unknown>;
      // Note [Call lifetimes]: the inner scope frees what the call made and did not return; the outer one
      // frees the returned tensors once shared (the descriptors hold them now). Objects that stay here as
      // handles are kept from every scope; tensors that existed before the call stay the program's.
      await tensorScope(async () => {
        const value = await tensorScope(async () => {
          if (m.type === 'call') {
            const fn = target[m.name];
            if (typeof fn !== 'function') {
              throw new TypeError(
                `${m.target < 0 ? 'The program' : 'The remote object'} has no function '${m.name}'`,
              );
            }
            return await fn.apply(target, args);
          }
          if (m.type === 'get') return await target[m.name];
          if (m.type === 'release') return void handles.delete(m.target);
          if (m.type === 'sync') return undefined; // done above
          throw new Error(`Unknown agent request ${String(m.type)}`);
        });
        const wire = encode(value, {
          keep: (obj) => {
            keep(obj);
            const id = nextHandle++;
            handles.set(id, obj);
            return { kind: 'switchyard.handle', id };
          },
        });
        host.postMessage({ type: 'result', id: m.id, value: wire, profile: profiled?.() });
      });
    } catch (err) {
      host.postMessage({ type: 'error', id: m.id, error: wireError(err), profile: profiled?.() });
    } finally {
      for (const t of received) t.dispose();
    }
  };
}
