// Fuzzing the kernel boundary (issue: "never a silent wrong answer"). fast-check generates programs of random
// operator calls over a pool of tensors: random dtypes and shapes (0-d, size 0 and 1 dims), views (narrow,
// select, transpose, permute, expand, unsqueeze, asStrided with arbitrary in-bounds strides, overlapping ones
// included), elementwise, scalar, reduction, softmax, matmul, indexing, cat, in-place writes through views,
// disposals, and calls with garbage arguments. After every call:
// - an error, when one is raised, is a clear one: an Error of the runtime's classes, not an engine TypeError;
// - a result equals a float64 reference (tests/fuzz/_reference.ts models storages and strided views, so writes
//   through views are checked against what they should have changed and nothing else);
// - the guard bytes of every block are intact (the suite runs in checked mode) and canary tensors unchanged;
// and after every program no tensor is leaked, errors included. Over 10^5 calls run per runtime.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  bool,
  cat,
  type DType,
  exp,
  float32,
  float64,
  gather,
  indexSelect,
  int32,
  int64,
  memoryStats,
  promoteTypes,
  resultType,
  softmax,
  Tensor,
  tensor,
  tensorOperand,
  uint8,
} from '../../mod.ts';
import { GuardViolationError } from '../../core/cpu/guarded_allocator.ts';
import { verifyCpuGuards } from '../../core/cpu/runtime.ts';
import { readEnv } from '../../core/dispatch/env.ts';
import { randomTensor, rng, values } from '../ops/_helpers.ts';
import {
  broadcast,
  close,
  expandRef,
  fresh,
  hasInternalOverlap,
  mayOverlap,
  numelOf,
  offsets,
  type Ref,
  RefStorage,
  refValues,
  selfOverlapping,
  storeAs,
  tolerance,
} from './_reference.ts';

const DTYPES: readonly DType[] = [float32, float32, float64, int32, int64, bool, uint8];
const FLOATS = new Set<DType>([float32, float64]);
const RAW_ENGINE_ERROR =
  /is not a function|Cannot read propert|undefined is not|null is not|is not an object|is not iterable|Maximum call stack|Cannot convert|Cannot mix BigInt/;

/** A tensor as type promotion sees it. */
const operand = (r: Ref) => tensorOperand(r.dtype, r.shape.length);

/** One step of a program: which operation, and raw numbers it derives its arguments from. */
interface Step {
  readonly op: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly x: number;
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  op: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  c: fc.integer({ min: -6, max: 6 }),
  x: fc.double({ min: -4, max: 4, noNaN: true }),
});

interface Entry {
  readonly t: Tensor;
  readonly ref: Ref;
}

/** The clear-error contract: an Error of the runtime's making with a message, never an engine TypeError. */
function assertClean(e: unknown, what: string): void {
  assert.ok(e instanceof Error, `${what}: threw a non-Error ${String(e)}`);
  assert.ok(!(e instanceof GuardViolationError), `${what}: ${e.message}`);
  assert.ok(e.message.length > 0, `${what}: empty message`);
  assert.ok(!RAW_ENGINE_ERROR.test(e.message), `${what}: raw engine error: ${e.name}: ${e.message}`);
}

const labelRef = (r: Ref) =>
  `${r.dtype.name}[${r.shape.join(',')}]/(${r.strides.join(',')})+${r.offset}@${storageIds.get(r.storage) ?? '?'}`;
const storageIds = new WeakMap<object, number>();
let nextStorageId = 0;
const label = (e: Entry) => {
  if (!storageIds.has(e.ref.storage)) storageIds.set(e.ref.storage, nextStorageId++);
  return labelRef(e.ref);
};

class Program {
  readonly pool: Entry[] = [];
  readonly disposed: Tensor[] = [];
  calls = 0;
  /** What ran, for the failure message. */
  readonly trace: string[] = [];
  readonly #next: () => number;

  constructor(seed: number) {
    this.#next = rng(seed);
  }

  /** Runs `fn`; when `expected` is a RegExp it must throw an error matching it, when undefined it may throw. */
  call<T>(what: string, expected: RegExp | false | undefined, fn: () => T): T | undefined {
    this.calls++;
    this.trace.push(`${what} [pool: ${this.pool.map(label).join(' | ')}]`);
    let result: T;
    try {
      result = fn();
    } catch (e) {
      assertClean(e, what);
      if (expected === false) throw e;
      if (expected !== undefined) assert.match(String(e), expected, what);
      return undefined;
    } finally {
      verifyCpuGuards(what);
    }
    if (expected instanceof RegExp) assert.fail(`${what}: expected an error matching ${expected}`);
    return result;
  }

