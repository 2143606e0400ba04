/**
 * WebGPU kernels of `convolution` (1-d and 2-d, transposed or not, with stride, padding, dilation and groups)
 * and `convolution_backward`.
 *
 * Note [GPU convolution as implicit gemm]
 * Every convolution product is a matrix product whose operands are never materialised: per group, the forward
 * convolution is `W[OCg, Cg*KH*KW] @ cols[Cg*KH*KW, N*OH*OW]`, the input gradient (and the transposed
 * convolution) `W^T[Cg, OCg*KH*KW] @ gradCols[OCg*KH*KW, N*H*W]`, the weight gradient `gradOut[OCg, N*OH*OW] @
 * cols^T[N*OH*OW, Cg*KH*KW]`. One tiled kernel (the scheme of Note [GPU matmul tiling]: a workgroup of T x T
 * invocations computes a 4T x 4T block, each invocation 4 x 4 of it in registers, the operands staged through
 * workgroup memory T columns of the reduction at a time) runs all three; only the two tile loaders differ: they
 * compute the im2col (or col2im-as-gather) element for an index of the reduction on the fly, reading each
 * operand through its own strides (views need no copy; a 1-d convolution is a 2-d one of height 1 with a zero
 * stride), zero outside the padded input. Groups are the third dispatch dimension. All arithmetic is f32;
 * float16 and bfloat16 are rounded on the store. The bias is added in the store; the bias gradient is a
 * per-channel workgroup reduction. The weight gradient's reduction runs over every image and pixel while its
 * output is small, which would leave a GPU a handful of workgroups each looping over all of it: when it has few
 * output tiles and a long reduction it is split into slices (the dispatch's third dimension is groups x slices)
 * whose partial products go to a float32 scratch tensor, summed in slice order by a second pass.
 * The input gradient of a strided convolution gathers: for output element (h, w) and kernel tap (kh, kw) the
 * contributing output position is ((h + ph - kh*dh) / sh, ...) when that division is exact, else nothing, so
 * every element is written by exactly one invocation and the result is deterministic (no atomics).
 *
 * @module
 */
import { NotImplementedError, RuntimeError } from '../../core/dispatch/errors.ts';
import { type DType, float32 } from '../../core/tensor/dtype.ts';
import { filledOrFreed } from '../../core/tensor/lifetime.ts';
import type { Tensor } from '../../core/tensor/tensor.ts';
import {
  type ConvGeometry,
  convGeometry,
  convolutionBackwardMeta,
  convolutionParams,
} from '../../core/ops/meta_conv.ts';
import { type BoundOperand, KernelBindings } from '../boundary.ts';
import { bindingsWgsl } from '../pipelines.ts';
import { gpuRuntime } from '../runtime.ts';
import { emptyGpu } from '../tensors.ts';
import { FLOAT_WGSL, loadWgsl, storeWgsl } from '../wgsl/dtypes.ts';
import { runItems } from './custom.ts';

type Kernel = (hi: number, lo: number, ...args: never[]) => unknown;

/** The dtypes the convolution and pooling kernels compute (f32 arithmetic; reduced floats rounded on store). */
const FLOATS = new Set(['float32', 'float16', 'bfloat16']);

/**
 * PyTorch's unsupported-dtype error for the convolution and pooling kernels (float32, float16 and bfloat16 run;
 * float64 is storage only on the GPU, integers are refused as on the CPU).
 *
 * @example
 * ```ts
 * import { checkConvDtype } from './conv.ts';
 * import { float32 } from '../../core/tensor/dtype.ts';
 * checkConvDtype('slow_conv2d_webgpu', float32); // passes
 * ```
 */
export function checkConvDtype(name: string, dtype: DType): void {
  if (!FLOATS.has(dtype.name)) throw new NotImplementedError(`"${name}" not implemented for '${dtype.scalarTypeName}'`);
}

