import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KernelStatus } from '../../core/cpu/exports_elementwise.ts';
import {
  ALL_DTYPES,
  bf16Bits,
  bf16Value,
  DT,
  type Dtype,
  DTYPE_NAME,
  f16Bits,
  f16Value,
  FLOAT_DTYPES,
  harness,
  itemSize,
  mulberry32,
  roundTo,
  wrapInt,
} from './_kernel_harness.ts';

const h = harness();
const isFloat = (d: Dtype) => FLOAT_DTYPES.includes(d);

/** The f32 with these bits. */
const f32FromBits = (b: number) => new Float32Array(new Uint32Array([b]).buffer)[0];

/** What storing the number `v` into `dtype` gives (the test's way of making a source tensor). */
function representable(dtype: Dtype, v: number): number {
  if (isFloat(dtype)) return roundTo(dtype, v);
  if (dtype === DT.bool) return v !== 0 ? 1 : 0;
  if (!Number.isFinite(v)) return 0;
  return wrapInt(dtype, Math.trunc(v));
}

/** Note [Cast semantics]: the expected result of converting the source value `v` to `dst`. */
function castRef(src: Dtype, dst: Dtype, v: number): number {
  if (dst === DT.bool) return v !== 0 ? 1 : 0; // NaN is nonzero
  if (isFloat(dst)) return roundTo(dst, v);
  if (!isFloat(src)) return wrapInt(dst, v); // integer and Bool sources wrap
  // float -> integer, as PyTorch 1.13 on x86-64 (Note [Float to int casts]): int64 and uint8 through int64, the
  // narrower signed types through int32; NaN and values outside the intermediate type give its minimum.
  const t = Math.trunc(v) + 0; // + 0: no -0 for integers
  if (dst === DT.i64 || dst === DT.u8) {
    const i64 = Number.isNaN(v) || t < -(2 ** 63) || t >= 2 ** 63 ? -(2 ** 63) : t;
    return dst === DT.u8 ? Number(BigInt.asUintN(8, BigInt(i64))) : i64;
  }
  return wrapInt(dst, Number.isNaN(v) || t < -(2 ** 31) || t >= 2 ** 31 ? -(2 ** 31) : t);
}

const EDGE_VALUES = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  0.9999,
  -1.9999,
  2.5,
  -2.5,
  127,
  128,
  255,
  256,
  -128,
  -129,
  300.7,
  -300.7,
  32767,
  32768,
  -32769,
  65504,
  65519,
  65520,
  1e5,
  -1e5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  1e10,
  -1e10,
  3e38,
  1e-8,
  -1e-8,
  6e-8,
  1e-40,
  NaN,
  Infinity,
  -Infinity,
  1 / 3,
];

