// The module every attached Worker starts from (core/workers/agent.ts spawns it): the whole runtime, then the
// agent protocol. The only worker entry file, so that `deno test` type-checks one worker module. Bun's package
// bundle (scripts/bundle.ts) starts its workers from a file of its own that calls the same `serveThisWorker`.
import '../../mod.ts';
import { serveThisWorker } from './agent_serve.ts';

serveThisWorker();
