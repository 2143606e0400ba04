/**
 * The reduction engine: one generated kernel shape for sum, prod, mean, max/min, argmax/argmin and max/min with
 * indices, over any strided input.
 *
 * Note [GPU reduction plan]
 * The input's dims split into kept dims (one result element per combination) and reduced dims, each read
 * through the input's own strides, so no reduction copies its input. An invocation reduces one slice of the
 * reduced elements of one result element, in row-major order of the reduced dims (so argmax's index counts as
 * PyTorch's does, and ties keep the first). With few results and many reduced elements (a full `sum` of 16M
 * values) the reduced elements are split into `P` slices, one invocation each, whose partial results a second
 * pass over a `[results, P]` tensor combines: every invocation then has work, and float sums add in a tree
 * rather than in one long chain. Sums accumulate in the result's compute kind (float32 for float types, as
 * PyTorch's CUDA `acc_type` does; int64 for integer sums).
 *
 * @module
 */
import { bool, type DType, float32, int32, int64 } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { numelOf } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import { reducedShape } from '../../core/ops/meta_reductions.ts';
import { KernelBindings } from '../boundary.ts';
import { emptyGpu } from '../tensors.ts';
import { bindingsWgsl } from '../pipelines.ts';
import { gpuRuntime } from '../runtime.ts';
import { convertKind, FLOAT_WGSL, I64_WGSL, type Kind, kindOf, loadWgsl, storeWgsl, wgslType } from '../wgsl/dtypes.ts';
import { MATH_WGSL } from '../wgsl/math.ts';

/** What a reduction computes. */
export type ReduceOp = 'sum' | 'prod' | 'mean' | 'max' | 'min' | 'argmax' | 'argmin';

const SPLIT_BELOW_RESULTS = 4096;
const SLICE = 1024;

function combine(op: ReduceOp, kind: Kind): string {
  switch (op) {
    case 'sum':
    case 'mean':
      return kind === 'i64' ? 'i64_add(acc, v)' : 'acc + v';
    case 'prod':
      return kind === 'i64' ? 'i64_mul(acc, v)' : 'acc * v';
    case 'max':
      return kind === 'f32' ? 'max_nan(acc, v)' : kind === 'i32' ? 'max(acc, v)' : 'i64_max(acc, v)';
    case 'min':
      return kind === 'f32' ? 'min_nan(acc, v)' : kind === 'i32' ? 'min(acc, v)' : 'i64_min(acc, v)';
    default:
      return 'acc';
  }
}

function identity(op: ReduceOp, kind: Kind): string {
  const one = op === 'prod';
  if (kind === 'f32') return one ? '1.0' : '0.0';
  if (kind === 'i32') return one ? '1i' : '0i';
  return one ? 'vec2<u32>(1u, 0u)' : 'vec2<u32>(0u, 0u)';
}

/** Whether `v` replaces `best` in argmax/argmin: strictly better, or the first NaN (ties keep the first). */
function better(op: 'argmax' | 'argmin', kind: Kind): string {
  const cmp = op === 'argmax' ? '>' : '<';
  if (kind === 'f32') return `(is_nan(v) && !is_nan(acc)) || (!is_nan(acc) && v ${cmp} acc)`;
  if (kind === 'i32') return `v ${cmp} acc`;
  return op === 'argmax' ? 'i64_lt(acc, v)' : 'i64_lt(v, acc)';
}

