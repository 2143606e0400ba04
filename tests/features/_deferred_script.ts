// Fresh-process programs for deferred_registrations.test.ts (Note [Deferred registrations] in
// core/dispatch/dispatcher.ts): each mode prints one JSON line about the default dispatcher's deferred groups.
import {
  add,
  Dispatcher,
  DispatchKey,
  functionalize,
  Library,
  matmul,
  registerOperators,
  spawnAgent,
  tensor,
  unregisterFunctionalize,
  vmap,
} from '../../mod.ts';
import { dispatchTableIndexForKey } from '../../core/dispatch/dispatch_key_set.ts';

const d = Dispatcher.singleton();
const mode = (globalThis as { Deno?: { args: string[] } }).Deno?.args[0] ??
  (globalThis as { process?: { argv: string[] } }).process!.argv[2];
const out: Record<string, unknown> = { pendingAtImport: d.pendingRegistrations() };

/** The name of the kernel in an operator's stored row at `key` (what a Worker attached to the store reads). */
function storedKernel(op: string, key: DispatchKey): string | undefined {
  const store = d.tableStore;
  const row = store.registry!.rowOf(op);
  return d.kernelName(store.readRow(row).ids[dispatchTableIndexForKey(key)]);
}

if (mode === 'never') {
  // A program that never maps or functionalizes: adds, multiplies, differentiates.
  const x = tensor([[1.5, 2], [3, 4]], { requiresGrad: true });
  const y = matmul(add(x, x), x).sum();
  y.backward();
  out.result = [y.item(), x.grad!.tolist()];
  out.pending = d.pendingRegistrations();
} else if (mode === 'dump') {
  const ops = registerOperators();
  out.negBatched = ops['neg'].dump().split('\n').filter((l) => l.startsWith('Batched'));
  out.randnVmapMode = ops['randn'].dumpComputedTable().split('\n').filter((l) => l.startsWith('VmapMode'));
  out.cloneFunctionalize = ops['clone'].dumpComputedTable().split('\n').filter((l) => l.startsWith('Functionalize'));
  out.pending = d.pendingRegistrations();
} else if (mode === 'user') {
  const warnings: string[] = [];
  console.warn = (m: string) => warnings.push(String(m));
  const lib = new Library('aten', 'IMPL', DispatchKey.Batched);
  lib.impl(
    'neg',
    () => {
      throw new Error('the user kernel ran');
    },
    undefined,
    { debug: 'user rule for neg' },
  );
  out.pendingAfterUserImpl = d.pendingRegistrations();
  try {
    vmap((t: ReturnType<typeof tensor>) => t.neg())(tensor([[1, 2], [3, 4]]));
    out.during = 'no error';
  } catch (e) {
    out.during = (e as Error).message;
  }
  lib.dispose();
  out.after = vmap((t: ReturnType<typeof tensor>) => t.neg())(tensor([[1, 2], [3, 4]])).tolist();
  out.warnings = warnings;
} else if (mode === 'unregistered') {
  unregisterFunctionalize(); // before first use: the deferred fallback must not come back
  out.pending = d.pendingRegistrations();
  try {
    functionalize((t: ReturnType<typeof tensor>) => t.add(1))(tensor([1, 2]));
    out.call = 'no error';
  } catch (e) {
    out.call = (e as Error).message.split('\n')[0];
  }
  const row = registerOperators()['add.Tensor'].computedTable().find((r) => r.key === 'Functionalize');
  out.functionalizeSlot = row?.kernel ?? 'missing';
} else if (mode === 'worker') {
  const agent = await spawnAgent({ program: new URL('./_deferred_agent.ts', import.meta.url) });
  try {
    out.pendingAfterSharing = d.pendingRegistrations();
    out.mainNegBatched = storedKernel('aten::neg', DispatchKey.Batched);
    out.mainRandnVmapMode = storedKernel('aten::randn', DispatchKey.VmapMode);
    out.agent = await agent.call('deferredState');
  } finally {
    await agent.terminate();
  }
}
console.log(JSON.stringify(out));