  entry(i: number): Entry | undefined {
    return this.pool.length === 0 ? undefined : this.pool[i % this.pool.length];
  }

  /** Adds a result whose values were checked: the reference continues from the runtime's values. */
  adopt(t: Tensor, ref: Ref): void {
    this.pool.push({ t, ref });
    if (this.pool.length > 8) this.pool.shift()!.t.dispose();
  }

  /**
   * A new reference storage holding what `t`'s storage holds, in `t`'s own layout (results may be permuted or
   * padded, and asStrided reads storages as they are), after `t`'s values were compared with a reference.
   */
  adoptResult(t: Tensor): void {
    const capacity = Math.floor(t.storage.nbytes / t.dtype.itemSize);
    const flat = t.asStrided([capacity], [1], 0);
    const whole = values(flat);
    flat.dispose();
    this.adopt(t, {
      storage: new RefStorage(Float64Array.from(whole)),
      shape: [...t.shape],
      strides: [...t.stride()],
      offset: t.storageOffset,
      dtype: t.dtype,
    });
  }

  make(s: Step): void {
    const rank = s.a % 5;
    const shape = Array.from({ length: rank }, (_, d) => ((s.b >> (3 * d)) & 7) % 5);
    const dtype = DTYPES[s.op % DTYPES.length];
    const t = randomTensor(shape, dtype, this.#next);
    this.calls++;
    this.adopt(t, fresh(shape, dtype, values(t)));
  }

  /** Checks every live pool tensor against its reference, exactly. */
  checkPool(): void {
    for (const { t, ref } of this.pool) {
      const got = values(t), want = refValues(ref);
      for (let i = 0; i < got.length; i++) {
        if (!Object.is(got[i], want[i]) && !(got[i] === want[i])) {
          assert.fail(`a pool tensor changed without being written: element ${i} is ${got[i]}, expected ${want[i]}`);
        }
      }
    }
  }

  dispose(): void {
    for (const { t } of this.pool) t.dispose();
    this.pool.length = 0;
    for (const t of this.disposed) t.dispose();
    this.disposed.length = 0;
  }
}

// ---- views ----------------------------------------------------------------------------------------------------

function view(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const { t, ref } = e, nd = ref.shape.length;
  const dim = nd === 0 ? 0 : s.b % nd;
  switch (s.op % 7) {
    case 0: { // narrow
      if (nd === 0) return;
      const size = ref.shape[dim], start = Math.abs(s.c) % (size + 1), length = (s.b >> 4) % (size - start + 1);
      const out = p.call('narrow', false, () => t.narrow(dim, start, length))!;
      const shape = [...ref.shape];
      shape[dim] = length;
      p.adopt(out, { ...ref, shape, offset: ref.offset + start * ref.strides[dim] });
      return;
    }
    case 1: { // select, sometimes out of range
      if (nd === 0) return;
      const size = ref.shape[dim], index = s.c;
      const valid = index >= -size && index < size;
      const out = p.call('select', valid ? false : /out of range|IndexError/, () => t.select(dim, index));
      if (out === undefined) return;
      const i = index < 0 ? index + size : index;
      p.adopt(out, {
        ...ref,
        shape: ref.shape.filter((_, d) => d !== dim),
        strides: ref.strides.filter((_, d) => d !== dim),
        offset: ref.offset + i * ref.strides[dim],
      });
      return;
    }
    case 2: { // transpose
      if (nd < 2) return;
      const d1 = (s.b >> 3) % nd;
      const out = p.call('transpose', false, () => t.transpose(dim, d1))!;
      const shape = [...ref.shape], strides = [...ref.strides];
      [shape[dim], shape[d1]] = [shape[d1], shape[dim]];
      [strides[dim], strides[d1]] = [strides[d1], strides[dim]];
      p.adopt(out, { ...ref, shape, strides });
      return;
    }
    case 3: { // expand: a new leading dim and every size-1 dim widened
      const shape = [2 + (s.b % 2), ...ref.shape.map((n) => (n === 1 ? 3 : n))];
      const out = p.call('expand', false, () => t.expand(shape))!;
      p.adopt(out, expandRef(ref, shape));
      return;
    }
    case 4: { // unsqueeze
      const d = s.b % (nd + 1);
      const out = p.call('unsqueeze', false, () => t.unsqueeze(d))!;
      const shape = [...ref.shape], strides = [...ref.strides];
      shape.splice(d, 0, 1);
      strides.splice(d, 0, d < nd ? ref.strides[d] * ref.shape[d] : 1);
      p.adopt(out, { ...ref, shape, strides });
      return;
    }
    case 5: { // permute (reversed)
      const order = [...ref.shape.keys()].reverse();
      const out = p.call('permute', false, () => t.permute(order))!;
      p.adopt(out, { ...ref, shape: order.map((d) => ref.shape[d]), strides: order.map((d) => ref.strides[d]) });
      return;
    }
    default: { // asStrided over the whole storage: arbitrary (also overlapping) in-bounds geometry, or out of bounds
      const capacity = ref.storage.data.length;
      const rank = s.b % 3;
      const shape = Array.from({ length: rank }, (_, d) => ((s.b >> (2 + 2 * d)) & 3) + 1);
      const strides = Array.from({ length: rank }, (_, d) => (s.a >> d) % 3);
      const offset = Math.abs(s.c);
      const reach = offset + shape.reduce((acc, n, d) => acc + (n - 1) * strides[d], 0);
      const fits = reach < capacity || numelOf(shape) === 0;
      const out = p.call(
        'asStrided',
        fits ? false : /out of bounds for storage/,
        () => t.asStrided(shape, strides, offset),
      );
      if (out !== undefined) p.adopt(out, { ...ref, shape, strides, offset });
    }
  }
}

// ---- computations -----------------------------------------------------------------------------------------------

const UNARY: ReadonlyArray<[string, (t: Tensor) => Tensor, (v: number) => number]> = [
  ['exp', (t) => t.exp(), Math.exp],
  ['neg', (t) => t.neg(), (v) => -v],
  ['abs', (t) => t.abs(), Math.abs],
  ['sin', (t) => t.sin(), Math.sin],
  ['tanh', (t) => t.tanh(), Math.tanh],
  ['sigmoid', (t) => t.sigmoid(), (v) => 1 / (1 + Math.exp(-v))],
  ['relu', (t) => t.relu(), (v) => (Number.isNaN(v) || v > 0 ? v : 0)],
  ['sqrt', (t) => t.sqrt(), Math.sqrt],
];

function unary(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const [name, op, f] = UNARY[s.b % UNARY.length];
  const out = p.call(name, FLOATS.has(e.ref.dtype) ? false : undefined, () => op(e.t));
  if (out === undefined) return;
  assert.deepEqual([...out.shape], [...e.ref.shape], name);
  if (FLOATS.has(e.ref.dtype)) {
    assert.equal(out.dtype, e.ref.dtype, name);
    const got = values(out), want = refValues(e.ref).map((v) => storeAs(out.dtype, f(v)));
    got.forEach((v, i) => assert.ok(close(v, want[i], tolerance(out.dtype, 2)), `${name}[${i}] ${v} vs ${want[i]}`));
  }
  p.adoptResult(out);
}

const BINARY: ReadonlyArray<[string, (a: Tensor, b: Tensor) => Tensor, (x: number, y: number) => number]> = [
  ['add', (a, b) => a.add(b), (x, y) => x + y],
  ['sub', (a, b) => a.sub(b), (x, y) => x - y],
  ['mul', (a, b) => a.mul(b), (x, y) => x * y],
  ['maximum', (a, b) => a.maximum(b), (x, y) => (Number.isNaN(x) || Number.isNaN(y) ? NaN : Math.max(x, y))],
  ['div', (a, b) => a.div(b), (x, y) => x / y],
];

function binary(p: Program, s: Step): void {
  const ea = p.entry(s.a), eb = p.entry(s.b);
  if (ea === undefined || eb === undefined) return;
  const [name, op, f] = BINARY[s.op % BINARY.length];
  const shape = broadcast(ea.ref.shape, eb.ref.shape);
  const sameDtype = ea.ref.dtype === eb.ref.dtype;
  const boolish = ea.ref.dtype === bool || eb.ref.dtype === bool;
  const expected = shape === undefined ? /must match the size/ : sameDtype && !boolish ? false : undefined;
  const out = p.call(name, expected, () => op(ea.t, eb.t));
  if (out === undefined || shape === undefined) return;
  assert.deepEqual([...out.shape], shape, name);
  const exact = sameDtype && !boolish && (FLOATS.has(ea.ref.dtype) || name !== 'div');
  if (name !== 'div' && !boolish) assert.equal(out.dtype, resultType(operand(ea.ref), operand(eb.ref)), name);
  if (exact) {
    const a = refValues(expandRef(ea.ref, shape)), b = refValues(expandRef(eb.ref, shape));
    const got = values(out);
    got.forEach((v, i) => {
      // Integer arithmetic wraps at the dtype's width (exactly, through BigInt); floats round once.
      const exactInputs = Math.abs(a[i]) <= 2 ** 53 && Math.abs(b[i]) <= 2 ** 53;
      if (!FLOATS.has(out.dtype) && !exactInputs) return;
      const want = FLOATS.has(out.dtype)
        ? storeAs(out.dtype, f(a[i], b[i]))
        : wrapInteger(out.dtype, f(a[i], b[i]), a[i], b[i], name);
      assert.ok(close(v, want, tolerance(out.dtype)), `${name}[${i}] ${v} vs ${want}`);
    });
  }
  p.adoptResult(out);
}

function scalarOp(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const value = s.b % 2 === 0 ? Math.round(s.x * 3) : s.x;
  const integral = Number.isInteger(value); // JS numbers: an integral value is a Python int
  const mul = s.op % 2 === 0;
  const dtype = e.ref.dtype;
  const out = p.call(
    mul ? 'mul.Scalar' : 'add.Scalar',
    dtype === bool ? undefined : false,
    () => mul ? e.t.mul(value) : e.t.add(value),
  );
  if (out === undefined) return;
  const expectedDtype = !FLOATS.has(dtype) && !integral ? float32 : dtype === bool && integral ? int64 : dtype;
  assert.equal(out.dtype, expectedDtype, `${dtype.name} ${mul ? '*' : '+'} ${value}: result dtype`);
  if (dtype !== bool) {
    // The scalar is converted to the compute dtype first, as TensorIterator does (1e-320 is 0 in float32).
    const c = (v: number) => storeAs(out.dtype, v), k = c(value);
    const want = refValues(e.ref).map((v) => c(mul ? c(v) * k : c(v) + k));
    values(out).forEach((v, i) =>
      exactlyModelled(out.dtype, want[i]) &&
      assert.ok(close(v, want[i], tolerance(out.dtype)), `scalar[${i}] ${v} vs ${want[i]}`)
    );
  }
  p.adoptResult(out);
}

function reduction(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const nd = e.ref.shape.length;
  const dim = s.c, keepdim = s.b % 2 === 0;
  const validDim = nd === 0 ? dim === 0 || dim === -1 : dim >= -nd && dim < nd;
  const which = s.op % 3;
  const name = ['sum', 'mean', 'amax'][which];
  const d = dim < 0 ? dim + Math.max(nd, 1) : dim;
  const empty = nd > 0 && validDim && e.ref.shape[d] === 0;
  let expected: RegExp | false | undefined = validDim ? false : /Dimension out of range/;
  if (which === 1 && !FLOATS.has(e.ref.dtype)) {
    expected = validDim ? /mean\(\)|could not infer output dtype/ : undefined;
  }
  if (which === 2 && empty) expected = /Expected reduction dim/;
  const out = p.call(
    name,
    expected,
    () => which === 0 ? e.t.sum(dim, keepdim) : which === 1 ? e.t.mean(dim, keepdim) : e.t.amax(dim, keepdim),
  );
  if (out === undefined) return;
  // Reference: group the elements by their index without `d`.
  const shape = e.ref.shape, vals = refValues(e.ref);
  const outer = numelOf(shape.slice(0, d)), size = nd === 0 ? 1 : shape[d], inner = numelOf(shape.slice(d + 1));
  const got = values(out);
  assert.equal(got.length, outer * inner, name);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      let acc = which === 2 ? -Infinity : 0, mag = 0;
      for (let r = 0; r < size; r++) {
        const v = vals[(o * size + r) * inner + j];
        mag += Math.abs(v);
        acc = which === 2 ? (Number.isNaN(v) || Number.isNaN(acc) ? NaN : Math.max(acc, v)) : acc + v;
      }
      if (which === 1) acc /= size;
      if (out.dtype === int64 && mag > 2 ** 53) continue; // int64 sums wrap beyond what float64 follows
      const want = storeAs(out.dtype, acc);
      assert.ok(
        close(got[o * inner + j], want, tolerance(out.dtype, size), mag),
        `${name} ${got[o * inner + j]} vs ${want}`,
      );
    }
  }
  p.adoptResult(out);
}

