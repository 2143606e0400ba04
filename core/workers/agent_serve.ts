/**
 * The worker side of an attached agent: joins the runtime, loads the operator-library modules and the
 * program, and answers calls (core/workers/agent.ts is the other side).
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { attachSharedRuntime, drainReleased } from './shared_runtime.ts';
import { decode, encode, type HandleMarker } from './wire.ts';
import type { WireError } from './agent.ts';
import { syncOperatorLibraries } from './shared_ops.ts';

/** The global scope of a worker, as far as this module needs it. */
export interface WorkerScope {
  onmessage: ((e: MessageEvent) => unknown) | null;
  postMessage(message: unknown): void;
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
export function serveAgent(scope: WorkerScope): void {
  let program: Record<string, unknown> = {};
  const handles = new Map<number, object>();
  let nextHandle = 1;
  const lookup = (id: number): object => {
    const found = handles.get(id);
    if (found === undefined) throw new Error(`The worker holds no object for handle ${id} (it was disposed)`);
    return found;
  };
  scope.onmessage = async (e: MessageEvent) => {
    const m = e.data;
    if (m.type === 'attach') {
      try {
        attachSharedRuntime(m.init);
        await syncOperatorLibraries();
        if (m.program !== undefined) program = await import(m.program);
        scope.postMessage({ type: 'ready' });
      } catch (err) {
        scope.postMessage({ type: 'failed', error: wireError(err) });
      }
      return;
    }
    drainReleased();
    const received: Tensor[] = [];
    try {
      // Operator libraries another agent loaded since the last call (one read when there are none).
      await syncOperatorLibraries();
      const args = decode(m.args, (marker: HandleMarker) => lookup(marker.id), received) as unknown[];
      const target = (m.target < 0 ? program : lookup(m.target)) as Record<string, unknown>;
      let value: unknown;
      if (m.type === 'call') {
        const fn = target[m.name];
        if (typeof fn !== 'function') {
          throw new TypeError(`${m.target < 0 ? 'The program' : 'The remote object'} has no function '${m.name}'`);
        }
        value = await fn.apply(target, args);
      } else if (m.type === 'get') {
        value = await target[m.name];
      } else if (m.type === 'release') {
        handles.delete(m.target);
      } else if (m.type === 'sync') {
        // Done above.
      } else {
        throw new Error(`Unknown agent request ${String(m.type)}`);
      }
      const results: Tensor[] = [];
      const wire = encode(value, {
        keep: (obj) => {
          const id = nextHandle++;
          handles.set(id, obj);
          return { kind: 'switchyard.handle', id };
        },
      }, results);
      scope.postMessage({ type: 'result', id: m.id, value: wire });
      // Result tensors are handed over: the descriptor holds the storage now.
      for (const t of results) t.dispose();
    } catch (err) {
      scope.postMessage({ type: 'error', id: m.id, error: wireError(err) });
    } finally {
      for (const t of received) t.dispose();
    }
  };
}
