// conv1d / conv2d / conv_transpose2d, max / avg / adaptive-avg pooling: values against float64 references computed
// here by direct loops, gradients by gradcheck (float64 finite differences), PyTorch's error messages, and no
// leaked tensors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  adaptiveAvgPool2d,
  avgPool2d,
  conv1d,
  conv2d,
  convolution,
  convTranspose2d,
  gradcheck,
  manualSeed,
  maxPool2d,
  maxPool2dWithIndices,
  memoryStats,
  randn,
  type Tensor,
  tensor,
  zeros,
} from '../../mod.ts';
import { nonContiguousTensor, randomTensor, rng, tolerance, values } from './_helpers.ts';

const next = rng(0xc0417);

interface Conv {
  stride: [number, number];
  padding: [number, number];
  dilation: [number, number];
  groups: number;
}

/** Direct float64 convolution of flat NCHW data (padding may differ per side for 'same'). */
function convRef(
  x: number[],
  [N, C, H, W]: number[],
  w: number[],
  [OC, Cg, KH, KW]: number[],
  b: number[] | null,
  { stride: [sh, sw], padding: [ph, pw], dilation: [dh, dw], groups }: Conv,
  [OH, OW]: [number, number],
): number[] {
  const out: number[] = [];
  const OCg = OC / groups;
  for (let n = 0; n < N; n++) {
    for (let o = 0; o < OC; o++) {
      const g = Math.floor(o / OCg);
      for (let i = 0; i < OH; i++) {
        for (let j = 0; j < OW; j++) {
          let s = b === null ? 0 : b[o];
          for (let c = 0; c < Cg; c++) {
            for (let kh = 0; kh < KH; kh++) {
              for (let kw = 0; kw < KW; kw++) {
                const ih = i * sh - ph + kh * dh, iw = j * sw - pw + kw * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += x[((n * C + g * Cg + c) * H + ih) * W + iw] * w[((o * Cg + c) * KH + kh) * KW + kw];
              }
            }
          }
          out.push(s);
        }
      }
    }
  }
  return out;
}

function assertClose(actual: Tensor, expected: number[], dtype: string, what: string): void {
  const got = values(actual), { rtol, atol } = tolerance(dtype);
  assert.equal(got.length, expected.length, `${what}: element count`);
  // Each output is a long sum of products: its rounding error scales with the size of the terms, so the
  // tolerance is relative to the largest reference value rather than to each (possibly cancelled) one.
  const scale = expected.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  for (let i = 0; i < got.length; i++) {
    const tol = 4 * (atol + rtol * scale);
    assert.ok(Math.abs(got[i] - expected[i]) <= tol, `${what}[${i}]: ${got[i]} vs ${expected[i]}`);
  }
}

function leakCheck(fn: () => void): void {
  const before = memoryStats().liveTensors;
  fn();
  assert.equal(memoryStats().liveTensors, before, 'no tensor leaked');
}

const CONV_CASES: Array<[string, number[], number[], Conv]> = [
  ['plain 3x3', [2, 3, 7, 6], [4, 3, 3, 3], { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 }],
  ['stride 2, padding 1', [2, 3, 9, 8], [5, 3, 3, 3], { stride: [2, 2], padding: [1, 1], dilation: [1, 1], groups: 1 }],
  [
    'stride (2, 3), padding (1, 2), dilation (2, 1), groups 2',
    [1, 4, 9, 11],
    [6, 2, 3, 2],
    { stride: [2, 3], padding: [1, 2], dilation: [2, 1], groups: 2 },
  ],
  ['pointwise 1x1', [3, 5, 4, 3], [7, 5, 1, 1], { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 }],
  ['depthwise', [2, 4, 5, 5], [4, 1, 3, 3], { stride: [1, 1], padding: [1, 1], dilation: [1, 1], groups: 4 }],
  ['1x1 with stride 2', [1, 3, 5, 5], [2, 3, 1, 1], { stride: [2, 2], padding: [0, 0], dilation: [1, 1], groups: 1 }],
  // 3x3, stride 1, >= 8 channels per group: the Winograd path (odd output sizes clip the last 2x2 tiles).
  ['Winograd, padding (1, 2), groups 2', [3, 16, 7, 9], [6, 8, 3, 3], {
    stride: [1, 1],
    padding: [1, 2],
    dilation: [1, 1],
    groups: 2,
  }],
  ['Winograd, no padding, odd output', [2, 8, 5, 6], [5, 8, 3, 3], {
    stride: [1, 1],
    padding: [0, 0],
    dilation: [1, 1],
    groups: 1,
  }],
  ['Winograd, vector paths (wide rows)', [2, 8, 6, 21], [4, 8, 3, 3], {
    stride: [1, 1],
    padding: [1, 1],
    dilation: [1, 1],
    groups: 1,
  }],
  ['Winograd, many samples per chunk', [70, 8, 4, 4], [3, 8, 3, 3], {
    stride: [1, 1],
    padding: [1, 1],
    dilation: [1, 1],
    groups: 1,
  }],
];