function softmaxOp(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined || !FLOATS.has(e.ref.dtype) || e.ref.shape.length === 0) return;
  const nd = e.ref.shape.length, d = s.b % nd;
  const out = p.call('softmax', false, () => softmax(e.t, d))!;
  const shape = e.ref.shape, vals = refValues(e.ref);
  const outer = numelOf(shape.slice(0, d)), size = shape[d], inner = numelOf(shape.slice(d + 1));
  const got = values(out);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < inner; j++) {
      const at = (r: number) => (o * size + r) * inner + j;
      let max = -Infinity;
      for (let r = 0; r < size; r++) max = Math.max(max, vals[at(r)]);
      let total = 0;
      for (let r = 0; r < size; r++) total += Math.exp(vals[at(r)] - max);
      for (let r = 0; r < size; r++) {
        const want = Math.exp(vals[at(r)] - max) / total;
        assert.ok(close(got[at(r)], want, tolerance(out.dtype, 4)), `softmax ${got[at(r)]} vs ${want}`);
      }
    }
  }
  p.adoptResult(out);
}

function matmulOp(p: Program, s: Step): void {
  const ea = p.entry(s.a), eb = p.entry(s.b);
  if (ea === undefined || eb === undefined) return;
  const [a, b] = [ea.ref, eb.ref];
  if (a.shape.length !== 2 || b.shape.length !== 2 || a.dtype !== b.dtype || !FLOATS.has(a.dtype)) return;
  const [M, K] = a.shape, [K2, N] = b.shape;
  const out = p.call('mm', K === K2 ? false : /cannot be multiplied/, () => ea.t.mm(eb.t));
  if (out === undefined) return;
  const av = refValues(a), bv = refValues(b), got = values(out);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let acc = 0, mag = 0;
      for (let k = 0; k < K; k++) {
        acc += av[i * K + k] * bv[k * N + j];
        mag += Math.abs(av[i * K + k] * bv[k * N + j]);
      }
      const want = storeAs(out.dtype, acc); // a float32 sum beyond float32's range is infinite
      assert.ok(close(got[i * N + j], want, tolerance(out.dtype, K + 1), mag), `mm ${got[i * N + j]} vs ${want}`);
    }
  }
  p.adoptResult(out);
}

