/**
 * Batching rules of the view, shape and copy operators: a logical dimension `d` is physical dimension
 * `d + levels.length` (Note [Batched tensor layout]), a logical size list gets the batch sizes in front.
 *
 * @module
 */
import { RuntimeError } from '../dispatch/errors.ts';
import type { Tensor } from '../tensor/tensor.ts';
import { aten } from '../ops/aten_call.ts';
import { addRuleTable, type BatchRule } from './batching_rules.ts';
import { alignPhysical, physicalDim, physicalOf, unionLevels, wrapPhysical } from './vmap_batched.ts';
import { forLoopFallback } from './vmap_fallback.ts';

const call = (name: string, overload: string, ...args: unknown[]) => aten(name, overload).call(...args) as Tensor;

/** A rule for `op(self, ...rest)` whose result is `op` of the physical tensor, `rest` mapped by `mapRest`. */
function unaryPhysical(name: string, overload = '', mapRest?: (self: Tensor, k: number, rest: unknown[]) => unknown[]) {
  return (_hi: number, _lo: number, self: Tensor, ...rest: unknown[]) => {
    const { t, levels } = physicalOf(self);
    const args = mapRest === undefined ? rest : mapRest(self, levels.length, rest);
    return wrapPhysical(call(name, overload, t, ...args), levels);
  };
}

const batchSizes = (t: Tensor, k: number) => t.shape.slice(0, k);
/** The rest of the arguments with the first (a logical dimension of `self`) made physical. */
const firstDim = (
  self: Tensor,
  k: number,
  rest: unknown[],
) => [physicalDim(rest[0] as number, self.ndim, k), ...rest.slice(1)];
const withSize = (name: string, overload = '') =>
  unaryPhysical(
    name,
    overload,
    (self, k, rest) => [[...batchSizes(physicalOf(self).t, k), ...(rest[0] as number[])], ...rest.slice(1)],
  );

/** A rule returning a list of views along a logical dimension (the argument at `dimIndex` of `rest`). */
function listOfViews(name: string, overload: string, dimIndex: number) {
  return (_hi: number, _lo: number, self: Tensor, ...rest: unknown[]) => {
    const { t, levels } = physicalOf(self);
    const args = rest.slice();
    args[dimIndex] = physicalDim((rest[dimIndex] as number | undefined) ?? 0, self.ndim, levels.length);
    return (call(name, overload, t, ...args) as unknown as Tensor[]).map((p) => wrapPhysical(p, levels));
  };
}

/** One past the last storage element a (size, stride, offset) view reaches; undefined for an empty view. */
function storageEnd(size: readonly number[], stride: readonly number[], offset: number): number | undefined {
  let end = 1;
  for (let i = 0; i < size.length; i++) {
    if (size[i] === 0) return undefined;
    end += (size[i] - 1) * stride[i];
  }
  return end + offset;
}

const AS_STRIDED_REWRITE = 'This is not supported inside of vmap, please try to rewrite the `as_strided` call as a ' +
  'sequence of PyTorch view operations';

/**
 * PyTorch's `as_strided` batching rule. Each example `x[i]` of the physical tensor `xs` is viewed as if its storage
 * offset were `xs`'s: `y[i] = x[i].as_strided(size, stride, offset + x[i].storageOffset - xs.storageOffset)`, so
 * the batch dimensions keep their physical strides in front of the example's `stride`, and one `as_strided` of the
 * physical tensor makes every example's view. The view must stay inside the memory the first example can reach
 * (PyTorch's check and message), which keeps every example inside its own.
 */
