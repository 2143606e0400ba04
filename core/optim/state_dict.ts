/**
 * Optimizer state dicts as PyTorch structures them: `{ state, param_groups }`, the state keyed by parameter
 * index (parameters numbered through the groups in order), each group's hyperparameters with `params` as
 * those indices.
 *
 * Note [Optimizer state dict keys]
 * Keys are PyTorch's snake_case names (`exp_avg`, `momentum_buffer`, `weight_decay`, `initial_lr`): this
 * runtime's camelCase fields map to them one to one (`expAvg` ↔ `exp_avg`), so a state dict from PyTorch
 * (its tensors loaded from safetensors, its numbers from JSON) loads here and the other way. PyTorch 1.13
 * keeps `step` as a 0-d tensor; loading accepts that or a number, and `stateDict()` gives a number.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { ValueError } from '../dispatch/errors.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';
import { keep } from '../tensor/lifetime.ts';
import { Tensor } from '../tensor/tensor.ts';
import type { ParamState } from './optimizer.ts';

/** An optimizer's state as PyTorch's `Optimizer.state_dict()` structures it. */
export interface OptimizerStateDict {
  /** Per parameter index: its state (tensors and numbers) under PyTorch's names. */
  state: Record<number, Record<string, Tensor | number>>;
  /** Per group: its hyperparameters under PyTorch's names, and `params`, its parameters' indices. */
  param_groups: Array<Record<string, unknown> & { params: number[] }>;
}

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camelCase = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

const copyPlain = (v: unknown): unknown => Array.isArray(v) ? v.map(copyPlain) : v;

/** What the functions below need of an optimizer. */
export interface StatefulOptimizer {
  readonly defaults: object;
  readonly paramGroups: ReadonlyArray<Record<string, unknown> & { params: Tensor[] }>;
  readonly state: Map<Tensor, ParamState>;
}

/**
 * The state dict of `optimizer` (Note [Optimizer state dict keys]). Its tensors are the optimizer's own: read
 * or save them, do not dispose them.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SGD } from './mod.ts';
 * const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
 * new SGD([p], 0.1).stateDict().param_groups[0].params; // [0]
 * ```
 */
export function optimizerStateDict(optimizer: StatefulOptimizer): OptimizerStateDict {
  const index = new Map<Tensor, number>();
  let next = 0;
  const groups = optimizer.paramGroups.map((group) => {
    const packed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(group)) {
      if (key !== 'params' && value !== undefined) packed[snakeCase(key)] = copyPlain(value);
    }
    packed.params = group.params.map((p) => {
      if (!index.has(p)) index.set(p, next++);
      return index.get(p)!;
    });
    return packed as Record<string, unknown> & { params: number[] };
  });
  const state: Record<number, Record<string, Tensor | number>> = {};
  for (const [param, s] of optimizer.state) {
    const i = index.get(param);
    if (i === undefined) continue;
    const packed: Record<string, Tensor | number> = {};
    for (const [key, value] of Object.entries(s)) if (value !== undefined) packed[snakeCase(key)] = value;
    state[i] = packed;
  }
  return { state, param_groups: groups };
}

/**
 * Loads `stateDict` into `optimizer` as PyTorch's `load_state_dict` does: the groups must match in number
 * and sizes; each group takes the saved hyperparameters (its parameters stay its own); state tensors are
 * copied, cast to their parameter's dtype (floating point) and device; the old state is freed.
 * `validate(group)` checks each new group before anything changes.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SGD } from './mod.ts';
 * const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
 * const a = new SGD([p], 0.1), b = new SGD([p], 0.5);
 * b.loadStateDict(a.stateDict()); // b's lr is 0.1
 * ```
 */