/**
 * Sizes and element strides of a 3-d or 4-d tensor as 4-d (`[N, C, L]` read as `[N, C, 1, L]`, the inserted dim
 * with stride 0; `[C, H, W]` with `lead` = true read as `[1, C, H, W]`).
 *
 * @example
 * ```ts
 * import { lift4 } from './conv.ts';
 * // lift4(t) for t of shape [2, 3, 5], strides [15, 5, 1]: { sizes: [2, 3, 1, 5], strides: [15, 5, 0, 1] }
 * ```
 */
export function lift4(t: Tensor, lead = false): { sizes: number[]; strides: number[] } {
  const s = t.stride();
  if (t.ndim === 4) return { sizes: [...t.shape], strides: [...s] };
  if (lead) return { sizes: [1, ...t.shape], strides: [0, ...s] };
  return { sizes: [t.shape[0], t.shape[1], 1, t.shape[2]], strides: [s[0], s[1], 0, s[2]] };
}

/** A 4-d operand bound through its strides, and where its parameters go. */
interface Operand4 {
  readonly t: Tensor;
  readonly bound: BoundOperand;
  readonly strides: readonly number[];
}

function bind4(b: KernelBindings, t: Tensor, write: boolean): Operand4 {
  const { sizes, strides } = lift4(t);
  return { t, bound: b.strided(t, sizes, strides, write), strides };
}

/** Which product of Note [GPU convolution as implicit gemm]. */
type Product = 'forward' | 'input_grad' | 'weight_grad';

// Parameter words of the convolution products.
const W_M = 0, W_NC = 1, W_K = 2, W_CG = 3, W_OCG = 4, W_GEOM = 5; // 5..19: N C H W OC KH KW OH OW sh sw ph pw dh dw
const W_X = 20, W_W = 25, W_Y = 30, W_OUT = 35, W_BIAS = 36, W_COL0 = 38, W_CHUNK = 39, W_GROUPS = 40, WORDS = 41;
const GEOM = ['N', 'C', 'H', 'W', 'OC', 'KH', 'KW', 'OH', 'OW', 'sh', 'sw', 'ph', 'pw', 'dh', 'dw'] as const;
/** Their WGSL names (`pw` is the parameter reader, so the paddings are `padh` and `padw`). */
const GEOM_WGSL = GEOM.map((n) => (n === 'ph' ? 'padh' : n === 'pw' ? 'padw' : n));

/** The operands of one product (in the geometry's terms: x `[N, C, H, W]`, y `[N, OC, OH, OW]`, w). */
interface ProductOperands {
  readonly x?: Tensor;
  readonly y?: Tensor;
  readonly w?: Tensor;
  readonly bias?: Tensor | null;
  readonly out: Tensor;
}

/**
 * WGSL of the element index (a u32) at (nb, ch, h, w) of a 4-d operand whose offset and four strides are the
 * parameter words from `base` (`nb` and `ch` any integer expressions, `h` and `w` i32 ones).
 *
 * @example
 * ```ts
 * import { at4 } from './conv.ts';
 * at4(4, 'n', 'c', 'h', 'w').startsWith('u32(pi(4u)'); // true
 * ```
 */
export const at4 = (base: number, nb: string, ch: string, h: string, w: string): string =>
  `u32(pi(${base}u) + i32(${nb}) * pi(${base + 1}u) + i32(${ch}) * pi(${base + 2}u) + (${h}) * pi(${
    base + 3
  }u) + (${w}) * pi(${base + 4}u))`;

/**
 * The WGSL functions of a product: `kInfo(k)` and `colInfo(n)` split a reduction index and a column index into
 * the three coordinates they stand for (computed once per reduction step and once per column, not per load),
 * `loadA(m, kv, g)` and `loadB(kv, cv, g)` read an operand element from them (zero outside the padded input),
 * `outAt(m, n, g)` is the output element and `channel(m, g)` the bias element of row m.
 */
