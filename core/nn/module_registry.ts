/**
 * What a module owns by name (parameters, buffers, child modules), and how assigning to its properties
 * registers them, as PyTorch's `Module.__setattr__`, `__delattr__`, `register_parameter`, `register_buffer`
 * and `add_module` do, with their errors.
 *
 * Note [Attribute registration]
 * PyTorch finds parameters and children through `__setattr__`: `self.fc1 = nn.Linear(4, 8)` registers `fc1`.
 * JavaScript class fields (`fc1 = new Linear(4, 8)`) are defined with [[DefineOwnProperty]], which no
 * prototype setter sees, so `Module`'s constructor returns a Proxy whose `defineProperty` and
 * `deleteProperty` traps run the rules below; assignments (`this.fc1 = ...`, `m.fc1 = null`) reach the same
 * trap. The registration happens at the assignment, in assignment order, and a bad assignment fails there,
 * leaving the module unchanged. Reads have no trap: the value also stays an ordinary own property of the
 * module, so `this.fc1` in `forward` costs one Proxy hop (tens of nanoseconds) and nothing more.
 * The alternative, discovering registrations from own properties when `parameters()` is asked, would report
 * a bad assignment late and could not tell the assignment order of properties from explicit registrations.
 *
 * @module
 */
import { KeyError } from '../dispatch/errors.ts';
import { Tensor } from '../tensor/tensor.ts';
import { isParameter, Parameter } from './parameter.ts';
import { typename } from './typename.ts';

/**
 * The names a module owns, in registration order (PyTorch's `_parameters`, `_buffers`, `_modules`).
 *
 * @example
 * ```ts
 * import { ModuleRegistry } from './module_registry.ts';
 * const registry = new ModuleRegistry({});
 * registry.registerBuffer('steps', null);
 * registry.has('steps'); // true
 * ```
 */
export class ModuleRegistry {
  /** Parameters; `null` registers a name without a tensor (`bias=False`). */
  readonly parameters = new Map<string, Tensor | null>();
  /** Buffers: state saved in `stateDict` but not trained. */
  readonly buffers = new Map<string, Tensor | null>();
  /** Child modules. */
  readonly modules = new Map<string, object | null>();
  // The module object the Proxy wraps: where registered values are also kept as own properties.
  readonly #target: object;

  /** The registry of the module object `target` (before its Proxy wraps it). */
  constructor(target: object) {
    this.#target = target;
  }

  /** `register_parameter`: a leaf tensor becomes a Parameter (PyTorch requires one already). */
  registerParameter(name: unknown, param: unknown): void {
    const key = this.#checkName(name, 'parameter', this.parameters);
    if (param !== null && !isParameter(param)) {
      if (!Tensor.isTensor(param) || !param.isLeaf) {
        throw new TypeError(
          `cannot assign '${typename(param)}' object to parameter '${key}' (torch.nn.Parameter or None required)`,
        );
      }
      new Parameter(param);
    }
    this.parameters.set(key, param as Tensor | null);
    this.#defineOwn(key, param);
  }

  /** `register_buffer`. */
  registerBuffer(name: unknown, tensor: unknown): void {
    const key = this.#checkName(name, 'buffer', this.buffers);
    if (tensor !== null && !Tensor.isTensor(tensor)) {
      throw new TypeError(
        `cannot assign '${typename(tensor)}' object to buffer '${key}' (torch Tensor or None required)`,
      );
    }
    this.buffers.set(key, tensor);
    this.#defineOwn(key, tensor);
  }

  /** `add_module` / `register_module`. */
  registerModule(name: unknown, module: unknown): void {
    if (module !== null && !isModule(module)) throw new TypeError(`${typename(module)} is not a Module subclass`);
    const key = this.#checkName(name, 'module', this.modules);
    this.modules.set(key, module);
    this.#defineOwn(key, module);
  }

  /**
   * `__setattr__` of `value` under `name`, in two steps: checks (throwing PyTorch's TypeError for a wrong
   * kind of value, KeyError for a bad parameter name) and returns the change to make once the property is
   * set: register a Parameter or a Module, update an already registered name, or nothing for a plain property.
   */
  prepareAssign(name: string, value: unknown): () => void {
    if (isParameter(value)) {
      if (name.includes('.')) throw new KeyError(`parameter name can't contain "."`);
      if (name === '') throw new KeyError(`parameter name can't be empty string ""`);
      const target = this.#target;
      if (!Object.hasOwn(target, name) && name in target && !this.parameters.has(name)) {
        throw new KeyError(`attribute '${name}' already exists`);
      }
      return () => {
        this.buffers.delete(name);
        this.modules.delete(name);
        this.parameters.set(name, value);
      };
    }
    if (this.parameters.has(name)) {
      if (value !== null) {
        throw new TypeError(
          `cannot assign '${typename(value)}' as parameter '${name}' (torch.nn.Parameter or None expected)`,
        );
      }
      return () => this.parameters.set(name, null);
    }
    if (isModule(value)) {
      return () => {
        this.parameters.delete(name);
        this.buffers.delete(name);
        this.modules.set(name, value);
      };
    }
    if (this.modules.has(name)) {
      if (value !== null) {
        throw new TypeError(
          `cannot assign '${typename(value)}' as child module '${name}' (torch.nn.Module or None expected)`,
        );
      }
      return () => this.modules.set(name, null);
    }
    if (this.buffers.has(name)) {
      if (value !== null && !Tensor.isTensor(value)) {
        throw new TypeError(`cannot assign '${typename(value)}' as buffer '${name}' (torch.Tensor or None expected)`);
      }
      return () => this.buffers.set(name, value);
    }
    return () => {};
  }

