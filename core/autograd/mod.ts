/**
 * Autograd: gradient recording as a dispatch key, the backward engine, grad modes, and the tensor API.
 *
 * @module
 */
export { AccumulateGrad, gradientEdge } from './engine.ts';
export { enableGrad, GradModeGuard, inferenceMode, InferenceModeGuard, isGradEnabled, noGrad } from './grad_mode.ts';
export { type Edge, FREED_GRAPH_MESSAGE, type GradHook, Node, SavedVariable } from './node.ts';
export { type Derivative, FormulaNode, type GradFormula, type SavedValues } from './autograd_kernel.ts';
export { gradcheck, type GradcheckOptions } from './gradcheck.ts';
export { defineFunction, FunctionContext, type FunctionDefinition } from './function.ts';
export {
  type AutogradTensorMethods,
  backward,
  type BackwardOptions,
  grad,
  type GradOptions,
  installAutogradMethods,
} from './tensor_autograd.ts';
