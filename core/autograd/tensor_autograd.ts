/**
 * The autograd surface of Tensor: `requiresGrad`, `grad`, `gradFn`, `isLeaf`, `requiresGrad_()`,
 * `backward()`, `detach()`, `retainGrad()`, `registerHook()`, and the functions `backward()` and
 * `grad()` (PyTorch's `torch.autograd.backward` / `torch.autograd.grad`).
 *
 * @module
 */
import type { Tensor } from '../tensor/tensor.ts';
import { isInferenceModeEnabled, Tensor as TensorClass } from '../tensor/tensor.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { keep } from '../tensor/lifetime.ts';
import { autogradStateOf, gradientEdge } from './autograd_meta.ts';
import { runBackward } from './engine.ts';
import type { GradHook, Node } from './node.ts';
import { aliasOf } from './saved_variable.ts';

/** Autograd members every Tensor has (installed by {@linkcode installAutogradMethods}). */
export interface AutogradTensorMethods {
  /** Whether gradients are computed for this tensor. Settable on leaves. */
  requiresGrad: boolean;
  /** The accumulated gradient of a leaf (or a tensor that called `retainGrad()`), else null. */
  grad: Tensor | null;
  /** The backward node that produced this tensor, or null for leaves. */
  readonly gradFn: Node | null;
  /** Whether the tensor is a leaf of the graph (made by the user, not by a recorded operation). */
  readonly isLeaf: boolean;
  /** Sets `requiresGrad` in place; returns this tensor. */
  requiresGrad_(requiresGrad?: boolean): Tensor;
  /** Computes gradients of this tensor with respect to the graph leaves. */
  backward(gradient?: Tensor | null, options?: BackwardOptions): void;
  /** A tensor sharing data with this one but outside the graph. */
  detach(): Tensor;
  /** Makes a non-leaf tensor keep its `.grad` during backward. */
  retainGrad(): void;
  /** Registers a hook on this tensor's gradient; it may return a replacement. Returns a remover. */
  registerHook(hook: GradHook): { remove(): void };
}

/** Options of `backward`. */
export interface BackwardOptions {
  /** Keep the graph's saved tensors so backward can run again. */
  retainGraph?: boolean;
  /** Record the backward pass (higher-order gradients). */
  createGraph?: boolean;
}

/**
 * Computes and accumulates gradients of `tensors` into the graph leaves (`torch.autograd.backward`).
 *
 * @example
 * ```ts
 * import { backward } from './tensor_autograd.ts';
 * // backward([loss]);
 * ```
 */
export function backward(
  tensors: Tensor | readonly Tensor[],
  gradTensors?: Tensor | ReadonlyArray<Tensor | null> | null,
  options: BackwardOptions = {},
): void {
  const roots = Array.isArray(tensors) ? tensors : [tensors as Tensor];
  const grads = gradTensors === undefined || gradTensors === null
    ? roots.map(() => null)
    : Array.isArray(gradTensors)
    ? gradTensors
    : [gradTensors as Tensor];
  const retain = options.retainGraph ?? options.createGraph ?? false;
  runBackward(roots, grads, { retainGraph: retain, createGraph: options.createGraph ?? false });
}

/** Options of {@linkcode grad}. */
export interface GradOptions extends BackwardOptions {
  /** Gradients of the outputs (default: ones for one-element outputs). */
  gradOutputs?: ReadonlyArray<Tensor | null> | Tensor | null;
  /** Return null for inputs the outputs do not depend on instead of throwing. */
  allowUnused?: boolean;
}

/**
 * The gradients of `outputs` with respect to `inputs`, without touching `.grad` (`torch.autograd.grad`).
 *
 * @example
 * ```ts
 * import { grad } from './tensor_autograd.ts';
 * // const [dx] = grad([y], [x]);
 * ```
 */
export function grad(
  outputs: Tensor | readonly Tensor[],
  inputs: Tensor | readonly Tensor[],
  options: GradOptions = {},
): Array<Tensor | null> {
  const roots = Array.isArray(outputs) ? outputs : [outputs as Tensor];
  const ins = Array.isArray(inputs) ? inputs : [inputs as Tensor];
  const g = options.gradOutputs;
  const grads = g === undefined || g === null ? roots.map(() => null) : Array.isArray(g) ? g : [g as Tensor];
  const retain = options.retainGraph ?? options.createGraph ?? false;
  return runBackward(roots, grads, {
    retainGraph: retain,
    createGraph: options.createGraph ?? false,
    captureFor: ins,
    allowUnused: options.allowUnused ?? false,
  });
}

