/**
 * Module containers (`torch.nn.ModuleList`, `torch.nn.ModuleDict`): hold child modules so that their
 * parameters are registered (listed by `parameters()`, saved by `stateDict()` under `0.weight`,
 * `encoder.weight`, ...), without defining a computation of their own.
 *
 * @module
 */
import { KeyError, NotImplementedError } from '../dispatch/errors.ts';
import { pyTypeName } from '../ops/arg_names.ts';
import { type AnyModule, Module } from './module.ts';
import { isModule } from './module_registry.ts';

// deno-lint-ignore no-explicit-any

function checkModule(what: string, value: unknown): AnyModule {
  if (!isModule(value)) throw new TypeError(`${what}: ${pyTypeName(value)} is not a Module subclass`);
  return value as AnyModule;
}

function missingForward(name: string): never {
  throw new NotImplementedError(`Module [${name}] is missing the required "forward" function`);
}

/**
 * A list of modules, registered under `'0'`, `'1'`, ... in order (renumbered when one is inserted or
 * removed, as PyTorch does). Index it with `at(i)` (negative counts from the end) and iterate it with
 * `for...of`.
 *
 * @example
 * ```ts
 * import { zeros } from '../../mod.ts';
 * import { Linear, ModuleList } from './mod.ts';
 * const layers = new ModuleList([new Linear(4, 4), new Linear(4, 4)]);
 * let x = zeros([1, 4]);
 * for (const layer of layers) x = layer.call(x);
 * layers.namedParameters().map(([name]) => name); // ['0.weight', '0.bias', '1.weight', '1.bias']
 * ```
 */
export class ModuleList<M extends AnyModule = AnyModule> extends Module<never[], never> {
  #items: M[] = [];

  /** A list holding `modules` (default empty). */
  constructor(modules: Iterable<M> = []) {
    super();
    this.extend(modules);
  }

  /** The number of modules. */
  get length(): number {
    return this.#items.length;
  }