function productWgsl(product: Product, x?: Operand4, y?: Operand4, w?: Operand4): string[] {
  const ld = (o: Operand4, e: string) => loadWgsl(o.t.dtype, `b${o.bound.slot}`, e);
  const geometry = GEOM_WGSL.map((name, i) => `let ${name} = pw(${W_GEOM + i}u);`).join(' ');
  /** Splits `v` into (v / (A * B), (v % (A * B)) / B, v % B). */
  const split3 = (name: string, A: string, B: string) =>
    `fn ${name}(v: u32) -> vec3<u32> { ${geometry} let AB = ${A} * ${B}; let r = v % AB; ` +
    `return vec3<u32>(v / AB, r / ${B}, r % ${B}); }`;
  const taps = split3('taps', 'KH', 'KW'), pixels = split3('pixels', 'OH', 'OW'), inputs = split3('inputs', 'H', 'W');
  /** WGSL returning 0 unless (ih, iw) lies in the input. */
  const inside = 'if (ih < 0i || ih >= i32(H) || iw < 0i || iw >= i32(W)) { return 0.0; }';
  if (product === 'forward') {
    // Reduction (ci, kh, kw), columns (nb, oh, ow).
    return [
      taps,
      pixels,
      'fn kInfo(k: u32) -> vec3<u32> { return taps(k); }',
      'fn colInfo(n: u32) -> vec3<u32> { return pixels(n); }',
      'fn loadA(m: u32, kv: vec3<u32>, g: u32) -> f32 {',
      `  return ${ld(w!, at4(W_W, 'g * pw(4u) + m', 'kv.x', 'i32(kv.y)', 'i32(kv.z)'))};`,
      '}',
      'fn loadB(kv: vec3<u32>, cv: vec3<u32>, g: u32) -> f32 {',
      `  ${geometry}`,
      '  let ih = i32(cv.y * sh + kv.y * dh) - i32(padh); let iw = i32(cv.z * sw + kv.z * dw) - i32(padw);',
      `  ${inside}`,
      `  return ${ld(x!, at4(W_X, 'cv.x', 'g * pw(3u) + kv.x', 'ih', 'iw'))};`,
      '}',
      'fn outAt(m: u32, n: u32, g: u32) -> u32 {',
      `  ${geometry} let OHW = OH * OW; let nb = n / OHW; let q = n % OHW;`,
      `  return pw(${W_OUT}u) + (nb * OC + g * pw(4u) + m) * OHW + q;`,
      '}',
      'fn channel(m: u32, g: u32) -> u32 { return g * pw(4u) + m; }',
    ];
  }
  if (product === 'input_grad') {
    // Reduction (oc, kh, kw), columns (nb, h, w): output position (h + ph - kh * dh) / sh when exact.
    return [
      taps,
      inputs,
      'fn kInfo(k: u32) -> vec3<u32> { return taps(k); }',
      'fn colInfo(n: u32) -> vec3<u32> { return inputs(n); }',
      'fn loadA(m: u32, kv: vec3<u32>, g: u32) -> f32 {',
      `  return ${ld(w!, at4(W_W, 'g * pw(4u) + kv.x', 'm', 'i32(kv.y)', 'i32(kv.z)'))};`,
      '}',
      'fn loadB(kv: vec3<u32>, cv: vec3<u32>, g: u32) -> f32 {',
      `  ${geometry}`,
      '  let th = i32(cv.y + padh) - i32(kv.y * dh); let tw = i32(cv.z + padw) - i32(kv.z * dw);',
      '  if (th < 0i || tw < 0i) { return 0.0; }',
      '  let oh = u32(th) / sh; let ow = u32(tw) / sw;',
      '  if (oh * sh != u32(th) || ow * sw != u32(tw) || oh >= OH || ow >= OW) { return 0.0; }',
      `  return ${ld(y!, at4(W_Y, 'cv.x', 'g * pw(4u) + kv.x', 'i32(oh)', 'i32(ow)'))};`,
      '}',
      'fn outAt(m: u32, n: u32, g: u32) -> u32 {',
      `  ${geometry} let HW = H * W; let nb = n / HW; let q = n % HW;`,
      `  return pw(${W_OUT}u) + (nb * C + g * pw(3u) + m) * HW + q;`,
      '}',
      'fn channel(m: u32, g: u32) -> u32 { return g * pw(3u) + m; }',
    ];
  }
  // The weight gradient: reduction (nb, oh, ow), columns (ci, kh, kw).
  return [
    taps,
    pixels,
    'fn kInfo(k: u32) -> vec3<u32> { return pixels(k); }',
    'fn colInfo(n: u32) -> vec3<u32> { return taps(n); }',
    'fn loadA(m: u32, kv: vec3<u32>, g: u32) -> f32 {',
    `  return ${ld(y!, at4(W_Y, 'kv.x', 'g * pw(4u) + m', 'i32(kv.y)', 'i32(kv.z)'))};`,
    '}',
    'fn loadB(kv: vec3<u32>, cv: vec3<u32>, g: u32) -> f32 {',
    `  ${geometry}`,
    '  let ih = i32(kv.y * sh + cv.y * dh) - i32(padh); let iw = i32(kv.z * sw + cv.z * dw) - i32(padw);',
    `  ${inside}`,
    `  return ${ld(x!, at4(W_X, 'kv.x', 'g * pw(3u) + cv.x', 'ih', 'iw'))};`,
    '}',
    `fn outAt(m: u32, n: u32, g: u32) -> u32 { return pw(${W_OUT}u) + (g * pw(4u) + m) * pw(1u) + n; }`,
    'fn channel(m: u32, g: u32) -> u32 { return 0u; }',
  ];
}

