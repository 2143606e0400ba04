/**
 * A model's weights to and from a safetensors file (`safetensors.torch.save_model` / `load_model`): the
 * module's `stateDict()` under PyTorch's names, with tensors shared between names (tied weights) written
 * once, as the reference library does, so a file saved from PyTorch loads here and the other way.
 *
 * @module
 */
import { pyTypeName } from '../ops/arg_names.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { type IncompatibleKeys, Module } from './module.ts';
import { loadFile, type SafetensorsMetadata, saveFile } from './safetensors.ts';

// deno-lint-ignore no-explicit-any
type AnyModule = Module<any, any>;

function checkModel(what: string, model: unknown): AnyModule {
  if (!Module.isModule(model)) {
    throw new TypeError(`${what}: argument 'model' must be a Module, not ${pyTypeName(model)}`);
  }
  return model as AnyModule;
}

/**
 * Names under which a tensor already listed appears again, mapped to the first name (the one kept).
 */
function aliases(state: Map<string, Tensor>): Map<string, string> {
  const first = new Map<Tensor, string>();
  const out = new Map<string, string>();
  for (const [name, t] of state) {
    const kept = first.get(t);
    if (kept === undefined) first.set(t, name);
    else out.set(name, kept);
  }
  return out;
}

/**
 * Writes `model.stateDict()` to a safetensors file. A tensor under several names (tied weights) is written
 * once, under its first name; the metadata maps each other name to it, and gets `format: 'pt'` unless given,
 * as `safetensors.torch.save_model` does.
 *
 * @example
 * ```ts
 * import { nn } from '../../mod.ts';
 * import { loadModel, saveModel } from './state_dict.ts';
 * const model = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 2));
 * saveModel(model, '/tmp/mlp.safetensors');
 * loadModel(model, '/tmp/mlp.safetensors'); // { missingKeys: [], unexpectedKeys: [] }
 * ```
 */
export function saveModel(model: AnyModule, path: string, options: { metadata?: SafetensorsMetadata } = {}): void {
  checkModel('saveModel()', model);
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`saveModel(): expected an options object, got ${pyTypeName(options)}`);
  }
  const state = model.stateDict();
  const metadata: Record<string, string> = { ...options.metadata };
  metadata.format ??= 'pt';
  for (const [alias, kept] of aliases(state)) {
    state.delete(alias);
    metadata[alias] ??= kept;
  }
  saveFile(state, path, metadata);
}

/**
 * Loads a safetensors file into `model`'s parameters and buffers in place (`Module.loadStateDict`). A name
 * the file lacks because it shares its tensor with one the file has (tied weights) is not missing. With
 * `strict` (the default), missing or unexpected names are PyTorch's error and nothing is changed.
 *
 * @example
 * ```ts
 * import { nn } from '../../mod.ts';
 * import { loadModel } from './state_dict.ts';
 * const model = new nn.Linear(768, 10);
 * // loadModel(model, 'classifier.safetensors');
 * ```
 */
export function loadModel(model: AnyModule, path: string, options: { strict?: boolean } = {}): IncompatibleKeys {
  checkModel('loadModel()', model);
  if (typeof options !== 'object' || options === null || typeof (options.strict ?? true) !== 'boolean') {
    throw new TypeError("loadModel(): argument 'strict' must be bool");
  }
  const loaded = loadFile(path);
  try {
    const entries = new Map(loaded);
    const shared = aliases(model.stateDict());
    for (const [alias, kept] of shared) {
      const t = loaded.get(kept);
      if (t !== undefined && !loaded.has(alias)) entries.set(alias, t);
    }
    const result = model.loadStateDict(entries, { strict: options.strict ?? true });
    return {
      missingKeys: result.missingKeys,
      unexpectedKeys: result.unexpectedKeys.filter((k) => loaded.has(k)),
    };
  } finally {
    for (const t of loaded.values()) t.dispose();
  }
}
