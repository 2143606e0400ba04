/**
 * WebGPU kernels of the matrix products: one tiled kernel for mm, bmm, addmm, mv and dot.
 *
 * Note [GPU matmul tiling]
 * A workgroup of T x T invocations computes a 4T x 4T block of the result, each invocation a 4 x 4 block of it in
 * registers. For each step of T along K the workgroup loads a 4T x T tile of each operand into workgroup memory
 * (four elements per invocation, each operand through its own strides, so transposed operands need no copy),
 * waits at a barrier, and every invocation accumulates its 16 dot products from the tiles: an operand element is
 * read from global memory once per block instead of 4T times, and each workgroup-memory read feeds four
 * multiply-adds.
 * Batches (bmm) are the third dispatch dimension. `addmm`'s `self` is read through broadcast strides and scaled
 * in the same store, so no separate pass is needed. Float types accumulate in f32, integer types in their kind.
 *
 * @module
 */
import { bool, type DType } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import { expandStrides } from '../../core/tensor/shape.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import type { LinalgBackendOpName } from '../../core/ops/decl_linalg.ts';
import { addmmMeta, bmmShapes, checkSameScalarType, dotMeta, mmShapes, mvShapes } from '../../core/ops/meta_linalg.ts';
import { KernelBindings } from '../boundary.ts';
import { bindingsWgsl } from '../pipelines.ts';
import { gpuRuntime } from '../runtime.ts';
import { emptyGpu } from '../tensors.ts';
import { FLOAT_WGSL, I64_WGSL, type Kind, kindOf, loadWgsl, storeWgsl, wgslType } from '../wgsl/dtypes.ts';
import { checkDispatch, dispatch } from './scalars.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** A batch of matrices: a tensor read as [batch, rows, cols] through these strides. */
interface Matrices {
  readonly t: Tensor;
  readonly strides: readonly [number, number, number];
}

const ZERO: Record<Kind, string> = { f32: '0.0', i32: '0i', i64: 'vec2<u32>(0u)' };
const mulAdd = (kind: Kind, acc: string, a: string, b: string) =>
  kind === 'i64' ? `i64_add(${acc}, i64_mul(${a}, ${b}))` : `${acc} + ${a} * ${b}`;