/** The (rows, columns, reduction) of a product per group. */
function productShape(product: Product, g: ConvGeometry): [number, number, number] {
  const Cg = g.C / g.groups, OCg = g.OC / g.groups, KK = g.KH * g.KW;
  if (product === 'forward') return [OCg, g.N * g.OH * g.OW, Cg * KK];
  if (product === 'input_grad') return [Cg, g.N * g.H * g.W, OCg * KK];
  return [OCg, Cg * KK, g.N * g.OH * g.OW];
}

/** Workgroups below which a long reduction is split (Note [GPU convolution as implicit gemm]). */
const SPLIT_BELOW = 256;

/**
 * Records one product of Note [GPU convolution as implicit gemm] into `ops.out` (contiguous, written whole). A
 * weight gradient with few output blocks and a long reduction (many images and pixels) is split along the
 * reduction: each slice of it writes a partial product to a float32 scratch tensor, and a second pass adds the
 * slices in order (deterministic), so the GPU is not left with a handful of workgroups each looping over it.
 */
function convProduct(name: string, product: Product, g: ConvGeometry, ops: ProductOperands): void {
  const [M, NC, K] = productShape(product, g);
  if (M * NC * g.groups === 0) return;
  const T = 8, TM = 4 * T, Q = T, KT = 2 * T;
  const blocks = Math.ceil(NC / TM), rowBlocks = Math.ceil(M / TM);
  const workgroups = blocks * rowBlocks * g.groups;
  let splits = 1;
  if (product === 'weight_grad' && K >= 2 * SPLIT_BELOW && workgroups < SPLIT_BELOW) {
    splits = Math.min(Math.ceil(K / SPLIT_BELOW), Math.ceil(SPLIT_BELOW / workgroups), 64);
  }
  const chunk = Math.max(KT, Math.ceil(Math.ceil(K / splits) / KT) * KT); // an empty reduction: one slice
  splits = Math.max(1, Math.ceil(K / chunk));
  const total = g.groups * M * NC;
  const scratch = splits > 1 ? emptyGpu([splits, total], float32) : undefined;
  try {
    const target = scratch ?? ops.out;
    convTiles(name, product, g, ops, { M, NC, K, T, TM, Q, KT, blocks, rowBlocks, chunk, splits, target });
    if (scratch !== undefined) sumSlices(name, scratch, splits, total, ops.out);
  } finally {
    scratch?.dispose();
  }
}

