/**
 * Learning-rate schedulers (`torch.optim.lr_scheduler`, PyTorch 1.13): `StepLR`, `MultiStepLR`,
 * `ExponentialLR`, `CosineAnnealingLR`, `LambdaLR`, `OneCycleLR` and `ReduceLROnPlateau`. A scheduler sets
 * `lr` in its optimizer's parameter groups; call `step()` once per epoch (or per batch for `OneCycleLR`),
 * after `optimizer.step()`.
 *
 * Note [Scheduler recursions]
 * PyTorch computes most schedules recursively from the group's current `lr` (the "chainable form": StepLR
 * multiplies by gamma at each multiple of `step_size`), so that two schedulers may act on one optimizer and a
 * changed `lr` carries on. `step(epoch)` with an explicit epoch uses the closed form from `base_lrs` instead,
 * where PyTorch has one. Both are followed here operation for operation, so that the float64 sequences equal
 * PyTorch's, rounding included.
 *
 * Note [Scheduler state dicts]
 * `stateDict()` gives what PyTorch's `state_dict()` holds (everything but the optimizer), under PyTorch's
 * snake_case keys (`base_lrs`, `last_epoch`, `_step_count`, `_last_lr`, `step_size`), so a state saved from
 * PyTorch (as JSON) loads here and back. Functions (`LambdaLR`'s lambdas) are not saved, as in PyTorch.
 *
 * @module
 */
import { KeyError, ValueError } from '../dispatch/errors.ts';
import { isOptions, pyTypeName } from '../ops/arg_names.ts';
import { Tensor } from '../tensor/tensor.ts';
import { Optimizer } from './optimizer.ts';

// deno-lint-ignore no-explicit-any
/** Any optimizer, whatever its options and state (what a scheduler drives). */
export type AnyOptimizer = Optimizer<any, any>;
/** A parameter group as a scheduler sees it: its options, `lr` among them. */
export type Group = Record<string, unknown> & { lr: number };

/** A scheduler's state as PyTorch's `state_dict()` structures it (Note [Scheduler state dicts]). */
export type SchedulerStateDict = Record<string, unknown>;

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camelCase = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function checkOptimizer(optimizer: unknown): AnyOptimizer {
  if (!(optimizer instanceof Optimizer)) throw new TypeError(`${pyTypeName(optimizer)} is not an Optimizer`);
  return optimizer;
}

function checkOptions(name: string, options: unknown, kinds: Record<string, 'number' | 'boolean' | 'string'>) {
  if (options === undefined) return {} as Record<string, unknown>;
  if (!isOptions(options)) throw new TypeError(`${name}(): expected an options object, got ${pyTypeName(options)}`);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const kind = kinds[key];
    if (kind === undefined) throw new TypeError(`${name}() got an unexpected keyword argument '${key}'`);
    if (key === 'minLr' && Array.isArray(value)) continue;
    if (!fitsKind(value, kind)) {
      const expected = kind === 'number' ? 'float' : kind === 'boolean' ? 'bool' : 'str';
      throw new TypeError(`${name}(): argument '${key}' must be ${expected}, not ${pyTypeName(value)}`);
    }
  }
  return options as Record<string, unknown>;
}

function fitsKind(value: unknown, kind: 'number' | 'boolean' | 'string'): boolean {
  switch (kind) {
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
  }
}

function checkNumber(name: string, arg: string, value: unknown, integer = false): number {
  if (typeof value !== 'number' || (integer && !Number.isInteger(value))) {
    throw new TypeError(`${name}(): argument '${arg}' must be ${integer ? 'int' : 'float'}, not ${pyTypeName(value)}`);
  }
  return value;
}

/** Copies of arrays and plain objects, so a state dict does not alias the scheduler. */
function copyValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copyValue);
  if (isOptions(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyValue(x)]));
  return v;
}

/**
 * Saves the own, non-function properties of `target` but the optimizer under snake_case keys, plus
 * `extra`; `load` does the reverse (Note [Scheduler state dicts]).
 */
function saveState(target: object, extra: SchedulerStateDict): SchedulerStateDict {
  const out: SchedulerStateDict = {};
  for (const [key, value] of Object.entries(target)) {
    if (key !== 'optimizer' && typeof value !== 'function') out[snakeCase(key)] = copyValue(value);
  }
  return { ...out, ...copyValue(extra) as SchedulerStateDict };
}

// PyTorch's internal keys that mean nothing here.
const IGNORED_KEYS = new Set(['verbose', '_get_lr_called_within_step', 'is_better', 'anneal_func']);

