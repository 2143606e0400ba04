/**
 * Agents that share one runtime: what it costs to post a tensor to an attached worker and get it back (1 KiB
 * and 64 MiB: a descriptor over the shared memory, so the cost should not depend on the size), beside posting
 * the same bytes as a structured-clone copy, and whether dispatch inside a worker costs what it costs on the
 * main agent (a 1-element `add`, timed the same way on both).
 *
 * Run: `deno run -A bench/workers_agents.bench.ts` or `bun bench/workers_agents.bench.ts`.
 *
 * @module
 */
import { add, receive, scope, share, spawnAgent, type Tensor, tensor } from '../mod.ts';
import { bench, do_not_optimize, group, runAndReport, SMOKE, smokeSize, summary } from './_report.ts';
import { timeTinyAdds } from './_workers_program.ts';

const agent = await spawnAgent({ program: new URL('./_workers_program.ts', import.meta.url) });
const SIZES = [['1 KiB', 1024], ['64 MiB', smokeSize(64 << 20, 1 << 16)]] as const;
const tensors = new Map(SIZES.map(([label, bytes]) => [label, tensor(new Float32Array(bytes / 4).fill(1))]));
const copies = new Map(SIZES.map(([label, bytes]) => [label, new Float32Array(bytes / 4).fill(1)]));

summary(() => {
  for (const [label] of SIZES) {
    group(`a ${label} tensor to a worker and back`, () => {
      bench(`post ${label} tensor (descriptor) and back`, async () => {
        const y = await agent.call('echo', tensors.get(label)!) as Tensor;
        y.dispose();
      });
      bench(`post ${label} as a structured-clone copy and back`, async () => {
        do_not_optimize(await agent.call('echoCopy', copies.get(label)!));
      });
    });
  }
});
bench('share + receive, same agent (descriptor cost alone)', () => {
  const t = receive(share(tensors.get('64 MiB')!));
  t.dispose();
});
const a = tensor(new Float32Array([1])), b = tensor(new Float32Array([2]));
bench('tiny add on the main agent (mitata)', () => add(a, b).dispose());

const CALLS = smokeSize(100_000, 100), BATCHES = smokeSize(9, 1), WARM_MS = smokeSize(300, 0);
await runAndReport('workers_agents', (f) => {
  const p50 = (name: string) => f.get(name)!.p50_ns;
  const out: Record<string, unknown> = {};
  for (const [label] of SIZES) {
    out[`post_${label.replace(' ', '')}_descriptor_us`] = Number(
      (p50(`post ${label} tensor (descriptor) and back`) / 1e3).toFixed(1),
    );
    out[`post_${label.replace(' ', '')}_copy_us`] = Number(
      (p50(`post ${label} as a structured-clone copy and back`) / 1e3).toFixed(1),
    );
  }
  out.share_receive_ns = Math.round(p50('share + receive, same agent (descriptor cost alone)'));
  return out;
}).then(async () => {
  // Dispatch in a worker vs on the main agent, timed by the same function on both (the worker's event loop
  // is idle meanwhile; the main agent waits on the call).
  // A worker runs each call inside an async scope() (Note [Call lifetimes]), which registers every tensor the
  // call makes: the main agent is timed plain and inside an async scope too, the like-for-like baseline.
  const main1 = timeTinyAdds(CALLS, BATCHES, WARM_MS);
  const scoped1 = await scope(async () => {
    await null; // as in a worker's call: inside the async scope's context
    return timeTinyAdds(CALLS, BATCHES, WARM_MS);
  });
  const worker = await agent.call('timeTinyAdds', CALLS, BATCHES, WARM_MS) as number;
  const main2 = timeTinyAdds(CALLS, BATCHES, WARM_MS);
  const scoped2 = await scope(async () => {
    await null; // as in a worker's call: inside the async scope's context
    return timeTinyAdds(CALLS, BATCHES, WARM_MS);
  });
  const main = Math.min(main1, main2), scoped = Math.min(scoped1, scoped2);
  console.log(
    `tiny add: main agent ${main.toFixed(1)} ns/call (in an async scope ${scoped.toFixed(1)}), ` +
      `worker ${worker.toFixed(1)} ns/call, worker/main-in-scope ${(worker / scoped).toFixed(2)}`,
  );
  if (!SMOKE) {
    // smoke mode writes no results
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { runtimeName } = await import('./_report.ts');
    const file = new URL(`./results/workers_agents-${runtimeName().split(' ')[0]}.json`, import.meta.url);
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.derived.tiny_add_main_ns = Number(main.toFixed(1));
    json.derived.tiny_add_main_in_scope_ns = Number(scoped.toFixed(1));
    json.derived.tiny_add_worker_ns = Number(worker.toFixed(1));
    json.derived.tiny_add_worker_over_main_in_scope = Number((worker / scoped).toFixed(2));
    writeFileSync(file, JSON.stringify(json, null, 2) + '\n');
  }
  a.dispose();
  b.dispose();
  for (const t of tensors.values()) t.dispose();
  await agent.terminate();
});