/** The tiling of one product: sizes, tile constants, the reduction slices, and where the tiles are written. */
interface Tiling {
  readonly M: number;
  readonly NC: number;
  readonly K: number;
  readonly T: number;
  readonly TM: number;
  readonly Q: number;
  /** Reduction indices per step (staged in workgroup memory between two barriers). */
  readonly KT: number;
  readonly blocks: number;
  readonly rowBlocks: number;
  /** Reduction length per slice (a multiple of KT) and number of slices. */
  readonly chunk: number;
  readonly splits: number;
  /** `ops.out`, or the float32 scratch `[splits, groups * M * NC]` of a split reduction. */
  readonly target: Tensor;
}

/** `out[i] = sum over s of slices[s, i]`, in slice order. */
function sumSlices(name: string, slices: Tensor, splits: number, total: number, out: Tensor): void {
  const b = new KernelBindings(name);
  const ps = b.contiguous(slices, splits * total, false), po = b.contiguous(out, total, true);
  runItems({
    key: `conv_split_sum|${out.dtype.name}|${b.access.join()}|${ps.slot}${po.slot}`,
    bindings: b,
    words: 5,
    items: total,
    body: () => [
      'var s = 0.0;',
      `for (var i = 0u; i < pw(1u); i = i + 1u) { s = s + ${
        loadWgsl(float32, `b${ps.slot}`, 'pw(3u) + i * pw(0u) + t')
      }; }`,
      storeWgsl(out.dtype, `b${po.slot}`, 'pw(4u) + t', 's'),
    ],
    params: (q, slot) => {
      q.words[slot + 1] = splits;
      q.words[slot + 3] = ps.offset;
      q.words[slot + 4] = po.offset;
    },
  });
}

