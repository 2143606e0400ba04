/**
 * WebGPU kernels of the NN operators: softmax / log-softmax and their backward (one invocation per row of the
 * softmax dim, over a dense `[outer, R, inner]` view, max-subtracted in f32), and nll_loss forward / backward
 * over `[N, C]` log-probabilities. A class target out of range is a device-side error (Note [Device-side
 * errors] in gpu/commands.ts): PyTorch's CUDA kernel asserts on the device too.
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../../core/dispatch/errors.ts';
import { type DType, float32 } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { numelOf, wrapDim } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { NnBackendOpName } from '../../core/ops/decl_nn.ts';
import { checkSameScalarType } from '../../core/ops/meta_linalg.ts';
import {
  checkNllDtypes,
  nllLossBackwardShapes,
  nllLossForwardShapes,
  softmaxBackwardMeta,
  softmaxMeta,
} from '../../core/ops/meta_nn.ts';
import { KernelBindings } from '../boundary.ts';
import { DeviceError, kernelId } from '../commands.ts';
import { emptyGpu } from '../tensors.ts';
import { loadWgsl, storeWgsl } from '../wgsl/dtypes.ts';
import { copyInto } from './copy.ts';
import { runItems } from './custom.ts';
import { fill } from './elementwise.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** `t` itself when contiguous and of `dtype`, else a contiguous copy of that dtype (the caller frees it). */
function dense(t: Tensor, dtype: DType = t.dtype): Tensor {
  return t.dtype === dtype && t.isContiguous() ? t : filledOrFreed(emptyGpu(t.shape, dtype), (o) => copyInto(o, t));
}

function softmaxBlocks(shape: readonly number[], dim: number): [number, number, number] {
  if (shape.length === 0) return [1, 1, 1];
  const d = wrapDim(dim, shape.length);
  return [numelOf(shape.slice(0, d)), shape[d], numelOf(shape.slice(d + 1))];
}

function checkFloating(name: string, dtype: DType): void {
  if (!dtype.isFloatingPoint || dtype.name === 'float64') {
    throw new NotImplementedError(`"${name}" not implemented for '${dtype.scalarTypeName}'`);
  }
}

/** Per-row WGSL prologue: `base` (element of r = 0) and `step` (between r and r + 1) of row `t`. */
const ROW = 'let inner = pw(2u); let R = pw(1u); let base = (t / inner) * R * inner + t % inner; let step = inner;';

function softmaxForward(log: boolean): Kernel {
  const op = log ? '_log_softmax' : '_softmax';
  return ((_hi: number, _lo: number, self: Tensor, dim: number, halfToFloat: boolean) => {
    const m = softmaxMeta(op, self, dim, halfToFloat);
    checkFloating(`${log ? 'log_' : ''}softmax_webgpu`, self.dtype);
    const input = dense(self);
    try {
      return filledOrFreed(emptyGpu(m.shape, m.dtype), (out) => {
        const [outer, R, inner] = softmaxBlocks(self.shape, dim);
        const n = outer * R * inner;
        if (n === 0) return;
        const b = new KernelBindings(op);
        const pi = b.contiguous(input, n, false), po = b.contiguous(out, n, true);
        const x = (r: string) => loadWgsl(input.dtype, `b${pi.slot}`, `pw(3u) + base + (${r}) * step`);
        const write = log ? 'v - mx - log(sum)' : 'exp(v - mx) / sum';
        runItems({
          key: `softmax|${log}|${input.dtype.name}|${out.dtype.name}|${pi.slot}${po.slot}`,
          bindings: b,
          words: 5,
          items: outer * inner,
          body: () => [
            ROW,
            'var mx = -inf_f();',
            `for (var r = 0u; r < R; r = r + 1u) { mx = max_nan(mx, ${x('r')}); }`,
            'var sum = 0.0;',
            `for (var r = 0u; r < R; r = r + 1u) { sum = sum + exp(${x('r')} - mx); }`,
            `for (var r = 0u; r < R; r = r + 1u) { let v = ${x('r')}; ${
              storeWgsl(out.dtype, `b${po.slot}`, 'pw(4u) + base + r * step', `(${write})`)
            } }`,
          ],
          params: (q, slot) => {
            q.words[slot + 1] = R;
            q.words[slot + 2] = inner;
            q.words[slot + 3] = pi.offset;
            q.words[slot + 4] = po.offset;
          },
        });
      });
    } finally {
      if (input !== self) input.dispose();
    }
  }) as Kernel;
}

