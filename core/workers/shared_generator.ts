/**
 * The default random generator shared by every agent of a runtime, as PyTorch's CPU default generator is
 * shared by all threads: one mt19937 stream, whichever agent draws.
 *
 * Note [Shared generator]
 * The stream's state lives in the control block as `getRngState()` bytes, behind its own lock word (the
 * owner's agent id, so a dead holder's lock can be broken) and a version word. A random kernel on the
 * default generator runs inside `Generator.use`: it takes the lock, loads the shared state into this
 * agent's generator unless this agent wrote the latest version itself, draws, and writes the state back.
 * Each agent keeps drawing at full speed inside one operation; the cost is one state copy (5 KB) per random
 * operation while agents share the runtime.
 *
 * @module
 */
import { defaultCpuGenerator, type Generator, RNG_STATE_BYTES } from '../tensor/generator.ts';
import { type ControlBlock, W_RNG_LOCK, W_RNG_VERSION } from './control_block.ts';

/**
 * Makes this agent's default generator draw from the shared stream; `initialize` (the main agent, once)
 * publishes its current state as the stream's start.
 *
 * @example
 * ```ts ignore
 * import { shareDefaultGenerator } from './shared_generator.ts';
 * shareDefaultGenerator(cb, agent, agent === 0);
 * ```
 */
export function shareDefaultGenerator(cb: ControlBlock, agent: number, initialize: boolean): void {
  const w = cb.words, bytes = cb.rngBytes;
  const g = defaultCpuGenerator();
  let mine = -1; // the version this agent's generator holds
  if (initialize) {
    bytes.set(g.getState());
    mine = 1;
    Atomics.store(w, W_RNG_VERSION, mine);
  }
  g.shareWith({
    use<T>(generator: Generator, fn: () => T): T {
      cb.lock(agent, W_RNG_LOCK);
      try {
        const version = Atomics.load(w, W_RNG_VERSION);
        if (version !== mine) generator.setState(bytes.slice(0, RNG_STATE_BYTES));
        try {
          return fn();
        } finally {
          bytes.set(generator.getState());
          mine = version + 1;
          Atomics.store(w, W_RNG_VERSION, mine);
        }
      } finally {
        cb.unlock(agent, W_RNG_LOCK);
      }
    },
  });
}
