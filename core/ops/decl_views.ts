/**
 * Declarations of the view, layout and copy operators: views (`view`, `permute`, `select`, `slice`, ...)
 * share storage and version counter with their base and are one kernel for every backend; copies (`clone`,
 * `copy_`, `_to_copy`, `cat`, `flip`) are backend kernels with a Meta function; `reshape`, `contiguous`,
 * `to`, `stack`, `chunk`, ... decompose into those.
 *
 * @module
 */
import type { OpDecl } from './op_decl.ts';
import { catDefaultBackend } from './default_backend.ts';
import { catMeta, cloneMeta, copyMeta, flipMeta, toCopyMeta } from './view_copy_meta.ts';
import { DECOMPOSITION_IMPLS as D, VIEW_IMPLS as V } from './view_ops.ts';

/** Names of the view and copy operators that every backend implements. */
export type ViewBackendOpName = 'clone' | 'copy_' | '_to_copy' | 'cat' | 'flip';

/** Names of the view and copy operators implemented once for all backends. */
export type ViewCompositeOpName =
  | 'view'
  | '_unsafe_view'
  | 'reshape'
  | 'flatten.using_ints'
  | 'unflatten.int'
  | 'permute'
  | 'transpose.int'
  | 't'
  | 'squeeze'
  | 'squeeze.dim'
  | 'unsqueeze'
  | 'expand'
  | 'expand_as'
  | 'narrow'
  | 'select.int'
  | 'slice.Tensor'
  | 'as_strided'
  | 'diagonal'
  | 'contiguous'
  | 'to.dtype'
  | 'to.dtype_layout'
  | 'to.other'
  | 'stack'
  | 'split.Tensor'
  | 'split.sizes'
  | 'split_with_sizes'
  | 'chunk'
  | 'unbind.int';

const both: Partial<OpDecl> = { method: true };
const methodOnly: Partial<OpDecl> = { function: false, method: true };

const explicit = (schema: string, impl: OpDecl['impl'], doc: string, extra: Partial<OpDecl> = both): OpDecl => ({
  ...extra,
  schema,
  kind: 'composite-explicit',
  impl,
  doc,
});
const implicit = (schema: string, impl: OpDecl['impl'], doc: string, extra: Partial<OpDecl> = both): OpDecl => ({
  ...extra,
  schema,
  kind: 'composite-implicit',
  impl,
  doc,
});
const backend = (schema: string, meta: OpDecl['meta'], doc: string, extra: Partial<OpDecl> = both): OpDecl => ({
  ...extra,
  schema,
  kind: 'backend',
  meta,
  doc,
});

/**
 * Declarations of the view and copy operators, keyed by PyTorch's `name.overload`.
 *
 * @example
 * ```ts
 * import { VIEW_OPS } from './decl_views.ts';
 * VIEW_OPS['transpose.int'].kind; // 'composite-explicit'
 * ```
 */
