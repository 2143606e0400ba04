/**
 * `Module`: the base of every layer (`torch.nn.Module`). A module owns parameters (leaf tensors that require
 * grad), buffers (state that is not trained) and child modules, each under a name, and gives them back in
 * registration order, recursively, with dotted names (`0.weight`), as PyTorch does.
 *
 * As in PyTorch, assigning a `Module` or a `Parameter` to a property registers it under the property's name
 * (`fc1 = new Linear(4, 8)` in a class body, `this.scale = new Parameter(t)`, `model.head = null`; see Note
 * [Attribute registration] in module_registry.ts), and `registerParameter` / `registerBuffer` /
 * `registerModule` register explicitly. The registration order is PyTorch's attribute order, which is what
 * `stateDict()` keys and optimizers' parameter lists follow.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import { AttributeError } from '../dispatch/errors.ts';
import { heldTensors, type HoldsTensors } from '../tensor/held_tensors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import type { DeviceLike } from '../tensor/device.ts';
import type { DTypeLike } from '../tensor/dtype.ts';
import { zeros_ } from './init.ts';
import { isModule, type ModuleRegistry, RegistersAttributes, registryOf } from './module_registry.ts';

/** Options of `zeroGrad`. */
export interface ZeroGradOptions {
  /** Drop (and dispose) the gradients instead of filling them with zeros (default true, as PyTorch 2). */
  setToNone?: boolean;
}

/** Options of {@linkcode Module.loadStateDict}. */
export interface LoadStateDictOptions {
  /** Require the keys to match exactly (default true). */
  strict?: boolean;
}

/** What {@linkcode Module.loadStateDict} did not match (with `strict: false`). */
export interface IncompatibleKeys {
  /** Keys the module has that the state lacks. */
  missingKeys: string[];
  /** Keys the state has that the module lacks. */
  unexpectedKeys: string[];
}

/**
 * Resets the gradients of `params`: disposes and drops them (`setToNone`, the default), or fills them with
 * zeros in place. Shared by `Module.zeroGrad` and `Optimizer.zeroGrad`.
 *
 * @example
 * ```ts
 * import { zeroGradients } from './module.ts';
 * // zeroGradients(model.parameters());
 * ```
 */
export function zeroGradients(params: Iterable<Tensor>, options: ZeroGradOptions = {}): void {
  const setToNone = options.setToNone ?? true;
  for (const p of params) {
    const g = p.grad;
    if (g === null) continue;
    if (setToNone) {
      p.grad = null;
      g.dispose();
    } else {
      // PyTorch detaches a gradient that has a history (create_graph) before zeroing it.
      if (g.gradFn !== null) {
        p.grad = g.detach();
        g.dispose();
      }
      zeros_(p.grad!);
    }
  }
}

function shapeString(shape: readonly number[]): string {
  return `torch.Size([${shape.join(', ')}])`;
}

/**
 * Any module, whatever its forward signature (what `registerModule` and the child iterators accept).
 *
 * @example
 * ```ts
 * import { type AnyModule, Linear, ReLU } from './mod.ts';
 * const children: AnyModule[] = [new Linear(2, 2), new ReLU()];
 * ```
 */
export type AnyModule = Module<any, any>;

// The registry of a module, or PyTorch's error for an object that `Module`'s constructor did not make.
function registry(module: object, what: string): ModuleRegistry {
  const r = registryOf(module);
  if (r === undefined) throw new AttributeError(`cannot assign ${what} before Module.__init__() call`);
  return r;
}

/**
 * The base class of layers and models. Subclasses assign (or register) their parameters, buffers and
 * children and implement `forward`; `call` runs it. `scope()` keeps a module it returns (parameters,
 * gradients, buffers).
 *
 * @example
 * ```ts
 * import { relu, type Tensor } from '../../mod.ts';
 * import { Linear, Module } from './mod.ts';
 * class Mlp extends Module<[Tensor], Tensor> {
 *   fc1 = new Linear(64, 128);
 *   fc2 = new Linear(128, 10);
 *   forward(x: Tensor): Tensor {
 *     return this.fc2.call(relu(this.fc1.call(x)));
 *   }
 * }
 * const model = new Mlp();
 * model.namedParameters().map(([name]) => name); // ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
 * model.dispose();
 * ```
 */