  /** `__delattr__`: forgets a registered name. */
  remove(name: string): void {
    if (!this.parameters.delete(name) && !this.buffers.delete(name)) this.modules.delete(name);
  }

  /** Whether `name` is registered in any of the three kinds. */
  has(name: string): boolean {
    return this.parameters.has(name) || this.buffers.has(name) || this.modules.has(name);
  }

  #checkName(name: unknown, kind: 'parameter' | 'buffer' | 'module', sameKind: Map<string, unknown>): string {
    if (typeof name !== 'string') throw new TypeError(`${kind} name should be a string. Got ${typename(name)}`);
    // add_module checks an existing attribute first; register_parameter and register_buffer last.
    if (kind === 'module') this.#checkUnused(name, sameKind);
    if (name.includes('.')) {
      throw new KeyError(`${kind} name can't contain "."${kind === 'module' ? `, got: ${name}` : ''}`);
    }
    if (name === '') throw new KeyError(`${kind} name can't be empty string ""`);
    if (kind !== 'module') this.#checkUnused(name, sameKind);
    return name;
  }

  // PyTorch's `hasattr(self, name) and name not in <own kind>`. A property that is own and undefined is a
  // declared class field (`readonly weight: Tensor;` defines `weight = undefined` before the constructor body
  // registers it), not an attribute in PyTorch's sense.
  #checkUnused(name: string, sameKind: Map<string, unknown>): void {
    const target = this.#target;
    if (sameKind.has(name) || !(name in target)) return;
    const property = Reflect.getOwnPropertyDescriptor(target, name);
    if (property !== undefined && 'value' in property && property.value === undefined && !this.has(name)) return;
    throw new KeyError(`attribute '${name}' already exists`);
  }

  #defineOwn(name: string, value: unknown): void {
    Reflect.defineProperty(this.#target, name, { value, writable: true, enumerable: true, configurable: true });
  }
}

const registries = new WeakMap<object, ModuleRegistry>();

/**
 * Whether `value` is a module made by `Module`'s constructor (a brand check: registries are keyed by module
 * objects, so `Object.create(Module.prototype)` is not one).
 *
 * @example
 * ```ts
 * import { isModule } from './module_registry.ts';
 * import { ReLU } from './mod.ts';
 * isModule(new ReLU()); // true
 * ```
 */
export function isModule(value: unknown): value is object {
  return typeof value === 'object' && value !== null && registries.has(value);
}

const TRAPS: ProxyHandler<object> = {
  defineProperty(target, key, descriptor) {
    const registry = registries.get(target)!;
    if (typeof key === 'symbol') return Reflect.defineProperty(target, key, descriptor);
    if (!('value' in descriptor)) {
      if ((descriptor.get !== undefined || descriptor.set !== undefined) && registry.has(key)) {
        throw new TypeError(`cannot define an accessor over '${key}', a registered parameter, buffer or module`);
      }
      return Reflect.defineProperty(target, key, descriptor);
    }
    const commit = registry.prepareAssign(key, descriptor.value);
    if (!Reflect.defineProperty(target, key, descriptor)) return false;
    commit();
    return true;
  },
  deleteProperty(target, key) {
    if (!Reflect.deleteProperty(target, key)) return false;
    if (typeof key === 'string') registries.get(target)!.remove(key);
    return true;
  },
};

/**
 * The base class of `Module`. Its constructor wraps the new object in the Proxy of Note [Attribute
 * registration] and returns the Proxy, so that `this` is the Proxy in `Module` and its subclasses: their
 * fields and `#private` fields live on it, and their assignments reach the traps.
 *
 * @example
 * ```ts
 * import { isModule, RegistersAttributes, registryOf } from './module_registry.ts';
 * class Holder extends RegistersAttributes {}
 * const holder = new Holder();
 * isModule(holder) && registryOf(holder)!.parameters.size === 0; // true
 * ```
 */
export abstract class RegistersAttributes {
  /** Returns the Proxy over the new object. */
  constructor() {
    const registry = new ModuleRegistry(this);
    const proxy = new Proxy(this, TRAPS);
    registries.set(this, registry);
    registries.set(proxy, registry);
    return proxy;
  }
}

/**
 * The registry of a module (undefined for anything else).
 *
 * @example
 * ```ts
 * import { registryOf } from './module_registry.ts';
 * import { Linear } from './mod.ts';
 * [...registryOf(new Linear(2, 3))!.parameters.keys()]; // ['weight', 'bias']
 * ```
 */
export function registryOf(module: object): ModuleRegistry | undefined {
  return registries.get(module);
}
