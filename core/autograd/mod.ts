/**
 * Autograd: gradient recording as a dispatch key, the backward engine, grad modes, and the tensor API.
 *
 * @module
 */
export { AccumulateGrad } from './accumulate_grad.ts';
export { AutogradState, CreationMeta, gradientEdge, ViewAutogradState } from './autograd_meta.ts';
export { CopySlices } from './copy_slices.ts';
export { enableGrad, GradModeGuard, inferenceMode, InferenceModeGuard, isGradEnabled, noGrad } from './grad_mode.ts';
export { type Edge, FREED_GRAPH_MESSAGE, type GradHook, Node } from './node.ts';
export { SavedVariable } from './saved_variable.ts';
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
