/**
 * The batched tensor of `vmap` (functorch's BatchedTensorImpl, in the flattened form of PyTorch's first vmap
 * prototype): a wrapper tensor whose keyset holds the Batched key, over a physical tensor whose leading
 * dimensions are batch dimensions, one per vmap level, and the vmap levels that are active.
 *
 * Note [Batched tensor layout]
 * A BatchedTensor holds one physical tensor and the ascending list of the vmap levels it is batched at; the
 * physical tensor's first `levels.length` dimensions are those batch dimensions, in the same order, and the
 * rest is the logical tensor each sample sees. A nested vmap adds its level at the end of the list (a new
 * level is always the highest), so a tensor batched at several levels is still one wrapper over one physical
 * tensor, and a batching rule never meets a wrapper inside a wrapper: it maps logical dimensions to physical
 * ones by adding `levels.length`, lines up the batch dimensions of several operands, calls the operator on
 * plain tensors (which dispatch normally, autograd included) and wraps the result. Ordinary tensors never
 * carry the Batched key, so their dispatch is untouched.
 *
 * @module
 */
import { DispatchKey } from '../dispatch/dispatch_key.ts';
import { DispatchKeySet } from '../dispatch/dispatch_key_set.ts';
import { RuntimeError } from '../dispatch/errors.ts';
import { Device } from '../tensor/device.ts';
import { heldTensors } from '../tensor/held_tensors.ts';
import { Storage } from '../tensor/storage.ts';
import { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';

/** The functionality bit of the Batched key. */
export const BATCHED_HI: number = DispatchKeySet.of(DispatchKey.Batched).hi;

/** How random operators behave inside a vmap (PyTorch's `randomness` argument). */
export type Randomness = 'error' | 'different' | 'same';

/** One active vmap call: its level, batch size and randomness mode. */
export interface VmapLevel {
  readonly level: number;
  readonly size: number;
  readonly randomness: Randomness;
}

const active: VmapLevel[] = [];
let nextLevel = 1;

/** The active vmap levels, outermost first. */
export function activeLevels(): readonly VmapLevel[] {
  return active;
}

/** Enters a new vmap level (the highest so far) and returns it. */
export function pushLevel(size: number, randomness: Randomness): VmapLevel {
  const entry = { level: nextLevel++, size, randomness };
  active.push(entry);
  return entry;
}

/** Leaves the innermost vmap level. */
export function popLevel(entry: VmapLevel): void {
  const i = active.lastIndexOf(entry);
  if (i >= 0) active.splice(i, 1);
}

/** The batch size of an active level. */
export function sizeOfLevel(level: number): number {
  for (const entry of active) if (entry.level === level) return entry.size;
  throw new RuntimeError(`vmap: the batch level ${level} is not active (a BatchedTensor escaped its vmap)`);
}

const ITEM_MESSAGE = "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling " +
  ".item() on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring " +
  'somewhere inside PyTorch internals, please file a bug report.';

/**
 * A tensor inside `vmap`: what one sample sees (its logical shape), backed by a physical tensor with one
 * leading batch dimension per level (Note [Batched tensor layout]). Users meet it only inside a vmapped
 * function; operators on it run batching rules.
 *
 * @example
 * ```ts
 * import { randn, vmap } from '../../mod.ts';
 * vmap((x) => {
 *   x.shape; // [3]: one sample
 *   return x.sum();
 * })(randn([5, 3])).shape; // [5]
 * ```
 */
export class BatchedTensor extends Tensor {
  /** The physical tensor: batch dimensions first. */
  readonly physical: Tensor;
  /** The vmap levels of the leading physical dimensions, ascending. */
  readonly levels: readonly number[];

  /** Wraps `physical`, whose first `levels.length` dimensions are batched at `levels` (ascending). */
  constructor(physical: Tensor, levels: readonly number[]) {
    const k = levels.length;
    super({
      storage: Storage.allocate(Device.meta, 0),
      shape: physical.shape.slice(k),
      strides: physical.stride().slice(k),
      dtype: physical.dtype,
    });
    this.physical = physical;
    this.levels = levels;
    this.keySetHi = physical.keySetHi | BATCHED_HI;
    this.keySetLo = physical.keySetLo;
  }

  /** What the wrapper owns: `scope()` keeps the physical tensor of a batched tensor it keeps. */
  [heldTensors](): Iterable<unknown> {
    return [this.physical];
  }

  /** The physical tensor's device. */
  override get device(): Device {
    return this.physical.device;
  }

  /** The batched tensor of the physical tensor's detached alias (not a plain alias of the wrapper). */
  override detach(): Tensor {
    return new BatchedTensor((this.physical as unknown as { detach(): Tensor }).detach(), this.levels);
  }

  /** Not available inside vmap: differentiate with `func.grad` or `func.vjp` (PyTorch's error). */
  override backward(): void {
    throw new RuntimeError(
      'backward() called inside a functorch transform. This is not supported, please use functorch.grad or ' +
        'functorch.vjp instead or call backward() outside of functorch transforms.',
    );
  }

  /** Not available inside vmap: a batched tensor's gradient is taken with `func.grad` or `func.vjp`. */
  override requiresGrad_(requiresGrad = true): Tensor {
    if (requiresGrad === false) return this;
    throw new RuntimeError(
      'vmap: requiresGrad_() on a BatchedTensor is not supported: use func.grad or func.vjp inside vmap, or set ' +
        'requires_grad on the tensor before vmap',
    );
  }

  /** PyTorch's repr of a batched tensor: `BatchedTensor(lvl=1, bdim=0, value=...)`, outermost level outside. */
  override toString(): string {
    let text = String(this.physical);
    for (let i = this.levels.length - 1; i >= 0; i--) {
      text = `BatchedTensor(lvl=${this.levels[i]}, bdim=${i}, value=\n${text}\n)`;
    }
    return text;
  }

  /** Not available inside vmap (PyTorch's error). */
  override toArray(): Array<number | boolean> {
    throw new RuntimeError(ITEM_MESSAGE);
  }
  /** Not available inside vmap (PyTorch's error). */
  override item(): number | boolean {
    throw new RuntimeError(ITEM_MESSAGE);
  }
  /** Not available inside vmap (PyTorch's error). */
  override tolist(): unknown {
    throw new RuntimeError(ITEM_MESSAGE);
  }
}

/**
 * Whether `value` is a batched tensor.
 *
 * @example
 * ```ts
 * import { isBatchedTensor } from './vmap_batched.ts';
 * import { tensor } from '../../mod.ts';
 * isBatchedTensor(tensor([1])); // false
 * ```
 */
export function isBatchedTensor(value: unknown): value is BatchedTensor {
  return value instanceof BatchedTensor;
}

/** A physical tensor and its batch levels: the plain view of an operand (levels empty for a plain tensor). */
export interface Physical {
  readonly t: Tensor;
  readonly levels: readonly number[];
}

/** The physical form of an operand. */
export function physicalOf(x: Tensor): Physical {
  return x instanceof BatchedTensor ? { t: x.physical, levels: x.levels } : { t: x, levels: [] };
}

/** Wraps a physical tensor batched at `levels`; a plain tensor when there are none. */
export function wrapPhysical(t: Tensor, levels: readonly number[]): Tensor {
  return levels.length === 0 ? t : new BatchedTensor(t, levels);
}

/** The ascending union of several level lists. */
export function unionLevels(lists: ReadonlyArray<readonly number[]>): number[] {
  const all = new Set<number>();
  for (const list of lists) for (const l of list) all.add(l);
  return [...all].sort((a, b) => a - b);
}

/** `t.permute(order)`, skipped when the order is the identity. */
export function permuteIfNeeded(t: Tensor, order: readonly number[]): Tensor {
  for (let i = 0; i < order.length; i++) if (order[i] !== i) return aten('permute').call(t, order) as Tensor;
  return t;
}

/** `t` with dimension `from` moved to position `to` (PyTorch's `movedim` for one dimension). */
export function moveDim(t: Tensor, from: number, to: number): Tensor {
  if (from === to) return t;
  const order = [...Array(t.ndim).keys()];
  order.splice(from, 1);
  order.splice(to, 0, from);
  return permuteIfNeeded(t, order);
}

/**
 * The physical tensor of `x` laid out for the levels `levels` (a superset of its own, ascending) and a
 * logical rank `rank`: size-1 dimensions for the levels it lacks (or the level's size when `expand`), and
 * size-1 dimensions between the batch dimensions and the logical ones up to `rank`. Plain tensors that need no
 * level dimension are returned as they are (broadcasting aligns them from the right).
 */
export function alignPhysical(x: Tensor, levels: readonly number[], rank: number, expand = false): Tensor {
  const { t, levels: own } = physicalOf(x);
  const logicalRank = t.ndim - own.length;
  if (own.length === 0 && !expand && logicalRank >= rank) return t;
  const shape: number[] = [];
  let j = 0;
  for (const level of levels) {
    if (j < own.length && own[j] === level) shape.push(t.shape[j++]);
    else shape.push(expand ? sizeOfLevel(level) : 1);
  }
  for (let i = logicalRank; i < rank; i++) shape.push(1);
  for (let i = own.length; i < t.ndim; i++) shape.push(t.shape[i]);
  if (shape.length === t.ndim && j === own.length && !expand) return t;
  // Insert the size-1 dimensions as views (unsqueeze keeps any layout viewable), then expand where asked.
  let out = t;
  let pos = 0;
  j = 0;
  for (const level of levels) {
    if (j < own.length && own[j] === level) j++;
    else out = aten('unsqueeze').call(out, pos) as Tensor;
    pos++;
  }
  for (let i = logicalRank; i < rank; i++) out = aten('unsqueeze').call(out, levels.length) as Tensor;
  if (expand && levels.length > own.length) out = aten('expand').call(out, shape, false) as Tensor;
  return out;
}

/** Wraps a logical dimension for a batched operand and returns the physical one. */
export function physicalDim(dim: number, logicalRank: number, batchDims: number): number {
  const n = Math.max(logicalRank, 1);
  if (dim < -n || dim >= n) {
    throw new RangeError(`Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${dim})`);
  }
  return (dim < 0 ? dim + n : dim) + batchDims;
}
