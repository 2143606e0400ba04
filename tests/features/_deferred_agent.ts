// The program an attached Worker runs for deferred_registrations.test.ts: what the agent sees of the groups the
// main agent had deferred and ran when it shared its table store.
import { Dispatcher, DispatchKey, type Tensor, tensor, vmap } from '../../mod.ts';
import { dispatchTableIndexForKey } from '../../core/dispatch/dispatch_key_set.ts';

export function deferredState(): Record<string, unknown> {
  const d = Dispatcher.singleton();
  const store = d.tableStore;
  const slot = (op: string, key: DispatchKey) =>
    d.kernelName(store.readRow(store.registry!.rowOf(op)).ids[dispatchTableIndexForKey(key)]);
  return {
    pending: d.pendingRegistrations(),
    negBatched: slot('aten::neg', DispatchKey.Batched),
    randnVmapMode: slot('aten::randn', DispatchKey.VmapMode),
    mapped: vmap((t: Tensor) => t.neg())(tensor([[1, 2], [3, 4]])).tolist(),
  };
}