function asStridedRule(
  _hi: number,
  _lo: number,
  self: Tensor,
  size: number[],
  stride: number[],
  storageOffset: number | null | undefined,
): Tensor {
  const { t, levels } = physicalOf(self);
  const k = levels.length;
  if (size.length !== stride.length) {
    throw new RuntimeError(
      'Tensor.as_strided(size, stride, ...): size and stride must have the same length! Got size ' +
        `[${size.join(', ')}] and stride [${stride.join(', ')}]`,
    );
  }
  const physicalStrides = t.stride();
  const baseOffset = t.storageOffset;
  const offset = storageOffset ?? baseOffset;
  const viewEnd = storageEnd(size, stride, offset);
  if (viewEnd !== undefined) {
    const call = `result = tensor.as_strided([${size.join(', ')}], [${stride.join(', ')}], ${offset}) can access ` +
      'memory outside of `tensor`.';
    const sliceEnd = storageEnd(t.shape.slice(k), physicalStrides.slice(k), baseOffset);
    if (sliceEnd === undefined) {
      throw new RuntimeError(
        `${call} \`tensor\` has no storage but the passed-in (size, stride, storage_offset) imply a result with some ` +
          `storage. ${AS_STRIDED_REWRITE}`,
      );
    }
    if (viewEnd > sliceEnd || offset < baseOffset) {
      throw new RuntimeError(
        `${call} \`result\` can access some memory in range [${offset}, ${viewEnd}], but \`tensor\` can only ` +
          `access some memory in range [${baseOffset}, ${sliceEnd}]. ${AS_STRIDED_REWRITE}`,
      );
    }
  }
  return wrapPhysical(
    call(
      'as_strided',
      '',
      t,
      [...batchSizes(t, k), ...size],
      [...physicalStrides.slice(0, k), ...stride],
      storageOffset ?? null,
    ),
    levels,
  );
}

function viewRules(): Record<string, BatchRule> {
  return {
    'as_strided': asStridedRule,
    'view': withSize('view'),
    '_unsafe_view': withSize('_unsafe_view'),
    'reshape': withSize('reshape'),
    'flatten.using_ints': (_hi, _lo, self: Tensor, start: number, end: number) => {
      const { t, levels } = physicalOf(self);
      const k = levels.length;
      if (self.ndim === 0) return wrapPhysical(call('reshape', '', t, [...batchSizes(t, k), 1]), levels);
      return wrapPhysical(
        call('flatten', 'using_ints', t, physicalDim(start, self.ndim, k), physicalDim(end, self.ndim, k)),
        levels,
      );
    },
    'unflatten.int': unaryPhysical('unflatten', 'int', firstDim),
    'permute': unaryPhysical('permute', '', (self, k, rest) => {
      const dims = rest[0] as number[];
      if (dims.length !== self.ndim) {
        throw new RuntimeError(
          'permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ' +
            `ordering of dimensions i.e. input.dim() = ${self.ndim} is not equal to len(dims) = ${dims.length}`,
        );
      }
      return [[...Array(k).keys(), ...dims.map((d) => physicalDim(d, self.ndim, k))]];
    }),
    'transpose.int': unaryPhysical('transpose', 'int', (self, k, rest) => [
      physicalDim(rest[0] as number, self.ndim, k),
      physicalDim(rest[1] as number, self.ndim, k),
    ]),
    't': (_hi, _lo, self: Tensor) => {
      if (self.ndim > 2) throw new RuntimeError(`t() expects a tensor with <= 2 dimensions, but self is ${self.ndim}D`);
      const { t, levels } = physicalOf(self);
      const k = levels.length;
      return wrapPhysical(self.ndim < 2 ? t : call('transpose', 'int', t, k, k + 1), levels);
    },
    'squeeze': (_hi, _lo, self: Tensor) => {
      const { t, levels } = physicalOf(self);
      let out = t;
      for (let d = self.ndim - 1; d >= 0; d--) {
        if (self.shape[d] === 1) out = call('squeeze', 'dim', out, d + levels.length);
      }
      return wrapPhysical(out, levels);
    },
    'squeeze.dim': (_hi, _lo, self: Tensor, dim: number) => {
      const { t, levels } = physicalOf(self);
      const k = levels.length;
      const d = physicalDim(dim, self.ndim, k);
      return wrapPhysical(self.ndim === 0 ? t : call('squeeze', 'dim', t, d), levels);
    },
    'unsqueeze': unaryPhysical('unsqueeze', '', (self, k, rest) => [physicalDim(rest[0] as number, self.ndim + 1, k)]),
    'select.int': unaryPhysical('select', 'int', firstDim),
    'slice.Tensor': unaryPhysical('slice', 'Tensor', firstDim),
    'diagonal': unaryPhysical('diagonal', '', (self, k, rest) => [
      rest[0],
      physicalDim(rest[1] as number, self.ndim, k),
      physicalDim(rest[2] as number, self.ndim, k),
    ]),
    'expand': (_hi, _lo, self: Tensor, size: number[], implicit: boolean) => {
      const { t, levels } = physicalOf(self);
      const k = levels.length;
      if (size.length < self.ndim) {
        throw new RuntimeError(
          `expand(${self.dtype.name}{[${self.shape.join(', ')}]}, size=[${size.join(', ')}]): the number of sizes ` +
            `provided (${size.length}) must be greater or equal to the number of dimensions in the tensor ` +
            `(${self.ndim})`,
        );
      }
      let p = t;
      for (let i = self.ndim; i < size.length; i++) p = call('unsqueeze', '', p, k);
      return wrapPhysical(call('expand', '', p, [...batchSizes(t, k), ...size], implicit), levels);
    },
    'contiguous': unaryPhysical('contiguous'),
    'clone': unaryPhysical('clone'),
    '_to_copy': unaryPhysical('_to_copy'),
    'flip': unaryPhysical(
      'flip',
      '',
      (self, k, rest) => [(rest[0] as number[]).map((d) => physicalDim(d, self.ndim, k))],
    ),
    'empty_like': unaryPhysical('empty_like'),
    'zeros_like': unaryPhysical('zeros_like'),
    'ones_like': unaryPhysical('ones_like'),
    'full_like': unaryPhysical('full_like'),
    'split.Tensor': listOfViews('split', 'Tensor', 1),
    'split_with_sizes': listOfViews('split_with_sizes', '', 1),
    'unbind.int': listOfViews('unbind', 'int', 0),
    'cat': (_hi, _lo, tensors: Tensor[], dim: number) => {
      const levels = unionLevels(tensors.map((x) => physicalOf(x).levels));
      const rank = Math.max(...tensors.map((x) => x.ndim));
      const parts = tensors.map((x) => alignPhysical(x, levels, x.ndim, true));
      return wrapPhysical(call('cat', '', parts, physicalDim(dim, rank, levels.length)), levels);
    },
  };
}

