/**
 * `nonzero`, `masked_select`, `where(condition)` and `unique` for WebGPU tensors, as asynchronous functions.
 *
 * Note [GPU nonzero]
 * The result's shape depends on the values. PyTorch's CUDA `nonzero` counts, copies the count to the host
 * (a synchronisation) and fills the result; WebGPU has no blocking readback, so the operator itself
 * (`nonzero(t)`, `t.nonzero()`) cannot run there and keeps refusing with an error naming these functions, which do
 * the same three steps with an `await` in the middle: a pass counting the nonzero elements of each chunk of
 * `CHUNK` elements (row-major, through the input's strides), a pass turning the counts into exclusive offsets and
 * the total, a readback of the total, then a pass writing each chunk's coordinates from its offset. The result
 * stays on the GPU, in PyTorch's row-major order.
 *
 * @module
 */
import { RuntimeError } from '../../core/dispatch/errors.ts';
import { bool, int32, int64 } from '../../core/tensor/dtype.ts';
import { broadcastShapes } from '../../core/tensor/shape.ts';
import { Tensor } from '../../core/tensor/tensor.ts';
import { aten } from '../../core/ops/aten_call.ts';
import {
  parseUniqueOptions,
  unique2Steps,
  uniqueDimSteps,
  type UniqueOptions,
  uniqueResult,
} from '../../core/ops/unique.ts';
import { KernelBindings } from '../boundary.ts';
import { emptyGpu } from '../tensors.ts';
import { convertWgsl, kindOf, loadWgsl } from '../wgsl/dtypes.ts';
import { runItems } from './custom.ts';

const CHUNK = 256;

/** WGSL: `off`, the element offset of row-major element `e` of a tensor of the rank's sizes and strides at `at`. */
function elementWalk(rank: number, at: number): string[] {
  const lines = ['var rest = e; var off = pi(2u);'];
  for (let d = rank - 1; d >= 0; d--) {
    lines.push(`{ let s = pw(${at + 2 * d}u); off = off + i32(rest % s) * pi(${at + 2 * d + 1}u); rest = rest / s; }`);
  }
  return lines;
}