/** `C = alpha * A @ B + beta * S` over `batch` products of M x K by K x N (`S` absent or beta 0: not read). */
function gemm(
  name: string,
  batch: number,
  M: number,
  N: number,
  K: number,
  a: Matrices,
  b: Matrices,
  c: Matrices,
  s: Matrices | undefined,
  alpha: number,
  beta: number,
): void {
  if (batch * M * N === 0) return;
  const rt = gpuRuntime();
  const dtype = c.t.dtype;
  const kind = kindOf(dtype, name);
  const T = rt.workgroupSize >= 256 ? 16 : 8;
  const bindings = new KernelBindings(name);
  const region = (m: Matrices, rows: number, cols: number, write: boolean) =>
    bindings.strided(m.t, [batch, rows, cols], m.strides, write);
  const pc = region(c, M, N, true), pa = region(a, M, K, false), pb = region(b, K, N, false);
  const useS = s !== undefined && beta !== 0;
  const ps = useS ? region(s!, M, N, false) : undefined;
  const words = 24;
  const key = `mm|${kind}|${a.t.dtype.name}|${b.t.dtype.name}|${dtype.name}|${s?.t.dtype.name ?? '-'}|${useS}|${T}|` +
    `${pa.slot}${pb.slot}${pc.slot}${ps?.slot ?? ''}`;
  const kernel = rt.pipelines.kernel(key, () => {
    const ty = wgslType(kind);
    const at = (base: number, bi: string, r: string, col: string) =>
      `pi(${base}u) + i32(${bi}) * pi(${base + 1}u) + i32(${r}) * pi(${base + 2}u) + i32(${col}) * pi(${base + 3}u)`;
    const load = (m: Matrices, slot: number, index: string) => loadWgsl(m.t.dtype, `b${slot}`, `u32(${index})`);
    const scale = (x: string, factor: number) =>
      kind === 'f32'
        ? `pf(${factor}u) * ${x}`
        : kind === 'i32'
        ? `pi(${factor}u) * ${x}`
        : `i64_mul(i64_from_i32(pi(${factor}u)), ${x})`;
    const add = (x: string, y: string) => (kind === 'i64' ? `i64_add(${x}, ${y})` : `${x} + ${y}`);
    // Each invocation owns a 4 x 4 block: rows lid.y + i * T, columns lid.x + j * T of the workgroup's tile.
    const R = 4, TM = T * R, loads = (TM * T) / (T * T);
    // f32 and i32 keep 4 consecutive rows (A) or columns (B) per vec4 of workgroup memory: one read feeds four
    // multiply-adds of a vec4 accumulator. int64 (two words per value) keeps one value per element.
    const vector = kind !== 'i64';
    const Q = vector ? TM / R : TM;
    const cell = vector ? `vec4<${ty}>` : ty;
    const put = (tile: string, k: string, x: string, v: string) =>
      vector ? `${tile}[${k} * ${Q}u + ${x} / 4u][${x} % 4u] = ${v};` : `${tile}[${k} * ${Q}u + ${x}] = ${v};`;
    const loadTiles: string[] = [];
    for (let l = 0; l < loads; l++) {
      loadTiles.push(
        `{ let idx = tid + ${l * T * T}u; let m = idx / ${T}u; let k = idx % ${T}u; let gr = r0 + m; let gk = k0 + k;`,
        `  var v: ${ty} = ${ZERO[kind]}; if (gr < M && gk < K) { v = ${load(a, pa.slot, at(8, 'bi', 'gr', 'gk'))}; }`,
        `  ${put('As', 'k', 'm', 'v')} }`,
        `{ let idx = tid + ${
          l * T * T
        }u; let k = idx / ${TM}u; let n = idx % ${TM}u; let gk = k0 + k; let gc = c0 + n;`,
        `  var v: ${ty} = ${ZERO[kind]}; if (gk < K && gc < N) { v = ${load(b, pb.slot, at(12, 'bi', 'gk', 'gc'))}; }`,
        `  ${put('Bs', 'k', 'n', 'v')} }`,
      );
    }
    // Invocation (x, y) owns rows 4y + i and columns 4x + j of the tile (vector) or rows y + iT, columns x + jT.
    const rowOf = (i: number) => (vector ? `lid.y * 4u + ${i}u` : `lid.y + ${i * T}u`);
    const colOf = (j: number) => (vector ? `lid.x * 4u + ${j}u` : `lid.x + ${j * T}u`);
    const accOf = (i: number, j: number) => (vector ? `acc${i}[${j}]` : `acc${i * R + j}`);
    const inner = vector
      ? [
        `      let av = As[k * ${Q}u + lid.y]; let bv = Bs[k * ${Q}u + lid.x];`,
        ...[...Array(R).keys()].map((i) => `      acc${i} = acc${i} + av[${i}] * bv;`),
      ]
      : [
        ...[...Array(R).keys()].map((i) => `      let a${i} = As[k * ${Q}u + ${rowOf(i)}];`),
        ...[...Array(R).keys()].map((j) => `      let b${j} = Bs[k * ${Q}u + ${colOf(j)}];`),
        ...[...Array(R * R).keys()].map((x) =>
          `      acc${x} = ${mulAdd(kind, `acc${x}`, `a${Math.floor(x / R)}`, `b${x % R}`)};`
        ),
      ];
    const accumulators = vector
      ? [...Array(R).keys()].map((i) => `  var acc${i} = ${cell}(${ZERO[kind]});`)
      : [...Array(R * R).keys()].map((x) => `  var acc${x}: ${ty} = ${ZERO[kind]};`);
    const stores: string[] = [];
    for (let i = 0; i < R; i++) {
      for (let j = 0; j < R; j++) {
        let value = scale(accOf(i, j), 20);
        if (ps !== undefined) value = add(value, scale(load(s!, ps.slot, at(16, 'bi', 'row', 'col')), 21));
        stores.push(
          `  { let row = r0 + ${rowOf(i)}; let col = c0 + ${colOf(j)}; if (row < M && col < N) { ` +
            `${storeWgsl(dtype, `b${pc.slot}`, `u32(${at(4, 'bi', 'row', 'col')})`, value)} } }`,
        );
      }
    }
    const wgsl = [
      bindingsWgsl(bindings.access, words),
      FLOAT_WGSL,
      I64_WGSL,
      `var<workgroup> As: array<${cell}, ${Q * T}>;`,
      `var<workgroup> Bs: array<${cell}, ${Q * T}>;`,
      `@compute @workgroup_size(${T}, ${T}) fn main(@builtin(workgroup_id) wid: vec3<u32>, ` +
      '@builtin(local_invocation_id) lid: vec3<u32>) {',
      `  let M = pw(0u); let N = pw(1u); let K = pw(2u); let bi = wid.z;`,
      `  let r0 = wid.y * ${TM}u; let c0 = wid.x * ${TM}u; let tid = lid.y * ${T}u + lid.x;`,
      ...accumulators,
      `  for (var k0 = 0u; k0 < K; k0 = k0 + ${T}u) {`,
      ...loadTiles.map((l) => `    ${l}`),
      '    workgroupBarrier();',
      `    for (var k = 0u; k < ${T}u; k = k + 1u) {`,
      ...inner,
      '    }',
      '    workgroupBarrier();',
      '  }',
      ...stores,
      '}',
    ].join('\n');
    return { wgsl, access: [...bindings.access], paramWords: words };
  });
  const q = rt.queue;
  const slot = q.params(words);
  q.words[slot] = M;
  q.words[slot + 1] = N;
  q.words[slot + 2] = K;
  const put = (base: number, offset: number, strides: readonly number[]) => {
    q.ints[slot + base] = offset;
    for (let i = 0; i < 3; i++) q.ints[slot + base + 1 + i] = strides[i];
  };
  put(4, pc.offset, c.strides);
  put(8, pa.offset, a.strides);
  put(12, pb.offset, b.strides);
  if (ps !== undefined) put(16, ps.offset, s!.strides);
  if (kind === 'f32') {
    q.floats[slot + 20] = alpha;
    q.floats[slot + 21] = beta;
  } else {
    q.ints[slot + 20] = alpha;
    q.ints[slot + 21] = beta;
  }
  const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, bindings.buffers);
  q.dispatch(kernel.pipeline, group, slot, bindings.buffers, Math.ceil(N / (4 * T)), Math.ceil(M / (4 * T)), batch);
}