function convTiles(name: string, product: Product, g: ConvGeometry, ops: ProductOperands, tiling: Tiling): void {
  const { T, TM, Q, KT, blocks, rowBlocks, M, NC, K, chunk, splits, target } = tiling;
  const R = (T * T) / KT; // rows (and columns) one pass of the workgroup's loads covers
  const split = splits > 1;
  const rt = gpuRuntime();
  if (g.groups * splits > rt.maxGroups) {
    throw new RuntimeError(`${name}: ${g.groups} groups exceed the adapter's ${rt.maxGroups} workgroups per dimension`);
  }
  const b = new KernelBindings(name);
  const po = b.contiguous(target, target.numel, true);
  const x = ops.x === undefined ? undefined : bind4(b, ops.x, false);
  const y = ops.y === undefined ? undefined : bind4(b, ops.y, false);
  const w = ops.w === undefined ? undefined : bind4(b, ops.w, false);
  const bias = ops.bias ?? null;
  const pb = bias === null ? undefined : b.strided(bias, bias.shape, bias.stride(), false);
  const dtypes = [ops.out, ops.x, ops.y, ops.w, bias].map((t) => t?.dtype.name ?? '-').join(',');
  const key = `conv|${product}|${split}|${dtypes}|${b.access.join()}|${
    [po, x?.bound, y?.bound, w?.bound, pb].map((o) => o?.slot ?? '-').join('')
  }`;
  const kernel = rt.pipelines.kernel(key, () => {
    // Invocation (kk, mrow) loads reduction index kk of rows mrow + R * l of A and of columns mrow + R * l of B,
    // so one kInfo per step serves all its loads and its columns are split once, before the loop.
    const loads: string[] = ['let gk = k0 + kk; let kOk = gk < kEnd; let kv = kInfo(gk);'];
    for (let l = 0; l < TM / R; l++) {
      loads.push(
        `{ let m = mrow + ${l * R}u; let gr = r0 + m; var v = 0.0; if (gr < M && kOk) { v = loadA(gr, kv, grp); }`,
        `  As[kk * ${Q}u + m / 4u][m % 4u] = v; }`,
        `{ let n = mrow + ${l * R}u; var v = 0.0; if (c0 + n < NC && kOk) { v = loadB(kv, cv${l}, grp); }`,
        `  Bs[kk * ${Q}u + n / 4u][n % 4u] = v; }`,
      );
    }
    const biasValue = pb === undefined
      ? ''
      : ` + ${
        loadWgsl(bias!.dtype, `b${pb.slot}`, `u32(pi(${W_BIAS}u) + i32(channel(row, grp)) * pi(${W_BIAS + 1}u))`)
      }`;
    const stores: string[] = [];
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        stores.push(
          `  { let row = r0 + lid.y * 4u + ${i}u; let col = c0 + lid.x * 4u + ${j}u; if (row < M && col < NC) { ` +
            `${
              split
                ? storeWgsl(
                  float32,
                  `b${po.slot}`,
                  `pw(${W_OUT}u) + ((slice * G + grp) * M + row) * NC + col`,
                  `acc${i}[${j}]`,
                )
                : storeWgsl(ops.out.dtype, `b${po.slot}`, 'outAt(row, col, grp)', `(acc${i}[${j}]${biasValue})`)
            } } }`,
        );
      }
    }
    const wgsl = [
      bindingsWgsl(b.access, WORDS),
      FLOAT_WGSL,
      ...productWgsl(product, x, y, w),
      `var<workgroup> As: array<vec4<f32>, ${Q * KT}>;`,
      `var<workgroup> Bs: array<vec4<f32>, ${Q * KT}>;`,
      `@compute @workgroup_size(${T}, ${T}) fn main(@builtin(workgroup_id) wid: vec3<u32>, ` +
      '@builtin(local_invocation_id) lid: vec3<u32>) {',
      `  let M = pw(${W_M}u); let NC = pw(${W_NC}u); let K = pw(${W_K}u); let G = pw(${W_GROUPS}u);`,
      `  let grp = wid.z % G; let slice = wid.z / G; let kBegin = slice * pw(${W_CHUNK}u);`,
      `  let kEnd = min(K, kBegin + pw(${W_CHUNK}u));`,
      `  let r0 = wid.y * ${TM}u; let c0 = pw(${W_COL0}u) + wid.x * ${TM}u; let tid = lid.y * ${T}u + lid.x;`,
      `  let kk = tid % ${KT}u; let mrow = tid / ${KT}u;`,
      ...[...Array(TM / R).keys()].map((l) => `  let cv${l} = colInfo(c0 + mrow + ${l * R}u);`),
      ...[0, 1, 2, 3].map((i) => `  var acc${i} = vec4<f32>(0.0);`),
      `  for (var k0 = kBegin; k0 < kEnd; k0 = k0 + ${KT}u) {`,
      ...loads.map((l) => `    ${l}`),
      '    workgroupBarrier();',
      `    for (var k = 0u; k < ${KT}u; k = k + 1u) {`,
      `      let av = As[k * ${Q}u + lid.y]; let bv = Bs[k * ${Q}u + lid.x];`,
      ...[0, 1, 2, 3].map((i) => `      acc${i} = acc${i} + av[${i}] * bv;`),
      '    }',
      '    workgroupBarrier();',
      '  }',
      ...stores,
      '}',
    ].join('\n');
    return { wgsl, access: [...b.access], paramWords: WORDS };
  });
  const geometry = GEOM.map((k) => g[k]);
  const q = rt.queue;
  // Column blocks beyond the dispatch limit run as further dispatches from column W_COL0.
  for (let first = 0; first < blocks; first += rt.maxGroups) {
    const slot = q.params(WORDS);
    q.words[slot + W_M] = M;
    q.words[slot + W_NC] = NC;
    q.words[slot + W_K] = K;
    q.words[slot + W_CG] = g.C / g.groups;
    q.words[slot + W_OCG] = g.OC / g.groups;
    geometry.forEach((v, i) => (q.words[slot + W_GEOM + i] = v));
    const put = (base: number, o: Operand4 | undefined) => {
      if (o === undefined) return;
      q.ints[slot + base] = o.bound.offset;
      for (let i = 0; i < 4; i++) q.ints[slot + base + 1 + i] = o.strides[i];
    };
    put(W_X, x);
    put(W_W, w);
    put(W_Y, y);
    q.words[slot + W_OUT] = po.offset;
    if (pb !== undefined) {
      q.ints[slot + W_BIAS] = pb.offset;
      q.ints[slot + W_BIAS + 1] = bias!.stride(0);
    }
    q.words[slot + W_COL0] = first * TM;
    q.words[slot + W_CHUNK] = chunk;
    q.words[slot + W_GROUPS] = g.groups;
    const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, b.buffers);
    const columns = Math.min(rt.maxGroups, blocks - first);
    q.dispatch(kernel.pipeline, group, slot, b.buffers, columns, rowBlocks, g.groups * splits);
  }
}

