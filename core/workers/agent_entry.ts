// The module every attached Worker starts from (core/workers/agent.ts spawns it): the whole runtime, then the
// agent protocol. The only worker entry file, so that `deno test` type-checks one worker module.
import '../../mod.ts';
import { serveAgent, type WorkerScope } from './agent_serve.ts';

serveAgent(self as unknown as WorkerScope);