async function nonzeroGpu(self: Tensor): Promise<Tensor> {
  const name = 'nonzero_webgpu';
  const kind = kindOf(self.dtype, name);
  const numel = self.numel, rank = self.ndim;
  const chunks = Math.max(1, Math.ceil(numel / CHUNK));
  const counts = emptyGpu([chunks + 1], int32);
  try {
    const isNonzero = convertWgsl('v', kind, bool, name);
    const walkParams = (q: { words: Uint32Array; ints: Int32Array }, slot: number, offset: number) => {
      q.words[slot + 1] = numel;
      q.ints[slot + 2] = offset;
      q.words[slot + 3] = CHUNK;
      self.shape.forEach((s, d) => {
        q.words[slot + 4 + 2 * d] = s;
        q.ints[slot + 5 + 2 * d] = self.stride()[d];
      });
    };
    const scan = (write?: { out: Tensor; slot: number }) => [
      'let start = t * pw(3u); let end = min(start + pw(3u), pw(1u));',
      write === undefined ? 'var count = 0u;' : `var count = b${write.slot}[t];`,
      'for (var e0 = start; e0 < end; e0 = e0 + 1u) {',
      '  let e = e0;',
      ...elementWalk(rank, 4).map((l) => `  ${l}`),
      `  let v = ${loadWgsl(self.dtype, 'bx', 'u32(off)')};`,
      `  if (${isNonzero} != 0i) {`,
      ...(write === undefined ? [] : [
        '    var r = e;',
        ...Array.from({ length: rank }, (_, k) => rank - 1 - k).map((d) =>
          `    { let s = pw(${4 + 2 * d}u); let row = (count * ${rank}u + ${d}u) * 2u; ` +
          `bo[row] = r % s; bo[row + 1u] = 0u; r = r / s; }`
        ),
      ]),
      '    count = count + 1u;',
      '  }',
      '}',
    ];
    if (numel > 0) {
      const b = new KernelBindings(name);
      const x = b.strided(self, self.shape, self.stride(), false);
      const c = b.contiguous(counts, chunks + 1, true);
      runItems({
        key: `nzcount|${self.dtype.name}|${rank}|${x.slot}${c.slot}`,
        bindings: b,
        words: 4 + 2 * rank,
        items: chunks,
        body: () => [...scan().map((l) => l.replaceAll('bx', `b${x.slot}`)), `b${c.slot}[t] = count;`],
        params: (q, slot) => walkParams(q, slot, x.offset),
      });
    }
    {
      const b = new KernelBindings(name);
      const c = b.contiguous(counts, chunks + 1, true);
      runItems({
        key: `nzoffsets|${c.slot}`,
        bindings: b,
        words: 2,
        items: 1,
        body: () => [
          'var acc = 0u;',
          `for (var k = 0u; k < pw(1u); k = k + 1u) { let v = b${c.slot}[k]; b${c.slot}[k] = acc; acc = acc + v; }`,
          `b${c.slot}[pw(1u)] = acc;`,
        ],
        params: (q, slot) => (q.words[slot + 1] = numel > 0 ? chunks : 0),
      });
    }
    const totalView = counts.narrow(0, numel > 0 ? chunks : 0, 1);
    let total: number;
    try {
      total = Number(await totalView.itemAsync());
    } finally {
      totalView.dispose();
    }
    const out = emptyGpu([total, rank], int64);
    try {
      if (total > 0 && rank > 0) {
        const b = new KernelBindings(name);
        const x = b.strided(self, self.shape, self.stride(), false);
        const c = b.contiguous(counts, chunks + 1, false);
        const o = b.contiguous(out, total * rank, true);
        runItems({
          key: `nzwrite|${self.dtype.name}|${rank}|${x.slot}${c.slot}${o.slot}`,
          bindings: b,
          words: 4 + 2 * rank,
          items: chunks,
          body: () =>
            scan({ out, slot: c.slot }).map((l) => l.replaceAll('bx', `b${x.slot}`).replaceAll('bo', `b${o.slot}`)),
          params: (q, slot) => walkParams(q, slot, x.offset),
        });
      }
      return out;
    } catch (e) {
      out.dispose();
      throw e;
    }
  } finally {
    counts.dispose();
  }
}

/**
 * `torch.nonzero(input)` for any device: the indices of the nonzero elements, one row per element in row-major
 * order (int64, `[count, ndim]`), on `input`'s device. On the CPU it is `nonzero(input)`; on WebGPU, where the
 * synchronous operator cannot size its result, it counts on the GPU, awaits the count, and fills the result there
 * (Note [GPU nonzero]).
 *
 * @example
 * ```ts
 * import { nonzeroAsync, tensor } from '../../mod.ts';
 * (await nonzeroAsync(tensor([0, 3, 0, 5]))).tolist(); // [[1], [3]]
 * ```
 */
export async function nonzeroAsync(input: Tensor): Promise<Tensor> {
  if (!Tensor.isTensor(input)) throw new TypeError('nonzeroAsync(): expected a Tensor as input');
  input.assertAlive('nonzeroAsync');
  if (input.device.type !== 'webgpu') return aten('nonzero').call(input) as Tensor;
  if (input.numel > 0x7fffffff) throw new RuntimeError('nonzero: the tensor is too large for the WebGPU kernels');
  return await nonzeroGpu(input);
}

/**
 * `torch.masked_select(input, mask)` for any device: the elements of `input` where the (broadcast) bool `mask` is
 * true, as a 1-d tensor on their device (through {@linkcode nonzeroAsync} and `index_select`, so it is
 * differentiable in `input`).
 *
 * @example
 * ```ts
 * import { maskedSelectAsync, tensor } from '../../mod.ts';
 * (await maskedSelectAsync(tensor([[1, 2], [3, 4]]), tensor([true, false]))).tolist(); // [1, 3]
 * ```
 */