const outSize = (i: number, k: number, s: number, p: number, d: number) =>
  Math.floor((i + 2 * p - d * (k - 1) - 1) / s) + 1;

describe('conv2d', () => {
  for (const dtype of ['float32', 'float64']) {
    for (const [name, xs, ws, c] of CONV_CASES) {
      it(`${name} (${dtype}, non-contiguous input)`, () =>
        leakCheck(() => {
          using x = nonContiguousTensor(xs, dtype, next);
          using w = randomTensor(ws, dtype, next);
          using b = randomTensor([ws[0]], dtype, next);
          const OH = outSize(xs[2], ws[2], c.stride[0], c.padding[0], c.dilation[0]);
          const OW = outSize(xs[3], ws[3], c.stride[1], c.padding[1], c.dilation[1]);
          using y = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
          assert.deepEqual(y.shape, [xs[0], ws[0], OH, OW]);
          assert.equal(y.dtype.name, dtype);
          assertClose(y, convRef(values(x), xs, values(w), ws, values(b), c, [OH, OW]), dtype, name);
          using y0 = conv2d(x, w, null, c.stride, c.padding, c.dilation, c.groups);
          assertClose(y0, convRef(values(x), xs, values(w), ws, null, c, [OH, OW]), dtype, `${name} (no bias)`);
        }));
    }
  }

  it('takes an unbatched [C, H, W] input and keyword options', () =>
    leakCheck(() => {
      using x = randomTensor([3, 6, 5], 'float64', next);
      using w = randomTensor([2, 3, 3, 3], 'float64', next);
      using y = conv2d(x, w, { padding: 1, stride: 2 });
      assert.deepEqual(y.shape, [2, 3, 3]);
      const c: Conv = { stride: [2, 2], padding: [1, 1], dilation: [1, 1], groups: 1 };
      assertClose(
        y,
        convRef(values(x), [1, 3, 6, 5], values(w), [2, 3, 3, 3], null, c, [3, 3]),
        'float64',
        'unbatched',
      );
    }));

  it("padding 'same' (odd and even kernels, dilation) and 'valid'", () =>
    leakCheck(() => {
      for (const [k, d] of [[3, 1], [4, 1], [2, 3], [5, 2]]) {
        using x = randomTensor([2, 2, 7, 6], 'float64', next);
        using w = randomTensor([3, 2, k, k], 'float64', next);
        using y = conv2d(x, w, null, 1, 'same', d);
        assert.deepEqual(y.shape, [2, 3, 7, 6]);
        // PyTorch puts the odd element of the total padding d * (k - 1) on the right: the left pad is the floor.
        const left = Math.floor((d * (k - 1)) / 2);
        const c: Conv = { stride: [1, 1], padding: [left, left], dilation: [d, d], groups: 1 };
        assertClose(
          y,
          convRef(values(x), [2, 2, 7, 6], values(w), [3, 2, k, k], null, c, [7, 6]),
          'float64',
          `same ${k}`,
        );
      }
      using x = randomTensor([1, 2, 5, 5], 'float32', next);
      using w = randomTensor([1, 2, 3, 3], 'float32', next);
      using v = conv2d(x, w, null, 1, 'valid');
      assert.deepEqual(v.shape, [1, 1, 3, 3]);
    }));

  it('conv1d: strided, padded, dilated, grouped, unbatched and same', () =>
    leakCheck(() => {
      using x = randomTensor([2, 4, 11], 'float64', next);
      using w = randomTensor([6, 2, 3], 'float64', next);
      using b = randomTensor([6], 'float64', next);
      using y = conv1d(x, w, b, 2, 1, 2, 2);
      const L = outSize(11, 3, 2, 1, 2);
      assert.deepEqual(y.shape, [2, 6, L]);
      const c: Conv = { stride: [1, 2], padding: [0, 1], dilation: [1, 2], groups: 2 };
      assertClose(
        y,
        convRef(values(x), [2, 4, 1, 11], values(w), [6, 2, 1, 3], values(b), c, [1, L]),
        'float64',
        'conv1d',
      );
      using x1 = randomTensor([4, 11], 'float64', next);
      using y1 = conv1d(x1, w, null, { groups: 2, padding: 'same' });
      assert.deepEqual(y1.shape, [6, 11]);
    }));

  it('weight gradient against a float64 reference (im2col and Winograd paths, float32 and float64)', () =>
    leakCheck(() => {
      const cases: Array<[number[], number[], number, number, number]> = [
        // [input shape, weight shape, stride, padding, groups]
        [[3, 16, 7, 9], [6, 8, 3, 3], 1, 1, 2],
        [[2, 8, 6, 21], [5, 8, 3, 3], 1, 0, 1],
        [[2, 8, 5, 5], [4, 8, 3, 3], 1, 3, 1],
        [[2, 3, 7, 6], [4, 3, 3, 2], 2, 1, 1],
      ];
      for (const dtype of ['float32', 'float64']) {
        for (const [xs, ws, stride, pad, groups] of cases) {
          using x = randomTensor(xs, dtype, next);
          using w0 = randomTensor(ws, dtype, next);
          const w = w0.detach().requiresGrad_();
          const y = conv2d(x, w, null, stride, pad, 1, groups);
          using g = randomTensor(y.shape.slice(), dtype, next);
          y.backward(g);
          const [N, C, H, W] = xs, [OC, Cg, KH, KW] = ws, OCg = OC / groups, [OH, OW] = [y.shape[2], y.shape[3]];
          const X = values(x), D = values(g), ref: number[] = [];
          for (let o = 0; o < OC; o++) {
            for (let c = 0; c < Cg; c++) {
              for (let kh = 0; kh < KH; kh++) {
                for (let kw = 0; kw < KW; kw++) {
                  let s = 0;
                  const cin = Math.floor(o / OCg) * Cg + c;
                  for (let n = 0; n < N; n++) {
                    for (let i = 0; i < OH; i++) {
                      for (let j = 0; j < OW; j++) {
                        const ih = i * stride - pad + kh, iw = j * stride - pad + kw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        s += D[((n * OC + o) * OH + i) * OW + j] * X[((n * C + cin) * H + ih) * W + iw];
                      }
                    }
                  }
                  ref.push(s);
                }
              }
            }
          }
          assertClose(w.grad!, ref, dtype, `weight gradient ${xs} ${ws} (${dtype})`);
          w.grad!.dispose();
          w.grad = null;
          y.dispose();
          w.dispose();
        }
      }
    }));

  it('the input gradient is the adjoint of conv2d for every padding of a 3x3 stride-1 kernel (Winograd and im2col)', () =>
    leakCheck(() => {
      for (const [channels, pad] of [[8, 0], [8, 1], [16, 2], [8, 3], [4, 1]] as const) {
        for (const dtype of ['float32', 'float64']) {
          using x = randomTensor([2, channels, 6, 13], dtype, next);
          using w = randomTensor([channels, channels, 3, 3], dtype, next);
          using y = conv2d(x, w, null, 1, pad);
          using g = randomTensor(y.shape.slice(), dtype, next);
          using t = convTranspose2d(g, w, null, 1, pad);
          assert.deepEqual(t.shape, x.shape);
          using yg = y.mul(g), xt = x.mul(t);
          using lhs = yg.sum(), rhs = xt.sum();
          const [l, r] = [Number(lhs.item()), Number(rhs.item())];
          const tol = dtype === 'float64' ? 1e-9 : 1e-3;
          assert.ok(Math.abs(l - r) <= tol * Math.max(1, Math.abs(l)), `${dtype} pad ${pad}: ${l} vs ${r}`);
        }
      }
    }));

  it('conv_transpose2d is the adjoint of conv2d (stride, padding, output_padding, dilation, groups, bias)', () =>
    leakCheck(() => {
      // <conv(x, w), y> = <x, conv_transpose(y, w)> for the matching geometry.
      using x = randomTensor([2, 4, 9, 8], 'float64', next);
      using w = randomTensor([6, 2, 3, 2], 'float64', next);
      using y = conv2d(x, w, null, [2, 3], [1, 1], [1, 2], 2);
      using g = randomTensor(y.shape.slice(), 'float64', next);
      // Output padding makes the transposed output as large as x (9 x 8) again.
      const opH = 9 - ((y.shape[2] - 1) * 2 - 2 + 1 * (3 - 1) + 1);
      const opW = 8 - ((y.shape[3] - 1) * 3 - 2 + 2 * (2 - 1) + 1);
      using t = convTranspose2d(g, w, null, [2, 3], [1, 1], [opH, opW], 2, [1, 2]);
      assert.deepEqual(t.shape, [2, 4, 9, 8]);
      using yg = y.mul(g), xt = x.mul(t);
      using lhs = yg.sum();
      using rhs = xt.sum();
      const [l, r] = [Number(lhs.item()), Number(rhs.item())];
      assert.ok(Math.abs(l - r) < 1e-9 * Math.max(1, Math.abs(l)));
      using b = randomTensor([4], 'float64', next);
      using tb = convTranspose2d(g, w, b, [2, 3], [1, 1], [opH, opW], 2, [1, 2]);
      using diff = tb.sub(t);
      const d = values(diff);
      for (let i = 0; i < d.length; i++) {
        const ch = Math.floor(i / 72) % 4;
        assert.ok(Math.abs(d[i] - values(b)[ch]) < 1e-12);
      }
    }));

  it('gradients (gradcheck, float64): conv2d stride 2 / padding / dilation / groups / bias', () =>
    leakCheck(() => {
      manualSeed(3);
      const x = randn([2, 4, 7, 6], { dtype: 'float64', requiresGrad: true });
      const w = randn([4, 2, 3, 2], { dtype: 'float64', requiresGrad: true });
      const b = randn([4], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a, k, c) => conv2d(a, k, c, 2, [1, 2], [2, 1], 2), [x, w, b]), true);
      assert.equal(gradcheck((a, k) => conv2d(a, k, null, 1, 'same', 1, 2), [x, w]), true);
      for (const t of [x, w, b]) t.dispose();
    }));

  it('gradients (gradcheck, float64): conv1d, 1x1, conv_transpose2d', () =>
    leakCheck(() => {
      manualSeed(4);
      const x = randn([2, 3, 9], { dtype: 'float64', requiresGrad: true });
      const w = randn([3, 1, 3], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a, k) => conv1d(a, k, null, 2, 1, 1, 3), [x, w]), true);
      const x2 = randn([2, 3, 3, 4], { dtype: 'float64', requiresGrad: true });
      const w2 = randn([5, 3, 1, 1], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a, k) => conv2d(a, k), [x2, w2]), true);
      const x3 = randn([1, 4, 3, 4], { dtype: 'float64', requiresGrad: true });
      const w3 = randn([4, 3, 3, 2], { dtype: 'float64', requiresGrad: true });
      const b3 = randn([6], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a, k, c) => convTranspose2d(a, k, c, 2, 1, 1, 2, [1, 2]), [x3, w3, b3]), true);
      // 3x3 stride 1 with 8 input and output channels: the Winograd forward and input gradient.
      const x4 = randn([2, 8, 4, 5], { dtype: 'float64', requiresGrad: true });
      const w4 = randn([8, 8, 3, 3], { dtype: 'float64', requiresGrad: true });
      const b4 = randn([8], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a, k, c) => conv2d(a, k, c, 1, 1), [x4, w4, b4]), true);
      for (const t of [x, w, x2, w2, x3, w3, b3, x4, w4, b4]) t.dispose();
    }));

  it("PyTorch's errors for bad shapes and arguments (and the runtime stays usable)", () =>
    leakCheck(() => {
      using x = zeros([2, 3, 5, 5]);
      using w = zeros([4, 3, 3, 3]);
      const rt = (fn: () => unknown, message: string) => assert.throws(fn, { message });
      using x2 = zeros([3, 5]);
      rt(() => conv2d(x2, w), 'Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 5]');
      using x4 = zeros([2, 4, 5, 5]);
      rt(
        () => conv2d(x4, w),
        'Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to have 3 channels, but got 4 channels instead',
      );
      using small = zeros([2, 3, 2, 2]);
      rt(
        () => conv2d(small, w),
        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than actual input size",
      );
      using w3 = zeros([4, 3, 3]);
      // conv2d's two-element defaults do not fit a 1-d weight (PyTorch checks the parameters first).
      rt(
        () => conv2d(x, w3),
        'expected stride to be a single integer value or a list of 1 values to match the convolution dimensions, but got stride=[1, 1]',
      );
      rt(
        () => convolution(x, w3, null, [1], [0], [1], false, [0], 1),
        'Expected 3-dimensional input for 3-dimensional weight [4, 3, 3], but got 4-dimensional input of size [2, 3, 5, 5] instead',
      );
      using b3 = zeros([3]);
      rt(
        () => conv2d(x, w, b3),
        'Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, but got bias of size [3] instead',
      );
      rt(() => conv2d(x, w, null, 0), 'non-positive stride is not supported');
      rt(() => conv2d(x, w, null, 1, -1), 'negative padding is not supported');
      rt(() => conv2d(x, w, null, 1, 0, 0), 'non-positive dilation is not supported');
      using wg = zeros([4, 1, 3, 3]);
      rt(() => conv2d(x, wg, null, 1, 0, 1, 0), 'non-positive groups is not supported');
      using w5 = zeros([3, 2, 3, 3]);
      rt(
        () => conv2d(x4, w5, null, 1, 0, 1, 2),
        'Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [[3, 2, 3, 3]] instead',
      );
      rt(() => conv2d(x, w, null, 2, 'same'), "padding='same' is not supported for strided convolutions");
      rt(() => conv2d(x, w, null, 1, 'foo'), "Invalid padding string: 'foo'");
      using xd = zeros([2, 3, 5, 5], { dtype: 'float64' });
      rt(() => conv2d(xd, w), 'expected scalar type Double but found Float');
      using wd = zeros([4, 3, 3, 3], { dtype: 'float64' });
      rt(
        () => conv2d(x, wd),
        'Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same or input should be a MKLDNN tensor and weight is a dense tensor',
      );
      using bd = zeros([4], { dtype: 'float64' });
      rt(() => conv2d(x, w, bd), 'Input type (float) and bias type (double) should be the same');
      using xt = zeros([1, 4, 3, 3]);
      using wt = zeros([4, 2, 3, 3]);
      rt(
        () => convTranspose2d(xt, wt, null, 1, 0, 1),
        'output padding must be smaller than either stride or dilation, but got output_padding_height: 1 output_padding_width: 1 stride_height: 1 stride_width: 1 dilation_height: 1 dilation_width: 1',
      );
      using xt3 = zeros([1, 3, 3, 3]);
      rt(
        () => convTranspose2d(xt3, wt),
        'Given transposed=1, weight of size [4, 2, 3, 3], expected input[1, 3, 3, 3] to have 4 channels, but got 3 channels instead',
      );
      using xl = zeros([2, 3, 5, 5], { dtype: 'int64' });
      using wl = zeros([4, 3, 3, 3], { dtype: 'int64' });
      rt(() => conv2d(xl, wl), `"slow_conv2d_cpu" not implemented for 'Long'`);
      rt(
        () => conv2d(x, w, null, [1, 1, 1]),
        'expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, but got stride=[1, 1, 1]',
      );
      using ok = conv2d(x, w);
      assert.deepEqual(ok.shape, [2, 4, 3, 3]);
    }));
});

