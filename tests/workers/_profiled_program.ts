// The program module tests/workers/profiler_agents.test.ts runs in an attached worker: steps whose operator calls
// the profiling agent expects to see, with their agent id and nesting.
import { DispatchKey, inferenceMode, linear, localDispatchKeySet, profile, type Tensor } from '../../mod.ts';
import { sharedRuntime } from '../../core/workers/shared_runtime.ts';

/** `linear` under inference mode: the composite is recorded with `t` and `addmm` nested inside. */
export function linearInference(x: Tensor, w: Tensor, b: Tensor): Tensor {
  using _inference = inferenceMode();
  return linear(x, w, b);
}

/** Whether this agent's include set holds the Profiler key now (it must not while no one profiles). */
export function includesProfiler(): boolean {
  return localDispatchKeySet().included.has(DispatchKey.Profiler);
}

/** This worker's agent id. */
export function agentId(): number {
  return sharedRuntime().agent;
}

/** One recorded call, then an error: the events still come back with the error. */
export function reluThenFail(x: Tensor): never {
  x.relu().dispose();
  throw new RangeError('failing on purpose after relu');
}

/** `neg`, a pause of `ms` milliseconds, then `abs`: two requests of this kind overlap in the worker. */
export async function negPauseAbs(x: Tensor, ms: number): Promise<Tensor> {
  x.neg().dispose();
  await new Promise((r) => setTimeout(r, ms));
  return x.abs();
}

/** The worker's own profiler, run outside any profiled request: the names it recorded. */
export function ownProfile(x: Tensor): string[] {
  return profile(() => x.sigmoid().dispose()).events().map((e) => e.name);
}