/**
 * `out[c] = sum of t[:, c, ...]` over every dim but 1 (the bias gradient): one workgroup per channel, a strided
 * loop per invocation and a tree reduction in workgroup memory.
 */
function channelSum(name: string, t: Tensor, out: Tensor): void {
  const C = t.shape[1];
  if (C === 0) return;
  const rt = gpuRuntime();
  const WG = rt.workgroupSize;
  const b = new KernelBindings(name);
  const po = b.contiguous(out, C, true);
  const src = bind4(b, t, false);
  const [N, , H, W] = lift4(t).sizes;
  const words = 12;
  const key = `conv_bias_grad|${t.dtype.name}|${out.dtype.name}|${b.access.join()}|${po.slot}${src.bound.slot}|${WG}`;
  const kernel = rt.pipelines.kernel(key, () => ({
    wgsl: [
      bindingsWgsl(b.access, words),
      FLOAT_WGSL,
      `var<workgroup> partial: array<f32, ${WG}>;`,
      `@compute @workgroup_size(${WG}) fn main(@builtin(workgroup_id) wid: vec3<u32>, ` +
      '@builtin(local_invocation_id) lid: vec3<u32>) {',
      '  let c = pw(10u) + wid.x; let H = pw(2u); let W = pw(3u); let HW = H * W; let total = pw(1u) * HW;',
      '  var s = 0.0;',
      `  for (var i = lid.x; i < total; i = i + ${WG}u) {`,
      '    let nb = i / HW; let q = i % HW; let h = q / W; let w = q % W;',
      `    s = s + ${loadWgsl(t.dtype, `b${src.bound.slot}`, at4(4, 'nb', 'c', 'i32(h)', 'i32(w)'))};`,
      '  }',
      '  partial[lid.x] = s;',
      '  workgroupBarrier();',
      `  for (var hs = ${WG / 2}u; hs > 0u; hs = hs / 2u) {`,
      '    if (lid.x < hs) { partial[lid.x] = partial[lid.x] + partial[lid.x + hs]; }',
      '    workgroupBarrier();',
      '  }',
      `  if (lid.x == 0u) { ${storeWgsl(out.dtype, `b${po.slot}`, 'pw(9u) + c', 'partial[0]')} }`,
      '}',
    ].join('\n'),
    access: [...b.access],
    paramWords: words,
  }));
  const q = rt.queue;
  for (let first = 0; first < C; first += rt.maxGroups) {
    const slot = q.params(words);
    q.words[slot] = C;
    q.words[slot + 1] = N;
    q.words[slot + 2] = H;
    q.words[slot + 3] = W;
    q.ints[slot + 4] = src.bound.offset;
    for (let i = 0; i < 4; i++) q.ints[slot + 5 + i] = src.strides[i];
    q.words[slot + 9] = po.offset;
    q.words[slot + 10] = first;
    const group = rt.pipelines.bindGroup(kernel, q.uniform, q.status, b.buffers);
    q.dispatch(kernel.pipeline, group, slot, b.buffers, Math.min(rt.maxGroups, C - first));
  }
}