/** Direct float64 max pooling: values and flat indices (NaN wins, first maximum otherwise). */
function maxPoolRef(
  x: number[],
  P: number,
  H: number,
  W: number,
  [kh, kw]: number[],
  [sh, sw]: number[],
  [ph, pw]: number[],
  [dh, dw]: number[],
  OH: number,
  OW: number,
): [number[], number[]] {
  const vals: number[] = [], idx: number[] = [];
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < OH; i++) {
      for (let j = 0; j < OW; j++) {
        let best = -Infinity, at = -1;
        for (let a = 0; a < kh; a++) {
          for (let c = 0; c < kw; c++) {
            const h = i * sh - ph + a * dh, w = j * sw - pw + c * dw;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const v = x[(p * H + h) * W + w];
            if (at < 0 || v > best || Number.isNaN(v)) {
              if (at < 0 || v > best || Number.isNaN(v)) [best, at] = [v, h * W + w];
            }
          }
        }
        vals.push(best);
        idx.push(at);
      }
    }
  }
  return [vals, idx];
}

const poolOut = (i: number, k: number, p: number, s: number, d: number, ceil: boolean) => {
  let o = Math.floor((i + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (o - 1) * s >= i + p) o--;
  return o;
};

describe('max_pool2d', () => {
  const CASES: Array<[number[], number[], number[], number[], number[], boolean]> = [
    [[2, 3, 6, 7], [2, 2], [2, 2], [0, 0], [1, 1], false],
    [[2, 3, 7, 7], [3, 3], [2, 2], [1, 1], [1, 1], true],
    [[1, 2, 9, 8], [3, 2], [2, 1], [1, 1], [2, 3], false],
    [[3, 5, 5], [2, 3], [3, 2], [1, 0], [1, 1], true],
  ];
  for (const dtype of ['float32', 'float64']) {
    for (const [shape, k, s, p, d, ceil] of CASES) {
      it(`${shape} kernel ${k} stride ${s} padding ${p} dilation ${d} ceil ${ceil} (${dtype})`, () =>
        leakCheck(() => {
          using x = nonContiguousTensor(shape, dtype, next);
          const [vals, idx] = maxPool2dWithIndices(x, k, s, p, d, ceil);
          const H = shape.at(-2)!, W = shape.at(-1)!, P = shape.slice(0, -2).reduce((a, b) => a * b, 1);
          const OH = poolOut(H, k[0], p[0], s[0], d[0], ceil), OW = poolOut(W, k[1], p[1], s[1], d[1], ceil);
          assert.deepEqual(vals.shape, [...shape.slice(0, -2), OH, OW]);
          assert.equal(idx.dtype.name, 'int64');
          const [rv, ri] = maxPoolRef(values(x), P, H, W, k, s, p, d, OH, OW);
          assert.deepEqual(values(vals), rv);
          assert.deepEqual(values(idx), ri);
          using m = maxPool2d(x, k, s, p, d, ceil);
          assert.deepEqual(values(m), rv);
          vals.dispose();
          idx.dispose();
        }));
    }
  }

  it('NaN is the maximum, as in PyTorch', () =>
    leakCheck(() => {
      using x = tensor([[[1, Number.NaN], [3, 2]]], { dtype: 'float32' });
      const [v, i] = maxPool2dWithIndices(x, 2);
      assert.ok(Number.isNaN(values(v)[0]));
      assert.deepEqual(values(i), [1]);
      v.dispose();
      i.dispose();
    }));

  it('gradients (gradcheck) with overlapping windows, padding and dilation', () =>
    leakCheck(() => {
      // Distinct values keep finite differences away from ties.
      using flat = tensor(Array.from({ length: 2 * 3 * 7 * 6 }, (_, i) => ((i * 37) % 101) / 7), { dtype: 'float64' });
      const x = flat.reshape([2, 3, 7, 6]).requiresGrad_();
      assert.equal(gradcheck((a) => maxPool2d(a, 3, 2, 1), [x]), true);
      assert.equal(gradcheck((a) => maxPool2d(a, [2, 3], 1, 0, [2, 1], true), [x]), true);
      x.dispose();
    }));

  it("PyTorch's errors", () =>
    leakCheck(() => {
      using x = zeros([2, 3, 5, 5]);
      const rt = (fn: () => unknown, message: string) => assert.throws(fn, { message });
      rt(() => maxPool2d(x, 2, 2, 2), 'pad should be at most half of kernel size, but got pad=2 and kernel_size=2');
      rt(() => maxPool2d(x, 7), 'Given input size: (3x5x5). Calculated output size: (3x0x0). Output size is too small');
      rt(() => maxPool2d(x, 0), 'stride should not be zero');
      rt(() => maxPool2d(x, 0, 1), 'kernel size should be greater than zero, but got kH: 0 kW: 0');
      rt(
        () => maxPool2d(x, 2, [1, 1, 1]),
        'max_pool2d: stride must either be omitted, a single int, or a tuple of two ints',
      );
      rt(() => maxPool2d(x, 2, 1, 0, 0), 'dilation should be greater than zero, but got dilationH: 0 dilationW: 0');
      using v = zeros([5]);
      rt(() => maxPool2d(v, 2), 'non-empty 3D or 4D (batch mode) tensor expected for input');
      rt(() => maxPool2d(x, [2, 2, 2]), 'max_pool2d: kernel_size must either be a single int, or a tuple of two ints');
      using xl = zeros([2, 3, 5, 5], { dtype: 'int64' });
      rt(() => maxPool2d(xl, 2), `"max_pool2d" not implemented for 'Long'`);
    }));
});

/** Direct float64 average pooling (PyTorch's window clipping and divisor rules). */
function avgPoolRef(
  x: number[],
  P: number,
  H: number,
  W: number,
  [kh, kw]: number[],
  [sh, sw]: number[],
  [ph, pw]: number[],
  OH: number,
  OW: number,
  countIncludePad: boolean,
  divisor: number | null,
): number[] {
  const out: number[] = [];
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < OH; i++) {
      for (let j = 0; j < OW; j++) {
        const h0 = i * sh - ph, w0 = j * sw - pw;
        const h1 = Math.min(h0 + kh, H + ph), w1 = Math.min(w0 + kw, W + pw);
        const size = (h1 - h0) * (w1 - w0);
        let s = 0, n = 0;
        for (let h = Math.max(h0, 0); h < Math.min(h1, H); h++) {
          for (let w = Math.max(w0, 0); w < Math.min(w1, W); w++) {
            s += x[(p * H + h) * W + w];
            n++;
          }
        }
        out.push(n === 0 ? 0 : s / (divisor ?? (countIncludePad ? size : n)));
      }
    }
  }
  return out;
}