/** One pass: `out[o * P + p]` = reduction of slice `p` of result `o`'s reduced elements. */
function pass(
  op: ReduceOp,
  input: Tensor,
  mask: readonly boolean[],
  out: Tensor,
  indices: Tensor | undefined,
  slices: number,
  divisor: number,
): void {
  const rt = gpuRuntime();
  const kept = input.shape.map((_, d) => d).filter((d) => !mask[d] && input.shape[d] !== 1);
  const reduced = input.shape.map((_, d) => d).filter((d) => mask[d] && input.shape[d] !== 1);
  const strides = input.stride();
  const results = numelOf(kept.map((d) => input.shape[d]));
  const R = numelOf(reduced.map((d) => input.shape[d]));
  const chunk = Math.ceil(R / slices);
  const bindings = new KernelBindings(`${op}_webgpu`);
  const a = bindings.strided(input, input.shape, strides, false);
  const o = bindings.contiguous(out, results * slices, true);
  const x = indices === undefined ? undefined : bindings.contiguous(indices, results * slices, true);
  const nk = kept.length, nr = reduced.length;
  const words = 7 + 2 * (nk + nr);
  const inKind = kindOf(input.dtype, `${op}_webgpu`);
  const arg = op === 'argmax' || op === 'argmin';
  const kind = arg || indices !== undefined ? inKind : kindOf(accumulatorDtype(op, out), op);
  const key = `red|${op}|${input.dtype.name}|${out.dtype.name}|${indices !== undefined}|${nk}|${nr}|` +
    `${a.slot}${o.slot}${x?.slot ?? ''}`;
  const wg = rt.workgroupSize;
  const kernel = rt.pipelines.kernel(key, () => {
    const keptIndex: string[] = [], redIndex: string[] = [];
    for (let d = nk - 1; d >= 0; d--) {
      keptIndex.push(`{ let s = pw(${7 + d}u); base = base + i32(rest % s) * pi(${7 + nk + d}u); rest = rest / s; }`);
    }
    for (let d = nr - 1; d >= 0; d--) {
      const at = 7 + 2 * nk;
      redIndex.push(`{ let s = pw(${at + d}u); off = off + i32(q % s) * pi(${at + nr + d}u); q = q / s; }`);
    }
    const load = loadWgsl(input.dtype, `b${a.slot}`, 'u32(off)');
    const loaded = convertKind(load, inKind, kind);
    const step = arg || indices !== undefined
      ? `if (r == start || ${
        better(op === 'max' || op === 'argmax' ? 'argmax' : 'argmin', kind)
      }) { acc = v; best = r; }`
      : op === 'max' || op === 'min'
      ? `if (r == start) { acc = v; } else { acc = ${combine(op, kind)}; }`
      : `acc = ${combine(op, kind)};`;
    const init = arg || indices !== undefined
      ? `var acc: ${wgslType(kind)} = ${identity('sum', kind)};`
      : `var acc: ${wgslType(kind)} = ${identity(op, kind)};`;
    let result = 'acc';
    if (op === 'mean') result = 'acc / pf(6u)';
    const store: string[] = [];
    if (arg) {
      store.push(storeWgsl(int64, `b${o.slot}`, 'u32(pi(5u)) + t', 'i64_from_i32(i32(best))'));
    } else {
      store.push(storeWgsl(out.dtype, `b${o.slot}`, 'u32(pi(5u)) + t', convertOut(result, kind, out.dtype)));
      if (x !== undefined) store.push(storeWgsl(int64, `b${x.slot}`, 'u32(pi(5u)) + t', 'i64_from_i32(i32(best))'));
    }
    const wgsl = [
      bindingsWgsl(bindings.access, words),
      FLOAT_WGSL,
      I64_WGSL,
      MATH_WGSL,
      `@compute @workgroup_size(${wg}) fn main(@builtin(global_invocation_id) gid: vec3<u32>, ` +
      '@builtin(num_workgroups) nwg: vec3<u32>) {',
      `  let total = nwg.x * ${wg}u; let slices = pw(3u); let count = pw(0u) * slices;`,
      '  for (var t = gid.x; t < count; t = t + total) {',
      '    var rest = t / slices; var base = pi(4u);',
      ...keptIndex.map((l) => `    ${l}`),
      '    let start = (t % slices) * pw(2u); let end = min(start + pw(2u), pw(1u));',
      `    ${init} var best = start;`,
      '    for (var r = start; r < end; r = r + 1u) {',
      '      var q = r; var off = base;',
      ...redIndex.map((l) => `      ${l}`),
      `      let v = ${loaded};`,
      `      ${step}`,
      '    }',
      ...store.map((l) => `    ${l}`),
      '  }',
      '}',
    ].join('\n');
    return { wgsl, access: [...bindings.access], paramWords: words };
  });
  const q = rt.queue;
  const slot = q.params(words);
  q.words[slot] = results;
  q.words[slot + 1] = R;
  q.words[slot + 2] = chunk;
  q.words[slot + 3] = slices;
  q.ints[slot + 4] = a.offset;
  q.ints[slot + 5] = o.offset;
  q.floats[slot + 6] = divisor;
  kept.forEach((d, i) => {
    q.words[slot + 7 + i] = input.shape[d];
    q.ints[slot + 7 + nk + i] = strides[d];
  });
  reduced.forEach((d, i) => {
    q.words[slot + 7 + 2 * nk + i] = input.shape[d];
    q.ints[slot + 7 + 2 * nk + nr + i] = strides[d];
  });
  const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, bindings.buffers);
  const groups = Math.min(Math.ceil((results * slices) / wg), rt.maxGroups);
  q.dispatch(kernel.pipeline, group, slot, bindings.buffers, Math.max(groups, 1));
}

