/**
 * Nested arguments for the functional transforms (PyTorch's pytrees): arrays and plain objects are containers,
 * everything else (tensors, numbers, null, ...) a leaf.
 *
 * @module
 */
import { Tensor } from '../tensor/tensor.ts';

/** The structure of a flattened value. */
export type TreeSpec =
  | { readonly kind: 'leaf' }
  | { readonly kind: 'array'; readonly children: readonly TreeSpec[] }
  | { readonly kind: 'object'; readonly keys: readonly string[]; readonly children: readonly TreeSpec[] };

const LEAF: TreeSpec = { kind: 'leaf' };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !(v instanceof Tensor) && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * The leaves of `value` in order, and its structure.
 *
 * @example
 * ```ts
 * import { flattenTree } from './vmap_tree.ts';
 * flattenTree([1, { a: 2, b: [3] }]).leaves; // [1, 2, 3]
 * ```
 */
export function flattenTree(value: unknown): { leaves: unknown[]; spec: TreeSpec } {
  const leaves: unknown[] = [];
  const walk = (v: unknown): TreeSpec => {
    if (Array.isArray(v)) return { kind: 'array', children: v.map(walk) };
    if (isPlainObject(v)) {
      const keys = Object.keys(v);
      return { kind: 'object', keys, children: keys.map((k) => walk(v[k])) };
    }
    leaves.push(v);
    return LEAF;
  };
  return { leaves, spec: walk(value) };
}

/**
 * Rebuilds a value of structure `spec` from its leaves.
 *
 * @example
 * ```ts
 * import { flattenTree, unflattenTree } from './vmap_tree.ts';
 * const { spec } = flattenTree([1, [2]]);
 * unflattenTree([5, 6], spec); // [5, [6]]
 * ```
 */
export function unflattenTree(leaves: readonly unknown[], spec: TreeSpec): unknown {
  let i = 0;
  const build = (s: TreeSpec): unknown => {
    if (s.kind === 'leaf') return leaves[i++];
    if (s.kind === 'array') return s.children.map(build);
    const out: Record<string, unknown> = {};
    s.keys.forEach((k, j) => out[k] = build(s.children[j]));
    return out;
  };
  return build(spec);
}

/**
 * A structure as PyTorch prints a TreeSpec: `TreeSpec(tuple, None, [*, *])`, `*` for a leaf.
 *
 * @example
 * ```ts
 * import { flattenTree, treeSpecText } from './vmap_tree.ts';
 * treeSpecText(flattenTree([1, 2]).spec); // 'TreeSpec(tuple, None, [*, *])'
 * ```
 */
export function treeSpecText(spec: TreeSpec): string {
  if (spec.kind === 'leaf') return '*';
  const children = spec.children.map(treeSpecText).join(', ');
  return spec.kind === 'array'
    ? `TreeSpec(tuple, None, [${children}])`
    : `TreeSpec(dict, [${spec.keys.map((k) => `'${k}'`).join(', ')}], [${children}])`;
}