function indexing(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined || e.ref.shape.length === 0) return;
  const nd = e.ref.shape.length, d = s.b % nd, size = e.ref.shape[d];
  const picks = [s.c, (s.b >> 3) % 7 - 1].map((i) => i); // may be negative or past the end
  const inRange = picks.every((i) => i >= 0 && i < size);
  const index = tensor(picks);
  try {
    const useGather = s.op % 2 === 0 && nd === 1;
    const out = p.call(
      useGather ? 'gather' : 'index_select',
      inRange ? false : /out of range|out of bounds/,
      () => useGather ? gather(e.t, 0, index) : indexSelect(e.t, d, index),
    );
    if (out === undefined) return;
    const shape = [...e.ref.shape];
    shape[d] = picks.length;
    const vals = refValues(e.ref), outer = numelOf(e.ref.shape.slice(0, d)), inner = numelOf(e.ref.shape.slice(d + 1));
    const want: number[] = [];
    for (let o = 0; o < outer; o++) {
      for (const i of picks) for (let j = 0; j < inner; j++) want.push(vals[(o * size + i) * inner + j]);
    }
    assert.deepEqual(values(out), want, 'index_select');
    p.adoptResult(out);
  } finally {
    index.dispose();
  }
}

function catOp(p: Program, s: Step): void {
  const ea = p.entry(s.a), eb = p.entry(s.b);
  if (ea === undefined || eb === undefined) return;
  const [a, b] = [ea.ref, eb.ref];
  const nd = a.shape.length, d = nd === 0 ? 0 : s.c < 0 ? 0 : s.c % nd;
  const compatible = nd > 0 && b.shape.length === nd && a.shape.every((n, i) => i === d || n === b.shape[i]);
  const out = p.call('cat', compatible && a.dtype === b.dtype ? false : undefined, () => cat([ea.t, eb.t], d));
  if (out === undefined || !compatible || a.dtype !== b.dtype) {
    out?.dispose();
    return;
  }
  const av = refValues(a), bv = refValues(b);
  const outer = numelOf(a.shape.slice(0, d)), ia = numelOf(a.shape.slice(d)), ib = numelOf(b.shape.slice(d));
  const want: number[] = [];
  for (let o = 0; o < outer; o++) want.push(...av.slice(o * ia, (o + 1) * ia), ...bv.slice(o * ib, (o + 1) * ib));
  assert.deepEqual(values(out), want, 'cat');
  p.adoptResult(out);
}