function softmaxBackward(log: boolean): Kernel {
  const op = log ? '_log_softmax_backward_data' : '_softmax_backward_data';
  return ((_hi: number, _lo: number, grad: Tensor, output: Tensor, dim: number, inputDtype: DType) => {
    const m = softmaxBackwardMeta(grad, output, dim, inputDtype);
    checkFloating(`${log ? 'log_' : ''}softmax_backward_webgpu`, grad.dtype);
    checkSameScalarType(grad.dtype, output.dtype);
    const g = dense(grad), y = dense(output);
    try {
      return filledOrFreed(emptyGpu(m.shape, m.dtype), (out) => {
        const [outer, R, inner] = softmaxBlocks(grad.shape, dim);
        const n = outer * R * inner;
        if (n === 0) return;
        const b = new KernelBindings(op);
        const pg = b.contiguous(g, n, false), py = b.contiguous(y, n, false), po = b.contiguous(out, n, true);
        const G = (r: string) => loadWgsl(g.dtype, `b${pg.slot}`, `pw(3u) + base + (${r}) * step`);
        const Y = (r: string) => loadWgsl(y.dtype, `b${py.slot}`, `pw(4u) + base + (${r}) * step`);
        const total = log ? G('r') : `${G('r')} * ${Y('r')}`;
        const value = log ? `${G('r')} - exp(${Y('r')}) * sum` : `${Y('r')} * (${G('r')} - sum)`;
        runItems({
          key: `softmax_bw|${log}|${g.dtype.name}|${out.dtype.name}|${pg.slot}${py.slot}${po.slot}`,
          bindings: b,
          words: 6,
          items: outer * inner,
          body: () => [
            ROW,
            'var sum = 0.0;',
            `for (var r = 0u; r < R; r = r + 1u) { sum = sum + ${total}; }`,
            `for (var r = 0u; r < R; r = r + 1u) { ${
              storeWgsl(out.dtype, `b${po.slot}`, 'pw(5u) + base + r * step', `(${value})`)
            } }`,
          ],
          params: (q, slot) => {
            q.words[slot + 1] = R;
            q.words[slot + 2] = inner;
            q.words[slot + 3] = pg.offset;
            q.words[slot + 4] = py.offset;
            q.words[slot + 5] = po.offset;
          },
        });
      });
    } finally {
      if (g !== grad) g.dispose();
      if (y !== output) y.dispose();
    }
  }) as Kernel;
}

/** The dense operands of nll_loss: log-probabilities, targets, optional weights (as float32 values). */
function nllOperands(self: Tensor, target: Tensor, weight: Tensor | null, ignoreIndex: number) {
  if (!Number.isSafeInteger(ignoreIndex) || Math.abs(ignoreIndex) > 0x7fffffff) {
    throw new RuntimeError(`nll_loss: ignore_index ${ignoreIndex} does not fit the WebGPU kernels' 32-bit parameter`);
  }
  const logp = dense(self), t = dense(target), w = weight === null ? null : dense(weight);
  const classes = self.shape[self.ndim - 1];
  const batch = self.ndim === 2 ? self.shape[0] : 1;
  const release = () => {
    if (logp !== self) logp.dispose();
    if (t !== target) t.dispose();
    if (w !== null && w !== weight) w.dispose();
  };
  return { logp, t, w, classes, batch, release };
}

/**
 * WGSL of item `t`'s class `c` (an i32), its weight `wc` and whether it counts (`ok`), reporting bad targets;
 * and the element offsets of the targets and weights, which the kernel reads from parameter words 7 and 8.
 */
function targetWgsl(b: KernelBindings, ops: ReturnType<typeof nllOperands>, kernel: number) {
  const pt = b.contiguous(ops.t, ops.batch, false);
  const pw = ops.w === null ? undefined : b.contiguous(ops.w, ops.classes, false);
  const raw = loadWgsl(ops.t.dtype, `b${pt.slot}`, 'pw(7u) + b');
  const target = ops.t.dtype.name === 'int64' ? raw : `i64_from_i32(${raw})`;
  const lines = [
    `let tv = ${target};`,
    'let C = pi(3u);',
    'let ignored = i64_eq(tv, i64_from_i32(pi(2u)));',
    'let inside = !i64_lt(tv, vec2<u32>(0u)) && i64_lt(tv, i64_from_i32(C));',
    `if (!ignored && !inside) { report(${DeviceError.targetOutOfBounds}u, ${kernel}u, tv.x, tv.y); }`,
    'let ok = !ignored && inside;',
    'let c = select(0i, bitcast<i32>(tv.x), ok);',
    `let wc = select(0.0, ${pw === undefined ? '1.0' : loadWgsl(ops.w!.dtype, `b${pw.slot}`, 'pw(8u) + u32(c)')}, ok);`,
  ];
  return { lines, offsets: [pt.offset, pw?.offset ?? 0] };
}

