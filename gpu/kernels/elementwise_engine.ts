/**
 * The elementwise engine: one generated kernel shape for every elementwise operator, copy and cast.
 *
 * Note [GPU elementwise plan]
 * As on the CPU (Note [Elementwise plan] in core/cpu/iterator.ts), every operand is viewed at the output's shape
 * (broadcast dims get stride 0). The dims are put in the output's memory order and coalesced; an operand whose
 * strides are then the dense ones is read at `offset + i`, any other through per-dim strides (the rank is part
 * of the specialisation, so the index arithmetic is unrolled). Each input is loaded in its own dtype and
 * converted to the kind the operator computes in, the expression is evaluated, and the result is converted and
 * stored in the output's dtype: casts need no temporaries. Scalars travel in the parameters. Invocations loop
 * over the elements with a grid stride, so any size fits the per-dimension workgroup limit.
 *
 * @module
 */
import { type DType, int64 } from '../../core/tensor/dtype.ts';
import { coalesceDims, contiguousStrides, expandStrides, numelOf } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import { type BoundOperand, KernelBindings } from '../boundary.ts';
import { type Access, bindingsWgsl } from '../pipelines.ts';
import { gpuRuntime } from '../runtime.ts';
import {
  convertKind,
  convertWgsl,
  FLOAT_WGSL,
  gpuItemBytes,
  I64_WGSL,
  type Kind,
  kindOf,
  loadWgsl,
  storeWgsl,
  wgslType,
  wordWgsl,
} from '../wgsl/dtypes.ts';
import { MATH_WGSL } from '../wgsl/math.ts';

/** A scalar operand: its value, already converted to the kind it is used in. */
export interface ScalarOperand {
  readonly scalar: number | bigint;
  readonly kind: Kind;
}

/** One elementwise kernel call. */
export interface ElementwiseCall {
  /** Kernel name (messages, pipeline key). */
  readonly name: string;
  /** The written tensor. */
  readonly out: Tensor;
  /** Inputs, tensors viewed at `out`'s shape with broadcasting, or scalars; the expression calls them v0, v1... */
  readonly inputs: ReadonlyArray<Tensor | ScalarOperand>;
  /** The kind each tensor input is converted to before the expression (scalars keep theirs). */
  readonly inputKinds: readonly Kind[];
  /** WGSL expression of the result, over v0, v1, ... and `i` (the element's index in iteration order). */
  readonly expr: string;
  /** The kind of `expr`. */
  readonly exprKind: Kind;
  /** A plain copy of the same dtype: float64 moves as raw words (it has no compute kind). */
  readonly raw?: boolean;
}

const isScalar = (x: Tensor | ScalarOperand): x is ScalarOperand => (x as ScalarOperand).scalar !== undefined;

/** Words a scalar of `kind` takes in the parameters. */
const scalarWords = (kind: Kind) => (kind === 'i64' ? 2 : 1);

function writeScalar(words: Uint32Array, floats: Float32Array, at: number, s: ScalarOperand): void {
  if (s.kind === 'f32') floats[at] = Number(s.scalar);
  else if (s.kind === 'i32') words[at] = Number(s.scalar) >>> 0;
  else {
    const v = BigInt.asUintN(64, typeof s.scalar === 'bigint' ? s.scalar : BigInt(Math.trunc(s.scalar)));
    words[at] = Number(v & 0xffffffffn);
    words[at + 1] = Number(v >> 32n);
  }
}

function scalarRead(kind: Kind, at: number): string {
  if (kind === 'f32') return `pf(${at}u)`;
  if (kind === 'i32') return `pi(${at}u)`;
  return `vec2<u32>(pw(${at}u), pw(${at + 1}u))`;
}

/** The output's dims in memory order (outermost first), stable for ties. */
function memoryOrder(out: Tensor): number[] {
  const strides = out.stride();
  return out.shape.map((_, d) => d).sort((a, b) => Math.abs(strides[b]) - Math.abs(strides[a]) || a - b);
}

/**
 * Runs one elementwise kernel (Note [GPU elementwise plan]).
 *
 * @example
 * ```ts
 * import { runElementwise } from './elementwise_engine.ts';
 * // runElementwise({ name: 'add', out, inputs: [a, b], inputKinds: ['f32', 'f32'], expr: 'v0 + v1', exprKind: 'f32' });
 * ```
 */