describe('avg_pool2d and adaptive_avg_pool2d', () => {
  const CASES: Array<[number[], number[], number[], number[], boolean, boolean, number | null]> = [
    [[2, 3, 6, 7], [2, 2], [2, 2], [0, 0], false, true, null],
    [[2, 2, 7, 7], [3, 3], [2, 2], [1, 1], true, true, null],
    [[2, 2, 7, 7], [3, 3], [2, 2], [1, 1], true, false, null],
    [[3, 5, 6], [3, 2], [2, 1], [1, 1], false, false, 5],
  ];
  for (const dtype of ['float32', 'float64']) {
    for (const [shape, k, s, p, ceil, cip, div] of CASES) {
      it(`${shape} kernel ${k} stride ${s} padding ${p} ceil ${ceil} countIncludePad ${cip} divisor ${div} (${dtype})`, () =>
        leakCheck(() => {
          using x = nonContiguousTensor(shape, dtype, next);
          using y = avgPool2d(x, k, s, p, ceil, cip, div);
          const H = shape.at(-2)!, W = shape.at(-1)!, P = shape.slice(0, -2).reduce((a, b) => a * b, 1);
          const OH = poolOut(H, k[0], p[0], s[0], 1, ceil), OW = poolOut(W, k[1], p[1], s[1], 1, ceil);
          assert.deepEqual(y.shape, [...shape.slice(0, -2), OH, OW]);
          assertClose(y, avgPoolRef(values(x), P, H, W, k, s, p, OH, OW, cip, div), dtype, 'avg_pool2d');
        }));
    }
    it(`adaptive_avg_pool2d to smaller, equal, larger and global sizes (${dtype})`, () =>
      leakCheck(() => {
        for (
          const [shape, out] of [[[2, 3, 7, 5], [3, 2]], [[3, 4, 4], [4, 4]], [[1, 2, 3, 2], [5, 3]], [[2, 2, 5, 5], [
            1,
            1,
          ]]]
        ) {
          using x = nonContiguousTensor(shape, dtype, next);
          using y = adaptiveAvgPool2d(x, out);
          const H = shape.at(-2)!, W = shape.at(-1)!, P = shape.slice(0, -2).reduce((a, b) => a * b, 1);
          const xv = values(x), ref: number[] = [];
          for (let q = 0; q < P; q++) {
            for (let i = 0; i < out[0]; i++) {
              for (let j = 0; j < out[1]; j++) {
                const h0 = Math.floor((i * H) / out[0]), h1 = Math.ceil(((i + 1) * H) / out[0]);
                const w0 = Math.floor((j * W) / out[1]), w1 = Math.ceil(((j + 1) * W) / out[1]);
                let s = 0;
                for (let h = h0; h < h1; h++) for (let w = w0; w < w1; w++) s += xv[(q * H + h) * W + w];
                ref.push(s / ((h1 - h0) * (w1 - w0)));
              }
            }
          }
          assert.deepEqual(y.shape, [...shape.slice(0, -2), ...out]);
          assertClose(y, ref, dtype, 'adaptive_avg_pool2d');
        }
      }));
  }

  it('gradients (gradcheck, float64)', () =>
    leakCheck(() => {
      manualSeed(5);
      const x = randn([2, 3, 7, 6], { dtype: 'float64', requiresGrad: true });
      assert.equal(gradcheck((a) => avgPool2d(a, 3, 2, 1, true, false), [x]), true);
      assert.equal(gradcheck((a) => avgPool2d(a, [2, 3], [1, 2], [1, 0], false, true, 4), [x]), true);
      assert.equal(gradcheck((a) => adaptiveAvgPool2d(a, [3, 4]), [x]), true);
      x.dispose();
    }));

  it("PyTorch's errors", () =>
    leakCheck(() => {
      const rt = (fn: () => unknown, message: string) => assert.throws(fn, { message });
      using x = zeros([2, 3, 5, 5]);
      rt(() => avgPool2d(x, 2, 2, 2), 'pad should be at most half of kernel size, but got pad=2 and kernel_size=2');
      rt(() => avgPool2d(x, 0), 'stride should not be zero');
      rt(() => avgPool2d(x, 2, 2, 0, false, true, 0), 'divisor must be not zero');
      using v = zeros([5]);
      rt(() => adaptiveAvgPool2d(v, 2), 'adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5]');
      using e = zeros([2, 3, 0, 3]);
      rt(
        () => adaptiveAvgPool2d(e, 2),
        'adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [2, 3, 0, 3] with dimension 2 being empty',
      );
      // No channels is fine, as in PyTorch 1.13: an empty result.
      using noChannels = zeros([2, 0, 3, 3]);
      using pooled = adaptiveAvgPool2d(noChannels, 2);
      assert.deepEqual(pooled.shape, [2, 0, 2, 2]);
      using xl = zeros([2, 3, 5, 5], { dtype: 'int64' });
      rt(() => avgPool2d(xl, 2), `"avg_pool2d_out_frame" not implemented for 'Long'`);
    }));
});