/** PyTorch's unsupported-dtype errors: bool products (and float64 here) are refused. */
function checkProductDtype(name: string, dtype: DType): void {
  if (dtype === bool || dtype.name === 'float64') checkDispatch(dispatch(name, 0), dtype);
}

/** A tensor read as one batch of matrices with these row and column strides. */
const single = (t: Tensor, rowStride: number, colStride: number): Matrices => ({
  t,
  strides: [0, rowStride, colStride],
});

function produce(shape: readonly number[], dtype: DType, fill: (out: Tensor) => void): Tensor {
  return filledOrFreed(emptyGpu(shape, dtype), fill);
}

function mm(_hi: number, _lo: number, self: Tensor, mat2: Tensor): Tensor {
  const shape = mmShapes(self, mat2);
  checkProductDtype('addmm_impl_cpu_', self.dtype);
  checkSameScalarType(self.dtype, mat2.dtype);
  const [M, K] = self.shape, N = shape[1];
  return produce(shape, self.dtype, (out) => {
    const a = single(self, self.stride(0), self.stride(1)), b = single(mat2, mat2.stride(0), mat2.stride(1));
    gemm('addmm_webgpu', 1, M, N, K, a, b, single(out, N, 1), undefined, 1, 0);
  });
}

function addmm(
  _hi: number,
  _lo: number,
  self: Tensor,
  mat1: Tensor,
  mat2: Tensor,
  beta: number | boolean,
  alpha: number | boolean,
): Tensor {
  const m = addmmMeta(self, mat1, mat2);
  checkProductDtype('addmm_impl_cpu_', m.dtype);
  const [M, N] = m.shape, K = mat1.shape[1];
  const b = Number(beta), al = Number(alpha);
  return produce(m.shape, m.dtype, (out) => {
    const sStrides = expandStrides(self.shape, self.stride(), m.shape);
    gemm(
      'addmm_webgpu',
      1,
      M,
      N,
      K,
      single(mat1, mat1.stride(0), mat1.stride(1)),
      single(mat2, mat2.stride(0), mat2.stride(1)),
      single(out, N, 1),
      single(self, sStrides[0], sStrides[1]),
      al,
      b,
    );
  });
}

function bmm(_hi: number, _lo: number, self: Tensor, mat2: Tensor): Tensor {
  const shape = bmmShapes(self, mat2);
  checkProductDtype('bmm', self.dtype);
  checkSameScalarType(self.dtype, mat2.dtype);
  const [batch, M, N] = shape, K = self.shape[2];
  return produce(shape, self.dtype, (out) => {
    const s = self.stride(), t = mat2.stride();
    const a: Matrices = { t: self, strides: [s[0], s[1], s[2]] },
      b: Matrices = { t: mat2, strides: [t[0], t[1], t[2]] };
    gemm('bmm', batch, M, N, K, a, b, { t: out, strides: [M * N, N, 1] }, undefined, 1, 0);
  });
}

function dot(_hi: number, _lo: number, self: Tensor, tensor: Tensor): Tensor {
  const m = dotMeta(self, tensor);
  checkProductDtype('dot', self.dtype);
  const K = self.shape[0];
  return produce(m.shape, m.dtype, (out) => {
    const row = single(self, 0, self.stride(0)), column = single(tensor, tensor.stride(0), 0);
    gemm('dot', 1, 1, 1, K, row, column, single(out, 0, 0), undefined, 1, 0);
  });
}

function mv(_hi: number, _lo: number, self: Tensor, vec: Tensor): Tensor {
  const shape = mvShapes(self, vec);
  checkProductDtype('addmv_impl_cpu', self.dtype);
  checkSameScalarType(self.dtype, vec.dtype);
  const [M, K] = self.shape;
  return produce(shape, self.dtype, (out) => {
    const a = single(self, self.stride(0), self.stride(1)), b = single(vec, vec.stride(0), 0);
    gemm('addmv_webgpu', 1, M, 1, K, a, b, single(out, 1, 0), undefined, 1, 0);
  });
}

/**
 * WebGPU kernels of the matrix products.
 *
 * @example
 * ```ts
 * import { GPU_LINALG_KERNELS } from './linalg.ts';
 * typeof GPU_LINALG_KERNELS['mm']; // 'function'
 * ```
 */
export const GPU_LINALG_KERNELS: { readonly [K in LinalgBackendOpName]: Kernel } = {
  'mm': mm as Kernel,
  'bmm': bmm as Kernel,
  'addmm': addmm as Kernel,
  'dot': dot as Kernel,
  'mv': mv as Kernel,
};