describe('cast kernels', () => {
  it("convert every one of the 100 dtype pairs by PyTorch's rules, contiguous and strided", () => {
    for (const src of ALL_DTYPES) {
      const values = EDGE_VALUES.map((v) => representable(src, v));
      for (const dst of ALL_DTYPES) {
        h.reset();
        const n = values.length;
        const a = h.put(src, values);
        const out = h.alloc(n * itemSize(dst));
        assert.equal(h.k.cast_contig(src, dst, out, a, n), KernelStatus.ok);
        const got = h.get(dst, out, n);
        const want = values.map((v) => castRef(src, dst, v));
        for (let i = 0; i < n; i++) {
          const msg = `${DTYPE_NAME[src]} -> ${DTYPE_NAME[dst]}: ${values[i]} gave ${got[i]}, want ${want[i]}`;
          assert.ok(Object.is(got[i], want[i]), msg); // Object.is: NaN equals NaN, -0 differs from 0
        }
        // Strided: read the source backwards into a strided destination (every other slot).
        const out2 = h.alloc(2 * n * itemSize(dst));
        const lastA = a + (n - 1) * itemSize(src);
        assert.equal(h.k.cast_strided(src, dst, out2, lastA, h.desc([n], [2], [-1])), KernelStatus.ok);
        const got2 = h.get(dst, out2, 2 * n);
        for (let i = 0; i < n; i++) {
          assert.ok(Object.is(got2[2 * i], want[n - 1 - i]), `${DTYPE_NAME[src]} -> ${DTYPE_NAME[dst]} strided`);
        }
      }
    }
  });

  it('round-trips all 65536 float16 bit patterns through float32 exactly (NaNs stay NaN, quieted)', () => {
    h.reset();
    const n = 65536;
    const src = h.alloc(n * 2);
    const bits = h.bits16(src, n);
    for (let i = 0; i < n; i++) bits[i] = i;
    const wide = h.alloc(n * 4);
    assert.equal(h.k.cast_contig(DT.f16, DT.f32, wide, src, n), KernelStatus.ok);
    const f = h.f32(wide, n);
    const back = h.alloc(n * 2);
    assert.equal(h.k.cast_contig(DT.f32, DT.f16, back, wide, n), KernelStatus.ok);
    const b = h.bits16(back, n);
    for (let i = 0; i < n; i++) {
      const isNaN = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
      if (isNaN) {
        assert.ok(Number.isNaN(f[i]));
        assert.equal(b[i], i | 0x200, `NaN ${i.toString(16)}`);
      } else {
        assert.ok(Object.is(f[i], f16Value(i)), `f16 ${i.toString(16)} -> ${f[i]}`);
        assert.equal(b[i], i, `f16 ${i.toString(16)} round trip`);
      }
    }
  });

  it('round-trips all 65536 bfloat16 bit patterns through float32 exactly', () => {
    h.reset();
    const n = 65536;
    const src = h.alloc(n * 2);
    const bits = h.bits16(src, n);
    for (let i = 0; i < n; i++) bits[i] = i;
    const wide = h.alloc(n * 4);
    assert.equal(h.k.cast_contig(DT.bf16, DT.f32, wide, src, n), KernelStatus.ok);
    // Compare raw bits: reading a NaN into a JS number may canonicalise its payload.
    const f = new Uint32Array(h.memory.buffer as unknown as ArrayBuffer, wide, n);
    const back = h.alloc(n * 2);
    assert.equal(h.k.cast_contig(DT.f32, DT.bf16, back, wide, n), KernelStatus.ok);
    const b = h.bits16(back, n);
    for (let i = 0; i < n; i++) {
      const isNaN = (i & 0x7f80) === 0x7f80 && (i & 0x7f) !== 0;
      assert.equal(f[i], (i << 16) >>> 0);
      assert.equal(b[i], isNaN ? i | 0x40 : i, `bf16 ${i.toString(16)}`);
    }
  });

  it('rounds float32 to float16 and bfloat16 to nearest even, on random bit patterns and exact ties', () => {
    h.reset();
    const rand = mulberry32(17);
    const n = 40000;
    const xs = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      if (i % 4 === 0) {
        // the exact midpoint between two adjacent finite halves (representable in f32)
        const hb = Math.floor(rand() * 0x7bff);
        xs[i] = ((f16Value(hb) + f16Value(hb + 1)) / 2) * (rand() < 0.5 ? -1 : 1);
      } else if (i % 4 === 1) {
        const bb = Math.floor(rand() * 0x7f7f);
        xs[i] = (bf16Value(bb) + bf16Value(bb + 1)) / 2;
      } else {
        xs[i] = f32FromBits(Math.floor(rand() * 2 ** 32));
      }
    }
    const a = h.put(DT.f32, xs);
    const half = h.alloc(2 * n);
    const brain = h.alloc(2 * n);
    assert.equal(h.k.cast_contig(DT.f32, DT.f16, half, a, n), KernelStatus.ok);
    assert.equal(h.k.cast_contig(DT.f32, DT.bf16, brain, a, n), KernelStatus.ok);
    const hb = h.bits16(half, n);
    const bb = h.bits16(brain, n);
    const f = h.f32(a, n);
    for (let i = 0; i < n; i++) {
      const x = f[i];
      if (Number.isNaN(x)) {
        assert.equal(hb[i] & 0x7e00, 0x7e00);
        assert.equal(bb[i] & 0x7fc0, 0x7fc0);
        continue;
      }
      assert.equal(hb[i], f16Bits(x), `f16(${x})`);
      assert.equal(bb[i], bf16Bits(x), `bf16(${x})`);
    }
    // The module's exported scalar helpers agree with the kernels.
    assert.equal(h.k.f32ToF16(65520), 0x7c00);
    assert.equal(h.k.f32ToF16(65519.996), 0x7bff);
    assert.equal(h.k.f32ToF16(2 ** -25), 0); // tie between 0 and the smallest subnormal rounds to even (0)
    assert.equal(h.k.f32ToF16(3 * 2 ** -25), 2); // tie between subnormals 1 and 2 rounds to 2
    assert.equal(h.k.f16ToF32(0x0001), 2 ** -24);
    assert.equal(h.k.f32ToBf16(1 + 2 ** -8), 0x3f80); // tie to even
    assert.equal(h.k.f32ToBf16(1 + 3 * 2 ** -8), 0x3f82);
    assert.equal(h.k.bf16ToF32(0x3f80), 1);
  });

  it('keeps int64 exact and converts it with a single rounding', () => {
    h.reset();
    const vs = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -(2n ** 40n) - 3n, 4294967297n];
    const a = h.alloc(8 * vs.length);
    h.i64(a, vs.length).set(vs);
    const out = h.alloc(8 * vs.length);
    assert.equal(h.k.cast_contig(DT.i64, DT.i64, out, a, vs.length), KernelStatus.ok);
    assert.deepEqual([...h.i64(out, vs.length)], vs);
    assert.equal(h.k.cast_contig(DT.i64, DT.f64, out, a, vs.length), KernelStatus.ok);
    assert.deepEqual(h.get(DT.f64, out, vs.length), vs.map(Number));
    assert.equal(h.k.cast_contig(DT.i64, DT.f32, out, a, vs.length), KernelStatus.ok);
    assert.deepEqual(h.get(DT.f32, out, vs.length), vs.map((v) => Math.fround(Number(v))));
    assert.equal(h.k.cast_contig(DT.i64, DT.i32, out, a, vs.length), KernelStatus.ok);
    assert.deepEqual(h.get(DT.i32, out, vs.length), vs.map((v) => Number(BigInt.asIntN(32, v))));
    const i32s = h.put(DT.i32, [-1, 2 ** 31 - 1, -(2 ** 31)]);
    assert.equal(h.k.cast_contig(DT.i32, DT.i64, out, i32s, 3), KernelStatus.ok);
    assert.deepEqual([...h.i64(out, 3)], [-1n, 2n ** 31n - 1n, -(2n ** 31n)]);
    const f = h.put(DT.f64, [9.3e18, -9.3e18, NaN, 2 ** 62]);
    assert.equal(h.k.cast_contig(DT.f64, DT.i64, out, f, 4), KernelStatus.ok);
    // PyTorch 1.13 (x86-64): out of range and NaN give INT64_MIN, whatever the sign.
    assert.deepEqual([...h.i64(out, 4)], [-(2n ** 63n), -(2n ** 63n), -(2n ** 63n), 2n ** 62n]);
  });

  it('vector paths (f32<->f64, i32<->f32, u8/Bool->f32) agree with scalar conversion at every length', () => {
    const rand = mulberry32(3);
    const pairs: [Dtype, Dtype][] = [
      [DT.f32, DT.f64],
      [DT.f64, DT.f32],
      [DT.i32, DT.f32],
      [DT.f32, DT.i32],
      [DT.u8, DT.f32],
      [DT.bool, DT.f32],
      [DT.f32, DT.f32],
    ];
    for (const [src, dst] of pairs) {
      for (const n of [1, 3, 4, 5, 17, 1001]) {
        h.reset();
        const xs = Array.from({ length: n }, () => representable(src, (rand() - 0.5) * 2 ** (rand() * 40)));
        if (n > 4 && isFloat(src)) xs[2] = NaN;
        const a = h.put(src, xs);
        const out = h.alloc(n * itemSize(dst) + 16);
        assert.equal(h.k.cast_contig(src, dst, out, a, n), KernelStatus.ok);
        assert.deepEqual(h.get(dst, out, n), xs.map((v) => castRef(src, dst, v)), `${src}->${dst} n=${n}`);
      }
    }
  });

  it('returns a status instead of touching memory for unknown dtypes and bad lengths', () => {
    h.reset();
    const p = h.put(DT.u8, [9, 9, 9, 9]);
    assert.equal(h.k.cast_contig(8, DT.f32, p, p, 1), KernelStatus.unsupported);
    assert.equal(h.k.cast_contig(DT.f32, 12, p, p, 1), KernelStatus.unsupported);
    assert.equal(h.k.cast_contig(DT.f32, DT.f32, p, p, -1), KernelStatus.badArgument);
    assert.equal(h.k.cast_strided(DT.f32, 16, p, p, h.desc([1], [1], [1])), KernelStatus.unsupported);
    assert.deepEqual(h.get(DT.u8, p, 4), [9, 9, 9, 9]);
    // The generic slow-path helpers follow the same rules.
    h.k.storeFromF64(DT.u8, p, -1);
    assert.equal(h.get(DT.u8, p, 1)[0], 255);
    h.k.storeFromF64(DT.i16, p, NaN);
    assert.equal(h.get(DT.i16, p, 1)[0], 0);
    h.k.storeFromF64(DT.f16, p, 1 / 3);
    assert.equal(h.k.loadAsF64(DT.f16, p), f16Value(f16Bits(1 / 3)));
  });
});