function convertOut(v: string, kind: Kind, out: DType): string {
  if (out === bool) {
    return kind === 'f32'
      ? `select(0i, 1i, ${v} != 0.0)`
      : kind === 'i64'
      ? `select(0i, 1i, i64_nonzero(${v}))`
      : `select(0i, 1i, ${v} != 0i)`;
  }
  const target = kindOf(out, 'reduce');
  return convertKind(v, kind, target);
}

/** The dtype a reduction accumulates in: the result's, widened to float32 for reduced floats. */
function accumulatorDtype(op: ReduceOp, out: Tensor): DType {
  const kind = kindOf(out.dtype, op);
  return kind === 'f32' ? float32 : kind === 'i64' ? int64 : int32;
}

/**
 * Reduces `input` over the dims `mask` marks into a new contiguous GPU tensor of `outDtype` (and, for
 * `withIndices`, an int64 tensor of the positions of the maxima or minima): Note [GPU reduction plan].
 *
 * @example
 * ```ts
 * import { reduce } from './reduce_engine.ts';
 * // const [sums] = reduce('sum', x, [false, true], false, float32);
 * ```
 */
export function reduce(
  op: ReduceOp,
  input: Tensor,
  mask: readonly boolean[],
  keepdim: boolean,
  outDtype: DType,
  withIndices = false,
): Tensor[] {
  const shape = reducedShape(input.shape, mask, keepdim);
  const results = numelOf(shape);
  const R = numelOf(input.shape.filter((_, d) => mask[d]));
  const outputs: Tensor[] = [];
  try {
    const out = emptyGpu(shape, outDtype);
    outputs.push(out);
    const indices = withIndices ? emptyGpu(shape, int64) : undefined;
    if (indices !== undefined) outputs.push(indices);
    if (results === 0) return outputs;
    const arg = op === 'argmax' || op === 'argmin' || withIndices;
    const split = !arg && results < SPLIT_BELOW_RESULTS && R > 2 * SLICE;
    if (!split) {
      pass(op, input, mask, out, indices, 1, R);
      return outputs;
    }
    const slices = Math.ceil(R / SLICE);
    const accumulator = accumulatorDtype(op, out);
    const partialOp: ReduceOp = op === 'mean' ? 'sum' : op;
    const partial = filledOrFreed(emptyGpu([results, slices], accumulator), (p) => {
      pass(partialOp, input, mask, p, undefined, slices, 1);
    });
    try {
      pass(op, partial, [false, true], out, undefined, 1, R);
    } finally {
      partial.dispose();
    }
    return outputs;
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}
