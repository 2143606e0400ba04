// Correctly rounded log, sin and cos (core/cpu/correctly_rounded.ts), used by the float64 normal sampler so that a
// seed gives the same values in every runtime. Expected values: mpmath at 250 bits, rounded to nearest. The inputs
// include ones where glibc's results are not correctly rounded and ones where V8's Math functions are not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crLog, crSinCos } from '../../core/cpu/correctly_rounded.ts';

const LOG_CASES: Array<[number, number]> = [
  [0.8710952992968735, -0.1380038944560047],
  [0.7574064730636337, -0.2778552171241956],
  [0.8713042433698793, -0.13776405959736188],
  [0.7574064730636337, -0.2778552171241956],
  [0.8713042433698793, -0.13776405959736188],
  [0.9459181423750634, -0.05559924393313575],
  [0.6324834828245831, -0.45810117283277213],
  [0.7938960791529204, -0.23080270897982816],
  [0.8197082281916992, -0.19880682132095376],
  [0.38227093238401527, -0.9616256746938358],
  [0.4305287599669743, -0.8427411513829962],
  [0.286260631066082, -1.2508525857078439],
  [1e-300, -690.7755278982137],
  [5e-324, -744.4400719213812],
  [1.1102230246251565e-16, -36.7368005696771],
  [0.9999999999999999, -1.1102230246251565e-16],
  [1.0000000000000002, 2.2204460492503128e-16],
  [0.5, -0.6931471805599453],
  [2.0, 0.6931471805599453],
  [10.0, 2.302585092994046],
  [1e+300, 690.7755278982137],
];

const TRIG_CASES: Array<[number, number, number]> = [
  [4.553798083562629, -0.9874507989874305, -0.15792694380340908],
  [1.8497196131058784, 0.9613524370814498, -0.2753207070264731],
  [5.31235392366038, -0.8253554089180397, 0.5646135394849608],
  [1.1448762268029067, 0.9106589710242052, 0.41315885382396883],
  [0.22338670226348228, 0.22153343934472816, 0.9751527753393802],
  [3.2958790633227966, -0.1536750246329117, -0.9881214433479693],
  [4.988196179961111, -0.9622056915353193, 0.2723237176175403],
  [5.150378695548296, -0.9056060941300738, 0.424119797079165],
  [2.401879105717086, 0.6740763480771643, -0.7386616796361875],
  [5.694210089792505, -0.555509197362101, 0.8315103917848017],
  [4.077304457058233, -0.805021556261036, -0.593245559574667],
  [1.3738558152330043, 0.9806698164754809, 0.1956699032910956],
  [1e-20, 1e-20, 1.0],
  [1.5707963267948966, 1.0, 6.123233995736766e-17],
  [3.141592653589793, 1.2246467991473532e-16, -1.0],
  [4.71238898038469, -1.0, -1.8369701987210297e-16],
  [6.283185307179586, -2.4492935982947064e-16, 1.0],
  [-1.0, -0.8414709848078965, 0.5403023058681398],
  [1000.0, 0.8268795405320025, 0.5623790762907029],
  [6.283185307079586, -1.0000025320339693e-10, 1.0],
];

describe('correctly rounded log, sin, cos', () => {
  it('log is correctly rounded, also where glibc and V8 are not', () => {
    for (const [x, expected] of LOG_CASES) assert.equal(crLog(x), expected, `log(${x})`);
  });

  it('log of special values', () => {
    assert.equal(crLog(1), 0);
    assert.equal(crLog(0), -Infinity);
    assert.equal(crLog(Infinity), Infinity);
    assert.ok(Number.isNaN(crLog(-1)));
    assert.ok(Number.isNaN(crLog(NaN)));
  });

  it('sin and cos are correctly rounded, also near multiples of pi/2 and where glibc and V8 are not', () => {
    const out = new Float64Array(2);
    for (const [x, sin, cos] of TRIG_CASES) {
      crSinCos(x, out);
      assert.equal(out[0], sin, `sin(${x})`);
      assert.equal(out[1], cos, `cos(${x})`);
    }
  });

  it('sin and cos of special values and out of the reduced range', () => {
    const out = new Float64Array(2);
    crSinCos(-0, out);
    assert.ok(Object.is(out[0], -0));
    assert.equal(out[1], 1);
    crSinCos(NaN, out);
    assert.ok(Number.isNaN(out[0]) && Number.isNaN(out[1]));
    crSinCos(1e300, out); // beyond 2^20: the runtime's Math functions
    assert.equal(out[0], Math.sin(1e300));
    assert.equal(out[1], Math.cos(1e300));
  });

  it('agrees with the runtime within one ulp on seeded random inputs', () => {
    let s = 12345;
    const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    const out = new Float64Array(2);
    for (let i = 0; i < 2000; i++) {
      const u = next() + next() * 2 ** -31;
      const ulp = (v: number) => 2 ** (Math.floor(Math.log2(Math.abs(v))) - 52);
      const x = 1 - u;
      if (x > 0) assert.ok(Math.abs(crLog(x) - Math.log(x)) <= ulp(Math.log(x)), `log(${x})`);
      const t = 2 * Math.PI * u;
      crSinCos(t, out);
      assert.ok(Math.abs(out[0] - Math.sin(t)) <= 2 ** -53 + ulp(Math.sin(t)), `sin(${t})`);
      assert.ok(Math.abs(out[1] - Math.cos(t)) <= 2 ** -53 + ulp(Math.cos(t)), `cos(${t})`);
    }
  });
});