/** Rules of the indexing operators. */
function indexingRules(): Record<string, BatchRule> {
  const aligned = (xs: Tensor[]) => {
    const levels = unionLevels(xs.map((x) => physicalOf(x).levels));
    return { levels, ps: xs.map((x) => alignPhysical(x, levels, x.ndim, true)) };
  };
  return {
    'index_select': (_hi, _lo, self: Tensor, dim: number, index: Tensor) => {
      if (physicalOf(index).levels.length > 0) return forLoopFallback(aten('index_select'), [self, dim, index]);
      const { t, levels } = physicalOf(self);
      return wrapPhysical(call('index_select', '', t, physicalDim(dim, self.ndim, levels.length), index), levels);
    },
    'gather': (_hi, _lo, self: Tensor, dim: number, index: Tensor, sparse: boolean) => {
      const { levels, ps } = aligned([self, index]);
      return wrapPhysical(call('gather', '', ps[0], physicalDim(dim, self.ndim, levels.length), ps[1], sparse), levels);
    },
    'scatter_add': (_hi, _lo, self: Tensor, dim: number, index: Tensor, src: Tensor) => {
      const { levels, ps } = aligned([self, index, src]);
      return wrapPhysical(
        call('scatter_add', '', ps[0], physicalDim(dim, self.ndim, levels.length), ps[1], ps[2]),
        levels,
      );
    },
    'index_add': (_hi, _lo, self: Tensor, dim: number, index: Tensor, source: Tensor, alpha: unknown) => {
      if (physicalOf(index).levels.length > 0) {
        return forLoopFallback(aten('index_add'), [self, dim, index, source, alpha]);
      }
      const { levels, ps } = aligned([self, source]);
      return wrapPhysical(
        call('index_add', '', ps[0], physicalDim(dim, self.ndim, levels.length), index, ps[1], alpha),
        levels,
      );
    },
    'embedding': (_hi, _lo, weight: Tensor, indices: Tensor, ...rest: unknown[]) => {
      if (physicalOf(weight).levels.length > 0) return forLoopFallback(aten('embedding'), [weight, indices, ...rest]);
      const { t, levels } = physicalOf(indices);
      return wrapPhysical(call('embedding', '', weight, t, ...rest), levels);
    },
  };
}

addRuleTable(viewRules);
addRuleTable(indexingRules);
