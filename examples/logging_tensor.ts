/**
 * A tensor subclass that intercepts its own operators (PyTorch's `LoggingTensor` from
 * `torch/testing/_internal/logging_tensor.py`): a wrapper holding an inner tensor, whose static
 * `torchDispatch` logs every operator, unwraps the arguments, runs the operator on the inner tensors and wraps
 * the results again. Autograd runs above the Python key: the wrapper records history, autograd saves
 * LoggingTensors (`aliasForAutograd`), and the backward operators that read them are logged too.
 *
 * Run: `deno run -A examples/logging_tensor.ts`.
 *
 * @module
 */
import {
  callOp,
  type DispatchKwargs,
  keep,
  type OperatorHandle,
  randn,
  Tensor,
  type TorchDispatchClass,
  type VersionCounter,
  WrapperTensor,
} from '../mod.ts';

/** Where every LoggingTensor operator is logged, as `aten::mm.default(LoggingTensor, LoggingTensor)`. */
export const log: string[] = [];

function describeArg(v: unknown): string {
  if (v instanceof LoggingTensor) return `LoggingTensor[${v.shape.join(', ')}]`;
  if (Tensor.isTensor(v)) return `Tensor[${v.shape.join(', ')}]`;
  if (Array.isArray(v)) return `[${v.map(describeArg).join(', ')}]`;
  return v === null ? 'None' : String(v);
}

/**
 * A wrapper that logs its operators and computes them on its inner tensor.
 *
 * @example
 * ```ts
 * import { LoggingTensor, log } from './logging_tensor.ts';
 * import { randn } from '../mod.ts';
 * const x = new LoggingTensor(randn(2, 3));
 * x.relu();
 * log; // ['aten::relu(LoggingTensor[2, 3])']
 * ```
 */
export class LoggingTensor extends WrapperTensor {
  /** The tensor holding the data. */
  readonly inner: Tensor;

  /** Wraps `inner` (sharing `version` when it is an alias). */
  constructor(inner: Tensor, options: { version?: VersionCounter } = {}) {
    if (!Tensor.isTensor(inner)) throw new TypeError('LoggingTensor: expected a Tensor to wrap');
    super(inner, options);
    this.inner = inner;
  }

  /** What autograd saves: a LoggingTensor over the same inner tensor and version counter. */
  override aliasForAutograd(): LoggingTensor {
    return new LoggingTensor(this.inner, { version: this.versionCounter });
  }

  /** Logs the call, runs it on the inner tensors, and wraps the tensors it returns. */
  static torchDispatch(
    op: OperatorHandle,
    _types: readonly TorchDispatchClass[],
    args: unknown[],
    kwargs: DispatchKwargs,
  ): unknown {
    log.push(`${op.name}(${args.map(describeArg).join(', ')})`);
    const unwrap = (v: unknown): unknown => v instanceof LoggingTensor ? v.inner : Array.isArray(v) ? v.map(unwrap) : v;
    const unwrappedKwargs: DispatchKwargs = {};
    for (const [k, v] of Object.entries(kwargs)) unwrappedKwargs[k] = unwrap(v);
    const result = callOp(op, args.map(unwrap), unwrappedKwargs);
    // The inner result leaves the scope() it was made in (autograd's backward runs in one): the wrapper owns it,
    // and the garbage collector frees both (aliases of a wrapper share its inner tensor, so dispose() cannot).
    const wrap = (v: unknown): unknown =>
      Tensor.isTensor(v) && !(v instanceof LoggingTensor)
        ? new LoggingTensor(keep(v))
        : Array.isArray(v)
        ? v.map(wrap)
        : v;
    return wrap(result);
  }

  /** The inner tensor's printout, marked. */
  override toString(): string {
    return `LoggingTensor(${String(this.inner)})`;
  }
}

if (import.meta.main) {
  const w = new LoggingTensor(randn(3, 4));
  const x = new LoggingTensor(randn(2, 3));
  const y = x.mm(w).relu();
  console.log(String(y));
  console.log(log.join('\n'));
}