export function runElementwise(call: ElementwiseCall): void {
  const { out, inputs } = call;
  // float64 has no compute kind: a raw copy moves its two words as int64's (Note [GPU element layout]).
  const io = (d: DType) => (call.raw === true && d.name === 'float64' ? int64 : d);
  const n = numelOf(out.shape);
  if (n === 0) return;
  const rt = gpuRuntime();
  const tensors = inputs.filter((x): x is Tensor => !isScalar(x));
  const order = memoryOrder(out);
  const shape = order.map((d) => out.shape[d]);
  const strideSets = [out, ...tensors].map((t) => {
    const s = expandStrides(t.shape, t.stride(), out.shape);
    return order.map((d) => s[d]);
  });
  const c = coalesceDims(shape, strideSets);
  const dense = contiguousStrides(c.shape);
  const nd = c.shape.length;
  const contiguous = c.strides.map((s) => s.every((x, d) => x === dense[d] || c.shape[d] === 1));
  const allContiguous = contiguous.every((x) => x);
  const bindings = new KernelBindings(call.name);
  const bound: BoundOperand[] = [out, ...tensors].map((t, k) =>
    bindings.strided(t, c.shape, c.strides[k], k === 0 || (k > 0 && t === out))
  );
  // Parameters: n, sizes (strided plans only), then per tensor operand its offset and strides, then scalars.
  const dims = allContiguous ? 0 : nd;
  const operandWords = 1 + (allContiguous ? 0 : nd);
  let words = 1 + dims + bound.length * operandWords;
  const scalarAt: number[] = [];
  for (const x of inputs) {
    if (isScalar(x)) {
      scalarAt.push(words);
      words += scalarWords(x.kind);
    }
  }
  // Packed: dense one-word operands at offsets of whole vec4s: each invocation reads and writes four words at once.
  const packed = allContiguous && call.raw !== true && n % 4 === 0 &&
    [out, ...tensors].every((t) => gpuItemBytes(t.dtype) === 4) && bound.every((b) => b.offset % 4 === 0);
  const slotKey = bound.map((b) => b.slot).join('');
  const modeKey = packed ? 'v' : allContiguous ? 'c' : contiguous.map((x) => (x ? 'c' : 's')).join('');
  const dtypeKey = [out, ...tensors].map((t) => t.dtype.name).join(',');
  // Which inputs are scalars changes where each is read from: part of the key, as everything the WGSL depends on.
  const inputKey = inputs.map((x) => (isScalar(x) ? `s${x.kind}` : 't')).join('');
  const key = `ew|${call.expr}|${call.inputKinds.join(',')}|${inputKey}|${dtypeKey}|${modeKey}|${dims}|${slotKey}`;
  const wg = rt.workgroupSize;
  const kernel = rt.pipelines.kernel(key, () => {
    if (packed) return packedSource(call, bindings.access, bound, scalarAt, words, wg);
    const lines: string[] = [];
    const offset = (k: number) => 1 + dims + k * operandWords;
    for (let k = 0; k < bound.length; k++) {
      lines.push(`var o${k}: i32 = base${k};`);
      if (allContiguous || contiguous[k]) lines.push(`o${k} = o${k} + i32(i);`);
    }
    if (!allContiguous) {
      lines.push('var rem = i;');
      for (let d = nd - 1; d >= 0; d--) {
        lines.push(`{ let size = pw(${1 + d}u); let c = i32(rem % size); rem = rem / size;`);
        for (let k = 0; k < bound.length; k++) {
          if (!contiguous[k]) lines.push(`  o${k} = o${k} + c * pi(${offset(k) + 1 + d}u);`);
        }
        lines.push('}');
      }
    }
    let t = 0, s = 0;
    inputs.forEach((x, j) => {
      if (isScalar(x)) {
        lines.push(`let v${j}: ${wgslType(x.kind)} = ${scalarRead(x.kind, scalarAt[s++])};`);
      } else {
        const k = ++t;
        const raw = loadWgsl(io(x.dtype), `b${bound[k].slot}`, `u32(o${k})`);
        const kind = call.inputKinds[j];
        lines.push(`let v${j}: ${wgslType(kind)} = ${convertKind(raw, kindOf(io(x.dtype), call.name), kind)};`);
      }
    });
    const result = convertWgsl(call.expr, call.exprKind, io(out.dtype), call.name);
    lines.push(storeWgsl(io(out.dtype), `b${bound[0].slot}`, 'u32(o0)', `(${result})`));
    const wgsl = [
      bindingsWgsl(bindings.access, words),
      FLOAT_WGSL,
      I64_WGSL,
      MATH_WGSL,
      `@compute @workgroup_size(${wg}) fn main(@builtin(global_invocation_id) gid: vec3<u32>, ` +
      '@builtin(num_workgroups) nwg: vec3<u32>) {',
      `  let n = pw(0u); let total = nwg.x * ${wg}u;`,
      // Operand offsets are read once, not per element.
      ...bound.map((_, k) => `  let base${k} = pi(${1 + dims + k * operandWords}u);`),
      '  for (var i = gid.x; i < n; i = i + total) {',
      ...lines.map((l) => `    ${l}`),
      '  }',
      '}',
    ].join('\n');
    return { wgsl, access: [...bindings.access], paramWords: words };
  });
  const q = rt.queue;
  const slot = q.params(words);
  q.words[slot] = n;
  for (let d = 0; d < dims; d++) q.words[slot + 1 + d] = c.shape[d];
  for (let k = 0; k < bound.length; k++) {
    const at = slot + 1 + dims + k * operandWords;
    q.ints[at] = bound[k].offset;
    for (let d = 0; d < dims; d++) q.ints[at + 1 + d] = c.strides[k][d];
  }
  let s = 0;
  for (const x of inputs) if (isScalar(x)) writeScalar(q.words, q.floats, slot + scalarAt[s++], x);
  const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, bindings.buffers);
  const items = packed ? n / 4 : n;
  q.dispatch(kernel.pipeline, group, slot, bindings.buffers, Math.min(Math.ceil(items / wg), rt.maxGroups));
}

