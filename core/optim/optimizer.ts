/**
 * `Optimizer`: the base of the update rules (`torch.optim.Optimizer`). It holds parameter groups (each with
 * its own hyperparameters) and per-parameter state tensors, and runs a subclass's update for every group.
 *
 * Note [Optimizer memory]
 * A step runs inside `scope()` under `noGrad`: every temporary it makes (the weight-decayed gradient, the
 * denominator, ...) is freed when the step ends, and nothing is recorded. State that must outlive the step
 * (momentum buffers, moment estimates) is created with `keepState`, and freed by `dispose()`. So the live
 * tensor count after a step equals the count before it, from the second step on.
 *
 * @module
 */
import { enableGrad, noGrad } from '../autograd/grad_mode.ts';
import { RuntimeError, ValueError } from '../dispatch/errors.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';
import { keep, scope } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import { zeroGradients, type ZeroGradOptions } from '../nn/module.ts';
import { checkOptionTypes, type OptionKinds } from './options.ts';
import { loadOptimizerStateDict, type OptimizerStateDict, optimizerStateDict } from './state_dict.ts';

/** A parameter group as given to a constructor: its parameters and any hyperparameters to override. */
export type ParamGroupInput<O> = { params: Iterable<Tensor> | Tensor } & Partial<O>;

/** A parameter group: its parameters and its hyperparameters (change `lr` here to schedule it). */
export type ParamGroup<O> = O & { params: Tensor[] };

/** What optimizers take: tensors, or parameter groups. */
export type ParamsInput<O> = Iterable<Tensor> | Iterable<ParamGroupInput<O>>;

/** Per-parameter state: tensors (freed with the optimizer) and numbers such as the step count. */
export type ParamState = Record<string, Tensor | number | undefined>;