function loadState(
  target: object,
  name: string,
  state: unknown,
  special: Record<string, (value: unknown) => void>,
): void {
  if (!isOptions(state)) {
    throw new TypeError(`${name}.loadStateDict(): expected a state dict, got ${pyTypeName(state)}`);
  }
  for (const [key, value] of Object.entries(state)) {
    if (IGNORED_KEYS.has(key)) continue;
    if (Object.hasOwn(special, key)) {
      special[key](copyValue(value));
      continue;
    }
    const field = camelCase(key);
    if (snakeCase(field) !== key || !Object.hasOwn(target, field) || field === 'optimizer') {
      throw new KeyError(`${name}.loadStateDict(): unexpected key '${key}' in the state dict`);
    }
    (target as Record<string, unknown>)[field] = copyValue(value);
  }
}

/**
 * The base of epoch-driven schedulers (`torch.optim.lr_scheduler._LRScheduler`). Construction records each
 * group's `initialLr` (PyTorch's `initial_lr`) and takes the first step, which sets the epoch-0 rates.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SGD, StepLR } from './mod.ts';
 * const p = tensor([1], { dtype: 'float32' }).requiresGrad_();
 * const scheduler = new StepLR(new SGD([p], 0.1), 2);
 * scheduler.step(); // per epoch, after optimizer.step()
 * scheduler.getLastLr(); // [0.1]
 * ```
 */
export abstract class LRScheduler {
  /** The optimizer whose groups' `lr` this scheduler sets. */
  readonly optimizer: AnyOptimizer;
  /** Each group's `initialLr`. */
  baseLrs: number[];
  /** The epoch of the last `step()` (-1 before the first). */
  lastEpoch: number;
  #stepCount = 0;
  #lastLr: number[] = [];

  /** A scheduler of `optimizer`; `lastEpoch` other than -1 resumes (groups must have `initialLr`). */
  constructor(optimizer: AnyOptimizer, lastEpoch = -1) {
    this.optimizer = checkOptimizer(optimizer);
    checkNumber(this.constructor.name, 'lastEpoch', lastEpoch, true);
    const groups = this.groups();
    if (lastEpoch === -1) {
      for (const group of groups) if (group.initialLr === undefined) group.initialLr = group.lr;
    } else {
      groups.forEach((group, i) => {
        if (group.initialLr === undefined) {
          throw new KeyError(`param 'initial_lr' is not specified in param_groups[${i}] when resuming an optimizer`);
        }
      });
    }
    this.baseLrs = groups.map((group) => group.initialLr as number);
    this.lastEpoch = lastEpoch;
  }

  /** Subclasses call this at the end of their constructor (PyTorch's `_initial_step`). */
  protected initialStep(): void {
    this.#stepCount = 0;
    this.step();
  }

  /** The optimizer's groups. */
  protected groups(): Group[] {
    return this.optimizer.paramGroups as unknown as Group[];
  }

  /** How many times `step()` ran (PyTorch's `_step_count`; 1 after construction). */
  protected get stepCount(): number {
    return this.#stepCount;
  }

  /** The rates of the next epoch from the current ones (the chainable form). */
  protected abstract getLr(): number[];

  /** The rates of epoch `lastEpoch` from `baseLrs`, where PyTorch has such a closed form. */
  protected closedFormLr(): number[] | undefined {
    return undefined;
  }

