// The module every attached Worker starts from (core/workers/agent.ts spawns it): the whole runtime, then the
// agent protocol. The only worker entry file, so that `deno test` type-checks one worker module. Under Node the
// worker is a `worker_threads` one (no `self`): its parent port stands in for the worker scope.
import '../../mod.ts';
import { serveAgent, type WorkerScope } from './agent_serve.ts';

interface NodeParentPort {
  on(event: 'message', listener: (data: unknown) => void): void;
  postMessage(message: unknown): void;
}

const web = (globalThis as unknown as { self?: WorkerScope }).self;
if (web !== undefined) {
  serveAgent(web);
} else {
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
