// Differential fuzzing of the WebGPU backend against the CPU backend: fast-check programs apply the same random
// operator calls to pairs of tensors, one on each device (views, in-place writes, broadcasting, casts, reductions,
// matmul, softmax, indexing, cat, where, over float32, int32 and bool), and every pair must end with the same
// shape, dtype and values (float32 within a few ulps), or both calls must fail with the same error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { gpuSkip } from './_gpu.ts';
import { cat, gather, indexSelect, memoryStats, scope, softmax, type Tensor, tensor, where } from '../../mod.ts';
import { randomTensor, rng } from '../ops/_helpers.ts';
import { readEnv } from '../../core/dispatch/env.ts';

// A fixed seed keeps CI reproducible; SWITCHYARD_FUZZ_SEED explores others (fast-check prints the failing seed).
const SEED = Number(readEnv('SWITCHYARD_FUZZ_SEED') ?? 2026);

interface Pair {
  readonly cpu: Tensor;
  readonly gpu: Tensor;
  /** The call that made it. */
  readonly origin: string;
}

interface Step {
  readonly op: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  op: fc.nat(),
  a: fc.nat(),
  b: fc.nat(),
  c: fc.integer({ min: -3, max: 3 }),
});

const DTYPES = ['float32', 'float32', 'int32', 'bool'] as const;

/**
 * The message with backend-specific parts made neutral: the kernel name in `"<kernel>" not implemented for 'Int'`
 * (each backend names its kernels, as PyTorch's CPU and CUDA kernels differ) and device names.
 */
const neutral = (m: string) =>
  m.replace(/^"[^"]*" not implemented for/, '"<kernel>" not implemented for').replace(/webgpu:0|cpu/g, '<device>');

class Program {
  readonly pairs: Pair[] = [];
  readonly #next: () => number;
  calls = 0;
  /** What ran, for the failure message. */
  readonly trace: string[] = [];

  constructor(seed: number) {
    this.#next = rng(seed);
  }

  pair(i: number): Pair | undefined {
    return this.pairs.length === 0 ? undefined : this.pairs[i % this.pairs.length];
  }

  add(cpu: Tensor, gpu: Tensor, origin: string): void {
    this.pairs.push({ cpu, gpu, origin });
    if (this.pairs.length > 6) {
      const old = this.pairs.shift()!;
      old.cpu.dispose();
      old.gpu.dispose();
    }
  }