describe('Meta tensors', () => {
  it('shapes, dtypes and errors of convolution and pooling without data', () => {
    using x = zeros([2, 16, 9, 9], { device: 'meta' });
    using w = zeros([8, 16, 3, 3], { device: 'meta' });
    using a = conv2d(x, w, null, 2, 1);
    using b = conv2d(x, w, null, 1, 'same');
    using wt = zeros([16, 4, 3, 3], { device: 'meta' });
    using c = convTranspose2d(x, wt, null, 2);
    assert.deepEqual([a.shape, b.shape, c.shape], [[2, 8, 5, 5], [2, 8, 9, 9], [2, 4, 19, 19]]);
    const [v, i] = maxPool2dWithIndices(x, 3, 2, 1, 1, true);
    assert.deepEqual([v.shape, i.dtype.name, v.device.type], [[2, 16, 5, 5], 'int64', 'meta']);
    v.dispose();
    i.dispose();
    using p = avgPool2d(x, 2);
    using q = adaptiveAvgPool2d(x, [2, 3]);
    assert.deepEqual([p.shape, q.shape], [[2, 16, 4, 4], [2, 16, 2, 3]]);
    using x4 = zeros([2, 4, 9, 9], { device: 'meta' });
    assert.throws(() => conv2d(x4, w), {
      message:
        'Given groups=1, weight of size [8, 16, 3, 3], expected input[2, 4, 9, 9] to have 16 channels, but got 4 channels instead',
    });
  });
});