export async function maskedSelectAsync(input: Tensor, mask: Tensor): Promise<Tensor> {
  if (!Tensor.isTensor(input) || !Tensor.isTensor(mask)) {
    throw new TypeError('maskedSelectAsync(): expected Tensors as input and mask');
  }
  if (mask.dtype !== bool) throw new RuntimeError('masked_select: expected BoolTensor for mask');
  if (input.device.type !== 'webgpu' && mask.device.type !== 'webgpu') {
    return aten('masked_select').call(input, mask) as Tensor;
  }
  const shape = broadcastShapes(input.shape, mask.shape);
  const expandedMask = mask.expand(shape);
  const flatMask = expandedMask.reshape([-1]);
  expandedMask.dispose();
  try {
    const positions = await nonzeroAsync(flatMask);
    try {
      const flat = positions.reshape([-1]);
      const expanded = input.expand(shape);
      const values = expanded.reshape([-1]);
      expanded.dispose();
      try {
        return values.indexSelect(0, flat);
      } finally {
        values.dispose();
        flat.dispose();
      }
    } finally {
      positions.dispose();
    }
  } finally {
    flatMask.dispose();
  }
}

/**
 * `torch.where(condition)` for any device: the indices of the nonzero elements of `condition`, one int64 tensor per
 * dimension (PyTorch's `nonzero(condition, as_tuple=True)`), on `condition`'s device, through
 * {@linkcode nonzeroAsync}.
 *
 * @example
 * ```ts
 * import { tensor, whereAsync } from '../../mod.ts';
 * const [rows, cols] = await whereAsync(tensor([[0, 2], [3, 0]]));
 * rows.tolist(); // [0, 1]
 * cols.tolist(); // [1, 0]
 * ```
 */
export async function whereAsync(condition: Tensor): Promise<Tensor[]> {
  if (!Tensor.isTensor(condition)) throw new TypeError("whereAsync(): argument 'condition' must be Tensor");
  condition.assertAlive('whereAsync');
  if (condition.device.type !== 'webgpu') return aten('where').call(condition) as Tensor[];
  const positions = await nonzeroAsync(condition);
  try {
    // A 0-d condition has one (empty) coordinate row per true element and no column: PyTorch gives one
    // index tensor, of the count, in that case (nonzero treats it as 1-d).
    if (condition.ndim === 0) {
      return [aten('zeros').call([positions.shape[0]], int64, null, condition.device, null) as Tensor];
    }
    return positions.unbind(1).map((column) => {
      const own = column.contiguous();
      if (own !== column) column.dispose();
      return own;
    });
  } finally {
    positions.dispose();
  }
}

/**
 * `torch.unique(input, ...)` for any device: the same results as {@linkcode unique} (sorted unique values or slices
 * along `dim`, and the inverse indices and/or counts when asked for), computed on `input`'s device. On WebGPU the
 * one step whose size depends on the values (where the runs of equal values start) awaits a GPU count (Note
 * [unique's one data-dependent step] in core/ops/unique.ts); everything else is the operator's own code.
 *
 * @example
 * ```ts
 * import { type Tensor, tensor, uniqueAsync } from '../../mod.ts';
 * const [values, counts] = await uniqueAsync(tensor([2, 1, 2]), { returnCounts: true }) as Tensor[];
 * values.tolist(); // [1, 2]
 * counts.tolist(); // [1, 2]
 * ```
 */
export async function uniqueAsync(input: Tensor, options: UniqueOptions = {}): Promise<Tensor | Tensor[]> {
  const { dim, sorted, inv, cnt } = parseUniqueOptions('uniqueAsync', input, options);
  input.assertAlive('uniqueAsync');
  const steps = dim === null ? unique2Steps(input, sorted, inv, cnt) : uniqueDimSteps(input, dim, sorted, inv, cnt);
  let step = steps.next();
  while (!step.done) {
    let found: Tensor;
    try {
      found = await nonzeroAsync(step.value);
    } catch (e) {
      steps.return([] as unknown as [Tensor, Tensor, Tensor]); // disposes the steps' temporaries
      throw e;
    }
    step = steps.next(found);
  }
  return uniqueResult(step.value, inv, cnt);
}
