/**
 * The typed surface of the elementwise kernel families (kernels_as/common.ts, elementwise.ts, unary.ts,
 * binary.ts, ternary.ts, cast.ts) and the opcode numbers they share with TypeScript.
 *
 * Kernel ABI (see the notes in kernels_as/): pointers are byte offsets into the kernel memory; sizes and
 * strides are in elements; dtypes are PyTorch ScalarType codes. A strided descriptor at `desc` holds i32 words
 * `[ndim, size_0..size_{ndim-1}, strides of operand 0, strides of operand 1, ...]` with operands in argument
 * order (out first), the innermost dimension last and stride 0 for broadcast operands. Every kernel returns a
 * {@linkcode KernelStatus}.
 *
 * @example
 * ```ts
 * import { BinaryOp, KernelStatus } from './exports_elementwise.ts';
 * console.log(BinaryOp.add, KernelStatus.unsupported); // 0 1
 * ```
 *
 * @module
 */

/**
 * What every kernel returns: `ok`, `unsupported` (no kernel for this op and dtype; nothing was written, raise
 * PyTorch's `"add" not implemented for 'Bool'`), or `badArgument` (unknown opcode, negative length, ndim > 16).
 *
 * @example
 * ```ts
 * import { KernelStatus } from './exports_elementwise.ts';
 * const status: number = KernelStatus.ok;
 * console.log(status === KernelStatus.ok); // true
 * ```
 */
export const KernelStatus = { ok: 0, unsupported: 1, badArgument: 2 } as const;

/** A {@linkcode KernelStatus} value. */
export type KernelStatus = typeof KernelStatus[keyof typeof KernelStatus];

/**
 * Opcodes of `unary_contig` / `unary_strided` (kernels_as/elementwise.ts `UNARY_*`). `logicalNot` and `isnan`
 * (and `bitwiseNot` on Bool) write Bool; the others write the input dtype. Float-only ops (exp ... reciprocal)
 * expect integer inputs to be promoted first; floor/ceil/round/trunc/relu/abs/neg/sign also take integers.
 *
 * @example
 * ```ts
 * import { UnaryOp } from './exports_elementwise.ts';
 * console.log(UnaryOp.relu); // 13
 * ```
 */
export const UnaryOp = {
  neg: 0,
  abs: 1,
  sign: 2,
  exp: 3,
  log: 4,
  log1p: 5,
  expm1: 6,
  sqrt: 7,
  rsqrt: 8,
  sin: 9,
  cos: 10,
  tanh: 11,
  sigmoid: 12,
  relu: 13,
  gelu: 14,
  geluTanh: 15,
  silu: 16,
  erf: 17,
  floor: 18,
  ceil: 19,
  round: 20,
  trunc: 21,
  reciprocal: 22,
  logicalNot: 23,
  isnan: 24,
  bitwiseNot: 25,
} as const;

/** A {@linkcode UnaryOp} opcode. */
export type UnaryOp = typeof UnaryOp[keyof typeof UnaryOp];

/**
 * Opcodes of `activation_contig` / `activation_strided` (kernels_as/activation.ts `ACT_*`); each takes up to
 * three scalar parameters (Note [Activation kernels]).
 *
 * @example
 * ```ts
 * import { ActivationOp } from './exports_elementwise.ts';
 * console.log(ActivationOp.softplus); // 2
 * ```
 */
export const ActivationOp = { leakyRelu: 0, elu: 1, softplus: 2, hardtanh: 3, mish: 4, logSigmoid: 5 } as const;

/** An {@linkcode ActivationOp} opcode. */
export type ActivationOp = typeof ActivationOp[keyof typeof ActivationOp];

/**
 * Opcodes of `loss_contig` / `loss_strided` (kernels_as/activation.ts `LOSS_*`): the elementwise losses before
 * their reduction. `outOfRange` is the status of a `bce` input outside [0, 1].
 *
 * @example
 * ```ts
 * import { LossOp } from './exports_elementwise.ts';
 * console.log(LossOp.huber); // 1
 * ```
 */
export const LossOp = { smoothL1: 0, huber: 1, bce: 2, outOfRange: 3 } as const;

/**
 * Opcodes of the `binary_*` kernels (kernels_as/elementwise.ts `BINARY_*`). From `logicalAnd` on, the output
 * is Bool; before it, the output has the common dtype. `add`/`sub` compute `a ± alpha*b`; `div` is true division
 * (floats only); `divTrunc`/`divFloor` are `rounding_mode='trunc'|'floor'`; integer division, remainder and
 * fmod by zero give 0 instead of raising (check divisors first for PyTorch's ZeroDivisionError).
 *
 * @example
 * ```ts
 * import { BinaryOp } from './exports_elementwise.ts';
 * console.log(BinaryOp.lt); // 20
 * ```
 */
