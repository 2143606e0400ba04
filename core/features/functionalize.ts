/**
 * `functionalize`: removes mutation (and optionally aliasing) from a function, as PyTorch's
 * `torch.func.functionalize` does. Inside, every input is a FunctionalTensor (Note [Functional storage and the
 * update log] in `functionalize_tensor.ts`) and every op on one runs the Functionalize key's kernel
 * (`functionalize_kernel.ts`); the ops that reach the tensors below are out-of-place. At the end the outputs
 * are unwrapped and every input whose data was written is updated once, with `copy_`: a graph captured around a
 * functionalized function has no in-place op but these final copies into its inputs, as PyTorch's has.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { Library } from '../dispatch/library.ts';
import { type DeferredRegistrations, Dispatcher } from '../dispatch/dispatcher.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { scope, scopeSlot, type Tracked } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { functionalizeKernel, setLevelMode } from './functionalize_kernel.ts';
import {
  FunctionalTensor,
  popFunctionalizeLevel,
  pushFunctionalizeLevel,
  type RemoveMode,
  runAsParentOf,
  runAtLevel,
  setLevelFrame,
  syncFunctional,
} from './functionalize_tensor.ts';
import { flattenTree, unflattenTree } from './vmap_tree.ts';

/** Options of {@linkcode functionalize}. */
export interface FunctionalizeOptions {
  /**
   * `'mutations'` (default): in-place and `out=` ops become out-of-place ops. `'mutationsAndViews'`: views
   * become their `_copy` twins as well (PyTorch's `remove='mutations_and_views'`).
   */
  readonly remove?: RemoveMode;
}

let library: Library | undefined;
let deferred: DeferredRegistrations | undefined;

/**
 * Registers the Functionalize key's kernel as a boxed fallback now (idempotent). Importing this module defers it
 * until first needed (Note [Deferred registrations] in core/dispatch/dispatcher.ts: the first dispatch to the key, a
 * registration at it, or an inspection of the tables). No tensor outside `functionalize` holds the key, so ordinary
 * dispatch is unchanged.
 *
 * @example
 * ```ts
 * import { registerFunctionalize } from './functionalize.ts';
 * registerFunctionalize();
 * ```
 */
export function registerFunctionalize(): void {
  if (library !== undefined) return;
  deferred?.cancel();
  deferred = undefined;
  library = new Library('_', 'IMPL', DispatchKey.Functionalize, { location: 'core/features/functionalize.ts' });
  library.fallback(functionalizeKernel, { debug: 'functionalize kernel' });
}

/**
 * Removes the Functionalize key's kernel again (`functionalize` then fails with the dispatcher's missing-kernel
 * error until {@linkcode registerFunctionalize} runs); for benchmarks that compare the tables with and without it.
 *
 * @example
 * ```ts
 * import { registerFunctionalize, unregisterFunctionalize } from './functionalize.ts';
 * unregisterFunctionalize();
 * registerFunctionalize();
 * ```
 */
export function unregisterFunctionalize(): void {
  deferred?.cancel(); // not registered yet: a later need must not register it either
  deferred = undefined;
  library?.dispose();
  library = undefined;
}

deferred = Dispatcher.singleton().deferRegistrations(
  'functionalize (the Functionalize fallback)',
  [DispatchKey.Functionalize],
  registerFunctionalize,
);

function invalidRemove(remove: unknown): RuntimeError {
  return new RuntimeError(
    `functionalize(f, remove='mutations'): received invalid argument for remove=${String(remove)}. Valid options ` +
      "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and " +
      "replaced with their out-of-place equivalents.\n     remove='mutationsAndViews': In addition to the above, " +
      'all aliasing operators {view} will be replaced with their non-aliasing counterparts, {view}_copy.\n',
  );
}

/** The output with every functional tensor of `level` replaced by its synced value. */
function unwrapOutput(v: unknown, level: number): unknown {
  if (!(v instanceof FunctionalTensor) || v.level !== level) return v;
  syncFunctional(v);
  return v.value;
}

/**
 * A function that runs `fn` with mutation removed (PyTorch's `torch.func.functionalize`): in-place ops become
 * out-of-place ops, a write through a view is replayed onto its base and onto the base's other views when they
 * are next read, and the inputs `fn` wrote are updated at the end with one `copy_` each. With `remove:
 * 'mutationsAndViews'` views become `{view}_copy` ops too. Results equal `fn`'s; the point is what runs below:
 * a graph captured around it (`trace`, `makeFx`) has no in-place op but those final copies. Nests, and composes
 * with `func.grad` and `vmap` in both orders.
 *
 * @example
 * ```ts
 * import { functionalize, tensor, trace } from '../../mod.ts';
 * const f = (x) => {
 *   const y = x.mul(2);
 *   y.select(0, 1).add_(10); // through a view of an intermediate
 *   x.neg_(); // an input
 *   return y;
 * };
 * const x = tensor([1, 2, 3]);
 * functionalize(f)(x).tolist(); // [2, 14, 6]; x is now [-1, -2, -3]
 * trace(functionalize(f), [tensor([1, 2, 3])]).calls.map((n) => n.target); // no add_ or neg_: add, neg, ..., copy_
 * ```
 */
// deno-lint-ignore no-explicit-any
export function functionalize<F extends (...args: any[]) => any>(
  fn: F,
  options: FunctionalizeOptions = {},
): (...args: Parameters<F>) => ReturnType<F> {
  if (typeof fn !== 'function') {
    throw new TypeError(`functionalize: expected a function, got ${fn === null ? 'null' : typeof fn}`);
  }
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`functionalize: expected an options object, got ${options === null ? 'null' : typeof options}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'remove') throw new TypeError(`functionalize() got an unexpected keyword argument '${key}'`);
  }
  const remove = options.remove ?? 'mutations';
  if (remove !== 'mutations' && remove !== 'mutationsAndViews') throw invalidRemove(remove);
  // deno-lint-ignore no-explicit-any
  return (...args: any[]): any => {
    const { leaves, spec } = flattenTree(args);
    leaves.forEach((leaf) => {
      if (leaf instanceof Tensor) leaf.assertAlive('functionalize');
    });
    // The call runs in its own scope (Note [Who frees the values] in functionalize_tensor.ts).
    return scope(() => {
      const level = pushFunctionalizeLevel();
      setLevelMode(level, remove);
      try {
        const wrapped = leaves.map((leaf) => (leaf instanceof Tensor ? new FunctionalTensor(leaf, level) : leaf));
        const first = wrapped.find((w) => w instanceof FunctionalTensor) as Tracked | undefined;
        setLevelFrame(level, first?.[scopeSlot], new Set(leaves));
        const result = runAtLevel(level, () => fn(...(unflattenTree(wrapped, spec) as unknown[])));
        if (result instanceof Promise) {
          throw new TypeError('functionalize: fn must be synchronous (it returned a Promise)');
        }
        const out = flattenTree(result);
        const outputs = out.leaves.map((v) => unwrapOutput(v, level));
        // Input mutations are applied once, at the end (PyTorch's `_propagate_functional_input_mutation`).
        wrapped.forEach((w, i) => {
          if (!(w instanceof FunctionalTensor)) return;
          syncFunctional(w);
          if (w.functionalStorage.mutated) {
            runAsParentOf(level, () => aten('copy_').call(leaves[i], w.value, false));
          }
        });
        return unflattenTree(outputs, out.spec);
      } finally {
        setLevelMode(level, undefined);
        popFunctionalizeLevel(level);
      }
    });
  };
}