export function loadOptimizerStateDict(
  optimizer: StatefulOptimizer,
  stateDict: unknown,
  validate: (group: Record<string, unknown> & { params: Tensor[] }) => void,
): void {
  const name = optimizer.constructor.name;
  if (!isOptions(stateDict)) {
    throw new TypeError(`${name}.loadStateDict(): expected a state dict, got ${pyTypeName(stateDict)}`);
  }
  const savedGroups = stateDict.param_groups;
  const savedState = stateDict.state ?? {};
  if (!Array.isArray(savedGroups) || !savedGroups.every(isOptions)) {
    throw new TypeError(`${name}.loadStateDict(): 'param_groups' must be a list of dicts`);
  }
  if (!isOptions(savedState) && !(savedState instanceof Map)) {
    throw new TypeError(`${name}.loadStateDict(): 'state' must be a dict`);
  }
  const groups = optimizer.paramGroups;
  if (groups.length !== savedGroups.length) {
    throw new ValueError('loaded state dict has a different number of parameter groups');
  }
  const byIndex = new Map<number, Tensor>();
  groups.forEach((group, g) => {
    const saved = savedGroups[g] as Record<string, unknown>;
    const indices = saved.params;
    if (!Array.isArray(indices) || indices.length !== group.params.length) {
      throw new ValueError(
        "loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
      );
    }
    indices.forEach((index, i) => {
      if (typeof index !== 'number' || !Number.isInteger(index)) {
        throw new TypeError(`${name}.loadStateDict(): parameter indices must be int, got ${pyTypeName(index)}`);
      }
      byIndex.set(index, group.params[i]);
    });
  });
  const newGroups = groups.map((group, g) => {
    // Options the saved group lacks (saved by an older version) take the optimizer's defaults.
    const merged: Record<string, unknown> = { ...optimizer.defaults };
    for (const [key, value] of Object.entries(savedGroups[g] as Record<string, unknown>)) {
      if (key !== 'params') merged[camelCase(key)] = copyPlain(value);
    }
    merged.params = group.params;
    validate(merged as Record<string, unknown> & { params: Tensor[] });
    return merged;
  });
  const entries: Array<[unknown, unknown]> = savedState instanceof Map ? [...savedState] : Object.entries(savedState);
  for (const [key, value] of entries) {
    if (!byIndex.has(Number(key))) {
      throw new ValueError(`${name}.loadStateDict(): state for parameter ${String(key)}, which no group holds`);
    }
    if (!isOptions(value)) {
      throw new TypeError(`${name}.loadStateDict(): the state of parameter ${String(key)} must be a dict`);
    }
    for (const [field, v] of Object.entries(value)) {
      if (typeof v === 'number') continue;
      if (!Tensor.isTensor(v)) {
        throw new TypeError(
          `${name}.loadStateDict(): state '${field}' of parameter ${String(key)} must be a Tensor or a number, ` +
            `not ${pyTypeName(v)}`,
        );
      }
      v.assertAlive(`${name}.loadStateDict()`);
      const param = byIndex.get(Number(key))!;
      if (field !== 'step' && (v.shape.length !== param.shape.length || v.shape.some((s, d) => s !== param.shape[d]))) {
        throw new ValueError(
          `${name}.loadStateDict(): state '${field}' of parameter ${String(key)} has shape [${v.shape}], the ` +
            `parameter has shape [${param.shape}]`,
        );
      }
    }
  }
  // Everything is checked: replace the state and the groups.
  const newState = new Map<Tensor, ParamState>();
  noGrad(() => {
    for (const [key, value] of entries) {
      const param = byIndex.get(Number(key))!;
      const s: ParamState = {};
      for (const [field, v] of Object.entries(value as Record<string, Tensor | number>)) {
        if (typeof v === 'number') s[camelCase(field)] = v;
        else if (field === 'step') s.step = Number(v.item());
        else {
          const dtype = param.dtype.isFloatingPoint ? param.dtype : v.dtype;
          const cast = v.to({ dtype, device: param.device });
          s[camelCase(field)] = keep(cast === v ? v.clone() : cast);
        }
      }
      newState.set(param, s);
    }
  });
  for (const s of optimizer.state.values()) {
    for (const v of Object.values(s)) if (v instanceof Tensor) v.dispose();
  }
  optimizer.state.clear();
  for (const [param, s] of newState) optimizer.state.set(param, s);
  groups.forEach((group, g) => {
    const target = group as Record<string, unknown>;
    for (const key of Object.keys(target)) if (key !== 'params') delete target[key];
    Object.assign(target, newGroups[g], { params: group.params });
  });
}
