/**
 * Agents that share one runtime: Workers attached to the main agent's memory, allocator pool and shared
 * kernel slots; tensors that cross agents by descriptor; proxy mode.
 *
 * @module
 */
export { discard, isTensorDescriptor, receive, share, type TensorDescriptor } from './shared_storage.ts';
export {
  AgentHandle,
  agentOf,
  type AgentWorker,
  createProxy,
  liveAgents,
  type Remote,
  RemoteError,
  RemoteHandle,
  spawnAgent,
  type SpawnAgentOptions,
} from './agent.ts';
export { NotAttachableError, notAttachableReason } from './environment.ts';
export { SharedLockTimeoutError } from './control_block.ts';
export {
  defineKernel,
  loadOperatorLibrary,
  registerShared,
  registrationGeneration,
  sharedSlot,
  syncOperatorLibraries,
} from './shared_ops.ts';