describe('values printed by PyTorch 1.13', () => {
  // x = (torch.arange(60.).reshape(1, 2, 5, 6) * 0.37 % 5) - 2.3, w = (torch.arange(8.).reshape(1, 2, 2, 2) * 0.53 % 3) - 1.1
  // in float64; the literals below are PyTorch's results (rounded to 10 digits where long).
  const pattern = (n: number, k: number, m: number, shift: number) =>
    Array.from({ length: n }, (_, i) => ((i * k) % m) - shift);
  it('max_pool2d indices (ceil, padding), avg_pool2d (count_include_pad=False), conv2d same (even kernel)', () =>
    leakCheck(() => {
      using xs = tensor(pattern(60, 0.37, 5, 2.3), { dtype: 'float64' });
      using ws = tensor(pattern(8, 0.53, 3, 1.1), { dtype: 'float64' });
      using x = xs.view([1, 2, 5, 6]);
      using w = ws.view([1, 2, 2, 2]);
      const [v, i] = maxPool2dWithIndices(x, 3, 2, 1, 1, true);
      assert.deepEqual(
        values(i),
        [7, 9, 11, 11, 13, 13, 11, 11, 25, 27, 27, 23, 7, 9, 10, 5, 7, 9, 10, 23, 24, 21, 23, 23],
      );
      v.dispose();
      i.dispose();
      using a = avgPool2d(x, 3, 2, 1, true, false);
      const avg = [
        -1.005,
        -0.45,
        0.29,
        0.66,
        0.6583333333,
        0.1022222222,
        0.2866666667,
        0.6566666667,
        0.655,
        1.21,
        0.2833333333,
        -0.18,
        0.095,
        0.65,
        0.5566666667,
        -0.74,
        0.0916666667,
        0.6466666667,
        0.8311111111,
        0.09,
        0.505,
        -0.19,
        0.55,
        0.92,
      ];
      values(a).forEach((got, k) => assert.ok(Math.abs(got - avg[k]) < 1e-9, `avg[${k}]`));
      using c = conv2d(x, w, null, 1, 'same');
      const same = [
        -0.2156,
        -0.2008,
        -0.186,
        -0.1712,
        1.7936,
        3.0468,
        6.4232,
        3.988,
        4.2028,
        4.2176,
        -3.5176,
        -4.162,
        -8.588,
        -5.7232,
        -0.2084,
        -0.1936,
        -0.1788,
        -0.9708,
        1.8008,
        6.4156,
        6.4304,
        3.9952,
        4.21,
        1.5204,
        -3.1384,
        -7.9054,
        -7.5724,
        -4.3894,
        1.4436,
        1.2476,
      ];
      values(c).forEach((got, k) => assert.ok(Math.abs(got - same[k]) < 1e-9, `same[${k}]`));
    }));
});