  /** The rates the last `step()` set, one per group. */
  getLastLr(): number[] {
    return [...this.#lastLr];
  }

  /**
   * Advances one epoch and sets each group's `lr`. Passing `epoch` jumps there (deprecated in PyTorch; the
   * closed form is used where there is one).
   */
  step(epoch?: number): void {
    const name = this.constructor.name;
    this.#stepCount++;
    let values: number[];
    if (epoch === undefined) {
      this.lastEpoch++;
      values = this.getLr();
    } else {
      this.lastEpoch = checkNumber(name, 'epoch', epoch, true);
      values = this.closedFormLr() ?? this.getLr();
    }
    const groups = this.groups();
    groups.forEach((group, i) => (group.lr = values[i]));
    this.#lastLr = groups.map((group) => group.lr);
  }

  /** The scheduler's state (Note [Scheduler state dicts]). */
  stateDict(): SchedulerStateDict {
    return saveState(this, { _step_count: this.#stepCount, _last_lr: this.#lastLr });
  }

  /** Restores a state from {@linkcode stateDict} (or PyTorch's `state_dict()`). */
  loadStateDict(state: SchedulerStateDict): void {
    loadState(this, this.constructor.name, state, this.specialKeys());
  }

  /** Keys that `loadStateDict` restores with their own rules. */
  protected specialKeys(): Record<string, (value: unknown) => void> {
    return {
      _step_count: (v) => (this.#stepCount = checkNumber(this.constructor.name, '_step_count', v, true)),
      _last_lr: (v) => (this.#lastLr = v as number[]),
    };
  }
}

/**
 * Multiplies the rate by `gamma` every `stepSize` epochs: `lr = initialLr·gamma^⌊epoch/stepSize⌋`.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { SGD, StepLR } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const scheduler = new StepLR(optimizer, 30, { gamma: 0.1 });
 * // for each epoch: train(); scheduler.step();
 * ```
 */
export class StepLR extends LRScheduler {
  /** The period in epochs. */
  stepSize: number;
  /** The factor (default 0.1). */
  gamma: number;

  /** Decays by `gamma` every `stepSize` epochs. */
  constructor(optimizer: AnyOptimizer, stepSize: number, options: { gamma?: number; lastEpoch?: number } = {}) {
    const o = checkOptions('StepLR', options, { gamma: 'number', lastEpoch: 'number' });
    super(optimizer, (o.lastEpoch as number | undefined) ?? -1);
    this.stepSize = checkNumber('StepLR', 'stepSize', stepSize, true);
    if (stepSize <= 0) throw new ValueError(`StepLR(): step_size must be a positive integer, got ${stepSize}`);
    this.gamma = (o.gamma as number | undefined) ?? 0.1;
    this.initialStep();
  }

  /** PyTorch's chainable form. */
  protected getLr(): number[] {
    const groups = this.groups();
    if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * this.gamma);
  }

  /** `base_lr * gamma ** (last_epoch // step_size)`. */
  protected override closedFormLr(): number[] {
    return this.baseLrs.map((base) => base * this.gamma ** Math.floor(this.lastEpoch / this.stepSize));
  }
}

/**
 * Multiplies the rate by `gamma` at each milestone epoch (a milestone listed twice multiplies twice).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { MultiStepLR, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const scheduler = new MultiStepLR(optimizer, [30, 80], { gamma: 0.1 });
 * ```
 */
export class MultiStepLR extends LRScheduler {
  /** Milestone epoch → how many times it was listed (PyTorch's `Counter`). */
  milestones: Record<string, number>;
  /** The factor (default 0.1). */
  gamma: number;

  /** Decays by `gamma` at each of `milestones`. */
  constructor(
    optimizer: AnyOptimizer,
    milestones: Iterable<number>,
    options: { gamma?: number; lastEpoch?: number } = {},
  ) {
    const o = checkOptions('MultiStepLR', options, { gamma: 'number', lastEpoch: 'number' });
    super(optimizer, (o.lastEpoch as number | undefined) ?? -1);
    if (milestones === null || typeof (milestones as Iterable<number>)[Symbol.iterator] !== 'function') {
      throw new TypeError(`MultiStepLR(): argument 'milestones' must be a list of ints, not ${pyTypeName(milestones)}`);
    }
    this.milestones = {};
    for (const m of milestones) {
      checkNumber('MultiStepLR', 'milestones', m, true);
      this.milestones[m] = (this.milestones[m] ?? 0) + 1;
    }
    this.gamma = (o.gamma as number | undefined) ?? 0.1;
    this.initialStep();
  }

  /** PyTorch's chainable form. */
  protected getLr(): number[] {
    const groups = this.groups();
    const count = this.milestones[this.lastEpoch];
    if (count === undefined) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * this.gamma ** count);
  }

  /** `base_lr * gamma ** bisect_right(milestones, last_epoch)`. */
  protected override closedFormLr(): number[] {
    let passed = 0;
    for (const [m, count] of Object.entries(this.milestones)) if (Number(m) <= this.lastEpoch) passed += count;
    return this.baseLrs.map((base) => base * this.gamma ** passed);
  }
}

/**
 * Multiplies the rate by `gamma` every epoch.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { ExponentialLR, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const scheduler = new ExponentialLR(optimizer, 0.9);
 * ```
 */
export class ExponentialLR extends LRScheduler {
  /** The factor per epoch. */
  gamma: number;

  /** Decays by `gamma` each epoch. */
  constructor(optimizer: AnyOptimizer, gamma: number, options: { lastEpoch?: number } = {}) {
    const o = checkOptions('ExponentialLR', options, { lastEpoch: 'number' });
    super(optimizer, (o.lastEpoch as number | undefined) ?? -1);
    this.gamma = checkNumber('ExponentialLR', 'gamma', gamma);
    this.initialStep();
  }

  /** PyTorch's chainable form. */
  protected getLr(): number[] {
    const groups = this.groups();
    if (this.lastEpoch === 0) return groups.map((g) => g.lr);
    return groups.map((g) => g.lr * this.gamma);
  }

  /** `base_lr * gamma ** last_epoch`. */
  protected override closedFormLr(): number[] {
    return this.baseLrs.map((base) => base * this.gamma ** this.lastEpoch);
  }
}

/**
 * Cosine annealing from `initialLr` down to `etaMin` over `tMax` epochs (and back up over the next `tMax`,
 * as PyTorch's recursion does; SGDR restarts are `CosineAnnealingWarmRestarts`, not provided).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { CosineAnnealingLR, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const scheduler = new CosineAnnealingLR(optimizer, 100, { etaMin: 1e-4 });
 * ```
 */
export class CosineAnnealingLR extends LRScheduler {
  /** Half period in epochs (PyTorch's `T_max`). */
  tMax: number;
  /** The lowest rate (default 0). */
  etaMin: number;

  /** Anneals over `tMax` epochs. */
  constructor(optimizer: AnyOptimizer, tMax: number, options: { etaMin?: number; lastEpoch?: number } = {}) {
    const o = checkOptions('CosineAnnealingLR', options, { etaMin: 'number', lastEpoch: 'number' });
    super(optimizer, (o.lastEpoch as number | undefined) ?? -1);
    this.tMax = checkNumber('CosineAnnealingLR', 'tMax', tMax);
    if (tMax <= 0) throw new ValueError(`CosineAnnealingLR(): T_max must be positive, got ${tMax}`);
    this.etaMin = (o.etaMin as number | undefined) ?? 0;
    this.initialStep();
  }

  /** PyTorch's recursion (Note [Scheduler recursions]). */
  protected getLr(): number[] {
    const { lastEpoch: e, tMax: t, etaMin } = this;
    const groups = this.groups();
    if (e === 0) return groups.map((g) => g.lr);
    if (this.stepCount === 1 && e > 0) {
      return this.baseLrs.map((base) => etaMin + (base - etaMin) * (1 + Math.cos((e * Math.PI) / t)) / 2);
    }
    if ((e - 1 - t) % (2 * t) === 0) {
      return groups.map((g, i) => g.lr + (this.baseLrs[i] - etaMin) * (1 - Math.cos(Math.PI / t)) / 2);
    }
    return groups.map((g) =>
      (1 + Math.cos((Math.PI * e) / t)) / (1 + Math.cos((Math.PI * (e - 1)) / t)) * (g.lr - etaMin) + etaMin
    );
  }

  /** `eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2`. */
  protected override closedFormLr(): number[] {
    return this.baseLrs.map((base) =>
      this.etaMin + (base - this.etaMin) * (1 + Math.cos((Math.PI * this.lastEpoch) / this.tMax)) / 2
    );
  }
}

/**
 * The rate of each group is `initialLr · lrLambda(epoch)` (one function for all groups, or one per group).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { LambdaLR, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const warmup = new LambdaLR(optimizer, (epoch) => Math.min(1, (epoch + 1) / 5));
 * ```
 */
export class LambdaLR extends LRScheduler {
  readonly #lambdas: Array<(epoch: number) => number>;

  /** Scales `initialLr` by `lrLambda(epoch)`. */
  constructor(
    optimizer: AnyOptimizer,
    lrLambda: ((epoch: number) => number) | ReadonlyArray<(epoch: number) => number>,
    options: { lastEpoch?: number } = {},
  ) {
    const o = checkOptions('LambdaLR', options, { lastEpoch: 'number' });
    const groups = checkOptimizer(optimizer).paramGroups.length;
    let lambdas: Array<(epoch: number) => number>;
    if (Array.isArray(lrLambda)) {
      if (lrLambda.length !== groups) throw new ValueError(`Expected ${groups} lr_lambdas, but got ${lrLambda.length}`);
      lambdas = [...lrLambda];
    } else {
      lambdas = new Array(groups).fill(lrLambda);
    }
    for (const fn of lambdas) {
      if (typeof fn !== 'function') {
        throw new TypeError(`LambdaLR(): lr_lambda should be a function, but got ${pyTypeName(fn)}`);
      }
    }
    super(optimizer, (o.lastEpoch as number | undefined) ?? -1);
    this.#lambdas = lambdas;
    this.initialStep();
  }

  /** `base_lr * lmbda(last_epoch)`. */
  protected getLr(): number[] {
    return this.baseLrs.map((base, i) => {
      const factor = this.#lambdas[i](this.lastEpoch);
      if (typeof factor !== 'number') {
        throw new TypeError(`LambdaLR: lr_lambda must return a number, got ${pyTypeName(factor)}`);
      }
      return base * factor;
    });
  }

  /** PyTorch saves `lr_lambdas` as one `null` per function (functions are not saved). */
  override stateDict(): SchedulerStateDict {
    return { ...super.stateDict(), lr_lambdas: this.#lambdas.map(() => null) };
  }

  /** Restores the state; the functions stay the constructor's. */
  protected override specialKeys(): Record<string, (value: unknown) => void> {
    return { ...super.specialKeys(), lr_lambdas: () => {} };
  }
}

/** Options of {@linkcode OneCycleLR}. */
export interface OneCycleLROptions {
  /** Steps in the cycle; or give `epochs` and `stepsPerEpoch`. */
  totalSteps?: number;
  /** Epochs (with `stepsPerEpoch`). */
  epochs?: number;
  /** Steps per epoch (with `epochs`). */
  stepsPerEpoch?: number;
  /** Share of the cycle spent increasing the rate (default 0.3). */
  pctStart?: number;
  /** `'cos'` (default) or `'linear'`. */
  annealStrategy?: 'cos' | 'linear';
  /** Cycle momentum (or Adam's β1) inversely to the rate (default true). */
  cycleMomentum?: boolean;
  /** Lowest momentum (default 0.85). */
  baseMomentum?: number;
  /** Highest momentum (default 0.95). */
  maxMomentum?: number;
  /** `initialLr = maxLr / divFactor` (default 25). */
  divFactor?: number;
  /** `minLr = initialLr / finalDivFactor` (default 1e4). */
  finalDivFactor?: number;
  /** Three phases (up, down to initialLr, then to minLr) instead of two (default false). */
  threePhase?: boolean;
  /** The last step taken, to resume (default -1). */
  lastEpoch?: number;
}

/** One phase of a OneCycleLR schedule: where it ends and which option values it anneals between. */
export type Phase = { endStep: number; startLr: string; endLr: string; startMomentum: string; endMomentum: string };

function perGroup(name: string, optimizer: AnyOptimizer, value: unknown): number[] {
  const n = optimizer.paramGroups.length;
  if (Array.isArray(value)) {
    if (value.length !== n) throw new ValueError(`expected ${n} values for ${name}, got ${value.length}`);
    return value.map((v) => checkNumber('OneCycleLR', name, v));
  }
  return new Array(n).fill(checkNumber('OneCycleLR', name, value));
}

/**
 * The 1cycle policy (Smith & Topin): the rate rises from `maxLr/divFactor` to `maxLr` over `pctStart` of the
 * steps, then anneals to `initialLr/finalDivFactor`, while momentum moves the other way. Step it per batch.
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { OneCycleLR, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1, { momentum: 0.9 });
 * const scheduler = new OneCycleLR(optimizer, 0.1, { epochs: 10, stepsPerEpoch: 100 });
 * ```
 */
export class OneCycleLR extends LRScheduler {
  /** Steps in the cycle. */
  totalSteps: number;
  /** `'cos'` or `'linear'`. */
  annealStrategy: 'cos' | 'linear';
  /** Whether momentum cycles. */
  cycleMomentum: boolean;
  /** Whether the momentum is Adam's β1 (`betas[0]`). */
  useBeta1: boolean;
  /** The phases (PyTorch's `_schedule_phases`, with camelCase group keys). */
  schedulePhases: Phase[];

  /** A one-cycle schedule peaking at `maxLr` (one for all groups or one per group). */
  constructor(optimizer: AnyOptimizer, maxLr: number | readonly number[], options: OneCycleLROptions = {}) {
    const o = checkOptions('OneCycleLR', options, {
      totalSteps: 'number',
      epochs: 'number',
      stepsPerEpoch: 'number',
      pctStart: 'number',
      annealStrategy: 'string',
      cycleMomentum: 'boolean',
      baseMomentum: 'number',
      maxMomentum: 'number',
      divFactor: 'number',
      finalDivFactor: 'number',
      threePhase: 'boolean',
      lastEpoch: 'number',
    }) as OneCycleLROptions;
    checkOptimizer(optimizer);
    let totalSteps: number;
    if (o.totalSteps === undefined && o.epochs === undefined && o.stepsPerEpoch === undefined) {
      throw new ValueError('You must define either total_steps OR (epochs AND steps_per_epoch)');
    } else if (o.totalSteps !== undefined) {
      if (o.totalSteps <= 0 || !Number.isInteger(o.totalSteps)) {
        throw new ValueError(`Expected positive integer total_steps, but got ${o.totalSteps}`);
      }
      totalSteps = o.totalSteps;
    } else {
      if (o.epochs === undefined || o.epochs <= 0 || !Number.isInteger(o.epochs)) {
        throw new ValueError(`Expected positive integer epochs, but got ${o.epochs ?? 'None'}`);
      }
      if (o.stepsPerEpoch === undefined || o.stepsPerEpoch <= 0 || !Number.isInteger(o.stepsPerEpoch)) {
        throw new ValueError(`Expected positive integer steps_per_epoch, but got ${o.stepsPerEpoch ?? 'None'}`);
      }
      totalSteps = o.epochs * o.stepsPerEpoch;
    }
    const pctStart = o.pctStart ?? 0.3;
    const phases: Phase[] = o.threePhase
      ? [
        { endStep: pctStart * totalSteps - 1, startLr: 'initialLr', endLr: 'maxLr', ...MOMENTUM_DOWN },
        { endStep: 2 * pctStart * totalSteps - 2, startLr: 'maxLr', endLr: 'initialLr', ...MOMENTUM_UP },
        {
          endStep: totalSteps - 1,
          startLr: 'initialLr',
          endLr: 'minLr',
          startMomentum: 'maxMomentum',
          endMomentum: 'maxMomentum',
        },
      ]
      : [
        { endStep: pctStart * totalSteps - 1, startLr: 'initialLr', endLr: 'maxLr', ...MOMENTUM_DOWN },
        { endStep: totalSteps - 1, startLr: 'maxLr', endLr: 'minLr', ...MOMENTUM_UP },
      ];
    if (pctStart < 0 || pctStart > 1) {
      throw new ValueError(`Expected float between 0 and 1 pct_start, but got ${pctStart}`);
    }
    const anneal = o.annealStrategy ?? 'cos';
    if (anneal !== 'cos' && anneal !== 'linear') {
      throw new ValueError(`anneal_strategy must by one of 'cos' or 'linear', instead got ${anneal}`);
    }
    const lastEpoch = o.lastEpoch ?? -1;
    const groups = optimizer.paramGroups as unknown as Group[];
    const maxLrs = perGroup('max_lr', optimizer, maxLr);
    const divFactor = o.divFactor ?? 25, finalDivFactor = o.finalDivFactor ?? 1e4;
    if (lastEpoch === -1) {
      groups.forEach((group, i) => {
        group.initialLr = maxLrs[i] / divFactor;
        group.maxLr = maxLrs[i];
        group.minLr = (group.initialLr as number) / finalDivFactor;
      });
    }
    const cycleMomentum = o.cycleMomentum ?? true;
    let useBeta1 = false;
    if (cycleMomentum) {
      const defaults = optimizer.defaults as Record<string, unknown>;
      if (!('momentum' in defaults) && !('betas' in defaults)) {
        throw new ValueError('optimizer must support momentum with `cycle_momentum` option enabled');
      }
      useBeta1 = 'betas' in defaults;
      const maxMomentums = perGroup('max_momentum', optimizer, o.maxMomentum ?? 0.95);
      const baseMomentums = perGroup('base_momentum', optimizer, o.baseMomentum ?? 0.85);
      if (lastEpoch === -1) {
        groups.forEach((group, i) => {
          setMomentum(group, useBeta1, maxMomentums[i]);
          group.maxMomentum = maxMomentums[i];
          group.baseMomentum = baseMomentums[i];
        });
      }
    }
    super(optimizer, lastEpoch);
    this.totalSteps = totalSteps;
    this.schedulePhases = phases;
    this.annealStrategy = anneal;
    this.cycleMomentum = cycleMomentum;
    this.useBeta1 = useBeta1;
    this.initialStep();
  }

  /** The state, with the phases as PyTorch writes them (`end_step`, `start_lr: 'initial_lr'`, ...). */
  override stateDict(): SchedulerStateDict {
    const state = super.stateDict();
    state.schedule_phases = this.schedulePhases.map((phase) =>
      Object.fromEntries(
        Object.entries(phase).map(([k, v]) => [snakeCase(k), typeof v === 'string' ? snakeCase(v) : v]),
      )
    );
    return state;
  }

  /** Restores phases written by {@linkcode stateDict} or by PyTorch. */
  protected override specialKeys(): Record<string, (value: unknown) => void> {
    return {
      ...super.specialKeys(),
      schedule_phases: (value) => {
        if (!Array.isArray(value) || !value.every(isOptions)) {
          throw new TypeError('OneCycleLR.loadStateDict(): schedule_phases must be a list of dicts');
        }
        this.schedulePhases = value.map((phase) =>
          Object.fromEntries(
            Object.entries(phase).map(([k, v]) => [camelCase(k), typeof v === 'string' ? camelCase(v) : v]),
          ) as Phase
        );
      },
    };
  }

  #anneal(start: number, end: number, pct: number): number {
    if (this.annealStrategy === 'linear') return (end - start) * pct + start;
    const cosOut = Math.cos(Math.PI * pct) + 1;
    return end + (start - end) / 2 * cosOut;
  }

  /** PyTorch's phase interpolation at step `lastEpoch`. */
  protected getLr(): number[] {
    const stepNum = this.lastEpoch;
    if (stepNum > this.totalSteps) {
      throw new ValueError(
        `Tried to step ${stepNum} times. The specified number of total steps is ${this.totalSteps}`,
      );
    }
    return this.groups().map((group) => {
      let startStep = 0;
      let lr = 0;
      const phases = this.schedulePhases;
      for (let i = 0; i < phases.length; i++) {
        const phase = phases[i];
        if (stepNum <= phase.endStep || i === phases.length - 1) {
          const pct = (stepNum - startStep) / (phase.endStep - startStep);
          lr = this.#anneal(group[phase.startLr] as number, group[phase.endLr] as number, pct);
          if (this.cycleMomentum) {
            const momentum = this.#anneal(
              group[phase.startMomentum] as number,
              group[phase.endMomentum] as number,
              pct,
            );
            setMomentum(group, this.useBeta1, momentum);
          }
          break;
        }
        startStep = phase.endStep;
      }
      return lr;
    });
  }
}

const MOMENTUM_DOWN = { startMomentum: 'maxMomentum', endMomentum: 'baseMomentum' };
const MOMENTUM_UP = { startMomentum: 'baseMomentum', endMomentum: 'maxMomentum' };

function setMomentum(group: Group, useBeta1: boolean, momentum: number): void {
  if (useBeta1) {
    const betas = group.betas as readonly number[];
    group.betas = [momentum, ...betas.slice(1)];
  } else {
    group.momentum = momentum;
  }
}

/** Options of {@linkcode ReduceLROnPlateau}. */
export interface ReduceLROnPlateauOptions {
  /** `'min'` (default): the metric should fall; `'max'`: rise. */
  mode?: 'min' | 'max';
  /** Multiplies the rate when reducing (default 0.1; must be < 1). */
  factor?: number;
  /** Epochs without improvement tolerated before reducing (default 10). */
  patience?: number;
  /** The least change that counts as an improvement (default 1e-4). */
  threshold?: number;
  /** `'rel'` (default): relative to the best; `'abs'`: absolute. */
  thresholdMode?: 'rel' | 'abs';
  /** Epochs to wait after a reduction (default 0). */
  cooldown?: number;
  /** Lower bound of the rate: one for all groups or one per group (default 0). */
  minLr?: number | readonly number[];
  /** A reduction smaller than this is skipped (default 1e-8). */
  eps?: number;
}

/**
 * Reduces the rate by `factor` when a metric has stopped improving for `patience` epochs. `step(metric)`
 * takes the epoch's metric (a number or a one-element tensor).
 *
 * @example
 * ```ts
 * import { tensor } from '../../mod.ts';
 * import { ReduceLROnPlateau, SGD } from './mod.ts';
 * const optimizer = new SGD([tensor([1], { dtype: 'float32' }).requiresGrad_()], 0.1);
 * const scheduler = new ReduceLROnPlateau(optimizer, { patience: 2 });
 * for (const validationLoss of [1, 0.9, 0.95, 0.95, 0.95]) scheduler.step(validationLoss);
 * scheduler.getLastLr(); // [0.01]
 * ```
 */
export class ReduceLROnPlateau {
  /** The optimizer whose groups' `lr` this scheduler lowers. */
  readonly optimizer: AnyOptimizer;
  /** The reduction factor. */
  factor: number;
  /** Per-group lower bounds. */
  minLrs: number[];
  /** Epochs without improvement tolerated. */
  patience: number;
  /** Epochs of cooldown after a reduction. */
  cooldown: number;
  /** Cooldown epochs left. */
  cooldownCounter = 0;
  /** `'min'` or `'max'`. */
  mode: 'min' | 'max';
  /** The improvement threshold. */
  threshold: number;
  /** `'rel'` or `'abs'`. */
  thresholdMode: 'rel' | 'abs';
  /** The best metric seen. */
  best: number;
  /** Epochs since the last improvement. */
  numBadEpochs = 0;
  /** The worst value for the mode (inf or -inf). */
  modeWorse: number;
  /** Least reduction applied. */
  eps: number;
  /** The epoch of the last `step()`. */
  lastEpoch = 0;
  #lastLr: number[];

  /** A plateau detector over `optimizer`. */
  constructor(optimizer: AnyOptimizer, options: ReduceLROnPlateauOptions = {}) {
    const o = checkOptions('ReduceLROnPlateau', options, {
      mode: 'string',
      factor: 'number',
      patience: 'number',
      threshold: 'number',
      thresholdMode: 'string',
      cooldown: 'number',
      minLr: 'number',
      eps: 'number',
    }) as ReduceLROnPlateauOptions;
    this.factor = o.factor ?? 0.1;
    if (this.factor >= 1) throw new ValueError('Factor should be < 1.0.');
    this.optimizer = checkOptimizer(optimizer);
    const n = optimizer.paramGroups.length;
    const minLr = o.minLr ?? 0;
    if (Array.isArray(minLr)) {
      if (minLr.length !== n) throw new ValueError(`expected ${n} min_lrs, got ${minLr.length}`);
      this.minLrs = minLr.map((v) => checkNumber('ReduceLROnPlateau', 'minLr', v));
    } else {
      this.minLrs = new Array(n).fill(minLr);
    }
    this.patience = o.patience ?? 10;
    this.cooldown = o.cooldown ?? 0;
    this.mode = o.mode ?? 'min';
    this.threshold = o.threshold ?? 1e-4;
    this.thresholdMode = o.thresholdMode ?? 'rel';
    if (this.mode !== 'min' && this.mode !== 'max') throw new ValueError(`mode ${this.mode} is unknown!`);
    if (this.thresholdMode !== 'rel' && this.thresholdMode !== 'abs') {
      throw new ValueError(`threshold mode ${this.thresholdMode} is unknown!`);
    }
    this.modeWorse = this.mode === 'min' ? Infinity : -Infinity;
    this.best = this.modeWorse;
    this.eps = o.eps ?? 1e-8;
    this.#lastLr = optimizer.paramGroups.map((g) => (g as unknown as Group).lr);
  }

  /** Whether `a` improves on `best` by the threshold. */
  isBetter(a: number, best: number): boolean {
    if (this.mode === 'min') {
      return this.thresholdMode === 'rel' ? a < best * (1 - this.threshold) : a < best - this.threshold;
    }
    return this.thresholdMode === 'rel' ? a > best * (this.threshold + 1) : a > best + this.threshold;
  }

  /** Whether a reduction's cooldown is running. */
  get inCooldown(): boolean {
    return this.cooldownCounter > 0;
  }

  /** Records the epoch's `metrics` and reduces the rates after `patience` epochs without improvement. */
  step(metrics: number | Tensor): void {
    let current: number;
    if (typeof metrics === 'number') current = metrics;
    else if (Tensor.isTensor(metrics) && metrics.numel === 1) current = Number(metrics.item());
    else {
      throw new TypeError(
        `ReduceLROnPlateau.step(): argument 'metrics' must be a number or a one-element Tensor, not ${
          pyTypeName(metrics)
        }`,
      );
    }
    this.lastEpoch++;
    if (this.isBetter(current, this.best)) {
      this.best = current;
      this.numBadEpochs = 0;
    } else {
      this.numBadEpochs++;
    }
    if (this.inCooldown) {
      this.cooldownCounter--;
      this.numBadEpochs = 0;
    }
    const groups = this.optimizer.paramGroups as unknown as Group[];
    if (this.numBadEpochs > this.patience) {
      groups.forEach((group, i) => {
        const oldLr = group.lr;
        const newLr = Math.max(oldLr * this.factor, this.minLrs[i]);
        if (oldLr - newLr > this.eps) group.lr = newLr;
      });
      this.cooldownCounter = this.cooldown;
      this.numBadEpochs = 0;
    }
    this.#lastLr = groups.map((g) => g.lr);
  }

  /** The rates after the last `step()`. */
  getLastLr(): number[] {
    return [...this.#lastLr];
  }

  /** The state (Note [Scheduler state dicts]). */
  stateDict(): SchedulerStateDict {
    return saveState(this, { _last_lr: this.#lastLr });
  }

  /** Restores a state from {@linkcode stateDict} (or PyTorch's `state_dict()`). */
  loadStateDict(state: SchedulerStateDict): void {
    // JSON has no infinities: a state that went through JSON.stringify holds null for ±inf.
    const infinity = (v: unknown, sign: number) => v === null ? sign * Infinity : v;
    const mode = (state as { mode?: unknown }).mode ?? this.mode;
    const worse = mode === 'max' ? -1 : 1;
    loadState(this, 'ReduceLROnPlateau', state, {
      _last_lr: (v) => (this.#lastLr = v as number[]),
      best: (v) => (this.best = infinity(v, worse) as number),
      mode_worse: (v) => (this.modeWorse = infinity(v, worse) as number),
    });
  }
}