export abstract class Module<In extends unknown[] = [Tensor], Out = Tensor> extends RegistersAttributes
  implements Disposable, HoldsTensors {
  // `this` is already the Proxy here (see RegistersAttributes), whose registry these are.
  readonly #registry = registryOf(this)!;
  readonly #parameters = this.#registry.parameters;
  readonly #buffers = this.#registry.buffers;
  readonly #modules = this.#registry.modules as Map<string, AnyModule | null>;
  // Buffers registered with `persistent: false`: left out of `stateDict()`.
  readonly #nonPersistent = new Set<string>();
  #training = true;

  /** The computation; call the module with {@linkcode call}. */
  abstract forward(...inputs: In): Out;

  /** Runs `forward` (PyTorch's `module(x)`). */
  call(...inputs: In): Out {
    return this.forward(...inputs);
  }

  /** Whether the module is in training mode (affects `Dropout`). */
  get training(): boolean {
    return this.#training;
  }

  /**
   * Registers a parameter under `name` (null registers the name without a tensor, like `bias=False`) and
   * makes `this[name]` read it; returns it. A leaf tensor that is not yet a `Parameter` becomes one (requires
   * grad); anything else is PyTorch's TypeError, and bad names its KeyError.
   */
  registerParameter<T extends Tensor | null>(name: string, param: T): T {
    registry(this, 'parameter').registerParameter(name, param);
    return param;
  }

  /**
   * Registers a buffer (state that is not trained) under `name`; returns it. A buffer is saved in `stateDict`
   * unless `persistent` is false (PyTorch's `register_buffer(name, tensor, persistent=False)`).
   *
   * @example
   * ```ts
   * import { zeros } from '../../mod.ts';
   * import { Linear } from './mod.ts';
   * const layer = new Linear(2, 2);
   * layer.registerBuffer('cache', zeros([2]), { persistent: false });
   * [...layer.stateDict().keys()]; // ['weight', 'bias']
   * ```
   */
  registerBuffer<T extends Tensor | null>(name: string, buffer: T, options: { persistent?: boolean } = {}): T {
    if (typeof options !== 'object' || options === null || typeof (options.persistent ?? true) !== 'boolean') {
      throw new TypeError(`registerBuffer(): argument 'persistent' must be bool`);
    }
    registry(this, 'buffer').registerBuffer(name, buffer);
    if (options.persistent === false) this.#nonPersistent.add(name);
    else this.#nonPersistent.delete(name);
    return buffer;
  }

  /** Registers a child module (or null) under `name` (PyTorch's `add_module`); returns it. */
  registerModule<M extends AnyModule | null>(name: string, module: M): M {
    registry(this, 'module').registerModule(name, module);
    return module;
  }

  /** The direct children, each once, in registration order (null entries skipped). */
  children(): AnyModule[] {
    return this.namedChildren().map(([, m]) => m);
  }

  /** The direct children with their names, each module once. */
  namedChildren(): Array<[string, AnyModule]> {
    const out: Array<[string, AnyModule]> = [];
    const seen = new Set<AnyModule>();
    for (const [name, m] of this.#modules) {
      if (m === null || seen.has(m)) continue;
      seen.add(m);
      out.push([name, m]);
    }
    return out;
  }

  /** This module and every descendant (each once), with dotted names; this module's name is `''`. */
  namedModules(prefix = ''): Array<[string, AnyModule]> {
    const out: Array<[string, AnyModule]> = [];
    const seen = new Set<AnyModule>();
    const visit = (m: AnyModule, name: string) => {
      if (seen.has(m)) return;
      seen.add(m);
      out.push([name, m]);
      for (const [childName, child] of m.#modules) {
        if (child !== null) visit(child, name === '' ? childName : `${name}.${childName}`);
      }
    };
    visit(this, prefix);
    return out;
  }

  /** This module and every descendant. */
  modules(): Array<AnyModule> {
    return this.namedModules().map(([, m]) => m);
  }

  /** Parameters with dotted names (`fc1.weight`), each tensor once, in registration order. */
  namedParameters(options: { recurse?: boolean } = {}): Array<[string, Tensor]> {
    return this.#collect((m) => m.#parameters, options.recurse ?? true);
  }

  /** The parameters, each once, in registration order (what an optimizer takes). */
  parameters(options: { recurse?: boolean } = {}): Tensor[] {
    return this.namedParameters(options).map(([, p]) => p);
  }

  /** Buffers with dotted names. */
  namedBuffers(options: { recurse?: boolean } = {}): Array<[string, Tensor]> {
    return this.#collect((m) => m.#buffers, options.recurse ?? true);
  }

  /** The buffers. */
  buffers(options: { recurse?: boolean } = {}): Tensor[] {
    return this.namedBuffers(options).map(([, b]) => b);
  }

  #collect(of: (m: AnyModule) => Map<string, Tensor | null>, recurse: boolean): Array<[string, Tensor]> {
    const out: Array<[string, Tensor]> = [];
    const seen = new Set<Tensor>();
    const modules: Array<[string, AnyModule]> = recurse ? this.namedModules() : [['', this]];
    for (const [prefix, m] of modules) {
      for (const [name, t] of of(m)) {
        if (t === null || seen.has(t)) continue;
        seen.add(t);
        out.push([prefix === '' ? name : `${prefix}.${name}`, t]);
      }
    }
    return out;
  }

  /** Sets training mode on this module and its descendants; returns this module. */
  train(mode = true): this {
    for (const m of this.modules()) m.#training = mode;
    return this;
  }

  /** Evaluation mode (`train(false)`); returns this module. */
  eval(): this {
    return this.train(false);
  }

  /** Calls `fn` on every descendant, then on this module (PyTorch's order); returns this module. */
  apply(fn: (module: AnyModule) => void): this {
    for (const child of this.children()) child.apply(fn);
    fn(this);
    return this;
  }

  /**
   * Moves (and/or converts) every parameter and buffer to `device` / `dtype` (PyTorch's `module.to`); returns
   * this module. A tensor that changes is replaced by a new one (a new `Parameter` for a parameter, without its
   * gradient) and the old one is disposed, so create the optimizer after moving the model, as PyTorch advises.
   *
   * @example
   * ```ts
   * import { nn } from '../../mod.ts';
   * const model = new nn.Linear(4, 2).to({ dtype: 'float64' });
   * model.weight.dtype.name; // 'float64'
   * ```
   */
  to(options: { device?: DeviceLike; dtype?: DTypeLike }): this {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`Module.to(): expected an options object { device, dtype }, got ${String(options)}`);
    }
    const { device, dtype } = options;
    const convert = (t: Tensor) => noGrad(() => t.to({ device, dtype: t.dtype.isFloatingPoint ? dtype : undefined }));
    this.apply((m) => {
      for (const [name, t] of [...m.#parameters]) {
        if (t === null) continue;
        const moved = convert(t);
        if (moved === t) continue;
        m.registerParameter(name, moved);
        t.autograd?.grad?.dispose();
        t.dispose();
      }
      for (const [name, t] of [...m.#buffers]) {
        if (t === null) continue;
        const moved = convert(t);
        if (moved === t) continue;
        m.registerBuffer(name, moved);
        t.dispose();
      }
    });
    return this;
  }

  /** Resets the parameters' gradients: drops and disposes them (default), or zeroes them in place. */
  zeroGrad(options: ZeroGradOptions = {}): void {
    zeroGradients(this.parameters(), options);
  }

  /**
   * Parameters and persistent buffers by dotted name: this module's, then each child's under its name, as
   * PyTorch's `state_dict` (a module registered under two names appears under both). The tensors are the module's own
   * (not copies): read them or pass them to `loadStateDict`, do not dispose them.
   */
  stateDict(): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    const visit = (m: AnyModule, prefix: string, ancestors: Set<AnyModule>) => {
      for (const [name, t] of m.#parameters) if (t !== null) out.set(prefix + name, t);
      for (const [name, t] of m.#buffers) if (t !== null && !m.#nonPersistent.has(name)) out.set(prefix + name, t);
      ancestors.add(m);
      for (const [name, child] of m.#modules) {
        if (child !== null && !ancestors.has(child)) visit(child, `${prefix}${name}.`, ancestors);
      }
      ancestors.delete(m);
    };
    visit(this, '', new Set());
    return out;
  }

  /**
   * Copies values from `state` into the parameters and buffers in place (no gradient recorded). With `strict`
   * (the default), missing and unexpected keys are an error, worded as PyTorch's.
   */
  loadStateDict(
    state: Map<string, Tensor> | Readonly<Record<string, Tensor>>,
    options: LoadStateDictOptions = {},
  ): IncompatibleKeys {
    const entries = state instanceof Map ? state : new Map(Object.entries(state));
    const own = this.stateDict();
    const missingKeys = [...own.keys()].filter((k) => !entries.has(k));
    const unexpectedKeys = [...entries.keys()].filter((k) => !own.has(k));
    const errors: string[] = [];
    const strict = options.strict ?? true;
    if (strict) {
      if (missingKeys.length > 0) {
        errors.push(`Missing key(s) in state_dict: ${missingKeys.map((k) => `"${k}"`).join(', ')}. `);
      }
      if (unexpectedKeys.length > 0) {
        errors.push(`Unexpected key(s) in state_dict: ${unexpectedKeys.map((k) => `"${k}"`).join(', ')}. `);
      }
    }
    for (const [key, target] of own) {
      const source = entries.get(key);
      if (source === undefined) continue;
      if (source.shape.length !== target.shape.length || source.shape.some((s, i) => s !== target.shape[i])) {
        errors.push(
          `size mismatch for ${key}: copying a param with shape ${shapeString(source.shape)} from checkpoint, ` +
            `the shape in current model is ${shapeString(target.shape)}.`,
        );
      }
    }
    if (errors.length > 0) {
      throw new Error(`Error(s) in loading state_dict for ${this.constructor.name}:\n\t${errors.join('\n\t')}`);
    }
    noGrad(() => {
      for (const [key, target] of own) {
        const source = entries.get(key);
        if (source !== undefined && source !== target) target.copy_(source);
      }
    });
    return { missingKeys, unexpectedKeys };
  }

  /** The part of `toString()` inside this module's parentheses (PyTorch's `extra_repr`). */
  extraRepr(): string {
    return '';
  }

  /** PyTorch's module repr: `Sequential(\n  (0): Linear(in_features=64, ...)\n)`. */
  override toString(): string {
    const extra = this.extraRepr();
    const lines = extra === '' ? [] : extra.split('\n');
    for (const [name, child] of this.#modules) {
      const text = child === null ? 'None' : String(child).split('\n').join('\n  ');
      lines.push(`(${name}): ${text}`);
    }
    const name = this.constructor.name;
    if (lines.length === 0) return `${name}()`;
    if (this.#modules.size === 0 && lines.length === 1) return `${name}(${lines[0]})`;
    return `${name}(\n  ${lines.join('\n  ')}\n)`;
  }

  /** Disposes every parameter, its gradient and every buffer, recursively. Idempotent. */
  dispose(): void {
    for (const m of this.modules()) {
      for (const p of m.#parameters.values()) {
        if (p === null) continue;
        p.grad?.dispose();
        p.dispose();
      }
      for (const b of m.#buffers.values()) b?.dispose();
    }
  }

  /** Same as {@linkcode dispose}. */
  [Symbol.dispose](): void {
    this.dispose();
  }

  /** What `scope()` and `keep()` keep of a module: its parameters (with their gradients) and buffers. */
  [heldTensors](): Tensor[] {
    return [...this.parameters(), ...this.buffers()];
  }

  /**
   * Whether `value` is a module made by `Module`'s constructor (a brand check; `instanceof` can be forged).
   *
   * @example
   * ```ts
   * import { Linear, Module } from './mod.ts';
   * Module.isModule(new Linear(1, 1)); // true
   * Module.isModule(Object.create(Module.prototype)); // false
   * ```
   */
  static isModule(value: unknown): value is AnyModule {
    return isModule(value);
  }
}