const isIterable = (v: unknown): v is Iterable<unknown> =>
  typeof v === 'object' && v !== null && !Tensor.isTensor(v) &&
  typeof (v as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';

/**
 * The base class of optimizers. Subclasses define `updateGroup`, which runs under `noGrad` inside a scope.
 *
 * @example
 * ```ts
 * import { SGD } from './mod.ts';
 * import { Linear } from '../nn/mod.ts';
 * const model = new Linear(4, 2);
 * const optimizer = new SGD(model.parameters(), { lr: 0.1 });
 * // loss.backward(); optimizer.step(); optimizer.zeroGrad();
 * optimizer.dispose();
 * model.dispose();
 * ```
 */
export abstract class Optimizer<O extends object, S extends ParamState = ParamState> implements Disposable {
  /** The hyperparameters a group gets when it does not set them. */
  readonly defaults: Readonly<O>;
  /** The parameter groups. */
  readonly paramGroups: Array<ParamGroup<O>> = [];
  /** State per parameter, created on its first update. */
  readonly state: Map<Tensor, S> = new Map();

  /**
   * An optimizer of `params` (tensors or groups) with `defaults` for every group. Raises PyTorch's errors for
   * params that are no iterable of tensors or groups, an empty list, a non-tensor or non-leaf parameter.
   */
  constructor(params: ParamsInput<O>, defaults: O) {
    this.defaults = { ...defaults };
    if (!isIterable(params) || typeof params === 'string') {
      throw new TypeError(
        'params argument given to the optimizer should be an iterable of Tensors or dicts, but got ' +
          pyTypeName(params),
      );
    }
    const list = [...params] as unknown[];
    if (list.length === 0) throw new ValueError('optimizer got an empty parameter list');
    const groups = isOptions(list[0]) ? list : [{ params: list }];
    for (const group of groups) this.addParamGroup(group as ParamGroupInput<O>);
  }

  /** The option names and kinds the optimizer takes (checked in every group). */
  protected abstract optionKinds(): OptionKinds<O>;

  /**
   * Adds a group (hyperparameters default to `defaults`); its parameters must be leaf tensors not in another
   * group.
   */
  addParamGroup(group: ParamGroupInput<O>): void {
    const name = this.constructor.name;
    if (!isOptions(group)) throw new TypeError('param group must be a dict');
    const given = (group as { params?: unknown }).params;
    if (given === undefined) throw new TypeError("parameter group didn't specify its 'params'");
    if (!Tensor.isTensor(given) && !isIterable(given)) {
      throw new TypeError(
        `params argument given to the optimizer should be an iterable of Tensors or dicts, but got ${
          pyTypeName(given)
        }`,
      );
    }
    const params = Tensor.isTensor(given) ? [given] : [...given] as unknown[];
    for (const p of params) {
      if (!Tensor.isTensor(p)) {
        throw new TypeError(`optimizer can only optimize Tensors, but one of the params is ${pyTypeName(p)}`);
      }
      if (p.isDisposed) throw new RuntimeError(`${name}(): a parameter was disposed and cannot be used any more`);
      if (!p.isLeaf) throw new ValueError("can't optimize a non-leaf Tensor");
    }
    if (new Set(params).size !== params.length) {
      console.warn(
        'optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; ' +
          'see github.com/pytorch/pytorch/issues/40967 for more information',
      );
    }
    const seen = new Set(this.paramGroups.flatMap((g) => g.params));
    if (params.some((p) => seen.has(p as Tensor))) {
      throw new ValueError('some parameters appear in more than one parameter group');
    }
    const overrides = { ...group } as Record<string, unknown>;
    delete overrides.params;
    // Groups may carry other keys (as PyTorch's dicts do); the optimizer's own must have the right types.
    checkOptionTypes(name, this.optionKinds(), overrides, true);
    const merged = { ...this.defaults } as Record<string, unknown>;
    for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
    merged.params = params;
    this.validate(merged as ParamGroup<O>);
    this.paramGroups.push(merged as ParamGroup<O>);
  }

  /** Checks a group's hyperparameters (PyTorch's `ValueError` messages). */
  protected validate(_group: ParamGroup<O>): void {}

  /** Updates the parameters of one group from their `.grad` (runs under `noGrad`, inside a scope). */
  protected abstract updateGroup(group: ParamGroup<O>): void;

  /** The state of `param`, created empty on first use. */
  protected stateOf(param: Tensor): S {
    let s = this.state.get(param);
    if (s === undefined) {
      s = {} as S;
      this.state.set(param, s);
    }
    return s;
  }

  /** Marks a tensor made during a step as optimizer state, so it outlives the step; returns it. */
  protected keepState<T extends Tensor>(t: T): T {
    return keep(t);
  }

  /**
   * One update of every parameter that has a gradient. `closure`, when given, re-evaluates the model and
   * returns the loss (run with grad enabled); its result is returned.
   */
  step(closure?: () => Tensor): Tensor | undefined {
    if (closure != null && typeof closure !== 'function') {
      throw new TypeError(`'${pyTypeName(closure)}' object is not callable`);
    }
    const loss = closure == null ? undefined : enableGrad(closure);
    scope(() => {
      using _noGrad = noGrad();
      for (const group of this.paramGroups) this.updateGroup(group);
    });
    return loss;
  }

  /** Resets the gradients of every parameter: drops and disposes them (default), or zeroes them. */
  zeroGrad(options: ZeroGradOptions = {}): void {
    if (!isOptions(options)) {
      throw new TypeError(`zeroGrad(): argument 'options' must be an options object, not ${pyTypeName(options)}`);
    }
    checkOptionTypes('zeroGrad', { setToNone: 'bool' }, options);
    zeroGradients(this.paramGroups.flatMap((g) => g.params), options);
  }

  /**
   * The optimizer's state as PyTorch structures it: `{ state, param_groups }`, state by parameter index,
   * under PyTorch's key names (see core/optim/state_dict.ts). Its tensors are the optimizer's own.
   *
   * @example
   * ```ts
   * import { tensor } from '../../mod.ts';
   * import { Adam } from './mod.ts';
   * const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
   * const adam = new Adam([p], { lr: 0.01 });
   * adam.stateDict().param_groups[0].weight_decay; // 0
   * ```
   */
  stateDict(): OptimizerStateDict {
    return optimizerStateDict(this as unknown as Parameters<typeof optimizerStateDict>[0]);
  }

  /**
   * Loads a state dict (this optimizer's, another's of the same kind, or PyTorch's) as PyTorch's
   * `load_state_dict`: groups must match in number and sizes; state tensors are copied (cast to their
   * parameter's floating dtype and device) and the old state is freed.
   */
  loadStateDict(stateDict: OptimizerStateDict): void {
    const name = this.constructor.name;
    loadOptimizerStateDict(this as unknown as Parameters<typeof optimizerStateDict>[0], stateDict, (group) => {
      checkOptionTypes(name, this.optionKinds(), group, true);
      this.validate(group as unknown as ParamGroup<O>);
    });
  }

  /** Frees the state tensors (the parameters belong to the model). Idempotent. */
  dispose(): void {
    for (const s of this.state.values()) {
      for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
    }
    this.state.clear();
  }

  /** Same as {@linkcode dispose}. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
