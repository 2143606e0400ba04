/**
 * `Module`: the base of every layer (`torch.nn.Module`). A module owns parameters (leaf tensors that require
 * grad), buffers (state that is not trained) and child modules, each under a name, and gives them back in
 * registration order, recursively, with dotted names (`0.weight`), as PyTorch does.
 *
 * Note [Explicit registration]
 * PyTorch finds parameters and children through `__setattr__`. JavaScript has no such hook short of a Proxy,
 * which would tax every property read of every module, so a module registers what it owns:
 * `this.weight = this.registerParameter('weight', w)`. The registration order is PyTorch's attribute order,
 * which is what `stateDict()` keys and optimizers' parameter lists follow.
 *
 * @module
 */
import { noGrad } from '../autograd/grad_mode.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { zeros_ } from './init.ts';

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
 * The base class of layers and models. Subclasses register their parameters, buffers and children in the
 * constructor and implement `forward`; `call` runs it.
 *
 * @example
 * ```ts
 * import { relu, type Tensor } from '../../mod.ts';
 * import { Linear, Module } from './mod.ts';
 * class Mlp extends Module<[Tensor], Tensor> {
 *   readonly fc1 = this.registerModule('fc1', new Linear(64, 128));
 *   readonly fc2 = this.registerModule('fc2', new Linear(128, 10));
 *   forward(x: Tensor): Tensor {
 *     return this.fc2.call(relu(this.fc1.call(x)));
 *   }
 * }
 * const model = new Mlp();
 * model.parameters().length; // 4
 * model.dispose();
 * ```
 */
export abstract class Module<In extends unknown[] = [Tensor], Out = Tensor> implements Disposable {
  readonly #parameters = new Map<string, Tensor | null>();
  readonly #buffers = new Map<string, Tensor | null>();
  readonly #modules = new Map<string, Module<any, any>>();
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
   * Registers a parameter under `name` (null registers the name without a tensor, like `bias=False`);
   * makes it require grad and returns it.
   */
  registerParameter<T extends Tensor | null>(name: string, param: T): T {
    checkName(name, this.#parameters, 'parameter');
    if (this.#buffers.has(name) || this.#modules.has(name)) throw new Error(`attribute '${name}' already exists`);
    if (param !== null && !param.requiresGrad) param.requiresGrad_(true);
    this.#parameters.set(name, param);
    return param;
  }

  /** Registers a buffer (state saved in `stateDict` but not trained) under `name`; returns it. */
  registerBuffer<T extends Tensor | null>(name: string, buffer: T): T {
    checkName(name, this.#buffers, 'buffer');
    if (this.#parameters.has(name) || this.#modules.has(name)) throw new Error(`attribute '${name}' already exists`);
    this.#buffers.set(name, buffer);
    return buffer;
  }

  /** Registers a child module under `name`; returns it. */
  registerModule<M extends Module<any, any>>(name: string, module: M): M {
    checkName(name, this.#modules, 'module');
    if (this.#parameters.has(name) || this.#buffers.has(name)) throw new Error(`attribute '${name}' already exists`);
    this.#modules.set(name, module);
    return module;
  }

  /** The direct children, in registration order. */
  children(): Array<Module<any, any>> {
    return [...this.#modules.values()];
  }

  /** The direct children with their names. */
  namedChildren(): Array<[string, Module<any, any>]> {
    return [...this.#modules.entries()];
  }

  /** This module and every descendant (each once), with dotted names; this module's name is `''`. */
  namedModules(prefix = ''): Array<[string, Module<any, any>]> {
    const out: Array<[string, Module<any, any>]> = [];
    const seen = new Set<Module<any, any>>();
    const visit = (m: Module<any, any>, name: string) => {
      if (seen.has(m)) return;
      seen.add(m);
      out.push([name, m]);
      for (const [childName, child] of m.#modules) visit(child, name === '' ? childName : `${name}.${childName}`);
    };
    visit(this, prefix);
    return out;
  }

  /** This module and every descendant. */
  modules(): Array<Module<any, any>> {
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

  #collect(of: (m: Module<any, any>) => Map<string, Tensor | null>, recurse: boolean): Array<[string, Tensor]> {
    const out: Array<[string, Tensor]> = [];
    const seen = new Set<Tensor>();
    const modules: Array<[string, Module<any, any>]> = recurse ? this.namedModules() : [['', this]];
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
  apply(fn: (module: Module<any, any>) => void): this {
    for (const child of this.#modules.values()) child.apply(fn);
    fn(this);
    return this;
  }

  /** Resets the parameters' gradients: drops and disposes them (default), or zeroes them in place. */
  zeroGrad(options: ZeroGradOptions = {}): void {
    zeroGradients(this.parameters(), options);
  }

  /**
   * Parameters and buffers by dotted name, in registration order. The tensors are the module's own (not
   * copies): read them or pass them to `loadStateDict`, do not dispose them.
   */
  stateDict(): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    for (const [prefix, m] of this.namedModules()) {
      for (const map of [m.#parameters, m.#buffers]) {
        for (const [name, t] of map) if (t !== null) out.set(prefix === '' ? name : `${prefix}.${name}`, t);
      }
    }
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
  toString(): string {
    const extra = this.extraRepr();
    const lines = extra === '' ? [] : extra.split('\n');
    for (const [name, child] of this.#modules) {
      const text = String(child).split('\n').join('\n  ');
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
}

function checkName(name: string, map: Map<string, unknown>, what: string): void {
  if (name === '') throw new Error(`${what} name can't be empty string ""`);
  if (name.includes('.')) throw new Error(`${what} name can't contain "."`);
  if (map.has(name)) throw new Error(`attribute '${name}' already exists`);
}