  #index(index: number): number {
    if (typeof index !== 'number' || !Number.isInteger(index)) {
      throw new TypeError(`ModuleList indices must be integers, not ${pyTypeName(index)}`);
    }
    const n = this.#items.length;
    if (index < -n || index >= n) throw new RangeError(`index ${index} is out of range`);
    return index < 0 ? index + n : index;
  }

  // Re-registers the children under '0'..'n-1' in list order.
  #renumber(previousLength: number): void {
    for (let i = 0; i < previousLength; i++) delete (this as unknown as Record<string, unknown>)[String(i)];
    this.#items.forEach((m, i) => this.registerModule(String(i), m));
  }

  /** The module at `index` (negative counts from the end); a RangeError outside the list. */
  at(index: number): M {
    return this.#items[this.#index(index)];
  }

  /** Replaces the module at `index`. */
  set(index: number, module: M): void {
    const i = this.#index(index);
    this.#items[i] = checkModule('ModuleList.set()', module) as M;
    this.registerModule(String(i), module);
  }

  /** Adds `module` at the end; returns this list. */
  append(module: M): this {
    checkModule('ModuleList.append()', module);
    this.registerModule(String(this.#items.length), module);
    this.#items.push(module);
    return this;
  }

  /** Appends every module of `modules`; returns this list. */
  extend(modules: Iterable<M>): this {
    const value: unknown = modules;
    if (
      typeof value !== 'object' || value === null ||
      typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function' || isModule(value)
    ) {
      throw new TypeError(`ModuleList.extend should be called with an iterable, but got ${pyTypeName(value)}`);
    }
    for (const m of modules) this.append(m);
    return this;
  }

  /** Inserts `module` before `index` (clamped to the list, as Python's `list.insert`). */
  insert(index: number, module: M): void {
    checkModule('ModuleList.insert()', module);
    if (typeof index !== 'number' || !Number.isInteger(index)) {
      throw new TypeError(`ModuleList indices must be integers, not ${pyTypeName(index)}`);
    }
    const n = this.#items.length;
    const at = index < 0 ? Math.max(0, index + n) : Math.min(index, n);
    this.#items.splice(at, 0, module);
    this.#renumber(n);
  }

  /** Removes and returns the module at `index` (default the last); the rest are renumbered. */
  pop(index = -1): M {
    const i = this.#index(index);
    const n = this.#items.length;
    const [removed] = this.#items.splice(i, 1);
    this.#renumber(n);
    return removed;
  }

  /** A new list of the modules from `start` to `end` (the modules are shared, as PyTorch's slices). */
  slice(start?: number, end?: number): ModuleList<M> {
    return new ModuleList(this.#items.slice(start, end));
  }

  /** The modules in order. */
  [Symbol.iterator](): Iterator<M> {
    return this.#items[Symbol.iterator]();
  }

  /** A ModuleList has no computation: calling it is PyTorch's NotImplementedError. */
  forward(): never {
    return missingForward('ModuleList');
  }
}

/**
 * Modules by name, in insertion order, each registered under its name (so `stateDict()` keys are
 * `name.weight`, ...). Names follow the rules of `registerModule` (no `.`, not empty, not an existing
 * attribute such as `train`).
 *
 * @example
 * ```ts
 * import { Linear, ModuleDict, ReLU } from './mod.ts';
 * const heads = new ModuleDict({ cls: new Linear(8, 3), act: new ReLU() });
 * heads.get('cls'); // the Linear
 * [...heads.keys()]; // ['cls', 'act']
 * ```
 */
export class ModuleDict<M extends AnyModule = AnyModule> extends Module<never[], never> {
  #items = new Map<string, M>();

  /** A dict holding `modules`: an object, a Map, or `[name, module]` pairs (default empty). */
  constructor(modules: Record<string, M> | Iterable<readonly [string, M]> = {}) {
    super();
    this.update(modules);
  }

  /** The number of modules. */
  get length(): number {
    return this.#items.size;
  }

  /** Whether a module is held under `key`. */
  has(key: string): boolean {
    return this.#items.has(key);
  }

  /** The module under `key`; PyTorch's KeyError when there is none. */
  get(key: string): M {
    const m = this.#items.get(key);
    if (m === undefined) throw new KeyError(`'${String(key)}'`);
    return m;
  }

  /** Holds `module` under `key` (replacing any module there); returns this dict. */
  set(key: string, module: M): this {
    checkModule('ModuleDict.set()', module);
    this.registerModule(key, module);
    this.#items.set(key, module);
    return this;
  }

  /** Removes and returns the module under `key` (PyTorch's `pop`); KeyError when there is none. */
  pop(key: string): M {
    const m = this.get(key);
    delete (this as unknown as Record<string, unknown>)[key];
    this.#items.delete(key);
    return m;
  }

  /** Removes every module. */
  clear(): void {
    for (const key of [...this.#items.keys()]) this.pop(key);
  }

  /** Adds (or replaces) the modules of an object, a Map or `[name, module]` pairs, in their order. */
  update(modules: Record<string, M> | Iterable<readonly [string, M]>): this {
    if (typeof modules !== 'object' || modules === null || isModule(modules)) {
      throw new TypeError(
        `ModuleDict.update should be called with an iterable of key/value pairs, but got ${pyTypeName(modules)}`,
      );
    }
    const iterable = typeof (modules as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
    const pairs = iterable ? [...modules as Iterable<unknown>] : Object.entries(modules);
    pairs.forEach((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new TypeError(
          `ModuleDict update sequence element #${i} should be a [key, module] pair, got ${pyTypeName(pair)}`,
        );
      }
    });
    for (const [key, module] of pairs as Array<[string, M]>) this.set(key, module);
    return this;
  }

  /** The names, in order. */
  keys(): IterableIterator<string> {
    return this.#items.keys();
  }

  /** The modules, in order. */
  values(): IterableIterator<M> {
    return this.#items.values();
  }

  /** `[name, module]` pairs, in order (PyTorch's `items()`). */
  entries(): IterableIterator<[string, M]> {
    return this.#items.entries();
  }

  /** The `[name, module]` pairs. */
  [Symbol.iterator](): IterableIterator<[string, M]> {
    return this.#items.entries();
  }

  /** A ModuleDict has no computation: calling it is PyTorch's NotImplementedError. */
  forward(): never {
    return missingForward('ModuleDict');
  }
}