// ---- in-place writes ------------------------------------------------------------------------------------------

/** An integer add/sub/mul/maximum of two exactly held integers, wrapped to the dtype's width. */
function wrapInteger(dtype: DType, approx: number, a: number, b: number, op: string): number {
  const x = BigInt(a), y = BigInt(b);
  const exact = op === 'add' ? x + y : op === 'sub' ? x - y : op === 'mul' ? x * y : BigInt(approx);
  const bits = dtype.itemSize * 8;
  return Number(dtype === uint8 ? BigInt.asUintN(8, exact) : BigInt.asIntN(bits, exact));
}

/**
 * An integer product computed in int64 and stored into an integral dtype: it wraps (no float conversion). NaN
 * (not modelled) when an operand is an int64 beyond 2^53, which the float64 reference holds inexactly.
 */
function wrapInt(dtype: DType, a: number, b: number): number {
  if (Math.abs(a) > 2 ** 53 || Math.abs(b) > 2 ** 53) return NaN;
  const product = BigInt(a) * BigInt(b);
  const bits = dtype.itemSize * 8;
  return Number(dtype === uint8 ? BigInt.asUintN(8, product) : BigInt.asIntN(bits, product));
}

/** Whether the float64 reference holds `v` of `dtype` exactly (int64 beyond 2^53 wraps in ways it cannot follow). */
const exactlyModelled = (dtype: DType, v: number) => dtype !== int64 || Math.abs(v) <= 2 ** 53;