export const BinaryOp = {
  add: 0,
  sub: 1,
  mul: 2,
  div: 3,
  divTrunc: 4,
  divFloor: 5,
  remainder: 6,
  fmod: 7,
  pow: 8,
  minimum: 9,
  maximum: 10,
  atan2: 11,
  bitwiseAnd: 12,
  bitwiseOr: 13,
  bitwiseXor: 14,
  logicalAnd: 15,
  logicalOr: 16,
  logicalXor: 17,
  eq: 18,
  ne: 19,
  lt: 20,
  le: 21,
  gt: 22,
  ge: 23,
} as const;

/** A {@linkcode BinaryOp} opcode. */
export type BinaryOp = typeof BinaryOp[keyof typeof BinaryOp];

/**
 * Bit flags of the clamp kernels: which bounds are present.
 *
 * @example
 * ```ts
 * import { ClampFlags } from './exports_elementwise.ts';
 * console.log(ClampFlags.min | ClampFlags.max); // 3
 * ```
 */
export const ClampFlags = { min: 1, max: 2 } as const;

/**
 * Exports of the elementwise kernel families. All pointers are byte offsets into the kernel memory.
 *
 * @example
 * ```ts
 * import { createKernelMemory, instantiateKernels } from './wasm.ts';
 * import { BinaryOp } from './exports_elementwise.ts';
 * const memory = createKernelMemory();
 * const k = instantiateKernels(memory);
 * const x = k.heapBase();
 * new Float32Array(memory.buffer as unknown as ArrayBuffer, x, 3).set([1, 2, 3]);
 * k.binary_scalar_contig(BinaryOp.add, 6, x, x, 1, 3, 1); // x += 1 in place (6 = float32)
 * console.log(new Float32Array(memory.buffer as unknown as ArrayBuffer, x, 3)); // Float32Array [2, 3, 4]
 * ```
 */
export interface ElementwiseExports {
  /** First byte the TypeScript allocator may hand out (after the module's static data), 64-byte aligned. */
  heapBase(): number;
  /** 1 in the relaxed-SIMD build, 0 in the plain SIMD build. */
  relaxedSimdBuild(): number;
  /** Bytes per element of a ScalarType code, 0 if the module does not know it. */
  itemSize(dtype: number): number;
  /** IEEE half bits to float (exact). */
  f16ToF32(bits: number): number;
  /** Float to IEEE half bits, round to nearest even. */
  f32ToF16(x: number): number;
  /** bfloat16 bits to float (exact). */
  bf16ToF32(bits: number): number;
  /** Float to bfloat16 bits, round to nearest even, NaN stays NaN. */
  f32ToBf16(x: number): number;
  /** Loads one element of `dtype` at `ptr` as a float64 (slow path). */
  loadAsF64(dtype: number, ptr: number): number;
  /** Stores `v` as one element of `dtype` at `ptr` (slow path, cast rules of `cast_contig`). */
  storeFromF64(dtype: number, ptr: number, v: number): void;

  /** `out[i] = op(a[i])`, contiguous; `dtype` is the input dtype. */
  unary_contig(op: number, dtype: number, out: number, a: number, n: number): KernelStatus;
  /** Strided unary; descriptor operands: out, a. */
  unary_strided(op: number, dtype: number, out: number, a: number, desc: number): KernelStatus;

  /** `out[i] = op(a[i]; p0, p1, p2)` for a float32/float64/bfloat16 activation, contiguous. */
  activation_contig(
    op: number,
    dtype: number,
    out: number,
    a: number,
    n: number,
    p0: number,
    p1: number,
    p2: number,
  ): KernelStatus;
  /** `out[i] = loss(a[i], b[i]; p0)` for a float32/float64/bfloat16 pointwise loss, contiguous. */
  loss_contig(op: number, dtype: number, out: number, a: number, b: number, n: number, p0: number): number;
  /** Strided pointwise loss; descriptor operands: out, a, b. */
  loss_strided(op: number, dtype: number, out: number, a: number, b: number, desc: number, p0: number): number;
  /** Strided activation; descriptor operands: out, a. */
  activation_strided(
    op: number,
    dtype: number,
    out: number,
    a: number,
    desc: number,
    p0: number,
    p1: number,
    p2: number,
  ): KernelStatus;