function nllLossForward(
  _hi: number,
  _lo: number,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
): [Tensor, Tensor] {
  const [outMeta, totalMeta] = nllLossForwardShapes(self, target, weight, reduction);
  checkFloating('nll_loss_forward_out_webgpu', self.dtype);
  checkNllDtypes(self, target, weight);
  const ops = nllOperands(self, target, weight, ignoreIndex);
  const outputs: Tensor[] = [];
  try {
    const output = emptyGpu(outMeta.shape, outMeta.dtype);
    outputs.push(output);
    const total = emptyGpu(totalMeta.shape, totalMeta.dtype);
    outputs.push(total);
    const b = new KernelBindings('nll_loss_forward');
    const pl = b.contiguous(ops.logp, ops.batch * ops.classes, false);
    const po = b.contiguous(output, reduction === 0 ? ops.batch : 1, true);
    const ptw = b.contiguous(total, 1, true);
    const targets = targetWgsl(b, ops, kernelId('nll_loss_forward')); // binds the targets and weights now
    const lp = loadWgsl(ops.logp.dtype, `b${pl.slot}`, 'pw(4u) + b * u32(C) + u32(c)');
    const perItem = reduction === 0;
    const body = () => [
      ...(perItem
        ? ['let b = t;']
        : ['var sum = 0.0; var weights = 0.0;', 'for (var b = 0u; b < pw(1u); b = b + 1u) {']),
      ...targets.lines,
      `let loss = select(0.0, -wc * ${lp}, ok);`,
      ...(perItem
        ? [
          storeWgsl(output.dtype, `b${po.slot}`, 'pw(5u) + b', 'loss'),
          `if (t == 0u) { ${storeWgsl(total.dtype, `b${ptw.slot}`, 'pw(6u)', '0.0')} }`,
        ]
        : [
          'sum = sum + loss; weights = weights + wc;',
          '}',
          storeWgsl(output.dtype, `b${po.slot}`, 'pw(5u)', reduction === 1 ? '(sum / weights)' : 'sum'),
          storeWgsl(total.dtype, `b${ptw.slot}`, 'pw(6u)', 'weights'),
        ]),
    ];
    runItems({
      key: `nll|${reduction}|${self.dtype.name}|${target.dtype.name}|${weight !== null}|${b.access.join()}`,
      bindings: b,
      words: 9,
      items: perItem ? ops.batch : 1,
      body,
      params: (q, slot) => {
        q.words[slot + 1] = ops.batch;
        q.ints[slot + 2] = ignoreIndex;
        q.ints[slot + 3] = ops.classes;
        [pl.offset, po.offset, ptw.offset, ...targets.offsets].forEach((o, i) => (q.words[slot + 4 + i] = o));
      },
    });
    return [output, total];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  } finally {
    ops.release();
  }
}

function nllLossBackward(
  _hi: number,
  _lo: number,
  gradOutput: Tensor,
  self: Tensor,
  target: Tensor,
  weight: Tensor | null,
  reduction: number,
  ignoreIndex: number,
  totalWeight: Tensor,
): Tensor {
  const m = nllLossBackwardShapes(gradOutput, self, target, weight, reduction, totalWeight);
  checkFloating('nll_loss_backward_out_webgpu', self.dtype);
  checkNllDtypes(self, target, weight);
  checkSameScalarType(self.dtype, gradOutput.dtype);
  const ops = nllOperands(self, target, weight, ignoreIndex);
  const g = dense(gradOutput), tw = dense(totalWeight, float32);
  try {
    return filledOrFreed(emptyGpu(m.shape, m.dtype), (gradInput) => {
      fill(gradInput, 0);
      const b = new KernelBindings('nll_loss_backward');
      const pi = b.contiguous(gradInput, ops.batch * ops.classes, true);
      const pg = b.contiguous(g, reduction === 0 ? ops.batch : 1, false);
      const pt = b.contiguous(tw, 1, false);
      const targets = targetWgsl(b, ops, kernelId('nll_loss_backward'));
      const grad = loadWgsl(g.dtype, `b${pg.slot}`, reduction === 0 ? 'pw(5u) + b' : 'pw(5u)');
      const scale = reduction === 1 ? ` / ${loadWgsl(tw.dtype, `b${pt.slot}`, 'pw(6u)')}` : '';
      runItems({
        key: `nll_bw|${reduction}|${self.dtype.name}|${target.dtype.name}|${weight !== null}|${b.access.join()}`,
        bindings: b,
        words: 9,
        items: ops.batch,
        body: () => [
          'let b = t;',
          ...targets.lines,
          `if (ok) { ${
            storeWgsl(gradInput.dtype, `b${pi.slot}`, 'pw(4u) + b * u32(C) + u32(c)', `(-wc * ${grad}${scale})`)
          } }`,
        ],
        params: (q, slot) => {
          q.words[slot + 1] = ops.batch;
          q.ints[slot + 2] = ignoreIndex;
          q.ints[slot + 3] = ops.classes;
          [pi.offset, pg.offset, pt.offset, ...targets.offsets].forEach((o, i) => (q.words[slot + 4 + i] = o));
        },
      });
    });
  } finally {
    ops.release();
    if (g !== gradOutput) g.dispose();
    if (tw !== totalWeight) tw.dispose();
  }
}

/**
 * WebGPU kernels of the NN operators.
 *
 * @example
 * ```ts
 * import { GPU_NN_KERNELS } from './nn.ts';
 * typeof GPU_NN_KERNELS['_softmax']; // 'function'
 * ```
 */
export const GPU_NN_KERNELS: { readonly [K in NnBackendOpName]: Kernel } = {
  '_softmax': softmaxForward(false),
  '_log_softmax': softmaxForward(true),
  '_softmax_backward_data': softmaxBackward(false),
  '_log_softmax_backward_data': softmaxBackward(true),
  'nll_loss_forward': nllLossForward as Kernel,
  'nll_loss_backward': nllLossBackward as Kernel,
};