/**
 * Installs the autograd members on Tensor.prototype (idempotent).
 *
 * @example
 * ```ts
 * import { installAutogradMethods } from './tensor_autograd.ts';
 * installAutogradMethods();
 * ```
 */
export function installAutogradMethods(): void {
  const proto = TensorClass.prototype as unknown as Record<string, unknown>;
  if (Object.hasOwn(proto, 'requiresGrad_')) return;
  Object.defineProperties(proto, {
    requiresGrad: {
      get(this: Tensor) {
        return this.autograd?.requiresGrad ?? false;
      },
      set(this: Tensor, value: boolean) {
        this.requiresGrad_(value);
      },
      configurable: true,
    },
    grad: {
      get(this: Tensor) {
        const g = this.autograd?.grad ?? null;
        return g !== null && g.isDisposed ? null : g;
      },
      set(this: Tensor, value: Tensor | null) {
        if (value !== null && !TensorClass.isTensor(value)) {
          throw new TypeError('assigned grad expected to be a Tensor or None');
        }
        autogradStateOf(this).grad = value;
      },
      configurable: true,
    },
    gradFn: {
      get(this: Tensor) {
        return (this.autograd?.gradFn as Node | null | undefined) ?? null;
      },
      configurable: true,
    },
    isLeaf: {
      get(this: Tensor) {
        return this.autograd?.gradFn === null || this.autograd?.gradFn === undefined;
      },
      configurable: true,
    },
  });
  const methods: Omit<AutogradTensorMethods, 'requiresGrad' | 'grad' | 'gradFn' | 'isLeaf'> & ThisType<Tensor> = {
    requiresGrad_(requiresGrad = true): Tensor {
      this.assertAlive('requires_grad_()');
      if (typeof requiresGrad !== 'boolean') {
        throw new TypeError(`requires_grad_(): argument 'requires_grad' must be bool, not ${typeof requiresGrad}`);
      }
      const meta = autogradStateOf(this);
      if (meta.gradFn !== null) {
        if (!requiresGrad) {
          throw new RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
          );
        }
        return this;
      }
      if (requiresGrad && !this.dtype.isFloatingPoint) {
        // PyTorch 1.13's requires_grad_ wording (factories and Parameter say "Only ... and complex dtype ...").
        throw new RuntimeError('only Tensors of floating point dtype can require gradients');
      }
      if (requiresGrad && this.isInference && !isInferenceModeEnabled()) {
        throw new RuntimeError('Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.');
      }
      meta.requiresGrad = requiresGrad;
      return this;
    },
    backward(gradient?: Tensor | null, options?: BackwardOptions): void {
      backward([this], gradient === undefined || gradient === null ? null : [gradient], options);
    },
    detach(): Tensor {
      this.assertAlive('detach()');
      const alias = aliasOf(this);
      alias.autograd = undefined;
      return alias;
    },
    retainGrad(): void {
      this.assertAlive('retain_grad()');
      if (!this.requiresGrad) throw new RuntimeError("can't retain_grad on Tensor that has requires_grad=False");
      const meta = autogradStateOf(this);
      const node = meta.gradFn;
      if (node === null) return; // leaves keep grads anyway
      if (meta.retainsGrad) return;
      meta.retainsGrad = true;
      const hook: GradHook = (g) => {
        if (this.isDisposed) return; // PyTorch's hook holds the tensor weakly: a freed tensor gets no grad
        const prev = meta.grad;
        meta.grad = prev === null || prev.isDisposed ? g.mul(1) : prev.add(g);
        keep(meta.grad); // outlives the backward run's scope, like a leaf's grad
      };
      meta.retainGradHook = hook;
      const list = node.preHooks.get(meta.outputNr) ?? [];
      list.push(hook);
      node.preHooks.set(meta.outputNr, list);
    },
    registerHook(hook: GradHook): { remove(): void } {
      this.assertAlive('register_hook()');
      if (typeof hook !== 'function') throw new TypeError('register_hook(): hook must be a function');
      if (!this.requiresGrad) {
        throw new RuntimeError("cannot register a hook on a tensor that doesn't require gradient");
      }
      const edge = gradientEdge(this);
      if (edge === null) throw new RuntimeError("cannot register a hook on a tensor that doesn't require gradient");
      const node = edge.node;
      const list = node.preHooks.get(edge.inputNr) ?? [];
      list.push(hook);
      node.preHooks.set(edge.inputNr, list);
      return {
        remove: () => {
          const i = list.indexOf(hook);
          if (i >= 0) list.splice(i, 1);
        },
      };
    },
  };
  Object.assign(proto, methods);
}
