/**
 * Profiling across agents: while an agent profiles, the operator calls that attached agents run for it are
 * recorded too, with their agent id.
 *
 * Note [Profiling across agents]
 * A profile follows calls, not time. Each request an agent sends to a worker (`AgentHandle.call`, a proxy's
 * method, a `RemoteHandle` method) while it has a profiler recording carries a small `profile` field: the
 * profiler's start on the shared wall clock (`performance.timeOrigin + now()`) and its options. The worker records
 * the request's operator calls with a profiler of its own, started at that same instant on its clock (its
 * `performance.now()` counts from its own time origin, so the start is translated), and sends the finished events
 * back with the result (or error) of the request. The calling agent adds them to the profiler that was recording
 * when it sent the request, before the call's promise settles: once `await agent.call(...)` returns, its events
 * are there, and a synchronous `stop()` loses none. Requests that overlap in a worker share its recording, which
 * runs while any of them is in flight; events finished by then go back with whichever request ends first (so if
 * requests of two successive profiles overlap in a worker, which is rare, they share the first one's recording, its
 * clock origin included).
 *
 * So: nothing changes for a worker while no one profiles (no message field, no key in any keyset: Note [Profiler
 * cost when off] holds in every agent); what a worker runs outside a profiled request (work it started earlier
 * that is still running, a timer) is not recorded; a worker whose own program runs a profiler when a profiled
 * request arrives keeps its own, and the request is not recorded there (and while a profiled request runs there,
 * the worker's own `profiler()` raises the usual "already enabled" error). Kernel times are recorded on the
 * profiling agent only.
 *
 * @module
 */
import { activeProfiler, Profiler, type RemoteProfileEvents, type RemoteProfileRequest } from './profiler.ts';

/** What an agent keeps for a request sent while it profiles: where the worker's events go. */
export type RemoteProfileSink = (agent: number, events: RemoteProfileEvents) => void;

/**
 * @internal The `profile` field for a request sent now, and where its events go; undefined while this agent does
 * not profile.
 */
export function remoteProfileRequest(): { request: RemoteProfileRequest; sink: RemoteProfileSink } | undefined {
  const p = activeProfiler();
  if (p === undefined || !p.enabled) return undefined;
  return { request: p.remoteRequest(), sink: (agent, events) => p.acceptRemote(agent, events) };
}

let session: { profiler: Profiler; requests: number; serial: number } | undefined;
let serial = 0;

function isRequest(v: unknown): v is RemoteProfileRequest {
  const r = v as RemoteProfileRequest;
  return typeof r === 'object' && r !== null && typeof r.origin === 'number' && typeof r.recordShapes === 'boolean' &&
    typeof r.profileMemory === 'boolean';
}

/**
 * @internal Worker side: starts recording a request sent with a `profile` field (or joins the recording of
 * requests in flight). The returned function ends the request's part and gives the events to send back; undefined
 * when nothing is recorded (no field, or this agent's own profiler is running).
 */
export function beginRemoteProfile(request: unknown): (() => RemoteProfileEvents) | undefined {
  if (!isRequest(request)) return undefined;
  if (session === undefined) {
    if (activeProfiler() !== undefined) return undefined;
    const profiler = new Profiler({ recordShapes: request.recordShapes, profileMemory: request.profileMemory });
    profiler.startAt(request.origin - performance.timeOrigin);
    session = { profiler, requests: 0, serial: serial++ };
  }
  const s = session;
  s.requests++;
  let ended = false;
  return () => {
    if (ended) return { session: s.serial, events: [] };
    ended = true;
    const events = s.profiler.takeFinished();
    if (--s.requests === 0) {
      s.profiler.stop();
      events.push(...s.profiler.takeFinished());
      if (session === s) session = undefined;
    }
    return { session: s.serial, events };
  };
}