/** The WGSL of a packed plan: four consecutive elements per invocation, one vec4 read per operand. */
function packedSource(
  call: ElementwiseCall,
  access: readonly Access[],
  bound: readonly BoundOperand[],
  scalarAt: readonly number[],
  words: number,
  wg: number,
) {
  const tensors = call.inputs.filter((x): x is Tensor => !isScalar(x));
  const lines = bound.slice(1).map((b, k) => `let w${k + 1} = b${b.slot}[u32(base${k + 1}) / 4u + j];`);
  lines.push('var r = vec4<u32>();');
  for (let c = 0; c < 4; c++) {
    const block = [`let i = j * 4u + ${c}u;`];
    let t = 0, s = 0;
    call.inputs.forEach((x, v) => {
      if (isScalar(x)) {
        block.push(`let v${v}: ${wgslType(x.kind)} = ${scalarRead(x.kind, scalarAt[s++])};`);
      } else {
        const k = ++t;
        const kind = call.inputKinds[v];
        const raw = loadWgsl(tensors[k - 1].dtype, `w${k}`, `${c}u`);
        block.push(
          `let v${v}: ${wgslType(kind)} = ${convertKind(raw, kindOf(tensors[k - 1].dtype, call.name), kind)};`,
        );
      }
    });
    const result = convertWgsl(call.expr, call.exprKind, call.out.dtype, call.name);
    block.push(`r[${c}] = ${wordWgsl(call.out.dtype, `(${result})`)};`);
    lines.push(`{ ${block.join(' ')} }`);
  }
  lines.push(`b${bound[0].slot}[u32(base0) / 4u + j] = r;`);
  const wgsl = [
    bindingsWgsl(access, words, true),
    FLOAT_WGSL,
    I64_WGSL,
    MATH_WGSL,
    `@compute @workgroup_size(${wg}) fn main(@builtin(global_invocation_id) gid: vec3<u32>, ` +
    '@builtin(num_workgroups) nwg: vec3<u32>) {',
    `  let n4 = pw(0u) / 4u; let total = nwg.x * ${wg}u;`,
    ...bound.map((_, k) => `  let base${k} = pi(${1 + k}u);`),
    '  for (var j = gid.x; j < n4; j = j + total) {',
    ...lines.map((l) => `    ${l}`),
    '  }',
    '}',
  ].join('\n');
  return { wgsl, access: [...access], paramWords: words };
}