  make(s: Step): void {
    const rank = s.a % 4;
    const shape = Array.from({ length: rank }, (_, d) => ((s.b >> (2 * d)) & 3) + 1);
    const cpu = randomTensor(shape, DTYPES[s.op % DTYPES.length], this.#next);
    this.add(cpu, cpu.to({ device: 'webgpu' }), 'made');
  }

  /** Runs `f` on both devices: both succeed (the results join the pool) or both fail alike. */
  both(what: string, f: (t: Tensor, u?: Tensor) => Tensor, p: Pair, q?: Pair): void {
    this.calls++;
    const describe_ = (t: Tensor) => `${t.dtype.name}[${t.shape.join(',')}]/(${t.stride().join(',')})`;
    this.trace.push(
      `${what}(${describe_(p.cpu)}${q === undefined ? '' : `, ${describe_(q.cpu)}`}) ${
        String(f).replace(/\s+/g, ' ').slice(0, 120)
      }`,
    );
    let cpu: Tensor | undefined, gpu: Tensor | undefined, cpuError: Error | undefined, gpuError: Error | undefined;
    try {
      cpu = scope(() => f(p.cpu, q?.cpu)); // intermediates (a mask, a cast) are freed
    } catch (e) {
      cpuError = e as Error;
    }
    try {
      gpu = scope(() => f(p.gpu, q?.gpu));
    } catch (e) {
      gpuError = e as Error;
    }
    if (cpuError !== undefined || gpuError !== undefined) {
      assert.ok(
        cpuError !== undefined && gpuError !== undefined,
        `${what}: ${cpuError ?? gpuError} on one device only`,
      );
      assert.equal(gpuError!.constructor, cpuError!.constructor, `${what}: error classes`);
      assert.equal(neutral(gpuError!.message), neutral(cpuError!.message), `${what}: messages`);
      cpu?.dispose();
      gpu?.dispose();
      return;
    }
    if (cpu === p.cpu) return; // an in-place op: the pair itself changed on both sides
    this.add(cpu!, gpu!, this.trace[this.trace.length - 1]);
  }

  async compare(): Promise<void> {
    for (const { cpu, gpu, origin } of this.pairs) {
      assert.equal(gpu.device.type, 'webgpu', origin);
      assert.deepEqual([...gpu.shape], [...cpu.shape]);
      assert.equal(gpu.dtype, cpu.dtype);
      const want = cpu.toArray(), got = await gpu.toArrayAsync();
      want.forEach((e, i) => {
        const a = got[i];
        if (typeof e === 'boolean' || cpu.dtype.name === 'int32' || !Number.isFinite(e as number)) {
          assert.ok(
            Object.is(a, e) || (Number.isNaN(a as number) && Number.isNaN(e as number)),
            `[${i}] ${a} vs ${e} in the result of ${origin}`,
          );
        } else {
          const tol = 4e-6 * (1 + Math.abs(e as number));
          assert.ok(Math.abs((a as number) - (e as number)) <= tol, `[${i}] ${a} vs ${e} in the result of ${origin}`);
        }
      });
    }
  }

  dispose(): void {
    for (const { cpu, gpu } of this.pairs) {
      cpu.dispose();
      gpu.dispose();
    }
    this.pairs.length = 0;
  }
}

type Unary = (t: Tensor) => Tensor;
const UNARY: ReadonlyArray<[string, Unary]> = [
  ['exp', (t) => t.exp()],
  ['neg', (t) => t.neg()],
  ['abs', (t) => t.abs()],
  ['tanh', (t) => t.tanh()],
  ['relu', (t) => t.relu()],
  ['sigmoid', (t) => t.sigmoid()],
  ['float', (t) => t.to({ dtype: 'float32' })],
  ['int', (t) => t.to({ dtype: 'int32' })],
  ['contiguous', (t) => t.contiguous()],
  ['clone', (t) => t.clone()],
];

type Binary = (t: Tensor, u: Tensor) => Tensor;
const BINARY: ReadonlyArray<[string, Binary]> = [
  ['add', (t, u) => t.add(u)],
  ['sub', (t, u) => t.sub(u, { alpha: 2 })],
  ['mul', (t, u) => t.mul(u)],
  ['div', (t, u) => t.div(u)],
  ['maximum', (t, u) => t.maximum(u)],
  ['lt', (t, u) => t.lt(u)],
  ['where', (t, u) => where(t.gt(0), t, u)],
  ['mm', (t, u) => t.mm(u)],
  ['cat', (t, u) => cat([t, u], 0)],
];

function step(p: Program, s: Step): void {
  const x = p.pair(s.a), y = p.pair(s.b);
  const kind = s.op % 9, sub = Math.floor(s.op / 9);
  if (x === undefined || kind === 0) return p.make(s);
  const nd = x.cpu.ndim, dim = nd === 0 ? 0 : Math.abs(s.c) % nd;
  switch (kind) {
    case 1: {
      const [name, f] = UNARY[sub % UNARY.length];
      return p.both(name, f, x);
    }
    case 2: {
      if (y === undefined) return;
      const [name, f] = BINARY[sub % BINARY.length];
      return p.both(name, f as (t: Tensor, u?: Tensor) => Tensor, x, y);
    }
    case 3: // views
      return p.both('view', (t) => {
        switch (sub % 4) {
          case 0:
            return nd < 2 ? t.unsqueeze(0) : t.transpose(0, nd - 1);
          case 1:
            return nd === 0 ? t.expand([2]) : t.narrow(dim, 0, Math.max(1, t.shape[dim] - 1));
          case 2:
            return t.expand([2, ...t.shape]);
          default:
            return t.permute([...t.shape.keys()].reverse());
        }
      }, x);
    case 4: // reductions
      return p.both('reduce', (t) => {
        switch (sub % 3) {
          case 0:
            return t.sum(s.c, true);
          case 1:
            return t.to({ dtype: 'float32' }).mean(s.c);
          default:
            return t.amax(s.c);
        }
      }, x);
    case 5:
      return p.both('softmax', (t) => softmax(t, s.c), x);
    case 6: // in-place writes, also through views and into expanded tensors (both refuse alike)
      return p.both(
        'in-place',
        (t, u) => {
          switch (sub % 4) {
            case 0:
              return t.add_(2);
            case 1:
              return t.mul_(u ?? t);
            case 2:
              return t.fill_(sub % 7);
            default:
              return t.clamp_(-1, 1);
          }
        },
        x,
        y,
      );
    case 7: { // indexing
      const size = nd === 0 ? 1 : x.cpu.shape[dim];
      // In range: an out-of-range index is a data-dependent error, which WebGPU reports at the next readback.
      const picks = [Math.abs(s.c) % size, 0];
      return p.both('index', (t) => {
        const index = tensor(picks, { device: t.device });
        try {
          return sub % 2 === 0 || nd !== 1 ? indexSelect(t, dim, index) : gather(t, 0, index);
        } finally {
          index.dispose();
        }
      }, x);
    }
    default: // a disposed GPU tensor is refused like a disposed CPU one
      return p.both('dispose', (t) => {
        const c = t.clone();
        c.dispose();
        return c.add(1);
      }, x);
  }
}

describe('WebGPU matches the CPU on random programs', { skip: gpuSkip }, () => {
  it('200 programs of 12 steps: same shapes, dtypes, values and errors; nothing leaked', async () => {
    let calls = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 12, maxLength: 12 }), fc.nat(), async (steps, seed) => {
        const p = new Program(seed);
        try {
          // The steps run synchronously, so no finalizer (of tensors other suites left to the garbage collector)
          // runs between these two counts: every tensor alive after them is one the pool holds, and a call that
          // failed freed what it made on both devices.
          const before = memoryStats().liveTensors;
          for (const s of steps) step(p, s);
          assert.equal(memoryStats().liveTensors - before, 2 * p.pairs.length, 'tensors leaked');
          await p.compare();
        } catch (e) {
          if (e instanceof Error) e.message += `\nsteps:\n  ${p.trace.join('\n  ')}`;
          throw e;
        } finally {
          calls += p.calls;
          p.dispose();
        }
      }),
      { seed: SEED, numRuns: 200, endOnFailure: true },
    );
    assert.ok(calls > 1000, `only ${calls} calls ran`);
  });
});