/** Checks an in-place result against `want` (row-major over the view), then makes it the reference state. */
function settle(e: Entry, want: readonly number[], what: string): void {
  const got = values(e.t);
  got.forEach((v, i) => {
    if (!exactlyModelled(e.ref.dtype, want[i]) || (!e.ref.dtype.isFloatingPoint && Number.isNaN(want[i]))) return;
    assert.ok(close(v, want[i], tolerance(e.ref.dtype)), `${what}[${i}] ${v} vs ${want[i]}`);
  });
  const at = offsets(e.ref);
  got.forEach((v, i) => (e.ref.storage.data[at[i]] = v));
}

function inPlace(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const { t, ref } = e;
  const overlap = hasInternalOverlap(ref) ? /more than one element of the written-to tensor/ : undefined;
  if (overlap === undefined && selfOverlapping(ref)) {
    // A view that reaches one element twice without a zero stride (asStrided): PyTorch does not check these
    // ("too hard") and the result depends on the kernel's order; only what else the write touches is checked.
    p.call('in-place write to a self-overlapping view', undefined, () => t.add_(1));
    resync(e);
    return;
  }
  const floating = FLOATS.has(ref.dtype);
  const old = refValues(ref);
  switch (s.op % 5) {
    case 0: { // add_(scalar)
      const value = s.b % 2 === 0 ? Math.round(s.x) : s.x;
      const castFails = !floating && !Number.isInteger(value);
      const expected = overlap ??
        (castFails ? /can't be cast to the desired output type/ : ref.dtype === bool ? undefined : false);
      if (p.call('add_', expected, () => t.add_(value)) !== undefined && ref.dtype !== bool) {
        settle(e, old.map((v) => storeAs(ref.dtype, v + value)), 'add_');
      } else if (ref.dtype === bool) resync(e);
      return;
    }
    case 1: { // mul_(other): other broadcast to self's shape, from another storage
      const o = p.entry(s.b);
      if (o === undefined || mayOverlap(o.ref, ref)) return;
      const shape = broadcast(ref.shape, o.ref.shape);
      const fits = shape !== undefined && shape.length === ref.shape.length &&
        shape.every((n, i) => n === ref.shape[i]);
      const castFails = promoteTypes(ref.dtype, o.ref.dtype) !== ref.dtype && FLOATS.has(o.ref.dtype) && !floating;
      const expected = !fits
        ? undefined
        : overlap ?? (castFails ? /can't be cast/ : ref.dtype === bool || o.ref.dtype === bool ? undefined : false);
      const done = p.call('mul_', expected, () => t.mul_(o.t)) !== undefined;
      if (done && fits && ref.dtype !== bool && o.ref.dtype !== bool) {
        const b = refValues(expandRef(o.ref, ref.shape));
        // Computed in the result type of the two operands (a 0-dim operand does not promote within its category),
        // each operand converted to it first, then stored into self's dtype.
        const compute = resultType(operand(ref), operand(o.ref));
        const integral = !FLOATS.has(compute);
        const c = (x: number) => storeAs(compute, x);
        settle(
          e,
          old.map((v, i) => (integral ? wrapInt(ref.dtype, v, b[i]) : storeAs(ref.dtype, c(c(v) * c(b[i]))))),
          'mul_',
        );
      } else if (done) resync(e);
      return;
    }
    case 2: { // fill_ (allowed on expanded tensors, as in PyTorch)
      const value = floating ? s.x : Math.round(s.x * 10);
      if (p.call('fill_', false, () => t.fill_(value)) !== undefined) {
        settle(
          e,
          old.map(() => storeAs(ref.dtype, value)),
          'fill_',
        );
      }
      return;
    }
    case 3: { // zero_
      if (p.call('zero_', false, () => t.zero_()) !== undefined) settle(e, old.map(() => 0), 'zero_');
      return;
    }
    default: { // copy_(other)
      const o = p.entry(s.b);
      if (o === undefined || mayOverlap(o.ref, ref)) return;
      const shape = broadcast(ref.shape, o.ref.shape);
      const fits = shape !== undefined && shape.length === ref.shape.length &&
        shape.every((n, i) => n === ref.shape[i]);
      const expected = fits ? overlap ?? false : /must match|broadcast/;
      if (p.call('copy_', expected, () => t.copy_(o.t)) !== undefined) {
        settle(
          e,
          refValues(expandRef(o.ref, ref.shape)).map((
            v,
          ) => (ref.dtype === bool ? (v !== 0 ? 1 : 0) : storeAs(ref.dtype, v))),
          'copy_',
        );
      }
    }
  }
}

/** After a write the reference does not model (bool arithmetic), take the runtime's values for the view. */
function resync(e: Entry): void {
  const at = offsets(e.ref);
  values(e.t).forEach((v, i) => (e.ref.storage.data[at[i]] = v));
}

// ---- disposal and garbage --------------------------------------------------------------------------------------

function disposeOne(p: Program, s: Step): void {
  if (p.pool.length === 0) return;
  const [{ t }] = p.pool.splice(s.a % p.pool.length, 1);
  t.dispose();
  p.disposed.push(t);
  // Every kind of use of a disposed tensor is refused.
  const uses: Array<(x: Tensor) => unknown> = [
    (x) => x.add(1),
    (x) => x.fill_(1),
    (x) => x.sum(),
    (x) => x.view([-1]),
    (x) => x.clone(),
  ];
  p.call('use after dispose', /disposed/, () => uses[s.b % uses.length](t));
}

function garbageValue(s: Step, p: Program): unknown {
  const live = p.entry(s.a)?.t;
  const forged = Object.create(Tensor.prototype, {
    keySetHi: { value: live?.keySetHi ?? 0 },
    keySetLo: { value: live?.keySetLo ?? 0 },
    shape: { value: [2] },
    storage: { value: { ptr: 0, nbytes: 1 << 30 } },
  });
  const choices: unknown[] = [
    NaN,
    0.5,
    -1,
    1e20,
    Infinity,
    'abc',
    null,
    undefined,
    {},
    [],
    [NaN],
    [1.5, 2],
    [-3],
    forged,
    p.disposed[0],
    true,
    2n ** 70n,
    Symbol('garbage'),
    () => 0,
  ];
  return choices[s.b % choices.length];
}

const GARBAGE_TARGETS: ReadonlyArray<(t: Tensor, g: unknown) => unknown> = [
  (t, g) => t.add(g as Tensor),
  (t, g) => t.view(g as number[]),
  (t, g) => t.sum(g as number),
  (t, g) => t.narrow(0, g as number, 1),
  (t, g) => t.expand(g as number[]),
  (t, g) => t.asStrided(g as number[], [1]),
  (t, g) => t.asStrided([1], [1], g as number),
  (t, g) => t.fill_(g as number),
  (t, g) => t.mul_(g as Tensor),
  (t, g) => softmax(t, g as number),
  (t, g) => indexSelect(t, 0, g as Tensor),
  (t, g) => cat([t, g as Tensor]),
  (t, g) => t.permute(g as number[]),
  (t, g) => t.transpose(g as number, 0),
  (t, g) => t.clamp(g as number, 1),
  (_t, g) => exp(g as Tensor),
  (_t, g) => Tensor.prototype.exp.call(g as Tensor),
];

function describeGarbage(g: unknown): string {
  if (typeof g === 'symbol' || typeof g === 'function') return typeof g;
  if (g instanceof Tensor) {
    return Tensor.isTensor(g) ? (g.isDisposed ? 'a disposed tensor' : 'a tensor') : 'a forged tensor';
  }
  if (typeof g === 'bigint') return `${g}n`;
  try {
    return JSON.stringify(g) ?? String(g);
  } catch {
    return String(g);
  }
}

function garbage(p: Program, s: Step): void {
  const e = p.entry(s.a);
  if (e === undefined) return;
  const g = garbageValue(s, p);
  const target = GARBAGE_TARGETS[s.op % GARBAGE_TARGETS.length];
  const before = memoryStats().liveTensors;
  const what = `garbage argument: ${String(target).replace(/\s+/g, ' ')} on ${label(e)} with ${describeGarbage(g)}`;
  const out = p.call(what, undefined, () => target(e.t, g));
  // Whatever was accepted is disposed again (except an in-place result, which is the pool tensor itself).
  const made = (x: unknown) => x instanceof Tensor && x !== e.t && x !== g;
  if (made(out)) (out as Tensor).dispose();
  if (Array.isArray(out)) { for (const x of out) if (made(x)) x.dispose(); }
  assert.equal(memoryStats().liveTensors, before, `${what} leaked tensors`);
  resync(e); // garbage may legitimately have been accepted by an in-place op (fill_(true), mul_(2))
}

const OPERATIONS: ReadonlyArray<(p: Program, s: Step) => void> = [
  (p, s) => p.make(s),
  (p, s) => p.make(s),
  view,
  view,
  unary,
  binary,
  scalarOp,
  reduction,
  softmaxOp,
  matmulOp,
  indexing,
  catOp,
  inPlace,
  inPlace,
  disposeOne,
  garbage,
];

const PROGRAMS = 2_500;
// A fixed seed keeps CI reproducible; set SWITCHYARD_FUZZ_SEED to explore others (fast-check prints the seed and
// path of a failure, which replays it).
const SEED = Number(readEnv('SWITCHYARD_FUZZ_SEED') ?? 20261125);
const STEPS = 60;

describe('fuzzing the kernel boundary', () => {
  it(`runs ${PROGRAMS} random programs: clear errors only, results equal a float64 reference, guards and canaries intact, nothing leaked`, () => {
    const canaryNext = rng(99);
    const canaries = [randomTensor([5], 'float32', canaryNext), randomTensor([2, 3], 'int64', canaryNext)];
    const canaryValues = canaries.map(values);
    let calls = 0;
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }), fc.nat(), (steps, seed) => {
        const before = memoryStats().liveTensors;
        const program = new Program(seed);
        try {
          steps.forEach((step, i) => {
            OPERATIONS[step.op % OPERATIONS.length](program, { ...step, op: Math.floor(step.op / OPERATIONS.length) });
            if (i % 10 === 9) program.checkPool();
          });
          program.checkPool();
          canaries.forEach((t, i) => assert.deepEqual(values(t), canaryValues[i], 'a canary tensor changed'));
        } catch (e) {
          if (e instanceof Error) e.message += `\nlast calls:\n  ${program.trace.slice(-12).join('\n  ')}`;
          throw e;
        } finally {
          calls += program.calls;
          program.dispose();
        }
        assert.equal(memoryStats().liveTensors, before, 'the program leaked tensors');
      }),
      { seed: SEED, numRuns: PROGRAMS, endOnFailure: true },
    );
    for (const t of canaries) t.dispose();
    assert.ok(calls >= 100_000, `only ${calls} calls ran`);
  });
});