  /** `out[i] = a[i] op b[i]` (`a + alpha*b` for add/sub), contiguous. */
  binary_contig(op: number, dtype: number, out: number, a: number, b: number, n: number, alpha: number): KernelStatus;
  /** Strided binary; descriptor operands: out, a, b. */
  binary_strided(
    op: number,
    dtype: number,
    out: number,
    a: number,
    b: number,
    desc: number,
    alpha: number,
  ): KernelStatus;
  /** `out[i] = a[i] op s` with a scalar `s`, contiguous. */
  binary_scalar_contig(
    op: number,
    dtype: number,
    out: number,
    a: number,
    s: number,
    n: number,
    alpha: number,
  ): KernelStatus;
  /** Strided `a op s`; descriptor operands: out, a. */
  binary_scalar_strided(
    op: number,
    dtype: number,
    out: number,
    a: number,
    s: number,
    desc: number,
    alpha: number,
  ): KernelStatus;
  /** `out[i] = s op b[i]` with a scalar `s` on the left, contiguous. */
  binary_rscalar_contig(
    op: number,
    dtype: number,
    out: number,
    s: number,
    b: number,
    n: number,
    alpha: number,
  ): KernelStatus;
  /** Strided `s op b`; descriptor operands: out, b. */
  binary_rscalar_strided(
    op: number,
    dtype: number,
    out: number,
    s: number,
    b: number,
    desc: number,
    alpha: number,
  ): KernelStatus;

  /** `out[i] = cond[i] ? a[i] : b[i]`; cond is Bool, the others `dtype`. */
  where_contig(dtype: number, out: number, cond: number, a: number, b: number, n: number): KernelStatus;
  /** Strided where; descriptor operands: out, cond, a, b. */
  where_strided(dtype: number, out: number, cond: number, a: number, b: number, desc: number): KernelStatus;
  /** Clamp to scalar bounds; `flags` is a {@linkcode ClampFlags} mask. Not for Bool. */
  clamp_contig(dtype: number, out: number, a: number, n: number, min: number, max: number, flags: number): KernelStatus;
  /** Strided scalar clamp; descriptor operands: out, a. */
  clamp_strided(
    dtype: number,
    out: number,
    a: number,
    desc: number,
    min: number,
    max: number,
    flags: number,
  ): KernelStatus;
  /** Clamp to tensor bounds `lo`/`hi` (pass 0 and clear the flag for an absent one). */
  clamp_tensor_contig(
    dtype: number,
    out: number,
    a: number,
    lo: number,
    hi: number,
    n: number,
    flags: number,
  ): KernelStatus;
  /** Strided tensor clamp; descriptor operands: out, a, lo, hi. */
  clamp_tensor_strided(
    dtype: number,
    out: number,
    a: number,
    lo: number,
    hi: number,
    desc: number,
    flags: number,
  ): KernelStatus;
  /** `out = lerp(a, b, w)` with a tensor weight; floating dtypes only. */
  lerp_contig(dtype: number, out: number, a: number, b: number, w: number, n: number): KernelStatus;
  /** Strided lerp; descriptor operands: out, a, b, w. */
  lerp_strided(dtype: number, out: number, a: number, b: number, w: number, desc: number): KernelStatus;
  /** `out = lerp(a, b, weight)` with a scalar weight. */
  lerp_scalar_contig(dtype: number, out: number, a: number, b: number, weight: number, n: number): KernelStatus;
  /** Strided scalar-weight lerp; descriptor operands: out, a, b. */
  lerp_scalar_strided(dtype: number, out: number, a: number, b: number, weight: number, desc: number): KernelStatus;

  /** Fills `n` elements with `value` converted to `dtype` (exact for i64 only up to 2^53). */
  fill_contig(dtype: number, out: number, value: number, n: number): KernelStatus;
  /** Strided fill; descriptor operands: out. */
  fill_strided(dtype: number, out: number, value: number, desc: number): KernelStatus;
  /** Copies `n` elements of `dtype` (memmove semantics). */
  copy_contig(dtype: number, out: number, a: number, n: number): KernelStatus;
  /** Strided same-dtype copy; descriptor operands: out, a. */
  copy_strided(dtype: number, out: number, a: number, desc: number): KernelStatus;
  /** Converts `n` contiguous elements from `srcDtype` to `dstDtype` (any of the 100 pairs). */
  cast_contig(srcDtype: number, dstDtype: number, out: number, a: number, n: number): KernelStatus;
  /** Strided conversion; descriptor operands: out, a. */
  cast_strided(srcDtype: number, dstDtype: number, out: number, a: number, desc: number): KernelStatus;
}
