/**
 * The dispatch trace: with `SWITCHYARD_SHOW_DISPATCH_TRACE=1`, every call prints a line naming the calling
 * convention, the operator and the key it dispatched to, indented one space per nesting level, as PyTorch's
 * `TORCH_SHOW_DISPATCH_TRACE` does: `[call] op=[aten::add.Tensor], key=[AutogradCPU]`.
 *
 * @module
 */
import { dispatchKeyName } from './dispatch_key.ts';
import { DispatchKeySet } from './dispatch_key_set.ts';
import { readEnv } from './env.ts';

/** Mutable trace state of one dispatcher. */
export interface DispatchTrace {
  enabled: boolean;
  enter(label: string, op: string, hi: number, lo: number): void;
  exit(): void;
}

/** The environment variable that switches the trace on. */
export const TRACE_ENV_VAR = 'SWITCHYARD_SHOW_DISPATCH_TRACE';

/** Trace state from an explicit setting or the environment; invalid values warn, as PyTorch does. */
export function readTraceSetting(
  explicit: boolean | undefined,
  sink: (line: string) => void,
  warn: (message: string) => void,
): DispatchTrace {
  let enabled = explicit ?? false;
  if (explicit === undefined) {
    const value = readEnv(TRACE_ENV_VAR);
    if (value === '1') enabled = true;
    else if (value !== undefined && value !== '0' && value !== '') {
      warn(`ignoring invalid value for ${TRACE_ENV_VAR}: ${value} valid values are 0 or 1.`);
    }
  }
  let depth = 0;
  return {
    enabled,
    enter(label, op, hi, lo) {
      const key = dispatchKeyName(new DispatchKeySet(hi, lo).highestPriorityTypeId());
      sink(`${' '.repeat(depth)}${label} op=[${op}], key=[${key}]`);
      depth++;
    },
    exit() {
      depth--;
    },
  };
}