const CONV_NAME = 'slow_conv2d_webgpu';

function convolution(
  _hi: number,
  _lo: number,
  input: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  stride: number[],
  padding: number[],
  dilation: number[],
  transposed: boolean,
  outputPadding: number[],
  groups: number,
): Tensor {
  const p = convolutionParams(input, weight, bias, stride, padding, dilation, transposed, outputPadding, groups);
  checkConvDtype(CONV_NAME, input.dtype);
  const g = convGeometry(input.shape, weight.shape, p, transposed, groups);
  return filledOrFreed(emptyGpu(p.outputShape, input.dtype), (out) => {
    if (out.numel === 0) return;
    // A transposed convolution is the input gradient of the convolution `g` describes, plus its bias.
    if (!transposed) convProduct(CONV_NAME, 'forward', g, { x: input, w: weight, bias, out });
    else convProduct(CONV_NAME, 'input_grad', g, { y: input, w: weight, bias, out });
  });
}

function convolutionBackward(
  _hi: number,
  _lo: number,
  gradOutput: Tensor,
  input: Tensor,
  weight: Tensor,
  biasSizes: number[] | null,
  stride: number[],
  padding: number[],
  dilation: number[],
  transposed: boolean,
  outputPadding: number[],
  groups: number,
  outputMask: boolean[],
): [Tensor, Tensor, Tensor] {
  const metas = convolutionBackwardMeta(
    gradOutput,
    input,
    weight,
    biasSizes,
    stride,
    padding,
    dilation,
    transposed,
    outputPadding,
    groups,
    outputMask,
  );
  const name = 'slow_conv2d_backward_webgpu';
  checkConvDtype(name, input.dtype);
  const p = convolutionParams(input, weight, null, stride, padding, dilation, transposed, outputPadding, groups);
  const g = convGeometry(input.shape, weight.shape, p, transposed, groups);
  const outputs: Tensor[] = [];
  try {
    for (const m of metas) outputs.push(emptyGpu(m.shape, m.dtype));
    const [gi, gw, gb] = outputs;
    if (!transposed) {
      if (outputMask[0]) convProduct(name, 'input_grad', g, { y: gradOutput, w: weight, out: gi });
      if (outputMask[1]) convProduct(name, 'weight_grad', g, { y: gradOutput, x: input, out: gw });
    } else {
      // In `g`'s terms the transposed convolution's input is an output gradient and its output gradient the
      // gradient of an input: its input gradient is the forward convolution of its output gradient, its
      // weight gradient the weight gradient of `g` with the two exchanged.
      if (outputMask[0]) convProduct(name, 'forward', g, { x: gradOutput, w: weight, out: gi });
      if (outputMask[1]) convProduct(name, 'weight_grad', g, { y: input, x: gradOutput, out: gw });
    }
    if (outputMask[2] && biasSizes !== null) channelSum(name, gradOutput, gb);
    return [gi, gw, gb];
  } catch (e) {
    for (const t of outputs) t.dispose();
    throw e;
  }
}

/**
 * WebGPU kernels of `convolution` and `convolution_backward`.
 *
 * @example
 * ```ts
 * import { GPU_CONV_KERNELS } from './conv.ts';
 * typeof GPU_CONV_KERNELS.convolution; // 'function'
 * ```
 */
export const GPU_CONV_KERNELS: { readonly convolution: Kernel; readonly convolution_backward: Kernel } = {
  'convolution': convolution as Kernel,
  'convolution_backward': convolutionBackward as Kernel,
};