export const VIEW_OPS: { readonly [K in ViewBackendOpName | ViewCompositeOpName]: OpDecl } = {
  'view': explicit(
    'view(Tensor(a) self, SymInt[] size) -> Tensor(a)',
    V.view,
    'A view with a new shape (one size may be -1); fails when the strides cannot express it, see `reshape`.',
  ),
  '_unsafe_view': explicit(
    '_unsafe_view(Tensor self, SymInt[] size) -> Tensor',
    V.unsafeView,
    'A reshaped alias that autograd does not treat as a view (what `reshape` returns for its copy).',
    { function: false },
  ),
  'reshape': implicit(
    'reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)',
    D.reshape,
    'A tensor with a new shape: a view when the strides allow one, otherwise a contiguous copy.',
  ),
  'flatten.using_ints': implicit(
    'flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)',
    D.flatten,
    'Merges dims `start_dim..end_dim` into one (a view when possible).',
  ),
  'unflatten.int': implicit(
    'unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)',
    D.unflatten,
    'Splits dim `dim` into `sizes` (one may be -1).',
  ),
  'permute': explicit(
    'permute(Tensor(a) self, int[] dims) -> Tensor(a)',
    V.permute,
    'A view with the dims reordered.',
  ),
  'transpose.int': explicit(
    'transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)',
    V.transpose,
    'A view with two dims swapped.',
  ),
  't': explicit('t(Tensor(a) self) -> Tensor(a)', V.t, 'Transposes a tensor of at most 2 dims (a view).'),
  'squeeze': explicit('squeeze(Tensor(a) self) -> Tensor(a)', V.squeeze, 'A view without the size-1 dims.'),
  'squeeze.dim': explicit(
    'squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)',
    V.squeezeDim,
    'A view without dim `dim` if its size is 1.',
  ),
  'unsqueeze': explicit(
    'unsqueeze(Tensor(a) self, int dim) -> Tensor(a)',
    V.unsqueeze,
    'A view with a size-1 dim inserted at `dim`.',
  ),
  'expand': explicit(
    'expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)',
    V.expand,
    'A view broadcast to `size` (size-1 dims repeat with stride 0; -1 keeps a size).',
  ),
  'expand_as': implicit(
    'expand_as(Tensor(a) self, Tensor other) -> Tensor(a)',
    D.expandAs,
    "`expand` to `other`'s shape.",
  ),
  'narrow': implicit(
    'narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)',
    D.narrow,
    'A view of `length` elements of dim `dim` from `start`.',
  ),
  'select.int': explicit(
    'select.int(Tensor(a) self, int dim, int index) -> Tensor(a)',
    V.select,
    'A view of index `index` of dim `dim`, which is removed.',
  ),
  'slice.Tensor': explicit(
    'slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)',
    V.slice,
    'A view of `start:end:step` along `dim` (Python slice bounds, clamped; positive step).',
  ),
  'as_strided': explicit(
    'as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)',
    V.asStrided,
    "A view of the storage with the given sizes, strides and offset (default: `self`'s offset).",
  ),
  'diagonal': explicit(
    'diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)',
    V.diagonal,
    'A view of the diagonal of dims `dim1`, `dim2` (moved last), `offset` above the main one.',
  ),
  'contiguous': implicit(
    'contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)',
    D.contiguous,
    '`self` when it is contiguous, else a contiguous copy.',
  ),
  'clone': backend(
    'clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor',
    cloneMeta,
    "A copy (by default keeping `self`'s dimension order).",
  ),
  'copy_': backend(
    'copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)',
    copyMeta,
    'Copies `src` into `self`, broadcasting and converting dtype.',
    methodOnly,
  ),
  '_to_copy': backend(
    '_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, ' +
      'bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor',
    toCopyMeta,
    'A copy with another dtype and/or device (what `to` calls when it must copy).',
    { function: '_toCopy' },
  ),
  'to.dtype': implicit(
    'to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, ' +
      'MemoryFormat? memory_format=None) -> Tensor(a)',
    D.toDtype,
    '`self` converted to a dtype; `self` itself when the dtype is unchanged and `copy` is false.',
    {
      ...methodOnly,
      python: 'to(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, *, ' +
        'MemoryFormat? memory_format=None) -> Tensor(a)',
    },
  ),
  'to.dtype_layout': implicit(
    'to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, ' +
      'bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)',
    D.toDtypeLayout,
    '`self` on another device and/or dtype; `self` itself when nothing changes and `copy` is false.',
    {
      ...methodOnly,
      // PyTorch's Tensor.to binds `to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format)`
      // (python_variable_methods.cpp), positionally, before its dtype and tensor forms.
      python: 'to(Tensor(a) self, Device? device=None, ScalarType? dtype=None, bool non_blocking=False, ' +
        'bool copy=False, *, MemoryFormat? memory_format=None) -> Tensor(a)',
    },
  ),
  'to.other': implicit(
    'to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, ' +
      'MemoryFormat? memory_format=None) -> Tensor(a)',
    D.toOther,
    "`self` with `other`'s dtype and device; `self` itself when both match and `copy` is false.",
    {
      ...methodOnly,
      python: 'to(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, *, ' +
        'MemoryFormat? memory_format=None) -> Tensor(a)',
    },
  ),
  'cat': backend(
    'cat(Tensor[] tensors, int dim=0) -> Tensor',
    catMeta,
    'Concatenates tensors along `dim` (promoting dtypes; 1-d empty tensors are skipped).',
    { defaultBackend: catDefaultBackend },
  ),
  'stack': implicit(
    'stack(Tensor[] tensors, int dim=0) -> Tensor',
    D.stack,
    'Stacks equal-shaped tensors along a new dim `dim`.',
    {},
  ),
  'split.sizes': implicit(
    'split.sizes(Tensor(a -> *) self, int[] split_size, int dim=0) -> Tensor(a)[]',
    D.splitSizes,
    'Views of chunks of the given sizes along `dim`.',
    // Listed before `split.Tensor`: codegen tries overloads in order and tells these apart by the list.
  ),
  'split.Tensor': explicit(
    'split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]',
    V.split,
    'Views of consecutive `split_size` chunks along `dim` (the last may be shorter), or of the given sizes.',
  ),
  'split_with_sizes': explicit(
    'split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]',
    V.splitWithSizes,
    'Views of chunks of the given sizes along `dim` (they must add up to its size).',
  ),
  'chunk': implicit(
    'chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]',
    D.chunk,
    'Views splitting `dim` into at most `chunks` equal chunks (the last may be smaller).',
  ),
  'unbind.int': explicit(
    'unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]',
    V.unbind,
    'Views of every index of `dim`, which is removed.',
  ),
  'flip': backend(
    'flip(Tensor self, int[] dims) -> Tensor',
    flipMeta,
    'A copy with the order of elements reversed along `dims`.',
  ),
};
